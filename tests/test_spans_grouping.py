"""Injection spans (MemUse 3.3 "Injection spans", A.1.4): equality of entries and placements,
visibility of an earlier copy, processing order, continuation across unrelated deliveries,
changes ending spans, re-entry, the restricted rule, and restatement volume."""

from __future__ import annotations

from test_context_helpers import ctx_of, deliveries, groups, record

from memuse_core.builder import EpisodeBuilder, entry
from memuse_core.events import MemoryDelivery
from memuse_core.rules.analysis import analyze_episode

X = "Set DJANGO_SETTINGS_MODULE=tests.settings before running manage.py test."
Y = "The failing query uses a subquery that ignores Meta.ordering."
Z = "Use assertQuerysetEqual with ordered=False for unordered results."


def block(*vals: str) -> str:
    return "Relevant memories:\n" + "\n".join(f"- {v}" for v in vals)


def ents(*pairs: tuple[str, str], **kw) -> list:
    return [entry(i, v, **kw) for i, v in pairs]


def steps(b: EpisodeBuilder, n: int) -> None:
    for k in range(n):
        b.step(f"work {k}", f"cmd {k}", f"out {k}")


def test_spans_restated_host_block_is_one_span_with_restatements_and_volume() -> None:
    b = EpisodeBuilder("g1")
    b.host_block("recall", block(X), ents(("x", X)))
    steps(b, 4)
    ctx = ctx_of(b)
    assert groups(ctx) == [["g1-d1", "g1-d2", "g1-d3", "g1-d4"]]
    s = ctx.spans[0]
    assert (s.first_step, s.last_step, s.restatements) == (1, 4, 3)
    assert s.chars == 4 * len(block(X)) and s.est_tokens == s.chars // 4
    assert [d.restatement for d in ctx.deliveries] == [False, True, True, True]


def test_spans_entry_equality_portable_version_and_digest() -> None:
    b = EpisodeBuilder("g2")
    b.host_block("recall", block(X), ents(("x", X), version="1"))
    steps(b, 2)
    b.host_block("recall", block(X), ents(("x", X), version="2"))  # same text, new portable version
    steps(b, 2)
    assert groups(ctx_of(b)) == [["g2-d1", "g2-d2"], ["g2-d3", "g2-d4"]]
    ev = EpisodeBuilder("g2b")
    ev.host_block("recall", block(X), ents(("x", X)))
    steps(ev, 3)
    events = ev.finish(resolved=True)
    deliveries(events)[2].entries[0].digest = "0" * 16  # digest differs
    assert groups(ctx_of(events)) == [["g2b-d1", "g2b-d2"], ["g2b-d3"]]


def test_spans_entry_equality_id_scheme_and_namespace() -> None:
    b = EpisodeBuilder("g3")
    b.host_block("recall", block(X), ents(("x", X)))
    steps(b, 3)
    events = b.finish(resolved=True)
    deliveries(events)[1].entries[0].id_scheme = "other"
    deliveries(events)[2].entries[0].namespace = "elsewhere"
    assert groups(ctx_of(events)) == [["g3-d1"], ["g3-d2"], ["g3-d3"]]


def test_spans_operation_local_versions_do_not_break_equality() -> None:
    b = EpisodeBuilder("g4")
    b.host_block("recall", block(X), ents(("x", X)))
    steps(b, 3)
    events = b.finish(resolved=True)
    for k, d in enumerate(deliveries(events)):
        d.entries[0].version, d.entries[0].version_portable = f"op-{k}", False
    assert groups(ctx_of(events)) == [["g4-d1", "g4-d2", "g4-d3"]]


def test_spans_value_fallback_without_portable_version_or_digest() -> None:
    b = EpisodeBuilder("g5")
    b.host_block("recall", block(X, Y), ents(("x", X)))
    steps(b, 3)
    events = b.finish(resolved=True)
    for d in deliveries(events):
        d.entries[0].version, d.entries[0].digest = None, None
    assert groups(ctx_of(events)) == [["g5-d1", "g5-d2", "g5-d3"]]
    deliveries(events)[2].entries[0].value = Y  # same placement, other recorded value
    assert groups(ctx_of(events)) == [["g5-d1", "g5-d2"], ["g5-d3"]]


def test_spans_display_key_fallback_identity() -> None:
    b = EpisodeBuilder("g6")
    key = "[mem0:1a2b3c4d]"
    e = entry("x", X, display_key=key)
    e.item_id = None
    b.host_block("recall", f"Memories:\n- {X} {key}", [e])
    steps(b, 2)
    ctx = ctx_of(b)
    assert groups(ctx) == [["g6-d1", "g6-d2"]]
    assert ctx.spans[0].entries[0].item_id == key
    # a display key that is an operation-local version is not an identity
    e2 = entry("x", X, display_key="op-7", version="op-7")
    e2.item_id, e2.version_portable = None, False
    b2 = EpisodeBuilder("g6b")
    b2.host_block("recall", f"Memories:\n- {X} op-7", [e2])
    steps(b2, 1)
    assert ctx_of(b2).spans[0].entries[0].item_id is None


def test_spans_placement_equality_order_slot_kind_text() -> None:
    b = EpisodeBuilder("g7")
    b.host_block("recall", block(X), ents(("x", X)))
    steps(b, 2)
    b.host_block("recall", "Memories you may use:\n- " + X, ents(("x", X)))  # wrapper text changed
    steps(b, 2)
    assert groups(ctx_of(b)) == [["g7-d1", "g7-d2"], ["g7-d3", "g7-d4"]]
    b2 = EpisodeBuilder("g7b")
    b2.host_block("recall", block(X), ents(("x", X)))
    steps(b2, 3)
    events = b2.finish(resolved=True)
    deliveries(events)[1].placements[0].slot = "system_prefix"
    deliveries(events)[2].placements[0].kind = "message"
    assert groups(ctx_of(events)) == [["g7b-d1"], ["g7b-d2"], ["g7b-d3"]]


def test_spans_membership_and_order_change_end_spans_and_return_starts_new() -> None:
    b = EpisodeBuilder("g8")
    b.host_block("recall", block(X, Y), ents(("x", X), ("y", Y)))
    steps(b, 2)
    b.host_block("recall", block(X, Z), ents(("x", X), ("z", Z)))  # membership change
    steps(b, 1)
    b.host_block("recall", block(X, Y), ents(("x", X), ("y", Y)))  # back to the earlier content
    steps(b, 1)
    b.host_block("recall", block(Y, X), ents(("y", Y), ("x", X)))  # order change
    steps(b, 1)
    assert groups(ctx_of(b)) == [["g8-d1", "g8-d2"], ["g8-d3"], ["g8-d4"], ["g8-d5"]]


def test_spans_continue_across_unrelated_deliveries_and_alternating_blocks() -> None:
    b = EpisodeBuilder("g9")
    b.host_block(
        "profile", "Profile:\n- prefers small diffs", ents(("p", "prefers small diffs")), form="persona"
    )
    b.host_block(
        "skills",
        "Skills:\n- bisect: git bisect run pytest",
        ents(("s", "bisect: git bisect run pytest")),
        form="skill_catalog",
    )
    b.step("search", "memory search ordering", f"[y] {Y}", tool_memory=(ents(("y", Y)), "search_result"))
    steps(b, 3)
    ctx = ctx_of(b)
    by_form = {s.form: s for s in ctx.spans}
    assert len(by_form["persona"].delivery_ids) == 4 and len(by_form["skill_catalog"].delivery_ids) == 4
    assert by_form["search_result"].delivery_ids == ["g9-d5"]
    assert len(ctx.spans) == 3


def test_spans_visibility_lost_reentry_starts_new_span() -> None:
    b = EpisodeBuilder("g10")
    b.step("search", "memory search x", f"[x] {X}", tool_memory=(ents(("x", X)), "search_result"))
    b.step("search again", "memory search x", f"[x] {X}", tool_memory=(ents(("x", X)), "search_result"))
    b.step("look", "ls", "a")  # consumes the second copy while the first is visible: restatement
    b.retract([2, 3, 4, 5])
    b.step("search", "memory search x", f"[x] {X}", tool_memory=(ents(("x", X)), "search_result"))
    b.step("look", "ls", "a")
    ctx = ctx_of(b)
    assert groups(ctx) == [["g10-d1", "g10-d2"], ["g10-d3"]]
    assert ctx.spans[1].first_step == 5 and ctx.spans[1].prior_sources != ctx.spans[0].prior_sources


def test_spans_unknown_exposure_cannot_establish_visibility() -> None:
    b = EpisodeBuilder("g11")
    e = entry("x", X)
    e.value = None  # value not recorded: exposure unknown
    b.host_block("recall", block(X), [e])
    steps(b, 3)
    ctx = ctx_of(b)
    assert groups(ctx) == [["g11-d1"], ["g11-d2"], ["g11-d3"]]
    assert {x.exposure for s in ctx.spans for x in s.entries} == {"unknown"}


def test_spans_displayed_key_must_stay_visible() -> None:
    b = EpisodeBuilder("g12")
    b.step("search", "memory search x", f"[x] {X}", tool_memory=(ents(("x", X)), "search_result"))
    b.step("look", "ls", "a")
    an = analyze_episode(record(b.finish(resolved=True)))
    src = an.infos[0]
    call = an.rec.steps[1].call
    assert an.copy_visible(src, 0, call, X, "[x]")
    assert not an.copy_visible(src, 0, call, X, "[key-not-shown]")


def test_spans_processing_order_by_consuming_step_then_recorded_position() -> None:
    b = EpisodeBuilder("g13")
    b.host_block("recall", block(X), ents(("x", X)))
    steps(b, 3)
    events = b.finish(resolved=True)
    ds = deliveries(events)
    # record the step-3 delivery first, then step 1, then step 2
    for d in ds:
        events.remove(d)
    pos = len(events) - 1
    events[pos:pos] = [ds[2], ds[0], ds[1]]
    ctx = ctx_of(events)
    assert [d.delivery_id for d in ctx.deliveries] == ["g13-d1", "g13-d2", "g13-d3"]
    assert groups(ctx) == [["g13-d1", "g13-d2", "g13-d3"]]
    # same step: recorded position decides
    b2 = EpisodeBuilder("g13b")
    b2.host_block("a", "A:\n- " + X, ents(("x", X)))
    b2.host_block("b", "B:\n- " + Y, ents(("y", Y)))
    steps(b2, 1)
    assert [d.delivery_id for d in ctx_of(b2).deliveries] == ["g13b-d1", "g13b-d2"]


def test_spans_restricted_rule_for_empty_deliveries() -> None:
    b = EpisodeBuilder("g14")
    b.host_block("none", "No memories matched.", [], form="task_recall")
    steps(b, 2)
    b.step("search", "memory search y", f"[y] {Y}", tool_memory=(ents(("y", Y)), "search_result"))
    steps(b, 2)
    ctx = ctx_of(b)
    empties = [s for s in ctx.spans if s.status == "empty"]
    # steps 1-4 each join the immediately preceding empty delivery; at step 4 the search
    # delivery (d5) follows d4, so the step-5 empty delivery (d6) starts a new span
    assert [s.delivery_ids for s in empties] == [["g14-d1", "g14-d2", "g14-d3", "g14-d4"], ["g14-d6"]]
    assert [s.delivery_ids for s in ctx.spans if s.status != "empty"] == [["g14-d5"]]


def test_spans_restricted_rule_for_unattributed_deliveries() -> None:
    b = EpisodeBuilder("g15")
    steps(b, 2)
    events = b.finish(resolved=True)
    loose = [
        MemoryDelivery(episode_id="g15", delivery_id=f"g15-u{k}", entries=ents(("x", v)))
        for k, v in enumerate([X, X, Y, X])
    ]
    events[-1:-1] = loose
    ctx = ctx_of(events)
    # u1 agrees with the immediately preceding u0; u3 repeats u0 but u2 came in between
    assert groups(ctx) == [["g15-u0", "g15-u1"], ["g15-u2"], ["g15-u3"]]
    assert {s.status for s in ctx.spans} == {"unassessable"}


def test_spans_restricted_rule_requires_same_attribution_status() -> None:
    b = EpisodeBuilder("g16")
    steps(b, 2)
    events = b.finish(resolved=True)
    events[-1:-1] = [
        MemoryDelivery(episode_id="g16", delivery_id="g16-e0", consuming_call_id="g16-c2"),
        MemoryDelivery(episode_id="g16", delivery_id="g16-e1"),
    ]
    ctx = ctx_of(events)
    assert groups(ctx) == [["g16-e0"], ["g16-e1"]]
    assert [s.status for s in ctx.spans] == ["empty", "empty"]


def test_spans_return_after_another_items_span_changed_starts_new_even_while_visible() -> None:
    """A.1.4: "A change in an entry version, membership, order, placement, or exposure ends the
    current span of every item in the new delivery. Returning to the earlier content starts a new
    span". Search results stay visible in the history, so visibility alone would let the third
    delivery join the first span; the delivery of Y alone in between ended Y's part of it."""
    out = f"[x] {X}\n[y] {Y}"
    b = EpisodeBuilder("g20")
    b.step("search", "memory search ordering", out, tool_memory=(ents(("x", X), ("y", Y)), "search_result"))
    b.step(
        "again", "memory search ordering again", out, tool_memory=(ents(("x", X), ("y", Y)), "search_result")
    )
    b.final()
    assert groups(ctx_of(b)) == [["g20-d1", "g20-d2"]]  # an identical visible repeat restates
    b = EpisodeBuilder("g21")
    b.step("search", "memory search ordering", out, tool_memory=(ents(("x", X), ("y", Y)), "search_result"))
    b.step("narrow", "memory search subquery", f"[y] {Y}", tool_memory=(ents(("y", Y)), "search_result"))
    b.step(
        "again", "memory search ordering again", out, tool_memory=(ents(("x", X), ("y", Y)), "search_result")
    )
    b.final()
    assert groups(ctx_of(b)) == [["g21-d1"], ["g21-d2"], ["g21-d3"]]
