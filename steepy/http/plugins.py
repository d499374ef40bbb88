"""/plugins and /plugins/{name}: Steep's plugin descriptors of the plugins this server runs
with (`object' is the Python reference where Steep gives a Kotlin `scriptFile')."""

from __future__ import annotations

from fastapi import APIRouter, Request
from starlette.responses import Response

from steepy.http.errors import ApiError
from steepy.http.responses import context, json_response

router = APIRouter()


def _descriptors(request: Request) -> list[dict]:
    from steepy.plugins.pluginset import serving

    return serving(context(request).engine).descriptors()


@router.get("/plugins", tags=["plugins"], summary="Plugins")
def list_plugins(request: Request) -> Response:
    return json_response(_descriptors(request))


@router.get("/plugins/{name}", tags=["plugins"], summary="One plugin",
            responses={404: {"description": "No plugin with this name"}})
def get_plugin(request: Request, name: str) -> Response:
    found = next((d for d in _descriptors(request) if d["name"] == name), None)
    if found is None:
        raise ApiError(404, f"There is no plugin with name `{name}'")
    return json_response(found)
