"""Shared pieces of the trajectory importers: reading JSON with clear errors, typed field access
that names the offending field, and a call chain that delta-encodes each request against the
previous call of its episode (docs/decisions.md#delta-encoded-requests)."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from ..events import Event, HistoryRewrite, Message, ModelCall, Request, Response, ToolCall, Usage
from .base import IngestError, open_text
from .errors import json_problem
from .limits import parse_document, read_document

_TYPE_NAMES = {
    dict: "an object",
    list: "a list",
    str: "a string",
    int: "an integer",
    float: "a number",
    bool: "true/false",
}


def type_name(v: Any) -> str:
    """How a JSON value's type reads in an error message."""
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "true/false"
    for t, n in _TYPE_NAMES.items():
        if isinstance(v, t):
            return n
    return type(v).__name__


_DOC_TEXT: dict[str, str] = {}
"""Text of the JSON document loaded last, so field errors can name their line."""


def load_json(path: Path) -> Any:
    """The whole JSON document of a file (trajectory files are one document; see module notes).

    Bad JSON becomes an IngestError with the line of the problem.
    """
    try:
        with open_text(path) as f:
            text = read_document(path, f)
    except UnicodeDecodeError as e:
        raise IngestError(path, None, None, f"not UTF-8 text ({e.reason})") from None
    _DOC_TEXT.clear()
    _DOC_TEXT[str(path)] = text
    return parse_json(path, text, None)


_WS = re.compile(r"[ \t\n\r]*")
_PART = re.compile(r"\[(\d+)\]|([^.\[\]]+)")


def line_of_field(text: str, field: str) -> int | None:
    """The line where the value at a dotted field path (`messages[2].role`) starts in a JSON text;
    for a missing key, the line where its object ends. Only used to word an error."""
    dec = json.JSONDecoder()
    parts: list[int | str] = [int(m.group(1)) if m.group(1) else m.group(2) for m in _PART.finditer(field)]
    try:
        i = _WS.match(text, 0).end()  # type: ignore[union-attr]
        for part in parts:
            if isinstance(part, int):
                if text[i] != "[":
                    break
                i = _WS.match(text, i + 1).end()  # type: ignore[union-attr]
                for _ in range(part):
                    i = _WS.match(text, dec.raw_decode(text, i)[1]).end()  # type: ignore[union-attr]
                    if text[i] != ",":
                        break
                    i = _WS.match(text, i + 1).end()  # type: ignore[union-attr]
            else:
                if text[i] != "{":
                    break
                i = _WS.match(text, i + 1).end()  # type: ignore[union-attr]
                while text[i] == '"':
                    key, j = json.decoder.scanstring(text, i + 1)  # type: ignore[attr-defined]
                    j = _WS.match(text, j).end()  # type: ignore[union-attr]
                    j = _WS.match(text, j + 1).end()  # type: ignore[union-attr]
                    if key == part:
                        i = j
                        break
                    i = _WS.match(text, dec.raw_decode(text, j)[1]).end()  # type: ignore[union-attr]
                    if text[i] == ",":
                        i = _WS.match(text, i + 1).end()  # type: ignore[union-attr]
                else:
                    break
    except (ValueError, IndexError):
        return None
    return text.count("\n", 0, i) + 1


def parse_json(path: Path, text: str, line: int | None) -> Any:
    """Parse one JSON text; `line` is the file line the text starts on (JSON Lines), else None."""
    try:
        return parse_document(path, text, line)
    except json.JSONDecodeError as e:
        where = line if line is not None else e.lineno
        if not text.strip():
            raise IngestError(path, line, None, "empty line where a JSON value was expected") from None
        if e.pos >= len(text.rstrip()):
            raise IngestError(
                path,
                where,
                None,
                "invalid JSON (the text ends before the JSON value is complete: truncated?)",
            ) from None
        raise IngestError(path, where, None, f"invalid JSON ({json_problem(e.msg, e.colno)})") from None


class Fields:
    """Typed access to a parsed JSON document that reports the exact field on failure."""

    def __init__(self, path: Path, line: int | None = None):
        self.path = path
        self.line = line

    def fail(self, field: str | None, reason: str) -> IngestError:
        line = self.line
        text = _DOC_TEXT.get(str(self.path))
        if line is None and field and text is not None:
            line = line_of_field(text, field)
        return IngestError(self.path, line, field or None, reason)

    def obj(self, v: Any, field: str) -> dict[str, Any]:
        if not isinstance(v, dict):
            raise self.fail(field, f"expected an object, got {type_name(v)}")
        return v

    def get(
        self,
        d: dict[str, Any],
        key: str,
        typ: type | tuple[type, ...],
        field: str,
        *,
        required: bool = False,
        default: Any = None,
    ) -> Any:
        """`d[key]` checked against `typ`; None/absent gives `default` unless required."""
        name = f"{field}.{key}" if field else key
        v = d.get(key)
        if v is None:
            if required:
                raise self.fail(name, "missing")
            return default
        if isinstance(v, bool) and typ in (int, float, (int, float)):
            raise self.fail(name, f"expected {_want(typ)}, got true/false")
        if not isinstance(v, typ):
            raise self.fail(name, f"expected {_want(typ)}, got {type_name(v)}")
        return v

    def text(self, d: dict[str, Any], key: str, field: str, *, required: bool = False) -> str | None:
        """A message content value flattened to text (string or list of text parts)."""
        name = f"{field}.{key}" if field else key
        v = d.get(key)
        if v is None:
            if required:
                raise self.fail(name, "missing")
            return None
        if isinstance(v, str):
            return v
        if isinstance(v, list):
            parts = []
            for i, p in enumerate(v):
                if isinstance(p, str):
                    parts.append(p)
                elif isinstance(p, dict) and isinstance(p.get("text"), str):
                    parts.append(p["text"])
                elif not isinstance(p, dict):
                    raise self.fail(f"{name}[{i}]", f"expected a text part, got {type_name(p)}")
            return "\n".join(parts)
        raise self.fail(name, f"expected a string or a list of text parts, got {type_name(v)}")


def _want(typ: type | tuple[type, ...]) -> str:
    if isinstance(typ, tuple):
        return " or ".join(_TYPE_NAMES.get(t, t.__name__) for t in typ)
    return _TYPE_NAMES.get(typ, typ.__name__)


def as_dict(v: Any) -> dict[str, Any]:
    """`v` when it is a JSON object, else an empty one (for optional, free-form sections)."""
    return v if isinstance(v, dict) else {}


def openai_tool_calls(f: Fields, raw: Any, field: str) -> list[ToolCall] | None:
    """Tool calls in the OpenAI chat shape (`{id, function: {name, arguments}}`)."""
    if raw is None:
        return None
    if not isinstance(raw, list):
        raise f.fail(field, f"expected a list, got {type_name(raw)}")
    out = []
    for i, tc in enumerate(raw):
        name = f"{field}[{i}]"
        tc = f.obj(tc, name)
        fn = as_dict(tc.get("function")) or tc
        fname = fn.get("name")
        if not isinstance(fname, str):
            raise f.fail(f"{name}.function.name", f"expected a string, got {type_name(fname)}")
        args = fn.get("arguments", "")
        if not isinstance(args, str):
            args = json.dumps(args, ensure_ascii=False)
        tid = tc.get("id")
        out.append(ToolCall(id=tid if isinstance(tid, str) else None, name=fname, arguments=args))
    return out or None


def openai_usage(u: Any) -> Usage | None:
    """Token usage from a chat-completions or Responses-API usage object (missing parts stay None)."""
    if not isinstance(u, dict):
        return None

    def num(*keys: str, src: dict[str, Any] = u) -> int | None:
        for k in keys:
            v = src.get(k)
            if isinstance(v, int) and not isinstance(v, bool):
                return v
        return None

    details_in = u.get("prompt_tokens_details") or u.get("input_tokens_details") or {}
    details_out = u.get("completion_tokens_details") or u.get("output_tokens_details") or {}
    usage = Usage(
        input_tokens=num("prompt_tokens", "input_tokens"),
        output_tokens=num("completion_tokens", "output_tokens"),
        cached_tokens=num("cached_tokens", src=details_in) if isinstance(details_in, dict) else None,
        reasoning_tokens=num("reasoning_tokens", src=details_out) if isinstance(details_out, dict) else None,
    )
    if usage.input_tokens is None and usage.output_tokens is None:
        return None
    return usage


class CallChain:
    """Emits the model calls of one episode, each request delta-encoded against the previous one.

    Importers keep one growing list of `Message` objects (the agent's visible history) and pass
    the full input of each call; the chain sends only what follows the longest shared prefix.
    """

    def __init__(self, episode_id: str):
        self.episode_id = episode_id
        self.prev_id: str | None = None
        self.prev: list[Message] = []
        self.n = 0
        self.rewrite: HistoryRewrite | None = None

    def next_id(self) -> str:
        return f"{self.episode_id}/c{self.n + 1:03d}"

    def call(self, messages: list[Message], response: Response | None, **kw: Any) -> ModelCall:
        """A `model_call` whose input is `messages` (copied; later appends do not leak in)."""
        k = 0
        for a, b in zip(self.prev, messages):
            if a is b or a == b:
                k += 1
            else:
                break
        if self.prev_id is not None and k > 0:
            req = Request(messages=list(messages[k:]), base_call_id=self.prev_id, base_len=k)
        else:
            req = Request(messages=list(messages))
        call_id = kw.pop("call_id", None) or self.next_id()
        self.rewrite = None
        if self.prev_id is not None and k < len(self.prev):
            # The input does not repeat the previous one (a condenser or history processor changed
            # it): record the change so the recording checks see no unexplained gap (A.1.3).
            r = min(len(self.prev), len(messages)) - k
            self.rewrite = HistoryRewrite(
                episode_id=self.episode_id,
                before_call_id=call_id,
                kept_prefix=k,
                replacement=list(messages[k : k + r]),
            )
        self.n += 1
        self.prev_id, self.prev = call_id, list(messages)
        return ModelCall(episode_id=self.episode_id, call_id=call_id, request=req, response=response, **kw)

    def emit(
        self, messages: list[Message], response: Response | None, **kw: Any
    ) -> tuple[list[HistoryRewrite | ModelCall], ModelCall]:
        """`call`, plus the `history_rewrite` that must precede it when the input was rewritten."""
        call = self.call(messages, response, **kw)
        return ([self.rewrite] if self.rewrite is not None else []) + [call], call


def distribute_cost(total: float | None, weights: list[float]) -> list[float | None]:
    """Split a recorded total cost over calls in proportion to `weights` (equal when all zero).

    The parts sum to `total` (the last part absorbs rounding). Used when a source records only an
    instance total, not a per-call cost.
    """
    n = len(weights)
    if total is None or n == 0:
        return [None] * n
    s = sum(weights)
    shares = [w / s for w in weights] if s > 0 else [1.0 / n] * n
    parts: list[float | None] = [total * sh for sh in shares[:-1]]
    parts.append(total - sum(p or 0.0 for p in parts))
    return parts


_SAFE = re.compile(r"[^A-Za-z0-9_.:@+-]+")


def safe_id(s: str) -> str:
    """A readable id fragment from a file name or label."""
    return _SAFE.sub("_", s).strip("_") or "x"


def stem(path: Path) -> str:
    """File name without trajectory suffixes (`x.traj.json` -> `x`)."""
    name = path.name
    for suf in (".gz", ".jsonl", ".json", ".traj", ".af"):
        if name.endswith(suf):
            name = name[: -len(suf)]
    return name


def guarded(path: Path, pairs: Iterator[tuple[int | None, Event]]) -> Iterator[tuple[int | None, Event]]:
    """Importer output with every unexpected failure turned into one IngestError line.

    Field-level checks raise IngestError themselves; this catches what they did not foresee (a
    value of an unexpected shape deep in a file) so a user never sees a traceback.
    """
    line: int | None = None
    try:
        for line, ev in pairs:
            yield line, ev
    except IngestError:
        raise
    except ValidationError as e:
        first = e.errors()[0]
        loc = ".".join(str(x) for x in first.get("loc", ()))
        raise IngestError(
            path, line, loc or None, f"cannot build event: {first.get('msg', 'invalid value')}"
        ) from None
    except (TypeError, AttributeError, KeyError, IndexError, ValueError) as e:
        raise IngestError(path, line, None, f"unexpected structure ({type(e).__name__}: {e})") from None


def looks_native(head: bytes) -> bool:
    """True when the first line is a complete JSON object with a string `type` (a MemUse event)."""
    first = head.lstrip().split(b"\n", 1)[0]
    if not first.startswith(b"{"):
        return False
    try:
        obj = json.loads(first)
    except (ValueError, RecursionError):
        return False
    return isinstance(obj, dict) and isinstance(obj.get("type"), str)


def iter_lines(path: Path) -> Iterator[tuple[int, str]]:
    """(line number, text) of a text file, streamed; decoding errors become IngestErrors."""
    with open_text(path) as fh:
        n = 0
        try:
            for n, raw in enumerate(fh, start=1):
                yield n, raw
        except UnicodeDecodeError as e:
            raise IngestError(path, n + 1, None, f"not UTF-8 text ({e.reason})") from None


_CONFIG: list[str | None] = [None]


def run_config(derived: str) -> str:
    """The configuration name for an imported run: the caller's override, else `derived`."""
    return _CONFIG[0] or derived


@contextmanager
def using_run_config(config: str | None) -> Iterator[None]:
    """Within the block, trajectory importers label their runs with `config` (e.g. `mem0`),
    so runs of one memory configuration are pooled whatever their file names say."""
    old = _CONFIG[0]
    _CONFIG[0] = config
    try:
        yield
    finally:
        _CONFIG[0] = old
