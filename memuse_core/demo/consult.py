"""Configuration-specific memory consultation of the scripted agent (MemUse 4.1, A.5.2).

* cards: an experience-card search after reproducing the issue (ten previews, some clipped; now
  and then an empty search first), then full reads of the selected cards;
* mem0: the host task recall in the system message (restated on every call) and, sometimes, the
  agent's own memory-tool search, whose results mostly copy entries the recall already shows;
* proxy: persona, scene index and skill catalog in every call; the agent opens skills and scenes
  with `cat` after selecting them from the catalog or index.

Each function records the planted decision of every delivered entry on the `Script`.
"""

from __future__ import annotations

import json

from .agent import Script
from .event_dicts import entry_dict
from .memory import CardCorpus, Item
from .plan import Use, pick_effect
from .shell import short
from .stores import Mem0Store, ProxyStore


def _clip(text: str, n: int = 220) -> str:
    return text if len(text) <= n else text[:n] + "..."


def consult_cards(s: Script, corpus: CardCorpus, harm_card: bool) -> None:
    """Agent-directed card search: one search (sometimes an empty one first), then full reads."""
    em, rng, task = s.em, s.rng, s.task
    c = task.comp
    query = f"{short(c.func)} {c.exc} {c.inputs[task.variant]}"
    if rng.random() < 0.12:
        q0 = f"{task.repo} {c.exc} {c.inputs[task.variant]} regression after refactoring"
        sid = em.search("agent", q0, "memgovern", [])
        out = f'exp_search: no experience cards matched "{q0}".'
        s.bash(
            "Before editing, let me look for earlier experience with this failure.",
            f'exp_search "{q0}"',
            out,
            tool="exp_search",
            args={"query": q0},
            memory=("search0", [], "search_preview", sid),
        )
    cards = corpus.search(task, rng, force_decoy=harm_card)
    sid = em.search(
        "agent",
        query,
        "memgovern",
        [
            {
                "namespace": it.namespace,
                "item_id": it.item_id,
                "version": "1",
                "value": it.preview,
                "score": round(0.9 - 0.04 * i, 3),
            }
            for i, it in enumerate(cards)
        ],
    )
    lines, entries = [], []
    for i, it in enumerate(cards):
        lines.append(f"{i + 1}. {_clip(it.preview)}")
        entries.append(entry_dict(it.namespace, it.item_id, it.preview, scheme="card-id", rank=i + 1))
    out = f'Found {len(cards)} experience cards for "{query}":\n' + "\n".join(lines)
    s.bash(
        "Let me search the experience cards before editing.",
        f'exp_search "{query}"',
        out,
        tool="exp_search",
        args={"query": query},
        memory=("search", entries, "search_preview", sid),
        proof=s.broken != "missing_proof",
    )
    # Which previews lead to full reads (selection), and what the full reads do.
    reads: list[tuple[Item, str, str | None]] = []
    for it in cards:
        if it.kind == "fix" and it.comp == c.key and rng.random() < 0.5:
            planned = pick_effect(rng, 0.82, 0.12, 0.03)
            reads.append((it, "acted_on" if rng.random() < 0.7 else "none", planned))
        elif it.kind == "decoy" and it.comp == c.key and (harm_card or rng.random() < 0.07):
            reads.append((it, "acted_on" if harm_card or rng.random() < 0.5 else "referenced", "harmed"))
        elif rng.random() < 0.06:
            reads.append((it, "referenced" if rng.random() < 0.3 else "none", None))
    read_ids = {it.item_id for it, _, _ in reads}
    pdec = {}
    for i, it in enumerate(cards):
        clipped = len(it.preview) > 220
        pdec[it.item_id] = s.decide(
            "search",
            i,
            it,
            "search_preview",
            "selected" if it.item_id in read_ids else "none",
            note=("clipped preview; " if clipped else "")
            + ("selected for a full read" if it.item_id in read_ids else ""),
        )
        if it.item_id not in read_ids and it.hint:
            s.blocked.add(it.hint)
    for n, (it, infl, eff) in enumerate(reads):
        out = it.value
        placed: str | None = None
        if s.broken == "duplicate" and n == 0:
            out = it.value + "\n\n(retrying: output repeated)\n\n" + it.value
            placed = it.value
        step = s.bash(
            f"Card {it.item_id} looks related; let me read it in full.",
            f"exp_read {it.item_id}",
            out,
            tool="exp_read",
            args={"card_id": it.item_id},
            memory=(
                f"read{n}",
                [entry_dict(it.namespace, it.item_id, it.value, scheme="card-id")],
                "full_card",
                None,
            ),
            placed=placed,
        )
        pdec[it.item_id].anchor_step = step
        d = s.decide(f"read{n}", 0, it, "full_card", infl, novelty="novel")
        if infl == "acted_on":
            d.effect = eff
            s.uses.append(Use(d, "fix" if it.kind == "fix" else "decoy"))
        elif infl == "referenced":
            s.mention(
                d,
                f"Card {it.item_id} ({it.title}) does not match what the reproducer shows; I won't follow it.",
            )


def consult_mem0(s: Script, store: Mem0Store, harm: bool) -> None:
    """Host task recall (system message, every call) plus an occasional agent memory search."""
    em, rng, task = s.em, s.rng, s.task
    recalled = store.recall(task)
    em.embedding_call(f"{em.episode_id}:s{em.n_searches + 1}", task.text)
    sid = em.search(
        "host",
        task.text,
        store.scope(task.repo),
        [
            {
                "namespace": it.namespace,
                "item_id": it.item_id,
                "version": str(it.version),
                "value": it.value,
                "score": round(0.8 - 0.05 * i, 3),
            }
            for i, it in enumerate(recalled)
        ],
    )
    if recalled:
        text = "User Memories:\n" + "\n".join(f"- {it.value}" for it in recalled)
        em.host_block(
            "recall",
            text,
            [
                entry_dict(it.namespace, it.item_id, it.value, version=str(it.version), scheme="mem0-uuid")
                for it in recalled
            ],
            "task_recall",
            sid,
        )
        for i, it in enumerate(recalled):
            infl = "none"
            if it.kind == "fix" and it.comp == task.comp.key:
                infl = "acted_on" if rng.random() < 0.42 else ("referenced" if rng.random() < 0.3 else "none")
                if s.force == "act":
                    infl, harm = "acted_on", False
            elif it.relevant(task) and rng.random() < 0.15:
                infl = "referenced"
            d = s.decide("recall", i, it, "task_recall", infl)
            if infl == "acted_on":
                d.effect = "harmed" if harm else pick_effect(rng, 0.8, 0.15, 0.0)
                if s.force == "act":
                    d.effect = "improved"
                s.uses.append(Use(d, "fix"))
                if d.effect == "harmed":
                    d.note = "stale memory: the helper no longer covers this case"
            if it.origin:
                d.note = (
                    d.note + "; " if d.note else ""
                ) + f"written by {it.origin} (resolved={it.origin_resolved})"
    s.recalled = recalled


def mem0_tool_search(s: Script, store: Mem0Store) -> None:
    em, task = s.em, s.task
    recalled = s.recalled
    results = store.tool_search(task, recalled)
    query = f"{short(task.comp.func)} {task.comp.exc}"
    em.embedding_call(f"{em.episode_id}:s{em.n_searches + 1}", query)
    sid = em.search(
        "agent",
        query,
        store.scope(task.repo),
        [
            {
                "namespace": it.namespace,
                "item_id": it.item_id,
                "version": str(it.version),
                "value": it.value,
                "score": round(0.6 - 0.07 * i, 3),
            }
            for i, it in enumerate(results)
        ],
    )
    payload = {
        "results": [
            {"id": it.item_id, "memory": it.value, "score": round(0.6 - 0.07 * i, 3)}
            for i, it in enumerate(results)
        ]
    }
    out = json.dumps(payload, ensure_ascii=False, indent=1)
    placed = None
    if s.broken == "duplicate":
        placed = out
        out = out + "\n" + out
    s.bash(
        "Let me search my memory for this failure.",
        f'mem0_memory search "{query}"',
        out,
        tool="mem0_memory",
        args={"action": "search", "query": query},
        memory=(
            "msearch",
            [
                entry_dict(it.namespace, it.item_id, it.value, version=str(it.version), scheme="mem0-uuid")
                for it in results
            ],
            "search_result",
            sid,
        ),
        placed=placed,
        proof=s.broken != "missing_proof",
    )
    for i, it in enumerate(results):
        is_copy = it in recalled
        s.decide(
            "msearch",
            i,
            it,
            "search_result",
            "none",
            novelty="redundant" if is_copy else None,
            copy=is_copy,
            note="copy of an entry visible in the task recall" if is_copy else "",
        )


def mem0_tool_add(s: Script, store: Mem0Store) -> None:
    """The agent saves a memory itself during the episode (a `memory_change` with its origin)."""
    em, task = s.em, s.task
    it = store.agent_add(task, em.episode_id)
    em.embedding_call(f"{em.episode_id}:a1", it.value)
    s.bash(
        "Let me save what I learned for later tasks.",
        f'mem0_memory add "{it.value}"',
        json.dumps({"results": [{"id": it.item_id, "memory": it.value, "event": "ADD"}]}, ensure_ascii=False),
        tool="mem0_memory",
        args={"action": "add", "content": it.value},
    )
    em.emit(
        {
            "type": "memory_change",
            "v": 1,
            "namespace": it.namespace,
            "item_id": it.item_id,
            "version": "1",
            "op": "create",
            "value": it.value,
            "episode_id": em.episode_id,
            "run_id": em.run_id,
            "op_ref": f"{em.episode_id}:a1",
            "at": round(em._clock, 3),
        }
    )


def consult_proxy(s: Script, store: ProxyStore) -> None:
    """Persona, scene index and skill catalog in every call; the agent opens skills and scenes."""
    em, rng, task = s.em, s.rng, s.task
    mech = task.comp.mechanism
    if store.persona is not None:
        p = store.persona
        em.host_block(
            "persona",
            f"<user-persona>\n{p.value}\n</user-persona>",
            [entry_dict(p.namespace, p.item_id, p.value, version=str(p.version), scheme="tdai-id")],
            "persona",
        )
        u = rng.random()
        infl = "acted_on" if u < 0.04 else ("referenced" if u < 0.15 else "none")
        if "git log -L" not in p.value and infl == "acted_on":
            infl = "referenced"
        d = s.decide("persona", 0, p, "persona", infl)
        if infl == "acted_on":
            d.effect = "undetermined"
            s.uses.append(Use(d, "history"))
        elif infl == "referenced":
            s.persona_ref = d
    scenes = sorted(store.scenes.values(), key=lambda it: -store.heat.get(it.mech or "", 0))[:5]
    if scenes:
        lines = [f"{it.item_id} ({it.preview})" for it in scenes]
        em.host_block(
            "scenes",
            "<scene-navigation>\n" + "\n".join(f"- {ln}" for ln in lines) + "\n</scene-navigation>",
            [
                entry_dict(it.namespace, it.item_id, ln, version=str(it.version), scheme="tdai-path")
                for it, ln in zip(scenes, lines)
            ],
            "scene_index",
        )
    skills = list(store.skills.values())[-10:]
    if skills:
        lines = [f"{it.item_id}: {it.preview}" for it in skills]
        em.host_block(
            "skills",
            "<available_skills>\n" + "\n".join(f"- {ln}" for ln in lines) + "\n</available_skills>",
            [
                entry_dict(it.namespace, it.item_id, ln, version=str(it.version), scheme="tdai-skill")
                for it, ln in zip(skills, lines)
            ],
            "skill_catalog",
        )
    s.proxy_reads = []
    for i, it in enumerate(scenes):
        sel = it.mech == mech and rng.random() < 0.3
        d = s.decide("scenes", i, it, "scene_index", "selected" if sel else "none", novelty="novel")
        if sel:
            s.proxy_reads.append((d, it, "scene_content"))
    for i, it in enumerate(skills):
        sel = (it.mech == mech and rng.random() < 0.55) or rng.random() < 0.04
        if s.force == "cross" and it.mech == mech and it.repo != task.repo:
            sel, s.cross_item = True, it  # a skill from another repository that helps here (A.6.6)
        d = s.decide("skills", i, it, "skill_catalog", "selected" if sel else "none", novelty="novel")
        if it.origin and it.repo != task.repo:
            d.note = f"cross-repository item from {it.origin}"
        if sel:
            s.proxy_reads.append((d, it, "full_skill"))


def proxy_reads(s: Script) -> None:
    rng, task = s.rng, s.task
    for n, (sel, it, form) in enumerate(s.proxy_reads):
        path = it.item_id if form == "scene_content" else f"skills/{it.item_id}.md"
        out, placed = it.value, None
        if s.broken == "duplicate" and n == 0:
            out, placed = it.value + "\n" + it.value, it.value
        step = s.bash(
            f"Let me open {path}.",
            f"cat {path}",
            out,
            memory=(
                f"pread{n}",
                [
                    entry_dict(
                        it.namespace,
                        it.item_id,
                        it.value,
                        version=str(it.version),
                        scheme="tdai-skill" if form == "full_skill" else "tdai-path",
                    )
                ],
                form,
                None,
            ),
            placed=placed,
            proof=not (s.broken == "missing_proof" and n == 0),
        )
        sel.anchor_step = step
        relevant = it.mech == task.comp.mechanism
        infl = "none"
        if relevant and rng.random() < (0.5 if form == "full_skill" else 0.35):
            infl = "acted_on"
        cross = s.force == "cross" and it is s.cross_item
        if cross:
            infl = "acted_on"
        d = s.decide(f"pread{n}", 0, it, form, infl, novelty="novel")
        if it.origin and it.repo != task.repo:
            d.note = f"cross-repository item from {it.origin} ({it.repo})"
        elif it.origin:
            d.note = f"written by {it.origin}"
        if infl == "acted_on":
            d.effect = "improved" if cross else pick_effect(rng, 0.6, 0.3, 0.03)
            s.uses.append(Use(d, "check" if form == "full_skill" else "pattern"))
