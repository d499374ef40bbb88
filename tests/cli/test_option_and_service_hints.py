"""Messages of the schedule commands (issue 26, defect 12) and the hint where services come
from (defect 14), in-process."""

from __future__ import annotations

import re

import pytest
from click.testing import CliRunner

from steepy.cli import main
from tests.conftest import ROOT

WORKFLOW = """\
api: 4.7.0
name: nap
actions:
  - {id: nap, type: execute, service: sleep, inputs: [{id: seconds, value: 0.1}]}
"""
WHERE = ("give `--services DIR' (a file, folder or glob), set `services' in steepy.yaml "
         "(Steep's `steep.services'), or put service files in a `services/' folder.")
HINT = "To load services, " + WHERE  # after "No services are configured." of a failure
NONE = "No services were loaded: " + WHERE  # `steepy services


@pytest.fixture
def here(tmp_path, monkeypatch):
    """An empty folder as the working directory: no steepy.yaml, no services/."""
    monkeypatch.chdir(tmp_path)
    for name in ("STEEPY_DB_URL", "STEEPY_SERVER", "STEEPY_SERVICES"):
        monkeypatch.delenv(name, raising=False)
    (tmp_path / "w.yaml").write_text(WORKFLOW)
    return tmp_path


def _invoke(*args: str):
    return CliRunner().invoke(main, list(args), prog_name="steepy", catch_exceptions=False)


@pytest.mark.parametrize("trigger, how", [
    ((), "neither was given"),
    (("--cron", "0 3 * * *", "--every", "1h"), "not both")])
def test_a_missing_or_double_trigger_is_an_option_error(here, trigger, how) -> None:
    result = _invoke("schedule", "add", "w.yaml", "-s", str(ROOT / "services"), *trigger)
    assert result.exit_code == 2
    assert result.stderr.splitlines() == [
        f"--cron/--every: give either a cron expression or an interval; {how}",
        "1 problem in the options; `steepy schedule add -h' lists them"]
    assert not (here / ".steepy").exists()  # nothing stored


def test_schedule_list_shows_the_next_fire_time_in_its_time_zone(here) -> None:
    added = _invoke("schedule", "add", "w.yaml", "-s", str(ROOT / "services"),
                    "--cron", "0 3 * * *", "--timezone", "Europe/Berlin")
    assert added.exit_code == 0, added.output
    pattern = r"nap: cron 0 3 \* \* \* \(Europe/Berlin\), next \d{4}-\d\d-\d\d 03:00:00 Europe/Berlin"
    assert re.search(pattern, added.stdout), added.stdout
    listed = _invoke("schedule", "list")
    assert re.search(pattern, listed.stdout), listed.stdout
    every = _invoke("schedule", "add", "w.yaml", "-s", str(ROOT / "services"), "--every", "1h")
    assert re.search(r"every 1h \(UTC\), next \S+ \S+ UTC$", every.stdout.strip()), every.stdout


def test_no_services_names_where_they_come_from(here) -> None:
    for command in (["submit", "w.yaml"], ["validate", "w.yaml"], ["run", "w.yaml"]):
        result = _invoke(*command)
        assert result.exit_code == 2
        lines = result.stderr.splitlines()
        assert lines[0].startswith("w.yaml:4:")
        assert lines[-2:] == [HINT, "1 problem in 1 file"], result.stderr
    assert _invoke("services").stdout == NONE + "\n"
    assert not (here / ".steepy").exists()

    # with services given, a workflow naming a service that is not among them gets no hint
    (here / "w.yaml").write_text(WORKFLOW.replace("service: sleep", "service: nope"))
    result = _invoke("submit", "w.yaml", "-s", str(ROOT / "services"))
    assert result.exit_code == 2 and WHERE not in result.stderr


INCLUDING = """\
api: 4.7.0
actions:
  - {type: include, macro: nap_twice, inputs: [{id: seconds, value: 0}]}
"""
MACRO = """\
id: nap_twice
name: nap twice
description: sleeps twice
parameters:
  - {id: seconds, name: seconds, description: how long, type: input}
actions:
  - {type: execute, service: sleep, inputs: [{id: seconds, var: seconds}]}
  - {type: execute, service: sleep, inputs: [{id: seconds, var: seconds}]}
"""


def test_validate_knows_the_macros_and_services_of_the_files_given_with_a_workflow(here):
    """`steepy validate workflows/ macros/ services/': what the macro and service files
    define is known to the workflows (the user has just given them); alone, a workflow that
    includes a macro none defines hears where macros come from."""
    (here / "i.yaml").write_text(INCLUDING)
    (here / "m.yaml").write_text(MACRO)
    alone = _invoke("validate", "i.yaml", "-s", str(ROOT / "services"))
    assert alone.exit_code == 2
    assert alone.stderr.splitlines() == [
        "i.yaml:3:28: actions[0].macro: Macro `nap_twice' not found. No macros are configured.",
        "To load macros, give `--macros DIR' (a file, folder or glob), set `macros' in "
        "steepy.yaml (Steep's `steep.macros'), or put macro files in a `macros/' folder.",
        "1 problem in 1 file"]
    together = _invoke("validate", "i.yaml", "m.yaml", str(ROOT / "services" / "coreutils.yaml"))
    assert together.exit_code == 0, together.output
    lines = together.stdout.splitlines()  # in the order given
    assert [line.split(":")[0] for line in lines] == [
        "i.yaml", "m.yaml", str(ROOT / "services" / "coreutils.yaml")]
    assert "1 macro(s): nap_twice" in lines[1] and "services: sleep" in lines[0]


def test_validate_reports_unreadable_services_and_macros_and_goes_on(here):
    """Every problem at once: a --macros path that cannot be read does not hide the files'
    own problems."""
    result = _invoke("validate", "missing.yaml", "w.yaml", "--services", "nothere",
                     "--macros", "nomacros")
    assert result.exit_code == 2
    lines = result.stderr.splitlines()
    assert lines[:3] == ["missing.yaml: cannot read file: No such file or directory",
                         "nomacros: cannot read file: No such file or directory",
                         "nothere: cannot read file: No such file or directory"], lines
    assert lines[3].startswith("w.yaml:4:") and "Service `sleep' is not defined" in lines[3]


@pytest.mark.parametrize("command", ["run", "submit", "plan"])
def test_a_service_or_macro_file_given_as_a_workflow_says_what_it_is(here, command):
    (here / "m.yaml").write_text(MACRO)
    services = ROOT / "services" / "coreutils.yaml"
    for given, what, option in ((str(services), "service metadata", "--services FILE"),
                                ("m.yaml", "macros", "--macros FILE")):
        result = _invoke(command, given, "-s", str(services))
        assert result.exit_code == 2
        first = result.stderr.splitlines()[0]
        assert first.startswith(f"{given}:") and f"this file holds {what}, not a workflow" in first
        assert f"`{option}'" in first and len(result.stderr.splitlines()) == 2, result.stderr
    assert not (here / ".steepy").exists()


def test_a_folder_steepy_yaml_names_that_cannot_be_read_is_said_at_its_key(here, monkeypatch):
    """`services: nothere/' in steepy.yaml: the problem is the configuration's line, not a
    file `nothere' the user never typed on the command line; from a variable, the variable."""
    (here / "steepy.yaml").write_text("services: nothere/\nmacros: [m.yaml, gone/]\n")
    result = _invoke("validate", "w.yaml")
    assert result.exit_code == 2
    assert result.stderr.splitlines()[:3] == [
        "steepy.yaml:1:11: services: `nothere/': cannot read file: No such file or directory",
        "steepy.yaml:2:10: macros[0]: `m.yaml': cannot read file: No such file or directory",
        "steepy.yaml:2:18: macros[1]: `gone/': cannot read file: No such file or directory"]
    monkeypatch.setenv("STEEPY_SERVICES", "elsewhere")
    result = _invoke("services")
    assert result.exit_code == 2
    assert result.stderr.splitlines()[0] == (
        "$STEEPY_SERVICES: services: `elsewhere': cannot read file: No such file or directory")


def test_validate_warns_of_a_tool_this_machine_does_not_have(here):
    """A misspelt tool (`samtoolz') passed `validate' and failed only when it ran. A
    warning, not an error (exit 0): a worker on another machine may have the tool; a tool
    in a container, a Python environment or an environment module is not looked for."""
    (here / "s.yaml").write_text("""\
- {id: samtools, name: s, description: s, path: samtoolz, runtime: other, parameters: []}
- {id: here, name: h, description: h, path: sh, runtime: other, parameters: []}
- {id: boxed, name: b, description: b, path: samtoolz, runtime: docker, parameters: []}
- {id: loaded, name: l, description: l, path: samtoolz, runtime: other, parameters: [],
   modules: [samtools/1.19]}
""")
    (here / "w2.yaml").write_text("api: 4.7.0\nactions:\n  - {type: execute, service: samtools}"
                                  "\n  - {type: execute, service: here}\n")
    warning = ("s.yaml:1:49: warning: [0].path: the tool of service `samtools', `samtoolz', "
               "is not on PATH here; only a machine that has it can run it")
    for args in (["s.yaml"], ["w2.yaml", "-s", "s.yaml"]):
        result = _invoke("validate", *args)
        assert result.exit_code == 0, result.output
        assert result.stderr.splitlines() == [warning], result.stderr


@pytest.mark.parametrize("configured, expected", [(None, 8080), (0, 0), (9001, 9001)])
def test_serve_takes_http_port_0_from_the_configuration_as_any_free_port(configured,
                                                                           expected) -> None:
    """`http.port: 0' (or STEEPY_HTTP_PORT=0) served on 8080: `0 or 8080'."""
    from steepy.cli.serve import _http_options
    from steepy.config import Config

    config = Config.model_validate({} if configured is None else {"http": {"port": configured}})
    assert _http_options(config, None, None)[1] == expected
    assert _http_options(config, None, 7000)[1] == 7000  # the option wins
