"""The trajectory recorder: model calls, bridge annotations and their binding (MemUse 3.2, A.1.1).

One `Recorder` owns one event file. The proxy calls `begin_call` / `end_call` around every request
it forwards; the memory bridge calls `annotate` (in process, or through the proxy's control
endpoint). The recorder

* writes one `model_call` event per request with the normalised request, the response, reported
  usage and cost, timing and status; the caller's role comes from the proxy path;
* binds each delivery to the agent call that carried it and verifies its placement proofs against
  the request it actually forwarded (one-shot and standing deliveries: `deliveries.py`);
* writes each request delta-encoded (`base_call_id` + `base_len`,
  docs/decisions.md#delta-encoded-requests) when the previous written call of the same episode and
  role is a prefix of it, so a long episode's log grows linearly, not quadratically (`delta=False`
  writes every request in full);
* derives `retraction` and `history_rewrite` events by comparing consecutive agent requests of an
  episode (A.1.3): messages dropped from an otherwise unchanged history are a retraction, any other
  change to already-sent messages is a rewrite that keeps the common prefix;
* binds `tool_result` annotations to the call whose response issued the tool call.

Episodes come from bridge lifecycle events. A call names its episode with the path segment
`/ep/<episode_id>/...` or the `X-MemUse-Episode` header; without either it goes to the most
recently started open episode, and with no open episode an episode is started automatically.
Events of one call are written together, after the call completes: context events, the
`model_call`, then the deliveries it consumed.
"""

from __future__ import annotations

import os
import time
from typing import Any

from ..events import MemoryChange, MemoryDelivery, MemorySearch, ToolResultEvent, text_digest
from .calls import CallContext, model_call_event, parse_request
from .episodes import AnnotationError, EpisodeRecorder, EpisodeState, model_event
from .history import delta_request, history_events
from .sink import EventSink
from .wire import CHAT, EMBEDDINGS, RESPONSES, ParsedResponse

ROLES = ("agent", "memory", "embedding")


class Recorder(EpisodeRecorder):
    """Writes the event log of a recording session (see module docstring); the run and episode
    lifecycle (`start_run`, `start_episode`, `end_episode`, `close`) is `EpisodeRecorder`'s."""

    def __init__(
        self,
        out: str | os.PathLike[str] | EventSink,
        *,
        run_id: str | None = None,
        config: str = "recorded",
        delta: bool = True,
    ):
        super().__init__(out, run_id=run_id, config=config)
        self.delta = delta
        """Write requests delta-encoded against the previous written call of the same episode and
        role (`base_call_id` + `base_len`) when it is a prefix; full requests otherwise."""
        self._n_search = 0
        self._pending_op: str | None = None
        self.calls_recorded = 0

    # -- memory annotations ------------------------------------------------------------------
    def memory_change(self, **kw: Any) -> None:
        """Record an item creation, update or deletion (`events.MemoryChange` fields)."""
        kw.setdefault("at", time.time())
        with self._lock:
            if "episode_id" not in kw and self._open:
                kw["episode_id"] = self._open[-1]
            ev = MemoryChange(**kw)
            self.sink.write(self._ensure_run() + [model_event(ev)])

    def memory_search(self, **kw: Any) -> str:
        """Record a search and its results; returns the search id."""
        with self._lock:
            self._n_search += 1
            kw.setdefault("search_id", f"{self.run_id}-s{self._n_search}")
            if "episode_id" not in kw and self._open:
                kw["episode_id"] = self._open[-1]
            ev = MemorySearch(**kw)
            self.sink.write(self._ensure_run() + [model_event(ev)])
            return ev.search_id

    def deliver(
        self,
        *,
        entries: list[dict[str, Any]],
        placements: list[dict[str, Any]],
        route: str = "host",
        form: str = "block",
        search_id: str | None = None,
        standing: bool = False,
        episode_id: str | None = None,
    ) -> str:
        """Announce a delivery; it is bound to (and verified against) the next agent call."""
        with self._lock:
            ep = self._episode(episode_id)
            did = ep.deliveries.next_id()
            # Validate now so a bad annotation fails at the bridge, not at write time.
            ev = MemoryDelivery(
                episode_id=ep.episode_id,
                delivery_id=did,
                route=route,  # type: ignore[arg-type]
                form=form,
                search_id=search_id,
                entries=entries,  # type: ignore[arg-type]
                placements=placements,  # type: ignore[arg-type]
            )
            ep.deliveries.announce(model_event(ev), standing=standing)
            return did

    def withdraw(self, delivery_id: str, episode_id: str | None = None) -> None:
        """End a standing delivery (the host stopped inserting it)."""
        with self._lock:
            ep = self._episode(episode_id)
            ep.deliveries.withdraw(delivery_id)

    def set_operation(self, op_ref: str | None = None, episode_id: str | None = None) -> None:
        """Mark a memory operation (search or generation) as running, or none (A.1.1 operation
        references): the memory-system and embedding calls made meanwhile carry its `op_ref`."""
        with self._lock:
            if episode_id is None and not self._open:
                self._pending_op = op_ref
                return
            self._episode(episode_id).current_op = op_ref

    def tool_result(
        self,
        *,
        tool_call_id: str | None,
        output: str,
        name: str | None = None,
        arguments: str | None = None,
        exit_code: int | None = None,
        episode_id: str | None = None,
    ) -> None:
        """Record a tool execution, bound to the call whose response asked for it."""
        with self._lock:
            ep = self._episode(episode_id)
            call_id = ep.tool_call_owner.get(tool_call_id or "") or ep.last_ok_agent_call
            if call_id is None:
                raise AnnotationError("tool_result before any completed agent call of the episode")
            ev = ToolResultEvent(
                episode_id=ep.episode_id,
                call_id=call_id,
                tool_call_id=tool_call_id,
                name=name,
                arguments=arguments,
                output=output,
                exit_code=exit_code,
            )
            self.sink.write([model_event(ev)])

    def annotate(self, op: str, args: dict[str, Any]) -> Any:
        """Dispatch a bridge annotation by name (the proxy's control endpoint uses this)."""
        fn = {
            "start_run": self.start_run,
            "start_episode": self.start_episode,
            "end_episode": self.end_episode,
            "memory_change": self.memory_change,
            "memory_search": self.memory_search,
            "deliver": self.deliver,
            "withdraw": self.withdraw,
            "tool_result": self.tool_result,
            "set_operation": self.set_operation,
        }.get(op)
        if fn is None:
            raise AnnotationError(f"unknown annotation {op!r}")
        try:
            return fn(**args)  # type: ignore[operator]
        except TypeError as e:
            raise AnnotationError(f"{op}: {e}") from None

    # -- model calls ---------------------------------------------------------------------------
    def begin_call(
        self,
        *,
        role: str,
        kind: str | None,
        body: bytes,
        episode_hint: str | None = None,
        op_ref: str | None = None,
    ) -> CallContext:
        """Register a request about to be forwarded; binds deliveries and derives context events."""
        started = time.time()
        req = parse_request(kind, body)
        with self._lock:
            ep, pre = self._episode_for_call(episode_hint)
            ep.n_calls += 1
            if role != "agent" and op_ref is None:
                op_ref = ep.current_op if ep.current_op is not None else self._pending_op
            ctx = CallContext(
                call_id=f"{ep.episode_id}-c{ep.n_calls}",
                episode_id=ep.episode_id,
                role=role,
                kind=kind,
                request=req.request,
                started_at=started,
                op_ref=op_ref,
                raw=req.mm.raw,
                pre_events=pre,
            )
            if role == "agent" and kind in (CHAT, RESPONSES) and req.obj is not None:
                # Retraction / history rewrite between the previous agent request and this one (A.1.3).
                prev, ep.prev_raw = ep.prev_raw, req.mm.raw
                ctx.pre_events += history_events(prev, req.mm, episode_id=ep.episode_id, call_id=ctx.call_id)
                ctx.consumed = ep.deliveries.bind(ctx.call_id, kind, req.obj, req.mm)
        if pre:
            self.sink.write(pre)
            ctx.pre_events = ctx.pre_events[len(pre) :]
        return ctx

    def end_call(
        self,
        ctx: CallContext,
        *,
        status: str,
        parsed: ParsedResponse | None,
        http_status: int | None = None,
        error: str | None = None,
        extra: dict[str, Any] | None = None,
    ) -> None:
        """Write the call's events once its response is complete (or failed)."""
        ev = model_call_event(
            ctx,
            status=status,
            parsed=parsed,
            ended=time.time(),
            http_status=http_status,
            error=error,
            extra=extra,
        )
        with self._lock:
            ep = self._episodes[ctx.episode_id]
            if self.delta and ctx.raw:
                ev["request"] = self._delta_request(ep, ctx)
            out = list(ctx.pre_events) + [ev]
            ok = status == "ok" and ctx.role == "agent"
            if ok:
                ep.last_ok_agent_call = ctx.call_id
                for tc in (ev.get("response") or {}).get("tool_calls") or []:
                    if tc.get("id"):
                        ep.tool_call_owner[tc["id"]] = ctx.call_id
            # A failed call consumes nothing: the harness resends this input on retry.
            out.extend(ep.deliveries.settle(ctx.consumed, ctx.call_id, ok=ok))
            self.calls_recorded += 1
            self.sink.write(out)

    def _delta_request(self, ep: EpisodeState, ctx: CallContext) -> dict[str, Any]:
        last = ep.last_written.get(ctx.role)
        ep.last_written[ctx.role] = (ctx.call_id, ctx.raw)
        return delta_request(ctx.request, ctx.raw, last)

    def digest(self, text: str) -> str:
        """`events.text_digest`, for adapters that only hold a recorder."""
        return text_digest(text)


__all__ = ["Recorder", "CallContext", "AnnotationError", "ROLES", "EMBEDDINGS"]
