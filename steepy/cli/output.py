"""What the commands print, whichever backend answered: tables (rich on a terminal,
tab-separated when piped), JSON documents, submissions and process chains, event lines, and
error lines (bad input is exit code 2)."""

from __future__ import annotations

import json
import sys
from collections import Counter
from datetime import datetime
from typing import Any, Callable, Iterable, NoReturn, Sequence

import click

from steepy.errors import Problem
from steepy.model.submission import CHAIN_COUNTERS, FINISHED_CHAIN, ProcessChainStatus as CS

EXIT_INVALID = 2

# --------------------------------------------------------------------------- errors


def stop(text: str) -> NoReturn:
    """One line on stderr, exit code 2: the command cannot do what was asked."""
    click.echo(text, err=True)
    sys.exit(EXIT_INVALID)


def _plural(count: int, word: str) -> str:
    return f"{count} {word}{'s' if count != 1 else ''}"


def _sorted(problems: Iterable[Problem]) -> list[Problem]:
    return sorted(problems, key=lambda p: (p.file or "", p.line or 0, p.column or 0))


_HINTS = "steepy.hints"  # where a command keeps the lines `fail' adds (click context meta)


def hint_on_failure(text: str, about: Callable[[Problem], bool]) -> None:
    """A line that `fail' prints after this command's problems, should it fail with one that
    is `about' what the line explains: e.g. where services come from, when none were found
    and a workflow names a service that is not defined."""
    context = click.get_current_context(silent=True)
    if context is not None:
        context.meta.setdefault(_HINTS, {}).setdefault(text, about)


def _hints(problems: list[Problem]) -> list[str]:
    context = click.get_current_context(silent=True)
    hints = context.meta.get(_HINTS, {}) if context is not None else {}
    return [text for text, about in hints.items() if any(map(about, problems))]


def _of_option(problem: Problem) -> bool:
    """A problem of a command-line option (its `file' is the option, e.g. `--cron')."""
    return (problem.file or "").startswith("--")


def fail(problems: list[Problem]) -> NoReturn:
    """Print every problem, in file order, as `file:line:column: path: message' (an
    option's as `--option: message'), the command's hints, and stop with exit code 2."""
    problems = _sorted(problems)
    for p in problems:
        location = click.style(p.location(), bold=True)
        path = click.style(p.path, fg="cyan") + ": " if p.path else ""
        click.echo(f"{location}: {path}{p.message}", err=True)
    for hint in _hints(problems):
        click.echo(hint, err=True)
    context = click.get_current_context(silent=True)
    files = {p.file for p in problems if not _of_option(p)}
    options = sum(map(_of_option, problems))
    count = click.style(_plural(len(problems), "problem"), fg="red")
    if not files:  # only options were wrong: an option error, not a file's
        command = context.command_path if context is not None else "steepy"
        click.echo(f"{count} in the options; `{command} -h' lists them", err=True)
    else:
        click.echo(f"{count} in {_plural(len(files), 'file')}"
                   + (f" and {options} in the options" if options else ""), err=True)
    sys.exit(EXIT_INVALID)


def warn(problems: list[Problem]) -> None:
    """Print warnings (e.g. ignored configuration keys) as `file:line:column: key: ...'."""
    for p in _sorted(problems):
        path = click.style(p.path, fg="cyan") + ": " if p.path else ""
        click.echo(f"{click.style(p.location(), bold=True)}: {click.style('warning', fg='yellow')}:"
                   f" {path}{p.message}", err=True)


# --------------------------------------------------------------------------- tables, JSON


def table(headers: Sequence[str], rows: Iterable[Sequence[object]]) -> None:
    rows = [[("" if v is None else str(v)) for v in row] for row in rows]
    if not sys.stdout.isatty():
        click.echo("\t".join(headers))
        for row in rows:
            click.echo("\t".join(row))
        return
    from rich.console import Console
    from rich.table import Table

    t = Table(*headers, show_edge=False, header_style="bold")
    for row in rows:
        t.add_row(*row)
    Console().print(t)


def print_json(document: Any) -> None:
    click.echo(json.dumps(document, indent=2))


# --------------------------------------------------------------------------- submissions, chains


def _time(text: str | None) -> str:
    """An API time (`...Z') to the second, as the table shows it."""
    if not text:
        return ""
    return datetime.fromisoformat(text.replace("Z", "+00:00")).isoformat(timespec="seconds")


def print_submissions(found: list[dict], total: int, offset: int) -> None:
    """A page of submission summaries (the API's shape, with chain counters)."""
    counters = dict(CHAIN_COUNTERS)
    rows = []
    for s in found:
        done = sum(s.get(counters[status], 0) for status in FINISHED_CHAIN)
        rows.append((s["id"], s["status"], s.get("name") or "",
                     f"{done}/{s.get('totalProcessChains', 0)}", _time(s.get("startTime")),
                     _time(s.get("endTime"))))
    table(["id", "status", "name", "chains done", "started", "ended"], rows)
    if total > offset + len(found):
        click.echo(f"({total} in all; --offset {offset + len(found)} for more)", err=True)


def _clock_time(text: str) -> str:
    """An API time as this machine's clock shows it: `12:03' today, else with the date."""
    moment = datetime.fromisoformat(text.replace("Z", "+00:00")).astimezone()
    same_day = moment.date() == datetime.now().astimezone().date()
    return moment.strftime("%H:%M" if same_day else "%Y-%m-%d %H:%M")


def print_unowned(unowned: dict[str, str | None]) -> None:
    """RUNNING submissions that no engine drives (`Backend.unowned'), a line each on stderr:
    nothing happens to them until an engine takes them over."""
    for submission_id, since in unowned.items():
        when = f"since {_clock_time(since)}" if since else "since it was retried"
        click.echo(f"submission {submission_id}: no engine has owned it {when}; start "
                   "`steepy worker'", err=True)


def reused_summary(total: int, reused: int) -> str:
    """`12 chains, 9 reused' (extensions 15)."""
    return f"{_plural(total, 'chain')}, {reused} reused"


def print_document(doc: dict) -> None:
    """A submission document (with its chains) or a process chain document (with its runs
    and attempts), for people."""
    if "processChains" in doc:
        _print_submission(doc)
    else:
        _print_chain(doc)


GIVEN_SHOWN = 200  # characters of a value given, at most (`--json' has it whole)


def print_given_vars(values: dict | None) -> None:
    """The values given for a workflow's variables (`--var', `--vars', the API's `vars'),
    a line each, as JSON (its text as written: `été', not `\\u00e9'); a long one cut, with
    how long it is (a list of 50,000 files is no line to read)."""
    for name, value in (values or {}).items():
        text = json.dumps(value, ensure_ascii=False)
        if len(text) > GIVEN_SHOWN:
            size = (f"{len(value):,} items" if isinstance(value, list)
                    else f"{len(text):,} characters")
            text = f"{text[:GIVEN_SHOWN]}… ({size}; --json shows it whole)"
        click.echo(f"  var {name}: {text}")


def _print_submission(doc: dict) -> None:
    click.echo(f"submission {doc['id']}  {doc['status']}  {doc.get('name') or ''}")
    for key in ("startTime", "endTime", "errorMessage"):
        if doc.get(key):
            click.echo(f"  {key}: {doc[key]}")
    print_given_vars(doc.get("vars"))
    click.echo(f"  chains: {doc['totalProcessChains']} in all, {doc['succeededProcessChains']} "
               f"succeeded, {doc['failedProcessChains']} failed, {doc['cancelledProcessChains']} "
               f"cancelled, {doc['runningProcessChains']} running, "
               f"{doc['pausedProcessChains']} paused")
    sources = _reused_sources(doc["processChains"])
    if sources:  # extensions 15
        reused = sum(sources.values())
        click.echo(f"  {reused_summary(doc['totalProcessChains'], reused)}")
        click.echo(f"  {_reused_from(sources)}")
    for var, values in (doc.get("results") or {}).items():
        click.echo(f"  result {var}: {', '.join(map(str, values))}")
    for chain in doc["processChains"]:  # extensions 10, 11: ran, and ended its chain early
        if chain.get("stopped"):
            click.echo(f"  stopped {chain['stopped']['executableId']}: "
                       f"{chain['stopped']['reason']}")
    for action_id, why in (doc.get("skippedActions") or {}).items():
        click.echo(f"  skipped {action_id}: {why}")
    # a reused chain names the chain it reused, and its submission unless the line above
    # names the one they all came from (extensions 15)
    several = len(sources) > 1
    table(["chain", "status", "runs", "executables"],
          [(c["id"], c["status"] + _reused_chain(c.get("reused"), several), c["totalRuns"],
            " ".join(e["id"] for e in c["executables"]))
           for c in doc["processChains"]])
    blocked = Counter(c["waiting"] for c in doc["processChains"] if c.get("waiting"))
    for reason, count in sorted(blocked.items()):
        click.echo(f"  {_plural(count, 'process chain')} {reason}")


SHOWN_SOURCES = 3  # submissions named in the line on where reused chains came from


def _reused_sources(chains: list[dict]) -> Counter:
    """How many of these chains reused the work of each earlier submission (by its id; ""
    for a marker without one)."""
    return Counter((c["reused"].get("submissionId") or "") if isinstance(c["reused"], dict)
                   else "" for c in chains if c.get("reused"))


def _reused_from(sources: Counter) -> str:
    """`reused from submission X', or `reused from 2 submissions: X (9 chains), Y (1
    chain)' (the most frequent first; and how many more)."""
    if len(sources) == 1:
        return f"reused from submission {next(iter(sources)) or '?'}"
    ranked = sources.most_common()
    named = ", ".join(f"{sid or '?'} ({_plural(n, 'chain')})" for sid, n in ranked[:SHOWN_SOURCES])
    more = len(ranked) - SHOWN_SOURCES
    return (f"reused from {len(ranked)} submissions: {named}"
            + (f" and {more} more" if more > 0 else ""))


def _reused_chain(marker: Any, with_submission: bool) -> str:
    """What follows a chain's status: ` (reused) from chain Y' (` (reused) from submission
    X, chain Y'); nothing for a chain that ran."""
    if not marker:
        return ""
    marker = marker if isinstance(marker, dict) else {}
    chain = f"chain {marker.get('processChainId') or '?'}"
    if with_submission:
        chain = f"submission {marker.get('submissionId') or '?'}, {chain}"
    return f" (reused) from {chain}"


def _print_chain(doc: dict) -> None:
    click.echo(f"process chain {doc['id']}  {doc['status']}  (submission {doc['submissionId']})")
    if doc.get("waiting"):
        click.echo(f"  {doc['waiting']}")
    if doc.get("reused"):  # extensions 15
        click.echo(f"  reused the work of process chain {doc['reused']['processChainId']} "
                   f"(submission {doc['reused']['submissionId']})")
    if doc.get("stopped"):  # extensions 10, 11
        click.echo(f"  stopped at {doc['stopped']['executableId']}: {doc['stopped']['reason']}")
    if doc.get("retries"):  # the chain-level policy: another run after a failed one
        click.echo(f"  chain retries: {_retries(doc['retries'])}")
    last = doc["runs"][-1] if doc["runs"] else {}
    if doc["status"] == CS.PAUSED and last.get("autoResumeAfter"):
        click.echo(f"  paused: run {last['runNumber'] + 1} is due at "
                   f"{_time(last['autoResumeAfter'])}")
    for run in doc["runs"]:
        _print_run(run)


def _retries(data: dict) -> str:
    """A retry policy in a line: `2 attempts, delay constant 300ms, jitter none; abortOn
    {"exitCodes": [2]}'."""
    from steepy.model.policies import RetryPolicy

    policy = RetryPolicy.from_json(data)
    text = f"{policy.describe_stop_rule()}, delay {policy.describe_delay_rule()}"
    for key in ("retryOn", "abortOn", "requeue"):
        if data.get(key) is not None:
            text += f"; {key} {json.dumps(data[key])}"
    return text


def _print_run(run: dict) -> None:
    status = run.get("status", CS.RUNNING)
    click.echo(f"  run {run['runNumber']}: {status} on {run['agentId']} "
               f"from {run['startTime']} to {run.get('endTime', '...')}")
    if run.get("errorMessage"):
        click.echo("    " + run["errorMessage"].replace("\n", "\n    "))
    for a in run["attempts"]:
        detail = a.get("timeoutKind") or (f"exit code {a['exitCode']}"
                                          if a["exitCode"] is not None else "")
        # what followed: the pause and the rule that chose it, or why no attempt came
        then = rule = a.get("delayRule")
        if a.get("delayMs"):
            then = f"next attempt after {a['delayMs']} ms" + (f" ({rule})" if rule else "")
        click.echo(f"    {a['executableId']} attempt {a['attempt']}: {a['outcome']} "
                   f"{detail}{'; ' + then if then else ''}")
    if run.get("autoResumeAfter"):  # a chain-level retry or re-queue paused the chain
        click.echo(f"    next run due at {_time(run['autoResumeAfter'])} (chain retry delay)")


# --------------------------------------------------------------------------- events


def event_line(event: dict) -> str:
    """One line per event, also when a message has several (tool output)."""
    detail = " ".join(f"{k}={v}" for k, v in event.items() if k not in ("id", "time", "kind"))
    return f"{event['time']}  {event['kind']:<26} {' | '.join(detail.splitlines())}"


def print_events(events: Iterable[dict]) -> None:
    """The events' lines, written at once (10,000 reused chains are 20,000 lines)."""
    lines = [event_line(e) for e in events]
    if lines:
        click.echo("\n".join(lines))
