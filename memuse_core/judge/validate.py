"""Checks before an answer is accepted (MemUse 3.5 "Evidence checks", A.3.1, Table 5).

Structure: strict JSON, exactly the delivered entries (number and item id), allowed values, integer
anchors inside the episode and the entry's credit window, anchors required for acted_on/selected
and forbidden for none, evidence steps inside the episode.

Coverage (requirements accumulate with the claim):

=====================================  ===============================================
claim                                  complete reads required
=====================================  ===============================================
every answer                           task, prior index, target placements and entries,
                                       first consuming step and the step before it
determined novelty, or acted_on        every prior source P1..Pn
selected / referenced / none           every step of the entry's credit window
determined effect (acted_on entries)   every step from the window start to the episode end
a step cited in anchors or evidence    that step in full, with the memory text it references
=====================================  ===============================================

Conditional reads (the rows 2-4) are `coercible`: a forced final answer that leaves one incomplete
has the affected signal set to undetermined (3.5: "the affected signal must remain undetermined").
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Literal

from pydantic import ValidationError

from ..rules.judgment import EntryAssessment, JudgeAnswer
from .package import EvidencePackage, step_path
from .tools import EvidenceTools

ViolationKind = Literal["invalid_json", "contract", "structure", "unread_anchor", "incomplete_read"]


@dataclass
class Violation:
    """One reason an answer was rejected."""

    kind: ViolationKind
    message: str
    entry: int | None = None
    signal: str | None = None
    """For a conditional read: the signal that must become undetermined if the read stays missing."""

    @property
    def coercible(self) -> bool:
        return self.kind == "incomplete_read" and self.signal is not None

    def to_dict(self) -> dict[str, object]:
        return {"kind": self.kind, "message": self.message, "entry": self.entry, "signal": self.signal}


@dataclass
class CheckResult:
    """The parsed answer (when it parsed) and every violation found."""

    answer: JudgeAnswer | None
    violations: list[Violation] = field(default_factory=list)
    window_read: dict[int, bool] = field(default_factory=dict)
    """Per entry: was its whole credit window read (decides ambiguous vs unclear, 3.5)?"""

    @property
    def ok(self) -> bool:
        return self.answer is not None and not self.violations

    def feedback(self) -> str:
        """The tool result sent back for a rejected answer."""
        lines = [
            f"Answer rejected: {len(self.violations)} problem(s). Fix them and call answer again "
            "(read what is missing first, or set the affected signal to null)."
        ]
        lines += [f"- [{v.kind}] {v.message}" for v in self.violations]
        return "\n".join(lines)


def _span(ts: list[int]) -> str:
    """Compact step list: S3-S5, S9."""
    if not ts:
        return ""
    ts = sorted(set(ts))
    out, a, b = [], ts[0], ts[0]
    for t in ts[1:]:
        if t == b + 1:
            b = t
            continue
        out.append(f"S{a}" if a == b else f"S{a}-S{b}")
        a = b = t
    out.append(f"S{a}" if a == b else f"S{a}-S{b}")
    return ", ".join(out)


def _unread_steps(read: set[int], steps: range | list[int]) -> list[int]:
    return [t for t in steps if t not in read]


def _no_constant(name: str) -> float:
    raise ValueError(f"{name} is not a JSON number")


def parse_answer(raw: str) -> tuple[JudgeAnswer | None, list[Violation]]:
    """Strict JSON, then the contract with strict types (A.3.1 "Structural checks": strict JSON,
    allowed signal values, valid integer anchors, a finite numeric confidence).

    Nothing is converted on the way: "false" or "yes" is not a boolean, "0.9" or `true` not a
    confidence, "12" or 13.0 not a step number, and NaN or Infinity not JSON at all. Such an answer
    is rejected and its problems go back to the judge like any other violation. What A.3.1 repairs
    after acceptance (confidence clipped to [0, 1], an effect reset when influence is not acted_on)
    happens in verdict assembly, not here."""
    try:
        obj = json.loads(raw, parse_constant=_no_constant)
    except (ValueError, TypeError) as e:
        return None, [Violation("invalid_json", f"the answer arguments are not valid JSON: {e}")]
    try:
        return JudgeAnswer.model_validate(obj, strict=True), []
    except ValidationError as e:
        msgs = []
        for err in e.errors()[:12]:
            loc = ".".join(str(x) for x in err["loc"])
            got = err.get("input")
            sent = "" if isinstance(got, (dict, list)) else f" (sent: {json.dumps(got)[:80]})"
            msgs.append(Violation("contract", f"{loc}: {err['msg']}{sent}"))
        return None, msgs


def check_answer(pkg: EvidencePackage, tools: EvidenceTools, raw: str | JudgeAnswer) -> CheckResult:
    """Run every structural and coverage check against the ledger as it stands now."""
    answer: JudgeAnswer | None
    vs: list[Violation]
    if isinstance(raw, JudgeAnswer):
        answer, vs = raw, []
    else:
        answer, vs = parse_answer(raw)
    if answer is None:
        return CheckResult(None, vs)
    res = CheckResult(answer, vs)
    by_pos = {e.pos: e for e in pkg.entries}
    seen: dict[int, int] = {}
    for a in answer.assessments:
        seen[a.entry] = seen.get(a.entry, 0) + 1
    for pos, n in seen.items():
        if pos not in by_pos:
            vs.append(Violation("structure", f"entry {pos} was not delivered in this span", pos))
        elif n > 1:
            vs.append(
                Violation("structure", f"entry {pos} is assessed {n} times; give exactly one assessment", pos)
            )
    missing = [p for p in by_pos if p not in seen]
    if missing:
        vs.append(Violation("structure", f"missing assessment for entries {missing}"))
    # Mandatory evidence (every answer).
    unread = [p for p in pkg.mandatory if not tools.file_complete(p)]
    if unread:
        vs.append(Violation("incomplete_read", "mandatory evidence not read in full: " + ", ".join(unread)))
    prior_unread = [p for p in pkg.prior_paths() if not tools.file_complete(p)]
    read = {t for t in range(1, pkg.T + 1) if tools.step_complete(t)}  # once per check, not per entry
    for a in answer.assessments:
        info = by_pos.get(a.entry)
        if info is None or seen.get(a.entry, 0) > 1:
            continue
        _check_entry(pkg, read, a, info.window, info.item_id, prior_unread, vs, res)
    return res


def _check_entry(
    pkg: EvidencePackage,
    read: set[int],
    a: EntryAssessment,
    window: tuple[int, int] | None,
    item_id: str | None,
    prior_unread: list[str],
    vs: list[Violation],
    res: CheckResult,
) -> None:
    e = a.entry
    if a.item_id != item_id:
        vs.append(
            Violation("structure", f"entry {e}: item_id must be {item_id!r} exactly, got {a.item_id!r}", e)
        )
    # Anchors and evidence steps: integers inside the episode; anchors inside the credit window.
    for kind, steps in (("anchors", a.anchors), ("evidence", a.evidence)):
        bad = [t for t in steps if not 1 <= t <= pkg.T]
        if bad:
            vs.append(
                Violation(
                    "structure", f"entry {e}: {kind} {bad} are not steps of the episode (S1-S{pkg.T})", e
                )
            )
    outside = [t for t in a.anchors if window is None or not window[0] <= t <= window[1]]
    if outside:
        win = f"S{window[0]}-S{window[1]}" if window else "empty"
        vs.append(
            Violation(
                "structure", f"entry {e}: anchors {_span(outside)} lie outside its credit window ({win})", e
            )
        )
    if a.influence in ("acted_on", "selected") and not a.anchors:
        vs.append(
            Violation("structure", f"entry {e}: influence {a.influence} needs at least one anchor step", e)
        )
    if a.influence == "none" and a.anchors:
        vs.append(Violation("structure", f"entry {e}: influence none must have an empty anchor list", e))
    cited = [t for t in set(a.anchors) | set(a.evidence) if 1 <= t <= pkg.T]
    unread_cited = _unread_steps(read, sorted(cited))
    if unread_cited:
        vs.append(
            Violation(
                "unread_anchor",
                f"entry {e}: cited steps not read in full (with their referenced "
                f"memory files): {_span(unread_cited)}",
                e,
            )
        )
    win_steps = range(window[0], window[1] + 1) if window else range(0)
    win_unread = _unread_steps(read, win_steps)
    res.window_read[e] = not win_unread
    # Conditional reads.
    if a.novelty is not None and prior_unread:
        vs.append(
            Violation(
                "incomplete_read",
                f"entry {e}: novelty {a.novelty} needs every prior source read: "
                f"unread {', '.join(prior_unread)}",
                e,
                "novelty",
            )
        )
    if a.influence == "acted_on" and prior_unread:
        vs.append(
            Violation(
                "incomplete_read",
                f"entry {e}: acted_on needs every prior source read: unread {', '.join(prior_unread)}",
                e,
                "influence",
            )
        )
    if a.influence in ("selected", "referenced", "none") and win_unread:
        vs.append(
            Violation(
                "incomplete_read",
                f"entry {e}: influence {a.influence} needs the whole credit window "
                f"read: unread {_span(win_unread)}",
                e,
                "influence",
            )
        )
    if a.influence == "acted_on" and a.effect is not None and window is not None:
        eff_unread = _unread_steps(read, range(window[0], pkg.T + 1))
        if eff_unread:
            vs.append(
                Violation(
                    "incomplete_read",
                    f"entry {e}: effect {a.effect} needs every step from S{window[0]} "
                    f"to the episode end read: unread {_span(eff_unread)}",
                    e,
                    "effect",
                )
            )


def coerce_undetermined(answer: JudgeAnswer, violations: list[Violation]) -> tuple[JudgeAnswer, list[str]]:
    """Set every signal whose conditional read is missing to null (forced final answers, 3.5)."""
    fix: dict[int, set[str]] = {}
    for v in violations:
        if v.coercible and v.entry is not None and v.signal:
            fix.setdefault(v.entry, set()).add(v.signal)
    changed: list[str] = []
    out = []
    for a in answer.assessments:
        sig = fix.get(a.entry, set())
        if not sig:
            out.append(a)
            continue
        upd: dict[str, object] = {}
        for s in sorted(sig):
            upd[s] = None
            changed.append(f"entry {a.entry}: {s} -> null (required read incomplete)")
        if "influence" in sig:
            upd["effect"] = None  # effect is assessed only for acted_on entries
        note = (
            a.notes
            + " [checker: "
            + ", ".join(sorted(sig))
            + " set to undetermined: required reads incomplete]"
        )
        upd["notes"] = note.strip()
        out.append(a.model_copy(update=upd))
    return answer.model_copy(update={"assessments": out}), changed


def mandatory_chars(pkg: EvidencePackage) -> int:
    """Characters of the mandatory evidence (for the preflight budget and the benchmark)."""
    return sum(len(pkg.files[p]) for p in pkg.mandatory)


__all__ = [
    "CheckResult",
    "Violation",
    "check_answer",
    "coerce_undetermined",
    "mandatory_chars",
    "parse_answer",
    "step_path",
]
