"""Every command's `--help` (and each `schedule` subcommand's) ends with examples and its
exit codes, printed as written."""

from __future__ import annotations

import click
import pytest
from click.testing import CliRunner

from steepy.cli import main
from steepy.cli import group
from steepy.cli.helptext import HELP, epilog


def _commands(group: click.Group, prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    found = []
    for name in group.list_commands(None):  # `steepy`'s imports each command's module
        command = group.get_command(None, name)
        found.append((*prefix, name))
        if isinstance(command, click.Group):
            found += _commands(command, (*prefix, name))
    return found


COMMANDS = [(), *_commands(main)]  # () is `steepy --help'


def test_the_walk_finds_the_commands_and_subcommands() -> None:
    assert {("run",), ("search",), ("priority",), ("schedule",), ("schedule", "add")} <= set(
        COMMANDS)


@pytest.mark.parametrize("path", COMMANDS, ids=lambda path: " ".join(path) or "steepy")
def test_help_has_examples_and_exit_codes(path: tuple[str, ...]) -> None:
    result = CliRunner().invoke(main, [*path, "--help"], terminal_width=200)
    assert result.exit_code == 0, result.output
    examples = result.stdout.split("\n  Examples:\n\n", 1)
    assert len(examples) == 2, f"`steepy {' '.join(path)} --help' has no examples"
    shown, codes = examples[1].split("\n  Exit codes:\n\n", 1)
    assert all("steepy " in line for line in shown.strip().splitlines()), shown
    assert codes.splitlines()[0].startswith("    0  ")  # one line a code, as written


def test_every_entry_names_a_command() -> None:
    assert set(HELP) <= {" ".join(path) for path in COMMANDS}


def test_the_epilog_keeps_its_lines() -> None:
    assert epilog(["steepy a", "steepy b"], {2: "bad", 0: "fine"}) == (
        "Examples:\n\n\b\n  steepy a\n  steepy b\n\nExit codes:\n\n\b\n  0  fine\n  2  bad")


@pytest.mark.parametrize("name", sorted(group.COMMANDS))
def test_each_listed_command_is_found_under_its_name(name: str) -> None:
    command = main.get_command(None, name)
    assert isinstance(command, click.Command)
    assert name in (command.name, "status")  # `status' is `show' under a second name
    summary = group.COMMANDS[name][1]
    assert summary.endswith(".") and len(summary) <= 60, summary


def test_steepy_help_lists_every_command_with_its_line() -> None:
    result = CliRunner().invoke(main, ["--help"], terminal_width=80)
    listed = result.stdout.split("Commands:\n", 1)[1].split("\n\n", 1)[0].splitlines()
    assert [line.split(None, 1) for line in listed] == [
        [name, summary] for name, (_, summary) in sorted(group.COMMANDS.items())]
