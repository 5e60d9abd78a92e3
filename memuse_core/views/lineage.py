"""Memory-item lineage view (MemUse A.4.3): harmful entries to start from, item search, one item's
counts, history graph, every span-starting delivery with its outcome class and signals, and its
recorded changes with their origin episodes."""

from __future__ import annotations

import pandas as pd

from .. import lineage as graphs
from ..store.app import items as store_items
from ..store.app import spans as store_spans
from .common import Connection, Scope, ViewModel, item_key, records

DELIVERY_LIMIT = 2000
"""Span-starting deliveries listed per item at most."""


def harmful_entries(con: Connection, runs: Scope = None, limit: int = 200) -> pd.DataFrame:
    """Entries of current verdicts whose observed effect harmed the episode: span_id, episode_id,
    config, namespace, item_id, display_key, pos, usage_label, notes."""
    return store_spans.harmful_entries(con, runs, limit)


class ItemChoice(ViewModel):
    """A delivered memory item offered in the picker."""

    key: str
    """Item key `<namespace>::<item_id>`."""
    label: str
    """What the picker shows."""


def item_choices(con: Connection, query: str = "", limit: int = 200) -> list[ItemChoice]:
    """Delivered items whose id, display key or namespace contains `query`, most delivered first."""
    return [
        ItemChoice(
            key=item_key(r["namespace"], r["item_id"]),
            label=f"{r['item_id']} · {r['namespace']} · {r['deliveries']} deliveries in {r['episodes']} episodes",
        )
        for r in records(store_items.search_items(con, query, limit))
    ]


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

    @property
    def truncated(self) -> bool:
        """More span-starting deliveries exist than are listed."""
        return len(self.delivery_rows) >= DELIVERY_LIMIT


def item(con: Connection, namespace: str, item_id: str) -> ItemView:
    """Counts, deliveries and history of one item."""
    counts = store_items.item_counts(con, namespace, item_id)
    return ItemView(
        namespace=namespace,
        item_id=item_id,
        delivery_rows=store_items.item_deliveries(con, namespace, item_id, DELIVERY_LIMIT),
        changes=[
            Change.model_validate(r) for r in records(store_items.item_history(con, namespace, item_id))
        ],
        **counts,
    )


def item_graph_html(con: Connection, namespace: str, item_id: str, runs: Scope = None) -> str:
    """The item's history graph as offline HTML ("" when the item has no graph in scope)."""
    return graphs.item_graph_html(con, namespace, item_id, runs=runs) or ""


def latest_value(con: Connection, namespace: str, item_id: str) -> str | None:
    """The last recorded value of an item (None when never recorded)."""
    vals = [v for v in store_items.item_history(con, namespace, item_id)["value"] if v]
    return vals[-1] if vals else None
