"""How a submission ended, as `steepy run`, `steepy wait` and `steepy submit --wait` print
it, over either backend (the database, or a server with `--server`): its status line; how
many chains were reused, when it reused any or was submitted with --resume; and after a
failure, what failed: the error message of its first failed chains (the service, its exit
code and last output lines), on stderr."""

from __future__ import annotations

import click

from steepy.api.backends import Backend
from steepy.cli.output import reused_summary
from steepy.model.submission import ProcessChainStatus as CS, SubmissionStatus as SS

SHOWN_FAILURES = 3  # failed chains whose error message is printed; `steepy show' lists all


def print_outcome(backend: Backend, submission: dict) -> None:
    """`submission`: as the backend answers for it (GET /workflows/ID), after it ended."""
    submission_id, status = submission["id"], submission["status"]
    message = f" ({submission['errorMessage']})" if submission.get("errorMessage") else ""
    click.echo(f"submission {submission_id}: {status}{message}")
    reused = submission.get("reusedProcessChains", 0)
    if reused or submission.get("resume"):  # extensions 15
        click.echo(reused_summary(submission.get("totalProcessChains", 0), reused))
    if status in (SS.ERROR, SS.PARTIAL_SUCCESS):
        print_failures(backend, submission_id)


def print_failures(backend: Backend, submission_id: str) -> None:
    """The error messages of a submission's latest failed chains, on stderr."""
    found = backend.submission_chains(submission_id, SHOWN_FAILURES, CS.ERROR)
    chains, total = found if found is not None else ([], 0)
    for chain in chains:
        click.echo(f"chain {chain['id']} failed: {_error_of(backend, chain['id'])}", err=True)
    if total > len(chains):
        click.echo(f"and {total - len(chains)} more failed chain(s): `steepy show "
                   f"{submission_id}' lists them", err=True)
    if chains:
        click.echo(f"`steepy logs {chains[0]['id']}' prints a chain's whole output.", err=True)


def _error_of(backend: Backend, chain_id: str) -> str:
    """The error message of a chain's last run, its lines indented."""
    document = backend.chain_document(chain_id) or {}
    runs = document.get("runs") or [{}]
    text = runs[-1].get("errorMessage") or "(no error message)"
    return text.replace("\n", "\n  ")
