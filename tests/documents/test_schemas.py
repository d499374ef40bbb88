"""The JSON schemas in schemas/ against the project's example files, Steep's fixtures and typos.

* Every service file in services/ and every workflow in workflows/ is valid.
* Every structurally valid Steep fixture is valid (many fixtures are semantically invalid on
  purpose, e.g. dependency cycles or reserved variable ids, which is the validator's job, not the
  schema's). New fixture files are picked up automatically.
* Common mistakes are rejected, at the place where they are made.
* The schemas themselves are valid Draft 2020-12 schemas, all references resolve, every
  property is described, and shared definitions exist only once (in workflow.schema.json).
"""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
import yaml
from jsonschema import Draft202012Validator
from referencing import Registry, Resource

from tests.conftest import ROOT, conformance_dir, corpus_missing_line

SCHEMA_DIR = ROOT / "schemas"
BASE = "https://steepy.dev/schemas/"
KINDS = ("workflow", "service", "macro")


def _load_schemas() -> dict[str, dict]:
    return {
        kind: json.loads((SCHEMA_DIR / f"{kind}.schema.json").read_text(encoding="utf-8"))
        for kind in KINDS
    }


SCHEMAS = _load_schemas()
REGISTRY = Registry().with_resources(
    (schema["$id"], Resource.from_contents(schema)) for schema in SCHEMAS.values()
)
VALIDATORS = {kind: Draft202012Validator(SCHEMAS[kind], registry=REGISTRY) for kind in KINDS}


def errors_of(kind: str, document) -> list:
    return sorted(VALIDATORS[kind].iter_errors(document), key=lambda e: list(e.absolute_path))


def describe(errors) -> str:
    return "\n".join(f"  at /{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in errors)


def assert_valid(kind: str, document, where: str) -> None:
    errors = errors_of(kind, document)
    assert not errors, f"{where} is not a valid {kind} document:\n{describe(errors)}"


def load_all(path: Path) -> list:
    with open(path, encoding="utf-8") as f:
        return list(yaml.safe_load_all(f))


# --------------------------------------------------------------------------- the schemas


@pytest.mark.parametrize("kind", KINDS)
def test_schema_is_valid_draft_2020_12(kind):
    schema = SCHEMAS[kind]
    Draft202012Validator.check_schema(schema)
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert schema["$id"] == f"{BASE}{kind}.schema.json"


def _walk(node, path=()):
    """Yield (path, subschema) for every subschema of a schema document."""
    if isinstance(node, dict):
        yield path, node
        for key, value in node.items():
            if key in ("properties", "$defs"):
                for name, sub in value.items():
                    yield from _walk(sub, path + (key, name))
            elif key in ("items", "if", "then", "else", "not", "additionalProperties"):
                yield from _walk(value, path + (key,))
            elif key in ("allOf", "anyOf", "oneOf", "prefixItems"):
                for i, sub in enumerate(value):
                    yield from _walk(sub, path + (key, i))


@pytest.mark.parametrize("kind", KINDS)
def test_every_reference_resolves(kind):
    resolver = REGISTRY.resolver(base_uri=SCHEMAS[kind]["$id"])
    refs = [(p, s["$ref"]) for p, s in _walk(SCHEMAS[kind]) if "$ref" in s]
    assert refs
    for path, ref in refs:
        resolved = resolver.lookup(ref).contents
        assert isinstance(resolved, dict), f"{'/'.join(map(str, path))}: {ref}"


@pytest.mark.parametrize("kind", KINDS)
def test_every_property_and_definition_is_described(kind):
    missing = []
    for path, sub in _walk(SCHEMAS[kind]):
        if "if" in path:  # conditions, not documentation
            continue
        if len(path) >= 2 and path[-2] in ("properties", "$defs") and "description" not in sub:
            missing.append("/".join(map(str, path)))
    assert not missing, f"without description: {missing}"


def test_shared_definitions_live_only_in_the_workflow_schema():
    shared = set(SCHEMAS["workflow"]["$defs"])
    for kind in ("service", "macro"):
        own = set(SCHEMAS[kind]["$defs"])
        assert not own & shared, f"{kind}.schema.json redefines {sorted(own & shared)}"
    # the service and macro schemas really use the shared definitions
    text = {k: json.dumps(SCHEMAS[k]) for k in KINDS}
    for name in ("retryPolicy", "timeoutPolicy"):
        assert f"{BASE}workflow.schema.json#/$defs/{name}" in text["service"]
    for name in ("action", "variable"):
        assert f"{BASE}workflow.schema.json#/$defs/{name}" in text["macro"]


# --------------------------------------------------------------------------- our examples

SERVICE_FILES = sorted(p for p in (ROOT / "services").rglob("*.y*ml") if "bin" not in p.parts)
WORKFLOW_FILES = sorted(p for p in (ROOT / "workflows").glob("*.y*ml"))


def test_examples_exist():
    assert SERVICE_FILES, "no service metadata in services/"
    assert WORKFLOW_FILES, "no workflows in workflows/"


@pytest.mark.parametrize("path", SERVICE_FILES, ids=lambda p: str(p.relative_to(ROOT)))
def test_service_file_is_valid(path):
    for document in load_all(path):
        assert_valid("service", document, str(path.relative_to(ROOT)))


@pytest.mark.parametrize("path", WORKFLOW_FILES, ids=lambda p: str(p.relative_to(ROOT)))
def test_workflow_file_is_valid(path):
    documents = load_all(path)
    assert len(documents) == 1, "a workflow file holds one YAML document"
    assert_valid("workflow", documents[0], str(path.relative_to(ROOT)))


def _our_services() -> dict[str, dict]:
    services = {}
    for path in SERVICE_FILES:
        for document in load_all(path):
            for service in document if isinstance(document, list) else [document]:
                assert service["id"] not in services, f"duplicate service id {service['id']}"
                services[service["id"]] = service
    return services


def test_example_services_are_runnable():
    services = _our_services()
    assert {"cp", "sleep", "sort", "cat", "flaky", "slowprint", "split"} <= set(services)
    for service in services.values():
        path = service["path"]
        if "/" in path:  # a script shipped with the project, relative to the root
            script = ROOT / path
            assert script.is_file(), f"{service['id']}: {path} missing"
            assert script.stat().st_mode & 0o111, f"{service['id']}: {path} is not executable"
            assert script.read_text(encoding="utf-8").startswith("#!"), path
    assert any(s["parameters"] and s["parameters"][-1]["dataType"] == "directory"
               for s in services.values() if s["id"] == "split")


def _actions(actions):
    for action in actions or []:
        yield action
        if action.get("type") == "for":
            yield from _actions(action.get("actions"))


def test_example_workflows_use_known_services_and_parameters():
    services = _our_services()
    for path in WORKFLOW_FILES:
        workflow = load_all(path)[0]
        assert workflow.get("api") == "4.7.0" and workflow.get("name"), path.name
        for action in _actions(workflow.get("actions")):
            if action["type"] != "execute":
                continue
            service = services.get(action["service"])
            assert service, f"{path.name}: unknown service {action['service']}"
            params = {p["id"]: p["type"] for p in service["parameters"]}
            for param in action.get("inputs", []):
                assert params.get(param["id"]) == "input", f"{path.name}: input {param['id']}"
            for param in action.get("outputs", []):
                assert params.get(param["id"]) == "output", f"{path.name}: output {param['id']}"
        for value in (v.get("value") for v in workflow.get("vars", [])):
            if isinstance(value, str) and value.startswith("workflows/data/"):
                assert (ROOT / value).is_file(), f"{path.name}: {value} missing"


# --------------------------------------------------------------------------- Steep's fixtures


def _fixture_files() -> list[Path]:
    if corpus_missing_line() is not None:
        return []  # test_conformance_corpus_present reports it
    fixtures = conformance_dir() / "fixtures"
    return sorted(p for p in fixtures.rglob("*.yaml") if not p.name.endswith("_result.yaml"))


FIXTURE_FILES = _fixture_files()


def test_conformance_corpus_present():
    conformance_dir()  # skips, with the line that says where it was looked for
    assert FIXTURE_FILES, "no fixtures found"


def classify(documents: list) -> list[str]:
    """The kind of every document of a fixture file.

    Multi-document files (include*.yaml, the macro-cases fixtures) hold [macro list, workflow,
    expected workflow]. A single mapping with a top-level `id` is a macro (workflows have no
    id); any other mapping is a workflow. A list is service metadata when its entries have a
    `path`, else a list of macros.
    """
    if len(documents) == 3:
        return ["macro", "workflow", "workflow"]
    assert len(documents) == 1, f"unexpected number of YAML documents: {len(documents)}"
    document = documents[0]
    if isinstance(document, dict):
        return ["macro" if "id" in document else "workflow"]
    if isinstance(document, list):
        if any(isinstance(item, dict) and "path" in item for item in document):
            return ["service"]
        return ["macro"]
    raise AssertionError(f"unexpected top-level value {document!r}")


def _fixture_id(path: Path) -> str:
    try:
        return str(path.relative_to(conformance_dir()))
    except ValueError:
        return path.name


@pytest.mark.parametrize("path", FIXTURE_FILES, ids=_fixture_id)
def test_steep_fixture_is_valid(path):
    documents = load_all(path)
    for index, (document, kind) in enumerate(zip(documents, classify(documents))):
        assert_valid(kind, document, f"{_fixture_id(path)} (document {index + 1})")


def test_steep_service_metadata_is_valid():
    assert_valid("service", load_all(conformance_dir() / "services.yaml")[0], "services.yaml")


def test_fixtures_cover_every_kind():
    conformance_dir()
    seen = set()
    for path in FIXTURE_FILES:
        seen.update(classify(load_all(path)))
    assert seen == {"workflow", "macro", "service"}


# --------------------------------------------------------------------------- typos are caught


def _workflow(**execute_fields) -> dict:
    action = {
        "id": "cp1",
        "type": "execute",
        "service": "cp",
        "inputs": [{"id": "input_file", "var": "in"}],
        "outputs": [{"id": "output_file", "var": "out"}],
    }
    action.update(execute_fields)
    return {"api": "4.7.0", "vars": [{"id": "in", "value": "a.txt"}], "actions": [action]}


def _service(**parameter_fields) -> list:
    parameter = {
        "id": "input_file",
        "name": "Input",
        "description": "Input",
        "type": "input",
        "cardinality": "1..1",
    }
    parameter.update(parameter_fields)
    return [{
        "id": "cp", "name": "cp", "description": "Copy", "path": "cp", "runtime": "other",
        "parameters": [parameter],
    }]


def test_positive_baselines_are_valid():
    assert_valid("workflow", _workflow(), "baseline workflow")
    assert_valid("service", _service(), "baseline service")
    assert_valid("service", _service()[0], "a single service object")
    macro = {"id": "m", "name": "m", "description": "d", "parameters": [
        {"id": "i", "name": "i", "description": "i", "type": "input", "default": 1}],
        "actions": _workflow()["actions"]}
    assert_valid("macro", macro, "baseline macro")
    assert_valid("macro", [macro], "a list of macros")


def _assert_rejected(kind, document, at: list, fragment: str):
    errors = errors_of(kind, document)
    assert errors, f"accepted: {document}"
    hits = [e for e in errors if list(e.absolute_path) == at and fragment in e.message]
    assert hits, f"expected an error containing {fragment!r} at {at}, got:\n{describe(errors)}"


def test_unknown_action_type():
    workflow = _workflow(type="for-each")
    _assert_rejected("workflow", workflow, ["actions", 0, "type"], "is not one of")


def test_missing_action_type():
    workflow = _workflow()
    del workflow["actions"][0]["type"]
    _assert_rejected("workflow", workflow, ["actions", 0], "'type' is a required property")


def test_misspelt_max_attempts():
    workflow = _workflow(retries={"maxAtempts": 3})
    _assert_rejected("workflow", workflow, ["actions", 0, "retries"], "'maxAtempts' was unexpected")


def test_misspelt_max_attempts_in_service_and_process_chain_policies():
    service = _service()
    service[0]["retries"] = {"maxAtempts": 3}
    _assert_rejected("service", service, [0, "retries"], "'maxAtempts' was unexpected")
    workflow = _workflow()
    workflow["retries"] = {"processChains": {"maxAtempts": 3}}
    _assert_rejected("workflow", workflow, ["retries", "processChains"], "'maxAtempts'")


def test_input_with_both_var_and_value():
    workflow = _workflow(inputs=[{"id": "input_file", "var": "in", "value": "b.txt"}])
    _assert_rejected("workflow", workflow, ["actions", 0, "inputs", 0], "is valid under each of")


def test_input_with_neither_var_nor_value():
    workflow = _workflow(inputs=[{"id": "input_file"}])
    _assert_rejected("workflow", workflow, ["actions", 0, "inputs", 0], "is not valid under any")


@pytest.mark.parametrize("given, message", [
    ({"id": "input_file", "var": "in", "value": "b.txt"},
     "`var' and `value' are given: give only one of them"),
    ({"id": "input_file"}, "`var' or `value' is required")])
def test_an_input_needs_exactly_one_of_var_and_value_in_plain_words(given, message):
    """steepy's own message, not jsonschema's (the object and both branches printed, or
    only `var' named as required)."""
    from steepy.documents.schemas import schema_problems

    problems = schema_problems(_workflow(inputs=[given]), "workflow")
    assert [(p.path, p.message) for p in problems] == [("actions[0].inputs[0]", message)]


@pytest.mark.parametrize("given", [[1], 5, "x"])
def test_an_input_that_is_no_object_is_said_once(given):
    """Every branch of the var-or-value choice holds for a value that is no object (they only
    require keys): jsonschema's `valid under each of' beside the type error said nothing more."""
    from steepy.documents.schemas import schema_problems

    problems = schema_problems(_workflow(inputs=[given]), "workflow")
    assert [p.path for p in problems] == ["actions[0].inputs[0]"]
    assert problems[0].message.startswith("expected object, got ")


def test_bad_cardinality():
    _assert_rejected("service", _service(cardinality="2..x"),
                     [0, "parameters", 0, "cardinality"], "does not match")
    _assert_rejected("service", _service(cardinality="1"),
                     [0, "parameters", 0, "cardinality"], "does not match")


def test_negative_max_attempts():
    workflow = _workflow(retries={"maxAttempts": -2})
    _assert_rejected("workflow", workflow, ["actions", 0, "retries", "maxAttempts"],
                     "less than the minimum of -1")
    assert_valid("workflow", _workflow(retries={"maxAttempts": -1}), "maxAttempts -1")


def test_unknown_jitter():
    workflow = _workflow(retries={"maxAttempts": 3, "jitter": "random"})
    _assert_rejected("workflow", workflow, ["actions", 0, "retries", "jitter"], "is not one of")


def test_unknown_strategy_and_timeout_kind():
    workflow = _workflow(retries={"strategy": "quadratic", "retryOn": {"timeouts": ["deadline"]}})
    _assert_rejected("workflow", workflow, ["actions", 0, "retries", "strategy"], "is not one of")
    _assert_rejected("workflow", workflow,
                     ["actions", 0, "retries", "retryOn", "timeouts", 0], "is not one of")


def test_bad_exit_code_range():
    workflow = _workflow(retries={"abortOn": {"exitCodes": [1, "3-5"]}})
    _assert_rejected("workflow", workflow,
                     ["actions", 0, "retries", "abortOn", "exitCodes", 1], "does not match")
    assert_valid("workflow", _workflow(retries={"abortOn": {"exitCodes": [1, "3..5"]}}), "range")


def test_bad_durations():
    for bad in (-5, "-5s", "", "Elvis", 1.5):
        _assert_rejected("workflow", _workflow(maxRuntime=bad), ["actions", 0, "maxRuntime"], "")
    for good in (0, 500, "500", "10s", "1h 30m", "10days1hrs30m15secs",
                 {"timeout": "2 minutes", "errorOnTimeout": True}):
        assert_valid("workflow", _workflow(maxRuntime=good), f"maxRuntime {good!r}")


def test_misspelt_timeout_policy_field():
    workflow = _workflow(deadline={"timeout": "1s", "errorOnTimeOut": True})
    _assert_rejected("workflow", workflow, ["actions", 0, "deadline"], "'errorOnTimeOut'")
    workflow = _workflow(deadline={"errorOnTimeout": True})
    _assert_rejected("workflow", workflow, ["actions", 0, "deadline"], "'timeout' is a required")


def test_unknown_field_of_an_execute_action():
    workflow = _workflow(priority=3)  # priority exists only on the workflow
    _assert_rejected("workflow", workflow, ["actions", 0], "'priority' was unexpected")


def test_required_fields_of_actions():
    workflow = _workflow()
    del workflow["actions"][0]["service"]
    _assert_rejected("workflow", workflow, ["actions", 0], "'service' is a required property")
    workflow = {"actions": [{"type": "for", "input": "xs", "actions": []}]}
    _assert_rejected("workflow", workflow, ["actions", 0], "'enumerator' is a required property")
    workflow = {"actions": [{"type": "include", "inputs": []}]}
    _assert_rejected("workflow", workflow, ["actions", 0], "'macro' is a required property")
    workflow = _workflow(outputs=[{"id": "output_file", "store": True}])
    _assert_rejected("workflow", workflow, ["actions", 0, "outputs", 0], "'var' is a required")


def test_typo_inside_a_for_each_body():
    body = _workflow(retries={"maxAtempts": 2})["actions"]
    workflow = {"actions": [{"type": "for", "input": "xs", "enumerator": "x", "actions": body}]}
    _assert_rejected("workflow", workflow, ["actions", 0, "actions", 0, "retries"], "'maxAtempts'")


def test_depends_on_string_or_list_of_strings():
    assert_valid("workflow", _workflow(dependsOn="a"), "dependsOn string")
    assert_valid("workflow", _workflow(dependsOn=["a", "b"]), "dependsOn list")
    _assert_rejected("workflow", _workflow(dependsOn=["a", 1]), ["actions", 0, "dependsOn", 1], "")


def test_deprecated_execute_parameters_are_accepted():
    workflow = _workflow(parameters=[{"id": "x", "value": 1}])
    assert_valid("workflow", workflow, "pre-5.0 execute parameters")


def test_service_field_typos_and_required_fields():
    service = _service()
    service[0]["requiredCapabilites"] = ["docker"]
    _assert_rejected("service", service, [0], "'requiredCapabilites' was unexpected")
    for field in ("id", "name", "description", "path", "runtime", "parameters"):
        service = _service()
        del service[0][field]
        _assert_rejected("service", service, [0], f"'{field}' is a required property")
    for field in ("id", "name", "description", "type", "cardinality"):
        service = _service()
        del service[0]["parameters"][0][field]
        _assert_rejected("service", service, [0, "parameters", 0], f"'{field}' is a required")
    _assert_rejected("service", _service(type="argument"), [0, "parameters", 0, "type"], "")


def test_macro_parameter_typos():
    macro = {"id": "m", "name": "m", "description": "d",
             "parameters": [{"id": "i", "name": "i", "description": "i", "type": "inout"}]}
    _assert_rejected("macro", macro, ["parameters", 0, "type"], "is not one of")
    bad = copy.deepcopy(macro)
    bad["parameters"][0].update(type="input", defualt=1)
    _assert_rejected("macro", bad, ["parameters", 0], "'defualt' was unexpected")


@pytest.mark.parametrize("jitter", ["full", {"ratio": [0.75, 1]}, {"add": "500ms"}, {"add": 250}])
def test_jitter_forms_are_valid(jitter):
    assert_valid("workflow", _workflow(retries={"maxAttempts": 3, "jitter": jitter}), str(jitter))


@pytest.mark.parametrize("jitter", ["random", {"ratio": [0.5, 1.5]}, {"ratio": [0.5]},
                                    {"add": "soon"}, {"ratio": [0, 1], "add": 5}])
def test_bad_jitter_forms_are_rejected(jitter):
    assert errors_of("workflow", _workflow(retries={"maxAttempts": 3, "jitter": jitter}))


def _retry_policies(node) -> list[dict]:
    """Every object schema of a schema document whose properties include `strategy'."""
    found = []
    if isinstance(node, dict):
        if "strategy" in node.get("properties", {}):
            found.append(node["properties"])
        for value in node.values():
            found += _retry_policies(value)
    elif isinstance(node, list):
        for value in node:
            found += _retry_policies(value)
    return found


@pytest.mark.parametrize("directory", ["schemas", "steepy/schemas"])
def test_the_schemas_know_exactly_the_wait_strategies_and_jitters_of_backoff(directory):
    """A wait strategy or a jitter is one class in steepy/model/backoff.py; the schemas (the
    project's and the package's copy) follow from it: each name there is allowed here and
    each name allowed here is one there, the jitters with a parameter by their JSON key."""
    from steepy.model.backoff import JITTERS, WAITS, AddJitter, RatioJitter

    parametric = {next(iter(j.to_json())) for j in (RatioJitter(0.5, 1.0), AddJitter(1))}
    policies = [p for path in sorted((ROOT / directory).glob("*.schema.json"))
                for p in _retry_policies(json.loads(path.read_text(encoding="utf-8")))]
    assert policies, f"no retry policy with `strategy' in {directory}"
    for properties in policies:
        assert set(properties["strategy"]["enum"]) == set(WAITS)
        if "maxAttempts" not in properties:
            continue  # one of a policy's composed `waits': a strategy without a jitter
        jitter = properties["jitter"]
        assert set(jitter["then"]["enum"]) == set(JITTERS)
        assert set(jitter["else"]["properties"]) == parametric
    assert {w.name for w in WAITS.values()} == set(WAITS)
