"""Turning one execute action into an executable: arguments, output paths, policies.

The order in which ids are drawn matters (Steep's fixtures encode it): the service parameters
are walked in declaration order, drawing one id per output argument (its file name) and one
per defaulted missing input (the new variable's id); then one id per runtime argument.
"""

from __future__ import annotations

import os
import posixpath
import re
from dataclasses import replace
from collections.abc import Callable
from typing import Any

from steepy.generator.nodes import ExecNode, GeneratorError
from steepy.model import Argument, ArgumentVariable, Executable, Service, ServiceParameter
from steepy.model.common import argument_text
from steepy.model.inheritance import executable_policy
from steepy.model.policies import RetryPolicy
from steepy.model.processchain import DATA_TYPE_DIRECTORY
from steepy.model.service import INPUT, OUTPUT
from steepy.model.stopping import CATCH_SUFFIX


FALLBACK_SUFFIX = ".fallback"  # the id of a fallback's executable: the action's plus this


class ExecutableBuilder:
    """Builds executables for one generator (fixed paths, services and id source)."""

    def __init__(self, tmp_path: str, out_path: str, services: dict[str, Service],
                 id_generator: Callable[[], str], default_retries: tuple[
                     RetryPolicy | None, RetryPolicy | None] = (None, None)):
        self.tmp_path = tmp_path
        self.out_path = out_path
        self.services = services
        self.next_id = id_generator
        # the workflow's and the engine's default retry policies (steepy.model.inheritance)
        self.default_retries = default_retries

    def service(self, node: ExecNode) -> Service:
        service = self.services.get(node.service)
        if service is None:
            raise GeneratorError(f"Unknown service `{node.service}' in execute action "
                                 f"`{node.id}'")
        return service

    def build_fallback(self, node: ExecNode, value_of: Callable[[str], tuple[Any, bool]],
                       paths: dict[str, str], catch: ExecNode | None = None) -> Executable:
        """The executable of `node`'s fallback, or of the workflow's `catch` for it
        (extensions 10): it writes the paths `paths` the action's executable was given (one
        that stops need not), and runs only if that one fails."""
        fallback = node.fallback if catch is None else catch
        assert fallback is not None
        suffix = FALLBACK_SUFFIX if catch is None else CATCH_SUFFIX
        fallback = replace(fallback, id=node.id + suffix)
        unbound = sorted({o.var for o in fallback.outputs} ^ set(paths))
        if unbound and not fallback.stops:
            raise GeneratorError(f"The fallback of execute action `{node.id}' must bind exactly "
                                 f"the action's output variables (not: {', '.join(unbound)})")
        executable, _ = self.build(fallback, value_of, paths)
        executable.fallback_for = node.id
        executable.stops = fallback.stops
        return executable

    def build(self, node: ExecNode, value_of: Callable[[str], tuple[Any, bool]],
              paths: dict[str, str] | None = None) -> tuple[Executable, dict[str, str]]:
        """The executable and the values it gives its output variables.

        `value_of(var_id)` returns (value, from_results); from_results marks values reported
        by earlier chains, which matters for directory inputs. With `paths`, output variables
        get those paths instead of new ones (a fallback's).
        """
        service = self.service(node)
        arguments: list[Argument] = []
        produced: dict[str, str] = {}
        for param in service.parameters:
            if param.type == INPUT:
                args = self._inputs(node, param, value_of)
            elif param.type == OUTPUT:
                args = self._outputs(node, param, paths)
                produced.update((a.variable.id, a.variable.value) for a in args)
            else:
                continue
            _check_cardinality(node, param, args)
            arguments.extend(args)
        runtime_args = [
            Argument(self.next_id(), ArgumentVariable(r.id, "" if r.value is None else r.value),
                     INPUT, r.label, r.data_type)
            for r in service.runtime_args]
        policies = node.policies
        executable = Executable(
            id=node.id, path=service.path, service_id=service.id, arguments=arguments,
            runtime=service.runtime, runtime_args=runtime_args,
            retries=executable_policy(policies.retries, service.retries, *self.default_retries),
            max_inactivity=_either(policies.max_inactivity, service.max_inactivity),
            max_runtime=_either(policies.max_runtime, service.max_runtime),
            deadline=_either(policies.deadline, service.deadline),
            environment=dict(service.environment),
            pass_environment=list(service.pass_environment),
            python=service.python, modules=list(service.modules),
            check_outputs=service.check_outputs, cache=policies.cache)
        return executable, produced

    def _inputs(self, node: ExecNode, param: ServiceParameter,
                value_of: Callable[[str], tuple[Any, bool]]) -> list[Argument]:
        args = []
        for inp in (i for i in node.inputs if i.param == param.id):
            value, from_results = value_of(inp.var)
            if param.data_type == DATA_TYPE_DIRECTORY and from_results:
                value = common_directory(flatten(value))
            for item in flatten(value):
                args.append(Argument(param.id, ArgumentVariable(inp.var, argument_text(item)),
                                     INPUT, param.label, param.data_type, from_results))
        card = param.cardinality
        if not args and param.default is not None and card.min == 1 and card.max == 1:
            # not given, or given an empty list: the default, as in Steep
            var = ArgumentVariable(self.next_id(), argument_text(param.default))
            return [Argument(param.id, var, INPUT, param.label, param.data_type)]
        return args

    def _outputs(self, node: ExecNode, param: ServiceParameter,
                 paths: dict[str, str] | None) -> list[Argument]:
        args = []
        for out in node.outputs:
            if out.param != param.id:
                continue
            if paths is not None and out.var in paths:
                args.append(Argument(param.id, ArgumentVariable(out.var, paths[out.var]), OUTPUT,
                                     param.label, param.data_type))
                continue
            base = self.out_path if out.store else self.tmp_path
            prefix = out.prefix or ""
            start = prefix if prefix.startswith("/") else f"{base}/{prefix}"
            path = normalize_path(start + self.next_id() + (param.file_suffix or ""))
            place = f"{'out' if out.store else 'tmp'}:{prefix}" if out.store or prefix else None
            args.append(Argument(param.id, ArgumentVariable(out.var, path), OUTPUT,
                                 param.label, param.data_type, place=place))
        return args


def _either(own, fallback):
    return own if own is not None else fallback


def _check_cardinality(node: ExecNode, param: ServiceParameter, args: list[Argument]) -> None:
    count = len(args)
    if not param.cardinality.allows(count):
        # the variables that gave the input (in a for-each, the enumerator whose item had
        # too few or too many values): the action's id may be one steepy made up
        given = list(dict.fromkeys(_written(i.var) for i in node.inputs if i.param == param.id))
        source = (f" from {'variable' if len(given) == 1 else 'variables'} "
                  + ", ".join(given)) if param.type == INPUT and given else ""
        raise GeneratorError(
            f"Illegal number of arguments for {param.type} parameter `{param.id}' of service "
            f"`{node.service}' in execute action `{node.id}': got {count}{source}, but its "
            f"cardinality is {param.cardinality}")


def _written(var: str) -> str:
    """A variable as the workflow names it: a for-each's copies of the variables of its body
    end in `$<iteration>' (one per loop around it)."""
    base = _ITERATIONS.sub("", var)
    return f"`{var}'" if base == var or not base else f"`{base}' (a for-each's item)"


_ITERATIONS = re.compile(r"(\$\d+)+$")


def flatten(value: Any) -> list[Any]:
    """A value as a flat list of items (a scalar is one item; nested lists are flattened)."""
    if not isinstance(value, list):
        return [value]
    items: list[Any] = []
    for item in value:
        if isinstance(item, list):
            items.extend(flatten(item))
        else:
            items.append(item)
    return items


def normalize_path(path: str) -> str:
    """Like Java's Path.normalize: no `.`, `..` or doubled slashes (also not at the start)."""
    result = posixpath.normpath(path)
    if result.startswith("//"):
        result = "/" + result.lstrip("/")
    return result


def absolute_folder(path: str) -> str:
    """A folder (`outPath`, `tmpPath`) as the paths of chains below it begin: absolute and
    normalized (`../shared/out` is `/work/shared/out`)."""
    return normalize_path(os.path.abspath(path))


def common_directory(files: list[Any]) -> Any:
    """The deepest directory containing every file, without a trailing slash."""
    if not files:
        return []
    parents = [posixpath.dirname(normalize_path(str(f))) or "." for f in files]
    parts = [p.split("/") for p in parents]
    common: list[str] = []
    for segments in zip(*parts):
        if any(s != segments[0] for s in segments):
            break
        common.append(segments[0])
    if common == [""]:
        return "/"
    return "/".join(common) or "."
