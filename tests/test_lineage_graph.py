"""The memory graph (MemUse 3.6, A.4.3) on the two-run corpus of test_metrics_corpus.py, where card
c1 harms in both runs: in m1 (S3, version v2 written in m1e1) and in m2 (S9, no history recorded
in m2). Invariants: versions link to their origin episode, unrecorded origins are marked, every
span of the item ends in its verdict, recorded text is escaped once (never twice) and the HTML
needs no CDN; the app's figure names every node class in its legend and every node opens its
item, episode, step or span.
"""

from __future__ import annotations

import re

import duckdb
import pandas as pd
from test_metrics_corpus import corpus_con, corpus_db  # noqa: F401  (fixtures)

from memuse_core.lineage import build_graph, effect_graph, episode_graph, item_graph, render_html
from memuse_core.textsafe import graph_text


def _entries(g, usage: str | None = None) -> list[tuple[str, str, dict]]:
    return [
        (a, b, d)
        for a, b, d in g.edges(data=True)
        if d.get("relation") == "entry" and (usage is None or d.get("usage") == usage)
    ]


def test_harmful_filter_finds_the_card_that_harmed_in_both_runs(
    corpus_con: duckdb.DuckDBPyConnection,  # noqa: F811
) -> None:
    g = effect_graph(corpus_con, "harmful")
    items = sorted(n for n, d in g.nodes(data=True) if d["kind"] == "item")
    assert items == ["item:cards/c1"]
    misused = _entries(g, "misused")
    assert sorted(b for _, b, _ in misused) == ["span:S3", "span:S9"]
    runs = {g.nodes[f"episode:{ep}"]["run_id"] for ep in ("m1e2", "m2e1")}
    assert runs == {"m1", "m2"}
    for s in ("S3", "S9"):
        assert g.nodes[f"verdict:{s}"]["triage"] == "negative"
        assert g.nodes[f"verdict:{s}"]["color"] == "#c62828"
        assert g.has_edge(f"span:{s}", f"verdict:{s}")


def test_versions_origins_and_unobserved_origins(corpus_con: duckdb.DuckDBPyConnection) -> None:  # noqa: F811
    """c1: create v1 in run m1 without an origin episode (unobserved), update v2 written in m1e1;
    run m2 recorded no creation (unobserved for m2). S3 delivered v2, S1 and S2 v1, S9 (m2) the item."""
    g = item_graph(corpus_con, "c1", "cards")
    versions = {d["label"]: n for n, d in g.nodes(data=True) if d["kind"] == "version"}
    assert set(versions) == {"create v1 [m1]", "update v2 [m1]"}
    assert g.has_edge(versions["update v2 [m1]"], "episode:m1e1")
    assert g.has_edge(versions["create v1 [m1]"], "unobserved:cards/c1@m1")
    assert g.has_edge("item:cards/c1", "unobserved:cards/c1@m2")
    assert g.has_edge(versions["update v2 [m1]"], "delivery:S3-d0")
    assert g.has_edge(versions["create v1 [m1]"], "delivery:S1-d0")
    assert g.has_edge("item:cards/c1", "delivery:S9-d0")  # run m2's store has no recorded version
    assert g.nodes["delivery:S2-d0"]["label"].endswith("×3")  # restatements collapse into the span
    assert {d["usage"] for _, _, d in _entries(g)} == {"used", "misused", None}
    assert g.nodes["verdict:S2"]["triage"] == "neutral"


def test_episode_graph_collects_items_delivered_or_written(corpus_con: duckdb.DuckDBPyConnection) -> None:  # noqa: F811
    g = episode_graph(corpus_con, "m1e1")
    items = sorted(d["label"] for _, d in g.nodes(data=True) if d["kind"] == "item")
    # delivered in m1e1: c1..c4; written by m1e1: c1 (update) and c9 (create)
    assert items == ["cards/c1", "cards/c2", "cards/c3", "cards/c4", "cards/c9"]
    assert g.has_edge(
        [
            n
            for n, d in g.nodes(data=True)
            if d.get("label") == "create v1 [m1]" and n.startswith("version:cards/c9")
        ][0],
        "episode:m1e1",
    )


def test_unknown_item_gives_an_empty_graph(corpus_con: duckdb.DuckDBPyConnection) -> None:  # noqa: F811
    assert item_graph(corpus_con, "nope").number_of_nodes() == 0


def test_html_is_offline_and_escapes_recorded_text() -> None:
    nasty = "<img src=x onerror=alert(1)>"
    keys = pd.DataFrame({"namespace": ["ns"], "item_id": [nasty]})
    events = pd.DataFrame(
        [
            {
                "namespace": "ns",
                "item_id": nasty,
                "version": "1",
                "op": "create",
                "episode_id": None,
                "run_id": None,
                "origin_known": False,
                "origin_run": None,
                "origin_task": None,
                "origin_position": None,
                "origin_resolved": None,
            }
        ]
    )
    uses = pd.DataFrame(columns=["namespace", "item_id", "span_id", "triage"])
    g = build_graph(events, uses, keys)
    page = render_html(g, heading="<script>alert(2)</script>")
    assert "<img src=x" not in page and "<script>alert(2)" not in page
    # Node text is embedded as JSON with <, >, & escaped (Jinja's tojson) and vis-network shows
    # it as text; escaping it for HTML as well showed `&lt;img` to the reader (escaped twice).
    assert "\\u003cimg src=x" in page and "&lt;img" not in page and "u0026lt;" not in page
    assert page.count("&lt;script&gt;alert(2)&lt;/script&gt;") == 1  # the heading, shown once
    # no resource is loaded from the network: no src/href to http(s), no CDN host at all
    assert not re.search(r"""(?:src|href)\s*=\s*["']?https?://""", page, re.I)
    assert "cdn.jsdelivr" not in page and "bootstrap" not in page.lower()
    assert "vis.DataSet" in page and "<script" in page  # vis-network is inlined


def test_unobserved_origin_label_neutralises_the_store_name() -> None:
    """A per-run store name is recorded text: the "unobserved origin [store]" label shows its
    control and bidi characters made visible, like every other label (no reversed or coloured
    text in the offline page or the app's graph)."""
    store = "run\u202eevil\x1b[31m"
    keys = pd.DataFrame({"namespace": ["ns"], "item_id": ["card"]})
    events = pd.DataFrame(
        [
            {
                "namespace": "ns",
                "item_id": "card",
                "version": "2",
                "op": "update",
                "episode_id": None,
                "run_id": store,
                "origin_known": False,
                "origin_run": None,
                "origin_task": None,
                "origin_position": None,
                "origin_resolved": None,
            }
        ]
    )
    g = build_graph(events, pd.DataFrame(columns=["namespace", "item_id", "span_id", "triage"]), keys)
    labels = [d["label"] for _, d in g.nodes(data=True) if d["kind"] == "unobserved"]
    assert labels, "an update with no earlier version must link to an unobserved origin"
    for label in labels:
        assert label.startswith("unobserved origin [run")
        assert "\u202e" not in label and "\x1b" not in label
        assert label == graph_text(label)  # neutral already: the renderers show it as is


def test_rendered_corpus_graph_has_every_node(corpus_con: duckdb.DuckDBPyConnection) -> None:  # noqa: F811
    g = effect_graph(corpus_con, "harmful")
    page = render_html(g)
    for n in g.nodes:
        assert n.replace("/", "\\/") in page or n in page


def test_item_graph_html_for_the_app(corpus_con: duckdb.DuckDBPyConnection) -> None:  # noqa: F811
    from memuse_core.lineage import item_graph_html

    page = item_graph_html(corpus_con, "cards", "c1")
    assert page is not None and "span:S9" in page and "cdn.jsdelivr" not in page
    assert item_graph_html(corpus_con, "cards", "missing") is None


def test_app_drawing_legend_words_and_clickable_nodes(corpus_con: duckdb.DuckDBPyConnection) -> None:  # noqa: F811
    import json

    from memuse_core.lineage import CAPTION, COLUMN_TITLES, TRIAGE_MEANING, drawing
    from memuse_core.views.lineage import node_target

    g = item_graph(corpus_con, "c1", "cards")
    d = drawing(g)
    assert json.loads(json.dumps(d)) == d  # plain JSON for the component
    names = [x["name"] for x in d["legend"]]
    assert f"span negative: {TRIAGE_MEANING['negative']}" in names and "entry misused" in names
    assert "memory item" in names and "◇ unobserved origin" in names
    assert d["columns"] == list(COLUMN_TITLES)
    # The caption uses the legend's words (the paper's triage and usage labels).
    for word in ("negative", "positive", "misused", "used", "harmed", "improved", "unobserved origin"):
        assert word in CAPTION
    nodes = d["nodes"]
    assert len(nodes) == g.number_of_nodes()
    assert sum(len(e["pairs"]) for e in d["edges"]) == g.number_of_edges()
    # Every node lies inside the drawn range, and its legend entry has its colour and symbol kind.
    lo, hi = d["x_range"]
    for n in nodes:
        assert lo < n["x"] < hi and 0 < n["y"] < 1 and n["hover"] and n["hover"][0]
        assert d["legend"][n["legend"]]["kind"] == "marker"
    for e in d["edges"]:
        assert d["legend"][e["legend"]]["kind"] == "line" and d["legend"][e["legend"]]["color"] == e["color"]
    # A negative span node is red and named by the legend as misuse.
    neg = [
        n
        for n in nodes
        if n["target"] and n["target"][0] == "span" and "negative" in d["legend"][n["legend"]]["name"]
    ]
    assert neg and all(n["color"] == "#c62828" for n in neg)
    targets = {n["target"][0]: node_target(n["target"]) for n in nodes if n["target"]}
    assert targets["item"] is not None and targets["item"].params == {"item": "cards::c1"}
    assert targets["span"] is not None and targets["span"].page == "span"
    assert targets["verdict"] is not None and targets["verdict"].page == "span"
    assert targets["episode"] is not None and targets["episode"].page == "timeline"
    assert targets["delivery"] is not None and set(targets["delivery"].params) >= {"episode"}
    # Versions and unobserved origins open nothing (no target: not clickable).
    kinds = {str(g.nodes[n].get("kind")) for n in g.nodes}
    assert {"version", "unobserved"} <= kinds and set(targets) == kinds - {"version", "unobserved"}
    # The value comes back from the browser: anything that is not a node's target opens nothing.
    for junk in (None, [], {"x": 1}, ["span", None, None, None, None], "span", ["episode"]):
        assert node_target(junk) is None
    step = next(n["target"] for n in nodes if n["target"] and n["target"][0] == "delivery" and n["target"][3])
    assert node_target(step).params == {"episode": step[2], "step": str(step[3])}  # type: ignore[union-attr]


def test_focused_graph_keeps_the_most_consequential_spans(corpus_con: duckdb.DuckDBPyConnection) -> None:  # noqa: F811
    g = item_graph(corpus_con, "c1", "cards", max_spans=2)
    spans = sorted(d["triage"] for _, d in g.nodes(data=True) if d["kind"] == "span")
    assert spans == ["negative", "negative"] and g.graph["truncated"] > 0


def test_item_picker_puts_harmful_use_first_and_origins_are_never_nan(
    corpus_con: duckdb.DuckDBPyConnection,  # noqa: F811
) -> None:
    from memuse_core.views import lineage as view

    choices = view.item_choices(corpus_con)
    assert choices[0].key == "cards::c1" and "2 harmed" in choices[0].label
    changes = view.item(corpus_con, "cards", "c1").changes
    assert [(c.op, c.episode_id) for c in changes] == [("create", None), ("update", "m1e1")]
