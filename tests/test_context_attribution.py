"""Consuming-step attribution (MemUse A.1.1): delivery -> consuming call -> attributed step only
when that call completed an agent step; unbound and incomplete calls give no attributed step."""

from __future__ import annotations

from test_context_helpers import ctx_of, deliveries, record

from memuse_core.builder import EpisodeBuilder, entry
from memuse_core.events import MemoryDelivery, ModelCall
from memuse_core.rules.attribution import attribute_delivery

TEXT = "Memory: the CI image lacks libxml2-dev; install it first."


def _base() -> EpisodeBuilder:
    b = EpisodeBuilder("att")
    b.host_block("recall", TEXT, [entry("m1", "the CI image lacks libxml2-dev; install it first.")])
    return b


def test_attribution_completed_agent_call_gives_attributed_step() -> None:
    b = _base()
    b.step("look", "ls", "a.py")
    b.step("build", "make", "ok")
    ctx = ctx_of(b)
    assert [(d.consuming_step, d.attributed, d.problem) for d in ctx.deliveries] == [
        (1, True, None),
        (2, True, None),
    ]


def test_attribution_failed_or_incomplete_call_gives_no_step() -> None:
    b = _base()
    b.failed_call()
    b.step("look", "ls", "a.py")
    events = b.finish(resolved=True)
    calls = [e for e in events if isinstance(e, ModelCall)]
    rec = record(events)
    d1, d2 = deliveries(events)
    a1 = attribute_delivery(rec, d1)
    assert (a1.step, a1.problem) == (None, "call_error")
    assert attribute_delivery(rec, d2).step == 1  # the failed call is not a step
    calls[0].status = "incomplete"
    a1 = attribute_delivery(record(events), d1)
    assert (a1.step, a1.problem) == (None, "call_incomplete")
    ctx = ctx_of(events)
    s = [s for s in ctx.spans if "att-d1" in s.delivery_ids][0]
    assert s.status == "unassessable" and s.first_step is None and s.entries[0].window is None


def test_attribution_unbound_delivery_is_unassessable_even_with_provisional_step() -> None:
    b = _base()
    b.step("look", "ls", "a.py")
    events = b.finish(resolved=True)
    extra = MemoryDelivery(
        episode_id="att",
        delivery_id="att-loose",
        consuming_call_id=None,
        provisional_step=1,
        entries=[entry("m9", "an unbound memory value")],
    )
    events.insert(-1, extra)
    ctx = ctx_of(events)
    d = [d for d in ctx.deliveries if d.delivery_id == "att-loose"][0]
    assert (d.consuming_step, d.attributed, d.problem) == (None, False, "unbound")
    s = [s for s in ctx.spans if s.delivery_ids == ["att-loose"]][0]
    assert s.status == "unassessable"
    assert ctx.valid  # an unbound delivery is not a recording failure


def test_attribution_memory_system_call_is_not_a_step() -> None:
    b = _base()
    b.step("look", "ls", "a.py")
    events = b.finish(resolved=True)
    call = [e for e in events if isinstance(e, ModelCall)][0]
    call.role = "memory"
    rec = record(events)
    a = attribute_delivery(rec, deliveries(events)[0])
    assert (a.step, a.problem) == (None, "not_agent_call")
