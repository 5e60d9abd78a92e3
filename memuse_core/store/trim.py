"""SQL of the MemTrim what-if (`memuse trim`, MemTrim 3.3 on recorded deliveries): what it reads
of the recorded deliveries and the `trim_results` rows it writes.

Plain rows out, plain rows in: the trim pipeline assembles its own values, the store never
imports it. The corpus views of the app's MemTrim page are in `trim_views`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import duckdb
import pyarrow as pa

from .area_tables import TRIM_DDL
from .blobs import iter_blob_texts

S, I32, I64, F64 = pa.string(), pa.int32(), pa.int64(), pa.float64()
TRIM_COLUMNS: list[tuple[str, pa.DataType]] = [
    ("delivery_id", S),
    ("pos", I32),
    ("episode_id", S),
    ("shared", I32),
    ("conflicting", I32),
    ("memory_only", I32),
    ("outcome", S),
    ("chars_before", I64),
    ("chars_after", I64),
    ("decision", S),
    ("namespace", S),
    ("item_id", S),
    ("prior_from", S),
    ("jaccard", F64),
    ("memtrim_class", S),
    ("tokens_saved", I64),
    ("same_as", S),
]


def ensure_trim_tables(con: duckdb.DuckDBPyConnection) -> None:
    """Create trim_results; an older layout (derived data) is dropped and recreated."""
    for sql in TRIM_DDL:
        con.execute(sql)
    have = [
        r[0]
        for r in con.execute(
            "SELECT column_name FROM information_schema.columns WHERE table_name = 'trim_results' "
            "ORDER BY ordinal_position"
        ).fetchall()
    ]
    if have != [c for c, _ in TRIM_COLUMNS]:
        con.execute("DROP TABLE IF EXISTS trim_results")
        for sql in TRIM_DDL:
            con.execute(sql)


def rows_table(rows: list[tuple[Any, ...]]) -> pa.Table:
    """trim_results rows (tuples in TRIM_COLUMNS order) as one Arrow table."""
    if not rows:
        return pa.table({c: pa.array([], type=t) for c, t in TRIM_COLUMNS})
    arrays = [pa.array(list(col), type=t) for col, (_, t) in zip(zip(*rows), TRIM_COLUMNS)]
    return pa.Table.from_arrays(arrays, names=[c for c, _ in TRIM_COLUMNS])


def delete_trim_rows(con: duckdb.DuckDBPyConnection, episode_ids: list[str] | None) -> None:
    """Remove the stored results of these episodes (all results when None)."""
    if episode_ids is None:
        con.execute("DELETE FROM trim_results")
    else:
        con.execute(
            "DELETE FROM trim_results WHERE episode_id IN (SELECT unnest(?::VARCHAR[]))", [episode_ids]
        )


def replace_trim_rows(
    con: duckdb.DuckDBPyConnection, episode_ids: list[str] | None, rows: list[tuple[Any, ...]] | pa.Table
) -> None:
    """Replace the results of these episodes in one transaction (`episode_ids=None`: the caller
    already removed them, only insert)."""
    con.execute("BEGIN")
    try:
        if episode_ids is not None:
            delete_trim_rows(con, episode_ids)
        tbl = rows if isinstance(rows, pa.Table) else rows_table(rows)
        if tbl.num_rows:
            con.register("_trim_rows", tbl)
            try:
                con.execute("INSERT INTO trim_results SELECT * FROM _trim_rows")
            finally:
                con.unregister("_trim_rows")
        con.execute("COMMIT")
    except Exception:
        con.execute("ROLLBACK")
        raise


def span_prior_texts(
    con: duckdb.DuckDBPyConnection, episode_ids: list[str]
) -> dict[str, dict[str, list[str]]]:
    """episode id -> (first delivery id of each built span -> texts of its prior sources B_S, in
    order), read from the evaluation-context tables (the same rows `load_episode_context`
    returns as `SpanContext.prior_sources`); {} for episodes whose context is not built."""
    if not (_has(con, "prior_sources") and _has(con, "spans")):
        return {}
    rows = con.execute(
        """
        SELECT s.episode_id, s.first_delivery_id, b.text
        FROM prior_sources p JOIN spans s ON s.span_id = p.span_id JOIN blobs b ON b.hash = p.text_hash
        WHERE s.episode_id IN (SELECT unnest(?::VARCHAR[])) AND length(b.text) > 0
        ORDER BY s.episode_id, s.first_delivery_id, p.pos""",
        [episode_ids],
    ).fetchall()
    out: dict[str, dict[str, list[str]]] = {}
    for eid, did, text in rows:
        out.setdefault(eid, {}).setdefault(did, []).append(text)
    return out


def shell_texts(con: duckdb.DuckDBPyConnection, shells: list[int]) -> dict[int, str]:
    """Visible text of stored message shells by shell hash (content blob, or the text parts of
    a list content), without rebuilding Message objects."""
    import json

    from ..events import message_text
    from .blobs import BLOB_REF

    parsed = {h: json.loads(t) for h, t in iter_blob_texts(con, shells).items()}
    refs = [c[BLOB_REF] for d in parsed.values() if isinstance(c := d.get("content"), dict) and BLOB_REF in c]
    contents = iter_blob_texts(con, refs)
    out = {}
    for h, d in parsed.items():
        c = d.get("content")
        out[h] = contents.get(c[BLOB_REF], "") if isinstance(c, dict) and BLOB_REF in c else message_text(c)
    return out


@dataclass
class EpisodeDeliveryRows:
    """What the MemTrim what-if reads of one episode, as plain rows (the pipeline assembles them)."""

    task: str | None = None
    """The episode's task text."""
    deliveries: list[tuple[str, str | None]] = field(default_factory=list)
    """(delivery id, consuming call id) in recorded order."""
    entries: dict[str, list[tuple[str, str | None, str | None, str | None]]] = field(default_factory=dict)
    """Delivery id -> (namespace, item id, digest, value) per entry; identical rows are one object."""
    placements: dict[str, list[tuple[str | None, int | None, int | None]]] = field(default_factory=dict)
    """Delivery id -> (text, proof message index, proof start) per placement."""
    calls: list[tuple[str, str | None, int | None, list[int]]] = field(default_factory=list)
    """(call id, base call id, base length, appended message hashes) in call order (delta encoding)."""
    messages: dict[int, str] = field(default_factory=dict)
    """Visible text of the message shells the calls reference."""


def delivery_rows(con: duckdb.DuckDBPyConnection, episode_ids: list[str]) -> dict[str, EpisodeDeliveryRows]:
    """episode id -> its deliveries, entries, placements and delta-encoded consuming inputs.

    Reads only what the what-if needs; linear in size (the calls stay delta-encoded), so a batch
    can be shipped to worker processes as is."""
    ids = list(episode_ids)
    dels = con.execute(
        "SELECT delivery_id, episode_id, consuming_call_id FROM deliveries "
        "WHERE episode_id IN (SELECT unnest(?::VARCHAR[])) ORDER BY file_id, seq",
        [ids],
    ).fetchall()
    ents = con.execute(
        "SELECT delivery_id, namespace, item_id, digest, value_hash FROM delivery_entries "
        "WHERE episode_id IN (SELECT unnest(?::VARCHAR[])) ORDER BY delivery_id, pos",
        [ids],
    ).fetchall()
    pls = con.execute(
        "SELECT delivery_id, text_hash, message_index, start FROM placements "
        "WHERE episode_id IN (SELECT unnest(?::VARCHAR[])) ORDER BY delivery_id, pos",
        [ids],
    ).fetchall()
    calls = con.execute(
        "SELECT episode_id, call_id, base_call_id, base_len, msg_hashes FROM calls "
        "WHERE episode_id IN (SELECT unnest(?::VARCHAR[])) ORDER BY episode_id, call_seq",
        [ids],
    ).fetchall()
    tasks = con.execute(
        "SELECT episode_id, task_hash FROM episodes WHERE episode_id IN (SELECT unnest(?::VARCHAR[]))", [ids]
    ).fetchall()
    msg_text = shell_texts(con, list({h for row in calls for h in (row[4] or [])}))
    texts = iter_blob_texts(con, [r[4] for r in ents] + [r[1] for r in pls] + [r[1] for r in tasks])
    out = {eid: EpisodeDeliveryRows(task=texts.get(th) if th is not None else None) for eid, th in tasks}
    # restated deliveries repeat the same entries and placements: one object per distinct row, so
    # a worker payload pickles each once
    seen: dict[Any, Any] = {}
    ent_by: dict[str, list[Any]] = {}
    for did, ns, iid, dg, vh in ents:
        row = seen.setdefault(
            ("e", ns, iid, dg, vh), (ns, iid, dg, texts.get(vh) if vh is not None else None)
        )
        ent_by.setdefault(did, []).append(row)
    pl_by: dict[str, list[Any]] = {}
    for did, th, mi, start in pls:
        pl = seen.setdefault(("p", th, mi, start), (texts.get(th) if th is not None else None, mi, start))
        pl_by.setdefault(did, []).append(pl)
    for did, eid, cid in dels:
        rows = out.setdefault(eid, EpisodeDeliveryRows())
        rows.deliveries.append((did, cid))
        rows.entries[did] = ent_by.get(did, [])
        rows.placements[did] = pl_by.get(did, [])
    for eid, cid, base, blen, hashes in calls:
        rows = out.setdefault(eid, EpisodeDeliveryRows())
        hs = list(hashes or [])
        rows.calls.append((cid, base, blen, hs))
        for h in hs:
            if h in msg_text:
                rows.messages[h] = msg_text[h]
    return out


def episode_ids(con: duckdb.DuckDBPyConnection, limit: int | None = None) -> list[str]:
    """Every episode id in import order (the first `limit` when given)."""
    rows = con.execute("SELECT episode_id FROM episodes ORDER BY file_id, seq").fetchall()
    ids = [r[0] for r in rows]
    return ids[:limit] if limit else ids


def delivery_episode(con: duckdb.DuckDBPyConnection, delivery_id: str) -> str | None:
    """The episode of a delivery (None when the delivery is unknown)."""
    row = con.execute("SELECT episode_id FROM deliveries WHERE delivery_id = ?", [delivery_id]).fetchone()
    return row[0] if row else None


def _has(con: duckdb.DuckDBPyConnection, table: str) -> bool:
    row = con.execute(
        "SELECT count(*) FROM information_schema.tables WHERE table_name = ?", [table]
    ).fetchone()
    return bool(row and row[0])
