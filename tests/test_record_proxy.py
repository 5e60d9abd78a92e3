"""The recording proxy and bridge (MemUse 3.2, A.1.1) against a real local scripted upstream.

Invariants: the upstream receives exactly the bytes the client sent (headers included) and the
client receives exactly what the upstream answered; every recorded request is one valid
`model_call` event whose messages equal what the upstream received; Authorization never reaches
the event file; faults (upstream down, upstream 500, client gone mid-stream) are recorded with
the right status and never stop the proxy; deliveries are bound to the call that carried them,
with proofs verified against that call's request, and a bad proof or a placement whose text occurs
twice turns the episode's spans into error spans with the named rule.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx
import pytest

from memuse_core.episode import episodes_from_events
from memuse_core.events import parse_event, text_digest
from memuse_core.record import Bridge, Recorder, placement, serve, wait_until_up
from memuse_core.record.scripted_upstream import ScriptedUpstream, tool_call
from memuse_core.rules.context import build_episode_context

SECRET = "sk-test-DO-NOT-RECORD-1234"
SYSTEM = "You are a careful engineer working in a shell."
RECALL = "### Relevant memories\n- [fact] run the suite with `make check` [mem0:1a2b3c4d]"


def events_of(path: Path) -> list:
    return [parse_event(json.loads(line)) for line in path.read_text().splitlines()]


@pytest.fixture
def rig(tmp_path: Path):
    """A scripted upstream, an in-process recorder + proxy, and a bridge over HTTP."""
    replies: list[dict] = []

    def policy(body: dict) -> dict:
        return replies.pop(0) if replies else {"content": "ok", "tool_calls": [tool_call("echo hi")]}

    up = ScriptedUpstream(policy).start()
    out = tmp_path / "run.jsonl"
    rec = Recorder(out, run_id="r1")
    px = serve(rec, up.url)
    bridge = Bridge.connect(px.url)
    yield up, px, bridge, out, replies
    px.stop()
    up.stop()
    rec.close()


def post(url: str, body: dict, **kw) -> httpx.Response:
    return httpx.post(url, json=body, headers={"Authorization": f"Bearer {SECRET}"}, timeout=10, **kw)


def test_records_exact_request_response_usage_and_role(rig) -> None:
    up, px, bridge, out, replies = rig
    bridge.start_run(config="mem0", agent="test")
    ep = bridge.start_episode("t1", task="Fix it")
    replies.append({"content": "look", "tool_calls": [tool_call("ls", "call_1")]})
    msgs = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": "Fix it \u00e9 {{x}}"}]
    r = post(
        f"{px.url}/ep/{ep}/agent/v1/chat/completions", {"model": "m", "messages": msgs, "temperature": 0}
    )
    assert r.status_code == 200 and r.json()["choices"][0]["message"]["tool_calls"][0]["id"] == "call_1"
    # The memory system's own call stays out of the agent's steps.
    post(f"{px.url}/ep/{ep}/memory/v1/chat/completions", {"model": "m", "messages": msgs[1:]})
    emb = post(f"{px.url}/embedding/v1/embeddings", {"model": "e", "input": ["a", "b"]})
    assert len(emb.json()["data"]) == 2
    bridge.tool_result("a.py\n", tool_call_id="call_1", arguments="ls", exit_code=0)
    bridge.end_episode(resolved=True, exit_status="Submitted")

    assert up.received_headers[0]["authorization"] == f"Bearer {SECRET}"
    assert SECRET not in out.read_text()
    evs = events_of(out)
    calls = [e for e in evs if e.type == "model_call"]
    assert [c.role for c in calls] == ["agent", "memory", "embedding"]
    assert (
        [m.model_dump(exclude_none=True) for m in calls[0].request.messages]
        == msgs
        == up.received[0]["messages"]
    )
    assert calls[0].request.model_extra["temperature"] == 0
    assert calls[0].usage.input_tokens and calls[0].usage.output_tokens
    assert calls[0].response.tool_calls[0].name == "bash" and calls[0].status == "ok"
    assert calls[0].started_at <= calls[0].ended_at
    tr = next(e for e in evs if e.type == "tool_result")
    assert tr.call_id == calls[0].call_id and tr.exit_code == 0
    rec = episodes_from_events(evs)[ep]
    assert rec.T == 1 and rec.steps[0].tool_results[0].output == "a.py\n"


def test_streaming_is_passed_through_and_reassembled(rig) -> None:
    up, px, bridge, out, replies = rig
    replies.append({"content": "streamed reply text", "tool_calls": [tool_call("pwd", "c9")]})
    body = {"model": "m", "stream": True, "messages": [{"role": "user", "content": "hi"}]}
    direct = httpx.post(f"{up.url}/chat/completions", json={**body}, timeout=10).text
    replies.append({"content": "streamed reply text", "tool_calls": [tool_call("pwd", "c9")]})
    via = post(f"{px.url}/agent/v1/chat/completions", body).text
    strip = [ln for ln in via.splitlines() if ln.startswith("data:")]
    assert len(strip) == len([ln for ln in direct.splitlines() if ln.startswith("data:")])
    assert strip[-1] == "data: [DONE]"
    call = next(e for e in events_of(out) if e.type == "model_call")
    assert call.status == "ok" and call.response.content == "streamed reply text"
    assert call.response.tool_calls[0].id == "c9" and json.loads(call.response.tool_calls[0].arguments) == {
        "command": "pwd"
    }
    assert call.usage.input_tokens


def test_responses_api_with_proof_into_input(rig) -> None:
    up, px, bridge, out, replies = rig
    ep = bridge.start_episode("t2")
    host = f"{SYSTEM}\n\n{RECALL}"
    bridge.deliver(
        [{"item_id": "m1", "value": "run the suite with `make check`"}],
        [placement(RECALL, "/instructions", host_text=host)],
        standing=True,
    )
    body = {
        "model": "m",
        "instructions": host,
        "input": [{"role": "user", "content": [{"type": "input_text", "text": "Fix it"}]}],
    }
    r = post(f"{px.url}/agent/v1/responses", body)
    assert r.status_code == 200
    evs = events_of(out)
    call = next(e for e in evs if e.type == "model_call")
    assert [m.role for m in call.request.messages] == ["system", "user"]
    assert call.response.tool_calls and call.usage.input_tokens
    d = next(e for e in evs if e.type == "memory_delivery")
    assert d.consuming_call_id == call.call_id and d.episode_id == ep
    assert d.placements[0].proof.verified and d.placements[0].proof.message_index == 0


def test_responses_stream_bad_json_and_unrecorded_paths_pass_through(rig) -> None:
    up, px, bridge, out, replies = rig
    replies.append({"content": "a streamed answer", "tool_calls": [tool_call("ls", "fc1")]})
    r = post(f"{px.url}/agent/v1/responses", {"model": "m", "stream": True, "input": "hi"})
    assert "response.completed" in r.text
    # Not JSON: forwarded as is (the upstream answers 400) and recorded with the raw text.
    bad = httpx.post(
        f"{px.url}/agent/v1/chat/completions",
        content=b"{not json",
        timeout=10,
        headers={"Content-Type": "application/json"},
    )
    assert bad.status_code == 400
    models = httpx.get(f"{px.url}/agent/v1/models", timeout=10)
    assert models.status_code == 200 and models.json()["data"][0]["id"] == "scripted-1"
    assert httpx.get(f"{px.url}/elsewhere", timeout=10).status_code == 404
    calls = [e for e in events_of(out) if e.type == "model_call"]
    assert len(calls) == 2  # GET /models is passed through, not recorded
    assert calls[0].status == "ok" and calls[0].response.content == "a streamed answer"
    assert calls[0].response.tool_calls[0].id == "fc1" and calls[0].usage.output_tokens
    assert calls[1].status == "error" and calls[1].request.model_extra["unparsed_body"] == "{not json"


def test_upstream_down_500_and_client_disconnect_are_recorded(tmp_path: Path) -> None:
    out = tmp_path / "run.jsonl"
    rec = Recorder(out)
    # Upstream down: a port nobody listens on.
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    dead = s.getsockname()[1]
    s.close()
    px = serve(rec, f"http://127.0.0.1:{dead}/v1")
    r = post(
        f"{px.url}/agent/v1/chat/completions", {"model": "m", "messages": [{"role": "user", "content": "x"}]}
    )
    assert r.status_code == 502 and "upstream unreachable" in r.json()["error"]["message"]
    px.stop()

    err_body = {"error": {"message": "model overloaded", "type": "server_error", "code": 500}}
    up = ScriptedUpstream(
        [
            {"status": 500, "body": err_body},
            {"content": "x" * 400, "stream_delay": 0.05},
            {"content": "after"},
        ]
    ).start()
    px = serve(rec, up.url)
    r = post(
        f"{px.url}/agent/v1/chat/completions", {"model": "m", "messages": [{"role": "user", "content": "y"}]}
    )
    assert r.status_code == 500 and r.json() == err_body
    # Client disconnect mid-stream: read the first bytes of a slow stream, then hang up.
    body = json.dumps({"model": "m", "stream": True, "messages": [{"role": "user", "content": "z"}]}).encode()
    port = int(px.url.rsplit(":", 1)[1])
    c = socket.create_connection(("127.0.0.1", port))
    c.sendall(
        b"POST /agent/v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        b"Content-Length: %d\r\n\r\n%s" % (len(body), body)
    )
    assert c.recv(200).startswith(b"HTTP/1.1 200")
    c.close()
    deadline = time.time() + 10
    while time.time() < deadline and out.read_text().count('"model_call"') < 3:
        time.sleep(0.05)
    # The proxy still serves.
    r = post(
        f"{px.url}/agent/v1/chat/completions", {"model": "m", "messages": [{"role": "user", "content": "w"}]}
    )
    assert r.status_code == 200 and r.json()["choices"][0]["message"]["content"] == "after"
    px.stop()
    up.stop()
    rec.close()
    calls = [e for e in events_of(out) if e.type == "model_call"]
    assert [c.status for c in calls] == ["error", "error", "incomplete", "ok"]
    assert "upstream unreachable" in calls[0].response.model_extra["error"]
    assert calls[1].response.model_extra["http_status"] == 500
    assert json.loads(calls[1].response.model_extra["error"]) == err_body
    assert calls[2].response.model_extra.get("client_disconnected") is True
    assert len(calls[2].response.content or "") < 400


def _episode_with_delivery(rig, pointer: str, text: str, host_text: str, messages: list[dict]):
    up, px, bridge, out, replies = rig
    ep = bridge.start_episode("t", task="Fix it")
    bridge.deliver(
        [{"item_id": "m1", "namespace": "mem0:r", "value": "run the suite with `make check`"}],
        [placement(text, pointer, host_text=host_text)],
        standing=True,
    )
    for _ in range(2):
        r = post(f"{px.url}/agent/v1/chat/completions", {"model": "m", "messages": messages})
        messages = messages + [
            r.json()["choices"][0]["message"] | {"content": "ok"},
            {
                "role": "tool",
                "tool_call_id": r.json()["choices"][0]["message"]["tool_calls"][0]["id"],
                "content": "hi",
            },
        ]
    bridge.end_episode(resolved=False)
    evs = events_of(out)
    return ep, evs, build_episode_context(episodes_from_events(evs)[ep])


def test_verified_standing_delivery_is_restated_on_every_call(rig) -> None:
    host = f"{SYSTEM}\n\n{RECALL}"
    msgs = [{"role": "system", "content": host}, {"role": "user", "content": "Fix it"}]
    ep, evs, ctx = _episode_with_delivery(rig, "/messages/0/content", RECALL, host, msgs)
    ds = [e for e in evs if e.type == "memory_delivery"]
    calls = [e.call_id for e in evs if e.type == "model_call"]
    assert [d.consuming_call_id for d in ds] == calls and len(ds) == 2
    assert all(p.proof.verified and p.proof.start == host.index(RECALL) for d in ds for p in d.placements)
    assert ctx.valid and len(ctx.spans) == 1 and ctx.spans[0].restatements == 1
    assert ctx.spans[0].status == "eligible" and ctx.spans[0].first_step == 1


def test_proof_that_does_not_match_makes_error_spans(rig) -> None:
    host = f"{SYSTEM}\n\n{RECALL}"
    msgs = [{"role": "system", "content": host}, {"role": "user", "content": "Fix it"}]
    # The adapter claims the block is in the user message: the recorder checks and says no.
    ep, evs, ctx = _episode_with_delivery(rig, "/messages/1/content", RECALL, host, msgs)
    d = next(e for e in evs if e.type == "memory_delivery")
    assert d.placements[0].proof.verified is False
    assert "not found at json pointer /messages/1/content" in d.placements[0].proof.problem
    assert not ctx.valid
    assert ctx.spans and all(s.status == "error" for s in ctx.spans)
    assert any(c.rule in ("proof_invalid", "text_not_found") for c in ctx.checks if not c.ok)
    assert "recording check failed" in ctx.spans[0].reason


def test_placement_text_twice_in_host_makes_error_spans(rig) -> None:
    host = f"{SYSTEM}\n\n{RECALL}\n\n(repeated)\n{RECALL}"
    msgs = [{"role": "system", "content": host}, {"role": "user", "content": "Fix it"}]
    ep, evs, ctx = _episode_with_delivery(rig, "/messages/0/content", RECALL, host, msgs)
    d = next(e for e in evs if e.type == "memory_delivery")
    assert d.placements[0].proof.verified is False and "occurs 2 times" in d.placements[0].proof.problem
    assert all(s.status == "error" and "text_not_unique" in s.reason for s in ctx.spans)


def test_one_shot_delivery_skips_failed_call_and_binds_to_retry(rig) -> None:
    up, px, bridge, out, replies = rig
    ep = bridge.start_episode("t3", task="Fix")
    tool_out = '{"returncode": 0, "output": "memory: use make check"}'
    msgs = [
        {"role": "system", "content": SYSTEM},
        {"role": "user", "content": "Fix"},
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "bash", "arguments": "{}"}}],
        },
        {"role": "tool", "tool_call_id": "c1", "content": tool_out},
    ]
    bridge.deliver(
        [{"item_id": "m1", "value": "use make check"}],
        [
            placement(
                tool_out, "/messages/3/content", host_text=tool_out, slot="tool_result", kind="tool_output"
            )
        ],
        route="agent",
        form="search_result",
    )
    replies.extend([{"status": 503, "body": {"error": {"message": "busy"}}}, {"content": "done"}])
    assert post(f"{px.url}/agent/v1/chat/completions", {"model": "m", "messages": msgs}).status_code == 503
    assert post(f"{px.url}/agent/v1/chat/completions", {"model": "m", "messages": msgs}).status_code == 200
    bridge.end_episode()
    evs = events_of(out)
    calls = [e for e in evs if e.type == "model_call"]
    ds = [e for e in evs if e.type == "memory_delivery"]
    assert len(ds) == 1 and ds[0].consuming_call_id == calls[1].call_id and calls[1].status == "ok"
    assert ds[0].placements[0].proof.verified
    ctx = build_episode_context(episodes_from_events(evs)[ep])
    assert ctx.valid and ctx.deliveries[0].consuming_step == 1


def test_retraction_and_history_rewrite_are_derived(rig) -> None:
    up, px, bridge, out, replies = rig
    ep = bridge.start_episode("t4", task="task")
    base = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": "task"}]
    m1 = base + [
        {"role": "assistant", "content": "a1"},
        {"role": "user", "content": "o1"},
        {"role": "assistant", "content": "a2"},
        {"role": "user", "content": "o2"},
    ]
    m2 = base + [
        {"role": "assistant", "content": "a2"},
        {"role": "user", "content": "o2"},
        {"role": "assistant", "content": "a3"},
    ]
    m3 = base + [{"role": "user", "content": "summary of earlier work"}]
    for m in (m1, m2, m3):
        replies.append({"content": "ok"})
        post(f"{px.url}/agent/v1/chat/completions", {"model": "m", "messages": m})
    bridge.end_episode()
    evs = events_of(out)
    calls = [e.call_id for e in evs if e.type == "model_call"]
    ctxs = [e for e in evs if e.type in ("retraction", "history_rewrite")]
    assert ctxs[0].type == "retraction" and ctxs[0].removed == [2, 3] and ctxs[0].before_call_id == calls[1]
    assert ctxs[1].type == "history_rewrite" and ctxs[1].kept_prefix == 2
    assert [m.content for m in ctxs[1].replacement] == ["summary of earlier work"]
    assert ctxs[1].before_call_id == calls[2]
    ctx = build_episode_context(episodes_from_events(evs)[ep])
    assert ctx.valid, ctx.checks


def test_bad_annotation_is_a_clear_error_and_nothing_is_written(rig) -> None:
    up, px, bridge, out, replies = rig
    from memuse_core.record import AnnotationError

    with pytest.raises(AnnotationError, match="no open episode"):
        bridge.deliver([{"item_id": "x", "value": "v"}], [])
    with pytest.raises(AnnotationError, match="unknown annotation"):
        bridge._t.send("explode", {})
    assert "memory_delivery" not in out.read_text()


def test_event_file_stays_valid_after_kill_9(tmp_path: Path) -> None:
    """A `memuse record proxy` process killed with SIGKILL under load leaves whole lines only."""
    up = ScriptedUpstream(lambda b: {"content": "r" * 2000}).start()
    out = tmp_path / "run.jsonl"
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "memuse_core",
            "record",
            "proxy",
            "--upstream",
            up.url,
            "--out",
            str(out),
            "--port",
            str(port),
        ],
        stderr=subprocess.PIPE,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    try:
        wait_until_up(f"http://127.0.0.1:{port}", timeout=30)
        big = [{"role": "user", "content": "q" * 50_000}]
        stop = threading.Event()

        def hammer() -> None:
            with httpx.Client(timeout=5) as c:
                while not stop.is_set():
                    try:
                        c.post(
                            f"http://127.0.0.1:{port}/agent/v1/chat/completions",
                            json={"model": "m", "messages": big},
                        )
                    except httpx.HTTPError:
                        return

        threads = [threading.Thread(target=hammer) for _ in range(4)]
        for t in threads:
            t.start()
        deadline = time.time() + 20
        while time.time() < deadline and (not out.exists() or out.read_text().count("\n") < 10):
            time.sleep(0.02)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)
        stop.set()
        for t in threads:
            t.join(timeout=10)
    finally:
        if proc.poll() is None:
            proc.kill()
        up.stop()
    raw = out.read_bytes()
    assert raw.endswith(b"\n")
    lines = raw.decode().splitlines()
    assert len(lines) >= 10
    for line in lines:
        parse_event(json.loads(line))
    # Reopening appends after the last whole line.
    rec = Recorder(out)
    rec.start_episode(task_id="after-crash")
    rec.close()
    parse_event(json.loads(out.read_text().splitlines()[-1]))


def test_cli_rejects_bad_upstream_without_creating_files(tmp_path: Path) -> None:
    out = tmp_path / "x.jsonl"
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "memuse_core",
            "record",
            "proxy",
            "--upstream",
            "ftp://nowhere",
            "--out",
            str(out),
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert r.returncode != 0 and r.stderr.strip().startswith("error: --upstream")
    assert len(r.stderr.strip().splitlines()) == 1 and not out.exists()
    assert text_digest("x")  # the digest helper the proofs use is importable from events


def test_delta_encoded_log_resolves_to_the_same_inputs(tmp_path: Path) -> None:
    """`--delta` writes base_call_id/base_len when the previous call's messages are a prefix; the
    resolved inputs equal those of a full-request log, retractions included."""
    up = ScriptedUpstream(lambda b: {"content": "ok"}).start()
    logs = {}
    base = [{"role": "system", "content": SYSTEM + "\n" + "s" * 5000}, {"role": "user", "content": "task"}]
    seq = [
        base,
        base + [{"role": "assistant", "content": "a1"}, {"role": "user", "content": "o1"}],
        base
        + [
            {"role": "assistant", "content": "a1"},
            {"role": "user", "content": "o1"},
            {"role": "assistant", "content": "a2"},
            {"role": "user", "content": "o2"},
        ],
        base + [{"role": "assistant", "content": "a2"}, {"role": "user", "content": "o2"}],
    ]
    for delta in (False, True):
        out = tmp_path / f"{delta}.jsonl"
        rec = Recorder(out, run_id="r", delta=delta)
        px = serve(rec, up.url)
        rec.start_episode(task_id="t", episode_id="e", task="task")
        for m in seq:
            post(f"{px.url}/agent/v1/chat/completions", {"model": "m", "messages": m})
        rec.end_episode("e")
        px.stop()
        rec.close()
        logs[delta] = out
    up.stop()
    full, delta_ = (episodes_from_events(events_of(logs[d]))["e"] for d in (False, True))
    assert [c.messages for c in full.calls] == [c.messages for c in delta_.calls]
    reqs = [e.request for e in events_of(logs[True]) if e.type == "model_call"]
    assert [r.base_len for r in reqs] == [None, 2, 4, None]  # the retraction breaks the prefix
    assert logs[True].stat().st_size < 0.6 * logs[False].stat().st_size
    assert build_episode_context(delta_).valid


def test_proxy_only_recording_ingests_as_a_run(tmp_path: Path, db_file: Path) -> None:
    """Without any bridge, calls land in an automatic episode and the file imports as one run."""
    from memuse_core.ingest import ingest_path
    from memuse_core.store import connect, store_info

    up = ScriptedUpstream(lambda b: {"content": "ok", "tool_calls": [tool_call("ls")]}).start()
    out = tmp_path / "run.jsonl"
    rec = Recorder(out, run_id="plain")
    px = serve(rec, up.url)
    msgs = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": "task"}]
    for _ in range(3):
        r = post(f"{px.url}/v1/chat/completions", {"model": "m", "messages": msgs}).json()
        msgs = msgs + [
            r["choices"][0]["message"],
            {
                "role": "tool",
                "tool_call_id": r["choices"][0]["message"]["tool_calls"][0]["id"],
                "content": "x",
            },
        ]
    post(f"{px.url}/embedding/v1/embeddings", {"model": "e", "input": "q"})
    px.stop()
    up.stop()
    rec.close()
    con = connect(db_file)
    try:
        ingest_path(con, out)
        info = store_info(con)
    finally:
        con.close()
    assert (info["runs"], info["episodes"], info["model_calls"], info["steps"]) == (1, 1, 4, 3)


def test_cli_proxy_process_with_a_bridge_over_http(tmp_path: Path) -> None:
    """`memuse record proxy` as its own process: a bridge annotates over HTTP, SIGTERM ends it cleanly."""
    up = ScriptedUpstream(lambda b: {"content": "ok"}).start()
    out = tmp_path / "run.jsonl"
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "memuse_core",
            "record",
            "proxy",
            "--upstream",
            up.url,
            "--out",
            str(out),
            "--port",
            str(port),
            "--run-id",
            "cli",
        ],
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        url = f"http://127.0.0.1:{port}"
        wait_until_up(url, timeout=30)
        bridge = Bridge.connect(url)
        bridge.start_run(config="cli-test", run_id="cli")
        ep = bridge.start_episode("t", task="Fix it")
        host = f"{SYSTEM}\n\n{RECALL}"
        bridge.deliver(
            [{"item_id": "m1", "value": "run the suite with `make check`"}],
            [placement(RECALL, "/messages/0/content", host_text=host)],
            standing=True,
        )
        r = post(
            f"{url}/ep/{ep}/agent/v1/chat/completions",
            {
                "model": "m",
                "messages": [{"role": "system", "content": host}, {"role": "user", "content": "Fix it"}],
            },
        )
        assert r.status_code == 200
        bridge.end_episode(resolved=True)
    finally:
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=30)
        up.stop()
    assert proc.returncode == 0 and "recorded 1 calls" in err
    evs = events_of(out)
    assert [e.type for e in evs] == ["run", "episode_start", "model_call", "memory_delivery", "episode_end"]
    assert evs[0].config == "cli-test" and evs[3].placements[0].proof.verified
