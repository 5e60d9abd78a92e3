"""The memory graph (MemUse 3.6, A.4.3): item -> versions -> origin episode, and item ->
deliveries -> spans -> verdicts, across episodes and runs (`graph`); laid out for the app's
clickable SVG chart (`drawing`) and drawn as an offline vis-network page for reports (`render`)."""

from .drawing import CAPTION, COLUMN_TITLES, TRIAGE_MEANING, drawing, layout
from .graph import (
    EPISODE_COLORS,
    KIND_COLORS,
    MAX_SPANS,
    TRIAGE_COLORS,
    USAGE_COLORS,
    build_graph,
    effect_graph,
    episode_graph,
    item_graph,
    usage_label,
)
from .render import item_graph_html, render_html

__all__ = [
    "CAPTION",
    "COLUMN_TITLES",
    "EPISODE_COLORS",
    "KIND_COLORS",
    "MAX_SPANS",
    "TRIAGE_COLORS",
    "TRIAGE_MEANING",
    "USAGE_COLORS",
    "build_graph",
    "drawing",
    "effect_graph",
    "episode_graph",
    "item_graph",
    "item_graph_html",
    "layout",
    "render_html",
    "usage_label",
]
