"""An episode resolved from its events: calls with full inputs, steps 1..T, deliveries (MemUse 3.1).

`EpisodeRecord` is the value that every rule (exposure, prior context, spans, credit windows,
evidence packages, judges) works on. It is built either straight from events (tests, importers)
with `EpisodeRecord.from_events`, or from the store with `memuse_core.store.load_episode`; both
paths give identical records.

Steps (3.1): the completed agent calls in recorded order are steps 1..T. A step holds its input
messages x_t, its response y_t, and its observations o_t: the `tool_result` events issued by the
call or, for text-action harnesses (mini-swe-agent v1), the observation messages that the next
agent call appends after the assistant turn.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from .events import (
    EpisodeEnd,
    EpisodeStart,
    Event,
    HistoryRewrite,
    MemoryChange,
    MemoryDelivery,
    MemorySearch,
    Message,
    ModelCall,
    Retraction,
    RunEvent,
    ToolResultEvent,
)


class EpisodeError(ValueError):
    """An episode's events are inconsistent (e.g. a delta request names an unknown base call)."""


@dataclass
class CallView:
    """A model call with its request resolved to the full message list."""

    call: ModelCall
    messages: list[Message]
    seq: int
    """Position of the call among the episode's calls (0-based, recorded order)."""
    tool_results: list[ToolResultEvent] = field(default_factory=list)
    step: int | None = None
    """Step number (1-based) when this call completed an agent step, else None."""
    input_gap: str | None = None
    """Why the input could not be fully reconstructed (e.g. an unresolvable delta base); only set
    when records are built with `strict=False` (the recording checks of A.1.3 report it)."""

    @property
    def call_id(self) -> str:
        return self.call.call_id


@dataclass
class Step:
    """Step s_t = (x_t, y_t, o_t) of MemUse 3.1."""

    t: int
    """1-based step number."""
    call: CallView
    observations: list[str]
    """Observation texts: tool outputs, or the follow-up observation messages."""
    tool_results: list[ToolResultEvent]

    @property
    def response_text(self) -> str:
        r = self.call.call.response
        return (r.content or "") if r else ""

    def action_text(self) -> str:
        """What the agent did at this step: response text plus tool-call arguments."""
        r = self.call.call.response
        parts = [self.response_text]
        if r and r.tool_calls:
            parts.extend(f"{tc.name}({tc.arguments})" for tc in r.tool_calls)
        return "\n".join(p for p in parts if p)


@dataclass
class EpisodeRecord:
    """Everything recorded about one episode, in recorded order."""

    start: EpisodeStart
    run: RunEvent | None = None
    end: EpisodeEnd | None = None
    calls: list[CallView] = field(default_factory=list)
    steps: list[Step] = field(default_factory=list)
    deliveries: list[MemoryDelivery] = field(default_factory=list)
    searches: list[MemorySearch] = field(default_factory=list)
    changes: list[MemoryChange] = field(default_factory=list)
    context_events: list[Retraction | HistoryRewrite] = field(default_factory=list)
    order: list[tuple[str, str]] = field(default_factory=list)
    """(event type, id) in recorded order, for rules that need the interleaving."""

    @property
    def episode_id(self) -> str:
        return self.start.episode_id

    @property
    def T(self) -> int:
        """Number of steps."""
        return len(self.steps)

    def call(self, call_id: str) -> CallView | None:
        return self._call_index().get(call_id)

    def _call_index(self) -> dict[str, CallView]:
        idx = getattr(self, "_idx", None)
        if idx is None or len(idx) != len(self.calls):
            idx = {c.call_id: c for c in self.calls}
            self._idx = idx
        return idx

    # ------------------------------------------------------------------------------------
    @classmethod
    def from_events(cls, events: Iterable[Event]) -> EpisodeRecord:
        """Build one episode's record from its events (other episodes' events are an error)."""
        records = episodes_from_events(events)
        if len(records) != 1:
            raise EpisodeError(f"expected events of one episode, got {len(records)}")
        return next(iter(records.values()))


def resolve_messages(call: ModelCall, earlier: dict[str, list[Message]]) -> list[Message]:
    """The full input messages of a call, expanding a delta-encoded request."""
    req = call.request
    if req.base_call_id is None:
        return list(req.messages)
    base = earlier.get(req.base_call_id)
    if base is None:
        raise EpisodeError(
            f"call {call.call_id}: request.base_call_id {req.base_call_id!r} is not an earlier call "
            "of the same episode"
        )
    n = len(base) if req.base_len is None else req.base_len
    if n > len(base):
        raise EpisodeError(
            f"call {call.call_id}: request.base_len {n} exceeds the {len(base)} messages of "
            f"{req.base_call_id}"
        )
    return base[:n] + list(req.messages)


def finish_steps(rec: EpisodeRecord) -> None:
    """Number the completed agent calls 1..T and attach their observations (3.1)."""
    agent_calls = [c for c in rec.calls if c.call.role == "agent" and c.call.status == "ok"]
    rec.steps = []
    for i, cv in enumerate(agent_calls):
        cv.step = i + 1
        if cv.tool_results:
            obs = [tr.output for tr in cv.tool_results]
        else:
            obs = _text_observations(cv, agent_calls[i + 1] if i + 1 < len(agent_calls) else None)
        rec.steps.append(Step(t=i + 1, call=cv, observations=obs, tool_results=cv.tool_results))


def _text_observations(cv: CallView, nxt: CallView | None) -> list[str]:
    """Observation messages of a text-action harness: what the next input appends after our reply."""
    if nxt is None:
        return []
    n = len(cv.messages)
    later = nxt.messages[n:]
    # The next input repeats our input, then our assistant reply, then the observations.
    if later and later[0].role == "assistant":
        later = later[1:]
    out = []
    for m in later:
        if m.role in ("user", "tool"):
            out.append(m.text())
        else:
            break
    return out


def episodes_from_events(events: Iterable[Event], *, strict: bool = True) -> dict[str, EpisodeRecord]:
    """Group a stream of events into episode records (run events attach to their episodes).

    With `strict=False`, a delta-encoded request whose base cannot be resolved keeps only its own
    messages and records the problem in `CallView.input_gap` instead of raising.
    """
    runs: dict[str, RunEvent] = {}
    recs: dict[str, EpisodeRecord] = {}
    pending: list[Event] = []
    resolved: dict[str, dict[str, list[Message]]] = {}
    by_call: dict[str, CallView] = {}

    def need(ep: str | None, what: str) -> EpisodeRecord:
        if ep is None or ep not in recs:
            raise EpisodeError(f"{what} refers to episode {ep!r} before its episode_start")
        return recs[ep]

    for ev in events:
        if isinstance(ev, RunEvent):
            runs[ev.run_id] = ev
        elif isinstance(ev, EpisodeStart):
            recs[ev.episode_id] = EpisodeRecord(start=ev, run=runs.get(ev.run_id))
            resolved[ev.episode_id] = {}
        elif isinstance(ev, ModelCall):
            rec = need(ev.episode_id, f"model_call {ev.call_id}")
            gap = None
            try:
                msgs = resolve_messages(ev, resolved[ev.episode_id])
            except EpisodeError as e:
                if strict:
                    raise
                msgs, gap = list(ev.request.messages), str(e)
            resolved[ev.episode_id][ev.call_id] = msgs
            cv = CallView(call=ev, messages=msgs, seq=len(rec.calls), input_gap=gap)
            rec.calls.append(cv)
            by_call[ev.call_id] = cv
            rec.order.append(("model_call", ev.call_id))
        elif isinstance(ev, ToolResultEvent):
            rec = need(ev.episode_id, "tool_result")
            owner = by_call.get(ev.call_id)
            if owner is None:
                raise EpisodeError(f"tool_result names unknown call_id {ev.call_id!r}")
            owner.tool_results.append(ev)
            rec.order.append(("tool_result", ev.call_id))
        elif isinstance(ev, (Retraction, HistoryRewrite)):
            rec = need(ev.episode_id, ev.type)
            rec.context_events.append(ev)
            rec.order.append((ev.type, ev.before_call_id))
        elif isinstance(ev, MemoryDelivery):
            rec = need(ev.episode_id, f"memory_delivery {ev.delivery_id}")
            rec.deliveries.append(ev)
            rec.order.append(("memory_delivery", ev.delivery_id))
        elif isinstance(ev, MemorySearch):
            if ev.episode_id is not None and ev.episode_id in recs:
                recs[ev.episode_id].searches.append(ev)
                recs[ev.episode_id].order.append(("memory_search", ev.search_id))
        elif isinstance(ev, MemoryChange):
            if ev.episode_id is not None and ev.episode_id in recs:
                recs[ev.episode_id].changes.append(ev)
        elif isinstance(ev, EpisodeEnd):
            need(ev.episode_id, "episode_end").end = ev
        else:  # pragma: no cover - the union is closed
            pending.append(ev)
    for rec in recs.values():
        if rec.run is None:
            rec.run = runs.get(rec.start.run_id)
        finish_steps(rec)
    return recs
