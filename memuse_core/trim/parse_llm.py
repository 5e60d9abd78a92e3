"""The LLM parser: structured output through the `openai` SDK, checked before use (MemTrim A.1).

- One chat-completions call per interaction with a JSON-schema response format built from the
  pydantic models below, temperature 0 (A.1 "constrained structured output and deterministic
  decoding").
- Checks on every result: valid fields (pydantic), well-formed values for the declared type
  (a numeric value must be a number, a temporal one a date, ...), and grounding: every unit's
  quote must occur in the interaction text; its offsets become the unit's span pointer.
- A failed check is sent back once with the validation error (A.1 "retry once"). After the retry,
  remaining ungrounded units are dropped (never indexed); if the reply is still invalid the memory
  is marked unparsed: it stays in the base store, and its stored outcome is never reused.
- Key equivalence (A.1): a new key is compared with a few existing keys of the same entity and
  value type by a second structured call; an unclear or invalid reply keeps the keys apart.
  Task signatures and free-text values of a matched key are aligned the same way.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from dataclasses import replace
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from .outcome import finish_parse, make_outcome
from .units import (
    EvidenceUnit,
    Key,
    ParsedInteraction,
    canon_attr,
    canon_entity,
    normalize_value,
    parse_date,
    parse_number,
)

PROMPTS = Path(__file__).resolve().parents[2] / "prompts"


class LLMUnit(BaseModel):
    """One fact as the model reports it."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    entity: str
    """What the fact is about."""
    attribute: str
    """Property or relation (snake_case)."""
    value_type: Literal["boolean", "numeric", "temporal", "categorical", "entity", "text"]
    """Type of the value."""
    value: str
    """The value in plain form."""
    multi_valued: bool
    """True when several values can hold at once."""
    quote: str
    """Exact passage of the text stating the fact."""
    supports_answer: Literal["yes", "no", "unsure"]
    """Whether the stored answer depends on this fact."""


class LLMParse(BaseModel):
    """The whole structured reply for one interaction."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    units: list[LLMUnit]
    """Atomic facts."""
    task: str
    """operation_target, or none."""
    answer_expressible: bool
    """Whether the stored answer can be restated as one fact."""


class KeyMatch(BaseModel):
    """Reply of the equivalence check."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    match: int | None = Field(...)
    """1-based candidate number, or null."""


def strict_schema(model: type[BaseModel]) -> dict[str, Any]:
    """JSON schema for `response_format` strict mode: every object closed, every field required."""
    schema = model.model_json_schema()

    def fix(node: Any) -> None:
        if isinstance(node, dict):
            if node.get("type") == "object" and "properties" in node:
                node["additionalProperties"] = False
                node["required"] = list(node["properties"])
            for v in node.values():
                fix(v)
        elif isinstance(node, list):
            for v in node:
                fix(v)

    fix(schema)
    return schema


def _load_prompt(name: str) -> str:
    p = PROMPTS / name
    try:
        return p.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise FileNotFoundError(p) from None


class ParseFailure(ValueError):
    """A reply that failed the checks; the message goes back to the model once."""


class LLMParser:
    """Parser backed by any OpenAI-compatible chat-completions endpoint (see module docstring)."""

    name = "llm"

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        client: Any = None,
        timeout: float = 60.0,
        max_candidates: int = 8,
    ) -> None:
        if client is None:
            import openai

            client = openai.OpenAI(
                base_url=base_url,
                timeout=timeout,
                api_key=api_key or os.environ.get("OPENAI_API_KEY") or "unused",
            )
        self.client = client
        self.model = model
        self.max_candidates = max_candidates
        self.system = _load_prompt("trim_parser.txt")
        self.key_system = _load_prompt("trim_parser_keys.txt")
        self.prompt_hash = hashlib.sha256((self.system + self.key_system).encode()).hexdigest()[:12]
        self.calls = 0
        self.input_tokens = 0
        self.output_tokens = 0
        self.failures: list[str] = []

    # -- parsing --------------------------------------------------------------------------------
    def parse(self, text: str, answer: str | None = None) -> ParsedInteraction:
        """Parse with one retry; an interaction that never passes the checks comes back with
        ok=False and no outcome (A.1 fallback)."""
        user = "Interaction text:\n<<<\n" + text + "\n>>>\n"
        user += (
            f"Stored answer: {answer}\n"
            if answer is not None
            else "Stored answer: (none; this is a new request)\n"
        )
        messages: list[dict[str, Any]] = [
            {"role": "system", "content": self.system},
            {"role": "user", "content": user},
        ]
        last_error = ""
        for attempt in range(2):
            try:
                reply = self._call(messages, LLMParse, "memtrim_parse")
                return self._check(text, answer, reply, final=attempt == 1)
            except ParseFailure as e:
                last_error = str(e)
                messages.append({"role": "assistant", "content": getattr(e, "raw", "") or "(invalid reply)"})
                messages.append(
                    {
                        "role": "user",
                        "content": "Your reply failed validation: "
                        + last_error
                        + "\nReturn a corrected reply for the same interaction.",
                    }
                )
        self.failures.append(last_error)
        return ParsedInteraction(ok=False, error=last_error)

    def _call(self, messages: list[dict[str, Any]], model: type[BaseModel], name: str) -> BaseModel:
        try:
            resp = self.client.chat.completions.create(
                model=self.model,
                messages=messages,
                temperature=0,
                response_format={
                    "type": "json_schema",
                    "json_schema": {"name": name, "schema": strict_schema(model), "strict": True},
                },
            )
        except Exception as e:  # network/server errors count as a failed attempt
            raise ParseFailure(f"request failed: {type(e).__name__}: {str(e)[:200]}") from None
        self.calls += 1
        usage = getattr(resp, "usage", None)
        if usage is not None:
            self.input_tokens += int(getattr(usage, "prompt_tokens", 0) or 0)
            self.output_tokens += int(getattr(usage, "completion_tokens", 0) or 0)
        raw = (resp.choices[0].message.content or "") if resp.choices else ""
        try:
            return model.model_validate_json(_strip_fence(raw))
        except ValidationError as e:
            errs = "; ".join(
                f"{'.'.join(str(x) for x in er['loc']) or 'reply'}: {er['msg']}" for er in e.errors()[:5]
            )
            f = ParseFailure(f"invalid fields: {errs}")
            f.raw = raw  # type: ignore[attr-defined]
            raise f from None

    def _check(self, text: str, answer: str | None, reply: BaseModel, *, final: bool) -> ParsedInteraction:
        assert isinstance(reply, LLMParse)
        units: list[EvidenceUnit] = []
        support: set[int] = set()
        problems: list[str] = []
        seen: set[tuple[Key, Any]] = set()
        malformed = 0
        support_dropped = 0
        for i, u in enumerate(reply.units):
            bad = _malformed(u)
            if bad:
                problems.append(f"units.{i}: {bad}")
                malformed += 1
                continue
            span = locate(text, u.quote)
            if span is None:
                problems.append(f"units.{i}.quote: not found in the interaction text: {u.quote[:80]!r}")
                if u.supports_answer != "no":
                    support_dropped += 1
                continue
            attr = canon_attr(u.attribute)
            vtype, value = normalize_value(u.value, attribute=attr, hint=u.value_type)
            key = Key(canon_entity(u.entity), attr, vtype)
            if (key, value) in seen:
                continue
            seen.add((key, value))
            if u.supports_answer != "no":  # uncertain dependence counts as support (A.1)
                support.add(len(units))
            a, b = span
            units.append(
                EvidenceUnit(
                    key=key, value=value, text=u.value, start=a, end=b, span=text[a:b], many=u.multi_valued
                )
            )
        if (problems and not final) or malformed:
            # after the retry, ungrounded units are only dropped (A.1); malformed ones fail the parse
            f = ParseFailure("; ".join(problems[:8]))
            f.raw = reply.model_dump_json()  # type: ignore[attr-defined]
            raise f
        task = None if reply.task.strip().lower() in ("", "none") else canon_attr(reply.task)
        question = _last_question(text)
        outcome = None
        if answer is not None and answer.strip():
            outcome = make_outcome(task or "unspecified_task", answer, question)
            outcome = replace(outcome, expressible=reply.answer_expressible and outcome.expressible)
        p = ParsedInteraction(
            units=units,
            task=task,
            question=question,
            support=frozenset(support),
            outcome=outcome,
            dropped=len(problems),
            support_dropped=support_dropped if answer is not None else 0,
            support_from="parser",
        )
        return finish_parse(p)

    # -- equivalence (A.1) ----------------------------------------------------------------------
    def equivalent_key(self, key: Key, candidates: list[Key]) -> Key | None:
        cands = candidates[: self.max_candidates]
        listing = "\n".join(
            f"{i + 1}. entity={c.entity!r} attribute={c.attribute!r} type={c.vtype}"
            for i, c in enumerate(cands)
        )
        idx = self._match(
            f"New key: entity={key.entity!r} attribute={key.attribute!r} type={key.vtype}\n"
            f"Candidates:\n{listing}",
            len(cands),
        )
        return cands[idx] if idx is not None else None

    def equivalent_task(self, task: str, candidates: list[str]) -> str | None:
        cands = candidates[: self.max_candidates]
        listing = "\n".join(f"{i + 1}. {c}" for i, c in enumerate(cands))
        idx = self._match(f"New task name: {task}\nCandidate task names:\n{listing}", len(cands))
        return cands[idx] if idx is not None else None

    def equivalent_value(self, key: Key, value: Any, candidates: list[Any]) -> Any | None:
        """Free-text value alignment for one key (A.1)."""
        cands = candidates[: self.max_candidates]
        listing = "\n".join(f"{i + 1}. {c!r}" for i, c in enumerate(cands))
        idx = self._match(
            f"Property: entity={key.entity!r} attribute={key.attribute!r}\n"
            f"New value: {value!r}\nCandidate values:\n{listing}",
            len(cands),
        )
        return cands[idx] if idx is not None else None

    def _match(self, prompt: str, n: int) -> int | None:
        messages = [{"role": "system", "content": self.key_system}, {"role": "user", "content": prompt}]
        try:
            reply = self._call(messages, KeyMatch, "memtrim_key_match")
        except ParseFailure:
            return None  # unclear: keep separate (A.1)
        assert isinstance(reply, KeyMatch)
        if reply.match is None or not 1 <= reply.match <= n:
            return None
        return reply.match - 1


def _last_question(text: str) -> str | None:
    """The last sentence ending in "?" (labels the task; its grammar names the answer's fact)."""
    hits = re.findall(r"[^.!?\n]*\?", text)
    return hits[-1].strip() if hits else None


def _strip_fence(raw: str) -> str:
    m = re.match(r"^\s*```(?:json)?\s*(.*?)\s*```\s*$", raw, re.S)
    return m.group(1) if m else raw


def _malformed(u: LLMUnit) -> str | None:
    """Why a unit's value does not fit its declared type (A.1 "well-formed key-value types")."""
    if not u.entity.strip() or not u.attribute.strip():
        return "entity and attribute must not be empty"
    v = u.value.strip()
    if not v:
        return "value must not be empty"
    if u.value_type == "numeric" and parse_number(v) is None:
        return f"value {v!r} is not a number"
    if u.value_type == "temporal" and parse_date(v) is None:
        return f"value {v!r} is not a year or a date"
    if u.value_type == "boolean" and v.casefold() not in {"yes", "no", "true", "false"}:
        return f"value {v!r} is not a boolean"
    if not u.quote.strip():
        return "quote must not be empty"
    return None


def locate(text: str, quote: str) -> tuple[int, int] | None:
    """Offsets of `quote` in `text`: exact, then ignoring case and runs of white space."""
    q = quote.strip()
    if not q:
        return None
    i = text.find(q)
    if i >= 0:
        return i, i + len(q)
    pattern = r"\s+".join(re.escape(w) for w in q.split())
    m = re.search(pattern, text, re.I)
    return (m.start(), m.end()) if m else None


def dump_reply(units: list[dict[str, Any]], task: str, expressible: bool) -> str:
    """A reply in the parser's schema (for scripted servers and docs)."""
    return json.dumps({"units": units, "task": task, "answer_expressible": expressible})
