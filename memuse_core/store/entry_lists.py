"""Delivery entries stored once per distinct entry list (schema 2,
docs/decisions.md#delivery-entries-stored-once-per-distinct-list).

Restated blocks repeat the same entry list on every call: the writer stores it once per file and
points later copies at the first delivery that had it (`deliveries.entries_of`; the
`delivery_entries` view expands it again).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from ..events import MemoryDelivery, text_digest


class EntryLists:
    """The distinct entry lists of one file and the first delivery of each."""

    def __init__(self, cache: int) -> None:
        self.cache = cache
        self.lists: dict[tuple[Any, ...], str] = {}
        """Entry list of a delivery (as written) -> the first delivery of this file that had it."""
        self.objs: dict[int, tuple[Any, tuple[Any, ...], str]] = {}
        """id(entry list object) -> (the object, its key, the first delivery that had it)."""

    def first_of(self, ev: MemoryDelivery) -> tuple[tuple[Any, ...], str | None]:
        """(key of the delivery's entry list, the earlier delivery that had the same list, or None
        when the list is new: it is then recorded as this delivery's)."""
        # The importer hands restated deliveries the very same entry list object: look it up by
        # identity first (the dict keeps the list alive, so its id cannot be reused).
        same = self.objs.get(id(ev.entries))
        first: str | None
        if same is not None and same[0] is ev.entries:
            key, first = same[1], same[2]
        else:
            key = tuple(
                [
                    (
                        e.namespace,
                        e.item_id,
                        e.id_scheme,
                        e.version,
                        e.version_portable,
                        e.digest,
                        e.value,
                        e.display_key,
                        json.dumps(e.labels, sort_keys=True) if e.labels else None,
                    )
                    for e in ev.entries
                ]
            )
            first = self.lists.get(key)
            if len(self.objs) >= self.cache:
                self.objs.clear()
            self.objs[id(ev.entries)] = (ev.entries, key, first if first is not None else ev.delivery_id)
        if first is None:
            if len(self.lists) >= self.cache:
                self.lists.clear()
            self.lists[key] = ev.delivery_id
        return key, first


def entry_rows(
    ev: MemoryDelivery,
    key: tuple[Any, ...],
    text: Callable[[str], int | None],
    memo: Callable[[str], int | None],
    add: Callable[[tuple[Any, ...]], None],
) -> None:
    """Add the `delivery_entry_rows` of a new entry list (`text` stores a value as a blob and
    returns its hash; `memo` looks a hash up without storing)."""
    did = ev.delivery_id
    for i, (ns, item, scheme, version, portable, digest, v, display, labels) in enumerate(key):
        if v is None:
            vh = None
            digest = digest or None
        else:
            vh = memo(v)
            if vh is None:
                vh = text(v)
            digest = digest or text_digest(v)
        add(
            (
                did,
                i,
                ns,
                item,
                scheme,
                version,
                portable,
                digest,
                vh,
                display,
                json.dumps(ev.entries[i].labels, ensure_ascii=False) if labels else None,
            )
        )
