"""OpenHands event histories as MemUse events: the rebuilt visible history of a function-calling
CodeAct agent, one model call per recorded model response, and `recall` observations as memory
deliveries (see `ingest.openhands` for the assumptions; MemUse 3.1, A.1.1)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from ..events import (
    Entry,
    EpisodeEnd,
    EpisodeStart,
    Event,
    MemoryDelivery,
    Message,
    Placement,
    Proof,
    Response,
    ToolResultEvent,
    text_digest,
)
from .common import (
    CallChain,
    Fields,
    as_dict,
    distribute_cost,
    openai_tool_calls,
    openai_usage,
)
from .reasoning import joined, message_reasoning

EXTRA_INFO_HEAD = (
    'The following information has been included based on a keyword match for "{trigger}".\n'
    "It may or may not be relevant to the user's request.\n\n"
)


@dataclass
class _Recall:
    message: Message
    """The rendered recall message (found by identity in the history: condensation moves it)."""
    text: str
    form: str
    entries: list[Entry]
    spans: list[tuple[int, str]]
    """(start, text) of each `<EXTRA_INFO>` block in the message."""
    event_id: int


def _forgotten(args: dict[str, Any]) -> set[int]:
    """Event ids a condensation action removes from the agent's view."""
    ids = args.get("forgotten_event_ids")
    if isinstance(ids, list):
        return {x for x in ids if isinstance(x, int)}
    a, b = args.get("forgotten_events_start_id"), args.get("forgotten_events_end_id")
    if isinstance(a, int) and isinstance(b, int):
        return set(range(a, b + 1))
    return set()


def render_recall(extras: dict[str, Any]) -> tuple[str, list[tuple[str, str, str]]]:
    """The user message OpenHands builds from a recall observation, and (name, trigger, block) per
    microagent knowledge item (the block is the exact `<EXTRA_INFO>` element)."""
    parts: list[str] = []
    repo_name = extras.get("repo_name") or ""
    if repo_name:
        parts.append(
            f"<REPOSITORY_INFO>\nRepository {repo_name} is cloned to {extras.get('repo_directory') or ''}.\n"
            "</REPOSITORY_INFO>"
        )
    if extras.get("repo_instructions"):
        parts.append(f"<REPOSITORY_INSTRUCTIONS>\n{extras['repo_instructions']}\n</REPOSITORY_INSTRUCTIONS>")
    hosts = extras.get("runtime_hosts") or {}
    rt: list[str] = []
    if isinstance(hosts, dict) and hosts:
        rt.append("Hosts available for web applications (host, port):")
        rt.extend(f"* {h} (port {p})" for h, p in hosts.items())
    if extras.get("additional_agent_instructions"):
        rt.append(str(extras["additional_agent_instructions"]))
    if extras.get("date"):
        rt.append(f"Today's date is {extras['date']} (UTC).")
    if rt:
        parts.append("<RUNTIME_INFORMATION>\n" + "\n".join(rt) + "\n</RUNTIME_INFORMATION>")
    blocks = []
    for k in extras.get("microagent_knowledge") or []:
        if not isinstance(k, dict) or not isinstance(k.get("content"), str):
            continue
        trigger = str(k.get("trigger") or "")
        block = "<EXTRA_INFO>\n" + EXTRA_INFO_HEAD.format(trigger=trigger) + k["content"] + "\n</EXTRA_INFO>"
        blocks.append((str(k.get("name") or trigger), trigger, block))
        parts.append(block)
    return "\n\n".join(parts), blocks


def _obs_text(ev: dict[str, Any]) -> str:
    """An observation as the agent sees it: content with the recorded command prefix/suffix."""
    content = ev.get("content") if isinstance(ev.get("content"), str) else (ev.get("message") or "")
    extras = as_dict(ev.get("extras"))
    md = as_dict(extras.get("metadata"))
    return f"{md.get('prefix') or ''}{content}{md.get('suffix') or ''}"


def convert_history(
    f: Fields,
    history: list[Any],
    field: str,
    *,
    run_id: str,
    episode_id: str,
    task_id: str,
    position: int,
    instance: dict[str, Any],
    metrics: dict[str, Any],
    test_result: dict[str, Any],
    error: Any,
    instruction: Any = None,
) -> Iterator[Event]:
    """The events of one OpenHands history (list of serialized events)."""
    evs = []
    for i, e in enumerate(history):
        e = f.obj(e, f"{field}[{i}]")
        if "action" not in e and "observation" not in e:
            raise f.fail(f"{field}[{i}]", "event has neither `action` nor `observation`")
        for key in ("action", "observation", "source"):
            if key in e and not isinstance(e[key], str):
                raise f.fail(f"{field}[{i}].{key}", f"expected a string, got {type(e[key]).__name__}")
        evs.append(e)

    # Model responses: group agent actions by their model_response id (one call per response).
    resp_ids: list[str] = []
    for i, e in enumerate(evs):
        tcm = e.get("tool_call_metadata")
        if isinstance(tcm, dict) and isinstance(tcm.get("model_response"), dict):
            rid = tcm["model_response"].get("id") or f"event-{e.get('id', i)}"
            if rid not in resp_ids:
                resp_ids.append(rid)
    usages = f.get(metrics, "token_usages", list, "metrics", default=[])
    token_usage = {
        u["response_id"]: u for u in usages if isinstance(u, dict) and isinstance(u.get("response_id"), str)
    }
    cost_list = [
        c.get("cost") for c in f.get(metrics, "costs", list, "metrics", default=[]) if isinstance(c, dict)
    ]
    total = (
        metrics.get("accumulated_cost") if isinstance(metrics.get("accumulated_cost"), (int, float)) else None
    )
    n_plain = sum(
        1
        for e in evs
        if e.get("source") == "agent"
        and e.get("action") == "message"
        and not isinstance(e.get("tool_call_metadata"), dict)
    )
    n_calls = len(resp_ids) + n_plain
    if len(cost_list) == n_calls and all(isinstance(c, (int, float)) for c in cost_list):
        costs: list[float | None] = [float(c) for c in cost_list if c is not None]
    else:
        weights = [float((token_usage.get(r) or {}).get("prompt_tokens") or 0) for r in resp_ids] + [
            0.0
        ] * n_plain
        costs = distribute_cost(total, weights)

    task = (
        instruction
        if isinstance(instruction, str)
        else next(
            (
                e["args"]["content"]
                for e in evs
                if e.get("source") == "user"
                and e.get("action") == "message"
                and isinstance(e.get("args"), dict)
                and isinstance(e["args"].get("content"), str)
            ),
            None,
        )
    )
    yield EpisodeStart(
        episode_id=episode_id,
        run_id=run_id,
        task_id=task_id,
        position=position,
        repo=instance.get("repo") if isinstance(instance.get("repo"), str) else None,
        task=task,
    )

    chain = CallChain(episode_id)
    hist: list[Message] = []
    recalls: list[_Recall] = []
    tools = None
    done: set[str] = set()
    issued: dict[str, tuple[str, str, str]] = {}  # tool_call_id -> (call_id, name, arguments)
    k = 0
    finished = False

    def deliveries(call_id: str, n_msgs: int) -> Iterator[Event]:
        for r in recalls:
            index = next((j for j, m in enumerate(hist[:n_msgs]) if m is r.message), None)
            if index is None:
                continue  # not (or no longer) in the input
            digest = text_digest(r.text)
            yield MemoryDelivery(
                episode_id=episode_id,
                delivery_id=f"{call_id}/recall/{r.event_id}",
                route="host",
                form=r.form,
                consuming_call_id=call_id,
                entries=[e.model_copy() for e in r.entries],
                placements=[
                    Placement(
                        slot=f"user:extra_info/{e.item_id}",
                        kind="block",
                        text=t,
                        digest=text_digest(t),
                        proof=Proof(message_index=index, message_digest=digest, start=s),
                    )
                    for e, (s, t) in zip(r.entries, r.spans)
                ],
            )

    hist_src: list[int | None] = []
    """Event id each history message came from (condensation forgets by event id)."""

    def push(msg: Message, ev: dict[str, Any]) -> None:
        hist.append(msg)
        sid = ev.get("id")
        hist_src.append(sid if isinstance(sid, int) and not isinstance(sid, bool) else None)

    for i, e in enumerate(evs):
        where = f"{field}[{i}]"
        src, action, observation = e.get("source"), e.get("action"), e.get("observation")
        args = as_dict(e.get("args"))
        tcm = e.get("tool_call_metadata") if isinstance(e.get("tool_call_metadata"), dict) else None
        if action == "system":
            push(Message(role="system", content=f.text(args, "content", f"{where}.args") or ""), e)
            tools = args.get("tools") if isinstance(args.get("tools"), list) else None
        elif action == "message" and src == "user":
            push(
                Message(
                    role="user", content=f.text(args, "content", f"{where}.args") or e.get("message", "")
                ),
                e,
            )
        elif observation == "recall":
            extras = f.get(e, "extras", dict, where, default={})
            text, blocks = render_recall(extras)
            if not text:
                continue
            push(Message(role="user", content=text), e)
            spans = []
            entries = []
            for name, trigger, block in blocks:
                spans.append((text.index(block), block))
                value = block[
                    len("<EXTRA_INFO>\n") + len(EXTRA_INFO_HEAD.format(trigger=trigger)) : -len(
                        "\n</EXTRA_INFO>"
                    )
                ]
                entries.append(
                    Entry(
                        namespace="openhands:microagents",
                        item_id=name,
                        id_scheme="microagent-name",
                        value=value,
                        digest=text_digest(value),
                        display_key=trigger or None,
                        labels={"trigger": trigger},
                    )
                )
            if entries:
                rtype = extras.get("recall_type") if isinstance(extras.get("recall_type"), str) else "recall"
                eid = e.get("id")
                recalls.append(
                    _Recall(
                        hist[-1],
                        text,
                        rtype,
                        entries,
                        spans,
                        eid if isinstance(eid, int) and not isinstance(eid, bool) else i,
                    )
                )
        elif src == "agent" and action is not None and tcm is not None:
            mr = f.get(tcm, "model_response", dict, f"{where}.tool_call_metadata", required=True)
            rid = mr.get("id") or f"event-{e.get('id', i)}"
            if rid in done:
                continue  # a further action of a response already recorded
            done.add(rid)
            choices = f.get(mr, "choices", list, f"{where}.tool_call_metadata.model_response", required=True)
            if (
                not choices
                or not isinstance(choices[0], dict)
                or not isinstance(choices[0].get("message"), dict)
            ):
                raise f.fail(
                    f"{where}.tool_call_metadata.model_response.choices", "expected a message choice"
                )
            msg = choices[0]["message"]
            mfield = f"{where}.tool_call_metadata.model_response.choices[0].message"
            content = f.text(msg, "content", mfield)
            tcs = openai_tool_calls(f, msg.get("tool_calls"), f"{mfield}.tool_calls")
            emitted, call = chain.emit(
                hist,
                Response(content=content, tool_calls=tcs, reasoning=joined(message_reasoning(msg))),
                usage=openai_usage(mr.get("usage")),
                cost_usd=costs[k],
                model=mr.get("model") if isinstance(mr.get("model"), str) else None,
            )
            call.request.tools = tools
            k += 1
            yield from emitted
            yield from deliveries(call.call_id, len(hist))
            for tc in tcs or []:
                if tc.id:
                    issued[tc.id] = (call.call_id, tc.name, tc.arguments)
            push(Message(role="assistant", content=content, tool_calls=tcs), e)
            if action == "finish":
                finished = True
        elif src == "agent" and action == "message":
            content = f.text(args, "content", f"{where}.args") or e.get("message", "")
            emitted, call = chain.emit(hist, Response(content=content), cost_usd=costs[k])
            k += 1
            yield from emitted
            yield from deliveries(call.call_id, len(hist))
            push(Message(role="assistant", content=content), e)
        elif observation is not None and tcm is not None:
            tcid = tcm.get("tool_call_id")
            src_call = issued.get(tcid) if isinstance(tcid, str) else None
            if src_call is None:
                raise f.fail(
                    f"{where}.tool_call_metadata.tool_call_id",
                    f"{tcid!r} answers no tool call of an earlier model response",
                )
            out = _obs_text(e)
            extras = as_dict(e.get("extras"))
            md = as_dict(extras.get("metadata"))
            code = md.get("exit_code")
            yield ToolResultEvent(
                episode_id=episode_id,
                call_id=src_call[0],
                tool_call_id=tcid,
                name=src_call[1],
                arguments=src_call[2],
                output=out,
                exit_code=code if isinstance(code, int) and not isinstance(code, bool) else None,
            )
            push(Message(role="tool", content=out, tool_call_id=tcid, name=src_call[1]), e)
        elif action == "condensation":
            forgotten = _forgotten(args)
            kept = [(m, sid) for m, sid in zip(hist, hist_src) if sid is None or sid not in forgotten]
            summary = args.get("summary")
            if isinstance(summary, str) and summary:
                off = args.get("summary_offset")
                at = min(off, len(kept)) if isinstance(off, int) and off >= 0 else len(kept)
                kept.insert(at, (Message(role="user", content=summary), None))
            hist[:] = [m for m, _ in kept]
            hist_src[:] = [sid for _, sid in kept]
        # other events (state changes, null observations, recall actions) are not model input
    resolved = test_result.get("resolved")
    report = test_result.get("report")
    if not isinstance(resolved, bool) and isinstance(report, dict):
        resolved = report.get("resolved")
    sub = test_result.get("git_patch")
    status = "error" if error else ("finished" if finished else "stopped")
    yield EpisodeEnd(
        episode_id=episode_id,
        resolved=resolved if isinstance(resolved, bool) else None,
        exit_status=status,
        submission=sub if isinstance(sub, str) and sub else None,
    )
