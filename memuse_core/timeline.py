"""Plotly figure builders of the app: pure functions from plain values to `go.Figure`.

* `episode_timeline`: the Figure 4 style timeline of one episode (MemUse 4.3): one marker per
  step (action kind, tool, exit code), deliveries as arrows at their consuming steps, credit
  windows (A.1.5) as shaded bands per entry, anchored actions highlighted, observed effects
  marked (improved green, harmed red).
* `profile_radar` / `profile_heatmap`: the six-axis entry-share profiles of Figure 3 on a common
  logarithmic scale from 0.001% to 100%.
* `form_share_chart`: Figure 5, each delivery form's share of estimated delivered tokens (circles)
  against its share of beneficial entries (diamonds).
* `resolve_rate_chart`: resolve rates with intervals.

No Streamlit here: the app and the case-study export both call these.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import plotly.graph_objects as go

from .vocab import AXES

AXIS_TITLES = {
    "relevance": "Relevance",
    "corroboration": "Corroboration",
    "information_gain": "Information gain",
    "acted_on": "Acted on",
    "benefit": "Benefit",
    "harm": "Harm",
}
LOG_MIN_PCT, LOG_MAX_PCT = 0.001, 100.0
"""Figure 3's radial range: 0.001% at the centre, 100% at the outer ring."""

EFFECT_COLOURS = {"improved": "#2ca02c", "harmed": "#d62728", "no_effect": "#7f7f7f"}
ANCHOR_COLOUR = "#1f77b4"
WINDOW_FILL = "rgba(31, 119, 180, 0.14)"
MAX_ARROWS = 60
"""Delivery arrows drawn as annotations at most; further deliveries become markers."""
_ACTION_COLOURS = [
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


def _short(text: Any, n: int = 90) -> str:
    s = "" if text is None else str(text).replace("\n", " ")
    return s if len(s) <= n else s[: n - 1] + "…"


def _hover(text: str) -> str:
    # Plotly renders a small HTML subset in hover labels: neutralise recorded text.
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def action_kind(tools: str | None, action: str | None) -> str:
    """A coarse kind for colouring steps: the tool name, or the command's first word."""
    if tools:
        first = tools.split(",")[0]
        if first in ("bash", "shell", "exec") and action:
            cmd = str(action).split(":", 1)[-1].strip().split(" ", 1)[0]
            return cmd[:16] or first
        return first
    if action:
        return str(action).strip().split(" ", 1)[0][:16] or "text"
    return "text"


def entry_label(row: Mapping[str, Any]) -> str:
    """Row label of a span entry on the timeline."""
    key = row.get("display_key") or row.get("item_id") or f"entry {row.get('pos')}"
    ep, _, delivery = str(row.get("span_id", "")).partition("/")
    short = delivery.replace(ep, "", 1).lstrip(":-_/") or delivery
    return f"{_short(key, 28)} · {_short(short, 16)}#{row.get('pos')}"


def episode_timeline(
    steps: Sequence[Mapping[str, Any]],
    entries: Sequence[Mapping[str, Any]] = (),
    deliveries: Sequence[Mapping[str, Any]] = (),
    *,
    selected_step: int | None = None,
    title: str | None = None,
) -> go.Figure:
    """Timeline of one episode.

    `steps`: dicts with step, action, tools, exit_code. `entries`: span entries with span_id,
    pos, item_id/display_key, window_start, window_end, first_step, anchors, effect, influence,
    usage_label. `deliveries`: dicts with delivery_id, step, form, route, restatement.
    Step markers carry `customdata = step` so a selection names the step.
    """
    fig = go.Figure()
    n_rows = len(entries)
    action_y = 0
    kinds: dict[str, str] = {}
    xs, ys, colours, symbols, texts, custom = [], [], [], [], [], []
    for s in steps:
        k = action_kind(s.get("tools"), s.get("action"))
        colour = kinds.setdefault(k, _ACTION_COLOURS[len(kinds) % len(_ACTION_COLOURS)])
        code = s.get("exit_code")
        failed = code is not None and not (isinstance(code, float) and math.isnan(code)) and int(code) != 0
        xs.append(int(s["step"]))
        ys.append(action_y)
        colours.append(colour)
        symbols.append("x" if failed else "circle")
        code_txt = (
            "" if code is None or (isinstance(code, float) and math.isnan(code)) else f" · exit {int(code)}"
        )
        texts.append(
            _hover(f"S{int(s['step'])} {k}{code_txt}") + "<br>" + _hover(_short(s.get("action"), 120))
        )
        custom.append(int(s["step"]))
    fig.add_trace(
        go.Scatter(
            x=xs,
            y=ys,
            mode="markers",
            name="steps",
            customdata=custom,
            marker={
                "color": colours,
                "symbol": symbols,
                "size": 11 if len(xs) <= 120 else 7,
                "line": {"width": 0},
            },
            hovertext=texts,
            hoverinfo="text",
            showlegend=False,
        )
    )
    # Legend entries for action kinds (one invisible point each).
    for k, c in list(kinds.items())[:10]:
        fig.add_trace(
            go.Scatter(
                x=[None],
                y=[None],
                mode="markers",
                name=_hover(k),
                marker={"color": c, "size": 9},
                hoverinfo="skip",
            )
        )

    labels = [entry_label(e) for e in entries]
    shapes: list[dict[str, Any]] = []
    ax, ay, atext, acustom = [], [], [], []
    ex, ey, ecol, etext = [], [], [], []
    for i, e in enumerate(entries):
        y = i + 1
        ws, we = e.get("window_start"), e.get("window_end")
        if ws is not None and we is not None and not _nan(ws) and not _nan(we):
            shapes.append(
                {
                    "type": "rect",
                    "xref": "x",
                    "yref": "y",
                    "x0": float(ws) - 0.45,
                    "x1": float(we) + 0.45,
                    "y0": y - 0.38,
                    "y1": y + 0.38,
                    "fillcolor": WINDOW_FILL,
                    "line": {"width": 0},
                    "layer": "below",
                    "name": f"window {e.get('span_id')}#{e.get('pos')}",
                }
            )
        anchors = _int_list(e.get("anchors"))
        for a in anchors:
            ax.append(a)
            ay.append(y)
            atext.append(_hover(f"anchor S{a} · {labels[i]} · {e.get('usage_label') or ''}"))
            acustom.append(a)
        eff = e.get("effect")
        if eff in ("improved", "harmed") and anchors:
            ex.append(max(anchors) + 0.3)
            ey.append(y)
            ecol.append(EFFECT_COLOURS[eff])
            etext.append(_hover(f"{eff} · {labels[i]}"))
    if ax:
        fig.add_trace(
            go.Scatter(
                x=ax,
                y=ay,
                mode="markers",
                name="anchored action",
                customdata=acustom,
                marker={"color": ANCHOR_COLOUR, "size": 12, "symbol": "square"},
                hovertext=atext,
                hoverinfo="text",
            )
        )
        # Highlight anchored steps on the action row as well (Figure 4: blue steps).
        fig.add_trace(
            go.Scatter(
                x=sorted(set(ax)),
                y=[action_y] * len(set(ax)),
                mode="markers",
                name="acted on memory",
                customdata=sorted(set(ax)),
                marker={"color": "rgba(0,0,0,0)", "size": 17, "line": {"color": ANCHOR_COLOUR, "width": 3}},
                hoverinfo="skip",
            )
        )
    if ex:
        fig.add_trace(
            go.Scatter(
                x=ex,
                y=ey,
                mode="markers",
                name="observed effect",
                marker={"color": ecol, "size": 12, "symbol": "star"},
                hovertext=etext,
                hoverinfo="text",
            )
        )
    # First deliveries of a span become arrows; restatements (a host block resent at every step)
    # and any arrows beyond MAX_ARROWS become small markers: hundreds of SVG annotations would
    # make a long episode slow to draw.
    annotations: list[dict[str, Any]] = []
    mx: list[float] = []
    mtext: list[str] = []
    for d in deliveries:
        st = d.get("step")
        if st is None or _nan(st):
            continue
        restated = bool(d.get("restatement")) and not _nan(d.get("restatement"))
        label = _hover(
            f"{d.get('delivery_id')} · {d.get('form')} · {d.get('route')}"
            + (" · restatement" if restated else "")
        )
        if restated or len(annotations) >= MAX_ARROWS:
            mx.append(float(st))
            mtext.append(label)
            continue
        annotations.append(
            {
                "x": float(st),
                "y": action_y,
                "xref": "x",
                "yref": "y",
                "ax": 0,
                "ay": -38,
                "showarrow": True,
                "arrowhead": 2,
                "arrowcolor": "#9467bd",
                "arrowwidth": 2,
                "text": _hover(_short(d.get("form"), 14)),
                "font": {"size": 9, "color": "#9467bd"},
                "hovertext": label,
            }
        )
    if mx:
        fig.add_trace(
            go.Scatter(
                x=mx,
                y=[action_y - 0.55] * len(mx),
                mode="markers",
                name="restated delivery",
                marker={"symbol": "triangle-down", "size": 6, "color": "#c5b0d5"},
                hovertext=mtext,
                hoverinfo="text",
            )
        )
    if selected_step is not None:
        shapes.append(
            {
                "type": "line",
                "xref": "x",
                "yref": "paper",
                "x0": selected_step,
                "x1": selected_step,
                "y0": 0,
                "y1": 1,
                "line": {"color": "#444", "width": 1, "dash": "dot"},
                "name": "selected",
            }
        )
    tick_vals = [action_y] + [i + 1 for i in range(n_rows)]
    tick_text = ["actions"] + [_hover(lbl) for lbl in labels]
    T = max(xs) if xs else 1
    fig.update_layout(
        title=_hover(title) if title else None,
        shapes=shapes,
        annotations=annotations,
        height=max(260, 120 + 28 * (n_rows + 1)),
        margin={"l": 10, "r": 10, "t": 40 if title else 20, "b": 30},
        xaxis={"title": "step", "range": [0.3, T + 0.9], "dtick": max(1, round(T / 25))},
        yaxis={
            "tickvals": tick_vals,
            "ticktext": tick_text,
            "autorange": "reversed",
            "range": [n_rows + 0.7, -0.9],
            "fixedrange": True,
        },
        legend={"orientation": "h", "y": -0.18},
        clickmode="event+select",
        dragmode="select",
        hovermode="closest",
    )
    return fig


def _nan(x: Any) -> bool:
    return x is None or (isinstance(x, float) and math.isnan(x))


def _int_list(v: Any) -> list[int]:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return []
    try:
        return [int(a) for a in v if a is not None]
    except TypeError:
        return []


# ---- Profiles (Figure 3) --------------------------------------------------------------------


def _log_pct(share: float | None) -> float | None:
    if share is None or _nan(share):
        return None
    pct = max(float(share) * 100.0, LOG_MIN_PCT)
    return min(pct, LOG_MAX_PCT)


def profile_radar(profiles: Mapping[str, Mapping[str, float | None]]) -> go.Figure:
    """Six-axis radar, one trace per group, on a log radial scale 0.001%–100% (Figure 3a).

    `profiles`: group name -> {axis: mean share in 0-1}. Zero shares sit at the centre.
    """
    fig = go.Figure()
    theta = [AXIS_TITLES[a] for a in AXES]
    for name, prof in profiles.items():
        r = [_log_pct(prof.get(a)) for a in AXES]
        raw = [prof.get(a) for a in AXES]
        fig.add_trace(
            go.Scatterpolar(
                r=[LOG_MIN_PCT if v is None else v for v in r] + [LOG_MIN_PCT if r[0] is None else r[0]],
                theta=theta + theta[:1],
                name=_hover(str(name)),
                fill="toself",
                opacity=0.6,
                hovertext=[_hover(f"{name} · {t}: {_fmt_pct(v)}") for t, v in zip(theta, raw)] + [""],
                hoverinfo="text",
            )
        )
    fig.update_layout(
        polar={
            "radialaxis": {
                "type": "log",
                "range": [math.log10(LOG_MIN_PCT), math.log10(LOG_MAX_PCT)],
                "tickvals": [0.001, 0.01, 0.1, 1, 10, 100],
                "ticktext": ["0.001%", "0.01%", "0.1%", "1%", "10%", "100%"],
            }
        },
        height=420,
        margin={"l": 40, "r": 40, "t": 30, "b": 30},
        legend={"orientation": "h"},
    )
    return fig


def _fmt_pct(v: float | None) -> str:
    return "—" if v is None or _nan(v) else f"{100 * float(v):.3g}%"


def profile_heatmap(profiles: Mapping[str, Mapping[str, float | None]]) -> go.Figure:
    """Heatmap of the same means as percentages, shaded on the same log scale (Figure 3b)."""
    names = list(profiles)
    z, text = [], []
    for n in names:
        row, trow = [], []
        for a in AXES:
            v = profiles[n].get(a)
            lp = _log_pct(v)
            row.append(None if lp is None else math.log10(lp))
            trow.append(_fmt_pct(v))
        z.append(row)
        text.append(trow)
    fig = go.Figure(
        go.Heatmap(
            z=z,
            x=[AXIS_TITLES[a] for a in AXES],
            y=[_hover(str(n)) for n in names],
            text=text,
            texttemplate="%{text}",
            zmin=math.log10(LOG_MIN_PCT),
            zmax=math.log10(LOG_MAX_PCT),
            colorscale="Blues",
            colorbar={
                "tickvals": [-3, -2, -1, 0, 1, 2],
                "ticktext": ["0.001%", "0.01%", "0.1%", "1%", "10%", "100%"],
            },
            hoverinfo="text",
        )
    )
    fig.update_layout(
        height=120 + 40 * max(1, len(names)),
        margin={"l": 10, "r": 10, "t": 20, "b": 30},
        yaxis={"autorange": "reversed"},
    )
    return fig


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
        ylab = [_hover(f"{r['form']} · {g}") if len(groups) > 1 else _hover(str(r["form"])) for r in rs]
        colour = _ACTION_COLOURS[gi % len(_ACTION_COLOURS)]
        fig.add_trace(
            go.Scatter(
                x=[100 * (r.get("token_share") or 0) for r in rs],
                y=ylab,
                mode="markers",
                name=_hover(f"{g} tokens"),
                marker={"symbol": "circle", "size": 12, "color": colour},
            )
        )
        fig.add_trace(
            go.Scatter(
                x=[100 * (r.get("beneficial_share") or 0) for r in rs],
                y=ylab,
                mode="markers",
                name=_hover(f"{g} beneficial"),
                marker={
                    "symbol": "diamond",
                    "size": 12,
                    "color": colour,
                    "line": {"color": "#222", "width": 1},
                },
            )
        )
    fig.update_layout(
        xaxis={"title": "share (%)", "range": [-2, 102]},
        height=140 + 26 * len(kept),
        margin={"l": 10, "r": 10, "t": 20, "b": 30},
        legend={"orientation": "h"},
    )
    return fig


def resolve_rate_chart(rows: Iterable[Mapping[str, Any]]) -> go.Figure:
    """Resolve rate per group with an interval: dicts with group, rate, low, high (fractions)."""
    rows = list(rows)
    rate = [float(r.get("rate") or 0.0) for r in rows]
    high = [float(r["high"]) if r.get("high") is not None else v for r, v in zip(rows, rate)]
    low = [float(r["low"]) if r.get("low") is not None else v for r, v in zip(rows, rate)]
    fig = go.Figure(
        go.Bar(
            x=[_hover(str(r["group"])) for r in rows],
            y=[100 * v for v in rate],
            error_y={
                "type": "data",
                "symmetric": False,
                "array": [100 * (h - v) for h, v in zip(high, rate)],
                "arrayminus": [100 * (v - lo) for lo, v in zip(low, rate)],
            },
            marker_color="#4c78a8",
        )
    )
    fig.update_layout(
        yaxis={"title": "resolved (%)", "range": [0, 100]},
        height=300,
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
