"""CLADDER premise-change memory/query pairs (MemTrim Appendix C.3, adapted to the shared sets).

Source: the CLADDER sets in ../shared/data/real/cladder (`easy`, `hard`, `anti`, `det`:
questions with structured quantities, gold answers and reasoning; the model-meta file gives each
question's background text). A folder without these files falls back to any
`cladder_*generate*.json` it holds (the set is then named by the file).

Construction (C.3, with the adaptations named), inside each set:
1. Group questions by (story_id, graph_id, query_type, rung).
2. Text similarity: C.3 encodes the number-masked text with a sentence encoder (cosine ≥ 0.85).
   No encoder is used here: the stand-in is the content-word Jaccard of the number-masked
   given_info + question, with the same 0.85 threshold.
3. Evidence overlap: every structured quantity of `meta.given_info` becomes a key-value entry
   (values rounded to two decimals, as the question text shows them). Adapted: the causal-graph
   edges (reasoning step1) are evidence entries too (B.4 case 3 lists the graph as shared
   evidence). Kept pairs have evidence-key Jaccard ≥ 0.8, ≥ 1 unchanged entry, ≥ 1 changed
   quantity, and ≥ 1 changed quantity whose value appears in the query's benchmark reasoning.
4. Label from the gold answers only: TA when they agree, TD-Dup when they differ.
5. Every ordered pair (memory = one question, query = the other) is a candidate; per source
   memory and condition the candidate with the highest similarity then evidence overlap is
   kept (ties by id). Adapted: a source does not need candidates for both conditions. At most
   `limit` pairs per set and condition are then sampled with the given seed (C.3: 500, seed 42).

Support set H_m of a stored question (3.1, A.1 "answer support"): the quantities its estimand
names (`meta.estimand`, else reasoning step3), looked up in the reasoning's list of given
quantities (step4, "P(Y=1 | X=0) = 0.26"); they are passed to `write(support=...)` by value,
which selects the units holding those numbers. A binary event's value is not compared
(P(X=0) = 1 - P(X=1) depends on the same number); conditions must match; `v` is any value.
When the estimand names nothing that step4 lists (backdoor, collider and deterministic
questions), dependence is unknown and every unit counts as support.
"""

from __future__ import annotations

import json
import random
import re
from dataclasses import dataclass
from itertools import permutations
from pathlib import Path
from typing import Any

from .units import content_words, jaccard

SETS = ("easy", "hard", "anti", "det")
"""The shared CLADDER sets, in report order."""
META_GLOB = "cladder_*model-meta.json"


class CladderError(ValueError):
    """The CLADDER folder is missing or malformed (one clear line)."""


@dataclass(frozen=True)
class CladderQuestion:
    """One CLADDER question with what the pairs need."""

    qid: str
    dataset: str
    """The set it comes from (easy, hard, anti, det)."""
    group: tuple[str, str, str, int]
    text: str
    """Background + given information + question (what a user would have asked)."""
    answer: str
    evidence: dict[str, Any]
    reasoning: str
    masked_words: frozenset[str]
    support: tuple[str, ...] | None = None
    """Values of the quantities the estimand names (H_m by value); None: dependence unknown."""


@dataclass(frozen=True)
class Pair:
    """A stored interaction (memory) and a later query from the same scenario."""

    condition: str
    """TA or TD-Dup."""
    memory: CladderQuestion
    query: CladderQuestion
    similarity: float
    evidence_jaccard: float
    changed: tuple[str, ...]
    unchanged: tuple[str, ...]


def question_files(folder: Path, sets: tuple[str, ...] | None = None) -> dict[str, Path]:
    """Set name -> questions file; raises CladderError naming the folder when there is none."""
    if not folder.is_dir():
        raise CladderError(f"{folder}: CLADDER folder not found")
    wanted = sets or SETS
    out = {s: hits[0] for s in wanted if (hits := sorted(folder.glob(f"cladder_*generate-{s}.json")))}
    if not out and sets is None:
        for p in sorted(folder.glob("cladder_*generate*.json")):
            out[p.stem.split("generate-", 1)[-1]] = p
    if not out:
        raise CladderError(f"{folder}: no file matching cladder_*generate-{{{','.join(wanted)}}}.json")
    return out


def _meta_file(folder: Path) -> Path:
    hits = sorted(folder.glob(META_GLOB)) or sorted(folder.glob("cladder_*meta*.json"))
    if not hits:
        raise CladderError(f"{folder}: no file matching {META_GLOB}")
    return hits[0]


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as e:
        raise CladderError(f"{path}:{e.lineno}: invalid JSON: {e.msg}") from None


def _flatten(prefix: str, v: Any, out: dict[str, Any]) -> None:
    if isinstance(v, (list, tuple)):
        for i, x in enumerate(v):
            _flatten(f"{prefix}[{i}]", x, out)
    elif isinstance(v, float):
        out[prefix] = round(v, 2)
    else:
        out[prefix] = v


def load_questions(folder: Path, sets: tuple[str, ...] | None = None) -> list[CladderQuestion]:
    """Read the questions of every set (or `sets`) and the model meta; raises CladderError
    naming the file, record and field."""
    files = question_files(folder, sets)
    metas = _read_json(_meta_file(folder))
    background = {m.get("model_id"): m.get("background", "") for m in metas if isinstance(m, dict)}
    out = []
    for dataset, qpath in files.items():
        for i, r in enumerate(_read_json(qpath)):
            try:
                meta = r["meta"]
                group = (meta["story_id"], meta["graph_id"], meta["query_type"], int(meta["rung"]))
                qid = str(r.get("desc_id") or r["question_id"])
                given, question, answer = r["given_info"], r["question"], str(r["answer"]).strip().lower()
            except (KeyError, TypeError) as e:
                raise CladderError(f"{qpath}: record {i}: field `{e}` missing") from None
            ev: dict[str, Any] = {}
            gi = meta.get("given_info")
            if isinstance(gi, dict):
                for k, v in gi.items():
                    _flatten(k.replace(" ", ""), v, ev)
            elif gi is not None:
                _flatten("given", gi, ev)
            reasoning = r.get("reasoning") or {}
            if not isinstance(reasoning, dict):
                reasoning = {}
            for edge in str(reasoning.get("step1") or "").split(","):
                if "->" in edge:
                    ev["edge:" + edge.strip()] = True
            bg = background.get(meta.get("model_id"), "")
            text = (bg.strip() + "\n" if bg else "") + given.strip() + "\nQuestion: " + question.strip()
            words = frozenset(content_words(re.sub(r"\d+(?:\.\d+)?%?", " ", given + " " + question)))
            out.append(
                CladderQuestion(
                    qid=qid,
                    dataset=dataset,
                    group=group,
                    text=text,
                    answer=answer,
                    evidence=ev,
                    reasoning=" ".join(str(v) for v in reasoning.values()),
                    masked_words=words,
                    support=estimand_support(
                        meta.get("estimand") or reasoning.get("step3"), reasoning.get("step4")
                    ),
                )
            )
    return out


# -- support from the estimand ----------------------------------------------------------------------
_TERM = re.compile(r"P\s*\(([^()]*)\)")
_GIVEN = re.compile(r"^\s*P\s*\(([^()]*)\)\s*=\s*(-?\d*\.?\d+)\s*$")
Term = tuple[tuple[tuple[str, str], ...], tuple[tuple[str, str], ...]]


def _side(s: str) -> tuple[tuple[str, str], ...]:
    out = []
    for item in s.split(","):
        parts = [p.strip() for p in item.split("=")]
        if parts and parts[0]:
            out.append((parts[0], parts[1] if len(parts) > 1 and parts[1] not in ("", "v") else "*"))
    return tuple(sorted(out))


def _term(inner: str) -> Term:
    ev, _, cond = inner.partition("|")
    return _side(ev), _side(cond)


def _matches(named: Term, given: Term) -> bool:
    (nev, ncond), (gev, gcond) = named, given
    if [v for v, _ in nev] != [v for v, _ in gev] or [v for v, _ in ncond] != [v for v, _ in gcond]:
        return False
    if len(nev) > 1 and any(a != "*" and b != "*" and a != b for (_, a), (_, b) in zip(nev, gev)):
        return False  # a joint event's values matter; a single binary event's do not
    return all(a == "*" or b == "*" or a == b for (_, a), (_, b) in zip(ncond, gcond))


def estimand_support(estimand: str | None, given: str | None) -> tuple[str, ...] | None:
    """Values (as written in step4) of the given quantities the estimand names; None when it
    names none of them (module docstring)."""
    if not estimand or not given:
        return None
    named = [_term(m.group(1)) for m in _TERM.finditer(estimand)]
    out: list[str] = []
    for line in str(given).splitlines():
        m = _GIVEN.match(line)
        if m and any(_matches(n, _term(m.group(1))) for n in named) and m.group(2) not in out:
            out.append(m.group(2))
    return tuple(out) or None


# -- pairs ----------------------------------------------------------------------------------------
def _fmt(v: Any) -> str:
    return f"{v:.2f}" if isinstance(v, float) else str(v)


def candidate(
    mem: CladderQuestion, qry: CladderQuestion, *, min_similarity: float = 0.85, min_jaccard: float = 0.8
) -> Pair | None:
    """The pair (memory, query) when it passes the checks of C.3 (module docstring), else None."""
    sim = jaccard(mem.masked_words, qry.masked_words)
    if sim < min_similarity:
        return None
    ka, kb = set(mem.evidence), set(qry.evidence)
    ej = jaccard(ka, kb)
    if ej < min_jaccard:
        return None
    both = sorted(ka & kb)
    unchanged = tuple(k for k in both if mem.evidence[k] == qry.evidence[k])
    changed = tuple(k for k in both if mem.evidence[k] != qry.evidence[k])
    if not unchanged or not changed:
        return None
    if not any(_fmt(qry.evidence[k]) in qry.reasoning for k in changed):
        return None
    cond = "TA" if mem.answer == qry.answer else "TD-Dup"
    return Pair(cond, mem, qry, sim, ej, changed, unchanged)


def candidate_pairs(questions: list[CladderQuestion]) -> list[Pair]:
    """The best candidate per source memory and condition (C.3 step 5), every set."""
    groups: dict[tuple[str, tuple[str, str, str, int]], list[CladderQuestion]] = {}
    for q in questions:
        groups.setdefault((q.dataset, q.group), []).append(q)
    best: dict[tuple[str, str, str], Pair] = {}
    for members in groups.values():
        for mem, qry in permutations(sorted(members, key=lambda q: q.qid), 2):
            p = candidate(mem, qry)
            if p is None:
                continue
            k = (mem.dataset, mem.qid, p.condition)
            old = best.get(k)
            rank = (-p.similarity, -p.evidence_jaccard, qry.qid)
            if old is None or rank < (-old.similarity, -old.evidence_jaccard, old.query.qid):
                best[k] = p
    return sorted(best.values(), key=lambda p: (p.memory.dataset, p.condition, p.memory.qid, p.query.qid))


def build_pairs(questions: list[CladderQuestion], *, limit: int = 500, seed: int = 42) -> list[Pair]:
    """TA and TD-Dup pairs (C.3 adapted; module docstring), at most `limit` per set and condition."""
    rng = random.Random(seed)
    pool: dict[tuple[str, str], list[Pair]] = {}
    for p in candidate_pairs(questions):
        pool.setdefault((p.memory.dataset, p.condition), []).append(p)
    out: list[Pair] = []
    for key in sorted(pool):
        ps = pool[key]
        if len(ps) > limit:
            ps = sorted(rng.sample(ps, limit), key=lambda p: (p.memory.qid, p.query.qid))
        out.extend(ps)
    return out
