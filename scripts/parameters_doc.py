#!/usr/bin/env python3
"""docs/parameters.md, generated from the engine's configuration.

Every field of :class:`fingerprints.rule.config.EngineConfig` with its default, its
kind (the field's metadata, :func:`fingerprints.rule.config.kind_of`, which the reindex
rule reads too), the admin field that sets it (read from ``EngineSettings.engine_config``
in articles/models/engine.py) and what it governs (the comments beside the field in
config.py, where the reasons live).

    python scripts/parameters_doc.py           # rewrite docs/parameters.md
    python scripts/parameters_doc.py --check   # exit 1 when the page is not current

``tests/fingerprints/test_parameters_doc.py`` fails when the page and the code differ.
"""

from __future__ import annotations

import argparse
import ast
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from fingerprints.rule.config import kind_of  # noqa: E402

CONFIG = ROOT / "fingerprints" / "rule" / "config.py"
BOUNDS = ROOT / "fingerprints" / "rule" / "bounds.py"
MODELS = ROOT / "articles" / "models" / "engine.py"
PAGE = ROOT / "docs" / "parameters.md"

HEADER = """# Engine parameters

Generated from `fingerprints/rule/config.py` by `python scripts/parameters_doc.py`
(`tests/fingerprints/test_parameters_doc.py` fails when this page and the code differ):
do not edit by hand. How the rule uses them: [engine.md](engine.md); the runs that
chose the defaults: [results/log.md](results/log.md).

*kind* (declared in each field's metadata; the reindex rule reads the same):
`fingerprint`: stored features depend on it; after a change run
`manage.py rebuild_index --recompute` (the admin's settings reindex by themselves).
`layout`: the index's block layout depends on it; a change builds a new index
generation (`rebuild_index`). `decision`: applies to the next lookup.
*admin*: the field of the admin's engine settings that sets it (docs/admin.md); the
others keep their defaults in a running service.

| parameter | default | kind | admin | what it governs |
|---|---|---|---|---|
"""


def admin_fields(models_source: str) -> set[str]:
    """The EngineConfig keywords ``EngineSettings.engine_config`` passes."""
    tree = ast.parse(models_source)
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef) and node.name == "engine_config":
            for call in ast.walk(node):
                if isinstance(call, ast.Call) and getattr(call.func, "id", "") == "EngineConfig":
                    return {kw.arg for kw in call.keywords if kw.arg}
    raise SystemExit("EngineSettings.engine_config(...) -> EngineConfig(...) not found")


def fields(config_source: str, name: str = "EngineConfig") -> list[tuple[str, str, str, str]]:
    """(name, default, kind, description) per field of class ``name``, in the class's
    order. The kind is the field's metadata (EngineConfig's; the bounds are all decision
    fields), the description the comment block above the field and the comment after
    it."""
    lines = config_source.splitlines()
    tree = ast.parse(config_source)
    cls = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == name)
    out = []
    for node in cls.body:
        if not (isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name)):
            continue
        line = lines[node.lineno - 1]
        above: list[str] = []
        i = node.lineno - 2
        while i >= 0 and lines[i].strip().startswith("#"):
            comment = lines[i].strip().lstrip("#").strip()
            if not comment.startswith("---"):  # a section heading, not this field's text
                above.insert(0, comment)
            i -= 1
        trailing = line.split("#", 1)[1].strip() if "#" in line else ""
        text = " ".join(above + ([trailing] if trailing else []))
        kind = kind_of(node.target.id) if name == "EngineConfig" else "decision"
        default = ast.get_source_segment(config_source, node.value) if node.value else ""
        factory = re.fullmatch(r"field\(default_factory=(\w+)\)", default or "")
        if factory:  # a default made by a function: the call that makes it
            default = f"{factory[1]}()"
        kinded = re.fullmatch(r"_(?:fingerprint|layout)\((.*)\)", default or "", re.S)
        if kinded:  # the default inside the helper that marks the field's kind
            default = kinded[1]
        out.append((node.target.id, default or "", kind, text))
    return out


BOUNDS_HEADER = """
## Level bounds (part of the match model)

Generated from `fingerprints/rule/bounds.py`. Where verification's levels begin: part
of the match model (`model.bounds`), versioned with its weights in the same JSON file
and fitted with them by `manage.py train_matcher --bounds`, not set in the admin
(docs/engine.md, "The match model"). The defaults are the rule's shipped model's
(`labels-1`); the default model on the comparison vector (`vector-5`) has cut points in
its data instead of these bounds. All are decision fields: a new model applies to the
next lookup, without a reindex.

| bound | default | what it bounds |
|---|---|---|
"""


def render() -> str:
    admin = admin_fields(MODELS.read_text(encoding="utf-8"))
    rows = []
    for name, default, kind, text in fields(CONFIG.read_text(encoding="utf-8")):
        rows.append(f"| `{name}` | `{default}` | {kind} | {'yes' if name in admin else ''} "
                    f"| {_cell(text)} |")
    bounds = [f"| `{name}` | `{default}` | {_cell(text)} |" for name, default, _kind, text
              in fields(BOUNDS.read_text(encoding="utf-8"), "Bounds")]
    return HEADER + "\n".join(rows) + "\n" + BOUNDS_HEADER + "\n".join(bounds) + "\n"


def _cell(text: str) -> str:
    return re.sub(r"\s+", " ", text).replace("|", "\\|")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--check", action="store_true", help="exit 1 when the page is stale")
    args = parser.parse_args()
    page = render()
    if args.check:
        current = PAGE.read_text(encoding="utf-8") if PAGE.exists() else ""
        if current != page:
            print(f"{PAGE.relative_to(ROOT)} is stale: run python scripts/parameters_doc.py",
                  file=sys.stderr)
            return 1
        return 0
    PAGE.write_text(page, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
