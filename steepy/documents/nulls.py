"""An explicit null where Steep's model has a nullable field (Kotlin's `T? = null`) means the
field was not given: Jackson reads `retries: null` or an empty `deadline:` as absent, so
steepy takes such keys out before the schema and the model look at a document. A null where
Steep's field is not nullable (`service: null`, `maxAttempts: null`) stays, and is refused.

`without_nulls` returns a copy: the document's own data (and its positions) stay as read.
Taking a key out of an object moves no list index, so every JSON path still fits the document.
"""

from __future__ import annotations

from typing import Any

from steepy.model.timeouts import TimeoutKind

# Steep's nullable fields, by object (steepy's own extensions of these objects as well)
_POLICIES = ("retries", *(kind.value for kind in TimeoutKind))
_WORKFLOW = ("name", "retries")
_RETRY_DEFAULTS = ("processChains", "executables")
_EXECUTE = _POLICIES
_FOR = ("output", "yieldToOutput", "yieldToInput")
_OUTPUT = ("prefix",)
_SERVICE = _POLICIES
_SERVICE_PARAMETER = ("default", "fileSuffix", "label")


def without_nulls(data: Any, kind: str) -> Any:
    """`data` (one workflow, service or macro) without the nulls of nullable fields."""
    if not isinstance(data, dict):
        return data
    if kind == "workflow":
        out = _drop(data, _WORKFLOW)
        if isinstance(out.get("retries"), dict):
            out["retries"] = _drop(out["retries"], _RETRY_DEFAULTS)
        return _with_actions(out)
    if kind == "service":
        out = _drop(data, _SERVICE)
        if isinstance(out.get("parameters"), list):
            out["parameters"] = [_drop(p, _SERVICE_PARAMETER) for p in out["parameters"]]
        return out
    return _with_actions(dict(data))  # a macro


def _with_actions(holder: dict) -> dict:
    if isinstance(holder.get("actions"), list):
        holder["actions"] = [_action(a) for a in holder["actions"]]
    return holder


def _action(action: Any) -> Any:
    if not isinstance(action, dict):
        return action
    kind = action.get("type")
    if kind == "execute":
        out = _drop(action, _EXECUTE)
        if isinstance(out.get("outputs"), list):
            out["outputs"] = [_drop(o, _OUTPUT) for o in out["outputs"]]
        return out
    if kind == "for":
        return _with_actions(_drop(action, _FOR))
    return action


def _drop(item: Any, keys: tuple[str, ...]) -> Any:
    if not isinstance(item, dict):
        return item
    return {k: v for k, v in item.items() if not (v is None and k in keys)}
