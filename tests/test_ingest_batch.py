"""Batch folders: one folder of a benchmark run is one run; the harness report
beside the trajectories sets the outcomes.

Invariants: a folder is one run named after it (or `--run`), its configuration the folder name (or
`--config`); tasks are numbered in code-point order of their ids; episodes whose task the report
lists get its outcome, the others none (never "unresolved"); importing the folder again changes
nothing; another file of a task already imported is another episode (`<run>/<task>~2`); side
files (predictions, exit statuses, reports, configs, backups) are never imported as trajectories.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from realruns_helpers import (
    harness_report,
    mini_batch,
    mini_traj,
    openhands_batch,
    sweagent_batch,
    write_json,
)
from typer.testing import CliRunner

from memuse_core.cli import app
from memuse_core.ingest.layouts import find_inputs, plan_folder, read_exit_statuses
from memuse_core.store import connect

RUNNER = CliRunner()


def memuse(*args: str) -> tuple[int, str, str]:
    res = RUNNER.invoke(app, list(args))
    return res.exit_code, res.stdout, res.stderr


def rows(db: Path, sql: str) -> list[tuple]:
    con = connect(db, read_only=True)
    try:
        return con.execute(sql).fetchall()
    finally:
        con.close()


TASKS = {
    "django__django-2": "Submitted",
    "django__django-10": "LimitsExceeded",
    "astropy__astropy-1": "Submitted",
    "sphinx-doc__sphinx-7": "AttributeError",
}


def test_mini_batch_is_one_run_with_outcomes_and_positions(tmp_path: Path) -> None:
    report = harness_report(
        ["django__django-2"], ["astropy__astropy-1"], error=["sphinx-doc__sphinx-7"], empty=[]
    )
    folder = mini_batch(tmp_path / "nano-output", TASKS, report=report)
    db = tmp_path / "m.duckdb"
    code, out, err = memuse("ingest", str(folder), "--db", str(db), "--no-build")
    assert code == 0, err
    assert "run nano-output, configuration nano-output: 4 files imported (4 episodes)" in out
    assert "1 resolved, 2 not resolved (error 1, unresolved 1), 1 without outcome" in out
    assert rows(db, "SELECT run_id, config, label, agent, model FROM runs") == [
        ("nano-output", "nano-output", "nano-output", "mini-swe-agent", "openai/gpt-5-nano")
    ]
    got = rows(
        db, "SELECT episode_id, task_id, position, resolved, exit_status FROM episodes ORDER BY position"
    )
    assert got == [
        ("nano-output/astropy__astropy-1", "astropy__astropy-1", 0, False, "Submitted"),
        ("nano-output/django__django-10", "django__django-10", 1, None, "LimitsExceeded"),
        ("nano-output/django__django-2", "django__django-2", 2, True, "Submitted"),
        ("nano-output/sphinx-doc__sphinx-7", "sphinx-doc__sphinx-7", 3, False, "AttributeError"),
    ]
    src = rows(db, "SELECT task_id, status, source_kind FROM episode_outcomes ORDER BY 1")
    assert src == [
        ("astropy__astropy-1", "unresolved", "run-report"),
        ("django__django-2", "resolved", "run-report"),
        ("sphinx-doc__sphinx-7", "error", "run-report"),
    ]
    # side files are never trajectories; the run event is stored once, as the folder's own row
    formats = rows(db, "SELECT format, count(*) FROM files GROUP BY 1 ORDER BY 1")
    assert formats == [("mini-swe-agent", 4), ("mini-swe-agent-batch", 1)]
    # the report says how many episodes have no outcome, and the rate leaves them out
    code, out, _ = memuse("report", "--db", str(db))
    assert code == 0
    row = next(x for x in out.splitlines() if x.startswith("| nano-output |"))
    assert "| 33.33 |" in row  # 1 resolved of the 3 episodes with an outcome
    assert "1 of 4 episodes have no outcome" in out


def test_reimport_is_skipped_and_a_second_file_of_a_task_is_a_new_episode(tmp_path: Path) -> None:
    folder = mini_batch(tmp_path / "run-a", {"django__django-2": "Submitted"})
    db = tmp_path / "m.duckdb"
    assert memuse("ingest", str(folder), "--db", str(db), "--no-build")[0] == 0
    before = rows(db, "SELECT count(*) FROM calls")
    code, out, _ = memuse("ingest", str(folder), "--db", str(db), "--no-build")
    assert code == 0 and "joined stored run run-a" in out and "1 already imported" in out
    assert rows(db, "SELECT count(*) FROM calls") == before
    # a retry of the same task written beside the first trajectory
    write_json(
        folder / "django__django-2" / "django__django-2.retry.traj.json",
        mini_traj("django__django-2", steps=4),
    )
    code, out, err = memuse("ingest", str(folder), "--db", str(db), "--no-build")
    assert code == 0, err
    eps = rows(db, "SELECT episode_id, run_id, position, n_steps FROM episodes ORDER BY 1")
    assert eps == [("run-a/django__django-2", "run-a", 0, 3), ("run-a/django__django-2~2", "run-a", 0, 5)]


def test_run_and_config_names(tmp_path: Path) -> None:
    db = tmp_path / "m.duckdb"
    a = mini_batch(tmp_path / "x" / "output", {"django__django-2": "Submitted"})
    b = mini_batch(tmp_path / "y" / "output", {"django__django-3": "Submitted"})
    assert memuse("ingest", str(a), "--db", str(db), "--no-build", "--config", "mem0")[0] == 0
    # another folder with the same name: a distinct run, never a refusal
    code, out, _ = memuse("ingest", str(b), "--db", str(db), "--no-build")
    assert code == 0 and "run output~2, configuration output:" in out
    # --run names the run; an explicit stored run is joined when the configuration agrees
    c = mini_batch(tmp_path / "z" / "part2", {"django__django-4": "Submitted"})
    code, _, err = memuse(
        "ingest", str(c), "--db", str(db), "--no-build", "--run", "output", "--config", "other"
    )
    assert code == 1 and "run `output` is stored with configuration `mem0`, not `other`" in err
    code, out, _ = memuse("ingest", str(c), "--db", str(db), "--no-build", "--run", "output")
    assert code == 0 and "joined stored run output, configuration mem0" in out
    assert rows(db, "SELECT run_id, config FROM runs ORDER BY 1") == [
        ("output", "mem0"),
        ("output~2", "output"),
    ]
    assert rows(db, "SELECT run_id, count(*) FROM episodes GROUP BY 1 ORDER BY 1") == [
        ("output", 2),
        ("output~2", 1),
    ]
    # a folder imported before keeps its run
    code, _, err = memuse("ingest", str(a), "--db", str(db), "--no-build", "--run", "renamed")
    assert code == 1 and "was imported before as run `output`" in err
    # --run names one batch folder
    code, _, err = memuse("ingest", str(a), str(b), "--db", str(db), "--run", "r")
    assert code == 1 and "--run names the run of one batch folder; 2 batch folders were given" in err


def test_swe_agent_batch(tmp_path: Path) -> None:
    tasks = {"pydicom__pydicom-1458": "submitted", "psf__requests-2317": "exit_cost"}
    folder = sweagent_batch(
        tmp_path / "default__gpt-4o___swe_bench_lite",
        tasks,
        report=harness_report(["pydicom__pydicom-1458"], [], empty=["psf__requests-2317"]),
    )
    b = plan_folder(folder)
    assert b.layout == "swe-agent" and [p.name for p, _ in b.members] == [
        "psf__requests-2317.traj",
        "pydicom__pydicom-1458.traj",
    ]
    assert b.exit_statuses == tasks and [p.name for p in b.outcome_files] == ["results.json"]
    db = tmp_path / "m.duckdb"
    code, out, err = memuse("ingest", str(folder), "--db", str(db), "--no-build", "--run", "lite-1")
    assert code == 0, err
    got = rows(db, "SELECT episode_id, position, resolved, exit_status, n_steps FROM episodes ORDER BY 1")
    assert got == [
        ("lite-1/psf__requests-2317", 0, False, "exit_cost", 2),
        ("lite-1/pydicom__pydicom-1458", 1, True, "submitted", 2),
    ]
    assert rows(db, "SELECT agent, model FROM runs") == [("SWE-agent", "gpt-4o")]


def test_openhands_batch_with_run_report_and_per_task_reports(tmp_path: Path) -> None:
    iids = ["django__django-5", "astropy__astropy-9", "sympy__sympy-3"]
    folder = openhands_batch(
        tmp_path / "CodeActAgent" / "maxiter_30",
        iids,
        report=harness_report(["astropy__astropy-9"], ["django__django-5"]),
        per_task={"sympy__sympy-3": True},
    )
    found = find_inputs([tmp_path])
    assert found.batches == [folder] and found.files == []
    b = plan_folder(folder)
    assert b.layout == "openhands" and b.tasks == sorted(iids)
    assert [p.relative_to(folder).as_posix() for p in b.outcome_files] == [
        "report.json",
        "eval_outputs/sympy__sympy-3/report.json",
    ]
    db = tmp_path / "m.duckdb"
    code, out, err = memuse("ingest", str(tmp_path), "--db", str(db), "--no-build")
    assert code == 0, err
    assert "2 resolved, 1 not resolved (unresolved 1), 0 without outcome" in out
    got = rows(db, "SELECT episode_id, position, resolved, n_steps FROM episodes ORDER BY position")
    assert got == [
        ("maxiter_30/astropy__astropy-9", 0, True, 2),
        ("maxiter_30/django__django-5", 1, False, 2),
        ("maxiter_30/sympy__sympy-3", 2, True, 2),
    ]
    assert rows(db, "SELECT count(*), count(DISTINCT path) FROM files") == [
        (2, 2)
    ]  # no .bak, no swebench.jsonl


def test_harness_report_given_later_with_outcomes_command(tmp_path: Path) -> None:
    folder = mini_batch(tmp_path / "nano", {"django__django-2": "Submitted", "django__django-3": "Submitted"})
    db = tmp_path / "m.duckdb"
    code, out, _ = memuse("ingest", str(folder), "--db", str(db), "--no-build")
    assert "0 resolved, 0 not resolved, 2 without outcome" in out and "memuse outcomes" in out
    code, out, _ = memuse("report", "--db", str(db))
    row = next(x for x in out.splitlines() if x.startswith("| nano |"))
    assert row.split("|")[4].strip() == "—"  # resolved %: unknown, never 0%
    rep = write_json(
        tmp_path / "eval.json", harness_report(["django__django-2"], [], empty=["other__task-1"])
    )
    code, out, err = memuse("outcomes", str(rep), "--run", "nano", "--db", str(db))
    assert code == 0, err
    assert "set the outcome of 1 episode of run nano" in out
    assert "1 resolved, 0 not resolved, 1 without outcome" in out
    assert "no episode in run nano for 1 task of the report (other__task-1)" in out
    code, _, err = memuse("outcomes", str(rep), "--run", "nope", "--db", str(db))
    assert code == 1 and "run `nope` is not in the store (runs: nano)" in err
    bad = write_json(tmp_path / "bad.json", {"resolved_ids": "django__django-2"})
    code, _, err = memuse("outcomes", str(bad), "--run", "nano", "--db", str(db))
    assert (
        code == 1
        and err.strip() == f"error: {bad}: field `resolved_ids`: expected a list of task ids, got a string"
    )


def test_exit_status_file_forms(tmp_path: Path) -> None:
    p = tmp_path / "s.yaml"
    p.write_text(
        "instances_by_exit_status:\n  'skipped (Submitted)':\n    - a__b-1\n  LimitsExceeded: [c__d-2, e__f-3]\ntotal_cost: 1\n"
    )
    assert read_exit_statuses(p) == {
        "a__b-1": "skipped (Submitted)",
        "c__d-2": "LimitsExceeded",
        "e__f-3": "LimitsExceeded",
    }
    p.write_text(json.dumps({"instances_by_exit_status": {"Submitted": ["x__y-1"]}}))
    assert read_exit_statuses(p) == {"x__y-1": "Submitted"}
    p.write_text("other: 1\n")
    with pytest.raises(ValueError, match="instances_by_exit_status"):
        read_exit_statuses(p)


def test_single_trajectory_file_still_imports_alone(tmp_path: Path) -> None:
    f = write_json(tmp_path / "runs" / "nano__django__django-2.traj.json", mini_traj("django__django-2"))
    db = tmp_path / "m.duckdb"
    code, out, err = memuse("ingest", str(f), "--db", str(db), "--no-build")
    assert code == 0, err
    assert rows(db, "SELECT run_id FROM runs") == [("nano:django__django-2",)]


def test_unreadable_harness_report_is_a_failed_input_not_a_missing_one(tmp_path: Path) -> None:
    """A report beside the trajectories that cannot be read is bad input (DESIGN.md "Bad input"):
    named with its file, the command exits non-zero, the trajectories still land (each file is its
    own all-or-nothing import) and nothing claims the folder had no report."""
    report = harness_report(["django__django-2"], ["astropy__astropy-1"])
    folder = mini_batch(tmp_path / "nano-output", TASKS, report=report)
    path = folder / "openai__gpt-5-nano.nano-output_eval.json"
    path.write_text(path.read_text()[:120])
    db = tmp_path / "m.duckdb"
    code, out, err = memuse("ingest", str(folder), "--db", str(db), "--no-build")
    assert code == 1
    assert f"error: {path}:6: not a JSON harness report (Unterminated string starting at column" in err
    assert "no harness report beside" not in out
    assert "1 harness report could not be read" in out
    assert "imported 4 episodes from 4 files; 1 failed" in out
    assert rows(db, "SELECT count(*), count(resolved) FROM episodes") == [(4, 0)]
    # a report with the wrong type of field is refused the same way, naming the field
    write_json(path, {"resolved_ids": "django__django-2"})
    code, out, err = memuse("ingest", str(folder), "--db", str(db), "--no-build")
    assert code == 1 and "resolved_ids" in err and "no harness report beside" not in out


def test_folder_readme_and_side_data_are_left_out_by_name(tmp_path: Path) -> None:
    """A README or picture in a searched folder is no recording: left out and named, so a data
    folder with its documentation imports cleanly; the same file given by name is still refused."""
    mini_batch(tmp_path / "data" / "nano-output", {"django__django-2": "Submitted"})
    (tmp_path / "data" / "README.md").write_text("# Where these runs come from\n")
    (tmp_path / "data" / "figure.png").write_bytes(b"\x89PNG\r\n")
    cladder = [
        {"question_id": 1, "given_info": "P(Y|X) = 0.3", "question": "Does X cause Y?", "answer": "no"}
    ]
    write_json(tmp_path / "data" / "cladder" / "questions.json", cladder)
    db = tmp_path / "m.duckdb"
    code, out, err = memuse("ingest", str(tmp_path / "data"), "--db", str(db), "--no-build")
    assert code == 0, err
    assert f"left out {tmp_path / 'data' / 'README.md'}: documentation" in err
    assert f"left out {tmp_path / 'data' / 'figure.png'}" in err
    assert f"left out {tmp_path / 'data' / 'cladder' / 'questions.json'}: CLADDER question data" in err
    assert "imported 1 episode from 1 file" in out
    code, _, err = memuse("ingest", str(tmp_path / "data" / "README.md"), "--db", str(db), "--no-build")
    assert code == 1 and "README.md:1: unknown format" in err
    code, _, err = memuse("ingest", str(tmp_path / "data" / "cladder"), "--db", str(db), "--no-build")
    assert code == 1 and "CLADDER question data, for `memuse trim-eval`" in err
    assert "no recordings found (1 file left out, named above)" in err
    given = tmp_path / "data" / "cladder" / "questions.json"
    code, _, err = memuse("ingest", str(given), "--db", str(db), "--no-build")
    assert code == 1 and "questions.json:1: unknown format (CLADDER question data" in err


def test_summary_counts_skipped_files_and_no_build_says_pending(tmp_path: Path) -> None:
    folder = mini_batch(
        tmp_path / "run-a", {"django__django-2": "Submitted", "django__django-3": "Submitted"}
    )
    db = tmp_path / "m.duckdb"
    code, out, err = memuse("ingest", str(folder), "--db", str(db), "--no-build")
    assert code == 0, err
    assert "imported 2 episodes from 2 files" in out
    assert "note: 2 episodes not built yet (--no-build): run `memuse build`" in out
    code, out, err = memuse("ingest", str(folder), "--db", str(db))
    assert code == 0, err
    assert "imported 0 episodes from 0 files; 2 already imported" in out
    code, out, err = memuse("ingest", str(folder), "--db", str(db), "--no-build")
    assert code == 0 and "not built" not in out + err  # the build above left nothing pending


def test_contradictory_harness_report_is_refused(tmp_path: Path) -> None:
    """A task listed as resolved and as unresolved: which is true cannot be known, so the report
    is refused naming the task, and no outcome is set from it."""
    folder = mini_batch(tmp_path / "run-a", {"django__django-2": "Submitted"})
    db = tmp_path / "m.duckdb"
    assert memuse("ingest", str(folder), "--db", str(db), "--no-build")[0] == 0
    bad = tmp_path / "conf.json"
    write_json(bad, {"resolved_ids": ["django__django-2"], "unresolved_ids": ["django__django-2"]})
    code, out, err = memuse("outcomes", str(bad), "--run", "run-a", "--db", str(db))
    assert code == 1
    assert "unresolved_ids[0]" in err and "'django__django-2' is also listed as resolved" in err
    assert rows(db, "SELECT count(resolved) FROM episodes") == [(0,)]
    # two ways of not resolving (an empty patch that also errored) are no contradiction
    ok = tmp_path / "ok.json"
    write_json(ok, {"empty_patch_ids": ["django__django-2"], "error_ids": ["django__django-2"]})
    code, out, err = memuse("outcomes", str(ok), "--run", "run-a", "--db", str(db))
    assert code == 0, err
    assert rows(db, "SELECT resolved FROM episodes") == [(False,)]
