"""The LLM judge loop (MemUse 3.4, A.3.2 "Follow-up and budget policy").

One conversation per span: static system prompt and tool schemas first (the cacheable prefix),
then the span brief with the mandatory evidence inlined. The judge reads with `read_evidence`,
locates with `search_evidence`, and submits with `answer`; every tool call gets a result and a
rejected answer gets its violations as the `answer` result. A round whose context estimate passes
the input budget is rolled back (its reads no longer count). At the call limit or after a rollback
the judge must answer without tools (forced final answer); conditional reads it left incomplete
turn the affected signals to null. No accepted answer means an error span with its reason.

Network lives only here: `openai.AsyncOpenAI` with our own retry/backoff on 429, 5xx, timeouts and
connection errors (SDK retries off, so every retry is counted and saved).
"""

from __future__ import annotations

import asyncio
import json
import random
import time
from typing import Any

import openai
from openai.types.chat import ChatCompletion

from ..rules.judgment import Attempt, JudgmentResult, add_if_known, scrub_result, verdict_for
from ..vocab import estimate_tokens
from .contract import ANSWER_TOOL
from .endpoint import TRANSPORT, api_key, cause_of, is_transport, secrets
from .package import EvidencePackage, brief, choose_inline
from .result import JudgeSettings, Prompts
from .tools import EvidenceTools, tool_schemas
from .validate import check_answer, coerce_undetermined, mandatory_chars


def make_client(settings: JudgeSettings) -> openai.AsyncOpenAI:
    """An async client for the configured endpoint; the key is read from the environment only."""
    return openai.AsyncOpenAI(
        api_key=api_key(settings), base_url=settings.base_url, max_retries=0, timeout=settings.timeout
    )


_RETRYABLE = (
    openai.RateLimitError,
    openai.APITimeoutError,
    openai.APIConnectionError,
    openai.InternalServerError,
)


async def _create(
    client: openai.AsyncOpenAI,
    settings: JudgeSettings,
    res: JudgmentResult,
    log: list[dict[str, Any]],
    **kw: Any,
) -> Any:
    delay = settings.backoff
    for attempt in range(settings.max_retries + 1):
        try:
            # Same endpoint, HTTP stack, errors and response model as `chat.completions.create`;
            # only the SDK's recursive TypedDict transform of the (already plain JSON) body is
            # skipped: on large conversations it cost more CPU than the rest of the loop.
            return await client.post("/chat/completions", body=kw, cast_to=ChatCompletion)
        except _RETRYABLE as e:
            if attempt >= settings.max_retries:
                raise
            wait = delay * (1 + 0.25 * random.random())
            resp = getattr(e, "response", None)
            ra = resp.headers.get("retry-after") if resp is not None else None
            if ra:
                try:
                    wait = float(ra)
                except ValueError:
                    pass
            res.retries += 1
            log.append({"retry": attempt + 1, "error": type(e).__name__, "wait": round(wait, 3)})
            await asyncio.sleep(min(wait, 30.0))
            delay = min(delay * 2, 30.0)
    raise AssertionError("unreachable")


def _count(obj: Any, name: str) -> int | None:
    """A reported token counter, or None when the reply did not report it."""
    v = getattr(obj, name, None) if obj is not None else None
    return v if isinstance(v, int) and not isinstance(v, bool) else None


def _usage(res: JudgmentResult, settings: JudgeSettings, usage: Any, log: dict[str, Any]) -> int:
    """Add one response's reported usage and cost (A.4.4); returns its prompt tokens (0 when not
    reported). A counter the reply leaves out makes the judgment's counter unknown, and with
    prices given its cost too (`add_if_known`); the call's own counters go to its log entry."""
    pt = _count(usage, "prompt_tokens")
    ct = _count(usage, "completion_tokens")
    extra = (getattr(usage, "model_extra", None) or {}) if usage is not None else {}
    cached: int | None = None
    if pt is not None:
        cached = _count(getattr(usage, "prompt_tokens_details", None), "cached_tokens") or 0
        if not cached and isinstance(extra.get("prompt_cache_hit_tokens"), int):  # DeepSeek's name
            cached = int(extra["prompt_cache_hit_tokens"])
    log["usage"] = {"input_tokens": pt, "cached_tokens": cached, "output_tokens": ct}
    res.input_tokens = _int(add_if_known(res.input_tokens, pt))
    res.cached_tokens = _int(add_if_known(res.cached_tokens, cached))
    res.output_tokens = _int(add_if_known(res.output_tokens, ct))
    cost: float | None = None
    if settings.priced:
        if pt is not None and ct is not None and cached is not None:
            pin = settings.price_input or 0.0
            pc = settings.price_cached if settings.price_cached is not None else pin
            cost = ((pt - cached) * pin + cached * pc + ct * (settings.price_output or 0.0)) / 1e6
    elif isinstance(extra.get("cost"), (int, float)) and not isinstance(extra.get("cost"), bool):
        cost = float(extra["cost"])
    res.cost_usd = add_if_known(res.cost_usd, cost)
    return pt or 0


def _int(v: float | None) -> int | None:
    return None if v is None else int(v)


def _assistant_dict(msg: Any) -> dict[str, Any]:
    d: dict[str, Any] = {"role": "assistant", "content": msg.content}
    if msg.tool_calls:
        d["tool_calls"] = [
            {
                "id": tc.id,
                "type": "function",
                "function": {"name": tc.function.name, "arguments": tc.function.arguments},
            }
            for tc in msg.tool_calls
        ]
    return d


async def judge_llm(
    pkg: EvidencePackage,
    client: openai.AsyncOpenAI,
    settings: JudgeSettings,
    prompts: Prompts,
    res: JudgmentResult | None = None,
) -> JudgmentResult:
    """Judge one span with the LLM loop; never raises for judge failures (error span instead).

    Pass `res` to observe progress (the batch runner records it as interrupted on Ctrl-C)."""
    res = res or JudgmentResult(span_id=pkg.span_id)
    res.episode_id, res.judge, res.model = pkg.episode_id, "llm", settings.model
    res.settings, res.prompt_hash = settings.public(), prompts.hash
    res.mandatory_chars = mandatory_chars(pkg)
    res.cost_usd = 0.0  # known to be zero until a call's cost is unknown (`add_if_known`)
    tools = EvidenceTools(pkg)
    inline = choose_inline(pkg, settings.inline_chars)
    tools.mark_inline(inline)
    schemas = tool_schemas()
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": prompts.system},
        {"role": "user", "content": prompts.user.replace("{brief}", brief(pkg, inline))},
    ]
    log: list[dict[str, Any]] = []
    rolled: list[dict[str, Any]] = []
    res.transcript = {"messages": messages, "rolled_back": rolled, "log": log, "inline": inline}
    budget = settings.context_tokens - settings.reserve_tokens
    est0 = estimate_tokens(sum(len(m["content"]) for m in messages) + len(json.dumps(schemas)))
    if est0 > budget:
        return _finish(
            res,
            "error",
            f"preflight: prompts, tools and mandatory evidence need ~{est0} tokens, "
            f"over the input budget of {budget}",
        )
    forced = False
    while True:
        if res.calls >= settings.max_calls:
            return _finish(res, "error", "call limit reached without an accepted answer")
        if res.calls == settings.max_calls - 1 and not forced:
            forced = True
        if forced and not res.forced:
            res.forced = True
            messages.append({"role": "user", "content": prompts.forced})
        res.calls += 1
        round_no = res.calls
        kw: dict[str, Any] = {
            "model": settings.model,
            "messages": messages,
            "tools": schemas,
            "temperature": settings.temperature,
        }
        if forced:
            kw["tool_choice"] = {"type": "function", "function": {"name": ANSWER_TOOL}}
        t0 = time.time()
        try:
            resp = await _create(client, settings, res, log, **kw)
        except openai.APIError as e:
            kind = TRANSPORT if is_transport(e) else "api_error"
            return _finish(res, "error", f"{kind}: {cause_of(e, settings)}", settings)
        entry: dict[str, Any] = {"call": round_no, "seconds": round(time.time() - t0, 3), "forced": forced}
        log.append(entry)
        prompt_tokens = _usage(res, settings, getattr(resp, "usage", None), entry)
        if not resp.choices:
            return _finish(res, "error", "api_error: response without choices")
        msg = resp.choices[0].message
        messages.append(_assistant_dict(msg))
        start = len(messages) - 1
        calls = list(msg.tool_calls or [])
        if not calls:
            if forced:
                return _finish(res, "error", "forced final answer not given (no answer tool call)")
            messages.append({"role": "user", "content": prompts.nudge})
            continue
        results: dict[str, str] = {}
        accepted = False
        rejected_now = False
        for tc in calls:  # answers are checked against what was read before this round
            if tc.function.name != ANSWER_TOOL or accepted:
                continue
            chk = check_answer(pkg, tools, tc.function.arguments)
            att = Attempt(call=round_no, forced=forced, sent=tc.function.arguments)
            if (
                forced
                and chk.answer is not None
                and chk.violations
                and all(v.coercible for v in chk.violations)
            ):
                fixed, att.coerced = coerce_undetermined(chk.answer, chk.violations)
                chk = check_answer(pkg, tools, fixed)
            att.violations = [v.to_dict() for v in chk.violations]
            att.answer = chk.answer.model_dump() if chk.answer is not None else None
            att.accepted = chk.ok
            res.attempts.append(att)
            if chk.ok:
                accepted = True
                res.answer, res.window_read = chk.answer, chk.window_read
                results[tc.id] = "accepted"
            else:
                rejected_now = True
                results[tc.id] = chk.feedback()
        for tc in calls:
            if tc.id in results:
                continue
            if tc.function.name == ANSWER_TOOL:
                results[tc.id] = "ignored: one answer per turn"
            elif accepted:
                results[tc.id] = "not run: the answer was accepted"
            elif forced:
                results[tc.id] = "error: no more tools are available; call answer now"
            else:
                res.tool_calls += 1
                results[tc.id] = tools.call(tc.function.name, tc.function.arguments, round_no=round_no)
        added = 0
        for tc in calls:
            messages.append({"role": "tool", "tool_call_id": tc.id, "content": results[tc.id]})
            added += len(results[tc.id])
        if accepted:
            return _finish(res, "accepted", None)
        if forced:
            last = res.attempts[-1].violations if res.attempts and res.attempts[-1].call == round_no else []
            why = "; ".join(str(v["message"]) for v in last[:3]) or "no valid answer"
            return _finish(res, "error", f"forced final answer rejected: {why}")
        if rejected_now:
            res.followups += 1
        ct = int(getattr(getattr(resp, "usage", None), "completion_tokens", 0) or 0)
        est = (
            (
                prompt_tokens
                or estimate_tokens(sum(len(str(m.get("content") or "")) for m in messages[:start]))
            )
            + ct
            + estimate_tokens(added)
        )
        if est > budget:
            rolled.append({"call": round_no, "estimated_tokens": est, "messages": messages[start:]})
            del messages[start:]
            tools.ledger.rollback(round_no)
            res.rollbacks += 1
            forced = True


def _finish(
    res: JudgmentResult, status: str, reason: str | None, settings: JudgeSettings | None = None
) -> JudgmentResult:
    res.status = status  # type: ignore[assignment]
    res.reason = reason
    res.ended_at = time.time()
    if status == "accepted":
        verdict_for(res)
    scrub_result(res, secrets(settings or res.settings))  # an endpoint may echo the key
    return res
