"""A model field for unsigned 64-bit fingerprints on every backend.

MySQL/MariaDB store them as BIGINT UNSIGNED (PositiveBigIntegerField). SQLite
has only signed 64-bit integers, so there the value is stored in two's
complement and turned back into the unsigned value when read.
"""

from __future__ import annotations

from typing import Any

from django.db import models

from fingerprints.rule.ids import MASK64, to_signed, to_unsigned


class UnsignedBigIntegerField(models.PositiveBigIntegerField):
    description = "Unsigned 64-bit integer"

    def db_check(self, connection: Any) -> str | None:
        if connection.vendor == "sqlite":
            return None  # negative two's-complement values are legal there
        return super().db_check(connection)

    def get_db_prep_value(self, value: Any, connection: Any, prepared: bool = False) -> Any:
        value = super().get_db_prep_value(value, connection, prepared)
        if value is not None and connection.vendor == "sqlite":
            return to_signed(value)
        return value

    def from_db_value(self, value: Any, expression: Any, connection: Any) -> Any:
        if value is not None and value < 0:
            return to_unsigned(value)
        return value

    def formfield(self, **kwargs: Any) -> Any:
        return super().formfield(**{"max_value": MASK64, **kwargs})


@UnsignedBigIntegerField.register_lookup
class UnsignedExact(models.lookups.Exact):
    """`exact` without Django's signed-range check, which would turn values >= 2**63
    into an empty result on SQLite; the value is converted by get_db_prep_value."""

    lookup_name = "exact"
    prepare_rhs = False

    def process_rhs(self, compiler: Any, connection: Any) -> Any:
        if hasattr(self.rhs, "as_sql"):
            return super().process_rhs(compiler, connection)
        return "%s", [self.lhs.output_field.get_db_prep_value(self.rhs, connection)]
