"""A command that crashes is steepy's own failure (a bug): one line naming it, the traceback,
and exit code 5 (docs/reference/exit-codes.md); click's own endings keep their codes."""

from __future__ import annotations

import click
import pytest
from click.testing import CliRunner

from steepy.cli.group import _Steepy


def _group(callback) -> click.Group:
    return _Steepy(commands=[click.Command("act", callback=callback)])


def test_an_unexpected_exception_is_exit_5_with_one_line_and_the_traceback() -> None:
    def crash() -> None:
        raise OverflowError("date value out of range")

    result = CliRunner().invoke(_group(crash), ["act"])
    assert result.exit_code == 5
    first, *rest = result.stderr.splitlines()
    assert first == ("steepy failed (a bug in steepy, exit code 5): "
                     "OverflowError: date value out of range")
    assert rest[0] == "Traceback (most recent call last):"
    assert "in crash" in result.stderr and rest[-1] == "OverflowError: date value out of range"
    assert result.stdout == ""


def _usage() -> None:
    raise click.UsageError("no such thing")


def _abort() -> None:
    raise click.Abort()


def _exit_3() -> None:
    raise click.exceptions.Exit(3)


def _system_exit_2() -> None:
    raise SystemExit(2)


@pytest.mark.parametrize("callback, code", [(_usage, 2), (_abort, 1), (_exit_3, 3),
                                            (_system_exit_2, 2)])
def test_clicks_own_endings_and_sys_exit_keep_their_codes(callback, code) -> None:
    result = CliRunner().invoke(_group(callback), ["act"])
    assert result.exit_code == code
    assert "steepy failed" not in result.stderr and "Traceback" not in result.stderr


def test_ctrl_c_is_not_a_crash() -> None:
    def interrupted() -> None:
        raise KeyboardInterrupt

    result = CliRunner().invoke(_group(interrupted), ["act"])
    assert result.exit_code == 1 and "steepy failed" not in result.stderr
