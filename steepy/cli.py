"""The `steepy` command line.

Exit codes: 0 fine, 1 a workflow ran and failed, 2 bad input (nothing stored or run),
3 cancelled.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from steepy import __version__
from steepy.config import DEFAULTS, load_config
from steepy.errors import InputError, Problem
from steepy.loading import expand_paths, read_file, read_macros, read_services
from steepy.model import ExecuteAction, ForEachAction, IncludeAction, Macro, Service, Workflow

EXIT_INVALID = 2


def _fail(problems: list[Problem]) -> None:
    """Print every problem, in file order, and stop with exit code 2."""
    problems = sorted(problems, key=lambda p: (p.file or "", p.line or 0, p.column or 0))
    for p in problems:
        location = click.style(p.location(), bold=True)
        path = click.style(p.path, fg="cyan") + ": " if p.path else ""
        click.echo(f"{location}: {path}{p.message}", err=True)
    files = {p.file for p in problems}
    click.echo(click.style(f"{len(problems)} problem{'s' if len(problems) != 1 else ''}", fg="red")
               + f" in {len(files)} file{'s' if len(files) != 1 else ''}", err=True)
    sys.exit(EXIT_INVALID)


def _registry(option: tuple[str, ...], key: str, reader) -> dict[str, Any]:
    """Services or macros from the options, else from steepy.yaml or the default folder."""
    if option:
        return reader(list(option))
    spec = load_config().get(key)
    if not spec or (spec == DEFAULTS[key] and not Path(spec).exists()):
        return {}  # the default folder is optional
    return reader(spec)


def load_registries(services: tuple[str, ...], macros: tuple[str, ...]) -> tuple[dict, dict]:
    problems: list[Problem] = []
    found: list[dict] = []
    for option, key, reader in ((services, "services", read_services), (macros, "macros", read_macros)):
        try:
            found.append(_registry(option, key, reader))
        except InputError as e:
            problems += e.problems
            found.append({})
    if problems:
        _fail(problems)
    return found[0], found[1]


def _kind_of(data: Any) -> str:
    """Guess what a file holds: a workflow, a list of services, or a macro."""
    first = data[0] if isinstance(data, list) and data else data
    if isinstance(first, dict) and "path" in first and "runtime" in first:
        return "service"
    if isinstance(first, dict) and "id" in first and "parameters" in first and "actions" in first:
        return "macro"
    return "workflow"


def _summary(workflow: Workflow) -> str:
    actions = list(workflow.all_actions())
    counts = {kind.__name__: sum(isinstance(a, kind) for a in actions)
              for kind in (ExecuteAction, ForEachAction, IncludeAction)}
    parts = [f"{counts['ExecuteAction']} execute"]
    if counts["ForEachAction"]:
        parts.append(f"{counts['ForEachAction']} for-each")
    if counts["IncludeAction"]:
        parts.append(f"{counts['IncludeAction']} include")
    services = sorted({a.service for a in actions if isinstance(a, ExecuteAction)})
    name = f" `{workflow.name}'" if workflow.name else ""
    return (f"workflow{name}, api {workflow.api}, {', '.join(parts)} action(s); "
            f"services: {', '.join(services) or 'none'}")


def validate_file(path: Path, services: dict[str, Service], macros: dict[str, Macro]) -> str:
    """Check one file of any kind; return a one-line summary or raise InputError."""
    from steepy.loading import check_schema, workflow_from_document
    from steepy.validation import validate_macro, validate_workflow

    document = read_file(path)
    kind = _kind_of(document.data)
    if kind == "service":
        found = read_services(str(path))
        return f"{len(found)} service(s): {', '.join(found)}"
    if kind == "macro":
        macro_list = document.data if isinstance(document.data, list) else [document.data]
        problems: list[Problem] = []
        check_schema(document, "macro")
        for i, item in enumerate(macro_list):
            base = (i,) if isinstance(document.data, list) else ()
            macro = Macro.from_json(item, base)
            problems += [document.locate(p, base) for p in
                         validate_macro(macro, macros={**macros, macro.id: macro}, services=services)]
        if problems:
            raise InputError(problems)
        return f"{len(macro_list)} macro(s): {', '.join(str(m.get('id')) for m in macro_list)}"
    workflow, document = workflow_from_document(document)
    problems = validate_workflow(workflow, macros=macros, services=services)
    if problems:
        raise document.fail(problems)
    return _summary(workflow)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="steepy")
def main() -> None:
    """steepy: run scientific workflows of command-line tools (Steep-compatible)."""


@main.command()
@click.argument("files", nargs=-1, required=True, type=click.Path())
@click.option("--services", "-s", multiple=True, help="Service metadata: file, folder or glob.")
@click.option("--macros", "-m", multiple=True, help="Macros: file, folder or glob.")
def validate(files: tuple[str, ...], services: tuple[str, ...], macros: tuple[str, ...]) -> None:
    """Check workflows (and service or macro files) and report every problem."""
    service_map, macro_map = load_registries(services, macros)
    problems: list[Problem] = []
    paths = expand_paths(files) or [Path(f) for f in files]
    for path in paths:
        try:
            summary = validate_file(path, service_map, macro_map)
            click.echo(f"{click.style(str(path), bold=True)}: {click.style('valid', fg='green')}: {summary}")
        except InputError as e:
            problems += e.problems
    if problems:
        _fail(problems)


@main.command(name="services")
@click.option("--services", "-s", multiple=True, help="Service metadata: file, folder or glob.")
def list_services(services: tuple[str, ...]) -> None:
    """List the services workflows can use."""
    service_map, _ = load_registries(services, ())
    if not service_map:
        click.echo("No services found (use --services PATH or a services/ folder).")
        return
    rows = []
    for s in service_map.values():
        params = " ".join(f"{p.id}{'>' if p.type == 'output' else ''}[{p.cardinality}]"
                          for p in s.parameters)
        rows.append((s.id, s.runtime, s.path, params, s.name))
    from steepy.output import table

    table(["id", "runtime", "path", "parameters (> = output)", "name"], rows)


# ---------------------------------------------------------------- running workflows

EXIT_CODES = {"SUCCESS": 0, "ERROR": 1, "PARTIAL_SUCCESS": 1, "CANCELLED": 3}


def _db_url(option: str | None) -> str | None:
    import os

    return option or os.environ.get("STEEPY_DB_URL") or load_config().get("db.url")


def _open_registry(db: str | None):
    from steepy.errors import SteepyError
    from steepy.registry import open_registry

    try:
        return open_registry(_db_url(db))
    except SteepyError as e:
        _fail([Problem(str(e), file="--db")])


def _settings(agents: int | None):
    from steepy.agent import AgentConfig
    from steepy.durations import DurationError, parse_duration
    from steepy.engine import EngineSettings

    config = load_config()
    durations = {}
    for key in ("agent.killGracePeriod", "controller.heartbeatInterval", "controller.leaseTimeout",
                "scheduler.lookupInterval"):
        try:
            durations[key] = parse_duration(str(config.get(key)))
        except DurationError as e:
            _fail([Problem(f"{key}: {e}", file=config.source or "configuration")])
    grace = durations["agent.killGracePeriod"]
    agent = AgentConfig(kill_grace_period_ms=grace,
                        output_lines_to_collect=int(config.get("agent.outputLinesToCollect") or 100),
                        log_dir=Path(config.get("logs.processChains.path") or "logs/processchains"),
                        tmp_path=str(Path(config["tmpPath"]).absolute()))
    return EngineSettings(tmp_path=config["tmpPath"], out_path=config["outPath"],
                          agents=agents or int(config.get("agent.instances") or 0),
                          capabilities=list(config.get("agent.capabilities") or []), agent=agent,
                          heartbeat_s=durations["controller.heartbeatInterval"] / 1000,
                          lease_s=durations["controller.leaseTimeout"] / 1000,
                          sweep_s=durations["scheduler.lookupInterval"] / 1000)


def _prepare(workflow_file: str, services: tuple[str, ...], macros: tuple[str, ...]):
    """Read and check a workflow; exit 2 with every problem before anything is stored."""
    from steepy.loading import workflow_from_document
    from steepy.model import Submission
    from steepy.model.submission import MissingMacroError, collect_required_capabilities
    from steepy.validation import validate_workflow
    from steepy.ids import unique_id

    service_map, macro_map = load_registries(services, macros)
    try:
        workflow, document = workflow_from_document(read_file(workflow_file))
    except InputError as e:
        _fail(e.problems)
    problems = validate_workflow(workflow, macros=macro_map, services=service_map)
    if problems:
        _fail(document.fail(problems).problems)
    try:
        caps = collect_required_capabilities(workflow, service_map, macro_map)
    except MissingMacroError as e:
        _fail([Problem(str(e), file=workflow_file)])
    submission = Submission(id=unique_id(), workflow=workflow, name=workflow.name,
                            priority=workflow.priority, required_capabilities=caps, source=document.text)
    return submission, service_map, macro_map


def _print_events(registry, submission_id: str, after: int) -> int:
    for e in registry.events(submission_id, after):
        after = e["id"]
        detail = " ".join(f"{k}={v}" for k, v in e.items() if k not in ("id", "time", "kind"))
        click.echo(f"{e['time']}  {e['kind']:<26} {detail}")
    return after


def submission_document(registry, submission_id: str) -> dict:
    """A submission with its chains, their runs and attempts, as one JSON object."""
    submission = registry.get_submission(submission_id)
    out = submission.to_json(with_workflow=False)
    counts = registry.chain_counts(submission_id)
    out["totalProcessChains"] = sum(counts.values())
    for status, key in (("RUNNING", "running"), ("PAUSED", "paused"), ("CANCELLED", "cancelled"),
                        ("SUCCESS", "succeeded"), ("ERROR", "failed")):
        out[f"{key}ProcessChains"] = counts.get(status, 0)
    chains, _ = registry.list_chains(submission_id)
    out["processChains"] = [chain_document(registry, c) for c in reversed(chains)]
    return out


def chain_document(registry, record) -> dict:
    out = record.chain.to_json()
    out.update(submissionId=record.submission_id, status=str(record.status))
    if record.results is not None:
        out["results"] = record.results
    runs = registry.runs(record.chain.id)
    out["runs"] = [dict(r.to_json(), attempts=registry.attempts(record.chain.id, r.run_number))
                   for r in runs]
    out["totalRuns"] = len(runs)
    return out


@main.command()
@click.argument("workflow_file", metavar="WORKFLOW", type=click.Path())
@click.option("--services", "-s", multiple=True, help="Service metadata: file, folder or glob.")
@click.option("--macros", "-m", multiple=True, help="Macros: file, folder or glob.")
@click.option("--db", help="Database URL (default: sqlite:///.steepy/steepy.db).")
@click.option("--agents", type=int, help="Local agents, i.e. chains run in parallel (default: cores).")
@click.option("--json", "as_json", is_flag=True, help="Print the final submission as JSON.")
def run(workflow_file: str, services, macros, db, agents, as_json: bool) -> None:
    """Submit a workflow and run it to the end in this process."""
    import asyncio
    import json as jsonlib
    import signal

    from steepy.engine import Engine

    submission, service_map, macro_map = _prepare(workflow_file, services, macros)
    registry = _open_registry(db)
    registry.add_submission(submission)
    if not as_json:
        click.echo(f"submission {submission.id}")

    async def main_loop() -> None:
        engine = Engine(registry, service_map, macro_map, _settings(agents))
        loop = asyncio.get_running_loop()

        def interrupt() -> None:  # Ctrl-C: cancel the submission, let the engine finish it
            click.echo("cancelling ...", err=True)
            registry.cancel_submission(submission.id)
            engine.scheduler.wake()

        loop.add_signal_handler(signal.SIGINT, interrupt)
        loop.add_signal_handler(signal.SIGTERM, interrupt)
        seen = [0]

        async def follow() -> None:
            while True:
                seen[0] = await asyncio.to_thread(_print_events, registry, submission.id, seen[0])
                await asyncio.sleep(0.2)

        printer = None if as_json else asyncio.create_task(follow())
        try:
            await engine.run(until_submission=submission.id)
        finally:
            if printer is not None:
                printer.cancel()
                _print_events(registry, submission.id, seen[0])  # the last lines

    asyncio.run(main_loop())
    final = registry.get_submission(submission.id)
    if as_json:
        click.echo(jsonlib.dumps(submission_document(registry, submission.id), indent=2))
    else:
        message = f" ({final.error_message})" if final.error_message else ""
        click.echo(f"submission {final.id}: {final.status}{message}")
    sys.exit(EXIT_CODES.get(str(final.status), 1))


DB_OPTION = click.option("--db", help="Database URL (default: sqlite:///.steepy/steepy.db).")


@main.command()
@click.argument("workflow_file", metavar="WORKFLOW", type=click.Path())
@click.option("--services", "-s", multiple=True, help="Service metadata: file, folder or glob.")
@click.option("--macros", "-m", multiple=True, help="Macros: file, folder or glob.")
@DB_OPTION
def submit(workflow_file: str, services, macros, db) -> None:
    """Store a workflow as ACCEPTED; a `steepy worker' runs it. Prints the new id last."""
    submission, _, _ = _prepare(workflow_file, services, macros)
    _open_registry(db).add_submission(submission)
    click.echo(f"submitted {submission.id}")


@main.command()
@click.option("--services", "-s", multiple=True, help="Service metadata: file, folder or glob.")
@click.option("--macros", "-m", multiple=True, help="Macros: file, folder or glob.")
@DB_OPTION
@click.option("--agents", type=int, help="Local agents, i.e. chains run in parallel (default: cores).")
@click.option("--exit-when-idle", is_flag=True, help="Stop once nothing is left to do.")
def worker(services, macros, db, agents, exit_when_idle: bool) -> None:
    """Run everything in the database until stopped (SIGTERM or Ctrl-C stop cleanly)."""
    import asyncio
    import signal

    from steepy.engine import Engine

    service_map, macro_map = load_registries(services, macros)
    registry = _open_registry(db)

    async def main_loop() -> None:
        engine = Engine(registry, service_map, macro_map, _settings(agents))
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, engine.stop.set)
        if exit_when_idle:
            async def watch() -> None:
                while not engine.stop.is_set():
                    await asyncio.sleep(0.5)
                    idle = not engine.controller.tasks and not engine.scheduler.busy
                    if idle and not any([await asyncio.to_thread(registry.submission_ids, status)
                                         for status in ("ACCEPTED", "RUNNING")]):
                        engine.stop.set()
            asyncio.create_task(watch())
        click.echo(f"worker {engine.owner} with {len(engine.agents)} agent(s)", err=True)
        await engine.run()

    asyncio.run(main_loop())


@main.command(name="list")
@click.option("--status", help="Only submissions with this status.")
@click.option("--size", default=20, show_default=True)
@click.option("--offset", default=0)
@DB_OPTION
def list_submissions(status, size: int, offset: int, db) -> None:
    """List submissions, newest first."""
    from steepy.output import table

    registry = _open_registry(db)
    found, total = registry.list_submissions(status=status.upper() if status else None,
                                             size=size, offset=offset)
    rows = []
    for s in found:
        counts = registry.chain_counts(s.id)
        done = sum(counts.get(k, 0) for k in ("SUCCESS", "ERROR", "CANCELLED"))
        rows.append((s.id, s.status, s.name or "", f"{done}/{sum(counts.values())}",
                     s.start_time.isoformat(timespec="seconds") if s.start_time else "",
                     s.end_time.isoformat(timespec="seconds") if s.end_time else ""))
    table(["id", "status", "name", "chains done", "started", "ended"], rows)
    if total > offset + len(found):
        click.echo(f"({total} in all; --offset {offset + len(found)} for more)", err=True)


@main.command()
@click.argument("item_id", metavar="ID")
@click.option("--json", "as_json", is_flag=True, help="One JSON object (its `status' is the item's).")
@DB_OPTION
def show(item_id: str, as_json: bool, db) -> None:
    """Show a submission (with its chains) or a process chain (with runs and attempts)."""
    import json as jsonlib

    registry = _open_registry(db)
    if registry.get_submission(item_id) is not None:
        document = submission_document(registry, item_id)
    elif (record := registry.get_chain(item_id)) is not None:
        document = chain_document(registry, record)
    else:
        click.echo(f"No submission or process chain with the id `{item_id}'.", err=True)
        sys.exit(EXIT_INVALID)
    if as_json:
        click.echo(jsonlib.dumps(document, indent=2))
        return
    _print_document(document)


def _print_document(doc: dict) -> None:
    from steepy.output import table

    if "processChains" in doc:
        click.echo(f"submission {doc['id']}  {doc['status']}  {doc.get('name') or ''}")
        for key in ("startTime", "endTime", "errorMessage"):
            if doc.get(key):
                click.echo(f"  {key}: {doc[key]}")
        click.echo(f"  chains: {doc['totalProcessChains']} in all, {doc['succeededProcessChains']} "
                   f"succeeded, {doc['failedProcessChains']} failed, {doc['cancelledProcessChains']} "
                   f"cancelled, {doc['runningProcessChains']} running, {doc['pausedProcessChains']} paused")
        for var, values in (doc.get("results") or {}).items():
            click.echo(f"  result {var}: {', '.join(map(str, values))}")
        table(["chain", "status", "runs", "executables"],
              [(c["id"], c["status"], c["totalRuns"], " ".join(e["id"] for e in c["executables"]))
               for c in doc["processChains"]])
        return
    click.echo(f"process chain {doc['id']}  {doc['status']}  (submission {doc['submissionId']})")
    for run in doc["runs"]:
        click.echo(f"  run {run['runNumber']}: {run.get('status', 'RUNNING')} on {run['agentId']} "
                   f"from {run['startTime']} to {run.get('endTime', '...')}")
        if run.get("errorMessage"):
            click.echo("    " + run["errorMessage"].replace("\n", "\n    "))
        for a in run["attempts"]:
            detail = a.get("timeout") or (f"exit code {a['exitCode']}" if a["exitCode"] is not None else "")
            delay = f", next attempt after {a['delayMs']} ms" if a.get("delayMs") else ""
            click.echo(f"    {a['executableId']} attempt {a['attempt']}: {a['outcome']} {detail}{delay}")


@main.command()
@click.argument("chain_id")
@click.option("--run", "run_number", type=int, help="Run number (default: the latest).")
@click.option("--follow", "-f", is_flag=True, help="Keep printing new lines while the chain runs.")
@DB_OPTION
def logs(chain_id: str, run_number: int | None, follow: bool, db) -> None:
    """Print the output of a process chain's run."""
    import time

    from steepy.agent import log_path

    registry = _open_registry(db)
    record = registry.get_chain(chain_id)
    if record is None:
        click.echo(f"No process chain with the id `{chain_id}'.", err=True)
        sys.exit(EXIT_INVALID)
    runs = registry.runs(chain_id)
    if not runs:
        click.echo(f"Process chain `{chain_id}' has not run yet ({record.status}).", err=True)
        sys.exit(EXIT_INVALID)
    number = run_number or runs[-1].run_number
    settings = _settings(None)
    path = log_path(settings.agent.log_dir, chain_id, number, settings.agent.log_group_by_prefix)
    if not path.exists():
        click.echo(f"No log of run {number} of `{chain_id}' at {path}.", err=True)
        sys.exit(EXIT_INVALID)
    with open(path, "rb") as f:
        while True:
            chunk = f.read()
            if chunk:
                click.echo(chunk.decode("utf-8", "replace"), nl=False)
            elif not follow or registry.get_chain(chain_id).status.finished:
                break
            else:
                time.sleep(0.2)


@main.command()
@click.argument("item_id", metavar="ID")
@DB_OPTION
def cancel(item_id: str, db) -> None:
    """Cancel a submission or a single process chain."""
    registry = _open_registry(db)
    before, running = registry.cancel_submission(item_id)
    if before is None:
        before = registry.cancel_chain(item_id)
        if before is None:
            click.echo(f"No submission or process chain with the id `{item_id}'.", err=True)
            sys.exit(EXIT_INVALID)
        click.echo(f"process chain {item_id}: cancel requested (was {before})")
        return
    if before not in ("ACCEPTED", "RUNNING"):
        click.echo(f"Submission `{item_id}' has already finished ({before}); nothing to cancel.",
                   err=True)
        sys.exit(EXIT_INVALID)
    click.echo(f"submission {item_id}: cancel requested (was {before}; {len(running)} running "
               "chain(s) are being stopped)")


@main.command()
@click.argument("submission_id")
@DB_OPTION
def retry(submission_id: str, db) -> None:
    """Run the failed and cancelled chains of a finished submission again."""
    registry = _open_registry(db)
    before = registry.retry_submission(submission_id)
    if before is None:
        click.echo(f"No submission with the id `{submission_id}'.", err=True)
        sys.exit(EXIT_INVALID)
    if before not in ("ERROR", "PARTIAL_SUCCESS", "CANCELLED"):
        click.echo(f"Submission `{submission_id}' is {before}; only ERROR, PARTIAL_SUCCESS and "
                   "CANCELLED submissions can be retried.", err=True)
        sys.exit(EXIT_INVALID)
    click.echo(f"submission {submission_id}: RUNNING again (was {before}); a worker picks it up")


@main.command(name="events")
@click.argument("submission_id")
@DB_OPTION
def show_events(submission_id: str, db) -> None:
    """Print the timeline of a submission."""
    registry = _open_registry(db)
    if registry.get_submission(submission_id) is None:
        click.echo(f"No submission with the id `{submission_id}'.", err=True)
        sys.exit(EXIT_INVALID)
    _print_events(registry, submission_id, 0)


if __name__ == "__main__":
    main()


@main.command()
@click.argument("workflow_file", metavar="WORKFLOW", type=click.Path())
@click.option("--services", "-s", multiple=True, help="Service metadata: file, folder or glob.")
@click.option("--macros", "-m", multiple=True, help="Macros: file, folder or glob.")
@click.option("--all", "whole", is_flag=True,
              help="Simulate the whole workflow, feeding back the outputs chains would write.")
@click.option("--json", "as_json", is_flag=True, help="Print the chains as JSON (a list per step).")
def plan(workflow_file: str, services, macros, whole: bool, as_json: bool) -> None:
    """Show the process chains a workflow turns into, without running anything."""
    import json as jsonlib
    import shlex

    from steepy.agent.runtimes import argument_list, other_argv
    from steepy.errors import SteepyError
    from steepy.generator import ProcessChainGenerator, simulate

    submission, service_map, macro_map = _prepare(workflow_file, services, macros)
    config = load_config()
    tmp, out = (str(Path(config[k]).absolute() / "PLAN") for k in ("tmpPath", "outPath"))
    try:
        if whole:
            steps = simulate(submission.workflow, service_map, macro_map, tmp, out)
            finished = steps.finished
        else:
            generator = ProcessChainGenerator(submission.workflow, tmp, out, service_map, macro_map)
            steps, finished = [generator.generate()], None
    except SteepyError as e:
        _fail([Problem(str(e), file=workflow_file)])
    if as_json:
        click.echo(jsonlib.dumps([[c.to_json() for c in step] for step in steps], indent=2))
        return
    for number, step in enumerate(steps, 1):
        click.echo(click.style(f"step {number}: {len(step)} process chain(s)", bold=True))
        for chain in step:
            extra = [f"priority {chain.priority}"] if chain.priority else []
            if chain.required_capabilities:
                extra.append("requires " + ", ".join(chain.required_capabilities))
            click.echo(f"  chain {chain.id}" + (f" ({'; '.join(extra)})" if extra else ""))
            for exe in chain.executables:
                line = (shlex.join(other_argv(exe)) if exe.runtime == "other" else
                        f"[{exe.runtime}] {exe.path} {shlex.join(argument_list(exe.arguments))}")
                click.echo(f"    {exe.id}: {line}")
    if finished is False:
        click.echo("The workflow would not finish: some action never gets its inputs.", err=True)
