"""The judge (MemUse 3.4-3.5, A.2-A.3): evidence packages, read/search tools with a coverage
ledger, answer checks, the LLM judge loop, the offline rules judge and the batch runner.

    from memuse_core.judge.runner import judge_span
    res = judge_span("data/memuse.duckdb", span_id, judge="rules")          # offline
    res = judge_span(db, span_id, judge="llm", model="gpt-4.1-mini")         # OPENAI_API_KEY
    res.status, res.verdict.triage, res.answer.assessments[0].influence

The `openai` SDK is imported only when the LLM judge is used (`judge.llm`).
"""
