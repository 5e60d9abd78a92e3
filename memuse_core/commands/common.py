"""What every `memuse` subcommand shares: the `--db` options and one-line user errors.

Errors a user can cause end in one clear line on stderr and a non-zero exit, never a traceback.
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable
from pathlib import Path
from typing import NoReturn, TypeVar

import typer

F = TypeVar("F", bound=Callable[..., object])


def existing_db(value: Path | None) -> Path | None:
    """`--db` of every command that reads or extends a store: a missing database is refused with
    one line (`store.connection.missing_store`), never created."""
    from ..store.connection import missing_store

    why = missing_store(value)
    if why is not None:
        fail(why)
    return value


DbOption = typer.Option(
    None, "--db", help="DuckDB file (default: $MEMUSE_DB or data/memuse.duckdb).", callback=existing_db
)
"""`--db` of every command but `ingest` and `demo`: the database must exist."""
NewDbOption = typer.Option(
    None, "--db", help="DuckDB file, created when missing (default: $MEMUSE_DB or data/memuse.duckdb)."
)
"""`--db` of `ingest` and `demo`, the commands that create a store."""


def say(text: str, *, err: bool = False, nl: bool = True) -> None:
    """Print a line that may hold recorded text (ids, names, messages quoting them): control
    characters and escape sequences are made visible and inert first (`textsafe.terminal`)."""
    from ..textsafe import terminal

    typer.echo(terminal(text), err=err, nl=nl)


def fail(message: str, code: int = 1) -> NoReturn:
    """Print one error line and exit non-zero."""
    say(f"error: {message}", err=True)
    raise typer.Exit(code)


_PKG = __name__.rsplit(".", 2)[0]  # memuse_core
_USER_ERRORS = ((f"{_PKG}.ingest.errors", "IngestError"), (f"{_PKG}.store.connection", "StoreError"))
"""Where the errors a user can cause are defined (module, class)."""


def _user_error(e: BaseException) -> bool:
    """`e` is an `IngestError` or a `StoreError`. Looked up among the loaded modules, not imported:
    a module that was never imported raised nothing, and importing `ingest` on every command's
    start cost a third of a second (`memuse judge` never needs it)."""
    for module, name in _USER_ERRORS:
        mod = sys.modules.get(module)
        if mod is not None and isinstance(e, getattr(mod, name)):
            return True
    return False


def user_errors(fn: F) -> F:
    """Turn the errors a user can cause into one line and exit code 1."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):  # type: ignore[no-untyped-def]
        try:
            return fn(*args, **kwargs)
        except KeyboardInterrupt:
            say("interrupted", err=True)
            raise typer.Exit(130) from None
        except Exception as e:
            if _user_error(e):
                fail(str(e))
            if isinstance(e, FileNotFoundError):
                fail(f"{e.filename}: file not found")
            raise

    return wrapper  # type: ignore[return-value]
