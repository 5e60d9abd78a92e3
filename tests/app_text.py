"""What the pages show as verbatim recorded text (pages/_text.py `show_text`): escaped `<pre>`
blocks sent with st.html. Shared by the AppTest files.

`verbatim(at)` reads every such block back as the text a reader sees, and fails when a block's
content holds a raw `<`, `>` or `"`: recorded text must reach the browser HTML-escaped (a
`<script>` or `<img onerror>` in it would otherwise run or render), so every test that reads
verbatim text through it fails if the escaping is removed.
"""

from __future__ import annotations

import html
import re
from typing import Any

_BLOCK = re.compile(r'<pre class="memuse-text" style="[^"<>]*">\n(.*?)</pre>', re.DOTALL)
_TAG = re.compile(r"<(/?)([a-z0-9]+)((?:\s+[a-z-]+(?:=\"[^\"<>]*\")?)*)\s*>")
_ATTR = re.compile(r'([a-z-]+)(?:="[^"<>]*")?')
STEP_TAGS = frozenset({"div", "h3", "p", "b", "br", "span", "ul", "li", "code", "details", "summary"})
"""The only tags a transcript step's HTML block (pages/_reader.step_html) is made of, besides
its verbatim blocks."""


def verbatim(at: Any) -> list[str]:
    """The texts of the verbatim blocks on an AppTest page, unescaped, in page order (a block is
    a whole st.html element, or one of the blocks inside a larger one, e.g. a transcript step)."""
    out = []
    for h in at.get("html"):
        for m in _BLOCK.finditer(h.proto.body):
            inner = m.group(1)
            assert not set(inner) & set('<>"'), f"recorded text reached the page unescaped: {inner[:200]!r}"
            out.append(html.unescape(inner))
    return out


def step_blocks(at: Any, kind: str = "memuse-step") -> list[str]:
    """The transcript's step blocks on an AppTest page (st.html bodies of pages/_reader.step_html;
    with `kind="memuse-entries"` / `"memuse-units"` MemTrim's entries block and units chart),
    each checked to be made only of the page's own markup: outside the verbatim blocks, every tag
    is one of `STEP_TAGS` with only `id`, `class`, `style`, `open` or `title` attributes, so a recorded `<script>`, `<img onerror>` or link
    cannot have reached the browser as markup."""
    out = []
    for h in at.get("html"):
        body = h.proto.body
        if not body.startswith(f'<div class="{kind}"'):
            continue
        rest = _BLOCK.sub("", body)
        for m in _TAG.finditer(rest):
            assert m.group(2) in STEP_TAGS, f"unexpected tag in a transcript step: {m.group(0)!r}"
            attrs = {a.group(1) for a in _ATTR.finditer(m.group(3))}
            assert attrs <= {"id", "class", "style", "open", "title"}, f"unexpected attribute: {m.group(0)!r}"
        assert not set(_TAG.sub("", rest)) & set('<>"'), f"raw markup in a transcript step: {rest[:300]!r}"
        out.append(body)
    return out


def step_headings(at: Any) -> list[str]:
    """The headings of the transcript's step blocks, as a reader sees them (unescaped)."""
    heads = [m for b in step_blocks(at) for m in re.findall(r'<h3 id="s\d+">(.*?)</h3>', b)]
    return [html.unescape(h) for h in heads]


def step_lines(at: Any, kind: str = "memuse-step") -> list[str]:
    """The text of every paragraph and list item of the transcript's step blocks (or `kind`'s;
    tags removed, line breaks kept, unescaped): delivery marks, credit windows, anchored actions."""
    lines = [
        m
        for b in step_blocks(at, kind)
        for m in re.findall(r"<(?:p|li)(?: style=\"[^\"<>]*\")?>(.*?)</(?:p|li)>", _BLOCK.sub("", b))
    ]
    return [html.unescape(_TAG.sub("", x.replace("<br>", "\n"))) for x in lines]


def timeline_drawings(at: Any) -> list[dict[str, Any]]:
    """The timeline charts on an AppTest page (pages/_timeline_chart.py, an SVG component): each
    one's data, `{"drawing": memuse_core.timeline.drawing(...), "step": cursor step or None}`."""
    import json

    return [
        json.loads(c.proto.json)
        for c in at.main
        if getattr(c, "type", "") == "bidi_component" and c.proto.component_name == "memuse_timeline"
    ]


def lineage_drawings(at: Any) -> list[dict[str, Any]]:
    """The lineage graphs on an AppTest page (pages/_lineage_chart.py, an SVG component): each
    one's data, `memuse_core.lineage.drawing(...)`."""
    import json

    return [
        json.loads(c.proto.json)
        for c in at.main
        if getattr(c, "type", "") == "bidi_component" and c.proto.component_name == "memuse_lineage"
    ]


PROFILE_TAGS = frozenset({"div", "span", "table", "tr", "th", "td"})
"""The only tags of the profile radar and table (memuse_core/charts/profile.py)."""
PROFILE_ATTRS = frozenset({"class", "style", "title"})
"""The only attributes they carry."""
_HTML_TAG = re.compile(r'<(/?)([a-z]+)((?:\s+[A-Za-z0-9-]+="[^"<>]*")*)\s*>')
_HTML_ATTR = re.compile(r'([A-Za-z0-9-]+)="[^"<>]*"')
_VERTEX = re.compile(r'<span class="vertex" title="([^"]*)" style="left:([-\d.]+)px;top:([-\d.]+)px;')


def profile_blocks(at: Any, kind: str = "memuse-radar") -> list[str]:
    """The Overview's / Compare's profile radar (`kind="memuse-heatmap"`: the shaded table) on an
    AppTest page, each checked to be made only of the chart's own tags and attributes: no recorded
    `<script>`, event handler or link can have reached the browser as markup."""
    out = []
    for h in at.get("html"):
        body = h.proto.body
        if not body.startswith(f'<div class="{kind}"'):
            continue
        for m in _HTML_TAG.finditer(body):
            assert m.group(2) in PROFILE_TAGS, f"unexpected tag in a profile chart: {m.group(0)!r}"
            attrs = set(_HTML_ATTR.findall(m.group(3)))
            assert attrs <= PROFILE_ATTRS, f"unexpected attribute in a profile chart: {m.group(0)!r}"
        rest = _HTML_TAG.sub("", body)
        assert not set(rest) & set('<>"'), f"raw markup in a profile chart: {rest[:300]!r}"
        out.append(body)
    return out


def profile_texts(block: str) -> list[str]:
    """Every piece of text of a profile chart as a reader sees it (tooltips included), unescaped."""
    return [html.unescape(t) for t in _HTML_TAG.sub("\n", block).split("\n") if t.strip()] + [
        html.unescape(t) for t in re.findall(r'title="([^"]*)"', block)
    ]


def radar_vertices(block: str) -> dict[str, tuple[float, float]]:
    """The radar's vertices by tooltip ("group · axis: share"), as points in pixels of its box."""
    return {html.unescape(t): (float(x), float(y)) for t, x, y in _VERTEX.findall(block)}
