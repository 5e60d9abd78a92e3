"""The app's timeline as plain drawing data for a small SVG renderer in the browser (issue 17).

The app does not send the timeline to Plotly: a new tab that draws a Plotly chart loads and starts
the 4.6 MB Plotly bundle and lets it measure every row label twice (most of the ~4 s the tab took).
`drawing` turns the figure that `episode_timeline` builds (the one home of the marks, colours,
legend names and hover texts; exported case studies keep it as a Plotly figure) into a small JSON
dict that `pages/timeline_chart.js` draws as SVG: rows, x range and ticks, one entry per trace
with its points, symbols, colours, hover texts and the step each point stands for.

Text stays as `episode_timeline` escaped it for Plotly (`plot_text`: `&`, `<`, `>` as entities,
lines joined by `<br>`); the renderer decodes the entities with a textarea and sets the result
as text, never as HTML. No Streamlit here.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import plotly.graph_objects as go


def _seq(v: Any) -> list[Any] | None:
    if v is None:
        return None
    if isinstance(v, str | int | float):
        return None
    return [None if x is None else (x.item() if hasattr(x, "item") else x) for x in v]


def _one_or_many(v: Any) -> Any:
    """A marker property as JSON: a scalar, or one value per point."""
    if v is None or isinstance(v, str | int | float):
        return v
    return _seq(v)


def _trace(t: Any) -> dict[str, Any]:
    hover = None if t.hoverinfo == "skip" else _seq(t.hovertext)
    if t.type == "bar":
        return {
            "kind": "bar",
            "name": t.name,
            "legend": t.showlegend is not False,
            "y": _seq(t.y),
            "base": _seq(t.base),
            "length": _seq(t.x),
            "thickness": t.width,
            "color": t.marker.color,
            "hover": hover,
        }
    xs = _seq(t.x) or []
    only_legend = xs == [None]
    m = t.marker
    return {
        "kind": "markers",
        "name": t.name,
        "legend": t.showlegend is not False,
        "x": [] if only_legend else xs,
        "y": [] if only_legend else _seq(t.y),
        "color": _one_or_many(m.color),
        "symbol": _one_or_many(m.symbol) or "circle",
        "size": _one_or_many(m.size) or 6,
        "line_color": m.line.color,
        "line_width": m.line.width,
        "text": None if only_legend else _seq(t.text),
        "text_color": t.textfont.color if t.text is not None else None,
        "text_size": t.textfont.size if t.text is not None else None,
        "hover": None if only_legend else hover,
        "step": None if only_legend else _seq(t.customdata),
    }


def drawing(fig: go.Figure) -> dict[str, Any]:
    """The timeline `fig` (from `episode_timeline`, without a title or cursor shape) as the SVG
    renderer's data: `height` (px), `x_range`, `dtick`, `rows` (y value and escaped label per row),
    `y_range` (top value first is the bottom of the plot, as in Plotly's reversed axis) and
    `traces` in drawing order (a legend-only trace has no points)."""
    lay = fig.layout
    vals: Sequence[Any] = lay.yaxis.tickvals or ()
    texts: Sequence[Any] = lay.yaxis.ticktext or ()
    return {
        "height": lay.height,
        "x_range": list(lay.xaxis.range),
        "dtick": lay.xaxis.dtick,
        "x_title": lay.xaxis.title.text or "",
        "rows": [{"y": v, "label": s} for v, s in zip(vals, texts)],
        "y_range": list(lay.yaxis.range),
        "traces": [_trace(t) for t in fig.data],
    }
