"""CLADDER premise-change memory/query pairs (MemTrim Appendix C.3, adapted to the local sample).

Source: the CLADDER sample in ../shared/data/real/cladder (questions with structured quantities,
gold answers and reasoning; the model-meta file gives each question's background text).

Construction (C.3, with the adaptations named):
1. Group questions by (story_id, graph_id, query_type, rung); only pairs inside a group.
2. Text similarity: C.3 encodes the number-masked text with a sentence encoder (cosine ≥ 0.85).
   No encoder is used here: the stand-in is the content-word Jaccard of the number-masked
   given_info + question, with the same 0.85 threshold.
3. Evidence overlap: every structured quantity of `meta.given_info` becomes a key-value entry
   (values rounded to two decimals, as the question text shows them). Adapted: the causal-graph
   edges (reasoning step1) are evidence entries too (B.4 case 3 lists the graph as shared
   evidence), which is what lets the "at least one unchanged value" condition hold on a sample
   where two questions of a group rarely repeat a number. Kept pairs have evidence-key Jaccard
   ≥ 0.8, ≥ 1 unchanged entry, ≥ 1 changed quantity, and ≥ 1 changed quantity whose value
   appears in the query's benchmark reasoning.
4. Label from the gold answers only: TA when they agree, TD-Dup when they differ.
5. Every ordered pair (memory = one question, query = the other) is a candidate; per source
   memory and condition the candidate with the highest similarity then evidence overlap is
   kept (ties by id). Adapted: a source does not need candidates for both conditions (C.3
   removes those; on this sample that would remove nearly everything). At most `limit` pairs per
   condition are then sampled with the given seed (C.3: 500, seed 42).
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

QUESTIONS_GLOB = "cladder_*generate*.json"
META_GLOB = "cladder_*meta*.json"


class CladderError(ValueError):
    """The CLADDER folder is missing or malformed (one clear line)."""


@dataclass(frozen=True)
class CladderQuestion:
    """One CLADDER question with what the pairs need."""

    qid: str
    group: tuple[str, str, str, int]
    text: str
    """Background + given information + question (what a user would have asked)."""
    answer: str
    evidence: dict[str, Any]
    reasoning: str
    masked_words: frozenset[str]


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


def _one(folder: Path, pattern: str) -> Path:
    hits = sorted(folder.glob(pattern))
    if not hits:
        raise CladderError(f"{folder}: no file matching {pattern}")
    return hits[0]


def _flatten(prefix: str, v: Any, out: dict[str, Any]) -> None:
    if isinstance(v, (list, tuple)):
        for i, x in enumerate(v):
            _flatten(f"{prefix}[{i}]", x, out)
    elif isinstance(v, float):
        out[prefix] = round(v, 2)
    else:
        out[prefix] = v


def load_questions(folder: Path) -> list[CladderQuestion]:
    """Read the questions and the model meta of the sample; raises CladderError naming the file."""
    if not folder.is_dir():
        raise CladderError(f"{folder}: CLADDER folder not found")
    qpath, mpath = _one(folder, QUESTIONS_GLOB), _one(folder, META_GLOB)
    try:
        rows = json.loads(qpath.read_text(encoding="utf-8"))
        metas = json.loads(mpath.read_text(encoding="utf-8"))
    except json.JSONDecodeError as e:
        raise CladderError(
            f"{qpath if 'rows' not in locals() else mpath}:{e.lineno}: invalid JSON: {e.msg}"
        ) from None
    background = {m.get("model_id"): m.get("background", "") for m in metas if isinstance(m, dict)}
    out = []
    for i, r in enumerate(rows):
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
                group=group,
                text=text,
                answer=answer,
                evidence=ev,
                reasoning=" ".join(str(v) for v in reasoning.values()),
                masked_words=words,
            )
        )
    return out


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


def build_pairs(questions: list[CladderQuestion], *, limit: int = 500, seed: int = 42) -> list[Pair]:
    """TA and TD-Dup pairs (C.3 adapted; module docstring), at most `limit` per condition."""
    groups: dict[tuple[str, str, str, int], list[CladderQuestion]] = {}
    for q in questions:
        groups.setdefault(q.group, []).append(q)
    best: dict[tuple[str, str], Pair] = {}
    for members in groups.values():
        for mem, qry in permutations(sorted(members, key=lambda q: q.qid), 2):
            p = candidate(mem, qry)
            if p is None:
                continue
            k = (mem.qid, p.condition)
            old = best.get(k)
            rank = (-p.similarity, -p.evidence_jaccard, qry.qid)
            if old is None or rank < (-old.similarity, -old.evidence_jaccard, old.query.qid):
                best[k] = p
    rng = random.Random(seed)
    out: list[Pair] = []
    for cond in ("TA", "TD-Dup"):
        pool = sorted(
            (p for p in best.values() if p.condition == cond), key=lambda p: (p.memory.qid, p.query.qid)
        )
        if len(pool) > limit:
            pool = sorted(rng.sample(pool, limit), key=lambda p: (p.memory.qid, p.query.qid))
        out.extend(pool)
    return out
