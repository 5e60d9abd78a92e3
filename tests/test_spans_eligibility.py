"""Eligibility (MemUse 3.3 "Eligibility") and delivered volume (A.4.4)."""

from __future__ import annotations

from test_context_helpers import ctx_of, deliveries

from memuse_core.builder import EpisodeBuilder, entry
from memuse_core.events import MemoryDelivery, Placement, Proof

V = "Pin the tzdata package; the container's zoneinfo is stale."


def test_eligibility_each_status() -> None:
    b = EpisodeBuilder("el")
    b.host_block("recall", "Memories:\n- " + V, [entry("v", V)])  # eligible
    b.step("search", "memory search nothing", "No results.", tool_memory=([], "search_result"))  # empty
    b.step(
        "preview",
        "memory search tz",
        "hit: Pin the tzdata package",
        tool_memory=([entry("v", "Pin the tzdata package", version="p")], "search_preview"),
    )  # resident
    b.step("go", "make", "ok")
    events = b.finish(resolved=True)
    events.insert(
        -1, MemoryDelivery(episode_id="el", delivery_id="el-loose", entries=[entry("w", "unbound value")])
    )
    ctx = ctx_of(events)
    status = {s.delivery_ids[0]: s.status for s in ctx.spans}
    assert status["el-d1"] == "eligible"
    assert [s.status for s in ctx.spans if s.form == "search_result"] == ["empty"]
    assert [s.status for s in ctx.spans if s.form == "search_preview"] == ["auto_neutral"]
    assert status["el-loose"] == "unassessable"
    deliveries(events)[0].placements[0].proof = None
    ctx = ctx_of(events)
    by = {s.delivery_ids[0]: (s.status, s.reason) for s in ctx.spans}
    assert by["el-d1"][0] == "error" and "proof_missing" in by["el-d1"][1]
    assert [s.status for s in ctx.spans if s.form == "search_result"] == ["empty"]
    assert [s.status for s in ctx.spans if s.form == "search_preview"] == ["error"]
    assert by["el-loose"][0] == "unassessable"


def test_volume_counts_placement_chars_of_all_deliveries_including_restatements() -> None:
    b = EpisodeBuilder("vol")
    text = "Memories:\n- " + V
    b.host_block("recall", text, [entry("v", V)])
    for k in range(5):
        b.step(f"s{k}", "ls", "x")
    ctx = ctx_of(b)
    s = ctx.spans[0]
    assert s.chars == 5 * len(text) and s.est_tokens == (5 * len(text)) // 4
    assert sum(d.chars for d in ctx.deliveries) == s.chars


def test_volume_redacted_placement_uses_recorded_size_or_zero() -> None:
    b = EpisodeBuilder("vol2")
    steps = [b.step("s", "ls", "x") for _ in range(2)]
    assert steps == [1, 2]
    events = b.finish(resolved=True)
    events[-1:-1] = [
        MemoryDelivery(
            episode_id="vol2",
            delivery_id="r1",
            entries=[entry("v", V)],
            placements=[
                Placement(slot="x", text=None, size=120, digest="0" * 16, proof=Proof(message_index=0))
            ],
        ),
        MemoryDelivery(
            episode_id="vol2",
            delivery_id="r2",
            entries=[entry("v", V)],
            placements=[Placement(slot="x", text=None, proof=Proof(message_index=0))],
        ),
    ]
    ctx = ctx_of(events)
    assert {d.delivery_id: d.chars for d in ctx.deliveries} == {"r1": 120, "r2": 0}


def test_one_nonempty_window_makes_the_span_eligible() -> None:
    """3.3: the judge receives a span when "at least one of its entries has a nonempty credit
    window"; only a span whose entries *all* have empty windows is automatic neutral (A.4.1).
    A search returns two entries: a copy of the recall still visible in the system message
    (resident: empty window, A.1.5) and a new one (window to the episode end)."""
    w = "Run the tests with TZ=UTC; the CI machine uses UTC."
    b = EpisodeBuilder("mix")
    b.host_block("recall", "Memories:\n- " + V, [entry("v", V)])
    b.step("look", "ls", "src")
    b.step(
        "search",
        "memory search tz",
        V + "\n" + w,
        tool_memory=([entry("v", V), entry("w", w)], "search_result"),
    )
    b.step("go", "TZ=UTC make test", "ok")
    ctx = ctx_of(b.finish(resolved=True))
    (mixed,) = [s for s in ctx.spans if s.form == "search_result"]
    windows = {e.item_id: e.window for e in mixed.entries}
    assert windows["v"] is None and windows["w"] is not None  # one empty, one open window
    assert mixed.status == "eligible"
    # the same search with only the resident copy: every window empty -> automatic neutral
    b = EpisodeBuilder("res")
    b.host_block("recall", "Memories:\n- " + V, [entry("v", V)])
    b.step("look", "ls", "src")
    b.step("search", "memory search tz", V, tool_memory=([entry("v", V)], "search_result"))
    b.step("go", "make test", "ok")
    ctx = ctx_of(b.finish(resolved=True))
    (alone,) = [s for s in ctx.spans if s.form == "search_result"]
    assert [e.window for e in alone.entries] == [None] and alone.status == "auto_neutral"
