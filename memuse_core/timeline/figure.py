"""The episode timeline figure (MemUse 4.3, Figure 4 style): a pure function from plain values to a
`go.Figure` that explains itself.

Rows, top to bottom: deliveries at their consuming steps (a labelled triangle for the first
delivery of a span, a small one for a restatement); the agent's actions, one marker per step
coloured by command (a cross when the command exited non-zero); then one row per span entry with
its credit window (A.1.5) as a shaded bar whose hover names the entry, the window and why it ends.
Anchored actions, acted-on steps and observed effects (improved, harmed) sit on top. Every item
has a legend entry; `CAPTION` says the rest in words.

Figure size matters in the browser (issue 17): annotations and layout shapes cost one DOM
element and one relayout pass each, so deliveries are markers and windows are one bar trace;
the only shape is the step cursor of an exported figure (`mark_step`). The app does not draw this
figure with Plotly: `drawing` turns it into data for a small SVG renderer that draws the step
cursor itself.

No Streamlit here: the app and the case-study export both call it.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

import plotly.graph_objects as go

from ..charts import PALETTE, escape_hover, is_nan
from ..vocab import EFFECT
from .actions import OTHER_KIND, action_kind
from .windows import anchor_steps, entry_label, num, short, window_reason

EFFECT_COLOURS = {"improved": "#2ca02c", "harmed": "#d62728", "no_effect": "#7f7f7f"}
"""Star colours of the observed effects drawn (3.4 "Observed effect")."""
DRAWN_EFFECTS = tuple(e for e in EFFECT if e != "no_effect")
"""Observed effects that get a star: improved and harmed."""
ANCHOR_COLOUR = "#1f77b4"
DELIVERY_COLOUR = "#9467bd"
WINDOW_FILL = "rgba(31, 119, 180, 0.18)"
EMPTY_WINDOW_COLOUR = "#8c8c8c"
FAILED_COLOUR = "#555555"
MAX_KINDS = 8
"""Action kinds with their own colour and legend entry; rarer ones are drawn as `OTHER_KIND`."""
LABEL_GAP_SHARE = 1 / 14
"""Delivery labels are at least this share of the episode's steps apart (labels never overlap)."""
DELIVERY_ROW, ACTION_ROW = -1, 0
MIN_HEIGHT_NO_ENTRIES = 250
"""Pixel height of a timeline with only its deliveries and actions rows."""
LEGEND: dict[str, str] = {
    "failed": "non-zero exit",
    "window": "credit window",
    "empty": "empty window",
    "anchor": "anchored action",
    "acted": "acted on memory",
    "delivery": "delivery (span start)",
    "restated": "restated delivery",
    **{effect: f"observed effect: {effect}" for effect in DRAWN_EFFECTS},
}
"""Legend names of the marks (the caption uses the same words)."""


def _window_hover(e: Mapping[str, Any], label: str, reason: str) -> str:
    ws, we = num(e.get("window_start")), num(e.get("window_end"))
    item = f"{e.get('namespace')}/{e.get('item_id')}" if e.get("item_id") else "—"
    window = "empty" if ws is None or we is None else f"S{ws}–S{we} ({we - ws + 1} steps)"
    return "<br>".join(
        escape_hover(s)
        for s in (
            f"entry {label}",
            f"item {item} · span {e.get('span_id')}",
            f"credit window {window}",
            reason,
        )
    )


def _legend_only(fig: go.Figure, name: str, marker: dict[str, Any]) -> None:
    fig.add_trace(go.Scatter(x=[None], y=[None], mode="markers", name=name, marker=marker, hoverinfo="skip"))


def episode_timeline(
    steps: Sequence[Mapping[str, Any]],
    entries: Sequence[Mapping[str, Any]] = (),
    deliveries: Sequence[Mapping[str, Any]] = (),
    *,
    selected_step: int | None = None,
    title: str | None = None,
    all_entries: Sequence[Mapping[str, Any]] | None = None,
) -> go.Figure:
    """Timeline of one episode.

    `steps`: dicts with step, action, tools, exit_code. `entries`: span entries with span_id,
    pos, namespace, item_id/display_key, window_start, window_end, first_step, status, anchors,
    effect, usage_label; `all_entries` (default `entries`) are every entry of the episode, which
    the window explanations consult when only some entries are drawn. `deliveries`: dicts with delivery_id, step, form, route, span_id,
    restatement. Markers that stand for a step (steps, anchors, acted-on rings, deliveries)
    carry `customdata = step`, so a click or a selection names the step.
    """
    fig = go.Figure()
    xs = [int(s["step"]) for s in steps]
    last = max(xs) if xs else 1
    raw_kinds = [action_kind(s.get("tools"), s.get("action")) for s in steps]
    top = [k for k, _ in Counter(k for k in raw_kinds if k != OTHER_KIND).most_common(MAX_KINDS)]
    colour_of = {k: PALETTE[i % len(PALETTE)] for i, k in enumerate(top)}
    colour_of[OTHER_KIND] = PALETTE[len(top) % len(PALETTE)] if len(top) < len(PALETTE) else "#bab0ac"
    kinds = [k if k in colour_of else OTHER_KIND for k in raw_kinds]
    failed, texts = [], []
    for s, k in zip(steps, kinds):
        code = num(s.get("exit_code"))
        failed.append(code is not None and code != 0)
        code_txt = "" if code is None else f" · exit {code}"
        texts.append(
            escape_hover(f"S{int(s['step'])} {k}{code_txt}")
            + "<br>"
            + escape_hover(short(s.get("action"), 120))
        )
    fig.add_trace(
        go.Scatter(
            x=xs,
            y=[ACTION_ROW] * len(xs),
            mode="markers",
            name="steps",
            customdata=xs,
            marker={
                "color": [colour_of[k] for k in kinds],
                "symbol": ["x" if f else "circle" for f in failed],
                "size": 11 if len(xs) <= 120 else 8,
                "line": {"width": 0},
            },
            hovertext=texts,
            hoverinfo="text",
            showlegend=False,
        )
    )
    for k in [*top, *([OTHER_KIND] if OTHER_KIND in kinds else [])]:
        _legend_only(fig, escape_hover(k), {"color": colour_of[k], "size": 9})
    if any(failed):
        _legend_only(fig, LEGEND["failed"], {"color": FAILED_COLOUR, "symbol": "x", "size": 9})

    labels = [entry_label(e) for e in entries]
    _windows(fig, entries, labels, last, entries if all_entries is None else all_entries)
    _anchors_and_effects(fig, entries, labels)
    _deliveries(fig, deliveries, last)

    n_rows = len(entries)
    row_px = 26 if n_rows <= 30 else 16
    fig.update_layout(
        title=escape_hover(title) if title else None,
        # Without entry rows (no memory delivered) the two fixed rows need no more than this;
        # the taller minimum left an empty band above them.
        height=max(340 if n_rows else MIN_HEIGHT_NO_ENTRIES, 190 + row_px * (n_rows + 2)),
        # The legend sits at the foot of the figure, under the axis title (placed in the plot's
        # coordinates it covered the title "step" on short charts).
        margin={"l": 10, "r": 10, "t": 40 if title else 20, "b": 70},
        xaxis={"title": "step", "range": [0.3, last + 0.9], "dtick": max(1, round(last / 25))},
        yaxis={
            "tickvals": [DELIVERY_ROW, ACTION_ROW, *range(1, n_rows + 1)],
            "ticktext": ["deliveries", "actions", *(escape_hover(lbl) for lbl in labels)],
            # room above the deliveries row for the delivery labels, when there are any
            "range": [n_rows + 0.7, DELIVERY_ROW - (0.9 if deliveries else 0.4)],
            "fixedrange": True,
        },
        barmode="overlay",
        legend={
            "orientation": "h",
            "yref": "container",
            "y": 0,
            "yanchor": "bottom",
            "itemclick": False,
            "itemdoubleclick": False,
        },
        dragmode="zoom",
        hovermode="closest",
    )
    if selected_step is not None:
        mark_step(fig, selected_step)
    return fig


def mark_step(fig: go.Figure, step: int | None) -> go.Figure:
    """Draw the selected step's cursor (a dotted vertical line named "selected") on `fig`,
    replacing an earlier one; None removes it. Cheap, so a figure built once per episode can
    follow the step."""
    fig.layout.shapes = [s for s in fig.layout.shapes if s.name != "selected"]
    if step is not None:
        fig.add_shape(
            type="line",
            xref="x",
            yref="paper",
            x0=step,
            x1=step,
            y0=0,
            y1=1,
            line={"color": "#444", "width": 1, "dash": "dot"},
            name="selected",
        )
    return fig


def _windows(
    fig: go.Figure,
    entries: Sequence[Mapping[str, Any]],
    labels: list[str],
    last: int,
    every: Sequence[Mapping[str, Any]],
) -> None:
    """One bar per entry with a credit window (a single trace), a hollow diamond per entry whose
    window is empty; the hover of each says why the window ends where it does."""
    by, base, width, hover = [], [], [], []
    ex, ey, etext = [], [], []
    for i, e in enumerate(entries):
        ws, we = num(e.get("window_start")), num(e.get("window_end"))
        reason = window_reason(e, every, last)
        if ws is not None and we is not None:
            by.append(i + 1)
            base.append(ws - 0.45)
            width.append(we - ws + 0.9)
            hover.append(_window_hover(e, labels[i], reason))
        elif num(e.get("first_step")) is not None:
            ex.append(num(e.get("first_step")))
            ey.append(i + 1)
            etext.append(_window_hover(e, labels[i], reason))
    if by:
        fig.add_trace(
            go.Bar(
                x=width,
                y=by,
                base=base,
                orientation="h",
                width=0.76,
                name=LEGEND["window"],
                marker={"color": WINDOW_FILL, "line": {"width": 0}},
                hovertext=hover,
                hoverinfo="text",
            )
        )
    if ex:
        fig.add_trace(
            go.Scatter(
                x=ex,
                y=ey,
                mode="markers",
                name=LEGEND["empty"],
                marker={"symbol": "diamond-open", "size": 10, "color": EMPTY_WINDOW_COLOUR},
                hovertext=etext,
                hoverinfo="text",
            )
        )


def _anchors_and_effects(fig: go.Figure, entries: Sequence[Mapping[str, Any]], labels: list[str]) -> None:
    ax, ay, atext = [], [], []
    eff: dict[str, tuple[list[float], list[int], list[str]]] = {e: ([], [], []) for e in DRAWN_EFFECTS}
    for i, e in enumerate(entries):
        anchors = anchor_steps(e.get("anchors"))
        for a in anchors:
            ax.append(a)
            ay.append(i + 1)
            atext.append(escape_hover(f"anchored action S{a} · {labels[i]} · {e.get('usage_label') or ''}"))
        effect = e.get("effect")
        if effect in eff and anchors:
            x, y, t = eff[effect]
            x.append(max(anchors) + 0.3)
            y.append(i + 1)
            t.append(escape_hover(f"observed effect: {effect} · {labels[i]}"))
    if ax:
        fig.add_trace(
            go.Scatter(
                x=ax,
                y=ay,
                mode="markers",
                name=LEGEND["anchor"],
                customdata=ax,
                marker={"color": ANCHOR_COLOUR, "size": 12, "symbol": "square"},
                hovertext=atext,
                hoverinfo="text",
            )
        )
        acted = sorted(set(ax))
        fig.add_trace(
            go.Scatter(
                x=acted,
                y=[ACTION_ROW] * len(acted),
                mode="markers",
                name=LEGEND["acted"],
                customdata=acted,
                marker={"color": "rgba(0,0,0,0)", "size": 17, "line": {"color": ANCHOR_COLOUR, "width": 3}},
                hoverinfo="skip",
            )
        )
    for effect, (x, y, t) in eff.items():
        if x:
            fig.add_trace(
                go.Scatter(
                    x=x,
                    y=y,
                    mode="markers",
                    name=LEGEND[effect],
                    marker={"color": EFFECT_COLOURS[effect], "size": 13, "symbol": "star"},
                    hovertext=t,
                    hoverinfo="text",
                )
            )


def delivery_labels(steps: Sequence[float], last_step: int) -> list[bool]:
    """Which first deliveries get a text label: greedily left to right, each at least
    `LABEL_GAP_SHARE` of the episode (and two steps) after the previous label."""
    gap = max(2.0, last_step * LABEL_GAP_SHARE)
    out, prev = [], -math.inf
    for x in steps:
        keep = x - prev >= gap
        out.append(keep)
        if keep:
            prev = x
    return out


def _deliveries(fig: go.Figure, deliveries: Sequence[Mapping[str, Any]], last: int) -> None:
    first: list[tuple[float, str, str]] = []
    rx, rtext = [], []
    for d in deliveries:
        st = num(d.get("step"))
        if st is None:
            continue
        restated = bool(d.get("restatement")) and not is_nan(d.get("restatement"))
        hover = escape_hover(
            f"S{st} · delivery {d.get('delivery_id')} · {d.get('form')} · {d.get('route')}"
            + (f" · span {d.get('span_id')}" if d.get("span_id") else "")
            + (" · restatement" if restated else "")
        )
        if restated:
            rx.append(float(st))
            rtext.append(hover)
        else:
            first.append((float(st), escape_hover(short(d.get("form"), 14)), hover))
    if first:
        first.sort(key=lambda t: t[0])
        keep = delivery_labels([x for x, _, _ in first], last)
        fig.add_trace(
            go.Scatter(
                x=[x for x, _, _ in first],
                y=[DELIVERY_ROW] * len(first),
                mode="markers+text",
                name=LEGEND["delivery"],
                customdata=[int(x) for x, _, _ in first],
                text=[lbl if k else "" for (_, lbl, _), k in zip(first, keep)],
                textposition="top center",
                textfont={"size": 9, "color": DELIVERY_COLOUR},
                marker={"symbol": "triangle-down", "size": 11, "color": DELIVERY_COLOUR},
                hovertext=[h for _, _, h in first],
                hoverinfo="text",
            )
        )
    if rx:
        fig.add_trace(
            go.Scatter(
                x=rx,
                y=[DELIVERY_ROW] * len(rx),
                mode="markers",
                name=LEGEND["restated"],
                customdata=[int(x) for x in rx],
                marker={"symbol": "triangle-down-open", "size": 7, "color": "#c5b0d5"},
                hovertext=rtext,
                hoverinfo="text",
            )
        )
