"""Plugins (`/plugins`, `/plugins/{name}`): the descriptors `GET /plugins` gives, grouped by
kind, with what each one is selected by; steepy's own runtimes apart from the added ones."""

from __future__ import annotations

from dataclasses import dataclass

from starlette.requests import Request
from starlette.responses import Response

from steepy.plugins.kinds import KINDS
from steepy.plugins.pluginset import serving
from steepy.ui.render import not_found
from steepy.ui.render import page as render
from steepy.ui.routing import page

BUILTIN = "builtin"
GROUPS = [k.group for k in KINDS.values()]  # the entry-point groups, for the empty page


@dataclass
class KindGroup:
    kind: str  # Steep's type name, e.g. `outputAdapter'
    words: str  # e.g. `output adapter'
    selector: str | None  # the descriptor key it is selected by
    plugins: list[dict]


def selected_by(descriptor: dict) -> str:
    """What a plugin applies to, in words (its supported runtime, data type or services)."""
    kind = KINDS.get(descriptor.get("type", ""))
    if kind is None or kind.selector is None:
        return "every workflow"
    value = descriptor.get(kind.selector)
    return ", ".join(map(str, value)) if isinstance(value, list) else str(value or "")


def grouped(descriptors: list[dict]) -> list[KindGroup]:
    groups = []
    for kind in KINDS.values():
        found = [d for d in descriptors if d.get("type") == kind.type]
        if found:
            groups.append(KindGroup(kind.type, kind.words, kind.selector, found))
    return groups


def _descriptors(request: Request) -> list[dict]:
    return serving(request.app.state.ctx.engine).descriptors()


def plugins(request: Request) -> Response:
    descriptors = _descriptors(request)
    added = [d for d in descriptors if d.get("origin") != BUILTIN]
    builtin = [d for d in descriptors if d.get("origin") == BUILTIN]
    return render(request, "plugins.html", groups=grouped(added), builtin=builtin,
                  entry_groups=GROUPS, selected_by=selected_by)


def plugin(request: Request) -> Response:
    name = request.path_params["name"]
    found = next((d for d in _descriptors(request) if d["name"] == name), None)
    if found is None:
        return not_found(request, f"There is no plugin with name `{name}'.")
    kind = KINDS.get(found.get("type", ""))
    return render(request, "plugin.html", plugin=found, kind=kind, selected_by=selected_by)


ROUTES = [page("/plugins", plugins), page("/plugins/{name}", plugin)]
