"""The Figure 2 scenario of MemUse (3.3 "Credit windows"), reproduced exactly:

(a) A is delivered at steps 2 and 4 and both deliveries share S1; after A is removed from the
    input, its re-entry starts S4 with a fresh prior context;
(b) the shorter copy A' adds no text or identifier beyond the visible A, so A' in S3 gets an
    empty window while A in S1 keeps the credit through step 9;
(c) S1, S2 and S4 are judged (eligible); S3 gets the rule-derived automatic neutral label.
"""

from __future__ import annotations

from test_context_helpers import ctx_of

from memuse_core.builder import EpisodeBuilder, entry

A = "Use dateutil.parser.isoparse for timestamps with a trailing Z; fromisoformat rejects it before 3.11."
A_SHORT = "Use dateutil.parser.isoparse for timestamps with a trailing Z"
B = "Run the date tests with pytest tests/test_dates.py -q."


def figure2():
    b = EpisodeBuilder("fig2", task="Fix the timestamp parser")
    b.step("search", "memory search dates", f"[A] {A}", tool_memory=([entry("A", A)], "search_result"))  # 1
    b.step("search", "memory search tests", f"[B] {B}", tool_memory=([entry("B", B)], "search_result"))  # 2
    b.step(
        "search again", "memory search dates", f"[A] {A}", tool_memory=([entry("A", A)], "search_result")
    )  # 3
    b.step("look", "cat src/dates.py", "def parse(s): ...")  # 4
    b.step(
        "preview",
        "memory preview dates",
        f"preview: {A_SHORT}",
        tool_memory=([entry("A", A_SHORT, version="preview")], "search_preview"),
    )  # 5
    b.step("edit", "sed -i s/fromisoformat/isoparse/ src/dates.py", "")  # 6
    b.step("test", "pytest tests/test_dates.py", "1 failed")  # 7
    b.retract([2, 3, 6, 7])  # the harness drops both earlier copies of A (and their calls)
    b.step("inspect", "git diff", "diff --git ...")  # 8
    b.step(
        "search once more", "memory search dates", f"[A] {A}", tool_memory=([entry("A", A)], "search_result")
    )  # 9
    b.step("edit", "sed -i s/x/y/ src/dates.py", "")  # 10
    b.step("test", "pytest tests/test_dates.py", "2 passed")  # 11
    b.final("Done.")  # 12
    return ctx_of(b)


def test_figure2_spans_windows_and_routing() -> None:
    ctx = figure2()
    assert ctx.valid
    s1, s2, s3, s4 = ctx.spans
    # (a) A at steps 2 and 4 share S1; re-entry after removal starts S4
    assert (s1.first_step, s1.last_step, s1.delivery_ids, s1.restatements) == (
        2,
        4,
        ["fig2-d1", "fig2-d3"],
        1,
    )
    assert (s2.first_step, [e.item_id for e in s2.entries]) == (3, ["B"])
    assert (s3.first_step, [e.item_id for e in s3.entries]) == (6, ["A"])
    assert (s4.first_step, s4.delivery_ids) == (10, ["fig2-d5"])
    # (b) A' gets an empty window; A in S1 keeps the credit through step 9
    assert s3.entries[0].window is None and s3.entries[0].resident
    assert s1.entries[0].window == (2, 9)
    assert s2.entries[0].window == (3, 12)
    assert s4.entries[0].window == (10, 12)
    # (c) routing
    assert [s.status for s in ctx.spans] == ["eligible", "eligible", "auto_neutral", "eligible"]


def test_figure2_reentry_has_a_fresh_prior_context() -> None:
    ctx = figure2()
    s1, _, _, s4 = ctx.spans
    assert [p.message_index for p in s1.prior_sources] == list(range(4))
    b4 = "\n".join(p.text for p in s4.prior_sources)
    # the removed copies of A are not in B_S4, the later (still visible) preview A' and B are
    assert f"[A] {A}" not in b4 and f"preview: {A_SHORT}" in b4 and B in b4
    # S4's own placement is cut out of its host message, kept as a marker
    marker = [p for p in s4.prior_sources if p.memory_only]
    assert len(marker) == 1 and marker[0].text == "" and marker[0].role == "tool"
    # the removed steps stay readable as evidence but are outside B_S4
    assert s4.removed_steps == [1, 3]
    # earlier copies of A for the judge
    vis = {(c.delivery_id, c.visibility, c.contains_target) for c in s4.earlier_copies}
    assert vis == {
        ("fig2-d1", "not_visible", True),
        ("fig2-d3", "not_visible", True),
        ("fig2-d4", "visible", False),
    }
    s3 = ctx.spans[2]
    assert {(c.delivery_id, c.visibility) for c in s3.earlier_copies} == {
        ("fig2-d1", "visible"),
        ("fig2-d3", "visible"),
    }
