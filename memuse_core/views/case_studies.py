"""Case-study view: annotations of steps, spans and items with human labels for the five signals
(MemUse 3.4), case studies that collect them, their HTML and Markdown export and import, and
human-vs-judge agreement per signal with Cohen's kappa (A.2.2)."""

from __future__ import annotations

import datetime as dt
import json
from typing import Any, Literal

import pandas as pd
import plotly.graph_objects as go

from .. import casestudy as cs
from ..casestudy import SIGNAL_VALUES, Annotation, CaseStudy, CaseStudyError, TargetKind, parse_tags
from ..metrics.render import judge_label
from ..store.app import case_studies as store_cs
from ..store.judging import resolve_judge
from ..vocab import JudgeKind
from .common import Connection, ViewModel, records, split_item, step_text
from .lineage import latest_value
from .span import span as span_view
from .timeline import timeline

__all__ = [
    "SIGNAL_VALUES",
    "Annotation",
    "CaseStudy",
    "CaseStudyError",
    "TargetKind",
    "TARGET_KINDS",
    "new_annotation",
    "parse_tags",
    "read_case_study_file",
]

TARGET_KINDS: tuple[TargetKind, ...] = ("span", "step", "item", "episode")
"""What can be annotated, in the order the page offers it."""
EXCERPT_CHARS = 20000
"""Recorded text exported with one annotation at most."""
new_annotation = cs.new_annotation
"""Build an annotation from the form's values (drops empty labels, rejects unknown ones)."""


def read_case_study_file(text: str, name: str) -> CaseStudy:
    """An exported HTML or Markdown case study read back (raises CaseStudyError)."""
    return cs.import_case_study(text, name=name)


def target_episode(kind: TargetKind, target_id: str) -> str | None:
    """The episode an annotation target belongs to (None for an item)."""
    if kind == "item":
        return None
    return target_id.split("#", 1)[0].split("/", 1)[0] or None


class Link(ViewModel):
    """Where an annotation's target can be opened."""

    page: Literal["span", "timeline", "lineage"]
    """Page key."""
    label: str
    """Link text."""
    params: dict[str, str]
    """Deep-link parameters."""


def target_link(kind: str, target_id: str) -> Link | None:
    """The page and deep link of an annotation target."""
    if kind == "span":
        return Link(page="span", label="open span", params={"span": target_id.split("#", 1)[0]})
    if kind == "step" and "#S" in target_id:
        ep, step = target_id.rsplit("#S", 1)
        return Link(page="timeline", label="open step", params={"episode": ep, "step": step})
    if kind == "item":
        return Link(page="lineage", label="open item", params={"item": target_id})
    return None


def _annotation(row: dict[str, Any]) -> Annotation:
    labels = row.get("labels")
    return Annotation.model_validate(
        row
        | {
            "note": row.get("note") or "",
            "tags": list(row["tags"]) if row.get("tags") is not None else [],
            "labels": json.loads(labels) if isinstance(labels, str) else {},
        }
    )


class CaseStudyRow(ViewModel):
    """A case study with its size."""

    case_study_id: str
    """Stable id."""
    name: str
    """Title."""
    description: str = ""
    """Markdown description (the user's)."""
    created_at: dt.datetime | None = None
    """Creation time (UTC)."""
    annotations: int = 0
    """Annotations collected."""


def case_studies(con: Connection) -> list[CaseStudyRow]:
    """Every case study, newest first."""
    return [
        CaseStudyRow.model_validate(r | {"description": r.get("description") or ""})
        for r in records(store_cs.list_case_studies(con))
    ]


class AnnotationList(ViewModel):
    """Every annotation, newest first."""

    annotations: list[Annotation]
    """The annotations."""
    table: pd.DataFrame
    """As a table: annotation_id, target_kind, target_id, episode_id, note, tags, labels (as
    `signal=value` text), author, created_at and `case study` (its name)."""


def annotation_list(con: Connection) -> AnnotationList:
    """Every annotation, with its case study's name."""
    names = {c.case_study_id: c.name for c in case_studies(con)}
    anns = [_annotation(r) for r in records(store_cs.list_annotations(con))]
    table = pd.DataFrame(
        [
            a.model_dump(exclude={"case_study_id", "labels"})
            | {
                "labels": ", ".join(f"{k}={v}" for k, v in a.labels.items()),
                "case study": names.get(a.case_study_id or "", "—"),
            }
            for a in anns
        ]
    )
    return AnnotationList(annotations=anns, table=table)


class Member(ViewModel):
    """An annotation of a case study and where its target opens."""

    annotation: Annotation
    """The annotation."""
    link: Link | None
    """Its target's page (None for an episode)."""


class CaseStudyView(ViewModel):
    """One case study with its annotations."""

    case: CaseStudyRow
    """The case study."""
    members: list[Member]
    """Its annotations, newest first."""


def case_study(con: Connection, case_study_id: str) -> CaseStudyView | None:
    """One case study (None when unknown)."""
    case = next((c for c in case_studies(con) if c.case_study_id == case_study_id), None)
    if case is None:
        return None
    anns = [_annotation(r) for r in records(store_cs.list_annotations(con, case_study_id))]
    return CaseStudyView(
        case=case, members=[Member(annotation=a, link=target_link(a.target_kind, a.target_id)) for a in anns]
    )


# ---- Export ------------------------------------------------------------------------------------


class Export(ViewModel):
    """A case study rendered for download."""

    case_study_id: str
    """The case study."""
    html: str
    """Self-contained HTML (plotly inline, no network)."""
    markdown: str
    """Markdown with the data for re-import."""
    filename: str
    """File name without extension."""
    judge: str = "rules"
    """The judge whose verdicts the exported timelines and excerpts show (every chart title names it)."""


TITLE_CHARS = 70
"""A figure title in an export at most (the annotation's heading above it carries the full id)."""


def _title(text: str, judge: str) -> str:
    """A chart title naming the judge, a long id shortened in the middle so the title fits its width."""
    suffix = f" · {judge_label(judge)}"
    room = TITLE_CHARS - len(suffix)
    if len(text) > room:
        half = (room - 1) // 2
        text = f"{text[:half]}…{text[-half:]}"
    return text + suffix


def _excerpt(con: Connection, a: Annotation, judge: JudgeKind) -> tuple[str | None, go.Figure | None]:
    """Recorded text and a timeline figure to show with an annotation."""
    tid = a.target_id
    if a.target_kind == "step" and "#S" in tid:
        ep, step = tid.rsplit("#S", 1)
        txt = step_text(con, ep, int(step)) if step.isdigit() else None
        if txt is None:
            return None, None
        fig = timeline(con, ep, int(step), title=_title(f"{ep} · S{step}", judge), judge=judge).figure
        return txt.as_text()[:EXCERPT_CHARS], fig
    if a.target_kind == "span":
        sid = tid.split("#", 1)[0]
        sv = span_view(con, sid, judge)
        if sv is None:
            return None, None
        body = "\n\n".join(
            f"#{e.pos} {e.item_id} ({e.exposure}): {e.exposed_text or ''}" for e in sv.entry_texts
        )
        return body[:EXCERPT_CHARS], timeline(
            con, sv.header.episode_id, span_id=sid, title=_title(sid, judge), judge=judge
        ).figure
    if a.target_kind == "item":
        value = latest_value(con, *split_item(tid))
        return (value[:EXCERPT_CHARS] if value else None), None
    return None, None


def export(con: Connection, case_study_id: str, judge: JudgeKind | None = None) -> Export | None:
    """The case study as HTML and Markdown files, with excerpts and timelines (None when unknown),
    from one judge's verdicts (`judge`, default `store.judging.resolve_judge`)."""
    chosen = resolve_judge(con, judge)
    view = case_study(con, case_study_id)
    if view is None:
        return None
    c = view.case
    doc = CaseStudy(
        case_study_id=c.case_study_id,
        name=c.name,
        description=c.description,
        created_at=c.created_at or dt.datetime.now(dt.UTC).replace(tzinfo=None),
    )
    figs: dict[str, go.Figure] = {}
    for m in view.members:
        doc.annotations.append(m.annotation)
        text, fig = _excerpt(con, m.annotation, chosen)
        if text:
            doc.excerpts[m.annotation.annotation_id] = text
        if fig is not None:
            figs[m.annotation.annotation_id] = fig
    safe = "".join(ch if ch.isalnum() or ch in "-_" else "_" for ch in c.name)[:60] or "case_study"
    return Export(
        case_study_id=case_study_id,
        html=cs.export_html(doc, figs),
        markdown=cs.export_markdown(doc),
        filename=safe,
        judge=chosen,
    )


# ---- Human vs judge agreement --------------------------------------------------------------------


class Agreement(ViewModel):
    """Human labels compared with one judge's current assessments."""

    judge: str = "rules"
    """The judge compared with (the table title names it)."""
    entries: int
    """Labelled span entries (targets `<span_id>#<pos>`)."""
    table: pd.DataFrame
    """Per signal: signal, pairs, agreement (share), kappa (Cohen's; None when undefined)."""


def agreement(con: Connection, judge: str | None = None) -> Agreement:
    """Agreement of human span-entry labels with one judge (`judge`, default
    `store.judging.resolve_judge`), per signal."""
    judge = resolve_judge(con, judge)
    pairs: list[tuple[str, int, dict[str, str]]] = []
    for a in annotation_list(con).annotations:
        if a.target_kind != "span" or not a.labels:
            continue
        sid, _, entry = a.target_id.partition("#")
        pairs.append((sid, int(entry) if entry.isdigit() else 0, a.labels))
    if not pairs:
        return Agreement(judge=judge, entries=0, table=pd.DataFrame())
    judged = records(store_cs.judge_labels_for(con, [(s, p) for s, p, _ in pairs], judge))
    by_target = {(r["span_id"], int(r["pos"])): r for r in judged}
    rows = []
    for span_id, pos, labels in pairs:
        jr = by_target.get((span_id, pos))
        if jr is None:
            continue
        rows += [(sig, hv, cs.judge_value(sig, jr.get(sig))) for sig, hv in labels.items()]
    return Agreement(judge=judge, entries=len(pairs), table=pd.DataFrame(cs.agreement_table(rows)))  # type: ignore[arg-type]


# ---- Writes (each in its own short read-write connection) ---------------------------------------


def create_case_study(con: Connection, study: CaseStudy) -> None:
    """Store a new (or renamed) case study."""
    store_cs.upsert_case_study(
        con, study.model_dump(include={"case_study_id", "name", "description", "created_at"})
    )


def save_annotation(con: Connection, annotation: Annotation) -> None:
    """Store (or replace) an annotation."""
    store_cs.upsert_annotation(con, annotation.row())


def collect(con: Connection, annotation_ids: list[str], case_study_id: str | None) -> None:
    """Collect annotations into a case study (None: out of any)."""
    store_cs.assign_annotations(con, annotation_ids, case_study_id)


def delete(con: Connection, annotation_ids: list[str]) -> None:
    """Delete annotations."""
    store_cs.delete_annotations(con, annotation_ids)


def import_case_study(con: Connection, study: CaseStudy) -> None:
    """Store an imported case study and its annotations (kept under their ids), all or nothing."""
    store_cs.store_case_study(
        con,
        study.model_dump(include={"case_study_id", "name", "description", "created_at"}),
        [a.model_copy(update={"case_study_id": study.case_study_id}).row() for a in study.annotations],
    )
