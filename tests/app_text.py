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

_BLOCK = re.compile(r'<pre class="memuse-text" style="[^"<>]*">\n(.*)</pre>', re.DOTALL)


def verbatim(at: Any) -> list[str]:
    """The texts of the verbatim blocks on an AppTest page, unescaped, in page order."""
    out = []
    for h in at.get("html"):
        m = _BLOCK.fullmatch(h.proto.body)
        if m is None:
            continue
        inner = m.group(1)
        assert not set(inner) & set('<>"'), f"recorded text reached the page unescaped: {inner[:200]!r}"
        out.append(html.unescape(inner))
    return out


def timeline_drawings(at: Any) -> list[dict[str, Any]]:
    """The timeline charts on an AppTest page (pages/_timeline_chart.py, an SVG component): each
    one's data, `{"drawing": memuse_core.timeline.drawing(...), "step": cursor step or None}`."""
    import json

    return [
        json.loads(c.proto.json)
        for c in at.main
        if getattr(c, "type", "") == "bidi_component" and c.proto.component_name == "memuse_timeline"
    ]
