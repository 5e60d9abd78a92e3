"""`memuse trim-eval` on the real CLADDER sample (skipped when absent): pair construction checks
of C.3, context metrics of raw memory vs MemTrim, and the model path (Table 1 counts) against a
local scripted chat-completions server."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from memuse_core.cli import app
from memuse_core.judge.scripted_server import ScriptedReply, ScriptedServer
from memuse_core.trim.cladder import build_pairs, load_questions
from memuse_core.trim.evaluate import measure, summarize


@pytest.fixture
def cladder(real_data: Path) -> Path:
    p = real_data / "cladder"
    assert p.is_dir(), f"{p}: CLADDER sample missing from the real data"
    return p


def test_pairs_follow_the_construction_rules(cladder: Path) -> None:
    qs = load_questions(cladder)
    pairs = build_pairs(qs)
    assert pairs and {p.condition for p in pairs} == {"TA", "TD-Dup"}
    for p in pairs:
        assert p.memory.group == p.query.group and p.memory.qid != p.query.qid
        assert p.evidence_jaccard >= 0.8 and p.changed and p.unchanged
        assert (p.condition == "TA") == (p.memory.answer == p.query.answer)
    # seeded sampling is reproducible and bounded
    small = build_pairs(qs, limit=3, seed=1)
    assert small == build_pairs(qs, limit=3, seed=1)
    assert sum(p.condition == "TA" for p in small) == 3


def test_memtrim_lowers_stale_exposure(cladder: Path) -> None:
    res = summarize(measure(build_pairs(load_questions(cladder))))
    td, ta = res["TD-Dup"], res["TA"]
    assert td["raw"]["stale_answer_exposure"] == 1.0
    assert td["memtrim"]["stale_answer_exposure"] < td["raw"]["stale_answer_exposure"]
    assert td["memtrim"]["conflicts_removed"] > 0 and td["raw"]["conflicts_removed"] == 0
    assert td["memtrim"]["chars"] < td["raw"]["chars"] and ta["memtrim"]["chars"] < ta["raw"]["chars"]
    assert ta["raw"]["answer_retained"] == 1.0 and ta["raw"]["stale_answer_exposure"] is None


def memory_following_model(body: dict[str, Any], idx: int) -> ScriptedReply:
    """Copies a stored answer when the prompt shows one, else says no."""
    text = body["messages"][-1]["content"]
    m = re.search(r"(?:^Answer|Previous answer to this same question): (yes|no)\s*$", text, re.M)
    return ScriptedReply(content=m.group(1) if m else "No.")


def test_cli_json_and_model_counts(cladder: Path) -> None:
    runner = CliRunner()
    plain = runner.invoke(app, ["trim-eval", "--data", str(cladder), "--json"])
    assert plain.exit_code == 0, plain.output
    out = json.loads(plain.output)
    for cond in ("TA", "TD-Dup"):
        for m in ("raw", "memtrim"):
            assert set(out[cond][m]) == {
                "stale_answer_exposure",
                "answer_retained",
                "memory_only_units",
                "conflicts_removed",
                "chars",
            }
    with ScriptedServer(memory_following_model) as srv:
        res = runner.invoke(
            app,
            [
                "trim-eval",
                "--data",
                str(cladder),
                "--json",
                "--limit",
                "4",
                "--model",
                "scripted",
                "--base-url",
                srv.base_url,
            ],
        )
        assert res.exit_code == 0, res.output
        n_requests = len(srv.requests)
    got = json.loads(res.output)
    pairs = build_pairs(load_questions(cladder), limit=4)
    assert n_requests == 3 * len(pairs)
    td = [p for p in pairs if p.condition == "TD-Dup"]
    no_gold = sum(p.query.answer == "no" for p in td)
    model = got["TD-Dup"]["model"]
    # raw memory: the model copies the stale answer, which is wrong on every TD-Dup pair
    assert model["raw"]["accuracy"] == 0.0
    assert model["raw"]["correct_to_wrong"] == no_gold and model["raw"]["wrong_to_correct"] == 0
    # MemTrim suppressed the stale answer: same prediction as without memory
    assert model["memtrim"]["correct_to_wrong"] == 0
    assert model["memtrim"]["accuracy"] == model["no_memory"]["accuracy"] == no_gold / len(td)


def test_missing_data_is_one_clear_error(tmp_path: Path) -> None:
    res = CliRunner().invoke(app, ["trim-eval", "--data", str(tmp_path / "nope")])
    assert res.exit_code == 1 and "CLADDER folder not found" in res.output


def scripted_llm(body: dict[str, Any], idx: int) -> ScriptedReply:
    """Answers parser requests with the deterministic parse (quotes = the exact spans) and
    question requests like `memory_following_model`."""
    from memuse_core.trim import DeterministicParser

    fmt = (body.get("response_format") or {}).get("json_schema", {}).get("name")
    if fmt == "memtrim_parse":
        user = body["messages"][1]["content"]
        text = user.split("<<<\n", 1)[1].rsplit("\n>>>", 1)[0]
        p = DeterministicParser().parse(text)
        units = [
            {
                "entity": u.key.entity or "-",
                "attribute": u.key.attribute,
                "value_type": u.key.vtype,
                "value": u.text or str(u.value),
                "multi_valued": u.many,
                "quote": u.span,
                "supports_answer": "unsure",
            }
            for u in p.units
            if u.key.attribute != "subject"
        ]
        return ScriptedReply(
            content=json.dumps({"units": units, "task": p.task or "none", "answer_expressible": True})
        )
    if fmt == "memtrim_key_match":
        return ScriptedReply(content=json.dumps({"match": None}))
    return memory_following_model(body, idx)


def test_llm_parser_path_end_to_end(cladder: Path) -> None:
    with ScriptedServer(scripted_llm) as srv:
        res = CliRunner().invoke(
            app,
            [
                "trim-eval",
                "--data",
                str(cladder),
                "--json",
                "--limit",
                "4",
                "--model",
                "scripted",
                "--base-url",
                srv.base_url,
                "--llm-parser",
            ],
        )
        parse_calls = [
            r
            for r in srv.requests
            if (r.get("response_format") or {}).get("json_schema", {}).get("name") == "memtrim_parse"
        ]
    assert res.exit_code == 0, res.output
    out = json.loads(res.output)
    assert out["settings"]["parser"] == "llm" and out["settings"]["parser_failures"] == 0
    assert parse_calls and out["settings"]["parser_calls"] >= len(parse_calls)
    td = out["TD-Dup"]
    assert td["memtrim"]["stale_answer_exposure"] < td["raw"]["stale_answer_exposure"]
    assert td["model"]["memtrim"]["correct_to_wrong"] == 0
