"""The "New workflow" editor (`/new/workflow`): a text area for a workflow in YAML or JSON,
starting with a small example or, with `?from=<submission id>`, with that submission's source
(the workflow page's "resubmit"; as it ran when relative paths in its text were resolved
against the submitter's folder, which the server would resolve against its own). Below it,
a field per variable of that workflow with a default value (a resubmission's filled with the
values given to it, as they ran; the script asks `/new/workflow/variables` for the fields of
the text as it changes). The page's script
(static/editor.js) POSTs the text to the API's `/workflows`, with the fields filled in as its
query parameter `vars`, and shows the API's `line:column: path: message` problems beside the
text; the page itself stores nothing."""

from __future__ import annotations

import json
from typing import Any

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from steepy.model.common import strings_in
from steepy.ui.render import NO_STORE, base_path, page as render
from steepy.ui.routing import page
from steepy.documents.validation import MAX_API

EXAMPLE = f"""\
# A workflow in Steep's format, as YAML (or JSON, starting with `{{`).
# It runs the service `sleep` once; see Services for the others.
api: {'.'.join(map(str, MAX_API))}
name: A short nap
actions:
  - type: execute
    service: sleep
    inputs:
      - id: seconds
        value: 2
"""


RESOLVED = ("Shown as it ran: relative paths in its text were resolved against the folder it "
            "was submitted from, which this server would not do.")


def _source(found: dict) -> tuple[str, dict | None, str | None]:
    """What a submission was submitted as, the values given to it, and a notice: its text and
    values as given; or its workflow as it ran (JSON) and the values it ran with, when no
    text was kept or relative paths were resolved against the submitter's folder (a server
    would resolve them against its own: another file, or none)."""
    source, workflow = found.get("source"), found.get("workflow") or {}
    given = found.get("vars")
    if isinstance(source, str) and source.strip() and not _resolved(source, workflow, given):
        return source, given, None
    ran = {v.get("id"): v.get("value") for v in workflow.get("vars") or []
           if isinstance(v, dict)}
    as_run = {name: ran.get(name, value) for name, value in (given or {}).items()}
    notice = RESOLVED if isinstance(source, str) and source.strip() else None
    return json.dumps(workflow, indent=2, ensure_ascii=False) + "\n", as_run or None, notice


def _resolved(source: str, workflow: dict, given: dict | None) -> bool:
    """Whether the workflow as it ran holds an absolute path that neither its text nor the
    values given hold: a relative one, resolved (steepy.documents.inputfiles)."""
    from steepy.documents.loading import parse_text
    from steepy.errors import InputError

    try:
        written = {*strings_in(parse_text(source, "<source>").data), *strings_in(given)}
    except InputError:
        return False
    return any(s.startswith("/") and s not in written for s in strings_in(workflow))


def _shown(value: Any) -> str:
    """A value as its field shows it, for the script to send back the same value: it reads a
    field as JSON when it is JSON (`3` stays a number), else as text. So a string is shown as
    it is only when it is no JSON and not blank (a blank field is not sent), else as JSON:
    the string "3" as `"3"`, not `3`; "" as `""`."""
    if isinstance(value, str) and value.strip():
        try:
            json.loads(value)
        except ValueError:
            return value
    return json.dumps(value, ensure_ascii=False)


def variables(text: str, given: dict | None) -> list[dict]:
    """The variables of the workflow in `text` that can be set at submit time (those with a
    default value): id, default and the value given (for a resubmission), each as shown.
    None of a text that is no workflow."""
    return _variables(text, given) or []


def _variables(text: str, given: dict | None) -> list[dict] | None:
    """`variables`; None when `text` cannot be read (YAML or JSON that is not well-formed)."""
    from steepy.documents.loading import parse_text
    from steepy.errors import InputError

    try:
        data = parse_text(text, "<editor>").data
    except InputError:
        return None
    declared = data.get("vars") if isinstance(data, dict) else None
    if not isinstance(declared, list):  # (`vars: 5' while it is typed: no fields yet)
        return []
    return [{"id": str(v["id"]), "default": _shown(v["value"]),
             "given": _shown(given[v["id"]]) if given and v["id"] in given else ""}
            for v in declared if isinstance(v, dict) and "id" in v and "value" in v]


def editor(request: Request) -> Response:
    ctx = request.app.state.ctx
    origin = request.query_params.get("from", "").strip()
    text, notice, remark, resubmitted, given = EXAMPLE, None, None, None, None
    if origin:
        found = ctx.views.submission(origin)
        if found is None:
            notice = f"There is no submission `{origin}'; here is an example instead."
        else:
            (text, given, remark), resubmitted = _source(found), found
    services = sorted(((s.id, s.name) for s in ctx.services.values()), key=lambda s: s[0])
    return render(request, "editor.html", text=text, notice=notice, remark=remark,
                  origin=resubmitted,
                  services=services, variables=variables(text, given))


async def variable_fields(request: Request) -> Response:
    """The fields of the workflow text POSTed: what the editor's script shows as the text
    changes (a workflow typed or pasted, a variable renamed). `null` while the text cannot be
    read: the fields shown stay as they are until it can."""
    import asyncio

    from starlette.responses import JSONResponse

    text = (await request.body()).decode("utf-8", "replace")
    fields = await asyncio.to_thread(_variables, text, None)
    return JSONResponse(None if fields is None else [
        {"id": f["id"], "default": f["default"]} for f in fields], headers=NO_STORE)


def new(request: Request) -> Response:
    query = request.url.query
    return RedirectResponse(base_path(request) + "/new/workflow" + ("?" + query if query else ""),
                            301)  # Steep's


ROUTES = [page("/new/workflow", editor, negotiated=False),
          page("/new/workflow/variables", variable_fields, negotiated=False, methods=("POST",)),
          page("/new", new, negotiated=False)]
