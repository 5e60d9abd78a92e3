"""The `memuse` command. Each area adds its subcommands in `memuse_core/commands/<area>.py`.

Errors a user can cause end in one clear line on stderr and a non-zero exit, never a traceback.
"""

from __future__ import annotations

import importlib
import pkgutil
import sys
from collections.abc import Callable
from pathlib import Path
from typing import NoReturn, TypeVar

import typer

app = typer.Typer(
    name="memuse",
    help="MemUse Studio: evaluate agent memory at its point of use, from recorded trajectories.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

F = TypeVar("F", bound=Callable[..., object])

DbOption = typer.Option(None, "--db", help="DuckDB file (default: $MEMUSE_DB or data/memuse.duckdb).")


def say(text: str, *, err: bool = False, nl: bool = True) -> None:
    """Print a line that may hold recorded text (ids, names, messages quoting them): control
    characters and escape sequences are made visible and inert first (`textsafe.terminal`)."""
    from .textsafe import terminal

    typer.echo(terminal(text), err=err, nl=nl)


def fail(message: str, code: int = 1) -> NoReturn:
    """Print one error line and exit non-zero."""
    say(f"error: {message}", err=True)
    raise typer.Exit(code)


def user_errors(fn: F) -> F:
    """Turn the errors a user can cause into one line and exit code 1."""
    import functools

    from .ingest.base import IngestError
    from .store.connection import StoreError

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


def _load_commands() -> None:
    from . import commands

    for mod in sorted(m.name for m in pkgutil.iter_modules(commands.__path__)):
        importlib.import_module(f"{commands.__name__}.{mod}")


def main(argv: list[str] | None = None) -> None:
    """Console entry point."""
    _load_commands()
    app(args=argv if argv is not None else sys.argv[1:], prog_name="memuse")


__all__ = ["app", "main", "fail", "say", "user_errors", "DbOption", "Path"]
