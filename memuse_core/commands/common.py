"""What every `memuse` subcommand shares: the `--db` option and one-line user errors.

Errors a user can cause end in one clear line on stderr and a non-zero exit, never a traceback.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import NoReturn, TypeVar

import typer

F = TypeVar("F", bound=Callable[..., object])

DbOption = typer.Option(None, "--db", help="DuckDB file (default: $MEMUSE_DB or data/memuse.duckdb).")


def fail(message: str, code: int = 1) -> NoReturn:
    """Print one error line and exit non-zero."""
    typer.echo(f"error: {message}", err=True)
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
            typer.echo("interrupted", err=True)
            raise typer.Exit(130) from None
        except FileNotFoundError as e:
            fail(f"{e.filename}: file not found")

    return wrapper  # type: ignore[return-value]
