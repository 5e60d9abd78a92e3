"""A memory item's history graph as a Streamlit component: SVG drawn by `lineage_chart.js` (plain
JavaScript, no build step, no iframe: `st.components.v2`), so the lineage page never loads
Plotly's bundle (issue 17). A click on a node that opens something sends the node's target back."""

from __future__ import annotations

from typing import Any

import streamlit as st

from pages._svg_marks import component_js, hover_css

_CSS = """
.memuse-lin { position: relative; font: 12px sans-serif; color: var(--st-text-color); }
.memuse-lin svg text { fill: currentColor; font: 12px sans-serif; }
.memuse-lin svg text.nodelabel {
  font-size: 10px; paint-order: stroke; stroke: var(--st-background-color); stroke-width: 3px;
}
.memuse-lin .node { cursor: default; outline: none; }
.memuse-lin .node.clickable { cursor: pointer; }
.memuse-lin .node.clickable:hover > :first-child,
.memuse-lin .node.clickable:focus-visible > :first-child { stroke: currentColor; stroke-width: 2; }
.memuse-lin-legend { display: flex; flex-wrap: wrap; gap: 4px 14px; padding: 2px 0 6px; }
.memuse-lin-legend .legenditem { display: inline-flex; align-items: center; gap: 4px; }
"""
_CSS += hover_css("memuse-lin-hover")

_chart = st.components.v2.component(
    "memuse_lineage",
    css=_CSS,
    js=component_js("lineage_chart.js"),
    isolate_styles=False,
)


def _ignore() -> None:
    """The pick is read from the component's result in the same run (a trigger needs a callback)."""


def lineage_chart(drawing: dict[str, Any], *, key: str) -> Any:
    """Draw `drawing` (see `memuse_core.lineage.drawing`); returns the target of the node clicked
    since the last run (`[kind, id, episode_id, step, namespace]`, as sent by the browser), else
    None."""
    return _chart(key=key, data=drawing, on_pick_change=_ignore).pick
