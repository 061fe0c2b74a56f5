"""RQ worker classes for the drills.

RQ notices a job whose worker died (SIGKILL, OOM, lost machine) only when
another worker cleans the started-job registry: at its start and then every
`maintenance_interval` (RQ's default: 600 s), once the dead execution's
heartbeat has expired (job_monitoring_interval + 60 s; 90 s by default). The
drills use a shorter interval so that they measure the retry within seconds
rather than minutes; docs/reliability.md gives the production bound.
"""

from __future__ import annotations

from typing import Any

from rq import Worker


class QuickMaintenanceWorker(Worker):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("maintenance_interval", 5)
        kwargs.setdefault("job_monitoring_interval", 5)
        super().__init__(*args, **kwargs)
