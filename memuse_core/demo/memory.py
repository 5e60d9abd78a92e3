"""The demo's memory items and its first memory system (MemUse 4.1, A.5.2); the other two are
`demo.stores`.

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
from dataclasses import dataclass

from .catalog import COMPONENTS, MECHANISMS, Component
from .tasks import Task


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
        comp = COMPONENT_BY_KEY.get(self.comp or "")
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


COMPONENT_BY_KEY = {c.key: c for c in COMPONENTS}


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
                f"after a refactoring of {comp.file}"
                # misleading cue: half of the previews already name the helper, so a judge
                # that credits any sight of the hint to the preview is told apart from one that
                # assigns shared content to the full read the preview selects (A.2.2)
                + (f" (fixed in `{comp.helper}`)" if len(comp.key) % 2 == 0 else ""),
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
