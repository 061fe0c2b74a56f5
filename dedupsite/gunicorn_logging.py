"""gunicorn's access log without secrets: an API key given as ``?key=`` (the seed call's
form) is written as ``key=[redacted]``, and the Authorization header never appears."""

from __future__ import annotations

import re
from typing import Any

from gunicorn.glogging import Logger

_SECRET_PARAMETER = re.compile(r"(?i)((?:^|[?&;])(?:key|api_key|token)=)[^&;\s]*")


def redact(text: str) -> str:
    return _SECRET_PARAMETER.sub(r"\1[redacted]", text)


class RedactingLogger(Logger):
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
