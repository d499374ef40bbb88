"""The CLI's management commands over HTTP (`--server URL` or STEEPY_SERVER): the same
output and exit codes as against the local database."""

from __future__ import annotations

import sys
import time
from datetime import datetime
from typing import Any, Callable

import click

from steepy.cli.common import EXIT_INVALID, fail
from steepy.errors import InputError, Problem
from steepy.http.client import ApiClient, ClientError, message, server_token
from steepy.model.submission import ACTIVE_SUBMISSION, FINISHED_CHAIN



def _client(server: str) -> ApiClient:
    return ApiClient(server, server_token())


def _stop(text: str) -> None:
    click.echo(text, err=True)
    sys.exit(EXIT_INVALID)


def run(command: Callable[..., None], *args: Any) -> None:
    """Run one remote command; a server that cannot be reached or refuses is exit 2."""
    try:
        command(*args)
    except ClientError as e:
        _stop(str(e))


def submit(server: str, workflow_file: str) -> None:
    from steepy.loading import read_file

    try:
        text = read_file(workflow_file).text or ""
    except InputError as e:
        fail(e.problems)
    with _client(server) as api:
        response = api.request("POST", "/workflows", ok=(202, 400),
                               content=text.encode("utf-8"),
                               headers={"Content-Type": "application/x-yaml"})
        if response.status_code == 404:
            raise ClientError(f"{server} has no /workflows; is it a steepy or Steep server?")
        if response.status_code == 400:
            body = response.json()
            problems = [Problem(p["message"], p.get("path", ""), workflow_file, p.get("line"),
                                p.get("column")) for p in body.get("errors", [])]
            fail(problems or [Problem(message(response), file=workflow_file)])
        click.echo(f"submitted {response.json()['id']}")


def _time(text: str | None) -> str:
    if not text:
        return ""
    return datetime.fromisoformat(text.replace("Z", "+00:00")).isoformat(timespec="seconds")


def list_submissions(server: str, status: str | None, size: int, offset: int) -> None:
    from steepy.output import table

    params: dict = {"size": size, "offset": offset}
    if status:
        params["status"] = status.upper()
    with _client(server) as api:
        response = api.request("GET", "/workflows", params=params)
    if response.status_code != 200:
        raise ClientError(message(response))
    found = response.json()
    total = int(response.headers.get("x-page-total", len(found)))
    rows = []
    for s in found:
        done = sum(s.get(k, 0) for k in ("succeededProcessChains", "failedProcessChains",
                                         "cancelledProcessChains"))
        rows.append((s["id"], s["status"], s.get("name") or "",
                     f"{done}/{s.get('totalProcessChains', 0)}", _time(s.get("startTime")),
                     _time(s.get("endTime"))))
    table(["id", "status", "name", "chains done", "started", "ended"], rows)
    if total > offset + len(found):
        click.echo(f"({total} in all; --offset {offset + len(found)} for more)", err=True)


def show(server: str, item_id: str, as_json: bool) -> None:
    import json

    from steepy.cli.manage import _print_document

    with _client(server) as api:
        document = api.json("GET", f"/workflows/{item_id}/document")
        if document is None:
            document = api.json("GET", f"/processchains/{item_id}/document")
    if document is None:
        _stop(f"No submission or process chain with the id `{item_id}'.")
    if as_json:
        click.echo(json.dumps(document, indent=2))
        return
    _print_document(document)


def logs(server: str, chain_id: str, run_number: int | None, follow: bool) -> None:
    with _client(server) as api:
        chain = api.json("GET", f"/processchains/{chain_id}")
        if chain is None:
            _stop(f"No process chain with the id `{chain_id}'.")
        if not chain.get("totalRuns"):
            _stop(f"Process chain `{chain_id}' has not run yet ({chain['status']}).")
        number = run_number or chain["totalRuns"]
        path = f"/logs/processchains/{chain_id}"
        offset = 0
        while True:
            response = api.request("GET", path, ok=(200, 206, 416),
                                   params={"runNumber": number},
                                   headers={"Accept": "text/plain",
                                            "Range": f"bytes={offset}-"})
            if response.status_code == 404:
                _stop(f"No log of run {number} of `{chain_id}' on {server}.")
            if response.status_code in (200, 206) and response.content:
                offset += len(response.content)
                click.echo(response.content.decode("utf-8", "replace"), nl=False)
                continue
            if not follow:
                break
            now = api.json("GET", f"/processchains/{chain_id}")
            if now is None or now["status"] in FINISHED_CHAIN:
                break
            time.sleep(0.2)


def cancel(server: str, item_id: str) -> None:
    with _client(server) as api:
        submission = api.json("GET", f"/workflows/{item_id}")
        if submission is None:
            chain = api.json("GET", f"/processchains/{item_id}")
            if chain is None:
                _stop(f"No submission or process chain with the id `{item_id}'.")
            api.request("PUT", f"/processchains/{item_id}", json={"status": "CANCELLED"})
            click.echo(f"process chain {item_id}: cancel requested (was {chain['status']})")
            return
        before = submission["status"]
        if before not in ACTIVE_SUBMISSION:
            _stop(f"Submission `{item_id}' has already finished ({before}); nothing to cancel.")
        api.request("PUT", f"/workflows/{item_id}", json={"status": "CANCELLED"})
        click.echo(f"submission {item_id}: cancel requested (was {before}; "
                   f"{submission.get('runningProcessChains', 0)} running chain(s) are being "
                   "stopped)")


def retry(server: str, submission_id: str) -> None:
    with _client(server) as api:
        submission = api.json("GET", f"/workflows/{submission_id}")
        if submission is None:
            _stop(f"No submission with the id `{submission_id}'.")
        response = api.request("POST", f"/workflows/{submission_id}/retry", ok=(200, 409))
        if response.status_code == 404:
            _stop(f"No submission with the id `{submission_id}'.")
        if response.status_code == 409:
            _stop(message(response))
    click.echo(f"submission {submission_id}: RUNNING again (was {submission['status']}); "
               "a worker picks it up")


def events(server: str, submission_id: str) -> None:
    with _client(server) as api:
        found = api.json("GET", f"/workflows/{submission_id}/events")
    if found is None:
        _stop(f"No submission with the id `{submission_id}'.")
    from steepy.cli.live import event_line  # the local command's format

    for e in found:
        click.echo(event_line(e))
