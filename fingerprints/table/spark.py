"""``dedup_table --engine spark``: the fs method's pair comparisons on Spark.

Comparing candidate pairs field by field (three string similarities per field) is
where the time of a table run goes; the pairs are cut into slices and compared on the
executors with the very code of the local run (:func:`fingerprints.table.match.compare_pairs`,
the prepared rows broadcast once). The arrays come back in pair order, so the EM, the
threshold and the groups are computed from identical input and are identical to the
local run's.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any

import numpy as np

from fingerprints.table.fellegi import Comparer
from fingerprints.table.match import (
    FieldSpec,
    TableConfig,
    TableResult,
    _Row,
    compare_pairs,
    dedup_rows,
)

__all__ = ["dedup_rows_spark", "spark_comparer"]


def spark_comparer(spark: Any, rows: list[_Row], fields: Sequence[FieldSpec],
                   slice_pairs: int = 20000) -> Comparer:
    context = spark.sparkContext
    shared = context.broadcast((rows, list(fields)))

    def run(items: Iterable[tuple[int, list[tuple[int, int]]]]
            ) -> Iterator[tuple[int, np.ndarray, np.ndarray]]:
        prepared, specs = shared.value
        for start, part in items:
            levels, sims = compare_pairs(prepared, specs, part)
            yield start, levels, sims

    def compare(pairs: Sequence[tuple[int, int]]) -> tuple[np.ndarray, np.ndarray]:
        pairs = list(pairs)
        if not pairs:
            return compare_pairs(rows, fields, [])
        size = max(1000, min(slice_pairs, -(-len(pairs) // (2 * context.defaultParallelism))))
        pieces = [(start, pairs[start : start + size]) for start in range(0, len(pairs), size)]
        results = sorted(context.parallelize(pieces, len(pieces)).mapPartitions(run).collect(),
                         key=lambda item: item[0])
        return (np.concatenate([levels for _, levels, _ in results]),
                np.concatenate([sims for _, _, sims in results]))

    return compare


def dedup_rows_spark(spark: Any, rows: Iterable[tuple[Any, Sequence[Any]]],
                     fields: Sequence[FieldSpec], config: TableConfig | None = None, *,
                     progress: Callable[[int], object] | None = None) -> TableResult:
    """:func:`fingerprints.table.match.dedup_rows` with the comparisons on ``spark``."""
    config = config or TableConfig()
    if config.method != "fs":
        raise ValueError("the Spark engine runs the fs method only")
    return dedup_rows(rows, fields, config, progress=progress,
                      make_comparer=lambda prepared, specs: spark_comparer(spark, prepared,
                                                                           specs))
