"""A submission's trace (`steepy report ID --trace FILE`): a TSV file with one row per attempt
of an executable, in the columns of Nextflow's trace.txt where they apply, plus steepy's own.
Times are ISO 8601 in UTC, durations whole milliseconds (as Nextflow's `trace.raw`); an
empty field is `-`."""

from __future__ import annotations

from steepy.model.common import iso_time
from steepy.ui.report_facts import AttemptRow, describe

COLUMNS = ("task_id", "hash", "name", "status", "exit", "submit", "start", "complete",
           "duration", "realtime", "attempt", "run", "executable", "agent", "reason")


def _fields(row: AttemptRow) -> tuple:
    """`hash` is the process chain's id (a chain is Nextflow's task), `name` the service."""
    return (row.task_id, row.chain_id, row.service_id, row.outcome, row.exit_code,
            iso_time(row.submit), iso_time(row.start), iso_time(row.end), row.duration_ms,
            row.realtime_ms, row.attempt, row.run, row.executable_id, row.agent, row.reason)


def _cell(value: object) -> str:
    """A field on one line without tabs (a reason may quote the tool's output)."""
    return " ".join(describe(value).split())


def trace_tsv(rows: list[AttemptRow]) -> str:
    lines = ["\t".join(COLUMNS)]
    lines += ["\t".join(_cell(v) for v in _fields(row)) for row in rows]
    return "\n".join(lines) + "\n"
