"""MemTrim as a library filter: write-time indexing and read-time trimming (MemTrim 3.2, 3.3, A.1).

    trimmer = MemTrim()                       # deterministic parser; MemTrim(parser=LLMParser(...))
    trimmer.write("m1", text, answer="2016", support=["founded in"])   # parsed once, indexed
    result = trimmer.read(query, ["m1", "m7"])
    result.context                            # what to give the model (only emitted units)
    result.decisions["m1"].outcome            # kept | relabelled | suppressed | none (+ .reason)
    trimmer.delete("m7")                      # the index follows the memory store

Write time (3.2): every unit of E_m goes into the trie under its canonical key, then value, with
a flag saying whether it is in H_m. The support set comes from the caller's `support=` names when
given (structure known to the caller, e.g. the quantities of a CLADDER estimand), else from the
parser; unknown dependence counts as support (A.1). Keys, values and tasks are aligned with
existing ones through the parser's equivalence checks (A.1).

Read time (3.3): the query is parsed once; the retrieved memories' units are split into shared,
conflicting and memory-only through the trie (restricted to the retrieved ids: the trie is never
a second retriever, A.1); `decide` applies Eq. (1) and the merge; only emitted units reach the
context. A query that cannot be parsed passes nothing and reuses no answer (fail closed).
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Sequence
from dataclasses import replace
from typing import Any

from .decide import QueryEvidence, context_text, decide, merge
from .parse_det import DeterministicParser
from .records import Decision, OutcomeClass, Parser, StoredMemory, TrimResult, unit_dict
from .trie import EvidenceTrie
from .units import EvidenceUnit, Key, ParsedInteraction, match_support

__all__ = ["Decision", "MemTrim", "OutcomeClass", "Parser", "StoredMemory", "TrimResult", "unit_dict"]

Split = tuple[list[int], list[int], list[int]]


class MemTrim:
    """Trie-indexed memory evidence with read-time trimming (see module docstring)."""

    def __init__(self, parser: Parser | None = None, *, trust_timestamps: bool = False) -> None:
        """`trust_timestamps`: resolve disagreeing values across memories by the newest memory's
        timestamp (A.1 "explicit ordering signal")."""
        self.parser: Parser = parser or DeterministicParser()
        self.trust_timestamps = trust_timestamps
        self.trie = EvidenceTrie()
        self.memories: dict[Hashable, StoredMemory] = {}
        self.tasks: set[str] = set()
        self._key_map: dict[Key, Key] = {}
        self._value_map: dict[tuple[Key, Any], Any] = {}
        self._task_map: dict[str, str] = {}

    # -- write time -----------------------------------------------------------------------------
    def write(
        self,
        memory_id: Hashable,
        text: str,
        answer: str | None = None,
        *,
        support: Sequence[str] | None = None,
        timestamp: float | None = None,
    ) -> StoredMemory:
        """Parse a stored interaction once and index it (3.2). `support` names the facts the
        answer depends on (key labels, entities, attributes or values); None leaves it to the
        parser, and a parser that cannot tell counts every unit (A.1). Writing an existing id
        replaces it (a memory update)."""
        parsed = self.parser.parse(text, answer)
        return self.write_parsed(memory_id, text, answer, parsed, support=support, timestamp=timestamp)

    def write_parsed(
        self,
        memory_id: Hashable,
        text: str,
        answer: str | None,
        parsed: ParsedInteraction,
        *,
        support: Sequence[str] | None = None,
        timestamp: float | None = None,
        align: bool = True,
    ) -> StoredMemory:
        """Index an already parsed interaction (structured memories map straight in, 3.1).
        `align=False` skips the key-equivalence checks (a representation restored from the
        store was aligned when it was first written)."""
        if support is not None and parsed.ok:
            hm, open_support = match_support(parsed.units, support)
            parsed = replace(parsed, support=hm, open_support=open_support, support_from="given")
        self.delete(memory_id)
        if align:
            parsed = self._align(parsed, register=True)
        elif parsed.task is not None:
            self.tasks.add(parsed.task)
        for i, u in enumerate(parsed.units):
            self.trie.insert(memory_id, u, i in parsed.support)
        mem = StoredMemory(
            memory_id, text, answer, parsed, timestamp, tuple(support) if support is not None else None
        )
        self.memories[memory_id] = mem
        return mem

    def delete(self, memory_id: Hashable) -> bool:
        """Forget a memory (the base store deleted it); False when it was never written."""
        old = self.memories.pop(memory_id, None)
        if old is None:
            return False
        self.trie.remove(memory_id, old.parsed.units)
        return True

    def _align(self, p: ParsedInteraction, *, register: bool) -> ParsedInteraction:
        """Map keys, values and the task onto existing equivalent ones (A.1)."""
        if not p.ok:
            return p
        changed = False
        units = []
        for u in p.units:
            k = self._canonical_key(u.key, register)
            v = self._canonical_value(k, u.value)
            if k != u.key or v != u.value:
                changed = True
                u = EvidenceUnit(
                    key=k, value=v, text=u.text, start=u.start, end=u.end, span=u.span, many=u.many
                )
            units.append(u)
        task = self._canonical_task(p.task, register) if p.task is not None else None
        fact = self._canonical_key(p.fact_key, register) if p.fact_key is not None else None
        outcome = p.outcome
        if outcome is not None and task is not None and outcome.task != task:
            outcome = replace(outcome, task=task)
            changed = True
        if not changed and task == p.task and fact == p.fact_key:
            return p
        return replace(p, units=units, task=task, outcome=outcome, fact_key=fact)

    def _canonical_key(self, key: Key, register: bool) -> Key:
        hit = self._key_map.get(key)
        if hit is not None:
            return hit
        if key in self.trie.keys:
            return key
        cands = self.trie.candidates(key)
        eq = self.parser.equivalent_key(key, cands) if cands else None
        out = eq if eq is not None and eq in cands else key
        if register or out != key:
            self._key_map[key] = out
        return out

    def _canonical_value(self, key: Key, value: Any) -> Any:
        """Free-text values are aligned like keys, after the key matched (A.1): a new textual value
        of an indexed key is checked against that key's existing values; unclear stays apart.
        Typed values (boolean, numeric, temporal) are already in their fixed form."""
        if key.vtype not in ("text", "categorical", "entity") or key.attribute in ("statement", "subject"):
            return value
        hit = self._value_map.get((key, value))
        if hit is not None:
            return hit
        node = self.trie.lookup(key)
        if node is None or value in node.values or not node.values:
            return value
        check = getattr(self.parser, "equivalent_value", None)
        cands = list(node.values)[:8]
        eq = check(key, value, cands) if check is not None else None
        out = eq if eq is not None and eq in cands else value
        self._value_map[(key, value)] = out
        return out

    def _canonical_task(self, task: str, register: bool) -> str:
        hit = self._task_map.get(task)
        if hit is not None:
            return hit
        if task in self.tasks:
            return task
        cands = sorted(self.tasks)[:16]
        eq = self.parser.equivalent_task(task, cands) if cands else None
        out = eq if eq is not None and eq in self.tasks else task
        if register:
            self.tasks.add(out)
            self._task_map[task] = out
        return out

    # -- read time ------------------------------------------------------------------------------
    def parse_query(self, query: str) -> ParsedInteraction:
        """Parse the current query once and align it with the index (3.3)."""
        return self._align(self.parser.parse(query, None), register=False)

    def read(self, query: str, retrieved_ids: Iterable[Hashable]) -> TrimResult:
        """Build the trimmed memory context for `query` from the retrieved memories only."""
        return self.read_parsed(self.parse_query(query), retrieved_ids)

    def read_parsed(
        self,
        q: ParsedInteraction,
        retrieved_ids: Iterable[Hashable],
        *,
        evidence: QueryEvidence | None = None,
        splits: dict[Hashable, Split] | None = None,
    ) -> TrimResult:
        """Read time without query parsing (3.3, Eq. 1, A.1 merge).

        `evidence` may replace `q.units` for a caller holding a very large query as sets (the
        what-if over recorded prior contexts), and `splits` the unit split it already made."""
        ids = list(dict.fromkeys(retrieved_ids))
        for mid in ids:
            if mid not in self.memories:
                raise KeyError(f"memory {mid!r} was retrieved but never written to MemTrim")
        qe = evidence if evidence is not None else QueryEvidence.of(q.units)
        if splits is None:
            splits = self.split(qe, ids) if q.ok else {m: ([], [], []) for m in ids}
        decisions = {mid: decide(self.memories[mid], q, qe, splits[mid]) for mid in ids}
        if q.ok:
            lines = merge(ids, self.memories, decisions, trust_timestamps=self.trust_timestamps)
        else:
            lines = []
        return TrimResult(context=context_text(lines), decisions=decisions, query=q, lines=lines)

    def split(self, qe: QueryEvidence, ids: list[Hashable]) -> dict[Hashable, Split]:
        """Shared / conflicting / memory-only unit indices of every retrieved memory (3.3).

        When the query has fewer keys than the retrieved memories have units, the query's keys
        are looked up in the trie (restricted to the retrieved ids, A.1); otherwise each memory
        unit is looked up in the query's sets (identical result, fewer lookups)."""
        total = sum(len(self.memories[m].parsed.units) for m in ids)
        if len(qe.keys) > total:
            return self.split_from_memories(qe, ids)
        qvals: dict[Key, set[Any]] = {}
        for k, v in qe.kvs:
            qvals.setdefault(k, set()).add(v)
        hit: dict[Hashable, dict[tuple[Key, Any], str]] = {m: {} for m in ids}
        for k, vals in qvals.items():
            node = self.trie.lookup(k)
            if node is None:
                continue
            for mid in ids:
                mvals = node.by_memory.get(mid)
                if not mvals:
                    continue
                h = hit[mid]
                for v in mvals:
                    h[(k, v)] = "s" if v in vals else ("u" if node.many else "d")
        out: dict[Hashable, Split] = {}
        for mid in ids:
            s: list[int] = []
            d: list[int] = []
            u: list[int] = []
            h = hit[mid]
            for i, un in enumerate(self.memories[mid].parsed.units):
                c = h.get((un.key, un.value), "u")
                (s if c == "s" else d if c == "d" else u).append(i)
            out[mid] = (s, d, u)
        return out

    def split_from_memories(self, qe: QueryEvidence, ids: list[Hashable]) -> dict[Hashable, Split]:
        """The same split, looked up from the memories' side in the query's sets."""
        kvs, keys = qe.kvs, qe.keys
        out: dict[Hashable, Split] = {}
        for mid in ids:
            s: list[int] = []
            d: list[int] = []
            u: list[int] = []
            for i, un in enumerate(self.memories[mid].parsed.units):
                if (un.key, un.value) in kvs:
                    s.append(i)
                elif un.key in keys and not un.many:
                    d.append(i)
                else:
                    u.append(i)
            out[mid] = (s, d, u)
        return out
