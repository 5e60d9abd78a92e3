"""Demo corpus: deterministic files, clean ingest, planted truth that the trajectories actually
show, and the paper's qualitative findings at small scale (MemUse 4.2-4.4, A.6.5, A.6.6) read from
the pipeline's report (build + rules judge + report); the planted truth serves only as a labelled
consistency check. All over real temporary stores."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
from typer.testing import CliRunner

from memuse_core.build import build_store
from memuse_core.cli import app
from memuse_core.demo import DemoPlan, build_demo, generate
from memuse_core.metrics import FormRow, Report
from memuse_core.store import connect
from memuse_core.store.demo import qualitative_findings

PLAN = DemoPlan(episodes=120, seed=7, runs=2, mean_steps=20)


def _hashes(folder: Path) -> dict[str, str]:
    return {
        p.relative_to(folder).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


@pytest.fixture(scope="module")
def demo_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    db = tmp_path_factory.mktemp("demo") / "demo.duckdb"
    res = build_demo(db, PLAN)
    assert res.episodes == 120
    return db


@pytest.fixture(scope="module")
def con(demo_db: Path):
    c = connect(demo_db, read_only=True)
    yield c
    c.close()


def test_same_seed_gives_identical_files_and_another_seed_does_not(tmp_path: Path) -> None:
    plan = DemoPlan(episodes=24, seed=3, mean_steps=14)
    generate(plan, tmp_path / "a")
    generate(plan, tmp_path / "b")
    generate(DemoPlan(episodes=24, seed=4, mean_steps=14), tmp_path / "c")
    a, b, c = _hashes(tmp_path / "a"), _hashes(tmp_path / "b"), _hashes(tmp_path / "c")
    assert a == b
    assert len(a) == 1 + 1 + 8  # truth, card corpus, 4 configurations x 2 runs
    assert a["events/01-cards-r1.jsonl"] != c["events/01-cards-r1.jsonl"]


def test_demo_ingests_cleanly(con) -> None:
    runs = con.execute("SELECT config, count(*) FROM runs GROUP BY 1 ORDER BY 1").fetchall()
    assert runs == [("baseline", 2), ("cards", 2), ("mem0", 2), ("proxy", 2)]
    assert con.execute("SELECT count(*) FROM episodes WHERE NOT ended OR resolved IS NULL").fetchone()[0] == 0
    # Every run executes the same task sequence in the same order (MemUse 4.1).
    orders = con.execute("SELECT run_id, list(task_id ORDER BY position) FROM episodes GROUP BY 1").fetchall()
    assert len({tuple(o) for _, o in orders}) == 1
    # Usage and cost on every agent call; memory-system calls carry an op_ref.
    agent = con.execute(
        "SELECT count(*), count(cost_usd), count(input_tokens) FROM calls WHERE role = 'agent'"
    ).fetchone()
    assert agent[0] > 0 and agent[0] == agent[1] == agent[2]
    assert (
        con.execute("SELECT count(*) FROM calls WHERE role = 'memory' AND op_ref IS NULL").fetchone()[0] == 0
    )
    assert con.execute("SELECT count(*) FROM calls WHERE role = 'memory'").fetchone()[0] > 0
    assert (
        con.execute("SELECT count(*) FROM calls WHERE role = 'embedding' AND op_ref IS NOT NULL").fetchone()[
            0
        ]
        > 0
    )
    # Memories the agent saved during an episode carry that episode as origin.
    assert (
        con.execute(
            "SELECT count(*) FROM item_events i JOIN tool_results t ON t.episode_id = i.episode_id "
            "WHERE t.name = 'mem0_memory' AND i.op_ref LIKE '%:a1'"
        ).fetchone()[0]
        > 0
    )
    # The card corpus is shared by all runs; per-run stores keep their run and origin episode.
    assert (
        con.execute(
            "SELECT count(*) FROM item_events WHERE namespace = 'memgovern:cards' "
            "AND (run_id IS NOT NULL OR episode_id IS NOT NULL)"
        ).fetchone()[0]
        == 0
    )
    assert (
        con.execute(
            "SELECT count(*) FROM item_events WHERE namespace LIKE 'mem0:%' "
            "AND (run_id IS NULL OR episode_id IS NULL)"
        ).fetchone()[0]
        == 0
    )
    assert con.execute("SELECT count(*) FROM item_events WHERE op = 'update'").fetchone()[0] > 0
    # Empty searches, retractions and rewrites are present.
    assert con.execute("SELECT count(*) FROM deliveries WHERE n_entries = 0").fetchone()[0] > 0
    assert {r[0] for r in con.execute("SELECT DISTINCT type FROM context_events").fetchall()} == {
        "retraction",
        "history_rewrite",
    }
    # Requests are delta encoded against the previous call.
    assert con.execute("SELECT count(*) FROM calls WHERE base_call_id IS NOT NULL").fetchone()[0] > 0


def test_acted_on_entries_show_their_hint_only_from_the_anchor_on(con) -> None:
    rows = con.execute(
        """SELECT t.episode_id, t.anchor_step, t.hint, d.consuming_call_id,
                  (SELECT min(step) FROM steps s WHERE s.call_id = d.consuming_call_id) AS consuming_step,
                  (SELECT text FROM blobs WHERE hash = e.task_hash) AS task
           FROM planted_truth t JOIN deliveries d USING (delivery_id) JOIN episodes e ON e.episode_id = t.episode_id
           WHERE t.influence = 'acted_on'"""
    ).fetchall()
    assert len(rows) > 10
    for ep, anchor, hint, _, consuming, task in rows:
        assert hint and hint not in task
        assert consuming is not None and anchor >= consuming
        actions = dict(con.execute("SELECT step, action FROM steps WHERE episode_id = ?", [ep]).fetchall())
        assert hint in actions[anchor], (ep, anchor, hint)
        assert not [t for t, a in actions.items() if t < consuming and hint in a], (ep, hint)
        # Nor does any earlier observation mention it, apart from memory shown in tool results.
        outs = con.execute(
            """SELECT s.step, b.text FROM tool_results tr JOIN steps s ON s.call_id = tr.call_id
               JOIN blobs b ON b.hash = tr.output_hash WHERE tr.episode_id = ? AND s.step + 1 NOT IN (
                 SELECT s2.step FROM deliveries d2 JOIN steps s2 ON s2.call_id = d2.consuming_call_id
                 WHERE d2.episode_id = ? AND d2.route = 'agent')""",
            [ep, ep],
        ).fetchall()
        assert not [t for t, o in outs if t < consuming and hint in o], (ep, hint)


def test_unused_entries_leave_no_trace(con) -> None:
    """An unused entry's hint appears in no action, except where the task itself names it: then
    the agent uses it because the task says so (a misleading cue, planted influence none)."""
    rows = con.execute(
        """SELECT t.episode_id, t.hint, coalesce(t.note, '') LIKE '%the task already names the hint%'
           FROM planted_truth t
           WHERE t.influence IN ('none', 'referenced') AND t.hint IS NOT NULL AND NOT t.copy
             AND t.hint NOT IN (SELECT a.hint FROM planted_truth a
                                WHERE a.episode_id = t.episode_id AND a.influence = 'acted_on')"""
    ).fetchall()
    assert len(rows) > 50
    named = 0
    for ep, hint, task_named in rows:
        hits = con.execute(
            "SELECT count(*) FROM steps WHERE episode_id = ? AND contains(action, ?)", [ep, hint]
        ).fetchone()[0]
        if task_named:
            task = con.execute(
                "SELECT b.text FROM episodes e JOIN blobs b ON b.hash = e.task_hash WHERE e.episode_id = ?",
                [ep],
            ).fetchone()[0]
            assert hint in task, (ep, hint)
            named += hits > 0
        else:
            assert hits == 0, (ep, hint)
    assert named > 0  # the cue is planted: the hint is used, but because the task names it


def test_selected_previews_lead_to_full_reads_of_the_same_item(con) -> None:
    rows = con.execute(
        """SELECT t.episode_id, t.item_id, t.anchor_step FROM planted_truth t WHERE t.influence = 'selected'"""
    ).fetchall()
    assert rows
    for ep, item, step in rows:
        full = con.execute(
            """SELECT count(*) FROM deliveries d JOIN delivery_entries de USING (delivery_id)
               JOIN steps s ON s.call_id = d.consuming_call_id
               WHERE d.episode_id = ? AND de.item_id = ? AND d.form IN ('full_card', 'full_skill', 'scene_content')
                 AND s.step = ?""",
            [ep, item, step + 1],
        ).fetchone()[0]
        assert full == 1, (ep, item, step)


@pytest.fixture(scope="module")
def pipeline(demo_db: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Report, Path]:
    """The demo corpus through the pipeline as a user runs it: `memuse build`, `memuse judge`
    (rules judge), `memuse report --format json`. Returns the parsed report and the store."""
    db = tmp_path_factory.mktemp("pipeline") / "pipeline.duckdb"
    db.write_bytes(demo_db.read_bytes())
    runner = CliRunner()
    for args in (
        ["build", "--db", str(db)],
        ["judge", "--db", str(db), "--judge", "rules", "--workers", "1"],
    ):
        res = runner.invoke(app, args)
        assert res.exit_code == 0, res.output
    res = runner.invoke(app, ["report", "--db", str(db), "--format", "json", "--replicates", "10"])
    assert res.exit_code == 0, res.output
    return Report.model_validate_json(res.stdout), db


def _form(rep: Report, config: str, form: str) -> FormRow:
    return next(f for f in rep.configs[config].forms if f.form == form)


def test_paper_findings_hold_on_the_pipeline_output(pipeline: tuple[Report, Path]) -> None:
    """The paper's qualitative findings (MemUse 4.2-4.4, A.6.5, A.6.6), read from the report the
    pipeline computes over the generated corpus (build + rules judge + report), not from the
    generator's planted truth."""
    rep, db = pipeline
    memory = [c for c in rep.configs if c != "baseline"]
    assert sorted(memory) == ["cards", "mem0", "proxy"]
    assert rep.configs["baseline"].use.judged_entries == 0
    # 4.2: most delivered entries were irrelevant, in every memory system (an entry-level share:
    # the span-weighted profile of Eq. 3 weighs a one-entry persona span like a long catalog)
    for cfg in memory:
        use = rep.configs[cfg].use
        assert use.judged_entries > 20 and use.relevant / use.judged_entries < 0.5, (cfg, use)
    # 4.2 / A.4.1: most relevant entries went unused (influence none), pooled over the systems
    relevant = sum(rep.configs[c].use.relevant for c in memory)
    unused = sum(rep.configs[c].use.unused_relevant for c in memory)
    assert relevant > 20 and unused / relevant > 0.5
    # 4.4 / A.6.5: in two systems most deliveries restate content the agent can still see
    con = connect(db, read_only=True)
    try:
        restated = dict(
            con.execute(
                "SELECT r.config, sum(s.restatements) / sum(s.n_deliveries) FROM spans s "
                "JOIN episodes USING (episode_id) JOIN runs r USING (run_id) GROUP BY 1"
            ).fetchall()
        )
    finally:
        con.close()
    assert restated["mem0"] > 0.5 and restated["proxy"] > 0.5
    assert restated["cards"] < 0.2
    # 4.4 / A.6.5: previews and indexes contribute by selection, full content by action
    for cfg, form in (("cards", "search_preview"), ("proxy", "skill_catalog"), ("proxy", "scene_index")):
        row = _form(rep, cfg, form)
        assert row.selected > row.acted_on, (cfg, form, row)
    full_card = _form(rep, "cards", "full_card")
    assert full_card.beneficial_share is not None and full_card.beneficial_share > 0.5
    assert full_card.token_share is not None and full_card.token_share < 0.5
    # 4.3: outcomes conceal effects: beneficial use in a failed episode, harmful in a resolved one
    assert sum(rep.configs[c].use.episodes_beneficial_failed for c in memory) >= 1
    assert sum(rep.configs[c].use.episodes_harmful_resolved for c in memory) >= 1
    # A.6.6: a card harms in several runs; a failed episode leaves memory that later helps
    assert rep.configs["cards"].histories.items_harmed_several_runs
    assert sum(rep.configs[c].histories.benefit.source_failed for c in memory) >= 1


def test_planted_truth_consistency_check(con, pipeline: tuple[Report, Path]) -> None:
    """CONSISTENCY CHECK, not validity: the generator plants the findings, and it plants the very
    cues the rules judge reads, so this only shows that the planted truth and the
    pipeline's report point the same way. The findings themselves are asserted on the pipeline
    output above."""
    rep, _ = pipeline
    q = qualitative_findings(con)
    memory = [c for c in rep.configs if c != "baseline"]
    assert q["relevance_share"] < 0.5
    assert all(rep.configs[c].use.relevant < 0.5 * rep.configs[c].use.judged_entries for c in memory)
    assert q["relevant_unused_share"] > 0.5
    assert q["restatement_share"]["mem0"] > 0.8 and q["restatement_share"]["proxy"] > 0.8
    assert q["restatement_share"].get("cards", 0.0) < 0.2
    assert q["searches_with_full_read"] > 0.5
    planted_harmful = {item for item, _, runs in q["harmful_cards_across_runs"] if runs >= 2}
    reported_harmful = {
        key.split("/", 1)[1] for key in rep.configs["cards"].histories.items_harmed_several_runs
    }
    assert planted_harmful and planted_harmful == reported_harmful
    assert q["improved_in_failed_episodes"] >= 1
    assert q["harmed_in_resolved_episodes"] >= 1
    assert q["failed_origin_later_helps"] >= 1
    assert q["cross_repo_improved"] >= 1  # planted only: the rules judge leaves these undetermined


def test_planted_truth_matches_the_evaluation_context(demo_db: Path, tmp_path: Path) -> None:
    """Each truth row sits on the first delivery of a built span, anchors fall inside the credit
    windows, copies become automatic neutral spans and broken recordings become error spans."""
    db = tmp_path / "ctx.duckdb"
    db.write_bytes(demo_db.read_bytes())
    build_store(db)
    c = connect(db, read_only=True)
    try:
        assert (
            c.execute(
                "SELECT count(*) FROM planted_truth t LEFT JOIN spans s ON s.first_delivery_id = t.delivery_id "
                "WHERE s.span_id IS NULL"
            ).fetchone()[0]
            == 0
        )
        status = dict(
            c.execute(
                """SELECT CASE WHEN t.broken THEN 'broken' WHEN t.copy THEN 'copy' ELSE 'plain' END, list(DISTINCT s.status)
               FROM planted_truth t JOIN spans s ON s.first_delivery_id = t.delivery_id GROUP BY 1"""
            ).fetchall()
        )
        assert status["plain"] == ["eligible"]
        assert status["copy"] == ["auto_neutral"]
        assert status["broken"] == ["error"]
        outside = c.execute(
            """SELECT count(*) FROM planted_truth t JOIN spans s ON s.first_delivery_id = t.delivery_id
               JOIN span_entries se ON se.span_id = s.span_id AND se.pos = t.pos
               WHERE t.anchor_step IS NOT NULL AND NOT t.broken
                 AND (se.window_start IS NULL OR t.anchor_step NOT BETWEEN se.window_start AND se.window_end)"""
        ).fetchone()[0]
        assert outside == 0
        rules = {
            r[0] for r in c.execute("SELECT DISTINCT rule FROM recording_checks WHERE NOT ok").fetchall()
        }
        assert {"proof_missing", "text_not_unique"} <= rules, rules
        failed = {
            r[0]
            for r in c.execute("SELECT DISTINCT episode_id FROM recording_checks WHERE NOT ok").fetchall()
        }
        broken = {
            r[0] for r in c.execute("SELECT DISTINCT episode_id FROM planted_truth WHERE broken").fetchall()
        }
        assert failed == broken and broken
    finally:
        c.close()


def test_cli_demo_and_bad_arguments(tmp_path: Path) -> None:
    runner = CliRunner()
    db = tmp_path / "cli.duckdb"
    res = runner.invoke(
        app,
        [
            "demo",
            "--episodes",
            "16",
            "--steps",
            "12",
            "--db",
            str(db),
            "--no-build",
            "--out",
            str(tmp_path / "out"),
        ],
    )
    assert res.exit_code == 0, res.output
    assert (tmp_path / "out" / "planted_truth.jsonl").exists()
    c = connect(db, read_only=True)
    try:
        assert c.execute("SELECT count(*) FROM episodes").fetchone()[0] == 16
        assert c.execute("SELECT count(*) FROM planted_truth").fetchone()[0] > 0
    finally:
        c.close()
    bad = runner.invoke(app, ["demo", "--episodes", "0", "--db", str(tmp_path / "bad.duckdb")])
    assert bad.exit_code != 0
    assert "--episodes" in bad.output
    (tmp_path / "afile").write_text("x")
    bad = runner.invoke(
        app,
        ["demo", "--episodes", "8", "--db", str(tmp_path / "bad.duckdb"), "--out", str(tmp_path / "afile")],
    )
    assert bad.exit_code != 0 and "not a folder" in bad.output
    assert not (tmp_path / "bad.duckdb").exists()


def test_building_twice_changes_nothing(tmp_path: Path) -> None:
    """Same seed into the same store: the files are recognised as imported and the truth is replaced."""
    db = tmp_path / "twice.duckdb"
    plan = DemoPlan(episodes=16, seed=5, mean_steps=12)
    first = build_demo(db, plan)
    second = build_demo(db, plan)
    assert first.episodes == 16 and second.episodes == 0
    from memuse_core.ingest import IngestError

    with pytest.raises(IngestError, match="different demo"):
        build_demo(db, DemoPlan(episodes=16, seed=6, mean_steps=12))
    c = connect(db, read_only=True)
    try:
        assert c.execute("SELECT count(*) FROM episodes").fetchone()[0] == 16
        assert (
            c.execute("SELECT count(*) FROM planted_truth").fetchone()[0]
            == first.truth_rows
            == second.truth_rows
        )
    finally:
        c.close()


def test_misleading_cues_are_planted_and_labelled_by_the_rubric(con) -> None:
    """The generator plants cues a lexical judge would misread, each labelled as
    the rubric says (A.2.2): a generic pass of an unrelated test module leaves the effect
    undetermined; a stash of a scratch file named after the helper is no abandonment (the change is
    kept, not harmed); a mention that names the hint without acting is referenced, not acted on; a
    preview that already names the helper exists beside the full read it selects."""
    generic = con.execute(
        """SELECT t.episode_id, t.influence, t.effect FROM planted_truth t
           WHERE t.note LIKE '%checked only by an unrelated test module%'"""
    ).fetchall()
    assert generic and all(i == "acted_on" and e == "undetermined" for _, i, e in generic), generic
    for ep, _, _ in generic:
        passes = con.execute(
            "SELECT count(*) FROM steps WHERE episode_id = ? AND contains(action, 'tests/test_cli_smoke.py')",
            [ep],
        ).fetchone()[0]
        assert passes == 1, ep
    stashed = con.execute(
        """SELECT DISTINCT t.episode_id, t.effect FROM planted_truth t JOIN steps s USING (episode_id)
           WHERE contains(s.action, 'git stash push -u notes.txt') AND t.influence = 'acted_on'
             AND contains(s.action, t.hint)"""
    ).fetchall()
    assert stashed and all(e != "harmed" for _, e in stashed), stashed
    mentioned = con.execute(
        """SELECT t.episode_id, t.hint, bool_or(t.influence = 'referenced')
           FROM planted_truth t JOIN steps s USING (episode_id) JOIN blobs b ON b.hash = s.response_hash
           WHERE t.hint IS NOT NULL AND contains(b.text, 'The memory points at `' || t.hint || '`; I may look at that later')
           GROUP BY 1, 2"""
    ).fetchall()
    assert mentioned and all(ok for _, _, ok in mentioned), mentioned
    previews = con.execute(
        """SELECT count(*) FROM planted_truth t
           JOIN delivery_entries de ON de.delivery_id = t.delivery_id AND de.pos = t.pos
           JOIN blobs b ON b.hash = de.value_hash
           WHERE t.form = 'search_preview' AND contains(b.text, '(fixed in `')"""
    ).fetchone()[0]
    assert previews > 0
