"""Reasoning text that providers return beside a response.

The text goes to `Response.reasoning` (stored with the response; shown beside it, and given to the
judge as the agent's reasoning, never as an instruction). It arrives in several shapes, all read
here so every importer treats them alike:

* `reasoning_content`: a string on the assistant message (DeepSeek; LiteLLM's unified field);
* `reasoning`: a string on the message (some OpenAI-compatible servers, OpenRouter);
* `thinking_blocks`: a list of `{"type": "thinking", "thinking": ...}` (LiteLLM for Anthropic);
* Anthropic content blocks `{"type": "thinking", "thinking": ...}` inside a message's `content`
  list (`redacted_thinking` blocks carry no readable text and are left out);
* Responses API output items `{"type": "reasoning", "summary": [{"text": ...}], "content":
  [{"type": "reasoning_text", "text": ...}]}` in a recorded response object.

The same text given twice (LiteLLM fills both `reasoning_content` and `thinking_blocks`) is kept
once; distinct pieces are joined by a blank line, in the order above.
"""

from __future__ import annotations

from typing import Any


def _texts_of_block(b: Any) -> list[str]:
    if not isinstance(b, dict):
        return []
    t = b.get("type")
    if t in ("thinking", "reasoning"):
        v = b.get("thinking", b.get("text", b.get("reasoning")))
        return [v] if isinstance(v, str) else []
    if t == "reasoning_text":
        v = b.get("text")
        return [v] if isinstance(v, str) else []
    return []


def message_reasoning(msg: Any) -> list[str]:
    """Reasoning pieces of one assistant message dict (chat shape)."""
    if not isinstance(msg, dict):
        return []
    out: list[str] = []
    for key in ("reasoning_content", "reasoning"):
        v = msg.get(key)
        if isinstance(v, str):
            out.append(v)
        elif isinstance(v, dict):  # {"summary": ...} or {"text": ...}
            out.extend(x for x in (v.get("text"), v.get("summary")) if isinstance(x, str))
    blocks = msg.get("thinking_blocks")
    if isinstance(blocks, list):
        for b in blocks:
            out.extend(_texts_of_block(b))
    content = msg.get("content")
    if isinstance(content, list):
        for b in content:
            out.extend(_texts_of_block(b))
    return out


def response_reasoning(resp: Any) -> list[str]:
    """Reasoning pieces of a recorded provider response: the chat message of its first choice, or
    the reasoning items of a Responses-API `output`."""
    if not isinstance(resp, dict):
        return []
    out: list[str] = []
    choices = resp.get("choices")
    if isinstance(choices, list) and choices and isinstance(choices[0], dict):
        out.extend(message_reasoning(choices[0].get("message")))
    output = resp.get("output")
    if isinstance(output, list):
        for item in output:
            if not isinstance(item, dict) or item.get("type") != "reasoning":
                continue
            for part in item.get("summary") or []:
                if isinstance(part, dict) and isinstance(part.get("text"), str):
                    out.append(part["text"])
            for part in item.get("content") or []:
                out.extend(_texts_of_block(part))
    return out


def joined(*pieces: list[str]) -> str | None:
    """Distinct non-empty pieces joined by a blank line (None when there are none)."""
    keys: set[str] = set()
    kept: list[str] = []
    for group in pieces:
        for p in group:
            k = p.strip()
            if k and k not in keys:
                keys.add(k)
                kept.append(p)
    return "\n\n".join(kept) or None
