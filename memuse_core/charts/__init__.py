"""Charts of the aggregates (MemUse 3.5, 4.2, 4.4): pure functions from plain values to a
`go.Figure` (or, for Figure 3, to escaped HTML).

* `profile_radar` / `profile_heatmap`: the six-axis entry-share profiles of Figure 3 on a common
  logarithmic scale from 0.001% to 100%, as HTML (a radar of positioned boxes and a shaded table; see `profile`).
* `form_share_chart`: Figure 5, each delivery form's share of estimated delivered tokens (circles)
  against its share of beneficial entries (diamonds).
* `resolve_rate_chart`: resolve rates with intervals.
* `shared_lines`: which lines of an entry's text the prior context already shows (span page).

No Streamlit here: the app and the case-study export both call these.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import Any

import plotly.graph_objects as go

from ..textsafe import plot_text
from . import profile
from .profile import LOG_MAX_PCT as LOG_MAX_PCT
from .profile import LOG_MIN_PCT as LOG_MIN_PCT

AXIS_TITLES = {
    "relevance": "Relevance",
    "corroboration": "Corroboration",
    "information_gain": "Information gain",
    "acted_on": "Acted on",
    "benefit": "Benefit",
    "harm": "Harm",
}
PALETTE = [
    "#4c78a8",
    "#f58518",
    "#54a24b",
    "#b279a2",
    "#e45756",
    "#72b7b2",
    "#eeca3b",
    "#ff9da6",
    "#9d755d",
    "#bab0ac",
]
"""Categorical colours (action kinds on the timeline, groups on the form chart)."""


GRID_COLOUR = "rgba(128,128,128,0.45)"
"""Grid and axis lines that read on a light and on a dark background."""


def escape_hover(text: str) -> str:
    """Recorded text for a hover label: Plotly renders a small HTML subset there, so neutralise it."""
    return plot_text(text)


def is_nan(x: Any) -> bool:
    """None or a float NaN (a missing value from a data frame)."""
    return x is None or (isinstance(x, float) and math.isnan(x))


# ---- Profiles (Figure 3) --------------------------------------------------------------------


def profile_radar(profiles: Mapping[str, Mapping[str, float | None]]) -> str:
    """Six-axis radar, one polygon per group, on a log radial scale 0.001%–100% (Figure 3a), as
    HTML (`charts.profile.radar_html`). `profiles`: group name -> {axis: mean share in 0-1};
    zero shares sit at the centre."""
    return profile.radar_html(profiles, AXIS_TITLES, PALETTE, GRID_COLOUR)


def profile_heatmap(profiles: Mapping[str, Mapping[str, float | None]]) -> str:
    """The same means as percentages in a table shaded on the same log scale (Figure 3b), as
    HTML (`charts.profile.heatmap_html`)."""
    return profile.heatmap_html(profiles, AXIS_TITLES)


# ---- Delivery forms (Figure 5) --------------------------------------------------------------


def form_share_chart(rows: Iterable[Mapping[str, Any]], *, min_token_share: float = 0.001) -> go.Figure:
    """Circles: share of estimated delivered tokens; diamonds: share of beneficial entries.

    `rows`: dicts with group (config), form, token_share, beneficial_share (fractions). Forms with
    no beneficial entries and under `min_token_share` of tokens are omitted from the plot, as in
    Figure 5 (they stay in the denominators, which the caller computed).
    """
    kept = [
        r
        for r in rows
        if (r.get("beneficial_share") or 0) > 0 or (r.get("token_share") or 0) >= min_token_share
    ]
    fig = go.Figure()
    groups = sorted({str(r.get("group", "")) for r in kept})
    for gi, g in enumerate(groups):
        rs = [r for r in kept if str(r.get("group", "")) == g]
        ylab = [
            escape_hover(f"{r['form']} · {g}") if len(groups) > 1 else escape_hover(str(r["form"]))
            for r in rs
        ]
        colour = PALETTE[gi % len(PALETTE)]
        fig.add_trace(
            go.Scatter(
                x=[_pct_or_none(r.get("token_share")) for r in rs],
                y=ylab,
                mode="markers",
                name=escape_hover(f"{g} tokens"),
                marker={"symbol": "circle", "size": 12, "color": colour},
            )
        )
        fig.add_trace(
            go.Scatter(
                x=[_pct_or_none(r.get("beneficial_share")) for r in rs],
                y=ylab,
                mode="markers",
                name=escape_hover(f"{g} beneficial"),
                marker={
                    "symbol": "diamond",
                    "size": 12,
                    "color": colour,
                    "line": {"color": GRID_COLOUR, "width": 1},
                },
            )
        )
    fig.update_layout(
        xaxis={"title": "share (%)", "range": [-2, 102]},
        yaxis={"automargin": True},
        height=160 + 26 * len(kept),
        margin={"l": 10, "r": 10, "t": 50, "b": 40},
        # above the plot: below it, a horizontal legend covered the x axis and its title
        legend={"orientation": "h", "yanchor": "bottom", "y": 1.02, "xanchor": "left", "x": 0},
    )
    return fig


def _pct_or_none(share: Any) -> float | None:
    """A share as a percentage; an undefined share stays undefined (no marker), never 0%."""
    return None if share is None else 100 * float(share)


def resolve_rate_chart(rows: Iterable[Mapping[str, Any]]) -> go.Figure:
    """Resolve rate per group with an interval: dicts with group, rate, low, high (fractions).

    Horizontal bars, one row per group, so that long configuration names stay readable and any
    number of groups fits (the height grows with them). A group whose rate is undefined (no episode
    has an outcome) gets no bar but the label "no outcome" on its own row, never a 0% bar: unknown
    is not unresolved. A whisker is drawn only where the interval is defined (a configuration with
    one run has no sample SD: no whisker, not a zero-length one)."""
    rows = list(rows)
    nan = float("nan")
    rate = [float(r["rate"]) if r.get("rate") is not None else None for r in rows]
    high = [float(r["high"]) if r.get("high") is not None else None for r in rows]
    low = [float(r["low"]) if r.get("low") is not None else None for r in rows]
    groups = [escape_hover(str(r["group"])) for r in rows]
    plus = [nan if v is None or h is None else 100 * (h - v) for h, v in zip(high, rate)]
    minus = [nan if v is None or lo is None else 100 * (v - lo) for lo, v in zip(low, rate)]
    fig = go.Figure(
        go.Bar(
            y=groups,
            x=[None if v is None else 100 * v for v in rate],
            orientation="h",
            error_x={"type": "data", "symmetric": False, "array": plus, "arrayminus": minus},
            marker_color="#4c78a8",
            hovertemplate="%{y}: %{x:.1f}%<extra></extra>",
        )
    )
    for g, v in zip(groups, rate):
        if v is None:
            fig.add_annotation(y=g, x=0, text="no outcome", showarrow=False, xanchor="left", xshift=4)
    fig.update_layout(
        xaxis={"title": "resolved (%)", "range": [0, 100]},
        yaxis={"autorange": "reversed", "automargin": True},
        height=max(160, 60 + 28 * len(rows)),
        margin={"l": 10, "r": 10, "t": 20, "b": 30},
    )
    return fig


# ---- Text comparison for the span inspector -------------------------------------------------


def shared_lines(text: str, others: Iterable[str], *, min_chars: int = 12) -> list[tuple[str, bool]]:
    """Split `text` into lines, each flagged when it also occurs (stripped, at least `min_chars`
    long) in one of `others`: the passages of exposed memory the prior context already shows."""
    pool = "\n".join(o for o in others if o)
    out = []
    for line in (text or "").split("\n"):
        s = line.strip()
        out.append((line, len(s) >= min_chars and s in pool))
    return out
