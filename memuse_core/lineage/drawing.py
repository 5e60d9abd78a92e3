"""The memory graph drawn for the app (MemUse 3.6, A.4.3): nodes in columns (item, versions and
unobserved origins, deliveries, episodes, spans, verdicts), coloured and named in the paper's
words, every node clickable.

`drawing` lays the graph out as plain JSON that `pages/lineage_chart.js` draws as SVG (a
`st.components.v2` component, no iframe, no Plotly: issue 17), and a click on a node is sent back
to the same Streamlit session, so a node opens its item, episode, step or span in place; a
vis-network page in an iframe can only reload the browser tab, which starts a new session. Each
node carries `target = [kind, id, episode_id, step, namespace]`; `views.lineage.node_target` turns
it into the page to open.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import networkx as nx

from ..textsafe import neutralise
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


def drawing(graph: nx.MultiDiGraph, *, height: int | None = None) -> dict[str, Any]:
    """The graph as the SVG renderer's data (`pages/lineage_chart.js`), plain JSON:

    - `height` (px) and `columns` (the column titles, left to right; `x_range` the columns' span
      with room for the first column's marks and the last column's labels);
    - `nodes`, in legend order: `x` (column), `y` (0 bottom .. 1 top), `symbol`, `color`, `size`
      (px), `label` (shown beside the item, versions, origins and episodes; "" otherwise), `hover`
      (lines), `legend` (index into `legend`) and `target` (`[kind, id, episode_id, step,
      namespace]`, what a click opens; None for a node that opens nothing);
    - `edges`: one group per usage label (and one for the other links), each with its `legend`
      index, `color`, `width` and `pairs` of node indices;
    - `legend`: every colour's name in the paper's words, lines first (`kind` "line" or "marker").

    Shown text (labels, hovers) is recorded text neutralised (control and bidi characters made
    visible), not escaped: the renderer sets it as text, never as markup. A target holds the raw
    ids, which are never shown, only sent back on a click."""
    pos = layout(graph)
    lines: dict[str, list[tuple[str, str]]] = {}
    for a, b, d in graph.edges(data=True):
        usage = d.get("usage") if d.get("relation") == "entry" else None
        lines.setdefault(f"entry {usage}" if usage in USAGE_LABELS else "link", []).append((a, b))
    groups: dict[str, list[str]] = {}
    for n, d in graph.nodes(data=True):
        groups.setdefault(_class_of(d), []).append(n)
    legend: list[dict[str, Any]] = []
    line_keys = [k for k in ["link", *(f"entry {u}" for u in USAGE_LABELS)] if k in lines]
    for key in line_keys:
        colour = "#cfd8dc" if key == "link" else USAGE_COLORS.get(key.split(" ", 1)[1], "#9e9e9e")
        legend.append({"name": "other link" if key == "link" else key, "kind": "line", "color": colour})
    nodes: list[dict[str, Any]] = []
    index: dict[str, int] = {}
    for cls in sorted(groups, key=_class_rank):
        members = groups[cls]
        first = graph.nodes[members[0]]
        legend.append(
            {
                "name": _legend_name(cls),
                "kind": "marker",
                "symbol": _SYMBOL.get(str(first.get("kind")), "circle"),
                "color": _colour(cls, first),
            }
        )
        for n in members:
            d = graph.nodes[n]
            kind = str(d.get("kind"))
            target = _target(n, d)
            index[n] = len(nodes)
            nodes.append(
                {
                    "x": pos[n][0],
                    "y": pos[n][1],
                    "symbol": _SYMBOL.get(kind, "circle"),
                    "color": _colour(cls, d),
                    "size": 16 if kind in ("item", "verdict") else 12,
                    "label": _cut(neutralise(d.get("label"))) if kind in _LABELLED else "",
                    "hover": neutralise(d.get("title") or d.get("label") or n).split("\n"),
                    "legend": len(legend) - 1,
                    "target": target if target[1] else None,
                }
            )
    edges = [
        {
            "legend": i,
            "color": legend[i]["color"],
            "width": 1 if key == "link" else 2,
            "pairs": [[index[a], index[b]] for a, b in lines[key]],
        }
        for i, key in enumerate(line_keys)
    ]
    per_col = max((sum(1 for p in pos.values() if p[0] == c) for c in range(len(COLUMN_TITLES))), default=1)
    return {
        "height": height or max(420, min(1400, 60 + 22 * per_col)),
        "columns": list(COLUMN_TITLES),
        "x_range": [-0.3, 5.9],
        "nodes": nodes,
        "edges": edges,
        "legend": legend,
    }


_LABELLED = frozenset({"item", "version", "episode", "unobserved"})
"""Node kinds whose label is drawn beside the mark (the others show it on hover)."""


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
        "episode no_result": "episode without outcome",
    }.get(cls, cls)
