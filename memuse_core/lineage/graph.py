"""The memory graph (MemUse 3.6, A.4.3): item -> versions (create/update/delete) -> origin episode,
and item -> deliveries -> spans -> verdicts, across episodes and runs.

Items are identified by namespace and item id. Each recorded write is a version node linked to the
episode that wrote it; a write without a recorded origin episode, or an item whose creation was
never recorded, links to an "unobserved origin" node. Each span that delivered the item appears
as its first delivery (restatements counted on the node), the span, and the span's verdict; the
entry's usage label sits on the delivery -> span edge, so the assessment keeps the version and
exposure that was delivered while the history stays per item.

`item_graph`, `episode_graph` and `effect_graph` return a `networkx.MultiDiGraph` whose nodes carry
`kind` (item, version, episode, unobserved, delivery, span, verdict), `label`, `title` and
`color`, and what a drill-down needs (`namespace`/`item_id`, `episode_id`, `step`, `span_id`).
Labels and titles are plain recorded text: each renderer (`render.render_html` for the offline
page, `drawing.drawing` for the app's SVG, set as text) escapes it for its medium.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

import networkx as nx
import pandas as pd

from ..store import Connection
from ..store import metrics as q
from ..textsafe import graph_text

TRIAGE_COLORS = {
    "positive": "#2e7d32",
    "negative": "#c62828",
    "unresolved": "#f9a825",
    "neutral": "#9e9e9e",
    "error": "#6a1b9a",
    "unjudged": "#cfd8dc",
    "empty": "#eeeeee",
    "unassessable": "#eeeeee",
}
"""Verdict colours by span outcome class."""
USAGE_COLORS = {
    "used": "#2e7d32",
    "misused": "#c62828",
    "unclear": "#f9a825",
    "unproductive": "#8d6e63",
    "selected": "#1565c0",
    "noted": "#5c6bc0",
    "ignored": "#bdbdbd",
    "ambiguous": "#ffb300",
}
"""Edge colours by the entry's usage label (3.5)."""
KIND_COLORS = {"item": "#0277bd", "version": "#4fc3f7", "unobserved": "#ffffff", "delivery": "#b2dfdb"}
EPISODE_COLORS = {True: "#a5d6a7", False: "#ef9a9a", None: "#e0e0e0"}
MAX_SPANS = 400
"""Spans drawn per graph; beyond that the least consequential spans are left out (`truncated`)."""
_RANK = {
    "negative": 0,
    "positive": 1,
    "unresolved": 2,
    "error": 3,
    "neutral": 4,
    "unjudged": 5,
    "unassessable": 6,
    "empty": 7,
}


def _e(x: object) -> str:
    """Recorded text for a label or tooltip, neutralised and escaped exactly once
    (`textsafe.graph_text`: control and bidi characters made visible, no HTML escaping). Renderers
    escape it for their medium: vis-network shows labels and titles as text (pyvis embeds them
    with `tojson`), the plotly figure escapes hover text; escaping here showed `&lt;` twice."""
    return graph_text(x)


def _v(x: Any) -> Any:
    return None if x is None or (isinstance(x, float) and pd.isna(x)) or x is pd.NA else x


def usage_label(influence: str | None, effect: str | None) -> str | None:
    """Usage label from influence and observed effect (3.5), used when none was stored."""
    if influence == "acted_on":
        return {"improved": "used", "no_effect": "unproductive", "harmed": "misused"}.get(
            effect or "", "unclear"
        )
    return {"selected": "selected", "referenced": "noted", "none": "ignored"}.get(influence or "", None)


def _episode_node(
    g: nx.MultiDiGraph, episode_id: str, run_id: object, task_id: object, position: object, resolved: object
) -> str:
    nid = f"episode:{episode_id}"
    if nid not in g:
        res = _v(resolved)
        outcome = {True: "resolved", False: "failed"}.get(res, "no result")  # type: ignore[arg-type]
        g.add_node(
            nid,
            kind="episode",
            label=_e(f"{_v(task_id) or episode_id} ({_v(run_id)})"),
            title=_e(f"episode {episode_id}, run {_v(run_id)}, position {_v(position)}, {outcome}"),
            color=EPISODE_COLORS.get(res, "#e0e0e0"),
            shape="ellipse",  # type: ignore[arg-type]
            run_id=_v(run_id),
            position=_v(position),
            resolved=res,
            episode_id=episode_id,
        )
    return nid


def build_graph(
    events: pd.DataFrame, uses: pd.DataFrame, keys: pd.DataFrame, max_spans: int = MAX_SPANS
) -> nx.MultiDiGraph:
    """The memory graph of `keys` from `lineage_events` and `lineage_uses` rows."""
    g = nx.MultiDiGraph()
    g.graph["truncated"] = 0
    for k in keys.itertuples():
        ns, iid = str(k.namespace), str(k.item_id)
        g.add_node(
            f"item:{ns}/{iid}",
            kind="item",
            label=_e(f"{ns}/{iid}"),
            title=_e(f"memory item {ns}/{iid}"),
            color=KIND_COLORS["item"],
            shape="box",
            namespace=ns,
            item_id=iid,
            font={"color": "#ffffff"},
        )
    # versions and origins; per-run stores keep their own version chains
    ev = events.reset_index(drop=True)
    version_nodes: dict[tuple[str, str, object, object], str] = {}
    created: set[tuple[str, str, object]] = set()

    def unobserved(ns: str, iid: str, store: object, why: str, src: str) -> None:
        un = f"unobserved:{ns}/{iid}@{store or 'shared'}"
        g.add_node(
            un,
            kind="unobserved",
            label=_e("unobserved origin" + (f" [{store}]" if store else "")),
            title=_e(why),
            color=KIND_COLORS["unobserved"],
            shape="diamond",
            run_id=store,
        )
        g.add_edge(src, un, key="origin", relation="origin", label="origin", dashes=True)

    for (ns, iid), grp in ev.groupby(["namespace", "item_id"], sort=False):
        item = f"item:{ns}/{iid}"
        prev: dict[object, str] = {}
        for i, r in enumerate(grp.itertuples()):
            store = _v(r.run_id)
            vid = f"version:{ns}/{iid}#{i}"
            g.add_node(
                vid,
                kind="version",
                label=_e(f"{r.op} {_v(r.version) or ''}".strip() + (f" [{store}]" if store else "")),
                title=_e(f"{r.op} of {ns}/{iid}, version {_v(r.version)}, store {store or 'shared'}"),
                color=KIND_COLORS["version"],
                shape="box",
                op=r.op,
                version=_v(r.version),
                run_id=store,
            )
            g.add_edge(item, vid, key="version", relation="version", label=_e(r.op))
            if store in prev:
                g.add_edge(prev[store], vid, key="then", relation="then", dashes=True)
            prev[store] = vid
            if r.op != "delete":
                version_nodes[(ns, iid, store, _v(r.version))] = vid
            if r.op == "create":
                created.add((ns, iid, store))
            if bool(r.origin_known):
                ep = _episode_node(
                    g, r.episode_id, r.origin_run, r.origin_task, r.origin_position, r.origin_resolved
                )
                g.add_edge(vid, ep, key="written_in", relation="written_in", label="written in")
            else:
                unobserved(ns, iid, store, f"no recorded origin episode for {r.op} of {ns}/{iid}", vid)
        for store in prev:
            if (ns, iid, store) not in created and (ns, iid, None) not in created:
                unobserved(ns, iid, store, f"the creation of {ns}/{iid} was not recorded", item)
    # deliveries, spans, verdicts
    uses = uses.copy()
    if len(uses):
        span_rank = uses.groupby("span_id").triage.first().map(_RANK).fillna(9).sort_values(kind="stable")
        keep = set(span_rank.index[:max_spans])
        g.graph["truncated"] = int(len(span_rank) - len(keep))
        uses = uses[uses.span_id.isin(keep)]
    for r in uses.itertuples():
        ns, iid, run = str(r.namespace), str(r.item_id), _v(r.run_id)
        if (ns, iid, run) not in created and (ns, iid, None) not in created:
            unobserved(
                ns, iid, run, f"the creation of {ns}/{iid} was not recorded for run {run}", f"item:{ns}/{iid}"
            )
    for k in keys.itertuples():
        ns, iid = str(k.namespace), str(k.item_id)
        if not any(n.startswith(f"unobserved:{ns}/{iid}@") for n in g) and not any(
            (ns, iid) == c[:2] for c in created
        ):
            unobserved(ns, iid, None, f"no write of {ns}/{iid} was recorded", f"item:{ns}/{iid}")
    for r in uses.itertuples():
        ns, iid, ver = str(r.namespace), str(r.item_id), _v(r.version)
        src = (
            version_nodes.get((ns, iid, _v(r.run_id), ver))
            or version_nodes.get((ns, iid, None, ver))
            or f"item:{ns}/{iid}"
        )
        did = f"delivery:{r.first_delivery_id}"
        n_del = int(_v(r.n_deliveries) or 1)
        if did not in g:
            g.add_node(
                did,
                kind="delivery",
                label=_e(
                    f"{_v(r.form) or 'delivery'} ({_v(r.route) or '?'})" + (f" ×{n_del}" if n_del > 1 else "")
                ),
                title=_e(
                    f"delivery {r.first_delivery_id} in {r.episode_id}; {n_del} "
                    f"deliveries in the span (restatements included); ~{_v(r.est_tokens)} tokens"
                ),
                color=KIND_COLORS["delivery"],
                shape="dot",
                size=8 + min(n_del, 20),
                episode_id=str(r.episode_id),
                step=_v(r.first_step),
            )
            ep = _episode_node(g, r.episode_id, r.run_id, r.task_id, r.position, r.resolved)
            g.add_edge(did, ep, key="in_episode", relation="in_episode", label="in", dashes=True)
        g.add_edge(
            src,
            did,
            key=f"delivered:{r.span_id}:{r.pos}",
            relation="delivered",
            label=_e(f"delivered {_v(r.version) or ''}".strip()),
        )
        sid = f"span:{r.span_id}"
        triage = str(r.triage)
        if sid not in g:
            g.add_node(
                sid,
                kind="span",
                label=_e(f"span @ step {_v(r.first_step) if _v(r.first_step) is not None else '—'}"),
                title=_e(f"span {r.span_id}: {r.status}, first consuming step {_v(r.first_step)}"),
                color=TRIAGE_COLORS.get(triage, "#eeeeee"),
                shape="square",
                triage=triage,
                span_id=str(r.span_id),
                episode_id=str(r.episode_id),
            )
            vid = f"verdict:{r.span_id}"
            g.add_node(
                vid,
                kind="verdict",
                label=_e(triage),
                title=_e(f"span verdict: {triage}"),
                color=TRIAGE_COLORS.get(triage, "#eeeeee"),
                shape="star",
                triage=triage,
                span_id=str(r.span_id),
                episode_id=str(r.episode_id),
            )
            g.add_edge(sid, vid, key="verdict", relation="verdict")
        label = _v(r.usage_label) or usage_label(_v(r.influence), _v(r.effect))
        g.add_edge(
            did,
            sid,
            key=f"entry:{ns}/{iid}:{r.pos}",
            relation="entry",
            usage=label,
            effect=_v(r.effect),
            label=_e(f"{iid}: {label}" if label else iid),
            title=_e(
                f"{ns}/{iid} v{_v(r.version)} exposure {_v(r.exposure)}; relevance "
                f"{_v(r.relevance)}, influence {_v(r.influence)}, effect {_v(r.effect)}"
            ),
            color=USAGE_COLORS.get(label or "", "#9e9e9e"),
        )
    return g


def _graph(
    con: Connection, keys: pd.DataFrame, runs: Sequence[str] | None, max_spans: int, judge: str | None
) -> nx.MultiDiGraph:
    if len(keys) == 0:
        return nx.MultiDiGraph()
    return build_graph(
        q.lineage_events(con, keys, runs), q.lineage_uses(con, keys, runs, judge), keys, max_spans
    )


def item_graph(
    con: Connection,
    item_id: str,
    namespace: str | None = None,
    *,
    runs: Sequence[str] | None = None,
    max_spans: int = MAX_SPANS,
    judge: str | None = None,
) -> nx.MultiDiGraph:
    """The graph of one item (in every namespace that has this id when `namespace` is None);
    verdict colours and usage labels are one judge's (`judge`, default `resolve_judge`)."""
    keys = q.lineage_items(con, item_id=item_id, namespace=namespace)
    return _graph(con, keys, runs, max_spans, judge)


def episode_graph(
    con: Connection, episode_id: str, *, max_spans: int = MAX_SPANS, judge: str | None = None
) -> nx.MultiDiGraph:
    """The graphs of every item delivered in or written by one episode, across all runs."""
    keys = q.lineage_items(con, episode_id=episode_id)
    return _graph(con, keys, None, max_spans, judge)


def effect_graph(
    con: Connection,
    effect: Literal["harmful", "beneficial", "acted_on"] = "harmful",
    *,
    runs: Sequence[str] | None = None,
    max_spans: int = MAX_SPANS,
    judge: str | None = None,
) -> nx.MultiDiGraph:
    """The graphs of all items with a judged entry of the given kind in the selected runs, e.g.
    every item with a harmful entry (one judge's verdicts, default `resolve_judge`)."""
    keys = q.lineage_items(con, effect=effect, runs=runs, judge=judge)
    return _graph(con, keys, runs, max_spans, judge)
