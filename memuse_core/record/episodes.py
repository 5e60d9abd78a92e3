"""The run and its episodes as the recorder sees them (MemUse 3.2, A.1.1).

`EpisodeRecorder` owns the event file, writes the run event and the episode start and end events,
and decides which episode a call or an annotation belongs to: the one it names, else the most
recently started open episode; a call with no open episode (or an unknown one) starts an episode
automatically so it is still recorded and ingestible. `Recorder` (recorder.py) builds on it.
`EpisodeState` is what the recorder keeps per episode between calls.
"""

from __future__ import annotations

import json
import os
import threading
import uuid
from dataclasses import dataclass, field
from typing import Any

from ..events import EpisodeEnd, EpisodeStart, RunEvent
from .deliveries import DeliveryBook
from .sink import EventSink


class AnnotationError(ValueError):
    """A bridge annotation the recorder cannot accept (unknown episode, bad fields)."""


@dataclass
class EpisodeState:
    """What the recorder keeps about one episode between its calls."""

    episode_id: str
    n_calls: int = 0
    prev_raw: list[Any] | None = None
    deliveries: DeliveryBook = field(init=False)
    tool_call_owner: dict[str, str] = field(default_factory=dict)
    last_ok_agent_call: str | None = None
    current_op: str | None = None
    """Memory operation in progress: memory/embedding calls without their own `op_ref` get it."""
    last_written: dict[str, tuple[str, list[Any]]] = field(default_factory=dict)
    """Per role: the last call written and its raw messages (base of delta-encoded requests)."""

    def __post_init__(self) -> None:
        self.deliveries = DeliveryBook(self.episode_id)


def model_event(model: Any) -> dict[str, Any]:
    """An event model as the JSON object written to the log (unset fields left out)."""
    return json.loads(model.model_dump_json(exclude_none=True))


class EpisodeRecorder:
    """The event file, the run and its episodes (see module docstring)."""

    def __init__(
        self,
        out: str | os.PathLike[str] | EventSink,
        *,
        run_id: str | None = None,
        config: str = "recorded",
    ):
        self.sink = out if isinstance(out, EventSink) else EventSink(out)
        self.run_id = run_id or f"run-{uuid.uuid4().hex[:8]}"
        self.config = config
        self._run_written = False
        self._lock = threading.RLock()
        self._episodes: dict[str, EpisodeState] = {}
        self._open: list[str] = []
        self._n_auto = 0

    # -- lifecycle ---------------------------------------------------------------------------
    def close(self) -> None:
        self.sink.close()

    def _ensure_run(self) -> list[dict[str, Any]]:
        if self._run_written:
            return []
        self._run_written = True
        return [model_event(RunEvent(run_id=self.run_id, config=self.config, label="recorded run"))]

    def start_run(
        self,
        *,
        run_id: str | None = None,
        config: str | None = None,
        label: str | None = None,
        agent: str | None = None,
        model: str | None = None,
        meta: dict[str, Any] | None = None,
    ) -> str:
        """Write the run event (must come before the first episode)."""
        with self._lock:
            if self._run_written:
                raise AnnotationError("the run was already started; start_run must come first")
            self.run_id = run_id or self.run_id
            self.config = config or self.config
            self._run_written = True
            ev = RunEvent(
                run_id=self.run_id, config=self.config, label=label, agent=agent, model=model, meta=meta or {}
            )
            self.sink.write([model_event(ev)])
            return self.run_id

    def start_episode(
        self,
        *,
        task_id: str,
        episode_id: str | None = None,
        task: str | None = None,
        repo: str | None = None,
        position: int = 0,
        reference: str | None = None,
    ) -> str:
        """Open an episode; later calls without an explicit episode are bound to it."""
        with self._lock:
            eid = episode_id or f"{self.run_id}-e{len(self._episodes) + 1}"
            if eid in self._episodes:
                raise AnnotationError(f"episode {eid!r} was already started")
            ev = EpisodeStart(
                episode_id=eid,
                run_id=self.run_id,
                task_id=task_id,
                position=position,
                repo=repo,
                task=task,
                reference=reference,
            )
            evs = self._ensure_run() + [model_event(ev)]
            self._episodes[eid] = EpisodeState(eid)
            self._open.append(eid)
            self.sink.write(evs)
            return eid

    def end_episode(
        self,
        episode_id: str | None = None,
        *,
        resolved: bool | None = None,
        exit_status: str | None = None,
        submission: str | None = None,
    ) -> None:
        """Close an episode: write still-pending deliveries (unbound) and the end event."""
        with self._lock:
            ep = self._episode(episode_id)
            end = EpisodeEnd(
                episode_id=ep.episode_id, resolved=resolved, exit_status=exit_status, submission=submission
            )
            evs = ep.deliveries.close() + [model_event(end)]
            if ep.episode_id in self._open:
                self._open.remove(ep.episode_id)
            self.sink.write(evs)

    def _episode(self, episode_id: str | None) -> EpisodeState:
        if episode_id is None:
            if not self._open:
                raise AnnotationError("no open episode: call start_episode first")
            return self._episodes[self._open[-1]]
        ep = self._episodes.get(episode_id)
        if ep is None:
            raise AnnotationError(f"unknown episode {episode_id!r}")
        return ep

    def _episode_for_call(self, hint: str | None) -> tuple[EpisodeState, list[dict[str, Any]]]:
        if hint is not None and hint in self._episodes:
            return self._episodes[hint], []
        if hint is None and self._open:
            return self._episodes[self._open[-1]], []
        # Unknown or no episode: start one so the call is still recorded and ingestible.
        self._n_auto += 1
        eid = hint or f"{self.run_id}-auto{self._n_auto}"
        evs = self._ensure_run()
        evs.append(model_event(EpisodeStart(episode_id=eid, run_id=self.run_id, task_id=eid)))
        ep = self._episodes[eid] = EpisodeState(eid)
        self._open.append(eid)
        return ep, evs
