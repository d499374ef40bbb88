"""Process chains: the list (`/processchains`, newest first, by status or submission, paged)
and one chain (`/processchains/{id}`, `/processchains/{id}/runs/{n}`): its executables as
command lines with their policies, its runs and the attempts of each run (how each ended,
which timeout fired, the pause before the next and the rule that chose it)."""

from __future__ import annotations

import shlex
import signal
from collections import defaultdict
from dataclasses import dataclass
from urllib.parse import quote

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from steepy.events import EventKind as K, kinds
from steepy.model.common import DIRECT_RUNTIME
from steepy.model.durations import format_duration
from steepy.model.processchain import Executable
from steepy.model.policies import RetryPolicy, TimeoutKind, TimeoutPolicy
from steepy.model.submission import ACTIVE_CHAIN, ProcessChainStatus
from steepy.runtimes.commands import argument_list
from steepy.ui.paging import MAX_OFFSET, Listing, query_int
from steepy.ui.render import base_path, not_found
from steepy.ui.render import page as render
from steepy.ui.routing import page

STATUSES = [str(s) for s in (ProcessChainStatus.REGISTERED, ProcessChainStatus.PAUSED,
                             ProcessChainStatus.RUNNING, ProcessChainStatus.SUCCESS,
                             ProcessChainStatus.ERROR, ProcessChainStatus.CANCELLED)]
LIVE_KINDS = ",".join([K.CHAIN_REGISTERED, K.CHAIN_STARTED, K.CHAIN_FINISHED, K.CHAIN_REQUEUED,
                       K.CHAIN_RESUMED, K.CHAIN_PROGRESS, K.CHAIN_PRIORITY,
                       K.CHAIN_CANCEL_REQUESTED, K.CHAIN_AGENT_LOST, K.CHAIN_ATTEMPT_FAILED,
                       K.CHAIN_RETRY_SCHEDULED])
CHAIN_KINDS = ",".join(kinds("chain"))  # a chain's page


# ---------------------------------------------------------------------------------- list

def chain_list(request: Request) -> Response:
    ctx = request.app.state.ctx
    q = request.query_params
    status = q.get("status") or None
    submission_id = q.get("submissionId") or None
    problem = None
    if status is not None and status not in STATUSES:
        problem, status = f"There is no process chain status `{status}'.", None
    listing = Listing.read(request, "/processchains", status=status, submissionId=submission_id)
    items, total = ctx.views.chain_summaries(submission_id, status, listing.size, listing.offset)
    listing.showing(len(items), total)
    for item in items:
        numbers = ctx.views.run_numbers(item["id"]) if item.get("startTime") else []
        item["runNumber"] = numbers[-1] if numbers else None

    filters = [("All", listing.link(status=None, offset=None), status is None)]
    filters += [(s, listing.link(status=s, offset=None), s == status) for s in STATUSES]
    return render(request, "chains.html", status=400 if problem else 200, chains=items,
                  filter_status=status, submission_id=submission_id, problem=problem,
                  filters=filters, listing=listing,
                  all_submissions=listing.link(submissionId=None, offset=None),
                  live_kinds=LIVE_KINDS)


# ---------------------------------------------------------------------------------- one chain

@dataclass
class ExecutableView:
    id: str
    service_id: str
    runtime: str
    command: str
    policies: list[tuple[str, str]]


def command_line(exe: Executable) -> str:
    """The argv as one shell-quoted line (what the `other` runtime runs); other runtimes get
    their name first, then the path (e.g. an image) and the arguments."""
    argv = shlex.join([exe.path, *argument_list(exe.arguments)])
    if exe.runtime == DIRECT_RUNTIME:
        return argv
    extra = argument_list(exe.runtime_args)
    return f"[{exe.runtime}{' ' + shlex.join(extra) if extra else ''}] {argv}"


def describe_retries(policy: RetryPolicy) -> str:
    if policy.max_attempts in (0, 1):  # no retry: a delay rule would say nothing
        return ("no attempt (maxAttempts is 0: skipped)" if policy.max_attempts == 0
                else "1 attempt, no retry")
    attempts = ("unlimited attempts" if policy.max_attempts < 0
                else f"{policy.max_attempts} attempts")
    text = f"{attempts}; delay {policy.describe_delay_rule()}"
    if policy.retry_on is not None:
        text += f"; retry on {_condition(policy.retry_on.to_json())}"
    if policy.abort_on is not None:
        text += f"; abort on {_condition(policy.abort_on.to_json())}"
    return text


def _condition(data: dict) -> str:
    parts = []
    if data.get("exitCodes"):
        parts.append("exit codes " + ", ".join(str(c) for c in data["exitCodes"]))
    if data.get("output") is not None:
        parts.append(f"output matching `{data['output']}'")
    if data.get("timeouts"):
        parts.append("timeouts " + ", ".join(data["timeouts"]))
    return " or ".join(parts) or "anything"


def describe_timeout(policy: TimeoutPolicy) -> str:
    then = "ERROR" if policy.error_on_timeout else "CANCELLED"
    return f"{format_duration(policy.timeout)} (then {then})"


def executable_view(exe: Executable) -> ExecutableView:
    policies = []
    if exe.retries is not None:
        policies.append(("retries", describe_retries(exe.retries)))
    for kind in TimeoutKind:
        policy = kind.policy(exe)
        if policy is not None:
            policies.append((kind.value, describe_timeout(policy)))
    if exe.fallback_for is not None:
        policies.insert(0, ("fallback", f"runs only if `{exe.fallback_for}' fails after all its "
                                        "attempts, and writes its outputs instead"))
    return ExecutableView(exe.id, exe.service_id, exe.runtime, command_line(exe), policies)


def signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return "unknown signal"


def attempt_outcome(a: dict) -> str:
    """How one attempt ended, in words: succeeded, exit code N, killed by signal N (NAME),
    the timeout that fired."""
    outcome = a.get("outcome")
    if outcome == "SUCCESS":
        return "succeeded"
    if outcome == "SKIPPED":
        return "skipped (maxAttempts is 0)"
    if outcome == "TIMEOUT":
        words = a.get("timeoutKind") or ""  # an attempt record names it in words
        kind = TimeoutKind.from_words(words)
        return f"timeout: {words if kind is None else kind.value} fired ({words})"
    if outcome == "CANCELLED":
        return "cancelled"
    if outcome == "RUNNING":
        return "running"
    if outcome in ("AGENT_LOST", "INTERRUPTED"):
        why = "its engine was lost" if outcome == "AGENT_LOST" else "its engine stopped"
        return f"cut: {why}; it counts as an attempt spent"
    if outcome == "REQUEUED":
        code = f" (exit code {a['exitCode']})" if a.get("exitCode") is not None else ""
        return f"re-queued{code}: not counted as an attempt"
    if a.get("signal") is not None:
        return f"killed by signal {a['signal']} ({signal_name(a['signal'])})"
    if a.get("exitCode") is not None:
        return f"failed with exit code {a['exitCode']}"
    return "failed"


def next_step(a: dict) -> str:
    """What followed an attempt: the pause and the rule that chose it, or why none came."""
    delay, rule = a.get("delayMs"), a.get("delayRule")
    if delay is not None:
        return f"next attempt after {format_duration(int(delay))}" + (f" — {rule}" if rule else "")
    return rule or ""


def chain_page(request: Request) -> Response:
    ctx = request.app.state.ctx
    chain_id = request.path_params["id"]
    wanted = request.path_params.get("run")
    record = ctx.views.get_chain(chain_id)
    if record is None:
        return not_found(request, f"There is no process chain with ID `{chain_id}'.")
    run_number = None
    if wanted is not None:
        run_number = query_int(wanted, 0, -1, MAX_OFFSET)
    doc = ctx.views.chain(chain_id, run_number)
    if doc is None:
        return not_found(request, f"Process chain `{chain_id}' has no run {wanted}.")
    runs = ctx.views.runs(chain_id)
    attempts: dict[int, list[dict]] = defaultdict(list)
    for a in ctx.views.attempts(chain_id):
        a["outcomeText"], a["next"] = attempt_outcome(a), next_step(a)
        attempts[a["runNumber"]].append(a)
    shown = [r for r in runs if run_number is None or r.run_number == run_number]
    chain_retries = record.chain.retries
    return render(request, "chain.html", chain=doc, chain_id=chain_id, run_number=run_number,
                  executables=[executable_view(e) for e in record.chain.executables],
                  runs=runs, shown_runs=shown, attempts=attempts,
                  chain_retries=None if chain_retries is None else describe_retries(chain_retries),
                  active=doc["status"] in ACTIVE_CHAIN and run_number is None,
                  latest=runs[-1].run_number if runs else None,
                  live_kinds=CHAIN_KINDS)


def runs_page(request: Request) -> Response:
    """A browser asking for a chain's runs goes to the chain's page (301, as in Steep)."""
    query = request.url.query
    location = f"{base_path(request)}/processchains/{quote(request.path_params['id'], safe='')}"
    return RedirectResponse(location + ("?" + query if query else ""), 301)


ROUTES = [page("/processchains", chain_list),
          page("/processchains/{id}", chain_page),
          page("/processchains/{id}/runs", runs_page),
          page("/processchains/{id}/runs/{run}", chain_page)]
