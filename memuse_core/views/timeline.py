"""Episode timeline view (MemUse Figure 4, A.1.5): one episode's header and spans, its timeline
figure (steps, deliveries at their consuming steps, credit windows, anchored actions and observed
effects), and the step a chart selection points at."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import pandas as pd
import plotly.graph_objects as go

from .. import timeline as figures
from ..store.app import episodes as store_episodes
from .common import Connection, EpisodeHeader, ViewModel, episode_header, records


class EpisodeView(ViewModel):
    """An episode's header and its injection spans."""

    header: EpisodeHeader
    """Run, configuration, task, outcome and size."""
    spans: pd.DataFrame
    """Spans (span_id, outcome, status, first_step, last_step, n_entries, restatements,
    est_tokens, form, route, reason); empty before `memuse build`."""


def episode(con: Connection, episode_id: str) -> EpisodeView | None:
    """Header and spans of an episode (None when the episode is not in the store)."""
    head = episode_header(con, episode_id)
    if head is None:
        return None
    return EpisodeView(header=head, spans=store_episodes.episode_spans(con, episode_id))


class Timeline(ViewModel):
    """The timeline figure of one episode."""

    episode_id: str
    """Episode drawn."""
    figure: go.Figure | None
    """The figure; None when the episode has no completed steps."""
    steps: int
    """Steps drawn."""
    windows: int
    """Entries drawn with a credit window (0 before `memuse build`)."""


def timeline(
    con: Connection,
    episode_id: str,
    selected_step: int | None = None,
    *,
    span_id: str | None = None,
    title: str | None = None,
    judge: str | None = None,
) -> Timeline:
    """The timeline of an episode, the selected step marked; with `span_id`, only that span's
    entries get rows. Usage labels are one judge's (`judge`, default `store.judging.resolve_judge`)."""
    steps = store_episodes.episode_steps(con, episode_id)
    entries = records(store_episodes.episode_entries(con, episode_id, judge))
    if span_id is not None:
        entries = [e for e in entries if e["span_id"] == span_id]
    if not len(steps):
        return Timeline(episode_id=episode_id, figure=None, steps=0, windows=0)
    fig = figures.episode_timeline(
        records(steps),
        entries,
        records(store_episodes.episode_deliveries(con, episode_id)),
        selected_step=selected_step,
        title=title,
    )
    windows = sum(1 for e in entries if e.get("window_start") is not None)
    return Timeline(episode_id=episode_id, figure=fig, steps=len(steps), windows=windows)


def picked_step(points: Iterable[Mapping[str, Any]]) -> int | None:
    """The step named by a chart selection: step markers carry the step as `customdata`."""
    for p in points:
        c = p.get("customdata")
        if c is None:
            continue
        return int(c[0] if isinstance(c, list) else c)
    return None
