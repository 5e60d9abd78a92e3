"""Hostile files for `memuse ingest`: every input is generated here.

The runner copies a seeded store (one run with an episode, a call, a search, a delivery and a
memory item version), then runs `memuse ingest <case input> <next file> --no-build` on it. Each
case expects exit code 1 and exactly one `error:` line naming the file, the line (when the input
has lines) and the field. "Nothing written for that file" is checked by table checksums: the store
after the command must equal a reference store that imported only the next file after the seed
(wall-clock columns left out, `store.checksums`); that the next file was imported is `continued`.
Inputs that could hang a reader (FIFOs, sockets) run the CLI in a subprocess with a timeout.
"""

from __future__ import annotations

import atexit
import gzip
import hashlib
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
from functools import cache
from pathlib import Path
from typing import Any

from hostile_cases import RUNNERS, Case, Outcome, case

from memuse_core.store import connect
from memuse_core.store.checksums import table_checksums
from memuse_core.vocab import MAX_CALLS_PER_EPISODE, MAX_EVENT_DEPTH

ROOT = Path(__file__).resolve().parents[2]
TIMEOUT = 120


# -- events ------------------------------------------------------------------------------------
def run(rid: str = "r1") -> dict[str, Any]:
    return {"type": "run", "run_id": rid, "config": "hostile"}


def start(ep: str = "e1", rid: str = "r1", **kw: Any) -> dict[str, Any]:
    return {"type": "episode_start", "episode_id": ep, "run_id": rid, "task_id": "t", **kw}


def call(cid: str = "c1", ep: str = "e1", **kw: Any) -> dict[str, Any]:
    msgs = [{"role": "user", "content": "Fix the bug."}]
    return {"type": "model_call", "episode_id": ep, "call_id": cid, "request": {"messages": msgs}, **kw}


def search(sid: str = "s1", ep: str = "e1") -> dict[str, Any]:
    return {"type": "memory_search", "episode_id": ep, "search_id": sid, "query": "bug"}


def delivery(did: str = "d1", ep: str = "e1", **kw: Any) -> dict[str, Any]:
    entry = {"namespace": "default", "item_id": "i0", "version": "v1", "value": "alpha"}
    return {"type": "memory_delivery", "episode_id": ep, "delivery_id": did, "entries": [entry], **kw}


def change(value: str, item: str = "i0", version: str = "v1") -> dict[str, Any]:
    return {"type": "memory_change", "item_id": item, "version": version, "op": "create", "value": value}


def end(ep: str = "e1") -> dict[str, Any]:
    return {"type": "episode_end", "episode_id": ep, "resolved": True}


def episode(ep: str = "e1", rid: str = "r1", *middle: dict[str, Any]) -> list[dict[str, Any]]:
    return [start(ep, rid), *middle, end(ep)]


SEED = [
    run("r0"),
    change("alpha"),
    start("e0", "r0"),
    search("s0", "e0"),
    call("c0", "e0"),
    delivery("d0", "e0", consuming_call_id="c0", search_id="s0"),
    end("e0"),
]
NEXT = [run("r9"), *episode("e9", "r9", call("c9", "e9"))]


def lines(events: list[dict[str, Any] | str]) -> bytes:
    """JSON Lines; a str is written as it is (a hand-made line)."""
    return b"".join((e if isinstance(e, str) else json.dumps(e)).encode() + b"\n" for e in events)


def _write(d: Path, name: str, data: bytes) -> Path:
    d.mkdir(parents=True, exist_ok=True)
    p = d / name
    p.write_bytes(data)
    return p


def native(name: str, message: str, events: list[dict[str, Any] | str], **options: Any) -> None:
    """A native event log case: `events` after a valid run line."""
    file = f"{name}.jsonl"
    case(name, "ingest", code=1, message=rf"^error: .*/{name}\.jsonl:{message}$", **options)(
        lambda d: _write(d, file, lines(events))
    )


def nested(depth: int) -> str:
    """A JSON value `depth` levels deep (arrays)."""
    return "[" * depth + "]" * depth


# -- depth and size ----------------------------------------------------------------------------
# A run line whose meta holds arrays: the line is 2 + depth levels deep (event object, meta).
native(
    "deep_native_line_100k",
    r"1: JSON nested 100002 levels deep; at most 103 levels are accepted",
    ['{"type":"run","run_id":"r1","meta":{"x":' + nested(100_000) + "}}"],
)
native(
    "deep_native_line_just_over",
    rf"1: JSON nested {MAX_EVENT_DEPTH + 1} levels deep; at most {MAX_EVENT_DEPTH} levels are accepted",
    ['{"type":"run","run_id":"r1","meta":{"x":' + nested(MAX_EVENT_DEPTH - 1) + "}}"],
)
native(
    "deep_native_line_in_text_ok_then_deep",
    r"2: JSON nested 100002 levels deep; at most 103 levels are accepted",
    [
        '{"type":"run","run_id":"r1","label":"' + "[" * 200_000 + '"}',  # brackets in text do not count
        '{"type":"run","run_id":"r2","meta":{"x":' + nested(100_000) + "}}",
    ],
)


def _mini(**overrides: Any) -> dict[str, Any]:
    """A small valid mini-swe-agent-1 trajectory."""
    doc: dict[str, Any] = {
        "trajectory_format": "mini-swe-agent-1",
        "instance_id": "acme__calc-1",
        "info": {
            "exit_status": "Submitted",
            "mini_version": "1.17.3",
            "model_stats": {"instance_cost": 0.5, "api_calls": 1},
        },
        "messages": [
            {"role": "system", "content": "You are a shell agent."},
            {"role": "user", "content": "Fix the bug in calc.py"},
            {"role": "assistant", "content": "THOUGHT: look\n\n```bash\nls\n```"},
            {"role": "user", "content": "<returncode>0</returncode>\n<output>\ncalc.py\n</output>"},
        ],
    }
    doc.update(overrides)
    return doc


def trajectory(name: str, message: str, text: str | bytes) -> None:
    file = f"{name}.traj.json"
    data = text.encode() if isinstance(text, str) else text
    case(name, "ingest", code=1, message=rf"^error: .*/{name}\.traj\.json:{message}$")(
        lambda d: _write(d, file, data)
    )


def _deep_doc(depth: int) -> str:
    head = json.dumps(_mini())[:-1]  # the format marker stays in the first 64 KiB
    return head + ', "extra": ' + nested(depth) + "}"


trajectory(
    "deep_trajectory_100k", r" JSON nested too deeply; at most 103 levels are accepted", _deep_doc(100_000)
)
trajectory(
    "deep_trajectory_just_over",
    r" JSON nested too deeply; at most 103 levels are accepted",
    _deep_doc(MAX_EVENT_DEPTH),  # + the document object itself
)


@case(
    "deep_unknown_json_100k",
    "ingest",
    code=1,
    message=r"^error: .*/deep_unknown_json_100k\.json:1: unknown format",
)
def _(d: Path) -> Path:
    return _write(d, "deep_unknown_json_100k.json", nested(100_000).encode())


@case(
    "deep_first_object_100k",
    "ingest",
    code=1,
    message=r"^error: .*/deep_first_object_100k\.json:1: unknown format",
)
def _(d: Path) -> Path:
    # detection parses the first line: an object nested 100k deep must not recurse there
    return _write(d, "deep_first_object_100k.json", ('{"a":' * 100_000 + "1" + "}" * 100_000).encode())


# -- numbers -----------------------------------------------------------------------------------
EP = [run(), start()]
native(
    "nan_cost", r"3: field `cost_usd`: Input should be a finite number", [*EP, call(cost_usd=float("nan"))]
)
native(
    "infinity_cost",
    r"3: field `cost_usd`: Input should be a finite number",
    [*EP, call(cost_usd=float("inf"))],
)
native(
    "overflowing_cost_1e999",
    r"3: field `cost_usd`: Input should be a finite number",
    [*EP, json.dumps(call()).replace('"type"', '"cost_usd": 1e999, "type"')],
)
native(
    "negative_cost",
    r"3: field `cost_usd`: Input should be greater than or equal to 0",
    [*EP, call(cost_usd=-0.5)],
)
native(
    "non_numeric_usage",
    r"3: field `usage\.input_tokens`: Input should be a valid integer.*",
    [*EP, call(usage={"input_tokens": "lots"})],
)
native(
    "boolean_usage",
    r"3: field `usage\.input_tokens`: Input should be a valid integer",
    [*EP, call(usage={"input_tokens": True})],
)
native(
    "cost_as_a_string",
    r"3: field `cost_usd`: Input should be a valid number",
    [*EP, call(cost_usd="0.5")],
)
native(
    "negative_usage",
    r"3: field `usage\.output_tokens`: Input should be greater than or equal to 0",
    [*EP, call(usage={"output_tokens": -5})],
)
native(
    "usage_beyond_64_bits",
    r"3: field `usage\.input_tokens`: Input should be less than or equal to 9223372036854775807",
    [*EP, call(usage={"input_tokens": 2**64})],
)
native(
    "nan_in_free_form_meta",
    r"1: field `meta\.score`: NaN is not a number JSON allows \(only finite numbers are accepted\)",
    [{**run(), "meta": {"score": float("nan")}}],
)
native(
    "infinity_in_entry_labels",
    r"3: field `entries\[0\]\.labels\.score`: -Infinity is not a number JSON allows.*",
    [*EP, {**delivery(), "entries": [{"item_id": "i", "value": "v", "labels": {"score": float("-inf")}}]}],
)
native(
    "position_2_to_the_40",
    r"2: field `position`: Input should be less than or equal to 2147483647",
    [run(), start(position=2**40)],
)
native(
    "tool_exit_code_beyond_32_bits",
    r"4: field `exit_code`: Input should be less than or equal to 2147483647",
    [*EP, call(), {"type": "tool_result", "episode_id": "e1", "call_id": "c1", "exit_code": 2**40}],
)
native(
    "negative_message_index",
    r"3: field `placements\.0\.proof\.message_index`: Input should be greater than or equal to 0",
    [*EP, {**delivery(), "placements": [{"slot": "s", "text": "t", "proof": {"message_index": -1}}]}],
)

_CRASHED = {"exit_status": "TimeoutError", "exception_str": "timed out", "mini_version": "1.17.3"}


def _mini_calls(api_calls: object) -> str:
    info = {**_CRASHED, "model_stats": {"instance_cost": 0.5, "api_calls": api_calls}}
    return json.dumps(_mini(info=info), indent=1)


trajectory(
    "miniswe_api_calls_1e12",
    rf"\d+: field `info\.model_stats\.api_calls`: 1,000,000,000,000 is not 0 to {MAX_CALLS_PER_EPISODE:,} calls",
    _mini_calls(10**12),
)
trajectory(
    "miniswe_api_calls_3_million",
    rf"\d+: field `info\.model_stats\.api_calls`: 3,000,000 is not 0 to {MAX_CALLS_PER_EPISODE:,} calls",
    _mini_calls(3_000_000),
)
trajectory(
    "miniswe_api_calls_float_1e12",
    r"\d+: field `info\.model_stats\.api_calls`: expected an integer, got a number",
    _mini_calls(1e12),
)
trajectory(
    "miniswe_nan_cost",
    r"\d+: NaN is not a number JSON allows \(only finite numbers are accepted\)",
    json.dumps(
        _mini(info={**_CRASHED, "model_stats": {"instance_cost": float("nan"), "api_calls": 1}}), indent=1
    ),
)
trajectory(
    "miniswe_negative_cost",
    r"\d+: field `info\.model_stats\.instance_cost`: -3 is not a finite, non-negative cost",
    json.dumps(_mini(info={**_CRASHED, "model_stats": {"instance_cost": -3, "api_calls": 1}}), indent=1),
)

# -- references --------------------------------------------------------------------------------
native(
    "episode_of_an_unknown_run",
    r"1: field `run_id`: episode 'e1' names run 'ghost', which no `run` event defines \(in this file or the store\)",
    [*episode("e1", "ghost", call())],
)
native(
    "delivery_naming_a_missing_call",
    r"4: field `consuming_call_id`: 'nope' is not a model_call of episode 'e1'",
    [*EP, call(), delivery(consuming_call_id="nope"), end()],
)
native(
    "delivery_naming_another_episodes_call",
    r"6: field `consuming_call_id`: 'c1' is a call of episode 'e1', not of this delivery's episode 'e2'",
    [*EP, call(), end(), start("e2"), delivery("d2", "e2", consuming_call_id="c1"), end("e2")],
)
native(
    "delivery_naming_a_stored_episodes_call",
    r"3: field `consuming_call_id`: 'c0' is not a model_call of episode 'e1'",
    [*EP, delivery(consuming_call_id="c0"), end()],
)
native(
    "delivery_naming_a_missing_search",
    r"4: field `search_id`: 'nowhere' is not a memory_search of this file or the store",
    [*EP, call(), delivery(search_id="nowhere", consuming_call_id="c1"), end()],
)
native(
    "item_version_with_two_values_in_one_file",
    r"3: field `value`: version 'v7' of item default/i7 already has a different value \(line 2\); .*",
    [run(), change("one", "i7", "v7"), change("two", "i7", "v7")],
)
native(
    "item_version_conflicting_with_the_store",
    r"2: field `value`: version 'v1' of item default/i0 already has a different stored value \(.*seed\.jsonl:2\); .*",
    [run(), change("beta")],
)
trajectory(
    "trajectory_with_no_messages",
    r" field `messages`: no model calls: episode '.*' has no messages to record \(an empty trajectory\)",
    json.dumps(_mini(messages=[]), indent=1),
)

# -- duplicate ids -----------------------------------------------------------------------------
native(
    "delivery_id_already_stored",
    r"4: field `delivery_id`: delivery_id 'd0' is already stored \(import each recording once\)",
    [*EP, call(), delivery("d0", consuming_call_id="c1"), end()],
)
native(
    "search_id_already_stored",
    r"3: field `search_id`: search_id 's0' is already stored \(import each recording once\)",
    [*EP, search("s0"), end()],
)
native(
    "call_id_of_a_stored_episode",
    r"3: field `call_id`: call_id 'c0' is already stored \(import each recording once\)",
    [*EP, call("c0"), end()],
)
native(
    "call_id_in_two_episodes_of_one_file",
    r"6: field `call_id`: call_id 'c1' is already a call of episode 'e1' \(line 3\); a call belongs to one episode",
    [*EP, call(), end(), start("e2"), call("c1", "e2"), end("e2")],
)
native(
    "delivery_id_twice_in_one_file",
    r"5: field `delivery_id`: delivery_id 'd1' appears twice in the file \(line 4\)",
    [*EP, call(), delivery(consuming_call_id="c1"), delivery(consuming_call_id="c1"), end()],
)
native(
    "search_id_twice_in_one_file",
    r"4: field `search_id`: search_id 's1' appears twice in the file \(line 3\)",
    [*EP, search(), search(), end()],
)
native(
    "episode_id_already_stored",
    r"2: episode_id 'e0' is already stored \(import each recording once\)",
    [run(), *episode("e0", "r1", call("c5", "e0"))],
)
native(
    "run_id_already_stored",
    r"1: run_id 'r0' is already stored \(import each recording once\)",
    [run("r0")],
)


# -- files -------------------------------------------------------------------------------------
@case(
    "fifo_argument",
    "ingest",
    code=1,
    message=r"^error: .*/events\.fifo\.jsonl: not a regular file \(a FIFO \(named pipe\)\); only files are imported$",
    subprocess=True,
)
def _(d: Path) -> Path:
    d.mkdir(parents=True, exist_ok=True)
    p = d / "events.fifo.jsonl"
    os.mkfifo(p)
    return p


@case(
    "fifo_in_a_folder",
    "ingest",
    code=1,
    message=r"^error: .*/fifo_folder/run\.jsonl: not a regular file \(a FIFO \(named pipe\)\).*$",
    subprocess=True,
)
def _(d: Path) -> Path:
    folder = d / "fifo_folder"
    folder.mkdir(parents=True, exist_ok=True)
    os.mkfifo(folder / "run.jsonl")
    return folder


@case(
    "socket_argument",
    "ingest",
    code=1,
    message=r"^error: .*/events\.sock: not a regular file \(a socket\); only files are imported$",
    subprocess=True,
)
def _(d: Path) -> Path:
    d.mkdir(parents=True, exist_ok=True)
    p = d / "events.sock"
    s = socket.socket(socket.AF_UNIX)
    s.bind(str(p))  # the socket file stays after close
    s.close()
    return p


def _incompressible(n_lines: int) -> bytes:
    """A valid event log that gzip cannot shrink much (so a cut lands after the first 64 KiB)."""
    noise = [hashlib.sha256(str(i).encode()).hexdigest() * 8 for i in range(n_lines)]
    return lines([run(), start(), *(call(f"c{i}", label=t) for i, t in enumerate(noise)), end()])


def gz_case(name: str, message: str, mangle: Any) -> None:
    file = f"{name}.jsonl.gz"
    case(name, "ingest", code=1, message=rf"^error: .*/{name}\.jsonl\.gz:{message}$")(
        lambda d: _write(d, file, mangle(gzip.compress(_incompressible(400), mtime=0)))
    )


gz_case(
    "gzip_truncated",
    r"( \d+:)? corrupt or truncated gzip data \(Compressed file ended before the end-of-stream marker was reached\)",
    lambda z: z[: len(z) * 2 // 3],
)
gz_case(
    "gzip_corrupt_block",
    r"( \d+:)? corrupt or truncated gzip data \(.*\)",
    lambda z: z[:20] + bytes(b ^ 0x5A for b in z[20:200]) + z[200:],
)
gz_case(
    "gzip_bad_crc",
    r"( \d+:)? corrupt or truncated gzip data \(CRC check failed .*\)",
    lambda z: z[:-8] + b"\0\0\0\0" + z[-4:],
)
gz_case("gzip_not_gzip", r" corrupt or truncated gzip data \(Not a gzipped file .*\)", lambda z: b"{" + z[1:])


# -- the runner --------------------------------------------------------------------------------
@cache
def _base() -> tuple[Path, Path, str]:
    """(seeded store, next file, checksum of the seeded store after importing the next file)."""
    d = Path(tempfile.mkdtemp(prefix="memuse-hostile-ingest-"))
    atexit.register(shutil.rmtree, d, True)
    seed = _write(d, "seed.jsonl", lines(SEED))
    nxt = _write(d, "next.jsonl", lines(NEXT))
    db = d / "seed.duckdb"
    code, err, _ = _memuse(["ingest", str(seed), "--db", str(db), "--no-build"], sub=False)
    assert code == 0, err
    ref = d / "reference.duckdb"
    shutil.copy(db, ref)
    code, err, _ = _memuse(["ingest", str(nxt), "--db", str(ref), "--no-build"], sub=False)
    assert code == 0, err
    return db, nxt, _checksum(ref)


def _checksum(db: Path) -> str:
    con = connect(db, read_only=True)
    try:
        return json.dumps(table_checksums(con), sort_keys=True)
    finally:
        con.close()


def _memuse(args: list[str], *, sub: bool) -> tuple[int | None, str, str]:
    """Run the CLI; (exit code or None when it hung, stderr, stdout)."""
    if sub:
        try:
            r = subprocess.run(
                [sys.executable, "-m", "memuse_core", *args],
                capture_output=True,
                text=True,
                cwd=ROOT,
                timeout=TIMEOUT,
                env={**os.environ, "MEMUSE_PROGRESS": ""},
            )
        except subprocess.TimeoutExpired:
            return None, f"no answer within {TIMEOUT} s", ""
        return r.returncode, r.stderr, r.stdout
    from typer.testing import CliRunner

    from memuse_core.cli import app

    res = CliRunner().invoke(app, args)
    if res.exception is not None and not isinstance(res.exception, SystemExit):
        raise res.exception
    return res.exit_code, res.stderr, res.stdout


def run_ingest(c: Case, inp: Path, scratch: Path) -> Outcome:
    seed, nxt, reference = _base()
    db = scratch / "store.duckdb"
    shutil.copy(seed, db)
    code, err, out = _memuse(
        ["ingest", str(inp), str(nxt), "--db", str(db), "--no-build"], sub=bool(c.options.get("subprocess"))
    )
    errors = [x for x in err.splitlines() if x.strip()]
    message = "\n".join(errors)  # one line is expected: two lines cannot match a `^...$` pattern
    con = connect(db, read_only=True)
    try:
        after = json.dumps(table_checksums(con), sort_keys=True)
        eps = {r[0] for r in con.execute("SELECT episode_id FROM episodes").fetchall()}
    finally:
        con.close()
    added = sorted(eps - {"e0", "e9"})
    return Outcome(code, message, reference, after, added, "e9" in eps and "imported 1 episode from" in out)


RUNNERS["ingest"] = run_ingest
