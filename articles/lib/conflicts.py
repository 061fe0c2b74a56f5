"""Which database errors are lock conflicts: two transactions waited on each other's rows
(MySQL/MariaDB deadlock 1213, lock wait timeout 1205). The server rolled the losing
transaction back, so nothing of it was written and it may be run again."""

from __future__ import annotations

from django.db import DatabaseError

LOCK_CONFLICTS = frozenset({1205, 1213})


def lock_conflict(exc: DatabaseError) -> bool:
    return bool(exc.args) and exc.args[0] in LOCK_CONFLICTS
