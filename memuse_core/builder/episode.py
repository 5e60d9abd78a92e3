"""A small, exact builder of recorded episodes as events: for hand-made test episodes and for the
demo generator.

It keeps the agent's visible history like a tool-calling harness does, emits one `model_call` per
step (delta-encoded against the previous call), the `tool_result` of each step, and the
`memory_delivery` events of memory placed in each request, with placement proofs that resolve
(message index + digest + offset), so recording checks pass unless a test breaks them on purpose.

    b = EpisodeBuilder("e1", task="Fix the date parser")
    b.host_block("recall", "User Memories:\\n- parse dates with fromisoformat", entries=[...])
    b.step("look", "grep -rn parse_date .", "src/dates.py:3:def parse_date(s):")
    b.step("edit", "sed -i ... src/dates.py", "", tool_memory=None)
    events = b.finish(resolved=True)
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from ..events import (
    CallStatus,
    Entry,
    EpisodeEnd,
    EpisodeStart,
    Event,
    HistoryRewrite,
    Message,
    ModelCall,
    Request,
    Response,
    Retraction,
    ToolCall,
    ToolResultEvent,
    Usage,
)
from .memory import BuilderMemory, _Block, _Pending


@dataclass
class EpisodeBuilder(BuilderMemory):
    """Builds the events of one episode step by step (see module docstring)."""

    episode_id: str
    run_id: str = "run-1"
    task: str = "Fix the failing test."
    task_id: str | None = None
    system: str = "You are a software engineer working in a shell. Reply with one command per turn."
    position: int = 0
    repo: str | None = None
    reference: str | None = None
    model: str | None = None
    events: list[Event] = field(default_factory=list)
    history: list[Message] = field(default_factory=list)
    blocks: dict[str, _Block] = field(default_factory=dict)
    pending: list[_Pending] = field(default_factory=list)
    _n_calls: int = 0
    _n_deliveries: int = 0
    _n_searches: int = 0
    _prev_call: str | None = None
    _prev_len: int = 0
    _system_dirty: bool = True

    def __post_init__(self) -> None:
        self.events.append(
            EpisodeStart(
                episode_id=self.episode_id,
                run_id=self.run_id,
                task_id=self.task_id or self.episode_id,
                position=self.position,
                repo=self.repo,
                task=self.task,
                reference=self.reference,
            )
        )
        self.history = [Message(role="system", content=self.system), Message(role="user", content=self.task)]

    # -- steps ---------------------------------------------------------------------------------
    def step(
        self,
        thought: str,
        command: str,
        output: str,
        *,
        exit_code: int | None = 0,
        tool_memory: tuple[list[Entry], str] | None = None,
        tool_form: str = "search_result",
        search_id: str | None = None,
        tool_name: str = "bash",
        usage: Usage | None = None,
        cost_usd: float | None = None,
    ) -> int:
        """One agent step: a call, its tool call, and the tool's output (returns the step number).

        `tool_memory=(entries, form)` marks the tool output as an agent-directed delivery whose
        placement is the whole output (`tool_form` names the delivered form); it is consumed by
        the next call.
        """
        call_id = self._emit_call(
            Response(
                content=thought,
                tool_calls=[
                    ToolCall(
                        id=f"tc{self._n_calls + 1}",
                        name=tool_name,
                        arguments=json.dumps({"command": command}),
                    )
                ],
            ),
            usage=usage,
            cost_usd=cost_usd,
        )
        tcid = f"tc{self._n_calls}"
        self.events.append(
            ToolResultEvent(
                episode_id=self.episode_id,
                call_id=call_id,
                tool_call_id=tcid,
                name=tool_name,
                arguments=command,
                output=output,
                exit_code=exit_code,
            )
        )
        self.history.append(
            Message(
                role="assistant",
                content=thought,
                tool_calls=[ToolCall(id=tcid, name=tool_name, arguments=json.dumps({"command": command}))],
            )
        )
        self.history.append(Message(role="tool", tool_call_id=tcid, content=output))
        if tool_memory is not None:
            entries, form = tool_memory
            self.pending.append(
                _Pending(len(self.history) - 1, output, entries, form or tool_form, search_id)
            )
        return self._n_calls

    def final(self, text: str = "Done.") -> int:
        """A last step with no tool call (e.g. the submission message)."""
        self._emit_call(Response(content=text))
        self.history.append(Message(role="assistant", content=text))
        return self._n_calls

    def failed_call(self) -> None:
        """A call that errored (no attributed step)."""
        self._emit_call(None, status="error")

    def retract(self, positions: list[int]) -> None:
        """Remove messages (by index in the current history) before the next call."""
        self.events.append(
            Retraction(
                episode_id=self.episode_id,
                before_call_id=f"{self.episode_id}-c{self._n_calls + 1}",
                removed=sorted(positions),
            )
        )
        keep = set(range(len(self.history))) - set(positions)
        # Pending tool memory whose message is removed is no longer delivered.
        remap = {old: new for new, old in enumerate(sorted(keep))}
        self.pending = [
            _Pending(remap[p.message_index], p.text, p.entries, p.form, p.search_id)
            for p in self.pending
            if p.message_index in keep
        ]
        self.history = [m for i, m in enumerate(self.history) if i in keep]
        self._prev_len = 0  # force a full request next time

    def rewrite(self, kept_prefix: int, replacement: list[Message]) -> None:
        """Replace the history after `kept_prefix` messages (e.g. a summary) before the next call."""
        self.events.append(
            HistoryRewrite(
                episode_id=self.episode_id,
                before_call_id=f"{self.episode_id}-c{self._n_calls + 1}",
                kept_prefix=kept_prefix,
                replacement=replacement,
            )
        )
        self.history = self.history[:kept_prefix] + list(replacement)
        self.pending = [p for p in self.pending if p.message_index < kept_prefix]
        self._prev_len = 0

    def _emit_call(
        self,
        response: Response | None,
        *,
        status: CallStatus = "ok",
        usage: Usage | None = None,
        cost_usd: float | None = None,
    ) -> str:
        self._n_calls += 1
        call_id = f"{self.episode_id}-c{self._n_calls}"
        msgs = list(self.history)
        if (
            self._prev_call is not None
            and self._prev_len
            and self._prev_msgs[: self._prev_len] == msgs[: self._prev_len]
        ):
            k = self._common(msgs)
            req = Request(base_call_id=self._prev_call, base_len=k, messages=msgs[k:])
        else:
            req = Request(messages=msgs)
        self.events.append(
            ModelCall(
                episode_id=self.episode_id,
                call_id=call_id,
                request=req,
                response=response,
                status=status,  # type: ignore[arg-type]
                usage=usage,
                cost_usd=cost_usd,
                model=self.model,
            )
        )
        self._deliveries_for(call_id, msgs)
        self._prev_call, self._prev_msgs, self._prev_len = call_id, msgs, len(msgs)
        return call_id

    _prev_msgs: list[Message] = field(default_factory=list)

    def _common(self, msgs: list[Message]) -> int:
        n = min(len(msgs), len(self._prev_msgs))
        k = 0
        while k < n and msgs[k] == self._prev_msgs[k]:
            k += 1
        return k

    def finish(
        self,
        resolved: bool | None = None,
        exit_status: str | None = "Submitted",
        submission: str | None = None,
    ) -> list[Event]:
        """End the episode and return all its events."""
        self.events.append(
            EpisodeEnd(
                episode_id=self.episode_id, resolved=resolved, exit_status=exit_status, submission=submission
            )
        )
        return self.events
