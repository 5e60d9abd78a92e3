"""The memory half of `EpisodeBuilder` (`builder.episode`): host blocks restated in the system
message on every call, memory searches, and the `memory_delivery` events (with placement proofs
that resolve) of the memory each request carries; `entry` builds a delivered entry."""

from __future__ import annotations

from dataclasses import dataclass

from ..events import (
    Entry,
    Event,
    MemoryDelivery,
    MemorySearch,
    Message,
    Placement,
    Proof,
    Route,
    SearchResult,
    text_digest,
)


@dataclass
class _Block:
    """A host-scheduled block inserted into the system message on every call while active."""

    name: str
    text: str
    entries: list[Entry]
    form: str
    slot: str
    search_id: str | None = None


@dataclass
class _Pending:
    """Memory that arrived in a tool result and is consumed by the next call."""

    message_index: int
    text: str
    entries: list[Entry]
    form: str
    search_id: str | None
    slot: str = "tool_result"


class BuilderMemory:
    """Memory methods of `EpisodeBuilder` (a dataclass that holds the state named here)."""

    episode_id: str
    run_id: str
    system: str
    events: list[Event]
    history: list[Message]
    blocks: dict[str, _Block]
    pending: list[_Pending]
    _n_deliveries: int
    _n_searches: int

    # -- memory --------------------------------------------------------------------------------
    def host_block(
        self,
        name: str,
        text: str,
        entries: list[Entry],
        *,
        form: str = "task_recall",
        slot: str = "system_suffix",
        search_id: str | None = None,
    ) -> None:
        """Insert (or replace) a block at the end of the system message, restated on every call."""
        self.blocks[name] = _Block(name, text, entries, form, slot, search_id)
        self._rebuild_system()

    def drop_block(self, name: str) -> None:
        """Remove a host block from the system message."""
        self.blocks.pop(name, None)
        self._rebuild_system()

    def _rebuild_system(self) -> None:
        text = self.system
        for b in self.blocks.values():
            text += "\n\n" + b.text
        self.history[0] = Message(role="system", content=text)

    def search(
        self,
        query: str,
        results: list[tuple[str, str]],
        *,
        route: Route = "agent",
        namespace: str = "default",
    ) -> str:
        """Record a memory search; returns its id."""
        self._n_searches += 1
        sid = f"{self.episode_id}-s{self._n_searches}"
        self.events.append(
            MemorySearch(
                episode_id=self.episode_id,
                search_id=sid,
                route=route,  # type: ignore[arg-type]
                query=query,
                run_id=self.run_id,
                results=[SearchResult(namespace=namespace, item_id=i, value=v) for i, v in results],
            )
        )
        return sid

    def _deliveries_for(self, call_id: str, msgs: list[Message]) -> None:
        sys_text = msgs[0].text()
        for b in self.blocks.values():
            start = sys_text.find(b.text)
            self._deliver(call_id, "host", b.form, b.entries, b.slot, b.text, 0, sys_text, start, b.search_id)
        for p in self.pending:
            host = msgs[p.message_index].text()
            self._deliver(
                call_id,
                "agent",
                p.form,
                p.entries,
                p.slot,
                p.text,
                p.message_index,
                host,
                host.find(p.text),
                p.search_id,
            )
        self.pending = []

    def _deliver(
        self,
        call_id: str,
        route: Route,
        form: str,
        entries: list[Entry],
        slot: str,
        text: str,
        index: int,
        host_text: str,
        start: int,
        search_id: str | None,
    ) -> None:
        self._n_deliveries += 1
        self.events.append(
            MemoryDelivery(
                episode_id=self.episode_id,
                delivery_id=f"{self.episode_id}-d{self._n_deliveries}",
                route=route,  # type: ignore[arg-type]
                form=form,
                consuming_call_id=call_id,
                search_id=search_id,
                entries=[e.model_copy() for e in entries],
                placements=[
                    Placement(
                        slot=slot,
                        kind="block" if route == "host" else "tool_output",
                        text=text,
                        proof=Proof(
                            message_index=index,
                            message_digest=text_digest(host_text),
                            start=start if start >= 0 else None,
                        ),
                    )
                ]
                if text
                else [],
            )
        )


def entry(
    item_id: str,
    value: str,
    *,
    namespace: str = "default",
    version: str | None = "1",
    display_key: str | None = None,
    **labels: object,
) -> Entry:
    """Shorthand for a delivered entry."""
    return Entry(
        namespace=namespace,
        item_id=item_id,
        id_scheme="test",
        version=version,
        value=value,
        digest=text_digest(value),
        display_key=display_key,
        labels=dict(labels),
    )
