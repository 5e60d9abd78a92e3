"""Persistent message identities and surviving text (MemUse A.1.3, A.1.4, A.2.1): which message of
a later agent input is the same message as one of an earlier input (retractions and history
rewrites replayed), and how much of a placement a later message still holds.
"""

from __future__ import annotations

from ..episode import CallView, EpisodeRecord
from ..events import HistoryRewrite, Retraction
from .exposure import longest_prefix


def longest_prefix_in(text: str, hay: str, minimum: int) -> str | None:
    """The longest prefix of `text` (at least `minimum` characters) that occurs in `hay`, or None
    (`exposure.longest_prefix` finds its length)."""
    if len(text) < minimum or text[:minimum] not in hay:
        return None
    return text[: longest_prefix(text, hay)]


def message_ids(rec: EpisodeRecord) -> dict[str, list[tuple[int, int]]]:
    """Give each message of each agent input a persistent identity: a message keeps the identity
    of the previous input's message at the same replayed position (retractions and rewrites of
    A.1.3 applied), and new messages get (call seq, index)."""
    by_before: dict[str, list[Retraction | HistoryRewrite]] = {}
    for ev in rec.context_events:
        by_before.setdefault(ev.before_call_id, []).append(ev)
    out: dict[str, list[tuple[int, int]]] = {}
    prev: CallView | None = None
    for cv in rec.calls:
        if cv.call.role != "agent":
            continue
        n = len(cv.messages)
        if prev is None or cv.input_gap:
            ids = [(cv.seq, i) for i in range(n)]
        else:
            base = out[prev.call_id]
            evs = by_before.get(cv.call_id, [])
            if not evs:  # fast path: the input continues the previous one
                k = min(n, len(base))
                ids = base[:k] + [(cv.seq, i) for i in range(k, n)]
            else:
                for ev in evs:
                    if isinstance(ev, Retraction):
                        drop = set(ev.removed)
                        base = [x for i, x in enumerate(base) if i not in drop]
                    else:
                        base = base[: ev.kept_prefix] + [(cv.seq, -1 - k) for k in range(len(ev.replacement))]
                ids = [base[i] if i < len(base) and base[i][1] >= 0 else (cv.seq, i) for i in range(n)]
        out[cv.call_id] = ids
        prev = cv
    return out
