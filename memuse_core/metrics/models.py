"""Result models of the aggregates (MemUse 3.5-3.6, A.4, A.5.4, A.6).

Every statistic whose denominator is empty is `None` (JSON null, printed as "—"), never 0
(A.4.2: "A statistic with an empty denominator is undefined"). Shares are fractions in 0-1.
"""

from __future__ import annotations

from pydantic import BaseModel, Field


class Profile(BaseModel):
    """Mean entry shares over profiled spans, each span weighted equally (3.5 Eq. 3)."""

    relevance: float | None = None
    """Relevant entries / all entries of the span."""
    corroboration: float | None = None
    """Relevant entries with corroborated accuracy."""
    information_gain: float | None = None
    """Relevant entries whose novelty is novel or confirming."""
    acted_on: float | None = None
    """Entries with acted-on influence."""
    benefit: float | None = None
    """Acted-on entries with an improved effect."""
    harm: float | None = None
    """Acted-on entries with a harmed effect."""


class Uncertainty(BaseModel):
    """Mean uncertainty shares over the same profiled spans (3.5, A.4.2)."""

    uncontradicted: float | None = None
    """Relevant entries whose accuracy is uncontradicted (unverified)."""
    novelty_undetermined: float | None = None
    """Relevant entries with undetermined novelty."""
    influence_undetermined: float | None = None
    """Entries with undetermined influence."""
    effect_undetermined: float | None = None
    """Acted-on entries with an undetermined effect."""


class ProfileCounts(BaseModel):
    """Entry counts summed over profiled spans (reported with the means, A.4.2)."""

    entries: int = 0
    """All entries of profiled spans."""
    relevance: int = 0
    corroboration: int = 0
    information_gain: int = 0
    acted_on: int = 0
    benefit: int = 0
    harm: int = 0
    uncontradicted: int = 0
    novelty_undetermined: int = 0
    influence_undetermined: int = 0
    effect_undetermined: int = 0


class Triage(BaseModel):
    """Span counts per outcome class (A.4.1). Automatic neutral spans are inside `neutral`."""

    positive: int = 0
    negative: int = 0
    neutral: int = 0
    unresolved: int = 0
    error: int = 0
    """Recording-check, preflight or judge failures; outside N_triage."""
    unjudged: int = 0
    """Eligible spans without an accepted or failed judgment yet; outside N_triage."""
    empty: int = 0
    """Spans without entries; outside N_triage."""
    unassessable: int = 0
    """Spans without an attributed consuming step; outside N_triage."""


class TriageRates(BaseModel):
    """Triage counts divided by N_triage = positive + negative + neutral + unresolved (Eq. 4)."""

    positive: float | None = None
    negative: float | None = None
    neutral: float | None = None
    unresolved: float | None = None


class Yields(BaseModel):
    """Beneficial and harmful entries per 100 profiled spans (A.4.2)."""

    benefit: float | None = None
    harm: float | None = None


class Coverage(BaseModel):
    """Episode coverage over all E selected episodes, including those without deliveries (A.4.2)."""

    episodes: int = 0
    """E: selected recorded episodes."""
    with_deliveries: int = 0
    """Episodes with at least one span."""
    profiled: float | None = None
    """Share of episodes with a profiled span."""
    relevant: float | None = None
    """Share of episodes with a relevant entry in a profiled span."""
    beneficial: float | None = None
    harmful: float | None = None
    n_profiled: int = 0
    n_relevant: int = 0
    n_beneficial: int = 0
    n_harmful: int = 0


class Recurring(BaseModel):
    """Recurring-item diagnostic: items delivered in >= max(2, 0.1 E) episodes of a run (A.4.2)."""

    recurring_items: int = 0
    """Recurring (run, namespace, item) triples in scope."""
    relevant_entries: int = 0
    relevant_from_recurring: int = 0
    share_from_recurring: float | None = None
    """Share of relevant judged entries that come from recurring items."""
    relevance_coverage_without: float | None = None
    """Share of episodes with a relevant entry from a non-recurring item."""


class UseEffects(BaseModel):
    """Use and effects of judged entries (A.4.1, A.6.3, Table 9)."""

    judged_entries: int = 0
    relevant: int = 0
    acted_on: int = 0
    improved: int = 0
    no_effect: int = 0
    harmed: int = 0
    effect_undetermined: int = 0
    improved_share: float | None = None
    """Shares conditional on acted-on entries; undetermined effects remain a separate category."""
    no_effect_share: float | None = None
    harmed_share: float | None = None
    effect_undetermined_share: float | None = None
    anchored: int = 0
    """Acted-on entries with at least one anchor (denominator of the delay shares)."""
    delayed: int = 0
    """First anchored action after the span's first consuming step."""
    delayed_5: int = 0
    """First anchored action at least five steps after the first consuming step."""
    delayed_share: float | None = None
    delayed_5_share: float | None = None
    selected: int = 0
    referenced: int = 0
    influence_undetermined: int = 0
    ignored: int = 0
    """Entries with influence none (usage label ignored)."""
    ignored_irrelevant: int = 0
    unused_relevant: int = 0
    """Relevant entries with influence none."""
    unused_relevant_share: float | None = None
    """Unused relevant entries / relevant entries."""
    unused_novel: int = 0
    unused_confirming: int = 0
    unused_redundant: int = 0
    unused_novelty_undetermined: int = 0
    unused_novel_share: float | None = None
    """Novel share among unused relevant entries."""
    episodes_acted_on: int = 0
    episodes_beneficial: int = 0
    episodes_beneficial_resolved: int = 0
    episodes_beneficial_failed: int = 0
    episodes_harmful: int = 0
    episodes_harmful_resolved: int = 0
    episodes_harmful_failed: int = 0


class FormRow(BaseModel):
    """One delivery form and route of a group (A.6.5, Table 11)."""

    form: str
    route: str
    tokens: float = 0.0
    """Estimated delivered tokens allocated to this form (restatements included)."""
    token_share: float | None = None
    """Share of the group's estimated delivered tokens."""
    beneficial: int = 0
    beneficial_share: float | None = None
    """Share of the group's beneficial entries."""
    judged: int = 0
    relevant: int = 0
    acted_on: int = 0
    selected: int = 0
    """Entries whose only use was retrieving fuller content of the same item (A.6.5 selections)."""
    harmful: int = 0
    relevant_rate: float | None = None
    """Entry rates over judged entries of this form."""
    acted_on_rate: float | None = None
    harmful_rate: float | None = None


class OriginSummary(BaseModel):
    """Origins of beneficial or harmful entries (A.6.6, Table 12)."""

    entries: int = 0
    earlier_same_run: int = 0
    """Traced to an earlier episode of the same run."""
    same_repo: int = 0
    other_repo: int = 0
    """Traced entries whose origin episode is in another repository."""
    same_episode: int = 0
    other: int = 0
    """Written in another run or in a later episode."""
    unobserved: int = 0
    gap_median: float | None = None
    """Median gap in task positions from origin to use, over traced entries."""
    gap_min: int | None = None
    gap_max: int | None = None
    source_resolved: int = 0
    source_failed: int = 0
    source_no_result: int = 0
    source_failed_share: float | None = None
    """Failed source episodes / traced entries with a known source outcome."""


class Histories(BaseModel):
    """Memory histories of a group (A.4.3, A.6.6)."""

    benefit: OriginSummary = Field(default_factory=OriginSummary)
    harm: OriginSummary = Field(default_factory=OriginSummary)
    items_beneficial: int = 0
    """Distinct items with a beneficial entry."""
    items_helped_several_runs: int = 0
    items_harmful: int = 0
    items_harmed_several_runs: list[str] = Field(default_factory=list)
    """Items (namespace/item_id) with harmful entries in at least two runs."""


class Cost(BaseModel):
    """Recorded usage and cost of agent and memory-system calls (A.4.4). Per-episode values divide
    by every selected episode; cached and reasoning tokens are subsets of input and output."""

    episodes: int = 0
    agent_calls: int = 0
    agent_input: int = 0
    agent_cached: int = 0
    agent_output: int = 0
    agent_reasoning: int = 0
    agent_cost: float = 0.0
    agent_cost_unknown: int = 0
    """Agent calls without a recorded cost (contribute zero to a sum that other calls make known;
    when no call has one the per-episode cost is unknown, `known_share`)."""
    agent_usage_unknown: int = 0
    """Agent calls without recorded token counts (same rule for the per-episode tokens)."""
    memory_calls: int = 0
    memory_input: int = 0
    memory_cached: int = 0
    memory_output: int = 0
    memory_reasoning: int = 0
    memory_cost: float = 0.0
    memory_cost_unknown: int = 0
    memory_usage_unknown: int = 0
    agent_cost_per_episode: float | None = None
    memory_cost_per_episode: float | None = None
    agent_tokens_per_episode: float | None = None
    """Input + output tokens of agent calls per episode."""
    memory_tokens_per_episode: float | None = None
    judged_spans: int = 0
    judge_attempts: int = 0
    judge_calls: int = 0
    judge_input: int = 0
    judge_output: int = 0
    judge_cost: float | None = None
    """Judge cost over all attempts; None when no attempt has a known cost."""
    judge_cost_unknown: int = 0
    """Judge attempts without a known cost (no prices and no provider cost, or no usage)."""
    judge_cost_per_span: float | None = None
    """Judge cost over all attempts / spans with at least one attempt."""
    judges: str | None = None
    """Judge kinds seen (the offline rules judge is labelled `rules`)."""


class Outcome(BaseModel):
    """Task outcomes of a run or configuration (A.5.4)."""

    runs: int = 0
    episodes: int = 0
    resolved: int = 0
    no_result: int = 0
    """Episodes without a harness result (left out of the resolve rate: unknown, not unresolved)."""
    repeated_tasks: int = 0
    """Tasks a run recorded in more than one episode (each counted once in rates and comparisons),
    summed over the runs."""
    resolve_rate: float | None = None
    """Resolved / attempted tasks with an outcome (per run; None when none has one); mean over the
    runs with outcomes for a configuration."""
    resolve_rate_sd: float | None = None
    """Sample standard deviation of the run resolve rates (undefined with one run)."""
    baseline: str | None = None
    diff: float | None = None
    """Resolve-rate difference from the baseline configuration (fraction)."""
    diff_ci_low: float | None = None
    diff_ci_high: float | None = None
    """Paired bootstrap 95% interval over tasks (2.5th and 97.5th percentiles)."""
    paired_tasks: int = 0
    gains: float | None = None
    """Tasks resolved here but not in the baseline run, averaged over run pairs."""
    losses: float | None = None
    run_pairs: int = 0


class GroupStats(BaseModel):
    """All aggregates of one run or one configuration."""

    episodes: int = 0
    spans: int = 0
    profile: Profile = Field(default_factory=Profile)
    uncertainty: Uncertainty = Field(default_factory=Uncertainty)
    profiled_spans: int = 0
    counts: ProfileCounts = Field(default_factory=ProfileCounts)
    triage: Triage = Field(default_factory=Triage)
    triage_rates: TriageRates = Field(default_factory=TriageRates)
    n_triage: int = 0
    auto_neutral: int = 0
    """Automatic neutral spans (inside triage.neutral, outside the profiles)."""
    token_efficiency: float | None = None
    """Beneficial entries per million estimated delivered tokens over all spans in scope."""
    est_tokens: int = 0
    """Estimated delivered tokens, sum of floor(C_S / 4) over every span in scope."""
    est_tokens_by_class: dict[str, int] = Field(default_factory=dict)
    """Delivered-token volume retained under each outcome class (A.4.4)."""
    yields: Yields = Field(default_factory=Yields)
    coverage: Coverage = Field(default_factory=Coverage)
    recurring: Recurring = Field(default_factory=Recurring)
    use: UseEffects = Field(default_factory=UseEffects)
    forms: list[FormRow] = Field(default_factory=list)
    histories: Histories = Field(default_factory=Histories)
    outcome: Outcome = Field(default_factory=Outcome)
    cost: Cost = Field(default_factory=Cost)


class ItemEffect(BaseModel):
    """Acted-on uses of one memory item within a configuration (A.6.6)."""

    namespace: str
    item_id: str
    acted_on: int = 0
    beneficial: int = 0
    harmful: int = 0
    runs_beneficial: int = 0
    """Distinct runs in which the item had a beneficial entry."""
    runs_harmful: int = 0
    harmed_tasks: list[str] = Field(default_factory=list)


class ConfigStats(GroupStats):
    """A configuration pooled over its runs, with each run's own statistics."""

    runs: dict[str, GroupStats] = Field(default_factory=dict)
    harmful_items: list[ItemEffect] = Field(default_factory=list)
    """Items with at least one harmful entry, most harmful first."""


class Report(BaseModel):
    """The whole report: `{"configs": {<config>: {...}}}` plus the settings that produced it."""

    configs: dict[str, ConfigStats] = Field(default_factory=dict)
    baseline: str | None = None
    """Baseline configuration of the outcome comparison."""
    bootstrap_replicates: int = 5000
    seed: int = 0
    runs: list[str] | None = None
    """Selected runs (None: every run)."""
    judge: str = "rules"
    """The one judge whose verdicts every table of the report reads (`rules` or `llm`); every
    title names it (`memuse report --judge`; default: the LLM judge where it has accepted
    verdicts, else the rules judge)."""
