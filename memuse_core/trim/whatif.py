"""What MemTrim would have removed from recorded deliveries (MemTrim 3.3 applied to MemUse data).

For a delivery, each delivered entry is a retrieved memory (its recorded value, with no stored
answer unless the value carries an `answer:` line) and the agent's prior context is the query:
the consuming call's input with this delivery's placements cut out (MemUse A.1.3; other
deliveries stay). MemTrim then splits every entry's evidence into units shared with the prior
context, units the prior context contradicts, and memory-only units, and builds the trimmed text.

Where the prior context comes from (reported per delivery as `prior_from`):
- `span_context`: the verified prior sources B_S of the built evaluation context
  (the prior-source rows that `memuse_core.store.context.load_episode_context` returns, read in
  batches by `store.trim.span_prior_texts`), for the first delivery of each span;
- `episode_record`: otherwise (restatements, deliveries outside spans, stores not built yet),
  computed from the EpisodeRecord: the consuming call's messages minus the placement texts
  (the proof's offset when recorded, else the first occurrence in the proof's message).

Each message of the prior context is parsed once per episode (messages repeat across calls).
`memuse trim` reads deliveries, entries, placements and consuming inputs straight from the store
tables (`store.trim.delivery_inputs`) rather than rebuilding whole episodes.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from ..episode import EpisodeRecord
from .core import Decision, MemTrim, unit_dict
from .parse_det import DeterministicParser
from .units import EvidenceUnit, Key, ParsedInteraction, content_words, jaccard, task_signature


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
    def klass(self) -> str:
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


class EntryView(NamedTuple):
    """The fields of a delivered entry the what-if reads (a light stand-in for `events.Entry`)."""

    namespace: str
    item_id: str | None
    digest: str | None
    value: str | None


@dataclass
class DeliveryInput:
    """What the what-if needs of one delivery: its entries, its placements and the texts of its
    consuming call's input messages (None when it was never consumed)."""

    delivery_id: str
    episode_id: str
    entries: list[Any]
    """`events.Entry` or `EntryView` values (namespace, item_id, digest, value)."""
    placements: list[tuple[str | None, int | None, int | None]]
    """(text, proof message index, proof start offset) per placement."""
    input_texts: list[str] | None
    consuming_call_id: str | None = None


@dataclass
class EpisodeCalls:
    """An episode's calls as stored: (call id, base call id, base length, appended message hashes)
    and the message texts by hash; `resolve_inputs` expands them."""

    calls: list[tuple[str, str | None, int | None, list[int]]] = field(default_factory=list)
    texts: dict[int, str] = field(default_factory=dict)


def resolve_inputs(inputs: list[DeliveryInput], ec: EpisodeCalls) -> None:
    """Fill each delivery's consuming-input texts from the delta-encoded calls."""
    full: dict[str, list[str]] = {}
    for cid, base, blen, hashes in ec.calls:
        prefix = full.get(base, []) if base is not None else []
        if blen is not None:
            prefix = prefix[:blen]
        full[cid] = prefix + [ec.texts.get(h, "") for h in hashes]
    for d in inputs:
        if d.consuming_call_id is not None and d.consuming_call_id in full:
            d.input_texts = full[d.consuming_call_id]


def inputs_from_record(rec: EpisodeRecord) -> list[DeliveryInput]:
    """DeliveryInputs of every delivery of an episode record, in recorded order."""
    out = []
    for d in rec.deliveries:
        cv = rec.call(d.consuming_call_id) if d.consuming_call_id else None
        out.append(
            DeliveryInput(
                d.delivery_id,
                d.episode_id,
                list(d.entries),
                [
                    (
                        pl.text,
                        pl.proof.message_index if pl.proof else None,
                        pl.proof.start if pl.proof else None,
                    )
                    for pl in d.placements
                ],
                [m.text() for m in cv.messages] if cv is not None else None,
            )
        )
    return out


def cut_placements(d: DeliveryInput) -> list[str] | None:
    """Prior-context message texts: the consuming input minus this delivery's placement texts
    (at the proof offset when it matches, else the first occurrence in the proof's message, else
    in any message); None when the delivery was never consumed (MemUse A.1.3)."""
    if d.input_texts is None:
        return None
    texts = list(d.input_texts)
    for text, idx, start0 in d.placements:
        if not text:
            continue
        order = [idx] if idx is not None and 0 <= idx < len(texts) else range(len(texts))
        for i in order:
            t = texts[i]
            start = start0 if idx == i else None
            if start is None or t[start : start + len(text)] != text:
                start = t.find(text)
            if start >= 0:
                texts[i] = t[:start] + t[start + len(text) :]
                break
    return [t for t in texts if t]


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

    def delivery(
        self, d: DeliveryInput, prior_texts: list[str], prior_from: str, *, keep_query: bool = False
    ) -> DeliveryWhatIf:
        """Trim one delivery's entries against its prior context (3.3)."""
        kvs, keys, words = self._evidence(prior_texts)
        units: list[EvidenceUnit] = (
            [u for t in prior_texts for u in self._message(t)[0]] if keep_query else []
        )
        q = ParsedInteraction(units=units, task=self.task)
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
            classes = self.trimmer.split_with_sets(kvs, keys, ids)
            sig = (tuple(ids), tuple((tuple(s), tuple(c), tuple(u)) for s, c, u in (classes[m] for m in ids)))
            hit = self._results.get(sig)
            if hit is None:
                res = self.trimmer.read_parsed(q, ids, classes=classes)
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
    from ..store.trim import delivery_inputs, span_prior_texts

    row = con.execute("SELECT episode_id FROM deliveries WHERE delivery_id = ?", [delivery_id]).fetchone()
    if row is None:
        raise KeyError(f"delivery {delivery_id!r} is not in the store")
    task, inputs = delivery_inputs(con, [row[0]])[row[0]]
    span_prior = span_prior_texts(con, [row[0]]).get(row[0], {})
    ew = EpisodeWhatIf(task)
    for d in inputs:
        if d.delivery_id != delivery_id:
            continue
        if delivery_id in span_prior:
            return ew.delivery(d, span_prior[delivery_id], "span_context", keep_query=True)
        cut = cut_placements(d)
        return ew.delivery(d, cut or [], "episode_record" if cut is not None else "none", keep_query=True)
    raise KeyError(f"delivery {delivery_id!r} is not in episode {row[0]!r}")


_WORKER_CACHE: dict[str, Any] = {}


def batch_table(
    payload: list[tuple[str, str | None, list[Any], dict[str, list[str]]]],
) -> tuple[Any, dict[str, Any]]:
    """`batch_rows` as one Arrow table (built in the worker, so the writer only inserts)."""
    from ..store.trim import rows_table

    rows, tot = batch_rows(payload)
    return rows_table(rows), tot


def batch_rows(
    payload: list[tuple[str, str | None, list[Any], dict[str, list[str]]]],
) -> tuple[list[tuple[Any, ...]], dict[str, Any]]:
    """trim_results rows and totals for a batch of episodes (runs in a worker process too)."""
    tot = _new_totals()
    rows: list[tuple[Any, ...]] = []
    if len(_WORKER_CACHE) > 50_000:
        _WORKER_CACHE.clear()
    for _eid, task, inputs, prior in payload:
        if inputs and isinstance(inputs[-1], EpisodeCalls):
            inputs, ec = inputs[:-1], inputs[-1]
            resolve_inputs(inputs, ec)
        for w in episode_whatif(inputs, task, prior, message_cache=_WORKER_CACHE):
            tot["deliveries"] += 1
            tot["prior_from"][w.prior_from] = tot["prior_from"].get(w.prior_from, 0) + 1
            for e in w.entries:
                rows.append(row_of(w, e))
                d = e.decision
                tot["entries"] += 1
                tot["shared"] += len(d.shared)
                tot["conflicting"] += len(d.conflicting)
                tot["memory_only"] += len(d.memory_only)
                tot["chars_before"] += e.chars_before
                tot["chars_after"] += e.chars_after
                tot["outcomes"][d.outcome] = tot["outcomes"].get(d.outcome, 0) + 1
        tot["episodes"] += 1
    return rows, tot


def _new_totals() -> dict[str, Any]:
    return {
        "episodes": 0,
        "deliveries": 0,
        "entries": 0,
        "shared": 0,
        "conflicting": 0,
        "memory_only": 0,
        "chars_before": 0,
        "chars_after": 0,
        "outcomes": {},
        "prior_from": {},
    }


def _add(tot: dict[str, Any], part: dict[str, Any]) -> None:
    for k, v in part.items():
        if isinstance(v, dict):
            for kk, vv in v.items():
                tot[k][kk] = tot[k].get(kk, 0) + vv
        else:
            tot[k] += v


def run_store(
    con: Any,
    *,
    limit: int | None = None,
    batch: int = 20,
    workers: int | None = None,
    progress: Callable[[int], Any] | None = None,
) -> dict[str, Any]:
    """Compute and store the what-if of every recorded delivery (`memuse trim`); returns totals.

    Old results of the episodes are removed first; this process then reads each batch of
    episodes from the store and inserts its rows in one transaction; with `workers` > 1 (default: the machine's cores, at most 4) the trimming runs
    in worker processes that never open the store."""
    import os
    from concurrent.futures import Future, ProcessPoolExecutor
    from multiprocessing import get_context

    from ..store.trim import (
        delete_trim_rows,
        delivery_inputs,
        ensure_trim_tables,
        replace_trim_rows,
        span_prior_texts,
    )

    ensure_trim_tables(con)
    eids = [r[0] for r in con.execute("SELECT episode_id FROM episodes ORDER BY file_id, seq").fetchall()]
    if limit:
        eids = eids[:limit]
    # old results go first, in one statement (per-batch deletes would rescan a growing table)
    delete_trim_rows(con, eids if limit else None)
    chunks = [eids[i : i + batch] for i in range(0, len(eids), batch)]
    n_workers = workers if workers is not None else min(4, os.cpu_count() or 1)
    n_workers = max(1, min(n_workers, len(chunks)))
    tot = _new_totals()

    def payload(chunk: list[str]) -> list[tuple[str, str | None, list[Any], dict[str, list[str]]]]:
        loaded = delivery_inputs(con, chunk, resolve=n_workers == 1)
        priors = span_prior_texts(con, chunk)
        return [(eid, loaded[eid][0], loaded[eid][1], priors.get(eid, {})) for eid in chunk if eid in loaded]

    def finish(chunk: list[str], rows: Any, part: dict[str, Any]) -> None:
        replace_trim_rows(con, None, rows)
        _add(tot, part)
        if progress:
            progress(len(chunk))

    if n_workers == 1:
        for chunk in chunks:
            finish(chunk, *batch_rows(payload(chunk)))
    else:
        with ProcessPoolExecutor(n_workers, mp_context=get_context("spawn")) as pool:
            pending: list[tuple[list[str], Future[Any]]] = []
            for chunk in chunks:
                pending.append((chunk, pool.submit(batch_table, payload(chunk))))
                while len(pending) > 2 * n_workers:
                    done_chunk, fut = pending.pop(0)
                    finish(done_chunk, *fut.result())
            for done_chunk, fut in pending:
                finish(done_chunk, *fut.result())
    saved = tot["chars_before"] - tot["chars_after"]
    tot["chars_saved"] = saved
    tot["tokens_saved"] = saved // 4
    tot["saved_share"] = saved / tot["chars_before"] if tot["chars_before"] else 0.0
    return tot


def row_of(w: DeliveryWhatIf, e: EntryWhatIf) -> tuple[Any, ...]:
    """One trim_results row (column order of store.trim.TRIM_COLUMNS)."""
    import json

    d = e.decision
    return (
        w.delivery_id,
        e.pos,
        w.episode_id,
        len(d.shared),
        len(d.conflicting),
        len(d.memory_only),
        d.outcome,
        e.chars_before,
        e.chars_after,
        None if e.same_as else json.dumps(d.to_dict()),
        e.namespace,
        e.item_id,
        w.prior_from,
        e.jaccard,
        e.klass,
        (e.chars_before - e.chars_after) // 4,
        e.same_as,
    )
