"""Prior context B_S (MemUse 3.3, A.1.3) and earlier copies (A.2.1)."""

from __future__ import annotations

from test_context_helpers import ctx_of, deliveries, span_of

from memuse_core.builder import EpisodeBuilder, entry
from memuse_core.events import Message

RECALL = "Relevant memories:\n- the settings module is tests.settings"
SKILLS = "Skills:\n- run-tests: tox -e py311"


def two_blocks() -> EpisodeBuilder:
    b = EpisodeBuilder("p1", system="You fix bugs.")
    b.host_block("recall", RECALL, [entry("r", "the settings module is tests.settings")])
    b.host_block("skills", SKILLS, [entry("k", "run-tests: tox -e py311")], form="skill_catalog")
    b.step("look", "ls", "tests/")
    return b


def test_prior_context_cuts_target_intervals_and_keeps_other_deliveries() -> None:
    ctx = ctx_of(two_blocks())
    recall, skills = ctx.spans
    sys_src = recall.prior_sources[0]
    assert RECALL not in sys_src.text and SKILLS in sys_src.text and "You fix bugs." in sys_src.text
    start = len("You fix bugs.\n\n")
    assert sys_src.cut == [(start, start + len(RECALL))] and not sys_src.memory_only
    assert RECALL in skills.prior_sources[0].text and SKILLS not in skills.prior_sources[0].text
    assert [p.pos for p in recall.prior_sources] == [1, 2]  # cited as P1, P2
    assert recall.prior_sources[1].role == "user"


def test_prior_context_memory_only_message_is_a_marker() -> None:
    b = EpisodeBuilder("p2")
    b.step(
        "search",
        "memory search",
        "[m] keep the cache warm",
        tool_memory=([entry("m", "keep the cache warm")], "search_result"),
    )
    b.step("go", "make", "ok")
    s = ctx_of(b).spans[0]
    tool_src = [p for p in s.prior_sources if p.role == "tool"]
    assert len(tool_src) == 1 and tool_src[0].memory_only and tool_src[0].text == ""
    # the assistant message that issued the search is a prior source with its command
    assert any("memory search" in p.text for p in s.prior_sources if p.role == "assistant")


def test_prior_context_is_the_first_consuming_input_of_the_span() -> None:
    b = two_blocks()
    b.step("edit", "vi settings.py", "saved")
    b.step("test", "tox", "ok")
    s = ctx_of(b).spans[0]
    assert s.first_step == 1 and len(s.prior_sources) == 2  # step 1's input: system + task


def test_prior_context_excludes_removed_and_rewritten_steps_which_stay_readable() -> None:
    b = EpisodeBuilder("p3")
    b.step("try A", "python a.py", "error: boom")
    b.step("try B", "python b.py", "ok")
    b.rewrite(2, [Message(role="user", content="Summary: a.py failed, b.py worked.")])
    b.host_block("recall", RECALL, [entry("r", "the settings module is tests.settings")])
    b.step("next", "ls", "x")
    events = b.finish(resolved=True)
    ctx = ctx_of(events)
    s = ctx.spans[0]
    text = "\n".join(p.text for p in s.prior_sources)
    assert "error: boom" not in text and "Summary: a.py failed" in text
    assert s.removed_steps == [1, 2]
    assert ctx.valid


def test_earlier_copies_same_input_and_undetermined() -> None:
    b = EpisodeBuilder("p4")
    b.host_block("one", "One:\n- keep the cache warm", [entry("m", "keep the cache warm", version="1")])
    b.host_block(
        "two",
        "Two:\n- keep the cache warm and small",
        [entry("m", "keep the cache warm and small", version="2")],
    )
    b.step("look", "ls", "x")
    ctx = ctx_of(b)
    s2 = span_of(ctx, "p4-d2")
    assert [(c.delivery_id, c.visibility, c.contains_target) for c in s2.earlier_copies] == [
        ("p4-d1", "same_input", False)
    ]
    ev = b.finish(resolved=True)
    d1 = deliveries(ev)[0]
    d1.consuming_call_id = None  # an unbound earlier copy (recorded before the first call)
    ev.remove(d1)
    ev.insert(1, d1)
    ctx = ctx_of(ev)
    s2 = span_of(ctx, "p4-d2")
    assert [(c.delivery_id, c.visibility) for c in s2.earlier_copies] == [("p4-d1", "undetermined")]


def test_display_key_listed_only_when_exposed_as_standalone_identifier() -> None:
    b = EpisodeBuilder("p5")
    b.host_block(
        "one",
        "Memories:\n- keep the cache warm [mem0:1a2b3c4d]",
        [entry("m", "keep the cache warm", display_key="[mem0:1a2b3c4d]")],
    )
    b.host_block(
        "two",
        "More:\n- prefer small diffs",
        [entry("n", "prefer small diffs", display_key="[mem0:99887766]")],
    )
    b.step("look", "ls", "x")
    ctx = ctx_of(b)
    assert [s.entries[0].display_key for s in ctx.spans] == ["[mem0:1a2b3c4d]", None]


def test_removed_steps_lists_only_the_retracted_step() -> None:
    """A.1.3: B_S is the consuming input as it stands; a step whose messages were retracted is not
    in it (it stays readable as evidence), while earlier steps still in the input are."""
    b = EpisodeBuilder("p6")
    b.step("try A", "python a.py", "ok")
    b.step("try B", "python b.py", "error: boom")
    b.retract([4, 5])  # step 2's response and tool result (system, task, step 1 stay)
    b.host_block("recall", RECALL, [entry("r", "the settings module is tests.settings")])
    b.step("next", "ls", "x")
    ctx = ctx_of(b.finish(resolved=True))
    (s,) = ctx.spans
    assert s.first_step == 3 and s.removed_steps == [2]
    text = "\n".join(p.text for p in s.prior_sources)
    assert "python a.py" in text and "error: boom" not in text


def test_earlier_copies_include_a_copy_recorded_later_in_the_same_input() -> None:
    """A.2.1: "earlier copies are marked as still visible, no longer visible, or arriving in the
    same input", and "same-input copies do not establish prior exposure": the copy in the same
    input is listed as same_input whichever of the two was recorded first."""
    b = EpisodeBuilder("p7")
    b.host_block("one", "One:\n- keep the cache warm", [entry("m", "keep the cache warm", version="1")])
    b.host_block(
        "two",
        "Two:\n- keep the cache warm and small",
        [entry("m", "keep the cache warm and small", version="2")],
    )
    b.step("look", "ls", "x")
    ctx = ctx_of(b)
    s1 = span_of(ctx, "p7-d1")
    assert [(c.delivery_id, c.visibility, c.contains_target) for c in s1.earlier_copies] == [
        ("p7-d2", "same_input", True)
    ]


def test_earlier_copies_from_earlier_steps_visible_then_not_visible() -> None:
    """A.2.1: for each target item, earlier copies are marked "still visible" or "no longer
    visible" in the target's consuming input, with whether their text contains the target's."""
    value = "keep the cache warm"
    b = EpisodeBuilder("p8")
    b.step(
        "search", "memory search cache", f"[m] {value}", tool_memory=([entry("m", value)], "search_result")
    )
    b.step("look", "ls", "x")
    b.host_block(
        "recall", "Memories:\n- " + value + " and small", [entry("m", value + " and small", version="2")]
    )
    b.step("go", "make", "ok")
    ctx = ctx_of(b.finish(resolved=True))
    later = span_of(ctx, "p8-d2")
    assert [(c.delivery_id, c.visibility, c.contains_target) for c in later.earlier_copies] == [
        ("p8-d1", "visible", False)
    ]
    b = EpisodeBuilder("p9")
    b.step(
        "search", "memory search cache", f"[m] {value}", tool_memory=([entry("m", value)], "search_result")
    )
    b.step("look", "ls", "x")
    b.retract([3])  # the search result leaves the input
    b.host_block("recall", "Memories:\n- " + value, [entry("m", value, version="2")])
    b.step("go", "make", "ok")
    ctx = ctx_of(b.finish(resolved=True))
    later = span_of(ctx, "p9-d2")
    assert [(c.delivery_id, c.visibility, c.contains_target) for c in later.earlier_copies] == [
        ("p9-d1", "not_visible", True)
    ]


def test_prior_context_keeps_an_unproven_placement_and_marks_only_memory_only_messages() -> None:
    """A.1.3/A.2.1: only the target's *proven* placement intervals are cut out of B_S. A placement
    whose proof does not resolve (its pinned host digest disagrees with the input) stays in B_S as
    recorded text, and a message that is not memory-only is never marked as a memory-only marker."""
    ctx = ctx_of(two_blocks())
    recall, _ = ctx.spans
    assert [p.memory_only for p in recall.prior_sources] == [False, False]
    assert recall.prior_sources[1].cut == []
    events = two_blocks().finish(resolved=True)
    d1 = deliveries(events)[0]
    d1.placements[0].proof.message_digest = "0" * 64  # the pinned host is not the one in the input
    ctx = ctx_of(events)
    recall = span_of(ctx, "p1-d1")
    assert RECALL in recall.prior_sources[0].text and recall.prior_sources[0].cut == []


def test_earlier_copies_never_list_a_later_delivery() -> None:
    """A.2.1 lists *earlier* copies of each target item: a copy delivered at a later step, in
    another input, is not one of them (only the same input's copies count whatever their order)."""
    value = "keep the cache warm"
    b = EpisodeBuilder("p10")
    b.step(
        "search", "memory search cache", f"[m] {value}", tool_memory=([entry("m", value)], "search_result")
    )
    b.step("look", "ls", "x")
    b.host_block("recall", "Memories:\n- " + value, [entry("m", value, version="2")])
    b.step("go", "make", "ok")
    ctx = ctx_of(b.finish(resolved=True))
    assert span_of(ctx, "p10-d1").earlier_copies == []
    assert [c.delivery_id for c in span_of(ctx, "p10-d2").earlier_copies] == ["p10-d1"]


LONG_NOTE = "The flaky date test needs TZ=UTC; set it in tox.ini before running the whole suite again."


def test_partly_visible_copy_whose_block_is_the_entry_alone_keeps_its_surviving_prefix() -> None:
    """A.2.1: "retaining only the exposed prefix when a copy is partly visible", also when the
    exposed text starts the placement (a block that is the entry's value and nothing else). The host
    cuts the block at a length limit; a later search result brings the whole value back: the
    earlier copy is visible by its surviving prefix only, which does not hold the whole value."""
    b = EpisodeBuilder("p11")
    b.host_block("recall", LONG_NOTE, [entry("a", LONG_NOTE)])
    b.step("look", "ls", "x")
    b.host_block("recall", LONG_NOTE[:40], [entry("a", LONG_NOTE)])
    b.step("search", "memory search tz", LONG_NOTE, tool_memory=([entry("a", LONG_NOTE)], "search_result"))
    b.step("go", "make", "ok")
    ctx = ctx_of(b.finish(resolved=True))
    (search,) = [s for s in ctx.spans if s.entries[0].exposure == "full" and s.first_step == 3]
    first = [c for c in search.earlier_copies if c.delivery_id == "p11-d1"]
    assert [(c.visibility, c.contains_target) for c in first] == [("visible", False)]


def test_earlier_copy_with_unknown_exposure_is_visible_while_its_placements_survive() -> None:
    """A.2.1 for a copy whose exposure is unknown (the block paraphrases the item, so no exposed
    text is known): it is visible while every proven placement survives and not visible once none
    does; with no exposed text to compare, containment is judged on its proven placement text."""
    value = "keep the cache warm"
    for dropped, expected in ((False, "visible"), (True, "not_visible")):
        b = EpisodeBuilder("p12")
        b.host_block("one", "One:\n- warm caches help", [entry("m", value)])
        b.step("look", "ls", "x")
        if dropped:
            b.drop_block("one")
        b.step(
            "search",
            "memory search cache",
            f"[m] {value}",
            tool_memory=([entry("m", value)], "search_result"),
        )
        b.step("go", "make", "ok")
        ctx = ctx_of(b.finish(resolved=True))
        assert span_of(ctx, "p12-d1").entries[0].exposure == "unknown"
        later = [s for s in ctx.spans if s.route == "agent"]
        assert len(later) == 1, [s.delivery_ids for s in ctx.spans]
        first = later[0].earlier_copies[0]
        assert (first.delivery_id, first.visibility, first.contains_target) == ("p12-d1", expected, False)
