"""Span inspector view (MemUse 3.3-3.5, A.1-A.3): a span's header and outcome class, its target
delivery beside the prior context B_S with shared lines marked, entries with the five signals and
usage labels, rationales with their [S7]/[P3] citations, and judgment history (one judgment's
attempts and transcript, and re-judging: `views.judgment`)."""

from __future__ import annotations

import re
from typing import Any, Literal

import pandas as pd

from .. import charts as figures
from ..store.app import episodes as store_episodes
from ..store.app import spans as store_spans
from ..vocab import JudgeKind, OutcomeClass
from .common import Connection, ViewModel, records
from .display import NumberFormat

CITATION = re.compile(r"\[([SP])(\d+)\]")
"""A citation in a rationale: [S<step>] cites a step, [P<pos>] a prior-context source."""


HISTORY_FORMATS: dict[str, NumberFormat] = {
    "calls": "count",
    "followups": "count",
    "input_tokens": "tokens",
    "output_tokens": "tokens",
    "cost_usd": "usd",
    "confidence": "decimal",
}
"""How the judgment history's numbers are shown."""


class SpanHeader(ViewModel):
    """The stored context row of a span with its outcome class."""

    span_id: str
    """`<episode_id>/<first delivery_id>`."""
    episode_id: str
    """Episode of the span."""
    status: str
    """Eligibility status (eligible, empty, unassessable, error, auto_neutral), A.1.6."""
    judge: str = "rules"
    """The judge whose verdict this header (and the entry table) shows."""
    outcome: OutcomeClass
    """Outcome class (A.4.1): the verdict's triage label, or error, unjudged, empty, unassessable."""
    first_step: int | None = None
    """Step that consumed the first delivery."""
    last_step: int | None = None
    """Step that consumed the last delivery (restatements included)."""
    form: str | None = None
    """Delivery form."""
    route: str | None = None
    """Delivery route (host or agent)."""
    n_entries: int = 0
    """Entries |M_S|."""
    restatements: int = 0
    """Later deliveries restating the same entries."""
    est_tokens: int = 0
    """Estimated delivered tokens, floor(chars / 4) (A.4.4)."""
    reason: str | None = None
    """Why the span is not eligible, when it is not."""
    verdict_judgment: str | None = None
    """Judgment behind the current verdict (None: no verdict)."""

    @property
    def judgeable(self) -> bool:
        """Only eligible spans are judged (A.1.6)."""
        return self.status == "eligible"

    @property
    def steps(self) -> str:
        """The consuming steps for a header: "steps 3–5", "step 3", or that none is recorded (a
        delivery no recorded step consumed, e.g. a Letta memory block outside any step)."""
        first, last = self.first_step, self.last_step
        if first is None and last is None:
            return "no consuming step recorded"
        if first is None or last is None or first == last:
            return f"step {first if first is not None else last}"
        return f"steps {first}–{last}"


class SharedLine(ViewModel):
    """One line of delivered text."""

    text: str
    """The line (recorded, untrusted)."""
    shared: bool
    """Also present in the prior context (MemUse 3.3)."""


class Placement(ViewModel):
    """Where the target delivery put its text in the model's input."""

    pos: int
    """Placement number."""
    slot: str | None = None
    """Slot of the input it went into."""
    kind: str | None = None
    """Kind of placement."""
    message_index: int | None = None
    """Index of the input message."""
    size: int | None = None
    """Characters placed."""
    lines: list[SharedLine] | None = None
    """The placed text by line (None when the text was redacted)."""


class PriorSource(ViewModel):
    """One source [P<pos>] of the prior context B_S."""

    pos: int
    """Source number, cited as [P<pos>]."""
    kind: str | None = None
    """Kind of source."""
    message_index: int | None = None
    """Index of the input message."""
    role: str | None = None
    """Message role."""
    text: str = ""
    """Visible text (the target cut out)."""
    chars: int | None = None
    """Characters of visible text."""


class EntryText(ViewModel):
    """The exposed text of one entry."""

    pos: int
    """Entry position in the span."""
    item_id: str | None = None
    """Memory item id."""
    exposure: str | None = None
    """full, clipped or unknown (A.1.2)."""
    exposed_text: str | None = None
    """What the agent could see of the entry (None: unknown exposure)."""


class Segment(ViewModel):
    """A piece of rationale text: plain text, or a citation."""

    text: str
    """The text (the citation itself for a citation)."""
    kind: Literal["S", "P"] | None = None
    """S: a step, P: a prior-context source, None: plain text."""
    number: int | None = None
    """Cited step or source number."""


class Rationale(ViewModel):
    """The current judgment's rationale for one entry."""

    pos: int
    """Entry position."""
    namespace: str
    """Memory namespace of the item."""
    item_id: str | None = None
    """Memory item id."""
    usage_label: str | None = None
    """Usage label (A.4.1)."""
    harmful: bool
    """Misused, or its observed effect harmed the episode."""
    notes: list[Segment]
    """The judge's notes, split at citations."""


class SpanView(ViewModel):
    """Everything the span inspector shows about one span."""

    header: SpanHeader
    """Status, outcome class and size."""
    placements: list[Placement]
    """Placements of the target delivery."""
    prior: list[PriorSource]
    """Prior-context sources B_S."""
    entries: pd.DataFrame
    """Entry table: pos, namespace, item_id, exposure, window_start, window_end and, when
    judged, the current assessment's signals, anchors, evidence and usage label."""
    entry_texts: list[EntryText]
    """Exposed text of each entry."""
    judged: bool
    """The span has a current accepted judgment."""
    summary: list[Segment]
    """The current judgment's span summary, split at citations (empty when none)."""
    rationales: list[Rationale]
    """Per-entry rationales of the current judgment."""
    citations: list[str]
    """Every step and source the current judgment cites (S7, P3, ...), in order of appearance."""
    judgments: pd.DataFrame
    """Every judgment of the span, newest first: current (the judgment behind the verdict),
    judgment_id, judge, model (empty for the rules judge), status, reason, calls, follow-ups,
    tokens, cost and times."""

    @property
    def current_judgment(self) -> str | None:
        """The judgment behind the span's verdict (None: no verdict)."""
        return self.header.verdict_judgment


def segments(text: str | None) -> list[Segment]:
    """Rationale text split into plain pieces and [S7] / [P3] citations."""
    out: list[Segment] = []
    last, s = 0, text or ""
    for m in CITATION.finditer(s):
        if m.start() > last:
            out.append(Segment(text=s[last : m.start()]))
        out.append(Segment(text=m.group(0), kind=m.group(1), number=int(m.group(2))))  # type: ignore[arg-type]
        last = m.end()
    if last < len(s):
        out.append(Segment(text=s[last:]))
    return out


def _steps(v: Any) -> list[str]:
    return [f"S{int(x)}" for x in (v if v is not None else [])]


def _history(judgments: pd.DataFrame) -> pd.DataFrame:
    """Judgment history for display: `current` first, no model for the rules judge (it calls
    none; the settings may still name a default model)."""
    if not len(judgments):
        return judgments
    out = judgments.copy()
    out["model"] = out["model"].where(out["judge"] != "rules", None)
    return out[["current", *[c for c in out.columns if c != "current"]]]


def span(con: Connection, span_id: str, judge: JudgeKind | None = None) -> SpanView | None:
    """The span inspector's view of one span (None when the span is not in the store), with one
    judge's verdict (`judge`, default `store.judging.resolve_judge`)."""
    row = store_spans.span_row(con, span_id, judge)
    if row is None:
        return None
    header = SpanHeader.model_validate({k: v for k, v in row.items() if v is not None or k == "outcome"})
    prior = [PriorSource.model_validate(r) for r in records(store_spans.span_prior_sources(con, span_id))]
    prior_texts = [p.text for p in prior]
    placements = []
    for p in records(store_spans.span_placements(con, span_id)):
        text = p.pop("text")
        lines = None
        if text is not None:
            lines = [SharedLine(text=t, shared=s) for t, s in figures.shared_lines(text, prior_texts)]
        placements.append(Placement.model_validate(p | {"lines": lines}))
    ents = store_spans.span_entries(con, span_id)
    table = ents[["pos", "namespace", "item_id", "exposure", "window_start", "window_end"]].copy()
    assess = (
        store_spans.judgment_assessments(con, header.verdict_judgment)
        if header.verdict_judgment
        else pd.DataFrame()
    )
    judgments = _history(store_spans.span_judgments(con, span_id))
    summary: list[Segment] = []
    rationales: list[Rationale] = []
    citations: list[str] = []
    if len(assess):
        table = table.merge(assess.drop(columns=["item_id", "notes"]), on="pos", how="left")
        current = judgments[judgments["judgment_id"] == header.verdict_judgment]
        if len(current) and current.iloc[0]["summary"]:
            summary = segments(str(current.iloc[0]["summary"]))
            citations += [s.text[1:-1] for s in summary if s.kind]
        namespaces = dict(zip(ents["pos"], ents["namespace"]))
        for a in records(assess):
            notes = segments(a.get("notes"))
            rationales.append(
                Rationale(
                    pos=int(a["pos"]),
                    namespace=str(namespaces.get(a["pos"]) or "default"),
                    item_id=a.get("item_id"),
                    usage_label=a.get("usage_label"),
                    harmful=a.get("usage_label") == "misused" or a.get("effect") == "harmed",
                    notes=notes,
                )
            )
            citations += [s.text[1:-1] for s in notes if s.kind]
            citations += _steps(a.get("anchors")) + _steps(a.get("evidence"))
    return SpanView(
        header=header,
        placements=placements,
        prior=prior,
        entries=table,
        entry_texts=[EntryText.model_validate(e) for e in records(ents)],
        judged=bool(len(assess)),
        summary=summary,
        rationales=rationales,
        citations=list(dict.fromkeys(citations)),
        judgments=judgments,
    )


def span_choices(con: Connection, episode_id: str) -> list[str]:
    """Span ids of an episode in step order (for a picker)."""
    return list(store_episodes.episode_spans(con, episode_id)["span_id"])
