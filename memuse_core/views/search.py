"""Search view: where a text occurs across the episodes in scope or within one episode, each hit
with its location (episode, step, where) and a snippet, and the snippet as inert HTML with the
match highlighted.

Recorded text is untrusted: a snippet is HTML-escaped and stripped of terminal escapes and
bidirectional controls before the one `<mark>` this module adds around the match.
"""

from __future__ import annotations

import html
import re

import pandas as pd

from ..store.app import transcript as store_transcript
from .common import Connection, Scope, ViewModel

HIT_LIMIT = 200
"""Hits listed per search at most."""
MIN_QUERY = 2
"""Shortest query searched (one character would match nearly every text)."""

_ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b[@-_]")
_CONTROLS = re.compile("[\u200e\u200f\u202a-\u202e\u2066-\u2069\x00-\x08\x0b-\x1f\x7f]")


def inert(text: str) -> str:
    """Recorded text without terminal escape sequences, bidirectional overrides and other
    control characters (newlines and tabs become spaces), ready to be HTML-escaped."""
    return _CONTROLS.sub("", _ANSI.sub("", text.replace("\n", " ").replace("\t", " ")))


def highlight_html(snippet: str, match_at: int, length: int) -> str:
    """The snippet as HTML: every character escaped, the match (`length` characters from
    `match_at`) wrapped in `<mark>`. Nothing in the snippet can add markup."""
    s = snippet or ""
    a = max(0, min(int(match_at), len(s)))
    b = max(a, min(a + int(length), len(s)))
    esc = lambda t: html.escape(inert(t), quote=True)  # noqa: E731
    return f"{esc(s[:a])}<mark>{esc(s[a:b])}</mark>{esc(s[b:])}"


class SearchResult(ViewModel):
    """Hits of one search."""

    query: str
    """The text searched for (case-insensitive)."""
    episode_id: str | None = None
    """The episode searched (None: every episode in scope)."""
    hits: pd.DataFrame
    """episode_id, config, run_id, task_id, step (None for the task), where, snippet (inert
    plain text), match_at."""
    html: list[str]
    """Per hit, its snippet as inert HTML with the match marked (same order as `hits`)."""

    @property
    def truncated(self) -> bool:
        """More hits exist than are listed."""
        return len(self.hits) >= HIT_LIMIT

    @property
    def steps(self) -> list[int]:
        """Steps with a hit, in order (hits in the task have no step)."""
        return sorted({int(s) for s in self.hits["step"].dropna()})

    def target(self, row: int) -> tuple[str, int | None]:
        """(episode_id, step) of hit `row` (step None for a hit in the task)."""
        h = self.hits.iloc[row]
        step = h["step"]
        return str(h["episode_id"]), None if pd.isna(step) else int(step)

    def listing_html(self, limit: int = 50) -> str:
        """The first `limit` hits as an HTML list: location, then the snippet with the match
        marked (every recorded character escaped)."""
        items = []
        for (ep, step, where), snippet in zip(
            self.hits[["episode_id", "step", "where"]].itertuples(index=False), self.html[:limit]
        ):
            at = where if pd.isna(step) else f"S{int(step)} · {where}"
            loc = html.escape(inert(f"{ep} · {at}"))
            items.append(f"<li><b>{loc}</b><br><code>{snippet}</code></li>")
        return f"<ol class='memuse-hits'>{''.join(items)}</ol>"


def search(con: Connection, query: str, runs: Scope = None, episode_id: str | None = None) -> SearchResult:
    """Where `query` occurs in tasks, actions, responses, tool calls and results and observations
    (case-insensitive), across the episodes of `runs` or within `episode_id`."""
    q = (query or "").strip()
    if len(q) < MIN_QUERY:
        empty = pd.DataFrame(
            columns=["episode_id", "config", "run_id", "task_id", "step", "where", "snippet", "match_at"]
        )
        return SearchResult(query=q, episode_id=episode_id, hits=empty, html=[])
    hits = store_transcript.search_text(con, q, runs, episode_id=episode_id, limit=HIT_LIMIT)
    marked = [highlight_html(s, int(m), len(q)) for s, m in zip(hits["snippet"], hits["match_at"])]
    hits["snippet"] = [inert(s or "") for s in hits["snippet"]]
    hits["step"] = hits["step"].astype("Int64")
    return SearchResult(query=q, episode_id=episode_id, hits=hits, html=marked)
