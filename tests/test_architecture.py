"""The layers of memuse_core point one way (docs/architecture.md, PLAN "Architecture target").

Read from the AST of every module, function-level imports included:
- only `memuse_core/store/` imports duckdb or holds SQL;
- no package or top-level module imports one that imports it back (no cycles);
- every import points down the layer order (or stays within a layer);
- the pure rules import no database, file or process modules;
- Streamlit is never imported by memuse_core.
"""

from __future__ import annotations

import ast
import re
import shutil
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1] / "memuse_core"

LAYERS: dict[str, int] = {
    "vocab": 1,
    "textsafe": 1,
    "wording": 1,
    "crash": 1,
    "events": 2,
    "episode": 2,
    "builder": 2,
    "rules": 3,
    "store": 4,
    "build": 5,
    "ingest": 5,
    "judge": 5,
    "trim": 5,
    "demo": 5,
    "metrics": 5,
    "lineage": 5,
    "timeline": 5,
    "charts": 5,
    "casestudy": 5,
    "record": 5,
    "progress": 5,
    "views": 6,
    "cli": 7,
    "commands": 7,
    "__main__": 7,
    "__init__": 8,
}
"""Layer of every package and top-level module: imports may point down (or sideways), never up."""

SAME_UNIT = {"commands": "cli", "__main__": "cli"}
"""The CLI is one unit: `cli` registers the commands and the commands hang off its `app`."""

KNOWN_EXCEPTIONS: set[tuple[str, str]] = set()
"""(src, dst) import edges or ("sql", path) files exempted from the rules; keep it empty."""

RULES_FORBIDDEN = {
    "duckdb",
    "pyarrow",
    "pandas",
    "os",
    "pathlib",
    "subprocess",
    "socket",
    "shutil",
    "tempfile",
}
"""What the pure rules never import: no database, no files, no processes (PLAN layer 3)."""

SQL = re.compile(r"^\s*(SELECT|INSERT|DELETE|UPDATE|CREATE|DROP|ALTER|WITH|BEGIN|COMMIT|ROLLBACK)\b", re.I)


def _modules(root: Path) -> list[tuple[str, Path]]:
    out = []
    for p in sorted(root.rglob("*.py")):
        rel = p.relative_to(root.parent).with_suffix("")
        parts = list(rel.parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out.append((".".join(parts), p))
    return out


def _imports(mod: str, path: Path, tree: ast.AST) -> list[tuple[str, int]]:
    """Absolute names imported anywhere in a module (function bodies included), with line."""
    pkg = mod.split(".") if path.name == "__init__.py" else mod.split(".")[:-1]
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [(a.name, node.lineno) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = pkg[: len(pkg) - (node.level - 1)]
                name = ".".join(base + ([node.module] if node.module else []))
                if node.module is None:  # from . import a, b
                    out += [(f"{name}.{a.name}", node.lineno) for a in node.names]
                    continue
            else:
                name = node.module or ""
            out.append((name, node.lineno))
    return out


def _unit(name: str) -> str | None:
    parts = name.split(".")
    if parts[0] != "memuse_core" or len(parts) < 2:
        return None
    u = parts[1]
    return SAME_UNIT.get(u, u)


def _sql_strings(tree: ast.AST) -> list[int]:
    docstrings = {
        id(n.body[0].value)
        for n in ast.walk(tree)
        if isinstance(n, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
        and n.body
        and isinstance(n.body[0], ast.Expr)
        and isinstance(n.body[0].value, ast.Constant)
    }
    return [
        n.lineno
        for n in ast.walk(tree)
        if isinstance(n, ast.Constant)
        and isinstance(n.value, str)
        and id(n) not in docstrings
        and SQL.match(n.value)
        and re.search(
            r"\b(FROM|INTO|TABLE|TRANSACTION|VIEW)\b|^\s*(BEGIN|COMMIT|ROLLBACK)\s*$", n.value, re.I
        )
    ]


def analyse(root: Path = ROOT) -> list[str]:
    """Every violation of the layering rules under `root`, one sentence each."""
    problems: list[str] = []
    edges: dict[str, dict[str, str]] = {}
    for mod, path in _modules(root):
        rel = path.relative_to(root.parent).as_posix()
        tree = ast.parse(path.read_text(encoding="utf-8"))
        src = _unit(mod) or "__init__"  # the package's own __init__ sits above everything
        if src not in LAYERS and src not in SAME_UNIT.values():
            problems.append(f"{rel}: `{src}` has no layer in LAYERS (place it in docs/architecture.md)")
            continue
        in_store = rel.startswith("memuse_core/store/")
        for name, line in _imports(mod, path, tree):
            top = name.split(".")[0]
            if top == "duckdb" and not in_store:
                problems.append(f"{rel}:{line}: imports duckdb outside memuse_core/store")
            if top == "streamlit":
                problems.append(f"{rel}:{line}: imports streamlit (only pages/ and app.py may)")
            if src == "rules" and top in RULES_FORBIDDEN:
                problems.append(f"{rel}:{line}: the pure rules import `{top}`")
            dst = _unit(name)
            if dst is None or dst == src:
                continue
            if (src, dst) in KNOWN_EXCEPTIONS:
                continue
            edges.setdefault(src, {}).setdefault(dst, f"{rel}:{line}")
            if dst not in LAYERS:
                continue
            if LAYERS[dst] > LAYERS[src]:
                problems.append(
                    f"{rel}:{line}: `{src}` (layer {LAYERS[src]}) imports `{dst}` (layer {LAYERS[dst]}) above it"
                )
        if not in_store and ("sql", rel) not in KNOWN_EXCEPTIONS:
            for line in _sql_strings(tree):
                problems.append(f"{rel}:{line}: SQL outside memuse_core/store")
    problems += _cycles(edges)
    return problems


def _cycles(edges: dict[str, dict[str, str]]) -> list[str]:
    """Every import cycle between units (Tarjan's strongly connected components)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[str] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in edges.get(v, {}):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                where = "; ".join(
                    f"{a} -> {b} ({edges[a][b]})"
                    for a in sorted(comp)
                    for b in sorted(comp)
                    if b in edges.get(a, {})
                )
                out.append(f"import cycle between {', '.join(sorted(comp))}: {where}")

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return out


def test_the_layers_point_one_way() -> None:
    problems = analyse()
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize(
    "where, code, expected",
    [
        ("rules/_probe.py", "import duckdb\n", "imports duckdb outside memuse_core/store"),
        ("judge/_probe.py", "def f():\n    import duckdb\n", "imports duckdb outside memuse_core/store"),
        ("rules/_probe.py", "from ..store import connect\n", "`rules` (layer 3) imports `store` (layer 4)"),
        (
            "store/_probe.py",
            "def f():\n    from ..judge import runner\n",
            "imports `judge` (layer 5) above it",
        ),
        ("metrics/_probe.py", "from ..lineage import item_graph\n", "import cycle between lineage, metrics"),
        ("timeline/_probe.py", "import streamlit as st\n", "imports streamlit"),
        (
            "ingest/_probe.py",
            'Q = "SELECT path FROM files WHERE sha256 = ?"\n',
            "SQL outside memuse_core/store",
        ),
        ("rules/_probe.py", "import os\n", "the pure rules import `os`"),
        ("newpkg/__init__.py", "", "`newpkg` has no layer"),
    ],
)
def test_a_violation_is_reported(tmp_path: Path, where: str, code: str, expected: str) -> None:
    """A copy of the package with one deliberate violation fails the check, naming it."""
    copy = tmp_path / "memuse_core"
    shutil.copytree(ROOT, copy, ignore=shutil.ignore_patterns("__pycache__"))
    assert not analyse(copy)  # the untouched copy passes
    if "import cycle" in expected:  # metrics -> lineage below, and lineage -> metrics here
        lineage = copy / "lineage" / "graph.py"
        lineage.write_text(lineage.read_text(encoding="utf-8") + "\nfrom ..metrics import group_stats\n")
    target = copy / where
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(code, encoding="utf-8")
    problems = analyse(copy)
    assert any(expected in p for p in problems), problems
