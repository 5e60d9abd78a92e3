"""OpenAI-compatible wire formats, normalised into the event log's call shape (MemUse A.1.1).

The recorder "normalizes supported APIs into a common log of turns, messages, and tool executions".
Two APIs are supported:

* chat completions (`/chat/completions`): `messages` map one to one onto `Message`; an assistant
  message's `tool_calls` (`{id, type, function: {name, arguments}}`) become `ToolCall`s. Every other
  key of a message is kept verbatim (messages allow extra fields), so content is byte-exact.
* the Responses API (`/responses`): `instructions` becomes a leading system message and every
  `input` item becomes one message (function calls an assistant message with one tool call,
  function outputs a `tool` message). `MessageMap` remembers which JSON pointer prefix produced
  which message index, so a proof's pointer into the raw body can be resolved to a message.

Responses are parsed from a JSON body or reassembled from a server-sent event stream. Pure
functions only: no I/O here.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from ..events import message_text

RESPONSES = "responses"
CHAT = "chat"
EMBEDDINGS = "embeddings"


def api_kind(path: str) -> str | None:
    """Which recorded API a request path (after `/v1`) belongs to; None for pass-through only."""
    p = path.rstrip("/")
    if p.endswith("chat/completions"):
        return CHAT
    if p.endswith("/responses") or p == "responses":
        return RESPONSES
    if p.endswith("embeddings"):
        return EMBEDDINGS
    return None


@dataclass
class MessageMap:
    """Normalised messages of one request plus the raw-body location of each."""

    messages: list[dict[str, Any]]
    """Messages in event-log shape (plain dicts that validate as `events.Message`)."""
    prefixes: list[str]
    """JSON pointer of the raw value each message came from (e.g. `/messages/3`, `/input/0`)."""
    raw: list[Any] = field(default_factory=list)
    """The raw value each message came from (for comparing consecutive requests)."""

    def index_of_pointer(self, pointer: str) -> tuple[int, str] | None:
        """(message index, rest of the pointer) of the message a JSON pointer points into."""
        for i, pre in enumerate(self.prefixes):
            if pointer == pre or pointer.startswith(pre + "/"):
                return i, pointer[len(pre) :]
        return None


def _tool_call(tc: Any) -> dict[str, Any]:
    if not isinstance(tc, dict):
        return {"name": str(tc), "arguments": ""}
    fn: dict[str, Any] = tc["function"] if isinstance(tc.get("function"), dict) else {}
    out: dict[str, Any] = {
        "name": str(fn.get("name") or tc.get("name") or ""),
        "arguments": _as_str(fn.get("arguments", tc.get("arguments", ""))),
    }
    if tc.get("id") is not None:
        out["id"] = str(tc["id"])
    return out


def _as_str(v: Any) -> str:
    if v is None:
        return ""
    return v if isinstance(v, str) else json.dumps(v)


def _content(v: Any) -> str | list[dict[str, Any]] | None:
    if v is None or isinstance(v, str):
        return v
    if isinstance(v, list):
        return [p if isinstance(p, dict) else {"type": "text", "text": str(p)} for p in v]
    return json.dumps(v)


def chat_message(raw: Any) -> dict[str, Any]:
    """One chat-completions message as an event-log message dict (content kept verbatim)."""
    if not isinstance(raw, dict):
        return {"role": "unknown", "content": _as_str(raw)}
    msg: dict[str, Any] = {}
    for k, v in raw.items():
        if k == "tool_calls":
            if v:
                msg["tool_calls"] = [_tool_call(tc) for tc in v]
        elif k == "content":
            msg["content"] = _content(v)
        elif k in ("name", "tool_call_id"):
            if v is not None:
                msg[k] = str(v)
        elif k == "role":
            msg["role"] = str(v)
        elif v is not None:
            msg[k] = v
    msg.setdefault("role", "unknown")
    return msg


def responses_item(raw: Any) -> dict[str, Any]:
    """One Responses-API input item as an event-log message dict."""
    if isinstance(raw, str):
        return {"role": "user", "content": raw}
    if not isinstance(raw, dict):
        return {"role": "unknown", "content": _as_str(raw)}
    typ = raw.get("type", "message")
    if typ == "message" or "role" in raw and typ not in ("function_call", "function_call_output"):
        return {"role": str(raw.get("role", "user")), "content": _content(raw.get("content"))}
    if typ == "function_call":
        tc = {"name": str(raw.get("name", "")), "arguments": _as_str(raw.get("arguments"))}
        if raw.get("call_id") is not None:
            tc["id"] = str(raw["call_id"])
        return {"role": "assistant", "content": None, "tool_calls": [tc]}
    if typ == "function_call_output":
        out: dict[str, Any] = {"role": "tool", "content": _content(raw.get("output"))}
        if raw.get("call_id") is not None:
            out["tool_call_id"] = str(raw["call_id"])
        return out
    if typ == "reasoning":
        summ = raw.get("summary") or []
        text = "\n".join(p.get("text", "") for p in summ if isinstance(p, dict))
        return {"role": "reasoning", "content": text}
    return {"role": str(typ), "content": _content(raw.get("content"))}


def normalise_request(kind: str, body: dict[str, Any]) -> tuple[MessageMap, dict[str, Any]]:
    """(messages with their raw locations, the request's other top-level fields verbatim)."""
    if kind == CHAT:
        raw_msgs = body.get("messages") or []
        if not isinstance(raw_msgs, list):
            raw_msgs = []
        mm = MessageMap(
            [chat_message(m) for m in raw_msgs],
            [f"/messages/{i}" for i in range(len(raw_msgs))],
            list(raw_msgs),
        )
        rest = {k: v for k, v in body.items() if k != "messages"}
        return mm, rest
    if kind == RESPONSES:
        msgs: list[dict[str, Any]] = []
        prefixes: list[str] = []
        raws: list[Any] = []
        instr = body.get("instructions")
        if isinstance(instr, str):
            msgs.append({"role": "system", "content": instr})
            prefixes.append("/instructions")
            raws.append(instr)
        inp = body.get("input")
        if isinstance(inp, str):
            msgs.append({"role": "user", "content": inp})
            prefixes.append("/input")
            raws.append(inp)
        elif isinstance(inp, list):
            for j, item in enumerate(inp):
                msgs.append(responses_item(item))
                prefixes.append(f"/input/{j}")
                raws.append(item)
        rest = {k: v for k, v in body.items() if k not in ("input", "instructions")}
        return MessageMap(msgs, prefixes, raws), rest
    # Embeddings and anything else: no messages; the input is kept as a request field.
    return MessageMap([], [], []), dict(body)


# ------------------------------------------------------------------------------------------
# Responses
# ------------------------------------------------------------------------------------------


@dataclass
class ParsedResponse:
    """What a response told us, in event-log shape."""

    response: dict[str, Any] | None = None
    """`events.Response` fields (content, tool_calls, reasoning, plus extras)."""
    usage: dict[str, int] | None = None
    """`events.Usage` fields."""
    cost_usd: float | None = None
    """Provider-reported cost, when the provider reports one (`usage.cost`)."""
    model: str | None = None
    """Model name the provider answered with."""


def _usage(u: Any) -> tuple[dict[str, int] | None, float | None]:
    if not isinstance(u, dict):
        return None, None
    out: dict[str, int] = {}

    def put(key: str, v: Any) -> None:
        if isinstance(v, int) and not isinstance(v, bool):
            out[key] = v

    put("input_tokens", u.get("prompt_tokens", u.get("input_tokens")))
    put("output_tokens", u.get("completion_tokens", u.get("output_tokens")))
    det_in = u.get("prompt_tokens_details") or u.get("input_tokens_details") or {}
    det_out = u.get("completion_tokens_details") or u.get("output_tokens_details") or {}
    if isinstance(det_in, dict):
        put("cached_tokens", det_in.get("cached_tokens"))
    if isinstance(det_out, dict):
        put("reasoning_tokens", det_out.get("reasoning_tokens"))
    cost = u.get("cost")
    cost_f = float(cost) if isinstance(cost, (int, float)) and not isinstance(cost, bool) else None
    return (out or None), cost_f


def parse_chat_json(obj: Any) -> ParsedResponse:
    """A non-streamed chat-completions response."""
    pr = ParsedResponse()
    if not isinstance(obj, dict):
        return pr
    usage, pr.cost_usd = _usage(obj.get("usage"))
    pr.usage, pr.model = usage, obj.get("model") if isinstance(obj.get("model"), str) else None
    choices = obj.get("choices") or []
    msg = choices[0].get("message", {}) if choices and isinstance(choices[0], dict) else {}
    if not isinstance(msg, dict):
        msg = {}
    resp: dict[str, Any] = {"content": msg.get("content") if isinstance(msg.get("content"), str) else None}
    if msg.get("tool_calls"):
        resp["tool_calls"] = [_tool_call(tc) for tc in msg["tool_calls"]]
    reasoning = msg.get("reasoning_content") or msg.get("reasoning")
    if isinstance(reasoning, str):
        resp["reasoning"] = reasoning
    if choices and isinstance(choices[0], dict) and isinstance(choices[0].get("finish_reason"), str):
        resp["finish_reason"] = choices[0]["finish_reason"]
    pr.response = resp
    return pr


def parse_responses_json(obj: Any) -> ParsedResponse:
    """A non-streamed Responses-API response."""
    pr = ParsedResponse()
    if not isinstance(obj, dict):
        return pr
    pr.usage, pr.cost_usd = _usage(obj.get("usage"))
    pr.model = obj.get("model") if isinstance(obj.get("model"), str) else None
    texts: list[str] = []
    calls: list[dict[str, Any]] = []
    reasoning: list[str] = []
    for item in obj.get("output") or []:
        if not isinstance(item, dict):
            continue
        if item.get("type") == "message":
            texts.append(message_text(_content(item.get("content"))))
        elif item.get("type") == "function_call":
            tc = {"name": str(item.get("name", "")), "arguments": _as_str(item.get("arguments"))}
            if item.get("call_id") is not None:
                tc["id"] = str(item["call_id"])
            calls.append(tc)
        elif item.get("type") == "reasoning":
            reasoning.extend(p.get("text", "") for p in item.get("summary") or [] if isinstance(p, dict))
    resp: dict[str, Any] = {"content": "\n".join(texts) if texts else None}
    if calls:
        resp["tool_calls"] = calls
    if reasoning:
        resp["reasoning"] = "\n".join(reasoning)
    pr.response = resp
    return pr


def parse_json_response(kind: str, body: bytes) -> ParsedResponse:
    """Parse a non-streamed response body of a recorded API (tolerates garbage)."""
    try:
        obj = json.loads(body)
    except (ValueError, UnicodeDecodeError, RecursionError) as e:
        why = "nested too deep for the JSON parser" if isinstance(e, RecursionError) else "not JSON"
        raw = body[:2000].decode("utf-8", "replace")
        return ParsedResponse(
            response={"content": None, "raw_text": raw, "unparsed_reason": f"response {why}"}
        )
    if kind == RESPONSES:
        return parse_responses_json(obj)
    if kind == EMBEDDINGS:
        pr = ParsedResponse(response={"content": None})
        if isinstance(obj, dict):
            pr.usage, pr.cost_usd = _usage(obj.get("usage"))
            data = obj.get("data")
            if isinstance(data, list):
                pr.response = {"content": None, "n_embeddings": len(data)}
        return pr
    return parse_chat_json(obj)


class StreamAssembler:
    """Rebuilds a response from server-sent events as they pass through the proxy."""

    def __init__(self, kind: str):
        self.kind = kind
        self._buf = b""
        self.content: list[str] = []
        self.reasoning: list[str] = []
        self.tool_calls: dict[int, dict[str, Any]] = {}
        self.usage: Any = None
        self.model: str | None = None
        self.finish_reason: str | None = None
        self.final: dict[str, Any] | None = None
        self.done = False

    def feed(self, chunk: bytes) -> None:
        """Consume raw bytes of the stream (any split)."""
        self._buf += chunk
        while True:
            cut = self._buf.find(b"\n")
            if cut < 0:
                return
            line, self._buf = self._buf[:cut].rstrip(b"\r"), self._buf[cut + 1 :]
            if line.startswith(b"data:"):
                self._data(line[5:].strip())

    def _data(self, data: bytes) -> None:
        if data == b"[DONE]":
            self.done = True
            return
        try:
            obj = json.loads(data)
        except (ValueError, UnicodeDecodeError, RecursionError):
            return
        if not isinstance(obj, dict):
            return
        if self.kind == RESPONSES:
            if obj.get("type") in ("response.completed", "response.incomplete", "response.failed"):
                self.final = obj.get("response") if isinstance(obj.get("response"), dict) else None
                self.done = True
            elif obj.get("type") == "response.output_text.delta" and isinstance(obj.get("delta"), str):
                self.content.append(obj["delta"])
            return
        if isinstance(obj.get("model"), str):
            self.model = obj["model"]
        if obj.get("usage"):
            self.usage = obj["usage"]
        for ch in obj.get("choices") or []:
            if not isinstance(ch, dict):
                continue
            if isinstance(ch.get("finish_reason"), str):
                self.finish_reason = ch["finish_reason"]
            d = ch.get("delta") or {}
            if not isinstance(d, dict):
                continue
            if isinstance(d.get("content"), str):
                self.content.append(d["content"])
            r = d.get("reasoning_content") or d.get("reasoning")
            if isinstance(r, str):
                self.reasoning.append(r)
            for tc in d.get("tool_calls") or []:
                if not isinstance(tc, dict):
                    continue
                slot = self.tool_calls.setdefault(int(tc.get("index", 0)), {"name": "", "arguments": ""})
                if tc.get("id"):
                    slot["id"] = str(tc["id"])
                fn = tc.get("function") or {}
                if isinstance(fn, dict):
                    slot["name"] += fn.get("name") or ""
                    slot["arguments"] += fn.get("arguments") or ""

    def result(self) -> ParsedResponse:
        """What the stream said so far (complete or not)."""
        if self.kind == RESPONSES and self.final is not None:
            return parse_responses_json(self.final)
        usage, cost = _usage(self.usage)
        resp: dict[str, Any] = {"content": "".join(self.content) if self.content else None}
        if self.tool_calls:
            resp["tool_calls"] = [self.tool_calls[k] for k in sorted(self.tool_calls)]
        if self.reasoning:
            resp["reasoning"] = "".join(self.reasoning)
        if self.finish_reason:
            resp["finish_reason"] = self.finish_reason
        return ParsedResponse(response=resp, usage=usage, cost_usd=cost, model=self.model)
