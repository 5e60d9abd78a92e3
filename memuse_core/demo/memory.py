"""The demo's memory systems (MemUse 4.1, A.5.2) as small deterministic stores.

* `CardCorpus`: a fixed corpus of experience cards shared by every run (no writes; its
  `memory_change` events carry no run and no origin episode). Each component has a card whose
  resolution names its helper (useful), a card that names the decoy location (misleading), and
  every mechanism has a general card.
* `Mem0Store`: per-run, repository-scoped memories extracted after each episode (with updates),
  searched with the task text for the host recall and by the agent's memory tool.
* `ProxyStore`: per-run store shared by all repositories: a persona, scene documents per recurring
  mechanism and skills distilled from earlier tasks (so a skill can cross repositories).

Every item knows what makes it relevant to a task and which memory-specific content (`hint`) an
agent that acts on it uses, so the planted truth follows from the item and the script.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from .tasks import Task, symptom_sentence
from .vocab import COMPONENTS, GENERIC_MEMORIES, MECHANISMS, PERSONA_PRINCIPLES, Component


@dataclass
class Item:
    """One memory item (current version)."""

    namespace: str
    item_id: str
    value: str
    kind: str
    """`fix`, `decoy`, `mech`, `symptom`, `generic`, `persona`, `scene`, `skill`."""
    comp: str | None = None
    mech: str | None = None
    repo: str | None = None
    version: int = 1
    origin: str | None = None
    """Episode that created the current version (None for the fixed corpus)."""
    origin_pos: int | None = None
    origin_resolved: bool | None = None
    title: str = ""
    preview: str = ""

    def relevant(self, task: Task) -> bool:
        """Whether the item applies to the task (MemUse A.2.2 "Relevance"): same component for
        fixes, symptoms and misleading cards (a wrong remedy for this failure is still relevant),
        same mechanism for mechanism cards, scenes and skills; the persona always applies."""
        if self.kind in ("fix", "decoy", "symptom"):
            return self.comp == task.comp.key
        if self.kind in ("mech", "scene", "skill"):
            return self.mech == task.comp.mechanism
        return self.kind == "persona"

    @property
    def hint(self) -> str | None:
        """The memory-specific identifier or command an agent acting on this item uses."""
        comp = _COMP.get(self.comp or "")
        mech = MECHANISMS.get(self.mech or "")
        if self.kind == "fix" and comp:
            return comp.helper.split(".")[-1]
        if self.kind == "decoy" and comp:
            return comp.decoy_func.split(".")[-1]
        if self.kind == "skill" and mech:
            return mech.check
        if self.kind == "scene" and mech:
            return mech.pattern
        if self.kind == "persona":
            return "git log -L"
        return None


_COMP = {c.key: c for c in COMPONENTS}


def uid(rng: random.Random) -> str:
    """A uuid4-looking id drawn from the generator (deterministic)."""
    h = f"{rng.getrandbits(128):032x}"
    return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-a{h[17:20]}-{h[20:32]}"


# --------------------------------------------------------------------------------------------
# MemGovern-like card corpus
# --------------------------------------------------------------------------------------------


class CardCorpus:
    """Fixed experience cards: index part (title, signals) and resolution part."""

    NAMESPACE = "memgovern:cards"

    def __init__(self, seed: int):
        rng = random.Random(f"cards:{seed}")
        self.cards: list[Item] = []
        n = 0

        def add(
            kind: str, comp: Component | None, mech: str, title: str, signals: str, resolution: str
        ) -> None:
            nonlocal n
            n += 1
            repo = (
                comp.repo
                if comp
                else rng.choice(["django", "sympy", "sphinx", "pytest", "requests", "astropy"])
            )
            cid = f"card-{repo}-{n:04d}"
            index = f"[{cid}] {title}\nSignals: {signals}"
            value = f"{index}\n{resolution}"
            self.cards.append(
                Item(
                    self.NAMESPACE,
                    cid,
                    value,
                    kind,
                    comp.key if comp else None,
                    mech,
                    repo,
                    title=title,
                    preview=index,
                )
            )

        for comp in COMPONENTS:
            mech = MECHANISMS[comp.mechanism]
            add(
                "fix",
                comp,
                comp.mechanism,
                f"{comp.func} mishandles {comp.inputs[0]} ({comp.repo})",
                f"{comp.exc} from {comp.func}; {mech.title}; reported for {comp.inputs[0]} and similar inputs "
                f"after a refactoring of {comp.file}",
                f"Root cause: {mech.summary}.\nFix strategy: {mech.remedy}; the change belongs in the helper "
                f"`{comp.helper}` that {comp.func.split('.')[-1]} delegates to, not in the caller.\n"
                f"Patch digest: {comp.file}: `{comp.helper}` now handles the case before building the result.\n"
                f"Verification: run {comp.test_file} (class {comp.test_class}).",
            )
            add(
                "decoy",
                comp,
                comp.mechanism,
                f"{comp.exc} around {comp.func.split('.')[-1]} in {comp.repo}",
                f"{comp.exc} raised near {comp.func}; same traceback shape; workaround in {comp.decoy_file}",
                f"Root cause: {comp.decoy_func} passes an unexpected value downstream.\nFix strategy: guard the "
                f"value in `{comp.decoy_func}` ({comp.decoy_file}) and coerce it before returning.\n"
                f"Patch digest: {comp.decoy_file}: early return in `{comp.decoy_func}`.\n"
                f"Verification: the original reproducer no longer raises.",
            )
        for mech in MECHANISMS.values():
            for k in range(3):
                add(
                    "mech",
                    None,
                    mech.key,
                    f"{mech.title} (case {k + 1})",
                    f"{mech.summary}; seen in several projects",
                    f"Root cause: {mech.summary}.\nFix strategy: {mech.remedy}.\nVerification: add a regression test "
                    f"for the reported input.",
                )
        self.by_comp: dict[tuple[str, str], Item] = {(c.kind, c.comp or ""): c for c in self.cards if c.comp}

    def changes(self) -> list[dict]:
        """The corpus as `memory_change` events (no run, unobserved origin)."""
        return [
            {
                "type": "memory_change",
                "v": 1,
                "namespace": c.namespace,
                "item_id": c.item_id,
                "version": "1",
                "op": "create",
                "value": c.value,
            }
            for c in self.cards
        ]

    def search(self, task: Task, rng: random.Random, force_decoy: bool) -> list[Item]:
        """Ten best-matching cards for the task's query (same repository first)."""
        fix = self.by_comp.get(("fix", task.comp.key))
        decoy = self.by_comp.get(("decoy", task.comp.key))
        picked: list[Item] = []
        if force_decoy and decoy:
            picked.append(decoy)
        if fix and rng.random() < 0.8:
            picked.insert(min(len(picked), rng.randrange(3)), fix)
        if decoy and decoy not in picked and rng.random() < 0.3:
            picked.insert(rng.randrange(len(picked) + 1), decoy)
        mechs = [c for c in self.cards if c.kind == "mech" and c.mech == task.comp.mechanism]
        if rng.random() < 0.3:
            picked.append(rng.choice(mechs))
        same = [c for c in self.cards if c.repo == task.repo and c not in picked and c.comp != task.comp.key]
        other = [c for c in self.cards if c.repo != task.repo and c not in picked and c.kind != "mech"]
        rng.shuffle(same)
        rng.shuffle(other)
        picked += same[: max(0, 7 - len(picked))]
        picked += other[: 10 - len(picked)]
        return picked[:10]


# --------------------------------------------------------------------------------------------
# Mem0-like repository-scoped memories
# --------------------------------------------------------------------------------------------


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
