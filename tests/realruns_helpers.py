"""Small hand-made trajectory folders for the batch-layout and outcome tests (written by the
tests themselves; real files stay in ../shared/data/real)."""

from __future__ import annotations

import json
from pathlib import Path


def mini_traj(iid: str, *, steps: int = 2, exit_status: str | None = "Submitted", note: str = "") -> dict:
    """A `mini-swe-agent-1` trajectory of `steps` bash steps (plus the submission turn)."""
    msgs: list[dict] = [
        {"role": "system", "content": "You are a helpful assistant that can interact with a computer."},
        {"role": "user", "content": f"<pr_description>Fix {iid}. {note}</pr_description>"},
    ]
    for k in range(steps):
        msgs.append({"role": "assistant", "content": f"THOUGHT: look {k}\n\n```bash\nls src{k}\n```"})
        msgs.append(
            {"role": "user", "content": f"<returncode>0</returncode>\n<output>\nfile{k}.py\n</output>"}
        )
    msgs.append(
        {
            "role": "assistant",
            "content": "THOUGHT: done\n\n```bash\necho COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT && git diff\n```",
        }
    )
    info: dict = {
        "model_stats": {"instance_cost": 0.01 * (steps + 1), "api_calls": steps + 1},
        "mini_version": "1.17.3",
        "config": {"model": {"model_name": "openai/gpt-5-nano"}},
        "submission": f"diff --git a/{iid}.py b/{iid}.py\n",
    }
    if exit_status is not None:
        info["exit_status"] = exit_status
    return {"info": info, "messages": msgs, "trajectory_format": "mini-swe-agent-1", "instance_id": iid}


def write_json(path: Path, doc: object) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc, indent=1), encoding="utf-8")
    return path


def harness_report(resolved: list[str], unresolved: list[str], error=(), empty=()) -> dict:
    """A SWE-bench harness run report (schema_version 2 as `run_evaluation` writes it)."""
    ids = sorted([*resolved, *unresolved, *error, *empty])
    return {
        "total_instances": len(ids),
        "submitted_instances": len(ids),
        "completed_instances": len(resolved) + len(unresolved),
        "resolved_instances": len(resolved),
        "unresolved_instances": len(unresolved),
        "empty_patch_instances": len(empty),
        "error_instances": len(error),
        "completed_ids": sorted([*resolved, *unresolved]),
        "incomplete_ids": [],
        "empty_patch_ids": list(empty),
        "submitted_ids": ids,
        "resolved_ids": list(resolved),
        "unresolved_ids": list(unresolved),
        "error_ids": list(error),
        "schema_version": 2,
    }


def mini_batch(folder: Path, tasks: dict[str, str], *, report: dict | None = None) -> Path:
    """A mini-swe-agent batch folder: task -> exit status; `preds.json`, the exit-status YAML and
    (optionally) a harness report beside the trajectories."""
    preds = {}
    by_status: dict[str, list[str]] = {}
    for iid, status in tasks.items():
        write_json(folder / iid / f"{iid}.traj.json", mini_traj(iid, exit_status=status))
        preds[iid] = {
            "model_name_or_path": "openai/gpt-5-nano",
            "instance_id": iid,
            "model_patch": f"diff {iid}\n",
        }
        by_status.setdefault(status, []).append(iid)
    write_json(folder / "preds.json", preds)
    lines = ["instances_by_exit_status:"]
    for status, ids in by_status.items():
        lines.append(f"    {status}:")
        lines.extend(f"    - {i}" for i in ids)
    (folder / "exit_statuses_1767750600.6861904.yaml").write_text("\n".join(lines) + "\n")
    if report is not None:
        write_json(folder / f"openai__gpt-5-nano.{folder.name}_eval.json", report)
    return folder
