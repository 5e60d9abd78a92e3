"""Safe rendering of recorded text on the pages (every function delegates to memuse_core.textsafe):
inert markdown and code spans, verbatim blocks, users' notes without images, and text columns for
numbers that `views.display.formatted` turned into text.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

import streamlit as st

from memuse_core import textsafe


def md_escape(text: Any) -> str:
    """Recorded text made inert for st.markdown: shown character for character (no emphasis,
    links, images, HTML, formulas, icons, emoji or colours; control and bidi characters visible)."""
    return textsafe.markdown_literal(text)


def text_columns(columns: Iterable[str]) -> dict[str, Any]:
    """Column configs for numbers formatted as text by `views.display.formatted`: right-aligned
    like numbers."""
    return {str(c): st.column_config.TextColumn(alignment="right") for c in columns}


def show_text(text: Any, *, max_chars: int = 20000, language: str | None = None) -> None:
    """Show recorded text verbatim (inert), truncated with a note when very long."""
    s = textsafe.neutralise(text)
    if len(s) > max_chars:
        st.code(s[:max_chars], language=language, wrap_lines=True)
        st.caption(f"… {len(s) - max_chars:,} more characters not shown")
    else:
        st.code(s or " ", language=language, wrap_lines=True)


def md_code(text: Any) -> str:
    """Recorded text as an inline code span (inert; one line, backticks replaced)."""
    return textsafe.code_literal(text)


def note_md(text: Any) -> str:
    """A user's markdown note, rendered as markdown but without images (an imported case study
    must not make the browser fetch remote images) and without raw HTML (Streamlit escapes it)."""
    return re.sub(r"!\[", r"\\![", textsafe.neutralise(text))
