"""Case studies in the app: annotate a span, a step and an item, collect them, export.

Invariants: each save is confirmed (the span annotation too); an item annotation (no episode)
beside span and step annotations exports without error; the export renders the description's
and notes' markdown with recorded text escaped; the case study's URL (?case=…) reopens it.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest
from test_app_corpus import episode_id, make_db

from memuse_core.store import connect
from memuse_core.store.app import episodes as store_episodes

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_db(tmp_path_factory.mktemp("cases"))


def _span(db: Path) -> str:
    con = connect(db, read_only=True)
    try:
        spans = store_episodes.episode_spans(con, episode_id("rA1", "t2"))
    finally:
        con.close()
    return str(spans.iloc[0]["span_id"])


def _app(db: Path, monkeypatch: pytest.MonkeyPatch, **params: str) -> AppTest:
    monkeypatch.setenv("MEMUSE_DB", str(db))
    monkeypatch.chdir(ROOT)
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=90)
    for k, v in params.items():
        at.query_params[k] = v
    at.run()
    at.switch_page("pages/6_case_studies.py")
    for k, v in params.items():
        at.query_params[k] = v
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def _annotate(at: AppTest, kind: str, target: str, note: str, case: str) -> None:
    at.radio(key="cs_target_kind").set_value(kind).run()
    at.text_input(key=f"cs_target_{kind}").input(target).run()
    at.text_area(key=f"ann_note_cs_{kind}").input(note)
    at.selectbox(key=f"ann_case_cs_{kind}").set_value(case)
    at.button(key=f"FormSubmitter:ann_form_cs_{kind}-Save annotation").click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert any("Saved annotation" in s.value for s in at.success), (kind, [w.value for w in at.warning])


def test_span_step_and_item_annotations_export_with_rendered_markdown(
    db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    at = _app(db, monkeypatch)
    at.text_input(key="cs_new_name").input("Mixed targets")
    at.text_area(key="cs_new_desc").input("Why this **matters**")
    at.button(key="FormSubmitter:cs_new-Create case study").click().run()
    case = at.selectbox(key="cs_pick").value
    assert case
    _annotate(at, "item", "default::card-1", "The card *itself* <script>x</script>", case)
    _annotate(at, "span", _span(db), "Span note", case)
    _annotate(at, "step", f"{episode_id('rA1', 't2')}#S2", "- step one\n- step two", case)
    at.run()
    assert any("3 annotations" in m.value for m in at.markdown)
    at.button(key="cs_prepare").click().run()
    assert not at.exception, [e.value for e in at.exception]
    exp = at.session_state["cs_export"]
    assert "Why this <strong>matters</strong>" in exp.html
    assert "The card <em>itself</em> &lt;script&gt;x&lt;/script&gt;" in exp.html
    assert "<li>step one</li>" in exp.html
    # The case study's URL reopens it in a fresh session.
    assert at.query_params["case"] == [case] or at.query_params["case"] == case
    again = _app(db, monkeypatch, case=case)
    assert again.selectbox(key="cs_pick").value == case
