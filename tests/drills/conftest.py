"""Reliability drills: faults, bad input and load, each a test that records its figures.

Every drill is marked `drill`. The fast ones (seconds) run in `make test`; the
slow ones (real servers restarted, workers killed) only with
`--run-slow-drills` or RUN_SLOW_DRILLS=1. Each drill writes a JSON record to
$DRILLS_DIR (default var/drills/); scripts/drills_report.py renders them into
docs/results/drills.md.
"""

from __future__ import annotations

import contextlib
import os

import pytest


def pytest_addoption(parser: pytest.Parser) -> None:
    # pytest only reads this hook from conftests it loads at start-up, which for
    # `pytest tests` is tests/conftest.py; it also registers the option (see
    # docs/reliability.md). Registering it here too serves `pytest tests/drills`.
    with contextlib.suppress(ValueError):
        parser.addoption("--run-slow-drills", action="store_true", default=False,
                         help="also run the slow reliability drills (tests/drills)")


def slow_drills_enabled(config: pytest.Config) -> bool:
    option = False
    with contextlib.suppress(ValueError):
        option = bool(config.getoption("--run-slow-drills"))
    return option or os.environ.get("RUN_SLOW_DRILLS", "") not in ("", "0")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """`@pytest.mark.drill(slow=True)`: run only when slow drills are asked for
    (`make drills`). Otherwise they are deselected — not run, not reported as
    skipped — so that their servers are not started."""
    if slow_drills_enabled(config):
        return
    slow = [item for item in items
            if (marker := item.get_closest_marker("drill")) is not None
            and marker.kwargs.get("slow")]
    if slow:
        config.hook.pytest_deselected(items=slow)
        items[:] = [item for item in items if item not in slow]


@pytest.fixture(scope="session")
def stack(tmp_path_factory: pytest.TempPathFactory):
    """A production-style dedupsite with dedicated MariaDB and Redis (support/stack.py),
    shared by the slow drills; each drill empties it and starts its own workers."""
    from support.stack import Stack

    server = Stack(tmp_path_factory.mktemp("stack")).start()
    yield server
    server.stop()

