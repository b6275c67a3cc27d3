"""A fast reader for the plain block-style subset of YAML that inventories are written in.

ruamel.yaml's pure-Python composer needs ~20 s for a 4,096-host inventory (~270k lines); this reader
takes a fraction of a second and yields *exactly* what :func:`roce_tune.inventory.yamlpos.compose_ruamel`
yields (data, positions, duplicate-key issues) for every input it accepts. A differential test
(``tests/inventory/test_fastyaml.py``) holds it to that.

Accepted: block mappings with plain-word keys, block sequences (also ``- key: value`` compact entries
and sequences indented at their key's column), one-line flow ``{…}``/``[…]`` collections, plain
scalars and one-line quoted scalars without escapes, ``#`` comments, a leading ``---``, LF or CRLF
line ends. Anything else — anchors, aliases, tags, block scalars, multi-line scalars, escapes, tabs,
complex keys, several documents, any syntax error — makes :func:`fast_parse` return ``None`` and
the loader falls back to ruamel.yaml, which handles all of YAML and gives the error positions.
"""

from __future__ import annotations

import re
from typing import Any

from roce_tune.inventory.fastflow import (
    DQ_RE,
    SQ_RE,
    Bail,
    Ctx,
    after_ok,
    flow_map_simple,
    flow_map_split,
    flow_node,
)
from roce_tune.inventory.yamlpos import (
    MAX_INT_DIGITS,
    ParseResult,
    PosMap,
    ScalarError,
    YamlIssue,
    join_index,
    join_key,
    resolve_plain,
)

#: Characters that send a document to the ruamel path: tabs, lone CR, BOM, YAML 1.1 line breaks, and
#: C0/C1 controls (not printable in YAML).
_BAIL_CHARS = re.compile("[\t\ufeff\x85\u2028\u2029\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x84\x86-\x9f\ud800-\udfff\ufffe\uffff]")
#: Keys are at most 1000 characters: YAML limits implicit keys to 1024 (ruamel rejects longer ones).
_KEY_RE = re.compile(r"([A-Za-z0-9_][A-Za-z0-9_.-]{0,999}):(?: +|\Z)")
_PLAIN_BAD_START = frozenset("&*!|>%@`'\",[]{}#")


def _plain(s: str) -> str:
    """A block-context plain scalar: cut a `` #`` comment, strip, reject what YAML would reject."""
    cut = s.find(" #")
    if cut >= 0:
        s = s[:cut]
    s = s.rstrip(" ")
    if not s or s[0] in _PLAIN_BAD_START or ": " in s or s.endswith(":") or s[0] in "?:-" and (
            len(s) == 1 or s[1] == " "):
        raise Bail
    return s


def _tokenize(s: str) -> tuple[Any, ...]:
    """Describe one line's content (indentation removed); cached per distinct content.

    Returns ``(dash_offsets, key, key_off, vkind, value, voff)``: the offsets of leading ``- ``
    indicators, then a key (or None) at ``key_off``, and the value kind: 0 none (a block follows or
    the value is empty), 1 a scalar ``value`` at ``voff``, 2 a flow collection at ``voff`` (parsed
    per line), 3 a scalar that could not be read (``value`` is the message).
    """
    dashes: list[int] = []
    i = 0
    while s[i] == "-" and (i + 1 == len(s) or s[i + 1] == " "):
        dashes.append(i)
        i += 1
        while i < len(s) and s[i] == " ":
            i += 1
        if i == len(s) or s[i] == "#":
            return tuple(dashes), None, i, 0, None, i
    rest = s[i:] if i else s
    m = _KEY_RE.match(rest)
    key = None
    if m:
        key = m.group(1)
        voff = i + m.end()
        rest = s[voff:]
        if not rest or rest[0] == "#":
            return tuple(dashes), key, i, 0, None, voff
    else:
        if not dashes:
            raise Bail  # a value on its own line: multi-line scalar, flow continuation or an error
        voff = i
    c = rest[0]
    if c in "{[":
        return tuple(dashes), key, i, 2, None, voff
    if c == "'" or c == '"':
        qm = (SQ_RE if c == "'" else DQ_RE).match(rest)
        if not qm:
            raise Bail
        after_ok(rest, qm.end())
        value = qm.group(1).replace("''", "'") if c == "'" else qm.group(1)
        return tuple(dashes), key, i, 1, value, voff
    try:
        return tuple(dashes), key, i, 1, resolve_plain(_plain(rest)), voff
    except ScalarError as exc:
        return tuple(dashes), key, i, 3, str(exc), voff


def fast_parse(text: str) -> ParseResult | None:
    """Parse the block-style subset; ``None`` means "not in the subset, use ruamel.yaml".

    Returns:
        ParseResult identical to ``compose_ruamel(text)`` (data, positions, RT002/RT003 issues).
    """
    if "\r" in text:
        if text.count("\r") != text.count("\r\n"):
            return None
        text = text.replace("\r\n", "\n")
    if _BAIL_CHARS.search(text):
        return None
    try:
        return _parse(text)
    except (Bail, IndexError, RecursionError):
        return None


class _Frame:
    """An open block collection: its column, container, positions, kind and field path."""

    __slots__ = ("col", "data", "is_seq", "path", "pos")

    def __init__(self, col: int, data: Any, pos: Any, is_seq: bool, path: str):
        self.col, self.data, self.pos, self.is_seq, self.path = col, data, pos, is_seq, path


def _dup(ctx: Ctx, mpos: PosMap, key: str, line: int, col: int, path: str) -> None:
    f = mpos[key]
    ctx.issues.append(YamlIssue(
        "RT002", f"duplicate key {key!r} (first defined at line {f[0]} column {f[1]})",
        f"remove one of the two '{key}:' entries or merge their values", line, col, path))


_SKIP: tuple[Any, ...] = ("skip",)
_MARKER: tuple[Any, ...] = ("marker",)


#: The most common line, ``[- ]key: value`` with a value of name characters only: one regex decides it.
_SIMPLE_LINE_RE = re.compile(
    r"( *)(- +)?([A-Za-z0-9_][A-Za-z0-9_.-]{0,999}): +([A-Za-z0-9_./][A-Za-z0-9_./\[\]-]*(?::[A-Za-z0-9_./\[\]-]+)*)\Z")


def _line_token(raw: str) -> tuple[Any, ...]:
    """Token for one physical line (cached per distinct line): skip, document marker, or
    ``(base, dashes, key, key_off, vkind, value, voff, content, simple, value col)`` (see
    :func:`_tokenize`); ``simple`` marks a ``key: scalar`` line without a ``- ``."""
    m = _SIMPLE_LINE_RE.match(raw)
    if m is not None and len(m.group(4)) <= MAX_INT_DIGITS:
        base = m.end(1)
        dashed = m.group(2) is not None
        return (base, (0,) if dashed else (), m.group(3), m.start(3) - base, 1, resolve_plain(m.group(4)),
                m.start(4) - base, raw[base:], 2 if dashed else 1, m.start(4) + 1)
    s = raw.lstrip(" ")
    if not s or s[0] == "#":
        return _SKIP
    base = len(raw) - len(s)
    if base == 0 and (s[0] == "%" or s[:3] in ("---", "...") and (len(s) == 3 or s[3] == " ")):
        tail = s[3:].lstrip(" ")
        if not s.startswith("---") or (tail and tail[0] != "#"):
            raise Bail  # directives, '...', or content after '---'
        return _MARKER
    dashes, key, key_off, vkind, value, voff = _tokenize(s)
    simple = 0 if vkind != 1 or key is None else 1 if not dashes else 2 if len(dashes) == 1 else 0
    return (base, dashes, key, key_off, vkind, value, voff, s, simple, base + voff + 1)


def _parse(text: str) -> ParseResult:
    ctx = Ctx()
    root: dict[str, Any] = {}
    root_pos: PosMap = {}
    stack: list[_Frame] = []
    top: Any = _Frame(-1, None, None, True, "")  # sentinel until the first key
    # the current collection, unpacked for the fast path
    top_col, top_is_seq = -1, True
    top_pos: Any = None
    top_data: Any = None
    # a slot waiting for a block value: (frame, key or None for a sequence item, indent, kline, kcol)
    pending: tuple[Any, ...] | None = None
    cache: dict[str, tuple[Any, ...]] = {}
    cache_get = cache.get
    started = False
    root_line = 0
    for lineno, raw in enumerate(text.split("\n"), 1):
        tok = cache_get(raw)
        if tok is None:
            tok = cache[raw] = _line_token(raw)
        if len(tok) == 1:
            if tok is _MARKER and started:
                raise Bail  # a second document
            continue
        base, dashes, key, key_off, vkind, value, voff, s, simple, vcol1 = tok
        if simple == 1 and base == top_col and not top_is_seq and key not in top_pos:
            top_data[key] = value  # the common line, "key: scalar", continuing the current mapping
            top_pos[key] = (lineno, base + 1, lineno, vcol1, None)
            continue
        if simple == 2 and pending is None and started:
            # "- key: scalar", the first line of the next mapping in a sequence of mappings
            while top.col > base:
                stack.pop()
                top = stack[-1]
            if top.col == base and top.is_seq:
                kcol1 = base + key_off + 1
                new_map = {key: value}
                new_pos = {key: (lineno, kcol1, lineno, vcol1, None)}
                path = join_index(top.path, len(top.data))
                top.data.append(new_map)
                top.pos.append((lineno, kcol1, new_pos))
                top = _Frame(kcol1 - 1, new_map, new_pos, False, path)
                stack.append(top)
                top_col, top_is_seq, top_pos, top_data = top.col, False, new_pos, new_map
                continue
        if not started:
            if dashes or key is None or base != 0:
                raise Bail
            started, root_line = True, lineno
            top = _Frame(0, root, root_pos, False, "")
            stack.append(top)
        # every '- ' indicator, then the key or scalar, is a token at its own column
        ntok = len(dashes) + (key is not None)
        for t in range(ntok):
            is_dash = t < len(dashes)
            col = base + (dashes[t] if is_dash else key_off)
            if pending is not None:
                pframe, pkey, pind, pkl, pkc = pending
                pending = None
                if col > pind or (is_dash and pkey is not None and col == pind):
                    new: Any = [] if is_dash else {}
                    newpos: Any = [] if is_dash else {}
                    if pkey is None:
                        path = join_index(pframe.path, len(pframe.data))
                        pframe.data.append(new)
                        pframe.pos.append((lineno, col + 1, newpos))
                    else:
                        path = join_key(pframe.path, pkey)
                        pframe.data[pkey] = new
                        pframe.pos[pkey] = (pkl, pkc, lineno, col + 1, newpos)
                    top = _Frame(col, new, newpos, is_dash, path)
                    stack.append(top)
                else:
                    if pkey is None:
                        raise Bail  # an empty sequence item: leave its odd position to ruamel
                    pframe.data[pkey] = None
                    pframe.pos[pkey] = (pkl, pkc, pkl, pkc, None)
            while top.col > col or (top.col == col and top.is_seq and not is_dash and len(stack) > 1
                                    and stack[-2].col == col):
                stack.pop()
                if not stack:
                    raise Bail
                top = stack[-1]
            if top.col != col or top.is_seq != is_dash:
                raise Bail
            if is_dash:
                if t + 1 < ntok or vkind == 0:
                    pending = (top, None, col, lineno, col + 1)
                    continue  # a nested block starts on this line, or on the next
                v, child = _value(s, vkind, value, voff, lineno, base + voff, ctx, top, len(top.data))
                top.data.append(v)
                top.pos.append((lineno, base + voff + 1, child))
                continue
            mpos = top.pos
            if key in mpos:
                kpath = join_key(top.path, key)
                _dup(ctx, mpos, key, lineno, col + 1, kpath)
                sink = _Frame(col, {}, {}, False, top.path)  # parsed for its own issues, then dropped
                if vkind == 0:
                    pending = (sink, key, col, lineno, col + 1)
                else:
                    _value(s, vkind, value, voff, lineno, base + voff, ctx, sink, key)
                continue
            if vkind == 0:
                pending = (top, key, col, lineno, col + 1)
                continue
            v, child = _value(s, vkind, value, voff, lineno, base + voff, ctx, top, key)
            top.data[key] = v
            mpos[key] = (lineno, col + 1, lineno, base + voff + 1, child)
        top_col, top_is_seq, top_pos, top_data = top.col, top.is_seq, top.pos, top.data
        if pending is not None:
            top_col = -2  # the next line must go through the slow path
    if not started:
        raise Bail
    if pending is not None:
        pframe, pkey, _, pkl, pkc = pending
        if pkey is None:
            raise Bail
        pframe.data[pkey] = None
        pframe.pos[pkey] = (pkl, pkc, pkl, pkc, None)
    return ParseResult(root, root_line, 1, root_pos, ctx.issues, ctx.bad_paths)


def _value(text_line: str, vkind: int, value: Any, voff: int, line: int, col0: int, ctx: Ctx,
           frame: _Frame, slot: str | int) -> tuple[Any, Any]:
    """Materialise a token's value: a cached scalar, a flow collection, or an unreadable number.

    ``frame`` and ``slot`` (key or item index) give the value's field path, built only when needed.
    """
    if vkind == 1:
        return value, None
    if vkind == 2 and text_line[voff] == "{":
        seg = text_line[voff:]
        got = flow_map_split(seg, line, col0, ctx) or flow_map_simple(seg, line, col0, ctx.plain_cache)
        if got is not None:
            after_ok(text_line[voff:], got[2])
            return got[0], got[1]
    path = join_index(frame.path, slot) if isinstance(slot, int) else join_key(frame.path, slot)
    if vkind == 3:
        ctx.issues.append(YamlIssue("RT003", value, "write a number in the documented range", line, col0 + 1,
                                    path))
        ctx.bad_paths.add(path)
        return text_line[voff:].split(" #")[0].rstrip(" "), None
    seg = text_line[voff:]
    v, child, end = flow_node(seg, 0, line, ctx, path, col0)
    after_ok(seg, end)
    return v, child
