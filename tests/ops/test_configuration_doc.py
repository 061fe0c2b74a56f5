"""docs/configuration.md lists every environment variable the service's code reads, and
only those: the variables are found in the source (the typed helpers of dedupsite/env.py,
os.environ and os.getenv), the doc's are the first column of its table."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "configuration.md"
# The code the service runs: settings, the web tier's config, the apps, the engine.
PACKAGES = ("dedupsite", "articles", "fingerprints")
# every typed reader of dedupsite/env.py (env_str, env_int, env_bool, env_list, ...)
HELPERS = set(re.findall(r"^def (env_\w+)\(", (ROOT / "dedupsite" / "env.py").read_text(),
                         flags=re.M))
# Read, but not dedupsite's to document: the interpreter's search path, which the Spark
# driver extends for local executors (the doc names it below the table).
NOT_CONFIGURATION = {"PYTHONPATH"}


def _name_read_by(node: ast.AST) -> str | None:
    if isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant):
        func = node.func
        if isinstance(func, ast.Name) and func.id in HELPERS:
            return str(node.args[0].value)
        if isinstance(func, ast.Attribute) and (
                (func.attr == "get" and ast.unparse(func.value) == "os.environ")
                or (func.attr == "getenv" and ast.unparse(func.value) == "os")):
            return str(node.args[0].value)
    if (isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load)
            and ast.unparse(node.value) == "os.environ"
            and isinstance(node.slice, ast.Constant)):
        return str(node.slice.value)
    return None


def variables_read(source: str) -> set[str]:
    return {name for node in ast.walk(ast.parse(source))
            if (name := _name_read_by(node)) is not None}


def variables_in_code() -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            for name in variables_read(path.read_text()):
                found.setdefault(name, []).append(str(path.relative_to(ROOT)))
    return {name: paths for name, paths in found.items() if name not in NOT_CONFIGURATION}


def table_rows() -> list[list[str]]:
    rows = []
    for line in DOC.read_text().splitlines():
        if line.startswith("| `"):
            rows.append([cell.strip() for cell in line.strip().strip("|").split(" | ")])
    return rows


def variables_in_doc() -> set[str]:
    return {name for row in table_rows() for name in re.findall(r"`([A-Z][A-Z0-9_]+)`", row[0])}


def test_the_reader_finds_each_way_the_code_reads_a_variable():
    source = """
import os
from dedupsite.env import env_bool, env_int
A = env_int("VIA_HELPER", 3)
B = os.environ.get("VIA_GET", "x")
C = os.environ["VIA_INDEX"]
D = os.getenv("VIA_GETENV")
os.environ["WRITTEN_ONLY"] = "1"
os.environ.setdefault("DEFAULTED_ONLY", "1")
"""
    assert variables_read(source) == {"VIA_HELPER", "VIA_GET", "VIA_INDEX", "VIA_GETENV"}


def test_the_reader_sees_the_settings_the_web_tier_and_the_engine():
    found = variables_in_code()
    assert "dedupsite/settings.py" in found["DATABASE_URL"]
    assert found["WEB_CONCURRENCY"] == ["dedupsite/gunicorn.conf.py"]
    assert found["DEDUPSITE_WARMUP"] == ["dedupsite/wsgi.py"]
    assert found["DEDUP_KERNEL"] == ["fingerprints/rule/kernel.py"]


def test_every_variable_the_code_reads_is_in_the_doc():
    missing = {name: paths for name, paths in variables_in_code().items()
               if name not in variables_in_doc()}
    assert not missing, f"read by the code, absent from docs/configuration.md: {missing}"


def test_every_variable_in_the_doc_is_read_by_the_code():
    stale = variables_in_doc() - set(variables_in_code())
    assert not stale, f"in docs/configuration.md, read nowhere: {sorted(stale)}"


def test_every_row_has_a_default_and_a_production_example():
    rows = table_rows()
    assert len(rows) >= 40
    for row in rows:
        assert len(row) == 3 and row[1] and row[2], row[0]
