"""Recorded text is neutralised in one place (memuse_core.textsafe) before any display.

Invariants: no control character, escape sequence or bidirectional control survives `neutralise`
(each becomes a visible, inert stand-in) while printable text, newlines and tabs are unchanged;
`markdown_literal` leaves no Streamlit markup active (icons, shortcodes, colours, links, HTML,
formulas); `code_literal` is one code span; `html_text` and `plot_text` escape exactly once.
"""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st

from memuse_core import textsafe
from memuse_core.textsafe import (
    BIDI_CONTROLS,
    code_literal,
    html_text,
    markdown_literal,
    neutralise,
    one_line,
    plot_text,
)

CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029" + "".join(BIDI_CONTROLS) + "]")


def test_escape_sequences_and_controls_become_visible() -> None:
    assert neutralise("run\x1b[31mRED\x1b[0m") == "run␛[31mRED␛[0m"
    assert neutralise("a\x07b\x08c\x7fd") == "a␇b␈c␡d"
    assert neutralise("over\rwrite") == "over␍write"
    assert neutralise("dos\r\nline") == "dos\nline"
    assert neutralise("c1\x9b2J") == "c1<U+009B>2J"
    assert neutralise("tab\tand\nnewline") == "tab\tand\nnewline"
    assert neutralise(None) == "" and neutralise(float("nan")) == ""


def test_unterminated_bidi_override_cannot_reorder_what_follows() -> None:
    out = neutralise("ep-1\u202eexe.txt")
    assert out == "ep-1<U+202E>exe.txt"
    for ch in BIDI_CONTROLS:
        assert ch not in neutralise(f"x{ch}y")


def test_one_line_flattens_newlines() -> None:
    assert one_line("a\nb\tc\u2028d") == "a b c d"


@given(st.text())
def test_neutralise_leaves_no_control_and_keeps_printable_text(s: str) -> None:
    out = neutralise(s)
    assert not CONTROL.search(out)
    if not CONTROL.search(s) and "\r" not in s:
        assert out == s


def test_markdown_literal_disarms_streamlit_markup() -> None:
    hostile = ":material/home: :smile: :red[RED] [x](http://evil.example) <img src=x> $x^2$ **b**"
    out = markdown_literal(hostile)
    assert ":material/" not in out and ":smile:" not in out and ":red[" not in out
    assert not re.search(r"(?<!\\)[\[\]()<>*$]", out), out  # every markup character escaped
    assert "&#58;material/home&#58;" in out
    assert markdown_literal("a & b &amp;") == "a &amp; b &amp;amp;"
    assert markdown_literal("x\u202ey") == "x\\<U\\+202E\\>y"


def test_code_literal_is_one_inert_code_span() -> None:
    out = code_literal("id`with\nnewline :material/home:")
    assert out.count("`") == 2 and "\n" not in out
    assert ":material/" not in out and "material/home" in out


def test_html_and_plot_text_escape_once() -> None:
    assert html_text("<b>&amp;\x1b") == "&lt;b&gt;&amp;amp;␛"
    assert plot_text("<a href='x'>&") == "&lt;a href='x'&gt;&amp;"
    assert textsafe.terminal("\x1b]0;title\x07") == "␛]0;title␇"


def test_graph_text_is_plain_text_escaped_once() -> None:
    out = textsafe.graph_text("<b>card</b> see href=x\x1b[1m\nline 2")
    assert "<b>card</b>" in out and "&lt;" not in out  # vis-network shows it as text
    assert "href" not in out.lower() and "h\u2060ref" in out  # pyvis keeps its text tooltips
    assert "\x1b" not in out and "\nline 2" in out
