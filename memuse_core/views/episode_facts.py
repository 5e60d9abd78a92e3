"""View data for the Episodes list and the Timeline header : exit status and
outcome of every episode, whether memory was delivered at all or the context is just not built,
and which steps carry reasoning text (the text itself is `views.common.StepText.reasoning`, beside
the response). The page wording and layout are the app's; this module only tells the cases apart
(`store.episode_facts`)."""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd
from pydantic import BaseModel, ConfigDict

from ..store import Connection
from ..store import episode_facts as store_facts
from ..vocab import HarnessStatus, MemoryState


class _View(BaseModel):
    model_config = ConfigDict(arbitrary_types_allowed=True, frozen=True)


class EpisodeFacts(_View):
    """What the Timeline header shows next to the task: how the run ended and what memory did."""

    episode_id: str
    run_id: str
    config: str | None = None
    task_id: str
    exit_status: str | None = None
    """The harness's exit status (`Submitted`, `LimitsExceeded`, an exception name); None when the
    recording has none."""
    resolved: bool | None = None
    """The task outcome; None when no harness result is known (show "—", never "failed")."""
    harness_status: HarnessStatus | None = None
    """How the harness report classified the task, when a report set the outcome."""
    outcome_source: str | None = None
    """The report file that set the outcome."""
    deliveries: int = 0
    """Memory deliveries recorded in the episode."""
    memory_state: MemoryState
    """`none_delivered`: no memory reached the agent in this episode (there is nothing to build);
    `not_built`: deliveries are recorded but the evaluation context is not built (`memuse build`);
    `built`: spans and windows are available."""


def episode_facts(con: Connection, episode_id: str) -> EpisodeFacts | None:
    """Facts of one episode (None when it is not in the store)."""
    df = store_facts.episode_facts(con, episode_ids=[episode_id])
    if df.empty:
        return None
    r = {k: (None if _missing(v) else v) for k, v in df.iloc[0].to_dict().items()}
    return EpisodeFacts.model_validate({k: v for k, v in r.items() if k != "position"})


def _missing(v: object) -> bool:
    try:
        return bool(pd.isna(v))  # type: ignore[call-overload]
    except (TypeError, ValueError):
        return False


def episode_list_facts(con: Connection, runs: Sequence[str] | None = None) -> pd.DataFrame:
    """One row per episode for the Episodes list: episode_id, run_id, config, task_id, position,
    exit_status, resolved (None: no outcome), harness_status, outcome_source, deliveries,
    memory_state; join it on `episode_id`."""
    return store_facts.episode_facts(con, runs=runs)


def reasoning_steps(con: Connection, episode_id: str) -> dict[int, str]:
    """Step -> reasoning text for the steps of an episode that have any (the Timeline marks them)."""
    return store_facts.episode_reasoning(con, episode_id)
