"""Runs of the four demo configurations over the fixed task sequence, written as event logs.

One JSON Lines file per run (plus one for the shared card corpus), so `ingest_path` imports each
run in one transaction; the planted truth goes to `planted_truth.jsonl` beside the `events/`
folder. Episodes are generated one at a time and written as they are produced, so memory stays
constant however many episodes are asked for.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .acting import act
from .agent import Script
from .consult import consult_cards, consult_mem0, consult_proxy, mem0_tool_add, mem0_tool_search, proxy_reads
from .emit import EpisodeEmitter
from .memory import CardCorpus
from .plan import SYSTEM, SYSTEM_EXTRA, Episode
from .stores import Mem0Store, ProxyStore
from .tasks import Task, task_sequence

CONFIGS = ("cards", "mem0", "proxy", "baseline")
"""The four configurations (MemUse 4.1): agent-directed card search, host task recall + memory
tool, proxy-injected persona/scenes/skills, and a no-memory baseline."""

LABELS = {
    "cards": "Experience-card search (MemGovern-like)",
    "mem0": "Task recall + memory tool (Mem0-like)",
    "proxy": "Proxy persona/scenes/skills (TencentDB-like)",
    "baseline": "No memory",
}
T0 = 1764460800.0
"""Demo clock start (2025-11-30 00:00 UTC); every timestamp derives from it."""


@dataclass
class DemoPlan:
    """What to generate."""

    episodes: int = 120
    """Total episodes over all runs of all configurations."""
    seed: int = 7
    runs: int = 2
    """Runs per configuration."""
    mean_steps: int = 40
    configs: tuple[str, ...] = CONFIGS

    @property
    def tasks_per_run(self) -> int:
        return max(1, round(self.episodes / (len(self.configs) * self.runs)))


@dataclass
class RunSummary:
    run_id: str
    config: str
    path: Path
    episodes: int = 0
    resolved: int = 0
    cost: float = 0.0


@dataclass
class DemoFiles:
    """The files a generation wrote."""

    out: Path
    event_files: list[Path] = field(default_factory=list)
    truth_file: Path | None = None
    runs: list[RunSummary] = field(default_factory=list)
    truth_rows: int = 0


def _harm_tasks(tasks: list[Task]) -> set[int]:
    """Tasks on which the misleading card is always read and followed: a card that harms the same
    task in every run (MemUse A.6.6: a Django card and a SymPy card)."""
    repos = ("django", "sympy")
    out: dict[str, int] = {}
    for t in tasks:
        if t.repo in repos and t.repo not in out and t.variant == 0:
            out[t.repo] = t.position
    if not out and tasks:  # a tiny sequence without either repository
        out["first"] = tasks[0].position
    return set(out.values())


def _failed_origin_pair(tasks: list[Task]) -> tuple[int, int] | None:
    """(earlier, later) positions of two tasks on one component: in the first recall run the earlier
    attempt fails but leaves a memory that the later task acts on with benefit (MemUse A.6.6)."""
    first: dict[str, int] = {}
    for t in tasks:
        if t.comp.key in first:
            return first[t.comp.key], t.position
        first[t.comp.key] = t.position
    return None


def generate(plan: DemoPlan, out: Path, *, progress: Callable[[int], None] | None = None) -> DemoFiles:
    """Write the demo's event logs and planted truth under `out` (see module docstring)."""
    out = Path(out)
    ev_dir = out / "events"
    ev_dir.mkdir(parents=True, exist_ok=True)
    files = DemoFiles(out)
    tasks = task_sequence(plan.tasks_per_run, plan.seed)
    harm = _harm_tasks(tasks)
    pair = _failed_origin_pair(tasks)
    corpus = CardCorpus(plan.seed)
    if "cards" in plan.configs:
        p = ev_dir / "00-card-corpus.jsonl"
        with open(p, "w", encoding="utf-8") as f:
            for ev in corpus.changes():
                f.write(json.dumps(ev, ensure_ascii=False, separators=(",", ":")) + "\n")
        files.event_files.append(p)
    truth_path = out / "planted_truth.jsonl"
    n = 1
    with open(truth_path, "w", encoding="utf-8") as tf:
        for config in plan.configs:
            for r in range(1, plan.runs + 1):
                run_id = f"{config}-r{r}"
                path = ev_dir / f"{n:02d}-{run_id}.jsonl"
                n += 1
                summary = RunSummary(run_id, config, path)
                with open(path, "w", encoding="utf-8", buffering=1 << 20) as f:
                    _write_run(
                        plan, config, r, run_id, tasks, harm, pair, corpus, f.write, tf, summary, progress
                    )
                files.event_files.append(path)
                files.runs.append(summary)
    files.truth_file = truth_path
    files.truth_rows = sum(1 for _ in open(truth_path, encoding="utf-8"))
    return files


def _write_run(
    plan: DemoPlan,
    config: str,
    r: int,
    run_id: str,
    tasks: list[Task],
    harm: set[int],
    pair: tuple[int, int] | None,
    corpus: CardCorpus,
    write: Callable[[str], Any],
    tf: Any,
    summary: RunSummary,
    progress: Callable[[int], None] | None,
) -> None:
    write(
        json.dumps(
            {
                "type": "run",
                "v": 1,
                "run_id": run_id,
                "config": config,
                "label": f"{LABELS[config]}, run {r}",
                "agent": "mini-swe-agent 2.4.6",
                "model": "gpt-6-luna",
                "meta": {"demo": True, "seed": plan.seed, "run": r},
            },
            separators=(",", ":"),
        )
        + "\n"
    )
    mem0 = Mem0Store(run_id, random.Random(f"{plan.seed}:{run_id}:store"))
    proxy = ProxyStore(run_id, random.Random(f"{plan.seed}:{run_id}:store"))
    t0 = T0 + (r - 1) * 86400 * 3
    cross_done = False
    for task in tasks:
        rng = random.Random(f"{plan.seed}:{run_id}:{task.position}")
        eid = f"{run_id}:{task.task_id}"
        em = EpisodeEmitter(
            write,
            eid,
            run_id,
            task.task_id,
            task.position,
            task.repo,
            task.text,
            SYSTEM + SYSTEM_EXTRA[config],
            t0 + task.position * 1500.0,
        )
        showcase = None
        if config == "mem0" and r == 1 and pair is not None and task.position in pair:
            showcase = "origin" if task.position == pair[0] else "use"
        if config == "proxy" and r == 1 and not cross_done:
            showcase = "cross"
        ep = _episode(plan, config, task, rng, em, corpus, mem0, proxy, harm, r, showcase)
        cross_done = cross_done or ep.cross
        for row in ep.truth:
            tf.write(json.dumps(row, ensure_ascii=False) + "\n")
        summary.episodes += 1
        summary.resolved += int(ep.resolved)
        summary.cost += ep.cost
        if progress is not None:
            progress(1)


def _episode(
    plan: DemoPlan,
    config: str,
    task: Task,
    rng: random.Random,
    em: EpisodeEmitter,
    corpus: CardCorpus,
    mem0: Mem0Store,
    proxy: ProxyStore,
    harm: set[int],
    run_no: int,
    showcase: str | None = None,
) -> Episode:
    """One episode: outcome from the task's difficulty, then explore, reproduce, consult memory (per
    configuration), act on the planted uses, fix, fill up to the step budget, submit; afterwards the
    memory system's extraction. `showcase` forces one of the findings the small demo must show."""
    s = Script(em, task, rng, config)
    s.line = 120 + rng.randrange(1500)
    s.n_tests = 8 + rng.randrange(60)
    resolved = rng.random() < task.p_resolve
    harm_card = config == "cards" and task.position in harm
    if harm_card and run_no == 1:
        resolved = True  # harmful use inside a successful episode (MemUse 4.3)
    if showcase == "origin":
        resolved = False  # a failed attempt whose memory later helps (MemUse A.6.6)
        s.force = "discover"
    elif showcase == "use":
        s.force = "act"
    elif showcase == "cross":
        # Until a cross-repository skill gets used: that use helps, yet the episode fails
        # (beneficial use inside a failed episode, MemUse 4.3).
        s.force = "cross"
    limits = not resolved and rng.random() < 0.25 and showcase is None
    target = max(14, min(3 * plan.mean_steps, int(rng.gauss(plan.mean_steps, plan.mean_steps * 0.35))))
    u = rng.random()
    if config != "baseline" and u < 0.035:
        s.broken = "missing_proof" if rng.random() < 0.5 else "duplicate"
    # Both kinds of broken recording appear even in a small demo (second runs, early tasks).
    if run_no == 2 and (config, task.position) in (("cards", 1), ("mem0", 2)):
        s.broken = "missing_proof" if config == "cards" else "duplicate"
    if config == "mem0":
        consult_mem0(s, mem0, harm=rng.random() < 0.04)
    elif config == "proxy":
        consult_proxy(s, proxy)
        if not s.proxy_reads:
            s.broken = None
    s.explore()
    s.reproduce()
    used = em.n_steps
    fill_a = max(0, int((target - used - 10) * (0.15 if config == "cards" else 0.4)))
    s.filler(fill_a)
    if config == "cards":
        consult_cards(s, corpus, harm_card)
    elif config == "mem0":
        if s.broken or rng.random() < 0.4:
            mem0_tool_search(s, mem0)
        for d in s.decisions:
            if d.key == "recall" and d.influence == "referenced":
                hint = d.item.hint
                s.mention(
                    d,
                    # misleading cue: the mention names the hint, which no action uses
                    f"The memory points at `{hint}`; I may look at that later, but the traceback "
                    "decides what to change."
                    if hint
                    else f'The memory "{d.item.value[:44]}..." is noted, but the traceback decides what to change.',
                )
    elif config == "proxy":
        ref = s.persona_ref
        if ref is not None:
            s.mention(ref, "Following the working principles: reproduce first, then the smallest fix.")
        proxy_reads(s)
        if s.cross_item is not None:
            resolved = False
    for use in s.uses:
        act(s, use)
    s.own_fix(resolved)
    rest = max(0, target - em.n_steps - 2)
    b1 = rest // 2
    s.filler(b1)
    if u > 0.93:
        _rewrite_or_retract(s, rng)
    s.filler(rest - b1)
    if config == "mem0" and rng.random() < 0.1:
        mem0_tool_add(s, mem0)
    submission = s.submit(resolved, limits)
    ops: list[tuple[str, Any]] = []
    if config == "mem0":
        ops = mem0.extract(task, em.episode_id, s.found_helper, resolved)
        if ops:
            em.memory_call(
                f"{em.episode_id}:x1", _conversation(s), "\n".join(f"{op}: {it.value}" for op, it in ops)
            )
    elif config == "proxy":
        ops = proxy.extract(task, em.episode_id, resolved)
        em.memory_call(f"{em.episode_id}:x1", _conversation(s), "scene and persona candidates")
        if ops:
            em.memory_call(
                f"{em.episode_id}:x2", _conversation(s), "\n".join(f"{op}: {it.item_id}" for op, it in ops)
            )
    em.finish(resolved, "LimitsExceeded" if limits else "Submitted", submission)
    for op, it in ops:
        ev: dict[str, Any] = {
            "type": "memory_change",
            "v": 1,
            "namespace": it.namespace,
            "item_id": it.item_id,
            "version": str(it.version),
            "op": op,
            "episode_id": em.episode_id,
            "run_id": em.run_id,
            "op_ref": f"{em.episode_id}:x{2 if config == 'proxy' else 1}",
            "at": round(em._clock + 30.0, 3),
        }
        if op != "delete":
            ev["value"] = it.value
        em.emit(ev)
    truth = []
    broken = s.broken is not None
    for d in s.decisions:
        ids = em.delivered.get(d.key)
        if ids:
            truth.append(d.row(em.episode_id, ids[0], broken))
    return Episode(truth, resolved, s.found_helper, em.cost, s.cross_item is not None)


def _rewrite_or_retract(s: Script, rng: random.Random) -> None:
    c = s.task.comp
    if rng.random() < 0.5:
        s.bash(
            "Let me dump the whole module to read it at once.",
            f"cat {c.file}",
            "\n".join(f"# line {i}: " + "x = compute(value)  # ..." for i in range(120)),
        )
        n = len(s.em.history)
        s.filler(1)
        # The harness drops the oversized dump from the history (positions in the last input).
        s.em.retract([n - 2, n - 1])
    else:
        s.em.rewrite(
            2,
            f"Summary of the work so far: reproduced the failure of {c.func}, inspected {c.file} "
            f"and ran {c.test_file}. Continue from here.",
        )


def _conversation(s: Script) -> str:
    """The user and assistant text of the episode (no tool outputs), as extraction sees it."""
    parts = [f"user: {s.task.text[:400]}"]
    for m in s.em.history[2:]:
        if m.get("role") == "assistant" and m.get("content"):
            parts.append(f"assistant: {m['content']}")
    return "\n".join(parts)[-6000:]
