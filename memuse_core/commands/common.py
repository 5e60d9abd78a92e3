"""What every `memuse` subcommand shares: the `--db` options and one-line user errors.

Errors a user can cause end in one clear line on stderr and a non-zero exit, never a traceback.
"""

from __future__ import annotations

import functools
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


def user_errors(fn: F) -> F:
    """Turn the errors a user can cause into one line and exit code 1."""
    from ..ingest.base import IngestError
    from ..store.connection import StoreError

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):  # type: ignore[no-untyped-def]
        try:
            return fn(*args, **kwargs)
        except (IngestError, StoreError) as e:
            fail(str(e))
        except KeyboardInterrupt:
            say("interrupted", err=True)
            raise typer.Exit(130) from None
        except FileNotFoundError as e:
            fail(f"{e.filename}: file not found")

    return wrapper  # type: ignore[return-value]
