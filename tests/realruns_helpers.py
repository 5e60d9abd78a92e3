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


def mini_batch(folder: Path, tasks: dict[str, str], *, report: dict | None = None, steps: int = 2) -> Path:
    """A mini-swe-agent batch folder: task -> exit status; `preds.json`, the exit-status YAML and
    (optionally) a harness report beside the trajectories."""
    preds = {}
    by_status: dict[str, list[str]] = {}
    for iid, status in tasks.items():
        write_json(folder / iid / f"{iid}.traj.json", mini_traj(iid, exit_status=status, steps=steps))
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


def sweagent_traj(iid: str, *, steps: int = 2, exit_status: str = "submitted") -> dict:
    """A SWE-agent 1.x `.traj` (each step records the exact request as `query`)."""
    system = {"role": "system", "content": "SETTING: You are an autonomous programmer."}
    user = {"role": "user", "content": f"<issue>Fix {iid}</issue>"}
    traj, hist = [], [dict(system, agent="main"), dict(user, agent="main")]
    query = [system, user]
    for k in range(steps):
        resp = f"Look around {k}.\n\n```\nls dir{k}\n```"
        traj.append(
            {
                "action": f"ls dir{k}",
                "observation": f"file{k}.py",
                "response": resp,
                "thought": f"Look around {k}.",
                "query": list(query),
            }
        )
        query = query + [{"role": "assistant", "content": resp}, {"role": "user", "content": f"file{k}.py"}]
        hist += [
            {"role": "assistant", "content": resp, "agent": "main"},
            {"role": "user", "content": f"file{k}.py", "agent": "main"},
        ]
    return {
        "environment": "swe_main",
        "trajectory": traj,
        "history": hist,
        "info": {
            "exit_status": exit_status,
            "submission": f"diff --git a/{iid}.py b/{iid}.py\n",
            "model_stats": {"instance_cost": 0.02 * steps, "api_calls": steps},
            "swe_agent_version": "1.1.0",
        },
    }


def sweagent_batch(folder: Path, tasks: dict[str, str], report: dict | None = None) -> Path:
    """A `sweagent run-batch` output folder: `<id>/<id>.traj` (+ `.pred`, `.config.yaml`),
    `preds.json`, `run_batch_exit_statuses.yaml`, `run_batch.config.yaml` and `results.json`."""
    preds = {}
    for iid, status in tasks.items():
        write_json(folder / iid / f"{iid}.traj", sweagent_traj(iid, exit_status=status))
        write_json(
            folder / iid / f"{iid}.pred",
            {"model_name_or_path": "gpt-4o", "instance_id": iid, "model_patch": "d"},
        )
        (folder / iid / f"{iid}.config.yaml").write_text("agent: {}\n")
        preds[iid] = {"model_name_or_path": "gpt-4o", "instance_id": iid, "model_patch": f"diff {iid}\n"}
    write_json(folder / "preds.json", preds)
    lines = ["instances_by_exit_status:"]
    for status in sorted(set(tasks.values())):
        lines.append(f"  {status}:")
        lines.extend(f"    - {i}" for i, s in tasks.items() if s == status)
    lines.append("total_cost: 0.5")
    (folder / "run_batch_exit_statuses.yaml").write_text("\n".join(lines) + "\n")
    (folder / "run_batch.config.yaml").write_text("'{\"agent\": {}}'\n")
    if report is not None:
        write_json(folder / "results.json", report)
    return folder


def _tool_event(eid: int, k: int, iid: str, *, observation: bool, reasoning: str | None) -> dict:
    msg: dict = {
        "role": "assistant",
        "content": f"Step {k} of {iid}.",
        "tool_calls": [
            {
                "id": f"t{k}",
                "type": "function",
                "function": {"name": "execute_bash", "arguments": json.dumps({"command": f"ls d{k}"})},
            }
        ],
    }
    if reasoning:
        msg["reasoning_content"] = reasoning
    tcm = {
        "function_name": "execute_bash",
        "tool_call_id": f"t{k}",
        "model_response": {
            "id": f"resp-{iid}-{k}",
            "model": "m",
            "choices": [{"index": 0, "message": msg}],
            "usage": {"prompt_tokens": 100 + k, "completion_tokens": 10},
        },
    }
    if observation:
        return {
            "id": eid,
            "source": "agent",
            "message": f"Command `ls d{k}` executed with exit code 0.",
            "cause": eid - 1,
            "observation": "run",
            "content": f"file{k}.py",
            "tool_call_metadata": tcm,
            "extras": {"command": f"ls d{k}", "metadata": {"exit_code": 0}},
        }
    return {
        "id": eid,
        "source": "agent",
        "message": f"Running command: ls d{k}",
        "action": "run",
        "args": {"command": f"ls d{k}"},
        "tool_call_metadata": tcm,
    }


def openhands_line(iid: str, *, steps: int = 2, reasoning: str | None = None) -> dict:
    """One line of an OpenHands evaluation `output.jsonl` (CodeAct, function calling)."""
    history: list[dict] = [
        {
            "id": 0,
            "source": "agent",
            "message": "You are OpenHands agent.",
            "action": "system",
            "args": {"content": "You are OpenHands agent.", "tools": []},
        },
        {
            "id": 1,
            "source": "user",
            "message": f"Fix {iid}",
            "action": "message",
            "args": {"content": f"Fix {iid}"},
        },
    ]
    for k in range(steps):
        history.append(
            _tool_event(2 + 2 * k, k, iid, observation=False, reasoning=reasoning if k == 0 else None)
        )
        history.append(
            _tool_event(3 + 2 * k, k, iid, observation=True, reasoning=reasoning if k == 0 else None)
        )
    return {
        "instance_id": iid,
        "test_result": {"git_patch": f"diff {iid}\n"},
        "instruction": f"Fix {iid}",
        "metadata": {
            "agent_class": "CodeActAgent",
            "llm_config": {"model": "m"},
            "eval_output_dir": "/x/oh-run",
        },
        "history": history,
        "metrics": {"accumulated_cost": 0.01 * steps},
        "error": None,
        "instance": {"repo": iid.split("__")[0] + "/" + iid.split("__")[1].rsplit("-", 1)[0]},
    }


def openhands_batch(
    folder: Path, iids: list[str], report: dict | None = None, per_task: dict[str, bool] | None = None
) -> Path:
    """An OpenHands evaluation output folder: `output.jsonl`, its `.bak` copy and
    `output.swebench.jsonl` (not trajectories), `metadata.json`, `report.json` and
    `eval_outputs/<id>/report.json`."""
    folder.mkdir(parents=True, exist_ok=True)
    text = "".join(
        json.dumps(openhands_line(i, reasoning="I should list the files first.")) + "\n" for i in iids
    )
    (folder / "output.jsonl").write_text(text)
    (folder / "output.jsonl.bak").write_text(text)
    (folder / "output.swebench.jsonl").write_text(
        "".join(
            json.dumps({"model_name_or_path": "m", "instance_id": i, "model_patch": "d"}) + "\n" for i in iids
        )
    )
    write_json(folder / "metadata.json", {"agent_class": "CodeActAgent"})
    if report is not None:
        write_json(folder / "report.json", report)
    for iid, ok in (per_task or {}).items():
        write_json(
            folder / "eval_outputs" / iid / "report.json",
            {
                iid: {
                    "patch_is_None": False,
                    "patch_exists": True,
                    "patch_successfully_applied": True,
                    "resolved": ok,
                }
            },
        )
    return folder
