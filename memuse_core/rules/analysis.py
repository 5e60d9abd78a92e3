"""Per-episode facts shared by the span, window and prior-context rules (MemUse 3.3, A.1).

`analyze_episode` runs once per episode: consuming-step attribution (A.1.1), placement proofs and
recording checks (A.1.1, A.1.3), exposure per entry (A.1.2), entry/placement equality keys
(A.1.4, `rules.keys`), and persistent message identities (`rules.identity`) that say whether a
placement of an earlier call is still in a later call's input (visibility, A.1.4, A.2.1).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..episode import CallView, EpisodeRecord
from ..events import MemoryDelivery, text_digest
from ..vocab import MIN_CLIPPED_PREFIX
from .attribution import Attribution, attribute_delivery, processing_order
from .checks import ResolvedPlacement, as_checks, call_level_checks, input_checks, resolve_placement
from .exposure import UNKNOWN, ExposureMatch, PlacementText, contains_exposed, match_exposure
from .identity import longest_prefix_in, message_ids
from .keys import entry_key, item_key, placement_key
from .models import RecordingCheck

TOOL_SLOTS = ("tool", "tool_result", "tool_output", "observation")


@dataclass
class DInfo:
    """Everything the span rules need about one delivery."""

    idx: int
    """Index in `rec.deliveries` (recorded position)."""
    d: MemoryDelivery
    att: Attribution
    placements: list[ResolvedPlacement]
    exposures: list[ExposureMatch]
    ekeys: tuple
    ikeys: list[tuple]
    pkeys: tuple
    chars: int
    order: int = 0
    """Position in processing order."""
    redacted_without_size: bool = False
    cid: str | None = None
    """Consuming call id (cached; hot in visibility checks)."""
    verified: bool = False
    """Every placement proof resolved to one unique interval (set by analyze_episode)."""

    @property
    def id(self) -> str:
        return self.d.delivery_id

    @property
    def step(self) -> int | None:
        return self.att.step

    @property
    def call(self) -> CallView | None:
        return self.att.call

    @property
    def signature(self) -> tuple:
        """Ordered entries, placements and exposure (A.1.4 equality), plus attribution status."""
        return (self.ekeys, self.pkeys, tuple(x.exposure for x in self.exposures), self.att.attributed)


@dataclass
class EpisodeAnalysis:
    rec: EpisodeRecord
    infos: list[DInfo]
    """In processing order."""
    checks: list[RecordingCheck]
    gap_calls: set[str]
    msg_ids: dict[str, list[tuple[int, int]]] = field(default_factory=dict)
    """Persistent identity of every message of every agent call's input."""
    _id_index: dict[str, dict[tuple[int, int], int]] = field(default_factory=dict)

    _texts: dict[int, str] = field(default_factory=dict)
    _alive: dict[tuple[int, str], list[tuple[int, str]]] = field(default_factory=dict)
    _parts: dict[tuple[int, int, str], str | None] = field(default_factory=dict)
    _contains: dict[tuple, bool] = field(default_factory=dict)

    @property
    def valid(self) -> bool:
        return all(c.ok for c in self.checks)

    def text(self, msg) -> str:  # noqa: ANN001 - events.Message
        """A message's visible text, computed once per message object."""
        t = self._texts.get(id(msg))
        if t is None:
            t = self._texts[id(msg)] = msg.text()
        return t

    def failed_rules(self) -> list[str]:
        return sorted({c.rule for c in self.checks if not c.ok})

    def contains(self, text: str | None, exposed: str | None, tool_result: bool = False) -> bool:
        """`contains_exposed`, memoized per episode (the same copies are checked repeatedly)."""
        key = (text, exposed, tool_result)
        r = self._contains.get(key)
        if r is None:
            r = self._contains[key] = contains_exposed(text, exposed, tool_result=tool_result)
        return r

    def by_item(self) -> dict[tuple, list[DInfo]]:
        """Deliveries of each item, in processing order."""
        idx = getattr(self, "_by_item", None)
        if idx is None:
            idx = {}
            for di in self.infos:
                for k in dict.fromkeys(di.ikeys):
                    idx.setdefault(k, []).append(di)
            self._by_item = idx
        return idx

    def response_ids(self) -> list[tuple[int, int] | None]:
        """Per step 1..T-1 (index t-1): the identity of its response message in later inputs
        (the first message new in the next agent input), None when it never reached one."""
        ids = getattr(self, "_rids", None)
        if ids is None:
            ids = []
            steps = self.rec.steps
            for t in range(1, len(steps)):
                nxt = steps[t].call
                mids = self.msg_ids.get(nxt.call_id, [])
                j = next((i for i, x in enumerate(mids) if x == (nxt.seq, i)), None)
                ok = j is not None and nxt.messages[j].role == "assistant"
                ids.append(mids[j] if ok else None)  # type: ignore[index]
            self._rids = ids
        return ids

    def index_in(self, call_id: str, ident: tuple[int, int]) -> int | None:
        idx = self._id_index.get(call_id)
        if idx is None:
            idx = {m: i for i, m in enumerate(self.msg_ids.get(call_id, []))}
            self._id_index[call_id] = idx
        return idx.get(ident)

    def visible_part(self, src: DInfo, rp: ResolvedPlacement, call: CallView) -> str | None:
        """What of a proven placement of an earlier delivery is still in `call`'s input (A.1.4,
        A.2.1): None when its host message no longer persists (same identity after replaying
        removals) or holds none of it; the whole placement text when the host still holds it;
        and, when the host now holds only an opening part of it (a block cut at a length limit),
        that longest prefix of at least `MIN_CLIPPED_PREFIX` characters. A.2.1: "Visibility is
        checked against surviving proven placements, retaining only the exposed prefix when a
        copy is partly visible." """
        if not rp.verified or src.cid is None or rp.host is None or rp.text is None:
            return None
        key = (src.order, rp.pos, call.call_id)
        if key in self._parts:
            return self._parts[key]
        out: str | None = None
        ids = self.msg_ids.get(src.cid)
        j = self.index_in(call.call_id, ids[rp.host]) if ids is not None and rp.host < len(ids) else None
        if j is not None:
            host = self.text(call.messages[j])
            out = rp.text if rp.text in host else longest_prefix_in(rp.text, host, MIN_CLIPPED_PREFIX)
        self._parts[key] = out
        return out

    def placement_survives(self, src: DInfo, rp: ResolvedPlacement, call: CallView) -> bool:
        """Whether a proven placement of an earlier delivery is still wholly in `call`'s input
        (A.1.4): its host message persists and still holds the whole placement text."""
        part = self.visible_part(src, rp, call)
        return part is not None and part == rp.text

    def copy_visible(
        self, src: DInfo, pos: int, call: CallView, exposed: str | None, display_key: str | None
    ) -> bool:
        """An earlier copy of entry `pos` of `src` is visible in `call`'s input (A.1.4): the
        exposed text matches in full within a surviving proven placement of that copy (of a
        partly visible placement, only its surviving prefix counts, A.2.1), and any displayed key
        is still visible in the copy's surviving placement text."""
        cid = call.call_id
        if exposed is None or cid in self.gap_calls:
            return False
        key = (src.order, cid)
        alive = self._alive.get(key)
        if alive is None:
            alive = self._alive[key] = [
                (rp.pos, part)
                for rp in src.placements
                if (part := self.visible_part(src, rp, call)) is not None
            ]
        if not alive:
            return False
        x = src.exposures[pos] if pos < len(src.exposures) else None
        whole = {p for p, part in alive if part == src.placements[p].text}
        if (
            x is not None
            and x.exposure != "unknown"
            and x.exposed_text == exposed
            and x.placement_pos in whole
        ):
            pass  # the copy's own matched placement survives whole: its exposed text is in it
        elif not any(self.contains(part, exposed, src.d.route == "agent") for _, part in alive):
            return False  # a partly visible copy counts with its surviving prefix only (A.2.1)
        if display_key and not any(display_key in part for _, part in alive):
            return False
        return True


class _LazyTexts:
    """Message texts of one input, computed on first access (most proofs name one message)."""

    def __init__(self, msgs: list, text_of) -> None:  # noqa: ANN001
        self.msgs, self.text_of = msgs, text_of

    def __len__(self) -> int:
        return len(self.msgs)

    def __getitem__(self, i: int) -> str:
        return self.text_of(self.msgs[i])

    def __iter__(self):  # noqa: ANN204
        return (self.text_of(m) for m in self.msgs)


def analyze_episode(rec: EpisodeRecord) -> EpisodeAnalysis:
    """Attribution, proofs, checks, exposures and message identities of one episode (A.1)."""
    findings: list[tuple[str, str]] = []
    gap_findings, gap_calls = input_checks(rec)
    findings += gap_findings
    atts = {d.delivery_id: attribute_delivery(rec, d) for d in rec.deliveries}
    texts_cache: dict[str, _LazyTexts] = {}
    mtexts: dict[int, str] = {}

    digests: dict[str, str] = {}

    def digest(text: str) -> str:
        d = digests.get(text)
        if d is None:
            d = digests[text] = text_digest(text)
        return d

    def mtext(msg) -> str:  # noqa: ANN001
        t = mtexts.get(id(msg))
        if t is None:
            t = mtexts[id(msg)] = msg.text()
        return t

    by_call: dict[str, list[tuple[str, list[ResolvedPlacement]]]] = {}
    memo: dict[tuple, ExposureMatch] = {}
    infos: list[DInfo] = []
    any_nonempty_attr = False
    for i, d in enumerate(rec.deliveries):
        a = atts[d.delivery_id]
        if a.problem == "consuming_call_missing":
            findings.append(
                (
                    "consuming_call_missing",
                    f"{d.delivery_id}: consuming call {d.consuming_call_id!r} is not recorded in the episode",
                )
            )
        rps: list[ResolvedPlacement] = []
        if a.call is not None and a.attributed:
            cid = a.call.call_id
            texts = texts_cache.get(cid)
            if texts is None:
                texts = texts_cache[cid] = _LazyTexts(a.call.messages, mtext)  # type: ignore[assignment]
            rps = [resolve_placement(p, k, a.call, texts, digest) for k, p in enumerate(d.placements)]
            by_call.setdefault(cid, []).append((d.delivery_id, rps))
            if d.entries:
                any_nonempty_attr = True
                if not d.placements:
                    findings.append(
                        ("placement_missing", f"{d.delivery_id}: nonempty delivery with no placement")
                    )
                if cid in gap_calls:
                    findings.append(("input_gap", f"{d.delivery_id}: consuming input of {cid} has gaps"))
        else:
            rps = [
                ResolvedPlacement(pos=k, slot=p.slot, text=p.text, rule="unbound")
                for k, p in enumerate(d.placements)
            ]
        ptexts = [
            PlacementText(
                k,
                rp.text if rp.text is not None else d.placements[k].text,
                tool_result=(d.route == "agent" or d.placements[k].slot in TOOL_SLOTS),
            )
            for k, rp in enumerate(rps)
        ]
        exps = []
        for e in d.entries:
            key = (e.value, tuple((p.text, p.tool_result) for p in ptexts))
            m = memo.get(key)
            if m is None:
                m = memo[key] = match_exposure(e.value, ptexts) if e.value else UNKNOWN
            exps.append(m)
        chars = 0
        redacted = False
        for p in d.placements:
            if p.text is not None:
                chars += len(p.text)
            elif p.size is not None:
                chars += p.size
            else:
                redacted = True
        infos.append(
            DInfo(
                idx=i,
                d=d,
                att=a,
                placements=rps,
                exposures=exps,
                cid=a.call.call_id if a.call else None,
                ekeys=tuple(entry_key(e) for e in d.entries),
                ikeys=[item_key(e) for e in d.entries],
                pkeys=tuple(placement_key(p) for p in d.placements),
                chars=chars,
                redacted_without_size=redacted,
            )
        )
    for resolved in by_call.values():
        findings += call_level_checks(resolved)
        for did, rps in resolved:
            for rp in rps:
                if rp.rule is not None and rp.rule not in ("proof_duplicated", "shared_host_unresolved"):
                    findings.append((rp.rule, f"{did}: {rp.detail}"))
    if any_nonempty_attr:
        if not (rec.start.task or "").strip():
            findings.append(("task_missing", "episode has no task text"))
        if rec.end is None:
            findings.append(("episode_boundary_unresolved", "episode has no recorded end"))
    order = processing_order(rec, atts)
    pos = {i: k for k, i in enumerate(order)}
    infos.sort(key=lambda x: pos[x.idx])
    for k, di in enumerate(infos):
        di.order = k
    an = EpisodeAnalysis(
        rec=rec, infos=infos, checks=as_checks(rec.episode_id, findings), gap_calls=gap_calls, _texts=mtexts
    )
    for di in infos:
        di.verified = bool(di.placements) and all(rp.verified for rp in di.placements)
    an.msg_ids = message_ids(rec)
    return an
