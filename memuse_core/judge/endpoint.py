"""The LLM judge's endpoint: a preflight call before any batch or re-judge, the one-line causes of
failures a user can fix, and which failures are transport failures (MemUse A.3.2: "exhausted
budgets or unrecoverable failures produce error spans"; a transport failure is neither: the span
stays pending and a later batch judges it).

The `openai` SDK is imported inside the functions that need it (the rules judge never loads it).
The preflight makes one minimal chat-completions call with the batch's model and the judge's tool
schemas, so an unreachable host, a refused connection, a DNS failure, a rejected key, an unknown
model or an endpoint without tool calling ends the command in one line naming the URL and the
cause, before anything is written.
"""

from __future__ import annotations

import errno
import os
import socket
from typing import Any

from ..rules.judgment import scrub_text
from ..vocab import TRANSPORT_REASON
from .result import JudgeConfigError, JudgeSettings
from .tools import tool_schemas

DEFAULT_URL = "https://api.openai.com/v1"
PREFLIGHT_TIMEOUT = 15.0
"""Seconds the preflight call may take at most (an endpoint that answers takes far less)."""

TRANSPORT = TRANSPORT_REASON
"""Reason prefix of a judgment that failed for a transport failure (not a judge failure): the
span is not done, a later batch judges it again."""


class EndpointError(JudgeConfigError):
    """The LLM judge cannot use its endpoint; the message is one line naming the URL and the
    cause."""

    def __init__(self, url: str, cause: str, *, fields: str = "") -> None:
        self.url, self.cause = url, cause
        super().__init__(f"the LLM judge cannot use {url}: {cause}" + (f" ({fields})" if fields else ""))


def endpoint_url(settings: JudgeSettings) -> str:
    return (settings.base_url or DEFAULT_URL).rstrip("/")


def api_key(settings: JudgeSettings) -> str:
    """The key from the environment variable the settings name (a placeholder for a local
    endpoint without one); raises JudgeConfigError when a hosted endpoint has no key."""
    key = os.environ.get(settings.api_key_env)
    if not key:
        if settings.base_url is None:
            raise JudgeConfigError(
                f"set {settings.api_key_env} (or pick another variable with --api-key-env) "
                "to use the LLM judge, or give --base-url for a local endpoint"
            )
        key = "not-needed"
    if not settings.model:
        raise JudgeConfigError("the LLM judge needs --model")
    return key


def secrets(settings: JudgeSettings | dict[str, Any] | None) -> list[str]:
    """Secret values to scrub from stored text: the API key of the settings' variable."""
    env = (
        settings.get("api_key_env") if isinstance(settings, dict) else getattr(settings, "api_key_env", None)
    )
    key = os.environ.get(env or "OPENAI_API_KEY") or ""
    return [key] if len(key) >= 8 else []


def _root(e: BaseException) -> BaseException:
    seen = set()
    while e.__cause__ is not None or e.__context__ is not None:
        nxt = e.__cause__ or e.__context__
        if nxt is None or id(nxt) in seen:
            break
        seen.add(id(nxt))
        e = nxt
    return e


def cause_of(e: BaseException, settings: JudgeSettings) -> str:
    """One line saying why a call failed, without any secret."""
    import openai  # lazy: the SDK loads only for the LLM judge

    model = settings.model
    if isinstance(e, openai.APITimeoutError):
        return f"no reply within {settings.timeout:g} s (timeout)"
    if isinstance(e, openai.APIConnectionError):
        root = _root(e)
        if (
            isinstance(root, socket.gaierror)
            or "Name or service not known" in str(root)
            or ("nodename nor servname" in str(root))
        ):
            return "DNS lookup failed (unknown host)"
        if isinstance(root, ConnectionRefusedError) or getattr(root, "errno", None) == errno.ECONNREFUSED:
            return "connection refused (nothing listens there)"
        if "refused" in str(root).lower():
            return "connection refused (nothing listens there)"
        if _dropped(root):
            return f"connection dropped: the server closed it before a reply ({type(root).__name__})"
        return f"cannot connect ({type(root).__name__})"
    if isinstance(e, openai.AuthenticationError):
        return f"the endpoint rejected the API key (401); check {settings.api_key_env}"
    if isinstance(e, openai.PermissionDeniedError):
        return f"the API key may not use this model or endpoint (403); check {settings.api_key_env}"
    if isinstance(e, openai.NotFoundError):
        return f"unknown model {model!r} or wrong endpoint path (404)"
    if isinstance(e, openai.APIStatusError):
        body = scrub_text(str(e).splitlines()[0][:200])
        if e.status_code in (400, 422) and "model" in body.lower():
            return f"unknown model {model!r} ({e.status_code}: {body})"
        if e.status_code in (400, 422) and ("tool" in body.lower() or "function" in body.lower()):
            return f"the endpoint does not accept tool calls ({e.status_code}: {body})"
        return f"HTTP {e.status_code}: {body}"
    return f"{type(e).__name__}: {scrub_text(str(e).splitlines()[0][:200] if str(e) else '')}"


_DROPPED = frozenset({"RemoteProtocolError", "ReadError", "WriteError"})
"""Names of the HTTP stack's errors for a connection that was made and then lost (by name: the
SDK's stack is httpx over httpcore, or a fork of it, and the root error is the lower layer's)."""


def _dropped(root: BaseException) -> bool:
    """The connection was made and then lost (the server was reachable)."""
    return type(root).__name__ in _DROPPED or isinstance(root, (ConnectionResetError, BrokenPipeError))


def is_transport(e: BaseException) -> bool:
    """Failures of the connection or the server rather than of the judge: timeouts, refused or
    dropped connections, rate limits and 5xx replies (after the loop's own retries)."""
    import openai

    if isinstance(e, (openai.APIConnectionError, openai.RateLimitError, openai.InternalServerError)):
        return True
    return isinstance(e, openai.APIStatusError) and e.status_code >= 500


def preflight(settings: JudgeSettings, *, fields: str = "") -> float:
    """One minimal call with the batch's model and tool schemas; returns its seconds. Raises
    EndpointError (one line: URL and cause) for a failure the user must fix. A rate limit or a
    server error is not such a failure: the batch starts and its circuit breaker watches."""
    import time

    import openai

    url = endpoint_url(settings)
    key = api_key(settings)
    client = openai.OpenAI(
        api_key=key,
        base_url=settings.base_url,
        max_retries=0,
        timeout=min(settings.timeout, PREFLIGHT_TIMEOUT),
    )
    body: dict[str, Any] = {
        "model": settings.model,
        "messages": [{"role": "user", "content": PREFLIGHT_PROMPT}],
        "tools": tool_schemas(),
        "temperature": settings.temperature,
        "max_tokens": 16,
    }
    t0 = time.monotonic()
    try:
        try:
            client.post("/chat/completions", body=body, cast_to=object)
        except openai.BadRequestError as e:
            if "max_tokens" not in str(e):
                raise
            body.pop("max_tokens")  # some models take only max_completion_tokens
            client.post("/chat/completions", body=body, cast_to=object)
    except (openai.RateLimitError, openai.InternalServerError):
        pass  # reachable, busy: the batch's retries and circuit breaker handle it
    except openai.APIStatusError as e:
        if e.status_code >= 500:
            return time.monotonic() - t0
        raise EndpointError(url, cause_of(e, settings), fields=fields) from None
    except openai.APIError as e:
        raise EndpointError(url, cause_of(e, settings), fields=fields) from None
    finally:
        client.close()
    return time.monotonic() - t0


PREFLIGHT_PROMPT = "Preflight check: reply with the word OK."
"""The one user message of the preflight call (a scripted endpoint can recognise it)."""

APP_FIELDS = "check the sidebar's Re-judge settings: Model, Endpoint base URL, and the API key variable"
"""What the app's error box names when the endpoint fails (the page's sidebar fields)."""
