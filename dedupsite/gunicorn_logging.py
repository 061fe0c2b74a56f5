"""gunicorn's logs without secrets: an API key given as ``?key=`` (the seed call's form;
also percent-encoded, ``?%6Bey=``, which Django decodes and accepts) is written as
``key=[redacted]`` in the access log and in the error log (gunicorn's "Invalid HTTP
request line" warning quotes the raw line), and the Authorization header never
appears."""

from __future__ import annotations

import logging
import re
from typing import Any
from urllib.parse import unquote_plus

from gunicorn.glogging import Logger

SECRET_NAMES = frozenset({"key", "api_key", "token"})
_PARAMETER = re.compile(r"(^|[?&;\s'\"])([^=&;?\s'\"]+)=([^&;\s'\"]*)")


def _redact_one(match: re.Match[str]) -> str:
    name = unquote_plus(match.group(2))
    if name.strip().lower() in SECRET_NAMES:
        return f"{match.group(1)}{match.group(2)}=[redacted]"
    return match.group(0)


def redact(text: str) -> str:
    """Every ``name=value`` whose name, percent-decoded, is a secret's: value redacted."""
    return _PARAMETER.sub(_redact_one, text)


class RedactingFilter(logging.Filter):
    """For the error log: the formatted message, redacted."""

    def filter(self, record: logging.LogRecord) -> bool:
        record.msg = redact(record.getMessage())
        record.args = ()
        return True


class RedactingLogger(Logger):
    def __init__(self, cfg: Any) -> None:
        super().__init__(cfg)
        self.error_log.addFilter(RedactingFilter())

    def atoms(self, resp: Any, req: Any, environ: dict[str, Any], request_time: Any
              ) -> dict[str, Any]:
        atoms: dict[str, Any] = super().atoms(resp, req, environ, request_time)
        for name, value in atoms.items():
            # request line, query string, referer, and the raw environ and header atoms
            if name.lower() in ("{authorization}i", "{cookie}i", "{http_authorization}e",
                                "{http_cookie}e"):
                atoms[name] = "[redacted]"
            elif isinstance(value, str):
                atoms[name] = redact(value)
        return atoms
