"""Placement proofs checked against the request the recorder forwarded (MemUse 3.2, A.1.1).

"A placement proof identifies either a message in the recorded history or a JSON-pointer location
in the request, together with a digest of the corresponding text. The adapter or observer supplies
the proof, and the recorder verifies it against the bound request." Judging later requires each
placement to resolve to one visible host message and one unique interval within it (A.1.3), so the
recorder checks exactly that and writes its finding into the proof (`verified`, `problem`).

A verified proof is rewritten in terms of the recorded call: host `message_index`, the host
message's digest and the placement's character offset in the host message text. A proof that
fails keeps what the adapter claimed (plus the host index when it resolved), so the recording
checks of the context build fail on it with a named reason instead of trusting the adapter.
"""

from __future__ import annotations

from typing import Any

from ..events import digest_matches, message_text, text_digest
from .wire import MessageMap

_MISSING = object()


def resolve_pointer(doc: Any, pointer: str) -> Any:
    """RFC 6901 lookup; returns `_MISSING` when the pointer does not resolve."""
    if pointer == "":
        return doc
    if not pointer.startswith("/"):
        return _MISSING
    cur = doc
    for tok in pointer[1:].split("/"):
        tok = tok.replace("~1", "/").replace("~0", "~")
        if isinstance(cur, list):
            if not tok.isdigit() or int(tok) >= len(cur):
                return _MISSING
            cur = cur[int(tok)]
        elif isinstance(cur, dict):
            if tok not in cur:
                return _MISSING
            cur = cur[tok]
        else:
            return _MISSING
    return cur


def count_occurrences(haystack: str, needle: str) -> int:
    """Occurrences of `needle` in `haystack`, overlapping ones included (uniqueness is strict)."""
    if not needle:
        return 0
    n, i = 0, haystack.find(needle)
    while i >= 0:
        n += 1
        i = haystack.find(needle, i + 1)
    return n


def host_text(mm: MessageMap, index: int) -> str:
    """Visible text of message `index` (text parts joined like `events.message_text`)."""
    return message_text(mm.messages[index].get("content"))


def verify_placement(placement: dict[str, Any], body: Any, mm: MessageMap, *, chat: bool) -> dict[str, Any]:
    """Check one placement against a forwarded request; returns the placement as it is recorded."""
    out = dict(placement)
    text = out.get("text")
    if isinstance(text, str) and not out.get("digest"):
        out["digest"] = text_digest(text)
    claimed = dict(out.get("proof") or {})
    problem = _check(out, claimed, body, mm)
    if isinstance(problem, tuple):  # verified: (index, host text)
        idx, htext = problem
        proof: dict[str, Any] = {
            "message_index": idx,
            "message_digest": text_digest(htext),
            "start": htext.find(str(text)),
            "verified": True,
        }
        ptr = claimed.get("json_pointer")
        if chat and isinstance(ptr, str):
            proof["json_pointer"] = ptr
        out["proof"] = proof
        return out
    if out.get("proof") is not None or claimed:
        claimed.pop("verified", None)
        claimed.pop("problem", None)
        host = _host_index(claimed, mm)
        if host is not None and claimed.get("message_index") is None:
            claimed["message_index"] = host
        claimed["verified"] = False
        claimed["problem"] = problem
        out["proof"] = claimed
    return out


def _host_index(proof: dict[str, Any], mm: MessageMap) -> int | None:
    ptr = proof.get("json_pointer")
    if isinstance(ptr, str):
        hit = mm.index_of_pointer(ptr)
        return hit[0] if hit else None
    mi = proof.get("message_index")
    if isinstance(mi, int) and 0 <= mi < len(mm.messages):
        return mi
    return None


def _check(pl: dict[str, Any], proof: dict[str, Any], body: Any, mm: MessageMap) -> str | tuple[int, str]:
    """A problem sentence, or (host index, host text) when the proof holds."""
    if not proof:
        return "placement has no proof"
    text = pl.get("text")
    if not isinstance(text, str) or not text:
        return "placement text is redacted or empty, so its location cannot be checked"
    if not digest_matches(pl.get("digest"), text):
        return "placement digest does not match its text"
    ptr = proof.get("json_pointer")
    if isinstance(ptr, str):
        hit = mm.index_of_pointer(ptr)
        if hit is None:
            return f"json pointer {ptr} does not point into a message of the request"
        value = resolve_pointer(body, ptr)
        if value is _MISSING:
            return f"json pointer {ptr} does not resolve in the forwarded request"
        if isinstance(value, str) and text not in value:
            return f"placement text not found at json pointer {ptr}"
        idx = hit[0]
    else:
        mi = proof.get("message_index")
        if not isinstance(mi, int):
            return "proof names neither a json pointer nor a message index"
        if not 0 <= mi < len(mm.messages):
            return f"message index {mi} is outside the request's {len(mm.messages)} messages"
        idx = mi
    htext = host_text(mm, idx)
    md = proof.get("message_digest")
    if md and not digest_matches(md, htext):
        return f"host message digest does not match message {idx} of the forwarded request"
    n = count_occurrences(htext, text)
    if n == 0:
        return f"placement text not found in host message {idx}"
    if n > 1:
        return f"placement text occurs {n} times in host message {idx}"
    return idx, htext
