"""The MemTrim page's view: for a recorded delivery, what MemTrim would keep or remove and why;
across the corpus, what `memuse trim` stored (MemTrim 3.3 and A.1 applied to MemUse deliveries).

One call, `memtrim_view(db, runs=..., episode=..., delivery=...)`, returns everything the page
shows as a pydantic model: the picker options (a stale or missing selection falls back to the
first option), the delivery's what-if with a plain-language account of every decision, the
figure's data and the corpus tables. It opens the store read-only for that one unit of work;
a missing or busy store comes back as `problem`, never as an exception. Nothing here imports
Streamlit. Recorded text is returned as data; the page shows it escaped.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from ..vocab import TRIM_CLASSES, TRIM_OUTCOMES, estimate_tokens
from ..wording import plural

UNIT_CLASSES = ("shared", "conflicting", "memory_only", "answer_units", "withheld")
"""How a delivered entry's units are shown, in the order of 3.3."""
UNIT_CLASS_HELP = {
    "shared": "already stated in the prior context: removed",
    "conflicting": "the prior context gives another value: removed (the prior context wins)",
    "memory_only": "not in the prior context: kept",
    "answer_units": "restates the entry's stored answer: follows the answer's outcome",
    "withheld": "delivered entries disagree on this key: withheld",
}
CLASS_HELP = {
    "redundant": "every unit is already in the prior context",
    "partial": "some units are shared with or contradicted by the prior context",
    "novel": "no unit is in the prior context",
    "empty": "the parser found no evidence units (nothing MemTrim can pass on)",
}
OUTCOME_HELP = {
    "kept": "same question as the stored answer and none of its support changed",
    "relabelled": "a different question: the answer may pass only as a fact under its own key",
    "suppressed": "a fact the stored answer depends on changed, or could not be checked",
    "none": "the entry carries no stored answer",
}
PRIOR_HELP = {
    "span_context": "the verified prior sources of the span this delivery opens (MemUse A.1.3)",
    "episode_record": "the consuming call's input with this delivery's own placements cut out (MemUse A.1.3)",
    "none": "the delivery was never consumed by a recorded call, so there is no prior context: every "
    "unit is memory-only",
}
MAX_QUERY_UNITS = 200


class _Model(BaseModel):
    model_config = ConfigDict(use_attribute_docstrings=True)


class UnitRow(_Model):
    """One evidence unit of a delivered entry."""

    klass: str
    """One of UNIT_CLASSES."""
    key: str
    """Canonical key label (`entity.attribute`)."""
    text: str
    """The source span it was read from (recorded text)."""


class EntryWhatIfView(_Model):
    """MemTrim's decision for one delivered entry."""

    pos: int
    item_id: str | None
    trim_class: str
    """vocab.TRIM_CLASSES."""
    outcome: str
    """vocab.TRIM_OUTCOMES."""
    reason: str
    explanation: list[str]
    """The decision step by step (shared, conflicting, memory-only, the stored answer)."""
    jaccard: float
    chars_before: int
    chars_after: int
    units: list[UnitRow]
    kept_lines: list[str]
    """What MemTrim would pass on from this entry."""


class DeliveryWhatIfView(_Model):
    """The what-if of one delivery."""

    delivery_id: str
    prior_from: str
    prior_help: str
    chars_before: int
    chars_after: int
    tokens_saved: int
    entries: list[EntryWhatIfView]
    query_units: list[tuple[str, str]]
    """(key, text) of the first MAX_QUERY_UNITS units parsed from the prior context."""
    n_query_units: int
    context: str
    """The trimmed memory context MemTrim would deliver."""


class DeliveryOption(_Model):
    delivery_id: str
    label: str


class CorpusView(_Model):
    """What `memuse trim` stored, across the corpus (empty before it ran)."""

    computed: bool = False
    summary: list[dict[str, Any]] = Field(default_factory=list)
    """Per configuration: deliveries, entries, units, characters, estimated tokens saved."""
    judged_entries: int = 0
    agreement: float | None = None
    precision: float | None = None
    recall: float | None = None
    agreement_table: list[dict[str, Any]] = Field(default_factory=list)
    """MemTrim class x judge novelty counts."""
    overlap: list[dict[str, Any]] = Field(default_factory=list)
    """Per use group and configuration: entries and median prior-context Jaccard (RQ2)."""


class MemTrimView(_Model):
    """Everything the MemTrim page shows."""

    problem: str | None = None
    """Why nothing could be read (missing or busy store)."""
    episodes: list[str] = Field(default_factory=list)
    episode: str | None = None
    deliveries: list[DeliveryOption] = Field(default_factory=list)
    delivery: str | None = None
    whatif: DeliveryWhatIfView | None = None
    whatif_problem: str | None = None
    figure: list[dict[str, Any]] = Field(default_factory=list)
    """Unit counts per entry and class of the selected delivery (the page's one figure)."""
    corpus: CorpusView = Field(default_factory=CorpusView)
    unit_help: dict[str, str] = Field(default_factory=lambda: dict(UNIT_CLASS_HELP))
    class_help: dict[str, str] = Field(default_factory=lambda: {str(k): CLASS_HELP[k] for k in TRIM_CLASSES})
    outcome_help: dict[str, str] = Field(
        default_factory=lambda: {str(k): OUTCOME_HELP[k] for k in TRIM_OUTCOMES}
    )


def memtrim_view(
    db: str | Path,
    *,
    runs: list[str] | None = None,
    episode: str | None = None,
    delivery: str | None = None,
    timeout: float = 5.0,
) -> MemTrimView:
    """The page's view for these selections (module docstring)."""
    from ..store import StoreError, connect

    try:
        con = connect(db, read_only=True, timeout=timeout)
    except StoreError as e:
        return MemTrimView(problem=str(e))
    try:
        return _build(con, runs, episode, delivery)
    finally:
        con.close()


def _build(con: Any, runs: list[str] | None, episode: str | None, delivery: str | None) -> MemTrimView:
    from ..store.trim_views import episode_has_deliveries, trim_delivery_choices, trim_episode_choices

    view = MemTrimView(corpus=corpus_view(con))
    view.episodes = trim_episode_choices(con, runs)
    if episode is not None and episode not in view.episodes and episode_has_deliveries(con, episode):
        view.episodes.insert(0, episode)  # a deep link outside the sidebar scope still opens
    if not view.episodes:
        return view
    view.episode = episode if episode in view.episodes else view.episodes[0]
    for did, step, form, n in trim_delivery_choices(con, view.episode):
        at = f"S{step}" if step is not None else "never consumed"
        view.deliveries.append(
            DeliveryOption(delivery_id=did, label=f"{did} · {at} · {form or '?'} · {plural(n, 'entry')}")
        )
    ids = [d.delivery_id for d in view.deliveries]
    if not ids:
        return view
    view.delivery = delivery if delivery in ids else ids[0]
    try:
        view.whatif = delivery_view(con, view.delivery)
    except KeyError as e:
        view.whatif_problem = str(e.args[0]) if e.args else str(e)
    if view.whatif is not None:
        view.figure = [
            {
                "entry": f"#{e.pos} {e.item_id or ''}".strip(),
                "class": u,
                "units": sum(1 for x in e.units if x.klass == u),
            }
            for e in view.whatif.entries
            for u in UNIT_CLASSES
        ]
    return view


def delivery_view(con: Any, delivery_id: str) -> DeliveryWhatIfView:
    """The what-if of one stored delivery with every decision explained."""
    from ..trim.whatif import delivery_whatif

    w = delivery_whatif(con, delivery_id)
    entries = []
    for e in w.entries:
        d = e.decision
        units = [
            UnitRow(klass=k, key=u.key.label(), text=u.span or u.text)
            for k in UNIT_CLASSES
            for u in getattr(d, k)
            if u.key.attribute != "subject"
        ]
        explanation = d.explain() if e.text.strip() else ["No recorded value: nothing to trim."]
        entries.append(
            EntryWhatIfView(
                pos=e.pos,
                item_id=e.item_id,
                trim_class=e.klass,
                outcome=d.outcome,
                reason=d.reason,
                explanation=explanation,
                jaccard=float(e.jaccard),
                chars_before=e.chars_before,
                chars_after=e.chars_after,
                units=units,
                kept_lines=list(e.lines),
            )
        )
    before = sum(x.chars_before for x in entries)
    after = sum(x.chars_after for x in entries)
    return DeliveryWhatIfView(
        delivery_id=w.delivery_id,
        prior_from=w.prior_from,
        prior_help=PRIOR_HELP.get(w.prior_from, w.prior_from),
        chars_before=before,
        chars_after=after,
        tokens_saved=estimate_tokens(max(0, before - after)),
        entries=entries,
        query_units=[(u.key.label(), u.text or str(u.value)) for u in w.query_units[:MAX_QUERY_UNITS]],
        n_query_units=len(w.query_units),
        context=w.context,
    )


def corpus_view(con: Any) -> CorpusView:
    """The stored `memuse trim` results across the corpus (empty before it ran)."""
    from ..store.trim_views import novelty_agreement, overlap_by_usage, trim_summary

    summ = trim_summary(con)
    if not len(summ):
        return CorpusView()
    agr = novelty_agreement(con)
    ov = overlap_by_usage(con)
    overlap: list[dict[str, Any]] = []
    if len(ov):
        g = ov.groupby(["group", "config"])["jaccard"]
        overlap = [
            {"group": grp, "config": cfg, "entries": int(n), "median_jaccard": float(m)}
            for (grp, cfg), n, m in zip(g.size().index, g.size().to_numpy(), g.median().to_numpy())
        ]
    return CorpusView(
        computed=True,
        summary=_records(summ),
        judged_entries=int(agr["n"]),
        agreement=agr["agreement"],
        precision=agr["precision"],
        recall=agr["recall"],
        agreement_table=_records(agr["table"]),
        overlap=overlap,
    )


def _records(df: Any) -> list[dict[str, Any]]:
    """DataFrame rows as plain dicts (NA and NaN as None, numpy scalars as Python values)."""
    out = []
    for row in df.astype(object).where(df.notna(), None).to_dict("records"):
        out.append({k: (v.item() if hasattr(v, "item") else v) for k, v in row.items()})
    return out
