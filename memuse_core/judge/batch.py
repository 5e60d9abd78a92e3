"""The parts of a judge batch shared by the in-process loops and the worker processes (DESIGN.md
"Judging", "Concurrency"; MemUse A.3.2): the batch summary, chunked loading of spans and their
episodes' evidence, and the result writer (journal first, then short transactions).
"""

from __future__ import annotations

import threading
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from ..rules.judgment import JudgmentResult, scrub_result
from ..rules.models import SpanContext
from ..store import connect
from ..store.decode import gc_paused
from ..store.evidence import fetch_evidence_rows
from ..store.journal import Journal, journal_path
from ..store.judging import end_batch, write_results
from ..store.spans import load_spans
from .endpoint import TRANSPORT, secrets
from .evidence import EpisodeEvidence, build_evidence

FLUSH_EVERY = 500
"""Results per database transaction at most; pending results are also flushed every
`flush_seconds(judge)` (the journal holds them meanwhile)."""


def flush_seconds(judge: str) -> float:
    """How old pending results may get before a transaction: 2 s for the LLM judge (the app shows
    results as they come), 10 s for the rules judge (hundreds of spans per second; each
    transaction costs a connection and a commit)."""
    return 10.0 if judge == "rules" else 2.0


CHUNK_EPISODES = 200
"""Episodes loaded per store read (one query per table); an episode's spans always share a chunk."""
STORE_LOCK = threading.Lock()
"""DuckDB refuses a read-only and a read-write connection to one file in the same process at
once: the LLM loop's loader and writer threads take turns through this lock."""
_SHARED: list[Any] = []
"""The worker processes' lock on the store and their count of readers (`share_store_lock`), when
this process is one."""
SHARED_WAIT = 10.0
"""Seconds a worker waits for the shared lock (or for the readers to leave) before it opens the
store anyway (the store's own lock retry then applies; a worker killed while holding the lock or
reading never blocks the others)."""


def share_store_lock(lock: Any, readers: Any = None) -> None:
    """Make this process take `lock` (a multiprocessing lock shared by the worker processes of a
    batch) around every store access. The workers of a batch load and write the same file, which
    DuckDB lets one process open read-write at a time: without it a worker that finds the file
    locked polls with growing pauses (`store.connect`) and idles after the holder is done; with
    it the next worker starts as soon as the holder closes the file.

    With `readers` (a shared integer) loads share the file: DuckDB lets several processes read
    it at once, so a reader only passes through the lock (waiting behind a writer) and is
    counted, and a writer holds the lock until the readers have left."""
    _SHARED[:] = [lock, readers]


def _wait_readers(readers: Any, until: float) -> None:
    while readers.value > 0 and time.monotonic() < until:
        time.sleep(0.002)


@contextmanager
def store_turn(read: bool = False) -> Iterator[None]:
    """This thread's turn at the store: the in-process lock, then the workers' shared one (for a
    `read`, shared with the other readers of the batch)."""
    with STORE_LOCK:
        shared, readers = _SHARED if _SHARED else (None, None)
        got = shared if shared is not None and shared.acquire(timeout=SHARED_WAIT) else None
        counted = None
        try:
            if readers is not None:
                if read:
                    with readers.get_lock():
                        readers.value += 1
                    counted = readers
                    if got is not None:
                        got.release()  # other readers may enter; a writer waits for the count
                        got = None
                else:
                    _wait_readers(readers, time.monotonic() + SHARED_WAIT)
            yield
        finally:
            if counted is not None:
                with counted.get_lock():
                    counted.value -= 1
            if got is not None:
                got.release()


@dataclass
class BatchSummary:
    """What a batch did (printed by `memuse judge`)."""

    batch_id: str
    judge: str
    planned: int = 0
    judged: int = 0
    accepted: int = 0
    errors: Counter[str] = field(default_factory=Counter)
    interrupted: int = 0
    followup_spans: int = 0
    forced: int = 0
    rollbacks: int = 0
    retries: int = 0
    calls: int = 0
    interrupted_calls: int = 0
    """Calls of the interrupted spans (in `calls`, not in the per-judged-span rate)."""
    called: int = 0
    """Judgments that made at least one call."""
    input_tokens: int = 0
    """Sum over the judgments whose usage is known."""
    cached_tokens: int = 0
    output_tokens: int = 0
    usage_unknown: int = 0
    """Judgments with calls whose token counts are unknown (a reply without usage)."""
    cost_usd: float = 0.0
    """Sum of the known costs."""
    cost_unknown: int = 0
    """Judgments with calls whose cost is unknown (`priced` says why)."""
    priced: bool = False
    """Prices were given (`JudgeSettings.priced`): an unknown cost then comes from a reply without
    usage, otherwise from a missing provider-reported cost."""
    seconds: float = 0.0
    replayed: int = 0
    auto_neutral: int = 0
    skipped_done: int = 0
    stopped: str | None = None
    broken: bool = False
    """The batch could not finish: the circuit breaker stopped it, or a worker process failed (the
    command exits non-zero; unjudged spans stay pending)."""
    preflight_seconds: float | None = None

    def add(self, r: JudgmentResult) -> None:
        if r.status == "interrupted":
            self.interrupted += 1
        else:
            self.judged += 1
            if r.status == "accepted":
                self.accepted += 1
            else:
                self.errors[(r.reason or "error").split(":")[0]] += 1
        self.followup_spans += int(r.followups > 0)
        self.forced += int(r.forced)
        self.rollbacks += r.rollbacks
        self.retries += r.retries
        self.calls += r.calls
        if r.status == "interrupted":
            self.interrupted_calls += r.calls
        self.called += int(r.calls > 0)
        if r.input_tokens is None or r.cached_tokens is None or r.output_tokens is None:
            self.usage_unknown += int(r.calls > 0)
        else:
            self.input_tokens += r.input_tokens
            self.cached_tokens += r.cached_tokens
            self.output_tokens += r.output_tokens
        if r.cost_usd is None:
            self.cost_unknown += int(r.calls > 0)
        else:
            self.cost_usd += r.cost_usd

    def cost_text(self) -> str:
        """The batch's cost as far as it is known: "$0.0123", "unknown", or "$0.0123 + unknown for
        3 span(s)" (the progress line and the summary)."""
        if not self.cost_unknown:
            return f"${self.cost_usd:.4f}"
        if self.cost_unknown >= self.called:
            return "unknown"
        return f"${self.cost_usd:.4f} + unknown for {self.cost_unknown} span(s)"

    def _usage_line(self) -> str:
        judged_calls = self.calls - self.interrupted_calls
        cps = judged_calls / self.judged if self.judged else 0.0
        calls = f"  calls {self.calls} ({cps:.2f}/judged span"
        if self.interrupted_calls:
            calls += f"; {self.interrupted_calls} in {self.interrupted} interrupted span(s)"
        no_usage = "the endpoint reported no usage"
        if self.usage_unknown and self.usage_unknown >= self.called:
            tokens = f"tokens unknown ({no_usage})"
        else:
            tokens = (
                f"input tokens uncached {self.input_tokens - self.cached_tokens:,}, cached "
                f"{self.cached_tokens:,}; output {self.output_tokens:,}"
            )
            if self.usage_unknown:
                tokens += f" (unknown for {self.usage_unknown} span(s): {no_usage})"
        cost = f"cost {self.cost_text()}"
        if self.cost_unknown:
            cost += (
                " ("
                + (
                    "replies without usage: no token counts to price"
                    if self.priced
                    else "no --price-* and no provider-reported cost"
                )
                + ")"
            )
        return f"{calls}); {tokens}; {cost}"

    def lines(self) -> list[str]:
        rate = self.judged / self.seconds if self.seconds > 0 else 0.0
        out = [
            f"judge {self.judge} (batch {self.batch_id}): {self.judged} of {self.planned} spans judged "
            f"in {self.seconds:.1f} s ({rate:.1f} spans/s)",
            f"  accepted {self.accepted}; errors {sum(self.errors.values())}"
            + (
                " (" + ", ".join(f"{k}: {v}" for k, v in self.errors.most_common()) + ")"
                if self.errors
                else ""
            )
            + f"; interrupted {self.interrupted}",
            f"  follow-up spans {self.followup_spans}; forced answers {self.forced}; rollbacks {self.rollbacks}; "
            f"retries {self.retries}",
        ]
        if self.judge == "llm":
            out.append(self._usage_line())
        if self.replayed or self.auto_neutral or self.skipped_done:
            out.append(
                f"  journal replayed {self.replayed}; auto-neutral verdicts {self.auto_neutral}; "
                f"already judged {self.skipped_done}"
            )
        if self.preflight_seconds is not None:
            out.append(f"  preflight call {self.preflight_seconds:.2f} s")
        if self.stopped:
            out.append(f"  stopped: {self.stopped}")
        if self.planned == 0 and not self.skipped_done:
            out.append(
                "  no eligible spans: build the evaluation context first (`memuse build`), or check "
                "`memuse info`"
            )
        return out


def load_chunk(db: Any, pairs: list[tuple[str, str]]) -> list[tuple[EpisodeEvidence, SpanContext]]:
    """The rendered episode evidence and the span contexts of a chunk (`store.evidence`: only the
    rows the step files need, not whole episode records); the file is open only while rows are
    read, so other processes of the batch (and the app) can write between chunks."""
    eps = sorted({e for _, e in pairs})
    wanted = sorted({s for s, _ in pairs})
    with store_turn(read=True):
        con = connect(db, read_only=True)  # readers can share the file with the app
        try:
            with gc_paused():  # many small acyclic objects (see store.decode.gc_paused)
                rows = fetch_evidence_rows(con, eps)
                spans = load_spans(con, wanted)
        finally:
            con.close()
    with gc_paused():
        evs = build_evidence(rows)
    by_id = {s.span_id: s for s in spans}
    return [(evs[e], by_id[s]) for s, e in pairs if s in by_id and e in evs]


def chunks(pairs: list[tuple[str, str]], first: int = CHUNK_EPISODES) -> Iterator[list[tuple[str, str]]]:
    """Consecutive groups of whole episodes: `first` episodes, then twice as many each time up to
    CHUNK_EPISODES (a small first chunk lets the LLM loop start calling within a fraction of a
    second while the larger ones load behind it)."""
    cur: list[tuple[str, str]] = []
    eps: set[str] = set()
    size = max(1, min(first, CHUNK_EPISODES))
    for p in pairs:
        if p[1] not in eps and len(eps) >= size:
            yield cur
            cur, eps = [], set()
            size = min(2 * size, CHUNK_EPISODES)
        cur.append(p)
        eps.add(p[1])
    if cur:
        yield cur


SHARED_MIN_SPANS = 40
"""Smallest chunk of a shared work queue, in spans (`shared_chunks`): each load has a fixed cost
(a connection and a dozen whole-table queries, ~0.1 s of CPU, about what 15-20 spans take to
judge), so the tail chunks are not made smaller."""


def shared_chunks(pairs: list[tuple[str, str]], workers: int) -> list[list[tuple[str, str]]]:
    """Chunks of whole episodes for worker processes that take the next chunk from one queue as
    they finish the last: each an equal share of the spans left (those left over the workers, at
    most CHUNK_EPISODES episodes, at least SHARED_MIN_SPANS spans: guided self-scheduling), so
    chunks shrink towards the end and the workers finish within a small chunk of each other. A
    batch of fewer episodes is split evenly, so that every worker gets some (as many as there are
    episodes).

    Shares are counted in spans, not episodes: an episode holds 1 to 10+ spans, and a span is the
    unit of judging work (200 demo episodes hold 258 to 420 spans). Every chunk costs a connection
    and a dozen whole-table queries whatever its size, so the shares are as large as the balance
    allows (guided self-scheduling instead of half the equal share: 7 chunks instead of 10 on the
    1,701 spans of the 1,000-episode demo with two workers, and a last chunk of ~40 spans instead
    of ~160)."""
    groups: dict[str, list[tuple[str, str]]] = {}
    for p in pairs:
        groups.setdefault(p[1], []).append(p)
    eps = list(groups.values())
    n = max(1, workers)
    most = min(CHUNK_EPISODES, -(-len(eps) // n))  # a small batch still gives every worker a chunk
    out: list[list[tuple[str, str]]] = []
    left = len(pairs)
    i = 0
    while i < len(eps):
        share = max(SHARED_MIN_SPANS, -(-left // n))
        j, got = i, 0
        while j < len(eps) and j - i < most and got < share:
            got += len(eps[j])
            j += 1
        if left - got < SHARED_MIN_SPANS and len(eps) - i <= most:
            j, got = len(eps), left  # no small remainder chunk
        out.append([p for g in eps[i:j] for p in g])
        left -= got
        i = j
    return out


BREAKER_FAILURES = 3
"""Consecutive transport failures that stop an LLM batch (the rest stays pending)."""


class CircuitBreaker:
    """Stops a batch after `BREAKER_FAILURES` consecutive transport failures: the endpoint is down
    or unreachable, so judging the remaining spans would only turn them into failures. Spans not
    started stay pending; those that failed are not done either (`store.judging.done_spans`)."""

    def __init__(self, limit: int = BREAKER_FAILURES) -> None:
        self.limit = limit
        self.run = 0
        self.last = ""

    def observe(self, status: str, reason: str | None) -> bool:
        """Count one result; True when the breaker trips."""
        if status == "error" and (reason or "").startswith(TRANSPORT + ":"):
            self.run += 1
            self.last = (reason or "").split(":", 1)[1].strip()
        elif status != "interrupted":
            self.run = 0
        return self.run >= self.limit

    def message(self, left: int) -> str:
        return (
            f"circuit breaker: {self.run} consecutive transport failures ({self.last}); "
            f"{left} span(s) left pending; run the same command again once the endpoint works"
        )


class ResultWriter:
    """Journal first, then short transactions."""

    def __init__(self, db: Any, every: float = 2.0) -> None:
        self.db = db
        self.every = every
        self.journal = Journal(journal_path(db))
        self.pending: list[JudgmentResult] = []
        self.last = time.monotonic()

    def add(self, r: JudgmentResult) -> None:
        scrub_result(r, secrets(r.settings))  # nothing secret reaches the journal or the tables
        self.journal.append(r)
        self.pending.append(r)

    def due(self) -> bool:
        """Enough results, or old enough, to be worth a transaction."""
        return bool(self.pending) and (
            len(self.pending) >= FLUSH_EVERY or time.monotonic() - self.last >= self.every
        )

    def take(self) -> list[JudgmentResult]:
        """Hand the pending results to a writer (the caller writes them with `write`)."""
        out, self.pending = self.pending, []
        self.last = time.monotonic()
        return out

    def write(self, results: list[JudgmentResult], end: tuple[str, str] | None = None) -> None:
        """Sync the journal, then store `results` in one short transaction (thread-safe: the LLM
        loop runs this in a thread so a commit never stalls the requests in flight); `end`
        (batch id, status) also records the batch's end through the same connection."""
        if not results and end is None:
            return
        self.journal.sync()
        with store_turn():
            con = connect(self.db)
            try:
                if results:
                    write_results(con, results)
                if end is not None:
                    end_batch(con, *end)
            finally:
                con.close()

    def flush(self, force: bool = False) -> None:
        if self.pending and (force or self.due()):
            self.write(self.take())

    def close(self, end: tuple[str, str] | None = None) -> None:
        """Write what is pending (and the batch's end, if given), then close the journal."""
        try:
            self.write(self.take() if self.pending else [], end)
        finally:
            self.journal.close()
