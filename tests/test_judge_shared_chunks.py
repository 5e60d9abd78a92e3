"""The shared work queue of a rules batch over worker processes (`judge.batch.shared_chunks`):
whole episodes in order, each chunk an equal share of the spans left (guided self-scheduling),
no chunk below the minimum but the ones a small batch needs, and every worker gets work."""

from __future__ import annotations

import random

import pytest

from memuse_core.judge.batch import CHUNK_EPISODES, SHARED_MIN_SPANS, shared_chunks


def _pairs(spans_per_episode: list[int]) -> list[tuple[str, str]]:
    return [(f"e{e:04d}s{k}", f"e{e:04d}") for e, n in enumerate(spans_per_episode) for k in range(n)]


def _episodes(chunk: list[tuple[str, str]]) -> set[str]:
    return {e for _, e in chunk}


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("workers", [1, 2, 3])
def test_chunks_keep_order_and_whole_episodes_and_shrink_towards_the_end(seed, workers):
    rnd = random.Random(seed)
    pairs = _pairs([rnd.choice([1, 1, 2, 3, 8]) for _ in range(rnd.randint(300, 900))])
    out = shared_chunks(pairs, workers)
    most = min(CHUNK_EPISODES, -(-len({e for _, e in pairs}) // workers))
    assert [p for c in out for p in c] == pairs  # every span once, in order
    seen: set[str] = set()
    for c in out:
        eps = _episodes(c)
        assert not eps & seen  # an episode never spans two chunks
        seen |= eps
        assert len(eps) <= most
    left = len(pairs)
    for c in out[:-1]:
        share = max(SHARED_MIN_SPANS, -(-left // workers))
        # a chunk stops at its share (or at its most episodes), within one episode of it
        assert len(c) >= share or len(_episodes(c)) == most
        assert len(c) - share < 8
        left -= len(c)
    assert len(out[-1]) >= SHARED_MIN_SPANS  # no small remainder chunk


def test_two_workers_get_few_chunks_and_a_small_last_one():
    # episodes of 1-10 spans: shares are counted in spans, so the last chunks are small in spans
    pairs = _pairs([1 + (i * 7) % 10 for i in range(700)])
    out = shared_chunks(pairs, 2)
    assert len(out) <= 12
    assert len(out[-1]) < 2 * SHARED_MIN_SPANS + 10
    assert len(out[-1]) < len(out[0]) / 4


def test_a_small_batch_gives_every_worker_a_chunk():
    assert [len(c) for c in shared_chunks(_pairs([1] * 10), 2)] == [5, 5]
    assert [len(c) for c in shared_chunks(_pairs([1] * 3), 4)] == [1, 1, 1]
    assert shared_chunks([], 2) == []
