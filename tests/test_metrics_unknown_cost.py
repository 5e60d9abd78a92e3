"""Unknown usage and cost stay unknown (MemUse A.4.4: "Unavailable usage and cost remain unknown in
the underlying call records"; A.5.4: calls without reported usage contribute zero to a recorded
total). Per group: when no call (or judge attempt) recorded a cost, the per-episode (per-span)
cost is undefined and prints as "—", never $0.00; when some did, the known ones are summed and
the table counts the calls without cost or usage.

Hand-made store: config `known` (run k: 2 agent calls, $0.01 and $0.03, 100+10 and 300+30
tokens); config `none` (run u: 2 agent calls without cost or token counts, one LLM judgment
without cost); config `part` (run p: one call $0.02 with 200+20 tokens, one without either).
Two episodes per run.
"""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest
from test_metrics_corpus import Corpus

from memuse_core.metrics import build_report
from memuse_core.metrics.render import render_markdown
from memuse_core.metrics.tables import cost_table
from memuse_core.rules.aggregates import recorded_total
from memuse_core.store import connect

approx = pytest.approx


@pytest.fixture
def con(tmp_path: Path):
    db = tmp_path / "cost.duckdb"
    c0 = connect(db)
    c = Corpus(c0)
    for run, cfg in (("k", "known"), ("u", "none"), ("p", "part")):
        c.run(run, cfg)
        for i in (1, 2):
            c.episode(f"{run}{i}", run, f"t{i}", i, "A", None)
    c.call("k1-a", "k1", "agent", 100, 10, cost=0.01)
    c.call("k2-a", "k2", "agent", 300, 30, cost=0.03)
    c.call("u1-a", "u1", "agent", None, None)
    c.call("u2-a", "u2", "agent", None, None)
    c.call("p1-a", "p1", "agent", 200, 20, cost=0.02)
    c.call("p2-a", "p2", "agent", None, None)
    c.span("Su", "u1", "eligible")
    c.judgment("ju", "Su", "accepted", None, judge="llm")
    c0.close()
    con = connect(db, read_only=True)
    yield con
    con.close()


def test_recorded_total_rule() -> None:
    assert recorded_total(0.0, 3, 3) is None  # nothing recorded: unknown
    assert recorded_total(0.5, 3, 1) == 0.5  # the known part (the unknown call adds zero)
    assert recorded_total(0.0, 0, 0) == 0.0  # no call at all costs nothing


def test_all_unknown_is_undefined_and_partial_sums_the_known(con: duckdb.DuckDBPyConnection) -> None:
    rep = build_report(con, judge="llm")
    k, u, p = (rep.configs[x].cost for x in ("known", "none", "part"))
    assert k.agent_cost_per_episode == approx(0.02) and k.agent_tokens_per_episode == approx(220)
    assert u.agent_cost_per_episode is None and u.agent_tokens_per_episode is None
    assert p.agent_cost_per_episode == approx(0.01) and p.agent_tokens_per_episode == approx(110)
    assert (u.agent_cost_unknown, u.agent_usage_unknown, p.agent_cost_unknown) == (2, 2, 1)
    # the judge: one LLM attempt without a cost
    assert u.judge_cost is None and u.judge_cost_per_span is None and u.judge_cost_unknown == 1
    rows = cost_table(rep).set_index("config")
    assert rows.loc["none"].isna()[["agent $ /ep", "agent input /ep", "judge $ /span"]].all()
    assert rows.loc["part", "agent input /ep"] == approx(100)
    assert (rows.loc["part", "calls without cost"], rows.loc["part", "calls without usage"]) == (1, 1)


def test_markdown_prints_unknown_cost_as_a_dash(con: duckdb.DuckDBPyConnection) -> None:
    md = render_markdown(build_report(con, judge="llm"))
    table = md.split("Recorded usage and cost")[1].split("\n## ")[0]
    (line,) = [x for x in table.splitlines() if x.startswith("| none ")]
    cells = [x.strip() for x in line.strip("|").split("|")]
    header = [x.strip() for x in table.splitlines()[2].strip("|").split("|")]
    row = dict(zip(header, cells, strict=True))
    assert row["agent $ /ep"] == "—" and row["agent input /ep"] == "—" and row["judge $ /span"] == "—"
    assert row["calls without cost"] == "2"
