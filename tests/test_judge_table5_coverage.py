"""Table 5 coverage (MemUse 3.4 "Evidence checks", A.3.1 Table 5), one claim at a time, from small
hand-made episodes. "Determined novelty or acted-on influence also requires complete reads of all
sources in the prior context B_S"; "a determined observed effect requires every step from the start
of that window through the end of the episode". An answer that claims more than it read is
rejected, and the violation names the signal that would have to stay undetermined."""

from __future__ import annotations

import json

from memuse_core.builder import EpisodeBuilder, entry
from memuse_core.events import Event
from memuse_core.judge.evidence import episode_evidence
from memuse_core.judge.examples import TASK, acted_on_episode, span_context
from memuse_core.judge.package import EvidencePackage, build_package
from memuse_core.judge.tools import EvidenceTools
from memuse_core.judge.validate import check_answer

HINT = "The real check lives in `_clamp_day` in src/util.py; fix it there, not in parse_date."


def early_boundary_episode() -> list[Event]:
    """The recall is consumed at S2 and acted on at S2-S3. At S4 the host recalls a fuller version
    of the same item whose text contains the first one, so the first window ends at S3 (A.1.5);
    the tests run later, at S5, after the window has closed."""
    b = EpisodeBuilder("early", task=TASK)
    b.step("Let me look around.", "ls src", "dates.py util.py")
    b.host_block("recall", "Relevant memories:\n- " + HINT, entries=[entry("m-clamp", HINT)])
    b.step("Memory points at the helper.", "grep -n _clamp_day src/util.py", "12:def _clamp_day(y, m, d):")
    b.step("Edit the helper.", "sed -i 's/return d/return min(d, last_day(y, m))/' src/util.py", "")
    fuller = HINT + " Leap years need `calendar.isleap`."
    b.host_block("recall", "Relevant memories:\n- " + fuller, entries=[entry("m-clamp", fuller, version="2")])
    b.step("Look at the docs.", "cat docs/dates.md", "nothing relevant here")
    b.step("Run the tests.", "pytest tests/test_dates.py", "5 passed in 0.12s")
    b.final("Fixed.")
    return b.finish(resolved=True)


def _package(events: list[Event]) -> tuple[EvidencePackage, EvidenceTools]:
    rec, span = span_context(events)
    pkg = build_package(episode_evidence(rec), span)
    tools = EvidenceTools(pkg)
    tools.mark_inline(pkg.mandatory)  # every answer's mandatory evidence is read
    return pkg, tools


def _read_steps(tools: EvidenceTools, steps: range) -> None:
    for t in steps:
        tools.read(f"steps/S{t}.md", 0, 10**5, round_no=1)


def _acted_on(anchor: int, effect: str | None = None) -> str:
    return json.dumps(
        {
            "assessments": [
                {
                    "entry": 0,
                    "item_id": "m-clamp",
                    "relevance": True,
                    "accuracy": "uncontradicted",
                    "novelty": None,
                    "influence": "acted_on",
                    "effect": effect,
                    "anchors": [anchor],
                    "evidence": [],
                    "notes": "the agent greps the helper the memory names",
                }
            ],
            "summary": "acted on",
            "confidence": 0.8,
        }
    )


def _problems(pkg: EvidencePackage, tools: EvidenceTools, answer: str) -> set[tuple[str, str | None]]:
    return {(v.kind, v.signal) for v in check_answer(pkg, tools, answer).violations}


def test_acted_on_is_rejected_while_the_prior_sources_are_unread() -> None:
    pkg, tools = _package(acted_on_episode())
    assert pkg.prior_paths()  # the task episode has prior sources (earlier messages, S1)
    _read_steps(tools, range(1, pkg.T + 1))  # every step read: only B_S is missing
    assert _problems(pkg, tools, _acted_on(anchor=3)) == {("incomplete_read", "influence")}
    for p in pkg.prior_paths()[:-1]:
        tools.read(p, 0, 10**5, round_no=1)
    # one prior source still unread is enough to reject acted_on
    assert _problems(pkg, tools, _acted_on(anchor=3)) == {("incomplete_read", "influence")}
    tools.read(pkg.prior_paths()[-1], 0, 10**5, round_no=1)
    assert check_answer(pkg, tools, _acted_on(anchor=3)).ok


def test_an_undetermined_influence_needs_no_prior_reads() -> None:
    """The requirement comes with the claim: the same reads support influence undetermined."""
    pkg, tools = _package(acted_on_episode())
    _read_steps(tools, range(1, pkg.T + 1))
    answer = json.loads(_acted_on(anchor=3))
    answer["assessments"][0].update(influence=None, anchors=[])
    assert check_answer(pkg, tools, json.dumps(answer)).ok


def test_a_determined_effect_needs_every_step_to_the_episode_end_not_only_the_window() -> None:
    pkg, tools = _package(early_boundary_episode())
    (window,) = [e.window for e in pkg.entries]
    assert window == (2, 3) and pkg.T > window[1]  # the window closes before the episode ends
    for p in pkg.prior_paths():
        tools.read(p, 0, 10**5, round_no=1)
    _read_steps(tools, range(window[0], window[1] + 1))  # the whole window, nothing after it
    assert check_answer(pkg, tools, _acted_on(anchor=2)).ok  # acted_on without effect: enough
    problems = _problems(pkg, tools, _acted_on(anchor=2, effect="improved"))
    assert problems == {("incomplete_read", "effect")}
    _read_steps(tools, range(window[1] + 1, pkg.T))  # all but the last step
    assert _problems(pkg, tools, _acted_on(anchor=2, effect="improved")) == {("incomplete_read", "effect")}
    _read_steps(tools, range(pkg.T, pkg.T + 1))
    assert check_answer(pkg, tools, _acted_on(anchor=2, effect="improved")).ok


def test_an_entry_assessed_twice_is_rejected() -> None:
    """A.3.1 structural checks: exactly one assessment per delivered entry."""
    pkg, tools = _package(acted_on_episode())
    twice = json.loads(_acted_on(anchor=3))
    twice["assessments"].append(dict(twice["assessments"][0]))
    res = check_answer(pkg, tools, json.dumps(twice))
    assert any(v.kind == "structure" and "2 times" in v.message for v in res.violations)


def test_an_anchor_on_the_last_step_counts_once_read() -> None:
    """Anchors are valid steps inside the episode and the window (A.3.1): the episode's last step
    is one of them; like every cited step it must be read in full before the answer is accepted."""
    pkg, tools = _package(acted_on_episode())
    (window,) = [e.window for e in pkg.entries]
    assert window is not None and window[1] == pkg.T
    for p in pkg.prior_paths():
        tools.read(p, 0, 10**5, round_no=1)
    assert _problems(pkg, tools, _acted_on(anchor=pkg.T)) == {("unread_anchor", None)}
    _read_steps(tools, range(pkg.T, pkg.T + 1))
    assert check_answer(pkg, tools, _acted_on(anchor=pkg.T)).ok
