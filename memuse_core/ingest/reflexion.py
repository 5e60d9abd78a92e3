"""Reflexion run logs: ALFWorld trial results (`env_results_trial_<n>.json`) and programming runs
(`*_reflexion_*.jsonl`, one problem per line).

These logs are not model-call logs: they keep, per task, the reflections (the memory Reflexion
writes after a failed trial and shows to later trials as `Your memory for the task below:` /
`Trial <i>:`), the outcome, and for programming runs the prompt and final solution. The importer
records what is there and nothing more:

* one run per file, one episode per task (task id = environment or problem name), outcome from
  `is_success` / `is_solved`, submission = the final solution when present;
* each reflection is a memory item (namespace `reflexion:<task>`, id `trial-<i>`); for ALFWorld
  the reflections come from earlier trials that this log does not hold (origin unobserved); for
  programming runs they were written during this episode;
* the reflections a trial was given are one `memory_delivery` (form `reflection`, route `host`)
  with one entry per reflection; it is unbound (no consuming call, no placement), because the
  prompts are not in the log. Such deliveries are listed but cannot be judged (unassessable).

No model calls exist, so episodes have no steps; ALFWorld tasks with no reflection get no
delivery. The file is read whole (ALFWorld) or line by line (programming runs).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ..events import (
    Entry,
    EpisodeEnd,
    EpisodeStart,
    Event,
    MemoryChange,
    MemoryDelivery,
    RunEvent,
    text_digest,
)
from .base import IngestError, read_head, register
from .common import (
    Fields,
    guarded,
    iter_lines,
    load_json,
    looks_native,
    parse_json,
    run_config,
    safe_id,
    stem,
)


class ReflexionImporter:
    """Reflexion ALFWorld trial logs and programming-run JSON Lines."""

    name = "reflexion"
    derived_ids = True
    """Run and episode ids come from the file name and content (`ingest.ids`)."""

    def sniff(self, path: Path, head: bytes) -> bool:
        if looks_native(head):
            return False
        h = head.lstrip()
        if h.startswith(b"["):
            return b'"memory"' in head and b'"is_success"' in head
        first = h.split(b"\n", 1)[0]
        return (
            h.startswith(b"{")
            and b'"reflections"' in first
            and (b'"is_solved"' in first or b'"solution"' in first)
        )

    def events(self, path: Path) -> Iterator[tuple[int | None, Event]]:
        yield from guarded(path, self._events(path))

    def _events(self, path: Path) -> Iterator[tuple[int | None, Event]]:
        run_id = f"reflexion:{safe_id(stem(path))}"
        if read_head(path, 4096).lstrip().startswith(b"["):
            f = Fields(path)
            doc = load_json(path)
            if not isinstance(doc, list):
                raise f.fail(None, "expected a list of task results")
            yield (
                None,
                RunEvent(
                    run_id=run_id,
                    config=run_config("reflexion"),
                    label=stem(path),
                    agent="Reflexion",
                    meta={"source": path.name, "format": "reflexion-alfworld"},
                ),
            )
            for pos, item in enumerate(doc):
                where = f"[{pos}]"
                item = f.obj(item, where)
                name = f.get(item, "name", str, where, required=True)
                memory = f.get(item, "memory", list, where, default=[])
                ok = f.get(item, "is_success", bool, where)
                for ev in _task(
                    f, run_id, pos, name, memory, f"{where}.memory", ok, None, None, written_here=False
                ):
                    yield None, ev
            return
        n_tasks = 0
        for n, raw in iter_lines(path):
            if not raw.strip():
                continue
            f = Fields(path, n)
            item = f.obj(parse_json(path, raw, n), "")
            if n_tasks == 0:
                yield (
                    n,
                    RunEvent(
                        run_id=run_id,
                        config=run_config("reflexion"),
                        label=stem(path),
                        agent="Reflexion",
                        meta={
                            "source": path.name,
                            "format": "reflexion-programming",
                            "language": item.get("language"),
                        },
                    ),
                )
            name = f.get(item, "name", str, "", required=True)
            refl = f.get(item, "reflections", list, "", default=[])
            solved = f.get(item, "is_solved", bool, "")
            for ev in _task(
                f,
                run_id,
                n_tasks,
                name,
                refl,
                "reflections",
                solved,
                f.get(item, "prompt", str, ""),
                f.get(item, "solution", str, ""),
                written_here=True,
            ):
                yield n, ev
            n_tasks += 1
        if n_tasks == 0:
            raise IngestError(path, None, None, "no tasks in file")


def _task(
    f: Fields,
    run_id: str,
    pos: int,
    name: str,
    reflections: list[Any],
    field: str,
    ok: bool | None,
    prompt: str | None,
    solution: str | None,
    *,
    written_here: bool,
) -> Iterator[Event]:
    ep = f"{run_id}/{safe_id(name)}"
    ns = f"reflexion:{name}"
    yield EpisodeStart(episode_id=ep, run_id=run_id, task_id=name, position=pos, task=prompt)
    entries = []
    for i, r in enumerate(reflections):
        if not isinstance(r, str):
            raise f.fail(f"{field}[{i}]", f"expected a string, got {type(r).__name__}")
        yield MemoryChange(
            namespace=ns,
            item_id=f"trial-{i}",
            version="1",
            op="create",
            value=r,
            episode_id=ep if written_here else None,
            run_id=run_id,
        )
        entries.append(
            Entry(
                namespace=ns,
                item_id=f"trial-{i}",
                id_scheme="reflexion-trial",
                version="1",
                value=r,
                digest=text_digest(r),
                display_key=f"Trial {i}:",
            )
        )
    if entries:
        yield MemoryDelivery(
            episode_id=ep, delivery_id=f"{ep}/reflections", route="host", form="reflection", entries=entries
        )
    yield EpisodeEnd(
        episode_id=ep,
        resolved=ok,
        exit_status=None if ok is None else ("success" if ok else "failure"),
        submission=solution or None,
    )


REFLEXION = register(ReflexionImporter())
