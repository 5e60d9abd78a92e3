"""The values MemTrim works with and returns: the parser protocol, stored memories, per-memory
decisions and read results (MemTrim 3.1, 3.3)."""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from .units import EvidenceUnit, Key, ParsedInteraction

OutcomeClass = Literal["kept", "relabelled", "suppressed", "none"]


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
                if (
                    u.key.vtype == "text"
                    and u.key.attribute == "statement"
                    and (u.start, u.end) == (blk.start, blk.end)
                ):
                    blk.statement = (u.key, u.value)
            self._layout = blocks
        return self._layout


@dataclass
class Block:
    """A top-level source span of a memory and the units parsed from inside it."""

    start: int
    end: int
    units: list[EvidenceUnit] = field(default_factory=list)
    statement: tuple[Key, Any] | None = None
    """The free-text unit covering the whole span, when the span is an unparsed sentence."""


@dataclass
class Decision:
    """What MemTrim did with one retrieved memory (3.3, Eq. 1)."""

    memory_id: Hashable
    shared: list[EvidenceUnit] = field(default_factory=list)
    """S_m(q): units also stated in the query (removed)."""
    conflicting: list[EvidenceUnit] = field(default_factory=list)
    """D_m(q): units whose key the query gives another value (removed; the query wins)."""
    memory_only: list[EvidenceUnit] = field(default_factory=list)
    """U_m(q): units the query does not mention (kept unless withheld by the merge)."""
    outcome: OutcomeClass = "none"
    """kept | relabelled | suppressed | none."""
    reason: str = ""
    """Why this outcome."""
    support_conflicts: list[EvidenceUnit] = field(default_factory=list)
    """D_m(q) ∩ H_m."""
    outcome_unit: EvidenceUnit | None = None
    """The kept answer or the relabelled evidence unit, when there is one."""
    emitted: list[EvidenceUnit] = field(default_factory=list)
    """Units this memory contributed to the context (first copy only)."""
    duplicates: list[EvidenceUnit] = field(default_factory=list)
    """Memory-only units already emitted by an earlier retrieved memory."""
    withheld: list[EvidenceUnit] = field(default_factory=list)
    """Units withheld because retrieved memories disagree on their key (A.1)."""
    parsed_ok: bool = True
    """False when the parser failed for this memory (A.1 fallback)."""
    lines: list[str] = field(default_factory=list)
    """The context lines this memory contributes (rendered from `emitted`)."""

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (units as dicts)."""
        return {
            "memory_id": str(self.memory_id),
            "outcome": self.outcome,
            "reason": self.reason,
            "parsed_ok": self.parsed_ok,
            "shared": [unit_dict(u) for u in self.shared],
            "conflicting": [unit_dict(u) for u in self.conflicting],
            "memory_only": [unit_dict(u) for u in self.memory_only],
            "support_conflicts": [unit_dict(u) for u in self.support_conflicts],
            "outcome_unit": unit_dict(self.outcome_unit) if self.outcome_unit else None,
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
