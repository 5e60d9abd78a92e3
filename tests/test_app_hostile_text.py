"""Recorded text that attacks the display is shown inert on every page.

Invariant, on a store whose config name carries Streamlit icon/emoji/colour markup and ANSI
escapes, whose run, episode, task and item ids carry escape sequences and an unterminated
right-to-left override, and whose repository is unknown: no page raises; no text element,
widget option or table cell the app sends contains a raw control, escape or bidi character;
no markdown it sends can still expand `:material/…:`, a `:shortcode:` or a `:color[…]`
directive; the span header names its steps and no page prints "repo —".
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from app_text import (
    lineage_drawings,
    profile_blocks,
    profile_texts,
    step_blocks,
    step_headings,
    step_lines,
    timeline_drawings,
    verbatim,
)
from hostile_app_corpus import EPISODE, ITEM, make_hostile_db
from streamlit.testing.v1 import AppTest

from memuse_core.store import connect
from memuse_core.store.app import episodes as store_episodes
from memuse_core.textsafe import UNSAFE_PATTERN

ROOT = Path(__file__).resolve().parents[1]
UNSAFE = re.compile(UNSAFE_PATTERN)
ACTIVE_MARKUP = re.compile(
    r":material/|:streamlit:|(?<![\\&#\w]):[a-z_]+:|:(red|blue|green|orange|violet|gray|rainbow)\["
)


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_hostile_db(tmp_path_factory.mktemp("hostile_app"))


def _span(db: Path) -> str:
    con = connect(db, read_only=True)
    try:
        return str(store_episodes.episode_spans(con, EPISODE).iloc[0]["span_id"])
    finally:
        con.close()


def _strings(value: object) -> list[str]:
    """Every string inside a JSON value."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []


def _texts(at: AppTest) -> tuple[list[str], list[str]]:
    """(markdown sources, every other text: verbatim blocks, titles, options, cells)."""
    md = [
        e.value
        for kind in ("markdown", "caption", "warning", "info", "success", "error")
        for e in at.get(kind)
    ]
    other = verbatim(at) + [e.value for kind in ("title", "subheader") for e in at.get(kind)]
    other += step_headings(at) + step_lines(at)  # the transcript's step blocks (checked markup)
    other += step_lines(at, "memuse-entries")  # MemTrim's entries block (checked markup)
    for block in profile_blocks(at) + profile_blocks(at, "memuse-heatmap"):  # checked markup
        other += profile_texts(block)
    for kind in ("selectbox", "multiselect", "radio"):
        for w in at.get(kind):
            other += [str(o) for o in getattr(w, "options", [])]
    for d in at.dataframe:
        for c in d.value.columns:
            other += [v for v in d.value[c] if isinstance(v, str)]
    return md, other


@pytest.mark.parametrize(
    "page,params",
    [
        ("pages/1_overview.py", {"report": "1"}),  # with the report section (forms, cost) open
        ("pages/2_episodes.py", {}),
        ("pages/3_timeline.py", {"episode": EPISODE}),
        ("pages/10_transcript.py", {"episode": EPISODE}),
        ("pages/9_memtrim.py", {"episode": EPISODE}),
        ("pages/4_span.py", {"span": "SPAN"}),
        ("pages/5_lineage.py", {"item": f"default::{ITEM}"}),
        ("pages/6_case_studies.py", {}),
        ("pages/8_judge_runs.py", {}),
    ],
    ids=lambda x: x if isinstance(x, str) else "",
)
def test_pages_show_hostile_ids_inert(
    db: Path, monkeypatch: pytest.MonkeyPatch, page: str, params: dict
) -> None:
    monkeypatch.setenv("MEMUSE_DB", str(db))
    monkeypatch.chdir(ROOT)
    params = {k: (_span(db) if v == "SPAN" else v) for k, v in params.items()}
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=90)
    for k, v in params.items():
        at.query_params[k] = v
    at.run()
    first_md, first_other = _texts(at)  # the first run also shows app.py's sidebar
    at.switch_page(page)
    for k, v in params.items():
        at.query_params[k] = v
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    md, other = _texts(at)
    md, other = md + first_md, other + first_other
    assert md and other
    for text in md + other:
        assert not UNSAFE.search(text), repr(text)
    for text in md:
        assert not ACTIVE_MARKUP.search(text), text
        assert "repo —" not in text and "None–None" not in text
    if page.endswith("3_timeline.py"):
        assert any("unknown repository" in t for t in md)
        # The timeline's drawing (SVG in the browser) carries recorded text escaped: no markup
        # but the line breaks between hover lines; the renderer sets it as text.
        (chart,) = timeline_drawings(at)
        texts = _strings(chart["drawing"])
        assert any("&lt;" in t for t in texts), "the hostile episode's markup should be in the drawing"
        assert not any(re.search("[<>]", t.replace("<br>", "")) for t in texts)
    if page.endswith("5_lineage.py"):
        # The lineage graph's drawing (SVG in the browser) carries its shown text (labels, hovers,
        # legend) neutralised and plain (the renderer sets it as text): the hostile ids are there,
        # made visible. Node targets keep the raw ids: never shown, sent back on a click.
        (chart,) = lineage_drawings(at)
        shown = _strings({k: v for k, v in chart.items() if k != "nodes"})
        shown += _strings([{k: v for k, v in n.items() if k != "target"} for n in chart["nodes"]])
        assert any("tip␛[5m" in t for t in shown), shown
        assert not [t for t in shown if UNSAFE.search(t)]
        assert ITEM in _strings([n["target"] for n in chart["nodes"]])
    if page.endswith("10_transcript.py"):
        # Each step is one HTML block made only of the page's tags (`step_blocks` checks them);
        # the hostile ids in its delivery marks arrive escaped and neutralised.
        blocks = step_blocks(at)
        assert blocks and any("Memory delivered" in t for t in step_lines(at))
        assert not any(re.search(r"\x1b|\u202e", b) for b in blocks)
    if page.endswith("9_memtrim.py"):
        assert step_blocks(at, "memuse-entries") and step_lines(at, "memuse-entries")
        assert not any(UNSAFE.search(b) for b in step_blocks(at, "memuse-units"))
    if page.endswith("4_span.py"):
        assert any(re.search(r"· (steps? \d|no consuming step)", t) for t in md)
    if page.endswith("1_overview.py"):  # the radar and the table name the hostile configuration
        (radar,) = profile_blocks(at)
        assert any("material/home" in t for t in profile_texts(radar))
        assert any("material/home" in t for t in profile_texts(profile_blocks(at, "memuse-heatmap")[0]))
    if page.endswith("2_episodes.py"):  # the config name is shown, literally (its text survives)
        assert any("material/home" in t for t in other)


def test_verbatim_text_is_escaped_neutralised_wrapped_and_truncated() -> None:
    """`show_text` (every step text, tool call and result): markup arrives HTML-escaped in a
    wrapping `<pre>`, controls visible, and long text is cut with a note saying how much."""

    def script() -> None:
        import sys

        sys.path.insert(0, ".")
        from pages._text import show_text

        show_text("<script>alert(1)</script>&amp; \x1b[31mred\u202eevil\n  indented", max_chars=1000)
        show_text("x" * 30, max_chars=10)

    at = AppTest.from_function(script, default_timeout=30)
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(ROOT)
        at.run()
    assert not at.exception, [e.value for e in at.exception]
    body = at.get("html")[0].proto.body
    assert "<script>" not in body and "&lt;script&gt;alert(1)&lt;/script&gt;&amp;amp;" in body
    assert "white-space:pre-wrap" in body
    first, second = verbatim(at)
    assert first == "<script>alert(1)</script>&amp; \u241b[31mred<U+202E>evil\n  indented"
    assert second == "x" * 10
    assert [c.value for c in at.caption] == ["… 20 more characters not shown"]
