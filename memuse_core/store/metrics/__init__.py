"""SQL of the aggregates, memory histories, cost and memory graph (MemUse 3.5-3.6, A.4, A.5.4,
A.6.3-A.6.6). DuckDB SQL only; every function takes a connection and a scope (`runs`) and returns a
DataFrame. `blocks` holds the shared building blocks (and `facts`, which materialises them once);
`aggregates` the per-group statistics; `records` histories, outcomes and cost; `lineage` the graph
queries.
"""

from .aggregates import (
    delivery_forms,
    episode_coverage,
    overview,
    recurring_diagnostic,
    recurring_items,
    span_profiles,
    use_effects,
)
from .blocks import AGENT_ROLES, MEMORY_ROLES, Facts, Level, facts
from .lineage import lineage_events, lineage_items, lineage_uses
from .records import (
    effect_origins,
    episode_costs,
    group_costs,
    item_effects,
    judge_costs,
    list_runs,
    run_outcomes,
    run_pair_changes,
    task_outcomes,
)

__all__ = [
    "AGENT_ROLES",
    "MEMORY_ROLES",
    "Facts",
    "Level",
    "delivery_forms",
    "effect_origins",
    "episode_costs",
    "episode_coverage",
    "facts",
    "group_costs",
    "item_effects",
    "judge_costs",
    "lineage_events",
    "lineage_items",
    "lineage_uses",
    "list_runs",
    "overview",
    "recurring_diagnostic",
    "recurring_items",
    "run_outcomes",
    "run_pair_changes",
    "span_profiles",
    "task_outcomes",
    "use_effects",
]
