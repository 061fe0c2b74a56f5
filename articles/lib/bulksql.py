"""Batch writes and a few hot reads for the ingest loop, one statement each.

Django's ``bulk_update`` builds a Case/When expression tree per value and
``bulk_create`` prepares every field of every object through the ORM: for a batch of
200 articles that is most of the time the batch spends holding its index locks. These
helpers take values already in database form (see :func:`prep`) and send one
``UPDATE ... SET col = CASE id WHEN ... END ... WHERE id IN (...)`` or one multi-row
``INSERT``. The UPDATE names its rows by primary key only, so it locks exactly them.

The reads (:func:`fetch_models`, :func:`fetch_values`) skip the ORM's query compiler,
which costs ~0.4-1 ms per query on the single-article path, and build instances the way
the ORM does (the backend's converters, unselected fields deferred).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from django.db import connection, models

CHUNK = 250  # rows per statement: SQLite allows 32,766 parameters


def _literal(value: Any, params: list[Any]) -> str:
    """SQL text for ``value``: numbers and NULL written inline (they cannot carry
    anything but digits, and the driver's per-value escaping is most of the cost of a
    statement with thousands of values); anything else a placeholder."""
    if value is None:
        return "NULL"
    if type(value) is int:
        return str(value)
    if type(value) is float and math.isfinite(value):
        return repr(value)
    params.append(value)
    return "%s"


def prep(model: type[models.Model], name: str, value: Any) -> Any:
    """``value`` as the database wants it for ``model``'s field ``name``."""
    return _concrete(model, name).get_db_prep_save(value, connection)


def _concrete(model: type[models.Model], name: str) -> models.Field[Any, Any]:
    """``model``'s field ``name``, which must be a column of its table (not a relation's
    reverse side)."""
    field = model._meta.get_field(name)
    if not isinstance(field, models.Field) or not field.column:
        raise ValueError(f"{model.__name__}.{name} is not a column")
    return field


def _column_name(model: type[models.Model], name: str) -> str:
    column_name = _concrete(model, name).column
    assert column_name is not None  # _concrete checked it
    return column_name


def column(model: type[models.Model], name: str) -> str:
    return connection.ops.quote_name(_column_name(model, name))


def insert_objects(model: type[models.Model], objs: Sequence[models.Model]) -> None:
    """``bulk_create`` for unsaved objects whose defaults are already set (built with
    the model's constructor); no ``auto_now`` fields. A single object gets its primary
    key (the driver's last insert id); several do not (MySQL does not promise
    consecutive ids for one statement under every auto-increment lock mode)."""
    fields = [f for f in model._meta.concrete_fields if not f.primary_key]
    converters = [_converter(f) for f in fields]
    rows = [[convert(getattr(obj, f.attname)) for f, convert in zip(fields, converters,
                                                                     strict=True)]
            for obj in objs]
    last_id = insert_rows(model, [f.name for f in fields], rows)
    if len(objs) == 1 and last_id:
        objs[0].pk = last_id


_PLAIN = {models.CharField, models.TextField, models.IntegerField, models.SmallIntegerField,
          models.PositiveIntegerField, models.PositiveSmallIntegerField, models.FloatField,
          models.BooleanField, models.ForeignKey}

def _converter(field: Any) -> Any:
    if isinstance(field, models.DateTimeField):
        return connection.ops.adapt_datetimefield_value
    if type(field) in _PLAIN:
        if field.choices:  # TextChoices members are str subclasses the driver may not know
            return lambda value: value if value is None else str(value)
        return lambda value: value
    return lambda value: field.get_db_prep_save(value, connection)


def update_rows(
    model: type[models.Model],
    names: Sequence[str],
    rows: Sequence[tuple[int, Sequence[Any]]],
    *,
    constants: Mapping[str, Any] | None = None,
    increments: Sequence[str] = (),
    only_if: Mapping[str, Any] | None = None,
) -> None:
    """Set ``names`` per row (``rows``: primary key, values in ``names`` order) and
    ``constants`` on every row; a name in ``increments`` is added to, not set. With
    ``only_if`` ({field: value}), rows whose fields differ are left alone."""
    if len(rows) > CHUNK:
        for start in range(0, len(rows), CHUNK):
            update_rows(model, names, rows[start:start + CHUNK], constants=constants,
                        increments=increments, only_if=only_if)
        return
    if not rows:
        return
    pk = column(model, model._meta.pk.name)
    table = connection.ops.quote_name(model._meta.db_table)
    sets: list[str] = []
    params: list[Any] = []
    for position, name in enumerate(names):
        col = column(model, name)
        whens = []
        for key, values in rows:
            whens.append(f"WHEN {int(key)} THEN {_literal(values[position], params)}")
        value = f"CASE {pk} {' '.join(whens)} END"
        sets.append(f"{col} = {col} + {value}" if name in increments else f"{col} = {value}")
    for name, value in (constants or {}).items():
        sets.append(f"{column(model, name)} = %s")
        params.append(value)
    where = f"{pk} IN ({', '.join(str(int(key)) for key, _values in rows)})"
    for name, value in (only_if or {}).items():
        where += f" AND {column(model, name)} = %s"
        params.append(value)
    with connection.cursor() as cursor:
        cursor.execute(f"UPDATE {table} SET {', '.join(sets)} WHERE {where}", params)


def insert_rows(model: type[models.Model], names: Sequence[str],
                rows: Sequence[Sequence[Any]]) -> int | None:
    """INSERT ``rows`` (values in ``names`` order, database form) in one statement;
    return the driver's last insert id (the row's id when there is one row)."""
    if len(rows) > CHUNK:
        for start in range(0, len(rows), CHUNK):
            insert_rows(model, names, rows[start:start + CHUNK])
        return None
    if not rows:
        return None
    table = connection.ops.quote_name(model._meta.db_table)
    cols = ", ".join(column(model, name) for name in names)
    params: list[Any] = []
    values = ", ".join("(" + ", ".join(_literal(v, params) for v in row) + ")" for row in rows)
    with connection.cursor() as cursor:
        cursor.execute(f"INSERT INTO {table} ({cols}) VALUES {values}", params)
        last_id: int | None = cursor.lastrowid
        return last_id


def table(model: type[models.Model]) -> str:
    return connection.ops.quote_name(model._meta.db_table)


def placeholders(count: int) -> str:
    return ", ".join(["%s"] * count)


def fetch_values(sql: str, params: Sequence[Any]) -> list[tuple[Any, ...]]:
    """Rows of a raw query (values as the driver returns them)."""
    with connection.cursor() as cursor:
        cursor.execute(sql, list(params))
        return list(cursor.fetchall())


def fetch_models(sql: str, params: Sequence[Any],
                 parts: Sequence[tuple[type[models.Model], str, Sequence[str]]],
                 ) -> list[tuple[models.Model | None, ...]]:
    """Run ``sql``, whose columns are, in order, the ``fields`` of each part
    ``(model, alias, fields)`` (spell them with :func:`select_list`), and build one
    instance per part and row as the ORM would: database converters applied, the other
    fields deferred. A part whose primary key is NULL (an outer join) gives None."""
    from django.db.models.expressions import Col

    compiler = parts[0][0]._default_manager.all().query.get_compiler(connection=connection)
    cols: list[Col] = []
    layout = []
    for model, _alias, names in parts:
        fields = [model._meta.get_field(name) for name in names]
        pk_at = next(i for i, f in enumerate(fields) if f.primary_key)  # type: ignore[union-attr]
        layout.append((model, len(cols), len(fields), pk_at,
                       [f.attname for f in fields]))  # type: ignore[union-attr]
        cols += [f.get_col(model._meta.db_table) for f in fields]  # type: ignore[union-attr]
    rows = fetch_values(sql, params)
    converters = compiler.get_converters(cols)
    if converters:
        rows = [tuple(row) for row in compiler.apply_converters(rows, converters)]
    out = []
    for row in rows:
        objs: list[models.Model | None] = []
        for model, start, size, pk_at, attnames in layout:
            values = row[start:start + size]
            objs.append(None if values[pk_at] is None
                        else model.from_db(connection.alias, attnames, values))
        out.append(tuple(objs))
    return out


def select_list(alias: str, model: type[models.Model], names: Sequence[str]) -> str:
    """``alias.col, ...`` for ``model``'s fields ``names``."""
    return ", ".join(f"{alias}.{column(model, n)}" for n in names)
