"""`steepy report ID`: a submission's report as one HTML file that opens offline
(steepy/ui/report.py), and with `--trace FILE` a TSV row per attempt (steepy/ui/trace.py).
Over the local database or, with `--server URL`, a steepy server (steepy/api/backends.py)."""

from __future__ import annotations

from pathlib import Path

import click

from steepy.api.backends import Backend
from steepy.cli.manage import found, not_a_chain, with_backend
from steepy.cli.output import stop


def _write(path: str, text: str, what: str) -> None:
    """`text` to `path` (`-`: stdout); a place that cannot be written is one line, exit 2."""
    if path == "-":
        click.echo(text, nl=False)
        return
    try:
        Path(path).write_text(text, encoding="utf-8")
    except OSError as e:
        stop(f"Cannot write the {what} to {path}: {e.strerror or e}")
    click.echo(f"wrote {what} {path}", err=True)


@click.command()
@click.argument("submission_id", metavar="ID")
@click.option("--output", "-o", metavar="FILE",
              help="Where to write the HTML report (default: report-ID.html; `-': stdout).")
@click.option("--trace", metavar="FILE",
              help="Also write a TSV with one row per attempt (Nextflow's trace.txt columns).")
@with_backend
def report(backend: Backend, submission_id: str, output: str | None,
           trace: str | None) -> None:
    """Write a submission's report: one HTML file with its summary, the timeline chart,
    every attempt and why it ended, and the durations per service."""
    from steepy.ui.report import report_html
    from steepy.ui.report_facts import attempt_rows
    from steepy.ui.trace import trace_tsv

    document = found(backend.document(submission_id), "submission", submission_id)
    not_a_chain(submission_id, document)
    events = backend.events(submission_id) or []
    if trace:
        _write(trace, trace_tsv(attempt_rows(document)), "trace")
    _write(output or f"report-{submission_id}.html", report_html(document, events), "report")
