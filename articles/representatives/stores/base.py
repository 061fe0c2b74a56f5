"""What every representative store shares: the row format (``FIELDS``, ``normalize_row``),
the interface (``RepresentativeStore``) and its error (``StoreUnavailable``)."""

from __future__ import annotations

import datetime as _dt
import decimal
import math
from collections.abc import Iterator, Mapping, Sequence
from typing import Any, Protocol, TypeVar, runtime_checkable

Value = str | int | float | None
Row = dict[str, Value]

#: Text fields (stored and returned as str).
TEXT_FIELDS: tuple[str, ...] = (
    "nid",
    "url",
    "title",
    "content",
    "media",
    "publishedAt",
    "updatedAt",
)
#: The document fields, in the order documented for the HBase columns.
FIELDS: tuple[str, ...] = (
    "nid",
    "url",
    "title",
    "content",
    "media",
    "publishedAt",
    "hotness",
    "clusterSize",
    "updatedAt",
)
VERSION = "version"
ALL_KEYS: tuple[str, ...] = (*FIELDS, VERSION)


T = TypeVar("T")

# Connections and pools inherited through fork() stay referenced here: they
# are never used, nor closed, in the child (SQLite forbids it; closing a
# Thrift socket shuts it down for the parent too).
INHERITED: list[Any] = []


class StoreUnavailable(Exception):
    """The representative store cannot be reached (or failed); retry later."""


@runtime_checkable
class RepresentativeStore(Protocol):
    def put(self, doc_id: str, row: Mapping[str, Any]) -> None:
        """Write the row unconditionally (whole-row replace); version = row.get('version', 0)."""

    def put_if_newer(self, doc_id: str, row: Mapping[str, Any], version: int) -> bool:
        """Write only if no row is stored or the stored version < ``version``."""

    def put_many_if_newer(self, items: Sequence[tuple[str, Mapping[str, Any], int]]) -> int:
        """``put_if_newer`` for many (doc_id, row, version) at once; returns rows written."""

    def delete_many(self, doc_ids: Sequence[str]) -> None:
        """Remove these rows (no error for absent ones)."""

    def delete(self, doc_id: str) -> None:
        """Remove the row (no error if absent)."""

    def get(self, doc_id: str) -> Row | None:
        """The stored row, or None."""

    def scan(self, batch_size: int = 1000) -> Iterator[tuple[str, Row]]:
        """Every row, in byte order of the UTF-8 docId, fetched ``batch_size`` at a time."""

    def ping(self) -> None:
        """Return if the store is usable, else raise StoreUnavailable."""





def _text(key: str, value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, _dt.datetime | _dt.date):
        return value.isoformat()
    if isinstance(value, str):
        return value
    raise TypeError(f"{key}: expected str or None, got {type(value).__name__}")


def _number(key: str, value: Any, kind: type) -> int | float | None:
    if value is None:
        return None
    if isinstance(value, decimal.Decimal):
        value = float(value)
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise TypeError(f"{key}: expected a number or None, got {value!r}")
    if kind is int:
        if isinstance(value, float):
            if not value.is_integer():
                raise ValueError(f"{key}: expected an integer, got {value!r}")
            value = int(value)
        return int(value)
    value = float(value)
    if not math.isfinite(value):
        raise ValueError(f"{key}: must be finite, got {value!r}")
    return value


def normalize_row(row: Mapping[str, Any], version: int | None = None) -> Row:
    """Validate and coerce a row to the stored types; every key of ALL_KEYS present."""
    unknown = set(row) - set(ALL_KEYS)
    if unknown:
        raise ValueError(
            f"unknown representative field(s) {sorted(unknown)}; allowed: {list(ALL_KEYS)}"
        )
    out: Row = {}
    for key in FIELDS:
        value = row.get(key)
        if key == "hotness":
            out[key] = _number(key, value, float)
        elif key == "clusterSize":
            out[key] = _number(key, value, int)
        else:
            assert key in TEXT_FIELDS
            out[key] = _text(key, value)
    v = row.get(VERSION) if version is None else version
    out[VERSION] = 0 if v is None else _number(VERSION, v, int)
    return out


def check_doc_id(doc_id: str) -> str:
    if not isinstance(doc_id, str) or not doc_id:
        raise ValueError(f"docId must be a non-empty str, got {doc_id!r}")
    return doc_id
