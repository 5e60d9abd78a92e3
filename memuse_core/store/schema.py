"""DuckDB schema of the store: event tables (this file) plus the derived and judged tables that
each area declares in `area_tables`.

Text bodies live once in `blobs` keyed by a 64-bit content hash (`blob_hash`); calls store their
input as a delta against an earlier call of the same episode (`base_call_id`, `base_len`, then the
hashes of the appended messages), so resent history costs nothing (DESIGN.md "Store").

Every event table has `file_id` and `seq` (the event's line number in its file) so the original
event stream can be exported again in recorded order.
"""

from __future__ import annotations

from . import area_tables

SCHEMA_VERSION = 3
"""Store schema version; `connection.migrate` brings older files forward."""

DELIVERY_ENTRIES_VIEW = """CREATE VIEW IF NOT EXISTS delivery_entries AS
    SELECT d.delivery_id, r.pos, d.episode_id, r.namespace, r.item_id, r.id_scheme, r.version,
           r.version_portable, r.digest, r.value_hash, r.display_key, r.labels
    FROM deliveries d JOIN delivery_entry_rows r ON r.delivery_id = coalesce(d.entries_of, d.delivery_id)"""
"""One row per entry of every delivery (restated deliveries share their rows; see `deliveries`)."""

CORE_DDL = [
    """CREATE TABLE IF NOT EXISTS meta (key VARCHAR PRIMARY KEY, value VARCHAR)""",
    """CREATE TABLE IF NOT EXISTS files (
        file_id INTEGER PRIMARY KEY, path VARCHAR, sha256 VARCHAR UNIQUE, size BIGINT,
        format VARCHAR, n_events INTEGER, imported_at TIMESTAMP)""",
    """CREATE TABLE IF NOT EXISTS blobs (hash BIGINT PRIMARY KEY, text VARCHAR)""",
    """CREATE TABLE IF NOT EXISTS runs (
        run_id VARCHAR PRIMARY KEY, config VARCHAR, label VARCHAR, agent VARCHAR, model VARCHAR,
        meta JSON, file_id INTEGER, seq INTEGER)""",
    """CREATE TABLE IF NOT EXISTS episodes (
        episode_id VARCHAR PRIMARY KEY, run_id VARCHAR, task_id VARCHAR, position INTEGER,
        repo VARCHAR, task_hash BIGINT, reference_hash BIGINT,
        resolved BOOLEAN, exit_status VARCHAR, submission_hash BIGINT, ended BOOLEAN,
        n_steps INTEGER, file_id INTEGER, seq INTEGER, end_seq INTEGER)""",
    """CREATE TABLE IF NOT EXISTS calls (
        call_id VARCHAR PRIMARY KEY, episode_id VARCHAR, call_seq INTEGER, role VARCHAR,
        status VARCHAR, base_call_id VARCHAR, base_len INTEGER, msg_hashes BIGINT[],
        n_messages INTEGER, input_chars BIGINT, tools_hash BIGINT, request_extra JSON,
        response_hash BIGINT, input_tokens BIGINT, output_tokens BIGINT, cached_tokens BIGINT,
        reasoning_tokens BIGINT, cost_usd DOUBLE, started_at DOUBLE, ended_at DOUBLE,
        op_ref VARCHAR, model VARCHAR, file_id INTEGER, seq INTEGER)""",
    """CREATE TABLE IF NOT EXISTS steps (
        episode_id VARCHAR, step INTEGER, call_id VARCHAR, response_hash BIGINT,
        action VARCHAR, tools VARCHAR, exit_code INTEGER, obs_hashes BIGINT[], obs_chars BIGINT,
        PRIMARY KEY (episode_id, step))""",
    """CREATE TABLE IF NOT EXISTS tool_results (
        episode_id VARCHAR, call_id VARCHAR, tool_call_id VARCHAR, name VARCHAR,
        arguments_hash BIGINT, output_hash BIGINT, exit_code INTEGER, file_id INTEGER,
        seq INTEGER)""",
    """CREATE TABLE IF NOT EXISTS context_events (
        episode_id VARCHAR, type VARCHAR, before_call_id VARCHAR, payload JSON, file_id INTEGER,
        seq INTEGER)""",
    """CREATE TABLE IF NOT EXISTS item_events (
        namespace VARCHAR, item_id VARCHAR, version VARCHAR, op VARCHAR, value_hash BIGINT,
        episode_id VARCHAR, run_id VARCHAR, op_ref VARCHAR, changed_at DOUBLE, file_id INTEGER,
        seq INTEGER)""",
    """CREATE TABLE IF NOT EXISTS searches (
        search_id VARCHAR PRIMARY KEY, episode_id VARCHAR, run_id VARCHAR, route VARCHAR,
        query_hash BIGINT, scope VARCHAR, results JSON, n_results INTEGER, file_id INTEGER,
        seq INTEGER)""",
    """CREATE TABLE IF NOT EXISTS deliveries (
        delivery_id VARCHAR PRIMARY KEY, episode_id VARCHAR, route VARCHAR, form VARCHAR,
        consuming_call_id VARCHAR, search_id VARCHAR, provisional_step INTEGER,
        n_entries INTEGER, chars BIGINT, file_id INTEGER, seq INTEGER, entries_of VARCHAR)""",
    # Entries are stored once per distinct entry list: a delivery that restates an earlier one of
    # the same file word for word (same items, versions, values, keys, labels) points at it with
    # `deliveries.entries_of`; the `delivery_entries` view gives every delivery its rows.
    """CREATE TABLE IF NOT EXISTS delivery_entry_rows (
        delivery_id VARCHAR, pos INTEGER, namespace VARCHAR, item_id VARCHAR,
        id_scheme VARCHAR, version VARCHAR, version_portable BOOLEAN, digest VARCHAR,
        value_hash BIGINT, display_key VARCHAR, labels JSON)""",
    """CREATE TABLE IF NOT EXISTS placements (
        delivery_id VARCHAR, pos INTEGER, episode_id VARCHAR, slot VARCHAR, kind VARCHAR,
        text_hash BIGINT, digest VARCHAR, size BIGINT, message_index INTEGER,
        json_pointer VARCHAR, message_digest VARCHAR, start INTEGER)""",
    DELIVERY_ENTRIES_VIEW,
]


def all_ddl() -> list[str]:
    """Every CREATE statement of the store, core first, then each area's tables."""
    return CORE_DDL + area_tables.DDL
