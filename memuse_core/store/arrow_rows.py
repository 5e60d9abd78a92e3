"""The column layout of the event tables and the Arrow batches their rows become (pyarrow only, no
duckdb: the import worker processes of `ingest.parse_worker` build these batches; `store.tables`
appends them to the store)."""

from __future__ import annotations

from typing import Any

import pyarrow as pa

I64 = pa.int64()
I32 = pa.int32()
S = pa.string()
B = pa.bool_()
F = pa.float64()
LI = pa.list_(pa.int64())

TABLE_COLUMNS: dict[str, list[tuple[str, pa.DataType]]] = {
    "blobs": [("hash", I64), ("text", S)],
    "runs": [
        ("run_id", S),
        ("config", S),
        ("label", S),
        ("agent", S),
        ("model", S),
        ("meta", S),
        ("file_id", I32),
        ("seq", I32),
    ],
    "episodes": [
        ("episode_id", S),
        ("run_id", S),
        ("task_id", S),
        ("position", I32),
        ("repo", S),
        ("task_hash", I64),
        ("reference_hash", I64),
        ("resolved", B),
        ("exit_status", S),
        ("submission_hash", I64),
        ("ended", B),
        ("n_steps", I32),
        ("file_id", I32),
        ("seq", I32),
        ("end_seq", I32),
    ],
    "calls": [
        ("call_id", S),
        ("episode_id", S),
        ("call_seq", I32),
        ("role", S),
        ("status", S),
        ("base_call_id", S),
        ("base_len", I32),
        ("msg_hashes", LI),
        ("n_messages", I32),
        ("input_chars", I64),
        ("tools_hash", I64),
        ("request_extra", S),
        ("response_hash", I64),
        ("input_tokens", I64),
        ("output_tokens", I64),
        ("cached_tokens", I64),
        ("reasoning_tokens", I64),
        ("cost_usd", F),
        ("started_at", F),
        ("ended_at", F),
        ("op_ref", S),
        ("model", S),
        ("file_id", I32),
        ("seq", I32),
    ],
    "steps": [
        ("episode_id", S),
        ("step", I32),
        ("call_id", S),
        ("response_hash", I64),
        ("action", S),
        ("tools", S),
        ("exit_code", I32),
        ("obs_hashes", LI),
        ("obs_chars", I64),
    ],
    "tool_results": [
        ("episode_id", S),
        ("call_id", S),
        ("tool_call_id", S),
        ("name", S),
        ("arguments_hash", I64),
        ("output_hash", I64),
        ("exit_code", I32),
        ("file_id", I32),
        ("seq", I32),
    ],
    "context_events": [
        ("episode_id", S),
        ("type", S),
        ("before_call_id", S),
        ("payload", S),
        ("file_id", I32),
        ("seq", I32),
    ],
    "item_events": [
        ("namespace", S),
        ("item_id", S),
        ("version", S),
        ("op", S),
        ("value_hash", I64),
        ("episode_id", S),
        ("run_id", S),
        ("op_ref", S),
        ("changed_at", F),
        ("file_id", I32),
        ("seq", I32),
    ],
    "searches": [
        ("search_id", S),
        ("episode_id", S),
        ("run_id", S),
        ("route", S),
        ("query_hash", I64),
        ("scope", S),
        ("results", S),
        ("n_results", I32),
        ("file_id", I32),
        ("seq", I32),
    ],
    "deliveries": [
        ("delivery_id", S),
        ("episode_id", S),
        ("route", S),
        ("form", S),
        ("consuming_call_id", S),
        ("search_id", S),
        ("provisional_step", I32),
        ("n_entries", I32),
        ("chars", I64),
        ("file_id", I32),
        ("seq", I32),
        ("entries_of", S),
    ],
    "delivery_entry_rows": [
        ("delivery_id", S),
        ("pos", I32),
        ("namespace", S),
        ("item_id", S),
        ("id_scheme", S),
        ("version", S),
        ("version_portable", B),
        ("digest", S),
        ("value_hash", I64),
        ("display_key", S),
        ("labels", S),
    ],
    "placements": [
        ("delivery_id", S),
        ("pos", I32),
        ("episode_id", S),
        ("slot", S),
        ("kind", S),
        ("text_hash", I64),
        ("digest", S),
        ("size", I64),
        ("message_index", I32),
        ("json_pointer", S),
        ("message_digest", S),
        ("start", I32),
    ],
}


def rows_to_arrow(table: str, rows: list[tuple[Any, ...]]) -> pa.Table:
    """Rows (tuples in TABLE_COLUMNS order) as one Arrow table with the store's column types."""
    cols = TABLE_COLUMNS[table]
    try:
        arrays = [pa.array(list(col), type=t) for col, (_, t) in zip(zip(*rows), cols)]
    except (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError) as e:
        bad = next(name for col, (name, t) in zip(zip(*rows), cols) if not _fits(col, t))
        raise ValueError(f"a value of `{bad}` does not fit the store's {table}.{bad} column ({e})") from None
    return pa.Table.from_arrays(arrays, names=[c for c, _ in cols])


def _fits(col: tuple[Any, ...], t: pa.DataType) -> bool:
    try:
        pa.array(list(col), type=t)
    except (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError):
        return False
    return True
