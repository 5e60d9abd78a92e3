"""One judgment of a span (MemUse A.2.3, A.6.8): its validation attempts and transcript; and
re-judging a span now, with the assessments before and after."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, get_args

import pandas as pd

from ..store import StoreError, StoreLocked, open_store
from ..store.app import spans as store_spans
from ..vocab import JudgeKind
from .common import Connection, ViewModel

JUDGE_KINDS: tuple[JudgeKind, ...] = get_args(JudgeKind)
"""Judges a span can be re-judged with."""
SIGNAL_COLUMNS = ("pos", "relevance", "accuracy", "novelty", "influence", "effect", "usage_label")
"""Columns shown when a re-judge is compared with the judgment before it."""
INTERACTIVE_RETRIES = 1
"""Retries of a failed model call when the user waits for one re-judge (a batch uses the judge's
own default): an unreachable endpoint is reported in seconds instead of after every backoff."""
SIDEBAR_FIELDS = {"--model": "the Model field", "--base-url": "the Endpoint base URL field"}
"""CLI option names in the judge's messages and the sidebar fields that set the same thing."""


class Attempt(ViewModel):
    """One validation attempt of a judge answer."""

    accepted: bool
    """The answer passed validation."""
    forced: bool = False
    """The answer was a forced final answer."""
    violations: list[str] = []
    """Why it was rejected (one message per violation)."""
    coerced: list[str] = []
    """Fields set to undetermined instead of rejecting the answer."""


class Message(ViewModel):
    """One message of a judge transcript (recorded text, untrusted)."""

    role: str
    """system, user, assistant or tool."""
    name: str | None = None
    """Tool name of a tool message."""
    content: str = ""
    """Text content."""
    tool_calls: list[str] = []
    """Tool calls made, as `name(arguments)`."""


class JudgmentDetail(ViewModel):
    """One judgment with its validation attempts and transcript."""

    judgment_id: str
    """Judgment id."""
    judge: str | None = None
    """rules or llm."""
    status: str | None = None
    """accepted, error or interrupted."""
    reason: str | None = None
    """Why it is not accepted."""
    calls: int | None = None
    """Model calls."""
    followups: int | None = None
    """Rejected answers sent back with their violations."""
    forced: bool | None = None
    """A forced final answer was requested."""
    attempts: list[Attempt]
    """Validation attempts in order."""
    transcript: list[Message]
    """The judge conversation."""


def _attempt(a: Any) -> Attempt:
    if not isinstance(a, dict):
        return Attempt(accepted=False, violations=[str(a)])
    violations = [
        str(v.get("message", v)) if isinstance(v, dict) else str(v) for v in a.get("violations") or []
    ]
    return Attempt(
        accepted=bool(a.get("accepted")),
        forced=bool(a.get("forced")),
        violations=violations,
        coerced=[str(c) for c in a.get("coerced") or []],
    )


def _message(m: Any) -> Message:
    if not isinstance(m, dict):
        return Message(role="?", content=str(m))
    calls = []
    for tc in m.get("tool_calls") or []:
        fn = tc.get("function", tc) if isinstance(tc, dict) else {}
        calls.append(f"{fn.get('name', '')}({fn.get('arguments', '')})")
    content = m.get("content")
    return Message(
        role=str(m.get("role") or "?"),
        name=m.get("name"),
        content=content if isinstance(content, str) else ("" if content is None else str(content)),
        tool_calls=calls,
    )


def detail(con: Connection, judgment_id: str) -> JudgmentDetail | None:
    """A judgment's attempts and transcript (None when unknown)."""
    d = store_spans.judgment_detail(con, judgment_id)
    if d is None:
        return None
    attempts, transcript = d.get("attempts"), d.get("transcript")
    return JudgmentDetail(
        judgment_id=judgment_id,
        judge=d.get("judge"),
        status=d.get("status"),
        reason=d.get("reason"),
        calls=d.get("calls"),
        followups=d.get("followups"),
        forced=d.get("forced"),
        attempts=[_attempt(a) for a in attempts] if isinstance(attempts, list) else [],
        transcript=[_message(m) for m in transcript] if isinstance(transcript, list) else [],
    )


# ---- Re-judging ------------------------------------------------------------------------------


class Rejudged(ViewModel):
    """The outcome of re-judging one span, with the assessments before and after."""

    span_id: str
    """The span."""
    judgment_id: str
    """The new judgment."""
    status: str
    """accepted, error or interrupted."""
    reason: str | None = None
    """Why it is not accepted."""
    before: pd.DataFrame
    """The previous current judgment's assessments (SIGNAL_COLUMNS; empty when none)."""
    after: pd.DataFrame
    """The new judgment's assessments (SIGNAL_COLUMNS; empty when not accepted)."""


def _signals(con: Connection, judgment_id: str | None) -> pd.DataFrame:
    if judgment_id is None:
        return pd.DataFrame(columns=list(SIGNAL_COLUMNS))
    return store_spans.judgment_assessments(con, judgment_id)[list(SIGNAL_COLUMNS)]


class RejudgeFailed(RuntimeError):
    """A re-judge that produced no accepted judgment; the message is what the page's error box
    shows (it names the sidebar fields to check when the endpoint is at fault). `result` holds the
    stored (failed) judgment with the assessments before it, for the page's before/after."""

    def __init__(self, message: str, result: Rejudged | None = None) -> None:
        super().__init__(message)
        self.result = result


def rejudge(
    db: str | os.PathLike[str],
    span_id: str,
    judge: JudgeKind = "rules",
    *,
    model: str | None = None,
    base_url: str | None = None,
    timeout: float = 30.0,
) -> Rejudged:
    """Judge one span again now (its earlier judgments stay as history).

    Raises ValueError for a span that is not eligible, `judge.result.JudgeConfigError` (its
    subclass `judge.endpoint.EndpointError` for an endpoint the preflight call cannot use: one
    line naming the URL, the cause and the sidebar fields) before anything is written, and
    `RejudgeFailed` when the judgment ended without an accepted answer (it is stored as history).
    The page shows any of them in an error box, never a success box."""
    from ..judge.endpoint import APP_FIELDS
    from ..judge.runner import judge_span
    from ..vocab import TRANSPORT_REASON

    with open_store(Path(db), read_only=True, timeout=timeout) as con:
        row = store_spans.span_row(con, span_id, judge)
        before = _signals(con, row.get("verdict_judgment") if row else None)
    if judge == "llm":
        res = judge_span(
            db,
            span_id,
            judge="llm",
            fields=APP_FIELDS,
            model=model or None,
            base_url=base_url or None,
            max_retries=INTERACTIVE_RETRIES,
        )
    else:
        res = judge_span(db, span_id, judge=judge)
    if res.status != "accepted":
        why = res.reason or res.status
        hint = f"; {APP_FIELDS}" if judge == "llm" and why.startswith((TRANSPORT_REASON, "api_error")) else ""
        with open_store(Path(db), read_only=True, timeout=timeout) as con:
            failed = Rejudged(
                span_id=span_id,
                judgment_id=res.judgment_id,
                status=res.status,
                reason=res.reason,
                before=before,
                after=_signals(con, None),
            )
        raise RejudgeFailed(f"the {judge} judge gave no accepted answer for {span_id}: {why}{hint}", failed)
    with open_store(Path(db), read_only=True, timeout=timeout) as con:
        after = _signals(con, res.judgment_id)
    return Rejudged(
        span_id=span_id,
        judgment_id=res.judgment_id,
        status=res.status,
        reason=res.reason,
        before=before,
        after=after,
    )


class RejudgeRequest(ViewModel):
    """A re-judge the user asked for, kept until it ran (it waits while the database is busy)."""

    span_id: str
    """The span."""
    judge: JudgeKind
    """rules or llm."""
    model: str | None = None
    """Model of the LLM judge (sidebar)."""
    base_url: str | None = None
    """Endpoint base URL of the LLM judge (sidebar)."""


def failure_message(req: RejudgeRequest, reason: str | None) -> str:
    """One paragraph saying why a re-judge failed and, for the LLM judge, which sidebar settings
    it used (the fields to check)."""
    text = str(reason or "no reason was recorded")
    for flag, field in SIDEBAR_FIELDS.items():
        text = text.replace(flag, field)
    msg = f"Re-judge with the {req.judge} judge failed: {text.rstrip('.')}."
    if req.judge == "llm":
        msg += (
            " Check the Judge settings in the sidebar: Endpoint base URL "
            f"({req.base_url or 'empty: the OpenAI default'}) and Model ({req.model or 'empty'})."
        )
    return msg


class RejudgeOutcome(ViewModel):
    """What became of a re-judge request: the new judgment, or why there is none."""

    request: RejudgeRequest
    """What was asked."""
    result: Rejudged | None = None
    """The new judgment with the assessments before and after (None when the judge could not
    run)."""
    error: str | None = None
    """Why it failed, naming the settings to check (None when a judgment was accepted)."""

    @property
    def ok(self) -> bool:
        """A new judgment was accepted."""
        return self.error is None


def run_rejudge(db: str | os.PathLike[str], req: RejudgeRequest, timeout: float) -> RejudgeOutcome:
    """Re-judge now. A judgment that is not accepted (an unreachable endpoint, a refused
    answer) and a setting the judge cannot use are failures with one message; a database held
    by another process raises StoreLocked (the caller keeps the request and retries)."""
    try:
        res = rejudge(db, req.span_id, req.judge, model=req.model, base_url=req.base_url, timeout=timeout)
    except StoreLocked:
        raise
    except RejudgeFailed as e:  # stored as history: an unreachable endpoint, a refused answer
        failed = e.result
        why = (failed.reason or failed.status) if failed is not None else str(e)
        return RejudgeOutcome(request=req, result=failed, error=failure_message(req, why))
    except (ValueError, StoreError) as e:  # settings the judge refuses (preflight), a span it cannot judge
        return RejudgeOutcome(request=req, error=failure_message(req, str(e)))
    return RejudgeOutcome(request=req, result=res)
