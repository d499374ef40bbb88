"""Replays agent scenarios (the format of agent-timeouts.yaml) with real processes."""

from __future__ import annotations

import asyncio
import json
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from unittest import mock

import psutil

import steepy.agent.attempt
from steepy.agent import AgentConfig, ChainOutcome, LocalAgent
from steepy.model.policies import RetryPolicy, TimeoutKind, TimeoutPolicy
from steepy.model.processchain import Argument, ArgumentVariable, Executable, ProcessChain

HERE = Path(__file__).resolve().parent
TOOL = HERE / "tool.py"


def recording_docker(directory: Path, real: str) -> tuple[Path, Path]:
    """A `docker` in `directory` that records its argv, one line per call (words separated by
    the unit separator), then runs the real client: scenarios run containers for real."""
    record = directory / "docker-argv.log"
    script = directory / "docker"
    script.write_text("#!/bin/sh\n{ for a in \"$@\"; do printf '%s\\037' \"$a\"; done; echo; } "
                      f">> '{record}'\nexec '{real}' \"$@\"\n")
    script.chmod(0o755)
    return script, record


def recorded_docker_calls(record: Path | None) -> list[list[str]]:
    if record is None or not record.exists():
        return []
    return [line.split("\x1f")[:-1] for line in record.read_text().splitlines()]


def uses_docker(scenario: dict) -> bool:
    return any(s.get("runtime") == "docker" for s in scenario["executables"])


def inputs(values: list[str]) -> list[Argument]:
    return [Argument(f"arg{i}", ArgumentVariable(f"var{i}", str(v)), "input")
            for i, v in enumerate(values)]


def tool_executable(exe_id: str, service_id: str, calls: list, directory: Path,
                    **policies) -> tuple[Executable, Path]:
    """An executable running tool.py with `calls`; returns it and its counter file."""
    spec = directory / f"{exe_id}.spec.json"
    spec.write_text(json.dumps({"calls": calls}))
    counter = directory / f"{exe_id}.count"
    args = inputs(["-S", str(TOOL), str(spec), str(counter)])
    return Executable(exe_id, sys.executable, service_id, args, **policies), counter


def read_count(counter: Path | None) -> int:
    if counter is None or not counter.exists():
        return 0
    return int(counter.read_text() or 0)


def _policies(spec: dict) -> dict:
    out = {}
    if spec.get("retries") is not None:
        out["retries"] = RetryPolicy.from_json(spec["retries"])
    for kind in TimeoutKind:
        if spec.get(kind) is not None:
            out[kind.attribute] = TimeoutPolicy.from_json(spec[kind])
    return out


@dataclass
class Replay:
    outcome: ChainOutcome
    calls: list[int]  # starts per executable (None for real commands: counted by attempts)
    elapsed_ms: float
    estimator_calls: int = 0
    progress_events: list[float] = field(default_factory=list)
    events: list[tuple[str, dict]] = field(default_factory=list)
    docker_calls: list[list[str]] = field(default_factory=list)
    timer_late_ms: list[float] = field(default_factory=list)  # RunResult.late_ms per timeout
    loop_late_ms: float = 0.0  # the most a 5 ms probe timer on the same loop fired late
    cancelled_at_ms: float | None = None  # when the external cancellation was made


def build_chain(scenario: dict, directory: Path,
                image: str | None = None) -> tuple[ProcessChain, list[Path | None]]:
    """The scenario's chain; `image` replaces a container's image (no registry here)."""
    executables, counters = [], []
    for i, spec in enumerate(scenario["executables"]):
        behaviour = spec["behaviour"]
        exe_id = spec.get("id", f"exe{i}")
        policies = _policies(spec)
        if "calls" in behaviour:
            exe, counter = tool_executable(exe_id, spec["serviceId"], behaviour["calls"],
                                           directory, **policies)
        elif "command" in behaviour:
            command = behaviour["command"]
            exe, counter = Executable(exe_id, command[0], spec["serviceId"], inputs(command[1:]),
                                      **policies), None
        else:
            container = behaviour["container"]
            exe, counter = Executable(exe_id, image or container["image"], spec["serviceId"],
                                      inputs(container.get("args", [])), runtime="docker",
                                      **policies), None
        executables.append(exe)
        counters.append(counter)
    return ProcessChain(scenario.get("chainId", "chain-" + scenario["name"]), executables), counters


def _estimator(scenario: dict):
    spec = scenario.get("progress_estimator")
    if spec is None:
        return None, [0]
    calls = [0]

    def estimate(exe: Executable, lines: list[str]) -> float | None:
        if exe.service_id != spec["serviceId"]:
            return None
        calls[0] += 1
        return float(lines[-1]) / 5  # "last output line as a number divided by 5"

    return estimate, calls


async def replay(scenario: dict, directory: Path, config: AgentConfig | None = None,
                 docker: dict[str, str] | None = None) -> Replay:
    """Run the scenario; one with a container needs `docker', what `.ci/docker start' said."""
    chain, counters = build_chain(scenario, directory, None if docker is None else docker["image"])
    if config is None:
        config = AgentConfig(kill_grace_period_ms=2000, log_dir=directory / "logs")
    record = None
    if docker is not None:
        client, record = recording_docker(directory, docker["docker"])
        given = {**config.runtimes.get("docker", {}), "command": str(client), "pull": "never"}
        config.runtimes = {**config.runtimes, "docker": given}
        config.env = {**config.env, **{k: v for k, v in docker.items() if k.isupper()}}
    estimator, estimator_calls = _estimator(scenario)
    events: list[tuple[str, dict]] = []
    agent = LocalAgent("agent-1", config, progress_estimator=estimator,
                       on_event=lambda kind, data: events.append((kind, data)))
    loop = asyncio.get_running_loop()
    cancel = scenario.get("cancel")
    timer = None
    cancelled_at: list[float] = []
    start = time.monotonic()
    if cancel is not None:
        via = cancel.get("via", "agent")
        if via == "agent":
            request = lambda: agent.cancel(chain.id)  # noqa: E731
        elif via == "message":
            request = lambda: agent.handle_message(chain.id, {"action": "cancel"})  # noqa: E731
        else:  # "thread": from a thread that is not the event loop's
            request = lambda: threading.Thread(target=agent.cancel).start()  # noqa: E731

        def action() -> None:
            cancelled_at.append((time.monotonic() - start) * 1000)
            request()

        timer = loop.call_later(cancel["after_ms"] / 1000, action)
    timer_late: list[float] = []
    real_run_process = steepy.agent.attempt.run_process

    async def recording_run_process(*args, **kwargs):
        result = await real_run_process(*args, **kwargs)
        if result.timeout_kind is not None:
            timer_late.append(result.late_ms)
        return result

    probe_late = [0.0]
    probe = asyncio.ensure_future(_probe(loop, probe_late))
    try:
        with mock.patch.object(steepy.agent.attempt, "run_process", recording_run_process):
            outcome = await agent.execute(chain, submission_id="submission-1")
    finally:
        probe.cancel()
        if timer is not None:
            timer.cancel()
    elapsed = (time.monotonic() - start) * 1000
    return Replay(outcome, [read_count(c) for c in counters], elapsed, estimator_calls[0],
                  [d["progress"] for k, d in events if k == "chain.progress"], events,
                  recorded_docker_calls(record), timer_late, probe_late[0],
                  cancelled_at[0] if cancelled_at else None)


async def _probe(loop: asyncio.AbstractEventLoop, worst: list[float]) -> None:
    """Measures what the machine delivers: how late a timer on this loop fires (every 5 ms)."""
    while True:
        due = loop.time() + 0.005
        await asyncio.sleep(0.005)
        worst[0] = max(worst[0], (loop.time() - due) * 1000)


def attempts_for(outcome: ChainOutcome, exe_id: str) -> list:
    """The real attempts (not SKIPPED records) of one executable."""
    return [r for r in outcome.attempts if r.executable_id == exe_id and r.outcome != "SKIPPED"]


def running(pid: int) -> bool:
    """The process lives (a zombie does not)."""
    try:
        return alive(psutil.Process(pid))
    except psutil.Error:
        return False


def alive(p: psutil.Process) -> bool:
    """The process (as it was when `p` was made: not another with its pid) lives, and is no
    zombie; one that ends between the two looks is not alive (no NoSuchProcess)."""
    try:
        return p.is_running() and p.status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False
