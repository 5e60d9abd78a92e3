"""Safe rendering of recorded text on the pages (every function delegates to memuse_core.textsafe):
inert markdown and code spans, verbatim blocks (escaped `<pre>`), users' notes without images, and
text columns for numbers that `views.display.formatted` turned into text.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

import pandas as pd
import streamlit as st

from memuse_core import textsafe
from memuse_core.views.display import NumberFormat, formatted


def md_escape(text: Any) -> str:
    """Recorded text made inert for st.markdown: shown character for character (no emphasis,
    links, images, HTML, formulas, icons, emoji or colours; control and bidi characters visible)."""
    return textsafe.markdown_literal(text)


def text_columns(columns: Iterable[str]) -> dict[str, Any]:
    """Column configs for numbers formatted as text by `views.display.formatted`: right-aligned
    like numbers."""
    return {str(c): st.column_config.TextColumn(alignment="right") for c in columns}


def formatted_grid(df: pd.DataFrame, formats: Mapping[str, NumberFormat], *, key: str) -> None:
    """A table whose number columns `views.display.formatted` turns into text by `formats`,
    drawn without the index and right-aligned like numbers (the pages' one way to do it)."""
    st.dataframe(formatted(df, formats), hide_index=True, key=key, column_config=text_columns(formats))


VERBATIM_STYLE = (
    "white-space:pre-wrap;overflow-wrap:anywhere;margin:0;padding:0.75rem 1rem;border-radius:0.5rem;"
    "background:rgba(128,128,128,0.1);font-family:'Source Code Pro',monospace;font-size:0.875rem;"
    "line-height:1.6;color:inherit"
)
"""Look of a verbatim block: wrapped monospace text on a faint grey panel that reads on the light
and the dark theme (like st.code with wrap_lines, without its syntax highlighter)."""


def verbatim_html(text: str) -> str:
    """A `<pre>` block showing `text` character for character: neutralised (control and bidi
    characters visible) and HTML-escaped by `textsafe.html_text`, so no tag, entity or script in
    it can render."""
    # The newline after the tag is the one an HTML parser drops, so a leading newline of the text stays.
    return f'<pre class="memuse-text" style="{VERBATIM_STYLE}">\n{textsafe.html_text(text)}</pre>'


def more_note(n_chars: int) -> str:
    """The note under a verbatim block cut at its limit."""
    return f"… {n_chars:,} more characters not shown"


def verbatim_block(text: Any, *, max_chars: int = 20000) -> str:
    """`verbatim_html` of recorded text cut at `max_chars`, followed by `more_note` as a small
    paragraph when cut: what `show_text` draws, as one HTML string for a larger block."""
    shown, hidden = _cut(text, max_chars)
    out = verbatim_html(shown)
    if hidden:
        out += f'<p class="memuse-more" style="{NOTE_STYLE}">{more_note(hidden)}</p>'
    return out


def _cut(text: Any, max_chars: int) -> tuple[str, int]:
    """Recorded text neutralised and cut at `max_chars` (a blank shown as one space), and how
    many characters the cut hides."""
    s = textsafe.neutralise(text)
    return s[:max_chars] or " ", max(0, len(s) - max_chars)


NOTE_STYLE = "font-size:0.875rem;opacity:0.6;margin:0.25rem 0 0.5rem 0"
"""Look of a small note (like st.caption) inside an HTML block."""


def html_inline(text: Any) -> str:
    """Recorded text on one line for HTML element content (neutralised, escaped)."""
    return textsafe.html_text(textsafe.one_line(text))


CODE_STYLE = "background:rgba(128,128,128,0.15);padding:0.1em 0.3em;border-radius:0.25rem;font-size:0.875em"
"""Look of an inline code span inside an HTML block (like markdown's code spans)."""


def html_code(text: Any) -> str:
    """Recorded text as an inline `<code>` span in HTML (one line, neutralised, escaped)."""
    return f'<code style="{CODE_STYLE}">{html_inline(text).strip() or "&nbsp;"}</code>'


def show_text(text: Any, *, max_chars: int = 20000) -> None:
    """Show recorded text verbatim (inert), truncated with a note when very long.

    An escaped `<pre>` through st.html, not st.code: st.code loads Streamlit's syntax highlighter,
    about 1.5 MB of JavaScript that a fresh tab spends seconds on (issue 17)."""
    shown, hidden = _cut(text, max_chars)
    st.html(verbatim_html(shown))
    if hidden:
        st.caption(more_note(hidden))


def md_code(text: Any) -> str:
    """Recorded text as an inline code span (inert; one line, backticks replaced)."""
    return textsafe.code_literal(text)


def note_md(text: Any) -> str:
    """A user's markdown note, rendered as markdown but without images (an imported case study
    must not make the browser fetch remote images) and without raw HTML (Streamlit escapes it)."""
    return re.sub(r"!\[", r"\\![", textsafe.neutralise(text))
