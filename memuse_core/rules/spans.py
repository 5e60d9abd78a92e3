"""Injection spans (MemUse 3.3 "Injection spans", A.1.4 "Injection Span Construction").

Pure functions over an `EpisodeAnalysis` (`rules.analysis`): `group_spans` forms the injection
spans of one episode. Their credit windows are `rules.windows`, their eligibility
`rules.eligibility`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .analysis import DInfo, EpisodeAnalysis


@dataclass
class SpanBuild:
    """An injection span under construction."""

    deliveries: list[DInfo] = field(default_factory=list)
    restricted: bool = False
    """Formed under the restricted rule (empty or unattributed deliveries)."""
    windows: list[tuple[int, int] | None] = field(default_factory=list)
    resident: list[bool] = field(default_factory=list)
    """Per entry: a resident copy (A.1.5) that receives an empty window."""

    @property
    def first(self) -> DInfo:
        return self.deliveries[0]

    @property
    def span_id(self) -> str:
        return f"{self.first.d.episode_id}/{self.first.id}"

    @property
    def first_step(self) -> int | None:
        return self.first.step

    @property
    def last_step(self) -> int | None:
        steps = [d.step for d in self.deliveries if d.step is not None]
        return max(steps) if steps else None

    @property
    def nonempty(self) -> bool:
        return bool(self.first.d.entries)

    @property
    def attributed(self) -> bool:
        return self.first.step is not None

    @property
    def chars(self) -> int:
        """C_S: placement characters over every delivery, restatements included (A.4.4)."""
        return sum(d.chars for d in self.deliveries)


def earlier_copy_visible(an: EpisodeAnalysis, span: SpanBuild, di: DInfo) -> bool:
    """Visibility of an earlier copy (A.1.4): for every entry of `di`, some delivery of `span`
    consumed at an earlier call has a proven placement still in `di`'s consuming input in which
    the entry's exposed text matches in full and its displayed key remains visible. Unknown
    exposure cannot establish visibility; the consuming input must be observed and gap-free."""
    call = di.call
    if call is None or call.call_id in an.gap_calls:
        return False
    if any(x.exposure == "unknown" for x in di.exposures):
        return False
    cid = call.call_id
    for pos, e in enumerate(di.d.entries):
        exposed = di.exposures[pos].exposed_text
        if not any(
            an.copy_visible(s, pos, call, exposed, e.display_key)
            for s in reversed(span.deliveries)
            if s.cid is not None and s.cid != cid
        ):
            return False
    return True


def group_spans(an: EpisodeAnalysis) -> list[SpanBuild]:
    """Injection spans of one episode (A.1.4).

    Deliveries are processed by consuming step, then recorded position. A nonempty attributed
    delivery joins the current span of its items when its ordered entries, placements and
    exposure equal the span's and an earlier copy is still visible; otherwise it starts a new
    span, which becomes the current span of every item it delivers (so a change ends the span of
    every item in the new delivery, and returning to earlier content or re-entry after lost
    visibility starts a new span). Spans continue across unrelated deliveries. Empty deliveries
    and deliveries without an attributed step follow the restricted rule: they join only the
    span of the immediately preceding delivery, when entries, placements, exposure and
    attribution status all agree; they do not change the items' current spans.
    """
    spans: list[SpanBuild] = []
    current: dict[tuple, SpanBuild] = {}
    prev: SpanBuild | None = None
    for di in an.infos:
        restricted = not di.d.entries or not di.att.attributed
        target: SpanBuild | None = None
        if restricted:
            if prev is not None and prev.restricted and prev.first.signature == di.signature:
                target = prev
        else:
            cand = current.get(di.ikeys[0])
            if (
                cand is not None
                and all(current.get(k) is cand for k in di.ikeys)
                and cand.first.signature == di.signature
                and earlier_copy_visible(an, cand, di)
            ):
                target = cand
        if target is None:
            target = SpanBuild(restricted=restricted)
            spans.append(target)
            if not restricted:
                for k in di.ikeys:
                    current[k] = target
        target.deliveries.append(di)
        prev = target
    return spans
