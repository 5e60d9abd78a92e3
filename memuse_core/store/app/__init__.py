"""The app's read queries (and its annotation writes), one module per area.

Pages never reach these directly: `memuse_core.views` calls them and turns their frames into
typed view models. Every function takes an open connection (`Connection`) and returns a pandas
DataFrame or plain values. Text is fetched lazily, one step or one span at a time: no function
here loads the step text of a whole episode or corpus.

- `runs`: runs and the sidebar scope.
- `episodes`: the episode table, headers, steps, step text, deliveries and credit windows.
- `outcomes`: the span outcome class (A.4.1) - the one place app queries read it.
- `spans`: one span's entries, placements, prior context and judgments; harmful entries.
- `items`: memory items, their deliveries and recorded history.
- `judge_runs`: judge batches, errors, follow-ups and cost.
- `case_studies`: annotations and case studies (reads and writes).
- `compare`: paired per-task outcomes of two scopes.
"""

from __future__ import annotations

from duckdb import DuckDBPyConnection as Connection

__all__ = ["Connection"]
