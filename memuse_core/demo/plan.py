"""What the demo generator plans for an episode: the agent's system prompt per memory system, the
planted truth of each delivered entry (`Decision`), planned uses and what an episode produced."""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any

from .memory import Item

SYSTEM = (
    "You are a helpful assistant that can interact with a computer shell to solve programming tasks. "
    "Your response must contain exactly one tool call. Work in /testbed; the repository is checked "
    "out there. When you are done, run `echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT && git add -A && "
    "git diff --cached`."
)
SYSTEM_EXTRA = {
    "cards": (
        '\n\nExperience cards from earlier issues are available. Search them with `exp_search "<query>"` '
        "(ten previews) and read one with `exp_read <card_id>`. Search after reproducing the issue and "
        "before editing code."
    ),
    "mem0": (
        "\n\nYou have a memory tool `mem0_memory` with actions search, add, update and delete. Memories "
        "relevant to the task may be listed below."
    ),
    "proxy": (
        "\n\nReusable skills live in skills/<name>.md and scene documents in scenes/<name>.md; open them "
        "with `cat` when they look useful."
    ),
    "baseline": "",
}


@dataclass
class Decision:
    """Planted truth for one delivered entry (one row of `planted_truth`)."""

    key: str
    pos: int
    item: Item
    form: str
    relevance: bool
    novelty: str
    influence: str
    effect: str | None = None
    anchor_step: int | None = None
    note: str = ""
    copy: bool = False
    origin: str | None = None
    """Episode that wrote the delivered version (captured at delivery time)."""

    def row(self, episode_id: str, delivery_id: str, broken: bool) -> dict[str, Any]:
        return {
            "episode_id": episode_id,
            "delivery_id": delivery_id,
            "pos": self.pos,
            "namespace": self.item.namespace,
            "item_id": self.item.item_id,
            "relevance": self.relevance,
            "novelty": self.novelty,
            "influence": self.influence,
            "effect": self.effect,
            "anchor_step": self.anchor_step,
            "note": self.note,
            "form": self.form,
            "copy": self.copy,
            "broken": broken,
            "origin_episode": self.origin,
            "hint": self.item.hint,
        }


@dataclass
class Use:
    """A planned acted-on use of an entry."""

    decision: Decision
    kind: str
    """`fix` (helper), `decoy`, `check` (skill command), `pattern` (scene grep), `history` (persona)."""


@dataclass
class Episode:
    """What one generated episode produced."""

    truth: list[dict[str, Any]]
    resolved: bool
    found_helper: bool
    cost: float
    cross: bool = False
    """A cross-repository skill was acted on (showcase done)."""


def pick_effect(rng: random.Random, improved: float, undetermined: float, harmed: float) -> str:
    """An observed effect drawn with the given probabilities (the rest: no_effect)."""
    u = rng.random()
    if u < improved:
        return "improved"
    if u < improved + undetermined:
        return "undetermined"
    if u < improved + undetermined + harmed:
        return "harmed"
    return "no_effect"
