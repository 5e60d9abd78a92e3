"""The episode timeline as a Streamlit component: SVG drawn by `timeline_chart.js` (plain
JavaScript, no build step, no iframe: `st.components.v2`), so the timeline page never loads
Plotly's bundle (issue 17). A click on a mark that stands for a step sends that step back."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from typing import Any

import streamlit as st

from pages._svg_marks import component_js, hover_css

_CSS = """
.memuse-tl { position: relative; font: 12px sans-serif; color: var(--st-text-color); }
.memuse-tl-row { display: flex; align-items: flex-start; }
.memuse-tl-labels { flex: none; }
.memuse-tl-scroll { flex: 1 1 auto; overflow-x: auto; overflow-y: hidden; }
.memuse-tl svg text { fill: currentColor; font: 12px sans-serif; }
.memuse-tl svg text.textpoint { font-size: 9px; }
.memuse-tl .grid line { stroke: rgba(128, 128, 128, 0.22); stroke-width: 1; }
.memuse-tl .point { cursor: default; }
.memuse-tl .point[data-step] { cursor: pointer; }
.memuse-tl .point.ring { pointer-events: none; }
.memuse-tl .cursor line { stroke: currentColor; stroke-width: 1; opacity: 0.7; }
.memuse-tl .cursor path { fill: currentColor; }
.memuse-tl .cursor text { font-size: 11px; }
.memuse-tl-legend { display: flex; flex-wrap: wrap; gap: 4px 14px; padding: 2px 0 4px; }
.memuse-tl-legend .legenditem { display: inline-flex; align-items: center; gap: 4px; }
"""
_CSS += hover_css("memuse-tl-hover")

_chart = st.components.v2.component(
    "memuse_timeline",
    css=_CSS,
    js=component_js("timeline_chart.js"),
    isolate_styles=False,
)


def chart_key(prefix: str, episode_id: str) -> str:
    """A chart key for one episode: `prefix` and a short digest of the id. A component key must
    not hold "__", which SWE-bench task ids (and so episode ids) do; a key built from the raw id
    crashed the Compare page on every real task."""
    return f"{prefix}_{hashlib.sha1(episode_id.encode()).hexdigest()[:12]}"


def timeline_chart(
    drawing: dict[str, Any], step: int | None, *, key: str, on_pick: Callable[[], None]
) -> None:
    """Draw `drawing` (see `memuse_core.timeline.drawing`) with the cursor at `step` (None: no
    cursor). A click on a step's mark calls `on_pick` before the page runs; it reads the step as
    `st.session_state[key]["pick"]`."""
    _chart(key=key, data={"drawing": drawing, "step": step}, on_pick_change=on_pick)
