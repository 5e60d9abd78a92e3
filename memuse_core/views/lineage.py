"""Memory-item lineage view (MemUse A.4.3): harmful entries to start from, item search (items with
harmful or beneficial use first), one item's counts, its history graph as a clickable drawing
(a focused neighbourhood by default, every span on request), every span-starting delivery with
its outcome class and signals, and its recorded changes with their origin episodes."""

from __future__ import annotations

from typing import Any, Literal

import pandas as pd

from .. import lineage as graphs
from ..store.app import items as store_items
from ..store.app import spans as store_spans
from ..store.judging import resolve_judge
from ..vocab import JudgeKind
from ..wording import plural
from .common import Connection, Scope, ViewModel, item_key, judge_label, records

DELIVERY_LIMIT = 2000
"""Span-starting deliveries listed per item at most."""
FOCUS_SPANS = 24
"""Spans drawn in the default (focused) graph: the most consequential first (negative, positive,
unresolved, ...); "show all" draws up to `lineage.MAX_SPANS`."""


def harmful_entries(
    con: Connection, runs: Scope = None, limit: int = 200, judge: str | None = None
) -> pd.DataFrame:
    """Entries of one judge's current verdicts (default `resolve_judge`) whose observed effect
    harmed the episode: span_id, episode_id, config, namespace, item_id, display_key, pos,
    usage_label, notes."""
    return store_spans.harmful_entries(con, runs, limit, judge=judge)


class ItemChoice(ViewModel):
    """A delivered memory item offered in the picker."""

    key: str
    """Item key `<namespace>::<item_id>`."""
    label: str
    """What the picker shows."""


def item_choices(
    con: Connection, query: str = "", limit: int = 200, judge: str | None = None
) -> list[ItemChoice]:
    """Delivered items whose id, display key or namespace contains `query`: items with harmful,
    then beneficial use in one judge's verdicts (default `resolve_judge`) first, then the most
    delivered."""
    out = []
    for r in records(store_items.search_items(con, query, limit, judge=judge)):
        use = [f"{r[k]} {k}" for k in ("harmed", "improved") if r.get(k)]
        out.append(
            ItemChoice(
                key=item_key(r["namespace"], r["item_id"]),
                label=" · ".join(
                    [str(r["item_id"]), str(r["namespace"]), *use]
                    + [f"{plural(r['deliveries'], 'delivery')} in {plural(r['episodes'], 'episode')}"]
                ),
            )
        )
    return out


class Change(ViewModel):
    """One recorded change of an item."""

    version: str | None = None
    """Version written."""
    op: str
    """create, update or delete."""
    episode_id: str | None = None
    """Episode that made the change (None: unobserved origin)."""
    origin_outcome: str
    """Outcome of that episode."""
    value: str | None = None
    """The value written (recorded, untrusted)."""


class ItemView(ViewModel):
    """One memory item across episodes and runs."""

    namespace: str
    """Memory namespace."""
    item_id: str
    """Item id."""
    deliveries: int
    """Deliveries, restatements included."""
    episodes: int
    """Episodes it was delivered in."""
    acted_on: int
    """Entries of current verdicts with acted-on influence."""
    harmed: int
    """Entries of current verdicts with a harmed effect."""
    delivery_rows: pd.DataFrame
    """Span-starting deliveries (at most DELIVERY_LIMIT): delivery_id, episode_id, config, run_id,
    version, form, route, step, span_id, restatements, outcome (the span's outcome class),
    relevance, novelty, influence, effect, usage_label, episode_outcome."""
    changes: list[Change]
    """Recorded changes in order."""
    judge: JudgeKind = "rules"
    """The judge whose verdicts give the counts, outcome classes and signals."""

    @property
    def truncated(self) -> bool:
        """More span-starting deliveries exist than are listed."""
        return len(self.delivery_rows) >= DELIVERY_LIMIT

    def delivery_steps(self) -> list[int | None]:
        """Per delivery row, its consuming step (None when unknown: a missing value of a nullable
        column is neither NaN nor a number)."""
        return [None if pd.isna(s) else int(s) for s in self.delivery_rows["step"]]


def item(con: Connection, namespace: str, item_id: str, judge: str | None = None) -> ItemView:
    """Counts, deliveries and history of one item, as one judge's verdicts (default
    `resolve_judge`) see it."""
    chosen = resolve_judge(con, judge)
    counts = store_items.item_counts(con, namespace, item_id, chosen)
    return ItemView(
        namespace=namespace,
        item_id=item_id,
        judge=chosen,
        delivery_rows=store_items.item_deliveries(con, namespace, item_id, DELIVERY_LIMIT, chosen),
        changes=[
            Change.model_validate(r) for r in records(store_items.item_history(con, namespace, item_id))
        ],
        **counts,
    )


class ItemGraph(ViewModel):
    """An item's history graph, drawn for the app."""

    drawing: dict[str, Any] | None
    """The clickable graph as the SVG renderer's data (`lineage.drawing`); None when the item has
    no graph in scope."""
    spans_total: int
    """Spans that delivered the item in scope."""
    spans_shown: int
    """Spans drawn (the most consequential first)."""
    caption: str = graphs.CAPTION
    """What the columns, colours and lines mean (the legend's words), naming the judge."""
    judge: JudgeKind = "rules"
    """The judge whose verdicts colour the spans and verdict nodes."""

    @property
    def focused(self) -> bool:
        """Some spans are left out."""
        return self.spans_shown < self.spans_total


def item_graph(
    con: Connection,
    namespace: str,
    item_id: str,
    runs: Scope = None,
    show_all: bool = False,
    judge: str | None = None,
) -> ItemGraph:
    """The item's graph: focused on its `FOCUS_SPANS` most consequential spans unless `show_all`;
    verdict colours are one judge's (default `resolve_judge`), named in the caption."""
    chosen = resolve_judge(con, judge)
    cap = graphs.MAX_SPANS if show_all else FOCUS_SPANS
    g = graphs.item_graph(con, item_id, namespace, runs=runs, max_spans=cap, judge=chosen)
    if g.number_of_nodes() == 0:
        return ItemGraph(drawing=None, spans_total=0, spans_shown=0, judge=chosen)
    shown = sum(1 for _, d in g.nodes(data=True) if d.get("kind") == "span")
    return ItemGraph(
        drawing=graphs.drawing(g),
        spans_total=shown + int(g.graph.get("truncated", 0)),
        spans_shown=shown,
        caption=f"{graphs.CAPTION} Verdict colours and usage labels: the {judge_label(chosen)}'s verdicts.",
        judge=chosen,
    )


Page = Literal["lineage", "timeline", "span"]


class Target(ViewModel):
    """Where a click on a graph node leads."""

    page: Page
    """The page to open."""
    params: dict[str, str]
    """Its shared selections (item, episode, step, span)."""


def node_target(target: Any) -> Target | None:
    """The page a clicked graph node opens, from the node's `target` (`[kind, id, episode_id,
    step, namespace]`, as `lineage.drawing` gives it and the chart sends it back): an item's
    lineage, an episode's timeline (a delivery's at its consuming step), a span (or its verdict)
    in the inspector. None for a version, an unobserved origin, or anything that names no node
    (the value comes from the browser)."""
    if not isinstance(target, (list, tuple)) or len(target) < 5 or not target[1]:
        return None
    kind, key, episode, step, namespace = target[:5]
    if kind == "item":
        return Target(page="lineage", params={"item": item_key(namespace, key)})
    if kind in ("span", "verdict"):
        return Target(page="span", params={"span": str(key)})
    if kind == "episode":
        return Target(page="timeline", params={"episode": str(key)})
    if kind == "delivery" and episode:
        ok = isinstance(step, int) and not isinstance(step, bool)
        return Target(page="timeline", params={"episode": str(episode)} | ({"step": str(step)} if ok else {}))
    return None


def item_graph_html(con: Connection, namespace: str, item_id: str, runs: Scope = None) -> str:
    """The item's full history graph as an offline HTML page ("" when the item has no graph in
    scope), for download."""
    return graphs.item_graph_html(con, namespace, item_id, runs=runs) or ""


def latest_value(con: Connection, namespace: str, item_id: str) -> str | None:
    """The last recorded value of an item (None when never recorded)."""
    vals = [v for v in store_items.item_history(con, namespace, item_id)["value"] if v]
    return vals[-1] if vals else None
