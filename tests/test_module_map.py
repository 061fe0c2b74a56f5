"""The map cannot drift: docs/architecture.md's module map names every module of the
three packages (and nothing that is gone), and every room of them sits in a layer of the
import-linter contracts that `make lint` enforces. Reads files only: no Django, no
database."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("articles", "fingerprints", "dedupsite")
SOURCE = (".py", ".c", ".h")
# Django's own places inside the app, named by their folder in the map's rows
NOT_MAPPED = {"migrations"}
# Modules no contract needs to place: Django's app config (imports nothing of ours) and
# gunicorn's settings file (a file gunicorn reads, not a module: its name has a dot)
NOT_LAYERED = {"articles.apps", "articles.migrations", "dedupsite.gunicorn.conf"}


def _folders(root: Path = ROOT) -> dict[str, list[str]]:
    """Each folder of the packages (relative, with a trailing slash) -> its module files."""
    found: dict[str, list[str]] = {}
    for package in PACKAGES:
        if not (root / package).is_dir():
            continue
        for folder in sorted([root / package, *(root / package).rglob("*")]):
            relative = folder.relative_to(root)
            if (not folder.is_dir() or "__pycache__" in relative.parts
                    or NOT_MAPPED & set(relative.parts)):
                continue
            files = sorted(f.name for f in folder.iterdir() if f.suffix in SOURCE
                           and f.is_file() and f.name != "__init__.py")
            if files:
                found[f"{relative.as_posix()}/"] = files
    return found


def _map_rows(root: Path = ROOT) -> dict[str, str]:
    """The module map's rows: the folder of the first cell -> the second cell."""
    text = (root / "docs" / "architecture.md").read_text(encoding="utf-8")
    section = text.split("## Module map", 1)[1].split("\n### ", 1)[0]
    rows: dict[str, str] = {}
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|", 1)]
        if len(cells) == 2 and re.fullmatch(r"`[\w/]+/`", cells[0]):
            rows[cells[0].strip("`")] = cells[1]
    return rows


def _unmapped(root: Path = ROOT) -> list[str]:
    rows = _map_rows(root)
    return [f"{folder}{name}" for folder, files in _folders(root).items() for name in files
            if f"`{name}`" not in rows.get(folder, "")]


def test_every_module_of_the_packages_is_on_the_map() -> None:
    missing = _unmapped()
    assert not missing, f"docs/architecture.md's module map does not name: {missing}"


def test_every_module_the_map_names_exists() -> None:
    folders = _folders()
    gone = [f"{folder}{name}" for folder, cell in _map_rows().items()
            if folder.split("/")[0] in PACKAGES
            for name in re.findall(r"`([\w.]+\.(?:py|c|h))`", cell)
            if "/" not in name and name != "__init__.py" and name not in folders.get(folder, [])]
    assert not gone, f"docs/architecture.md's module map names what is gone: {gone}"


def test_every_folder_of_the_packages_has_a_row() -> None:
    rows = _map_rows()
    assert not [f for f in _folders() if f not in rows]


def _layered() -> set[str]:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    names: set[str] = set()
    for contract in config["tool"]["importlinter"]["contracts"]:
        if contract["type"] == "layers":
            for layer in contract["layers"]:
                names.update(part.strip() for part in layer.split("|"))
    return names


def _rooms(package: str) -> set[str]:
    """The package's direct children: subpackages and modules, as dotted names."""
    base = ROOT / package
    children = {f"{package}.{p.name}" for p in base.iterdir()
                if p.is_dir() and (p / "__init__.py").exists()}
    children |= {f"{package}.{p.stem}" for p in base.glob("*.py") if p.name != "__init__.py"}
    return children - NOT_LAYERED


def test_every_room_sits_in_an_import_linter_layer() -> None:
    layered = _layered()
    unplaced = sorted(room for package in PACKAGES for room in _rooms(package)
                      if room not in layered)
    assert not unplaced, f"rooms outside every layers contract in pyproject.toml: {unplaced}"


def test_a_module_added_without_a_row_is_reported(tmp_path: Path) -> None:
    """The check itself can fail: in a copy of the map beside a tree with one module
    more, that module is reported, and only it."""
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "architecture.md").write_text(
        (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8"), encoding="utf-8")
    stores = tmp_path / "fingerprints" / "stores"
    stores.mkdir(parents=True)
    for name in _folders()["fingerprints/stores/"] + ["unmapped.py"]:
        (stores / name).write_text("", encoding="utf-8")
    assert _unmapped(tmp_path) == ["fingerprints/stores/unmapped.py"]
