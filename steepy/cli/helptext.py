"""The end of every command's `--help`: examples and exit codes, kept here in one table
(`HELP`) and written the same way for all (`epilog`). `add_help` gives a command its part
when the `steepy` group loads it (steepy/cli/group.py); tests/cli/test_help.py checks that
none is left without one.

The exit codes are steepy's (steepy/cli/__init__.py): 0 fine, 1 a workflow ran and failed,
2 bad input (nothing stored or run), 3 cancelled, 4 the database cannot be used, 5 steepy
itself failed."""

from __future__ import annotations

import click

DB = "the database cannot be used (full or read-only disk), or the server cannot be reached"
BUG = "steepy itself failed (a bug: the message says where)"
READS = {0: "done",
         2: "bad input: an unknown id, no database here",
         4: DB}
ASKS = {0: "requested",
        2: "an unknown id, or refused (e.g. already finished): nothing changed",
        4: DB}
CHECKS = {0: "every file is valid", 2: "a problem (each one is printed with its place)"}
STORES = {0: "stored", 2: "bad input: every problem is printed, nothing is stored", 4: DB}
RUNS = {0: "stopped cleanly (SIGTERM or Ctrl-C)",
        2: "bad input (configuration, services, macros): nothing was started", 4: DB, 5: BUG}

# the command's name (a subcommand's with its group's; "": steepy itself) -> (examples,
# exit codes)
HELP: dict[str, tuple[list[str], dict[int, str]]] = {
    "": (["steepy run hello.yaml --services services/", "steepy serve -v",
          "steepy search status:error", "steepy COMMAND --help"],
         {0: "fine", 1: "a workflow ran and failed", 2: "bad input: nothing stored or run",
          3: "cancelled", 4: DB, 5: BUG}),
    "run": (["steepy run hello.yaml --services services/",
             "steepy run hello.yaml --var 'words=hi there'",
             "steepy run hello.yaml -v --log-file run.log",
             "steepy run hello.yaml --json > result.json"],
            {0: "the workflow succeeded", 1: "it failed (ERROR or PARTIAL_SUCCESS)",
             2: "bad input: every problem is printed, nothing is stored or run",
             3: "cancelled (Ctrl-C)", 4: DB, 5: BUG}),
    "submit": (["steepy submit hello.yaml --services services/",
                "steepy submit hello.yaml --var 'words=hi there' --vars params.yaml",
                "steepy submit hello.yaml --server http://127.0.0.1:8080 --wait"],
               {**STORES, 0: "stored (with --wait: it ended in SUCCESS)",
                1: "with --wait: it ended in ERROR or PARTIAL_SUCCESS",
                3: "with --wait: it ended CANCELLED",
                130: "with --wait: Ctrl-C stopped the waiting (the submission goes on)"}),
    "wait": (["steepy wait SUBMISSION_ID", "steepy wait last", "steepy wait ID1 ID2 --server http://127.0.0.1:8080"],
             {0: "every submission ended in SUCCESS",
              1: "one ended in ERROR or PARTIAL_SUCCESS (none CANCELLED)",
              2: "an unknown id (or a process chain's): nothing was waited for",
              3: "one ended CANCELLED",
              4: DB + " (while waiting: for 5 minutes; the submissions go on there)",
              130: "Ctrl-C stopped the waiting (the submissions go on)"}),
    "worker": (["steepy worker --services services/ -v",
                "steepy worker --agents 4 --exit-when-idle --log-file worker.log"], RUNS),
    "serve": (["steepy serve --services services/ -v",
               "steepy serve --port 8081 --submit hello.yaml",
               "steepy serve --no-agents --log-level info --log-file api.log"],
              {**RUNS, 2: "bad input (configuration, services, a port in use): nothing was "
                          "started"}),
    "list": (["steepy list", "steepy list --status error --size 50",
              "steepy list --server http://127.0.0.1:8080"], READS),
    "show": (["steepy show SUBMISSION_ID", "steepy status CHAIN_ID",
              "steepy show last --json"], READS),
    "logs": (["steepy logs CHAIN_ID", "steepy logs CHAIN_ID --run 1",
              "steepy logs CHAIN_ID --follow"],
             {**READS, 0: "done (also when the run printed nothing: it has no log)",
              2: "bad input: an unknown id or run number, no database here, a server that "
                 "cannot be reached"}),
    "events": (["steepy events SUBMISSION_ID", "steepy events last"], READS),
    "report": (["steepy report SUBMISSION_ID -o report.html --trace trace.tsv",
                "steepy report SUBMISSION_ID --server http://127.0.0.1:8080"], READS),
    "search": (["steepy search status:error",
                "steepy search '\"exit code 2\"' is:processchain --size 5",
                "steepy search name:nightly start:>=2026-01-01 --json"], READS),
    "cancel": (["steepy cancel SUBMISSION_ID", "steepy cancel CHAIN_ID"], ASKS),
    "retry": (["steepy retry SUBMISSION_ID", "steepy retry last"], ASKS),
    "priority": (["steepy priority SUBMISSION_ID 10", "steepy priority CHAIN_ID -5"], ASKS),
    "notifications": (["steepy notifications", "steepy notifications --failed --json"], READS),
    "validate": (["steepy validate hello.yaml --services services/",
                  "steepy validate workflows/ services/ --macros macros/"], CHECKS),
    "services": (["steepy services", "steepy services --services services/"],
                 {0: "done", 2: "a service file has a problem"}),
    "plan": (["steepy plan hello.yaml --services services/",
              "steepy plan hello.yaml --all --json",
              "steepy plan hello.yaml --format dot > hello.dot",
              "steepy plan hello.yaml --format mermaid --chains --all",
              "steepy plan hello.yaml --resume --var 'words=hi there'"], CHECKS),
    "plugins": (["steepy plugins", "steepy plugins --json"],
                {0: "done", 2: "a plugin cannot be used (its problem is printed)"}),
    "gc": (["steepy gc --dry-run", "STEEPY_GARBAGECOLLECTOR_RETENTION_SUBMISSIONS=30d steepy gc"],
           {0: "done", 2: "no retention is set, or no database here", 4: DB}),
    "slurm-workers": (["steepy slurm-workers 4 --db postgresql+psycopg://steepy@db/steepy",
                       "steepy slurm-workers 2 --agents 8 --sbatch-args \"-p long\""],
                      {0: "submitted (one job id a line)", 1: "sbatch refused",
                       2: "bad input: no shared database, bad sbatch options"}),
    "schedule": (["steepy schedule add nightly.yaml --cron '0 3 * * *' --timezone Europe/Berlin",
                  "steepy schedule list"], READS),
    "schedule add": (["steepy schedule add nightly.yaml --cron '0 3 * * *'",
                      "steepy schedule add poll.yaml --every 15m --name poll"], STORES),
    "schedule list": (["steepy schedule list", "steepy schedule list --json"], READS),
    "schedule show": (["steepy schedule show SCHEDULE_ID"], READS),
    "schedule pause": (["steepy schedule pause SCHEDULE_ID"], ASKS),
    "schedule resume": (["steepy schedule resume SCHEDULE_ID"], ASKS),
    "schedule remove": (["steepy schedule remove SCHEDULE_ID"], ASKS),
}


def epilog(examples: list[str], exit_codes: dict[int, str]) -> str:
    """`Examples:` and `Exit codes:`, each a block that click prints as written (`\\b`)."""
    lines = "\n".join(f"  {example}" for example in examples)
    codes = "\n".join(f"  {code}  {meaning}" for code, meaning in sorted(exit_codes.items()))
    return f"Examples:\n\n\b\n{lines}\n\nExit codes:\n\n\b\n{codes}"


def add_help(command: click.Command, name: str) -> None:
    """Give `command` (registered as `name`) its examples and exit codes, and so every
    subcommand of a group (`schedule add` ...). A command under two names (`status` is
    `show`) has those of the name it was written with."""
    found = HELP.get(name) or HELP.get(command.name or "")
    if found is not None and not command.epilog:
        command.epilog = epilog(*found)
    if isinstance(command, click.Group):
        for sub_name, sub in command.commands.items():
            add_help(sub, f"{name} {sub_name}")
