"""The rules judge's step lookups (`judge.rules_index.StepIndex`) find exactly the steps a scan of
every step's own text finds: the lookups behind A.2.2's "a command uses the entry's content", "the
agent names it" and "a recorded result states it" must not change what the judge decides.

Hand-made step texts with the tricky cases: a needle inside a longer word, at the edge of a step
(where the joined text puts two steps side by side), next to punctuation, in another case, after
characters whose lowercase form is longer (İ) or not ASCII, repeated, empty, and steps without
text or that are memory retrievals."""

from __future__ import annotations

import random

from memuse_core.judge.rules_index import StepIndex, in_text
from memuse_core.judge.trail import StepView


def _step(
    t: int, said: str = "", commands: tuple[str, ...] = (), saw: str = "", retrieves: bool = False
) -> StepView:
    return StepView(t=t, said=said, commands=commands, saw=saw, retrieves=retrieves)


STEPS = {
    1: _step(
        1,
        "Maybe the cache is stale.",
        ("pytest tests/test_cache.py -q",),
        "1 failed: CacheError in cache_get",
    ),
    2: _step(2, "", ("sed -i 's/x/y/' src/cache_util.py",), ""),
    3: _step(
        3, "Recall the memory card: use cache.clear()", ("memory_search cache",), "Cache hit", retrieves=True
    ),
    4: _step(
        4, "İstanbul straße ÉCOLE cachecache", ("grep -n cache src/cache.py", "ls"), "İstanbul Straße\nCACHE."
    ),
    5: _step(5, "cache", ("cache",), "cache"),
    6: _step(6, "end.", (), "   \n"),
    8: _step(
        8, "(cache), [stale]; cache-key!", ("python -m pytest -k 'cache and not slow'",), "stale: cache-key"
    ),
}
NEEDLES = [
    "cache",
    "Cache",
    "CACHE",
    "ache",
    "cachecache",
    "e.\x00c",  # never in a needle the judge looks up: a NUL, here only to pin the step boundary
    "stale",
    "stale.",
    "[stale]",
    "cache-key",
    "istanbul",
    "i̇stanbul",
    "straße",
    "école",
    "ÉCOLE",
    "src/cache.py",
    "src/cache_util.py",
    "tests/test_cache.py",
    "cache_util.py",
    "cache_get",
    "memory",
    "emor",
    "y/'",
    "-q",
    "zzz",
    "",
]


def _scan_said(steps: dict[int, StepView], probe: str) -> frozenset[int]:
    return frozenset(t for t, s in steps.items() if s.said and probe in s.said)


def _scan_results(steps: dict[int, StepView], probe: str) -> frozenset[int]:
    return frozenset(
        t for t, s in steps.items() if s.saw.strip() and not s.retrieves and probe in s.saw.lower()
    )


def _scan_commands(steps: dict[int, StepView], tok: str) -> tuple[int, ...]:
    return tuple(sorted(t for t, s in steps.items() if s.commands and in_text(s.did, tok)))


def _check(steps: dict[int, StepView], needles: list[str]) -> None:
    idx = StepIndex(steps)
    for _ in range(2):  # the second round answers from the lookups' memo
        for n in needles:
            assert idx.in_said(n) == _scan_said(steps, n), n
            if "\x00" not in n:
                assert idx.in_results(n) == _scan_results(steps, n), n
            assert idx.in_commands(n) == _scan_commands(steps, n), n


def test_lookups_find_what_a_scan_of_each_step_finds() -> None:
    _check(STEPS, NEEDLES)
    idx = StepIndex(STEPS)
    # the cases spelled out: inside a word, at a step boundary, case, a memory retrieval's result
    assert idx.in_said("ache") == {1, 3, 4, 5, 8}
    assert idx.in_said("e.\x00c") == frozenset()  # "...stale." of S1 and "Recall" of S3 never join
    assert idx.in_results("cache") == {1, 4, 5, 8}  # S3 is a retrieval; S6 has blank results
    assert idx.in_results("Cache") == frozenset()  # results are compared lowercased
    # a whole token only: not inside tests/test_cache.py (S1) or src/cache_util.py (S2)
    assert idx.in_commands("cache") == (3, 4, 5, 8)
    assert idx.in_commands("src/cache.py") == (4,)
    assert idx.in_commands("cache_util.py") == (2,)


def test_lookups_match_the_scan_on_generated_texts() -> None:
    rnd = random.Random(14)
    alphabet = [
        "cache",
        "Cache",
        "ache",
        " ",
        "\n",
        ".",
        "-",
        "_",
        "/",
        "İ",
        "ß",
        "key",
        "x",
        "src/",
        ".py",
        "'",
    ]
    for _ in range(40):
        steps = {}
        for t in range(1, rnd.randint(1, 9)):
            if rnd.random() < 0.15:
                continue  # a gap in the step numbers
            parts = ["".join(rnd.choices(alphabet, k=rnd.randint(0, 12))) for _ in range(3)]
            steps[t] = _step(
                t, parts[0], tuple(x for x in parts[1].split("\n") if x), parts[2], rnd.random() < 0.2
            )
        _check(steps, ["cache", "ache", "ca", "key", "e_k", "src/cache.py", "i̇", "ß", "e.", "", "xx"])


def test_result_hits_count_exactly_where_a_step_can_qualify() -> None:
    """`result_hits` may stop counting a step that can no longer reach `need`; every step that
    does reach it is counted exactly, as a scan of every step's results counts it."""
    rnd = random.Random(3)
    vocab = ["cache", "stale", "retry", "timeo", "conne", "pool", "istan", "straß", "zzzzz"]
    for _ in range(60):
        steps = {
            t: _step(
                t, saw=" ".join(rnd.choices(vocab + ["Cache.", "(retry)", "İstanbul"], k=rnd.randint(0, 8)))
            )
            for t in range(1, rnd.randint(2, 10))
        }
        probes = rnd.choices(vocab, k=rnd.randint(1, 8))  # repeats count twice, as in the judge
        full = {t: sum(1 for p in probes if p in s.saw.lower()) for t, s in steps.items() if s.saw.strip()}
        for slack in range(3):
            for need in (0.8 * len(probes), float(len(probes)), 1.0, 0.0):
                got = StepIndex(steps).result_hits(probes, need, slack)
                # what the judge reads from it: the steps whose count plus slack reaches `need`
                assert {t: n for t, n in got.items() if n + slack >= need} == {
                    t: n for t, n in full.items() if n and n + slack >= need
                }
