"""`-v`, `--log-level LEVEL` and `--log-file PATH` of the commands that run work (run, worker,
serve): what steepy's components log, one line per event, e.g.

    2026-11-27 12:03:01 INFO steepy.engine.scheduler: claimed chain c1 (submission s1) on
    agent a1, run 1  (one line)

Without these options nothing is set up and the output is as it always was: warnings and
errors only, each as its bare message on stderr."""

from __future__ import annotations

import functools
import logging
from typing import Any, Callable

import click

from steepy.errors import Problem

FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"
DATE_FORMAT = "%Y-%m-%d %H:%M:%S"
LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR")
_LOGGER = "steepy"  # steepy's own loggers: not those of uvicorn, httpx or SQLAlchemy


def setup_logging(verbose: int, level: str | None, log_file: str | None) -> None:
    """Send steepy's log to stderr or `log_file` in the one-line FORMAT, from `level` (else
    INFO for -v, DEBUG for -vv, WARNING); with none of them, leave logging as it is."""
    logger = logging.getLogger(_LOGGER)
    for handler in [h for h in logger.handlers if getattr(h, "steepy_cli", False)]:
        logger.removeHandler(handler)  # of an earlier command in this process (tests)
        handler.close()
    if not verbose and level is None and log_file is None:
        logger.setLevel(logging.NOTSET)
        return
    try:
        handler = (logging.FileHandler(log_file, encoding="utf-8") if log_file
                   else logging.StreamHandler())
    except OSError as e:
        from steepy.cli.output import fail

        fail([Problem(f"cannot write the log to {log_file}: {e.strerror or e}",
                      file="--log-file")])
    handler.setFormatter(logging.Formatter(FORMAT, DATE_FORMAT))
    handler.steepy_cli = True  # type: ignore[attr-defined]
    logger.addHandler(handler)
    logger.setLevel(level.upper() if level else
                    logging.DEBUG if verbose > 1 else logging.INFO if verbose else logging.WARNING)


def log_options(command: Callable[..., Any]) -> Callable[..., Any]:
    """The options `-v`, `--log-level` and `--log-file`; logging is set up before the command
    runs, which does not see them."""
    @functools.wraps(command)
    def run(*args: Any, verbose: int, log_level: str | None, log_file: str | None,
            **options: Any) -> Any:
        setup_logging(verbose, log_level, log_file)
        return command(*args, **options)

    options = (
        click.option("-v", "--verbose", count=True,
                     help="Log what the workers do (claims, ends, retries) at INFO; -vv: DEBUG."),
        click.option("--log-level", type=click.Choice(LEVELS, case_sensitive=False),
                     help="Log from this level on (default: WARNING; -v: INFO)."),
        click.option("--log-file", type=click.Path(dir_okay=False), metavar="PATH",
                     help="Append the log to this file instead of stderr."))
    for option in reversed(options):
        run = option(run)
    return run
