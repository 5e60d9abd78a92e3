"""`memuse trim-eval` (MemTrim Table 1 / 2 metrics on C.3 premise-change pairs): on a hand-made
CLADDER folder whose pairs, figures and decisions are worked out by hand; the model path and the
LLM-parser path against the local scripted chat-completions server; the full shared CLADDER sets
(easy, hard, anti, det; skipped when absent); one clear error for a missing folder."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from memuse_core.cli import app
from memuse_core.judge.scripted_server import ScriptedReply, ScriptedServer
from memuse_core.trim.cladder import build_pairs, estimand_support, load_questions

BACKGROUND = "Husband has a direct effect on alarm clock."
QUESTION = "Will alarm set by husband increase the chance of ringing alarm?"


def record(qid: str, p0: float, p1: float, answer: str, px: float | None = None) -> dict[str, Any]:
    """An ATE question: P(Y=1|X=0) = p0, P(Y=1|X=1) = p1, optionally P(X=1) = px (not in the
    ATE estimand)."""
    given = (f"The overall probability of alarm set by husband is {px:.0%}. " if px is not None else "") + (
        f"For husbands that don't set the alarm, the probability of ringing alarm is {p0:.0%}. "
        f"For husbands that set the alarm, the probability of ringing alarm is {p1:.0%}."
    )
    gi: dict[str, Any] = {"p(Y | X)": [p0, p1]}
    step4 = f"P(Y=1 | X=0) = {p0:.2f}\nP(Y=1 | X=1) = {p1:.2f}"
    if px is not None:
        gi["p(X)"] = [px]
        step4 = f"P(X=1) = {px:.2f}\n" + step4
    return {
        "question_id": qid,
        "desc_id": qid,
        "given_info": given,
        "question": QUESTION,
        "answer": answer,
        "meta": {
            "story_id": "alarm",
            "graph_id": "simple",
            "query_type": "ate",
            "rung": 2,
            "given_info": gi,
            "estimand": "P(Y=1|X=1) - P(Y=1|X=0)",
            "model_id": 0,
        },
        "reasoning": {"step1": "X->Y", "step3": "P(Y=1|X=1) - P(Y=1|X=0)", "step4": step4},
    }


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    """q1-q3 share their quantities' keys; q4-q5 also give P(X=1) (so they only pair together)."""
    rows = [
        record("q1", 0.26, 0.85, "yes"),
        record("q2", 0.30, 0.85, "yes"),  # TA with q1: a support quantity changed
        record("q3", 0.90, 0.20, "no"),  # TD-Dup with q1 and q2
        record("q4", 0.26, 0.85, "yes", px=0.80),
        record("q5", 0.26, 0.85, "yes", px=0.60),  # TA with q4: only P(X=1) changed, not support
    ]
    (tmp_path / "cladder_test-generate-easy.json").write_text(json.dumps(rows))
    (tmp_path / "cladder_test-model-meta.json").write_text(
        json.dumps([{"model_id": 0, "background": BACKGROUND}])
    )
    return tmp_path


def test_support_is_what_the_estimand_names() -> None:
    """C.3 quantities by value: P(X=1) is given but the ATE estimand does not use it; a binary
    event's value is not compared; an estimand naming nothing given means unknown (None)."""
    step4 = "P(X=1) = 0.80\nP(Y=1 | X=0) = 0.26\nP(Y=1 | X=1) = 0.85"
    assert estimand_support("P(Y=1|X=1) - P(Y=1|X=0)", step4) == ("0.26", "0.85")
    assert estimand_support("P(Y | X=1)*P(X=1) + P(Y | X=0)*P(X=0)", step4) == ("0.80", "0.26", "0.85")
    nie = "P(Y=1 | X=0, V2=0) = 0.13\nP(Y=1 | X=1, V2=0) = 0.56\nP(V2=1 | X=0) = 0.29"
    assert estimand_support(
        "\\sum_{V2 = v} P(Y=1|X =0,V2 = v)*[P(V2 = v | X = 1) − P(V2 = v | X = 0)]", nie
    ) == (
        "0.13",
        "0.29",
    )
    assert (
        estimand_support(None, step4) is None
        and estimand_support("X and Y do not affect each other.", step4) is None
    )


def test_pairs_and_figures_worked_out_by_hand(folder: Path) -> None:
    pairs = build_pairs(load_questions(folder))
    assert sorted((p.condition, p.memory.qid, p.query.qid) for p in pairs) == [
        ("TA", "q1", "q2"),
        ("TA", "q2", "q1"),
        ("TA", "q4", "q5"),
        ("TA", "q5", "q4"),
        ("TD-Dup", "q1", "q3"),
        ("TD-Dup", "q2", "q3"),
        ("TD-Dup", "q3", "q1"),
    ]

    res = CliRunner().invoke(app, ["trim-eval", "--data", str(folder), "--json"])
    assert res.exit_code == 0, res.output
    out = json.loads(res.output)
    ta, td = out["sets"]["easy"]["TA"], out["sets"]["easy"]["TD-Dup"]
    assert (ta["pairs"], ta["candidates"], td["pairs"], td["candidates"]) == (4, 4, 3, 3)
    # raw: the whole memory; shared = the graph edge + unchanged quantities, conflicting = changed ones
    #   q1->q2, q2->q1: shared 2, conflicting 1; q4->q5, q5->q4: shared 3, conflicting 1
    assert ta["methods"]["raw"] == {
        "answer": 1.0,
        "shared": 2.5,
        "conflicting": 1.0,
        "memory_only": 0.0,
        "chars": ta["methods"]["raw"]["chars"],
        "tokens": ta["methods"]["raw"]["tokens"],
    }
    assert ta["methods"]["no_memory"] == dict.fromkeys(
        ("answer", "shared", "conflicting", "memory_only", "chars", "tokens"), 0.0
    )
    # MemTrim: q1<->q2 change a quantity of the estimand (suppressed, empty context); q4<->q5 change
    # only P(X=1), which the ATE does not use: the answer is kept, nothing else is passed
    assert ta["decisions"] == {"kept": 2, "relabelled": 0, "suppressed": 2, "none": 0}
    assert (ta["support_changed"], ta["empty_memtrim_context"]) == (2, 2)
    kept_context = (
        "From earlier interactions (facts the current request states were left out):\n"
        "- Answer given earlier to this same question: yes"
    )
    mt = ta["methods"]["memtrim"]
    assert (mt["answer"], mt["shared"], mt["conflicting"], mt["memory_only"]) == (0.5, 0.0, 0.0, 0.0)
    assert mt["chars"] == len(kept_context) / 2
    # TD-Dup: every pair changes both quantities: shared 1 (the edge), conflicting 2; all suppressed
    assert (td["methods"]["raw"]["shared"], td["methods"]["raw"]["conflicting"]) == (1.0, 2.0)
    assert td["decisions"]["suppressed"] == 3 and td["methods"]["memtrim"]["answer"] == 0.0
    assert out["fixed_by_construction"][3].endswith(
        "2 of 4 TA and 3 of 3 TD-Dup pairs, so MemTrim's TA `answer` cannot exceed 50.0%."
    )


def memory_following_model(body: dict[str, Any], idx: int) -> ScriptedReply:
    """Copies a stored answer when the prompt shows one, else says no."""
    text = body["messages"][-1]["content"]
    m = re.search(r"^-? ?(?:Answer|Answer given earlier to this same question): (yes|no)\s*$", text, re.M)
    return ScriptedReply(content=m.group(1) if m else "No.")


def test_model_counts_against_the_scripted_server(folder: Path) -> None:
    """Table 1 columns by hand: the model copies a shown answer, else says "no"."""

    with ScriptedServer(memory_following_model) as srv:
        res = CliRunner().invoke(
            app,
            ["trim-eval", "--data", str(folder), "--json", "--model", "scripted", "--base-url", srv.base_url],
        )
        n_requests = len(srv.requests)
    assert res.exit_code == 0, res.output
    model = json.loads(res.output)["model"]
    # 7 pairs x 3 methods, minus prompts asked before: 5 distinct queries without memory, 7 raw, 2
    # MemTrim prompts with the kept answer (the 5 empty MemTrim contexts are no-memory prompts)
    assert n_requests == model["requests"] == 5 + 7 + 2
    td = model["sets"]["easy"]["TD-Dup"]
    # gold: q3 -> "no" (2 pairs), q1 -> "yes" (1 pair); without memory the model says "no"
    assert td["no_memory"]["accuracy"] == pytest.approx(2 / 3)
    assert td["raw"] == {"accuracy": 0.0, "correct_to_wrong": 2, "wrong_to_correct": 0}
    assert td["memtrim"] == {"accuracy": pytest.approx(2 / 3), "correct_to_wrong": 0, "wrong_to_correct": 0}
    ta = model["sets"]["easy"]["TA"]
    assert (ta["no_memory"]["accuracy"], ta["raw"]["accuracy"], ta["memtrim"]["accuracy"]) == (0.0, 1.0, 0.5)


def scripted_llm(body: dict[str, Any], idx: int) -> ScriptedReply:
    """Parser requests get the deterministic parse (quotes = the exact spans); questions are
    answered like `memory_following_model`."""
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


def test_llm_parser_path(folder: Path) -> None:

    with ScriptedServer(scripted_llm) as srv:
        res = CliRunner().invoke(
            app,
            ["trim-eval", "--data", str(folder), "--json", "--llm-parser", "--parser-model", "scripted"]
            + ["--base-url", srv.base_url],
        )
        parse_calls = [
            r
            for r in srv.requests
            if (r.get("response_format") or {}).get("json_schema", {}).get("name") == "memtrim_parse"
        ]
    assert res.exit_code == 0, res.output
    out = json.loads(res.output)
    assert out["settings"]["parser"] == "llm" and out["settings"]["parser_failures"] == 0
    assert len(parse_calls) == 5 + 7  # every stored question once, every query once
    # the caller's support (the estimand's quantities) overrides the parser's "unsure" marks
    assert out["sets"]["easy"]["TA"]["decisions"] == {"kept": 2, "relabelled": 0, "suppressed": 2, "none": 0}
    assert out["sets"]["easy"]["TD-Dup"]["methods"]["memtrim"]["answer"] == 0.0
    assert "model" not in out


def test_full_shared_sets(real_data: Path) -> None:
    """All four sets: pair counts per set and condition, computed raw figures, a no-memory row,
    MemTrim never passing shared or conflicting units, the statements of what is fixed."""
    cladder = real_data / "cladder"
    if not cladder.is_dir():
        pytest.skip("CLADDER sets absent")

    res = CliRunner().invoke(app, ["trim-eval", "--data", str(cladder), "--json"])
    assert res.exit_code == 0, res.output
    out = json.loads(res.output)
    assert list(out["sets"]) == ["easy", "hard", "anti", "det"]
    for s, per in out["sets"].items():
        for c, b in per.items():
            assert 0 < b["pairs"] <= min(500, b["candidates"]), (s, c)
            assert b["methods"]["raw"]["answer"] == 1.0 and b["methods"]["raw"]["conflicting"] > 0
            assert set(b["methods"]["no_memory"].values()) == {0.0}
            mt = b["methods"]["memtrim"]
            assert mt["shared"] == 0.0 and mt["conflicting"] == 0.0
            assert mt["chars"] < b["methods"]["raw"]["chars"]
            assert sum(b["decisions"].values()) == b["pairs"]
    assert len(out["fixed_by_construction"]) == 5


def test_missing_data_is_one_clear_error(tmp_path: Path) -> None:

    res = CliRunner().invoke(app, ["trim-eval", "--data", str(tmp_path / "nope")])
    assert res.exit_code == 1 and "CLADDER folder not found" in res.output
