"""The episode-level evidence of the judge (MemUse A.2.1 "Step records", "Evidence access"): step
files and the memory text they reference, rendered once per episode and shared by its spans.

`episode_evidence(record)` renders from an `EpisodeRecord`; `load_evidence(con, ids)` from the
store's rows (`store.evidence`), without rebuilding whole records. Both go through
`render_evidence`, so they render alike.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable
from dataclasses import dataclass

from ..episode import EpisodeRecord
from ..events import MemoryDelivery
from ..store import Connection
from ..store.evidence import EpisodeSources, EvidenceRows, StepSource, episode_sources, fetch_evidence_rows

MEMORY_REF = "⟦memory delivery {did}: text in {path}⟧"
_PLACEHOLDER = "\x00MEM:{did}\x00"
PLACEHOLDER_RE = re.compile("\x00MEM:([^\x00]+)\x00")


def step_path(t: int) -> str:
    """Path of step t's record."""
    return f"steps/S{t}.md"


def memory_path(delivery_id: str) -> str:
    """Path of a referenced memory delivery's text."""
    return f"memory/{_safe(delivery_id)}.md"


def _safe(s: str) -> str:
    """A file name for a recorded id: the id itself when it is made of `[A-Za-z0-9._-]`, else its
    cleaned form plus a digest of the id, so that two ids never share a file (`a b` and `a_b`)."""
    clean = re.sub(r"[^A-Za-z0-9._-]+", "_", s)
    if clean == s:
        return s
    return f"{clean}-{hashlib.sha256(s.encode('utf-8', 'surrogatepass')).hexdigest()[:10]}"


@dataclass
class EpisodeEvidence:
    """Step and memory files of one episode, rendered once and shared by its spans."""

    episode_id: str
    task: str
    reference: str | None
    T: int
    steps: dict[int, str]
    step_refs: dict[int, list[str]]
    """Step -> delivery ids whose text the step's results carry (placeholders in its file)."""
    memory: dict[str, str]
    delivery_step: dict[str, int | None]
    deliveries: list[MemoryDelivery]


def episode_evidence(rec: EpisodeRecord) -> EpisodeEvidence:
    """Render every step of an episode record (A.2.1: responses, tool calls, results)."""
    idx = rec._call_index()
    call_step = {c.call_id: c.step for c in rec.calls}

    def role_at(call_id: str, i: int) -> str | None:
        cv = idx.get(call_id)
        return cv.messages[i].role if cv is not None and 0 <= i < len(cv.messages) else None

    steps = [StepSource(st.t, st.call.call.response, st.observations, st.tool_results) for st in rec.steps]
    return render_evidence(
        rec.episode_id, rec.start.task or "", rec.start.reference, steps, rec.deliveries, call_step, role_at
    )


def render_evidence(
    episode_id: str,
    task: str,
    reference: str | None,
    steps: list[StepSource],
    deliveries: list[MemoryDelivery],
    call_step: dict[str, int | None],
    role_at: Callable[[str, int], str | None],
) -> EpisodeEvidence:
    """Step and memory files of an episode from its parts; shared by the record path
    (`episode_evidence`) and the store's evidence loader (`store.evidence`), so both render alike.

    `call_step` maps a call to its step (None: not an agent step); `role_at(call, i)` is the role of
    message i of that call's full input, None when there is no such message."""
    dstep: dict[str, int | None] = {}
    for d in deliveries:
        dstep[d.delivery_id] = call_step.get(d.consuming_call_id) if d.consuming_call_id else None
    # Memory that arrived in a tool result/observation of step s-1 is consumed at step s.
    in_results: dict[int, list[MemoryDelivery]] = {}
    for d in deliveries:
        s = dstep.get(d.delivery_id)
        if s is None or s < 2 or not d.placements:
            continue
        cid = d.consuming_call_id or ""
        tool_like = False
        for p in d.placements:
            i = p.proof.message_index if p.proof else None
            if i is not None and role_at(cid, i) in ("tool", "user"):
                tool_like = True
        if tool_like:
            in_results.setdefault(s - 1, []).append(d)
    rendered: dict[int, str] = {}
    refs: dict[int, list[str]] = {}
    memory: dict[str, str] = {}
    for st in steps:
        ds = in_results.get(st.t, [])
        rendered[st.t], refs[st.t] = _render_step(st, ds)
        for d in ds:
            memory[d.delivery_id] = _render_memory(d, dstep.get(d.delivery_id))
    return EpisodeEvidence(
        episode_id, task, reference, len(steps), rendered, refs, memory, dstep, list(deliveries)
    )


def _render_step(st: StepSource, deliveries: list[MemoryDelivery]) -> tuple[str, list[str]]:
    resp = st.response
    lines = [f"# Step S{st.t}", ""]
    if resp is not None and resp.reasoning:
        lines += ["## Reasoning", resp.reasoning, ""]
    lines += ["## Response", (resp.content or "") if resp else "", ""]
    if resp is not None and resp.tool_calls:
        lines.append("## Tool calls")
        for tc in resp.tool_calls:
            lines.append(f"- {tc.name}: {tc.arguments}")
        lines.append("")
    used: list[str] = []
    if st.observations:
        lines.append("## Results")
        for i, obs in enumerate(st.observations, 1):
            head = f"### Result {i}"
            if i - 1 < len(st.tool_results):
                tr = st.tool_results[i - 1]
                bits = [
                    b for b in (tr.name, None if tr.exit_code is None else f"exit code {tr.exit_code}") if b
                ]
                if bits:
                    head += f" ({', '.join(bits)})"
            text = obs
            for d in deliveries:
                for p in d.placements:
                    if p.text and p.text in text:
                        text = text.replace(p.text, _PLACEHOLDER.format(did=d.delivery_id), 1)
                        if d.delivery_id not in used:
                            used.append(d.delivery_id)
            lines += [head, text, ""]
    return "\n".join(lines), used


def _render_memory(d: MemoryDelivery, step: int | None) -> str:
    head = f"# Memory delivery {d.delivery_id}\nform: {d.form}; route: {d.route}; consumed at step S{step}\n"
    body = "\n\n".join(p.text or f"⟦redacted placement of {p.size or 0} characters⟧" for p in d.placements)
    return head + "\n" + body


def render_sources(src: EpisodeSources) -> EpisodeEvidence:
    """The evidence of one episode from its stored sources."""
    roles = src.roles

    def role_at(call_id: str, i: int) -> str | None:
        return roles.get((call_id, i))

    return render_evidence(
        src.episode_id, src.task, src.reference, src.steps, src.deliveries, src.call_step, role_at
    )


def build_evidence(rows: EvidenceRows) -> dict[str, EpisodeEvidence]:
    """Rendered step and memory files per episode (the same as `episode_evidence` of its record)."""
    return {eid: render_sources(src) for eid, src in episode_sources(rows).items()}


def load_evidence(con: Connection, episode_ids: list[str]) -> dict[str, EpisodeEvidence]:
    """`EpisodeEvidence` of the given stored episodes."""
    return build_evidence(fetch_evidence_rows(con, episode_ids))
