"""The demo's per-run memory systems (MemUse 4.1, A.5.2): `Mem0Store` (repository-scoped memories
extracted after each episode, recalled by the host and searched by the agent) and `ProxyStore`
(persona, scene documents and skills shared across repositories). See `demo.memory`."""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from .catalog import GENERIC_MEMORIES, MECHANISMS, PERSONA_PRINCIPLES
from .memory import Item, uid
from .tasks import Task, symptom_sentence


@dataclass
class Mem0Store:
    """Per-run memories in repository scopes (`mem0:repo/<repo>`)."""

    run_id: str
    rng: random.Random
    items: dict[str, list[Item]] = field(default_factory=dict)

    def scope(self, repo: str) -> str:
        return f"mem0:repo/{repo}"

    def recall(self, task: Task, limit_chars: int = 3600) -> list[Item]:
        """Host task recall: the repository scope ranked against the task text, capped in size."""
        pool = list(self.items.get(task.repo, []))
        ranked = sorted(
            pool,
            key=lambda it: (
                -(it.comp == task.comp.key) * 2 - (it.mech == task.comp.mechanism),
                -(it.origin_pos or 0),
            ),
        )
        out, size = [], 40
        for it in ranked:
            if size + len(it.value) + 3 > limit_chars:
                continue
            out.append(it)
            size += len(it.value) + 3
        return out

    def tool_search(self, task: Task, recalled: list[Item]) -> list[Item]:
        """The agent's own search: mostly what the recall already showed, plus a few others."""
        pool = self.items.get(task.repo, [])
        if not pool:
            return []
        copies = [it for it in recalled if it.comp == task.comp.key or self.rng.random() < 0.3][:3]
        extra = [it for it in pool if it not in recalled]
        self.rng.shuffle(extra)
        return copies + extra[: self.rng.randrange(0, 3)]

    def agent_add(self, task: Task, episode_id: str) -> Item:
        """A memory the agent saves with its memory tool (repository scope)."""
        comp = task.comp
        it = Item(
            self.scope(task.repo),
            uid(self.rng),
            f"Progress note from {task.task_id}: the {comp.exc} was reproduced before any edit.",
            "note",
            comp.key,
            None,
            task.repo,
            origin=episode_id,
            origin_pos=task.position,
        )
        self.items.setdefault(task.repo, []).append(it)
        return it

    def extract(
        self, task: Task, episode_id: str, found_helper: bool, resolved: bool | None
    ) -> list[tuple[str, Item]]:
        """Memories extracted from the finished episode's conversation: (op, item) pairs."""
        comp, repo = task.comp, task.repo
        scope = self.items.setdefault(repo, [])
        ops: list[tuple[str, Item]] = []
        existing = {(it.kind, it.comp): it for it in scope}
        if ("symptom", comp.key) not in existing:
            it = Item(
                self.scope(repo),
                uid(self.rng),
                symptom_sentence(comp),
                "symptom",
                comp.key,
                comp.mechanism,
                repo,
                origin=episode_id,
                origin_pos=task.position,
                origin_resolved=resolved,
            )
            scope.append(it)
            ops.append(("create", it))
        if found_helper:
            text = (
                f"In {repo}, failures of {comp.func} for inputs like {comp.inputs[task.variant]} come from "
                f"`{comp.helper}` in {comp.file}; {MECHANISMS[comp.mechanism].remedy}."
            )
            old = existing.get(("fix", comp.key))
            if old is None:
                it = Item(
                    self.scope(repo),
                    uid(self.rng),
                    text,
                    "fix",
                    comp.key,
                    comp.mechanism,
                    repo,
                    origin=episode_id,
                    origin_pos=task.position,
                    origin_resolved=resolved,
                )
                scope.append(it)
                ops.append(("create", it))
            elif old.value != text:
                old.value, old.version = text, old.version + 1
                old.origin, old.origin_pos, old.origin_resolved = episode_id, task.position, resolved
                ops.append(("update", old))
        if self.rng.random() < 0.8:
            it = Item(
                self.scope(repo),
                uid(self.rng),
                f"Worked on {task.task_id}; the change went to {comp.file}.",
                "note",
                comp.key,
                None,
                repo,
                origin=episode_id,
                origin_pos=task.position,
                origin_resolved=resolved,
            )
            scope.append(it)
            ops.append(("create", it))
        if self.rng.random() < 0.5:
            text = self.rng.choice(GENERIC_MEMORIES)
            if all(it.value != text for it in scope):
                it = Item(
                    self.scope(repo),
                    uid(self.rng),
                    text,
                    "generic",
                    None,
                    None,
                    repo,
                    origin=episode_id,
                    origin_pos=task.position,
                    origin_resolved=resolved,
                )
                scope.append(it)
                ops.append(("create", it))
        if len(scope) > 40 and self.rng.random() < 0.5:
            victim = next((it for it in scope if it.kind in ("generic", "note")), None)
            if victim is not None:
                scope.remove(victim)
                ops.append(("delete", victim))
        return ops


# --------------------------------------------------------------------------------------------
# TencentDB-like proxy memory
# --------------------------------------------------------------------------------------------


@dataclass
class ProxyStore:
    """Per-run persona, scenes and skills shared by all repositories."""

    run_id: str
    rng: random.Random
    persona: Item | None = None
    scenes: dict[str, Item] = field(default_factory=dict)
    skills: dict[str, Item] = field(default_factory=dict)
    heat: dict[str, int] = field(default_factory=dict)
    seen: dict[str, list[str]] = field(default_factory=dict)

    def skill_name(self, mech: str) -> str:
        return f"fix-{mech}"

    def catalog_line(self, it: Item) -> str:
        return f"- {it.title}: {it.preview}"

    def extract(self, task: Task, episode_id: str, resolved: bool | None) -> list[tuple[str, Item]]:
        ops: list[tuple[str, Item]] = []
        mech = MECHANISMS[task.comp.mechanism]
        where = f"{task.repo}:{task.comp.key}"
        self.seen.setdefault(mech.key, [])
        if where not in self.seen[mech.key]:
            self.seen[mech.key].append(where)
        self.heat[mech.key] = self.heat.get(mech.key, 0) + 1

        def put(
            store: dict[str, Item], key: str, ns: str, kind: str, value: str, title: str, preview: str
        ) -> None:
            old = store.get(key)
            if old is None:
                it = Item(
                    ns,
                    key,
                    value,
                    kind,
                    None,
                    mech.key,
                    task.repo,
                    origin=episode_id,
                    origin_pos=task.position,
                    origin_resolved=resolved,
                    title=title,
                    preview=preview,
                )
                store[key] = it
                ops.append(("create", it))
            elif old.value != value:
                old.value, old.version, old.preview, old.repo = value, old.version + 1, preview, task.repo
                old.origin, old.origin_pos, old.origin_resolved = episode_id, task.position, resolved
                ops.append(("update", old))

        name = self.skill_name(mech.key)
        put(
            self.skills,
            name,
            "tdai:skills",
            "skill",
            f"---\nname: {name}\ndescription: {mech.title}\n---\n## When\n{mech.summary}.\n## Steps\n"
            f"1. Reproduce with the reported input.\n2. Run the check `{mech.check}` to confirm the mechanism.\n"
            f"3. {mech.remedy[0].upper() + mech.remedy[1:]}.\n4. Re-run the narrow test module.\n"
            f"Learned from: {', '.join(self.seen[mech.key][:4])}",
            name,
            f"procedure for {mech.title}",
        )
        if self.heat[mech.key] >= 2:
            put(
                self.scenes,
                f"scenes/{mech.key}.md",
                "tdai:scenes",
                "scene",
                f"# {mech.title}\nRecurring problem type seen in {', '.join(self.seen[mech.key][:5])}.\n"
                f'Typical cause: {mech.summary}.\nLocate candidates with: grep -rn "{mech.pattern}" --include=*.py .\n',
                f"scenes/{mech.key}.md",
                f"heat {self.heat[mech.key]}: {mech.title}",
            )
        n_principles = min(len(PERSONA_PRINCIPLES), 3 + task.position // 6)
        persona = "Working principles for this developer's coding tasks:\n" + "\n".join(
            f"- {p}" for p in PERSONA_PRINCIPLES[:n_principles]
        )
        if self.persona is None:
            self.persona = Item(
                "tdai:persona",
                "persona",
                persona,
                "persona",
                origin=episode_id,
                origin_pos=task.position,
                origin_resolved=resolved,
            )
            ops.append(("create", self.persona))
        elif self.persona.value != persona:
            p = self.persona
            p.value, p.version, p.origin, p.origin_pos, p.origin_resolved = (
                persona,
                p.version + 1,
                episode_id,
                task.position,
                resolved,
            )
            ops.append(("update", p))
        return ops
