"""The values MemTrim works with and returns: the parser protocol, stored memories, per-memory
decisions and read results (MemTrim 3.1, 3.3)."""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass, field
from typing import Any, Protocol

from ..vocab import TrimOutcome
from .units import EvidenceUnit, Key, ParsedInteraction

OutcomeClass = TrimOutcome
"""kept | relabelled | suppressed | none (vocab.TRIM_OUTCOMES)."""


class Parser(Protocol):
    """What MemTrim needs from a parser (deterministic or LLM, A.1)."""

    name: str

    def parse(self, text: str, answer: str | None = None) -> ParsedInteraction: ...

    def equivalent_key(self, key: Key, candidates: list[Key]) -> Key | None: ...

    def equivalent_task(self, task: str, candidates: list[str]) -> str | None: ...


@dataclass
class StoredMemory:
    """A written memory: the raw interaction plus its cached representation (A.1 "parsed once")."""

    memory_id: Hashable
    text: str
    answer: str | None
    parsed: ParsedInteraction
    timestamp: float | None = None
    """Trusted ordering signal from the base memory system (A.1), when it has one."""
    support: tuple[str, ...] | None = None
    """The support names the caller gave at write time (None: the parser decided)."""
    _layout: list[Block] | None = None

    def layout(self) -> list[Block]:
        """Top-level source spans in text order with the units taken from inside them (cached)."""
        if self._layout is None:
            units = sorted((u for u in self.parsed.units if u.end > u.start), key=lambda u: (u.start, -u.end))
            blocks: list[Block] = []
            for u in units:
                if blocks and u.end <= blocks[-1].end:
                    blk = blocks[-1]
                else:
                    blk = Block(u.start, u.end)
                    blocks.append(blk)
                if u.key.attribute == "subject":
                    continue
                blk.units.append(u)
            self._layout = blocks
        return self._layout


@dataclass
class Block:
    """A top-level source span of a memory and the units parsed from inside it."""

    start: int
    end: int
    units: list[EvidenceUnit] = field(default_factory=list)


@dataclass
class Decision:
    """What MemTrim did with one retrieved memory (3.3, Eq. 1)."""

    memory_id: Hashable
    shared: list[EvidenceUnit] = field(default_factory=list)
    """S_m(q): units also stated in the query (removed)."""
    conflicting: list[EvidenceUnit] = field(default_factory=list)
    """D_m(q): units whose key the query gives another value (removed; the query wins)."""
    memory_only: list[EvidenceUnit] = field(default_factory=list)
    """U_m(q): units the query does not mention (kept unless withheld by the merge), without the
    units that restate the stored answer."""
    answer_units: list[EvidenceUnit] = field(default_factory=list)
    """Units restating the stored answer: they follow the outcome, never pass as evidence."""
    outcome: OutcomeClass = "none"
    """kept | relabelled | suppressed | none."""
    reason: str = ""
    """Why this outcome, in one or two sentences."""
    support_from: str = "all"
    """Where the support set came from (`ParsedInteraction.support_from`)."""
    support_conflicts: list[EvidenceUnit] = field(default_factory=list)
    """D_m(q) ∩ H_m."""
    outcome_unit: EvidenceUnit | None = None
    """The kept answer or the relabelled fact unit, when there is one."""
    outcome_removed: str | None = None
    """Why the outcome unit was not passed on although the answer was kept or relabelled (the
    query states it or another value, or retrieved memories disagree)."""
    emitted: list[EvidenceUnit] = field(default_factory=list)
    """Units this memory contributed to the context (first copy only)."""
    duplicates: list[EvidenceUnit] = field(default_factory=list)
    """Memory-only units already emitted by an earlier retrieved memory."""
    withheld: list[EvidenceUnit] = field(default_factory=list)
    """Units withheld because retrieved memories disagree on their key (A.1)."""
    parsed_ok: bool = True
    """False when the parser failed for this memory (A.1 fallback)."""
    query_ok: bool = True
    """False when the current query could not be parsed (nothing is passed on: fail closed)."""
    lines: list[str] = field(default_factory=list)
    """The context lines this memory contributes (rendered from `emitted`)."""

    @property
    def dropped(self) -> bool:
        """Nothing of this memory reaches the context."""
        return not self.lines

    def explain(self) -> list[str]:
        """The decision in plain sentences, one per step of 3.3 (for the app and the filter)."""
        if not self.query_ok or not self.parsed_ok:
            return [self.reason]
        passed = "\n".join(self.lines)
        inside = sum(1 for u in self.shared if (t := u.span or u.text) and t in passed)
        out = [
            f"{len(self.shared)} unit(s) already stated in the request: removed"
            + (
                f" ({inside} still inside a sentence passed whole: a code token goes with its sentence)"
                if inside
                else ""
            )
            + ".",
            f"{len(self.conflicting)} unit(s) the request gives another value: removed (the request wins).",
            f"{len(self.memory_only)} memory-only unit(s): kept"
            + (
                f", {len(self.withheld)} withheld because retrieved memories disagree"
                if self.withheld
                else ""
            )
            + (f", {len(self.duplicates)} already passed by an earlier memory" if self.duplicates else "")
            + ".",
        ]
        if self.answer_units:
            out.append(
                f"{len(self.answer_units)} unit(s) restate the stored answer: they follow its outcome."
            )
        out.append(f"Stored answer: {self.outcome}. {self.reason}")
        if self.outcome_removed:
            out.append(self.outcome_removed)
        return out

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (units as dicts)."""
        return {
            "memory_id": str(self.memory_id),
            "outcome": self.outcome,
            "reason": self.reason,
            "explanation": self.explain(),
            "parsed_ok": self.parsed_ok,
            "query_ok": self.query_ok,
            "support_from": self.support_from,
            "shared": [unit_dict(u) for u in self.shared],
            "conflicting": [unit_dict(u) for u in self.conflicting],
            "memory_only": [unit_dict(u) for u in self.memory_only],
            "answer_units": [unit_dict(u) for u in self.answer_units],
            "support_conflicts": [unit_dict(u) for u in self.support_conflicts],
            "outcome_unit": unit_dict(self.outcome_unit) if self.outcome_unit else None,
            "outcome_removed": self.outcome_removed,
            "emitted": [unit_dict(u) for u in self.emitted],
            "duplicates": [unit_dict(u) for u in self.duplicates],
            "withheld": [unit_dict(u) for u in self.withheld],
            "lines": list(self.lines),
        }


@dataclass
class TrimResult:
    """Result of one read: the context to give the model and one decision per retrieved memory."""

    context: str
    decisions: dict[Hashable, Decision]
    query: ParsedInteraction
    lines: list[str] = field(default_factory=list)
    """The evidence lines of the context, in order."""

    def to_dict(self) -> dict[str, Any]:
        return {
            "context": self.context,
            "task": self.query.task,
            "query_ok": self.query.ok,
            "query_units": [unit_dict(u) for u in self.query.units],
            "decisions": {str(k): d.to_dict() for k, d in self.decisions.items()},
        }


def unit_dict(u: EvidenceUnit) -> dict[str, Any]:
    """JSON-ready unit."""
    return {
        "key": u.key.label(),
        "entity": u.key.entity,
        "attribute": u.key.attribute,
        "vtype": u.key.vtype,
        "value": u.value,
        "text": u.text,
        "span": [u.start, u.end],
        "source": u.span,
    }
