"""A fast streaming writer of one episode's events as native JSON Lines.

It follows `memuse_core.builder.EpisodeBuilder` event for event (history kept like a tool-calling
harness, delta-encoded requests, host blocks in the system message restated on every call,
tool-result memory consumed by the next call, resolving placement proofs), but builds plain dicts
and writes each line as soon as it exists, so the 8,000-episode scale corpus streams to disk in
constant memory. Tests check that its output validates against `memuse_core.events`.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..events import text_digest
from .event_dicts import V, delivery_event, embedding_call_event, memory_call_event

_dumps = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode

PRICE_IN, PRICE_CACHED, PRICE_OUT = 1.25e-6, 0.125e-6, 10e-6
"""USD per token of the demo's agent model (input, cached input, output)."""


@dataclass
class _Block:
    text: str
    entries: list[dict[str, Any]]
    form: str
    search_id: str | None
    digest: str


@dataclass
class _Pending:
    index: int
    text: str
    entries: list[dict[str, Any]]
    form: str
    search_id: str | None
    proof: bool
    key: str


@dataclass
class EpisodeEmitter:
    """Writes the events of one episode through `write(line)` (see module docstring)."""

    write: Callable[[str], None]
    episode_id: str
    run_id: str
    task_id: str
    position: int
    repo: str
    task: str
    system: str
    t0: float
    model: str = "gpt-6-luna"
    history: list[dict[str, Any]] = field(default_factory=list)
    blocks: dict[str, _Block] = field(default_factory=dict)
    pending: list[_Pending] = field(default_factory=list)
    n_calls: int = 0
    n_steps: int = 0
    n_deliveries: int = 0
    n_searches: int = 0
    cost: float = 0.0
    delivered: dict[str, list[str]] = field(default_factory=dict)
    """Delivery ids per block name / pending key, in order (for planted truth)."""
    _prev_call: str | None = None
    _stable: int = 0
    _input_chars: int = 0
    _sys_digest: str = ""
    _clock: float = 0.0

    def __post_init__(self) -> None:
        self.emit(
            {
                "type": "episode_start",
                "v": V,
                "episode_id": self.episode_id,
                "run_id": self.run_id,
                "task_id": self.task_id,
                "position": self.position,
                "repo": self.repo,
                "task": self.task,
            }
        )
        self.history = [{"role": "system", "content": self.system}, {"role": "user", "content": self.task}]
        self._input_chars = len(self.system) + len(self.task)
        self._sys_digest = text_digest(self.system)
        self._clock = self.t0

    def emit(self, ev: dict[str, Any]) -> None:
        self.write(_dumps(ev) + "\n")

    # -- memory ------------------------------------------------------------------------------
    def host_block(
        self, name: str, text: str, entries: list[dict[str, Any]], form: str, search_id: str | None = None
    ) -> None:
        """Put a block at the end of the system message; it is restated on every later call."""
        self.blocks[name] = _Block(text, entries, form, search_id, text_digest(text))
        sys_text = self.system + "".join("\n\n" + b.text for b in self.blocks.values())
        self._input_chars += len(sys_text) - len(self.history[0]["content"])
        self.history[0] = {"role": "system", "content": sys_text}
        self._sys_digest = text_digest(sys_text)
        self._stable = 0

    def search(self, route: str, query: str, scope: str | None, results: list[dict[str, Any]]) -> str:
        """Record a memory search; returns its id."""
        self.n_searches += 1
        sid = f"{self.episode_id}:s{self.n_searches}"
        ev: dict[str, Any] = {
            "type": "memory_search",
            "v": V,
            "episode_id": self.episode_id,
            "search_id": sid,
            "route": route,
            "query": query,
            "results": results,
            "run_id": self.run_id,
        }
        if scope:
            ev["scope"] = scope
        self.emit(ev)
        return sid

    # -- steps -------------------------------------------------------------------------------
    def step(
        self,
        thought: str,
        command: str,
        output: str,
        *,
        exit_code: int = 0,
        tool: str = "bash",
        args: dict[str, Any] | None = None,
        memory: tuple[str, list[dict[str, Any]], str, str | None] | None = None,
        placed: str | None = None,
        proof: bool = True,
        reasoning: int = 120,
    ) -> int:
        """One agent step (call + tool call + tool result); returns the step number.

        `memory=(key, entries, form, search_id)` marks the tool output as an agent-directed delivery
        consumed by the next call; `placed` is the memory text inside the output (default: all of it).
        """
        tcid = f"call_{self.n_calls + 1:03d}"
        arguments = _dumps(args if args is not None else {"command": command})
        tc = [{"id": tcid, "name": tool, "arguments": arguments}]
        call_id = self._call({"content": thought, "tool_calls": tc}, len(thought) + len(arguments), reasoning)
        self.emit(
            {
                "type": "tool_result",
                "v": V,
                "episode_id": self.episode_id,
                "call_id": call_id,
                "tool_call_id": tcid,
                "name": tool,
                "arguments": command,
                "output": output,
                "exit_code": exit_code,
            }
        )
        self.history.append({"role": "assistant", "content": thought, "tool_calls": tc})
        self.history.append({"role": "tool", "tool_call_id": tcid, "content": output})
        self._input_chars += len(thought) + len(arguments) + len(output)
        if memory is not None:
            key, entries, form, sid = memory
            self.pending.append(
                _Pending(len(self.history) - 1, placed or output, entries, form, sid, proof, key)
            )
        return self.n_steps

    def final(self, text: str) -> int:
        """The closing step without a tool call."""
        self._call({"content": text}, len(text), 40)
        self.history.append({"role": "assistant", "content": text})
        return self.n_steps

    def retract(self, positions: list[int]) -> None:
        """Remove messages (indices into the current history) before the next call."""
        self.emit(
            {
                "type": "retraction",
                "v": V,
                "episode_id": self.episode_id,
                "before_call_id": f"{self.episode_id}:c{self.n_calls + 1}",
                "removed": sorted(positions),
            }
        )
        drop = set(positions)
        self._input_chars -= sum(_chars(m) for i, m in enumerate(self.history) if i in drop)
        self.history = [m for i, m in enumerate(self.history) if i not in drop]
        self._stable = min(self._stable, min(positions))

    def rewrite(self, kept_prefix: int, summary: str) -> None:
        """Replace the history after `kept_prefix` messages with one summary message."""
        repl = [{"role": "user", "content": summary}]
        self.emit(
            {
                "type": "history_rewrite",
                "v": V,
                "episode_id": self.episode_id,
                "before_call_id": f"{self.episode_id}:c{self.n_calls + 1}",
                "kept_prefix": kept_prefix,
                "replacement": repl,
            }
        )
        self.history = self.history[:kept_prefix] + repl
        self._input_chars = sum(_chars(m) for m in self.history)
        self._stable = min(self._stable, kept_prefix)

    def memory_call(self, op_ref: str, prompt: str, answer: str) -> None:
        """A memory-system model call (e.g. extraction after the episode), not an agent step."""
        self.n_calls += 1
        call_id = f"{self.episode_id}:c{self.n_calls}"
        inp, out = (len(prompt) + 200) // 4, len(answer) // 4 + 60
        cost = inp * PRICE_IN + out * PRICE_OUT
        self.cost += cost
        t = self._tick(2.5)
        self.emit(
            memory_call_event(self.episode_id, call_id, prompt, answer, inp, out, cost, t, op_ref, self.model)
        )

    def embedding_call(self, op_ref: str, text: str) -> None:
        """The memory system embedding a query or memory (cost accounting of memory operations)."""
        self.n_calls += 1
        inp = len(text) // 4 + 8
        cost = inp * 0.02e-6
        self.cost += cost
        t = self._tick(0.2)
        self.emit(
            embedding_call_event(
                self.episode_id, f"{self.episode_id}:c{self.n_calls}", text, inp, cost, t, op_ref
            )
        )

    def finish(self, resolved: bool | None, exit_status: str, submission: str | None) -> None:
        ev: dict[str, Any] = {
            "type": "episode_end",
            "v": V,
            "episode_id": self.episode_id,
            "resolved": resolved,
            "exit_status": exit_status,
        }
        if submission:
            ev["submission"] = submission
        self.emit(ev)

    # -- internals ---------------------------------------------------------------------------
    def _tick(self, dt: float) -> float:
        self._clock += dt
        return round(self._clock, 3)

    def _call(self, response: dict[str, Any], out_chars: int, reasoning: int) -> str:
        self.n_calls += 1
        self.n_steps += 1
        call_id = f"{self.episode_id}:c{self.n_calls}"
        k = self._stable if self._prev_call is not None else 0
        if k:
            req: dict[str, Any] = {
                "messages": self.history[k:],
                "base_call_id": self._prev_call,
                "base_len": k,
            }
        else:
            req = {"messages": self.history}
        inp = self._input_chars // 4 + 150
        cached = (sum(_chars(m) for m in self.history[:k]) // 4) if k else 0
        cached = min(cached // 1024 * 1024, inp)
        out = out_chars // 4 + reasoning
        cost = (inp - cached) * PRICE_IN + cached * PRICE_CACHED + out * PRICE_OUT
        self.cost += cost
        t = self._tick(1.0)
        self.emit(
            {
                "type": "model_call",
                "v": V,
                "episode_id": self.episode_id,
                "call_id": call_id,
                "role": "agent",
                "request": req,
                "response": response,
                "usage": {
                    "input_tokens": inp,
                    "output_tokens": out,
                    "cached_tokens": cached,
                    "reasoning_tokens": reasoning,
                },
                "cost_usd": round(cost, 7),
                "status": "ok",
                "started_at": t,
                "ended_at": self._tick(2.0 + out / 80),
                "model": self.model,
            }
        )
        self._deliveries(call_id)
        self._prev_call = call_id
        self._stable = len(self.history)  # the next request repeats this one's messages
        return call_id

    def _deliveries(self, call_id: str) -> None:
        sys_text = self.history[0]["content"]
        for name, b in self.blocks.items():
            start = sys_text.find(b.text)
            self._deliver(
                call_id,
                name,
                "host",
                b.form,
                b.entries,
                b.text,
                b.digest,
                0,
                self._sys_digest,
                start,
                b.search_id,
                True,
            )
        for p in self.pending:
            host = self.history[p.index]["content"]
            self._deliver(
                call_id,
                p.key,
                "agent",
                p.form,
                p.entries,
                p.text,
                text_digest(p.text),
                p.index,
                text_digest(host),
                host.find(p.text),
                p.search_id,
                p.proof,
            )
        self.pending = []

    def _deliver(
        self,
        call_id: str,
        key: str,
        route: str,
        form: str,
        entries: list[dict[str, Any]],
        text: str,
        digest: str,
        index: int,
        host_digest: str,
        start: int,
        search_id: str | None,
        proof: bool,
    ) -> None:
        self.n_deliveries += 1
        did = f"{self.episode_id}:d{self.n_deliveries}"
        self.delivered.setdefault(key, []).append(did)
        self.emit(
            delivery_event(
                self.episode_id,
                did,
                route,
                form,
                call_id,
                entries,
                text,
                digest,
                index,
                host_digest,
                start,
                search_id,
                proof,
            )
        )


def _chars(m: dict[str, Any]) -> int:
    c = m.get("content")
    n = len(c) if isinstance(c, str) else 0
    for tc in m.get("tool_calls") or ():
        n += len(tc["arguments"])
    return n
