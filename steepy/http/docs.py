"""`/docs` (Swagger UI) and `/redoc` served without the internet: their scripts, stylesheet and
icon come from the `fastapi-offline` package's files, under `/docs/assets/`, instead of a CDN.
Every URL the pages name is relative to the app's root path (behind a proxy that strips a
prefix, `root_path` is that prefix). ReDoc's script is served with the one address it would
load by itself (Redocly's logo, from their CDN) replaced by an empty image."""

from __future__ import annotations

from functools import cache
from pathlib import Path

from fastapi import FastAPI, Request
from fastapi.openapi.docs import get_redoc_html, get_swagger_ui_html
from starlette.responses import HTMLResponse, Response
from starlette.staticfiles import StaticFiles

ASSETS = "/docs/assets"
# what redoc.standalone.js loads when it runs (the sidebar's "API docs by Redocly" logo)
REDOC_LOGO = "https://cdn.redoc.ly/redoc/logo-mini.svg"
EMPTY_IMAGE = ("data:image/svg+xml,"
               "%3Csvg%20xmlns%3D%27http%3A%2F%2Fwww.w3.org%2F2000%2Fsvg%27%2F%3E")


def assets_dir() -> Path:
    """The folder with swagger-ui-bundle.js, swagger-ui.css, redoc.standalone.js, favicon.png."""
    import fastapi_offline

    return Path(fastapi_offline.__file__).resolve().parent / "static"


@cache
def redoc_script() -> bytes:
    """redoc.standalone.js as served: without the address of Redocly's logo."""
    text = (assets_dir() / "redoc.standalone.js").read_text(encoding="utf-8")
    return text.replace(REDOC_LOGO, EMPTY_IMAGE).encode()


def install(app: FastAPI) -> None:
    """Serve /docs, /redoc and their assets. Create the app with docs_url=None and
    redoc_url=None, so that FastAPI's own CDN-based pages are not there as well."""
    @app.get(f"{ASSETS}/redoc.standalone.js", include_in_schema=False)
    async def redoc_js() -> Response:  # before the folder's mount, which would serve it as is
        return Response(redoc_script(), media_type="text/javascript",
                        headers={"Cache-Control": "max-age=86400"})

    app.mount(ASSETS, StaticFiles(directory=assets_dir()), name="docs-assets")

    def base(request: Request) -> str:
        return request.scope.get("root_path", "").rstrip("/")

    @app.get("/docs", include_in_schema=False)
    async def swagger_ui(request: Request) -> HTMLResponse:
        root = base(request)
        return get_swagger_ui_html(
            openapi_url=root + (app.openapi_url or "/openapi.json"),
            title=f"{app.title} - Swagger UI",
            swagger_js_url=f"{root}{ASSETS}/swagger-ui-bundle.js",
            swagger_css_url=f"{root}{ASSETS}/swagger-ui.css",
            swagger_favicon_url=f"{root}{ASSETS}/favicon.png")

    @app.get("/redoc", include_in_schema=False)
    async def redoc(request: Request) -> HTMLResponse:
        root = base(request)
        return get_redoc_html(
            openapi_url=root + (app.openapi_url or "/openapi.json"),
            title=f"{app.title} - ReDoc",
            redoc_js_url=f"{root}{ASSETS}/redoc.standalone.js",
            redoc_favicon_url=f"{root}{ASSETS}/favicon.png",
            with_google_fonts=False)
