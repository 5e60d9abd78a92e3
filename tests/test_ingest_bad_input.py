"""Bad input through the real CLI (`memuse ingest`) against a temp DuckDB file (DESIGN.md "Bad input").

Invariants: every bad file gives exactly one error line naming the file (and the line and/or
field when there is one) with the reason, the exit code is non-zero, and the store is unchanged;
in a folder of good and bad files every good file is imported and every bad one reported.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from memuse_core.cli import app
from memuse_core.store import connect, store_info

RUNNER = CliRunner()


def memuse(*args: str) -> tuple[int, list[str], str]:
    """Run the CLI; (exit code, error lines, stdout)."""
    res = RUNNER.invoke(app, list(args))
    err = [x for x in res.stderr.splitlines() if x.strip()]
    return res.exit_code, err, res.stdout


def counts(db: Path) -> dict:
    con = connect(db, read_only=True)
    try:
        info = store_info(con)
        info["files"] = con.execute("SELECT count(*) FROM files").fetchone()[0]
    finally:
        con.close()
    return {k: v for k, v in info.items() if isinstance(v, int)}


def mini_traj(n_steps: int = 2, **overrides) -> dict:
    """A small valid mini-swe-agent-1 trajectory."""
    msgs = [
        {"role": "system", "content": "You are a shell agent."},
        {"role": "user", "content": "Fix the bug in calc.py"},
    ]
    for k in range(n_steps):
        msgs.append({"role": "assistant", "content": f"THOUGHT: look\n\n```bash\nls {k}\n```"})
        msgs.append({"role": "user", "content": f"<returncode>0</returncode>\n<output>\nfile{k}\n</output>"})
    doc = {
        "info": {
            "exit_status": "Submitted",
            "submission": "diff --git a b",
            "model_stats": {"instance_cost": 0.5, "api_calls": n_steps},
            "mini_version": "1.17.3",
            "config": {"model": {"model_name": "m"}},
        },
        "messages": msgs,
        "trajectory_format": "mini-swe-agent-1",
        "instance_id": "acme__calc-1",
    }
    doc.update(overrides)
    return doc


@pytest.fixture
def seeded(tmp_path: Path) -> Path:
    """A store that already holds one good import (so 'unchanged' is not trivially empty)."""
    db = tmp_path / "s.duckdb"
    good = tmp_path / "seed" / "run-a__acme__calc-1.traj.json"
    good.parent.mkdir()
    good.write_text(json.dumps(mini_traj(), indent=1))
    code, err, _ = memuse("ingest", str(good), "--db", str(db), "--no-build")
    assert code == 0, err
    return db


def write(tmp_path: Path, name: str, data: bytes | str) -> Path:
    p = tmp_path / name
    p.write_bytes(data if isinstance(data, bytes) else data.encode())
    return p


def fails_cleanly(db: Path, path: Path, *needles: str, extra: tuple[str, ...] = ()) -> str:
    before = counts(db)
    code, err, _ = memuse("ingest", str(path), "--db", str(db), "--no-build", *extra)
    assert code != 0
    assert len(err) == 1, err
    line = err[0]
    assert line.startswith(f"error: {path}"), line
    for n in needles:
        assert n in line, line
    assert counts(db) == before
    return line


def test_truncated_json(seeded: Path, tmp_path: Path) -> None:
    text = json.dumps(mini_traj(), indent=1)
    p = write(tmp_path, "x__acme__calc-2.traj.json", text[: len(text) // 2])
    line = fails_cleanly(seeded, p, "invalid JSON", "truncated")
    assert re.match(rf"error: {re.escape(str(p))}:\d+: ", line)  # names the line


def test_wrong_types(seeded: Path, tmp_path: Path) -> None:
    doc = mini_traj()
    doc["messages"][2]["role"] = 7
    text = json.dumps(doc, indent=1)
    p = write(tmp_path, "x__acme__calc-3.traj.json", text)
    line_no = next(i for i, x in enumerate(text.split("\n"), 1) if '"role": 7' in x)
    fails_cleanly(seeded, p, f"{p}:{line_no}: field `messages[2].role`", "expected a string, got an integer")
    doc = mini_traj(info="oops")
    p = write(tmp_path, "x__acme__calc-4.traj.json", json.dumps(doc))
    fails_cleanly(seeded, p, "field `info`", "expected an object")


def test_unknown_event_type_in_native_log(seeded: Path, tmp_path: Path) -> None:
    lines = ['{"type": "run", "v": 1, "run_id": "r9"}', '{"type": "teleport", "v": 1}']
    p = write(tmp_path, "log.jsonl", "\n".join(lines) + "\n")
    fails_cleanly(seeded, p, f"{p}:2", "unknown event type 'teleport'")


def test_empty_file(seeded: Path, tmp_path: Path) -> None:
    fails_cleanly(seeded, write(tmp_path, "empty.json", ""), "empty")


def test_binary_junk(seeded: Path, tmp_path: Path) -> None:
    junk = bytes(range(256)) * 64
    fails_cleanly(seeded, write(tmp_path, "junk.traj.json", junk), "binary")


def test_unknown_format(seeded: Path, tmp_path: Path) -> None:
    p = write(tmp_path, "questions.json", json.dumps([{"question": "why?", "answer": 42}]))
    fails_cleanly(seeded, p, "unknown format")


def test_bad_openhands_line_rolls_back_the_whole_file(seeded: Path, tmp_path: Path) -> None:
    good = {
        "instance_id": "a__b-1",
        "metrics": {},
        "test_result": {},
        "error": None,
        "history": [{"id": 0, "source": "user", "action": "message", "args": {"content": "Do it"}}],
    }
    bad = json.dumps({**good, "instance_id": "a__b-2"})[:-20]
    p = write(tmp_path, "output.jsonl", json.dumps(good) + "\n" + bad + "\n")
    fails_cleanly(seeded, p, f"{p}:2", "invalid JSON")
    wrong = {**good, "instance_id": "a__b-3", "history": [{"id": 0, "source": 5, "action": "message"}]}
    p = write(tmp_path, "output2.jsonl", json.dumps(good) + "\n" + json.dumps(wrong) + "\n")
    fails_cleanly(seeded, p, f"{p}:2", "field `history[0].source`")


def test_bad_letta_block(seeded: Path, tmp_path: Path) -> None:
    doc = {
        "agents": [{"name": "a", "messages": [], "block_ids": ["b0"], "agent_type": "x"}],
        "blocks": [{"id": "b0", "label": ["not", "a", "string"], "value": "v"}],
    }
    p = write(tmp_path, "agent.af", json.dumps(doc))
    fails_cleanly(seeded, p, "field `blocks[0].label`", "expected a string")


def test_tool_message_answering_nothing(seeded: Path, tmp_path: Path) -> None:
    doc = mini_traj(trajectory_format="mini-swe-agent-1.1")
    doc["messages"].insert(3, {"role": "tool", "tool_call_id": "nope", "content": "x"})
    p = write(tmp_path, "x__acme__calc-5.traj.json", json.dumps(doc))
    fails_cleanly(seeded, p, "field `messages[3].tool_call_id`", "answers no tool call")


def test_bad_observer_config_changes_nothing(seeded: Path, tmp_path: Path) -> None:
    good = write(tmp_path, "y__acme__calc-9.traj.json", json.dumps(mini_traj()))
    cfg = write(tmp_path, "obs.toml", '[[observer]]\nname = "x"\n')
    before = counts(seeded)
    code, err, _ = memuse("ingest", str(good), "--db", str(seeded), "--no-build", "--observers", str(cfg))
    assert code != 0 and len(err) == 1 and err[0].startswith(f"error: {cfg}")
    assert counts(seeded) == before


def test_folder_with_good_and_bad_files(seeded: Path, tmp_path: Path) -> None:
    d = tmp_path / "mixed"
    d.mkdir()
    write(d, "r1__acme__calc-10.traj.json", json.dumps(mini_traj(3, instance_id="acme__calc-10")))
    write(d, "r1__acme__calc-11.traj.json", json.dumps(mini_traj(1, instance_id="acme__calc-11")))
    write(d, "r1__acme__calc-12.traj.json", json.dumps(mini_traj())[:50])
    write(d, "notes.json", json.dumps({"hello": "world"}))
    before = counts(seeded)
    code, err, out = memuse("ingest", str(d), "--db", str(seeded), "--no-build")
    assert code != 0
    assert len(err) == 2 and all(x.startswith(f"error: {d}") for x in err)
    assert "calc-12.traj.json:1: invalid JSON" in "".join(err) and "notes.json:1: unknown format" in "".join(
        err
    )
    after = counts(seeded)
    assert after["episodes"] == before["episodes"] + 2
    assert after["files"] == before["files"] + 2
    assert "imported 2 episodes from 2 files; 2 failed" in out
    assert "note: 3 episodes not built yet (--no-build)" in out


def test_user_observer_through_the_cli(tmp_path: Path) -> None:
    db = tmp_path / "o.duckdb"
    doc = mini_traj()
    doc["messages"][0]["content"] += (
        "\n<team-notes>\n- tests live in t/\n- never edit vendored code\n</team-notes>"
    )
    p = write(tmp_path, "z__acme__calc-1.traj.json", json.dumps(doc))
    cfg = write(
        tmp_path,
        "obs.toml",
        '[[observer]]\nname = "team"\nstart = "<team-notes>"\n'
        'end = "</team-notes>"\nform = "task_recall"\nnamespace = "team"\n',
    )
    code, err, _ = memuse("ingest", str(p), "--db", str(db), "--no-build", "--observers", str(cfg))
    assert code == 0, err
    con = connect(db, read_only=True)
    try:
        rows = con.execute(
            "SELECT d.consuming_call_id, count(*) FROM deliveries d JOIN delivery_entries e "
            "USING (delivery_id) GROUP BY 1 ORDER BY 1"
        ).fetchall()
        ns = {r[0] for r in con.execute("SELECT namespace FROM delivery_entries").fetchall()}
    finally:
        con.close()
    assert [n for _, n in rows] == [2, 2] and ns == {"team"}  # one delivery per call, two entries


def test_config_override_labels_the_runs(tmp_path: Path) -> None:
    db = tmp_path / "c.duckdb"
    p = write(tmp_path, "run1__acme__calc-1.traj.json", json.dumps(mini_traj()))
    code, err, _ = memuse("ingest", str(p), "--db", str(db), "--no-build", "--config", "mem0-recall")
    assert code == 0, err
    con = connect(db, read_only=True)
    try:
        assert con.execute("SELECT run_id, config, label FROM runs").fetchall() == [
            ("run1:acme__calc-1", "mem0-recall", "run1")
        ]
    finally:
        con.close()


def test_reimporting_the_same_file_adds_nothing(seeded: Path) -> None:
    before = counts(seeded)
    good = seeded.parent / "seed" / "run-a__acme__calc-1.traj.json"
    code, err, _ = memuse("ingest", str(good), "--db", str(seeded), "--no-build")
    assert code == 0 and len(err) == 1 and err[0].startswith(f"skipped {good}")
    assert counts(seeded) == before


def test_a_delete_names_its_version_without_a_value(tmp_path: Path) -> None:
    """A delete of version 1 carries no value: it does not contradict the value version 1 was
    created with (the one-value-per-version check compares values only)."""
    run = {"type": "run", "v": 1, "run_id": "r", "config": "c"}
    change = {
        "type": "memory_change",
        "v": 1,
        "namespace": "ns",
        "item_id": "i1",
        "version": "1",
        "run_id": "r",
    }
    lines = [run, {**change, "op": "create", "value": "keep the TTL at 30 s"}, {**change, "op": "delete"}]
    path = write(tmp_path, "deletes.jsonl", "\n".join(json.dumps(x) for x in lines) + "\n")
    db = tmp_path / "d.duckdb"
    code, _, out = memuse("ingest", str(path), "--db", str(db))
    assert code == 0, out
    con = connect(db, read_only=True)
    try:
        assert con.execute("SELECT count(*) FROM item_events").fetchone()[0] == 2
    finally:
        con.close()
