"""The LLM judge's endpoint failures (MemUse A.3.2 "unrecoverable failures produce
error spans", A.4.1 "unjudged spans were pending").

Through the real `openai` client against real sockets: a port nobody listens on, a name that
does not resolve, and the scripted OpenAI-compatible server answering 401, 403, 404 or 500 or
echoing the request's Authorization header. Nothing is patched.

Invariants: an endpoint the preflight call cannot use ends `memuse judge` (and the app's re-judge)
with one line naming the URL and the cause, a non-zero exit and nothing written; a batch whose
calls keep failing in transport stops after a few consecutive failures, leaves the rest pending and
exits non-zero; those spans are not done (the next batch judges them), while a validation error is
done unless `--retry-errors`; no stored text (judgments, transcripts, attempts, journal) keeps the
API key or an Authorization header.
"""

from __future__ import annotations

import socket
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from memuse_core.cli import app
from memuse_core.judge.endpoint import APP_FIELDS, PREFLIGHT_PROMPT, EndpointError
from memuse_core.judge.examples import acted_on_episode, ignored_episode, referenced_episode, write_store
from memuse_core.judge.result import JudgeSettings
from memuse_core.judge.runner import judge_span, run_batch
from memuse_core.judge.scripted_server import Script, ScriptedReply, ScriptedServer
from memuse_core.store import connect
from memuse_core.store.journal import journal_path
from memuse_core.views.judgment import RejudgeFailed, rejudge

SECRET = "sk-test-SECRETVALUE-0123456789abcdef"
RUNNER = CliRunner()


def _refused_port() -> int:
    """A port on this machine that nothing listens on (bound, then closed)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _store(tmp_path: Path, n: int = 2) -> Path:
    eps = [f(f"{f.__name__[:3]}{i}") for i in range(n) for f in (acted_on_episode, ignored_episode)]
    return write_store(tmp_path, eps)


def _rows(db: Path, sql: str) -> list[tuple]:
    con = connect(db, read_only=True)
    try:
        return con.execute(sql).fetchall()
    finally:
        con.close()


def _nothing_written(db: Path) -> None:
    assert _rows(db, "SELECT count(*) FROM judgments") == [(0,)]
    assert _rows(db, "SELECT count(*) FROM judge_batches") == [(0,)]
    assert _rows(db, "SELECT count(*) FROM verdicts") == [(0,)]
    jp = journal_path(db)
    assert not jp.exists() or jp.stat().st_size == 0


def _judge(db: Path, base_url: str, *extra: str):
    return RUNNER.invoke(
        app, ["judge", "--db", str(db), "--judge", "llm", "--model", "m1", "--base-url", base_url, *extra]
    )


def _preflight_ok(reply: ScriptedReply):
    """A reply policy: the preflight call succeeds, every span call gets `reply`."""

    def policy(body, idx):
        if body["messages"][0]["content"] == PREFLIGHT_PROMPT:
            return ScriptedReply(content="OK")
        return reply

    return policy


def test_refused_connection_is_one_line_nonzero_and_nothing_written(tmp_path: Path) -> None:
    db = _store(tmp_path)
    url = f"http://127.0.0.1:{_refused_port()}/v1"
    t0 = time.monotonic()
    r = _judge(db, url)
    assert r.exit_code == 1
    lines = [x for x in r.stderr.splitlines() if x.strip()]
    assert len(lines) == 1 and url in lines[0] and "connection refused" in lines[0], lines
    assert time.monotonic() - t0 < 30  # no per-span retries: the preflight stops it
    _nothing_written(db)


def test_dns_failure_names_the_url_and_the_cause(tmp_path: Path) -> None:
    db = _store(tmp_path, 1)
    url = "http://memuse-judge-endpoint.invalid/v1"  # .invalid never resolves (RFC 2606)
    r = _judge(db, url)
    lines = [x for x in r.stderr.splitlines() if x.strip()]
    assert r.exit_code == 1 and len(lines) == 1 and url in lines[0], lines
    assert "DNS lookup failed" in lines[0] or "cannot connect" in lines[0]
    _nothing_written(db)


@pytest.mark.parametrize(
    "status, cause",
    [(401, "rejected the API key (401)"), (403, "(403)"), (404, "unknown model 'm1'")],
)
def test_rejected_key_and_unknown_model_fail_the_preflight(tmp_path: Path, status: int, cause: str) -> None:
    db = _store(tmp_path, 1)
    with ScriptedServer(Script(replies=[ScriptedReply(status=status, error="nope")])) as srv:
        r = _judge(db, srv.base_url)
        assert len(srv.requests) == 1  # one minimal call, then nothing
        body = srv.requests[0]
    lines = [x for x in r.stderr.splitlines() if x.strip()]
    assert r.exit_code == 1 and len(lines) == 1 and srv.base_url in lines[0] and cause in lines[0], lines
    assert body["model"] == "m1" and {t["function"]["name"] for t in body["tools"]} >= {"answer"}
    _nothing_written(db)


def test_preflight_of_a_working_endpoint_is_one_call_and_reported(tmp_path: Path) -> None:
    db = _store(tmp_path, 1)
    with ScriptedServer(Script()) as srv:
        r = _judge(db, srv.base_url)
        pre = [b for b in srv.requests if b["messages"][0]["content"] == PREFLIGHT_PROMPT]
    assert r.exit_code == 0, r.output
    assert len(pre) == 1 and "preflight call" in r.stdout


def test_circuit_breaker_stops_the_batch_leaves_the_rest_pending_and_exits_nonzero(tmp_path: Path) -> None:
    db = _store(tmp_path, 4)  # 8 eligible spans
    down = _preflight_ok(ScriptedReply(status=500, error="upstream down", retry_after=0))
    with ScriptedServer(down) as srv:
        r = _judge(db, srv.base_url, "--concurrency", "1")
    assert r.exit_code == 1
    assert "circuit breaker" in r.stderr and "left pending" in r.stderr
    failed = _rows(db, "SELECT status, reason FROM judgments")
    assert len(failed) == 3 and all(s == "error" and x.startswith("transport:") for s, x in failed)
    # transport failures are not done: the next batch, with the endpoint back, judges all 8
    with ScriptedServer(Script()) as srv:
        r = _judge(db, srv.base_url)
    assert r.exit_code == 0, r.output
    assert "8 of 8 spans judged" in r.stdout
    accepted = _rows(db, "SELECT count(DISTINCT span_id) FROM judgments WHERE status = 'accepted'")
    assert accepted == [(8,)]
    # while pending they were `unjudged`, now each has the LLM judge's outcome class
    outcomes = _rows(db, "SELECT DISTINCT outcome FROM span_outcomes WHERE judge = 'llm'")
    assert ("error",) not in outcomes and ("unjudged",) not in outcomes


def test_validation_errors_are_done_unless_retry_errors(tmp_path: Path) -> None:
    db = write_store(tmp_path, [acted_on_episode("a1"), referenced_episode("r1")])
    with ScriptedServer(
        Script(replies=[ScriptedReply(content="no tool call")], when_exhausted="repeat_last")
    ) as srv:
        s = JudgeSettings(judge="llm", model="m1", base_url=srv.base_url, max_calls=2)
        first = run_batch(db, s)
        again = run_batch(db, s)
        retried = run_batch(db, s, retry_errors=True)
    assert first.planned == 2 and sum(first.errors.values()) == 2 and not first.broken
    assert again.planned == 0 and again.skipped_done == 2  # a judge failure is final...
    assert retried.planned == 2  # ...unless --retry-errors


def test_secrets_never_reach_judgments_transcripts_or_the_journal(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An endpoint that echoes the Authorization header in its error body: the key is scrubbed
    from the reason, the transcript and the attempts in the tables and in the journal."""
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    db = _store(tmp_path, 1)
    echo = _preflight_ok(ScriptedReply(status=400, error="bad request", echo_headers=True))
    with ScriptedServer(echo) as srv:
        sm = run_batch(db, JudgeSettings(judge="llm", model="m1", base_url=srv.base_url))
    assert sm.judged == 2
    journal = journal_path(db).read_text(encoding="utf-8")
    rows = _rows(db, "SELECT reason, transcript::VARCHAR, attempts::VARCHAR FROM judgments")
    assert len(rows) == 2 and all("bad request" in r[0] for r in rows)
    for text in [journal, *(x for r in rows for x in r)]:
        assert SECRET not in text and "Bearer sk-" not in text
    assert "[redacted]" in rows[0][0]


def test_app_rejudge_failures_name_the_sidebar_fields(tmp_path: Path) -> None:
    """The app's re-judge gets an exception (shown as an error box, never a success box): the
    preflight's one line with the sidebar fields, or a failed judgment with them."""
    db = _store(tmp_path, 1)
    con = connect(db, read_only=True)
    try:
        span_id = con.execute("SELECT span_id FROM spans WHERE status = 'eligible' LIMIT 1").fetchone()[0]
    finally:
        con.close()
    url = f"http://127.0.0.1:{_refused_port()}/v1"
    with pytest.raises(EndpointError) as e:
        rejudge(db, span_id, "llm", model="m1", base_url=url)
    assert url in str(e.value) and "connection refused" in str(e.value) and APP_FIELDS in str(e.value)
    _nothing_written(db)
    down = _preflight_ok(ScriptedReply(status=503, error="overloaded", retry_after=0))
    with ScriptedServer(down) as srv, pytest.raises(RejudgeFailed) as f:
        rejudge(db, span_id, "llm", model="m1", base_url=srv.base_url)
    assert "transport" in str(f.value) and APP_FIELDS in str(f.value)
    res = judge_span(db, span_id, judge="rules")  # the rules judge still works
    assert res.status == "accepted"


def test_a_key_echoed_in_answers_is_in_neither_the_database_file_nor_the_journal(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """DESIGN.md "Secrets never enter the database, transcripts or exported case studies". An
    endpoint echoes the API key (from the variable `--api-key-env` names; not shaped like a key,
    so only its value can find it) in the notes and summary of a rejected answer, an answer of
    the wrong types and the accepted one. After the run neither the .duckdb file nor the journal
    holds the key's bytes; the rest of each text is kept with the key replaced by [redacted]."""
    key = "local-4f9c2b7e1d0a8c6b5e3f"
    monkeypatch.setenv("MEMUSE_TEST_JUDGE_KEY", key)
    db = write_store(tmp_path, [acted_on_episode("a1")])
    script = Script(
        replies=[
            ScriptedReply(answer="auto", echo_key=True, answer_overrides={"evidence": [99]}),  # no such step
            ScriptedReply(answer="auto", echo_key=True, answer_fields={"confidence": "0.9"}),  # a string
            ScriptedReply(answer="auto", echo_key=True),
        ]
    )
    with ScriptedServer(script) as srv:
        r = _judge(db, srv.base_url, "--api-key-env", "MEMUSE_TEST_JUDGE_KEY")
    assert r.exit_code == 0, r.output
    rows = _rows(db, "SELECT status, summary, attempts::VARCHAR FROM judgments")
    assert [x[0] for x in rows] == ["accepted"]
    assert rows[0][1] == "scripted (asked with key [redacted])"
    notes = _rows(db, "SELECT notes FROM assessments")
    assert notes == [("scripted answer; the key was [redacted].",)]
    attempts = rows[0][2]
    assert attempts.count("the key was [redacted]") >= 3  # the parsed rejected answer and what was sent
    journal = journal_path(db).read_bytes()
    assert b"the key was [redacted]" in journal
    for f in [db, journal_path(db), *tmp_path.glob("*.wal")]:
        assert key.encode() not in f.read_bytes(), f
