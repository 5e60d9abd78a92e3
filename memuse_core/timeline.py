"""The episode timeline figure (MemUse 4.3, Figure 4 style): a pure function from plain values to a
`go.Figure`, one marker per step (action kind, tool, exit code), deliveries as arrows at their
consuming steps, credit windows (A.1.5) as shaded bands per entry, anchored actions highlighted,
observed effects marked (improved green, harmed red). The aggregate charts are `charts`.

No Streamlit here: the app and the case-study export both call it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import plotly.graph_objects as go

from .charts import PALETTE, escape_hover, is_nan

EFFECT_COLOURS = {"improved": "#2ca02c", "harmed": "#d62728", "no_effect": "#7f7f7f"}
ANCHOR_COLOUR = "#1f77b4"
WINDOW_FILL = "rgba(31, 119, 180, 0.14)"
MAX_ARROWS = 60
"""Delivery arrows drawn as annotations at most; further deliveries become markers."""


def _short(text: Any, n: int = 90) -> str:
    s = "" if text is None else str(text).replace("\n", " ")
    return s if len(s) <= n else s[: n - 1] + "…"


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
        colour = kinds.setdefault(k, PALETTE[len(kinds) % len(PALETTE)])
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
            escape_hover(f"S{int(s['step'])} {k}{code_txt}")
            + "<br>"
            + escape_hover(_short(s.get("action"), 120))
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
                name=escape_hover(k),
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
        if ws is not None and we is not None and not is_nan(ws) and not is_nan(we):
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
            atext.append(escape_hover(f"anchor S{a} · {labels[i]} · {e.get('usage_label') or ''}"))
            acustom.append(a)
        eff = e.get("effect")
        if eff in ("improved", "harmed") and anchors:
            ex.append(max(anchors) + 0.3)
            ey.append(y)
            ecol.append(EFFECT_COLOURS[eff])
            etext.append(escape_hover(f"{eff} · {labels[i]}"))
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
        if st is None or is_nan(st):
            continue
        restated = bool(d.get("restatement")) and not is_nan(d.get("restatement"))
        label = escape_hover(
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
                "text": escape_hover(_short(d.get("form"), 14)),
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
    tick_text = ["actions"] + [escape_hover(lbl) for lbl in labels]
    T = max(xs) if xs else 1
    fig.update_layout(
        title=escape_hover(title) if title else None,
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


def _int_list(v: Any) -> list[int]:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return []
    try:
        return [int(a) for a in v if a is not None]
    except TypeError:
        return []
