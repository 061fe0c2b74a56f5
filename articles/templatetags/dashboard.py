"""Template helpers of the editor pages. None of them marks crawled text safe."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from django import template
from django.conf import settings
from django.utils.translation import gettext_lazy as _
from django.utils.translation import ngettext

register = template.Library()

_ACTION_LABELS = {
    "confirm": _("confirmed the cluster"),
    "split": _("split an article out"),
    "move": _("moved an article"),
    "merge": _("merged clusters"),
    "representative": _("chose the representative"),
    "representative_released": _("released the representative"),
    "undo": _("undid a decision"),
    "flag_for_review": _("flagged for review"),
    "mark_for_review": _("marked for review"),
}

_REASON_LABELS = {
    "near_threshold": _("distance near the threshold"),
    "title_only": _("matched by title"),
    "low_similarity": _("low similarity"),
    "large_cluster": _("large cluster"),
    "flagged": _("flagged for review"),
}


@register.filter
def http_url(value: object) -> str:
    """The URL when it is an absolute http(s) URL, else "" (no javascript:, data:, ...)."""
    text = str(value or "").strip()
    if any(ch in text for ch in "\x00\r\n\t") or len(text) > 2048:
        return ""
    try:
        parts = urlsplit(text)
    except ValueError:
        return ""
    if parts.scheme.lower() not in ("http", "https") or not parts.netloc:
        return ""
    return text


def _ascii_host(host: str) -> str:
    """Each non-ASCII label of ``host`` as ``xn--`` punycode (IDNA where it is valid)."""
    labels = []
    for label in host.split("."):
        if label.isascii():
            labels.append(label)
            continue
        try:
            labels.append(label.encode("idna").decode("ascii"))
        except UnicodeError:  # not a valid IDN label ("uk∕news"): still shown for what it is
            labels.append("xn--" + label.encode("punycode").decode("ascii"))
    return ".".join(labels)


@register.filter
def display_url(value: object) -> str:
    """The URL as it should be read: its host in punycode, so that a look-alike host
    (Cyrillic letters, "∕" instead of "/") shows what it is. Escaped by the template
    like any crawled text."""
    text = str(value or "")
    try:
        host = urlsplit(text).hostname or ""
    except ValueError:
        return text
    if host.isascii():
        return text
    at = text.lower().find(host)
    return text if at < 0 else text[:at] + _ascii_host(host) + text[at + len(host):]


@register.filter
def action_label(action: str) -> str:
    return str(_ACTION_LABELS.get(action, action))


@register.filter
def reason_label(reason: str) -> str:
    return str(_REASON_LABELS.get(reason, reason))


@register.filter
def percent(value: float | None) -> str:
    if value is None:
        return "—"
    return f"{value * 100:.0f}%"


@register.filter
def undo_decision(message: Any) -> str:
    """The decision a success message offers to undo ("" for none): its ``undo-<id>`` tag."""
    for tag in str(getattr(message, "extra_tags", "") or "").split():
        if tag.startswith("undo-") and tag[5:].isdigit():
            return tag[5:]
    return ""


_SKIP_REASONS = {
    "confirmed": _("already confirmed"),
    "marked": _("already marked for review"),
    "empty": _("no articles left in it"),
    "gone": _("deleted"),
    "busy": _("another editor was changing it at the same moment"),
    "undone": _("undone already"),
    "joined": _("new articles joined it since"),
}


@register.filter
def skip_reason(skip: dict[str, str]) -> str:
    """Why a bulk action left a cluster alone (a skip of BulkAction.skipped)."""
    if skip.get("reason") == "changed":
        if not skip.get("who") and not skip.get("what"):
            return str(_("changed since it was selected"))
        return _("changed since it was selected: %(who)s (%(what)s)") % {
            "who": skip.get("who") or _("system"), "what": action_label(skip.get("what", ""))}
    reason = skip.get("reason", "")
    return str(_SKIP_REASONS.get(reason, reason))


@register.filter
def bulk_label(bulk: Any) -> str:
    """What a bulk action does, in words: "Confirm 200 clusters"."""
    total = len(bulk.targets)
    if bulk.action == "confirm":
        return ngettext("Confirm %(n)s cluster", "Confirm %(n)s clusters", total) % {"n": total}
    if bulk.action == "flag_for_review":
        return ngettext("Mark %(n)s cluster for review", "Mark %(n)s clusters for review",
                        total) % {"n": total}
    return ngettext("Undo a bulk decision (%(n)s cluster)",
                    "Undo a bulk decision (%(n)s clusters)", total) % {"n": total}


@register.simple_tag(takes_context=True)
def proxy_unconfigured(context: Any) -> bool:
    """A proxy stands in front (the request carries X-Forwarded-For) but TRUSTED_PROXIES
    is 0: every user then has the proxy's address, and the login limits count them as
    one (the admin says so on every page)."""
    request = context.get("request")
    return bool(request is not None and settings.TRUSTED_PROXIES == 0
                and request.META.get("HTTP_X_FORWARDED_FOR"))
