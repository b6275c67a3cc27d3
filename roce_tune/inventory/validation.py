"""Turn every pydantic validation error into an RT003 finding with file:line:col, path and a fix.

pydantic reports an error location as a tuple (``("hosts", 0, "nics", 1, "netdev")``) that may also
hold union-member tags (``"str-enum[Role]"``) and ``"[key]"`` for a bad dict key. The location is
mapped onto the *data* (not the model) to get the real field path, so tags drop out, and errors that
several union members raise for one value merge into one finding.
"""

from __future__ import annotations

import difflib
import re
import types
import typing
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, Union, get_args

from pydantic import BaseModel, ValidationError

from roce_tune.findings import Finding, Location, Severity, short_repr
from roce_tune.inventory.models import NATIVE_NAME_PATTERNS, Inventory, OverrideParam, name_error
from roce_tune.inventory.positions import PositionIndex, format_path
from roce_tune.ranges import PORT_MTU_RANGE_BYTES

_MTU_FIX = "use an MTU between {} and {} bytes".format(*PORT_MTU_RANGE_BYTES)
_NAME_FIX = ("use letters, digits, '.', '_' and '-' only, starting with a letter (no spaces, quotes, ';', "
             "'$', '(' or newlines)")
#: Field name (or ``parent.field`` where one name means two things) -> what to write instead (the fix of a
#: finding about that field).
FIELD_FIX: dict[str, str] = {
    "speed": "write the port speed like 100G, 400G or 400000 (Mb/s)",
    "cable_length": "write the length in metres, like 3m or 40",
    "nic_latency_us": "write a time like 2us or 500ns",
    "netdev": "use the Linux interface name, e.g. ens1f0np0 (letters, digits, '.', '_', '-'; at most 15 "
              "characters)",
    "socket_ifname": "use the Linux interface name, e.g. ens1f0np0 (letters, digits, '.', '_', '-'; at most "
                     "15 characters)",
    "rdma_device": "use the RDMA device name as 'rdma link' shows it, e.g. mlx5_0",
    "name": _NAME_FIX,
    "device": _NAME_FIX,
    "port": "use the interface name as the switch shows it, e.g. Ethernet0 or swp1",
    "mgmt.port": "write the SSH port number, 1..65535 (22 unless the device's SSH server listens elsewhere)",
    "switch_port": "write device:port, e.g. leaf1:Ethernet0",
    "a": "write device:port, e.g. leaf1:Ethernet0",
    "b": "write device:port, e.g. spine1:Ethernet0",
    "host": "write a host name or IP address, e.g. 10.0.0.1",
    "username_env": "name an environment variable, e.g. ROCE_TUNE_USERNAME (never the secret itself)",
    "password_env": "name an environment variable, e.g. ROCE_TUNE_PASSWORD (never the secret itself)",
    "key_file_env": "name an environment variable, e.g. ROCE_TUNE_KEY_FILE",
    "pci_address": "write the PCI address as lspci -D shows it, e.g. 0000:3b:00.0",
    "breakout": "write the breakout as ports x the speed of one port, e.g. 4x100G with speed: 100G",
    "model": "use the catalog id, e.g. SN4700 for a switch or connectx-7 for a NIC",
    "asic": "use the catalog ASIC id, e.g. spectrum-3",
    "nccl_version": "write the NCCL version like 2.21.5",
    "mtu": _MTU_FIX,
    "host_mtu": _MTU_FIX,
}
_PIN_FIX = ("pin a value in the range the message names, in the unit the key ends with (_bytes: 150KB, _ms: "
            "200, _us: 300 or 0.3ms, _mbps: 80 or 1Gbps, _percent: 5)")
FIELD_FIX.update({key: _PIN_FIX for key in get_args(OverrideParam) if key != "action"})
_TYPE_WORDS = {
    "int_parsing": "a whole number", "int_type": "a whole number", "int_from_float": "a whole number",
    "float_parsing": "a number", "float_type": "a number", "bool_parsing": "true or false",
    "bool_type": "true or false", "string_type": "a text value", "finite_number": "a finite number",
}


def _unwrap(tp: Any) -> list[Any]:
    """The concrete types inside ``Annotated[...]`` / ``X | None`` / unions."""
    origin = typing.get_origin(tp)
    if origin is typing.Annotated:
        return _unwrap(typing.get_args(tp)[0])
    if origin is Union or origin is types.UnionType:
        return [t for arg in typing.get_args(tp) for t in _unwrap(arg)]
    return [tp]


def _model_at(parts: list[str | int]) -> type[BaseModel] | None:
    """The pydantic model class that validates the data at ``parts`` (None if not a model)."""
    candidates: list[Any] = [Inventory]
    for part in parts:
        nxt: list[Any] = []
        for tp in candidates:
            origin = typing.get_origin(tp)
            if isinstance(part, int) and origin is list:
                nxt.extend(_unwrap(typing.get_args(tp)[0]))
            elif isinstance(part, str) and isinstance(tp, type) and issubclass(tp, BaseModel):
                field = tp.model_fields.get(part)
                if field is not None:
                    nxt.extend(_unwrap(field.annotation))
        candidates = nxt
    for tp in candidates:
        if isinstance(tp, type) and issubclass(tp, BaseModel):
            return tp
    return None


def _data_path(data: Any, loc: tuple[Any, ...], is_missing: bool) -> tuple[list[str | int], bool, bool]:
    """Map a pydantic ``loc`` onto the data: (path parts, last part is absent, error is about a key)."""
    parts: list[str | int] = []
    cur = data
    about_key = False
    missing = False
    for el in loc:
        if el == "[key]":
            about_key = True
            continue
        in_dict = isinstance(cur, dict) and isinstance(el, str) and el in cur
        in_list = isinstance(cur, list) and isinstance(el, int) and 0 <= el < len(cur)
        if in_dict or in_list:
            parts.append(el)
            cur = cur[el]
        elif is_missing and isinstance(cur, dict) and isinstance(el, str) and not missing:
            parts.append(el)  # the required field that is not in the data
            missing = True
        # anything else is a union-member tag ("str-enum[Role]", "function-after[...]"): skip it
    return parts, missing, about_key


def _short(value: Any, limit: int = 60) -> str:
    return short_repr(value, limit)


@dataclass(frozen=True)
class _Error:
    """One pydantic error with its data path: what a message-and-fix handler reads."""

    etype: str
    msg: str
    ctx: dict[str, Any]
    value: Any
    parts: list[str | int]
    field: str  # the last field name on the path ("" if none)
    hint: str  # FIELD_FIX of that field ("" if none)
    about_key: bool


def _closest_field(parts: list[str | int]) -> tuple[list[str], list[str]]:
    """(the fields allowed where the unknown field ``parts[-1]`` is, the one it is close to, if any)."""
    model = _model_at(parts[:-1])
    allowed = sorted(model.model_fields) if model else []
    return allowed, difflib.get_close_matches(str(parts[-1]), allowed, n=1, cutoff=0.6)


def _unknown_field(e: _Error) -> tuple[str, str]:
    allowed, close = _closest_field(e.parts)
    name = e.parts[-1]
    if close:
        return f"unknown field {name!r}; did you mean {close[0]!r}?", f"rename '{name}' to '{close[0]}'"
    return f"unknown field {name!r}", f"remove it; allowed here: {', '.join(allowed)}"


def _missing(e: _Error) -> tuple[str, str]:
    return f"required field {e.field!r} is missing", f"add '{e.field}: …'" + (f" ({e.hint})" if e.hint
                                                                              else "")


_VALUE_FIX = "correct the value as the message says"


def _value_error(e: _Error) -> tuple[str, str]:
    text = str(e.ctx.get("error", e.msg)) if e.ctx.get("error") is not None else e.msg
    text = text.removeprefix("Value error, ").removeprefix("Assertion failed, ")
    return text, e.hint or _VALUE_FIX


def _not_allowed(e: _Error) -> tuple[str, str]:
    key_or_value = "key" if e.about_key else "value"
    return (f"{_short(e.value)} is not an allowed {key_or_value}; expected {e.ctx.get('expected', '')}",
            f"use one of: {e.ctx.get('expected', '')}")


def _pattern(e: _Error) -> tuple[str, str]:
    pattern = str(e.ctx.get("pattern", ""))
    if pattern in NATIVE_NAME_PATTERNS:
        return _name_error(e, pattern)
    return f"{_short(e.value)} does not match the pattern {pattern}", e.hint or _NAME_FIX


def _name_error(e: _Error, pattern: str) -> tuple[str, str]:
    """A name type pydantic-core matched (models.NATIVE_NAME_PATTERNS), worded as the Python check of
    the other name types words its ValueError (:func:`_value_error`)."""
    return name_error(e.value, pattern, *NATIVE_NAME_PATTERNS[pattern]), e.hint or _VALUE_FIX


def _patterns(metadata: list[Any]) -> Iterator[Any]:
    """The ``pattern`` of each metadata item, and of the items of a ``Field(...)`` among them."""
    for item in metadata:
        yield getattr(item, "pattern", None)
        yield from (getattr(inner, "pattern", None) for inner in getattr(item, "metadata", ()))


def _native_name_pattern(parts: list[str | int]) -> str | None:
    """The pattern of the natively matched name type of the field at ``parts``, if it is one."""
    model = _model_at(parts[:-1]) if parts and isinstance(parts[-1], str) else None
    field = model.model_fields.get(str(parts[-1])) if model else None
    if field is None:
        return None
    # Netdev: on the field; Netdev | None: on the Annotated member
    metadata = [*field.metadata, *(item for arg in typing.get_args(field.annotation)
                                   for item in getattr(arg, "__metadata__", ()))]
    return next((p for p in _patterns(metadata) if p in NATIVE_NAME_PATTERNS), None)


def _not_unicode(e: _Error) -> tuple[str, str]:
    """A lone surrogate (a ``"\\ud800"`` escape): for a natively matched name, the name's message."""
    pattern = _native_name_pattern(e.parts)
    return _name_error(e, pattern) if pattern is not None else _other(e)


#: Error types of the strict scalar fields (``admin_up``, priorities, MTUs …): YAML 1.2 core-schema
#: values only.
_STRICT_SCALAR_TYPES = frozenset({"bool_type", "int_type", "float_type"})


#: Booleans in some YAML spelling (1.1's yes/no/on/off, 1.2's true/false): text once quoted, or in 1.2.
_BOOL_WORDS = frozenset(f(w) for w in ("y", "n", "yes", "no", "on", "off", "true", "false")
                        for f in (str.lower, str.title, str.upper))


def _yaml_reads_as_text(value: str) -> bool:
    """Whether ``value`` is text only because of YAML 1.2 (a 1.1 boolean) or quotes (``"6"``, ``"false"``)."""
    try:
        float(value)
    except ValueError:
        return value in _BOOL_WORDS
    return value.isascii()


def _wrong_type(e: _Error) -> tuple[str, str]:
    """A value of the wrong type. Booleans are shown as YAML writes them (``true``, not ``True``); text
    where a boolean or number belongs is named as text: YAML 1.2 (the core schema roce-tune reads, like
    ruamel.yaml) resolves only ``true``/``false`` to booleans, so ``no``, ``off`` and ``"false"`` are
    text, and a quoted number is text (https://yaml.org/spec/1.2.2/#1032-tag-resolution)."""
    words = _TYPE_WORDS[e.etype]
    got = str(e.value).lower() if isinstance(e.value, bool) else _short(e.value)
    if isinstance(e.value, str) and e.etype in _STRICT_SCALAR_TYPES:
        if _yaml_reads_as_text(e.value):
            return (f"expected {words}, got the text {got} (YAML 1.2 reads quoted values and yes/no/on/off "
                    "as text)", f"write {words} without quotes")
        return f"expected {words}, got the text {got}", e.hint or f"write {words}"
    if e.etype == "string_type" and isinstance(e.value, (int, float)) and not isinstance(e.value, bool):
        # not echoed back as the fix: 2.20 was read as 2.2 already
        return (f"expected {words}, got the number {got} (YAML reads an unquoted number as a number)",
                "put the value in quotes as you wrote it" + (f"; {e.hint}" if e.hint else ""))
    return f"expected {words}, got {got}", e.hint or f"write {words}"


def _not_mapping(e: _Error) -> tuple[str, str]:
    return (f"expected a mapping of fields, got {_short(e.value)}",
            f"write the fields of '{e.field or 'this entry'}' as 'key: value' lines indented below it")


def _not_list(e: _Error) -> tuple[str, str]:
    return (f"expected a list, got {_short(e.value)}",
            f"write '{e.field}' as a list: one '- ' line per entry, or [a, b]")


def _out_of_range(e: _Error) -> tuple[str, str]:
    return (f"{_short(e.value)} is out of range: {e.msg[0].lower() + e.msg[1:]}",
            e.hint or "use a value in the allowed range")


def _wrong_size(e: _Error) -> tuple[str, str]:
    return e.msg, e.hint or "change the number of entries / characters as the message says"


def _other(e: _Error) -> tuple[str, str]:
    return f"{e.msg} (got {_short(e.value)})", e.hint or _VALUE_FIX


#: pydantic error type -> (message, fix) of its finding; anything else: :func:`_other`
_MESSAGE_AND_FIX: dict[str, Callable[[_Error], tuple[str, str]]] = {
    "extra_forbidden": _unknown_field,
    "missing": _missing,
    "value_error": _value_error,
    "assertion_error": _value_error,
    "enum": _not_allowed,
    "literal_error": _not_allowed,
    "string_pattern_mismatch": _pattern,
    "string_unicode": _not_unicode,
    **{etype: _wrong_type for etype in _TYPE_WORDS},
    "dict_type": _not_mapping,
    "model_type": _not_mapping,
    "model_attributes_type": _not_mapping,
    "list_type": _not_list,
    **{etype: _out_of_range for etype in ("greater_than_equal", "less_than_equal", "greater_than",
                                          "less_than")},
    **{etype: _wrong_size for etype in ("too_short", "too_long", "string_too_long", "string_too_short")},
}


#: what a message about a ``credentials`` field shows instead of its value
HIDDEN_CREDENTIAL = "the value (not shown: a credentials field may hold a pasted secret)"


def _hide_credential(message: str, value: Any) -> str:
    """``message`` without ``value`` as a message quotes it (``repr``, cut ``repr``; ``str`` of a number or a
    list), only where it stands alone (a value ``1`` leaves ``{0,127}`` of a pattern as it is)."""
    if value is None or isinstance(value, bool):
        return message
    forms = {short_repr(value), repr(value)} | (set() if isinstance(value, str) else {str(value)})
    for shown in sorted((f for f in forms if f), key=len, reverse=True):
        message = re.sub(rf"(?<!\w){re.escape(shown)}(?!\w)", HIDDEN_CREDENTIAL, message)
    return message


def _field_fix(parts: list[str | int]) -> tuple[str, str]:
    """(the last field name on ``parts``, its FIELD_FIX: ``parent.field`` first, then ``field``)."""
    names = [p for p in parts if isinstance(p, str)]
    field = names[-1] if names else ""
    scoped = f"{names[-2]}.{field}" if len(names) > 1 else ""
    return field, FIELD_FIX.get(scoped) or FIELD_FIX.get(field, "")


def _message_and_fix(err: dict[str, Any], parts: list[str | int]) -> tuple[str, str]:
    field, hint = _field_fix(parts)
    e = _Error(err["type"], err["msg"], err.get("ctx") or {}, err.get("input"), parts, field, hint,
               bool(err.get("_about_key")))
    message, fix = _MESSAGE_AND_FIX.get(e.etype, _other)(e)
    if "credentials" in parts and not e.about_key:  # someone pasted the password instead of a variable name
        message, fix = _hide_credential(message, e.value), _hide_credential(fix, e.value)
    return message, fix


_Item = tuple[dict[str, Any], list[str | int], tuple[int, int]]


def _renamed(errors: list[dict[str, Any]], data: Any) -> set[tuple[str, str]]:
    """(parent path, field) that an unknown-field finding already tells to rename to."""
    renamed = set()
    for err in errors:
        if err["type"] == "extra_forbidden":
            parts, _, _ = _data_path(data, tuple(err["loc"]), False)
            close = _closest_field(parts)[1]
            if close:
                renamed.add((format_path(parts[:-1]), close[0]))
    return renamed


def _grouped(errors: list[dict[str, Any]], data: Any, index: PositionIndex,
             skip_paths: set[str]) -> dict[tuple[str, bool], list[_Item]]:
    """(data path, about a key) -> the errors there with their path parts and position."""
    renamed = _renamed(errors, data)
    grouped: dict[tuple[str, bool], list[_Item]] = {}
    for err in errors:
        parts, missing, about_key = _data_path(data, tuple(err["loc"]), err["type"] == "missing")
        err["_about_key"] = about_key
        path = format_path(parts)
        if path in skip_paths or (missing and (format_path(parts[:-1]), parts[-1]) in renamed):
            continue
        pos: tuple[int, int] | None = None
        if err["type"] == "extra_forbidden" or about_key:
            pos = index.key(path)
        if pos is None:
            pos = index.nearest(path)[1] if missing else index.get(path) or index.nearest(path)[1]
        grouped.setdefault((path, about_key), []).append((err, parts, pos))
    return grouped


def _messages_and_fixes(items: list[_Item], about_key: bool) -> tuple[list[str], list[str]]:
    """The distinct messages and fixes of the errors at one path (union alternatives merged)."""
    if len(items) > 1 and all(e["type"] in ("enum", "literal_error") for e, _, _ in items):
        alts = [a for e, _, _ in items for a in re.split(r", | or ",
                                                         str((e.get("ctx") or {}).get("expected", "")))]
        choices = ", ".join(alts[:-1]) + f" or {alts[-1]}" if len(alts) > 1 else "".join(alts)
        what = "key" if about_key else "value"
        return ([f"{_short(items[0][0].get('input'))} is not an allowed {what}; expected {choices}"],
                [f"use one of: {choices}"])
    pairs = [_message_and_fix(e, parts) for e, parts, _ in items]
    return list(dict.fromkeys(m for m, _ in pairs)), list(dict.fromkeys(f for _, f in pairs))


def schema_findings(exc: ValidationError, data: Any, index: PositionIndex, file: str,
                    skip_paths: set[str]) -> list[Finding]:
    """One RT003 finding per invalid value (union alternatives merged), each with a position.

    Args:
        exc: the pydantic error for ``data``.
        data: the plain data that was validated.
        index: positions of ``data``'s nodes.
        file: file name for the locations.
        skip_paths: paths that already have a finding (unreadable scalars); errors there are dropped.
    """
    errors: list[dict[str, Any]] = [dict(e) for e in exc.errors(include_url=False)]
    out: list[Finding] = []
    for (path, about_key), items in _grouped(errors, data, index, skip_paths).items():
        messages, fixes = _messages_and_fixes(items, about_key)
        line, col = items[0][2]
        out.append(Finding(rule="RT003", severity=Severity.error, message=" or ".join(messages),
                           fix="; or ".join(fixes),
                           location=Location(file=file, line=line, col=col, path=path or None)))
    return out


def unexpected_finding(exc: BaseException, file: str) -> Finding:
    """A validator raised something other than ValueError (a bug): still a finding, never a traceback."""
    return Finding(rule="RT003", severity=Severity.error,
                   message=f"the inventory could not be validated: {type(exc).__name__}: {exc}",
                   fix="check the values near the reported field; please report this as a roce-tune bug",
                   location=Location(file=file, line=1, col=1))


__all__ = ["FIELD_FIX", "schema_findings", "unexpected_finding"]
