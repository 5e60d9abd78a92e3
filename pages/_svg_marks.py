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


def hover_css(cls: str) -> str:
    """CSS of a chart's hover box (`.<cls>`): hidden until shown, themed like the page."""
    return (
        f".{cls} {{\n"
        "  display: none; position: absolute; z-index: 10; pointer-events: none; max-width: 60%;\n"
        "  padding: 4px 8px; border-radius: 4px; font: 12px sans-serif; white-space: pre-wrap;\n"
        "  background: var(--st-secondary-background-color); color: var(--st-text-color);\n"
        "  border: 1px solid rgba(128, 128, 128, 0.5); box-shadow: 0 1px 4px rgba(0, 0, 0, 0.25);\n"
        "}\n"
    )
