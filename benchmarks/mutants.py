"""Mutation testing of the rule modules: does a test fail when a rule is changed a little?

    ./dev mutants                       every module below, one after the other
    ./dev mutants memuse_core/rules/spans.py  one module (a path or a unique part of one, e.g. `verdicts`)
    ./dev mutants --list spans          only list the mutants, run nothing
    ./dev mutants --jobs 2 --timeout 60 --json out.json
    ./dev mutants --retest out.json     only the survivors of an earlier run, against today's tests

A small AST mutator (no dependency). Per mutation site it makes one mutant:
  comparisons    `<` -> `<=`, `<=` -> `<`, `>` -> `>=`, `>=` -> `>`, `==` <-> `!=`,
                 `in` <-> `not in`, `is` <-> `is not`
  boolean ops    `and` <-> `or`
  all/any        `all(...)` <-> `any(...)`
  constants      `True` <-> `False`; an integer n -> n + 1 (off by one)
  negation       `not x` -> `x`
Annotations and assert statements are not mutated. Each mutant is written into a private copy of the project (the work
tree is never touched) and only the module's own test files run against it (`pytest -x`, with a
per-mutant timeout). A mutant is killed when a test fails or errors (or the run times out) and
survives when every test passes. A survivor is either a missing test or an equivalent mutant
(the change does not alter behaviour); read each one.

The module list is `MODULES` below, the one place that names the modules and their tests.
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

_SPAN_TESTS = (
    "tests/test_spans_eligibility.py",
    "tests/test_spans_windows.py",
    "tests/test_spans_grouping.py",
    "tests/test_context_figure2.py",
    "tests/test_spans_properties.py",
)

# Rule module -> the test files that exercise it. The one list to update when modules move.
MODULES: dict[str, tuple[str, ...]] = {
    "memuse_core/rules/spans.py": _SPAN_TESTS,
    "memuse_core/rules/windows.py": _SPAN_TESTS,
    "memuse_core/rules/eligibility.py": _SPAN_TESTS,
    "memuse_core/rules/verdicts.py": ("tests/test_verdicts_rules.py",),
    "memuse_core/rules/outcome.py": ("tests/test_outcome_class.py",),
    # contains_exposed serves visibility and resident copies: the span tests exercise it
    "memuse_core/rules/exposure.py": (
        "tests/test_context_exposure.py",
        "tests/test_spans_windows.py",
        "tests/test_spans_grouping.py",
    ),
    "memuse_core/rules/prior.py": ("tests/test_context_prior.py", "tests/test_context_attribution.py"),
    # a placement's `verified` (proof resolved) decides cuts, visibility and grouping downstream
    "memuse_core/rules/checks.py": (
        "tests/test_context_checks.py",
        "tests/test_context_prior.py",
        "tests/test_spans_grouping.py",
    ),
    "memuse_core/judge/validate.py": (
        "tests/test_judge_checks.py",
        "tests/test_judge_table5_coverage.py",
        "tests/test_judge_rules.py",
    ),
}

# What the private copy of the project needs for the tests to run.
COPY = ("memuse_core", "tests", "prompts", "examples", "pyproject.toml")

_FLIP = {
    ast.Lt: ast.LtE,
    ast.LtE: ast.Lt,
    ast.Gt: ast.GtE,
    ast.GtE: ast.Gt,
    ast.Eq: ast.NotEq,
    ast.NotEq: ast.Eq,
    ast.In: ast.NotIn,
    ast.NotIn: ast.In,
    ast.Is: ast.IsNot,
    ast.IsNot: ast.Is,
}
_SYMBOL = {
    ast.Lt: "<",
    ast.LtE: "<=",
    ast.Gt: ">",
    ast.GtE: ">=",
    ast.Eq: "==",
    ast.NotEq: "!=",
    ast.In: "in",
    ast.NotIn: "not in",
    ast.Is: "is",
    ast.IsNot: "is not",
    ast.And: "and",
    ast.Or: "or",
}


@dataclass
class Mutant:
    module: str
    index: int
    line: int
    change: str
    source: str
    """The original source line, stripped."""
    outcome: str = ""
    """killed, timeout or survived (empty until run)."""
    seconds: float = 0.0


class _Mutator(ast.NodeTransformer):
    """Walks a module in a fixed order; numbers every mutation site; applies number `target`."""

    def __init__(self, target: int = -1) -> None:
        self.target = target
        self.sites: list[tuple[int, str]] = []

    def _site(self, node: ast.AST, change: str) -> bool:
        self.sites.append((getattr(node, "lineno", 0), change))
        return len(self.sites) - 1 == self.target

    # annotations are not behaviour
    def visit_arg(self, node: ast.arg) -> ast.AST:
        return node

    def visit_FunctionDef(self, node: ast.FunctionDef) -> ast.AST:
        # the return annotation is skipped; decorators, defaults and the body are mutated
        node.decorator_list = [self.visit(d) for d in node.decorator_list]
        node.args = self.visit(node.args)
        node.body = [self.visit(b) for b in node.body]
        return node

    visit_AsyncFunctionDef = visit_FunctionDef  # type: ignore[assignment]

    def visit_Assert(self, node: ast.Assert) -> ast.AST:
        return node  # invariants, not rules: mutating them only makes noise

    def visit_AnnAssign(self, node: ast.AnnAssign) -> ast.AST:
        if node.value is not None:
            node.value = self.visit(node.value)
        return node

    def visit_Compare(self, node: ast.Compare) -> ast.AST:
        self.generic_visit(node)
        for i, op in enumerate(node.ops):
            new = _FLIP.get(type(op))
            if new is not None and self._site(node, f"`{_SYMBOL[type(op)]}` -> `{_SYMBOL[new]}`"):
                node.ops[i] = new()
        return node

    def visit_BoolOp(self, node: ast.BoolOp) -> ast.AST:
        self.generic_visit(node)
        new: type[ast.boolop] = ast.Or if isinstance(node.op, ast.And) else ast.And
        if self._site(node, f"`{_SYMBOL[type(node.op)]}` -> `{_SYMBOL[new]}`"):
            node.op = new()
        return node

    def visit_Call(self, node: ast.Call) -> ast.AST:
        self.generic_visit(node)
        if isinstance(node.func, ast.Name) and node.func.id in ("all", "any"):
            other = "any" if node.func.id == "all" else "all"
            if self._site(node, f"`{node.func.id}(` -> `{other}(`"):
                node.func = ast.Name(id=other, ctx=ast.Load())
        return node

    def visit_UnaryOp(self, node: ast.UnaryOp) -> ast.AST:
        self.generic_visit(node)
        if isinstance(node.op, ast.Not) and self._site(node, "remove `not`"):
            return node.operand
        return node

    def visit_Constant(self, node: ast.Constant) -> ast.AST:
        v = node.value
        if isinstance(v, bool):
            if self._site(node, f"`{v}` -> `{not v}`"):
                return ast.Constant(value=not v)
        elif type(v) is int and self._site(node, f"`{v}` -> `{v + 1}`"):
            return ast.Constant(value=v + 1)
        return node


def mutants_of(module: str) -> list[Mutant]:
    text = (ROOT / module).read_text(encoding="utf-8")
    m = _Mutator()
    m.visit(ast.parse(text))
    lines = text.splitlines()
    return [
        Mutant(module, i, line, change, lines[line - 1].strip() if line else "")
        for i, (line, change) in enumerate(m.sites)
    ]


def mutated_source(module: str, index: int) -> str:
    tree = ast.parse((ROOT / module).read_text(encoding="utf-8"))
    m = _Mutator(index)
    tree = m.visit(tree)
    assert len(m.sites) > index, f"{module}: no mutant {index}"
    return ast.unparse(ast.fix_missing_locations(tree))


def _copy_project(dest: Path) -> None:
    for name in COPY:
        src = ROOT / name
        if src.is_dir():
            shutil.copytree(src, dest / name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        elif src.exists():
            shutil.copy2(src, dest / name)


def _pytest(copy: Path, tests: tuple[str, ...], timeout: float) -> tuple[str, float]:
    env = dict(
        os.environ, PYTHONPATH=str(copy), PYTHONDONTWRITEBYTECODE="1", MEMUSE_PROGRESS="", PYTHONHASHSEED="0"
    )
    cmd = [sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", "--no-header", *tests]
    t0 = time.monotonic()
    try:
        out = subprocess.run(cmd, cwd=copy, env=env, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return "timeout", time.monotonic() - t0
    return ("survived" if out.returncode == 0 else "killed"), time.monotonic() - t0


def _check_copy_is_used(copy: Path, module: str) -> None:
    env = dict(os.environ, PYTHONPATH=str(copy), PYTHONDONTWRITEBYTECODE="1")
    name = module.removesuffix(".py").replace("/", ".")
    out = subprocess.run(
        [sys.executable, "-c", f"import {name} as m; print(m.__file__)"],
        cwd=copy,
        env=env,
        capture_output=True,
        text=True,
    )
    where = Path(out.stdout.strip() or "?").resolve()
    if where != (copy / module).resolve():
        sys.exit(f"mutants: {name} imports from {where}, not the private copy {copy}: cannot run")


class _Workers:
    """One private project copy per job."""

    def __init__(self, jobs: int) -> None:
        self.tmp = Path(tempfile.mkdtemp(prefix="memuse-mutants-"))
        self.free: list[Path] = []
        for j in range(jobs):
            d = self.tmp / f"w{j}"
            d.mkdir()
            _copy_project(d)
            self.free.append(d)
        self.lock = threading.Lock()

    def take(self) -> Path:
        with self.lock:
            return self.free.pop()

    def give(self, d: Path) -> None:
        with self.lock:
            self.free.append(d)

    def close(self) -> None:
        shutil.rmtree(self.tmp, ignore_errors=True)


def run_module(
    module: str, workers: _Workers, jobs: int, timeout: float | None, only: set[int] | None = None
) -> list[Mutant]:
    """Run the mutants of `module` (only those numbered in `only`, when given)."""
    tests = MODULES[module]
    muts = [mu for mu in mutants_of(module) if only is None or mu.index in only]
    original = (ROOT / module).read_text(encoding="utf-8")
    first = workers.take()
    try:
        _check_copy_is_used(first, module)
        outcome, base = _pytest(first, tests, timeout=600)
    finally:
        workers.give(first)
    if outcome != "survived":
        sys.exit(f"mutants: the tests of {module} fail without any mutation ({', '.join(tests)})")
    limit = timeout or max(30.0, 5 * base)
    print(
        f"{module}: {len(muts)} mutants, tests {', '.join(tests)} ({base:.1f} s each, timeout {limit:.0f} s)"
    )

    def one(mu: Mutant) -> Mutant:
        d = workers.take()
        try:
            (d / module).write_text(mutated_source(module, mu.index), encoding="utf-8")
            mu.outcome, mu.seconds = _pytest(d, tests, limit)
        finally:
            (d / module).write_text(original, encoding="utf-8")
            workers.give(d)
        mark = {"killed": ".", "timeout": "T", "survived": "S"}[mu.outcome]
        print(mark, end="", flush=True)
        return mu

    with ThreadPoolExecutor(max_workers=jobs) as pool:
        done = list(pool.map(one, muts))
    print()
    return done


def _survivors_of(path: Path) -> dict[str, set[int]]:
    """The survivors recorded in an earlier `--json` file, checked against the current source
    (the mutant numbers are only valid while the module is unchanged)."""
    data = json.loads(path.read_text(encoding="utf-8"))
    out: dict[str, set[int]] = {}
    for module, rows in data.items():
        if module not in MODULES:
            sys.exit(f"mutants: {path}: {module} is not in MODULES")
        now = {mu.index: (mu.line, mu.change) for mu in mutants_of(module)}
        keep = set()
        for r in rows:
            if r["outcome"] != "survived":
                continue
            if now.get(r["index"]) != (r["line"], r["change"]):
                sys.exit(f"mutants: {module} changed since {path}; run it in full")
            keep.add(r["index"])
        out[module] = keep
    return out


def _resolve(names: list[str]) -> list[str]:
    if not names:
        return list(MODULES)
    out = []
    for n in names:
        hits = [m for m in MODULES if n == m or n in m]
        if len(hits) != 1:
            sys.exit(f"mutants: `{n}` matches {len(hits)} modules of {', '.join(MODULES)}")
        out.append(hits[0])
    return out


def report(results: dict[str, list[Mutant]]) -> Iterator[str]:
    yield f"{'module':<34} {'mutants':>7} {'killed':>7} {'timeout':>7} {'survived':>8} {'score':>6}"
    for module, muts in results.items():
        k = sum(m.outcome == "killed" for m in muts)
        t = sum(m.outcome == "timeout" for m in muts)
        s = sum(m.outcome == "survived" for m in muts)
        score = f"{(k + t) / len(muts):.0%}" if muts else "-"
        yield f"{module:<34} {len(muts):>7} {k:>7} {t:>7} {s:>8} {score:>6}"
    survivors = [m for muts in results.values() for m in muts if m.outcome == "survived"]
    yield ""
    yield f"survivors ({len(survivors)}):" if survivors else "no survivors"
    for m in survivors:
        yield f"  {m.module}:{m.line}: {m.change}    | {m.source}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("modules", nargs="*", help="Modules to mutate (default: all of MODULES).")
    ap.add_argument("--list", action="store_true", help="List the mutants; run nothing.")
    ap.add_argument("--jobs", type=int, default=1, help="Mutants tested in parallel (default 1).")
    ap.add_argument("--timeout", type=float, default=None, help="Seconds per mutant (default 5x baseline).")
    ap.add_argument("--json", type=Path, default=None, help="Also write every mutant and outcome here.")
    ap.add_argument("--strict", action="store_true", help="Exit 1 when a mutant survives.")
    ap.add_argument(
        "--retest",
        type=Path,
        default=None,
        help="Run only the survivors recorded in this earlier --json file (after adding tests).",
    )
    args = ap.parse_args()
    only = _survivors_of(args.retest) if args.retest else None
    modules = _resolve(args.modules) if args.modules or only is None else list(only)
    if args.list:
        for module in modules:
            for mu in mutants_of(module):
                print(f"{module}:{mu.line}: {mu.change}    | {mu.source}")
        return
    workers = _Workers(max(1, args.jobs))
    try:
        results = {
            m: run_module(
                m, workers, max(1, args.jobs), args.timeout, None if only is None else only.get(m, set())
            )
            for m in modules
        }
    finally:
        workers.close()
    lines = list(report(results))
    print("\n".join(lines))
    if args.json:
        args.json.write_text(
            json.dumps({m: [asdict(x) for x in muts] for m, muts in results.items()}, indent=2),
            encoding="utf-8",
        )
    if args.strict and any(m.outcome == "survived" for muts in results.values() for m in muts):
        sys.exit(1)


if __name__ == "__main__":
    main()
