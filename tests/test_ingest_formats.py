"""Importers on small hand-written files for shapes the real corpus lacks.

Invariants: older mini-swe-agent files (no `trajectory_format`/`config`) import by name; parallel
tool calls each get their tool result; SWE-agent 1.x `query` lists are the exact call inputs and
function-calling observations become tool results; a Letta system message without compiled
blocks gives memory items but no deliveries; an OpenHands `knowledge` recall in the middle of a
run is delivered to the calls after it only; every file round-trips through the store.
"""

from __future__ import annotations

import json
from pathlib import Path

from memuse_core.episode import episodes_from_events
from memuse_core.events import MemoryChange, text_digest
from memuse_core.ingest.base import detect, ingest_path
from memuse_core.rules.context import build_episode_context
from memuse_core.store import connect
from memuse_core.store.reader import load_episodes


def load(p: Path, fmt: str) -> tuple[list, dict]:
    imp = detect(p)
    assert imp.name == fmt
    events = [e for _, e in imp.events(p)]
    return events, episodes_from_events(events)


def stored_equal(tmp_path: Path, p: Path, recs: dict) -> None:
    con = connect(tmp_path / "f.duckdb")
    try:
        ingest_path(con, p)
        got = load_episodes(con, list(recs))
    finally:
        con.close()
    for eid, w in recs.items():
        g = got[eid]
        assert [c.messages for c in g.calls] == [c.messages for c in w.calls]
        assert [c.call.response for c in g.calls] == [c.call.response for c in w.calls]
        assert [c.tool_results for c in g.calls] == [c.tool_results for c in w.calls]
        assert g.deliveries == w.deliveries and g.end == w.end and g.T == w.T
        assert g.context_events == w.context_events


def test_old_mini_file_without_format_or_config(tmp_path: Path) -> None:
    msgs = [
        {"role": "system", "content": "sys"},
        {"role": "user", "content": "task text"},
        {"role": "assistant", "content": "```bash\nls\n```"},
        {"role": "user", "content": "<returncode>0</returncode>\n<output>\na.py\n</output>"},
        {"role": "assistant", "content": "```bash\necho done\n```"},
        {"role": "user", "content": "diff"},
    ]
    d = tmp_path / "oldrun" / "acme__calc-7"
    d.mkdir(parents=True)
    p = d / "acme__calc-7.traj.json"
    p.write_text(
        json.dumps(
            {
                "info": {
                    "exit_status": "Submitted",
                    "submission": "diff",
                    "model_stats": {"instance_cost": 0.3, "api_calls": 2},
                },
                "messages": msgs,
            }
        )
    )
    events, recs = load(p, "mini-swe-agent")
    (rec,) = recs.values()
    assert rec.run.run_id == "oldrun:acme__calc-7" and rec.start.repo == "acme/calc"
    assert rec.T == 2 and rec.steps[0].observations == [msgs[3]["content"]]
    assert rec.steps[1].observations == ["diff"]  # after the last turn: kept as a tool result
    assert [c.call.cost_usd for c in rec.calls] == [0.15, 0.15]  # no tokens: equal shares
    assert rec.end.exit_status == "Submitted" and rec.end.submission == "diff"
    stored_equal(tmp_path, p, recs)


def test_mini_tool_calling_parallel_calls_and_format_error(tmp_path: Path) -> None:
    tc = [
        {"id": "a", "function": {"name": "bash", "arguments": '{"command": "ls"}'}},
        {"id": "b", "function": {"name": "bash", "arguments": '{"command": "pwd"}'}},
    ]
    msgs = [
        {"role": "system", "content": "sys"},
        {"role": "user", "content": "task"},
        {
            "role": "assistant",
            "content": "two at once",
            "tool_calls": tc,
            "extra": {
                "cost": 0.01,
                "actions": [{"command": "ls", "tool_call_id": "a"}, {"command": "pwd", "tool_call_id": "b"}],
            },
        },
        {"role": "tool", "tool_call_id": "a", "content": "x.py", "extra": {"returncode": 0}},
        {"role": "tool", "tool_call_id": "b", "content": "/w", "extra": {"returncode": 0}},
        {"role": "assistant", "content": "oops no tool", "extra": {"cost": 0.02}},
        {"role": "user", "content": "Format error: call a tool"},
        {
            "role": "assistant",
            "content": "ok",
            "tool_calls": [
                {"id": "c", "function": {"name": "bash", "arguments": '{"command": "echo COMPLETE"}'}}
            ],
            "extra": {"cost": 0.03},
        },
        {"role": "exit", "content": "", "extra": {"exit_status": "Submitted", "submission": ""}},
    ]
    p = tmp_path / "r__acme__calc-8.traj.json"
    p.write_text(
        json.dumps(
            {
                "info": {"model_stats": {"instance_cost": 0.06, "api_calls": 3}, "mini_version": "2.2.7"},
                "messages": msgs,
                "trajectory_format": "mini-swe-agent-1.1",
                "instance_id": "acme__calc-8",
            }
        )
    )
    events, recs = load(p, "mini-swe-agent")
    (rec,) = recs.values()
    assert rec.T == 3
    assert [(t.tool_call_id, t.arguments, t.output, t.exit_code) for t in rec.steps[0].tool_results] == [
        ("a", "ls", "x.py", 0),
        ("b", "pwd", "/w", 0),
    ]
    # the format error stays a user message in the next input
    assert rec.calls[2].messages[-1].text() == "Format error: call a tool"
    assert [c.call.cost_usd for c in rec.calls] == [0.01, 0.02, 0.03]
    stored_equal(tmp_path, p, recs)


def test_swe_agent_1x_query_and_function_calls(tmp_path: Path) -> None:
    sys_m = {
        "role": "system",
        "content": "You are SWE-agent.",
        "agent": "main",
        "message_type": "system_prompt",
    }
    task = {
        "role": "user",
        "content": [{"type": "text", "text": "Fix issue 3"}],
        "agent": "main",
        "message_type": "observation",
    }
    call1 = {
        "role": "assistant",
        "content": "look first",
        "agent": "main",
        "message_type": "action",
        "tool_calls": [
            {"id": "t1", "type": "function", "function": {"name": "bash", "arguments": '{"command":"ls"}'}}
        ],
    }
    obs1 = {
        "role": "tool",
        "content": [{"type": "text", "text": "OBSERVATION:\nsetup.py"}],
        "agent": "main",
        "message_type": "observation",
        "tool_call_ids": ["t1"],
    }
    call2 = {
        "role": "assistant",
        "content": "submit",
        "agent": "main",
        "message_type": "action",
        "tool_calls": [{"id": "t2", "type": "function", "function": {"name": "submit", "arguments": "{}"}}],
    }
    traj = [
        {
            "action": "ls",
            "observation": "setup.py",
            "response": "look first",
            "thought": "look first",
            "state": {},
            "execution_time": 0.1,
            "query": [sys_m, task],
            "extra_info": {},
        },
        {
            "action": "submit",
            "observation": "diff --git",
            "response": "submit",
            "thought": "submit",
            "state": {},
            "execution_time": 0.1,
            "query": [sys_m, task, call1, obs1],
            "extra_info": {},
        },
    ]
    doc = {
        "trajectory": traj,
        "history": [sys_m, task, call1, obs1, call2],
        "info": {
            "exit_status": "submitted",
            "submission": "diff --git",
            "model_stats": {"instance_cost": 0.2, "api_calls": 2},
        },
        "replay_config": json.dumps({"agent": {"model": {"name": "gpt-4o"}}}),
        "environment": "main",
    }
    p = tmp_path / "run7__acme__calc-9.traj"
    p.write_text(json.dumps(doc))
    events, recs = load(p, "swe-agent")
    (rec,) = recs.values()
    assert rec.run.model == "gpt-4o" and rec.run.meta["format"] == "swe-agent-1.x"
    assert rec.T == 2
    assert [m.role for m in rec.calls[1].messages] == ["system", "user", "assistant", "tool"]
    assert rec.calls[1].messages[3].tool_call_id == "t1"
    assert rec.calls[1].messages[1].text() == "Fix issue 3"
    assert [(t.tool_call_id, t.output) for t in rec.steps[0].tool_results] == [("t1", "setup.py")]
    assert rec.calls[1].call.request.base_call_id == rec.calls[0].call_id  # delta-encoded
    assert rec.end.exit_status == "submitted" and rec.end.submission == "diff --git"
    stored_equal(tmp_path, p, recs)


def test_letta_without_compiled_blocks_records_items_only(tmp_path: Path) -> None:
    doc = {
        "agents": [
            {
                "name": "plain",
                "id": "agent-0",
                "agent_type": "memgpt_agent",
                "block_ids": ["block-0"],
                "messages": [
                    {"role": "system", "content": [{"type": "text", "text": "Be kind. {CORE_MEMORY}"}]},
                    {"role": "user", "content": [{"type": "text", "text": "hi"}]},
                    {"role": "assistant", "content": [{"type": "text", "text": "hello"}]},
                ],
            }
        ],
        "blocks": [{"id": "block-0", "label": "human", "value": "Name: Ana", "limit": 500}],
    }
    p = tmp_path / "plain.af"
    p.write_text(json.dumps(doc))
    events, recs = load(p, "letta-agent-file")
    (rec,) = recs.values()
    changes = [e for e in events if isinstance(e, MemoryChange)]
    assert [(c.namespace, c.item_id, c.op, c.value) for c in changes] == [
        ("letta:plain", "human", "create", "Name: Ana")
    ]
    assert rec.deliveries == [] and rec.T == 1 and len(rec.calls) == 1  # ends on an assistant turn
    stored_equal(tmp_path, p, recs)


def test_letta_changed_block_has_two_versions_and_delivers_the_compiled_one(tmp_path: Path) -> None:
    system = (
        "Base.\n<memory_blocks>\nThe following memory blocks are currently engaged in your core memory unit:\n\n"
        "<human>\n<description>\nthe user\n</description>\n<metadata>\n- chars_current=9\n</metadata>\n"
        "<value>\nName: Bob\n</value>\n</human>\n\n</memory_blocks>\nEnd."
    )
    doc = {
        "agents": [
            {
                "name": "pal",
                "id": "agent-0",
                "block_ids": ["b"],
                "messages": [
                    {"role": "system", "content": [{"type": "text", "text": system}]},
                    {"role": "user", "content": [{"type": "text", "text": "I'm Ana now"}]},
                ],
            }
        ],
        "blocks": [{"id": "b", "label": "human", "value": "Name: Ana"}],
    }
    p = tmp_path / "pal.af"
    p.write_text(json.dumps(doc))
    events, recs = load(p, "letta-agent-file")
    (rec,) = recs.values()
    changes = [e for e in events if isinstance(e, MemoryChange)]
    assert [(c.op, c.value) for c in changes] == [("create", "Name: Bob"), ("update", "Name: Ana")]
    (call,) = rec.calls
    assert call.call.status == "incomplete" and rec.T == 0
    (d,) = rec.deliveries
    (e,) = d.entries
    assert (e.item_id, e.value, e.version) == ("human", "Name: Bob", changes[0].version)
    (pl,) = d.placements
    host = call.messages[pl.proof.message_index].text()
    assert host[pl.proof.start :].startswith(pl.text) and pl.proof.message_digest == text_digest(host)
    stored_equal(tmp_path, p, recs)


def test_openhands_knowledge_recall_mid_run(tmp_path: Path) -> None:
    def action(i: int, rid: str, tcid: str, name: str = "execute_bash") -> dict:
        return {
            "id": i,
            "source": "agent",
            "action": "run",
            "args": {"command": "ls"},
            "tool_call_metadata": {
                "function_name": name,
                "tool_call_id": tcid,
                "model_response": {
                    "id": rid,
                    "choices": [
                        {
                            "message": {
                                "role": "assistant",
                                "content": f"step {rid}",
                                "tool_calls": [
                                    {"id": tcid, "function": {"name": name, "arguments": '{"command": "ls"}'}}
                                ],
                            }
                        }
                    ],
                    "usage": {"prompt_tokens": 10 * i, "completion_tokens": 5},
                },
            },
        }

    def obs(i: int, cause: int, tcid: str) -> dict:
        return {
            "id": i,
            "source": "agent",
            "observation": "run",
            "cause": cause,
            "content": "a.py",
            "tool_call_metadata": {"tool_call_id": tcid},
            "extras": {"metadata": {"exit_code": 0, "suffix": "\n[exit code 0]"}},
        }

    hist = [
        {"id": 0, "source": "agent", "action": "system", "args": {"content": "You are OpenHands."}},
        {"id": 1, "source": "user", "action": "message", "args": {"content": "Fix the npm build"}},
        action(2, "r1", "t1"),
        obs(3, 2, "t1"),
        {"id": 4, "source": "user", "action": "message", "args": {"content": "use npm ci please"}},
        {"id": 5, "source": "user", "action": "recall", "args": {"recall_type": "knowledge", "query": "npm"}},
        {
            "id": 6,
            "source": "environment",
            "observation": "recall",
            "cause": 5,
            "content": "",
            "extras": {
                "recall_type": "knowledge",
                "microagent_knowledge": [
                    {"name": "npm", "trigger": "npm", "content": "Run npm ci, not npm install."}
                ],
            },
        },
        action(7, "r2", "t2"),
        obs(8, 7, "t2"),
        {"id": 9, "source": "agent", "action": "message", "args": {"content": "Done, I used npm ci."}},
    ]
    line = {
        "instance_id": "web__app-1",
        "history": hist,
        "error": None,
        "metrics": {"accumulated_cost": 0.09, "costs": [{"cost": 0.02}, {"cost": 0.03}, {"cost": 0.04}]},
        "test_result": {"git_patch": "diff", "report": {"resolved": True}},
        "metadata": {"agent_class": "CodeActAgent"},
    }
    p = tmp_path / "output.jsonl"
    p.write_text(json.dumps(line) + "\n")
    events, recs = load(p, "openhands")
    (rec,) = recs.values()
    assert rec.T == 3 and [c.call.cost_usd for c in rec.calls] == [0.02, 0.03, 0.04]
    assert rec.end.resolved is True and rec.end.exit_status == "stopped"
    assert [d.consuming_call_id for d in rec.deliveries] == [c.call_id for c in rec.calls[1:]]
    for d in rec.deliveries:
        assert d.form == "knowledge" and [e.value for e in d.entries] == ["Run npm ci, not npm install."]
        (pl,) = d.placements
        cv = rec.call(d.consuming_call_id)
        host = cv.messages[pl.proof.message_index]
        assert host.role == "user" and host.text()[pl.proof.start :].startswith(pl.text)
        assert pl.text.startswith("<EXTRA_INFO>") and pl.text.endswith("</EXTRA_INFO>")
    assert rec.steps[0].tool_results[0].output == "a.py\n[exit code 0]"
    stored_equal(tmp_path, p, recs)


def _checks_valid(recs: dict) -> None:
    for rec in recs.values():
        ctx = build_episode_context(rec)
        assert ctx.valid, [c for c in ctx.checks if not c.ok][:3]


def test_openhands_condensation_becomes_a_history_rewrite(tmp_path: Path) -> None:
    def act(i: int, rid: str) -> dict:
        return {
            "id": i,
            "source": "agent",
            "action": "run",
            "args": {"command": f"cmd {i}"},
            "tool_call_metadata": {
                "tool_call_id": f"t{i}",
                "model_response": {
                    "id": rid,
                    "choices": [
                        {
                            "message": {
                                "role": "assistant",
                                "content": f"say {i}",
                                "tool_calls": [
                                    {"id": f"t{i}", "function": {"name": "execute_bash", "arguments": "{}"}}
                                ],
                            }
                        }
                    ],
                },
            },
        }

    def obs(i: int, cause: int) -> dict:
        return {
            "id": i,
            "source": "agent",
            "observation": "run",
            "cause": cause,
            "content": f"out {i}",
            "tool_call_metadata": {"tool_call_id": f"t{cause}"},
        }

    hist = [
        {"id": 0, "source": "agent", "action": "system", "args": {"content": "sys"}},
        {"id": 1, "source": "user", "action": "message", "args": {"content": "task"}},
        act(2, "r2"),
        obs(3, 2),
        act(4, "r4"),
        obs(5, 4),
        {
            "id": 6,
            "source": "agent",
            "action": "condensation",
            "args": {
                "forgotten_events_start_id": 2,
                "forgotten_events_end_id": 3,
                "summary": "Earlier I listed files.",
                "summary_offset": 2,
            },
        },
        act(7, "r7"),
        obs(8, 7),
    ]
    p = tmp_path / "cond.json"
    p.write_text(json.dumps(hist))
    events, recs = load(p, "openhands")
    (rec,) = recs.values()
    assert rec.T == 3
    (rw,) = rec.context_events
    assert rw.type == "history_rewrite" and rw.before_call_id == rec.calls[2].call_id and rw.kept_prefix == 2
    assert [m.text() for m in rec.calls[2].messages] == [
        "sys",
        "task",
        "Earlier I listed files.",
        "say 4",
        "out 5",
    ]
    _checks_valid(recs)
    stored_equal(tmp_path, p, recs)


def test_swe_agent_1x_elided_observation_is_a_recorded_rewrite(tmp_path: Path) -> None:
    sys_m = {"role": "system", "content": "sys", "agent": "main", "message_type": "system_prompt"}
    task = {"role": "user", "content": "task", "agent": "main", "message_type": "observation"}
    a1 = {"role": "assistant", "content": "ls", "agent": "main", "message_type": "action"}
    o1 = {"role": "user", "content": "long output " * 20, "agent": "main", "message_type": "observation"}
    o1_short = {**o1, "content": "Old environment output: (20 lines omitted)"}
    a2 = {"role": "assistant", "content": "cat x", "agent": "main", "message_type": "action"}
    o2 = {"role": "user", "content": "x = 1", "agent": "main", "message_type": "observation"}
    a3 = {"role": "assistant", "content": "submit", "agent": "main", "message_type": "action"}
    traj = [
        {"action": "ls", "observation": o1["content"], "response": "ls", "query": [sys_m, task]},
        {"action": "cat x", "observation": "x = 1", "response": "cat x", "query": [sys_m, task, a1, o1]},
        {
            "action": "submit",
            "observation": "diff",
            "response": "submit",
            "query": [sys_m, task, a1, o1_short, a2, o2],
        },
    ]
    doc = {
        "trajectory": traj,
        "history": [sys_m, task, a1, o1, a2, o2, a3],
        "info": {
            "exit_status": "submitted",
            "submission": "diff",
            "model_stats": {"instance_cost": 0.3, "api_calls": 3},
        },
    }
    p = tmp_path / "r__acme__calc-11.traj"
    p.write_text(json.dumps(doc))
    events, recs = load(p, "swe-agent")
    (rec,) = recs.values()
    (rw,) = rec.context_events
    assert rw.kept_prefix == 3 and rw.before_call_id == rec.calls[2].call_id
    assert rec.calls[2].messages[3].text().startswith("Old environment output")
    assert rec.steps[-1].observations == ["diff"]
    _checks_valid(recs)
    stored_equal(tmp_path, p, recs)
