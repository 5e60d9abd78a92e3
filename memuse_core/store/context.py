"""Writing built evaluation contexts (MemUse 3.3, A.1) into the derived context tables.

`write_contexts` stores `rules.models.EpisodeContext` values (checks, per-delivery exposure, spans,
entries with windows, prior sources, earlier copies) and refreshes the stored outcome class of
their spans (`store.outcomes`). Reading them back is `store.spans`.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

import duckdb
import pyarrow as pa

from ..rules.models import EpisodeContext
from .area_tables import CONTEXT_DDL
from .blobs import blob_hash
from .outcomes import backfill_outcomes, refresh_outcomes
from .tables import append_rows

CONTEXT_TABLES = [  # derived from events alone; `span_outcomes` also depends on the judged tables
    "context_built",
    "recording_checks",
    "delivery_context",
    "entry_exposure",
    "spans",
    "span_deliveries",
    "span_entries",
    "prior_sources",
    "span_earlier_copies",
]

S, I32, I64, B = pa.string(), pa.int32(), pa.int64(), pa.bool_()
_COLS: dict[str, list[tuple[str, pa.DataType]]] = {
    "context_built": [
        ("episode_id", S),
        ("valid", B),
        ("n_deliveries", I32),
        ("n_spans", I32),
        ("built_at", pa.timestamp("us")),
    ],
    "recording_checks": [("episode_id", S), ("ok", B), ("rule", S), ("detail", S)],
    "delivery_context": [
        ("delivery_id", S),
        ("episode_id", S),
        ("seq", I32),
        ("consuming_step", I32),
        ("attributed", B),
        ("verified", B),
        ("span_id", S),
        ("restatement", B),
        ("chars", I64),
        ("problem", S),
    ],
    "entry_exposure": [
        ("delivery_id", S),
        ("pos", I32),
        ("episode_id", S),
        ("exposure", S),
        ("placement_pos", I32),
        ("stage", S),
        ("exposed_hash", I64),
        ("exposed_chars", I32),
    ],
    "spans": [
        ("span_id", S),
        ("episode_id", S),
        ("seq", I32),
        ("status", S),
        ("first_step", I32),
        ("last_step", I32),
        ("first_delivery_id", S),
        ("n_deliveries", I32),
        ("restatements", I32),
        ("n_entries", I32),
        ("chars", I64),
        ("est_tokens", I64),
        ("form", S),
        ("route", S),
        ("reason", S),
        ("removed_steps", pa.list_(I32)),
    ],
    "span_deliveries": [("span_id", S), ("delivery_id", S), ("pos", I32), ("episode_id", S)],
    "span_entries": [
        ("span_id", S),
        ("pos", I32),
        ("episode_id", S),
        ("namespace", S),
        ("item_id", S),
        ("version", S),
        ("digest", S),
        ("display_key", S),
        ("value_hash", I64),
        ("exposure", S),
        ("stage", S),
        ("exposed_hash", I64),
        ("exposed_chars", I32),
        ("window_start", I32),
        ("window_end", I32),
        ("resident", B),
    ],
    "prior_sources": [
        ("span_id", S),
        ("pos", I32),
        ("episode_id", S),
        ("kind", S),
        ("message_index", I32),
        ("role", S),
        ("text_hash", I64),
        ("chars", I32),
        ("cut", S),
    ],
    "span_earlier_copies": [
        ("span_id", S),
        ("entry_pos", I32),
        ("episode_id", S),
        ("delivery_id", S),
        ("step", I32),
        ("visibility", S),
        ("contains_target", B),
    ],
}


def ensure_context_tables(con: duckdb.DuckDBPyConnection) -> None:
    """Create the context tables; a derived table whose columns differ from this version's DDL
    is dropped and recreated (it is rebuilt from events anyway)."""
    for sql in CONTEXT_DDL:
        con.execute(sql)
    for table, cols in _COLS.items():
        have = [
            r[0]
            for r in con.execute(
                "SELECT column_name FROM information_schema.columns WHERE table_name = ? "
                "ORDER BY ordinal_position",
                [table],
            ).fetchall()
        ]
        if have != [c for c, _ in cols]:
            con.execute(f"DROP TABLE IF EXISTS {table}")
            for sql in CONTEXT_DDL:
                if f"EXISTS {table} (" in sql:
                    con.execute(sql)
    backfill_outcomes(con)


def clear_context(con: duckdb.DuckDBPyConnection) -> None:
    """Empty every context table (for `memuse build --rebuild`); other tables are untouched."""
    ensure_context_tables(con)
    con.execute("BEGIN")
    for t in [*CONTEXT_TABLES, "span_outcomes"]:
        con.execute(f"DELETE FROM {t}")
    con.execute("COMMIT")


def episodes_to_build(
    con: duckdb.DuckDBPyConnection, episode_ids: list[str] | None, *, rebuild: bool
) -> list[str]:
    """Stored episodes to build, in stored order: the given ones, or all not yet built."""
    ensure_context_tables(con)
    if episode_ids is not None:
        rows = con.execute(
            "SELECT episode_id FROM episodes WHERE episode_id IN "
            "(SELECT unnest(?::VARCHAR[])) ORDER BY file_id, seq",
            [episode_ids],
        ).fetchall()
        return [r[0] for r in rows]
    if rebuild:
        rows = con.execute("SELECT episode_id FROM episodes ORDER BY file_id, seq").fetchall()
    else:
        rows = con.execute(
            "SELECT episode_id FROM episodes WHERE episode_id NOT IN "
            "(SELECT episode_id FROM context_built) ORDER BY file_id, seq"
        ).fetchall()
    return [r[0] for r in rows]


def _append(con: duckdb.DuckDBPyConnection, table: str, rows: list[tuple[Any, ...]]) -> None:
    if not rows:
        return
    cols = _COLS[table]
    arrays = [pa.array(list(col), type=t) for col, (_, t) in zip(zip(*rows), cols)]
    con.register("_ctx_rows", pa.Table.from_arrays(arrays, names=[c for c, _ in cols]))
    try:
        con.execute(f"INSERT INTO {table} SELECT * FROM _ctx_rows")
    finally:
        con.unregister("_ctx_rows")


class _Blobs:
    """Collects texts to store as content-addressed blobs; writes only the missing ones."""

    def __init__(self) -> None:
        self.texts: dict[int, str] = {}

    def add(self, text: str | None, *, stored: bool = False) -> int | None:
        """Hash of `text`; `stored=True` when the text is known to be a stored blob already."""
        if text is None:
            return None
        h = blob_hash(text)
        if not stored:
            self.texts.setdefault(h, text)
        return h

    def write(self, con: duckdb.DuckDBPyConnection) -> None:
        if self.texts:
            append_rows(con, "blobs", list(self.texts.items()), or_ignore=True)


def write_contexts(
    con: duckdb.DuckDBPyConnection,
    ctxs: list[EpisodeContext],
    *,
    replace: bool = True,
    ensure: bool = True,
    transaction: bool = False,
) -> None:
    """Write built episode contexts and their spans' outcome classes; with `replace`, earlier rows
    of those episodes are deleted first. `ensure=False` skips the table check (done once per
    build). The caller holds the transaction, unless `transaction` asks for one here."""
    if ensure:
        ensure_context_tables(con)
    if not ctxs:
        return
    if transaction:
        con.execute("BEGIN")
        try:
            write_contexts(con, ctxs, replace=replace, ensure=False)
            con.execute("COMMIT")
        except BaseException:
            con.execute("ROLLBACK")
            raise
        return
    ids = [c.episode_id for c in ctxs]
    if replace:
        built = [
            r[0]
            for r in con.execute(
                "SELECT episode_id FROM context_built WHERE episode_id IN (SELECT unnest(?::VARCHAR[]))",
                [ids],
            ).fetchall()
        ]
        if built:
            for t in CONTEXT_TABLES:
                con.execute(f"DELETE FROM {t} WHERE episode_id IN (SELECT unnest(?::VARCHAR[]))", [built])
    blobs = _Blobs()
    rows: dict[str, list[tuple[Any, ...]]] = {t: [] for t in _COLS}
    now = datetime.now(UTC).replace(tzinfo=None)
    for c in ctxs:
        eid = c.episode_id
        rows["context_built"].append((eid, c.valid, len(c.deliveries), len(c.spans), now))
        for chk in c.checks:
            rows["recording_checks"].append((eid, chk.ok, chk.rule, chk.detail))
        for k, d in enumerate(c.deliveries):
            rows["delivery_context"].append(
                (
                    d.delivery_id,
                    eid,
                    k,
                    d.consuming_step,
                    d.attributed,
                    d.verified,
                    d.span_id,
                    d.restatement,
                    d.chars,
                    d.problem,
                )
            )
            for x in d.entries:
                rows["entry_exposure"].append(
                    (
                        d.delivery_id,
                        x.pos,
                        eid,
                        x.exposure,
                        x.placement_pos,
                        x.stage,
                        blobs.add(x.exposed_text),
                        len(x.exposed_text) if x.exposed_text is not None else None,
                    )
                )
        for k, s in enumerate(c.spans):
            sid = s.span_id
            rows["spans"].append(
                (
                    sid,
                    eid,
                    k,
                    s.status,
                    s.first_step,
                    s.last_step,
                    s.delivery_ids[0] if s.delivery_ids else None,
                    len(s.delivery_ids),
                    s.restatements,
                    len(s.entries),
                    s.chars,
                    s.est_tokens,
                    s.form,
                    s.route,
                    s.reason,
                    list(s.removed_steps),
                )
            )
            for p, did in enumerate(s.delivery_ids):
                rows["span_deliveries"].append((sid, did, p, eid))
            for e in s.entries:
                w = e.window
                rows["span_entries"].append(
                    (
                        sid,
                        e.pos,
                        eid,
                        e.namespace,
                        e.item_id,
                        e.version,
                        e.digest,
                        e.display_key,
                        blobs.add(e.value),
                        e.exposure,
                        e.stage,
                        blobs.add(e.exposed_text),
                        len(e.exposed_text) if e.exposed_text is not None else None,
                        w[0] if w else None,
                        w[1] if w else None,
                        e.resident,
                    )
                )
            for ps in s.prior_sources:
                rows["prior_sources"].append(
                    (
                        sid,
                        ps.pos,
                        eid,
                        "memory_only" if ps.memory_only else "message",
                        ps.message_index,
                        ps.role,
                        # an uncut message without tool calls is its stored content
                        blobs.add(ps.text, stored=not ps.cut and "[tool call " not in ps.text),
                        len(ps.text),
                        json.dumps([list(x) for x in ps.cut]) if ps.cut else None,
                    )
                )
            for ec in s.earlier_copies:
                rows["span_earlier_copies"].append(
                    (sid, ec.entry_pos, eid, ec.delivery_id, ec.step, ec.visibility, ec.contains_target)
                )
    blobs.write(con)
    for t, r in rows.items():
        _append(con, t, r)
    refresh_outcomes(con, episode_ids=ids)
