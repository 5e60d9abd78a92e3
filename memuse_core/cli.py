"""The `memuse` command: every subcommand registered explicitly, in workflow order.

The command functions live in `memuse_core/commands/<area>.py` as plain functions; `COMMANDS`
below is the one place that names them, and its order is the order of `memuse --help`, grouped by
stage: get runs in (record, demo, ingest, outcomes, schema, info) -> evaluation context (build,
spans) -> judge -> results (report, lineage, export) -> MemTrim (trim, trim-eval).

`app` is the registered Typer application (tests invoke it with `typer.testing.CliRunner`);
`build_app()` makes a fresh one; `main()` is the console entry point.
"""

from __future__ import annotations

import sys
from collections.abc import Callable

import typer
from typer.core import TyperGroup

from .commands import context, core, demo, judge, realruns, record, report, trim
from .commands.common import DbOption, fail, say, user_errors

HELP = "MemUse Studio: evaluate agent memory at its point of use, from recorded trajectories."

# Help panels (stages of the workflow).
GET_RUNS_IN = "1. Get runs in"
CONTEXT = "2. Evaluation context"
JUDGE = "3. Judge"
RESULTS = "4. Results"
MEMTRIM = "5. MemTrim"


def _record_group() -> typer.Typer:
    group = typer.Typer(help=record.GROUP_HELP, no_args_is_help=True)
    group.command("proxy")(record.proxy)
    return group


# (name, help panel, command function or command group), in workflow order.
COMMANDS: tuple[tuple[str, str, Callable[..., object] | typer.Typer], ...] = (
    ("record", GET_RUNS_IN, _record_group()),
    ("demo", GET_RUNS_IN, demo.demo),
    ("ingest", GET_RUNS_IN, core.ingest),
    ("outcomes", GET_RUNS_IN, realruns.outcomes),
    ("schema", GET_RUNS_IN, core.schema),
    ("info", GET_RUNS_IN, core.info),
    ("build", CONTEXT, context.build),
    ("spans", CONTEXT, context.spans),
    ("judge", JUDGE, judge.judge),
    ("report", RESULTS, report.report),
    ("lineage", RESULTS, report.lineage),
    ("export", RESULTS, realruns.export),
    ("trim", MEMTRIM, trim.trim_cmd),
    ("trim-eval", MEMTRIM, trim.trim_eval_cmd),
)
WORKFLOW_ORDER: tuple[str, ...] = tuple(name for name, _, _ in COMMANDS)


class _WorkflowGroup(TyperGroup):
    """Lists subcommands in `WORKFLOW_ORDER` (Typer would put command groups after commands)."""

    def list_commands(self, ctx: object) -> list[str]:
        rank = {name: i for i, name in enumerate(WORKFLOW_ORDER)}
        return sorted(self.commands, key=lambda n: rank.get(n, len(rank)))


def build_app() -> typer.Typer:
    """A `memuse` application with every subcommand of `COMMANDS` registered."""
    cli = typer.Typer(
        name="memuse",
        help=HELP,
        cls=_WorkflowGroup,
        no_args_is_help=True,
        add_completion=False,
        pretty_exceptions_enable=False,
    )
    for name, panel, target in COMMANDS:
        if isinstance(target, typer.Typer):
            cli.add_typer(target, name=name, rich_help_panel=panel)
        else:
            cli.command(name, rich_help_panel=panel)(target)
    return cli


app = build_app()


def main(argv: list[str] | None = None) -> None:
    """Console entry point."""
    app(args=argv if argv is not None else sys.argv[1:], prog_name="memuse")


__all__ = ["COMMANDS", "WORKFLOW_ORDER", "app", "build_app", "main", "fail", "say", "user_errors", "DbOption"]
