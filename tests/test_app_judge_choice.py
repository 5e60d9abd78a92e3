"""One judge per page, chosen in the sidebar and kept in the URL.

Invariants: with only rules verdicts in the store the default is the rules judge, and the picker
says so; every Overview, Compare, Episodes, Span inspector and Case studies title that shows
verdict-based numbers names the judge; picking the LLM judge (or opening a URL with
`judge=llm`) switches every page to the LLM judge's verdicts - here none, so nothing is profiled
and the page says so - and never mixes in the rules judge's numbers; the default leaves the URL
without `judge`.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest
from test_app_corpus import make_db
from test_app_pages import open_page

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_db(tmp_path_factory.mktemp("judge_choice"))


@pytest.fixture
def app(db: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("MEMUSE_DB", str(db))
    monkeypatch.chdir(ROOT)
    return open_page


def _titles(at: AppTest) -> list[str]:
    return [s.value for s in at.subheader] + [m.value for m in at.markdown if m.value.startswith("**")]


def test_default_is_the_rules_judge_and_titles_name_it(app) -> None:
    at = app()
    picker = at.selectbox(key="_w_view_judge")
    assert picker.value is None and picker.format_func(None).startswith("default: rules judge (")
    # The browser shows the placeholder while the value is None: it names the default judge.
    assert picker.proto.placeholder == picker.format_func(None)
    titles = _titles(at)
    for t in ("Six-axis entry-share profiles", "Outcome classes", "Triage rates"):
        assert any(x.startswith(t) and x.endswith("(rules judge)") for x in titles), (t, titles)
    assert "judge" not in at.query_params
    # The report section (forms, cost) is drawn once its expander is opened, and names the judge too.
    assert not any(m.value.startswith("**Delivery forms") for m in at.markdown)
    at.session_state["ov_report"] = True
    at.run()
    assert any(m.value.startswith("**Delivery forms (rules judge)**") for m in at.markdown)


def test_llm_choice_switches_every_page_and_is_kept_in_the_url(app) -> None:
    at = app()
    at.selectbox(key="_w_view_judge").set_value("llm").run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.query_params["judge"] == ["llm"] or at.query_params["judge"] == "llm"
    titles = _titles(at)
    assert titles and not any("(rules judge)" in t for t in titles), titles
    # No LLM verdicts in this store: nothing is profiled, and the page says why instead of
    # showing the rules judge's profile.
    assert any("none of its" in c.value and "accepted verdict" in c.value for c in at.caption)
    # A fresh session from the URL gets the same choice on every page.
    for page, title in (
        ("pages/7_compare.py", "Outcome classes, yields and efficiency (LLM judge)"),
        ("pages/6_case_studies.py", "Human vs judge agreement (LLM judge)"),
    ):
        fresh = app(page, judge="llm")
        assert fresh.session_state["view_judge"] == "llm"
        assert title in [s.value for s in fresh.subheader], (page, [s.value for s in fresh.subheader])
    # Episodes: the LLM judge has judged no eligible span here, the rules judge all of them.
    llm = app("pages/2_episodes.py", judge="llm").dataframe[0].value["span_classes"]
    rules = app("pages/2_episodes.py").dataframe[0].value["span_classes"]
    assert any("unjudged" in list(c) for c in llm)
    assert not any("unjudged" in list(c) for c in rules)
