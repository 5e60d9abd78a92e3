"""Property tests (hypothesis) over random small episodes: windows never start before the span's
first consuming step and stay inside the episode; every delivery belongs to exactly one span;
building twice gives identical results."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_context_helpers import record

from memuse_core.builder import EpisodeBuilder, entry
from memuse_core.rules.context import build_episode_context

VALUES = {
    "a": [
        "Use isoparse for trailing Z timestamps.",
        "Use isoparse for trailing Z timestamps. Needs dateutil>=2.7.",
    ],
    "b": ["Run tests with -p no:cacheprovider.", "Run tests"],
    "c": ["The CI image lacks libxml2-dev."],
}

op = st.one_of(
    st.tuples(st.just("step")),
    st.tuples(st.just("tool"), st.sampled_from(sorted(VALUES)), st.integers(0, 1), st.booleans()),
    st.tuples(
        st.just("block"),
        st.sampled_from(["x", "y"]),
        st.lists(st.sampled_from(sorted(VALUES)), max_size=2),
        st.integers(0, 1),
    ),
    st.tuples(st.just("drop"), st.sampled_from(["x", "y"])),
    st.tuples(st.just("retract"), st.integers(0, 30)),
    st.tuples(st.just("fail")),
)


def make(ops) -> list:
    b = EpisodeBuilder("prop")
    n = 0
    for o in ops:
        kind = o[0]
        if kind == "step":
            b.step("w", f"cmd {n}", f"out {n}")
        elif kind == "tool":
            _, item, vi, known = o
            v = VALUES[item][vi % len(VALUES[item])]
            e = entry(item, v, version=str(vi))
            if not known:
                e.value = None
            b.step("m", f"memory search {item}", f"[{item}] {v}", tool_memory=([e], "search_result"))
        elif kind == "block":
            _, name, items, vi = o
            es = [entry(i, VALUES[i][vi % len(VALUES[i])], version=str(vi)) for i in items]
            b.host_block(name, f"{name.upper()}:\n" + "\n".join(f"- {e.value}" for e in es), es)
        elif kind == "drop":
            b.drop_block(o[1])
        elif kind == "retract":
            if len(b.history) > 3:
                pos = 2 + o[1] % (len(b.history) - 2)
                b.retract([pos])
        elif kind == "fail":
            b.failed_call()
        n += 1
    b.step("end", "true", "")
    return b.finish(resolved=True)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(op, min_size=1, max_size=14))
def test_properties_windows_and_membership(ops) -> None:
    events = make(ops)
    ctx = build_episode_context(record(events))
    T = record(events).T
    ids = [d.delivery_id for d in ctx.deliveries]
    members = [did for s in ctx.spans for did in s.delivery_ids]
    assert sorted(members) == sorted(ids) and len(set(members)) == len(members)
    for d in ctx.deliveries:
        s = [s for s in ctx.spans if d.delivery_id in s.delivery_ids]
        assert len(s) == 1 and d.span_id == s[0].span_id
    for s in ctx.spans:
        assert s.span_id == f"prop/{s.delivery_ids[0]}"
        assert s.chars == sum(d.chars for d in ctx.deliveries if d.span_id == s.span_id)
        for e in s.entries:
            if e.window is not None:
                assert s.first_step is not None
                assert s.first_step <= e.window[0] <= e.window[1] <= T
        if s.status == "eligible":
            assert any(e.window is not None for e in s.entries)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(op, min_size=1, max_size=12))
def test_properties_build_is_deterministic(ops) -> None:
    events = make(ops)
    a = build_episode_context(record(events)).model_dump()
    b = build_episode_context(record(events)).model_dump()
    assert a == b
