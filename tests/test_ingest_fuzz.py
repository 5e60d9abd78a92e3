"""Wrong types anywhere in a trajectory never crash an importer (DESIGN.md "Bad input").

Invariant: replacing any single value of a small valid file of each format with a value of
another JSON type either still imports, or fails with one IngestError line naming the file;
no other exception escapes.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from memuse_core.ingest.base import IngestError, detect

WRONG: list[Any] = [None, 7, "x", [], {}, True]


def mini() -> tuple[str, Any]:
    return "r__a__b-1.traj.json", {
        "info": {
            "exit_status": "Submitted",
            "submission": "d",
            "mini_version": "2.2.7",
            "model_stats": {"instance_cost": 0.1, "api_calls": 2},
            "config": {"model": {"model_name": "m"}},
        },
        "messages": [
            {"role": "system", "content": "s"},
            {"role": "user", "content": "t"},
            {
                "role": "assistant",
                "content": "c",
                "tool_calls": [{"id": "a", "function": {"name": "bash", "arguments": "{}"}}],
                "extra": {
                    "cost": 0.05,
                    "actions": [{"command": "ls", "tool_call_id": "a"}],
                    "response": {"usage": {"prompt_tokens": 3, "completion_tokens": 1}},
                },
            },
            {"role": "tool", "tool_call_id": "a", "content": "o", "extra": {"returncode": 0}},
            {"role": "assistant", "content": "done", "extra": {"cost": 0.05}},
            {"role": "exit", "content": "d", "extra": {"exit_status": "Submitted", "submission": "d"}},
        ],
        "trajectory_format": "mini-swe-agent-1.1",
        "instance_id": "a__b-1",
    }


def swe() -> tuple[str, Any]:
    q = [
        {"role": "system", "content": "s", "agent": "main"},
        {"role": "user", "content": "t", "agent": "main"},
    ]
    a = {
        "role": "assistant",
        "content": "c",
        "agent": "main",
        "tool_calls": [{"id": "t1", "function": {"name": "bash", "arguments": "{}"}}],
    }
    return "r__a__b-2.traj", {
        "environment": "main",
        "trajectory": [{"action": "ls", "observation": "o", "response": "c", "thought": "c", "query": q}],
        "history": q + [a],
        "info": {
            "exit_status": "submitted",
            "submission": "d",
            "model_stats": {"instance_cost": 0.1, "api_calls": 1},
        },
    }


def openhands() -> tuple[str, Any]:
    mr = {
        "id": "r1",
        "choices": [
            {
                "message": {
                    "role": "assistant",
                    "content": "c",
                    "tool_calls": [{"id": "t1", "function": {"name": "execute_bash", "arguments": "{}"}}],
                }
            }
        ],
        "usage": {"prompt_tokens": 4},
    }
    return "output.jsonl", {
        "instance_id": "a__b-3",
        "error": None,
        "test_result": {"git_patch": "d"},
        "metrics": {
            "accumulated_cost": 0.1,
            "costs": [{"cost": 0.1}],
            "token_usages": [{"response_id": "r1"}],
        },
        "metadata": {"agent_class": "CodeActAgent", "llm_config": {"model": "m"}},
        "history": [
            {"id": 0, "source": "agent", "action": "system", "args": {"content": "s", "tools": []}},
            {"id": 1, "source": "user", "action": "message", "args": {"content": "t"}},
            {
                "id": 2,
                "source": "environment",
                "observation": "recall",
                "cause": 1,
                "content": "",
                "extras": {
                    "recall_type": "knowledge",
                    "date": "2025-01-01",
                    "runtime_hosts": {"h": 1},
                    "microagent_knowledge": [{"name": "git", "trigger": "git", "content": "k"}],
                },
            },
            {
                "id": 3,
                "source": "agent",
                "action": "run",
                "args": {"command": "ls"},
                "tool_call_metadata": {"tool_call_id": "t1", "model_response": mr},
            },
            {
                "id": 4,
                "source": "agent",
                "observation": "run",
                "cause": 3,
                "content": "o",
                "tool_call_metadata": {"tool_call_id": "t1"},
                "extras": {"metadata": {"exit_code": 0}},
            },
            {
                "id": 5,
                "source": "agent",
                "action": "condensation",
                "args": {"forgotten_event_ids": [3, 4], "summary": "sum", "summary_offset": 1},
            },
        ],
    }


def letta() -> tuple[str, Any]:
    system = (
        "x\n<memory_blocks>\nintro\n\n<human>\n<description>\nd\n</description>\n<value>\nAna\n</value>\n"
        "</human>\n\n</memory_blocks>"
    )
    return "a.af", {
        "agents": [
            {
                "name": "pal",
                "id": "agent-0",
                "block_ids": ["b"],
                "agent_type": "letta_v1_agent",
                "llm_config": {"model": "m"},
                "description": "d",
                "messages": [
                    {"role": "system", "content": [{"type": "text", "text": system}]},
                    {
                        "role": "assistant",
                        "content": [{"type": "text", "text": "hi"}],
                        "tool_calls": [{"id": "t", "function": {"name": "send", "arguments": "{}"}}],
                    },
                    {"role": "tool", "tool_call_id": "t", "content": [{"type": "text", "text": "ok"}]},
                ],
            }
        ],
        "blocks": [{"id": "b", "label": "human", "value": "Ana", "limit": 100, "description": "d"}],
    }


def reflexion() -> tuple[str, Any]:
    return "trial.json", [
        {"name": "env_0", "memory": ["I failed because X."], "is_success": False},
        {"name": "env_1", "memory": [], "is_success": True},
    ]


def _paths(obj: Any, prefix: tuple = ()) -> list[tuple]:
    out = [prefix] if prefix else []
    if isinstance(obj, dict):
        for k, v in obj.items():
            out += _paths(v, prefix + (k,))
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            out += _paths(v, prefix + (i,))
    return out


def _set(obj: Any, path: tuple, value: Any) -> Any:
    doc = copy.deepcopy(obj)
    cur = doc
    for k in path[:-1]:
        cur = cur[k]
    cur[path[-1]] = value
    return doc


@pytest.mark.parametrize("make", [mini, swe, openhands, letta, reflexion], ids=lambda f: f.__name__)
def test_no_wrong_value_crashes_an_importer(make, tmp_path: Path) -> None:
    name, doc = make()
    p = tmp_path / name
    dump = (lambda d: json.dumps(d) + "\n") if name.endswith(".jsonl") else json.dumps
    p.write_text(dump(doc))
    fmt = detect(p).name
    assert len([ev for _, ev in detect(p).events(p)]) > 3  # the unmutated file imports
    failures = 0
    for path in _paths(doc):
        for bad in WRONG:
            p.write_text(dump(_set(doc, path, bad)))
            try:
                imp = detect(p)
                for _ in imp.events(p):
                    pass
            except IngestError as e:
                failures += 1
                msg = str(e)
                assert msg.startswith(str(p)) and "\n" not in msg, msg
            except Exception as e:  # pragma: no cover - the failure this test exists to catch
                raise AssertionError(f"{fmt}: {'/'.join(map(str, path))} = {bad!r} raised {e!r}") from e
    assert failures > 0
