"""The keys of reusable work (issue 30, extensions 15): what an executable's outcome depends
on, as one sha256.

An executable's key is a hash over its service's declaration (and the content of the tool
when its path is a local file), its runtime and runtime arguments, its declared environment,
and each argument with its id, label, type, data type and a value that does not depend on
the submission:

- an output path: its position (`{"output": [executable, argument]}`), since every run
  writes below its own `tmpPath/<id>`, and, when its action says so, its place (`store`,
  `prefix`: an output stored, or written below another folder, is not the same work);
- an input that an earlier executable of the same chain writes: that output's position
  (and the path below it);
- an input that is an existing file or directory: its path and fingerprint (size and
  modification time, or the content hash in `deep` mode; a directory by the files below it,
  whatever the input's data type: steepy.engine.fingerprints);
- anything else: the value itself.

The values of one variable given to one parameter count in any order when earlier chains
reported them (`Argument.reported`): a for-each's output lists its items in the order their
iterations ended, which differs from run to run, and a join over it would never be reused
otherwise. A list the workflow or `--var` gives keeps its order: `cat b a` is not `cat a b`.

An executable's key is computed in two steps: its shape is the hash of all this with the
input files by path alone; its key the hash of the shape and the files' fingerprints. An
earlier run of the same shape tells which input file changed (`steepy plan --resume`). A
chain's key is the hash of its executables' keys in order. The file system is read only
through the `Fingerprint` function the caller gives, so this module stays pure.
"""

from __future__ import annotations

import hashlib
from itertools import groupby
from dataclasses import dataclass
from typing import Any, Callable

from steepy.model.jsontext import compact_encoder
from steepy.model.processchain import Argument, Executable, ProcessChain
from steepy.model.service import Service

CACHE_OFF = "false"  # `cache: false': never reused, never recorded
CACHE_DEEP = "deep"  # `cache: deep': files compared by content
CACHE_STANDARD = "standard"  # files compared by path, size and modification time
MODES = (CACHE_STANDARD, CACHE_DEEP)

# (path, deep) -> a JSON-able fingerprint of the file or directory, None when there is none,
# UNCOMPARABLE when it cannot be compared (steepy.engine.fingerprints)
Fingerprint = Callable[[str, bool], Any]
UNCOMPARABLE = "uncomparable"  # a folder too large, a file not to be read: never reused


_CANONICAL = compact_encoder(sort_keys=True, default=str)


def digest(value: Any) -> str:
    """sha256 of the canonical JSON of `value`."""
    return hashlib.sha256(_CANONICAL(value).encode()).hexdigest()


@dataclass(frozen=True, slots=True)
class ChainKeys:
    """A chain's executables' keys, in order, and the chain's own key; each executable's
    shape and input files (path -> fingerprint), in the same order."""

    executables: tuple[str, ...]
    chain: str
    shapes: tuple[str, ...] = ()
    files: tuple[dict[str, Any], ...] = ()
    # an input (or tool) that cannot be compared: the chain is neither reused nor recorded
    uncomparable: str | None = None


@dataclass(frozen=True, slots=True)
class ExecutableKey:
    key: str
    shape: str  # the hash of all but the fingerprints of the input files
    files: dict[str, Any]  # input file (or directory) -> its fingerprint
    uncomparable: str | None = None  # a path that cannot be compared (ChainKeys)


WORDS = ("name", "description")  # what a service and its parameters say to people


def declared(service: Service) -> dict:
    """What of a service's declaration counts in a key: all of it but the words for people
    (its name and description, and its parameters'), which no tool reads: a description
    edited makes no earlier run stale."""
    out = {k: v for k, v in service.to_json().items() if k not in WORDS}
    out["parameters"] = [{k: v for k, v in p.items() if k not in WORDS}
                         for p in out.get("parameters") or []]
    return out


def tool_file(path: str) -> bool:
    """Whether an executable's path names a file whose content counts in its key (`./run.sh',
    `/opt/tools/x'), not a command found on PATH, which counts by its name alone."""
    return "/" in path


def service_mode(service: Service | None, default: str) -> str:
    """How the work of an executable of `service` is reused: `false', `deep' or `standard'."""
    own = None if service is None else service.cache
    return own if own is not None else default


def executable_mode(exe: Executable, service: Service | None, default: str) -> str:
    """Its action's `cache', else its service's, else `default'."""
    return exe.cache if exe.cache is not None else service_mode(service, default)


class KeyMemo:
    """What the keys of many executables share, made once: the digests of the services'
    declarations, and the text of an executable's material but its arguments (10,000
    executables of one tool share it; it is compared, not trusted, before it serves)."""

    def __init__(self) -> None:
        self.services: dict[str, str] = {}
        self._rest: dict[tuple, tuple[tuple, str]] = {}

    def service(self, service: Service) -> str:
        found = self.services.get(service.id)
        if found is None:
            found = self.services[service.id] = digest(declared(service))
        return found

    def rest(self, exe: Executable, service: str | None, tool: Any, deep: bool) -> str:
        """The canonical text of the material's members after `arguments`, from the comma
        on (the members are sorted: `arguments` comes first)."""
        runtime_args = [[a.variable.id, a.label, a.data_type, a.variable.value]
                        for a in exe.runtime_args]
        fields = (tool, runtime_args, exe.environment, exe.pass_environment, exe.python,
                  exe.modules)
        place = (service, exe.path, exe.runtime, deep)
        found = self._rest.get(place)
        if found is not None and found[0] == fields:
            return found[1]
        text = _CANONICAL({
            "service": service, "path": exe.path, "tool": tool, "runtime": exe.runtime,
            # (a runtime argument by its declared id: its own id is drawn anew for every run)
            "runtimeArgs": runtime_args,
            "environment": exe.environment, "passEnvironment": exe.pass_environment,
            "python": None if exe.python is None else exe.python.to_json(),
            "modules": exe.modules, "mode": "deep" if deep else "standard"})
        text = "," + text[1:]
        if len(self._rest) >= 10_000:  # (a worker's whole life: one tool seldom has many)
            self._rest.clear()
        self._rest[place] = (fields, text)
        return text


def chain_keys(chain: ProcessChain, services: dict[str, Service], fingerprint: Fingerprint,
               default_mode: str = CACHE_STANDARD,
               memo: KeyMemo | None = None) -> ChainKeys | None:
    """The keys of `chain`; None when one of its services says `cache: false'. `memo` keeps
    what the keys share between calls (for the same `services`)."""
    outputs: dict[str, tuple[int, int]] = {}  # path -> (executable, argument) writing it
    keys: list[ExecutableKey] = []
    memo = KeyMemo() if memo is None else memo
    for position, exe in enumerate(chain.executables):
        service = services.get(exe.service_id)
        mode = executable_mode(exe, service, default_mode)
        if mode == CACHE_OFF:
            return None
        keys.append(executable_key(exe, None if service is None else memo.service(service),
                                   position, outputs, fingerprint, mode == CACHE_DEEP, memo))
    own = [k.key for k in keys]
    return ChainKeys(tuple(own), digest(own), tuple(k.shape for k in keys),
                     tuple(k.files for k in keys),
                     next((k.uncomparable for k in keys if k.uncomparable), None))


def executable_key(exe: Executable, service: str | None, position: int,
                   outputs: dict[str, tuple[int, int]], fingerprint: Fingerprint,
                   deep: bool, memo: KeyMemo | None = None) -> ExecutableKey:
    """The key of `exe`, the executable at `position` in its chain, whose service's
    declaration has the digest `service`. `outputs` maps the output paths of the
    executables before it to their positions; its own are added."""
    arguments = []
    files: dict[str, Any] = {}
    for index, arg in enumerate(exe.arguments):
        value = arg.variable.value
        if arg.type == "output":
            outputs.setdefault(value, (position, index))
            normal: Any = {"output": [position, index]}
            if arg.place is not None:  # stored, or below a prefix of its own
                normal["place"] = arg.place
        else:
            normal = _input(value, outputs, fingerprint, deep)
            if isinstance(normal, dict) and "file" in normal:  # in the shape by its path
                files[value] = normal.pop("fingerprint")
        arguments.append([arg.id, arg.label, arg.type, arg.data_type, normal])
    arguments = _unordered(arguments, exe.arguments)
    tool = fingerprint(exe.path, True) if tool_file(exe.path) else None
    rest = (memo or KeyMemo()).rest(exe, service, tool, deep)
    # the canonical text of the whole material (`digest'), its first member written here
    shape = hashlib.sha256(('{"arguments":' + _CANONICAL(arguments) + rest).encode()).hexdigest()
    uncomparable = next((path for path, look in files.items() if look == UNCOMPARABLE),
                        exe.path if tool == UNCOMPARABLE else None)
    return ExecutableKey(digest([shape, files]), shape, files, uncomparable)


def _unordered(arguments: list[list], given: list[Argument]) -> list[list]:
    """`arguments` (normalized from `given`) with each run of inputs that are values of one
    variable for one parameter, reported by earlier chains, sorted by value: a for-each's
    output lists its items in the order their iterations ended, which differs from run to
    run. Values the workflow gives keep their order."""
    keys = [(a.id, a.variable.id) for a in given]
    if len(set(keys)) == len(keys):  # one value per parameter and variable: nothing to sort
        return arguments
    out: list[list] = []
    for (_, _, kind), run in groupby(zip(arguments, given),
                                     key=lambda pair: (pair[1].id, pair[1].variable.id,
                                                       pair[1].type)):
        group = list(run)
        if kind != "output" and len(group) > 1 and all(arg.reported for _, arg in group):
            group.sort(key=lambda pair: pair[1].variable.value)
        out.extend(argument for argument, _ in group)
    return out


def _input(value: str, outputs: dict[str, tuple[int, int]], fingerprint: Fingerprint,
           deep: bool) -> Any:
    written = outputs.get(value)
    if written is not None:
        return {"output": list(written)}
    for path, place in outputs.items():  # a file below an output directory of the chain
        if path and value.startswith(path.rstrip("/") + "/"):
            return {"output": list(place), "below": value[len(path.rstrip("/")) + 1:]}
    found = fingerprint(value, deep) if value else None  # a file or directory (or not)
    if found is not None:
        return {"file": value, "fingerprint": found}
    return value
