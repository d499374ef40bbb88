"""Templates of notifications: a webhook's body, an e-mail's subject and text (pure: the
configuration checks them, steepy/notifications/ renders them).

A template is Jinja2 text run in Jinja2's sandbox (it can read the values it is given, call
no Python of its own choosing), with nothing escaped (the result is not HTML) and every
undefined name an error (`{{ submision.name }}` is refused with the configuration, rather
than printing nothing; a name set in the template is its own). It sees
what a webhook's JSON body holds: `event` (as the timeline shows it), `submission` (id, name,
status; None for an agent's event) and `steepy` (`version`). The filter `tojson` writes a
value as JSON (a string with its quotes and escapes), so a JSON body stays valid whatever a
name holds: `{"text": {{ ("Run " ~ submission.name) | tojson }}}`.
"""

from __future__ import annotations

import json
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from steepy.errors import SteepyError

if TYPE_CHECKING:
    import jinja2


class TemplateProblem(SteepyError, ValueError):
    """A template that cannot be read or rendered; the message says where and why."""


def _tojson(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


@lru_cache(maxsize=1)
def _environment() -> "jinja2.Environment":
    from jinja2 import StrictUndefined
    from jinja2.sandbox import SandboxedEnvironment

    env = SandboxedEnvironment(autoescape=False, undefined=StrictUndefined,
                               keep_trailing_newline=True)
    env.filters["tojson"] = _tojson
    return env


GIVEN = ("event", "submission", "steepy")  # the names a template is given


@lru_cache(maxsize=64)
def compiled(text: str) -> "jinja2.Template":
    """The template of `text`; TemplateProblem naming the line of a syntax error, of a name
    it is not given (a misspelt `submision' failed every delivery, not the configuration)
    or of another template it would read (a notification's template is one text)."""
    from jinja2 import TemplateSyntaxError

    env = _environment()
    try:
        tree = env.parse(text)
    except TemplateSyntaxError as e:
        raise TemplateProblem(f"line {e.lineno} of the template: {e.message}") from None
    _check_names(env, tree)
    return env.from_string(tree)


def _check_names(env: "jinja2.Environment", tree: Any) -> None:
    from jinja2 import meta, nodes

    from steepy.model.suggestions import closest

    for node in tree.find_all((nodes.Include, nodes.Import, nodes.FromImport, nodes.Extends)):
        raise TemplateProblem(f"line {node.lineno} of the template: it reads another "
                              "template, and a notification's template is one text")
    unknown = meta.find_undeclared_variables(tree) - set(GIVEN) - set(env.globals)
    for node in tree.find_all(nodes.Name):
        if node.name in unknown:
            close = closest(node.name, list(GIVEN))
            hint = f"did you mean `{close}'? " if close else ""
            raise TemplateProblem(
                f"line {node.lineno} of the template: `{node.name}' is undefined ({hint}a "
                "template is given `event', `submission' and `steepy')")


def render(text: str, document: dict) -> str:
    """`text` rendered with a notification's document (`event`, `submission`, `steepy`);
    TemplateProblem for a name it lacks or anything else the template does wrong."""
    from jinja2 import TemplateError

    template = compiled(text)
    try:
        return template.render(**document)
    except TemplateError as e:
        raise TemplateProblem(f"the template: {type(e).__name__}: {e}") from None
    except (TypeError, ValueError, ArithmeticError, LookupError) as e:  # e.g. 1 / 0
        raise TemplateProblem(f"the template: {type(e).__name__}: {e}") from None
