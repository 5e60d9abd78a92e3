"""A long select box offers a window of its options (issue 17: a select box of 8,000 episodes
cost most of a page's re-render in the browser): `views.choices.choice_window` picks the options,
`pages._pick.select_long` draws the box and its Find field.

Invariants: a list of at most CHOICES_SHOWN options is offered whole, with no Find field; a
longer one is offered as at most CHOICES_SHOWN options around the current one, the current one
always among them; Find narrows to the options whose label or value contains the text
(case-insensitive), the current one still offered; the box's help says how many are offered.
"""

from __future__ import annotations

from pathlib import Path

from streamlit.testing.v1 import AppTest

from memuse_core.views.choices import CHOICES_SHOWN, choice_window

ROOT = Path(__file__).resolve().parents[1]
IDS = [f"run-a:task-{i:04d}" for i in range(1000)]


def test_a_short_list_is_offered_whole() -> None:
    w = choice_window(IDS[:CHOICES_SHOWN], IDS[3])
    assert w.shown == IDS[:CHOICES_SHOWN]
    assert (w.matched, w.total) == (CHOICES_SHOWN, CHOICES_SHOWN)
    assert w.note == f"All {CHOICES_SHOWN} shown."


def test_a_long_list_is_a_window_around_the_current_option() -> None:
    w = choice_window(IDS, IDS[500])
    assert len(w.shown) == CHOICES_SHOWN
    assert IDS[500] in w.shown
    assert w.shown == IDS[500 - CHOICES_SHOWN // 2 : 500 + CHOICES_SHOWN // 2]
    # At either end the window stays full.
    assert choice_window(IDS, IDS[0]).shown == IDS[:CHOICES_SHOWN]
    assert choice_window(IDS, IDS[-1]).shown == IDS[-CHOICES_SHOWN:]
    assert choice_window(IDS, None).shown == IDS[:CHOICES_SHOWN]
    assert "200 of 1,000 shown" in w.note


def test_find_narrows_and_keeps_the_current_option() -> None:
    w = choice_window(IDS, IDS[10], "TASK-09", label=lambda s: s.upper())
    assert w.shown[0] == IDS[10]  # outside the matches: offered first
    assert w.shown[1:] == [i for i in IDS if "task-09" in i]
    assert w.matched == 100
    assert choice_window(IDS, None, "no such id").shown == []
    # The displayed label counts too, not only the value.
    assert choice_window(IDS, None, "shown-name", label=lambda s: "shown-name " + s).matched == 1000


def _page() -> None:
    import streamlit as st

    from pages._pick import select_long

    n = int(st.query_params.get("n", "1000"))
    options = [f"run-a:task-{i:04d}" for i in range(n)]
    if "box" not in st.session_state:
        st.session_state["box"] = options[n // 2]
    st.write(select_long("Episode", options, key="box"))


def _app(n: int) -> AppTest:
    at = AppTest.from_function(_page)
    at.query_params["n"] = str(n)
    return at


def test_select_long_offers_a_window_with_a_find_field() -> None:
    at = _app(1000).run()
    assert not at.exception
    box = at.selectbox(key="box")
    assert len(box.options) == CHOICES_SHOWN
    assert box.value == IDS[500]
    assert "200 of 1,000 shown" in box.help
    at.text_input(key="box_find").input("task-07").run()
    box = at.selectbox(key="box")
    assert box.value == IDS[500]
    assert box.options == [IDS[500], *[i for i in IDS if "task-07" in i]]
    box.select(IDS[712]).run()
    assert at.selectbox(key="box").value == IDS[712]
    assert at.markdown[-1].value == IDS[712]


def test_select_long_on_a_short_list_is_a_plain_select_box() -> None:
    at = _app(50).run()
    assert not at.exception
    assert len(at.selectbox(key="box").options) == 50
    assert len(at.text_input) == 0
