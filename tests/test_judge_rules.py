"""The rules judge (deterministic, offline) on hand-made episodes: acted_on with an anchor, none after
a full window read, selected for a preview whose full card was retrieved, referenced for a mention.
It reads what it cites: its answers pass the same checks as LLM answers, through the same ledger."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from memuse_core.judge.evidence import episode_evidence
from memuse_core.judge.examples import (
    acted_on_episode,
    ignored_episode,
    referenced_episode,
    selected_episode,
    span_context,
)
from memuse_core.judge.package import build_package
from memuse_core.judge.rules import has, judge_rules
from memuse_core.judge.tools import EvidenceTools
from memuse_core.judge.validate import check_answer


def _judge(events, which=0):
    rec, span = span_context(events, which)
    pkg = build_package(episode_evidence(rec), span)
    res = judge_rules(pkg)
    assert res.status == "accepted", res.reason
    assert res.judge == "rules" and res.calls == 0 and res.tool_calls > 0
    return pkg, res, res.answer.assessments[0]


def test_acted_on_with_anchor_and_improved_effect():
    pkg, res, a = _judge(acted_on_episode())
    assert a.influence == "acted_on" and 2 in a.anchors and a.novelty == "novel" and a.relevance
    assert a.effect == "improved" and "[S2]" in a.notes
    assert res.verdict.triage == "positive" and res.verdict.usage_labels == ["used"]


def test_none_only_after_reading_the_whole_window():
    pkg, res, a = _judge(ignored_episode())
    assert a.influence == "none" and a.anchors == [] and res.window_read[0]
    assert res.verdict.usage_labels == ["ignored"] and res.verdict.triage == "neutral"
    # the same answer is rejected by a ledger that has not read the window
    fresh = EvidenceTools(pkg)
    fresh.mark_inline(pkg.mandatory)
    assert not check_answer(pkg, fresh, res.answer).ok


def test_selected_preview_then_full_card_acted_on():
    _, res, a = _judge(selected_episode(), 0)
    assert a.influence == "selected" and a.anchors == [2] and a.effect is None
    _, res2, full = _judge(selected_episode(), 1)
    assert full.influence == "acted_on" and full.anchors == [3]


def test_referenced_mention_without_action():
    _, res, a = _judge(referenced_episode())
    assert a.influence == "referenced" and a.anchors == [] and 1 in a.evidence
    assert res.verdict.usage_labels == ["noted"]


def test_deterministic():
    rec, span = span_context(acted_on_episode())
    ev = episode_evidence(rec)
    a = judge_rules(build_package(ev, span)).answer
    b = judge_rules(build_package(ev, span)).answer
    assert a == b


_CHARS = st.sampled_from(list("ab_-.1 /\n") + ["é", "ß", "²", "٣"])
_PIECE = st.text(_CHARS, max_size=3)


@settings(max_examples=400)
@given(st.lists(_PIECE, max_size=5), st.text(_CHARS, min_size=1, max_size=3))
def test_token_test_agrees_with_the_boundary_regex(pieces, k):
    """`has` (find plus neighbouring characters) answers as the pattern `(?<![\\w-])k(?![\\w]|-\\w)`,
    on texts where k occurs between random neighbours, several times or not at all."""
    text = k.join(pieces)
    rx = re.compile(r"(?<![\w-])" + re.escape(k) + r"(?![\w]|-\w)")
    assert has(text, k) == (rx.search(text) is not None), (text, k)
