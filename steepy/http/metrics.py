"""The Prometheus text format of /metrics: Steep's metric names where steepy has the same
thing (chains by status, retries by service, agents), steepy's own for the rest."""

from __future__ import annotations

from typing import Any

from steepy.model.submission import ProcessChainStatus, SubmissionStatus


def _label(value: Any) -> str:
    return str(value).replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')


def _family(lines: list[str], name: str, kind: str, text: str,
            samples: list[tuple[dict[str, Any], Any]]) -> None:
    lines.append(f"# HELP {name} {text}")
    lines.append(f"# TYPE {name} {kind}")
    for labels, value in samples:
        rendered = ",".join(f'{k}="{_label(v)}"' for k, v in labels.items())
        lines.append(f"{name}{{{rendered}}} {value}" if rendered else f"{name} {value}")


def render_metrics(m: dict[str, Any]) -> str:
    lines: list[str] = []
    chains = m["chains"]
    _family(lines, "steep_scheduler_process_chains", "gauge",
            "Number of process chains by status",
            [({"status": s}, chains.get(s, 0)) for s in ProcessChainStatus])
    _family(lines, "steep_local_agent_retries", "counter",
            "Executable attempts after the first (retries), by service",
            [({"serviceId": service}, n) for service, n in sorted(m["retries"].items())])
    _family(lines, "steep_remote_agents", "gauge", "Number of live agents",
            [({}, m["agents"])])
    _family(lines, "steepy_agents_busy", "gauge", "Number of live agents running a chain",
            [({}, m["busy_agents"])])
    subs = m["submissions"]
    _family(lines, "steepy_submissions", "gauge", "Number of submissions by status",
            [({"status": s}, subs.get(s, 0)) for s in SubmissionStatus])
    _family(lines, "steepy_process_chain_runs", "gauge",
            "Number of process-chain runs by outcome (RUNNING: not finished)",
            [({"status": s}, n) for s, n in sorted(m["runs"].items())])
    return "\n".join(lines) + "\n"
