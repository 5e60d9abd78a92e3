"""Per-entry credit windows (MemUse 3.3 "Credit windows", A.1.5 "Per-entry Credit Windows").

`credit_windows` gives every entry of every attributed nonempty span its window of steps (None for
an empty window); `resident_entries` finds the resident copies that get an empty window because an
earlier visible copy keeps the credit.
"""

from __future__ import annotations

import re

from .analysis import DInfo, EpisodeAnalysis
from .spans import SpanBuild


def _selected_read(an: EpisodeAnalysis, di: DInfo) -> bool:
    """A separately recorded full read reached through an explicit selection (A.1.5): an
    agent-routed delivery that is not a preview, whose issuing step's action names, as a whole
    token, an identifier (item id or displayed key) of each entry that an earlier delivery
    exposed in its placement text."""
    if di.d.route != "agent" or "preview" in di.d.form or di.step is None or di.step < 2:
        return False
    action = an.rec.steps[di.step - 2].action_text()
    shown = [rp.text or "" for d0 in an.infos if d0.order < di.order for rp in d0.placements]
    for e in di.d.entries:
        keys = [k for k in (e.item_id, e.display_key) if k]
        if not any(_token_in(k, action) and any(_token_in(k, t) for t in shown) for k in keys):
            return False
    return True


def _token_in(key: str, text: str) -> bool:
    return re.search(rf"(?<![\w-]){re.escape(key)}(?![\w-])", text) is not None


def resident_entries(an: EpisodeAnalysis, span: SpanBuild) -> list[bool]:
    """Resident copies (A.1.5): an entry of a new span is resident when a proven copy of the same
    item, delivered to an earlier input and still visible in this span's consuming input,
    already shows all of its exposed text and its displayed key. The earlier owner keeps the
    credit and the resident entry gets an empty window. Not for a selected full read.

    A copy arriving in the same input is not a resident owner: "Same-input copies do not
    establish prior exposure" (A.2.1); the same-step rule of `credit_windows` splits the shared
    step between them instead (A.1.5 "Same-step deliveries")."""
    di = span.first
    out = [False] * len(di.d.entries)
    if di.call is None or di.step is None or _selected_read(an, di):
        return out
    by_item = an.by_item()
    for pos, e in enumerate(di.d.entries):
        x = di.exposures[pos]
        if x.exposed_text is None:
            continue
        key = di.ikeys[pos]
        for d0 in reversed(by_item.get(key, [])):  # latest copies first
            if d0.order >= di.order or d0.step is None or d0.cid == di.cid:
                continue
            p0 = d0.ikeys.index(key)
            x0 = d0.exposures[p0]
            if x0.exposed_text is None or not an.contains(x0.exposed_text, x.exposed_text):
                continue
            if an.copy_visible(d0, p0, di.call, x.exposed_text, e.display_key):
                out[pos] = True
                break
    return out


def _adds_nothing_at_shared_step(
    an: EpisodeAnalysis, s: SpanBuild, pos: int, same_item: list[tuple[SpanBuild, int]]
) -> bool:
    """A.1.5 "Same-step deliveries": when an earlier span of the same item has its last consuming
    step at this span's first step, one call consumed both copies. This (later) copy includes the
    shared step only when it adds verified text or a newly exposed identifier to the earlier copy;
    otherwise its window starts after that step. Unknown exposure on this side never shows added
    verified text; unknown exposure on the earlier side cannot show that the text was there. A
    separately recorded read reached through a proven selection takes over at its consuming step
    (3.3: a later entry can take over when it is "a separately recorded full read reached through
    an explicit selection")."""
    di = s.first
    if _selected_read(an, di):
        return False  # a read reached through a proven selection takes over from its consuming step
    x = di.exposures[pos]
    key = di.d.entries[pos].display_key
    for o, opos in same_item:
        if o is s or o.first.order >= di.order or o.last_step != s.first_step:
            continue
        if x.exposed_text is None:
            return True
        ox = o.first.exposures[opos]
        if ox.exposed_text is None or not an.contains(ox.exposed_text, x.exposed_text):
            continue  # this copy adds verified text
        if key and not any(key in (rp.text or "") for rp in o.first.placements):
            continue  # it exposes an identifier the earlier copy did not show
        return True
    return False


def credit_windows(an: EpisodeAnalysis, spans: list[SpanBuild]) -> None:
    """Per-entry credit windows (A.1.5), stored on each span (None = empty window).

    The window of entry m of span S starts at t_first(S). Its boundary is the earliest later
    span S' (first step t' >= t_last(S)) that delivers the same item with verified text
    containing ε_S(m), or any later delivery of the item when either exposure is unknown; it
    ends at t'-1 when t' > t_last(S) and at t' when t' == t_last(S), else at the final step.
    Resident copies get an empty window and set no boundary, so the earlier owner keeps the
    credit. A later copy with different or narrower text sets no boundary (windows overlap); a
    full read containing a preview's text ends the preview window just before it. A same-step
    later copy that adds no verified text or identifier starts after the shared step (a copy in
    the same input is never resident, A.2.1). Only entries of the same
    item interact, and everything is per episode (ownership resets at episode boundaries).
    """
    T = an.rec.T
    live = [s for s in spans if s.nonempty and s.attributed]
    for s in live:
        s.resident = resident_entries(an, s)
    by_item: dict[tuple, list[tuple[SpanBuild, int]]] = {}
    for s in live:
        for pos, key in enumerate(s.first.ikeys):
            by_item.setdefault(key, []).append((s, pos))
    for s in spans:
        s.windows = [None] * len(s.first.d.entries)
    for s in live:
        t_first, t_last = s.first_step, s.last_step
        assert t_first is not None and t_last is not None
        di = s.first
        for pos in range(len(di.d.entries)):
            if s.resident[pos]:
                continue
            exposed = di.exposures[pos].exposed_text
            start = t_first
            if _adds_nothing_at_shared_step(an, s, pos, by_item.get(di.ikeys[pos], [])):
                start = t_first + 1
            end = T
            for o, opos in by_item.get(di.ikeys[pos], []):
                if o is s or o.first.order <= di.order or o.resident[opos]:
                    continue
                t2 = o.first_step
                assert t2 is not None
                if t2 < t_last:
                    continue  # spans starting before t_last are not boundaries
                ox = o.first.exposures[opos]
                if exposed is None or ox.exposed_text is None or an.contains(ox.exposed_text, exposed):
                    end = t2 - 1 if t2 > t_last else t2
                    break
            s.windows[pos] = (start, end) if start <= end else None
