"""OpenHands outputs: evaluation `output.jsonl` lines (one instance per line, streamed) and bare
event-list trajectories (a JSON list of history events, e.g. `tests/runtime/trajs/basic.json`).

OpenHands records events (actions and observations), not the raw LLM requests. The importer
therefore rebuilds the agent's visible history the way a function-calling CodeAct agent assembles
it, and states this as an assumption: the system action's text is the system message; user
`message` actions are user messages; every distinct `model_response` behind agent actions is one
model call whose response is that recorded message (content + tool calls) and whose input is the
history so far; each observation answering a tool call is a `tool` message (command output with
its recorded prefix/suffix) and a `tool_result`; agent messages without a tool call are assistant
messages. A `condensation` action removes the forgotten events' messages and inserts its summary
as a user message (at its offset, counted in messages: an approximation of OpenHands' event
view); the next call then records a `history_rewrite`. Truncation and provider-side formatting
are not reconstructed.

Memory (MemUse 3.1): a `recall` observation carries what OpenHands retrieved for the user's
message (`workspace_context` or `knowledge`). It becomes a user message rendered like OpenHands'
prompt: runtime/repository information, then one `<EXTRA_INFO>` block per microagent knowledge
item. Every later call restates that message, so every consuming call gets one `memory_delivery`
(route `host`, form = the recall type) with one entry per microagent (namespace
`openhands:microagents`, id = microagent name) and one placement per `<EXTRA_INFO>` block (slot
`user:extra_info/<name>`) whose proof (message index + digest + start) resolves in the rebuilt
input.

Costs: `metrics.costs` when it has one entry per call, else `metrics.accumulated_cost` split by
recorded tokens; the total equals `accumulated_cost`.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ..events import (
    Event,
    RunEvent,
)
from .base import IngestError, read_head, register
from .common import (
    Fields,
    as_dict,
    guarded,
    iter_lines,
    load_json,
    looks_native,
    parse_json,
    run_config,
    safe_id,
    stem,
)
from .observers import active_observers, observe_lines
from .openhands_history import convert_history


class OpenHandsImporter:
    """OpenHands `output.jsonl` instances and event-list trajectories."""

    name = "openhands"
    derived_ids = True
    """Run and episode ids come from the file name and content (`ingest.ids`)."""

    def sniff(self, path: Path, head: bytes) -> bool:
        if looks_native(head):
            return False
        h = head.lstrip()
        if h.startswith(b"["):
            return b'"source"' in head and (b'"action"' in head or b'"observation"' in head)
        if h.startswith(b"{"):
            first = h.split(b"\n", 1)[0]
            return (
                b'"history"' in first
                and (b'"instance_id"' in first or b'"metrics"' in first)
                and b'"source"' in first
            )
        return False

    def events(self, path: Path) -> Iterator[tuple[int | None, Event]]:
        yield from guarded(path, observe_lines(self._events(path), active_observers()))

    def _events(self, path: Path) -> Iterator[tuple[int | None, Event]]:
        if read_head(path, 4096).lstrip()[:1] == b"[":
            doc = load_json(path)
            f = Fields(path)
            if not isinstance(doc, list):
                raise f.fail(None, f"expected a list of events, got {type(doc).__name__}")
            run_name = stem(path)
            list_run = f"oh:{safe_id(run_name)}"
            yield (
                None,
                RunEvent(
                    run_id=list_run,
                    config=run_config(run_name),
                    label=run_name,
                    agent="OpenHands",
                    meta={"source": path.name, "format": "openhands-events"},
                ),
            )
            for ev in convert_history(
                f,
                doc,
                "",
                run_id=list_run,
                episode_id=f"{list_run}/ep",
                task_id=run_name,
                position=0,
                instance={},
                metrics={},
                test_result={},
                error=None,
            ):
                yield None, ev
            return
        run_id: str | None = None
        pos = 0
        for n, raw in iter_lines(path):
            if not raw.strip():
                continue
            f = Fields(path, n)
            doc = f.obj(parse_json(path, raw, n), "")
            meta = f.get(doc, "metadata", dict, "", default={})
            if run_id is None:
                out_dir = meta.get("eval_output_dir") if isinstance(meta.get("eval_output_dir"), str) else ""
                run_name = Path(out_dir).name or stem(path)
                run_id = f"oh:{safe_id(stem(path))}"
                llm = as_dict(meta.get("llm_config"))
                yield (
                    n,
                    RunEvent(
                        run_id=run_id,
                        config=run_config(run_name),
                        label=run_name,
                        agent=f"OpenHands {meta.get('agent_class') or ''}".strip(),
                        model=llm.get("model") if isinstance(llm.get("model"), str) else None,
                        meta={
                            "source": path.name,
                            "format": "openhands-output",
                            "max_iterations": meta.get("max_iterations"),
                            "git_commit": meta.get("git_commit"),
                        },
                    ),
                )
            iid = f.get(doc, "instance_id", (str, int), "", required=True)
            iid = str(iid)
            history = f.get(doc, "history", list, "", required=True)
            for ev in convert_history(
                f,
                history,
                "history",
                run_id=run_id,
                episode_id=f"{run_id}/{safe_id(iid)}",
                task_id=iid,
                position=pos,
                instance=f.get(doc, "instance", dict, "", default={}),
                metrics=f.get(doc, "metrics", dict, "", default={}),
                test_result=_with_report(f.get(doc, "test_result", dict, "", default={}), doc.get("report")),
                error=doc.get("error"),
                instruction=doc.get("instruction"),
            ):
                yield n, ev
            pos += 1
        if run_id is None:
            raise IngestError(path, None, None, "no instances in file")


def _with_report(test_result: dict[str, Any], report: Any) -> dict[str, Any]:
    """`test_result` with the per-task harness report that OpenHands' `update_output_with_eval.py`
    adds to each line as `report` (`resolved`, `empty_generation`, ...), when the line has one."""
    if isinstance(report, dict) and "report" not in test_result:
        return {**test_result, "report": report}
    return test_result


OPENHANDS = register(OpenHandsImporter())
