"""The rules judge: a deterministic, offline judge over the same package, tools, contract and checks
as the LLM judge (DESIGN.md "Judging"). It is labelled "rules" everywhere.

It reads through `read_evidence` (so the coverage ledger certifies what it cites) the task, every
prior source, and every step of the episode, then rates each entry by the rules of MemUse A.2.2
read as lexical and structural rules over those files:

* relevance, novelty and accuracy (`judge.rules_claims`): what the entry states, compared with the
  task, the recorded failures and the visible prior context, and checked against recorded results;
* influence and observed effect (`judge.rules_use`): what the agent's commands inside the credit
  window used, which prior sources compete with the entry (A.2.2's three allocation rules), and
  what later checks, restores and repeats show.

The facts both read (`judge.rules_facts`) allocate the prior sources; the text helpers are
`judge.lexicon`, the step parser `judge.trail`.
"""

from __future__ import annotations

import re
import time

from ..rules.judgment import Attempt, EntryAssessment, JudgeAnswer, JudgmentResult, verdict_for
from .lexicon import has, tokens, words
from .package import EntryInfo, EvidencePackage, choose_inline
from .result import JudgeSettings
from .rules_claims import accuracy, novelty, relevance
from .rules_facts import SpanFacts, entry_facts, episode_facts
from .rules_use import effect, influence
from .tools import MAX_PAGE, EvidenceTools
from .trail import step_view
from .validate import check_answer, mandatory_chars

PROMPT_HASH = "rules-v2"
"""Version of the rules judge's rules (stored where an LLM judgment stores its prompt hash)."""
_HEADER = re.compile(r"^# \[P\d+\] message \d+ \((\w+)\)\n\n?")


class _Reader:
    """Reads whole files through the tools (every page goes through the ledger)."""

    def __init__(self, tools: EvidenceTools, log: list[str]) -> None:
        self.tools, self.log = tools, log
        self.files, self.ranges = tools.pkg.files, tools.ledger.ranges

    def full(self, path: str) -> str:
        text = self.files[path]
        ranges = self.ranges
        # a file without a ledger range is unread; one with a range is checked like any other
        if path not in ranges:
            if len(text) <= MAX_PAGE:  # one page (most files): what `read_whole` records for it
                ranges[path] = [(0, len(text), 1)]
                self.tools.reads += 1
                self.log.append(f"{path}@0")
                return text
        elif self.tools.file_complete(path):
            return text
        self.log += [f"{path}@{off}" for off in self.tools.read_whole(path, round_no=1)]
        return text  # the pages read above concatenate to exactly this text

    def step(self, t: int) -> str:
        own, *refs = self.tools.pkg.step_files(t)  # steps/S<t>.md, then the memory it references
        for p in refs:
            self.full(p)
        return self.full(own)


def judge_rules(
    pkg: EvidencePackage, settings: JudgeSettings | None = None, res: JudgmentResult | None = None
) -> JudgmentResult:
    """Judge one span with the rules judge (deterministic; no network)."""
    settings = settings or JudgeSettings(judge="rules")
    res = res or JudgmentResult(span_id=pkg.span_id)
    res.episode_id, res.judge, res.model = pkg.episode_id, "rules", None
    res.settings, res.prompt_hash = settings.public(), PROMPT_HASH
    res.cost_usd = 0.0  # no model call: the cost is known to be zero
    res.mandatory_chars = mandatory_chars(pkg)
    tools = EvidenceTools(pkg)
    tools.mark_inline(choose_inline(pkg, 0))
    log: list[str] = []
    rd = _Reader(tools, log)
    prior = []
    for p in pkg.prior_paths():
        text = rd.full(p)
        m = _HEADER.match(text)
        prior.append((m.group(1) if m else "", text[m.end() :] if m else text))
    task = rd.full("task.md").removeprefix("# Task\n\n")
    steps = {t: step_view(t, rd.step(t)) for t in range(1, pkg.T + 1)}
    facts = SpanFacts(pkg=pkg, ep=episode_facts(task, steps), prior_files=prior)
    assessments = [_assess(facts, e) for e in pkg.entries]
    answer = JudgeAnswer(assessments=assessments, summary=_summary(assessments), confidence=0.5)
    chk = check_answer(pkg, tools, answer)
    res.tool_calls = tools.reads + tools.searches
    res.transcript = {"tool_log": log, "coverage": tools.ledger.snapshot()}
    res.attempts.append(
        Attempt(
            call=0,
            accepted=chk.ok,
            violations=[v.to_dict() for v in chk.violations],
            answer=answer.model_dump(),
        )
    )
    res.ended_at = time.time()
    if chk.ok:
        res.status, res.answer, res.window_read = "accepted", answer, chk.window_read
        verdict_for(res)
    else:
        res.status = "error"
        res.reason = "rules answer failed its own checks: " + "; ".join(v.message for v in chk.violations[:3])
    return res


def _assess(f: SpanFacts, e: EntryInfo) -> EntryAssessment:
    x = entry_facts(f, e)
    rel, rel_why = relevance(f, x)
    acc, acc_ev, acc_why = accuracy(f, x)
    nov, nov_why = novelty(f, x)
    use = influence(f, x, nov)
    eff, eff_ev, eff_why = effect(f, x, use)
    cited = sorted(
        {t for t in [*use.evidence, *acc_ev, *eff_ev] if 1 <= t <= f.T}
    )  # every cited step was read in full above
    notes = [
        "rules judge"
        + (" (exposure unknown: judged from the placement text)" if e.exposed_text is None else ""),
        f"relevance: {rel_why}",
        f"accuracy: {acc_why}",
        f"novelty: {nov_why}",
        f"influence: {use.note}",
    ]
    if use.influence == "acted_on":
        notes.append(f"effect: {eff_why or 'undetermined'}")
    return EntryAssessment(
        entry=e.pos,
        item_id=e.item_id,
        relevance=rel,
        accuracy=acc,
        novelty=nov,
        influence=use.influence,
        effect=eff,
        anchors=use.anchors,
        evidence=cited,
        notes="; ".join(notes),
    )


def _summary(assessments: list[EntryAssessment]) -> str:
    parts = [
        f"entry {a.entry}: {a.influence or 'undetermined'}" + (f"/{a.effect}" if a.effect else "")
        for a in assessments
    ]
    return "rules judge (lexical evidence): " + ", ".join(parts)


__all__ = ["PROMPT_HASH", "has", "judge_rules", "tokens", "words"]
