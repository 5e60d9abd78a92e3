"""MemTrim as a library filter: write-time indexing and read-time trimming (MemTrim 3.2, 3.3, A.1).

    trimmer = MemTrim()                       # deterministic parser; MemTrim(parser=LLMParser(...))
    trimmer.write("m1", text, answer="2016")  # parsed once, indexed in the trie, cached
    result = trimmer.read(query, ["m1", "m7"])
    result.context                            # text to give the model
    result.decisions["m1"].outcome            # kept | relabelled | suppressed | none (+ .reason)

Read time (3.3): each retrieved memory's units split into shared S_m(q) (same key and value in
the query), conflicting D_m(q) (key in the query with another value) and memory-only U_m(q).
Shared and conflicting units are removed; memory-only units are kept. The stored outcome follows
Eq. (1): suppressed when D_m(q) ∩ H_m ≠ ∅; kept when τ_m = τ_q; otherwise relabelled as an
evidence unit labelled by its original task (omitted when it cannot be restated faithfully,
A.1). The transformed memories are merged emitting every unit once; values of one key that
disagree across memories are withheld unless a trusted timestamp orders them (A.1 "Combining
multiple retrieved memories"). Only the retrieved ids are looked at: the trie is never a second
retriever.
"""

from __future__ import annotations

import re
from collections.abc import Container, Hashable, Iterable, Mapping
from collections.abc import Set as AbstractSet
from typing import Any

from .parse_det import DeterministicParser
from .records import Decision, OutcomeClass, Parser, StoredMemory, TrimResult, unit_dict
from .trie import EvidenceTrie
from .units import EvidenceUnit, Key, ParsedInteraction

__all__ = ["Decision", "MemTrim", "OutcomeClass", "Parser", "StoredMemory", "TrimResult", "unit_dict"]

CONTEXT_HEADER = "Relevant memory (facts already stated in the request or contradicted by it were removed):"
UNPARSED_HEADER = "Unverified memory (could not be parsed; any stored answer is left out):"


class MemTrim:
    """Trie-indexed memory evidence with read-time trimming (see module docstring)."""

    def __init__(
        self, parser: Parser | None = None, *, trust_timestamps: bool = False, include_unparsed: bool = True
    ) -> None:
        """`trust_timestamps`: resolve disagreeing values across memories by the newest memory's
        timestamp (A.1 "explicit ordering signal"); `include_unparsed`: pass the raw text of a
        memory the parser could not handle, without its answer (A.1 fallback)."""
        self.parser: Parser = parser or DeterministicParser()
        self.trust_timestamps = trust_timestamps
        self.include_unparsed = include_unparsed
        self.trie = EvidenceTrie()
        self.memories: dict[Hashable, StoredMemory] = {}
        self.tasks: set[str] = set()
        self._key_map: dict[Key, Key] = {}
        self._value_map: dict[tuple[Key, Any], Any] = {}
        self._task_map: dict[str, str] = {}

    # -- write time -----------------------------------------------------------------------------
    def write(
        self, memory_id: Hashable, text: str, answer: str | None = None, *, timestamp: float | None = None
    ) -> StoredMemory:
        """Parse a stored interaction once, align its keys, index its units (3.2, A.1)."""
        parsed = self.parser.parse(text, answer)
        return self.write_parsed(memory_id, text, answer, parsed, timestamp=timestamp)

    def write_parsed(
        self,
        memory_id: Hashable,
        text: str,
        answer: str | None,
        parsed: ParsedInteraction,
        *,
        timestamp: float | None = None,
    ) -> StoredMemory:
        """Index an already parsed interaction (structured memories map straight in, 3.1)."""
        old = self.memories.get(memory_id)
        if old is not None:
            self.trie.remove(memory_id, old.parsed.units)
        parsed = self._align(parsed, register=True)
        for i, u in enumerate(parsed.units):
            self.trie.insert(memory_id, u, i in parsed.support)
        mem = StoredMemory(memory_id, text, answer, parsed, timestamp)
        self.memories[memory_id] = mem
        return mem

    def _align(self, p: ParsedInteraction, *, register: bool) -> ParsedInteraction:
        """Map keys and the task onto existing equivalent ones (A.1 key-equivalence check)."""
        if not p.ok:
            return p
        changed = False
        units = []
        for u in p.units:
            k = self._canonical_key(u.key, u.many, register)
            v = self._canonical_value(k, u.value)
            if k != u.key or v != u.value:
                changed = True
                u = EvidenceUnit(
                    key=k, value=v, text=u.text, start=u.start, end=u.end, span=u.span, many=u.many
                )
            units.append(u)
        task = p.task
        if task is not None:
            task = self._canonical_task(task, register)
        outcome = p.outcome
        if outcome is not None and task is not None and outcome.task != task:
            from dataclasses import replace

            outcome = replace(outcome, task=task)
            changed = True
        if not changed and task == p.task:
            return p
        return ParsedInteraction(
            units=units,
            task=task,
            question=p.question,
            support=p.support,
            outcome=outcome,
            ok=p.ok,
            error=p.error,
            dropped=p.dropped,
        )

    def _canonical_key(self, key: Key, many: bool, register: bool) -> Key:
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
        query_sets: tuple[AbstractSet[tuple[Key, Any]], AbstractSet[Key]] | None = None,
        classes: dict[Hashable, tuple[list[int], list[int], list[int]]] | None = None,
    ) -> TrimResult:
        """Read time without query parsing (3.3, Eq. 1, A.1 merge).

        `query_sets` = (the query's (key, value) pairs, the query's keys) may be given instead of
        `q.units` by a caller holding a very large query (the what-if over recorded prior
        contexts); the memories' units are then looked up in them directly."""
        ids = list(dict.fromkeys(retrieved_ids))
        for mid in ids:
            if mid not in self.memories:
                raise KeyError(f"memory {mid!r} was retrieved but never written to MemTrim")
        if classes is not None:
            pass  # the caller already split the units (`split_with_sets`)
        elif query_sets is None:
            own: dict[Key, set[Any]] = {}
            for u in q.units:
                own.setdefault(u.key, set()).add(u.value)
            classes = self._classify(own, ids)
        else:
            classes = self.split_with_sets(*query_sets, ids)
        decisions: dict[Hashable, Decision] = {}
        for mid in ids:
            decisions[mid] = self._decide(self.memories[mid], q, *classes[mid])
        lines = self._merge(ids, decisions)
        unparsed = [self.memories[m] for m in ids if not self.memories[m].parsed.ok]
        parts = []
        if lines:
            parts.append(CONTEXT_HEADER + "\n" + "\n".join(f"- {ln}" for ln in lines))
        if unparsed and self.include_unparsed:
            parts.append(UNPARSED_HEADER + "\n" + "\n".join(f"- {m.text.strip()}" for m in unparsed))
        return TrimResult(context="\n\n".join(parts), decisions=decisions, query=q, lines=lines)

    def _classify(
        self, qmap: Mapping[Key, Container[Any]], ids: list[Hashable], *, from_memories: bool = False
    ) -> dict[Hashable, tuple[list[int], list[int], list[int]]]:
        """Split every retrieved memory's units into shared / conflicting / memory-only (3.3).

        The query's units are looked up in the trie, restricted to the retrieved ids (A.1); each
        hit says which value that memory holds under the query's key. When the query has more
        units than the retrieved memories together, the same lookups run from the memories' side
        (identical result, fewer lookups)."""
        out: dict[Hashable, tuple[list[int], list[int], list[int]]] = {}
        total = sum(len(self.memories[m].parsed.units) for m in ids)
        if not from_memories and len(qmap) <= total:
            hit: dict[Hashable, dict[tuple[Key, Any], str]] = {m: {} for m in ids}
            for k, qvals in qmap.items():
                node = self.trie.lookup(k)
                if node is None:
                    continue
                for mid in ids:
                    vals = node.by_memory.get(mid)
                    if not vals:
                        continue
                    h = hit[mid]
                    for v in vals:
                        h[(k, v)] = "s" if v in qvals else ("u" if node.many else "d")
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
        for mid in ids:
            s, d, u = [], [], []
            for i, un in enumerate(self.memories[mid].parsed.units):
                qv = qmap.get(un.key)
                if qv is None:
                    u.append(i)
                elif un.value in qv:
                    s.append(i)
                elif un.many:
                    u.append(i)
                else:
                    d.append(i)
            out[mid] = (s, d, u)
        return out

    def split_with_sets(
        self, kvs: AbstractSet[tuple[Key, Any]], keys: AbstractSet[Key], ids: list[Hashable]
    ) -> dict[Hashable, tuple[list[int], list[int], list[int]]]:
        """Shared / conflicting / memory-only unit indices per memory, looked up from the memories'
        side in set-shaped query evidence (the same split as `_classify`)."""
        out: dict[Hashable, tuple[list[int], list[int], list[int]]] = {}
        for mid in ids:
            s, d, u = [], [], []
            for i, un in enumerate(self.memories[mid].parsed.units):
                if (un.key, un.value) in kvs:
                    s.append(i)
                elif un.key in keys and not un.many:
                    d.append(i)
                else:
                    u.append(i)
            out[mid] = (s, d, u)
        return out

    def _decide(
        self, mem: StoredMemory, q: ParsedInteraction, s: list[int], d: list[int], u: list[int]
    ) -> Decision:
        """Eq. (1) for one memory."""
        p = mem.parsed
        units = p.units
        dec = Decision(
            memory_id=mem.memory_id,
            shared=[units[i] for i in s],
            conflicting=[units[i] for i in d],
            memory_only=[units[i] for i in u],
            parsed_ok=p.ok,
        )
        dec.support_conflicts = [units[i] for i in d if i in p.support]
        if not p.ok:
            dec.outcome = "suppressed" if mem.answer else "none"
            dec.reason = (
                f"the parser could not represent this memory ({p.error}); its stored answer "
                "is never reused (A.1 fallback)"
            )
            return dec
        o = p.outcome
        if o is None:
            dec.outcome, dec.reason = "none", "no stored answer"
            return dec
        if dec.support_conflicts:
            keys = ", ".join(sorted({x.key.label() for x in dec.support_conflicts}))
            dec.outcome = "suppressed"
            dec.reason = f"evidence the stored answer depends on changed in the query: {keys}"
            return dec
        if q.task is not None and o.task == q.task:
            dec.outcome = "kept"
            dec.reason = f"same task ({o.task}) and none of its supporting evidence changed"
            dec.outcome_unit = EvidenceUnit(
                key=Key("", f"answer:{o.task}", o.vtype),
                value=o.value,
                text=o.answer,
                start=0,
                end=0,
                span="Previous answer to this same question",
            )
            return dec
        if o.expressible:
            dec.outcome = "relabelled"
            dec.reason = (
                f"different task (stored: {o.task}; current: {q.task or 'none'}); the earlier "
                "answer is kept only as evidence labelled by its task"
            )
            label = (
                f' ("{o.question.strip()}")'
                if o.question
                else ("" if o.task == "unspecified_task" else f" ({o.task})")
            )
            dec.outcome_unit = EvidenceUnit(
                key=Key("", f"earlier_answer:{o.task}", o.vtype),
                value=o.value,
                text=o.answer,
                start=0,
                end=0,
                span=f"Earlier answer to a different question{label}",
            )
            return dec
        dec.outcome = "relabelled"  # the Type(o_m) branch of Eq. (1) with nothing to emit
        dec.reason = (
            f"different task (stored: {o.task}; current: {q.task or 'none'}) and the earlier "
            "answer cannot be restated faithfully as evidence, so it is omitted (A.1)"
        )
        return dec

    def _merge(self, ids: list[Hashable], decisions: dict[Hashable, Decision]) -> list[str]:
        """Merge the transformed memories: each unit once, disagreeing values withheld (A.1)."""
        # candidate units per memory, in order
        cands: list[tuple[Hashable, EvidenceUnit]] = []
        for mid in ids:
            dec = decisions[mid]
            if not dec.parsed_ok:
                continue
            cands.extend((mid, x) for x in dec.memory_only)
            if dec.outcome_unit is not None:
                cands.append((mid, dec.outcome_unit))
        values: dict[Key, dict[Any, list[Hashable]]] = {}
        for mid, x in cands:
            if not x.many:
                values.setdefault(x.key, {}).setdefault(x.value, []).append(mid)
        blocked: set[tuple[Key, Any]] = set()
        for k, by_val in values.items():
            if len(by_val) < 2:
                continue
            winner = self._order(by_val) if self.trust_timestamps else None
            for v in by_val:
                if v != winner:
                    blocked.add((k, v))
        seen: set[tuple[Key, Any]] = set()
        for mid, x in cands:
            dec = decisions[mid]
            kv = (x.key, x.value)
            if kv in blocked:
                dec.withheld.append(x)
            elif kv in seen:
                dec.duplicates.append(x)
            else:
                seen.add(kv)
                dec.emitted.append(x)
        lines: list[str] = []
        for mid in ids:
            dec = decisions[mid]
            dec.lines = self._render(self.memories[mid], dec)
            lines.extend(dec.lines)
        return lines

    def _order(self, by_val: dict[Any, list[Hashable]]) -> Any:
        """The value from the newest memory when every memory involved has a trusted timestamp
        and the newest one is unique; otherwise None (all values withheld)."""
        best: list[tuple[float, Any]] = []
        for v, mids in by_val.items():
            for m in mids:
                ts = self.memories[m].timestamp
                if ts is None:
                    return None
                best.append((ts, v))
        best.sort(key=lambda t: t[0], reverse=True)
        if len(best) > 1 and best[0][0] == best[1][0] and best[0][1] != best[1][1]:
            return None
        return best[0][1]

    def _render(self, mem: StoredMemory, dec: Decision) -> list[str]:
        """The memory's text with removed evidence cut out (3.3): a source span stays verbatim when
        every unit taken from it is kept, disappears when none is, and is replaced by the key-value
        form of the kept units otherwise (B.4: "(position, forward)"). Text no unit covers stays
        (MemTrim cannot tell it is redundant), except the directive lines (question, task, answer,
        support) and bare list markers. Kept or relabelled answers follow as labelled lines."""
        out: list[str] = []
        if dec.parsed_ok:
            kept = {(x.key, x.value) for x in dec.emitted}
            text = mem.text
            pos = 0
            pieces: list[str] = []
            for blk in mem.layout():
                pieces.append(text[pos : blk.start])
                pos = blk.end
                if blk.statement is not None:
                    whole = blk.statement in kept
                    keep = []
                else:
                    keep = [u for u in blk.units if (u.key, u.value) in kept]
                    whole = bool(keep) and len(keep) == len(blk.units)
                if whole:
                    pieces.append(text[blk.start : blk.end])
                    continue
                if keep:
                    pieces.append("\n" + "\n".join(u.render() for u in keep) + "\n")
                while pos < len(text) and text[pos] in " \t":  # the gap a removed span leaves
                    pos += 1
            pieces.append(text[pos:])
            for line in "".join(pieces).splitlines():
                bare = _BULLET_ONLY.sub("", line).strip()
                if bare and not _DIRECTIVE_LINE.match(bare) and _HAS_WORD.search(bare):
                    out.append(line.rstrip() if line[:1].isspace() else line.strip())  # keep code indentation
        for x in dec.emitted:
            if x.end <= x.start:  # outcome units carry their label in `span`
                out.append(f"{x.span}: {x.text}")
        return out


_BULLET_ONLY = re.compile(r"^\s*(?:[-*•]|\d{1,3}[.)])(?=\s|$)")
_DIRECTIVE_LINE = re.compile(r"^(?:question|query|q|task|answer|a|support)\s*:", re.I)
_HAS_WORD = re.compile(r"\w")
