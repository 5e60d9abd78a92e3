"""mini-swe-agent trajectories (`*.traj.json`), formats `mini-swe-agent-1` and `mini-swe-agent-1.1`.

One file is one run and one episode. Every assistant message is one completed model call (a step,
MemUse 3.1): its request is every message before it (delta-encoded against the previous call),
its response the assistant message.

* `mini-swe-agent-1` (mini 1.x, and older files without `trajectory_format`/`config`): actions are
  fenced bash blocks in the assistant text, observations come back as user messages; they stay in
  the next call's input and the store derives each step's observation from there; the messages
  after the last assistant turn (the submission output, a last format error), which no later
  input holds, become `tool_result`s of the last call. No per-call cost
  is recorded, so `info.model_stats.instance_cost` is split over the calls in proportion to their
  recorded token counts (equal shares when none); the sum equals the recorded total.
* `mini-swe-agent-1.1` (mini 2.x): tool calling; every `tool` message becomes a `tool_result` of
  the call that issued it; assistant `extra.cost` is the per-call cost; reasoning text
  (`reasoning_content`, thinking blocks, Responses-API reasoning summaries in `extra.response`;
  `ingest.reasoning`) becomes the response's reasoning, in both formats; the final `exit` message carries exit status and submission. When
  `info.model_stats.api_calls` exceeds the assistant turns and the run ended in an exception (a
  timeout, a server error), the failed calls are recorded as `status="error"` calls with the input
  they were sent and no response, so `api_calls` matches the number of recorded calls.

The file is one JSON document and is parsed whole (trajectory files are small: one task).
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ..events import (
    EpisodeEnd,
    EpisodeStart,
    Event,
    Message,
    Response,
    RunEvent,
    ToolResultEvent,
)
from ..vocab import MAX_CALLS_PER_EPISODE
from .base import register
from .common import (
    CallChain,
    Fields,
    as_dict,
    distribute_cost,
    guarded,
    load_json,
    looks_native,
    openai_tool_calls,
    openai_usage,
    run_config,
    stem,
)
from .observers import active_observers, observe_lines
from .reasoning import joined, message_reasoning, response_reasoning

_BASH_BLOCK = re.compile(r"```(?:bash|sh)?\s*\n(.*?)\n```", re.S)
_RETURNCODE = re.compile(r"<returncode>(-?\d+)</returncode>")


class MiniSweAgentImporter:
    """mini-swe-agent `.traj.json` files (both trajectory formats)."""

    name = "mini-swe-agent"
    derived_ids = True
    """Run and episode ids come from the file name and content (`ingest.ids`)."""

    def sniff(self, path: Path, head: bytes) -> bool:
        if looks_native(head):
            return False
        if not head.lstrip().startswith(b"{"):
            return False
        if b'"trajectory_format": "mini-swe-agent' in head or b'"mini_version"' in head:
            return True
        # An older or truncated file: the name says it (SWE-agent files end in `.traj`).
        return path.name.endswith((".traj.json", ".traj.json.gz")) and b'"history"' not in head[:4096]

    def events(self, path: Path) -> Iterator[tuple[int | None, Event]]:
        doc = load_json(path)
        yield from guarded(path, observe_lines(((None, e) for e in convert(path, doc)), active_observers()))


def repo_of(instance_id: str) -> str | None:
    """`django__django-12304` -> `django/django` (SWE-bench instance naming)."""
    if "__" not in instance_id:
        return None
    return instance_id.rsplit("-", 1)[0].replace("__", "/", 1)


def run_name_of(path: Path, instance_id: str) -> str:
    """The run a trajectory belongs to: the file-name prefix before the instance id, or the
    folder of the standard layout `<run>/<instance>/<instance>.traj.json`."""
    s = stem(path)
    if instance_id and s.endswith(instance_id) and len(s) > len(instance_id):
        return s[: -len(instance_id)].rstrip("_-.") or s
    if path.parent.name == instance_id and path.parent.parent.name:
        return path.parent.parent.name
    return path.parent.name or s


def _message(f: Fields, m: dict[str, Any], field: str) -> Message:
    role = f.get(m, "role", str, field, required=True)
    content = f.text(m, "content", field)
    tool_calls = openai_tool_calls(f, m.get("tool_calls"), f"{field}.tool_calls")
    tcid = f.get(m, "tool_call_id", str, field)
    return Message(role=role, content=content, tool_calls=tool_calls, tool_call_id=tcid)


def convert(path: Path, doc: Any) -> Iterator[Event]:
    """The events of one mini-swe-agent trajectory document."""
    f = Fields(path)
    doc = f.obj(doc, "")
    info = f.get(doc, "info", dict, "", default={})
    raw_msgs = f.get(doc, "messages", list, "", required=True)
    fmt = f.get(doc, "trajectory_format", str, "", default=None)
    tool_calling = fmt == "mini-swe-agent-1.1" or any(
        isinstance(m, dict) and m.get("role") in ("tool", "exit") for m in raw_msgs
    )
    iid = f.get(doc, "instance_id", str, "", default=None) or stem(path)
    run_name = run_name_of(path, iid)
    run_id = f"{run_name}:{iid}"
    ep = f"{run_id}/ep"
    stats = f.get(info, "model_stats", dict, "info", default={})
    total_cost = f.get(stats, "instance_cost", (int, float), "info.model_stats")
    api_calls = f.get(stats, "api_calls", int, "info.model_stats")
    if api_calls is not None and not 0 <= api_calls <= MAX_CALLS_PER_EPISODE:
        # failed calls are materialised one by one below: refuse a count no run can reach
        raise f.fail(
            "info.model_stats.api_calls", f"{api_calls:,} is not 0 to {MAX_CALLS_PER_EPISODE:,} calls"
        )
    if total_cost is not None and not 0 <= total_cost < math.inf:
        raise f.fail("info.model_stats.instance_cost", f"{total_cost} is not a finite, non-negative cost")
    config = f.get(info, "config", dict, "info", default={})
    model_cfg = f.get(config, "model", dict, "info.config", default={})
    model = f.get(model_cfg, "model_name", str, "info.config.model")

    msgs: list[Message] = []
    history: list[Message] = []
    # (index into raw messages, parsed message) of every message, validated first.
    for i, m in enumerate(raw_msgs):
        m = f.obj(m, f"messages[{i}]")
        msgs.append(_message(f, m, f"messages[{i}]"))
    assistants = [i for i, m in enumerate(msgs) if m.role == "assistant"]
    exit_msg = next((raw_msgs[i] for i in range(len(msgs)) if msgs[i].role == "exit"), None)
    exit_extra = f.get(exit_msg, "extra", dict, "messages[exit]", default={}) if exit_msg else {}
    exit_status = f.get(exit_extra, "exit_status", str, "messages[exit].extra") or f.get(
        info, "exit_status", str, "info"
    )
    submission = f.get(exit_extra, "submission", str, "messages[exit].extra")
    if submission is None:
        submission = f.get(info, "submission", str, "info")
    crashed = bool(
        exit_extra.get("exception_str")
        or info.get("exception_str")
        or info.get("traceback")
        or exit_extra.get("traceback")
    )
    n_failed = 0
    if api_calls is not None and api_calls > len(assistants) and crashed:
        n_failed = api_calls - len(assistants)

    # Costs: per-call `extra.cost` when every assistant turn has one, else the distributed total.
    per_call: list[float | None] = []
    for i in assistants:
        extra = as_dict(raw_msgs[i].get("extra"))
        c = extra.get("cost")
        per_call.append(float(c) if isinstance(c, (int, float)) and not isinstance(c, bool) else None)
    if assistants and all(c is not None for c in per_call):
        costs = per_call + [0.0] * n_failed
        allocation = "per-call"
    else:
        weights = []
        for i in assistants:
            u = openai_usage(as_dict(as_dict(raw_msgs[i].get("extra")).get("response")).get("usage"))
            weights.append(float((u.input_tokens or 0) + (u.output_tokens or 0)) if u else 0.0)
        costs = distribute_cost(total_cost, weights) + [0.0] * n_failed
        allocation = "distributed-by-tokens" if any(weights) else "distributed-equally"

    task = next((m.text() for m in msgs if m.role == "user"), None)
    yield RunEvent(
        run_id=run_id,
        config=run_config(run_name),
        label=run_name,
        agent="mini-swe-agent"
        + (f" {info['mini_version']}" if isinstance(info.get("mini_version"), str) else ""),
        model=model,
        meta={
            "source": path.name,
            "format": fmt or "mini-swe-agent-1",
            "api_calls": api_calls,
            "instance_cost": total_cost,
            "cost_allocation": allocation,
        },
    )
    yield EpisodeStart(episode_id=ep, run_id=run_id, task_id=iid, position=0, repo=repo_of(iid), task=task)

    chain = CallChain(ep)
    issued: dict[str, tuple[str, str, str]] = {}  # tool_call_id -> (call_id, name, arguments)
    k = 0
    for i, m in enumerate(msgs):
        if m.role == "exit":
            break
        raw = raw_msgs[i]
        if m.role == "assistant":
            extra = as_dict(raw.get("extra"))
            resp_raw = as_dict(extra.get("response"))
            reasoning = joined(message_reasoning(raw), response_reasoning(resp_raw))
            ts = raw.get("timestamp", extra.get("timestamp"))
            evs, call = chain.emit(
                history,
                Response(content=m.text(), tool_calls=m.tool_calls, reasoning=reasoning or None),
                usage=openai_usage(resp_raw.get("usage")),
                cost_usd=costs[k],
                ended_at=float(ts) if isinstance(ts, (int, float)) else None,
                model=resp_raw.get("model") if isinstance(resp_raw.get("model"), str) else None,
            )
            k += 1
            yield from evs
            raw_acts = extra.get("actions")
            acts: list[Any] = raw_acts if isinstance(raw_acts, list) else []
            actions = {
                a.get("tool_call_id"): a.get("command")
                for a in acts
                if isinstance(a, dict) and isinstance(a.get("tool_call_id"), str)
            }
            for tc in m.tool_calls or []:
                if tc.id:
                    cmd = actions.get(tc.id)
                    issued[tc.id] = (call.call_id, tc.name, cmd if isinstance(cmd, str) else tc.arguments)
            history.append(Message(role="assistant", content=m.content, tool_calls=m.tool_calls))
            continue
        if m.role == "tool" and tool_calling:
            src = issued.get(m.tool_call_id or "")
            if src is None:
                raise f.fail(
                    f"messages[{i}].tool_call_id",
                    f"{m.tool_call_id!r} answers no tool call of an earlier assistant message",
                )
            extra = as_dict(raw.get("extra"))
            rc = extra.get("returncode")
            yield ToolResultEvent(
                episode_id=ep,
                call_id=src[0],
                tool_call_id=m.tool_call_id,
                name=src[1],
                arguments=src[2],
                output=m.text(),
                exit_code=rc if isinstance(rc, int) and not isinstance(rc, bool) else None,
            )
        history.append(m)
    # Text actions: the observation of the last step reaches no later input; keep it as a tool
    # result of the last call so it is not lost (the submission output, a final format error).
    if not tool_calling and n_failed == 0 and chain.prev_id is not None:
        last = max(i for i, m in enumerate(msgs) if m.role == "assistant")
        trailing = [m for m in msgs[last + 1 :] if m.role == "user" and m.text()]
        action = _BASH_BLOCK.search(msgs[last].text())
        for m in trailing:
            rc = _RETURNCODE.search(m.text())
            yield ToolResultEvent(
                episode_id=ep,
                call_id=chain.prev_id,
                name="bash" if action else None,
                arguments=action.group(1) if action else None,
                output=m.text(),
                exit_code=int(rc.group(1)) if rc else None,
            )
    # Calls that were sent but failed (timeouts, server errors): recorded without a response.
    for _ in range(n_failed):
        yield from chain.emit(history, None, status="error", cost_usd=costs[k] if k < len(costs) else None)[0]
        k += 1
    yield EpisodeEnd(episode_id=ep, resolved=None, exit_status=exit_status, submission=submission or None)


MINI_SWE_AGENT = register(MiniSweAgentImporter())
