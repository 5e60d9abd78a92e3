"""The bulk loader builds stored rows without validating them again; what it returns must equal
what pydantic validation of the same values gives (fields, extras, filled digests, nested models)."""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel

from memuse_core.builder import EpisodeBuilder, entry
from memuse_core.episode import episodes_from_events
from memuse_core.events import (
    EVENT_ADAPTER,
    Entry,
    MemoryDelivery,
    Message,
    ModelCall,
    Placement,
    Proof,
    Request,
    Response,
    RunEvent,
    ToolCall,
    ToolResultEvent,
    Usage,
    dump_event,
)
from memuse_core.ingest import ingest_path
from memuse_core.store import connect, load_episodes
from memuse_core.store.reader import episode_events


def _all_fields_set(m: object, path: str = "ev") -> None:
    if isinstance(m, BaseModel):
        assert set(m.__dict__) == set(type(m).model_fields), path
        for k, v in m.__dict__.items():
            _all_fields_set(v, f"{path}.{k}")
    elif isinstance(m, list):
        for i, v in enumerate(m):
            _all_fields_set(v, f"{path}[{i}]")


def _corpus() -> list:
    b = EpisodeBuilder("e1", run_id="r1", task="Fix the parser", repo="acme/p")
    b.host_block("recall", "Memories:\n- parser in src/p.py", [entry("m1", "parser in src/p.py")])
    b.step("look", "grep -n parse src/p.py", "src/p.py:3:def parse(s):")
    b.step(
        "search",
        "mem search parser",
        "1. [m2] parse is slow",
        tool_memory=([entry("m2", "parse is slow")], "search_result"),
    )
    b.final("Done.")
    events = [RunEvent(run_id="r1", config="c"), *b.finish(resolved=True, exit_status="Submitted")]
    # hand-made odd shapes: tool calls, message extras, request extras, usage, a redacted
    # placement, an entry without digest (filled by validation), labels
    sys_msg = Message(role="system", content="S", cache_control={"type": "ephemeral"})
    asst = Message(
        role="assistant", content=None, tool_calls=[ToolCall(id="t1", name="bash", arguments='{"cmd": "ls"}')]
    )
    parts = Message(role="user", content=[{"type": "text", "text": "hello"}, {"type": "image", "url": "x"}])
    extra = [
        ModelCall(
            episode_id="e1",
            call_id="x1",
            request=Request(
                messages=[sys_msg, parts, asst], temperature=0.2, tools=[{"type": "function", "name": "bash"}]
            ),
            response=Response(content="ok", tool_calls=[ToolCall(name="bash")], reasoning="r", extra_k=1),
            usage=Usage(input_tokens=10, cached_tokens=2),
            cost_usd=0.5,
            started_at=1.0,
            ended_at=2.5,
            model="m",
        ),
        ToolResultEvent(
            episode_id="e1",
            call_id="x1",
            tool_call_id="t1",
            name="bash",
            arguments="{}",
            output="",
            exit_code=0,
        ),
        MemoryDelivery(
            episode_id="e1",
            delivery_id="dx",
            consuming_call_id="x1",
            form="full_card",
            entries=[
                Entry(
                    item_id="m3",
                    value="a value",
                    labels={"rank": 1},
                    version="v2",
                    version_portable=False,
                    display_key="[m3]",
                )
            ],
            placements=[
                Placement(slot="user_prefix", digest="abc", size=12),
                Placement(slot="system_suffix", text="a value", proof=Proof(message_index=0, start=0)),
            ],
        ),
    ]
    assert events[-1].type == "episode_end"
    return events[:-1] + extra + events[-1:]


def test_loaded_events_equal_validated_events(tmp_path: Path, db_file: Path) -> None:
    events = _corpus()
    src = tmp_path / "run.jsonl"
    src.write_text("".join(dump_event(e) + "\n" for e in events))
    con = connect(db_file)
    assert ingest_path(con, src).status == "imported"
    loaded = [ev for _, ev in episode_events(con, ["e1"])]
    assert len(loaded) == len(events) - 1  # the run event is loaded separately
    for ev in loaded:
        _all_fields_set(ev)
        again = EVENT_ADAPTER.validate_python(ev.model_dump())
        assert again == ev
        assert again.model_dump_json() == ev.model_dump_json()
        assert repr(again) == repr(ev)
    x1 = next(e for e in loaded if getattr(e, "call_id", None) == "x1" and e.type == "model_call")
    assert x1.request.messages[0].model_extra == {"cache_control": {"type": "ephemeral"}}
    assert x1.request.model_extra == {"temperature": 0.2}
    assert x1.request.messages[2].tool_calls == [ToolCall(id="t1", name="bash", arguments='{"cmd": "ls"}')]
    # records from the store equal records from the events
    rec = load_episodes(con, ["e1"])["e1"]
    want = episodes_from_events(events)["e1"]
    assert [c.messages for c in rec.calls] == [c.messages for c in want.calls]
    assert [c.call for c in rec.calls] == [c.call for c in want.calls]
    assert rec.deliveries == want.deliveries and rec.T == want.T
    assert rec.deliveries[-1].placements[0].size == 12 and rec.deliveries[-1].placements[1].digest is not None
