"""A tool gets none of the variables the engine reads a secret from (issue 24): the one
`notifications.email.passwordEnv' names, those steepy.yaml's template reads for a secret
(`{{ env.HOOK_SECRET }}' as a webhook's `secret', http.token, a password in a URL), libpq's
PGPASSWORD and its kind; unless the service names one in `passEnvironment'."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from steepy.agent import AgentConfig
from steepy.agent.environment import Withheld, attempt_environment, engine_environment
from steepy.config.reading import load_config
from steepy.model.processchain import Executable
from steepy.plugins.loaded import builtin_set
from steepy.registry import failures
from tests.conftest import ROOT

SECRETS = {"MY_HTTP_TOKEN": "HTTPTOKEN-xyz-1", "HOOK_SECRET": "HOOKSECRET-xyz-2",
           "SMTP_PASS": "SMTPPASS-xyz-3", "PGPASSWORD": "PGPASS-xyz-4",
           "PGPASSFILE": "/home/u/.pgpass-xyz-5", "DB_PASS": "DBPASS-xyz-6",
           "HOOK_TOKEN": "QUERYTOKEN-xyz-7",
           # a copy of libpq's password under another name
           "DB_PASSWORD": "PGPASS-xyz-4",
           # not read by the configuration, but it holds the database's password
           "MY_DSN": "postgresql://steepy:DBPASS-xyz-6@db.invalid/steepy"}

CONFIG = """\
---
template: true
---
services: services/
db:
  url: postgresql+psycopg://steepy:{{ env.DB_PASS }}@db.invalid/steepy
http:
  token: {{ env.MY_HTTP_TOKEN }}
notifications:
  maxAttempts: 1
  webhooks:
    - url: http://127.0.0.1:9/x
      secret: {{ env.HOOK_SECRET }}
    - url: http://127.0.0.1:9/y?channel=ops&token={{ env.HOOK_TOKEN }}
  email:
    host: 127.0.0.1
    port: 9
    from: a@example.org
    to: [b@example.org]
    username: u
    passwordEnv: SMTP_PASS
"""


def _config_dir(tmp_path: Path) -> Path:
    (tmp_path / "services").mkdir()
    (tmp_path / "steepy.yaml").write_text(CONFIG)
    return tmp_path


def test_the_configuration_names_what_a_tool_does_not_get(monkeypatch, tmp_path) -> None:
    for name, value in {**SECRETS, "TOOL_SETTING": "kept", "CHANNEL": "ops"}.items():
        monkeypatch.setenv(name, value)
    withheld = AgentConfig.from_config(load_config(_config_dir(tmp_path)), builtin_set()).withheld
    assert withheld.names == {"SMTP_PASS"}
    assert {"HTTPTOKEN-xyz-1", "HOOKSECRET-xyz-2", "DBPASS-xyz-6",
            "QUERYTOKEN-xyz-7"} <= withheld.secrets
    assert "HOOKSECRET-xyz-2" not in repr(AgentConfig(withheld=withheld))  # never in a log line
    base = engine_environment({"FROM_CONFIG": "yes"}, withheld)
    assert not set(SECRETS) & set(base), sorted(set(SECRETS) & set(base))
    assert base["TOOL_SETTING"] == "kept" and base["CHANNEL"] == "ops"  # no secret: kept
    assert base["FROM_CONFIG"] == "yes" and base["PATH"] == os.environ["PATH"]
    # libpq's password variables go even without a configuration
    assert "PGPASSWORD" not in engine_environment() and "HOOK_SECRET" in engine_environment()
    # a service that names one gets it: the user's choice
    exe = Executable("e", "tool", "svc", pass_environment=["HOOK_SECRET", "PGPASSWORD"])
    env = attempt_environment(base, exe)
    assert env["HOOK_SECRET"] == "HOOKSECRET-xyz-2" and env["PGPASSWORD"] == "PGPASS-xyz-4"
    assert "SMTP_PASS" not in env



HOOKS = """\
---
template: true
---
services: services/
notifications:
  webhooks:
    - url: "{{ env.SLACK_WEBHOOK | raw }}"
    - url: http://127.0.0.1:9/services/{{ env.TEAMS_PATH }}
    - url: https://{{ env.HOOK_NO_SCHEME }}
    - url: http://127.0.0.1:9/{{ env.PROJECT_DIR }}/hook
"""


def test_a_webhook_url_whose_secret_is_its_path_stays(monkeypatch, tmp_path) -> None:
    """Slack's and Teams' webhook URLs carry no password or token: the path is the secret.
    A variable holding the URL, or a part of its path of 16 characters or more, is withheld;
    one holding its host, or a word of its path, is not."""
    hooks = {"SLACK_WEBHOOK": "http://127.0.0.1:9/services/T000/B000/slackSECRETpath",
             "TEAMS_PATH": "T111/B111/teamsSECRETpath",
             "A_COPY": "see http://127.0.0.1:9/services/T000/B000/slackSECRETpath now",
             "HOOK_NO_SCHEME": "hooks.example.org/services/T2/B2/noSCHEMEsecret",
             "IN_CAPITALS": "HOOKS.EXAMPLE.ORG/services/T2/B2/noSCHEMEsecret"}
    project = tmp_path / "projects" / "steepy-work"  # a local hook's path holds it
    project.mkdir(parents=True)
    kept = {"HOOK_HOST": "127.0.0.1:9", "KIND": "services", "PROJECT_DIR": str(project)[1:],
            "PWD": str(project)}
    for name, value in {**hooks, **kept}.items():
        monkeypatch.setenv(name, value)
    (tmp_path / "services").mkdir()
    (tmp_path / "steepy.yaml").write_text(HOOKS)
    withheld = AgentConfig.from_config(load_config(tmp_path), builtin_set()).withheld
    base = engine_environment({}, withheld)
    assert not set(hooks) & set(base), sorted(set(hooks) & set(base))
    assert {k: base.get(k) for k in kept} == {**kept, "PROJECT_DIR": None}
    assert "slackSECRETpath" not in repr(AgentConfig(withheld=withheld))

ESCAPED = """\
---
template: true
---
services: services/
http:
  token: {{ env.MY_HTTP_TOKEN }}
notifications:
  webhooks:
    - url: http://127.0.0.1:9/x
      secret: {{ env.HOOK_SECRET }}
    - url: http://127.0.0.1:9/services/{{ env.TEAMS_PATH }}
"""


def test_a_secret_the_template_html_escaped_stays_too(monkeypatch, tmp_path) -> None:
    """Pebble's default (kept, as in Steep): the template writes `{{ env.HOOK_SECRET }}' of
    `hook&secret' as `hook&amp;secret', the engine's secret. The variable holds the secret
    unescaped, and a tool got it (one well-known step from the engine's)."""
    secrets = {"MY_HTTP_TOKEN": "tok'en-AAAA1111", "HOOK_SECRET": "hook&secret-CCCC3333",
               "TEAMS_PATH": "T1/B1/teams<SECRET>path"}
    for name, value in secrets.items():
        monkeypatch.setenv(name, value)
    (tmp_path / "services").mkdir()
    (tmp_path / "steepy.yaml").write_text(ESCAPED)
    config = load_config(tmp_path)
    assert config.http.token == "tok&#39;en-AAAA1111"  # what the template wrote
    withheld = AgentConfig.from_config(config, builtin_set()).withheld
    base = engine_environment({}, withheld)
    assert not set(secrets) & set(base), sorted(set(secrets) & set(base))


def test_the_password_of_a_database_given_by_command_line_stays_too(monkeypatch) -> None:
    monkeypatch.setattr(failures, "_opened", [])
    monkeypatch.setenv("ARCHIVE_DB_PASSWORD", "from-the-command-line-1")
    monkeypatch.setenv("SHORT", "ab")
    assert "ARCHIVE_DB_PASSWORD" in engine_environment()
    failures.opened("postgresql+psycopg://u:from-the-command-line-1@h/db?sslmode=ab")
    base = engine_environment()
    assert "ARCHIVE_DB_PASSWORD" not in base and base["SHORT"] == "ab"
    assert engine_environment(withheld=Withheld()) == base


SERVICES = """\
- id: dumpenv
  name: Dump env
  description: prints its environment
  path: env
  runtime: other
  parameters: []
- id: asks
  name: Asks for the webhook's secret
  description: prints its environment
  path: env
  runtime: other
  parameters: []
  passEnvironment: [HOOK_SECRET]
- id: parentenv
  name: Parent's env
  description: prints the environment of its parent process (the engine's executor)
  path: ./parentenv.sh
  runtime: other
  parameters: []
"""

WORKFLOW = """\
api: 4.7.0
name: envdump
actions:
  - {id: all, type: execute, service: dumpenv}
  - {id: asked, type: execute, service: asks, dependsOn: [all]}
  - {id: parent, type: execute, service: parentenv, dependsOn: [asked]}
"""


@pytest.mark.process
def test_steepy_run_gives_a_tool_no_secret_the_configuration_reads(tmp_path) -> None:
    """`steepy run' with the template above: a tool running `env' sees none of the secrets
    (its log shows what it printed); the service that asks for HOOK_SECRET gets it."""
    directory = _config_dir(tmp_path)
    (directory / "services" / "s.yaml").write_text(SERVICES)
    (directory / "w.yaml").write_text(WORKFLOW)
    script = directory / "parentenv.sh"  # a tool may read its parent's environment
    script.write_text("#!/bin/sh\necho PARENT $(cat /proc/$PPID/cmdline | tr '\\0' ' ')\n"
                      "tr '\\0' '\\n' < /proc/$PPID/environ\n")
    script.chmod(0o755)
    env = dict(os.environ, **SECRETS, OTHER="OTHER-xyz-0", PYTHONPATH=str(ROOT),
               STEEPY_LOGS_PROCESSCHAINS_PATH=str(tmp_path / "logs"))
    ran = subprocess.run([sys.executable, "-m", "steepy.cli", "run", "w.yaml", "--agents", "1",
                          "--db", f"sqlite:///{tmp_path / 'steepy.db'}"], cwd=directory,
                         env=env, capture_output=True, text=True, timeout=120)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    everything = "\n".join(p.read_text() for p in (tmp_path / "logs").rglob("*")
                           if p.is_file())
    assert everything.count("OTHER=OTHER-xyz-0") == 2, everything  # both tools ran `env'
    assert "executor_process.py" in everything  # the parent, whose environment it printed
    leaked = [name for name, value in SECRETS.items() if value in everything
              and not (name == "HOOK_SECRET" and everything.count(value) == 1)]
    assert leaked == [], leaked
    assert "HOOK_SECRET=HOOKSECRET-xyz-2" in everything  # the service asked for it


@pytest.mark.process
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="prctl is Linux's")
def test_an_engine_hides_its_environment_from_other_processes_of_its_user() -> None:
    """/proc/PID/environ of the engine (its secrets) is readable by any process of its user,
    tools included, unless the process is not dumpable (then only root reads it)."""
    code = ("import ctypes; from steepy.agent.environment import hide_this_process; "
            "print(ctypes.CDLL(None).prctl(3, 0, 0, 0, 0), hide_this_process(), "
            "ctypes.CDLL(None).prctl(3, 0, 0, 0, 0))")  # PR_GET_DUMPABLE
    shown = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                           env=dict(os.environ, PYTHONPATH=str(ROOT)), check=True).stdout
    assert shown.split() == ["1", "True", "0"]


def test_the_executor_gets_what_its_interpreter_needs_and_no_secret(monkeypatch) -> None:
    """The executor, every tool's parent, starts with the locale and the loader's paths (a
    Python of an HPC module finds its libpython through LD_LIBRARY_PATH) and nothing else."""
    from steepy.agent.environment import kept_from_tools

    for name, value in {"LANG": "C.UTF-8", "LD_LIBRARY_PATH": "/opt/python/lib",
                        "HOOK_SECRET": "HOOKSECRET-xyz-2", "PATH": "/usr/bin"}.items():
        monkeypatch.setenv(name, value)
    kept = kept_from_tools()
    assert kept["LANG"] == "C.UTF-8" and kept["LD_LIBRARY_PATH"] == "/opt/python/lib"
    assert "HOOK_SECRET" not in kept and "PATH" not in kept


LEAKS = """\
- id: leaks
  name: Prints what it was given
  description: prints the secrets its service passes it, then fails
  path: sh
  runtime: other
  parameters:
    - {id: script, name: script, description: the script, type: input, label: -c,
       cardinality: 1..1, dataType: string}
  passEnvironment: [HOOK_SECRET, SMTP_PASS]
"""
LEAKING = """\
api: 4.7.0
actions:
  - type: execute
    service: leaks
    inputs:
      - id: script
        value: 'echo "hook=$HOOK_SECRET smtp=$SMTP_PASS"; exit 3'
"""


@pytest.mark.process
def test_what_steepy_says_of_a_tools_output_shows_no_secret_of_the_engines(tmp_path) -> None:
    """A tool given the webhook's secret and the SMTP password on purpose printed them: its
    failure's message and last lines carried them into the timeline, `steepy show', the API
    and every webhook and e-mail about it. They say `***'; the log is the tool's own."""
    import sqlite3

    directory = _config_dir(tmp_path)
    (directory / "services" / "s.yaml").write_text(LEAKS)
    (directory / "w.yaml").write_text(LEAKING)
    env = dict(os.environ, **SECRETS, PYTHONPATH=str(ROOT),
               STEEPY_LOGS_PROCESSCHAINS_PATH=str(tmp_path / "logs"))
    database = tmp_path / "steepy.db"
    ran = subprocess.run([sys.executable, "-m", "steepy.cli", "run", "w.yaml", "--db",
                          f"sqlite:///{database}"], cwd=directory, env=env,
                         capture_output=True, text=True, timeout=120)
    assert ran.returncode == 1, ran.stdout + ran.stderr  # (ERROR)
    with sqlite3.connect(database) as db:
        said = [str(v) for row in db.execute(
            "SELECT message, last_lines FROM attempts UNION ALL SELECT error_message, NULL "
            "FROM runs UNION ALL SELECT data, NULL FROM events") for v in row]
    everything = "\n".join(said) + ran.stdout + ran.stderr
    assert "hook=*** smtp=***" in everything
    assert [v for v in (SECRETS["HOOK_SECRET"], SECRETS["SMTP_PASS"]) if v in everything] == []
    log = "\n".join(p.read_text() for p in (tmp_path / "logs").rglob("*") if p.is_file())
    assert f"hook={SECRETS['HOOK_SECRET']} smtp={SECRETS['SMTP_PASS']}" in log
