"""A tiny hand-built corpus for the aggregate and lineage tests, written straight into the store's
tables (runs, episodes, calls, item_events, deliveries, spans, judgments, assessments, verdicts).

Invariant checked here: the fixture itself is consistent (every verdict's shares follow A.4.2 from
its assessments, span token estimates are floor(chars / 4)). The expected statistics are worked out
by hand in the other test_metrics_* files and in test_lineage_graph.py.

Corpus (config `mem`, runs m1 and m2; config `base`, runs b1 and b2; tasks t1..t4):

m1e1 t1 pos1 repo A resolved   S1 full_card/agent profiled positive, 4 entries, 100 tok
                               S2 auto-neutral copy task_recall/host, 300 tok
m1e2 t2 pos2 repo B failed     S3 search_preview/agent profiled negative, 2 entries, 50 tok
                               (entry c5 carries the per-entry form label `persona`)
                               S4 error (judge failed), 20 tok
m1e3 t3 pos3 repo A no result  (no deliveries)
m1e4 t4 pos4 repo A resolved   S5 unjudged 10 tok; S6 empty 0 tok; S7 unassessable 5 tok;
                               S8 full_card/agent profiled neutral, 1 entry, 15 tok
m2e1 t1 pos1 repo A resolved   S9 full_card/agent profiled negative, 1 entry (c1 harmed), 40 tok
m2e2..m2e4: t2 resolved, t3 resolved, t4 failed, no deliveries
b1: t1 T, t2 F, t3 F, t4 T; b2: t1 T, t2 T, t3 F, t4 F (no deliveries)

Item c1 (namespace `cards`): run m1 create v1 with no origin episode, update v2 in m1e1; nothing
recorded in run m2. c1 helps in S1 (v1), harms in S3 (v2) and in S9 (v1).
"""

from __future__ import annotations

import json
from pathlib import Path

import duckdb
import pytest

from memuse_core.store import connect
from memuse_core.store.outcomes import refresh_outcomes

NS = "cards"


def _insert(con: duckdb.DuckDBPyConnection, table: str, **cols: object) -> None:
    names = ", ".join(cols)
    marks = ", ".join("?" for _ in cols)
    con.execute(f"INSERT INTO {table} ({names}) VALUES ({marks})", list(cols.values()))


def A(
    relevance: bool,
    accuracy: str,
    novelty: str | None,
    influence: str | None,  # noqa: N802
    effect: str | None = None,
    anchors: list[int] | None = None,
) -> dict:
    """One entry assessment."""
    return dict(
        relevance=relevance,
        accuracy=accuracy,
        novelty=novelty,
        influence=influence,
        effect=effect,
        anchors=anchors or [],
    )


def shares(assessments: list[dict]) -> dict[str, float]:
    """The A.4.2 entry-share profile of one span (fixture helper, not under test)."""
    n = len(assessments)
    rel = [a for a in assessments if a["relevance"]]
    acted = [a for a in assessments if a["influence"] == "acted_on"]
    return {
        "relevance": len(rel) / n,
        "corroboration": sum(a["accuracy"] == "corroborated" for a in rel) / n,
        "information_gain": sum(a["novelty"] in ("novel", "confirming") for a in rel) / n,
        "acted_on": len(acted) / n,
        "benefit": sum(a["effect"] == "improved" for a in acted) / n,
        "harm": sum(a["effect"] == "harmed" for a in acted) / n,
        "u_accuracy": sum(a["accuracy"] == "uncontradicted" for a in rel) / n,
        "u_novelty": sum(a["novelty"] is None for a in rel) / n,
        "u_influence": sum(a["influence"] is None for a in assessments) / n,
        "u_effect": sum(a["effect"] is None for a in acted) / n,
    }


class Corpus:
    """Writes hand-made rows into a store."""

    def __init__(self, con: duckdb.DuckDBPyConnection):
        self.con = con

    def run(self, run_id: str, config: str) -> None:
        _insert(self.con, "runs", run_id=run_id, config=config, label=run_id)

    def episode(
        self, episode_id: str, run_id: str, task_id: str, position: int, repo: str, resolved: bool | None
    ) -> None:
        _insert(
            self.con,
            "episodes",
            episode_id=episode_id,
            run_id=run_id,
            task_id=task_id,
            position=position,
            repo=repo,
            resolved=resolved,
            ended=True,
            n_steps=12,
        )

    def call(
        self,
        call_id: str,
        episode_id: str,
        role: str,
        inp: int | None,
        out: int | None,
        cached: int | None = None,
        reasoning: int | None = None,
        cost: float | None = None,
    ) -> None:
        _insert(
            self.con,
            "calls",
            call_id=call_id,
            episode_id=episode_id,
            role=role,
            status="ok",
            input_tokens=inp,
            output_tokens=out,
            cached_tokens=cached,
            reasoning_tokens=reasoning,
            cost_usd=cost,
        )

    def change(
        self, item_id: str, version: str, op: str, episode_id: str | None, run_id: str | None, seq: int
    ) -> None:
        _insert(
            self.con,
            "item_events",
            namespace=NS,
            item_id=item_id,
            version=version,
            op=op,
            episode_id=episode_id,
            run_id=run_id,
            file_id=1,
            seq=seq,
        )

    def span(
        self,
        span_id: str,
        episode_id: str,
        status: str,
        *,
        first_step: int | None = 2,
        chars: int = 0,
        form: str = "full_card",
        route: str = "agent",
        entries: list[tuple[str, str | None, int]] | None = None,
        entry_forms: dict[int, str] | None = None,
        restatements: int = 0,
    ) -> None:
        """A span with one delivery (plus `restatements` copies); entries are (item, version,
        exposed chars). `chars` totals the placement characters of all its deliveries."""
        entries = entries or []
        entry_forms = entry_forms or {}
        n_del = 1 + restatements
        d_ids = [f"{span_id}-d{i}" for i in range(n_del)]
        for i, d in enumerate(d_ids):
            _insert(
                self.con,
                "deliveries",
                delivery_id=d,
                episode_id=episode_id,
                route=route,
                form=form,
                n_entries=len(entries),
                chars=chars // n_del,
            )
            _insert(self.con, "span_deliveries", span_id=span_id, delivery_id=d, pos=i)
            for pos, (item, version, _xc) in enumerate(entries):
                labels = json.dumps({"form": entry_forms[pos]}) if pos in entry_forms else None
                _insert(
                    self.con,
                    "delivery_entry_rows",
                    delivery_id=d,
                    pos=pos,
                    namespace=NS,
                    item_id=item,
                    version=version,
                    labels=labels,
                )
        for pos, (item, version, xc) in enumerate(entries):
            _insert(
                self.con,
                "span_entries",
                span_id=span_id,
                pos=pos,
                episode_id=episode_id,
                namespace=NS,
                item_id=item,
                version=version,
                exposure="full",
                exposed_chars=xc,
                window_start=first_step,
                window_end=(first_step or 0) + 5,
            )
        _insert(
            self.con,
            "spans",
            span_id=span_id,
            episode_id=episode_id,
            status=status,
            first_step=first_step,
            first_delivery_id=d_ids[0],
            n_deliveries=n_del,
            restatements=restatements,
            n_entries=len(entries),
            chars=chars,
            est_tokens=chars // 4,
            form=form,
            route=route,
        )

    def judgment(
        self, judgment_id: str, span_id: str, status: str, cost: float | None, judge: str = "rules"
    ) -> None:
        _insert(
            self.con,
            "judgments",
            judgment_id=judgment_id,
            span_id=span_id,
            judge=judge,
            status=status,
            calls=3,
            input_tokens=1000,
            output_tokens=100,
            cost_usd=cost,
        )

    def verdict(
        self,
        span_id: str,
        judgment_id: str,
        triage: str,
        items: list[str],
        assessments: list[dict],
        judge: str = "rules",
    ) -> None:
        for pos, (item, a) in enumerate(zip(items, assessments, strict=True)):
            _insert(
                self.con, "assessments", judgment_id=judgment_id, span_id=span_id, pos=pos, item_id=item, **a
            )
        _insert(
            self.con,
            "verdicts",
            span_id=span_id,
            judgment_id=judgment_id,
            judge=judge,
            triage=triage,
            profiled=True,
            n_entries=len(assessments),
            **shares(assessments),
        )


def build_corpus(con: duckdb.DuckDBPyConnection) -> None:
    """Fill `con` with the corpus of the module docstring."""
    c = Corpus(con)
    for run, cfg in (("m1", "mem"), ("m2", "mem"), ("b1", "base"), ("b2", "base")):
        c.run(run, cfg)
    c.episode("m1e1", "m1", "t1", 1, "A", True)
    c.episode("m1e2", "m1", "t2", 2, "B", False)
    c.episode("m1e3", "m1", "t3", 3, "A", None)
    c.episode("m1e4", "m1", "t4", 4, "A", True)
    for i, (t, res) in enumerate((("t1", True), ("t2", True), ("t3", True), ("t4", False)), 1):
        c.episode(f"m2e{i}", "m2", t, i, "A", res)
    for run, outcome in (("b1", (True, False, False, True)), ("b2", (True, True, False, False))):
        for i, res in enumerate(outcome, 1):
            c.episode(f"{run}e{i}", run, f"t{i}", i, "A", res)

    # memory histories of c1 (per-run store): unobserved creation, update in m1e1
    c.change("c1", "v1", "create", None, "m1", 1)
    c.change("c1", "v2", "update", "m1e1", "m1", 2)
    c.change("c9", "v1", "create", "m1e1", "m1", 3)

    # S1: positive, 4 entries (c1 improved, c2 relevant unused redundant, c3 irrelevant, c4 undetermined)
    c.span(
        "S1",
        "m1e1",
        "eligible",
        first_step=2,
        chars=400,
        entries=[("c1", "v1", 100), ("c2", "v1", 100), ("c3", "v1", 100), ("c4", "v1", 100)],
    )
    c.judgment("j1", "S1", "accepted", 0.05)
    c.verdict(
        "S1",
        "j1",
        "positive",
        ["c1", "c2", "c3", "c4"],
        [
            A(True, "corroborated", "novel", "acted_on", "improved", [3]),
            A(True, "uncontradicted", "redundant", "none"),
            A(False, "uncontradicted", "novel", "none"),
            A(False, "contradicted", None, None),
        ],
    )
    # S2: automatic neutral copy (task recall restated), 300 tokens, three deliveries
    c.span(
        "S2",
        "m1e1",
        "auto_neutral",
        first_step=5,
        chars=1200,
        form="task_recall",
        route="host",
        entries=[("c1", "v1", 200)],
        restatements=2,
    )
    # S3: negative; c1 harmed 6 steps after first consumption, c5 (form persona) undetermined effect
    c.span(
        "S3",
        "m1e2",
        "eligible",
        first_step=4,
        chars=200,
        form="search_preview",
        entries=[("c1", "v2", 30), ("c5", "v1", 10)],
        entry_forms={1: "persona"},
    )
    c.judgment("j3a", "S3", "rejected", 0.02)
    c.judgment("j3b", "S3", "accepted", 0.03)
    c.verdict(
        "S3",
        "j3b",
        "negative",
        ["c1", "c5"],
        [
            A(True, "corroborated", "novel", "acted_on", "harmed", [10, 12]),
            A(False, "uncontradicted", None, "acted_on", None, [4]),
        ],
    )
    # S4: the judge never produced an accepted answer
    c.span(
        "S4", "m1e2", "eligible", first_step=6, chars=80, form="search_preview", entries=[("c7", "v1", 10)]
    )
    c.judgment("j4", "S4", "error", 0.01)
    c.span("S5", "m1e4", "eligible", chars=40, entries=[("c8", "v1", 10)])  # unjudged
    c.span("S6", "m1e4", "empty", chars=0)  # empty
    c.span(
        "S7",
        "m1e4",
        "unassessable",
        first_step=None,
        chars=20,
        form="task_recall",
        route="host",
        entries=[("c8", "v1", 5)],
    )
    c.span("S8", "m1e4", "eligible", chars=60, entries=[("c6", "v1", 40)])
    c.judgment("j8", "S8", "accepted", 0.0)
    c.verdict("S8", "j8", "neutral", ["c6"], [A(False, "uncontradicted", "novel", "none")])
    # S9 (run m2): c1 harmed again, no history recorded in m2
    c.span("S9", "m2e1", "eligible", first_step=2, chars=160, entries=[("c1", "v1", 50)])
    c.judgment("j9", "S9", "accepted", 0.04)
    c.verdict("S9", "j9", "negative", ["c1"], [A(True, "corroborated", "novel", "acted_on", "harmed", [2])])

    # recorded usage (A.4.4)
    c.call("m1e1-c1", "m1e1", "agent", 1000, 100, 400, 50, 0.01)
    c.call("m1e1-c2", "m1e1", "agent", 2000, 200, 1000, 0, 0.02)
    c.call("m1e1-m1", "m1e1", "memory", 300, 30, None, None, 0.001)
    c.call("m1e1-e1", "m1e1", "embedding", 50, 0, None, None, None)
    c.call("m2e1-c1", "m2e1", "agent", 500, 50, None, None, None)
    # The corpus writes its tables directly, so it derives the stored outcome classes itself, as
    # the store's writers do after every context, judgment or verdict write (A.4.1).
    refresh_outcomes(con)


@pytest.fixture(scope="session")
def corpus_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A store file holding the corpus (built once; tests open it read-only)."""
    p = tmp_path_factory.mktemp("corpus") / "corpus.duckdb"
    con = connect(p)
    try:
        build_corpus(con)
    finally:
        con.close()
    return p


@pytest.fixture
def corpus_con(corpus_db: Path):
    con = connect(corpus_db, read_only=True)
    yield con
    con.close()


def test_fixture_shares_follow_a42(corpus_con: duckdb.DuckDBPyConnection) -> None:
    """S1 by hand: 2 relevant of 4, 1 corroborated, 1 novel relevant, 1 acted on and improved."""
    row = corpus_con.execute(
        "SELECT relevance, corroboration, information_gain, acted_on, benefit, harm, u_accuracy, "
        "u_influence FROM verdicts WHERE span_id = 'S1'"
    ).fetchone()
    assert row == (0.5, 0.25, 0.25, 0.25, 0.25, 0.0, 0.25, 0.25)


def test_fixture_token_estimates(corpus_con: duckdb.DuckDBPyConnection) -> None:
    """floor(C_S / 4): 100+300+50+20+10+0+5+15+40 = 540 estimated tokens in config mem."""
    total = corpus_con.execute("SELECT sum(est_tokens) FROM spans").fetchone()[0]
    assert total == 540
