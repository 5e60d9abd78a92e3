"""Episode timeline view (MemUse Figure 4, A.1.5): one episode's header and spans, its timeline
figure (steps, deliveries at their consuming steps, credit windows, anchored actions and observed
effects), and the step a chart selection points at."""

from __future__ import annotations

from typing import Any

import pandas as pd
import plotly.graph_objects as go

from .. import timeline as figures
from ..store.app import episodes as store_episodes
from ..store.judging import resolve_judge
from ..vocab import JudgeKind
from .common import Connection, EpisodeHeader, ViewModel, episode_header, judge_label, records


class EpisodeView(ViewModel):
    """An episode's header and its injection spans."""

    header: EpisodeHeader
    """Run, configuration, task, outcome and size."""
    spans: pd.DataFrame
    """Spans (span_id, outcome, status, first_step, last_step, n_entries, restatements,
    est_tokens, form, route, reason); empty before `memuse build`."""
    judge: JudgeKind = "rules"
    """The judge whose verdicts give the spans their outcome classes."""


def episode(con: Connection, episode_id: str, judge: str | None = None) -> EpisodeView | None:
    """Header and spans of an episode (None when the episode is not in the store); outcome
    classes are one judge's (`judge`, default `store.judging.resolve_judge`)."""
    head = episode_header(con, episode_id)
    if head is None:
        return None
    chosen = resolve_judge(con, judge)
    return EpisodeView(header=head, spans=store_episodes.episode_spans(con, episode_id, chosen), judge=chosen)


class Timeline(ViewModel):
    """The timeline figure of one episode, with what it means in words."""

    episode_id: str
    """Episode drawn."""
    figure: go.Figure | None
    """The figure; None when the episode has no completed steps, or when only the drawing was
    asked for (`timeline(..., drawing_only=True)`)."""
    steps: int
    """Steps drawn."""
    windows: int
    """Entries drawn with a credit window (0 before `memuse build`)."""
    caption: str = figures.CAPTION
    """What the rows, bars and markers mean (credit windows per A.1.5)."""
    window_rows: pd.DataFrame = pd.DataFrame()
    """One row per drawn entry: entry, item, span_id, window (`S3–S9`, `empty`), why_it_ends."""
    judge: JudgeKind = "rules"
    """The judge whose verdicts give the entries their usage labels, anchors and effects."""
    drawing: dict[str, Any] | None = None
    """The figure as the app's SVG renderer draws it (`timeline.drawing`); None without a figure.
    The step cursor is not part of it: the app sends the step beside it."""

    @property
    def judge_note(self) -> str:
        """The sentence that names the judge under the chart."""
        return (
            f"Usage labels, anchored actions and observed effects: the {judge_label(self.judge)}'s verdicts."
        )


def timeline(
    con: Connection,
    episode_id: str,
    selected_step: int | None = None,
    *,
    span_id: str | None = None,
    title: str | None = None,
    judge: str | None = None,
    drawing_only: bool = False,
) -> Timeline:
    """The timeline of an episode, `selected_step` marked in the figure (an exported figure; the
    app draws the step apart, beside `Timeline.drawing`); with `span_id`, only that span's entries get rows.
    Usage labels are one judge's (`judge`, default `store.judging.resolve_judge`). With
    `drawing_only` (the app) the figure is dropped once its drawing is made: the app caches the
    view, and unpickling a Plotly figure on every run cost more than the rest of the page."""
    steps = store_episodes.episode_steps(con, episode_id)
    chosen = resolve_judge(con, judge)
    every = records(store_episodes.episode_entries(con, episode_id, chosen))
    entries = every if span_id is None else [e for e in every if e["span_id"] == span_id]
    if not len(steps):
        return Timeline(episode_id=episode_id, figure=None, steps=0, windows=0, judge=chosen)
    fig = figures.episode_timeline(
        records(steps),
        entries,
        records(store_episodes.episode_deliveries(con, episode_id)),
        selected_step=selected_step,
        title=title,
        all_entries=every,
    )
    windows = sum(1 for e in entries if e.get("window_start") is not None)
    return Timeline(
        episode_id=episode_id,
        figure=None if drawing_only else fig,
        drawing=figures.drawing(fig),
        steps=len(steps),
        windows=windows,
        window_rows=_window_rows(entries, every, int(steps["step"].max())),
        judge=chosen,
    )


def _window_rows(entries: list[dict[str, Any]], every: list[dict[str, Any]], last_step: int) -> pd.DataFrame:
    rows = []
    for e in entries:
        ws, we = e.get("window_start"), e.get("window_end")
        rows.append(
            {
                "entry": figures.entry_label(e),
                "item": f"{e.get('namespace')}/{e.get('item_id')}" if e.get("item_id") else None,
                "span_id": e.get("span_id"),
                "window": "empty" if ws is None or we is None else f"S{int(ws)}–S{int(we)}",
                "why_it_ends": figures.window_reason(e, every, last_step),
            }
        )
    return pd.DataFrame(rows, columns=["entry", "item", "span_id", "window", "why_it_ends"])
