"""Recording validity (MemUse A.1.1 "Placements and proofs", A.1.3): every failure mode turns every
nonempty span with an attributed step of the episode into an error span, with the rule stored;
empty and unassessable spans keep their status."""

from __future__ import annotations

import pytest
from test_context_helpers import ctx_of, deliveries

from memuse_core.builder import EpisodeBuilder, entry
from memuse_core.events import (
    EpisodeEnd,
    HistoryRewrite,
    MemoryDelivery,
    Message,
    ModelCall,
    Placement,
    Proof,
    Retraction,
    text_digest,
)

BLOCK = "Relevant memories:\n- [fix] pin numpy<2 when building the docs"
BLOCK2 = "Skills:\n- run-tests: use tox -e py311"


def episode(**kw) -> EpisodeBuilder:
    b = EpisodeBuilder("chk", **kw)
    b.host_block("recall", BLOCK, [entry("m1", "pin numpy<2 when building the docs")])
    b.host_block("skills", BLOCK2, [entry("s1", "run-tests: use tox -e py311")], form="skill_catalog")
    b.step("look", "ls docs", "conf.py")
    b.step("build", "make html", "ok")
    b.step("fix", "pip install 'numpy<2'", "ok")
    return b


def finish(b: EpisodeBuilder) -> list:
    events = b.finish(resolved=True)
    # an empty delivery and an unbound one: their statuses must survive a failed check
    events.insert(
        -1,
        MemoryDelivery(
            episode_id="chk", delivery_id="chk-empty", consuming_call_id="chk-c1", entries=[], placements=[]
        ),
    )
    events.insert(
        -1,
        MemoryDelivery(
            episode_id="chk", delivery_id="chk-unbound", entries=[entry("u1", "an unbound memory entry")]
        ),
    )
    return events


def assert_error(events, rule: str, unassessable: tuple[str, ...] = ("chk-unbound",)) -> None:
    ctx = ctx_of(events)
    failed = {c.rule for c in ctx.checks if not c.ok}
    assert rule in failed, failed
    assert not ctx.valid
    for s in ctx.spans:
        if s.delivery_ids == ["chk-empty"]:
            assert s.status == "empty"
        elif s.delivery_ids[0] in unassessable:
            assert s.status == "unassessable"
        else:
            assert s.status == "error", (s.span_id, s.status)
            assert rule in (s.reason or "")


def first(events) -> MemoryDelivery:
    return deliveries(events)[0]


def test_checks_valid_episode_passes() -> None:
    ctx = ctx_of(finish(episode()))
    assert ctx.valid and [c.rule for c in ctx.checks] == ["all"]
    assert {s.status for s in ctx.spans} == {"eligible", "empty", "unassessable"}


def test_checks_proof_missing() -> None:
    ev = finish(episode())
    first(ev).placements[0].proof = None
    assert_error(ev, "proof_missing")


def test_checks_proof_duplicated_same_interval_claimed_twice() -> None:
    ev = finish(episode())
    dup = first(ev).model_copy(deep=True)
    dup.delivery_id = "chk-dup"
    ev.insert(ev.index(first(ev)) + 1, dup)
    assert_error(ev, "proof_duplicated")


def test_checks_proof_duplicated_two_placements_in_one_slot() -> None:
    ev = finish(episode())
    d = first(ev)
    d.placements.append(d.placements[0].model_copy(deep=True))
    assert_error(ev, "proof_duplicated")


@pytest.mark.parametrize(
    "field,value",
    [("message_index", 42), ("message_digest", "0" * 16), ("json_pointer", "/tools/0"), ("start", 3)],
)
def test_checks_proof_invalid(field: str, value) -> None:
    ev = finish(episode())
    p = first(ev).placements[0]
    setattr(p.proof, field, value)
    assert_error(ev, "proof_invalid")


def test_checks_json_pointer_proof_resolves() -> None:
    ev = finish(episode())
    p = first(ev).placements[0]
    p.proof = Proof(json_pointer="/messages/0/content")
    assert ctx_of(ev).valid


def test_checks_proof_not_resolving_to_one_visible_host_message() -> None:
    ev = finish(episode())
    p = first(ev).placements[0]
    p.proof = Proof(message_digest="f" * 16)  # names no message of the input
    assert_error(ev, "proof_unresolved")
    b = EpisodeBuilder("chk", system="Same text.", task="Same text.")
    b.host_block("recall", BLOCK, [entry("m1", "pin numpy<2 when building the docs")], slot="user_prefix")
    b.step("look", "ls", "x")
    ev = finish(b)
    d = first(ev)
    # a digest-only proof naming two identical messages does not resolve to one host
    ev2 = [e for e in ev if not isinstance(e, ModelCall)]
    call = [e for e in ev if isinstance(e, ModelCall)][0]
    call.request.messages = [Message(role="system", content=BLOCK), Message(role="user", content=BLOCK)]
    d.placements[0].proof = Proof(message_digest=text_digest(BLOCK))
    ev2.insert(1, call)
    assert_error(ev2, "host_ambiguous")


@pytest.mark.parametrize("slot", ["tool_result", "user:extra_info/m1", "observation"])
def test_checks_proof_slot_mismatch(slot: str) -> None:
    """A.1.3: every placement must have "exactly one slot-matched proof resolving to one visible
    host message": a block whose slot names a tool or user message but whose proof names the
    system message does not prove its placement."""
    ev = finish(episode())
    first(ev).placements[0].slot = slot
    assert_error(ev, "proof_slot_mismatch")
    detail = next(c.detail for c in ctx_of(ev).checks if c.rule == "proof_slot_mismatch")
    assert repr(slot) in detail and "(system)" in detail


@pytest.mark.parametrize("slot", ["system_suffix", "system:memory_blocks/human", "recall-block", "x"])
def test_checks_proof_slot_matching_or_adapter_named_passes(slot: str) -> None:
    """A slot naming the system message, or an adapter's own name that names no role, passes."""
    ev = finish(episode())
    first(ev).placements[0].slot = slot
    assert ctx_of(ev).valid


def test_checks_tool_slot_in_a_tool_or_user_message_passes() -> None:
    b = EpisodeBuilder("chk")
    b.step(
        "search",
        "memory search",
        "[m] keep it warm",
        tool_memory=([entry("m", "keep it warm")], "search_result"),
    )
    b.step("go", "ls", "x")
    ev = b.finish(resolved=True)
    assert first(ev).placements[0].slot == "tool_result" and ctx_of(ev).valid
    first(ev).placements[0].slot = "system_suffix"  # the proof names the tool message
    ctx = ctx_of(ev)
    assert {c.rule for c in ctx.checks if not c.ok} == {"proof_slot_mismatch"}


def test_checks_placement_text_not_unique_in_host() -> None:
    b = EpisodeBuilder("chk", system="Rules. Relevant memories:")
    b.host_block("recall", "Relevant memories:", [entry("m1", "Relevant memories:")])
    b.step("look", "ls", "x")
    ev = finish(b)
    for d in deliveries(ev):
        if d.placements:
            d.placements[0].proof.start = None
    assert_error(ev, "text_not_unique")


def test_checks_placement_text_not_found_and_shared_host() -> None:
    ev = finish(episode())
    p = first(ev).placements[0]
    p.text = "text that the host message does not contain"
    p.digest = text_digest(p.text)
    p.proof.start = None
    ctx = ctx_of(ev)
    rules = {c.rule for c in ctx.checks if not c.ok}
    # the skills block in the same host message is named together with an unresolved proof
    assert {"text_not_found", "shared_host_unresolved"} <= rules
    assert_error(ev, "text_not_found")


def test_checks_redacted_placement_recovered_or_unverified() -> None:
    ev = finish(episode())
    p = first(ev).placements[0]
    p.size, p.text = len(p.text), None
    assert ctx_of(ev).valid  # offset + size + digest recover the text from the host
    p.size = None
    assert_error(ev, "placement_unverified")


def test_checks_nonempty_delivery_without_placement() -> None:
    ev = finish(episode())
    first(ev).placements = []
    assert_error(ev, "placement_missing")


def test_checks_consuming_call_missing() -> None:
    ev = finish(episode())
    first(ev).consuming_call_id = "chk-ghost"
    assert_error(ev, "consuming_call_missing", unassessable=("chk-unbound", "chk-d1"))


def test_checks_input_gap_unresolvable_delta_base() -> None:
    ev = finish(episode())
    call = [e for e in ev if isinstance(e, ModelCall)][1]
    assert call.request.base_call_id is not None
    call.request.base_call_id = "chk-nowhere"
    assert_error(ev, "input_gap")


def test_checks_input_gap_missing_positions_without_removal() -> None:
    b = episode()
    b.history.pop(2)  # an assistant message vanishes with no retraction recorded
    b.history.pop(2)
    b.step("again", "make html", "ok")
    assert_error(finish(b), "input_gap")


def test_checks_retraction_without_visible_targets() -> None:
    ev = finish(episode())
    ev.insert(-3, Retraction(episode_id="chk", before_call_id="chk-c3", removed=[99]))
    assert_error(ev, "retraction_without_targets")


def test_checks_invalid_retained_prefix() -> None:
    ev = finish(episode())
    ev.insert(-3, HistoryRewrite(episode_id="chk", before_call_id="chk-c3", kept_prefix=50))
    assert_error(ev, "invalid_retained_prefix")


def test_checks_known_removal_is_not_a_gap() -> None:
    b = episode()
    b.retract([2, 3])
    b.step("after", "ls", "x")
    b.rewrite(2, [Message(role="user", content="Summary of earlier work.")])
    b.step("after rewrite", "ls", "x")
    assert ctx_of(finish(b)).valid


def test_checks_missing_task() -> None:
    assert_error(finish(episode(task="")), "task_missing")


def test_checks_unresolved_episode_boundary() -> None:
    ev = [e for e in finish(episode()) if not isinstance(e, EpisodeEnd)]
    assert_error(ev, "episode_boundary_unresolved")


def test_checks_placement_model_kept_verbatim() -> None:
    ctx = ctx_of(finish(episode()))
    s = ctx.spans[0]
    assert isinstance(s.placements[0], Placement) and s.placements[0].text == BLOCK


def test_checks_proof_index_one_past_the_last_input_message() -> None:
    """A.1.1: a proof must resolve to a message of the recorded input; an index equal to the
    number of input messages names none (an invalid proof, not a crash)."""
    ev = finish(episode())
    d = first(ev)
    call = next(e for e in ev if isinstance(e, ModelCall) and e.call_id == d.consuming_call_id)
    assert call.request.base_call_id is None  # the first call carries its whole input
    proof = d.placements[0].proof
    assert proof is not None
    proof.message_index = len(call.request.messages)
    assert_error(ev, "proof_invalid")


def test_checks_digest_only_proof_naming_one_message_resolves() -> None:
    """A.1.1: a proof may identify its host message by digest alone; naming exactly one message
    of the input, it resolves and the episode passes."""
    ev = finish(episode())
    proof = first(ev).placements[0].proof
    assert proof is not None and proof.message_digest is not None
    proof.message_index = None
    proof.json_pointer = None
    ctx = ctx_of(ev)
    assert ctx.valid, [c for c in ctx.checks if not c.ok]


@pytest.mark.parametrize(
    "pointer,index",
    [
        ("/messages", None),
        ("/messages/x/content", None),
        ("/messages/2/content", None),
        ("/messages/1/content", 0),
    ],
    ids=["no-index", "not-a-number", "one-past-the-last", "other-than-message_index"],
)
def test_checks_json_pointer_that_names_no_or_another_message_is_invalid(
    pointer: str, index: int | None
) -> None:
    """A.1.1: a proof's JSON pointer must name one message of the recorded input (the first call
    has 2), the same one as its message_index when both are given."""
    ev = finish(episode())
    proof = first(ev).placements[0].proof
    assert proof is not None
    proof.json_pointer, proof.message_index = pointer, index
    assert_error(ev, "proof_invalid")


@pytest.mark.parametrize("pointer", ["/messages/0", "/messages/0/content"])
def test_checks_json_pointer_to_the_message_or_its_content_resolves(pointer: str) -> None:
    """A.1.1: a pointer to the host message itself, or into it, resolves (no message_index)."""
    ev = finish(episode())
    proof = first(ev).placements[0].proof
    assert proof is not None
    proof.json_pointer, proof.message_index = pointer, None
    ctx = ctx_of(ev)
    assert ctx.valid, [c for c in ctx.checks if not c.ok]


def test_checks_index_only_proof_resolves() -> None:
    """A.1.1: a message index alone is a proof (no digest, pointer or offset needed)."""
    ev = finish(episode())
    first(ev).placements[0].proof = Proof(message_index=0)
    ctx = ctx_of(ev)
    assert ctx.valid, [c for c in ctx.checks if not c.ok]


def test_checks_placement_digest_must_match_its_text_and_a_redacted_text_its_digest() -> None:
    """A.1.1: a recorded placement digest pins the placement text. A verbatim text whose digest
    differs is an invalid proof; a redacted text is recovered from the host only when the host
    interval has the recorded size *and* digest, else the placement stays unverified."""
    ev = finish(episode())
    p = first(ev).placements[0]
    p.digest = text_digest("another text")
    assert_error(ev, "proof_invalid")
    ev = finish(episode())
    p = first(ev).placements[0]
    p.size, p.text, p.digest = len(p.text), None, text_digest("another text")
    assert_error(ev, "placement_unverified")


def test_checks_retraction_position_one_past_the_input_and_rewrite_keeping_all() -> None:
    """A.1.3: a retraction must name positions of the visible input (call 2's input has 4
    messages, so position 4 is none of them); a history rewrite may keep the whole input."""
    ev = finish(episode())
    ev.insert(-3, Retraction(episode_id="chk", before_call_id="chk-c3", removed=[4]))
    assert_error(ev, "retraction_without_targets")
    ev = finish(episode())
    ev.insert(-3, HistoryRewrite(episode_id="chk", before_call_id="chk-c3", kept_prefix=4))
    ctx = ctx_of(ev)
    assert ctx.valid, [c for c in ctx.checks if not c.ok]
