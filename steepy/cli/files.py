"""Commands on files alone: validate, services, plan. Nothing is stored or run."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from steepy.cli.common import (MACROS_OPTION, NO_SERVICES, SERVICES_OPTION, checked_config,
                               checked_plugins, fail, given_vars, load_registries, prepare,
                               vars_options)
from steepy.cli.ending import exit_quickly
from steepy.cli.setup import CliSetup
from steepy.cli.output import warn
from steepy.errors import InputError, Problem

if TYPE_CHECKING:
    from steepy.model import Macro, Service, Workflow


def _summary(workflow: Workflow, macros: dict[str, Macro]) -> str:
    from steepy.documents.validation_macros import services_reached
    from steepy.model import ExecuteAction, ForEachAction, IncludeAction

    actions = list(workflow.all_actions())
    counts = {kind.__name__: sum(isinstance(a, kind) for a in actions)
              for kind in (ExecuteAction, ForEachAction, IncludeAction)}
    parts = [f"{counts['ExecuteAction']} execute"]
    if counts["ForEachAction"]:
        parts.append(f"{counts['ForEachAction']} for-each")
    if counts["IncludeAction"]:
        parts.append(f"{counts['IncludeAction']} include")
    services = services_reached(workflow.actions, macros)  # those of included macros, too
    name = f" `{workflow.name}'" if workflow.name else ""
    return (f"workflow{name}, api {workflow.api}, {', '.join(parts)} action(s); "
            f"services: {', '.join(services) or 'none'}")


def _read(path: Path):
    """The document of `path`, rendered as a template when it is a service or macro file
    that is one (Steep renders those); InputError when it cannot be read."""
    from steepy.documents.checking import document_kind
    from steepy.documents.loading import read_file, template_context

    try:
        return read_file(path)
    except InputError as plain:
        document = read_file(path, template_context())
        if document_kind(document.data) not in ("service", "macro"):
            raise plain from None
        return document


def validate_file(path: Path, services: dict[str, Service], macros: dict[str, Macro],
                  runtimes: Any = None, warnings: list[Problem] | None = None,
                  document: Any = None) -> tuple[str, Any]:
    """Check one file of any kind against the services, macros and runtimes (steepy's
    documents.validation_services.Runtimes; None: not checked); return a one-line summary
    and, for a service or macro file, what it defines (Definitions; None for a workflow),
    or raise InputError. Warnings about a valid file are added to `warnings'."""
    from steepy.documents.checking import check_macros, check_workflow, document_kind
    from steepy.documents.loading import read_definitions
    from steepy.documents.policy_checks import policy_warnings
    from steepy.documents.toolpaths import unfound_tools
    from steepy.documents.validation_macros import services_reached
    from steepy.documents.validation_services import service_file_problems

    document = _read(path) if document is None else document
    kind = document_kind(document.data)
    if warnings is not None:
        warnings += policy_warnings(document)
    if kind == "service":
        found, problems = read_definitions(str(path), "service")
        problems += service_file_problems(found, runtimes)
        if problems:
            raise InputError(problems)
        if warnings is not None:
            warnings += unfound_tools(found, found)
        return f"{len(found)} service(s): {', '.join(found)}", found
    if kind == "macro":
        built = check_macros(document, services, macros, runtimes)
        found, _ = read_definitions(str(path), "macro")
        return f"{len(built)} macro(s): {', '.join(m.id for m in built)}", found
    workflow = check_workflow(document, services, macros, runtimes)
    if warnings is not None:
        warnings += unfound_tools(services, services_reached(workflow.actions, macros))
    return _summary(workflow, macros), None


@click.command()
@click.argument("files", nargs=-1, required=True, type=click.Path())
@SERVICES_OPTION
@MACROS_OPTION
def validate(files: tuple[str, ...], services: tuple[str, ...], macros: tuple[str, ...]) -> None:
    """Check workflows (and service or macro files) and report every problem.

    The services and macros of service and macro files given here are known to the
    workflows given with them, beside the configured ones."""
    from steepy.documents.checking import document_kind
    from steepy.documents.loading import expand_paths

    setup = CliSetup()
    service_map, macro_map, problems = setup.loaded_definitions(services, macros)
    runtimes = checked_plugins().runtimes()
    paths = expand_paths(files) or [Path(f) for f in files]
    documents: dict[Path, Any] = {}
    for path in paths:
        try:
            documents[path] = _read(path)
        except InputError as e:
            problems += e.problems
    kinds = {path: document_kind(d.data) for path, d in documents.items()}
    # service files first, then macro files: what they define is known to those after them
    rank = {"service": 0, "macro": 1}
    said: dict[Path, tuple[str, list[Problem]]] = {}
    for path in sorted(documents, key=lambda p: rank.get(kinds[p], 2)):
        try:
            warnings: list[Problem] = []
            summary, found = validate_file(path, service_map, macro_map, runtimes, warnings,
                                           documents[path])
            said[path] = (summary, warnings)
        except InputError as e:
            problems += e.problems
            found = _defined(path, kinds[path])
        if found and kinds[path] == "service":
            service_map = _merged(service_map, found)
        elif found:
            macro_map = _merged(macro_map, found)
    for path in paths:  # in the order given
        if path in said:
            summary, warnings = said[path]
            click.echo(f"{click.style(str(path), bold=True)}: "
                       f"{click.style('valid', fg='green')}: {summary}")
            warn(warnings)
    setup.hint_where_definitions_come_from(service_map, macro_map)
    exit_quickly()  # all checked: the process ends without the interpreter's teardown
    if problems:
        fail(_distinct(problems))


def _defined(path: Path, kind: str) -> Any:
    """What a service or macro file (`kind') with problems still defines (a workflow:
    nothing): a workflow given with it is checked against those, not told they are
    missing."""
    from steepy.documents.loading import read_definitions

    return read_definitions(str(path), kind)[0] if kind != "workflow" else None


def _merged(known: dict, found: Any) -> Any:
    """The configured definitions with those of a file given to `validate' (which win)."""
    from steepy.documents.loading import Definitions

    out = Definitions(known)
    out.sources = dict(getattr(known, "sources", {}))
    out.update(found)
    out.sources.update(getattr(found, "sources", {}))
    return out


def _distinct(problems: list[Problem]) -> list[Problem]:
    """Each problem once: a problem of a macro file (an include cycle) is found again by
    every file that leads into it."""
    seen: set[tuple] = set()
    out = []
    for p in problems:
        key = (p.file, p.line, p.column, p.path, p.message)
        if key not in seen:
            seen.add(key)
            out.append(p)
    return out


@click.command(name="services")
@SERVICES_OPTION
def list_services(services: tuple[str, ...]) -> None:
    """List the services workflows can use."""
    service_map, _ = load_registries(services, ())
    if not service_map:
        click.echo(NO_SERVICES)
        return
    rows = []
    for s in service_map.values():
        params = " ".join(f"{p.id}{'>' if p.type == 'output' else ''}[{p.cardinality}]"
                          for p in s.parameters)
        rows.append((s.id, s.runtime, s.path, params, s.name))
    from steepy.cli.output import table

    table(["id", "runtime", "path", "parameters (> = output)", "name"], rows)



@click.command()
@click.argument("workflow_file", metavar="WORKFLOW", type=click.Path())
@SERVICES_OPTION
@MACROS_OPTION
@vars_options
@click.option("--all", "whole", is_flag=True,
              help="Simulate the whole workflow, feeding back the outputs chains would write.")
@click.option("--json", "as_json", is_flag=True, help="Print the chains as JSON (a list per step).")
@click.option("--format", "fmt", type=click.Choice(["text", "dot", "mermaid"]), default=None,
              help="Print a graph instead: the actions and the variables connecting them, as "
                   "text, Graphviz DOT or a Mermaid flowchart.")
@click.option("--chains", is_flag=True,
              help="With --format: a graph of the process chains and what they read of each "
                   "other's outputs.")
@click.option("--resume", is_flag=True,
              help="Say which chains a submission with --resume would reuse, and why each "
                   "other one would run (reads the database).")
@click.option("--db", help="With --resume: the database URL "
                           "(default: sqlite:///.steepy/steepy.db).")
def plan(workflow_file: str, services, macros, var_options, vars_files, whole: bool,
         as_json: bool, fmt: str | None, chains: bool, resume: bool, db: str | None) -> None:
    """Show the process chains a workflow turns into, without running anything (with
    --var/--vars: with those values, checked as `steepy run' checks them)."""
    import json as jsonlib

    from steepy.errors import SteepyError
    from steepy.generator import ProcessChainGenerator, simulate
    from steepy.generator.graph import action_graph, chain_graph
    from steepy.cli.graphs import render

    if chains and fmt is None:
        fail([Problem("draws a graph: give --format text, dot or mermaid too", file="--chains")])
    if fmt is not None and as_json:
        fail([Problem("--format and --json each choose the output: give one of them",
                      file="--format")])
    if resume and fmt is not None:
        fail([Problem("--resume says what would run: not with --format", file="--resume")])
    submission, service_map, macro_map = prepare(workflow_file, services, macros,
                                                 given_vars(var_options, vars_files))
    if resume:
        from steepy.cli.planresume import plan_resumed

        plan_resumed(workflow_file, submission.workflow, service_map, macro_map, whole,
                     as_json, db)
        return
    if fmt is not None and not chains:
        click.echo(render(action_graph(submission.workflow), fmt))
        return
    config = checked_config()
    tmp, out = (str(Path(config[k]).absolute() / "PLAN") for k in ("tmpPath", "outPath"))
    try:
        if whole:
            steps = simulate(submission.workflow, service_map, macro_map, tmp, out)
            finished = steps.finished
        else:
            generator = ProcessChainGenerator(submission.workflow, tmp, out, service_map, macro_map)
            steps, finished = [generator.generate()], None
    except SteepyError as e:
        fail([Problem(str(e), file=workflow_file)])
    if fmt is not None:
        click.echo(render(chain_graph(steps), fmt))
    elif as_json:
        click.echo(jsonlib.dumps([[c.to_json() for c in step] for step in steps], indent=2))
    else:
        _print_steps(steps)
    if finished is False:
        click.echo("The workflow would not finish: some action never gets its inputs.", err=True)


def _print_steps(steps: list) -> None:
    import shlex

    from steepy.runtimes import DIRECT, argument_list
    from steepy.runtimes.other import other_argv

    for number, step in enumerate(steps, 1):
        click.echo(click.style(f"step {number}: {len(step)} process chain(s)", bold=True))
        for chain in step:
            extra = [f"priority {chain.priority}"] if chain.priority else []
            if chain.required_capabilities:
                extra.append("requires " + ", ".join(chain.required_capabilities))
            click.echo(f"  chain {chain.id}" + (f" ({'; '.join(extra)})" if extra else ""))
            for exe in chain.executables:
                line = (shlex.join(other_argv(exe)) if exe.runtime == DIRECT else
                        f"[{exe.runtime}] {exe.path} {shlex.join(argument_list(exe.arguments))}")
                click.echo(f"    {exe.id}: {line}")
