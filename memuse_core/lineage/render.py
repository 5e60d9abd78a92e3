"""The memory graph as a self-contained offline HTML page (pyvis / vis-network), for `memuse
report --lineage` and the app's download: vis-network inlined, no CDN references, the heading shown
once, the frame sized to the graph."""

from __future__ import annotations

import re
from collections.abc import Sequence

import networkx as nx

from ..store import Connection
from ..textsafe import html_text
from .graph import TRIAGE_COLORS, item_graph

_CDN_TAGS = [
    re.compile(r"<link\b[^>]*bootstrap[^>]*>", re.S | re.I),
    re.compile(r"<script\b[^>]*bootstrap[^>]*>\s*</script>", re.S | re.I),
    re.compile(r"<!--\s*<link[^>]*node_modules.*?-->", re.S | re.I),
]
_EMPTY_HEADINGS = re.compile(r"<h1>\s*</h1>")
"""pyvis's template prints its heading twice (once above the card, once inside it)."""

_LEGEND = (
    '<div style="font:12px sans-serif;margin:4px">span triage label or class: '
    + " ".join(
        f'<span style="background:{c};padding:1px 6px;border:1px solid #999">{t}</span>'
        for t, c in TRIAGE_COLORS.items()
        if t not in ("unassessable",)
    )
    + ' &nbsp; <span style="border:1px dashed #999;padding:1px 6px">◇ unobserved origin</span>'
    + "</div>"
)


def render_html(graph: nx.MultiDiGraph, *, height: str = "640px", heading: str = "") -> str:
    """A self-contained HTML page of the graph (vis-network inlined, no CDN references): pyvis
    with `cdn_resources="in_line"`, then the bootstrap tags its template always adds are removed
    (notes/STACK.md). Node and edge text is embedded with Jinja's `tojson` and shown by
    vis-network as text, so it is passed unescaped; the heading is escaped and shown once."""
    from pyvis.network import Network  # lazy: pyvis (and jinja2) load only when a page is drawn

    net = Network(height=height, width="100%", directed=True, cdn_resources="in_line", heading="")
    for n, d in graph.nodes(data=True):
        attrs = {
            k: v
            for k, v in d.items()
            if k in ("label", "title", "color", "shape", "size", "font") and v is not None
        }
        net.add_node(n, **attrs)
    for a, b, d in graph.edges(data=True):
        attrs = {k: v for k, v in d.items() if k in ("label", "title", "color", "dashes") and v is not None}
        net.add_edge(a, b, **attrs)
    net.set_options(
        '{"edges": {"font": {"size": 10}, "smooth": false}, '
        '"physics": {"solver": "forceAtlas2Based", "stabilization": {"iterations": 200}}}'
    )
    page = net.generate_html(notebook=False)
    for pat in _CDN_TAGS:
        page = pat.sub("", page)
    page = _EMPTY_HEADINGS.sub("", page)
    top = _LEGEND + (
        f"<h3 style='font:16px sans-serif;margin:4px'>{html_text(heading)}</h3>" if heading else ""
    )
    return page.replace("<body>", "<body>" + top, 1)


def item_graph_html(
    con: Connection, namespace: str | None, item_id: str, *, runs: Sequence[str] | None = None
) -> str | None:
    """The offline HTML page of one item's graph (None when the item is unknown)."""
    g = item_graph(con, item_id, namespace, runs=runs)
    if g.number_of_nodes() == 0:
        return None
    return render_html(g, heading=f"{namespace}/{item_id}" if namespace else item_id)
