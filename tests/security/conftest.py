"""The security tests keep Django's production password hasher (PBKDF2): the lockout
counts and races are measured against the real cost of a password check."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def _fast_password_hashing():
    """Replaces tests/conftest.py's fixture of this name: no faster hasher here."""
    yield
