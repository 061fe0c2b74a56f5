#!/usr/bin/env python3
"""constraints.txt, the versions a production install gets (`make install-prod`).

Every package the project's runtime dependencies (pyproject.toml's `dependencies`, no
extras) need, transitively, on this Python or on Debian 12's (3.11.2: a marker such as
redis's `python_full_version < "3.11.3"` counts), pinned to the version installed in this
environment: the
one `make install` built with the same file, so the tests ran against what production
installs. pip and setuptools are the installer's own and stay unpinned (the build needs
a newer setuptools than some Pythons' venvs bring).

    .venv/bin/python scripts/lock_runtime.py           # rewrite constraints.txt
    .venv/bin/python scripts/lock_runtime.py --check   # exit 1 when it is not current

To move a pin: `.venv/bin/pip install -U <package>`, run the tests, rewrite the file.
"""

from __future__ import annotations

import argparse
import sys
import tomllib
from importlib import metadata
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[1]
LOCK = ROOT / "constraints.txt"
INSTALLER = {"pip", "setuptools"}
# The production interpreter (Debian 12's python3, make install-prod) may need what this one
# does not: a requirement counts when its marker holds for either.
PRODUCTION_PYTHON = {"python_full_version": "3.11.2", "python_version": "3.11",
                     "implementation_name": "cpython", "sys_platform": "linux"}
HEADER = """\
# The runtime dependencies of dedupsite and theirs, pinned: `make install-prod` installs
# with `pip install -c constraints.txt`, and so does `make install` (with the dev extras
# on top). Written by scripts/lock_runtime.py from the environment the tests ran in;
# tests/ops/test_install.py fails when it is not current.
"""


def runtime_pins() -> dict[str, str]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    pins: dict[str, str] = {}
    todo = [Requirement(spec) for spec in project["dependencies"]]
    while todo:
        requirement = todo.pop()
        if requirement.marker and not (
                requirement.marker.evaluate({"extra": ""})
                or requirement.marker.evaluate({**PRODUCTION_PYTHON, "extra": ""})):
            continue
        name = canonicalize_name(requirement.name)
        if name in pins or name in INSTALLER:
            continue
        try:
            dist = metadata.distribution(requirement.name)
        except metadata.PackageNotFoundError:
            # needed only on the production Python (its marker is false here, so pip did
            # not install it): this Python cannot tell its version, the file keeps its pin
            if requirement.marker is None or requirement.marker.evaluate({"extra": ""}):
                raise
            pins[name] = _pinned().get(name) or "?"
            continue
        pins[name] = dist.version
        todo.extend(Requirement(spec) for spec in dist.requires or [])
    return dict(sorted(pins.items()))


def _pinned() -> dict[str, str]:
    """The pins constraints.txt holds now."""
    if not LOCK.exists():
        return {}
    found = {}
    for line in LOCK.read_text().splitlines():
        if "==" in line and not line.startswith("#"):
            name, version = line.split("==", 1)
            found[canonicalize_name(name.strip())] = version.strip()
    return found


def render(pins: dict[str, str]) -> str:
    return HEADER + "".join(f"{name}=={version}\n" for name, version in pins.items())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="exit 1 when not current")
    args = parser.parse_args()
    text = render(runtime_pins())
    if args.check:
        if LOCK.exists() and LOCK.read_text() == text:
            return 0
        print(f"{LOCK.name} is not current: run scripts/lock_runtime.py", file=sys.stderr)
        return 1
    LOCK.write_text(text)
    print(f"{LOCK.name}: {text.count('==')} pins")
    return 0


if __name__ == "__main__":
    sys.exit(main())
