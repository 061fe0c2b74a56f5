"""Small server-rendered SVG charts (no JavaScript, no CDN; CSP-safe).

Labels may come from crawled data (media names): every text goes through
format_html, so it is escaped.
"""

from __future__ import annotations

from collections.abc import Sequence

from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString

WIDTH, HEIGHT, PAD_L, PAD_B, PAD_T = 640, 220, 44, 38, 12


def n(value: float) -> str:
    """format_html escapes its arguments into strings: format numbers first."""
    return f"{value:.1f}"


def bar_chart(points: Sequence[tuple[str, float]], *, title: str = "", color: str = "#2458d6",
              fmt: str = "{:g}") -> SafeString:
    if not points:
        return format_html('<p class="muted">{}</p>', "—")
    top = max(value for _label, value in points) or 1
    inner_w, inner_h = WIDTH - PAD_L - 10, HEIGHT - PAD_B - PAD_T
    step = inner_w / len(points)
    bar_w = max(step * 0.7, 1)
    every = max(1, len(points) // 8)
    bars = []
    for i, (label, value) in enumerate(points):
        h = inner_h * value / top
        x = PAD_L + i * step + (step - bar_w) / 2
        y = PAD_T + inner_h - h
        bars.append(format_html(
            '<rect x="{}" y="{}" width="{}" height="{}" fill="{}">'
            "<title>{}: {}</title></rect>",
            n(x), n(y), n(bar_w), n(h), color, label, fmt.format(value)))
        if i % every == 0:
            bars.append(format_html(
                '<text x="{}" y="{}" font-size="10" text-anchor="middle" fill="#6b7385">'
                "{}</text>", n(x + bar_w / 2), HEIGHT - PAD_B + 14, str(label)[:12]))
    return format_html(
        '<svg class="chart" viewBox="0 0 {} {}" role="img" aria-label="{}">'
        '<line x1="{}" y1="{}" x2="{}" y2="{}" stroke="#c9cfdc"/>'
        '<text x="4" y="{}" font-size="10" fill="#6b7385">{}</text>'
        '<text x="4" y="{}" font-size="10" fill="#6b7385">0</text>{}</svg>',
        WIDTH, HEIGHT, title, PAD_L, PAD_T + inner_h, WIDTH - 10, PAD_T + inner_h,
        PAD_T + 8, fmt.format(top), PAD_T + inner_h, SafeString("".join(bars)))


def line_chart(xs: Sequence[str], series: Sequence[tuple[str, str, Sequence[float | None]]],
               *, title: str = "") -> SafeString:
    """Lines over 0..1 (e.g. precision and recall for k = 0..8); None leaves a gap. The
    legend on the right is as wide as its longest name."""
    legend = max([100.0] + [_text_width(name) + 25 for name, _c, _v in series])
    legend = min(legend, WIDTH / 2)
    inner_w, inner_h = WIDTH - PAD_L - legend - 10, HEIGHT - PAD_B - PAD_T
    step = inner_w / max(len(xs) - 1, 1)

    def point(i: int, v: float) -> tuple[float, float]:
        return PAD_L + i * step, PAD_T + inner_h * (1 - v)

    parts = [format_html('<line x1="{}" y1="{}" x2="{}" y2="{}" stroke="#c9cfdc"/>',
                         PAD_L, n(PAD_T + inner_h * (1 - g)), PAD_L + inner_w,
                         n(PAD_T + inner_h * (1 - g))) for g in (0, 0.5, 1)]
    parts += [format_html('<text x="8" y="{}" font-size="10" fill="#6b7385">{}</text>',
                          n(PAD_T + inner_h * (1 - g) + 3), f"{g:.1f}") for g in (0, 0.5, 1)]
    parts += [format_html('<text x="{}" y="{}" font-size="10" text-anchor="middle" '
                          'fill="#6b7385">{}</text>', n(PAD_L + i * step), HEIGHT - PAD_B + 14, x)
              for i, x in enumerate(xs)]
    for row, (name, color, values) in enumerate(series):
        coords = [point(i, v) for i, v in enumerate(values) if v is not None]
        if coords:
            parts.append(format_html(
                '<polyline points="{}" fill="none" stroke="{}" stroke-width="2"/>',
                " ".join(f"{x:.1f},{y:.1f}" for x, y in coords), color))
            parts.append(format_html_join("", '<circle cx="{}" cy="{}" r="3" fill="{}"/>',
                                          ((n(x), n(y), color) for x, y in coords)))
        parts.append(format_html(
            '<rect x="{}" y="{}" width="10" height="10" fill="{}"/>'
            '<text x="{}" y="{}" font-size="11" fill="#1d2330">{}</text>',
            n(WIDTH - legend), PAD_T + row * 18, color, n(WIDTH - legend + 15),
            PAD_T + row * 18 + 9, name))
    return format_html('<svg class="chart" viewBox="0 0 {} {}" role="img" aria-label="{}">{}'
                       "</svg>", WIDTH, HEIGHT, title, SafeString("".join(parts)))


def _text_width(text: str) -> float:
    """About how wide ``text`` is at font size 11: CJK characters are square."""
    return sum(11.0 if ord(ch) >= 0x2E80 else 6.2 for ch in text)
