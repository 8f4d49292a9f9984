"""The report's charts as inline SVG (no script, no font file, no request): stacked bars over
time, horizontal bars, a reliability diagram and a share bar. Each is an image with a title and
a description for screen readers; the numbers are in the table the page puts beside it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from markupsafe import Markup, escape

COLOURS = {"allow": "#2e7d32", "warn": "#e0a100", "ask": "#1565c0", "block": "#c62828",
           "redirect": "#6a1b9a"}
PALETTE = ("#1565c0", "#c62828", "#2e7d32", "#e0a100", "#6a1b9a", "#00838f", "#ad1457",
           "#4e342e")
FONT = 'font-family="system-ui, sans-serif" font-size="11"'


def colour(kind: str, index: int = 0) -> str:
    return COLOURS.get(kind, PALETTE[index % len(PALETTE)])


def _svg(ident: str, title: str, desc: str, width: int, height: int, body: list[str]) -> Markup:
    # Inline in HTML, <svg> needs no xmlns: the page names no URL at all.
    head = (f'<svg class="chart" id="{escape(ident)}" '
            f'viewBox="0 0 {width} {height}" width="{width}" height="{height}" role="img" '
            f'aria-labelledby="{escape(ident)}-title {escape(ident)}-desc" {FONT}>'
            f'<title id="{escape(ident)}-title">{escape(title)}</title>'
            f'<desc id="{escape(ident)}-desc">{escape(desc)}</desc>')
    return Markup(head + "".join(body) + "</svg>")


def _nice(top: float) -> float:
    """A round axis maximum at or above ``top``."""
    if top <= 0:
        return 1.0
    step = 10 ** math.floor(math.log10(top))
    for factor in (1, 2, 2.5, 5, 10):
        if factor * step >= top:
            return float(factor * step)
    return float(10 * step)   # pragma: no cover


def _number(value: float) -> str:
    return f"{value:,.0f}" if value >= 10 or value == int(value) else f"{value:g}"


def stacked_bars(ident: str, title: str, rows: Sequence[dict[str, Any]], kinds: Sequence[str],
                 width: int = 640, height: int = 260) -> Markup:
    """One bar per row (``{"bucket": label, "counts": {kind: n}}``), stacked by kind."""
    left, right, top, bottom = 48, 8, 24, 40
    plot_w, plot_h = width - left - right, height - top - bottom
    totals = [sum(row["counts"].get(k, 0) for k in kinds) for row in rows]
    peak = _nice(max(totals, default=0))
    body: list[str] = []
    for tick in range(5):
        value = peak * tick / 4
        y = top + plot_h - plot_h * tick / 4
        body.append(f'<line x1="{left}" x2="{width - right}" y1="{y:.1f}" y2="{y:.1f}" '
                    f'stroke="#ddd"/><text x="{left - 4}" y="{y + 4:.1f}" '
                    f'text-anchor="end" fill="#555">{_number(value)}</text>')
    slot = plot_w / max(len(rows), 1)
    bar = max(1.0, slot * 0.8)
    every = max(1, math.ceil(len(rows) / 8))
    for index, row in enumerate(rows):
        x = left + index * slot + (slot - bar) / 2
        y = top + plot_h
        for at, kind in enumerate(kinds):
            count = row["counts"].get(kind, 0)
            if not count:
                continue
            h = plot_h * count / peak
            y -= h
            body.append(f'<rect x="{x:.1f}" y="{y:.1f}" width="{bar:.1f}" height="{h:.1f}" '
                        f'fill="{colour(kind, at)}"><title>{escape(row["bucket"])} '
                        f'{escape(kind)}: {count}</title></rect>')
        if index % every == 0:
            body.append(f'<text x="{x + bar / 2:.1f}" y="{top + plot_h + 14}" '
                        f'text-anchor="middle" fill="#555">{escape(_short(row["bucket"]))}</text>')
    x = left
    for at, kind in enumerate(kinds):
        body.append(f'<rect x="{x}" y="6" width="10" height="10" fill="{colour(kind, at)}"/>'
                    f'<text x="{x + 14}" y="15" fill="#222">{escape(kind)}</text>')
        x += 24 + 7 * len(kind)
    if not rows:
        body.append(f'<text x="{width / 2}" y="{height / 2}" text-anchor="middle" '
                    'fill="#777">no decisions in this window</text>')
    return _svg(ident, title, "Stacked bars per time bucket; the same counts are in the table "
                "beside the chart.", width, height, body)


def _short(bucket: str) -> str:
    """``2026-05-01T12`` -> ``05-01 12h``; ``2026-05-01`` -> ``05-01``; a month stays."""
    if len(bucket) == 13:
        return f"{bucket[5:10]} {bucket[11:13]}h"
    if len(bucket) == 10:
        return bucket[5:]
    return bucket


def hbars(ident: str, title: str, items: Sequence[tuple[str, float]], *, maximum: float | None = None,
          percent: bool = False, places: int | None = None, colours: Sequence[str] | None = None,
          width: int = 420) -> Markup:
    """One horizontal bar per ``(label, value)``; ``percent``: values are shares of 1;
    ``places``: values shown with that many decimals."""
    label_w, row_h, top = 150, 22, 6
    height = top * 2 + row_h * max(len(items), 1)
    peak = maximum if maximum is not None else _nice(max((v for _l, v in items), default=0))
    plot_w = width - label_w - 60
    body: list[str] = []
    for index, (label, value) in enumerate(items):
        y = top + index * row_h
        w = plot_w * (value / peak) if peak else 0
        shown = (f"{value:.0%}" if percent else _number(value) if places is None
                 else f"{value:.{places}f}")
        fill = colours[index] if colours else PALETTE[0]
        body.append(f'<text x="{label_w - 6}" y="{y + 15}" text-anchor="end" fill="#222">'
                    f'{escape(_clip(label, 24))}</text>'
                    f'<rect x="{label_w}" y="{y + 3}" width="{max(w, 0.5):.1f}" height="{row_h - 6}" '
                    f'fill="{fill}"><title>{escape(label)}: {shown}</title></rect>'
                    f'<text x="{label_w + w + 4:.1f}" y="{y + 15}" fill="#222">{shown}</text>')
    if not items:
        body.append(f'<text x="{width / 2}" y="{top + 15}" text-anchor="middle" fill="#777">'
                    'none</text>')
    return _svg(ident, title, "Horizontal bars; the same figures are in the table beside the "
                "chart.", width, height, body)


def _clip(text: str, width: int) -> str:
    return text if len(text) <= width else text[:width - 1] + "…"


def reliability(ident: str, title: str, bins: Sequence[dict[str, Any]], size: int = 320
                ) -> Markup:
    """Stated confidence (x) against the mean outcome (y) per confidence bin, a point per bin
    (its area follows the bin's count) over the diagonal of perfect calibration."""
    left, top = 46, 10
    plot = size - left - 14
    total = sum(b["count"] for b in bins) or 1

    def xy(conf: float, outcome: float) -> tuple[float, float]:
        return left + conf * plot, top + plot - outcome * plot

    body: list[str] = []
    for tick in range(6):
        value = tick / 5
        x, y = xy(value, value)
        body.append(f'<line x1="{x:.1f}" x2="{x:.1f}" y1="{top}" y2="{top + plot}" '
                    f'stroke="#eee"/><line x1="{left}" x2="{left + plot}" y1="{y:.1f}" '
                    f'y2="{y:.1f}" stroke="#eee"/>'
                    f'<text x="{x:.1f}" y="{top + plot + 14}" text-anchor="middle" '
                    f'fill="#555">{value:.1f}</text><text x="{left - 5}" y="{y + 4:.1f}" '
                    f'text-anchor="end" fill="#555">{value:.1f}</text>')
    x0, y0 = xy(0, 0)
    x1, y1 = xy(1, 1)
    body.append(f'<line x1="{x0}" y1="{y0}" x2="{x1}" y2="{y1}" stroke="#999" '
                'stroke-dasharray="4 3"><title>perfect calibration</title></line>')
    points = [xy(b["mean_confidence"], b["mean_outcome"]) for b in bins]
    if len(points) > 1:
        body.append('<polyline fill="none" stroke="#1565c0" stroke-width="1.5" points="'
                    + " ".join(f"{x:.1f},{y:.1f}" for x, y in points) + '"/>')
    for found, (x, y) in zip(bins, points, strict=True):
        radius = 3 + 9 * math.sqrt(found["count"] / total)
        body.append(f'<circle cx="{x:.1f}" cy="{y:.1f}" r="{radius:.1f}" fill="#1565c0" '
                    f'fill-opacity="0.6"><title>confidence {found["range"][0]:.1f}-'
                    f'{found["range"][1]:.1f}: {found["count"]} decisions, mean confidence '
                    f'{found["mean_confidence"]:.2f}, mean outcome {found["mean_outcome"]:.2f}'
                    '</title></circle>')
    middle = top + plot / 2
    body.append(f'<text x="{left + plot / 2}" y="{size - 4}" text-anchor="middle" fill="#222">'
                f'stated confidence</text><text x="12" y="{middle}" fill="#222" '
                f'text-anchor="middle" transform="rotate(-90 12 {middle})">mean outcome</text>')
    if not bins:
        body.append(f'<text x="{left + plot / 2}" y="{middle}" text-anchor="middle" '
                    'fill="#777">no reviewed decisions</text>')
    return _svg(ident, title, "Reliability diagram: one point per confidence bin at its mean "
                "stated confidence and mean outcome; points on the dashed diagonal are well "
                "calibrated. The bins are in the table beside the chart.", size, size, body)


def share_bar(ident: str, title: str, part: float, whole: float, labels: tuple[str, str],
              width: int = 420) -> Markup:
    """One bar split in two: ``part`` of ``whole`` and the rest (grey with a note when
    ``whole`` is 0)."""
    height, left = 44, 0
    if not whole:
        return _svg(ident, title, "Nothing to share out.", width, height, [
            f'<rect x="0" y="4" width="{width}" height="20" fill="#eee"/>'
            f'<text x="{width / 2}" y="18" text-anchor="middle" fill="#777">none</text>'])
    share = part / whole if whole else 0.0
    split = width * share
    body = [f'<rect x="{left}" y="4" width="{split:.1f}" height="20" fill="#2e7d32">'
            f'<title>{escape(labels[0])}: {share:.0%}</title></rect>',
            f'<rect x="{split:.1f}" y="4" width="{width - split:.1f}" height="20" fill="#bbb">'
            f'<title>{escape(labels[1])}: {1 - share:.0%}</title></rect>',
            f'<text x="2" y="38" fill="#222">{escape(labels[0])} {share:.0%}</text>',
            f'<text x="{width - 2}" y="38" text-anchor="end" fill="#222">{escape(labels[1])} '
            f'{1 - share:.0%}</text>']
    return _svg(ident, title, "A share bar; the same figures are in the table beside it.",
                width, height, body)
