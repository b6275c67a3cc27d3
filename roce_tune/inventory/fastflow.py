"""Flow collections (``{a: 1, b: [x, y]}``) on one line, for :mod:`roce_tune.inventory.fastyaml`.

Three readers, fastest first: :func:`flow_map_split` (``str.split`` for plain ``{k: v, …}``),
:func:`flow_map_simple` (one regex per pair) and :func:`flow_node` (a small recursive-descent reader
for any one-line flow node). Each either returns exactly what ruamel.yaml would build, or declines
(None, or :class:`Bail` to leave the whole document to ruamel.yaml).
"""

from __future__ import annotations

import re
from typing import Any

from roce_tune.inventory.yamlpos import (
    PosMap,
    PosSeq,
    ScalarError,
    SplitPos,
    YamlIssue,
    join_index,
    join_key,
    resolve_plain,
)

SQ_RE = re.compile(r"'((?:[^']|'')*)'")
DQ_RE = re.compile(r'"([^"\\]*)"')
_FLOW_KEY_RE = re.compile(r"([A-Za-z0-9_][A-Za-z0-9_.-]{0,999}): +")
_FLOW_PLAIN_RE = re.compile(r"[^,\[\]{}#'\"\s][^,\[\]{}]*")


class Bail(Exception):
    """Input outside the accepted subset (not an error: ruamel.yaml takes over)."""


def after_ok(s: str, i: int) -> None:
    """Only spaces or a comment may follow a closed quote / flow collection on the line (``i``: the 0-based
    character index just past it in the line ``s``).

    Raises:
        Bail: anything else follows (the general reader then takes the line).
    """
    rest = s[i:].lstrip(" ")
    if rest and rest[0] != "#":
        raise Bail
    if rest and i < len(s) and s[i] != " ":
        raise Bail  # '#' glued to the value is not a comment


class Ctx:
    """What the flow readers share over one document: caches and the issues found."""

    __slots__ = ("bad_paths", "issues", "keys", "plain_cache", "split_cache", "split_values")

    def __init__(self) -> None:
        self.plain_cache: dict[str, Any] = {}
        #: raw value text -> value, for the texts :func:`flow_map_split` accepted
        self.split_cache: dict[str, Any] = {}
        #: raw value text -> value, for :func:`split_pairs`
        self.split_values = SplitValues()
        self.keys: set[str] = set()
        self.issues: list[YamlIssue] = []
        self.bad_paths: set[str] = set()


def resolve_scalar(text: str, ctx: Ctx, path: str, line: int, col: int) -> Any:
    """An unquoted scalar by the YAML 1.2 core schema (:func:`roce_tune.inventory.yamlpos.resolve_plain`);
    a number out of range is recorded in ``ctx`` as RT003 at ``line``:``col`` (1-based) and ``path``, and
    the text is returned as it is (never raises)."""
    try:
        return resolve_plain(text)
    except ScalarError as exc:
        ctx.issues.append(YamlIssue("RT003", str(exc), "write a number in the documented range", line, col,
                                    path))
        ctx.bad_paths.add(path)
        return text


_FLOW_PAIR_RE = re.compile(
    r" *([A-Za-z0-9_][A-Za-z0-9_.-]{0,999}): +"
    r"('(?:[^']|'')*'|[^,\[\]{}#'\"\s&*!|>%@`?:-][^,\[\]{}#]*?) *([,}])")


def flow_map_simple(s: str, line: int, base: int, plain_cache: dict[str, Any]) -> tuple[Any, Any, int] | None:
    """``{key: scalar, …}`` on one line, the shape of most flow mappings, by one regex per pair.

    Returns None when the mapping has any other shape (nested, duplicate keys, odd scalars); the
    general :func:`_flow` then decides.
    """
    out: dict[str, Any] = {}
    pos: PosMap = {}
    i = 1
    match = _FLOW_PAIR_RE.match
    while True:
        m = match(s, i)
        if m is None:
            return None
        key, raw = m.group(1), m.group(2)
        if key in out:
            return None
        if raw[0] == "'":
            value: Any = raw[1:-1].replace("''", "'")
        else:
            value = plain_cache.get(raw, plain_cache)
            if value is plain_cache:
                if ": " in raw or raw[-1] == ":" or " #" in raw:
                    return None
                try:
                    value = resolve_plain(raw)
                except ScalarError:
                    return None
                plain_cache[raw] = value
        out[key] = value
        pos[key] = (line, base + m.start(1) + 1, line, base + m.start(2) + 1, None)
        i = m.end()
        if m.group(3) == "}":
            return out, pos, i


_NAME_KEY_RE = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,999}\Z")
_SPLIT_BAD_START = frozenset("&*!|>%@`?:- ,")
#: "not a value flow_map_split is sure of" (None is a value)
_NOT_SURE: Any = object()


def _split_inner(s: str) -> tuple[str, int] | None:
    """The text between ``{`` and the first ``}`` and that ``}``'s index, if it nests nothing."""
    end = s.find("}")
    inner = s[1:end]
    if end < 0 or not inner or "{" in inner or "[" in inner or "]" in inner or "#" in inner:
        return None
    return inner, end


def _split_quoted(raw: str, quote: str) -> Any:
    """A quoted value without escapes or doubled quotes, or :data:`_NOT_SURE`."""
    value = raw[1:-1]
    if len(raw) < 2 or raw[-1] != quote or quote in value or "\\" in value or ": " in value:
        return _NOT_SURE
    return value


def _split_value(raw: str, plain_cache: dict[str, Any]) -> Any:
    """The value of a ``key: raw`` pair :func:`flow_map_split` cut out, or :data:`_NOT_SURE`."""
    c = raw[0]
    if c == "'" or c == '"':
        return _split_quoted(raw, c)
    if c in _SPLIT_BAD_START or raw[-1] in " :" or ": " in raw or "," in raw or "'" in raw or '"' in raw:
        return _NOT_SURE
    value: Any = plain_cache.get(raw, plain_cache)
    if value is plain_cache:
        try:
            value = plain_cache[raw] = resolve_plain(raw)
        except ScalarError:
            return _NOT_SURE
    return value


#: ``key: value, key: value`` that :func:`flow_map_split` cuts by ``str.split`` without a doubt: plain-name
#: keys; values plain (name characters, ``:`` only inside) or quoted without spaces, commas, quotes or
#: backslashes inside. So the text splits exactly at ``", "`` and each pair at its first ``": "``.
_SPLIT_INNER = (r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,999}: "
                r"""(?:"[^"'\\, ]*"|'[^"'\\, ]*'|[A-Za-z0-9_.](?:[A-Za-z0-9_./+:-]*[A-Za-z0-9_./+-])?)""")
SPLIT_INNER_RE = re.compile(rf"{_SPLIT_INNER}(?:, {_SPLIT_INNER})*")
_SPLIT_MAP_RE = re.compile(rf"\{{({_SPLIT_INNER}(?:, {_SPLIT_INNER})*)\}}")


class _Decline(Exception):
    """A value :func:`split_pairs` is not sure of (a number too long to read)."""


class SplitValues(dict[str, Any]):
    """Raw value text -> value for :func:`split_pairs`: plain texts are resolved once and kept (a fabric
    repeats ``400G``, ``3m``, ``connectx-7``), quoted ones are cut on each use (mostly unique names)."""

    def __missing__(self, raw: str) -> Any:
        if raw[0] == '"' or raw[0] == "'":
            return raw[1:-1]
        try:
            value = self[raw] = resolve_plain(raw)
        except ScalarError:
            raise _Decline from None
        return value


def split_pairs(inner: str, line: int, base: int, values: SplitValues) -> tuple[Any, Any] | None:
    """The mapping ``{inner}`` for an ``inner`` :data:`SPLIT_INNER_RE` matched whole (its ``{`` at
    0-based column ``base``): cut and built by C-level calls (``str.replace``/``split``, ``dict``, ``map``).

    Returns:
        (mapping, its positions as a :class:`~roce_tune.inventory.yamlpos.SplitPos`, worked out only
        when a finding points into the mapping), or None for a duplicate key (the general reader
        reports it, RT002) or a number too long to read.
    """
    cut = inner.replace(": ", ", ").split(", ")  # key, value, key, value, ...
    pieces = iter(cut)  # zip takes a key from it, then map the value after that key
    try:
        out = dict(zip(pieces, map(values.__getitem__, pieces)))
    except _Decline:
        return None
    if 2 * len(out) != len(cut):
        return None
    return out, SplitPos((inner, line, base))


def flow_map_split(s: str, line: int, base: int, ctx: Ctx) -> tuple[Any, Any, int] | None:
    """``{k: v, k: 'v'}`` with single spaces and no nesting, comments or escapes, by ``str.split``.

    The quickest of the three flow readers; returns None for anything it is not sure of. The common
    shape (:data:`SPLIT_INNER_RE`) goes through :func:`split_pairs`; the rest pair by pair, with the
    values it was sure of remembered per raw text (``ctx.split_cache``).

    Returns:
        (mapping, its positions, index in ``s`` after the ``}``), or None.
    """
    m = _SPLIT_MAP_RE.match(s)
    if m is not None:
        got = split_pairs(m.group(1), line, base, ctx.split_values)
        return None if got is None else (got[0], got[1], m.end())
    return _flow_map_pairs(s, line, base, ctx)


def _flow_map_pairs(s: str, line: int, base: int, ctx: Ctx) -> tuple[Any, Any, int] | None:
    """:func:`flow_map_split` pair by pair, for the texts :data:`SPLIT_INNER_RE` does not take."""
    got = _split_inner(s)
    if got is None:
        return None
    inner, end = got
    out: dict[str, Any] = {}
    plain_cache, keys, split_cache = ctx.plain_cache, ctx.keys, ctx.split_cache
    for part in inner.split(", "):
        key, sep, raw = part.partition(": ")
        if not sep or not raw or key in out:
            return None
        if key not in keys:
            if not _NAME_KEY_RE.match(key):
                return None
            keys.add(key)
        value = split_cache.get(raw, _NOT_SURE)
        if value is _NOT_SURE:
            value = _split_value(raw, plain_cache)
            if value is _NOT_SURE:
                return None
            split_cache[raw] = value
        out[key] = value
    return out, SplitPos((inner, line, base)), end + 1  # pairs cut at ", " and ": " as SplitPos cuts them


def _skip_spaces(s: str, i: int) -> int:
    n = len(s)
    while i < n and s[i] == " ":
        i += 1
    return i


def _next_entry(s: str, i: int, close: str) -> tuple[int, bool]:
    """After a flow entry: ``(index after the comma, False)``, or ``(index after close, True)``."""
    i = _skip_spaces(s, i)
    if i < len(s):
        if s[i] == ",":
            return i + 1, False
        if s[i] == close:
            return i + 1, True
    raise Bail


def _flow_entry_at(s: str, i: int, close: str, empty: bool) -> tuple[int, bool]:
    """Inside a flow collection: ``(index of the next entry, False)``, or ``(index after close, True)``
    when the collection is empty (``close`` after a comma is a trailing comma, which bails)."""
    i = _skip_spaces(s, i)
    if i >= len(s):
        raise Bail
    if s[i] != close:
        return i, False
    if not empty:
        raise Bail  # trailing comma
    return i + 1, True


def _flow_pair(s: str, i: int, line: int, ctx: Ctx, path: str, base: int, out: dict[str, Any],
               pos: PosMap) -> int:
    """One ``key: value`` of a flow mapping at ``s[i]`` into ``out``/``pos`` (RT002 for a duplicate)."""
    m = _FLOW_KEY_RE.match(s, i)
    if not m:
        raise Bail
    key, kcol = m.group(1), base + i + 1
    i = m.end()
    if i >= len(s) or s[i] in ",}#":
        raise Bail
    sub = join_key(path, key)
    vcol = base + i + 1
    v, child, i = flow_node(s, i, line, ctx, sub, base)
    if key in pos:
        f = pos[key]
        ctx.issues.append(YamlIssue(
            "RT002", f"duplicate key {key!r} (first defined at line {f[0]} column {f[1]})",
            f"remove one of the two '{key}:' entries or merge their values", line, kcol, sub))
    else:
        out[key] = v
        pos[key] = (line, kcol, line, vcol, child)
    return i


def _flow_map(s: str, i: int, line: int, ctx: Ctx, path: str, base: int) -> tuple[Any, Any, int]:
    out: dict[str, Any] = {}
    pos: PosMap = {}
    i += 1
    while True:
        i, closed = _flow_entry_at(s, i, "}", not out)
        if closed:
            return out, pos, i
        i = _flow_pair(s, i, line, ctx, path, base, out, pos)
        i, closed = _next_entry(s, i, "}")
        if closed:
            return out, pos, i


def _flow_seq(s: str, i: int, line: int, ctx: Ctx, path: str, base: int) -> tuple[Any, Any, int]:
    items: list[Any] = []
    ipos: PosSeq = []
    i += 1
    while True:
        i, closed = _flow_entry_at(s, i, "]", not items)
        if closed:
            return items, ipos, i
        vcol = base + i + 1
        v, child, i = flow_node(s, i, line, ctx, join_index(path, len(items)), base)
        items.append(v)
        ipos.append((line, vcol, child))
        i, closed = _next_entry(s, i, "]")
        if closed:
            return items, ipos, i


def _flow_quoted(s: str, i: int) -> tuple[Any, Any, int]:
    m = (SQ_RE if s[i] == "'" else DQ_RE).match(s, i)
    if not m:
        raise Bail
    return (m.group(1).replace("''", "'") if s[i] == "'" else m.group(1)), None, m.end()


def _flow_plain(s: str, i: int, line: int, ctx: Ctx, path: str, base: int) -> tuple[Any, Any, int]:
    m = _FLOW_PLAIN_RE.match(s, i)
    if not m:
        raise Bail
    raw = m.group(0)
    cut = raw.find(" #")
    if cut >= 0:
        raise Bail  # a comment inside a one-line flow collection
    text = raw.rstrip(" ")
    if ": " in text or text.endswith(":") or text[0] in "&*!|>%@`?:" or (text[0] == "-" and len(text) > 1
                                                                          and text[1] == " "):
        raise Bail
    if text == "-":
        raise Bail
    return resolve_scalar(text, ctx, path, line, base + i + 1), None, i + len(raw)


def flow_node(s: str, i: int, line: int, ctx: Ctx, path: str, base: int) -> tuple[Any, Any, int]:
    """Parse one flow node at ``s[i]`` (``s[0]`` is at 0-based column ``base``).

    Returns (value, child positions, index after the node).
    """
    c = s[i]
    if c == "{":
        return _flow_map(s, i, line, ctx, path, base)
    if c == "[":
        return _flow_seq(s, i, line, ctx, path, base)
    if c == "'" or c == '"':
        return _flow_quoted(s, i)
    return _flow_plain(s, i, line, ctx, path, base)
