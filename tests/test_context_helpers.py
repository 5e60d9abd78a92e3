"""Helpers shared by the evaluation-context tests (imported by test_context_* / test_spans_*)."""

from __future__ import annotations

from memuse_core.builder import EpisodeBuilder
from memuse_core.episode import EpisodeRecord, episodes_from_events
from memuse_core.events import MemoryDelivery
from memuse_core.rules.context import build_episode_context
from memuse_core.rules.models import EpisodeContext, SpanContext


def record(events) -> EpisodeRecord:
    """Record of one episode's events (tolerant: input gaps become recording-check findings)."""
    recs = episodes_from_events(events, strict=False)
    assert len(recs) == 1
    return next(iter(recs.values()))


def ctx_of(b: EpisodeBuilder | list, **finish) -> EpisodeContext:
    """Build the context of a builder's episode (or of a list of events)."""
    events = b if isinstance(b, list) else b.finish(**({"resolved": True} | finish))
    return build_episode_context(record(events))


def deliveries(events) -> list[MemoryDelivery]:
    return [e for e in events if isinstance(e, MemoryDelivery)]


def span_of(ctx: EpisodeContext, delivery_id: str) -> SpanContext:
    for s in ctx.spans:
        if delivery_id in s.delivery_ids:
            return s
    raise AssertionError(f"{delivery_id} is in no span")


def windows(ctx: EpisodeContext) -> dict[str, list]:
    """span id -> [window of each entry]."""
    return {s.span_id.split("/", 1)[1]: [e.window for e in s.entries] for s in ctx.spans}


def groups(ctx: EpisodeContext) -> list[list[str]]:
    return [s.delivery_ids for s in ctx.spans]


def test_helpers_build_an_episode_without_memory() -> None:
    b = EpisodeBuilder("plain")
    b.step("look", "ls", "a.py")
    ctx = ctx_of(b)
    assert ctx.spans == [] and ctx.valid
