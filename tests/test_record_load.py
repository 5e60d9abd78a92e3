"""The recording proxy under concurrent load, over loopback against the scripted
upstream: at concurrency 50, every request on a fresh connection (the hardest case for the listen
queue: socketserver's default backlog of 5 reset 27 of 400 here) and then on kept-alive
connections, every request is answered 200, none is reset, and every call is recorded exactly once
with the request that the upstream received. Behaviour only: no timing is asserted.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from memuse_core.events import parse_event
from memuse_core.record import Recorder, serve
from memuse_core.record.load import chat_bodies, hammer
from memuse_core.record.scripted_upstream import ScriptedUpstream


@pytest.mark.parametrize(("n", "fresh"), [(400, True), (200, False)], ids=["fresh-connections", "keep-alive"])
def test_concurrency_50_no_resets_and_every_call_recorded_once(tmp_path: Path, n: int, fresh: bool) -> None:
    up = ScriptedUpstream(lambda body: {"content": "ok"}).start()
    out = tmp_path / "load.jsonl"
    rec = Recorder(out, run_id="load")
    px = serve(rec, up.url)
    try:
        res = hammer(
            f"{px.url}/agent/v1/chat/completions",
            chat_bodies(n, tag="req"),
            concurrency=50,
            fresh_connections=fresh,
        )
    finally:
        px.stop()
        up.stop()
        rec.close()
    assert res.errors == [] and res.resets == 0
    assert dict(res.statuses) == {200: n}
    calls = [parse_event(json.loads(line)) for line in out.read_text().splitlines()]
    calls = [c for c in calls if c.type == "model_call"]
    assert rec.calls_recorded == len(calls) == n
    assert len({c.call_id for c in calls}) == n
    assert all(c.status == "ok" and c.response.content == "ok" for c in calls)
    recorded = Counter(c.request.messages[-1].content for c in calls)
    received = Counter(b["messages"][-1]["content"] for b in up.received)
    assert recorded == received == Counter(f"req-{i}" for i in range(n))
