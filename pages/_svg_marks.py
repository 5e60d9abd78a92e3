"""The JavaScript of a chart component with the SVG marks it shares (`svg_marks.js`: the element
helper and Plotly-named marker shapes) prepended: one home for the shapes the timeline and the
lineage graph draw."""

from __future__ import annotations

from pathlib import Path

_HERE = Path(__file__).parent


def component_js(name: str) -> str:
    """`svg_marks.js` followed by the component module `name` (a file beside this one)."""
    return (
        (_HERE / "svg_marks.js").read_text(encoding="utf-8")
        + "\n"
        + (_HERE / name).read_text(encoding="utf-8")
    )
