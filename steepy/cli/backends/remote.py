"""The management commands' backend over a steepy (or Steep) server's HTTP API
(`--server URL` or STEEPY_SERVER). A server that cannot be reached or refuses a request
raises ClientError (the commands say so, exit code 2)."""

from __future__ import annotations

from typing import Any

from steepy.cli.backends import ChainState, Requested
from steepy.errors import InputError, Problem
from steepy.http.client import ApiClient, ClientError, message, server_token
from steepy.model.submission import (ACTIVE_SUBMISSION, ProcessChainStatus as CS,
                                     SubmissionStatus as SS)


class RemoteBackend:
    def __init__(self, server: str):
        self.server = server
        self.api = ApiClient(server, server_token())

    def __enter__(self) -> "RemoteBackend":
        return self

    def __exit__(self, *_exc: Any) -> None:
        self.api.__exit__()

    def submit(self, workflow_file: str, services: tuple[str, ...],
               macros: tuple[str, ...]) -> str:
        """The server checks the workflow against its own services and macros."""
        from steepy.documents.loading import read_file

        text = read_file(workflow_file).text or ""
        response = self.api.request("POST", "/workflows", ok=(202, 400),
                                    content=text.encode("utf-8"),
                                    headers={"Content-Type": "application/x-yaml"})
        if response.status_code == 404:
            raise ClientError(f"{self.server} has no /workflows; is it a steepy or Steep server?")
        if response.status_code == 400:
            body = response.json()
            problems = [Problem(p["message"], p.get("path", ""), workflow_file, p.get("line"),
                                p.get("column")) for p in body.get("errors", [])]
            raise InputError(problems or [Problem(message(response), file=workflow_file)])
        return response.json()["id"]

    def submissions(self, status: str | None, size: int,
                    offset: int) -> tuple[list[dict], int]:
        params: dict[str, Any] = {"size": size, "offset": offset}
        if status:
            params["status"] = status
        response = self.api.request("GET", "/workflows", params=params)
        if response.status_code != 200:
            raise ClientError(message(response))
        found = response.json()
        return found, int(response.headers.get("x-page-total", len(found)))

    def document(self, item_id: str) -> dict | None:
        document = self.api.json("GET", f"/workflows/{item_id}/document")
        if document is None:
            document = self.api.json("GET", f"/processchains/{item_id}/document")
        return document

    def chain(self, chain_id: str) -> ChainState | None:
        found = self.api.json("GET", f"/processchains/{chain_id}")
        if found is None:
            return None
        return ChainState(found["status"], found.get("totalRuns") or None)

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
        submission = self.api.json("GET", f"/workflows/{item_id}")
        if submission is None:
            chain = self.api.json("GET", f"/processchains/{item_id}")
            if chain is None:
                return None
            self.api.request("PUT", f"/processchains/{item_id}", json={"status": CS.CANCELLED})
            return Requested("process chain", chain["status"], True)
        before = submission["status"]
        if before not in ACTIVE_SUBMISSION:
            return Requested("submission", before, False)
        self.api.request("PUT", f"/workflows/{item_id}", json={"status": SS.CANCELLED})
        return Requested("submission", before, True, submission.get("runningProcessChains", 0))

    def retry(self, submission_id: str) -> Requested | None:
        submission = self.api.json("GET", f"/workflows/{submission_id}")
        if submission is None:
            return None
        response = self.api.request("POST", f"/workflows/{submission_id}/retry", ok=(200, 409))
        if response.status_code == 404:
            return None
        if response.status_code == 409:  # refused: its status as the server saw it
            now = self.api.json("GET", f"/workflows/{submission_id}") or submission
            return Requested("submission", now["status"], False)
        return Requested("submission", submission["status"], True)

    def events(self, submission_id: str) -> list[dict] | None:
        return self.api.json("GET", f"/workflows/{submission_id}/events")

    def add_schedule(self, workflow_file: str, services: tuple[str, ...],
                     macros: tuple[str, ...], cron: str | None, every: str | None,
                     name: str | None, timezone: str | None) -> dict:
        """The server checks the workflow against its own services and macros."""
        from steepy.documents.loading import read_file

        body = {"workflow": read_file(workflow_file).text or "", "cron": cron, "every": every,
                "name": name, "timezone": timezone}
        response = self.api.request("POST", "/schedules", ok=(201, 400),
                                    json={k: v for k, v in body.items() if v is not None},
                                    headers={"Accept": "application/json"})
        if response.status_code == 404:
            raise ClientError(f"{self.server} has no /schedules; is it a steepy server?")
        if response.status_code == 400:
            options = {"cron": "--cron", "every": "--every", "timezone": "--timezone",
                       "cron/every": "--cron/--every"}
            problems = [Problem(p["message"], p.get("path", ""),
                                options.get(p.get("file"), workflow_file), p.get("line"),
                                p.get("column"))
                        for p in response.json().get("errors", [])]
            raise InputError(problems or [Problem(message(response), file=workflow_file)])
        return response.json()

    def schedules(self) -> list[dict]:
        found = self.api.json("GET", "/schedules")
        if found is None:
            raise ClientError(f"{self.server} has no /schedules; is it a steepy server?")
        return found

    def schedule(self, schedule_id: str) -> dict | None:
        return self.api.json("GET", f"/schedules/{schedule_id}")

    def pause_schedule(self, schedule_id: str, paused: bool) -> dict | None:
        return self.api.json("PUT", f"/schedules/{schedule_id}", json={"paused": paused})

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
        found = response.json()
        return found, int(response.headers.get("x-page-total", len(found)))
