"""The memory graph as a plotly figure for the app (MemUse 3.6, A.4.3): nodes in columns (item,
versions and unobserved origins, deliveries, episodes, spans, verdicts), coloured and named in
the paper's words, every node clickable.

The app draws this instead of the pyvis page because a click must reach the Streamlit session
(plotly_chart's selection event) so a node opens its item, episode, step or span in place;
a vis-network page in an iframe can only reload the browser tab, which starts a new session.
Each node carries `customdata = [kind, id, episode_id, step, namespace]`;
`views.lineage.node_target` turns it into the page to open.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import networkx as nx
import plotly.graph_objects as go

from ..charts import escape_hover
from ..vocab import EPISODE_OUTCOMES, OUTCOME_CLASSES, USAGE_LABELS
from .graph import EPISODE_COLORS, KIND_COLORS, TRIAGE_COLORS, USAGE_COLORS

COLUMNS = {"item": 0, "version": 1, "unobserved": 1, "delivery": 2, "episode": 3, "span": 4, "verdict": 5}
"""Column of each node kind, left to right."""
COLUMN_TITLES = ("memory item", "versions / origin", "deliveries", "episodes", "spans", "verdicts")
TRIAGE_MEANING = {
    "negative": "an entry misused (acted on, harmed)",
    "positive": "an entry used (acted on, improved)",
    "unresolved": "use unclear",
    "neutral": "no consequential use",
    "error": "recording checks failed",
    "unjudged": "not judged yet",
    "empty": "delivered no entries",
    "unassessable": "no consuming step",
}
"""What each span outcome class means (3.5 triage labels by precedence, A.4.1 the other classes)."""
assert set(TRIAGE_MEANING) == set(OUTCOME_CLASSES)

CAPTION = (
    "Columns, left to right: the memory item; its recorded versions (◇ an unobserved origin when "
    "no write was recorded); deliveries (× n counts restatements); episodes, both the origin "
    "episode that wrote a version and the episodes that received a delivery (green resolved, red "
    "failed, grey no result); injection spans and their verdicts, coloured by the span's triage "
    "label — negative: an entry was misused (acted on, observed effect harmed); positive: an entry "
    "was used (acted on, improved); unresolved; neutral — or by its class outside triage (error, "
    "unjudged, empty, unassessable; A.4.1). A line from a delivery to its span is coloured by the "
    "entry's usage label (3.5). Click a node to open it: another item's lineage, an episode's "
    "timeline, a delivery's step, a span in the inspector."
)
"""What the figure shows, in the legend's words."""


def _class_of(d: Mapping[str, Any]) -> str:
    kind = d.get("kind")
    if kind in ("span", "verdict"):
        return f"span {d.get('triage')}"
    if kind == "episode":
        res = d.get("resolved")
        return "episode " + (
            EPISODE_OUTCOMES[0]
            if res is True
            else EPISODE_OUTCOMES[1]
            if res is False
            else EPISODE_OUTCOMES[2]
        )
    return str(kind)


_SYMBOL = {
    "item": "square",
    "version": "diamond",
    "unobserved": "diamond-open",
    "delivery": "circle",
    "episode": "circle",
    "span": "square",
    "verdict": "star",
}


def _colour(cls: str, d: Mapping[str, Any]) -> str:
    kind = d.get("kind")
    if kind in ("span", "verdict"):
        return TRIAGE_COLORS.get(str(d.get("triage")), "#eeeeee")
    if kind == "episode":
        res = d.get("resolved")
        return EPISODE_COLORS[res] if res in (True, False) else EPISODE_COLORS[None]
    if kind == "unobserved":
        return "#616161"
    return KIND_COLORS.get(str(kind), "#90a4ae")


def layout(graph: nx.MultiDiGraph) -> dict[str, tuple[float, float]]:
    """Node positions: x the column of the node's kind, y its rank within the column in the
    order the graph was built (runs, episode positions and steps), spread over the same height."""
    cols: dict[int, list[str]] = {}
    for n, d in graph.nodes(data=True):
        cols.setdefault(COLUMNS.get(str(d.get("kind")), 2), []).append(n)
    pos = {}
    for x, nodes in cols.items():
        k = len(nodes)
        for i, n in enumerate(nodes):
            pos[n] = (float(x), 1.0 - (i + 0.5) / k)
    return pos


def _target(n: str, d: Mapping[str, Any]) -> list[Any]:
    """[kind, id, episode_id, step, namespace] of a node (what a click opens)."""
    kind = str(d.get("kind"))
    if kind == "item":
        return [kind, d.get("item_id"), None, None, d.get("namespace")]
    if kind in ("span", "verdict"):
        return [kind, d.get("span_id"), d.get("episode_id"), None, None]
    if kind == "delivery":
        step = d.get("step")
        return [kind, n.split(":", 1)[1], d.get("episode_id"), None if step is None else int(step), None]
    if kind == "episode":
        return [kind, d.get("episode_id"), d.get("episode_id"), None, None]
    return [kind, None, None, None, None]


def graph_figure(graph: nx.MultiDiGraph, *, height: int | None = None) -> go.Figure:
    """The graph as a figure: one line trace per usage label (and one for the other links), one
    marker trace per node class, so the legend names every colour; node text in hover only,
    except for the item, versions and episodes."""
    pos = layout(graph)
    fig = go.Figure()
    lines: dict[str, tuple[list[float | None], list[float | None]]] = {}
    for a, b, d in graph.edges(data=True):
        usage = d.get("usage") if d.get("relation") == "entry" else None
        key = f"entry {usage}" if usage in USAGE_LABELS else "link"
        xs, ys = lines.setdefault(key, ([], []))
        (x0, y0), (x1, y1) = pos[a], pos[b]
        xs += [x0, x1, None]
        ys += [y0, y1, None]
    order = ["link", *(f"entry {u}" for u in USAGE_LABELS)]
    for key in order:
        if key not in lines:
            continue
        colour = "#cfd8dc" if key == "link" else USAGE_COLORS.get(key.split(" ", 1)[1], "#9e9e9e")
        fig.add_trace(
            go.Scatter(
                x=lines[key][0],
                y=lines[key][1],
                mode="lines",
                name="other link" if key == "link" else key,
                line={"color": colour, "width": 1 if key == "link" else 2},
                hoverinfo="skip",
            )
        )
    groups: dict[str, list[str]] = {}
    for n, d in graph.nodes(data=True):
        groups.setdefault(_class_of(d), []).append(n)
    for cls in sorted(groups, key=_class_rank):
        nodes = groups[cls]
        data = [graph.nodes[n] for n in nodes]
        labelled = [d.get("kind") in ("item", "version", "episode", "unobserved") for d in data]
        fig.add_trace(
            go.Scatter(
                x=[pos[n][0] for n in nodes],
                y=[pos[n][1] for n in nodes],
                mode="markers+text" if any(labelled) else "markers",
                name=_legend_name(cls),
                text=[escape_hover(_cut(d.get("label"))) if lab else "" for d, lab in zip(data, labelled)],
                textposition="middle right",
                textfont={"size": 10},
                customdata=[_target(n, d) for n, d in zip(nodes, data)],
                hovertext=[
                    escape_hover(str(d.get("title") or d.get("label") or n)) for n, d in zip(nodes, data)
                ],
                hoverinfo="text",
                marker={
                    "symbol": [_SYMBOL.get(str(d.get("kind")), "circle") for d in data],
                    "color": [_colour(cls, d) for d in data],
                    "size": [16 if d.get("kind") in ("item", "verdict") else 12 for d in data],
                    "line": {"color": "#546e7a", "width": 1},
                },
            )
        )
    per_col = max((sum(1 for p in pos.values() if p[0] == c) for c in range(len(COLUMN_TITLES))), default=1)
    fig.update_layout(
        height=height or max(420, min(1400, 60 + 22 * per_col)),
        margin={"l": 10, "r": 10, "t": 30, "b": 10},
        xaxis={
            "range": [-0.3, 5.9],
            "tickvals": list(range(6)),
            "ticktext": list(COLUMN_TITLES),
            "side": "top",
            "showgrid": False,
            "zeroline": False,
            "fixedrange": True,
        },
        yaxis={"visible": False, "range": [-0.02, 1.02], "fixedrange": True},
        legend={
            "orientation": "v",
            "x": 1.0,
            "xanchor": "right",
            "y": 1,
            "itemclick": False,
            "itemdoubleclick": False,
        },
        hovermode="closest",
        plot_bgcolor="rgba(0,0,0,0)",
    )
    return fig


def _cut(text: Any, n: int = 34) -> str:
    s = "" if text is None else str(text).replace("\n", " ")
    return s if len(s) <= n else s[: n - 1] + "…"


def _class_rank(cls: str) -> tuple[int, int]:
    kinds = ["item", "version", "unobserved", "delivery", "episode", "span"]
    kind = cls.split(" ", 1)[0]
    sub = cls.split(" ", 1)[1] if " " in cls else ""
    rank = OUTCOME_CLASSES.index(sub) if sub in OUTCOME_CLASSES else 0  # type: ignore[arg-type]
    return (kinds.index(kind) if kind in kinds else 9, rank)


def _legend_name(cls: str) -> str:
    if cls.startswith("span "):
        label = cls.split(" ", 1)[1]
        return f"span {label}: {TRIAGE_MEANING.get(label, label)}"
    return {
        "item": "memory item",
        "version": "version",
        "unobserved": "◇ unobserved origin",
        "delivery": "delivery",
    }.get(cls, cls)
