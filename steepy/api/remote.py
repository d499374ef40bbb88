"""The backend over a steepy (or Steep) server's HTTP API (`steepy.connect("http://...")`,
the CLI's `--server URL` or STEEPY_SERVER). A server that refuses a request raises
ClientError (the commands say so, exit code 2); one that cannot be reached, or answers that
it cannot now (502, 503, 504), raises its subclass Unreachable (exit code 4)."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any, Iterator

from steepy.api.backends import ChainState, Requested
from steepy.errors import InputError, Problem
from steepy.http.client import (ApiClient, ClientError, decoded, message,
                                problems as server_problems, server_token)
from steepy.model.submission import (ACTIVE_CHAIN, ACTIVE_SUBMISSION, ProcessChainStatus as CS,
                                     SubmissionStatus as SS)

if TYPE_CHECKING:
    from steepy.documents.loading import Document
    from steepy.documents.variables import GivenVars

STREAM_READ_S = 60.0  # a quiet stream gets a keep-alive comment every 15 s
STREAM_RETRY_S = (0.5, 5.0)  # before opening again a stream that gave nothing: first, at most
SUBMISSION = ("id", "status")  # what an answer needs to be read as a submission
CHAIN = ("id", "submissionId", "status")  # ... as a process chain


class RemoteBackend:
    def __init__(self, server: str, token: str | None = None):
        self.server = server
        self.api = ApiClient(server, token if token is not None else server_token())

    def __enter__(self) -> "RemoteBackend":
        return self

    def __exit__(self, *_exc: Any) -> None:
        self.close()

    def close(self) -> None:
        self.api.__exit__()

    def submit(self, workflow_file: str, services: tuple[str, ...], macros: tuple[str, ...],
               given: "GivenVars | None" = None, resume: bool | None = None) -> str:
        from steepy.documents.loading import read_file

        return self.submit_document(read_file(workflow_file), services, macros, given, resume)

    def submit_document(self, document: "Document", services: tuple[str, ...],
                        macros: tuple[str, ...], given: "GivenVars | None" = None,
                        resume: bool | None = None) -> str:
        """The server checks the workflow against its own services and macros, resolving
        relative input paths against this process's working directory; its problems
        are placed in the document by their JSON paths (those of the values `given`, sent as
        the query parameter `vars`, where they were given)."""
        import json
        import os

        params = {"vars": json.dumps(given.values)} if given else {}
        # relative input paths are the submitter's, as on a database (issue 30)
        params["base"] = os.getcwd()
        if resume is not None:  # extensions 15
            params["resume"] = "true" if resume else "false"
        response = self.api.request("POST", "/workflows", ok=(202, 400), params=params,
                                    content=(document.text or "").encode("utf-8"),
                                    headers={"Content-Type": "application/x-yaml"})
        if response.status_code == 404:
            raise ClientError(f"{self.server} has no /workflows; is it a steepy or Steep server?")
        if response.status_code == 400:
            problems = [_located(p, document, given) for p in server_problems(response)]
            raise InputError(problems or [Problem(message(response), file=document.file)])
        return decoded(response, dict, ("id",))["id"]

    def submissions(self, status: str | None, size: int,
                    offset: int) -> tuple[list[dict], int]:
        params: dict[str, Any] = {"size": size, "offset": offset}
        if status:
            params["status"] = status
        response = self.api.request("GET", "/workflows", params=params)
        if response.status_code != 200:
            raise ClientError(message(response))
        found = decoded(response, list)
        return found, int(response.headers.get("x-page-total", len(found)))

    def submission(self, submission_id: str) -> dict | None:
        return self.api.json("GET", f"/workflows/{submission_id}", dict, SUBMISSION)

    def document(self, item_id: str) -> dict | None:
        document = self.api.json("GET", f"/workflows/{item_id}/document", dict)
        if document is None:
            document = self.chain_document(item_id)
        return document

    def chain_document(self, chain_id: str) -> dict | None:
        return self.api.json("GET", f"/processchains/{chain_id}/document", dict, CHAIN)

    def chain(self, chain_id: str) -> ChainState | None:
        found = self.api.json("GET", f"/processchains/{chain_id}", dict, CHAIN)
        if found is None:
            return None
        return ChainState(found["status"], found.get("totalRuns") or None, found.get("reused"))

    def log(self, chain_id: str, run_number: int, offset: int) -> bytes | None:
        response = self.api.request("GET", f"/logs/processchains/{chain_id}",
                                    ok=(200, 206, 416), params={"runNumber": run_number},
                                    headers={"Accept": "text/plain", "Range": f"bytes={offset}-"})
        if response.status_code == 404:
            return None
        return response.content if response.status_code in (200, 206) else b""

    def log_place(self, chain_id: str, run_number: int) -> str:
        return f"on {self.server}"

    def cancel(self, item_id: str) -> Requested | None:
        submission = self.api.json("GET", f"/workflows/{item_id}", dict, SUBMISSION)
        if submission is None:
            chain = self.api.json("GET", f"/processchains/{item_id}", dict, CHAIN)
            if chain is None:
                return None
            if chain["status"] not in ACTIVE_CHAIN:
                return Requested("process chain", chain["status"], False)
            self.api.request("PUT", f"/processchains/{item_id}", json={"status": CS.CANCELLED})
            return Requested("process chain", chain["status"], True)
        before = submission["status"]
        if before not in ACTIVE_SUBMISSION:
            return Requested("submission", before, False)
        self.api.request("PUT", f"/workflows/{item_id}", json={"status": SS.CANCELLED})
        return Requested("submission", before, True, submission.get("runningProcessChains", 0))

    def retry(self, submission_id: str) -> Requested | None:
        submission = self.submission(submission_id)
        if submission is None:
            return None
        response = self.api.request("POST", f"/workflows/{submission_id}/retry", ok=(200, 409))
        if response.status_code == 404:
            return None
        if response.status_code == 409:  # refused: its status as the server saw it
            now = self.submission(submission_id) or submission
            return Requested("submission", now["status"], False)
        return Requested("submission", submission["status"], True)

    def events(self, submission_id: str, after: int = 0) -> list[dict] | None:
        return self.api.json("GET", f"/workflows/{submission_id}/events", list,
                             params={"after": after})

    def follow(self, submission_id: str, after: int = 0) -> Iterator[dict]:
        """The server's stream of the submission (server-sent events), opened again after
        the last event seen should the connection end before the stream's `end`; after a
        stream that gave nothing, a while later (0.5 s, then twice as long, at most 5 s)."""
        from steepy.api.sse import read_stream

        wait_s = STREAM_RETRY_S[0]
        while True:
            seen = after
            for event in read_stream(self.api, f"/workflows/{submission_id}/stream", after,
                                     STREAM_READ_S):
                if event is None:
                    return
                after = event["id"]
                yield event
            now = self.submission(submission_id)
            if now is None or SS(now["status"]).finished:
                yield from self.events(submission_id, after) or []
                return
            if after != seen:
                wait_s = STREAM_RETRY_S[0]
            else:
                time.sleep(wait_s)
                wait_s = min(STREAM_RETRY_S[1], wait_s * 2)

    def submission_chains(self, submission_id: str, size: int,
                          status: str | None = None) -> tuple[list[dict], int] | None:
        if self.submission(submission_id) is None:
            return None
        params: dict[str, Any] = {"submissionId": submission_id, "size": size}
        if status:
            params["status"] = status
        response = self.api.request("GET", "/processchains", params=params)
        if response.status_code != 200:
            raise ClientError(message(response))
        found = decoded(response, list)
        return found, int(response.headers.get("x-page-total", len(found)))

    def live_agents(self) -> int:
        return len(self.api.json("GET", "/agents", list) or [])

    def unowned(self, submission_ids: list[str]) -> dict[str, str | None]:
        return {}

    def search(self, query: str, size: int, offset: int) -> dict:
        from datetime import datetime

        offset_now = datetime.now().astimezone().strftime("%z")  # dates as the local search's
        response = self.api.request("GET", "/search", params={
            "q": query, "size": size, "offset": offset, "count": "exact",
            "timeZone": f"{offset_now[:3]}:{offset_now[3:]}"})
        if response.status_code == 404:
            raise ClientError(f"{self.server} has no /search; is it a steepy or Steep server?")
        return decoded(response, dict, ("counts", "results"))

    def set_priority(self, item_id: str, priority: int) -> Requested | None:
        for kind, path in (("submission", f"/workflows/{item_id}"),
                           ("process chain", f"/processchains/{item_id}")):
            response = self.api.request("PUT", path, ok=(200, 422), json={"priority": priority})
            if response.status_code == 404:
                continue
            if response.status_code == 422:  # finished: refused, its status as the server sees it
                now = self.api.json("GET", path, dict) or {}
                return Requested(kind, now.get("status", "finished"), False)
            return Requested(kind, decoded(response, dict, ("status",))["status"], True)
        return None

    def services(self, services: tuple[str, ...]) -> list[dict]:
        """The server's own (it checks submissions against them): `services` is ignored."""
        found = self.api.json("GET", "/services", list)
        if found is None:
            raise ClientError(f"{self.server} has no /services; is it a steepy or Steep server?")
        return found

    def add_schedule(self, workflow_file: str, services: tuple[str, ...],
                     macros: tuple[str, ...], cron: str | None, every: str | None,
                     name: str | None, timezone: str | None,
                     given: "GivenVars | None" = None) -> dict:
        """The server checks the workflow against its own services and macros, resolving
        relative input paths against this process's working directory (as `submit`)."""
        import os

        from steepy.documents.loading import read_file

        body = {"workflow": read_file(workflow_file).text or "", "cron": cron, "every": every,
                "name": name, "timezone": timezone, "vars": given.values if given else None}
        response = self.api.request("POST", "/schedules", ok=(201, 400),
                                    params={"base": os.getcwd()},
                                    json={k: v for k, v in body.items() if v is not None},
                                    headers={"Accept": "application/json"})
        if response.status_code == 404:
            raise ClientError(f"{self.server} has no /schedules; is it a steepy server?")
        if response.status_code == 400:
            options = {"cron": "--cron", "every": "--every", "timezone": "--timezone",
                       "cron/every": "--cron/--every"}
            problems = [_given(p, given) or Problem(
                p["message"], p.get("path", ""), options.get(p.get("file"), workflow_file),
                p.get("line"), p.get("column")) for p in server_problems(response)]
            raise InputError(problems or [Problem(message(response), file=workflow_file)])
        return decoded(response, dict)

    def schedules(self) -> list[dict]:
        found = self.api.json("GET", "/schedules", list)
        if found is None:
            raise ClientError(f"{self.server} has no /schedules; is it a steepy server?")
        return found

    def schedule(self, schedule_id: str) -> dict | None:
        return self.api.json("GET", f"/schedules/{schedule_id}", dict)

    def pause_schedule(self, schedule_id: str, paused: bool) -> dict | None:
        return self.api.json("PUT", f"/schedules/{schedule_id}", dict, json={"paused": paused})

    def remove_schedule(self, schedule_id: str) -> bool:
        response = self.api.request("DELETE", f"/schedules/{schedule_id}", ok=(204,))
        return response.status_code == 204

    def notifications(self, failed: bool, size: int) -> tuple[list[dict], int]:
        response = self.api.request("GET", "/notifications",
                                    params={"failed": str(failed).lower(), "size": size})
        if response.status_code == 404:
            raise ClientError(f"{self.server} has no /notifications; is it a steepy server?")
        if response.status_code != 200:
            raise ClientError(message(response))
        found = decoded(response, list)
        return found, int(response.headers.get("x-page-total", len(found)))


def _located(problem: dict, document: "Document", given: "GivenVars | None" = None) -> Problem:
    """A problem the server found, placed in `document` (the file it was read from) by its
    JSON path: the text sent may not be the file's (a dict); one of a value `given`, where it
    was given (`--var NAME`, a line of a `--vars` file)."""
    from steepy.http.submit import NAME

    if document.file and NAME + ":" in problem["message"]:  # (the text sent is the file's)
        problem = {**problem, "message": problem["message"].replace(NAME + ":",
                                                                    document.file + ":")}
    given_here = _given(problem, given)
    if given_here is not None:
        return given_here
    found = Problem(problem["message"], problem.get("path", ""), document.file,
                    problem.get("line"), problem.get("column"))
    if found.path and document.positions:
        found.line = found.column = None
        document.locate(found)
    return found


def _given(problem: dict, given: "GivenVars | None") -> Problem | None:
    """A problem the server found with a value `given`, where it was given (`--var NAME`, a
    line of a `--vars` file); None for any other problem."""
    from steepy.documents.variables import GIVEN

    if given and problem.get("file") == GIVEN:
        return given.problem_at(problem.get("path", ""), problem["message"])
    return None
