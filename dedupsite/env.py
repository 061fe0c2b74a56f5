"""Small typed readers for the 12-factor environment (no third-party imports)."""

from __future__ import annotations

import ipaddress
import os


def env_str(name: str, default: str = "") -> str:
    return os.environ.get(name, default)


def env_bool(name: str, default: bool = False) -> bool:
    raw = os.environ.get(name)
    if raw is None or raw == "":
        return default
    value = raw.strip().lower()
    if value in {"1", "true", "yes", "on"}:
        return True
    if value in {"0", "false", "no", "off"}:
        return False
    raise ValueError(f"{name}={raw!r} is not a boolean (use 1/0, true/false, yes/no, on/off)")


def env_int(name: str, default: int) -> int:
    raw = os.environ.get(name)
    if raw is None or raw == "":
        return default
    try:
        return int(raw)
    except ValueError as exc:
        raise ValueError(f"{name}={raw!r} is not an integer") from exc


def env_list(name: str, default: list[str]) -> list[str]:
    raw = os.environ.get(name)
    if raw is None or raw.strip() == "":
        return list(default)
    return [item.strip() for item in raw.split(",") if item.strip()]


def env_networks(name: str,
                 default: list[str]) -> list[ipaddress.IPv4Network | ipaddress.IPv6Network]:
    """A comma-separated list of addresses or networks (``10.0.0.5``, ``10.0.0.0/24``,
    ``::1``); a bad entry stops the start with its name."""
    networks = []
    for item in env_list(name, default):
        try:
            networks.append(ipaddress.ip_network(item, strict=False))
        except ValueError as exc:
            raise ValueError(f"{name}: {item!r} is not an IP address or network") from exc
    return networks
