"""A crawler that posts batches and retries each one until it is accepted, as told by 503."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from typing import Any

import requests


@dataclass
class Attempt:
    at: float  # time.monotonic()
    status: int | str  # HTTP status, or the exception's name when no answer came
    error_object: bool = False  # the body was {"error": {"code", "message", "details"}}


@dataclass
class Batch:
    articles: list[dict[str, Any]]
    attempts: list[Attempt] = field(default_factory=list)

    @property
    def nids(self) -> list[str]:
        return [a["nid"] for a in self.articles]

    @property
    def accepted(self) -> bool:
        return bool(self.attempts) and self.attempts[-1].status in (200, 202)

    @property
    def failed_attempts(self) -> list[Attempt]:
        return [a for a in self.attempts if a.status not in (200, 202)]


def answer(response: requests.Response) -> Attempt:
    try:
        error = response.json().get("error")
        shaped = isinstance(error, dict) and {"code", "message", "details"} <= set(error)
    except ValueError:
        shaped = False
    return Attempt(time.monotonic(), response.status_code, shaped)


class RetryingClient(threading.Thread):
    """Posts `batches` in order; a refused batch is retried until accepted.

    After a failure the client waits for `gate` (set = go on) and `retry_delay`:
    a drill clears the gate to inspect the database before the retry.
    """

    def __init__(self, base_url: str, api_key: str, batches: list[list[dict[str, Any]]], *,
                 retry_delay: float = 0.3, pace: float = 0.0, deadline_s: float = 600) -> None:
        super().__init__(daemon=True)
        self.base_url = base_url
        self.api_key = api_key
        self.batches = [Batch(b) for b in batches]
        self.retry_delay = retry_delay
        self.pace = pace
        self.deadline = time.monotonic() + deadline_s
        self.gate = threading.Event()
        self.gate.set()
        self.sent = 0  # batches accepted so far

    def run(self) -> None:
        session = requests.Session()
        session.headers["Authorization"] = f"Bearer {self.api_key}"
        for batch in self.batches:
            while time.monotonic() < self.deadline:
                try:
                    response = session.post(f"{self.base_url}/api/v1/articles",
                                            json={"articles": batch.articles}, timeout=60)
                    batch.attempts.append(answer(response))
                except requests.RequestException as exc:
                    batch.attempts.append(Attempt(time.monotonic(), type(exc).__name__))
                if batch.accepted:
                    self.sent += 1
                    break
                self.gate.wait()
                time.sleep(self.retry_delay)
            if self.pace:
                time.sleep(self.pace)

    @property
    def attempts(self) -> list[Attempt]:
        return [a for b in self.batches for a in b.attempts]

    def accepted_nids(self) -> set[str]:
        return {nid for b in self.batches if b.accepted for nid in b.nids}
