"""Full-transcript view: an episode read from start to end, one page of steps at a time, with the
memory deliveries each step consumed and the credit windows (MemUse 3.3, A.1.5) that open and
close at it marked inline.

The transcript pages through the episode (`PAGE_STEPS` steps per page) so that a 250-step episode
never loads or draws all of its text at once; jumping to a step opens the page that holds it.
"""

from __future__ import annotations

from typing import Any

from .. import timeline as figures
from ..store.app import episodes as store_episodes
from ..store.app import transcript as store_transcript
from .common import (
    Connection,
    EpisodeHeader,
    StepText,
    ToolCall,
    ToolResult,
    ViewModel,
    episode_header,
    records,
)

PAGE_STEPS = 20
"""Steps shown per transcript page."""


class EntryMark(ViewModel):
    """One entry of a delivery, or one credit window opening or closing at a step."""

    label: str
    """Entry label (display key or item id, span, position)."""
    item: str | None = None
    """`namespace/item_id`."""
    window: str
    """Credit window `S3–S9`, or `empty`."""
    why_it_ends: str
    """Why the window ends where it does (A.1.5)."""


class DeliveryMark(ViewModel):
    """A memory delivery consumed by a step."""

    delivery_id: str
    """Delivery id."""
    form: str | None = None
    """Delivery form (e.g. search preview, full card)."""
    route: str | None = None
    """host or agent."""
    span_id: str | None = None
    """Injection span the delivery belongs to."""
    restatement: bool = False
    """A repeat of a span's delivery (adds no verdict)."""
    entries: list[EntryMark] = []
    """The span's entries and their windows (for the span's first delivery)."""


class TranscriptStep(StepText):
    """One step with its memory marks."""

    kind: str
    """Action kind (the command or tool it ran)."""
    deliveries: list[DeliveryMark] = []
    """Deliveries this step consumed (in its model input)."""
    windows_open: list[EntryMark] = []
    """Entries whose credit window starts at this step."""
    windows_close: list[EntryMark] = []
    """Entries whose credit window ends at this step (before the episode end)."""
    anchored_by: list[str] = []
    """Entries whose judged use cites this step as an anchored action."""


class Transcript(ViewModel):
    """One page of an episode's transcript."""

    header: EpisodeHeader
    """The episode."""
    first: int
    """First step on this page."""
    last: int
    """Last step on this page."""
    pages: int
    """Pages in the episode."""
    steps: list[TranscriptStep]
    """The steps of this page, in order."""


def page_of(step: int) -> int:
    """The transcript page (0-based) that holds `step`."""
    return max(0, (int(step) - 1) // PAGE_STEPS)


def _mark(e: dict[str, Any], every: list[dict[str, Any]], last_step: int) -> EntryMark:
    ws, we = e.get("window_start"), e.get("window_end")
    return EntryMark(
        label=figures.entry_label(e),
        item=f"{e.get('namespace')}/{e.get('item_id')}" if e.get("item_id") else None,
        window="empty" if ws is None or we is None else f"S{int(ws)}–S{int(we)}",
        why_it_ends=figures.window_reason(e, every, last_step),
    )


def transcript(con: Connection, episode_id: str, page: int = 0) -> Transcript | None:
    """Page `page` (0-based, clamped) of an episode's transcript (None when the episode is
    unknown)."""
    head = episode_header(con, episode_id)
    if head is None:
        return None
    n = max(head.n_steps, 0)
    pages = max(1, -(-n // PAGE_STEPS))
    page = min(max(0, page), pages - 1)
    first, last = page * PAGE_STEPS + 1, min(n, (page + 1) * PAGE_STEPS)
    every = records(store_episodes.episode_entries(con, episode_id))
    marks = {(e["span_id"], e["pos"]): _mark(e, every, n) for e in every}
    by_span: dict[str, list[EntryMark]] = {}
    for e in every:
        by_span.setdefault(str(e["span_id"]), []).append(marks[(e["span_id"], e["pos"])])
    dels: dict[int, list[DeliveryMark]] = {}
    for d in records(store_episodes.episode_deliveries(con, episode_id)):
        if d.get("step") is None or not first <= int(d["step"]) <= last:
            continue
        restated = bool(d.get("restatement"))
        dels.setdefault(int(d["step"]), []).append(
            DeliveryMark(
                delivery_id=str(d["delivery_id"]),
                form=d.get("form"),
                route=d.get("route"),
                span_id=d.get("span_id"),
                restatement=restated,
                entries=[] if restated else by_span.get(str(d.get("span_id")), []),
            )
        )
    steps = []
    for raw in store_transcript.steps_text(con, episode_id, first, last) if n else []:
        s = int(raw["step"])
        steps.append(
            TranscriptStep(
                episode_id=episode_id,
                step=s,
                action=raw["action"],
                tools=raw["tools"],
                exit_code=raw["exit_code"],
                response=raw["response"] or "",
                reasoning=raw.get("reasoning"),
                tool_calls=[
                    ToolCall(name=str(a or ""), arguments=str(b or "")) for a, b in raw["tool_calls"]
                ],
                results=[ToolResult.model_validate(r) for r in raw["results"]],
                kind=figures.action_kind(raw["tools"], raw["action"]),
                deliveries=dels.get(s, []),
                windows_open=[marks[(e["span_id"], e["pos"])] for e in every if e.get("window_start") == s],
                windows_close=[
                    marks[(e["span_id"], e["pos"])]
                    for e in every
                    if e.get("window_end") == s and s < n and e.get("window_start") is not None
                ],
                anchored_by=[
                    marks[(e["span_id"], e["pos"])].label
                    for e in every
                    if s in figures.anchor_steps(e.get("anchors"))
                ],
            )
        )
    return Transcript(header=head, first=first, last=last, pages=pages, steps=steps)
