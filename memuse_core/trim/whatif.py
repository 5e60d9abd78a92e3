"""What MemTrim would have removed from recorded deliveries (MemTrim 3.3 applied to MemUse data).

For a delivery, each delivered entry is a retrieved memory (its recorded value, with no stored
answer unless the value carries an `answer:` line) and the agent's prior context is the query:
the consuming call's input with this delivery's placements cut out (MemUse A.1.3; other
deliveries stay). MemTrim then splits every entry's evidence into units shared with the prior
context, units the prior context contradicts, and memory-only units, and builds the trimmed text.

Where the prior context comes from (reported per delivery as `prior_from`):
- `span_context`: the verified prior sources B_S of the built evaluation context
  (the prior-source rows of the built evaluation context, read in batches by
  `store.trim.span_prior_texts`), for the first delivery of each span;
- `episode_record`: otherwise (restatements, deliveries outside spans, stores not built yet),
  computed from the EpisodeRecord: the consuming call's messages minus the placement texts
  (the proof's offset when recorded, else the first occurrence in the proof's message).

Each message of the prior context is parsed once per episode (messages repeat across calls).
`memuse trim` (`whatif_batch`) reads deliveries, entries, placements and consuming inputs as plain
rows (`store.trim.delivery_rows`) rather than rebuilding whole episodes; `inputs_from_rows`
assembles them.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Hashable
from dataclasses import dataclass, field
from typing import Any

from ..episode import EpisodeRecord
from ..vocab import TrimClass
from .core import Decision, MemTrim, unit_dict
from .decide import QueryEvidence
from .outcome import fact_value
from .parse_det import DeterministicParser
from .units import EvidenceUnit, Key, ParsedInteraction, content_words, jaccard, task_signature
from .whatif_inputs import (
    DeliveryInput,
    cut_placements,
    inputs_from_record,
    inputs_from_rows,
)


@dataclass
class EntryWhatIf:
    """MemTrim's decision for one delivered entry."""

    pos: int
    namespace: str
    item_id: str | None
    text: str
    decision: Decision
    lines: list[str]
    """The trimmed lines this entry contributes."""
    jaccard: float
    """Content-word Jaccard between the prior context and the entry (stored answer excluded; RQ2)."""
    same_as: str | None = None
    """An earlier delivery of the episode with the identical decision (a restatement whose
    evidence split did not change); its stored row carries the decision JSON."""

    @property
    def chars_before(self) -> int:
        return len(self.text)

    @property
    def chars_after(self) -> int:
        return len("\n".join(self.lines))

    @property
    def klass(self) -> TrimClass:
        """`redundant` (every unit shared), `partial` (some shared or conflicting), `novel` (none),
        `empty` (no units): the MemTrim counterpart of the judge's novelty label."""
        d = self.decision
        n = len(d.shared) + len(d.conflicting) + len(d.memory_only)
        if n == 0:
            return "empty"
        if len(d.shared) == n:
            return "redundant"
        if d.shared or d.conflicting:
            return "partial"
        return "novel"


@dataclass
class DeliveryWhatIf:
    """The what-if of one delivery: prior context, per-entry decisions and the trimmed text."""

    delivery_id: str
    episode_id: str
    prior_from: str
    prior_texts: list[str]
    query_units: list[EvidenceUnit]
    entries: list[EntryWhatIf] = field(default_factory=list)
    context: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {
            "delivery_id": self.delivery_id,
            "episode_id": self.episode_id,
            "prior_from": self.prior_from,
            "context": self.context,
            "prior_texts": list(self.prior_texts),
            "query_units": [unit_dict(u) for u in self.query_units],
            "entries": [
                {
                    "pos": e.pos,
                    "item_id": e.item_id,
                    "class": e.klass,
                    "jaccard": e.jaccard,
                    "chars_before": e.chars_before,
                    "chars_after": e.chars_after,
                    "lines": e.lines,
                    **e.decision.to_dict(),
                }
                for e in self.entries
            ],
        }


class EpisodeWhatIf:
    """Per-episode state: one MemTrim index over the episode's delivered entries and a cache of
    parsed prior-context messages (each message text is parsed once; a delivery's query evidence
    is the union of its messages' cached (key, value) sets, computed with C-level set unions)."""

    def __init__(
        self,
        task: str | None = None,
        parser: DeterministicParser | None = None,
        message_cache: dict[str, Any] | None = None,
    ) -> None:
        """`message_cache` may be shared across episodes (parsing is pure; system prompts and
        tool descriptions repeat in every episode of a configuration)."""
        self.trimmer = MemTrim(parser=parser or DeterministicParser())
        self._msg: dict[str, tuple[list[EvidenceUnit], frozenset[Any], frozenset[Key], frozenset[str]]] = (
            message_cache if message_cache is not None else {}
        )
        self._recent: deque[tuple[list[str], frozenset[Any], frozenset[Key], frozenset[str]]] = deque(
            maxlen=4
        )
        """Evidence unions of the last few prior contexts (several deliveries share each call)."""
        self.task = task_signature(task) if task else None
        self._results: dict[Any, tuple[Any, str]] = {}
        self._words: dict[Hashable, frozenset[str]] = {}

    def _message(
        self, text: str
    ) -> tuple[list[EvidenceUnit], frozenset[Any], frozenset[Key], frozenset[str]]:
        hit = self._msg.get(text)
        if hit is None:
            units = self.trimmer.parser.parse(text, None).units
            hit = (
                units,
                frozenset((u.key, u.value) for u in units),
                frozenset(u.key for u in units),
                frozenset(content_words(text)),
            )
            self._msg[text] = hit
        return hit

    def _evidence(self, texts: list[str]) -> tuple[frozenset[Any], frozenset[Key], frozenset[str]]:
        """Union of the messages' (key, value) pairs, keys and content words; extended from the
        union of a recent delivery when this prior context only appends messages to it."""
        last = next((r for r in self._recent if len(texts) >= len(r[0]) and texts[: len(r[0])] == r[0]), None)
        if last is not None:
            parts = [self._message(t) for t in texts[len(last[0]) :]]
            kvs, keys, words = last[1], last[2], last[3]
            if parts:
                kvs = kvs.union(*(p[1] for p in parts))
                keys = keys.union(*(p[2] for p in parts))
                words = words.union(*(p[3] for p in parts))
        else:
            parts = [self._message(t) for t in texts]
            kvs = frozenset().union(*(p[1] for p in parts))
            keys = frozenset().union(*(p[2] for p in parts))
            words = frozenset().union(*(p[3] for p in parts))
        self._recent.appendleft((list(texts), kvs, keys, words))
        return kvs, keys, words

    def _answer_key_state(self, mid: Hashable, qe: QueryEvidence) -> int:
        """Whether the prior context states the fact a stored answer would be filed under (the
        decision depends on it beyond the unit split): 0 no answer key, 1 absent, 2 another
        value, 3 the same key (decisions are reused only when this matches too)."""
        fk = self.trimmer.memories[mid].parsed.fact_key
        if fk is None:
            return 0
        if fk not in qe.keys:
            return 1
        return 3 if any(k == fk for k, _ in qe.kvs) and self._same_value(mid, qe) else 2

    def _same_value(self, mid: Hashable, qe: QueryEvidence) -> bool:
        m = self.trimmer.memories[mid]
        fk = m.parsed.fact_key
        return fk is not None and m.answer is not None and (fk, fact_value(fk, m.answer)) in qe.kvs

    def delivery(
        self, d: DeliveryInput, prior_texts: list[str], prior_from: str, *, keep_query: bool = False
    ) -> DeliveryWhatIf:
        """Trim one delivery's entries against its prior context (3.3)."""
        kvs, keys, words = self._evidence(prior_texts)
        units: list[EvidenceUnit] = (
            [u for t in prior_texts for u in self._message(t)[0]] if keep_query else []
        )
        q = ParsedInteraction(units=units, task=self.task)
        qe = QueryEvidence(kvs, keys)
        ids: list[Hashable] = []
        by_pos: list[tuple[int, Any, str, Hashable | None]] = []
        for pos, e in enumerate(d.entries):
            text = e.value or ""
            if not text.strip():
                by_pos.append((pos, e, text, None))
                continue
            mid = (e.namespace, e.item_id, e.digest or text)
            known = self.trimmer.memories.get(mid)
            if known is None or known.text != text:
                self.trimmer.write(mid, text, None)
            ids.append(mid)
            by_pos.append((pos, e, text, mid))
        res = None
        reused_from: str | None = None
        if ids:
            splits = self.trimmer.split_from_memories(qe, ids)
            sig = (
                tuple(ids),
                tuple((tuple(s), tuple(c), tuple(u)) for s, c, u in (splits[m] for m in ids)),
                tuple(self._answer_key_state(m, qe) for m in ids),
            )
            hit = self._results.get(sig)
            if hit is None:
                res = self.trimmer.read_parsed(q, ids, evidence=qe, splits=splits)
                self._results[sig] = (res, d.delivery_id)
            else:  # a restatement whose evidence split did not change: same decisions
                res, reused_from = hit
        out = DeliveryWhatIf(
            delivery_id=d.delivery_id,
            episode_id=d.episode_id,
            prior_from=prior_from,
            prior_texts=prior_texts if keep_query else [],
            query_units=units,
            context=res.context if res else "",
        )
        for pos, e, text, emid in by_pos:
            ewords: set[str] | frozenset[str]
            if emid is None or res is None:
                dec = Decision(memory_id=f"{d.delivery_id}#{pos}", reason="no recorded value")
                ewords = set()
            else:
                dec = res.decisions[emid]
                cached = self._words.get(emid)
                if cached is None:
                    cached = self._words[emid] = frozenset(content_words(text))
                ewords = cached
            out.entries.append(
                EntryWhatIf(
                    pos=pos,
                    namespace=e.namespace,
                    item_id=e.item_id,
                    text=text,
                    decision=dec,
                    lines=dec.lines,
                    jaccard=jaccard(ewords, words),
                    same_as=reused_from if emid is not None else None,
                )
            )
        return out


def episode_whatif(
    inputs: list[DeliveryInput],
    task: str | None = None,
    span_prior: dict[str, list[str]] | None = None,
    parser: DeterministicParser | None = None,
    message_cache: dict[str, Any] | None = None,
) -> list[DeliveryWhatIf]:
    """What-if for every consumed delivery of one episode. `span_prior` maps a span's first
    delivery id to the texts of its verified prior sources (used when given)."""
    ew = EpisodeWhatIf(task, parser, message_cache)
    out = []
    for d in inputs:
        if span_prior and d.delivery_id in span_prior:
            texts, src = span_prior[d.delivery_id], "span_context"
        else:
            cut = cut_placements(d)
            if cut is None:
                continue  # never consumed: there is no prior context to compare with
            texts, src = cut, "episode_record"
        out.append(ew.delivery(d, texts, src))
    return out


def record_whatif(rec: EpisodeRecord, span_prior: dict[str, list[str]] | None = None) -> list[DeliveryWhatIf]:
    """`episode_whatif` for an EpisodeRecord (hand-made episodes, tests)."""
    return episode_whatif(inputs_from_record(rec), rec.start.task, span_prior)


def delivery_whatif(con: Any, delivery_id: str) -> DeliveryWhatIf:
    """The what-if of one stored delivery, for the app: entries with their shared / conflicting /
    memory-only units, outcome and reason, the trimmed text, and the prior context it was compared
    with (`prior_texts`, `query_units`). Raises KeyError when the delivery is unknown."""
    from ..store.trim import delivery_episode, delivery_rows, span_prior_texts

    eid = delivery_episode(con, delivery_id)
    if eid is None:
        raise KeyError(f"delivery {delivery_id!r} is not in the store")
    task, inputs = inputs_from_rows(eid, delivery_rows(con, [eid])[eid])
    span_prior = span_prior_texts(con, [eid]).get(eid, {})
    ew = EpisodeWhatIf(task)
    for d in inputs:
        if d.delivery_id != delivery_id:
            continue
        if delivery_id in span_prior:
            return ew.delivery(d, span_prior[delivery_id], "span_context", keep_query=True)
        cut = cut_placements(d)
        return ew.delivery(d, cut or [], "episode_record" if cut is not None else "none", keep_query=True)
    raise KeyError(f"delivery {delivery_id!r} is not in episode {eid!r}")
