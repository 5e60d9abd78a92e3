"""Page scripts show no stray text: Streamlit's "magic" writes every bare string expression of a
script it runs (app.py and pages/<n>_*.py) onto the page, except docstrings. A constant's
"docstring" written after an assignment is such an expression (the MemTrim page once opened with
one). Helper modules (pages/_*.py) are imported, not run by Streamlit, so magic does not touch them.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPTS = [ROOT / "app.py", *sorted((ROOT / "pages").glob("[0-9]*.py"))]


def stray_strings(source: str) -> list[int]:
    """Lines of bare string expressions that magic would show (not a module, class or function
    docstring)."""
    lines: list[int] = []

    def visit(body: list[ast.stmt], docstring_allowed: bool) -> None:
        for i, stmt in enumerate(body):
            if (
                isinstance(stmt, ast.Expr)
                and isinstance(stmt.value, ast.Constant)
                and isinstance(stmt.value.value, str)
                and not (docstring_allowed and i == 0)
            ):
                lines.append(stmt.lineno)
            for field in ("body", "orelse", "finalbody"):
                inner = getattr(stmt, field, None)
                if isinstance(inner, list) and inner and isinstance(inner[0], ast.stmt):
                    own = (
                        isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
                        and field == "body"
                    )
                    visit(inner, own)
            for handler in getattr(stmt, "handlers", []):
                visit(handler.body, False)

    visit(ast.parse(source).body, True)
    return lines


def test_the_check_finds_a_constants_docstring() -> None:
    src = '"""Module."""\nX = 1\n"""What X is."""\ndef f():\n    """Doc."""\n    if X:\n        "shown"\n'
    assert stray_strings(src) == [3, 7]


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: p.name)
def test_no_page_script_writes_a_stray_string(script: Path) -> None:
    found = stray_strings(script.read_text(encoding="utf-8"))
    assert not found, (
        f"{script.name}: bare string at line(s) {found} would be drawn on the page by Streamlit magic"
    )
