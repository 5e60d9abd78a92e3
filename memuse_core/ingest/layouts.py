"""Batch folders: one folder of a benchmark run is one MemUse run.

Three layouts are recognised, each as its harness writes it:

* **mini-swe-agent** (`mini-extra swebench`): `<dir>/<id>/<id>.traj.json` per task, `preds.json`
  (task -> patch), `exit_statuses_<time>.yaml` (`instances_by_exit_status`), and, when the
  SWE-bench harness was run beside it, its report `<model>.<run>.json`.
* **SWE-agent** 1.x (`sweagent run-batch`): `<dir>/<id>/<id>.traj` per task (beside `<id>.pred`,
  `<id>.config.yaml`, logs), `preds.json`, `run_batch_exit_statuses.yaml`, and `results.json`
  (the sb-cli report) or a harness report.
* **OpenHands** evaluation output (`run_infer.sh`): `<dir>/output.jsonl` (one task per line), with
  `report.json` (the harness report `eval_infer.sh` moves there) and `eval_outputs/<id>/report.json`
  per task. `output.jsonl.bak`, `output.swebench.jsonl`, `metadata.json`, `llm_completions/` and
  logs are not trajectories and are left alone.

Outcome files (`ingest.outcomes`) are found beside the trajectories: any top-level `*.json` that is
a harness summary (`resolved_ids`, ...), and per-task `report.json` files anywhere in the folder.

Task order (positions): tasks are numbered in code-point order of their instance ids, 0-based.
That order does not depend on the file system, on the order workers finished, or on which files are
already imported, so re-importing a folder, or importing two runs of the same task list, gives
every task the same position; it is also the order of SWE-bench's own task lists.

A folder that is no batch root is walked as before: every file is imported on its own.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path

from ..store.parquet import MANIFEST as EXPORT_MANIFEST

LAYOUTS = ("mini-swe-agent", "swe-agent", "openhands")
"""Batch layouts, in detection order."""

_SUFFIX = {"mini-swe-agent": (".traj.json", ".traj.json.gz"), "swe-agent": (".traj",)}
MAX_SIDE_FILE = 64 << 20
"""Side files (preds, exit statuses, reports) larger than this are not read."""


@dataclass
class BatchFolder:
    """What a batch folder holds (no store involved)."""

    folder: Path
    layout: str
    members: list[tuple[Path, list[str]]]
    """Trajectory files with the task ids they hold, in import order (tasks, then file names)."""
    tasks: list[str]
    """Every task id with a trajectory, in position order (see module docstring)."""
    outcome_files: list[Path] = field(default_factory=list)
    """Harness summaries and per-task reports found in the folder (applied in this order)."""
    exit_statuses: dict[str, str] = field(default_factory=dict)
    """Task -> exit status from the harness's exit-status file (used when a trajectory has none)."""
    submissions: dict[str, str] = field(default_factory=dict)
    """Task -> submitted patch from `preds.json` (used when a trajectory has none)."""
    model: str | None = None
    """Model name from `preds.json` (`model_name_or_path`)."""
    notes: list[str] = field(default_factory=list)
    """Side files that could not be read (one sentence each); the import goes on without them."""

    @property
    def position(self) -> dict[str, int]:
        return {t: i for i, t in enumerate(self.tasks)}


def layout_of(folder: Path) -> str | None:
    """The batch layout of a folder, or None when it is no batch root."""
    out = folder / "output.jsonl"
    if out.is_file() and _openhands_output(out):
        return "openhands"
    try:
        children = sorted(p for p in folder.iterdir() if p.is_dir() and not p.name.startswith("."))
    except OSError:
        return None
    for layout in ("mini-swe-agent", "swe-agent"):
        if any((c / f"{c.name}{s}").is_file() for c in children for s in _SUFFIX[layout]):
            return layout
    return None


def _openhands_output(path: Path) -> bool:
    with open(path, "rb") as f:
        head = f.read(65536)
    first = head.lstrip().split(b"\n", 1)[0]
    return first.startswith(b"{") and b'"history"' in first and b'"instance_id"' in first


@dataclass
class Inputs:
    """What `memuse ingest` was given, sorted out."""

    batches: list[Path] = field(default_factory=list)
    """Batch roots (one run each)."""
    exports: list[Path] = field(default_factory=list)
    """MemUse Parquet exports (`store.parquet`)."""
    files: list[Path] = field(default_factory=list)
    """Every other file, imported on its own."""
    left_out: list[tuple[Path, str]] = field(default_factory=list)
    """Files met in a searched folder that are no recordings (documentation and pictures,
    `DOCUMENT_SUFFIXES`, or files kept beside recordings, `base.known_non_recording`), with what
    they are: left out, and `memuse ingest` names each."""


DOCUMENT_SUFFIXES = frozenset(
    {".md", ".markdown", ".rst", ".pdf", ".png", ".jpg", ".jpeg", ".gif", ".svg", ".webp"}
)
"""File endings no recording format uses. A folder's README or figures beside its trajectories
are left out of a folder import (and named); a file given by name is still read, and refused
with its reason when it is no recording."""


def find_inputs(paths: list[Path]) -> Inputs:
    """Sort the given paths: a folder that is a batch root is one batch, a folder holding a
    Parquet export is one export; any other folder is searched for both, and its remaining files
    (outside them) are imported one by one, as before."""
    out = Inputs()
    for p in paths:
        if p.is_dir():
            _walk(p, out)
        else:
            out.files.append(p)
    return out


def _walk(d: Path, out: Inputs) -> None:
    from .base import known_non_recording

    if (d / EXPORT_MANIFEST).is_file():
        out.exports.append(d)
        return
    if layout_of(d) is not None:
        out.batches.append(d)
        return
    for q in sorted(d.iterdir()):
        if q.name.startswith("."):
            continue
        if q.is_dir():
            _walk(q, out)
        elif q.suffix.lower() in DOCUMENT_SUFFIXES and q.is_file():
            out.left_out.append((q, "documentation or a picture, not a recording"))
        elif q.is_file() and (what := known_non_recording(q)) is not None:
            out.left_out.append((q, what))
        else:  # FIFOs and sockets too, so that ingest refuses them by name (never silently left out)
            out.files.append(q)


def plan_folder(folder: Path) -> BatchFolder:
    """The members, tasks and side files of a batch root (`layout_of` must be known)."""
    layout = layout_of(folder)
    if layout is None:
        raise ValueError(f"{folder}: not a batch folder")
    b = BatchFolder(folder=folder, layout=layout, members=[], tasks=[])
    if layout == "openhands":
        out = folder / "output.jsonl"
        ids = openhands_task_ids(out)
        b.members = [(out, ids)]
        b.tasks = sorted(set(ids))
    else:
        for child in sorted(p for p in folder.iterdir() if p.is_dir() and not p.name.startswith(".")):
            trajs = sorted(q for q in child.iterdir() if q.is_file() and q.name.endswith(_SUFFIX[layout]))
            for q in trajs:
                b.members.append((q, [child.name]))
        b.tasks = sorted({t for _, ts in b.members for t in ts})
    _side_files(b)
    return b


_IID = re.compile(rb'^\s*\{\s*"instance_id"\s*:\s*("(?:[^"\\]|\\.)*"|-?\d+)')


def openhands_task_ids(path: Path) -> list[str]:
    """Instance ids of an OpenHands `output.jsonl`, in line order (a cheap scan: the id is the
    first key of each line as OpenHands writes it; other lines are parsed whole)."""
    ids: list[str] = []
    with open(path, "rb") as f:
        for raw in f:
            if not raw.strip():
                continue
            m = _IID.match(raw)
            if m is not None:
                ids.append(str(json.loads(m.group(1))))
                continue
            try:
                doc = json.loads(raw)
            except ValueError:
                continue  # the importer reports the line
            if isinstance(doc, dict) and isinstance(doc.get("instance_id"), (str, int)):
                ids.append(str(doc["instance_id"]))
    return ids


def _side_files(b: BatchFolder) -> None:
    top = sorted(p for p in b.folder.iterdir() if p.is_file() and not p.name.startswith("."))
    for p in top:
        name = p.name
        if name.endswith(".yaml") and "exit_statuses" in name:
            try:
                b.exit_statuses.update(read_exit_statuses(p))
            except (OSError, ValueError) as e:
                b.notes.append(f"{p}: exit statuses not read ({e})")
        elif name == "preds.json":
            try:
                _read_preds(b, p)
            except (OSError, ValueError) as e:
                b.notes.append(f"{p}: predictions not read ({e})")
    b.outcome_files = outcome_files_in(b.folder)


def outcome_files_in(folder: Path) -> list[Path]:
    """Harness reports in a folder (`ingest.outcomes`): its top-level `*.json` run reports by
    name, then per-task `report.json` files anywhere below it by path."""
    from .outcomes import is_outcome_file

    top = sorted(p for p in folder.iterdir() if p.is_file() and p.name.endswith(".json"))
    below = sorted(p for p in folder.rglob("report.json") if p.parent != folder and p.is_file())
    return [p for p in top + below if p.name != "preds.json" and is_outcome_file(p)]


def _read_preds(b: BatchFolder, p: Path) -> None:
    if p.stat().st_size > MAX_SIDE_FILE:
        raise ValueError("larger than 64 MB")
    doc = json.loads(p.read_text(encoding="utf-8"))
    if not isinstance(doc, dict):
        raise ValueError("expected an object of task -> prediction")
    for iid, pred in doc.items():
        if not isinstance(pred, dict):
            continue
        patch = pred.get("model_patch")
        if isinstance(patch, str) and patch:
            b.submissions[str(iid)] = patch
        m = pred.get("model_name_or_path")
        if b.model is None and isinstance(m, str) and m:
            b.model = m


_KEY = re.compile(r"^(\s*)(.+?):\s*(?:\[(.*)\])?\s*$")
_ITEM = re.compile(r"^(\s*)-\s+(.*?)\s*$")


def _scalar(s: str) -> str:
    s = s.strip()
    if len(s) >= 2 and s[0] == s[-1] and s[0] in "'\"":
        return s[1:-1]
    return s


def read_exit_statuses(p: Path) -> dict[str, str]:
    """Task -> exit status from an `instances_by_exit_status` file (YAML as the harnesses write it:
    a mapping of status -> list of ids; JSON is accepted too)."""
    if p.stat().st_size > MAX_SIDE_FILE:
        raise ValueError("larger than 64 MB")
    text = p.read_text(encoding="utf-8")
    try:
        doc = json.loads(text)
    except ValueError:
        doc = None
    if isinstance(doc, dict):
        by = doc.get("instances_by_exit_status")
        if not isinstance(by, dict):
            raise ValueError("no `instances_by_exit_status` mapping")
        return {str(i): str(s) for s, ids in by.items() if isinstance(ids, list) for i in ids}
    out: dict[str, str] = {}
    section: int | None = None  # indent of the `instances_by_exit_status:` line
    status: str | None = None
    for n, line in enumerate(text.splitlines(), start=1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        indent = len(line) - len(line.lstrip())
        if section is None:
            if line.strip() == "instances_by_exit_status:":
                section = indent
            continue
        item = _ITEM.match(line)
        if item is not None and status is not None and indent >= section:
            out[_scalar(item.group(2))] = status
            continue
        if indent <= section:
            break  # the next top-level key
        key = _KEY.match(line)
        if key is None:
            raise ValueError(f"line {n}: expected `status:` or `- id`")
        status = _scalar(key.group(2))
        if key.group(3) is not None:
            for x in key.group(3).split(","):
                if x.strip():
                    out[_scalar(x)] = status
    if section is None:
        raise ValueError("no `instances_by_exit_status` mapping")
    return out
