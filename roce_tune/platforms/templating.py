"""Jinja environment and per-device rendering. Templates only translate a Plan into syntax.

The environment uses ``StrictUndefined`` (a missing plan field is an error, never an empty string),
no autoescape (outputs are CLI/JSON/shell, each template quotes for its own syntax via the filters
below), and keeps trailing newlines so files end cleanly.
"""

from __future__ import annotations

import hashlib
import json
import re
import shlex
from collections import OrderedDict
from collections.abc import Callable, Mapping
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

import roce_tune

if TYPE_CHECKING:
    import jinja2


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


#: The provenance line of every rendered device file (template global ``provenance``). A device file names
#: neither the inventory file nor its sha256: with those in every header, any inventory edit (one cable
#: length) changed every file, and the plan directory's manifest could link none of them from the version in
#: force (issue 16). Provenance is the plan directory's: ``SHA256SUMS`` lists this file's sha256 (apply and
#: verify refuse a file that does not match it), and ``plan.json`` of the same version names the inventory
#: file and its sha256; plan.md says both.
PROVENANCE = ("provenance: this file's sha256 is in SHA256SUMS; plan.json beside it names the inventory and "
              "its sha256")


@lru_cache(maxsize=1)
def environment() -> jinja2.Environment:
    """The shared Jinja environment (cached). Filters: ``shell_quote``, ``to_json``, ``comment_safe``; global
    ``provenance`` (:data:`PROVENANCE`). jinja2 is imported here, on the first render: a command that
    renders nothing (lint, explain) does not load it."""
    import jinja2

    class _Environment(jinja2.Environment):
        """Jinja environment whose ``{{ d.key }}`` on a plain dict is a subscript first.

        Jinja's own :meth:`jinja2.Environment.getattr` tries ``getattr(d, "key")`` and only falls back to
        ``d["key"]`` after the ``AttributeError``: on the dict contexts the renderers build, that failed
        attribute look-up was a third of all render time (issue 16). A key that shadows a dict method
        (``items``, ``get`` …) now reads the key; no context uses such a key for a method call.
        """

        def getattr(self, obj: Any, attribute: str) -> Any:
            if type(obj) is dict:
                try:
                    return obj[attribute]
                except KeyError:
                    pass
            return super().getattr(obj, attribute)

    env = _Environment(
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
    env.globals["provenance"] = PROVENANCE
    return env


def render_template(platform: str, template: str, **context: object) -> str:
    """Render ``templates/<platform>/<template>`` with ``context``.

    Raises:
        jinja2.UndefinedError: the template used a name the context does not have.
        jinja2.TemplateNotFound: no such template.
    """
    return environment().get_template(f"{platform}/{template}").render(**context)


#: Stands in for a device's name while a device-independent render is made (:func:`render_once`): a name
#: no inventory holds (``DEVICE_NAME_RE`` allows it, but no real device is called that) that every filter
#: (``shell_quote``, ``to_json``, ``comment_safe``) prints unchanged, as it prints any valid device name.
NAME_SLOT = "roce-tune.device-name.slot-5f3a9c"

#: Distinct renders kept: (kind, digest of the identity-free context) -> text. Bounded, oldest dropped.
_RENDERS: OrderedDict[tuple[str, bytes], list[str]] = OrderedDict()
_RENDERS_MAX = 256


def _with_slot(context: Mapping[str, Any], identity: tuple[str, ...]) -> dict[str, Any]:
    """A copy of ``context`` with the value at ``identity`` (a path of dict keys) set to :data:`NAME_SLOT`;
    only the dicts on the path are copied."""
    out = dict(context)
    inner = out
    for key in identity[:-1]:
        inner[key] = dict(inner[key])
        inner = inner[key]
    inner[identity[-1]] = NAME_SLOT
    return out


def render_once(kind: str, device: str, context: Mapping[str, Any], identity: tuple[str, ...],
                render: Callable[[dict[str, Any]], str]) -> str:
    """``render(context)`` for ``device``, computed once per distinct context minus the device's identity.

    The device's name at ``identity`` is replaced by :data:`NAME_SLOT`; the result of ``render`` on that
    context is kept under ``kind`` (e.g. ``"eos/config.j2"``) and a SHA-256 digest of the context's
    ``repr``, and the name is filled in last. Devices whose rendered files differ only in their name
    (the leaves of one scalable unit) are rendered once (issue 16). Anything else in the context is part of
    the key as it is, so the text is the one ``render(context)`` gives as long as the template prints
    the name as it is (no ``| upper``, slicing or length of it); the golden tests of every platform
    check that.

    Args:
        kind: names ``render`` (platform and template): renders of different kinds are never shared.
        device: the device name (``DEVICE_NAME_RE``).
        context: the template context: plain data (dicts, lists, tuples, str, numbers, None) whose
            ``repr`` shows every value the template can print.
        identity: path of dict keys to the device's name in ``context``, e.g. ``("switch", "name")``.
        render: context -> text; it must depend on nothing but the context.

    Returns:
        the rendered text of ``device``.

    Raises:
        KeyError: ``identity`` is not a path of ``context``. Anything ``render`` raises (nothing is kept).
    """
    shared = _with_slot(context, identity)
    return _cached(device, (kind, hashlib.sha256(repr(shared).encode()).digest()), lambda: render(shared))


def render_keyed(kind: str, device: str, facts: bytes, context: Callable[[], Mapping[str, Any]],
                 identity: tuple[str, ...], render: Callable[[dict[str, Any]], str]) -> str:
    """:func:`render_once` looked up before the context is built: by ``facts``, bytes the renderer derives
    from the plan (cheaper than the context) that hold every plan value ``context()`` reads except the
    device's name (the renderer's docstring says why its facts are complete).

    On a miss ``context()`` is built, the name at ``identity`` replaced by :data:`NAME_SLOT`, rendered and
    kept under ``kind`` and the SHA-256 of ``facts``; the name is filled in last, as :func:`render_once`
    does. For the 1,792 switches of a 4,096-host fabric (a handful of distinct ones) building each context
    cost more than rendering the distinct ones (issue 16).

    Raises:
        KeyError: ``identity`` is not a path of the context. Anything ``context`` or ``render`` raises
        (nothing is kept).
    """
    return _cached(device, (f"{kind}#facts", hashlib.sha256(facts).digest()),
                   lambda: render(_with_slot(context(), identity)))


def _cached(device: str, key: tuple[str, bytes], make: Callable[[], str]) -> str:
    """The render kept under ``key`` (``make()`` on a miss, kept by :func:`_keep`; nothing is kept when
    ``make`` raises) with ``device`` joined into its name slots."""
    pieces = _RENDERS.get(key)
    if pieces is None:
        pieces = _keep(key, make())
    return device.join(pieces)


def _keep(key: tuple[str, bytes], text: str) -> list[str]:
    """Keep a distinct render as the pieces between its name slots (the name is joined in: no search of the
    text per device, e.g. the 54 KB CONFIG_DB of a switch, which has no slot) and return them (bounded:
    the oldest is dropped past :data:`_RENDERS_MAX`)."""
    pieces = _RENDERS[key] = text.split(NAME_SLOT)
    if len(_RENDERS) > _RENDERS_MAX:
        _RENDERS.popitem(last=False)
    return pieces


def render_device_template(platform: str, template: str, device: str, context: Mapping[str, Any],
                           identity: tuple[str, ...]) -> str:
    """:func:`render_template` of ``templates/<platform>/<template>`` for ``device`` (its name at the
    ``identity`` path of ``context``), rendered once per distinct context minus the name
    (:func:`render_once`).

    Raises:
        KeyError: no name at ``identity``. jinja2.UndefinedError / jinja2.TemplateNotFound: see
            :func:`render_template`.
    """
    return render_once(f"{platform}/{template}", device, context, identity,
                       lambda shared: render_template(platform, template, **shared))
