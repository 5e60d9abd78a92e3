"""The fixed, ordered task sequence of the demo (MemUse 4.1 and A.5.1 "Task order").

Within each repository tasks follow pull-request order; the repositories are interleaved as a
developer moving between codebases would, by a seeded weighted merge that preserves each
repository's internal order. Every run of every configuration executes this same sequence.
"""

from __future__ import annotations

import random
import zlib
from dataclasses import dataclass

from .catalog import COMPONENTS, MECHANISMS, REPO_WEIGHTS, REPOS, Component, Mechanism


@dataclass(frozen=True)
class Task:
    """One task of the sequence."""

    position: int
    task_id: str
    repo: str
    comp: Component
    variant: int
    """Which of the component's inputs the report is about."""
    p_resolve: float
    """Per-task difficulty as the chance that an attempt resolves it."""
    text: str
    symptom: str
    """The component's canonical symptom sentence (present in the text for variant 0)."""

    @property
    def mech(self) -> Mechanism:
        return MECHANISMS[self.comp.mechanism]

    @property
    def test_id(self) -> str:
        return f"{self.comp.test_file}::{self.comp.test_class}::test_{self.comp.key.replace('-', '_')}_{self.variant}"


def symptom_sentence(comp: Component) -> str:
    """The canonical one-line symptom of a component (memories restate it; variant-0 tasks say it)."""
    return f"`{comp.func}` raises {comp.exc} for {comp.inputs[0]}."


def _task_text(comp: Component, variant: int, rng: random.Random) -> str:
    inp = comp.inputs[variant]
    short = comp.func.split(".")[-1]
    module = comp.file.removeprefix("src/").removesuffix(".py").replace("/", ".")
    line = 200 + rng.randrange(1800)
    lead = rng.choice(
        ["Since upgrading", "After the last release", "While porting our code base", "In a fresh virtualenv"]
    )
    first = symptom_sentence(comp) if variant == 0 else f"`{comp.func}` misbehaves for {inp}."
    return (
        f"{comp.func} fails for {inp}\n\n"
        f"{first} {lead}, code that worked before now fails.\n\n"
        f"To reproduce:\n\n"
        f"    >>> import {module.rsplit('.', 1)[0]}\n"
        f"    >>> # call {short} with {inp}\n"
        f"    Traceback (most recent call last):\n"
        f'      File "{comp.file}", line {line}, in {short}\n'
        f"    {comp.exc}: unexpected value for {inp}\n\n"
        f"Expected: the call handles {inp} like the documented cases and returns the usual result."
        # misleading cue: some reports already name the helper that memory would
        # supply; an agent using it follows the task, not memory (A.2.2 "None")
        + (
            f"\n\nA maintainer notes the bug is probably in `{comp.helper}`."
            if zlib.crc32(f"{comp.key}:{variant}".encode()) % 7 == 0
            else ""
        )
    )


def task_sequence(n_tasks: int, seed: int) -> list[Task]:
    """The first `n_tasks` tasks of the fixed sequence for `seed` (a prefix of longer sequences
    only up to the interleaving draw, so keep `n_tasks` fixed when comparing runs)."""
    rng = random.Random(f"tasks:{seed}")
    repos = list(REPO_WEIGHTS)
    counts = {r: max(1, round(n_tasks * REPO_WEIGHTS[r])) for r in repos}
    while sum(counts.values()) > n_tasks:
        big = max(counts, key=lambda r: counts[r])
        counts[big] -= 1
    while sum(counts.values()) < n_tasks:
        counts["django"] += 1
    by_repo = {r: [c for c in COMPONENTS if c.repo == r] for r in repos}
    streams: dict[str, list[tuple[Component, int]]] = {}
    for r in repos:
        comps = by_repo[r]
        seq = []
        seen: set[str] = set()
        for i in range(counts[r]):
            # Families recur early: the pool of active components grows slowly, so later tasks
            # meet components that earlier tasks (and their memories) already touched.
            k = min(len(comps), 2 + i // 4)
            comp = comps[i % k] if rng.random() < 0.7 else rng.choice(comps[:k])
            seq.append((comp, 0 if comp.key not in seen else rng.randrange(len(comp.inputs))))
            seen.add(comp.key)
        streams[r] = seq
    # Weighted merge that keeps each repository's own order (A.5.1).
    order: list[str] = []
    left = dict(counts)
    while any(left.values()):
        live = [r for r in repos if left[r]]
        r = rng.choices(live, weights=[left[x] for x in live])[0]
        order.append(r)
        left[r] -= 1
    taken = {r: 0 for r in repos}
    tasks = []
    for pos, r in enumerate(order):
        comp, variant = streams[r][taken[r]]
        pr = int(REPOS[r]["pr0"]) + taken[r] * 37 + rng.randrange(30)
        taken[r] += 1
        u = rng.random()
        p = 0.96 if u < 0.64 else (0.6 if u < 0.78 else 0.07)
        text = _task_text(comp, variant, rng)
        tasks.append(
            Task(pos, f"{REPOS[r]['org']}__{r}-{pr}", r, comp, variant, p, text, symptom_sentence(comp))
        )
    return tasks
