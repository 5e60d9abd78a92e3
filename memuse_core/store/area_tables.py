"""DDL of the derived and judged tables, one section per area.

The context tables (`store.context.CONTEXT_TABLES`) and `span_outcomes` are derived: `memuse
build --rebuild` recomputes them; `memuse trim` recomputes `trim_results`. Judged and human
tables (judge batches, judgments, assessments, verdicts, annotations, case studies, planted
truth) are never dropped by a rebuild. Span ids are deterministic (`<episode_id>/<first delivery_id>`), so judgments keep
pointing at the same span after a rebuild.
"""

from __future__ import annotations

# ---- Evaluation context (MemUse 3.3, A.1) ------------------------------------------------------
CONTEXT_DDL = [
    """CREATE TABLE IF NOT EXISTS context_built (
        episode_id VARCHAR PRIMARY KEY, valid BOOLEAN, n_deliveries INTEGER, n_spans INTEGER,
        built_at TIMESTAMP)""",
    """CREATE TABLE IF NOT EXISTS recording_checks (
        episode_id VARCHAR, ok BOOLEAN, rule VARCHAR, detail VARCHAR)""",
    """CREATE TABLE IF NOT EXISTS delivery_context (
        delivery_id VARCHAR PRIMARY KEY, episode_id VARCHAR, seq INTEGER, consuming_step INTEGER,
        attributed BOOLEAN, verified BOOLEAN, span_id VARCHAR, restatement BOOLEAN,
        chars BIGINT, problem VARCHAR)""",
    """CREATE TABLE IF NOT EXISTS entry_exposure (
        delivery_id VARCHAR, pos INTEGER, episode_id VARCHAR, exposure VARCHAR,
        placement_pos INTEGER, stage VARCHAR, exposed_hash BIGINT, exposed_chars INTEGER)""",
    """CREATE TABLE IF NOT EXISTS spans (
        span_id VARCHAR PRIMARY KEY, episode_id VARCHAR, seq INTEGER, status VARCHAR,
        first_step INTEGER, last_step INTEGER, first_delivery_id VARCHAR, n_deliveries INTEGER,
        restatements INTEGER, n_entries INTEGER, chars BIGINT, est_tokens BIGINT,
        form VARCHAR, route VARCHAR, reason VARCHAR, removed_steps INTEGER[])""",
    """CREATE TABLE IF NOT EXISTS span_deliveries (
        span_id VARCHAR, delivery_id VARCHAR, pos INTEGER, episode_id VARCHAR)""",
    """CREATE TABLE IF NOT EXISTS span_entries (
        span_id VARCHAR, pos INTEGER, episode_id VARCHAR, namespace VARCHAR, item_id VARCHAR,
        version VARCHAR, digest VARCHAR, display_key VARCHAR, value_hash BIGINT,
        exposure VARCHAR, stage VARCHAR, exposed_hash BIGINT, exposed_chars INTEGER,
        window_start INTEGER, window_end INTEGER, resident BOOLEAN,
        PRIMARY KEY (span_id, pos))""",
    """CREATE TABLE IF NOT EXISTS prior_sources (
        span_id VARCHAR, pos INTEGER, episode_id VARCHAR, kind VARCHAR, message_index INTEGER,
        role VARCHAR, text_hash BIGINT, chars INTEGER, cut JSON)""",
    """CREATE TABLE IF NOT EXISTS span_earlier_copies (
        span_id VARCHAR, entry_pos INTEGER, episode_id VARCHAR, delivery_id VARCHAR,
        step INTEGER, visibility VARCHAR, contains_target BOOLEAN)""",
]

# ---- Judging and verdicts (MemUse 3.4-3.5, A.2-A.4.2) ------------------------------------------
VERDICTS_DDL = """CREATE TABLE IF NOT EXISTS verdicts (
        span_id VARCHAR, judgment_id VARCHAR, triage VARCHAR, profiled BOOLEAN,
        n_entries INTEGER, relevance DOUBLE, corroboration DOUBLE, information_gain DOUBLE,
        acted_on DOUBLE, benefit DOUBLE, harm DOUBLE, u_accuracy DOUBLE, u_novelty DOUBLE,
        u_influence DOUBLE, u_effect DOUBLE, effect_resets INTEGER, judge VARCHAR,
        usage_labels JSON, counts JSON, decided_at TIMESTAMP, PRIMARY KEY (span_id, judge))"""

JUDGE_DDL = [
    """CREATE TABLE IF NOT EXISTS judge_batches (
        batch_id VARCHAR PRIMARY KEY, judge VARCHAR, model VARCHAR, settings JSON,
        started_at TIMESTAMP, ended_at TIMESTAMP, status VARCHAR)""",
    # One row per judge attempt (accepted | error | interrupted); the API key is never stored.
    """CREATE TABLE IF NOT EXISTS judgments (
        judgment_id VARCHAR PRIMARY KEY, span_id VARCHAR, batch_id VARCHAR, judge VARCHAR,
        model VARCHAR, settings JSON, prompt_hash VARCHAR, status VARCHAR, reason VARCHAR,
        calls INTEGER, followups INTEGER, forced BOOLEAN, input_tokens BIGINT,
        cached_tokens BIGINT, output_tokens BIGINT, cost_usd DOUBLE, started_at TIMESTAMP,
        ended_at TIMESTAMP, summary VARCHAR, confidence DOUBLE, transcript JSON,
        attempts JSON, rollbacks INTEGER, retries INTEGER, tool_calls INTEGER, episode_id VARCHAR)""",
    # One row per entry of an accepted judgment; `effect` is null unless influence is acted_on
    # (verdict assembly, A.3.1), `raw_effect` keeps what the judge said.
    """CREATE TABLE IF NOT EXISTS assessments (
        judgment_id VARCHAR, span_id VARCHAR, pos INTEGER, item_id VARCHAR, relevance BOOLEAN,
        accuracy VARCHAR, novelty VARCHAR, influence VARCHAR, effect VARCHAR,
        anchors INTEGER[], evidence INTEGER[], notes VARCHAR, usage_label VARCHAR,
        window_read BOOLEAN, raw_effect VARCHAR)""",
    # Current verdict per span and judge: the latest accepted judgment of that judge kind (`rules`,
    # `llm`), or a rule's (`vocab.RULE_JUDGE`, automatic neutral spans: triage only). Readers choose
    # one judge (`store.judging.verdicts_of`); a span never mixes two judges in one table.
    VERDICTS_DDL,
]

# ---- Span outcome classes (MemUse A.4.1, A.4.2) -----------------------------------------------
# One row per span and judge kind (`vocab.JUDGE_KINDS`): the outcome class and whether the span is
# profiled as that judge's verdicts see it, decided by `rules.outcome` when the context is built
# and whenever judgments or verdicts are written. Readers choose one judge.
OUTCOME_DDL = [
    """CREATE TABLE IF NOT EXISTS span_outcomes (
        span_id VARCHAR, judge VARCHAR, episode_id VARCHAR, outcome VARCHAR, profiled BOOLEAN,
        PRIMARY KEY (span_id, judge))""",
]

# ---- Human annotations and case studies (app) --------------------------------------------------
ANNOTATION_DDL = [
    """CREATE TABLE IF NOT EXISTS annotations (
        annotation_id VARCHAR PRIMARY KEY, target_kind VARCHAR, target_id VARCHAR,
        episode_id VARCHAR, note VARCHAR, tags VARCHAR[], labels JSON, author VARCHAR,
        case_study_id VARCHAR, created_at TIMESTAMP)""",
    """CREATE TABLE IF NOT EXISTS case_studies (
        case_study_id VARCHAR PRIMARY KEY, name VARCHAR, description VARCHAR,
        created_at TIMESTAMP)""",
]

# ---- Demo corpus ground truth ------------------------------------------------------------------
# One row per entry of the first delivery of each span-like unit the demo generator planted:
# `form` is the delivery form, `copy` marks a copy of an entry still visible in the input (expected
# to get an empty credit window, A.1.5), `broken` marks episodes whose recording was broken on
# purpose (expected error spans), `origin_episode` the episode that wrote the delivered version,
# `hint` the item's memory-specific text (in the anchor action when acted on, in no action otherwise).
DEMO_DDL = [
    """CREATE TABLE IF NOT EXISTS planted_truth (
        episode_id VARCHAR, delivery_id VARCHAR, pos INTEGER, namespace VARCHAR,
        item_id VARCHAR, relevance BOOLEAN, novelty VARCHAR, influence VARCHAR,
        effect VARCHAR, anchor_step INTEGER, note VARCHAR, form VARCHAR, copy BOOLEAN,
        broken BOOLEAN, origin_episode VARCHAR, hint VARCHAR)""",
]

# ---- MemTrim what-if (memtrim paper 3, A.1) ----------------------------------------------------
TRIM_DDL = [
    """CREATE TABLE IF NOT EXISTS trim_results (
        delivery_id VARCHAR, pos INTEGER, episode_id VARCHAR, shared INTEGER,
        conflicting INTEGER, memory_only INTEGER, outcome VARCHAR, chars_before BIGINT,
        chars_after BIGINT, decision JSON, namespace VARCHAR, item_id VARCHAR,
        prior_from VARCHAR, jaccard DOUBLE, memtrim_class VARCHAR, tokens_saved BIGINT,
        same_as VARCHAR)""",
]

# ---- Task outcomes from harness reports (A.5.4) ------------------------------------------------
# One row per episode whose outcome a SWE-bench harness report set (`store.outcomes_import`): the
# harness status (`vocab.HarnessStatus`), the outcome it gives, the report file and its kind.
HARNESS_DDL = [
    """CREATE TABLE IF NOT EXISTS episode_outcomes (
        episode_id VARCHAR PRIMARY KEY, run_id VARCHAR, task_id VARCHAR, status VARCHAR,
        resolved BOOLEAN, source VARCHAR, source_kind VARCHAR, set_at TIMESTAMP)""",
]

DDL = CONTEXT_DDL + JUDGE_DDL + OUTCOME_DDL + ANNOTATION_DDL + DEMO_DDL + TRIM_DDL + HARNESS_DDL

# ---- MemTrim index (memtrim paper 3.2, A.1), written by `memuse_core.trim.index` -----------------
# One row per memory a MemTrim filter indexed, per scope (user / agent / run). Not derived from
# events and never emptied by a rebuild (only CONTEXT_TABLES are): it mirrors the user's memory
# store. `parsed` is the cached representation (units, task, support set, outcome) so a restart does
# not parse again.
TRIM_INDEX_DDL = [
    """CREATE TABLE IF NOT EXISTS memtrim_memories (
        scope VARCHAR, memory_id VARCHAR, text VARCHAR, answer VARCHAR, support JSON,
        ts DOUBLE, parser VARCHAR, parsed JSON, written_at DOUBLE,
        PRIMARY KEY (scope, memory_id))""",
]
DDL = DDL + TRIM_INDEX_DDL
