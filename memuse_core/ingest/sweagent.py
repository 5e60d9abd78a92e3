"""SWE-agent trajectories (`.traj`), 0.x and 1.x.

One file is one run and one episode; each trajectory step is one completed model call (a step,
MemUse 3.1).

* 0.x files (`environment`, `trajectory` steps with action/observation/thought/response,
  `history`, `info`): the calls are rebuilt from `history` (the primary agent's messages, demos
  included, in order): the input of step k is every history message before its k-th assistant
  message. Assumption, stated: `history` is what was sent; SWE-agent 0.x history processors that
  elide old observations at request time are not recorded, so the rebuilt inputs may be longer
  than what the model saw. Observations stay in the next call's input (text actions); the last
  step's observation, which no later input holds, becomes a `tool_result` of the last call.
* 1.x files record the exact request of each step as `query`: that list is the call's input.
  With function calling, the assistant history message of the step carries `tool_calls`; the
  step's observation then becomes a `tool_result` of the call.

`info.model_stats.instance_cost` is the only cost recorded; it is split equally over the steps
(the sum equals the total). Requests that SWE-agent re-sent after a format error are counted in
`api_calls` but not kept in the trajectory, so such runs have more api calls than steps.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ..events import EpisodeEnd, EpisodeStart, Event, Message, Response, RunEvent, ToolResultEvent
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
    run_config,
    stem,
)
from .miniswe import repo_of
from .observers import active_observers, observe_lines
from .reasoning import joined, message_reasoning


class SweAgentImporter:
    """SWE-agent `.traj` files."""

    name = "swe-agent"
    derived_ids = True
    """Run and episode ids come from the file name and content (`ingest.ids`)."""

    def sniff(self, path: Path, head: bytes) -> bool:
        if looks_native(head):
            return False
        h = head.lstrip()
        if not h.startswith(b"{") or b'"mini_version"' in head:
            return False
        top = h[:300]
        return (b'"environment"' in top or b'"trajectory"' in top) and (
            b'"observation"' in head or b'"history"' in head
        )

    def events(self, path: Path) -> Iterator[tuple[int | None, Event]]:
        doc = load_json(path)
        yield from guarded(path, observe_lines(((None, e) for e in convert(path, doc)), active_observers()))


def names_of(path: Path) -> tuple[str, str]:
    """(run name, instance id) from `<run>__<owner>__<repo>-<n>.traj` or `<run>/<instance>.traj`."""
    s = stem(path)
    parts = s.split("__")
    if len(parts) >= 3:
        return "__".join(parts[:-2]), "__".join(parts[-2:])
    return (path.parent.name or "swe-agent"), s


def _message(f: Fields, m: Any, field: str) -> Message:
    m = f.obj(m, field)
    role = f.get(m, "role", str, field, required=True)
    content = f.text(m, "content", field)
    tcs = openai_tool_calls(f, m.get("tool_calls"), f"{field}.tool_calls")
    ids = f.get(m, "tool_call_ids", list, field)
    tcid = f.get(m, "tool_call_id", str, field) or (ids[0] if ids and isinstance(ids[0], str) else None)
    return Message(role=role, content=content, tool_calls=tcs, tool_call_id=tcid)


def convert(path: Path, doc: Any) -> Iterator[Event]:
    """The events of one SWE-agent trajectory document."""
    f = Fields(path)
    doc = f.obj(doc, "")
    steps = f.get(doc, "trajectory", list, "", required=True)
    history_raw = f.get(doc, "history", list, "", default=[])
    info = f.get(doc, "info", dict, "", default={})
    stats = f.get(info, "model_stats", dict, "info", default={})
    total = f.get(stats, "instance_cost", (int, float), "info.model_stats")
    api_calls = f.get(stats, "api_calls", int, "info.model_stats")
    for i, s in enumerate(steps):
        f.obj(s, f"trajectory[{i}]")
    history = [(_message(f, h, f"history[{i}]"), h) for i, h in enumerate(history_raw)]
    # The acting agent is `primary` in 0.x and `main` in 1.x (others are e.g. reviewers/summarizers).
    agents = [h.get("agent") for _, h in history]
    lead = next((a for a in ("primary", "main") if a in agents), agents[0] if agents else None)
    primary = [(m, h) for m, h in history if h.get("agent") == lead]
    assistants = [k for k, (m, h) in enumerate(primary) if m.role == "assistant" and not h.get("is_demo")]
    has_query = bool(steps) and all(isinstance(s.get("query"), list) and s["query"] for s in steps)
    version = "1.x" if has_query or any("message_type" in h for _, h in history) else "0.x"

    run_name, iid = names_of(path)
    run_id = f"{run_name}:{iid}"
    ep = f"{run_id}/ep"
    costs = distribute_cost(total, [1.0] * len(steps))
    task = next((m.text() for m, h in primary if m.role == "user" and not h.get("is_demo")), None)
    cfg = doc.get("replay_config")
    model = None
    if isinstance(cfg, str):
        try:
            cfg = json.loads(cfg)
        except ValueError:
            cfg = None
    if isinstance(cfg, dict):
        agent_cfg = as_dict(cfg.get("agent"))
        mc = as_dict(agent_cfg.get("model"))
        model = mc.get("name") if isinstance(mc.get("name"), str) else None
    yield RunEvent(
        run_id=run_id,
        config=run_config(run_name),
        label=run_name,
        agent=f"SWE-agent {info.get('swe_agent_version') or version}",
        model=model,
        meta={
            "source": path.name,
            "format": f"swe-agent-{version}",
            "api_calls": api_calls,
            "instance_cost": total,
            "cost_allocation": "distributed-equally",
            "environment": doc.get("environment") if isinstance(doc.get("environment"), str) else None,
        },
    )
    yield EpisodeStart(episode_id=ep, run_id=run_id, task_id=iid, position=0, repo=repo_of(iid), task=task)

    chain = CallChain(ep)
    if not has_query and len(assistants) < len(steps):
        raise f.fail(
            "history",
            f"has {len(assistants)} assistant messages for {len(steps)} trajectory "
            "steps (and the steps carry no `query`)",
        )
    for k, s in enumerate(steps):
        field = f"trajectory[{k}]"
        if has_query:
            request = [_message(f, m, f"{field}.query[{j}]") for j, m in enumerate(s["query"])]
        else:
            request = [m for m, _ in primary[: assistants[k]]]
        amsg = primary[assistants[k]][0] if k < len(assistants) else None
        araw = primary[assistants[k]][1] if k < len(assistants) else None
        text = f.get(s, "response", str, field)
        if text is None and amsg is not None:
            text = amsg.text()
        tcs = amsg.tool_calls if amsg is not None else None
        reasoning = joined(message_reasoning(araw), message_reasoning(s))
        evs, call = chain.emit(
            request, Response(content=text, tool_calls=tcs, reasoning=reasoning), cost_usd=costs[k]
        )
        yield from evs
        obs = f.get(s, "observation", str, field, default="")
        action = f.get(s, "action", str, field)
        for tc in tcs or []:
            yield ToolResultEvent(
                episode_id=ep,
                call_id=call.call_id,
                tool_call_id=tc.id,
                name=tc.name,
                arguments=action if action is not None else tc.arguments,
                output=obs,
            )
        if not tcs and k == len(steps) - 1 and obs:
            # Text actions: the last observation reaches no later input; keep it as a tool result.
            yield ToolResultEvent(
                episode_id=ep, call_id=call.call_id, name=None, arguments=action, output=obs
            )
    status = info.get("exit_status")
    sub = info.get("submission")
    yield EpisodeEnd(
        episode_id=ep,
        resolved=None,
        exit_status=status if isinstance(status, str) else None,
        submission=sub if isinstance(sub, str) and sub else None,
    )


SWE_AGENT = register(SweAgentImporter())
