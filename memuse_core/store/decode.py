"""Rebuilding validated models from stored rows without validating them again.

Stored rows were validated when they were ingested (or built), so the readers construct pydantic
models directly (`construct`); the round-trip tests compare both paths. Message shells and
delivery rows are decoded here for the episode reader (`store.reader`), the evidence loader
(`store.evidence`) and the span reader (`store.spans`).
"""

from __future__ import annotations

import gc
import json
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from ..events import (
    EVENT_SCHEMA_VERSION,
    Entry,
    MemoryDelivery,
    Message,
    Placement,
    Proof,
    ToolCall,
    text_digest,
)
from .blobs import BLOB_REF, iter_blob_texts

if TYPE_CHECKING:
    import duckdb


@contextmanager
def gc_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector while a chunk of records is built.

    Building records allocates hundreds of thousands of small acyclic objects; every few hundred
    allocations would otherwise trigger a collection that walks the growing heap (measured: ~60%
    of the build time). Reference counting still frees everything; collection resumes after."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def texts_of(con: duckdb.DuckDBPyConnection, hashes: list[int | None]) -> dict[int, str]:
    return iter_blob_texts(con, [h for h in hashes if h is not None])


def shells_of(con: duckdb.DuckDBPyConnection, shells: list[int]) -> tuple[dict[int, Any], dict[int, str]]:
    """Message shells (parsed) and the content blobs they reference."""
    shell_text = texts_of(con, list(shells))
    loads = json.loads
    parsed = {h: loads(t) for h, t in shell_text.items()}
    refs = [c[BLOB_REF] for d in parsed.values() if isinstance(c := d.get("content"), dict) and BLOB_REF in c]
    return parsed, texts_of(con, refs)


def messages_of(parsed: dict[int, Any], contents: dict[int, str]) -> dict[int, Message]:
    """Rebuild Message objects from parsed shells and their content blobs.

    Shells were written from validated messages, so they are rebuilt without validating again
    (`_message`); the result equals `Message.model_validate` of the same shell."""
    out = {}
    for h, d in parsed.items():
        c = d.get("content")
        if isinstance(c, dict) and BLOB_REF in c:
            d = {**d, "content": contents[c[BLOB_REF]]}
        out[h] = _message(d)
    return out


_MESSAGE_FIELDS = frozenset(Message.model_fields)
_new = object.__new__
_setattr = object.__setattr__


def construct(
    cls: Any, values: dict[str, Any], extra: dict[str, Any] | None = None, fields_set: set[str] | None = None
) -> Any:
    """An instance of a pydantic model from already-valid values, without validation.

    `values` must hold every field of `cls` (defaults included); this is what
    `cls.model_construct` does, without its per-field default lookup. Stored rows were validated
    when they were ingested, so validating them again on every load only costs time (the
    round-trip tests compare both paths)."""
    m = _new(cls)
    _setattr(m, "__dict__", values)
    _setattr(m, "__pydantic_fields_set__", set(values) if fields_set is None else fields_set)
    _setattr(m, "__pydantic_extra__", extra)
    _setattr(m, "__pydantic_private__", None)
    return m


def _message(d: dict[str, Any]) -> Message:
    """A Message from a stored shell dict (validated before it was stored)."""
    if not _MESSAGE_FIELDS.issuperset(d):
        extra = {k: v for k, v in d.items() if k not in _MESSAGE_FIELDS}
    else:
        extra = {}
    tcs = d.get("tool_calls")
    if tcs is not None:
        tcs = [
            construct(
                ToolCall, {"id": tc.get("id"), "name": tc["name"], "arguments": tc.get("arguments", "")}
            )
            for tc in tcs
        ]
    return construct(
        Message,
        {
            "role": d["role"],
            "content": d.get("content"),
            "name": d.get("name"),
            "tool_call_id": d.get("tool_call_id"),
            "tool_calls": tcs,
        },
        extra,
        {k for k in d if k in _MESSAGE_FIELDS},
    )


def _shared_entry_lists(con: duckdb.DuckDBPyConnection) -> bool:
    """True when the store keeps delivery entries once per distinct list (schema 2)."""
    return bool(
        con.execute(
            "SELECT count(*) FROM duckdb_tables() WHERE table_name = 'delivery_entry_rows' "
            "AND schema_name = 'main'"
        ).fetchall()[0][0]
    )


def delivery_rows(con: duckdb.DuckDBPyConnection, ids: list[str]) -> tuple[list[Any], list[Any], list[Any]]:
    """Delivery, entry and placement rows of some episodes (see `deliveries_of`)."""
    # Schema 2 keeps each distinct entry list once: restated deliveries point at the first
    # delivery with the same list (`entries_of`), and each list is read once instead of the view's
    # expanded rows. A version-1 file opened read-only (not migrated yet) has every delivery's rows.
    shared = _shared_entry_lists(con)
    list_of = "coalesce(entries_of, delivery_id)" if shared else "delivery_id"
    dels = con.execute(
        "SELECT delivery_id, episode_id, route, form, consuming_call_id, search_id, "
        f"provisional_step, file_id, seq, {list_of} FROM deliveries "
        "WHERE episode_id IN (SELECT unnest(?::VARCHAR[]))",
        [ids],
    ).fetchall()
    ents = con.execute(
        "SELECT delivery_id, pos, namespace, item_id, id_scheme, version, version_portable, digest, "
        f"value_hash, display_key, labels FROM {'delivery_entry_rows' if shared else 'delivery_entries'} "
        f"WHERE delivery_id IN (SELECT {list_of} FROM deliveries WHERE episode_id IN "
        "(SELECT unnest(?::VARCHAR[]))) ORDER BY delivery_id, pos",
        [ids],
    ).fetchall()
    pls = con.execute(
        "SELECT delivery_id, pos, slot, kind, text_hash, digest, size, message_index, json_pointer, "
        "message_digest, start FROM placements "
        "WHERE episode_id IN (SELECT unnest(?::VARCHAR[])) ORDER BY delivery_id, pos",
        [ids],
    ).fetchall()
    return dels, ents, pls


def _shared_by_delivery(rows: list[tuple[Any, ...]], make: Any) -> dict[str, list[Any]]:
    """Rows `(delivery_id, pos, *value)` grouped by delivery in row order; equal values become one
    object, built once by `make(value)`."""
    by: dict[str, list[Any]] = {}
    seen: dict[tuple[Any, ...], Any] = {}
    for r in rows:
        key = r[2:]
        obj = seen.get(key)
        if obj is None:
            obj = seen[key] = make(key)
        lst = by.get(r[0])
        if lst is None:
            by[r[0]] = [obj]
        else:
            lst.append(obj)
    return by


def deliveries_of(
    dels: list[tuple[Any, ...]], ents: list[tuple[Any, ...]], pls: list[tuple[Any, ...]], t: Any
) -> list[tuple[tuple[int, int], MemoryDelivery]]:
    """Delivery events from their stored rows (`t` looks a blob's text up by hash); shared by the
    episode reader and the judge's evidence loader (`store.evidence`)."""
    V = EVENT_SCHEMA_VERSION
    out: list[tuple[tuple[int, int], MemoryDelivery]] = []

    # A host block restated on every call repeats the same entries and placements many times
    # (a demo episode: ~200 entry rows, ~8 distinct); equal rows share one object, as equal
    # message shells already do. Loaded records are values: rules read them, nothing mutates them.
    def entry(key: tuple[Any, ...]) -> Entry:
        (ns, iid, scheme, ver, portable, dg, vh, dk, labels) = key
        value = t(vh) if vh is not None else None
        if dg is None and value is not None:  # as Entry's validator fills it
            dg = text_digest(value)
        return construct(
            Entry,
            {  # type: ignore[no-any-return]
                "namespace": ns,
                "item_id": iid,
                "id_scheme": scheme,
                "version": ver,
                "version_portable": portable,
                "digest": dg,
                "value": value,
                "display_key": dk,
                "labels": json.loads(labels) if labels else {},
            },
        )

    def placement(key: tuple[Any, ...]) -> Placement:
        (slot, kind, th, dg, size, mi, jp, md, start) = key
        proof = None
        if mi is not None or jp is not None or md is not None or start is not None:
            proof = construct(
                Proof,
                {
                    "message_index": mi,
                    "json_pointer": jp,
                    "message_digest": md,
                    "start": start,
                    "verified": None,
                    "problem": None,
                },
                fields_set={"message_index", "json_pointer", "message_digest", "start"},
            )
        text = t(th) if th is not None else None
        if dg is None and text is not None:  # as Placement's validator fills it
            dg = text_digest(text)
        return construct(
            Placement,
            {  # type: ignore[no-any-return]
                "slot": slot,
                "kind": kind,
                "text": text,
                "digest": dg,
                "size": None if text is not None else size,
                "proof": proof,
            },
        )

    ent_by = _shared_by_delivery(ents, entry)
    pl_by = _shared_by_delivery(pls, placement)
    for r in dels:
        (did, eid, route, form, ccid, sid, pstep, fid, seq, list_of) = r
        out.append(
            (
                (fid, seq),
                construct(
                    MemoryDelivery,
                    {
                        "type": "memory_delivery",
                        "v": V,
                        "episode_id": eid,
                        "delivery_id": did,
                        "route": route,
                        "form": form,
                        "consuming_call_id": ccid,
                        "search_id": sid,
                        "entries": list(ent_by.get(list_of, ())),
                        "placements": pl_by.get(did, []),
                        "provisional_step": pstep,
                    },
                ),
            )
        )
    return out
