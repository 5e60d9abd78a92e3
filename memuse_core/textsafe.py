"""Recorded text made safe to show: the one place that neutralises it for a terminal, the app's
markdown, HTML exports and chart labels.

Recorded text (ids, config names, tool output, model responses) is untrusted evidence. Shown as
is it can act on the viewer instead of being read:
- ANSI escape sequences recolour, move the cursor or retitle a terminal (`memuse info` printing
  an id with `ESC[2J`); other C0/C1 control characters (backspace, carriage return, bell) hide or
  overwrite what was printed;
- bidirectional controls (U+202A-U+202E, U+2066-U+2069, U+200E/U+200F, U+061C) reorder the text
  after them, so an unterminated U+202E in an id reverses the rest of a header;
- Streamlit's markdown turns `:material/name:`, `:smile:`, `:red[...]` and `$...$` into icons,
  emoji, colours and formulas, and `[x](url)` into links; Plotly labels and HTML render tags.

Every function here is pure (no I/O, no Streamlit); the app's pages and views, the CLI printers,
the case-study export and the chart builders call them.
"""

from __future__ import annotations

import html
import re
from typing import Any

BIDI_CONTROLS = frozenset("\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")
"""Characters that change the display order of the text around them (Unicode UAX #9)."""

_C0_PICTURES = {i: chr(0x2400 + i) for i in range(0x20)}
_C0_PICTURES[0x7F] = "\u2421"  # DEL
_SEPARATORS = {"\u2028": "\n", "\u2029": "\n", "\x85": "\n"}

UNSAFE_PATTERN = "\r\n|[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029" + "".join(sorted(BIDI_CONTROLS)) + "]"
"""What `neutralise` replaces, as a regular expression (for vectorised checks of table columns)."""
_UNSAFE = re.compile(UNSAFE_PATTERN)
_NEWLINES = re.compile(r"[\n\t]")


def _picture(m: re.Match[str]) -> str:
    ch = m.group(0)
    if ch == "\r\n":
        return "\n"
    if ch in _SEPARATORS:
        return _SEPARATORS[ch]
    code = ord(ch[0])
    if code in _C0_PICTURES:
        # ESC -> "␛", CR -> "␍", BEL -> "␇": an escape sequence shows as "␛[31m", inert.
        return _C0_PICTURES[code]
    return f"<U+{code:04X}>"


def _text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, float) and value != value:  # NaN from a data frame
        return ""
    return value if isinstance(value, str) else str(value)


def neutralise(value: Any) -> str:
    """Text with every control character made visible and inert, newlines and tabs kept.

    C0 controls become their Unicode control pictures (ESC -> ␛, so `ESC[31m` reads `␛[31m`);
    DEL is ␡; C1 controls and bidirectional controls become `<U+202E>`; CRLF becomes a newline
    and a lone CR ␍; line and paragraph separators become newlines. None and NaN become "".
    """
    s = _text(value)
    if not _UNSAFE.search(s):
        return s
    return _UNSAFE.sub(_picture, s)


def one_line(value: Any) -> str:
    """`neutralise`d text on one line (newlines and tabs as spaces): ids, names, labels."""
    return _NEWLINES.sub(" ", neutralise(value))


def terminal(value: Any) -> str:
    """Text for a terminal: `neutralise` (no escape sequence reaches the terminal)."""
    return neutralise(value)


# ---- Streamlit markdown ---------------------------------------------------------------------

_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|<>~$=^])")
_MD_ENTITIES = {"&": "&amp;", ":": "&#58;"}


def markdown_literal(value: Any) -> str:
    """Recorded text that Streamlit's markdown shows character for character.

    Markup characters are backslash-escaped (no emphasis, links, images, HTML or formulas). The
    colon becomes the entity `&#58;`: Streamlit rewrites `:material/` in the raw source before
    parsing and expands `:name:` shortcodes and `:color[...]` directives in text, and a
    backslash does not stop either, while an entity is decoded only after they ran. `&` becomes
    `&amp;` so recorded entities stay literal too.
    """
    s = _MD_SPECIAL.sub(r"\\\1", neutralise(value))
    return re.sub(r"[&:]", lambda m: _MD_ENTITIES[m.group(0)], s)


def code_literal(value: Any) -> str:
    """Recorded text as a one-line inline code span for Streamlit markdown.

    Inside a code span entities are not decoded, so the only markup Streamlit still acts on is its
    `:material/` rewrite of the raw source; a word joiner (U+2060, invisible) after the colon
    keeps `:material/x:` from turning into `:material_x:`. Backticks become `'` (a code span
    cannot hold them safely).
    """
    s = one_line(value).replace("`", "'").strip()
    s = s.replace(":material/", ":\u2060material/").replace(":streamlit:", ":\u2060streamlit:")
    return f"`{s}`" if s else "` `"


# ---- HTML and Plotly ------------------------------------------------------------------------


def html_text(value: Any) -> str:
    """Recorded text for HTML element content or a quoted attribute: neutralised and escaped."""
    return html.escape(neutralise(value), quote=True)


def plot_text(value: Any) -> str:
    """Recorded text for a Plotly label or hover: Plotly renders a small HTML subset (`<b>`,
    `<br>`, `<a href>`) and entities there, so `&`, `<` and `>` are escaped once."""
    return neutralise(value).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


_HREF = re.compile("(h)(ref)", re.I)


def graph_text(value: Any) -> str:
    """Recorded text for a vis-network graph label or tooltip (pyvis), escaped exactly once.

    vis-network draws labels on a canvas and shows a string tooltip as text, so HTML escaping
    would be shown (`&lt;`); the JSON that carries the text into the page escapes `<` itself. pyvis
    switches every tooltip to an innerHTML popup when any title contains "href", so that word is
    split with a word joiner (U+2060, invisible) and the text path is the only one."""
    return _HREF.sub("\\1\u2060\\2", neutralise(value))


__all__ = [
    "BIDI_CONTROLS",
    "UNSAFE_PATTERN",
    "code_literal",
    "graph_text",
    "html_text",
    "markdown_literal",
    "neutralise",
    "one_line",
    "plot_text",
    "terminal",
]
