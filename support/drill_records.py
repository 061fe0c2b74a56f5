"""Each drill writes what it did and measured as one JSON record.

The records go to $DRILLS_DIR (default var/drills/, not committed);
scripts/drills_report.py renders them as the tables in docs/results/drills.md.
"""

from __future__ import annotations

import json
import math
import os
import platform
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]


def drills_dir() -> Path:
    return Path(os.environ.get("DRILLS_DIR") or ROOT / "var" / "drills")


def write_record(
    drill: str,
    *,
    title: str,
    fault: str,
    system_did: str,
    lost: str,
    recovery_s: float | None,
    checks: dict[str, bool],
    figures: dict[str, Any],
    findings: list[str] | None = None,
) -> Path:
    """Write var/drills/<drill>.json; `checks` are the drill's verdicts, all must hold."""
    directory = drills_dir()
    directory.mkdir(parents=True, exist_ok=True)
    record = {
        "drill": drill,
        "title": title,
        "fault": fault,
        "system_did": system_did,
        "lost": lost,
        "recovery_s": None if recovery_s is None else round(recovery_s, 2),
        "passed": all(checks.values()),
        "checks": checks,
        "figures": figures,
        "findings": findings or [],
        "recorded_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": {"cpus": os.cpu_count(), "load_average": [round(x, 2) for x in
                                                             os.getloadavg()],
                    "python": platform.python_version()},
    }
    path = directory / f"{drill}.json"
    path.write_text(json.dumps(record, indent=2, ensure_ascii=False, default=str) + "\n")
    return path


def percentile(values: list[float], fraction: float) -> float | None:
    """Nearest-rank percentile (fraction 0..1) of `values`; None when empty."""
    if not values:
        return None
    ordered = sorted(values)
    rank = max(1, math.ceil(fraction * len(ordered)))
    return ordered[rank - 1]
