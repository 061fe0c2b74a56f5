"""A production install (`make install-prod`): Debian's Python, the runtime dependencies
pinned by constraints.txt (gunicorn among them), no dev extras; gunicorn's settings start
cleanly under the service user. The install itself is run by
tests/drills/test_install_prod.py (`make drills`)."""

from __future__ import annotations

import runpy
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DEV_ONLY = {"pytest", "pytest-django", "playwright", "mypy", "ruff", "hypothesis",
            "schemathesis", "django-stubs", "import-linter", "pyspark"}


def pins() -> dict[str, str]:
    found = {}
    for line in (ROOT / "constraints.txt").read_text().splitlines():
        if line and not line.startswith("#"):
            name, _sep, version = line.partition("==")
            found[name] = version
    return found


def test_the_constraints_file_is_current():
    checked = subprocess.run([sys.executable, "scripts/lock_runtime.py", "--check"], cwd=ROOT,
                             capture_output=True, text=True)
    assert checked.returncode == 0, checked.stderr


def test_the_constraints_pin_gunicorn_and_the_database_driver_and_no_dev_tool():
    pinned = pins()
    assert all(version and version[0].isdigit() for version in pinned.values()), pinned
    assert {"gunicorn", "django", "mysqlclient", "redis", "rq"} <= set(pinned)
    assert not DEV_ONLY & set(pinned)


def test_install_prod_makes_its_venv_with_debians_python_and_installs_no_extras(tmp_path):
    planned = subprocess.run(["make", "-n", "install-prod", f"VENV={tmp_path / 'venv'}"],
                             cwd=ROOT, capture_output=True, text=True)
    assert planned.returncode == 0, planned.stderr
    commands = planned.stdout
    assert f"/usr/bin/python3 -m venv {tmp_path / 'venv'}" in commands
    assert "pip install --quiet -c constraints.txt -e .\n" in commands
    assert "[dev" not in commands and "[spark" not in commands


def test_make_install_uses_the_same_pins():
    makefile = (ROOT / "Makefile").read_text()
    assert "pip install --quiet -c constraints.txt -e '.[dev]'" in makefile


def test_gunicorn_starts_no_control_socket():
    """gunicorn (25.1 and later) opens a control socket under $XDG_RUNTIME_DIR or ~/.gunicorn:
    the service user has neither writable, and it logged a permission error at every start."""
    from gunicorn.config import Config

    settings = runpy.run_path(str(ROOT / "dedupsite" / "gunicorn.conf.py"))
    assert settings["control_socket_disable"] is True
    config = Config()
    config.set("control_socket_disable", settings["control_socket_disable"])
    assert config.control_socket_disable is True


# Imported by the runtime code without being a distribution of its own: the spark extra
# (`spark_dedup --engine spark`), and the module happybase makes from its Thrift file.
NOT_PINNED = {"pyspark": "the spark extra", "Hbase_thrift": "made by happybase at run time"}


def test_every_package_the_code_imports_is_pinned():
    """A production install has only constraints.txt's packages: a module the code imports
    that came into the dev venv through a dev extra (urllib3 through requests) broke
    `migrate` on a production machine (tests/drills/test_operations_doc.py found it)."""
    import ast
    from importlib.metadata import packages_distributions

    from packaging.utils import canonicalize_name

    local = {"articles", "dedupsite", "fingerprints"}
    imported: dict[str, str] = {}
    for package in sorted(local):
        for path in sorted((ROOT / package).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text())):
                if isinstance(node, ast.Import):
                    names = [alias.name for alias in node.names]
                elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                    names = [node.module]
                else:
                    continue
                for name in names:
                    top = name.split(".")[0]
                    if top not in sys.stdlib_module_names and top not in local:
                        imported.setdefault(top, str(path.relative_to(ROOT)))
    pinned = {canonicalize_name(name) for name in pins()}
    distributions = packages_distributions()
    unpinned = {module: where for module, where in imported.items()
                if module not in NOT_PINNED and not pinned & {
                    canonicalize_name(dist) for dist in distributions.get(module, [])}}
    assert not unpinned, f"imported, not a runtime dependency (pyproject.toml): {unpinned}"
