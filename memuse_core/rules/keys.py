"""Equality keys of entries, items and placements (MemUse A.1.4): which deliveries carry the same
entry, the same memory item, or the same placement.
"""

from __future__ import annotations

from ..events import Entry, text_digest


def item_identity(e: Entry) -> str | None:
    """Item identity with the display-key fallback of A.1.4: the item id, else the display key
    unless that key is itself an operation-local version identifier."""
    if e.item_id:
        return e.item_id
    if e.display_key and not (not e.version_portable and e.display_key == e.version):
        return e.display_key
    return None


def item_key(e: Entry) -> tuple:
    """Which memory item an entry belongs to (namespace, identity); identity-less entries are
    told apart by content."""
    ident = item_identity(e)
    if ident is not None:
        return (e.namespace, ident)
    return (e.namespace, None, e.digest or (text_digest(e.value) if e.value else None))


def entry_key(e: Entry) -> tuple:
    """Entry equality (A.1.4): namespace, item identity, id scheme, portable version, digest;
    with neither a portable version nor a digest, namespace, identity and recorded value."""
    ident = item_identity(e)
    version = e.version if e.version_portable else None
    if version is None and e.digest is None:
        return ("value", e.namespace, ident, e.value)
    return ("id", e.namespace, ident, e.id_scheme, version, e.digest)


def placement_key(p) -> tuple:  # noqa: ANN001 - events.Placement
    """Placement equality (A.1.4): slot, kind and text, or the digest when text is unresolved."""
    return (p.slot, p.kind, text_digest(p.text) if p.text is not None else ("digest", p.digest))
