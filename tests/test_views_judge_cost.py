"""The Judge runs page's cost total (`views.judge_runs.JudgeRuns.cost_total`): LLM judgments
without prices or a provider cost have an unknown cost (A.4.4), so the total is unknown ("—"),
never $0.0000; once a batch with a known cost exists (the rules judge costs a known 0) the total
is the sum of the known costs."""

from __future__ import annotations

from memuse_core.judge.examples import acted_on_episode, ignored_episode, write_store
from memuse_core.judge.result import JudgeSettings
from memuse_core.judge.runner import run_batch
from memuse_core.judge.scripted_server import Script, ScriptedServer
from memuse_core.store import connect
from memuse_core.views.judge_runs import judge_runs


def test_unknown_judge_cost_total_is_unknown(tmp_path) -> None:
    db = write_store(tmp_path, [acted_on_episode("a1"), ignored_episode("i1")])
    with ScriptedServer(Script()) as srv:
        run_batch(db, JudgeSettings(judge="llm", model="scripted", base_url=srv.base_url), concurrency=2)
    con = connect(db, read_only=True)
    try:
        jr = judge_runs(con)
        assert jr.total("judgments") == 2 and jr.cost_total() is None
    finally:
        con.close()
    run_batch(db, JudgeSettings(judge="rules"))
    con = connect(db, read_only=True)
    try:
        assert judge_runs(con).cost_total() == 0.0
    finally:
        con.close()
