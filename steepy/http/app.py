"""The FastAPI application: routes, error handlers, token check and body limit."""

from __future__ import annotations

import re

from fastapi import FastAPI

from steepy import __version__
from steepy.http import (chains, cloud, docs, errors, eventbus, logs, metrics, notifications,
                         plugins, schedules, search, stream, system, workflows)
from steepy.http.allowroutes import AllowRoutes
from steepy.http.auth import BearerAuth, SameOrigin
from steepy.http.basepath import BasePath
from steepy.http.context import ApiContext
from steepy.http.limits import BodyLimit
from steepy.http.negotiation import Negotiation
from steepy.http.slashes import OptionalSlash
from steepy.http.steepui import SteepUi
from steepy.ui.site import UiSite

DESCRIPTION = """\
steepy's HTTP API: the paths, parameters, status codes and JSON shapes of
[Steep](https://steep-wms.github.io/)'s, so Steep's clients work against steepy, plus
steepy's retry, event timeline and live stream of a submission (tag `steepy`).

Errors are plain text with Steep's words, whatever the client accepts; a bad workflow's
located problems follow its first line, and come as a JSON list in the `X-Steepy-Problems`
header too. With `http.token` set, every request but `GET /health` needs
`Authorization: Bearer <token>`. A trailing slash is optional on every path, as in Steep:
`PUT /workflows/{id}/` is `PUT /workflows/{id}`, not a redirect.
"""


def create_app(ctx: ApiContext) -> FastAPI:
    app = FastAPI(title="steepy", version=__version__, description=DESCRIPTION,
                  docs_url=None, redoc_url=None)  # docs.install serves them without a CDN
    app.state.ctx = ctx
    errors.install(app)
    docs.install(app)
    for module in (system, metrics, workflows, chains, logs, plugins, cloud, stream, eventbus,
                   search, schedules, notifications):
        app.include_router(module.router)
    # middleware added last runs first: base path, an optional trailing slash, allowed
    # routes, cross-site guard, Steep's UI (its pages and assets hold no data: no token
    # needed), token, body limit, steepy's pages, Steep's content negotiation (406), routes
    app.add_middleware(Negotiation)
    if ctx.steep_ui is None:
        app.add_middleware(UiSite)
    app.add_middleware(BodyLimit, max_size=ctx.post_max_size)
    app.add_middleware(BearerAuth, token=ctx.token)
    if ctx.steep_ui is not None:
        app.add_middleware(SteepUi, root=ctx.steep_ui)
    app.add_middleware(SameOrigin)
    if ctx.allow_routes is not None:
        app.add_middleware(AllowRoutes, allowed=re.compile(ctx.allow_routes),
                           routes=app.router.routes)
    app.add_middleware(OptionalSlash)
    app.add_middleware(BasePath, base=ctx.base_path)
    return app
