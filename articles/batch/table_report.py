"""The HTML report `dedup_table` writes beside its CSV: the learned weights and every
group with its rows as read and each member's match explanation."""

from __future__ import annotations

from typing import Any

from django.template.loader import render_to_string

from fingerprints.table.fellegi import LEVELS
from fingerprints.table.match import TableResult

MAX_GROUPS = 2000  # a page a browser still opens; the CSV has them all


def _cell(value: Any) -> str:
    return "" if value is None else str(value)


def render_report(result: TableResult, table: str) -> str:
    rows_by_key = {}
    for row in result.group_rows():
        rows_by_key[row["key"]] = row
    groups = []
    for number, group in enumerate(result.groups[:MAX_GROUPS], 1):
        members = []
        for pos in group:
            explained = rows_by_key.get(result.keys[pos], {})
            members.append({
                "key": result.keys[pos],
                "values": [_cell(v) for v in result.values[pos]] if result.values else [],
                "matched": explained.get("matched_key", ""),
                "score": explained.get("score", ""),
                "match_weight": explained.get("match_weight", ""),
                "weights": [explained.get(f"weight_{f.name}", "") for f in result.fields],
            })
        groups.append({"number": number, "members": members})
    weights = []
    if result.model is not None:
        table_weights = result.model.level_weights()
        weights = [{"name": name, "levels": [
            {"m": result.model.m[f, x], "u": result.model.u[f, x], "weight": table_weights[f, x]}
            for x in range(len(LEVELS))]} for f, name in enumerate(result.model.names)]
    return render_to_string("batch/table_report.html", {
        "table": table,
        "stats": result.stats,
        "fields": [f.name for f in result.fields],
        "levels": LEVELS,
        "weights": weights,
        "prior_weight": result.model.prior_weight() if result.model else None,
        "groups": groups,
        "shown": len(groups),
        "total_groups": len(result.groups),
    })
