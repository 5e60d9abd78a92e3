"""Limits and referential checks at ingest: the boundaries and what stays allowed.

The refusals themselves are played by tests/hostile/ (one generated file per case); these tests
pin the other side of each line: what the recorder writes at its deepest is read back, a limit is
exact, and legitimate repetition (the same value for a version, a search stored by an earlier
file, one version id in two per-run stores) is not refused.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memuse_core.ingest import IngestError, ingest_path
from memuse_core.ingest import limits as limits_mod
from memuse_core.ingest import native as native_mod
from memuse_core.record.calls import parse_request
from memuse_core.record.wire import CHAT
from memuse_core.store import connect
from memuse_core.vocab import EVENT_ENVELOPE_DEPTH, MAX_BODY_DEPTH, MAX_EVENT_DEPTH


def _log(path: Path, events: list[dict | str]) -> Path:
    path.write_text("".join((e if isinstance(e, str) else json.dumps(e)) + "\n" for e in events))
    return path


RUN = {"type": "run", "run_id": "r1"}


def _episode(ep: str = "e1", *middle: dict) -> list[dict]:
    call = {"type": "model_call", "episode_id": ep, "call_id": f"{ep}-c1"}
    return [
        {"type": "episode_start", "episode_id": ep, "run_id": "r1", "task_id": "t"},
        call,
        *middle,
        {"type": "episode_end", "episode_id": ep},
    ]


def _import(db: Path, path: Path):
    con = connect(db)
    try:
        return ingest_path(con, path)
    finally:
        con.close()


def test_the_ingest_depth_limit_covers_the_recorders_body_limit_plus_the_envelope() -> None:
    assert MAX_EVENT_DEPTH == MAX_BODY_DEPTH + EVENT_ENVELOPE_DEPTH >= 103


def test_the_deepest_body_the_recorder_records_is_read_back(tmp_path: Path) -> None:
    meta = "[" * (MAX_BODY_DEPTH - 3) + "]" * (MAX_BODY_DEPTH - 3)
    body = b'{"model": "m", "messages": [{"role": "user", "content": "hi", "meta": %s}]}' % meta.encode()
    req = parse_request(CHAT, body)
    assert "unparsed_reason" not in req.request  # recorded as structure
    call = {"type": "model_call", "episode_id": "e1", "call_id": "c1", "request": req.request}
    log = _log(tmp_path / "rec.jsonl", [RUN, *_episode("e1")[:1], call, *_episode("e1")[-1:]])
    assert _import(tmp_path / "s.duckdb", log).status == "imported"


def test_a_line_exactly_at_the_depth_limit_is_accepted_one_more_is_not(tmp_path: Path) -> None:
    def run_line(depth: int) -> str:  # event object + meta object + arrays
        return '{"type":"run","run_id":"r1","meta":{"x":' + "[" * (depth - 2) + "]" * (depth - 2) + "}}"

    assert limits_mod.line_depth(run_line(MAX_EVENT_DEPTH).encode()) <= MAX_EVENT_DEPTH
    ok = _log(tmp_path / "ok.jsonl", [run_line(MAX_EVENT_DEPTH), *_episode()])
    assert _import(tmp_path / "a.duckdb", ok).status == "imported"
    bad = _log(tmp_path / "bad.jsonl", [run_line(MAX_EVENT_DEPTH + 1), *_episode()])
    with pytest.raises(IngestError, match=rf"bad\.jsonl:1: JSON nested {MAX_EVENT_DEPTH + 1} levels deep"):
        _import(tmp_path / "b.duckdb", bad)


def test_brackets_inside_strings_do_not_count_as_depth() -> None:
    raw = json.dumps({"type": "run", "run_id": "r", "label": "[{" * 5000 + '\\"]'}).encode()
    assert limits_mod.line_depth(raw) <= 2


def test_a_line_longer_than_the_limit_is_refused_without_reading_it_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(native_mod, "MAX_LINE_BYTES", 1000)
    log = _log(tmp_path / "long.jsonl", [RUN, {**RUN, "run_id": "r2", "label": "x" * 5000}])
    with pytest.raises(IngestError, match=r"long\.jsonl:2: line longer than 1,000 bytes"):
        _import(tmp_path / "s.duckdb", log)


def test_a_document_larger_than_the_limit_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(limits_mod, "MAX_DOCUMENT_BYTES", 100)
    doc = {"trajectory_format": "mini-swe-agent-1", "messages": [{"role": "user", "content": "x" * 200}]}
    p = tmp_path / "big.traj.json"
    p.write_text(json.dumps(doc))
    with pytest.raises(
        IngestError, match=r"big\.traj\.json: document larger than 100 bytes \(decompressed\)"
    ):
        _import(tmp_path / "s.duckdb", p)


def test_legitimate_repetition_is_not_refused(tmp_path: Path) -> None:
    db = tmp_path / "s.duckdb"
    change = {"type": "memory_change", "item_id": "i1", "version": "v1", "op": "create", "value": "alpha"}
    search = {"type": "memory_search", "episode_id": "e1", "search_id": "s1"}
    first = _log(tmp_path / "a.jsonl", [RUN, change, change, *_episode("e1", search)])
    assert _import(db, first).status == "imported"  # the same value for a version, twice
    later = [
        {"type": "run", "run_id": "r2"},
        change,  # the same value again, in a later file
        {**change, "run_id": "r2", "value": "another store"},  # one version id in another run's store
        {**change, "version": None, "value": "unversioned"},  # no version: nothing to conflict with
        *[{**e, "run_id": "r2"} if e["type"] == "episode_start" else e for e in _episode("e2")][:2],
        {"type": "memory_delivery", "episode_id": "e2", "delivery_id": "d2", "search_id": "s1"},
        _episode("e2")[-1],
    ]
    assert _import(db, _log(tmp_path / "b.jsonl", later)).status == "imported"  # search s1 is stored


def test_a_consuming_call_may_follow_its_delivery_in_the_file(tmp_path: Path) -> None:
    ep = _episode("e1")
    delivery = {
        "type": "memory_delivery",
        "episode_id": "e1",
        "delivery_id": "d1",
        "consuming_call_id": "e1-c1",
    }
    log = _log(tmp_path / "a.jsonl", [RUN, ep[0], delivery, *ep[1:]])
    assert _import(tmp_path / "s.duckdb", log).status == "imported"


def _deep(k: int) -> str:
    return "[" * k + "]" * k


def _call_with_tools(k: int) -> str:  # event, request, tools list, tool object, then k arrays
    return (
        '{"type":"model_call","episode_id":"e1","call_id":"e1-c0","request":{"messages":[],"tools":[{"x":'
        + _deep(k)
        + "}]}}"
    )


def _delivery(did: str, k: int | None, *, head_entries: bool = False) -> str:
    # event, entries list, entry object, labels object, then k arrays
    labels = ',"labels":{"x":' + _deep(k) + "}" if k is not None else ""
    entries = '"entries":[{"namespace":"n","item_id":"i","value":"v"' + labels + "}]"
    head = '{"type":"memory_delivery","episode_id":"e1","delivery_id":"' + did + '","route":"host","form":"f"'
    if head_entries:  # entries in the head too (a duplicate key): the later member wins
        head += "," + '"entries":[{"namespace":"n","item_id":"j","labels":{"x":' + _deep(k or 0) + "}}]"
    return head + "," + entries + ',"placements":[]}'


@pytest.mark.parametrize(
    "make",
    [
        pytest.param(lambda k: [_call_with_tools(k)], id="model_call.request.tools"),
        pytest.param(lambda k: [_delivery("d1", k)], id="delivery.entries.labels"),
        pytest.param(
            lambda k: [_delivery("d1", None), _delivery("d2", k, head_entries=True)],
            id="restated-delivery-head-with-entries",
        ),
    ],
)
def test_free_form_values_of_fast_decoded_lines_keep_the_depth_limit(tmp_path: Path, make) -> None:
    """The fast path skips the depth pre-check only for lines without free-form values
    (`native._fast_bounded`); where a free-form value sits, the limit is exact as for any line,
    and nesting past msgspec's own recursion limit gives the same refusal, never a traceback."""
    start, *rest = _episode()
    at = make(MAX_EVENT_DEPTH - 4)
    ok = _log(tmp_path / "ok.jsonl", [RUN, start, *at, *rest])
    assert _import(tmp_path / "a.duckdb", ok).status == "imported"
    for k, n in [(MAX_EVENT_DEPTH - 3, MAX_EVENT_DEPTH + 1), (5000, 5004)]:
        lines = make(k)
        bad = _log(tmp_path / f"bad{k}.jsonl", [RUN, start, *lines, *rest])
        line = 2 + len(lines)
        with pytest.raises(IngestError, match=rf"bad{k}\.jsonl:{line}: JSON nested {n} levels deep"):
            _import(tmp_path / f"b{k}.duckdb", bad)


def test_lines_without_free_form_values_are_bounded_by_their_structs() -> None:
    from memuse_core.events.fast import FAST_CALL, FAST_DELIVERY, FAST_TOOL_RESULT

    assert native_mod._FREE_FORM == {
        FAST_CALL: [("request", "tools", "")],
        FAST_DELIVERY: [("entries", "", "labels")],
        FAST_TOOL_RESULT: [],
    }
    decode = native_mod.fast_decode
    assert native_mod._fast_bounded(decode(_delivery("d", None).encode()))
    assert not native_mod._fast_bounded(decode(_delivery("d", 1).encode()))
    assert not native_mod._fast_bounded(decode(_call_with_tools(1).encode()))
    plain = '{"type":"model_call","episode_id":"e","call_id":"c","request":{"messages":[],"tools":[]}}'
    assert native_mod._fast_bounded(decode(plain.encode()))
