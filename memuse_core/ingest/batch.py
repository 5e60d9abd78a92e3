"""Importing a batch folder as one run (layouts in `ingest.layouts`).

Naming, all decided before any file is read:

* **Run id**: `--run NAME`, else the folder name. When files of this folder were imported before,
  the folder's run is the run they went into, and new files join it. Otherwise a folder name that
  another run already holds gets the next free `<name>~2`; an explicit `--run` that names a stored
  run joins that run (so a batch split over several folders can be one run), provided the
  configuration agrees.
* **Configuration**: `--config NAME`, else the folder name; a joined run keeps its own.
* **Episodes**: `<run>/<task id>`; another file of the same task (in the folder or imported
  earlier) is `<run>/<task id>~2`, never a refusal. Positions: `ingest.layouts` (code-point order
  of task ids).

The run event is stored once, as its own small import whose file row names the folder (format
`<layout>-batch`). Each trajectory file then lands whole or not at all, as always: a bad file is
reported and skipped, the others land, identical content is skipped (small files are committed a
group at a time, `ingest.grouped`). Harness reports found in the
folder then set the outcome of the run's episodes (`store.outcomes_import`).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from ..events import RunEvent
from ..store import Connection
from ..store.batches import run_config, runs_of_files
from ..store.files import begin_file, commit_file, known_files, rollback
from ..store.outcomes_import import OutcomeSummary, apply_outcomes, run_outcomes
from ..store.tables import existing_ids
from ..store.writer import EventWriter
from ..wording import plural
from .base import IngestError, IngestResult, file_sha256
from .ids import free_id
from .layouts import BatchFolder
from .members import BatchMember, using_members
from .outcomes import HarnessReport, merged, read_report
from .parallel import PARALLEL_MIN_BYTES, ingest_files

AGENTS = {"mini-swe-agent": "mini-swe-agent", "swe-agent": "SWE-agent", "openhands": "OpenHands"}


@dataclass
class BatchResult:
    """What importing one batch folder did."""

    folder: Path
    layout: str
    run_id: str
    config: str
    joined: bool
    """True when the folder's episodes joined a run stored before."""
    files: list[tuple[Path, IngestResult | IngestError]] = field(default_factory=list)
    outcomes: OutcomeSummary | None = None
    reports: list[HarnessReport] = field(default_factory=list)
    report_errors: list[IngestError] = field(default_factory=list)
    """Harness reports in the folder that could not be read (file, line, field): a bad input like a
    bad trajectory, so the command reports each and exits non-zero; the trajectories still land."""
    notes: list[str] = field(default_factory=list)

    @property
    def episodes(self) -> int:
        return sum(r.episodes for _, r in self.files if isinstance(r, IngestResult))

    def count(self, status: str) -> int:
        if status == "failed":
            return sum(isinstance(r, IngestError) for _, r in self.files)
        return sum(isinstance(r, IngestResult) and r.status == status for _, r in self.files)


def _choose_run(
    con: Connection, b: BatchFolder, shas: dict[Path, str], run: str | None, config: str | None
) -> tuple[str, str, bool]:
    """(run id, configuration, joined) for a folder (see module docstring)."""
    before = set().union(*runs_of_files(con, list(shas.values())).values())
    if len(before) > 1:
        raise IngestError(
            b.folder,
            None,
            None,
            f"its files were imported before into {len(before)} runs ({', '.join(sorted(before)[:3])}"
            f"{', ...' if len(before) > 3 else ''}); import the folder into a new database to get one run",
        )
    if before:
        (rid,) = before
        if run is not None and run != rid:
            raise IngestError(
                b.folder,
                None,
                None,
                f"was imported before as run `{rid}`: use `--run {rid}` or leave --run out",
            )
    else:
        rid = run or b.folder.name
        if run_config(con, rid) is not None and run is None:
            rid = free_id(rid, lambda x: run_config(con, x) is not None)
    stored = run_config(con, rid)
    if stored is None:
        return rid, config or b.folder.name, False
    if config is not None and config != stored:
        raise IngestError(
            b.folder, None, None, f"run `{rid}` is stored with configuration `{stored}`, not `{config}`"
        )
    return rid, stored, True


def _write_run(con: Connection, b: BatchFolder, run_id: str, config: str) -> None:
    """Store the batch's run event as its own import (file row: the folder)."""
    ev = RunEvent(
        run_id=run_id,
        config=config,
        label=b.folder.name,
        agent=AGENTS[b.layout],
        model=b.model,
        meta={"source": b.folder.name, "format": f"{b.layout}-batch", "tasks": len(b.tasks)},
    )
    sha = hashlib.sha256(f"memuse-batch\n{b.layout}\n{run_id}\n{config}\n".encode()).hexdigest()
    file_id = begin_file(con)
    try:
        w = EventWriter(con, file_id)
        w.add(ev, 1)
        w.finish()
        commit_file(con, file_id, str(b.folder), sha, 0, f"{b.layout}-batch", 1)
    except BaseException:
        rollback(con)
        raise


def plan_members(
    con: Connection, b: BatchFolder, run_id: str, shas: dict[Path, str]
) -> dict[Path, BatchMember]:
    """Episode ids and positions for the folder's files not imported yet."""
    imported = known_files(con)
    stored_eps, _ = existing_ids(con)
    planned: set[str] = set()
    out: dict[Path, BatchMember] = {}
    positions = b.position
    for path, tasks in b.members:
        if shas[path] in imported:
            continue
        episodes: dict[str, list[str]] = {}
        for t in tasks:
            eid = free_id(f"{run_id}/{t}", lambda x: x in stored_eps or x in planned)
            planned.add(eid)
            episodes.setdefault(t, []).append(eid)
        out[path] = BatchMember(
            run_id=run_id,
            episodes=episodes,
            positions={t: positions[t] for t in tasks},
            exit_statuses={t: b.exit_statuses[t] for t in tasks if t in b.exit_statuses},
            submissions={t: b.submissions[t] for t in tasks if t in b.submissions},
        )
    return out


def ingest_batch(
    con: Connection,
    b: BatchFolder,
    *,
    run: str | None = None,
    config: str | None = None,
    workers: int | None = None,
    on_file: Callable[[Path, IngestResult | IngestError], None] | None = None,
    min_bytes: int = PARALLEL_MIN_BYTES,
) -> BatchResult:
    """Import a batch folder as one run, then apply the harness reports found in it (`workers`
    and `min_bytes` as in `ingest_files`)."""
    shas = {p: file_sha256(p) for p, _ in b.members}
    run_id, cfg, joined = _choose_run(con, b, shas, run, config)
    res = BatchResult(b.folder, b.layout, run_id, cfg, joined, notes=list(b.notes))
    members = plan_members(con, b, run_id, shas)
    if not joined:
        _write_run(con, b, run_id, cfg)
    for p, _ in b.members:
        if p not in members:
            skip = IngestResult(str(p), b.layout, "skipped", error="already imported")
            res.files.append((p, skip))
            if on_file is not None:
                on_file(p, skip)
    todo = [p for p, _ in b.members if p in members]
    with using_members(members):
        for p, r in ingest_files(con, todo, workers=workers, min_bytes=min_bytes, grouped=True):
            res.files.append((p, r))
            if on_file is not None:
                on_file(p, r)
    res.files.sort(key=lambda pr: str(pr[0]))
    for f in b.outcome_files:
        try:
            res.reports.append(read_report(f))
        except IngestError as e:
            res.report_errors.append(e)
    if res.reports:
        statuses = {t: (s, str(r.path), r.kind) for t, (s, r) in merged(res.reports).items()}
        res.outcomes = apply_outcomes(con, run_id, statuses)
    else:
        res.outcomes = run_outcomes(con, run_id)
    return res


def outcome_line(o: OutcomeSummary, reports: list[HarnessReport] | None = None) -> str:
    """One line on a run's outcomes: resolved, not resolved (by harness status), and how many
    episodes have no outcome (unknown: "—" in every table, never counted as unresolved)."""
    parts = [f"{o.resolved} resolved", f"{o.not_resolved} not resolved"]
    detail = ", ".join(f"{k} {v}" for k, v in sorted(o.by_status.items()) if k != "resolved")
    if detail:
        parts[-1] += f" ({detail})"
    parts.append(f"{o.no_outcome} without outcome")
    line = f"outcomes of run {o.run_id}: " + ", ".join(parts)
    if reports:
        line += " (from " + ", ".join(r.path.name for r in reports) + ")"
    return line


def batch_lines(r: BatchResult) -> list[str]:
    """What the import of one batch folder did, for the command line."""
    how = "joined stored run" if r.joined else "run"
    lines = [
        f"batch {r.folder} ({r.layout}): {how} {r.run_id}, configuration {r.config}: "
        f"{plural(r.count('imported'), 'file')} imported ({plural(r.episodes, 'episode')}), "
        f"{r.count('skipped')} already imported, {r.count('failed')} failed"
    ]
    if r.outcomes is not None:
        lines.append("  " + outcome_line(r.outcomes, r.reports))
        if r.outcomes.unmatched_tasks:
            lines.append(
                f"  no episode in run {r.run_id} for {plural(len(r.outcomes.unmatched_tasks), 'task')} of the "
                "harness report"
            )
        if r.report_errors and r.outcomes.no_outcome:
            lines.append(
                f"  {plural(len(r.report_errors), 'harness report')} could not be read (errors above): mend "
                f"and set outcomes with `memuse outcomes REPORT.json --run {r.run_id}`"
            )
        elif not r.reports and r.outcomes.no_outcome:
            lines.append(
                f"  no harness report beside the trajectories: set outcomes with "
                f"`memuse outcomes REPORT.json --run {r.run_id}`"
            )
    lines.extend(f"  note: {n}" for n in r.notes)
    return lines
