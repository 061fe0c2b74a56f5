"""Read an environment file the way systemd's ``EnvironmentFile=`` does, so that a
command run by hand (``deploy/dedupsite-manage``) sees exactly the settings the units
see. Standard library only: it runs as root before any virtualenv is chosen.

What systemd accepts, and nothing more:

- ``NAME=value`` lines; blank lines and lines starting with ``#`` or ``;`` are skipped
  (a ``#`` later in a line is part of the value);
- whitespace around the name and before the value is dropped, and after an unquoted value;
- a value may start with quotes (and continue with more, after optional whitespace):
  ``'single quotes'`` keep everything literally, newlines included; ``"double quotes"``
  too, except ``\\"``, ``\\\\``, ``\\$`` and ``\\``` (the character) and a backslash
  before a newline (the lines join);
- unquoted, quotes are literal (``a"b"`` is those four characters), a backslash takes
  the next character literally, and a backslash at the end of a line continues the value
  on the next;
- no ``$VARIABLE`` expansion, no ``export``.

A line that assigns nothing (no ``=``, or a name that is not a shell name) is an error
with its line number, where systemd would only log it: an operator's typo should stop
the command, not leave a setting silently at its default.
"""

from __future__ import annotations

import re
from pathlib import Path

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_DOUBLE_QUOTE_ESCAPES = "\"\\`$"


class EnvFileError(ValueError):
    pass


def _quoted(state: str, char: str, out: list[str]) -> str:
    """One character inside quotes; the state after it."""
    if state == "single":
        if char == "'":
            return "pre"
        out.append(char)
        return state
    if state == "double-escape":
        if char in _DOUBLE_QUOTE_ESCAPES:
            out.append(char)
        elif char != "\n":
            out.extend(("\\", char))
        return "double"
    if char == '"':
        return "pre"
    if char == "\\":
        return "double-escape"
    out.append(char)
    return state


def _unquoted(state: str, char: str, out: list[str]) -> str:
    """One character outside quotes (never the newline that ends the value)."""
    if state == "escape":
        if char != "\n":
            out.append(char)
        return "value"
    if char == "\\":
        return "escape"
    if state == "pre" and char in "'\"":
        return "single" if char == "'" else "double"
    if state == "pre" and char.isspace():
        return state
    out.append(char)
    return "value"


def _value(text: str, pos: int, line: int) -> tuple[str, int, int]:
    """The value starting at text[pos]: (value, position after its newline, line count).

    systemd's states: quotes open only where a value or a closing quote left off
    ("pre"), whitespace there is skipped; inside an unquoted run they are literal, and
    the run's trailing whitespace is dropped."""
    first = line
    out: list[str] = []
    kept = 0  # out's length up to its last character that is not trailing whitespace
    state = "pre"
    while pos < len(text):
        char = text[pos]
        pos += 1
        if state in ("pre", "value") and char == "\n":
            return "".join(out[:kept]), pos, line + 1
        line += char == "\n"
        if state in ("pre", "value", "escape"):
            escaped = state == "escape"
            state = _unquoted(state, char, out)
            if escaped or not char.isspace():
                kept = len(out)
        else:
            state = _quoted(state, char, out)
            kept = len(out)
    if state not in ("pre", "value", "escape"):
        raise EnvFileError(f"line {first}: a quote in the value is never closed")
    return "".join(out[:kept]), pos, line


def parse(text: str) -> dict[str, str]:
    values: dict[str, str] = {}
    pos, line = 0, 1
    while pos < len(text):
        end = text.find("\n", pos)
        end = len(text) if end < 0 else end
        stripped = text[pos:end].strip()
        if not stripped or stripped[0] in "#;":
            pos, line = end + 1, line + 1
            continue
        name, sep, _rest = text[pos:end].partition("=")
        name = name.strip()
        if not sep or not _NAME.match(name):
            raise EnvFileError(f"line {line}: expected NAME=value, got {stripped[:40]!r}")
        values[name], pos, line = _value(text, pos + text[pos:end].index("=") + 1, line)
    return values


def read(path: str | Path) -> dict[str, str]:
    try:
        return parse(Path(path).read_text())
    except EnvFileError as exc:
        raise EnvFileError(f"{path}: {exc}") from None
