"""Answer checks (MemUse 3.5 "Evidence checks", A.3.1, Table 5): structural errors, mandatory reads,
conditional reads per claim, cited steps read in full, and the forced-answer rule that an incomplete
conditional read turns the affected signal undetermined."""

from __future__ import annotations

import json

from memuse_core.judge.evidence import episode_evidence
from memuse_core.judge.examples import acted_on_episode, span_context
from memuse_core.judge.package import build_package
from memuse_core.judge.tools import EvidenceTools
from memuse_core.judge.validate import check_answer, coerce_undetermined


def _setup(**kw):
    rec, span = span_context(acted_on_episode(**kw))
    pkg = build_package(episode_evidence(rec), span)
    tools = EvidenceTools(pkg)
    tools.mark_inline(pkg.mandatory)
    return pkg, tools


def _ans(**kw):
    a = {
        "entry": 0,
        "item_id": "m-clamp",
        "relevance": True,
        "accuracy": "uncontradicted",
        "novelty": None,
        "influence": None,
        "effect": None,
        "anchors": [],
        "evidence": [],
        "notes": "",
    }
    a.update(kw)
    return json.dumps({"assessments": [a], "summary": "s", "confidence": 0.7})


def _read(tools, paths):
    for p in paths:
        tools.read(p, 0, 10**5, round_no=1)


def _kinds(res):
    return sorted({v.kind for v in res.violations})


def test_minimal_undetermined_answer_needs_only_mandatory_reads():
    pkg, tools = _setup()
    assert check_answer(pkg, tools, _ans()).ok
    fresh = EvidenceTools(pkg)
    res = check_answer(pkg, fresh, _ans())
    assert not res.ok and "mandatory evidence" in res.violations[0].message


def test_invalid_json_and_contract_violations():
    pkg, tools = _setup()
    assert _kinds(check_answer(pkg, tools, "{not json")) == ["invalid_json"]
    assert _kinds(check_answer(pkg, tools, _ans(influence="used"))) == ["contract"]
    assert _kinds(check_answer(pkg, tools, json.dumps({"assessments": [], "confidence": 0.5}))) == [
        "structure"
    ]
    # a missing confidence is a contract violation, not a default (A.3.1)
    no_conf = json.loads(_ans())
    del no_conf["confidence"]
    res = check_answer(pkg, tools, json.dumps(no_conf))
    assert _kinds(res) == ["contract"] and "confidence" in res.violations[0].message


def test_structure_ids_anchors_and_none():
    pkg, tools = _setup()
    assert "item_id" in check_answer(pkg, tools, _ans(item_id="other")).violations[0].message
    two = json.loads(_ans())
    two["assessments"].append(dict(two["assessments"][0], entry=7))
    assert any("not delivered" in v.message for v in check_answer(pkg, tools, json.dumps(two)).violations)
    _read(tools, pkg.prior_paths())
    r = check_answer(pkg, tools, _ans(influence="acted_on"))
    assert any("needs at least one anchor" in v.message for v in r.violations)
    r = check_answer(pkg, tools, _ans(influence="acted_on", anchors=[1]))  # before the window (S2-S5)
    assert any("outside its credit window" in v.message for v in r.violations)
    r = check_answer(pkg, tools, _ans(influence="acted_on", anchors=[99]))
    assert any("not steps of the episode" in v.message for v in r.violations)
    _read(tools, ["steps/S3.md", "steps/S4.md", "steps/S5.md"])
    r = check_answer(pkg, tools, _ans(influence="none", anchors=[3]))
    assert any("empty anchor list" in v.message for v in r.violations)


def test_conditional_reads_accumulate_with_the_claim():
    pkg, tools = _setup()
    r = check_answer(pkg, tools, _ans(novelty="novel"))
    assert [v.signal for v in r.violations] == ["novelty"]
    r = check_answer(pkg, tools, _ans(influence="none"))
    assert [v.signal for v in r.violations] == ["influence"] and "S3-S5" in r.violations[0].message
    _read(tools, pkg.prior_paths())
    r = check_answer(pkg, tools, _ans(influence="acted_on", anchors=[3], effect="improved"))
    kinds = {(v.kind, v.signal) for v in r.violations}
    assert kinds == {("unread_anchor", None), ("incomplete_read", "effect")}
    _read(tools, ["steps/S3.md"])
    r = check_answer(pkg, tools, _ans(influence="acted_on", anchors=[3], effect="improved"))
    assert [v.signal for v in r.violations] == ["effect"]  # S4-S5 still unread
    _read(tools, ["steps/S4.md", "steps/S5.md"])
    r = check_answer(pkg, tools, _ans(influence="acted_on", anchors=[3], effect="improved", novelty="novel"))
    assert r.ok and r.window_read == {0: True}


def test_evidence_steps_must_be_read():
    pkg, tools = _setup(padding=2)
    r = check_answer(pkg, tools, _ans(evidence=[5]))
    assert _kinds(r) == ["unread_anchor"]


def test_forced_answer_coerces_only_conditional_signals():
    pkg, tools = _setup()
    r = check_answer(pkg, tools, _ans(novelty="novel", influence="none"))
    assert all(v.coercible for v in r.violations)
    fixed, changed = coerce_undetermined(r.answer, r.violations)
    a = fixed.assessments[0]
    assert a.novelty is None and a.influence is None and len(changed) == 2
    assert check_answer(pkg, tools, fixed).ok
    r = check_answer(pkg, tools, _ans(evidence=[4]))
    assert not any(v.coercible for v in r.violations)


def test_nan_and_infinity_are_not_json():
    """A.3.1: "The parser requires strict JSON" and "Confidence must be finite and numeric":
    Python's json module reads NaN and Infinity, JSON has no such numbers."""
    pkg, tools = _setup()
    for bad in ("NaN", "Infinity", "-Infinity"):
        raw = _ans().replace('"confidence": 0.7', f'"confidence": {bad}')
        res = check_answer(pkg, tools, raw)
        assert _kinds(res) == ["invalid_json"] and bad.lstrip("-") in res.violations[0].message
