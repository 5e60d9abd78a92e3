"""`memuse report` and `memuse lineage` through the real CLI on the hand-built corpus store.

Invariants: the JSON has a stable shape (configs -> profile/uncertainty/
profiled_spans/triage/token_efficiency/yields/coverage/runs -> same per run) with undefined
statistics as null; Markdown prints them as "—"; CSV writes one file per table; bad options give
one error line and a non-zero exit.
"""

from __future__ import annotations

import json
from pathlib import Path

from test_metrics_corpus import corpus_db  # noqa: F401  (fixture)
from typer.testing import CliRunner

from memuse_core.cli import app

RUNNER = CliRunner()


def memuse(*args: str) -> tuple[int, str, list[str]]:
    res = RUNNER.invoke(app, list(args))
    return res.exit_code, res.stdout, [x for x in res.stderr.splitlines() if x.strip()]


def test_json_shape_and_values(corpus_db: Path) -> None:  # noqa: F811
    code, out, err = memuse("report", "--db", str(corpus_db), "--format", "json", "--baseline", "base")
    assert code == 0, err
    data = json.loads(out)
    mem = data["configs"]["mem"]
    assert set(mem["profile"]) == {
        "relevance",
        "corroboration",
        "information_gain",
        "acted_on",
        "benefit",
        "harm",
    }
    assert set(mem["triage"]) == {
        "positive",
        "negative",
        "neutral",
        "unresolved",
        "error",
        "unjudged",
        "empty",
        "unassessable",
    }
    assert set(mem["yields"]) == {"benefit", "harm"}
    for key in ("uncertainty", "profiled_spans", "token_efficiency", "coverage", "runs"):
        assert key in mem
    assert mem["profile"]["relevance"] == 0.5 and mem["profiled_spans"] == 4
    assert set(mem["runs"]) == {"m1", "m2"}
    assert mem["runs"]["m2"]["profile"]["harm"] == 1.0
    assert set(mem["runs"]["m1"]["profile"]) == set(mem["profile"])
    base = data["configs"]["base"]
    assert base["profile"]["relevance"] is None and base["token_efficiency"] is None
    assert base["yields"] == {"benefit": None, "harm": None}
    assert mem["outcome"]["diff"] == 0.25  # t3 has no outcome in m1: left out (test_metrics_outcomes)


def test_markdown_prints_undefined_as_dash(corpus_db: Path) -> None:  # noqa: F811
    code, out, _ = memuse("report", "--db", str(corpus_db), "--by", "run")
    assert code == 0
    row = next(line for line in out.splitlines() if line.startswith("| base | b1 | 0 |"))
    assert "—" in row and " 0.00 | 0.00 " not in row
    assert "## Delivery forms" in out and "copy of visible entries" in out


def test_csv_writes_one_file_per_table(corpus_db: Path, tmp_path: Path) -> None:  # noqa: F811
    out_dir = tmp_path / "rep"
    code, out, err = memuse(
        "report", "--db", str(corpus_db), "--format", "csv", "--out", str(out_dir), "--runs", "m1,m2"
    )
    assert code == 0, err
    names = sorted(p.name for p in out_dir.iterdir())
    assert "profiles.csv" in names and "forms.csv" in names and "harmful_items.csv" in names
    text = (out_dir / "profiles.csv").read_text()
    assert text.splitlines()[0].startswith("verdict_judge,config,profiled spans,relevance %")
    assert text.splitlines()[1].startswith("rules,")  # a CSV read on its own names its judge
    assert "base" not in text  # only the selected runs


def test_csv_floats_carry_no_binary_noise(corpus_db: Path) -> None:  # noqa: F811
    """A share of 0.28 is 28 percent in the CSV, not 28.000000000000004 (0.28 * 100 in binary)."""
    from memuse_core.metrics import build_report
    from memuse_core.metrics.render import render_csv
    from memuse_core.store import connect

    con = connect(corpus_db, read_only=True)
    try:
        rep = build_report(con)
    finally:
        con.close()
    rep.configs["mem"].profile.relevance = 0.28
    assert 0.28 * 100 != 28  # the noise this guards against
    rows = render_csv(rep)["profiles.csv"].splitlines()
    mem = next(r for r in rows if r.startswith("rules,mem,"))
    assert mem.split(",")[3] == "28", mem


def test_bad_options_fail_cleanly(corpus_db: Path) -> None:  # noqa: F811
    code, _, err = memuse("report", "--db", str(corpus_db), "--runs", "zz")
    assert code != 0 and len(err) == 1 and "--runs" in err[0] and "zz" in err[0]
    code, _, err = memuse("report", "--db", str(corpus_db), "--baseline", "nope")
    assert code != 0 and len(err) == 1 and "--baseline" in err[0]
    code, _, err = memuse("report", "--db", str(corpus_db), "--format", "xml")
    assert code != 0 and len(err) == 1 and "--format" in err[0]
    code, _, err = memuse("report", "--db", str(corpus_db.parent / "missing.duckdb"))
    assert code != 0 and len(err) == 1 and "does not exist" in err[0]


def test_lineage_command_writes_offline_html(corpus_db: Path, tmp_path: Path) -> None:  # noqa: F811
    out = tmp_path / "g.html"
    code, stdout, err = memuse("lineage", "--db", str(corpus_db), "--effect", "harmful", "--out", str(out))
    assert code == 0, err
    page = out.read_text()
    assert "cards/c1" in page and "cdn.jsdelivr" not in page
    code, _, err = memuse("lineage", "--db", str(corpus_db), "--item", "cards/none", "--out", str(out))
    assert code != 0 and len(err) == 1 and "nothing to draw" in err[0]


def test_report_shows_one_judge_and_names_it(corpus_db: Path, tmp_path: Path) -> None:  # noqa: F811
    """Verdicts are kept per judge; a report reads one judge's verdicts (default: the LLM judge
    where it has accepted verdicts, else rules) and every title names it; mixing is never silent."""
    import shutil

    import duckdb

    code, out, _ = memuse("report", "--db", str(corpus_db), "--format", "md")
    assert code == 0 and out.startswith("# MemUse report (rules judge)")
    assert all(line.endswith("— rules judge") for line in out.splitlines() if line.startswith("## "))
    code, out, err = memuse("report", "--db", str(corpus_db), "--format", "json", "--judge", "llm")
    assert code == 0 and json.loads(out)["judge"] == "llm"
    assert any("no accepted llm verdicts" in line for line in err)
    assert json.loads(out)["configs"]["mem"]["profiled_spans"] == 0  # nothing mixed in from rules
    code, _, err = memuse("report", "--db", str(corpus_db), "--judge", "both")
    assert code != 0 and len(err) == 1 and "--judge" in err[0]
    # an LLM verdict for one span: the default report now shows the LLM judge, and only its span
    db = tmp_path / "with_llm.duckdb"
    shutil.copy(corpus_db, db)
    con = duckdb.connect(str(db))
    try:
        con.execute(
            """INSERT INTO verdicts SELECT * REPLACE ('llm' AS judge, 'neutral' AS triage)
               FROM verdicts WHERE span_id = 'S8' AND judge = 'rules'"""
        )
        from memuse_core.store.outcomes import refresh_outcomes

        refresh_outcomes(con)
    finally:
        con.close()
    code, out, _ = memuse("report", "--db", str(db), "--format", "json")
    rep = json.loads(out)
    assert code == 0 and rep["judge"] == "llm"
    assert sum(c["profiled_spans"] for c in rep["configs"].values()) == 1
    code, out, _ = memuse("report", "--db", str(db), "--format", "json", "--judge", "rules")
    assert json.loads(out)["judge"] == "rules" and json.loads(out)["configs"]["mem"]["profiled_spans"] > 1
