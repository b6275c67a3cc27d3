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
    """Only spaces or a comment may follow a closed quote / flow collection on the line."""
    rest = s[i:].lstrip(" ")
    if rest and rest[0] != "#":
        raise Bail
    if rest and i < len(s) and s[i] != " ":
        raise Bail  # '#' glued to the value is not a comment


class Ctx:
    __slots__ = ("bad_paths", "issues", "keys", "plain_cache")

    def __init__(self) -> None:
        self.plain_cache: dict[str, Any] = {}
        self.keys: set[str] = set()
        self.issues: list[YamlIssue] = []
        self.bad_paths: set[str] = set()


def resolve_scalar(text: str, ctx: Ctx, path: str, line: int, col: int) -> Any:
    try:
        return resolve_plain(text)
    except ScalarError as exc:
        ctx.issues.append(YamlIssue("RT003", str(exc), "write a number in the documented range", line, col, path))
        ctx.bad_paths.add(path)
        return text


_FLOW_PAIR_RE = re.compile(
    r" *([A-Za-z0-9_][A-Za-z0-9_.-]{0,999}): +('(?:[^']|'')*'|[^,\[\]{}#'\"\s&*!|>%@`?:-][^,\[\]{}#]*?) *([,}])")


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


def flow_map_split(s: str, line: int, base: int, ctx: Ctx) -> tuple[Any, Any, int] | None:
    """``{k: v, k: 'v'}`` with single spaces and no nesting, comments or escapes, by ``str.split``.

    The quickest of the three flow readers; returns None for anything it is not sure of.
    """
    end = s.find("}")
    inner = s[1:end]
    if end < 0 or not inner or "{" in inner or "[" in inner or "]" in inner or "#" in inner:
        return None
    out: dict[str, Any] = {}
    pos: PosMap = {}
    plain_cache, keys = ctx.plain_cache, ctx.keys
    i = 1
    for part in inner.split(", "):
        key, sep, raw = part.partition(": ")
        if not sep or not raw or key in out:
            return None
        if key not in keys:
            if not _NAME_KEY_RE.match(key):
                return None
            keys.add(key)
        c = raw[0]
        if c == "'" or c == '"':
            value: Any = raw[1:-1]
            if len(raw) < 2 or raw[-1] != c or c in value or "\\" in value or ": " in value:
                return None
        else:
            if c in _SPLIT_BAD_START or raw[-1] in " :" or ": " in raw or "," in raw or "'" in raw or '"' in raw:
                return None
            value = plain_cache.get(raw, plain_cache)
            if value is plain_cache:
                try:
                    value = plain_cache[raw] = resolve_plain(raw)
                except ScalarError:
                    return None
        out[key] = value
        pos[key] = (line, base + i + 1, line, base + i + len(key) + 3, None)
        i += len(part) + 2
    return out, pos, end + 1


def flow_node(s: str, i: int, line: int, ctx: Ctx, path: str, base: int) -> tuple[Any, Any, int]:
    """Parse one flow node at ``s[i]`` (``s[0]`` is at 0-based column ``base``).

    Returns (value, child positions, index after the node).
    """
    c = s[i]
    if c == "{":
        out: dict[str, Any] = {}
        pos: PosMap = {}
        i += 1
        while True:
            while i < len(s) and s[i] == " ":
                i += 1
            if i >= len(s):
                raise Bail
            if s[i] == "}":
                if out:
                    raise Bail  # trailing comma
                return out, pos, i + 1
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
            while i < len(s) and s[i] == " ":
                i += 1
            if i < len(s) and s[i] == ",":
                i += 1
                continue
            if i < len(s) and s[i] == "}":
                return out, pos, i + 1
            raise Bail
    if c == "[":
        items: list[Any] = []
        ipos: PosSeq = []
        i += 1
        while True:
            while i < len(s) and s[i] == " ":
                i += 1
            if i >= len(s):
                raise Bail
            if s[i] == "]":
                if items:
                    raise Bail
                return items, ipos, i + 1
            vcol = base + i + 1
            v, child, i = flow_node(s, i, line, ctx, join_index(path, len(items)), base)
            items.append(v)
            ipos.append((line, vcol, child))
            while i < len(s) and s[i] == " ":
                i += 1
            if i < len(s) and s[i] == ",":
                i += 1
                continue
            if i < len(s) and s[i] == "]":
                return items, ipos, i + 1
            raise Bail
    if c == "'":
        m = SQ_RE.match(s, i)
        if not m:
            raise Bail
        return m.group(1).replace("''", "'"), None, m.end()
    if c == '"':
        m = DQ_RE.match(s, i)
        if not m:
            raise Bail
        return m.group(1), None, m.end()
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
