"""The fast decoding path of native event logs (`events.fast`) against the pydantic contract.

Invariants: a native log stores the very same rows through the fast path as through pydantic alone
(every real trajectory under ../shared/data/real written as a native log, and a demo); a line the
fast decoder takes, pydantic takes with the same values; a line pydantic refuses is refused with
the same message on both paths; the derived structs have exactly the models' fields.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import msgspec
import pytest
from pydantic import BaseModel, ValidationError
from store_dump import dump_store
from test_ingest_real import REAL, need

from memuse_core.demo import DemoPlan, generate
from memuse_core.events import EVENT_ADAPTER, MemoryDelivery, ModelCall, ToolResultEvent, dump_event, fast
from memuse_core.ingest.base import IngestError, detect, expand_paths, ingest_path
from memuse_core.ingest.native import NATIVE
from memuse_core.store import connect


class PydanticOnly:
    """The native importer without its fast path (`store_events`)."""

    name = NATIVE.name
    sniff = NATIVE.sniff
    events = NATIVE.events


def _store(db: Path, files: list[Path], importer: Any) -> dict[str, list[tuple]]:
    con = connect(db)
    for p in files:
        try:
            ingest_path(con, p, importer=importer)
        except IngestError:
            pass  # the same files fail on both paths (their errors are compared below)
    con.close()
    return dump_store(db)


def _native_logs(out: Path) -> list[Path]:
    """Every real file an importer reads, written as a native log, and a demo's logs."""
    need(list(REAL.rglob("*")) if REAL.is_dir() else [])
    out.mkdir()
    files = []
    for i, p in enumerate(expand_paths([REAL])):
        try:
            events = [dump_event(ev) for _, ev in detect(p).events(p)]
        except IngestError:
            continue  # side files of batch folders (reports, predictions)
        q = out / f"{i:03d}-{p.name}.jsonl"
        q.write_text("\n".join(events) + "\n", encoding="utf-8")
        files.append(q)
    assert len(files) > 50
    demo = generate(DemoPlan(episodes=12, seed=3, mean_steps=12), out / "demo")
    return files + list(demo.event_files)


def test_fast_path_stores_the_same_rows_as_pydantic(tmp_path: Path) -> None:
    files = _native_logs(tmp_path / "logs")
    fast_rows = _store(tmp_path / "fast.duckdb", files, NATIVE)
    slow_rows = _store(tmp_path / "slow.duckdb", files, PydanticOnly())
    assert sum(map(len, fast_rows.values())) > 10_000
    assert fast_rows.keys() == slow_rows.keys()
    for table in fast_rows:
        assert fast_rows[table] == slow_rows[table], table


def test_the_fast_path_decodes_the_hot_events_of_a_log(tmp_path: Path) -> None:
    demo = generate(DemoPlan(episodes=3, seed=3, mean_steps=8), tmp_path)
    kinds = {type(ev) for p in demo.event_files for _, ev in NATIVE.store_events(p)}
    assert {fast.FAST_CALL, fast.FAST_TOOL_RESULT, fast.FAST_DELIVERY} <= kinds
    assert not kinds & {ModelCall, ToolResultEvent, MemoryDelivery}


_HEAD = b'{"type":"model_call","v":1,"episode_id":"e","call_id":"c"'
_TOOL = b'{"type":"tool_result","v":1,"episode_id":"e","call_id":"c"'
_DELIVERY = b'{"type":"memory_delivery","v":1,"episode_id":"e","delivery_id":"d"'
LINES = [
    _TOOL + b',"exit_code":3.0}',
    _TOOL + b',"exit_code":true}',
    _TOOL + b',"exit_code":3,"exit_code":4}',
    _TOOL + b',"exit_code":99999999999}',
    _TOOL + b',"output":"\\ud800"}',
    _TOOL + b',"output":"a\xff"}',
    _TOOL + b',"output":"\\u0000\\u2028 \xc3\xa9"}',
    _TOOL + b',"extra":1}',
    _HEAD + b',"started_at":1e400}',
    _HEAD + b',"started_at":NaN}',
    _HEAD + b',"started_at":5}',
    _HEAD + b',"cost_usd":-0.5}',
    _HEAD + b',"usage":{"input_tokens":"12"}}',
    _HEAD + b',"usage":{"input_tokens":-1}}',
    _HEAD + b',"role":"boss"}',
    _HEAD + b',"v":"1"}',
    _HEAD + b',"type":"tool_result"}',
    _HEAD + b',"request":{"messages":[{"role":"user","content":[{"type":"text","text":"x"}]}]}}',
    _HEAD + b',"request":{"messages":[{"role":"user","content":"x","cache":1}],"temperature":0}}',
    _HEAD + b',"response":{"content":"x","tool_calls":[{"name":"bash"}],"extra":null}}',
    _HEAD + b',"request":{"base_call_id":"b","base_len":-1}}',
    _DELIVERY + b',"entries":[{"value":"x"},{"digest":"SHA256:' + b"A" * 64 + b'"}]}',
    _DELIVERY + b',"placements":[{"slot":"s","text":"t","proof":{"message_digest":"' + b"B" * 16 + b'"}}]}',
    _DELIVERY + b',"placements":[{"slot":"s","size":true}]}',
    _DELIVERY + b',"entries":[{"labels":{"score":1e999}}]}',
    _DELIVERY + b',"entries":[{"version_portable":1}]}',
    b'{"type":"episode_end","v":1,"episode_id":"e","resolved":true}',
    b'{"v":1,"episode_id":"e","call_id":"c"}',
]


def _plain(obj: Any) -> Any:
    if isinstance(obj, BaseModel):
        return {k: _plain(getattr(obj, k)) for k in type(obj).model_fields if k != "type"}
    if isinstance(obj, msgspec.Struct):
        return {k: _plain(getattr(obj, k)) for k in obj.__struct_fields__}
    if isinstance(obj, list):
        return [_plain(x) for x in obj]
    return obj


@pytest.mark.parametrize("line", LINES, ids=range(len(LINES)))
def test_fast_decoder_takes_only_what_pydantic_takes_alike(line: bytes) -> None:
    try:
        model = EVENT_ADAPTER.validate_json(line)
    except ValidationError:
        model = None
    try:
        struct = fast.decode(line)
    except fast.FAST_ERRORS:
        return  # pydantic decides
    assert model is not None, "the fast path took a line pydantic refuses"
    assert fast.MODEL_OF[type(struct)] is type(model)
    assert _plain(struct) == _plain(model)
    if getattr(model, "response", None) is not None:
        assert struct.response.model_dump_json(exclude_none=True) == model.response.model_dump_json(  # type: ignore[union-attr]
            exclude_none=True
        )


@pytest.mark.parametrize("line", [x for x in LINES if b"\xff" not in x], ids=str)
def test_a_refused_line_has_the_same_message_on_both_paths(tmp_path: Path, line: bytes) -> None:
    start = b'{"type":"run","v":1,"run_id":"r"}\n{"type":"episode_start","v":1,"episode_id":"e","run_id":"r","task_id":"t"}\n'
    log = tmp_path / "log.jsonl"
    log.write_bytes(start + line + b"\n")
    messages = []
    for imp in (NATIVE, PydanticOnly()):
        con = connect(tmp_path / f"{len(messages)}.duckdb")
        try:
            ingest_path(con, log, importer=imp)
            messages.append(None)
        except IngestError as e:
            messages.append(str(e))
        finally:
            con.close()
    assert messages[0] == messages[1]


def test_the_structs_have_exactly_the_models_fields() -> None:
    for struct, model in fast.MODEL_OF.items():
        names = [k for k in model.model_fields if not (k == "type" and struct.__struct_config__.tag_field)]
        assert list(struct.__struct_fields__) == names, model.__name__
        for sf in msgspec.structs.fields(struct):
            f = model.model_fields[sf.name]
            assert sf.required == f.is_required(), f"{model.__name__}.{sf.name}"
            if f.default_factory is None and not sf.required:
                assert sf.default == f.default, f"{model.__name__}.{sf.name}"
