"""The app's writes (annotations and case studies), never lost to a busy database.

Every write goes to the app-write journal first (`store.app.pending`, fsynced) and is then
applied together with anything queued before it, in order, in one short read-write transaction.
When another process holds the database (an ingest, a judge batch) beyond the short lock wait,
the write stays in the journal and is reported as queued; `flush` (called by the app every few
seconds while anything is pending, and before every later write) saves it once the lock is free.
"""

from __future__ import annotations

import datetime as dt
import os
import uuid
from typing import Any, Literal

from pydantic import Field

from ..casestudy import Annotation, CaseStudy
from ..store import StoreLocked, connect
from ..store.app import case_studies as store_cs
from ..store.app import pending as store_pending
from ..wording import plural
from .common import Connection, ViewModel

WriteKind = Literal["annotation", "case_study", "collect", "delete", "import"]
"""What a write does: store an annotation or a case study, collect or delete annotations,
import a case-study file."""


class Write(ViewModel):
    """One write of the app, as journaled."""

    write_id: str = Field(default_factory=lambda: uuid.uuid4().hex[:12])
    """Id of this write (shown while it is pending)."""
    kind: WriteKind
    """What it does."""
    label: str
    """What the user sees while it is pending ("annotation 1a2b… on span …")."""
    payload: dict[str, Any]
    """The rows or ids it writes (JSON)."""
    queued_at: dt.datetime = Field(default_factory=lambda: dt.datetime.now(dt.UTC).replace(tzinfo=None))
    """When the user asked for it (UTC)."""


def annotation_write(a: Annotation) -> Write:
    """Store (or replace) an annotation."""
    return Write(
        kind="annotation",
        label=f"annotation {a.annotation_id} on {a.target_kind} {a.target_id}",
        payload=a.model_dump(mode="json"),
    )


def case_study_write(study: CaseStudy) -> Write:
    """Store a new (or renamed) case study."""
    return Write(
        kind="case_study",
        label=f"case study {study.name}",
        payload=study.model_dump(mode="json", include={"case_study_id", "name", "description", "created_at"}),
    )


def collect_write(annotation_ids: list[str], case_study_id: str | None) -> Write:
    """Collect annotations into a case study (None: out of any)."""
    return Write(
        kind="collect",
        label=f"collect {plural(len(annotation_ids), 'annotation')}",
        payload={"annotation_ids": list(annotation_ids), "case_study_id": case_study_id},
    )


def delete_write(annotation_ids: list[str]) -> Write:
    """Delete annotations."""
    return Write(
        kind="delete",
        label=f"delete {plural(len(annotation_ids), 'annotation')}",
        payload={"annotation_ids": list(annotation_ids)},
    )


def import_write(study: CaseStudy) -> Write:
    """Store an imported case study and its annotations (kept under their ids)."""
    return Write(
        kind="import",
        label=f"import of case study {study.name} ({plural(len(study.annotations), 'annotation')})",
        payload=study.model_dump(mode="json"),
    )


def _case_row(payload: dict[str, Any]) -> dict[str, Any]:
    study = CaseStudy.model_validate(payload)
    return study.model_dump(include={"case_study_id", "name", "description", "created_at"})


def apply(con: Connection, record: dict[str, Any]) -> None:
    """Apply one journaled write (inside the caller's transaction)."""
    w = Write.model_validate(record)
    p = w.payload
    if w.kind == "annotation":
        store_cs.upsert_annotation(con, Annotation.model_validate(p).row())
    elif w.kind == "case_study":
        store_cs.upsert_case_study(con, _case_row(p))
    elif w.kind == "collect":
        store_cs.assign_annotations(con, p["annotation_ids"], p.get("case_study_id"))
    elif w.kind == "delete":
        store_cs.delete_annotations(con, p["annotation_ids"])
    else:
        study = CaseStudy.model_validate(p)
        store_cs.upsert_case_study(con, _case_row(p))
        for a in study.annotations:
            store_cs.upsert_annotation(con, a.model_copy(update={"case_study_id": study.case_study_id}).row())


class Flushed(ViewModel):
    """What a flush of the journal did."""

    saved: int = 0
    """Writes saved now."""
    pending: list[Write] = []
    """Writes still waiting (the database is busy)."""
    busy: str | None = None
    """Why they wait: the lock holder, in one sentence (None when nothing waits)."""


def pending(db: str | os.PathLike[str]) -> list[Write]:
    """Writes waiting in the journal, oldest first."""
    return [Write.model_validate(r) for r in store_pending.read_pending(db)]


def flush(db: str | os.PathLike[str], timeout: float) -> Flushed:
    """Save every pending write if the database can be opened within `timeout` seconds."""
    waiting = store_pending.read_pending(db)
    if not waiting:
        return Flushed()
    try:
        con = connect(db, timeout=timeout)
    except StoreLocked as e:
        return Flushed(pending=[Write.model_validate(r) for r in waiting], busy=str(e))
    try:
        saved = store_pending.replay(con, db, apply)
    finally:
        con.close()
    return Flushed(saved=saved, pending=pending(db))


def save(db: str | os.PathLike[str], write: Write, timeout: float) -> Flushed:
    """Journal `write`, then save it with everything queued before it (or leave it queued)."""
    store_pending.append(db, write.model_dump(mode="json"))
    return flush(db, timeout)
