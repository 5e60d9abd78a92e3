"""The ingest fast paths store exactly what the generic paths would."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from memuse_core.events import Message
from memuse_core.ingest.base import IngestError
from memuse_core.ingest.native import NATIVE
from memuse_core.store.blobs import _SHELL_JSON, BLOB_REF, _shell_of, blob_hash, message_shell

MESSAGES = [
    {"role": "user", "content": "plain"},
    {"role": "system", "content": 'ünïcode "quotes"\n\ttabs \u2028 and \x01 control'},
    {"role": "assistant", "content": "", "tool_calls": []},
    {
        "role": "assistant",
        "content": "calling",
        "tool_calls": [{"id": "c1", "name": "bash", "arguments": '{"command": "ls é"}'}, {"name": "noid"}],
    },
    {"role": "tool", "content": "out", "tool_call_id": "c1", "name": "bash"},
    {"role": "r\u00f4le", "content": "x", "name": "n"},
]


@pytest.mark.parametrize("raw", MESSAGES)
def test_direct_shell_equals_dumped_shell(raw: dict) -> None:
    m = Message.model_validate(raw)
    d = m.model_dump(exclude_none=True)
    d["content"] = {BLOB_REF: blob_hash(d["content"])}
    assert _shell_of(m, blob_hash(m.content)) == _SHELL_JSON(d)
    assert message_shell(m) == (_SHELL_JSON(d), m.content)


def test_extra_fields_and_parts_use_the_generic_shell() -> None:
    m = Message.model_validate({"role": "user", "content": "x", "cache_control": {"type": "ephemeral"}})
    shell, content = message_shell(m)
    assert content == "x" and '"cache_control": {"type": "ephemeral"}' in shell
    parts = Message.model_validate({"role": "user", "content": [{"type": "text", "text": "a"}]})
    shell, content = message_shell(parts)
    assert content is None and '"text": "a"' in shell


RUN = b'{"type":"run","run_id":"r1"}'
START = b'{"type":"episode_start","episode_id":"e","run_id":"r1","task_id":"t"}'


@pytest.mark.parametrize("sep,lines", [(b"\n", [1, 4]), (b"\r\n", [1, 4]), (b"\r", [1, 4])])
def test_line_numbers_match_text_mode(tmp_path: Path, sep: bytes, lines: list[int]) -> None:
    data = RUN + sep + sep + b"  " + sep + START + sep
    p = tmp_path / "x.jsonl"
    p.write_bytes(data)
    assert [n for n, _ in NATIVE.events(p)] == lines
    with open(p, encoding="utf-8", newline="") as f:  # what reading as text numbers
        assert [i for i, line in enumerate(f, 1) if line.strip()] == lines
    g = tmp_path / "x.jsonl.gz"
    with gzip.open(g, "wb") as f:
        f.write(data)
    assert [n for n, _ in NATIVE.events(g)] == lines


def test_bad_utf8_line_is_named(tmp_path: Path) -> None:
    p = tmp_path / "x.jsonl"
    p.write_bytes(RUN + b"\n" + b'{"type":"run","run_id":"\xff"}\n')
    with pytest.raises(IngestError, match=r"x\.jsonl:2: not UTF-8 text"):
        list(NATIVE.events(p))


def _delivery(i: int, **over: object) -> dict:
    d = {
        "type": "memory_delivery",
        "v": 1,
        "episode_id": "e",
        "delivery_id": f"d{i}",
        "route": "host",
        "form": "task_recall",
        "consuming_call_id": f"c{i}",
        "entries": [
            {"namespace": "n", "item_id": "m1", "value": "Use `_clamp_day` in src/util.py."},
            {"namespace": "n", "item_id": "m2", "value": "Run pytest -x first.", "labels": {"s": 0.5}},
        ],
        "placements": [
            {
                "slot": "system_suffix",
                "kind": "block",
                "text": "Memories:\n- ...",
                "proof": {"message_index": 0, "start": 10},
            }
        ],
        "search_id": "s1",
    }
    d.update(over)
    return d


def _compact(d: dict) -> bytes:
    import json

    return json.dumps(d, separators=(",", ":"), ensure_ascii=False).encode()


@pytest.mark.parametrize(
    "variant",
    [
        {},  # the common case: ids differ, the tail repeats
        {"provisional_step": 3},  # an extra head field
        {"form": "persona", "route": "agent"},  # other head values
    ],
)
def test_restated_delivery_cache_gives_what_full_validation_gives(tmp_path: Path, variant: dict) -> None:
    from memuse_core.events import EVENT_ADAPTER

    lines = [RUN, START] + [_compact({**_delivery(i), **variant}) for i in range(4)]
    p = tmp_path / "d.jsonl"
    p.write_bytes(b"\n".join(lines) + b"\n")
    got = [ev for _, ev in NATIVE.events(p)]
    want = [EVENT_ADAPTER.validate_json(line) for line in lines]
    assert got == want
    assert [e.model_fields_set for e in got] == [e.model_fields_set for e in want]
    assert got[3].entries is got[4].entries  # the tail was validated once and shared


def test_restated_delivery_cache_keeps_errors_and_duplicate_keys(tmp_path: Path) -> None:
    import json

    ok = _compact(_delivery(1))
    # a bad head field on a line whose tail is cached: the same error as without the cache
    bad = _compact(_delivery(2, episode_id=5))
    p = tmp_path / "bad.jsonl"
    p.write_bytes(b"\n".join([RUN, START, ok, bad]) + b"\n")
    with pytest.raises(IngestError, match=r"bad.jsonl:4: field `episode_id`"):
        list(NATIVE.events(p))
    # a key repeated in the tail wins over the head, as in plain JSON parsing
    tail = ok[ok.index(b',"entries":[') : -1] + b',"form":"late"}'
    lines = [
        RUN,
        START,
        ok[: ok.index(b',"entries":[')] + tail,
        _compact(_delivery(3))[: _compact(_delivery(3)).index(b',"entries":[')] + tail,
    ]
    q = tmp_path / "dup.jsonl"
    q.write_bytes(b"\n".join(lines) + b"\n")
    got = [ev for _, ev in NATIVE.events(q)]
    assert [g.form for g in got[2:]] == ["late", "late"] == [json.loads(x)["form"] for x in lines[2:]]


def _call(cid: str, msgs: list[str], base: str | None = None, base_len: int | None = None) -> dict:
    roles = ["user", "assistant"]
    req: dict = {
        "messages": [
            {"role": roles[i % 2] if m[0] != "s" else "system", "content": m} for i, m in enumerate(msgs)
        ]
    }
    if base is not None:
        req["base_call_id"] = base
    if base_len is not None:
        req["base_len"] = base_len
    return {
        "type": "model_call",
        "episode_id": "e",
        "call_id": cid,
        "role": "agent",
        "request": req,
        "response": {"content": f"answer of {cid}"},
        "status": "ok",
    }


def test_delta_chains_shared_between_calls_store_every_calls_own_input(tmp_path: Path) -> None:
    """The writer extends a base call's message lists in place when a call continues its whole
    input (`call_rows.add_call`); calls that branch off an earlier point, restate a prefix or start
    anew still get exactly their own messages back, and so do the step observations."""
    import json

    from memuse_core.episode import episodes_from_events
    from memuse_core.events import EVENT_ADAPTER
    from memuse_core.ingest import ingest_path
    from memuse_core.store import connect, load_episode

    calls = [
        _call("c1", ["s0", "u1"]),
        _call("c2", ["a1", "u2"], "c1"),  # continues c1: extends its lists
        _call("c3", ["a3", "u3"], "c1", 2),  # branches from c1 after c2 extended it: a copy
        _call("c4", ["u4"], "c2", 3),  # a shorter prefix of c2
        _call("c5", ["a5", "u5"], "c2"),  # continues c2, whose lists c3/c4 did not touch
        _call("c6", ["s0", "u1", "x6"]),  # no base: stored against c5's common prefix
        _call("c7", ["a7", "u7"], "c6"),  # continues c6 (its row's list must not grow)
        _call("c8", ["u8"], "c5", 6),  # continues c5 after c6/c7 started another chain
    ]
    lines = [
        {"type": "run", "run_id": "r1"},
        {"type": "episode_start", "episode_id": "e", "run_id": "r1", "task_id": "t"},
        *calls,
        {"type": "episode_end", "episode_id": "e", "resolved": True},
    ]
    src = tmp_path / "chains.jsonl"
    src.write_text("".join(json.dumps(x) + "\n" for x in lines))
    con = connect(tmp_path / "s.duckdb")
    assert ingest_path(con, src).status == "imported"
    events = [EVENT_ADAPTER.validate_python(x) for x in lines]
    want = episodes_from_events(events)["e"]
    got = load_episode(con, "e")
    assert [c.messages for c in got.calls] == [c.messages for c in want.calls]
    assert [len(c.messages) for c in got.calls] == [2, 4, 4, 4, 6, 3, 5, 7]
    assert [s.observations for s in got.steps] == [s.observations for s in want.steps]
    n = dict(con.execute("SELECT call_id, n_messages FROM calls").fetchall())
    assert n == {"c1": 2, "c2": 4, "c3": 4, "c4": 4, "c5": 6, "c6": 3, "c7": 5, "c8": 7}
    stored = dict(con.execute("SELECT call_id, len(msg_hashes) FROM calls").fetchall())
    assert stored == {"c1": 2, "c2": 2, "c3": 2, "c4": 1, "c5": 2, "c6": 1, "c7": 2, "c8": 1}
