"""Injection spans, credit windows and eligibility (MemUse 3.3, A.1.4, A.1.5).

Pure functions over an `EpisodeAnalysis` (memuse_core.context.analysis). `group_spans` forms the
injection spans, `credit_windows` assigns each entry of a span its window, and `span_status`
decides which spans the judge receives.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from .context.analysis import DInfo, EpisodeAnalysis


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
        eps = di.exposures[pos].exposed_text
        if not any(
            an.copy_visible(s, pos, call, eps, e.display_key)
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


def _selected_read(an: EpisodeAnalysis, di: DInfo) -> bool:
    """A separately recorded full read reached through an explicit selection (A.1.5): an
    agent-routed delivery that is not a preview, whose issuing step's action names, as a whole
    token, an identifier (item id or displayed key) of each entry that an earlier delivery
    exposed in its placement text."""
    if di.d.route != "agent" or "preview" in di.d.form or di.step is None or di.step < 2:
        return False
    action = an.rec.steps[di.step - 2].action_text()
    shown = [rp.text or "" for d0 in an.infos if d0.order < di.order for rp in d0.placements]
    for e in di.d.entries:
        keys = [k for k in (e.item_id, e.display_key) if k]
        if not any(_token_in(k, action) and any(_token_in(k, t) for t in shown) for k in keys):
            return False
    return True


def _token_in(key: str, text: str) -> bool:
    return re.search(rf"(?<![\w-]){re.escape(key)}(?![\w-])", text) is not None


def resident_entries(an: EpisodeAnalysis, span: SpanBuild) -> list[bool]:
    """Resident copies (A.1.5): an entry of a new span is resident when a proven copy of the same
    item, delivered earlier (same input included) and still visible in its consuming input,
    already shows all of its exposed text and its displayed key. The earlier owner keeps the
    credit and the resident entry gets an empty window. Not for a selected full read."""
    di = span.first
    out = [False] * len(di.d.entries)
    if di.call is None or di.step is None or _selected_read(an, di):
        return out
    by_item = an.by_item()
    for pos, e in enumerate(di.d.entries):
        x = di.exposures[pos]
        if x.exposed_text is None:
            continue
        key = di.ikeys[pos]
        for d0 in reversed(by_item.get(key, [])):  # latest copies first
            if d0.order >= di.order or d0.step is None:
                continue
            p0 = d0.ikeys.index(key)
            x0 = d0.exposures[p0]
            if x0.exposed_text is None or not an.contains(x0.exposed_text, x.exposed_text):
                continue
            if an.copy_visible(d0, p0, di.call, x.exposed_text, e.display_key):
                out[pos] = True
                break
    return out


def credit_windows(an: EpisodeAnalysis, spans: list[SpanBuild]) -> None:
    """Per-entry credit windows (A.1.5), stored on each span (None = empty window).

    The window of entry m of span S starts at t_first(S). Its boundary is the earliest later
    span S' (first step t' >= t_last(S)) that delivers the same item with verified text
    containing ε_S(m), or any later delivery of the item when either exposure is unknown; it
    ends at t'-1 when t' > t_last(S) and at t' when t' == t_last(S), else at the final step.
    Resident copies get an empty window and set no boundary, so the earlier owner keeps the
    credit. A later copy with different or narrower text sets no boundary (windows overlap); a
    full read containing a preview's text ends the preview window just before it. A same-step
    later copy whose exposure is unknown starts after the shared step. Only entries of the same
    item interact, and everything is per episode (ownership resets at episode boundaries).
    """
    T = an.rec.T
    live = [s for s in spans if s.nonempty and s.attributed]
    for s in live:
        s.resident = resident_entries(an, s)
    by_item: dict[tuple, list[tuple[SpanBuild, int]]] = {}
    for s in live:
        for pos, key in enumerate(s.first.ikeys):
            by_item.setdefault(key, []).append((s, pos))
    for s in spans:
        s.windows = [None] * len(s.first.d.entries)
    for s in live:
        t_first, t_last = s.first_step, s.last_step
        assert t_first is not None and t_last is not None
        di = s.first
        for pos in range(len(di.d.entries)):
            if s.resident[pos]:
                continue
            eps = di.exposures[pos].exposed_text
            start = t_first
            if di.exposures[pos].exposure == "unknown" and any(
                o is not s and o.first.order < di.order and o.last_step == t_first
                for o, _ in by_item.get(di.ikeys[pos], [])
            ):
                start = t_first + 1  # same-step copy that adds no verified text
            end = T
            for o, opos in by_item.get(di.ikeys[pos], []):
                if o is s or o.first.order <= di.order or o.resident[opos]:
                    continue
                t2 = o.first_step
                assert t2 is not None
                if t2 < t_last:
                    continue  # spans starting before t_last are not boundaries
                ox = o.first.exposures[opos]
                if eps is None or ox.exposed_text is None or an.contains(ox.exposed_text, eps):
                    end = t2 - 1 if t2 > t_last else t2
                    break
            s.windows[pos] = (start, end) if start <= end else None


def span_status(span: SpanBuild, valid: bool, failed: list[str]) -> tuple[str, str | None]:
    """Eligibility (3.3): `empty` (no entries), `unassessable` (no attributed consuming step),
    `error` (the episode failed a recording check; reason = failed rules), `auto_neutral` (every
    entry has an empty window), else `eligible`."""
    if not span.nonempty:
        return "empty", "delivery has no entries"
    if not span.attributed:
        return "unassessable", f"no attributed consuming step ({span.first.att.problem})"
    if not valid:
        return "error", "recording check failed: " + ", ".join(failed)
    if all(w is None for w in span.windows):
        return "auto_neutral", "all credit windows are empty"
    return "eligible", None
