"""Figure 3's six-axis entry-share profiles as HTML for the app (MemUse 3.5, Figure 3): a radar
drawn with positioned boxes and a CSS clip path, and a shaded table, both on the common logarithmic scale from 0.001% (the
centre, the lightest shade) to 100%.

HTML rather than Plotly: the Overview and Compare draw these on every visit, and two Plotly
charts kept the browser busy after the page had settled (issue 17). Group names are recorded
text: every one goes through `textsafe.html_text`. Only these tags are produced: `div`, `span`,
`table`, `tr`, `th`, `td`, with `class`, `style` and `title` attributes (SVG would be removed by
Streamlit's `st.html` sanitiser).
"""

from __future__ import annotations

import math
from collections.abc import Mapping

from ..textsafe import html_text, one_line
from ..vocab import AXES

Profiles = Mapping[str, Mapping[str, float | None]]
"""Group name -> {axis: mean share in 0-1, or None when undefined}."""

LOG_MIN_PCT, LOG_MAX_PCT = 0.001, 100.0
"""Figure 3's scale: 0.001% at the centre (and the lightest shade), 100% at the outer ring."""
TICKS = tuple(10.0**e for e in range(round(math.log10(LOG_MIN_PCT)), round(math.log10(LOG_MAX_PCT)) + 1))
"""The scale's marks, in percent (one ring each on the radar): 0.001, 0.01, ..., 100."""
SHADES = ((0.0, (0x6B, 0xAE, 0xD6)), (0.5, (0x21, 0x71, 0xB5)), (1.0, (0x08, 0x30, 0x6B)))
"""The table's shades from 0.001% to 100%: mid to dark blues under white text, legible on the
light and on the dark theme."""
SIZE, CENTRE, RADIUS = (430, 370), (215, 185), 130.0
"""The radar's box, its centre and the radius of the 100% ring (pixels)."""


def _esc(name: str) -> str:
    return html_text(one_line(name))


def _pct(share: float | None) -> str:
    return "—" if share is None or math.isnan(share) else f"{100 * float(share):.3g}%"


def log_position(share: float | None, log_min: float, log_max: float) -> float:
    """Where a share sits on the log scale, 0 (at or below `log_min` %, zero, undefined) to 1
    (`log_max` %)."""
    if share is None or math.isnan(share) or share <= 0:
        return 0.0
    pct = min(max(100 * float(share), log_min), log_max)
    return (math.log10(pct) - math.log10(log_min)) / (math.log10(log_max) - math.log10(log_min))


def _point(axis: int, fraction: float) -> tuple[float, float]:
    """The point of `axis` (0 at the top, then clockwise) at `fraction` of the radius, in pixels
    from the radar box's top left corner."""
    angle = -math.pi / 2 + 2 * math.pi * axis / len(AXES)
    return CENTRE[0] + RADIUS * fraction * math.cos(angle), CENTRE[1] + RADIUS * fraction * math.sin(angle)


_ABS = "position:absolute;"
_DOT = "position:absolute;width:8px;height:8px;border-radius:50%;transform:translate(-50%,-50%)"
_LABEL = "position:absolute;white-space:nowrap;font-size:11px;line-height:1"


def _segment(x0: float, y0: float, x1: float, y1: float, style: str) -> str:
    """A straight line from (x0, y0) to (x1, y1) as a rotated box."""
    length, angle = math.hypot(x1 - x0, y1 - y0), math.degrees(math.atan2(y1 - y0, x1 - x0))
    return (
        f'<div style="{_ABS}left:{x0:.1f}px;top:{y0:.1f}px;width:{length:.1f}px;{style};'
        f'transform-origin:0 50%;transform:rotate({angle:.2f}deg)"></div>'
    )


def radar_html(profiles: Profiles, titles: Mapping[str, str], palette: list[str], grid: str) -> str:
    """The radar in HTML and CSS: one ring per scale mark (labelled on the top spoke), one spoke
    per axis, and per group a translucent polygon (a CSS clip path) with its outline and a dot
    per vertex whose tooltip reads "group · axis: share"; a legend of the groups below. A zero or
    undefined share sits at the centre.

    Plain positioned boxes rather than SVG: Streamlit's `st.html` sanitiser removes SVG."""
    lo, hi = LOG_MIN_PCT, LOG_MAX_PCT
    (cx, cy), (w, h) = CENTRE, SIZE
    parts = [f'<div style="position:relative;width:{w}px;height:{h}px;max-width:100%;overflow:hidden">']
    for t in TICKS[1:]:
        r = RADIUS * log_position(t / 100, lo, hi)
        parts.append(
            f'<div style="{_ABS}left:{cx - r:.1f}px;top:{cy - r:.1f}px;width:{2 * r:.1f}px;height:{2 * r:.1f}px;'
            f'border:1px solid {grid};border-radius:50%;box-sizing:border-box"></div>'
        )
    for i, a in enumerate(AXES):
        x, y = _point(i, 1.0)
        parts.append(_segment(cx, cy, x, y, f"height:1px;background:{grid}"))
        lx, ly = _point(i, 1.1)
        shift = "-50%" if abs(lx - cx) < 1 else ("0" if lx > cx else "-100%")
        parts.append(
            f'<span style="{_LABEL};left:{lx:.1f}px;top:{ly:.1f}px;transform:translate({shift},-50%)">'
            f"{html_text(titles[a])}</span>"
        )
    for t in TICKS:
        r = RADIUS * log_position(t / 100, lo, hi)
        parts.append(
            f'<span style="{_LABEL};left:{cx + 3:.1f}px;top:{cy - r + 2:.1f}px;opacity:0.75">{t:g}%</span>'
        )
    legend = []
    for gi, (name, prof) in enumerate(profiles.items()):
        colour = palette[gi % len(palette)]
        points = [_point(i, log_position(prof.get(a), lo, hi)) for i, a in enumerate(AXES)]
        clip = ", ".join(f"{x:.1f}px {y:.1f}px" for x, y in points)
        parts.append(
            f'<div title="{_esc(name)}" style="{_ABS}left:0;top:0;width:{w}px;height:{h}px;background:{colour};'
            f'opacity:0.25;clip-path:polygon({clip})"></div>'
        )
        for (x0, y0), (x1, y1) in zip(points, points[1:] + points[:1]):
            parts.append(_segment(x0, y0, x1, y1, f"height:2px;margin-top:-1px;background:{colour}"))
        for (x, y), a in zip(points, AXES):
            parts.append(
                f'<span class="vertex" title="{_esc(name)} · {html_text(titles[a])}: {_pct(prof.get(a))}" '
                f'style="left:{x:.1f}px;top:{y:.1f}px;background:{colour};{_DOT}"></span>'
            )
        legend.append(
            f'<span><span style="display:inline-block;width:0.8em;height:0.8em;background:{colour};'
            f'border-radius:0.15rem;margin-right:0.25em"></span>{_esc(name)}</span>'
        )
    parts.append("</div>")
    return (
        '<div class="memuse-radar">'
        + "".join(parts)
        + '<div style="display:flex;gap:1em;flex-wrap:wrap;font-size:0.875rem">'
        + "".join(legend)
        + "</div></div>"
    )


def _shade(position: float) -> str:
    for (p0, c0), (p1, c1) in zip(SHADES, SHADES[1:]):
        if position <= p1:
            f = (position - p0) / (p1 - p0)
            return "#" + "".join(f"{round(a + (b - a) * f):02x}" for a, b in zip(c0, c1))
    return "#" + "".join(f"{c:02x}" for c in SHADES[-1][1])


def heatmap_html(profiles: Profiles, titles: Mapping[str, str]) -> str:
    """The same means as a table of percentages, each cell shaded on the log scale (the lightest
    shade at 0.001% and below, none when undefined), with a key of the shades."""
    lo, hi = LOG_MIN_PCT, LOG_MAX_PCT
    cell = "padding:0.25em 0.3em;text-align:center"
    head = "".join(
        f'<th style="{cell};font-weight:600;font-size:0.8rem">{html_text(titles[a])}</th>' for a in AXES
    )
    rows = []
    for name, prof in profiles.items():
        tds = []
        for a in AXES:
            v = prof.get(a)
            undefined = v is None or math.isnan(v)
            bg = "" if undefined else f"background:{_shade(log_position(v, lo, hi))};color:#ffffff;"
            tds.append(
                f'<td style="{bg}{cell}" title="{_esc(name)} · {html_text(titles[a])}: {_pct(v)}">{_pct(v)}</td>'
            )
        rows.append(
            f'<tr><th style="{cell};text-align:left;font-weight:600">{_esc(name)}</th>{"".join(tds)}</tr>'
        )
    key = "".join(
        f'<span style="background:{_shade(log_position(t / 100, lo, hi))};color:#ffffff;padding:0 0.4em">{t:g}%</span>'
        for t in TICKS
    )
    return (
        '<div class="memuse-heatmap" style="overflow-x:auto;font-size:0.875rem">'
        f'<table style="border-collapse:separate;border-spacing:2px"><tr><th></th>{head}</tr>{"".join(rows)}</table>'
        f'<div style="margin-top:0.4em">shade (log scale): {key}</div></div>'
    )
