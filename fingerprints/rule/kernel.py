"""The optional C kernel (``fingerprints/rule/_kernel.c``, built by ``pip install``).

It computes the same bytes as the NumPy code of :mod:`fingerprints.rule` and
:mod:`fingerprints.rule.sketch` for one article at a time, 3-5 times faster per article
(docs/results/log.md, "Speed"), and runs the per-article loops of the boilerplate pass
(``clauses``, ``clause_keys``, ``rebuild``, ``observe``), normalization (``normalize``),
sketch comparison (``overlap``), the memory block and key indexes' buckets
(``BlockTable``), the multi-probe lookups (``probes``), the template guard
(``number_conflicts``), the comparison vector's contexts (``contexts``), the short
texts' edit blocks (``matching_blocks``, difflib's), the vector model's early exit
(``weight_bound``, ``_bound.h``), the version-6 measures of
:mod:`fingerprints.rule.main_body` (``body_parts``) and the batch command's reading of
JSON lines (``json_record``, ``_jsonl.h``), each giving what the Python it replaces gives
(the Python stays as the fallback).
``DEDUP_KERNEL=0`` in the environment turns it off (the NumPy path then runs
everywhere); a checkout where it was not built falls back the same way.
``tests/fingerprints/rule/test_kernel.py`` checks that both paths give identical features.
"""

from __future__ import annotations

import os
from types import ModuleType

kernel: ModuleType | None
try:
    from fingerprints.rule import _kernel as kernel  # type: ignore[attr-defined,no-redef]
except ImportError:  # not built: the NumPy path
    kernel = None

if os.environ.get("DEDUP_KERNEL", "1").strip().lower() in ("0", "false", "no", "off"):
    kernel = None

__all__ = ["kernel"]
