"""Jinja environment and per-device rendering. Templates only translate a Plan into syntax.

The environment uses ``StrictUndefined`` (a missing plan field is an error, never an empty string),
no autoescape (outputs are CLI/JSON/shell, each template quotes for its own syntax via the filters
below), and keeps trailing newlines so files end cleanly.
"""

from __future__ import annotations

import json
import re
import shlex
from functools import lru_cache
from pathlib import Path

import jinja2

import roce_tune


def templates_dir() -> Path:
    """Where the templates live: inside the installed package (wheel), else the repo's ``templates/``.

    Raises:
        FileNotFoundError: neither exists (a broken install).
    """
    pkg = Path(roce_tune.__file__).resolve().parent
    for cand in (pkg / "templates", pkg.parent / "templates"):
        if cand.is_dir():
            return cand
    raise FileNotFoundError(f"templates not found next to {pkg}")


#: Characters that end a line in some reader (C0 incl. CR/LF, DEL, C1 incl. NEL U+0085, U+2028/U+2029):
#: a comment carrying one of them could let the text after it run as a command.
_LINE_BREAKING_RE = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029]")


def comment_safe(value: object) -> str:
    """``value`` as text for a comment line: control and line-separator characters become ``?``, so
    nothing (an inventory file name, a site name from a hand-built plan) can leave the comment."""
    return _LINE_BREAKING_RE.sub("?", str(value))


def _shell_quote(value: object) -> str:
    return shlex.quote(str(value))


def _to_json(value: object, indent: int | None = None) -> str:
    return json.dumps(value, indent=indent, sort_keys=True, ensure_ascii=False)


@lru_cache(maxsize=1)
def environment() -> jinja2.Environment:
    """The shared Jinja environment (cached). Filters: ``shell_quote``, ``to_json``, ``comment_safe``."""
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(templates_dir())),
        undefined=jinja2.StrictUndefined,
        autoescape=False,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["shell_quote"] = _shell_quote
    env.filters["to_json"] = _to_json
    env.filters["comment_safe"] = comment_safe
    return env


def render_template(platform: str, template: str, **context: object) -> str:
    """Render ``templates/<platform>/<template>`` with ``context``.

    Raises:
        jinja2.UndefinedError: the template used a name the context does not have.
        jinja2.TemplateNotFound: no such template.
    """
    return environment().get_template(f"{platform}/{template}").render(**context)
