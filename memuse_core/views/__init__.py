"""Typed page views: one module per page, pydantic view models and plain functions.

Every read view is `fn(con, ...) -> ViewModel`, where `con` is an open read-only connection from
the store (`common.open_read`); pages call them through `cached(fn, ...)` (pages/_reads.py), which
opens, caches by database state and closes. Views call the store's app queries
(`memuse_core.store.app`), the metrics and the figure builders; nothing here imports Streamlit or
DuckDB or holds SQL.

- `common`: view-model base, runs and the sidebar scope, episode header, step text, item keys.
- `display`: how values read on a page (number formats, "—" for missing, outcome and memory words).
- `overview`: profiles, outcome classes, yields, coverage; the spans behind a number.
- `report`: task outcomes, delivery forms and cost (Overview and Compare).
- `episodes`: the filterable episode table.
- `timeline`: an episode's header, spans and timeline figure.
- `span`: the span inspector; `judgment`: one judgment's attempts and transcript, re-judging.
- `lineage`: memory items, their deliveries, history and graph.
- `case_studies`: annotations, case studies, export/import and human-vs-judge agreement.
- `compare`: two configurations or runs side by side.
- `judge_runs`: judging progress, batches, errors and follow-ups.
"""
