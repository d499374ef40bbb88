"""Plugins declared in steepy.yaml's `plugins' list: loaded and checked (one located line
for what is missing), and each kind at work where Steep applies it."""

from __future__ import annotations

import asyncio
import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner

from steepy.agent import AgentConfig, LocalAgent
from steepy.config import load_config
from steepy.engine.engine import Engine, EngineSettings
from steepy.errors import InputError
from steepy.model.ids import unique_id
from steepy.documents.loading import parse_workflow, read_services
from steepy.model import Submission
from steepy.model.processchain import Argument, ArgumentVariable, Executable, ProcessChain
from steepy.model.submission import ProcessChainStatus, SubmissionStatus
from steepy.plugins.pluginset import PluginSet, load_plugins
from steepy.registry import open_registry
from steepy.cli import main
from tests.conftest import ROOT

MODULE = '''\
import json, os, pathlib
from steepy.plugins import Launch, RuntimeSettings
from steepy.model.processchain import Argument, ArgumentVariable

SEEN = pathlib.Path(os.environ.get("PLUGIN_NOTES", "/nonexistent"))


def note(text):
    with open(SEEN, "a") as f:
        f.write(text + "\\n")


class LsfSettings(RuntimeSettings):
    partition: str = "normal"
    slots: int = 1


class Runtime:
    settings_class = LsfSettings

    def command(self, executable, context):
        settings = context.settings
        note(f"{type(settings).__name__}: {settings.slots} slots in {settings['partition']}")
        return Launch(["true"])


class BadSettingsRuntime:
    settings_class = dict

    def command(self, executable, context):
        return Launch(["true"])


class Adapter:
    supported_data_type = "lines"

    def adapt(self, output, chain):
        return [output.variable.value]


def split_words(input, chain):
    return [Argument(f"{input.id}-{i}", ArgumentVariable(input.variable.id, word), "input")
            for i, word in enumerate(input.variable.value.split())]


split_words.supported_data_type = "words"


class Estimator:
    supported_service_ids = ["counter"]

    def estimate(self, executable, recent_lines):
        return int(recent_lines[-1]) / 4


def one_action_per_chain(executables, action, workflow):
    note(f"check {action.id} after {len(executables)} in {workflow.name}")
    return not executables


def count_chains(chains, workflow):
    note(f"chains {len(chains)}")
    return chains


def initialize():
    note("initialized")


class BrokenRuntime:
    def command(self, executable, context):
        raise TypeError("no launch today")


class Explaining:
    def command(self, executable, context):
        async def explain():
            return "cluster: job 7 PREEMPTED"
        return Launch(["false"], explain=explain)


class BadlyExplaining:
    def command(self, executable, context):
        async def explain():
            raise OSError("the cluster is gone")
        return Launch(["false"], explain=explain)


class NoMethod:
    pass


class NeedsArguments:
    def __init__(self, path):
        self.path = path

    def command(self, executable, context):
        return Launch(["true"])


class WrongSignature:
    def command(self, executable):
        return Launch(["true"])
'''


@pytest.fixture
def plugmod(tmp_path, monkeypatch) -> str:
    """A module of plugins (a fresh name per test) on the import path."""
    name = f"plugmod_{unique_id().replace('-', '_')}"
    (tmp_path / f"{name}.py").write_text(MODULE)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setenv("PLUGIN_NOTES", str(tmp_path / "notes.txt"))
    return name


def _config(tmp_path: Path, text: str):
    (tmp_path / "steepy.yaml").write_text(textwrap.dedent(text))
    return load_config(tmp_path, environ={})


def _load(tmp_path: Path, text: str) -> PluginSet:
    return load_plugins(_config(tmp_path, text))


def _notes(tmp_path: Path) -> list[str]:
    path = tmp_path / "notes.txt"
    return path.read_text().splitlines() if path.exists() else []


# -- declaring and listing -----------------------------------------------------------------------


def test_declared_plugins_with_steeps_descriptor_fields(tmp_path, plugmod) -> None:
    plugins = _load(tmp_path, f"""\
        plugins:
          - name: counting
            type: processChainAdapter
            object: {plugmod}:count_chains
            dependsOn: [first]
          - name: first
            type: processChainAdapter
            object: {plugmod}:count_chains
            version: 1.2.0
          - name: lines
            type: outputAdapter
            object: {plugmod}:Adapter
          - name: progress
            type: progressEstimator
            object: {plugmod}:Estimator
            supportedServiceIds: [counter, other]
          - name: lsf
            type: runtime
            object: {plugmod}:Runtime
            supportedRuntime: lsf
        runtimes.lsf.partition: big
        """)
    found = {d["name"]: d for d in plugins.descriptors()}
    assert found["first"] == {"type": "processChainAdapter", "name": "first", "version": "1.2.0",
                              "scriptFile": str(tmp_path / f"{plugmod}.py"),
                              "object": f"{plugmod}:count_chains", "dependsOn": [],
                              "origin": "steepy.yaml"}
    assert found["lines"]["supportedDataType"] == "lines"  # from the object's attribute
    assert found["progress"]["supportedServiceIds"] == ["counter", "other"]  # declared wins
    assert found["lsf"]["supportedRuntime"] == "lsf"
    assert [p.name for p in plugins.of("processChainAdapter")] == ["first", "counting"]
    assert plugins.runtime_names() == ["other", "docker", "slurm", "lsf"]
    assert plugins.runtime_settings("lsf").partition == "big"
    assert plugins.runtime_settings("lsf")["slots"] == 1  # its default


@pytest.mark.parametrize("declaration,message", [
    ("type: runtime\n    object: {mod}:Missing",
     "plugin `p' (runtime): `{mod}' has no attribute `Missing'"),
    ("type: runtime\n    object: no_such_module_here:Runtime",
     "plugin `p' (runtime): cannot import `no_such_module_here': No module named "
     "'no_such_module_here'"),
    ("type: runtime\n    object: {mod}:NoMethod",
     "plugin `p' (runtime): a runtime needs a method command(executable, context), "
     "`NoMethod' has none"),
    ("type: runtime\n    object: {mod}:Adapter",  # the wrong kind
     "plugin `p' (runtime): a runtime needs a method command(executable, context), `Adapter' "
     "has none; it looks like an input adapter or output adapter or process chain adapter"),
    ("type: processChainConsistencyChecker\n    object: {mod}:Estimator",
     "plugin `p' (processChainConsistencyChecker): a process chain consistency checker needs a "
     "method check(executables, action, workflow), `Estimator' has none; it looks like a "
     "progress estimator"),
    ("type: runtime\n    object: {mod}:WrongSignature",
     "plugin `p' (runtime): command(executable) of `WrongSignature' cannot be called as "
     "command(executable, context)"),
    ("type: runtime\n    object: {mod}:BadSettingsRuntime",
     "plugin `p' (runtime): its `settings_class' must be a subclass of "
     "steepy.runtimes.RuntimeSettings"),
    ("type: runtime\n    object: {mod}:NeedsArguments",
     "plugin `p' (runtime): cannot make an instance of `NeedsArguments' without arguments: "
     "TypeError:"),
    ("type: outputAdapter\n    object: {mod}:count_chains",
     "plugin `p' (outputAdapter): an output adapter needs `supportedDataType' (steepy.yaml) or "
     "a `supported_data_type' attribute: the data type it handles"),
    ("type: progressEstimator\n    object: {mod}:split_words",  # a function is the method
     "plugin `p' (progressEstimator): a progress estimator needs `supportedServiceIds' "
     "(steepy.yaml) or a `supported_service_ids' attribute: the services it estimates"),
    ("type: processChainAdapter\n    object: {mod}:count_chains\n    dependsOn: [q]",
     "plugin `p' (processChainAdapter): depends on `q', which is no process chain adapter "
     "(known: p)"),
])
def test_a_plugin_that_cannot_be_used_is_one_located_line(tmp_path, plugmod, declaration,
                                                          message) -> None:
    text = f"agent.instances: 1\nplugins:\n  - name: p\n    {declaration.format(mod=plugmod)}\n"
    with pytest.raises(InputError) as caught:
        _load(tmp_path, text)
    (problem,) = caught.value.problems
    assert problem.location() == f"{tmp_path / 'steepy.yaml'}:3:5"
    assert problem.path == "plugins[0]"
    assert problem.message.startswith(message.format(mod=plugmod)), problem.message


def test_names_are_unique_and_dependencies_not_circular(tmp_path, plugmod) -> None:
    with pytest.raises(InputError) as caught:
        _load(tmp_path, f"""\
            plugins:
              - {{name: docker, type: runtime, object: "{plugmod}:Runtime"}}
            """)
    assert caught.value.problems[0].message == (
        "plugin `docker' (runtime): the name is taken by the runtime from builtin "
        "(steepy.runtimes.docker:DockerRuntime)")
    with pytest.raises(InputError) as caught:
        _load(tmp_path, f"""\
            plugins:
              - {{name: a, type: initializer, object: "{plugmod}:initialize", dependsOn: b}}
              - {{name: b, type: initializer, object: "{plugmod}:initialize", dependsOn: a}}
            """)
    assert "`dependsOn' goes round in a circle" in caught.value.problems[0].message


@pytest.mark.parametrize("declaration,message", [
    ("{name: p, type: runtime, scriptFile: p.kts}",
     "steepy.yaml:2:5: plugins[0]: plugin `p' needs `object: module:attribute', the Python "
     "object that implements it (Steep's Kotlin `scriptFile' cannot run in steepy)"),
    ("{name: p, type: runtim, object: 'a:b'}", "steepy.yaml:2:21: plugins[0].type: `runtim' is "
     "not allowed here; expected runtime, outputAdapter, inputAdapter, processChainAdapter, "
     "processChainConsistencyChecker, progressEstimator, initializer or retryPolicy"),
    ("{name: p, type: runtime, object: 'not a reference'}", "steepy.yaml:2:38: plugins[0].object: "
     "`not a reference' is not a Python object reference such as `package.module:attribute'"),
])
def test_declarations_are_checked_with_the_configuration(tmp_path, declaration, message) -> None:
    with pytest.raises(InputError) as caught:
        _config(tmp_path, f"plugins:\n  - {declaration}\n")
    assert str(caught.value.problems[0]).replace(str(tmp_path) + "/", "").startswith(message)


def test_the_commands_say_it_in_one_line_and_exit_2(tmp_path, plugmod, monkeypatch) -> None:
    (tmp_path / "steepy.yaml").write_text(
        f"plugins:\n  - name: broken\n    type: runtime\n    object: {plugmod}:Missing\n")
    (tmp_path / "w.yaml").write_text("api: 4.7.0\nactions: []\n")
    monkeypatch.chdir(tmp_path)  # where the commands find steepy.yaml (plugmod is importable)
    for args in (["plugins"], ["run", "w.yaml", "--db", f"sqlite:///{tmp_path / 'db'}"],
                 ["worker", "--db", f"sqlite:///{tmp_path / 'db'}"]):
        done = CliRunner().invoke(main, args)
        assert done.exit_code == 2, (done.stderr, done.exception)
        first, summary = done.stderr.splitlines()
        assert first == (f"steepy.yaml:2:5: plugins[0]: plugin `broken' (runtime): `{plugmod}' "
                         "has no attribute `Missing'")
        assert summary == "1 problem in 1 file"


# -- the kinds at work ---------------------------------------------------------------------------


def _chain(*executables: Executable) -> ProcessChain:
    return ProcessChain(unique_id(), list(executables))


@pytest.mark.process  # the agent runs real tools
async def test_input_adapter_output_adapter_and_progress_estimator_in_the_agent(
        tmp_path, plugmod) -> None:
    plugins = _load(tmp_path, f"""\
        plugins:
          - {{name: words, type: inputAdapter, object: "{plugmod}:split_words"}}
          - {{name: progress, type: progressEstimator, object: "{plugmod}:Estimator"}}
          - name: lines
            type: outputAdapter
            object: {plugmod}:count_chains
            supportedDataType: lines
        """)
    out = tmp_path / "out.txt"
    # sh -c 'script' arg0 words... : prints 1..3 (progress) and writes its words to the output
    script = 'echo 1; echo 2; echo 3; printf "%s\\n" "$@" > "$0"'
    exe = Executable("e", "sh", "counter", [
        Argument("s", ArgumentVariable("script", script), "input", label="-c"),
        Argument("o", ArgumentVariable("result", str(out)), "output", data_type="lines"),
        Argument("w", ArgumentVariable("words", "alpha beta gamma"), "input", data_type="words"),
    ])
    events: list[tuple[str, dict]] = []

    def count_chains_as_output(output, chain):  # the adapter called with the chain
        return [output.variable.value, len(chain.executables)]

    plugins._outputs["lines"].implementation.adapt = count_chains_as_output
    agent = LocalAgent("a", AgentConfig(log_dir=None, plugins=plugins),
                       on_event=lambda kind, data: events.append((kind, data)))
    outcome = await agent.execute(_chain(exe))
    assert outcome.status == ProcessChainStatus.SUCCESS, outcome.error_message
    assert out.read_text().split() == ["alpha", "beta", "gamma"]  # one argument a word
    assert outcome.results == {"result": [str(out), 1]}
    progress = [d["progress"] for kind, d in events if kind == "chain.progress"]
    assert progress[:3] == [0.25, 0.5, 0.75] and progress[-1] == 1.0


async def test_a_failing_runtime_fails_the_attempt_not_the_agent(tmp_path, plugmod) -> None:
    plugins = _load(tmp_path, f"""\
        plugins:
          - {{name: bad, type: runtime, object: "{plugmod}:BrokenRuntime"}}
        """)
    agent = LocalAgent("a", AgentConfig(log_dir=None, plugins=plugins))
    outcome = await agent.execute(_chain(Executable("e", "true", "s", runtime="bad")))
    assert outcome.status == ProcessChainStatus.ERROR
    assert outcome.error_message.startswith("Execution of service `s' failed: runtime `bad' "
                                            "cannot start it: TypeError:")


@pytest.mark.process  # the agent runs real tools
async def test_a_runtime_says_how_a_failed_attempt_ended(tmp_path, plugmod) -> None:
    """`Launch.explain`: what the runtime knows (a cluster's job state) joins the error
    message; a runtime that cannot tell leaves the message as it was."""
    plugins = _load(tmp_path, f"""\
        plugins:
          - {{name: said, type: runtime, object: "{plugmod}:Explaining"}}
          - {{name: unsaid, type: runtime, object: "{plugmod}:BadlyExplaining"}}
        """)
    agent = LocalAgent("a", AgentConfig(log_dir=None, plugins=plugins))
    said = await agent.execute(_chain(Executable("e", "false", "s", runtime="said")))
    assert said.status == ProcessChainStatus.ERROR
    assert "`false' exited with code 1 (cluster: job 7 PREEMPTED) without output." in \
        said.error_message
    unsaid = await agent.execute(_chain(Executable("e", "false", "s", runtime="unsaid")))
    assert unsaid.status == ProcessChainStatus.ERROR
    assert "`false' exited with code 1 without output." in unsaid.error_message


WORKFLOW = """\
api: 4.7.0
name: two copies
vars:
  - {id: words, value: workflows/data/words.txt}
  - {id: copy}
  - {id: again}
actions:
  - {id: first, type: execute, service: cp, inputs: [{id: input_file, var: words}],
     outputs: [{id: output_file, var: copy}]}
  - {id: second, type: execute, service: cp, inputs: [{id: input_file, var: copy}],
     outputs: [{id: output_file, var: again, store: true}]}
"""


@pytest.mark.process  # the agent runs real tools
async def test_checker_chain_adapter_and_initializer_in_the_engine(tmp_path, plugmod,
                                                                   monkeypatch) -> None:
    plugins = _load(tmp_path, f"""\
        plugins:
          - {{name: init, type: initializer, object: "{plugmod}:initialize"}}
          - {{name: count, type: processChainAdapter, object: "{plugmod}:count_chains"}}
          - name: split
            type: processChainConsistencyChecker
            object: {plugmod}:one_action_per_chain
        """)
    monkeypatch.chdir(ROOT)  # the workflow names its input relative to the project
    registry = open_registry(f"sqlite:///{tmp_path / 'steepy.db'}")
    workflow, _ = parse_workflow(WORKFLOW)
    submission = Submission(id=unique_id(), workflow=workflow, name=workflow.name, source=WORKFLOW)
    registry.requests.add_submission(submission)
    settings = EngineSettings(tmp_path=str(tmp_path / "tmp"), out_path=str(tmp_path / "out"),
                              agents=1, sweep_s=0.5, heartbeat_s=0.5, lease_s=3,
                              agent=AgentConfig(log_dir=None, plugins=plugins))
    engine = Engine(registry, read_services(str(ROOT / "services")), {}, settings)
    await asyncio.wait_for(engine.run(until_submission=submission.id), 60)
    assert registry.views.get_submission(submission.id).status == SubmissionStatus.SUCCESS
    # linear actions make one chain; the checker refused the second action, so two
    assert registry.views.chain_counts(submission.id) == {ProcessChainStatus.SUCCESS: 2}
    notes = _notes(tmp_path)
    assert notes[0] == "initialized"
    assert notes[1:] == ["check first after 0 in two copies", "check second after 1 in two copies",
                         "chains 1", "check second after 0 in two copies", "chains 1"]


def test_get_plugins_in_steeps_shape(tmp_path, plugmod, monkeypatch) -> None:
    import warnings

    import steepy.plugins.pluginset as pluginset
    from steepy.http import ApiContext, create_app

    with warnings.catch_warnings():  # Starlette would like httpx2; httpx works
        warnings.simplefilter("ignore")
        from starlette.testclient import TestClient

    plugins = _load(tmp_path, f"""\
        plugins:
          - {{name: lines, type: outputAdapter, object: "{plugmod}:Adapter", version: "2"}}
        """)
    monkeypatch.setattr(pluginset, "_active", plugins)  # what `steepy serve --no-agents' has
    ctx = ApiContext(open_registry(f"sqlite:///{tmp_path / 'steepy.db'}"))
    with TestClient(create_app(ctx), raise_server_exceptions=False) as api:
        listed = api.get("/plugins")
        assert listed.status_code == 200
        assert [d["name"] for d in listed.json()] == ["other", "docker", "slurm", "lines"]
        one = api.get("/plugins/lines").json()
        assert one == {"type": "outputAdapter", "name": "lines", "version": "2",
                       "scriptFile": str(tmp_path / f"{plugmod}.py"),
                       "object": f"{plugmod}:Adapter", "supportedDataType": "lines",
                       "origin": "steepy.yaml"}
        missing = api.get("/plugins/nope")
        assert missing.status_code == 404 and "no plugin with name `nope'" in missing.text


def test_settings_of_a_runtime_that_is_not_loaded_are_a_warning(tmp_path, plugmod) -> None:
    plugins = _load(tmp_path, f"""\
        plugins:
          - {{name: lsf, type: runtime, object: "{plugmod}:Runtime"}}
        runtimes:
          lsf: {{partition: big}}
          lfs:
            partition: small
        """)
    assert plugins.runtime_settings("lsf").partition == "big"
    (warning,) = plugins.warnings
    assert str(warning).replace(f"{tmp_path}/", "") == (
        "steepy.yaml:6:16: runtimes.lfs.partition: no runtime `lfs' is loaded (did you mean "
        "lsf?); its settings are ignored")


def test_a_declared_runtimes_settings_are_checked(tmp_path, plugmod) -> None:
    """A runtime declared in steepy.yaml has its section checked against its settings class,
    as steepy's own runtimes have: a bad value and an unknown key are located problems."""
    with pytest.raises(InputError) as caught:
        _load(tmp_path, f"""\
            plugins:
              - {{name: lsf, type: runtime, object: "{plugmod}:Runtime"}}
            runtimes:
              lsf:
                slots: many
                partiton: big
            """)
    found = sorted(str(p).replace(f"{tmp_path}/", "") for p in caught.value.problems)
    assert found == [
        "steepy.yaml:5:12: runtimes.lsf.slots: expected a whole number, got a string `many'",
        "steepy.yaml:6:15: runtimes.lsf.partiton: runtime `lsf' has no setting `partiton'; "
        "did you mean partition? (its settings: partition, slots)"]


@pytest.mark.process  # the agent runs real tools
async def test_the_checked_settings_reach_the_runtime(tmp_path, plugmod) -> None:
    """What `command' gets as `context.settings' is the checked object of its class."""
    plugins = _load(tmp_path, f"""\
        plugins:
          - {{name: lsf, type: runtime, object: "{plugmod}:Runtime"}}
        runtimes.lsf.slots: "4"
        """)
    agent = LocalAgent("a", AgentConfig(log_dir=None, plugins=plugins))
    outcome = await agent.execute(_chain(Executable("e", "true", "s", runtime="lsf")))
    assert outcome.status == ProcessChainStatus.SUCCESS, outcome.error_message
    assert _notes(tmp_path) == ["LsfSettings: 4 slots in normal"]


def test_a_runtime_for_one_of_steeps_names_gets_its_settings(tmp_path, plugmod) -> None:
    """`runtimes.kubernetes' is Steep's; a runtime plugin that takes that name gets its
    section checked and handed over like any runtime's (no "steepy does not implement")."""
    config = _config(tmp_path, f"""\
        plugins:
          - {{name: k8s, type: runtime, object: "{plugmod}:Runtime",
              supportedRuntime: kubernetes}}
        runtimes.kubernetes.partition: pods
        """)
    plugins = load_plugins(config)
    assert plugins.runtime_settings("kubernetes").partition == "pods"
    assert config.warnings == [] and plugins.warnings == []
    assert "kubernetes" not in plugins.runtimes().hints  # loaded: nothing to say instead
    bare = load_plugins(_config(tmp_path, "runtimes.kubernetes.namespace: x\n"))
    (warning,) = bare.warnings
    assert warning.message == "no runtime `kubernetes' is loaded; its settings are ignored"
    assert bare.runtimes().hints["kubernetes"].startswith("which steepy does not support yet")
