"""The engine package's rooms hold at run time too: importing every engine module loads
neither Django nor the apps (import-linter checks the same statically, `make lint`)."""

from __future__ import annotations

import subprocess
import sys

ENGINE_MODULES = (
    "fingerprints.rule", "fingerprints.rule.cascade", "fingerprints.stores.block_index",
    "fingerprints.stores.key_index", "fingerprints.stores.url_map",
    "fingerprints.batch.replay", "fingerprints.batch.spark", "fingerprints.table.match",
    "fingerprints.table.spark",
)


def test_the_engine_imports_no_django_and_no_app() -> None:
    code = (f"import importlib, sys; [importlib.import_module(m) for m in {ENGINE_MODULES!r}]; "
            "print(sorted(m for m in sys.modules if m.split('.')[0] in "
            "('django', 'articles', 'dedupsite', 'redis', 'rq', 'pyspark')))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True, env={"PATH": "/usr/bin:/bin"})
    assert done.stdout.strip() == "[]"


def test_the_rule_imports_no_store() -> None:
    code = ("import sys, fingerprints.rule; "
            "print(sorted(m for m in sys.modules if m.startswith('fingerprints.') "
            "and not m.startswith('fingerprints.rule')))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True, env={"PATH": "/usr/bin:/bin"})
    assert done.stdout.strip() == "[]"
