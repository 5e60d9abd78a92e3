"""Aggregate formulas (MemUse 3.5 "Aggregate scores", Eq. 3-4, A.4.1, A.4.2 "Aggregates",
"Episode coverage", A.4.4 "Recorded call and operation usage", A.5.4 "Task outcomes").

Pure arithmetic over counts the store has summed: every statistic with an empty (or unknown)
denominator is undefined (None), never 0 (A.4.2: "A statistic with an empty denominator is
undefined"). The per-span shares p_a(S) are `rules.verdicts.span_verdict`; their means over the
profiled spans are computed by the store's SQL (`store.metrics`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ..vocab import TRIAGE_PRECEDENCE

YIELD_SCALE = 100.0
"""Benefit and harm yields count entries per 100 profiled spans (3.5, A.4.2)."""
EFFICIENCY_SCALE = 1e6
"""Token efficiency counts beneficial entries per million estimated delivered tokens (3.5)."""
CI_PERCENTILES = (2.5, 97.5)
"""The 95% interval of the paired bootstrap (A.5.4)."""


def _missing(x: Any) -> bool:
    """None, NaN or a missing-value marker (pandas' NA compares to nothing)."""
    try:
        return x is None or bool(x != x)
    except TypeError:
        return True


def ratio(num: float | int | None, den: float | int | None, scale: float = 1.0) -> float | None:
    """num / den * scale, or None (undefined) when the denominator is empty or unknown."""
    if _missing(num) or _missing(den) or den == 0:
        return None
    return float(num) / float(den) * scale  # type: ignore[arg-type]


def recorded_total(total: float, records: int, unknown: int) -> float | None:
    """A sum of recorded usage or cost over `records` calls (or judge attempts), `unknown` of which
    recorded none: None when every one is unknown, else the sum of the known ones. A.4.4:
    unavailable usage and cost stay unknown; A.5.4: calls without reported usage contribute zero
    to a recorded total. The one home of this rule for every table and page. (Within one judgment
    the judge's own calls add up strictly instead, `rules.judgment.add_if_known`: a judgment whose
    calls partly lack usage stores no total.)"""
    return None if records > 0 and unknown >= records else total


def entry_yield(entries: int, profiled_spans: int) -> float | None:
    """Benefit or harm yield: 100 n / |P| entries per 100 profiled spans (A.4.2)."""
    return ratio(entries, profiled_spans, YIELD_SCALE)


def token_efficiency(beneficial: int, est_tokens: int) -> float | None:
    """10^6 n_ben / sum_S T̂_S over every span in scope, restatements and unprofiled spans
    included (3.5, A.4.2)."""
    return ratio(beneficial, est_tokens, EFFICIENCY_SCALE)


def triage_denominator(counts: Mapping[str, int]) -> int:
    """N_triage = N+ + N- + N0 + N? (Eq. 4); automatic neutral spans are in N0."""
    return sum(counts[c] for c in TRIAGE_PRECEDENCE)


def triage_rates(counts: Mapping[str, int]) -> dict[str, float | None]:
    """Each triage label's count over N_triage (Eq. 4); error, unjudged, empty and unassessable
    spans stay out of the denominator."""
    n = triage_denominator(counts)
    return {c: ratio(counts[c], n) for c in TRIAGE_PRECEDENCE}


def sample_sd(values: Sequence[float]) -> float | None:
    """Sample standard deviation (across-run variation, A.5.4); undefined for fewer than two."""
    if len(values) < 2:
        return None
    return float(np.std(values, ddof=1))


def bootstrap_mean_interval(diffs: np.ndarray, replicates: int, seed: int) -> tuple[float, float, float]:
    """The mean of per-task differences and its bootstrap 95% interval (A.5.4): tasks are resampled
    with replacement `replicates` times; the interval takes the 2.5th and 97.5th percentiles of
    the replicate means. `diffs` must be non-empty."""
    rng = np.random.default_rng(seed)
    n = len(diffs)
    means = np.empty(replicates)
    # chunks keep memory bounded for large task sets
    step = max(1, 2_000_000 // n)
    for i in range(0, replicates, step):
        k = min(step, replicates - i)
        means[i : i + k] = diffs[rng.integers(0, n, size=(k, n))].mean(axis=1)
    lo, hi = np.percentile(means, list(CI_PERCENTILES))
    return float(diffs.mean()), float(lo), float(hi)
