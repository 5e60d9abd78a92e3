"""Importers on the real public trajectories in ../shared/data/real (skipped when absent).

Invariants: every file is detected as its format; steps, exit statuses, submissions, api calls
and costs match what the source file records; OpenHands recalls and Letta blocks become
deliveries whose proofs resolve; and events -> store -> events is lossless (resolved inputs,
responses, tool results, deliveries, memory changes compared field by field).
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from memuse_core.episode import EpisodeRecord, episodes_from_events
from memuse_core.events import MemoryChange, text_digest
from memuse_core.ingest.base import detect, ingest_path
from memuse_core.rules.context import build_episode_context
from memuse_core.store import connect, export_events, load_episodes

REAL = (Path(__file__).parents[1] / ".." / "shared" / "data" / "real").resolve()


def real_files(sub: str, pattern: str = "*") -> list[Path]:
    d = REAL / sub
    return sorted(p for p in d.rglob(pattern) if p.is_file()) if d.is_dir() else []


def _ids(paths: list[Path]) -> list[str]:
    return [p.name[:60] for p in paths]


def need(paths: list[Path]) -> None:
    """Skip only when ../shared/data/real is absent; a missing format folder inside it fails."""
    if not REAL.is_dir():
        pytest.skip(f"real data not present under {REAL}")
    assert paths, f"no files of this format under {REAL}"


def import_events(p: Path, fmt: str) -> list:
    imp = detect(p)
    assert imp.name == fmt, f"{p.name} detected as {imp.name}"
    return [ev for _, ev in imp.events(p)]


def check_proofs(rec: EpisodeRecord) -> int:
    """Every placement proof resolves: the host message has the digest and holds the text once."""
    n = 0
    for d in rec.deliveries:
        if d.consuming_call_id is None:
            continue
        cv = rec.call(d.consuming_call_id)
        assert cv is not None, d.delivery_id
        for pl in d.placements:
            assert pl.proof is not None and pl.proof.message_index is not None
            host = cv.messages[pl.proof.message_index].text()
            assert text_digest(host) == pl.proof.message_digest
            assert host.count(pl.text) == 1
            assert host[pl.proof.start : pl.proof.start + len(pl.text)] == pl.text
            n += 1
    return n


def roundtrip(tmp_path: Path, p: Path, events: list) -> None:
    """Import the file into a fresh store and compare what comes back with the events."""
    con = connect(tmp_path / "rt.duckdb")
    try:
        res = ingest_path(con, p)
        assert res.status == "imported"
        want = episodes_from_events(events)
        got = load_episodes(con, list(want))
        back = list(export_events(con))
    finally:
        con.close()
    assert set(got) == set(want)
    for eid, w in want.items():
        g = got[eid]
        assert g.T == w.T
        assert g.start == w.start and g.end == w.end and g.run == w.run
        assert len(g.calls) == len(w.calls)
        for a, b in zip(g.calls, w.calls):
            assert a.messages == b.messages, a.call_id
            assert a.call.response == b.call.response
            assert a.call.usage == b.call.usage and a.call.status == b.call.status
            assert a.call.cost_usd == b.call.cost_usd
            assert a.tool_results == b.tool_results
        assert g.deliveries == w.deliveries
        assert g.context_events == w.context_events
    changes_in = sorted(c.model_dump_json() for c in events if isinstance(c, MemoryChange))
    changes_out = sorted(c.model_dump_json() for c in back if isinstance(c, MemoryChange))
    assert changes_in == changes_out


def close(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)


# ------------------------------------------------------------------------------------------------
# mini-swe-agent
# ------------------------------------------------------------------------------------------------

MINI = real_files("mini-swe-agent", "*.traj.json")


@pytest.mark.parametrize("path", MINI or [None], ids=_ids(MINI) or ["absent"])
def test_mini_swe_agent_matches_source(path: Path | None, tmp_path: Path) -> None:
    need(MINI)
    assert path is not None
    src = json.loads(path.read_text())
    info = src["info"]
    events = import_events(path, "mini-swe-agent")
    (rec,) = episodes_from_events(events).values()
    n_assistant = sum(m["role"] == "assistant" for m in src["messages"])
    assert rec.T == n_assistant
    # api_calls counts every request sent; a run that crashed on a model call (timeout, server
    # error) sent one more request than it has assistant turns: that call is recorded as an error.
    assert len(rec.calls) == info["model_stats"]["api_calls"]
    assert sum(c.call.status == "ok" for c in rec.calls) == n_assistant
    total = sum(c.call.cost_usd or 0.0 for c in rec.calls)
    assert close(total, info["model_stats"]["instance_cost"])
    assert rec.end is not None
    assert rec.end.exit_status == info["exit_status"]
    assert (rec.end.submission or "") == (info.get("submission") or "")
    if src.get("trajectory_format") == "mini-swe-agent-1.1":
        n_tool = sum(m["role"] == "tool" for m in src["messages"])
        assert sum(len(s.tool_results) for s in rec.steps) == n_tool
        per_msg = [m["extra"]["cost"] for m in src["messages"] if m["role"] == "assistant"]
        assert [c.call.cost_usd for c in rec.calls if c.call.status == "ok"] == per_msg
        reasoning = [m.get("reasoning_content") for m in src["messages"] if m["role"] == "assistant"]
        assert [s.call.call.response.reasoning for s in rec.steps] == [r or None for r in reasoning]
    else:
        # text actions: every step but the last sees its observation in the next call's input
        obs = [m["content"] for m in src["messages"] if m["role"] == "user"][1:]
        for s in rec.steps[:-1]:
            assert s.observations and s.observations[0] == obs[s.t - 1]
        # what follows the last assistant turn is the last step's observation (none after a crash)
        last = max(i for i, m in enumerate(src["messages"]) if m["role"] == "assistant")
        trailing = [m["content"] for m in src["messages"][last + 1 :] if m["content"]]
        assert rec.steps[-1].observations == trailing
    # each call's input is exactly the messages before its assistant turn
    msgs = [m for m in src["messages"] if m["role"] != "exit"]
    k = 0
    for i, m in enumerate(msgs):
        if m["role"] == "assistant":
            assert [x.role for x in rec.calls[k].messages] == [x["role"] for x in msgs[:i]]
            assert rec.calls[k].messages[-1].text() == msgs[i - 1]["content"]
            k += 1
    roundtrip(tmp_path, path, events)


# ------------------------------------------------------------------------------------------------
# SWE-agent
# ------------------------------------------------------------------------------------------------

SWEA = real_files("swe-agent", "*.traj")


@pytest.mark.parametrize("path", SWEA or [None], ids=_ids(SWEA) or ["absent"])
def test_swe_agent_matches_source(path: Path | None, tmp_path: Path) -> None:
    need(SWEA)
    assert path is not None
    src = json.loads(path.read_text())
    events = import_events(path, "swe-agent")
    (rec,) = episodes_from_events(events).values()
    stats = src["info"]["model_stats"]
    assert rec.T == len(src["trajectory"]) == stats["api_calls"]
    assert close(sum(c.call.cost_usd for c in rec.calls), stats["instance_cost"])
    assert rec.end.exit_status == src["info"]["exit_status"]
    assert rec.end.submission == src["info"]["submission"]
    for s, step in zip(rec.steps, src["trajectory"]):
        assert s.call.call.response.content == step["response"]
        if s.t < rec.T:  # the observation reaches the next input, with SWE-agent's state suffix
            assert s.observations[0].startswith(step["observation"].rstrip("\n"))
        else:
            assert s.observations == [step["observation"]]
    roundtrip(tmp_path, path, events)


# ------------------------------------------------------------------------------------------------
# OpenHands
# ------------------------------------------------------------------------------------------------

OH_LINES = real_files("openhands", "*.jsonl")
OH_EVENTS = real_files("openhands", "*.json")


@pytest.mark.parametrize("path", OH_LINES or [None], ids=_ids(OH_LINES) or ["absent"])
def test_openhands_output_lines_match_source(path: Path | None, tmp_path: Path) -> None:
    need(OH_LINES)
    assert path is not None
    events = import_events(path, "openhands")
    recs = episodes_from_events(events)
    lines = [json.loads(x) for x in path.read_text().splitlines() if x.strip()]
    assert len(recs) == len(lines)
    for rec, src in zip(recs.values(), lines):
        hist = src["history"]
        responses = {
            e["tool_call_metadata"]["model_response"]["id"]
            for e in hist
            if e.get("source") == "agent" and "tool_call_metadata" in e and "action" in e
        }
        assert rec.T == len(responses) == len(src["metrics"]["token_usages"])
        n_obs = sum(1 for e in hist if "observation" in e and "tool_call_metadata" in e)
        assert sum(len(s.tool_results) for s in rec.steps) == n_obs
        assert close(sum(c.call.cost_usd or 0.0 for c in rec.calls), src["metrics"]["accumulated_cost"])
        assert rec.end.submission == src["test_result"]["git_patch"]
        assert rec.end.exit_status == ("error" if src["error"] else "finished")
        # the recall observation is a delivery in every call after it, with resolving proofs
        recall = [e for e in hist if e.get("observation") == "recall"]
        knowledge = [k for e in recall for k in e["extras"]["microagent_knowledge"]]
        if knowledge:
            assert len(rec.deliveries) == rec.T
            for d in rec.deliveries:
                assert d.form == recall[0]["extras"]["recall_type"] and d.route == "host"
                assert [e.item_id for e in d.entries] == [k["name"] for k in knowledge]
                assert [e.value for e in d.entries] == [k["content"] for k in knowledge]
            assert check_proofs(rec) == rec.T * len(knowledge)
            host = rec.calls[0].messages[rec.deliveries[0].placements[0].proof.message_index]
            assert host.role == "user" and "<EXTRA_INFO>" in host.text()
    roundtrip(tmp_path, path, events)


@pytest.mark.parametrize("path", OH_EVENTS or [None], ids=_ids(OH_EVENTS) or ["absent"])
def test_openhands_event_list_replay(path: Path | None, tmp_path: Path) -> None:
    need(OH_EVENTS)
    assert path is not None
    src = json.loads(path.read_text())
    events = import_events(path, "openhands")
    (rec,) = episodes_from_events(events).values()
    agent_actions = [e for e in src if e.get("source") == "agent" and "action" in e]
    assert rec.T == len(agent_actions)
    assert rec.calls[0].messages[0].role == "user"
    assert rec.calls[0].messages[0].text() == src[0]["args"]["content"]
    assert sum(len(s.tool_results) for s in rec.steps) == sum("observation" in e for e in src)
    assert rec.end.exit_status == "finished"
    roundtrip(tmp_path, path, events)


# ------------------------------------------------------------------------------------------------
# Letta agent files
# ------------------------------------------------------------------------------------------------

LETTA = real_files("letta", "*.af")


@pytest.mark.parametrize("path", LETTA or [None], ids=_ids(LETTA) or ["absent"])
def test_letta_blocks_become_items_and_deliveries(path: Path | None, tmp_path: Path) -> None:
    need(LETTA)
    assert path is not None
    src = json.loads(path.read_text())
    events = import_events(path, "letta-agent-file")
    recs = episodes_from_events(events)
    assert len(recs) == len(src["agents"])
    changes = [e for e in events if isinstance(e, MemoryChange)]
    blocks = {b["id"]: b for b in src["blocks"]}
    for rec, agent in zip(recs.values(), src["agents"]):
        ns = f"letta:{agent['name']}"
        mine = [c for c in changes if c.namespace == ns]
        # every attached block is an item whose latest value is the block's current value
        for bid in agent["block_ids"]:
            b = blocks[bid]
            hist = [c for c in mine if c.item_id == b["label"]]
            assert hist and hist[0].op == "create" and hist[-1].value == b["value"]
        assert rec.T == sum(m["role"] == "assistant" for m in agent["messages"])
        system = next(m for m in agent["messages"] if m["role"] == "system")["content"][0]["text"]
        if "<memory_blocks>" not in system:
            assert rec.deliveries == []
            continue
        # one core-memory delivery per call (the system message is in every input)
        assert len(rec.deliveries) == len(rec.calls) >= 1
        assert check_proofs(rec) == sum(len(d.placements) for d in rec.deliveries)
        for d in rec.deliveries:
            assert d.form == "core_memory" and d.route == "host"
            assert len(d.entries) == len(d.placements) == system.count("</value>")
            for e, pl in zip(d.entries, d.placements):
                assert e.namespace == ns and pl.text.startswith(f"<{e.item_id}>\n")
                assert e.value in pl.text
                # the delivered version is one the item actually had
                assert e.version in {c.version for c in mine if c.item_id == e.item_id}
    roundtrip(tmp_path, path, events)


# ------------------------------------------------------------------------------------------------
# Reflexion logs (not model-call logs: reflections become items and unbound deliveries)
# ------------------------------------------------------------------------------------------------

REFLEXION = real_files("reflexion")


@pytest.mark.parametrize("path", REFLEXION or [None], ids=_ids(REFLEXION) or ["absent"])
def test_reflexion_reflections_become_items_and_deliveries(path: Path | None, tmp_path: Path) -> None:
    need(REFLEXION)
    assert path is not None
    events = import_events(path, "reflexion")
    recs = list(episodes_from_events(events).values())
    if path.suffix == ".json":
        src = json.loads(path.read_text())
        memories, outcome = [x["memory"] for x in src], [x["is_success"] for x in src]
    else:
        src = [json.loads(x) for x in path.read_text().splitlines() if x.strip()]
        memories, outcome = [x["reflections"] for x in src], [x["is_solved"] for x in src]
        assert [r.end.submission for r in recs] == [x["solution"] for x in src]
    assert [r.start.task_id for r in recs] == [x["name"] for x in src]
    assert [r.end.resolved for r in recs] == outcome
    for rec, mem in zip(recs, memories):
        assert rec.T == 0  # no model calls are recorded in these logs
        if mem:
            (d,) = rec.deliveries
            assert d.consuming_call_id is None and d.placements == []
            assert [e.value for e in d.entries] == mem
        else:
            assert rec.deliveries == []
    changes = [e for e in events if isinstance(e, MemoryChange)]
    assert len(changes) == sum(len(m) for m in memories)
    roundtrip(tmp_path, path, events)


# ------------------------------------------------------------------------------------------------
# Every imported real episode passes the recording checks (A.1.3) of the context builder
# ------------------------------------------------------------------------------------------------

ALL = MINI + SWEA + OH_LINES + OH_EVENTS + LETTA + REFLEXION


@pytest.mark.parametrize("path", ALL or [None], ids=_ids(ALL) or ["absent"])
def test_imported_real_episodes_pass_recording_checks(path: Path | None) -> None:
    need(ALL)
    assert path is not None
    imp = detect(path)
    for rec in episodes_from_events(ev for _, ev in imp.events(path)).values():
        ctx = build_episode_context(rec)
        assert ctx.valid, [c for c in ctx.checks if not c.ok][:3]


@pytest.mark.parametrize("path", ALL or [None], ids=_ids(ALL) or ["absent"])
def test_sniffing_is_unambiguous(path: Path | None, tmp_path: Path) -> None:
    """Exactly one importer claims each real file, and the native log exported from its events is
    claimed by the native importer alone."""
    need(ALL)
    assert path is not None
    from memuse_core.events import dump_event
    from memuse_core.ingest.base import importers, read_head

    head = read_head(path)
    claims = [imp.name for imp in importers() if imp.sniff(path, head)]
    assert len(claims) == 1, claims
    native = tmp_path / "exported.jsonl"
    with native.open("w") as fh:
        for _, ev in detect(path).events(path):
            fh.write(dump_event(ev) + "\n")
    head = read_head(native)
    assert [imp.name for imp in importers() if imp.sniff(native, head)] == ["memuse-events"]
