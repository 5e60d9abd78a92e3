"""Verdict rules (MemUse 3.5, A.3.1, A.4.1-A.4.2): every (influence, effect, window read) combination
maps to exactly the paper's usage label; triage applies negative > positive > unresolved > neutral;
profiles divide by all entries; effects of non-acted-on entries are reset and counted."""

from __future__ import annotations

import itertools

import pytest

from memuse_core.rules.verdicts import (
    EntrySignals,
    auto_neutral_verdict,
    clip_confidence,
    span_verdict,
    triage_label,
    usage_label,
)
from memuse_core.vocab import AXES, UNCERTAINTY
from memuse_core.vocab import EFFECT as EFFECT_VALUES
from memuse_core.vocab import INFLUENCE as INFLUENCE_VALUES

# (influence, effect, window_read) -> usage label, written out from 3.5 "Usage and triage labels".
EXPECTED = {
    ("acted_on", "improved"): "used",
    ("acted_on", "no_effect"): "unproductive",
    ("acted_on", "harmed"): "misused",
    ("acted_on", None): "unclear",
    ("selected", None): "selected",
    ("referenced", None): "noted",
    ("none", None): "ignored",
}


@pytest.mark.parametrize(
    "influence,effect,window_read",
    list(itertools.product([*INFLUENCE_VALUES, None], [*EFFECT_VALUES, None], [True, False])),
)
def test_usage_label_table(influence, effect, window_read):
    got = usage_label(influence, effect, window_read)
    if influence is None:
        assert got == ("ambiguous" if window_read else "unclear")
    elif influence == "acted_on":
        assert got == EXPECTED[(influence, effect)]
    else:
        # selected/referenced/none ignore the effect (it is reset to null at verdict assembly)
        assert got == EXPECTED[(influence, None)]


@pytest.mark.parametrize(
    "labels,triage",
    [
        (["misused", "used", "unclear"], "negative"),
        (["used", "unclear", "ignored"], "positive"),
        (["unclear", "selected"], "unresolved"),
        (["ambiguous", "unproductive", "selected", "noted", "ignored"], "neutral"),
        (["used", "misused"], "negative"),
        ([], "neutral"),
    ],
)
def test_triage_precedence(labels, triage):
    assert triage_label(labels) == triage


def test_every_label_pair_obeys_precedence():
    order = {"negative": 0, "positive": 1, "unresolved": 2, "neutral": 3}
    labels = ["used", "unproductive", "misused", "unclear", "selected", "noted", "ignored", "ambiguous"]
    for a, b in itertools.product(labels, labels):
        t = triage_label([a, b])
        assert order[t] == min(order[triage_label([a])], order[triage_label([b])])


def _e(**kw):
    base = {"relevance": False, "accuracy": "uncontradicted"}
    base.update(kw)
    return EntrySignals(**base)


def test_profile_shares_divide_by_all_entries_and_refine():
    entries = [
        _e(
            relevance=True,
            accuracy="corroborated",
            novelty="novel",
            influence="acted_on",
            effect="improved",
            window_read=True,
        ),
        _e(relevance=True, accuracy="uncontradicted", novelty=None, influence="acted_on", effect="harmed"),
        _e(relevance=True, novelty="redundant", influence="acted_on", effect=None),
        _e(relevance=False, novelty="novel", influence=None, window_read=True),
        _e(relevance=False, influence="none", effect="improved", window_read=True),  # effect must be reset
    ]
    v = span_verdict("s", entries, "j1")
    assert v.triage == "negative"
    assert v.usage_labels == ["used", "misused", "unclear", "ambiguous", "ignored"]
    assert v.effect_resets == 1
    assert v.profile == {
        "relevance": 0.6,
        "corroboration": 0.2,
        "information_gain": 0.2,
        "acted_on": 0.6,
        "benefit": 0.2,
        "harm": 0.2,
    }
    assert v.uncertainty == {"u_accuracy": 0.4, "u_novelty": 0.2, "u_influence": 0.2, "u_effect": 0.2}
    for refined, coarse in (
        ("corroboration", "relevance"),
        ("information_gain", "relevance"),
        ("benefit", "acted_on"),
        ("harm", "acted_on"),
    ):
        assert v.profile[refined] <= v.profile[coarse]
    assert set(v.profile) == set(AXES) and set(v.uncertainty) == set(UNCERTAINTY)


def test_auto_neutral_carries_only_a_triage_label():
    v = auto_neutral_verdict("s", 3)
    assert v.triage == "neutral" and not v.profiled and v.profile is None and v.uncertainty is None


def test_confidence_clipped():
    assert (
        clip_confidence(1.7) == 1.0 and clip_confidence(-2) == 0.0 and clip_confidence(float("nan")) is None
    )


def test_effect_resets_count_only_non_null_effects_of_entries_not_acted_on():
    """A.3.1: "Verdict assembly resets a non-null effect to null when influence is not acted on
    and reports this correction as a compliance statistic": entries whose effect is already null
    are not corrections, and an acted-on entry keeps its effect."""
    entries = [
        _e(relevance=True, influence="referenced", effect="harmed", window_read=True),  # reset
        _e(relevance=False, influence="none", effect=None, window_read=True),
        _e(relevance=False, influence=None, effect=None),
        _e(relevance=True, influence="acted_on", effect="improved", window_read=True),
    ]
    v = span_verdict("s", entries, "j1")
    assert v.effect_resets == 1
    assert v.usage_labels == ["noted", "ignored", "unclear", "used"] and v.triage == "positive"
    assert span_verdict("s", entries[1:], "j2").effect_resets == 0


def test_a_single_entry_span_is_profiled():
    """A.4.2: "A profile requires a nonempty span and an accepted assessment of every entry": one
    entry is enough, and its shares are 0 or 1."""
    v = span_verdict("s", [_e(relevance=True, influence="none", window_read=True)], "j1")
    assert v.profiled and v.n_entries == 1
    assert v.profile is not None and v.profile["relevance"] == 1.0 and v.profile["acted_on"] == 0.0
