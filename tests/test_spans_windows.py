"""Credit windows (MemUse 3.3 "Credit windows", A.1.5)."""

from __future__ import annotations

from test_context_helpers import ctx_of, deliveries, record, span_of, windows

from memuse_core.builder import EpisodeBuilder, entry
from memuse_core.rules.analysis import analyze_episode
from memuse_core.rules.spans import group_spans
from memuse_core.rules.windows import credit_windows

SHORT = "Retry the flaky network test with --reruns 2."
LONG = SHORT + " The timeout comes from the proxy; set NO_PROXY=localhost."
OTHER = "Docs build needs sphinx<8."


def steps(b: EpisodeBuilder, n: int) -> None:
    for k in range(n):
        b.step(f"work {k}", f"cmd {k}", f"out {k}")


def tool(
    b: EpisodeBuilder,
    item: str,
    value: str,
    text: str | None = None,
    form: str = "search_result",
    cmd: str = "memory search",
    **kw,
) -> None:
    b.step(
        "use memory",
        cmd,
        text if text is not None else f"[{item}] {value}",
        tool_memory=([entry(item, value, **kw)], form),
    )


def test_windows_default_runs_from_first_consuming_step_to_episode_end() -> None:
    b = EpisodeBuilder("w1")
    steps(b, 2)
    tool(b, "a", SHORT)  # delivered by step 3's tool result, consumed at step 4
    steps(b, 3)
    ctx = ctx_of(b)
    assert windows(ctx) == {"w1-d1": [(4, 6)]}


def test_windows_boundary_later_span_containing_exposed_text_ends_at_t_prime_minus_one() -> None:
    b = EpisodeBuilder("w2")
    b.host_block("recall", "Memories:\n- " + SHORT, [entry("a", SHORT, version="1")])
    steps(b, 3)
    b.host_block("recall", "Memories:\n- " + LONG, [entry("a", LONG, version="2")])
    steps(b, 3)
    ctx = ctx_of(b)
    assert windows(ctx) == {"w2-d1": [(1, 3)], "w2-d4": [(4, 6)]}


def test_windows_boundary_on_the_next_step_ends_the_window_at_t_last() -> None:
    b = EpisodeBuilder("w3")
    steps(b, 1)
    tool(b, "a", SHORT)  # result of step 2, consumed at step 3
    tool(b, "a", LONG)  # result of step 3, consumed at step 4: contains the short text
    steps(b, 2)
    ev = b.finish(resolved=True)
    d1, d2 = deliveries(ev)
    assert (d1.consuming_call_id, d2.consuming_call_id) == ("w3-c3", "w3-c4")
    ctx = ctx_of(ev)
    # t' = 4 > t_last = 3: the short window ends at t' - 1 = 3; the long copy owns 4..T
    assert windows(ctx) == {"w3-d1": [(3, 3)], "w3-d2": [(4, 5)]}


def test_windows_same_step_delivery_adding_text_shares_the_step() -> None:
    b = EpisodeBuilder("w4")
    b.host_block("short", "Note:\n- " + SHORT, [entry("a", SHORT, version="1")])
    b.host_block("long", "Details:\n- " + LONG, [entry("a", LONG, version="2")])
    steps(b, 3)
    b.drop_block("long")
    ctx = ctx_of(b)
    # both copies of item a are consumed at step 1; the long one (processed second, t' = 1 =
    # t_last of the short span) contains the short text and adds text: the short window ends at
    # the shared step and the long window includes it. Later restated copies each start a new
    # span (a change ends the current span of the item, A.1.4) but add nothing beyond the visible
    # copies: resident, empty windows.
    assert windows(ctx) == {
        "w4-d1": [(1, 1)],
        "w4-d2": [(1, 3)],
        "w4-d3": [None],
        "w4-d4": [None],
        "w4-d5": [None],
        "w4-d6": [None],
    }


def test_windows_same_step_boundary_equal_to_t_last() -> None:
    b = EpisodeBuilder("w5")
    b.host_block("short", "Note:\n- " + SHORT, [entry("a", SHORT, version="1")])
    steps(b, 1)
    b.host_block("long", "Details:\n- " + LONG, [entry("a", LONG, version="2")])
    b.drop_block("short")
    steps(b, 2)
    ctx = ctx_of(b)
    # S1 = short at step 1 only; S2 = long from step 2: boundary t' = 2 > t_last = 1
    assert windows(ctx) == {"w5-d1": [(1, 1)], "w5-d2": [(2, 3)]}
    b = EpisodeBuilder("w5b")
    b.host_block("short", "Note:\n- " + SHORT, [entry("a", SHORT, version="1")])
    steps(b, 1)
    b.host_block("long", "Details:\n- " + LONG, [entry("a", LONG, version="2")])
    steps(b, 1)
    b.drop_block("short")
    steps(b, 1)
    ctx = ctx_of(b)
    # short: steps 1-2 (t_last = 2); long first consumed at 2 = t_last: short ends at 2 and the
    # long copy, which adds text, includes the shared step
    assert windows(ctx) == {"w5b-d1": [(1, 2)], "w5b-d3": [(2, 3)]}


def test_windows_spans_starting_before_t_last_are_not_boundaries() -> None:
    b = EpisodeBuilder("w6")
    b.host_block("short", "Note:\n- " + SHORT, [entry("a", SHORT, version="1")])
    steps(b, 1)
    tool(b, "a", LONG)  # consumed at step 3 while the short block is restated through step 5
    steps(b, 3)
    ctx = ctx_of(b)
    # Grouping (A.1.4) ends the short span at step 3, when the long copy arrives (t' = t_last).
    assert windows(ctx)["w6-d1"] == [(1, 3)]
    # If the short span is continued through step 5, the long span (t' = 3 < t_last = 5) is not a
    # boundary and the short window runs to the episode end.
    an = analyze_episode(record(b.finish(resolved=True)))
    spans = group_spans(an)
    s1 = spans[0]
    later_short = [s for s in spans[1:] if s.first.d.form == "task_recall"]
    for s in later_short:
        s1.deliveries.extend(s.deliveries)
        spans.remove(s)
    assert s1.last_step == 5
    credit_windows(an, spans)
    assert s1.windows == [(1, 5)]


def test_windows_unknown_exposure_any_later_delivery_is_a_boundary() -> None:
    b = EpisodeBuilder("w7")
    tool(b, "a", LONG)  # consumed at 2
    steps(b, 2)
    tool(b, "a", OTHER)  # unrelated text of the same item: not a boundary for verified text
    steps(b, 2)
    ctx = ctx_of(b)
    assert windows(ctx) == {"w7-d1": [(2, 6)], "w7-d2": [(5, 6)]}
    ev = b.finish(resolved=True)
    deliveries(ev)[1].entries[0].value = None  # the later copy's exposure is now unknown
    ctx = ctx_of(ev)
    assert windows(ctx) == {"w7-d1": [(2, 4)], "w7-d2": [(5, 6)]}


def test_windows_resident_copy_gets_empty_window_and_owner_keeps_credit() -> None:
    b = EpisodeBuilder("w8")
    b.host_block("recall", "Memories:\n- " + LONG, [entry("a", LONG)])
    steps(b, 2)
    tool(b, "a", SHORT, form="search_preview", version="p")  # preview of the visible full text
    steps(b, 2)
    ctx = ctx_of(b)
    s = span_of(ctx, "w8-d5")  # the preview, consumed at step 4 after the block's restatement d4
    assert s.entries[0].window is None and s.entries[0].resident and s.status == "auto_neutral"
    assert span_of(ctx, "w8-d4").span_id == "w8/w8-d1"
    assert windows(ctx)["w8-d1"] == [(1, 5)]  # the owner keeps the credit to the end


def test_windows_full_read_ends_preview_window_just_before_it() -> None:
    b = EpisodeBuilder("w9")
    b.step(
        "search",
        "memory search proxy",
        f"card-7: {SHORT}",
        tool_memory=([entry("card-7", SHORT, version="p", display_key="card-7")], "search_preview"),
    )
    b.step(
        "open card",
        "memory read card-7",
        f"# card-7\n{LONG}",
        tool_memory=([entry("card-7", LONG, version="full")], "full_card"),
    )
    steps(b, 3)
    ctx = ctx_of(b)
    # preview consumed at 2, full read at 3
    assert windows(ctx) == {"w9-d1": [(2, 2)], "w9-d2": [(3, 5)]}


def test_windows_selected_full_read_is_not_a_resident_copy() -> None:
    b = EpisodeBuilder("w10")
    b.step(
        "open card",
        "memory read card-7",
        f"# card-7\n{LONG}",
        tool_memory=([entry("card-7", LONG, version="full")], "full_card"),
    )
    steps(b, 1)
    # same card read again through an explicit selection, in a different wrapper, while visible
    b.step(
        "open again",
        "memory read card-7",
        f"== card-7 ==\n{LONG}",
        tool_memory=([entry("card-7", LONG, version="full")], "full_card"),
    )
    steps(b, 1)
    # and the same text arriving without a selection: resident
    b.step(
        "search",
        "memory search proxy",
        f"hit: {LONG}",
        tool_memory=([entry("card-7", LONG, version="full")], "search_result"),
    )
    steps(b, 1)
    ctx = ctx_of(b)
    w = windows(ctx)
    assert w["w10-d2"] == [(4, 6)]
    assert w["w10-d1"] == [(2, 3)]
    assert w["w10-d3"] == [None]


def test_windows_narrower_or_different_text_leaves_earlier_window_open() -> None:
    b = EpisodeBuilder("w11")
    tool(b, "a", LONG)  # consumed at 2
    steps(b, 1)
    b.retract([2, 3])  # the long copy leaves the input
    tool(b, "a", SHORT)  # narrower copy, consumed at 4: not resident (earlier copy gone)
    steps(b, 2)
    ctx = ctx_of(b)
    assert windows(ctx) == {"w11-d1": [(2, 5)], "w11-d2": [(4, 5)]}  # overlapping windows


def test_windows_independent_entries_and_unrelated_deliveries() -> None:
    b = EpisodeBuilder("w12")
    b.step(
        "search",
        "memory search",
        f"[a] {SHORT}\n[b] {OTHER}",
        tool_memory=([entry("a", SHORT), entry("b", OTHER)], "search_result"),
    )
    steps(b, 1)
    tool(b, "z", "An unrelated note about the changelog format.")
    steps(b, 1)
    b.retract([2, 3])
    tool(b, "a", LONG)
    steps(b, 1)
    ctx = ctx_of(b)
    w = windows(ctx)
    assert w["w12-d1"] == [(2, 5), (2, 6)]  # a ends before its later copy; b keeps its window
    assert w["w12-d2"] == [(4, 6)] and w["w12-d3"] == [(6, 6)]


def test_windows_unknown_same_step_copy_starts_after_shared_step() -> None:
    b = EpisodeBuilder("w13")
    b.host_block("first", "Note:\n- " + SHORT, [entry("a", SHORT, version="1")])
    steps(b, 1)
    b.host_block("second", "Other:\n- " + OTHER, [entry("a", OTHER, version="2")])
    b.drop_block("first")
    steps(b, 2)
    ev = b.finish(resolved=True)
    ds = deliveries(ev)
    # put the second block's first delivery into step 1's input as an unknown-exposure copy
    ds[1].consuming_call_id = "w13-c1"
    ds[1].entries[0].value = None
    ds[1].placements = [p.model_copy(deep=True) for p in ds[0].placements]
    ds[1].placements[0].slot = "other_slot"
    ctx = ctx_of(ev)
    s1 = span_of(ctx, "w13-d1")
    s2 = span_of(ctx, "w13-d2")
    assert s1.entries[0].window == (1, 1)  # either exposure unknown: boundary at t' = t_last
    assert s2.entries[0].window == (2, 2)  # adds no verified text: starts after the shared step
    assert span_of(ctx, "w13-d3").entries[0].window == (3, 3)  # and ends before the next copy


def test_windows_reset_at_episode_boundaries() -> None:
    b1 = EpisodeBuilder("w14a")
    b1.host_block("recall", "Memories:\n- " + LONG, [entry("a", LONG)])
    steps(b1, 3)
    b2 = EpisodeBuilder("w14b")
    tool(b2, "a", SHORT)
    steps(b2, 2)
    c1, c2 = ctx_of(b1), ctx_of(b2)
    assert windows(c1) == {"w14a-d1": [(1, 3)]}
    # the same item's still-"visible" copy in another episode makes nothing resident here
    assert windows(c2) == {"w14b-d1": [(2, 3)]}


def test_windows_same_step_identical_copies_split_the_shared_step() -> None:
    """A.1.5 "Same-step deliveries" with A.2.1 "Same-input copies do not establish prior
    exposure": a host block and a search result carry the same text into one call. The earlier
    copy (recorded first) keeps the shared step; the later one adds nothing, so its window starts
    after that step. Neither is a resident copy of the other, so both spans are judged."""
    b = EpisodeBuilder("w15")
    steps(b, 1)
    tool(b, "a", SHORT, text=f"- {SHORT}")  # a search result of step 2, consumed at step 3
    b.host_block("recall", "Recalled:\n- " + SHORT, [entry("a", SHORT)])  # also in call 3
    steps(b, 1)  # 3: consumes both copies
    b.drop_block("recall")
    steps(b, 2)
    ctx = ctx_of(b)
    host, search = span_of(ctx, "w15-d1"), span_of(ctx, "w15-d2")
    assert host.first_step == search.first_step == 3
    # the host copy is recorded first (system message before the tool result)
    assert host.entries[0].window == (3, 3) and not host.entries[0].resident
    assert search.entries[0].window == (4, 5) and not search.entries[0].resident
    assert host.status == search.status == "eligible"
    assert [(c.delivery_id, c.visibility) for c in search.earlier_copies] == [("w15-d1", "same_input")]


def test_windows_same_step_copy_adding_an_identifier_includes_the_shared_step() -> None:
    """A.1.5: "The later copy includes the shared step when it adds verified text or a newly
    exposed identifier". Same text, but the later copy shows the item's display key."""
    b = EpisodeBuilder("w16")
    steps(b, 1)
    tool(b, "a", SHORT, text=f"[card-9] {SHORT}", display_key="card-9")
    b.host_block("recall", "Recalled:\n- " + SHORT, [entry("a", SHORT)])
    steps(b, 1)
    b.drop_block("recall")
    steps(b, 2)
    ctx = ctx_of(b)
    assert span_of(ctx, "w16-d1").entries[0].window == (3, 3)
    assert span_of(ctx, "w16-d2").entries[0].window == (3, 5)


def test_windows_partly_visible_copy_keeps_only_its_surviving_prefix() -> None:
    """A.2.1: "Visibility is checked against surviving proven placements, retaining only the
    exposed prefix when a copy is partly visible." The host cuts its recall block at a length
    limit from step 3 on; the cut copy adds nothing beyond the surviving prefix of the earlier
    full copy, so it is resident (empty window) and the full copy keeps the credit. A search
    result that brings the whole text back adds text beyond that prefix: not resident."""
    cut = LONG[:40]
    b = EpisodeBuilder("w17")
    b.host_block("recall", "Memories:\n- " + LONG, [entry("a", LONG)])
    steps(b, 2)
    b.host_block("recall", "Memories:\n- " + cut, [entry("a", LONG)])  # clipped exposure
    steps(b, 1)  # 3
    tool(b, "a", LONG, text=f"- {LONG}")  # consumed at 5
    steps(b, 2)
    ctx = ctx_of(b)
    clipped = span_of(ctx, "w17-d3")
    assert clipped.entries[0].exposure == "clipped"
    assert clipped.entries[0].resident and clipped.entries[0].window is None
    assert clipped.status == "auto_neutral"
    full_again = span_of(ctx, "w17-d6")
    assert not full_again.entries[0].resident and full_again.entries[0].window == (5, 6)
    # the first copy is still listed as visible (by its surviving prefix), which does not hold
    # the whole text of the later full copy
    first = [c for c in full_again.earlier_copies if c.delivery_id == "w17-d1"]
    assert [(c.visibility, c.contains_target) for c in first] == [("visible", False)]
    assert span_of(ctx, "w17-d1").entries[0].window == (1, 4)


def test_windows_selection_by_displayed_key_right_after_the_first_step() -> None:
    """A.1.5: the resident rule "does not apply to a separately recorded delivery that a proven
    selection retrieved". The agent's first action names the card by the key the recall shows
    (not by its item id), among other host text that does not show it; the read it gets back is
    a selection, not a resident copy, so it owns the credit from its consuming step (S2) on."""
    card = "[tz-note] " + SHORT
    b = EpisodeBuilder("w20")
    b.host_block(
        "profile", "Profile:\n- prefers small diffs", [entry("p", "prefers small diffs")], form="persona"
    )
    b.host_block("recall", "Memories:\n- " + card, [entry("m-17", SHORT, display_key="tz-note")])
    b.step(
        "open the note",
        "memory get tz-note",
        card,
        tool_memory=([entry("m-17", SHORT, display_key="tz-note")], "full_card"),
    )
    steps(b, 2)
    ctx = ctx_of(b)
    (read,) = [s for s in ctx.spans if s.form == "full_card"]
    assert read.first_step == 2
    assert [e.window for e in read.entries] == [(2, 3)] and read.status == "eligible"


def test_windows_host_copy_stays_resident_even_when_the_agent_names_it() -> None:
    """A.1.5: a host-scheduled copy that adds nothing to a visible copy is resident (empty window,
    the earlier owner keeps the credit), whatever the previous action mentioned: only an
    agent-directed read reached through a selection is exempt."""
    card = "[tz-note] " + SHORT
    b = EpisodeBuilder("w21")
    b.host_block("recall", "Memories:\n- " + card, [entry("m-17", SHORT, display_key="tz-note")])
    b.step("look for it", "grep -rn tz-note notes/", "nothing")
    b.host_block("notes", "Notes:\n- " + card, [entry("m-17", SHORT, display_key="tz-note")])
    steps(b, 2)
    ctx = ctx_of(b)
    notes = [s for s in ctx.spans if s.first_step == 2]
    assert notes and all(e.window is None for s in notes for e in s.entries)
    assert {s.status for s in notes} == {"auto_neutral"}
    (recall,) = [s for s in ctx.spans if s.first_step == 1]
    assert [e.window for e in recall.entries] == [(1, 3)]
