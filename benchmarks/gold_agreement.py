"""Per-signal agreement of a judge with the gold set (tests/gold/README.md). Printed, not a test.

    .venv/bin/python benchmarks/gold_agreement.py                       # the offline rules judge
    .venv/bin/python benchmarks/gold_agreement.py --judge scripted      # the LLM loop, gold answers
    .venv/bin/python benchmarks/gold_agreement.py --judge llm --model M --base-url URL \\
        [--api-key-env OPENAI_API_KEY] [--concurrency 4] [--max-calls 8]

Every run builds a fresh DuckDB file in a temporary folder from the gold cases (never the app's
database): event log -> `memuse ingest` -> `memuse build` -> the judge. It prints the agreement of
every signal, the usage label and the triage label over the expected values (signals the paper
leaves open, marked "any", are not counted), the structural agreement, and with --mismatches every
disagreement. `--judge scripted` runs the real LLM loop against the scripted server answering with
the gold answers after the reads Table 5 requires: it measures the loop's acceptance, not a model.
`--write-known` rewrites the matching section of tests/gold/known_failures.json (rules ->
"rules", scripted -> "llm", plus "structure") from this run.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from gold.harness import (  # noqa: E402
    ANY,
    KNOWN_FAILURES,
    LABELS,
    SIGNALS,
    cli,
    eligible_spans_under_test,
    ingest,
    judgment_log,
    load_cases,
    loop_problems,
    run_scripted_llm,
    signal_mismatches,
    spans,
    stored_assessments,
    structure_mismatches,
    write_log,
)


def _judge(args: argparse.Namespace, db: Path, cases: list) -> str:
    """Run the chosen judge on the built store; returns the judge name its judgments carry."""
    if args.judge == "rules":
        cli("judge", "--db", str(db), "--judge", "rules")
        return "rules"
    if args.judge == "scripted":
        run_scripted_llm(db, cases, args.concurrency)
        return "llm"
    from memuse_core.judge.result import JudgeSettings
    from memuse_core.judge.runner import run_batch

    if not args.model:
        raise SystemExit("error: --judge llm needs --model (and usually --base-url)")
    s = JudgeSettings(
        judge="llm",
        model=args.model,
        base_url=args.base_url,
        api_key_env=args.api_key_env,
        max_calls=args.max_calls,
    )
    run_batch(db, s, span_ids=eligible_spans_under_test(db, cases), concurrency=args.concurrency)
    return "llm"


def agreement(
    cases: list, got: dict, scripted: bool = False
) -> tuple[dict[str, Counter], list[tuple[str, str]]]:
    """signal -> Counter(agree, total) over expected values; plus (case, mismatch) pairs."""
    tally: dict[str, Counter] = {k: Counter() for k in (*SIGNALS, *LABELS, "triage")}
    mism = []
    for c in cases:
        for span in c.judged():
            g = got.get(span["span"])
            tally["triage"]["total"] += 1
            tally["triage"]["agree"] += bool(g and g["triage"] == span["triage"])
            for i, e in enumerate(span["entries"]):
                ge = g["entries"][i] if g and i < len(g["entries"]) else None
                for k in (*SIGNALS, *LABELS):
                    if e[k] == ANY:
                        continue
                    tally[k]["total"] += 1
                    tally[k]["agree"] += bool(ge is not None and ge[k] == e[k])
        mism += [(c.name, m) for m in signal_mismatches(c, got, anchors=scripted)]
    return tally, mism


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--judge", choices=["rules", "scripted", "llm"], default="rules")
    ap.add_argument("--model")
    ap.add_argument("--base-url")
    ap.add_argument("--api-key-env", default="OPENAI_API_KEY")
    ap.add_argument("--concurrency", type=int, default=4)
    ap.add_argument("--max-calls", type=int, default=8)
    ap.add_argument("--mismatches", action="store_true", help="print every disagreement")
    ap.add_argument("--write-known", action="store_true", help="record disagreements as known failures")
    a = ap.parse_args(argv)

    cases = load_cases()
    with tempfile.TemporaryDirectory(prefix="memuse-gold-") as tmp:
        db = Path(tmp) / "gold.duckdb"
        ingest(db, write_log(cases, Path(tmp) / "gold.jsonl"))
        structure = {c.name: structure_mismatches(c, spans(db, c.episode_id)) for c in cases}
        judge = _judge(a, db, cases)
        got = stored_assessments(db, judge)
        log = judgment_log(db, judge)

    tally, mism = agreement(cases, got, scripted=a.judge == "scripted")
    n_struct = sum(1 for v in structure.values() if not v)
    print(f"gold set: {len(cases)} cases, {sum(len(c.judged()) for c in cases)} judged spans")
    print(
        f"structure (span grouping, windows, eligibility): {n_struct} of {len(cases)} cases as the paper says"
    )
    print(f"judge: {a.judge}" + (f" ({a.model} at {a.base_url})" if a.judge == "llm" else ""))
    print(f"{'signal':<11}{'agree':>7}{'of':>5}{'share':>8}")
    for k, t in tally.items():
        share = t["agree"] / t["total"] if t["total"] else float("nan")
        print(f"{k:<11}{t['agree']:>7}{t['total']:>5}{share:>8.2f}")
    cases_ok = len({c.name for c in cases if c.judged()} - {n for n, _ in mism})
    print(f"cases with every expected value matched: {cases_ok} of {sum(1 for c in cases if c.judged())}")
    if judge == "llm":
        acc = sum(1 for j in log.values() if j["status"] == "accepted")
        first = sum(1 for j in log.values() if j["status"] == "accepted" and not j["followups"])
        print(f"LLM loop: {acc} of {len(log)} spans accepted, {first} at the first answer")
    if a.mismatches:
        for name, v in structure.items():
            for m in v:
                print(f"  [structure] {name}: {m}")
        for name, m in mism:
            print(f"  [{a.judge}] {name}: {m}")
        if judge == "llm":
            for c in cases:
                for m in loop_problems(c, log):
                    print(f"  [loop] {c.name}: {m}")
    if a.write_known:
        if a.judge == "llm":
            raise SystemExit("error: --write-known records the rules judge or the scripted loop only")
        data = json.loads(KNOWN_FAILURES.read_text(encoding="utf-8"))
        data["structure"] = {k: v for k, v in structure.items() if v}
        kind = "rules" if a.judge == "rules" else "llm"
        by_case: dict[str, list[str]] = {}
        for name, m in mism:
            by_case.setdefault(name, []).append(m)
        if kind == "llm":
            for c in cases:
                by_case.setdefault(c.name, []).extend(loop_problems(c, log))
            by_case = {k: v for k, v in by_case.items() if v}
        data[kind] = by_case
        KNOWN_FAILURES.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n", encoding="utf-8")
        print(f"wrote {KNOWN_FAILURES.relative_to(ROOT)} ({kind}: {len(by_case)} cases)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
