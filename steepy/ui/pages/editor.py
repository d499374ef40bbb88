"""The "New workflow" editor (`/new/workflow`): a text area for a workflow in YAML or JSON,
starting with a small example or, with `?from=<submission id>`, with that submission's source
(the workflow page's "resubmit"). The page's script (static/editor.js) POSTs the text to the
API's `/workflows` and shows the API's `line:column: path: message` problems beside the text;
the page itself stores nothing."""

from __future__ import annotations

import json

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from steepy.ui.render import base_path, page as render
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


def _source(found: dict) -> str:
    """What a submission was submitted as; its workflow as JSON when no text was kept."""
    source = found.get("source")
    if isinstance(source, str) and source.strip():
        return source
    return json.dumps(found.get("workflow") or {}, indent=2, ensure_ascii=False) + "\n"


def editor(request: Request) -> Response:
    ctx = request.app.state.ctx
    origin = request.query_params.get("from", "").strip()
    text, notice, resubmitted = EXAMPLE, None, None
    if origin:
        found = ctx.views.submission(origin)
        if found is None:
            notice = f"There is no submission `{origin}'; here is an example instead."
        else:
            text, resubmitted = _source(found), found
    services = sorted(((s.id, s.name) for s in ctx.services.values()), key=lambda s: s[0])
    return render(request, "editor.html", text=text, notice=notice, origin=resubmitted,
                  services=services)


def new(request: Request) -> Response:
    query = request.url.query
    return RedirectResponse(base_path(request) + "/new/workflow" + ("?" + query if query else ""),
                            301)  # Steep's


ROUTES = [page("/new/workflow", editor, negotiated=False),
          page("/new", new, negotiated=False)]
