"""SQL of the MemTrim area: the what-if results of `memuse trim` and the corpus views the app's
MemTrim page shows (MemTrim 3.3 on recorded deliveries; the RQ2 overlap view of Section 2).

- `trim_summary(con)`: per configuration, characters and estimated tokens (floor(chars/4),
  MemUse A.4.4) MemTrim would save, unit counts and outcomes;
- `novelty_agreement(con)`: MemTrim's entry class (redundant / partial / novel / empty) against
  the judge's novelty label (novel / confirming / redundant) of the same entry, with agreement of
  "MemTrim redundant" vs "judge redundant" (empty when nothing is judged);
- `overlap_by_usage(con)`: query-memory content-word Jaccard (stored answer excluded) per entry
  with its usage label, in long form by group (used, unused, beneficial, harmful).
"""

from __future__ import annotations

from typing import Any

import duckdb
import pandas as pd
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


def delivery_inputs(
    con: duckdb.DuckDBPyConnection, episode_ids: list[str], *, resolve: bool = True
) -> dict[str, tuple[str | None, list[Any]]]:
    """episode id -> (task text, DeliveryInputs in recorded order) for the MemTrim what-if.

    Reads only what it needs: deliveries, their entries and placements, and the consuming calls'
    inputs, resolved from the delta encoding (base call prefix + appended message shells). With
    `resolve=False` the inputs stay delta-encoded in an `EpisodeCalls` value (linear in size, for
    shipping to worker processes, which call `whatif.resolve_inputs`)."""
    from ..trim.whatif import DeliveryInput, EntryView, EpisodeCalls, resolve_inputs

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
    shells = {h for row in calls for h in (row[4] or [])}
    msg_text = shell_texts(con, list(shells))
    texts = iter_blob_texts(con, [r[4] for r in ents] + [r[1] for r in pls] + [r[1] for r in tasks])
    # restated deliveries repeat the same entries and placements: share one object per distinct
    # value, so a worker payload pickles each once
    seen: dict[Any, Any] = {}
    ent_by: dict[str, list[EntryView]] = {}
    for did, ns, iid, dg, vh in ents:
        key = ("e", ns, iid, dg, vh)
        ev = seen.get(key)
        if ev is None:
            ev = seen[key] = EntryView(ns, iid, dg, texts.get(vh) if vh is not None else None)
        ent_by.setdefault(did, []).append(ev)
    pl_by: dict[str, list[tuple[str | None, int | None, int | None]]] = {}
    for did, th, mi, start in pls:
        pl = seen.setdefault(("p", th, mi, start), (texts.get(th) if th is not None else None, mi, start))
        pl_by.setdefault(did, []).append(pl)
    ep_calls: dict[str, EpisodeCalls] = {}
    for eid, cid, base, blen, hashes in calls:
        ec = ep_calls.setdefault(eid, EpisodeCalls())
        hs = list(hashes or [])
        ec.calls.append((cid, base, blen, hs))
        for h in hs:
            if h in msg_text:
                ec.texts[h] = msg_text[h]
    out: dict[str, tuple[str | None, list[Any]]] = {
        eid: (texts.get(th) if th is not None else None, []) for eid, th in tasks
    }
    for did, eid, cid in dels:
        out.setdefault(eid, (None, []))[1].append(
            DeliveryInput(did, eid, ent_by.get(did, []), pl_by.get(did, []), None, cid)
        )
    for eid, (_task, inputs) in out.items():
        ec = ep_calls.get(eid, EpisodeCalls())
        if resolve:
            resolve_inputs(inputs, ec)
        else:
            inputs.append(ec)  # the last element carries the episode's calls
    return out


def _has(con: duckdb.DuckDBPyConnection, table: str) -> bool:
    row = con.execute(
        "SELECT count(*) FROM information_schema.tables WHERE table_name = ?", [table]
    ).fetchone()
    return bool(row and row[0])


def trim_summary(con: duckdb.DuckDBPyConnection) -> pd.DataFrame:
    """Per configuration: deliveries, entries, unit counts, characters before/after, estimated
    tokens saved and the share saved (empty before `memuse trim`)."""
    cols = [
        "config",
        "deliveries",
        "entries",
        "shared",
        "conflicting",
        "memory_only",
        "chars_before",
        "chars_after",
        "chars_saved",
        "tokens_saved",
        "saved_share",
        "redundant_entries",
    ]
    if not _has(con, "trim_results"):
        return pd.DataFrame(columns=cols)
    return con.execute("""
        SELECT coalesce(r.config, '(none)') AS config, count(DISTINCT t.delivery_id) AS deliveries,
               count(*) AS entries, sum(t.shared) AS shared, sum(t.conflicting) AS conflicting,
               sum(t.memory_only) AS memory_only, sum(t.chars_before) AS chars_before,
               sum(t.chars_after) AS chars_after, sum(t.chars_before) - sum(t.chars_after) AS chars_saved,
               (sum(t.chars_before) - sum(t.chars_after)) // 4 AS tokens_saved,
               CASE WHEN sum(t.chars_before) > 0
                    THEN (sum(t.chars_before) - sum(t.chars_after)) / sum(t.chars_before) END AS saved_share,
               count(*) FILTER (WHERE t.memtrim_class = 'redundant') AS redundant_entries
        FROM trim_results t JOIN episodes e USING (episode_id) LEFT JOIN runs r ON r.run_id = e.run_id
        GROUP BY 1 ORDER BY 1""").df()


def _judged_entries_sql() -> str:
    """trim_results rows of span first deliveries joined with the current verdict's assessment."""
    return """
        SELECT t.delivery_id, t.pos, t.episode_id, t.memtrim_class, t.jaccard, a.novelty, a.influence,
               a.effect, a.usage_label, coalesce(r.config, '(none)') AS config
        FROM trim_results t
             JOIN spans s ON s.first_delivery_id = t.delivery_id
             JOIN verdicts v ON v.span_id = s.span_id
             JOIN assessments a ON a.judgment_id = v.judgment_id AND a.pos = t.pos
             JOIN episodes e ON e.episode_id = t.episode_id LEFT JOIN runs r ON r.run_id = e.run_id"""


def novelty_agreement(con: duckdb.DuckDBPyConnection) -> dict[str, Any]:
    """Cross-table of MemTrim class vs judge novelty, and agreement on "redundant".

    Returns {"table": DataFrame(memtrim_class, novelty, n), "n": judged entries,
    "agreement": share of entries where (MemTrim redundant) == (judge redundant),
    "precision"/"recall": of MemTrim redundant against judge redundant} (None values when empty)."""
    empty = {
        "table": pd.DataFrame(columns=["memtrim_class", "novelty", "n"]),
        "n": 0,
        "agreement": None,
        "precision": None,
        "recall": None,
    }
    if not all(_has(con, t) for t in ("trim_results", "spans", "verdicts", "assessments")):
        return empty
    df = con.execute(f"SELECT * FROM ({_judged_entries_sql()}) WHERE novelty IS NOT NULL").df()
    if df.empty:
        return empty
    table = (
        df.groupby(["memtrim_class", "novelty"])
        .size()
        .reset_index(name="n")
        .sort_values(["memtrim_class", "novelty"])
        .reset_index(drop=True)
    )
    mt = df["memtrim_class"] == "redundant"
    jr = df["novelty"] == "redundant"
    tp = int((mt & jr).sum())
    return {
        "table": table,
        "n": int(len(df)),
        "agreement": float((mt == jr).mean()),
        "precision": tp / int(mt.sum()) if int(mt.sum()) else None,
        "recall": tp / int(jr.sum()) if int(jr.sum()) else None,
    }


def overlap_by_usage(con: duckdb.DuckDBPyConnection) -> pd.DataFrame:
    """Query-memory overlap per judged entry in long form: columns group (used / unused /
    beneficial / harmful), jaccard, usage_label, config, delivery_id, pos. An entry counts as
    used when acted on, unused when its influence is none, beneficial when the effect improved,
    harmful when it harmed (Section 2 RQ2 applied to recorded deliveries)."""
    cols = ["group", "jaccard", "usage_label", "config", "delivery_id", "pos"]
    if not all(_has(con, t) for t in ("trim_results", "spans", "verdicts", "assessments")):
        return pd.DataFrame(columns=cols)
    return con.execute(f"""
        WITH j AS ({_judged_entries_sql()})
        SELECT 'used' AS "group", jaccard, usage_label, config, delivery_id, pos FROM j WHERE influence = 'acted_on'
        UNION ALL SELECT 'unused', jaccard, usage_label, config, delivery_id, pos FROM j WHERE influence = 'none'
        UNION ALL SELECT 'beneficial', jaccard, usage_label, config, delivery_id, pos FROM j WHERE effect = 'improved'
        UNION ALL SELECT 'harmful', jaccard, usage_label, config, delivery_id, pos FROM j WHERE effect = 'harmed'
        ORDER BY 1, 4, 5, 6""").df()


def trim_entries(con: duckdb.DuckDBPyConnection, delivery_id: str) -> pd.DataFrame:
    """Stored per-entry results of one delivery, decision JSON included (a restatement with an
    unchanged decision stores it once, on the delivery named in `same_as`; it is resolved here)."""
    if not _has(con, "trim_results"):
        return pd.DataFrame(columns=[c for c, _ in TRIM_COLUMNS])
    return con.execute(
        """
        SELECT t.* REPLACE (coalesce(t.decision, r.decision) AS decision)
        FROM trim_results t LEFT JOIN trim_results r ON r.delivery_id = t.same_as AND r.pos = t.pos
        WHERE t.delivery_id = ? ORDER BY t.pos""",
        [delivery_id],
    ).df()
