"""Values produced by the evaluation-context build (MemUse 3.3, A.1) and consumed by the judge,
the aggregates and the app. This module is the contract between those areas: change it only
additively.
"""

from __future__ import annotations

from pydantic import BaseModel, Field

from ..events import Placement
from ..vocab import Exposure, SpanStatus, Visibility, estimate_tokens


class RecordingCheck(BaseModel):
    """One recording-validity finding for an episode (A.1.3)."""

    episode_id: str
    """Episode checked."""
    ok: bool
    """False when the rule failed."""
    rule: str
    """Rule name, e.g. `proof_missing`, `proof_duplicated`, `text_not_unique`, `input_gap`."""
    detail: str = ""
    """Which delivery/placement/message failed and why."""


class SpanEntry(BaseModel):
    """One entry of an injection span with its exposure and credit window (A.1.2, A.1.5)."""

    pos: int
    """Position in the span's ordered entries (0-based)."""
    namespace: str
    """Namespace of the item."""
    item_id: str | None
    """Item identity (after the display-key fallback of A.1.4)."""
    version: str | None = None
    """Delivered version."""
    digest: str | None = None
    """Digest of the delivered value."""
    display_key: str | None = None
    """Display key, only when exposed as a standalone identifier."""
    value: str | None = None
    """The full recorded value (annotation; the judge sees `exposed_text` instead)."""
    exposure: Exposure
    """full / clipped / unknown."""
    exposed_text: str | None = None
    """ε_S(m): the matched value or prefix; None when exposure is unknown."""
    window: tuple[int, int] | None = None
    """Credit window [start, end] in steps, inclusive; None for an empty window."""
    resident: bool = False
    """True when the entry is a resident copy of a still-visible earlier copy (A.1.5)."""
    stage: str | None = None
    """Exposure matching stage (A.1.2)."""


class EarlierCopy(BaseModel):
    """An earlier delivery of a target entry's item, as the judge's package lists it (A.2.1)."""

    entry_pos: int
    """Which target entry this is a copy of."""
    delivery_id: str
    """The earlier delivery."""
    step: int | None
    """Its consuming step."""
    visibility: Visibility
    """Whether that copy is still visible in the span's first consuming input."""
    contains_target: bool | None = None
    """Whether its verified text contains all of the target's exposed text (None: unknown)."""


class PriorSource(BaseModel):
    """One visible source of the prior context B_S, with the target delivery cut out (A.1.3)."""

    pos: int
    """1-based source number, cited as [P<pos>]."""
    message_index: int
    """Index of the message in the first consuming input."""
    role: str
    """Message role."""
    text: str
    """Visible text of the message without the target placements."""
    cut: list[tuple[int, int]] = Field(default_factory=list)
    """Intervals [start, end) of the original message text removed as target placements."""
    memory_only: bool = False
    """True when the whole message was the target delivery (kept as a position marker)."""


class EntryExposure(BaseModel):
    """Exposure of one entry of one delivery (A.1.2)."""

    pos: int
    """Entry position in the delivery."""
    exposure: Exposure
    """full / clipped / unknown."""
    exposed_text: str | None = None
    """ε: matched value or prefix; None when unknown."""
    placement_pos: int | None = None
    """Placement whose text gave the match."""
    stage: str | None = None
    """Matching stage: verbatim, json, numbered, xml, normalized or prefix."""


class DeliveryContext(BaseModel):
    """Per-delivery results of the build."""

    delivery_id: str
    """Delivery."""
    episode_id: str
    """Episode."""
    consuming_step: int | None = None
    """Attributed consuming step (None: unbound or incomplete call)."""
    attributed: bool = False
    """True when the consuming call completed an agent step."""
    verified: bool = False
    """True when every placement proof resolved to one unique interval."""
    span_id: str | None = None
    """The span it belongs to."""
    restatement: bool = False
    """True for later deliveries within a span."""
    chars: int = 0
    """Placement characters (delivered volume, A.4.4)."""
    problem: str | None = None
    """Why it is not verified/attributed, when it is not."""
    entries: list[EntryExposure] = Field(default_factory=list)
    """Exposure of each entry (A.1.2)."""


class SpanContext(BaseModel):
    """An injection span with everything the judge needs to assess it (MemUse 3.3, A.1.4)."""

    span_id: str
    """Deterministic id `<episode_id>/<first delivery_id>`."""
    episode_id: str
    """Episode."""
    status: SpanStatus
    """eligible | empty | unassessable | error | auto_neutral."""
    reason: str | None = None
    """Why the span is not eligible (error rule, empty search...)."""
    first_step: int | None = None
    """t_S^first: first consuming step."""
    last_step: int | None = None
    """t_S^last: last consuming step."""
    delivery_ids: list[str] = Field(default_factory=list)
    """Deliveries of the span in order; the first is the target, later ones are restatements."""
    restatements: int = 0
    """Number of later deliveries in the span."""
    chars: int = 0
    """C_S: placement characters over all its deliveries (A.4.4)."""
    form: str | None = None
    """Delivered form of the first delivery."""
    route: str | None = None
    """host / agent."""
    placements: list[Placement] = Field(default_factory=list)
    """Placements of the first delivery, verbatim."""
    entries: list[SpanEntry] = Field(default_factory=list)
    """Ordered entries with exposure and windows."""
    prior_sources: list[PriorSource] = Field(default_factory=list)
    """B_S: visible sources of the first consuming input with the target cut out."""
    earlier_copies: list[EarlierCopy] = Field(default_factory=list)
    """Earlier deliveries of the target items."""
    removed_steps: list[int] = Field(default_factory=list)
    """Steps before t_first whose messages were removed or rewritten out of the input: not in
    B_S, still readable as evidence (A.1.3)."""
    task: str | None = None
    """The episode's task text q."""

    @property
    def est_tokens(self) -> int:
        """T̂_S = floor(C_S / 4) (A.4.4)."""
        return estimate_tokens(self.chars)


class EpisodeContext(BaseModel):
    """The evaluation context of one episode."""

    episode_id: str
    """Episode."""
    checks: list[RecordingCheck] = Field(default_factory=list)
    """Recording-check findings (failures only, or one ok row)."""
    deliveries: list[DeliveryContext] = Field(default_factory=list)
    """Per-delivery results, in processing order."""
    spans: list[SpanContext] = Field(default_factory=list)
    """Spans in order of first consuming step, then recorded position."""

    @property
    def valid(self) -> bool:
        """True when every recording check passed."""
        return all(c.ok for c in self.checks)
