"""The `steepy` command group. Its commands are listed here by name (`COMMANDS`) and a
command's module is imported only when that command is used: `steepy --help` and `steepy
list` do not load the engine, the HTTP server or the workflow checks (issue 31: commands that
do not run an engine start in 0.25 s; tests/cli/test_import_budget.py checks what each one
imports)."""

from __future__ import annotations

import importlib
import sys

import click

from steepy import __version__
from steepy.cli.ending import run_to_the_end
from steepy.cli.helptext import HELP, add_help, epilog

# a command's name -> where it is ("module:attribute" in steepy.cli) and its line in
# `steepy --help' (at most 60 characters, so that it is not cut at 80 columns)
COMMANDS: dict[str, tuple[str, str]] = {
    "cancel": ("manage:cancel", "Cancel a submission or a single process chain."),
    "events": ("manage:show_events", "Print the timeline of a submission."),
    "gc": ("schedules:gc", "Delete old submissions now (the garbage collector)."),
    "list": ("manage:list_submissions", "List submissions, newest first."),
    "logs": ("manage:logs", "Print the output of a process chain's run."),
    "notifications": ("notifications:notifications", "List the deliveries of notifications."),
    "plan": ("files:plan", "Show the process chains a workflow turns into."),
    "plugins": ("plugins:list_plugins", "List the plugins: runtimes, adapters, checkers, ..."),
    "priority": ("manage:priority", "Set the priority of a submission or a process chain."),
    "report": ("report:report", "Write a submission's report as one HTML file."),
    "retry": ("manage:retry", "Run the failed chains of a finished submission again."),
    "run": ("engine:run", "Submit a workflow and run it to the end in this process."),
    "schedule": ("schedules:schedule", "Submit a workflow on a cron expression or interval."),
    "search": ("search:search", "Search submissions and process chains (Steep's queries)."),
    "serve": ("serve:serve", "Serve Steep's HTTP API and web UI (and run the workflows)."),
    "services": ("files:list_services", "List the services workflows can use."),
    "show": ("manage:show", "Show a submission or a process chain."),
    "slurm-workers": ("pilots:slurm_workers", "Submit SLURM jobs that each run a worker."),
    "status": ("manage:show", "Show a submission or a process chain (as `show')."),
    "submit": ("manage:submit", "Store a workflow as ACCEPTED; a `steepy worker' runs it."),
    "validate": ("files:validate", "Check workflows, services and macros; report problems."),
    "wait": ("manage:wait", "Wait until submissions have finished."),
    "worker": ("engine:worker", "Run everything in the database until stopped."),
}


class _Steepy(click.Group):
    """The commands of `COMMANDS`, each imported when first asked for (click's lazy group),
    with its examples and exit codes (steepy/cli/helptext.py). Every command: a database
    that cannot be used is one line and exit code 4; any other exception it did not expect
    is exit code 5 with its traceback."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(set(self.commands) | set(COMMANDS))

    def get_command(self, ctx: click.Context | None, cmd_name: str) -> click.Command | None:
        command = self.commands.get(cmd_name)
        if command is None and cmd_name in COMMANDS:
            module, attribute = COMMANDS[cmd_name][0].split(":")
            command = getattr(importlib.import_module(f"steepy.cli.{module}"), attribute)
            add_help(command, cmd_name)
            self.add_command(command, cmd_name)
        return command

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """The commands' lines from `COMMANDS`, without importing a command's module."""
        names = self.list_commands(ctx)
        limit = max(formatter.width - 6 - max(map(len, names)), 10)  # as click's own
        lines = [COMMANDS[name][1] if name in COMMANDS else
                 self.commands[name].get_short_help_str(limit) for name in names]
        with formatter.section("Commands"):
            formatter.write_dl([(name, line if len(line) <= limit else
                                 line[:limit - 3].rstrip() + "...")
                                for name, line in zip(names, lines)])

    def invoke(self, ctx: click.Context):
        try:
            return super().invoke(ctx)
        except _PASSED_ON:
            raise
        except Exception as e:
            if "sqlalchemy" in sys.modules or type(e).__module__.startswith("steepy"):
                from steepy.registry.failures import EXIT_DATABASE, describe, is_database_failure

                if is_database_failure(e):
                    click.echo(f"steepy: cannot use the {describe(e)}", err=True)
                    sys.exit(EXIT_DATABASE)
            _failed(e)


# the commands whose Ctrl-C is a clean stop (exit code 0), also while they start
STOP_CLEANLY = ("worker", "serve")

# click's own ways to end a command (usage errors, --help, Ctrl-C as Abort) and a reader
# that went away (`steepy list | head`) end as they always have
_PASSED_ON = (click.exceptions.ClickException, click.exceptions.Abort, click.exceptions.Exit,
              BrokenPipeError)


def _failed(error: Exception) -> None:
    """A command that crashed: steepy itself failed (a bug): one line, then the traceback (as
    the engine logs its own crash), and exit code 5 (docs/reference/exit-codes.md)."""
    import traceback

    from steepy.cli.common import EXIT_INTERNAL

    click.echo(f"steepy failed (a bug in steepy, exit code {EXIT_INTERNAL}): "
               f"{type(error).__name__}: {error}", err=True)
    traceback.print_exception(error, file=sys.stderr)
    sys.exit(EXIT_INTERNAL)


@click.group(cls=_Steepy, context_settings={"help_option_names": ["-h", "--help"]},
             epilog=epilog(*HELP[""]))
@click.version_option(__version__, prog_name="steepy")
def main() -> None:
    """steepy: run scientific workflows of command-line tools (Steep-compatible).

    Where a command takes the id of a submission, `last' names the newest one (`steepy show
    last', `steepy retry last')."""


def entry() -> None:
    """The `steepy` program (console script and `python -m steepy.cli`): `main`, then the end
    of the process (steepy/cli/ending.py). Tests that run `main` in their own process
    (click's CliRunner) never come here."""
    from steepy.cli.collector import collect_less_from_the_start

    collect_less_from_the_start()  # (before the imports of its command)
    if sys.argv[1:2] and sys.argv[1] in STOP_CLEANLY:
        import signal

        signal.signal(signal.SIGINT, _stopped_before_start)
    run_to_the_end(main)


def _stopped_before_start(signum: int, frame: object) -> None:
    """Ctrl-C while a worker or a server starts, before its own handler replaces this one:
    nothing runs yet, so it is the clean stop its help promises (exit code 0), not click's
    `Aborted!' and exit code 1. (Its executor, if started, ends with this process.)"""
    import os

    os.write(2, f"steepy {sys.argv[1]}: stopped before it started\n".encode())
    os._exit(0)
