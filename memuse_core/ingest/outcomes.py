"""Reading task outcomes from SWE-bench harness reports (MemUse A.5.4).

Three shapes are read, each as the harness writes it:

* a **run report** (`swebench.harness.run_evaluation`, sb-cli; `<model>.<run>.json`, OpenHands'
  `report.json`, SWE-agent's `results.json`): `resolved_ids`, `unresolved_ids`, `error_ids`,
  `empty_patch_ids` (plus counts, `incomplete_ids` and others, not needed here);
* a **per-task report** (`logs/run_evaluation/<run>/<model>/<id>/report.json`, OpenHands'
  `eval_outputs/<id>/report.json`): `{<id>: {"resolved": bool, "patch_is_None": bool, ...}}`;
* the **older run report** of SWE-bench before its Docker harness (SWE-agent 0.x `results.json`):
  lists `resolved`, `generated`/`applied`, `no_generation`, ...

Each task gets one `vocab.HarnessStatus`; a task that the report does not list keeps no outcome
(never "unresolved"). Bad input is one IngestError naming the file and the field.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..vocab import HARNESS_RESOLVED, HarnessStatus
from .base import IngestError
from .common import type_name
from .errors import json_problem

MAX_REPORT_BYTES = 64 << 20

_RUN_LISTS: tuple[tuple[str, HarnessStatus], ...] = (
    ("resolved_ids", "resolved"),
    ("unresolved_ids", "unresolved"),
    ("empty_patch_ids", "empty_patch"),
    ("error_ids", "error"),
)
"""Run-report lists in precedence order (a task in two lists of not resolving takes the first; in
`resolved_ids` and another list the report is refused)."""

_LEGACY_LISTS = ("resolved", "generated", "applied", "no_generation", "no_apply", "test_errored")


@dataclass
class HarnessReport:
    """The outcomes one report gives."""

    path: Path
    kind: str
    """`run-report`, `task-report` or `legacy-report`."""
    statuses: dict[str, HarnessStatus] = field(default_factory=dict)
    """Task id -> harness status."""
    counts: dict[str, int] = field(default_factory=dict)
    """The report's own counts (`resolved_instances`, ...), when it states them."""

    def resolved(self, task_id: str) -> bool | None:
        s = self.statuses.get(task_id)
        return None if s is None else HARNESS_RESOLVED[s]


def report_kind(doc: Any) -> str | None:
    """Which report shape a parsed JSON document is, or None."""
    if not isinstance(doc, dict) or not doc:
        return None
    if any(k in doc for k, _ in _RUN_LISTS):
        return "run-report"
    if isinstance(doc.get("resolved"), list) and any(isinstance(doc.get(k), list) for k in _LEGACY_LISTS[1:]):
        return "legacy-report"
    if all(isinstance(v, dict) and isinstance(v.get("resolved"), bool) for v in doc.values()):
        return "task-report"
    return None


def is_outcome_file(path: Path) -> bool:
    """True when the file is meant as a harness report: a JSON object that names a `resolved...`
    field. A file that says so but does not parse or has a field of the wrong type is still one (a
    broken report, which `read_report` refuses with its reason), never taken for "no report"."""
    try:
        with open(path, "rb") as f:
            head = f.read(MAX_REPORT_BYTES + 1)
    except OSError:
        return False
    return head.lstrip().startswith(b"{") and b'"resolved' in head


def _read(path: Path) -> bytes:
    if path.stat().st_size > MAX_REPORT_BYTES:
        raise ValueError("report larger than 64 MB")
    return path.read_bytes()


def read_report(path: str | Path) -> HarnessReport:
    """Parse one harness report (raises IngestError for anything else)."""
    p = Path(path)
    if not p.is_file():
        raise IngestError(p, None, None, "file does not exist")
    try:
        doc = json.loads(_read(p))
    except json.JSONDecodeError as e:
        raise IngestError(
            p, e.lineno, None, f"not a JSON harness report ({json_problem(e.msg, e.colno)})"
        ) from None
    except (ValueError, RecursionError) as e:
        raise IngestError(p, None, None, f"not a JSON harness report ({str(e).splitlines()[0]})") from None
    kind = report_kind(doc)
    if kind is None:
        raise IngestError(
            p,
            None,
            None,
            "not a SWE-bench harness report (expected `resolved_ids`/`unresolved_ids`/`error_ids`/"
            "`empty_patch_ids` lists, or per-task `{id: {resolved: ...}}` entries)",
        )
    rep = HarnessReport(p, kind)
    if kind == "run-report":
        for key, status in _RUN_LISTS:
            ids = doc.get(key, [])
            if not isinstance(ids, list):
                raise IngestError(p, None, key, f"expected a list of task ids, got {type_name(ids)}")
            for i, t in enumerate(ids):
                if not isinstance(t, (str, int)) or isinstance(t, bool):
                    raise IngestError(p, None, f"{key}[{i}]", f"expected a task id, got {type_name(t)}")
                earlier = rep.statuses.setdefault(str(t), status)
                if earlier != status and "resolved" in (earlier, status):
                    # resolved and not: which is true is unknowable (two ways of not resolving,
                    # e.g. an empty patch that also errored, keep the first, as documented above)
                    raise IngestError(
                        p,
                        None,
                        f"{key}[{i}]",
                        f"task {str(t)!r} is also listed as {earlier}: the report contradicts itself",
                    )
        rep.counts = {k: v for k, v in doc.items() if k.endswith("_instances") and isinstance(v, int)}
    elif kind == "task-report":
        for t, r in doc.items():
            if r.get("resolved"):
                rep.statuses[str(t)] = "resolved"
            elif r.get("patch_is_None") or r.get("patch_exists") is False:
                rep.statuses[str(t)] = "empty_patch"
            elif r.get("patch_successfully_applied") is False:
                rep.statuses[str(t)] = "error"
            else:
                rep.statuses[str(t)] = "unresolved"
    else:
        lists = {k: doc.get(k) for k in _LEGACY_LISTS if isinstance(doc.get(k), list)}
        for t in lists.get("resolved", []):
            rep.statuses[str(t)] = "resolved"
        for key in ("applied", "generated"):
            for t in lists.get(key, []):
                rep.statuses.setdefault(str(t), "unresolved")
        for t in lists.get("no_generation", []):
            rep.statuses.setdefault(str(t), "empty_patch")
        for t in lists.get("no_apply", []):
            if rep.statuses.get(str(t)) != "resolved":
                rep.statuses[str(t)] = "error"
    return rep


def merged(reports: list[HarnessReport]) -> dict[str, tuple[HarnessStatus, HarnessReport]]:
    """Task -> (status, report) over several reports; a later report overrides an earlier one."""
    out: dict[str, tuple[HarnessStatus, HarnessReport]] = {}
    for r in reports:
        for t, s in r.statuses.items():
            out[t] = (s, r)
    return out
