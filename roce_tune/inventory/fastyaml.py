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
from itertools import islice
from typing import Any

from roce_tune.inventory.fastflow import (
    DQ_RE,
    SPLIT_INNER_RE,
    SQ_RE,
    Bail,
    Ctx,
    SplitValues,
    after_ok,
    flow_map_simple,
    flow_map_split,
    flow_node,
    split_pairs,
)
from roce_tune.inventory.yamlpos import (
    MAX_INT_DIGITS,
    LineSplitPos,
    ParseResult,
    PosMap,
    PosSeq,
    ScalarError,
    SplitPos,
    YamlIssue,
    join_index,
    join_key,
    resolve_plain,
)

#: Characters that send a document to the ruamel path: tabs, lone CR, BOM, YAML 1.1 line breaks, and
#: C0/C1 controls (not printable in YAML).
_BAIL_CHARS = re.compile("[\t\ufeff\x85\u2028\u2029\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x84\x86-\x9f"
                         "\ud800-\udfff\ufffe\uffff]")
#: The ASCII characters :data:`_BAIL_CHARS` lets through.
_ASCII_OK = bytes(range(0x20, 0x7F)) + b"\n\r"


def _has_bail_chars(text: str) -> bool:
    """Whether :data:`_BAIL_CHARS` occurs in ``text``; for ASCII text by ``bytes.translate`` (4x quicker
    than the regex on an 8 MB inventory)."""
    if text.isascii():
        return bool(text.encode("ascii").translate(None, _ASCII_OK))
    return _BAIL_CHARS.search(text) is not None


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


def _dash_prefix(s: str) -> tuple[list[int], int]:
    """The offsets of the leading ``- `` indicators and the offset of what follows them."""
    dashes: list[int] = []
    i = 0
    n = len(s)
    while i < n and s[i] == "-" and (i + 1 == n or s[i + 1] == " "):
        dashes.append(i)
        i += 1
        while i < n and s[i] == " ":
            i += 1
    return dashes, i


def _scalar(rest: str) -> tuple[int, Any]:
    """``(vkind, value)`` of a value's text (see :func:`_tokenize`)."""
    c = rest[0]
    if c in "{[":
        return 2, None
    if c == "'" or c == '"':
        qm = (SQ_RE if c == "'" else DQ_RE).match(rest)
        if not qm:
            raise Bail
        after_ok(rest, qm.end())
        return 1, qm.group(1).replace("''", "'") if c == "'" else qm.group(1)
    try:
        return 1, resolve_plain(_plain(rest))
    except ScalarError as exc:
        return 3, str(exc)


def _tokenize(s: str) -> tuple[Any, ...]:
    """Describe one line's content (indentation removed, not empty, not a comment); cached per content.

    Returns ``(dash_offsets, key, key_off, vkind, value, voff)``: the offsets of leading ``- ``
    indicators, then a key (or None) at ``key_off``, and the value kind: 0 none (a block follows or
    the value is empty), 1 a scalar ``value`` at ``voff``, 2 a flow collection at ``voff`` (parsed
    per line), 3 a scalar that could not be read (``value`` is the message).
    """
    dash_list, i = _dash_prefix(s)
    dashes = tuple(dash_list)
    if dashes and (i == len(s) or s[i] == "#"):
        return dashes, None, i, 0, None, i
    rest = s[i:] if i else s
    m = _KEY_RE.match(rest)
    key = None
    if m:
        key = m.group(1)
        voff = i + m.end()
        rest = s[voff:]
        if not rest or rest[0] == "#":
            return dashes, key, i, 0, None, voff
    elif not dashes:
        raise Bail  # a value on its own line: multi-line scalar, flow continuation or an error
    else:
        voff = i
    vkind, value = _scalar(rest)
    return dashes, key, i, vkind, value, voff


def fast_parse(text: str) -> ParseResult | None:
    """Parse the block-style subset; ``None`` means "not in the subset, use ruamel.yaml".

    Returns:
        ParseResult identical to ``compose_ruamel(text)`` (data, positions, RT002/RT003 issues).
    """
    if "\r" in text:
        if text.count("\r") != text.count("\r\n"):
            return None
        text = text.replace("\r\n", "\n")
    if _has_bail_chars(text):
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


#: ``- {k: v, ...}``, a flow mapping :func:`split_pairs` reads, as a sequence item; group 1 is the
#: indentation, group 2 the text between the braces.
_FLOW_ITEM_RE = re.compile(rf"( *)- \{{({SPLIT_INNER_RE.pattern})\}}\Z")
#: ``key: {k: v, ...}``, a flow mapping :func:`split_pairs` reads, as a mapping value; groups: the
#: indentation, the key, the text between the braces.
_FLOW_ENTRY_RE = re.compile(
    rf"( *)([A-Za-z0-9_][A-Za-z0-9_.-]{{0,999}}): +\{{({SPLIT_INNER_RE.pattern})\}}\Z")

#: A character a double-quoted value of the :data:`SPLIT_INNER_RE` shape may not hold (``"`` aside).
_QUOTED_BAD_RE = re.compile(r"['\\, ]")


#: A one-line flow mapping read by :class:`_FlowLines`: (indentation, key or None for a sequence item,
#: mapping, its positions, 1-based column of its ``{``).
_FlowLine = tuple[int, "str | None", dict[str, Any], SplitPos, int]


class _FlowLines:
    """``- {k: v, ...}`` sequence items (NICs, links) and ``key: {k: v, ...}`` entries (``mgmt: {...}``) by
    :func:`split_pairs`, and by template where lines differ only in their double-quoted values.

    A fabric repeats its NIC, link and management lines with only the names and addresses changed, and
    those are written quoted (``switch_port: "leaf1:Ethernet0"``; ``roce-tune expand`` writes them so).
    Such a line, cut at its ``"``, is known by the text outside the quotes: once one line of that text was
    read by the regex and :func:`split_pairs`, the next ones copy its mapping and put their quoted texts
    in. The result is the same: the text outside the quotes is the same, and a quoted text without ``'``,
    backslash, ``,`` or a space fits the quoted value of :data:`SPLIT_INNER_RE` whatever it holds
    (double-quoted values are taken as written, ``split_pairs`` only cuts their quotes). Consecutive items
    with known templates (a host's NICs, a links list) are taken a run at a time by :meth:`run`.
    """

    __slots__ = ("items", "known", "stops", "values")

    def __init__(self, values: SplitValues) -> None:
        self.values = values
        #: the templates of sequence items for :meth:`run`, by indentation: the line's texts outside its
        #: double quotes, joined by ``"`` (one string hashes quicker than a tuple) -> (mapping of its
        #: first line, keys of the quoted values)
        self.items: dict[int, dict[str, tuple[dict[str, Any], tuple[str, ...]]]] = {}
        #: line indices (0-based, last = next) where :meth:`run` must stop (see :meth:`_cut_run`)
        self.stops: list[int] = []
        #: the line's texts outside its double quotes, joined by ``"`` -> (the line read as
        #: :data:`_FlowLine`, with the mapping of its first line, and the keys of the quoted values in
        #: their order)
        self.known: dict[str, tuple[_FlowLine, tuple[str, ...]]] = {}

    def items_at(self, lines: list[str], idx: int, col: int, data: list[Any], pos: PosSeq) -> int:
        """The ``- {k: v, ...}`` items of the current block sequence from ``lines[idx]`` on: a run of them
        by :meth:`run`, else the one line by :meth:`item`. Returns how many lines were taken (0: none,
        nothing appended)."""
        taken = self.run(lines, idx, col, data, pos)
        if taken:
            return taken
        got = self.item(lines[idx], idx + 1, col)
        if got is None:
            return 0
        data.append(got[0])
        pos.append((idx + 1, col + 3, got[1]))
        return 1

    def run(self, lines: list[str], idx: int, col: int, data: list[Any], pos: PosSeq) -> int:
        """The ``- {k: v, ...}`` items of the current block sequence (indentation ``col``; ``data`` and
        ``pos`` its items and positions) from ``lines[idx]`` on, as many consecutive lines as have a
        template learnt already (see the class): appended exactly as :meth:`item` would append them one by
        one, in one loop without a call per line.

        Returns:
            How many lines it took; 0 when ``lines[idx]`` has no template (nothing appended; the line then
            goes through :meth:`item`, which may learn one).
        """
        known = self.items.get(col)
        if known is None:
            return 0
        get = known.get
        quoted_texts: list[str] = []  # checked once for the whole run, after the loop
        add_quoted = quoted_texts.extend
        add = data.append
        add_pos = pos.append
        item_col, base = col + 3, col + 2  # 1-based column of "-" plus 2; 0-based column of "{"
        lineno = idx + 1
        for i in range(idx, self._stop(idx, len(lines))):
            raw = lines[i]
            parts = raw.split('"')
            template = get('"'.join(parts[::2]))
            if template is None:
                break
            quoted = parts[1::2]
            add_quoted(quoted)
            out = template[0].copy()  # the keys keep their order: update() only replaces values
            out.update(zip(template[1], quoted))
            add(out)
            add_pos((lineno, item_col, LineSplitPos((raw, lineno, base))))
            lineno += 1
        taken = lineno - idx - 1
        text = "".join(quoted_texts)
        if "," in text or " " in text or "'" in text or "\\" in text:  # _QUOTED_BAD_RE by memchr
            return self._cut_run(lines, idx, taken, data, pos)
        return taken

    def _stop(self, idx: int, end: int) -> int:
        """Where a run from ``lines[idx]`` must stop at the latest: the next line :meth:`_cut_run` found a
        quoted text in that its template does not fit, else ``end``."""
        stops = self.stops
        while stops and stops[-1] < idx:
            stops.pop()
        return stops[-1] if stops else end

    def _cut_run(self, lines: list[str], idx: int, taken: int, data: list[Any], pos: PosSeq) -> int:
        """A run :meth:`run` took ``taken`` lines of, some with a quoted text the template does not fit (a
        ``'``, backslash, ``,`` or space in it): keep the lines before the first (their number returned),
        take back the others from ``data`` and ``pos``, and remember where the others are, so the runs
        after each stop there (each line is looked at twice at most)."""
        bad = [i for i in range(idx, idx + taken)
               if _QUOTED_BAD_RE.search("".join(lines[i].split('"')[1::2])) is not None]
        keep = bad[0] - idx
        del data[len(data) - taken + keep:], pos[len(pos) - taken + keep:]
        self.stops.extend(reversed(bad))  # before any stop kept (this run ended there): the next one last
        return keep

    def item(self, raw: str, lineno: int, col: int) -> tuple[Any, Any] | None:
        """:meth:`read` of a ``- {k: v, ...}`` item at indentation ``col``, as (mapping, positions); a line
        without a double quote goes straight to the regex and :func:`split_pairs` (no template to find)."""
        if '"' in raw:
            got = self.read(raw, lineno, _FLOW_ITEM_RE)
            return got[2:4] if got is not None and got[0] == col else None
        m = _FLOW_ITEM_RE.match(raw)
        if m is None or m.end(1) != col:
            return None
        return split_pairs(m.group(2), lineno, col + 2, self.values)

    def read(self, raw: str, lineno: int, shape: re.Pattern[str]) -> _FlowLine | None:
        """The line ``raw`` as :data:`_FlowLine` if ``shape`` (:data:`_FLOW_ITEM_RE` or
        :data:`_FLOW_ENTRY_RE`) matches it and :func:`split_pairs` reads its mapping, else None."""
        if '"' in raw:
            parts = raw.split('"')
            known = self.known.get('"'.join(parts[::2]))
            if known is not None and (known[0][1] is None) == (shape is _FLOW_ITEM_RE):
                quoted = parts[1::2]
                text = "".join(quoted)
                if not ("," in text or " " in text or "'" in text or "\\" in text):  # _QUOTED_BAD_RE
                    (col, key, mapping, _, start), quoted_keys = known
                    out = mapping.copy()  # the keys keep their order: update() only replaces values
                    out.update(zip(quoted_keys, quoted))
                    return col, key, out, LineSplitPos((raw, lineno, start - 1)), start
        m = shape.match(raw)
        if m is None:
            return None
        inner = m.lastindex or 0  # the group of the text between the braces
        start = m.start(inner)
        got = split_pairs(m.group(inner), lineno, start - 1, self.values)
        if got is None:
            return None
        line = m.end(1), m.group(2) if inner == 3 else None, got[0], got[1], start
        if '"' in raw:
            self._learn(raw, m.group(inner), line)
        return line

    def _learn(self, raw: str, inner: str, line: _FlowLine) -> None:
        """Keep ``line`` (just read from ``raw``, ``inner`` the text between its braces) as the template of
        the lines that differ from ``raw`` only inside double quotes."""
        cut = inner.replace(": ", ", ").split(", ")  # as split_pairs cuts it
        quoted_keys = tuple(k for k, v in zip(cut[::2], cut[1::2]) if v[0] == '"')
        parts = raw.split('"')
        if 2 * len(quoted_keys) == len(parts) - 1:
            template = (*line[:2], line[2].copy(), *line[3:])
            outside = '"'.join(parts[::2])  # one string: no part holds a '"'
            self.known[outside] = (template, quoted_keys)
            if line[1] is None:
                self.items.setdefault(line[0], {})[outside] = (template[2], quoted_keys)


_SKIP: tuple[Any, ...] = ("skip",)
_MARKER: tuple[Any, ...] = ("marker",)


#: The most common line, ``[- ]key: value`` with a value of name characters only: one regex decides it.
_SIMPLE_LINE_RE = re.compile(
    r"( *)(- +)?([A-Za-z0-9_][A-Za-z0-9_.-]{0,999}): +"
    r"([A-Za-z0-9_./][A-Za-z0-9_./\[\]-]*(?::[A-Za-z0-9_./\[\]-]+)*)\Z")


def _simple_token(raw: str, m: re.Match[str]) -> tuple[Any, ...]:
    """The token of a line :data:`_SIMPLE_LINE_RE` matched (see :func:`_line_token`)."""
    base = m.end(1)
    dashed = m.group(2) is not None
    return (base, (0,) if dashed else (), m.group(3), m.start(3) - base, 1, resolve_plain(m.group(4)),
            m.start(4) - base, raw[base:], 2 if dashed else 1, m.start(4) + 1)


def _document_marker(s: str) -> tuple[Any, ...]:
    """A ``---`` line (optionally commented); directives, ``...`` and content after ``---`` bail."""
    tail = s[3:].lstrip(" ")
    if not s.startswith("---") or (tail and tail[0] != "#"):
        raise Bail
    return _MARKER


def _simple_kind(dashes: tuple[int, ...], key: str | None, vkind: int) -> int:
    """The fast-path kind of a token (see :func:`_line_token`)."""
    if vkind == 1 and key is not None and len(dashes) < 2:
        return 2 if dashes else 1
    if vkind != 0 and key is None and len(dashes) == 1:
        return 3
    return 0


def _line_token(raw: str) -> tuple[Any, ...]:
    """Token for one physical line (cached per distinct line): skip, document marker, or
    ``(base, dashes, key, key_off, vkind, value, voff, content, simple, value col)`` (see
    :func:`_tokenize`); ``simple`` is 1 for a ``key: scalar`` line, 2 for ``- key: scalar``, 3 for
    ``- value`` (a scalar or flow collection), else 0."""
    m = _SIMPLE_LINE_RE.match(raw)
    if m is not None and len(m.group(4)) <= MAX_INT_DIGITS:
        return _simple_token(raw, m)
    s = raw.lstrip(" ")
    if not s or s[0] == "#":
        return _SKIP
    base = len(raw) - len(s)
    if base == 0 and (s[0] == "%" or s[:3] in ("---", "...") and (len(s) == 3 or s[3] == " ")):
        return _document_marker(s)
    dashes, key, key_off, vkind, value, voff = _tokenize(s)
    return (base, dashes, key, key_off, vkind, value, voff, s, _simple_kind(dashes, key, vkind),
            base + voff + 1)


class _Parser:
    """The block structure of one document: the open collections and a slot waiting for a block value.

    :func:`_parse` handles the common lines itself; the rest goes through :meth:`next_item` and
    :meth:`line`, one call per line.
    """

    __slots__ = ("ctx", "lines", "pending", "root", "root_line", "root_pos", "stack", "started", "top")

    def __init__(self) -> None:
        self.ctx = Ctx()
        self.lines = _FlowLines(self.ctx.split_values)
        self.root: dict[str, Any] = {}
        self.root_pos: PosMap = {}
        self.stack: list[_Frame] = []
        self.top = _Frame(-1, None, None, True, "")  # sentinel until the first key
        #: (frame, key or None for a sequence item, indent, key line, key column)
        self.pending: tuple[Any, ...] | None = None
        self.started = False
        self.root_line = 0

    def next_item(self, base: int, key: str, key_off: int, value: Any, vcol1: int, lineno: int) -> bool:
        """``- key: scalar`` as the first line of the next mapping in a sequence of mappings.

        False when the line is not that (it then goes through :meth:`line`); the collections deeper
        than ``base`` are closed either way.
        """
        if self.pending is not None or not self.started:
            return False
        stack = self.stack
        top = self.top
        while top.col > base:
            stack.pop()
            top = stack[-1]
        self.top = top
        if top.col != base or not top.is_seq:
            return False
        kcol1 = base + key_off + 1
        new_map = {key: value}
        new_pos = {key: (lineno, kcol1, lineno, vcol1, None)}
        path = join_index(top.path, len(top.data))
        top.data.append(new_map)
        top.pos.append((lineno, kcol1, new_pos))
        self.top = _Frame(kcol1 - 1, new_map, new_pos, False, path)
        stack.append(self.top)
        return True

    def line(self, tok: tuple[Any, ...], lineno: int) -> None:
        """Any other line: every ``- `` indicator, then the key or scalar, is a token at its own column."""
        base, dashes, key, key_off, vkind, value, voff, text, _, _ = tok
        if not self.started:
            self._start(tok, lineno)
        ntok = len(dashes) + (key is not None)
        for t in range(ntok):
            is_dash = t < len(dashes)
            col = base + (dashes[t] if is_dash else key_off)
            if self.pending is not None:
                self._fill_pending(col, is_dash, lineno)
            top = self._close(col, is_dash)
            if not is_dash:
                self._entry(top, tok, col, lineno)
            elif t + 1 < ntok or vkind == 0:
                self.pending = (top, None, col, lineno, col + 1)  # a nested block starts here or below
            else:
                v, child = _value(text, vkind, value, voff, lineno, base + voff, self.ctx, top, len(top.data))
                top.data.append(v)
                top.pos.append((lineno, base + voff + 1, child))

    def advance(self, tok: tuple[Any, ...], lineno: int) -> tuple[int, bool, Any, Any]:
        """A line :func:`_parse` did not take itself; returns the collection the next line continues
        (column, is a sequence, positions, data), column -2 when a block value is pending."""
        base, _, key, key_off, _, value, _, _, simple, vcol1 = tok
        if not (simple == 2 and self.next_item(base, key, key_off, value, vcol1, lineno)):
            self.line(tok, lineno)
        return self.current()

    def current(self) -> tuple[int, bool, Any, Any]:
        """The collection the next line continues: column (-2 while a block value is pending, so the
        next line takes the general path), is a sequence, positions, data."""
        top = self.top
        return -2 if self.pending is not None else top.col, top.is_seq, top.pos, top.data

    def flow_line(self, lines: list[str], idx: int) -> int:
        """A line ``lines[idx]`` ending in ``}`` that :func:`_parse` did not take itself, if
        :func:`split_pairs` reads it: ``- {k: v, ...}`` opening the pending block sequence (the first NIC
        after ``nics:``, with the run of items after it) or ``key: {k: v, ...}`` next in the current
        mapping (``mgmt: {host: ...}``). Returns how many lines were taken; 0 leaves the line to the
        general path, nothing has changed then."""
        if self.pending is not None:
            return self._first_flow_items(lines, idx)
        top = self.top
        if top.is_seq:
            return 0
        lineno = idx + 1
        got = self.lines.read(lines[idx], lineno, _FLOW_ENTRY_RE)
        if got is None or got[0] != top.col or got[1] is None or got[1] in top.pos:
            return 0
        _, key, mapping, pos, start = got
        top.data[key] = mapping
        top.pos[key] = (lineno, top.col + 1, lineno, start, pos)
        return 1

    def _first_flow_items(self, lines: list[str], idx: int) -> int:
        """``- {k: v, ...}`` as the first item of the block sequence the pending slot waits for: with the
        items after it when :meth:`_FlowLines.run` takes them as a run, else the one line."""
        assert self.pending is not None
        _, pkey, pind, _, _ = self.pending
        raw, lineno = lines[idx], idx + 1
        col = len(raw) - len(raw.lstrip(" "))
        if col > pind or (pkey is not None and col == pind):
            data: list[Any] = []
            pos: PosSeq = []
            taken = self.lines.run(lines, idx, col, data, pos)
            if taken:
                self._fill_pending(col, True, lineno)
                self.top.data.extend(data)
                self.top.pos.extend(pos)
                return taken
        got = self.lines.read(raw, lineno, _FLOW_ITEM_RE)
        if got is None or not (got[0] > pind or (pkey is not None and got[0] == pind)):
            return 0
        col = got[0]
        self._fill_pending(col, True, lineno)
        self.top.data.append(got[2])
        self.top.pos.append((lineno, col + 3, got[3]))
        return 1

    def skip(self, tok: tuple[Any, ...]) -> None:
        """A line without content; a ``---`` is fine before the document only."""
        if tok is _MARKER and self.started:
            raise Bail  # a second document

    def finish(self) -> ParseResult:
        """The document, once every line went through."""
        if not self.started:
            raise Bail
        if self.pending is not None:
            self._set_null(self.pending)
        return ParseResult(self.root, self.root_line, 1, self.root_pos, self.ctx.issues, self.ctx.bad_paths)

    def _start(self, tok: tuple[Any, ...], lineno: int) -> None:
        base, dashes, key = tok[:3]
        if dashes or key is None or base != 0:
            raise Bail
        self.started, self.root_line = True, lineno
        self.top = _Frame(0, self.root, self.root_pos, False, "")
        self.stack.append(self.top)

    @staticmethod
    def _set_null(pending: tuple[Any, ...]) -> None:
        pframe, pkey, _, pkl, pkc = pending
        if pkey is None:
            raise Bail  # an empty sequence item: leave its odd position to ruamel
        pframe.data[pkey] = None
        pframe.pos[pkey] = (pkl, pkc, pkl, pkc, None)

    def _fill_pending(self, col: int, is_dash: bool, lineno: int) -> None:
        """The waiting slot gets the block collection starting at ``col``, or null if it is not indented."""
        pending = self.pending
        assert pending is not None
        self.pending = None
        pframe, pkey, pind, pkl, pkc = pending
        if not (col > pind or (is_dash and pkey is not None and col == pind)):
            self._set_null(pending)
            return
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
        self.top = _Frame(col, new, newpos, is_dash, path)
        self.stack.append(self.top)

    def _close(self, col: int, is_dash: bool) -> _Frame:
        """Close the collections a token at ``col`` ends; the one it belongs to, which must match it."""
        stack = self.stack
        top = self.top
        while top.col > col or (top.col == col and top.is_seq and not is_dash and len(stack) > 1
                                and stack[-2].col == col):
            stack.pop()
            if not stack:
                raise Bail
            top = stack[-1]
        if top.col != col or top.is_seq != is_dash:
            raise Bail
        self.top = top
        return top

    def _entry(self, top: _Frame, tok: tuple[Any, ...], col: int, lineno: int) -> None:
        """A ``key:`` token of mapping ``top``: its value, a pending block, or a duplicate (RT002)."""
        base, _, key, _, vkind, _, voff, _, _, _ = tok
        mpos = top.pos
        if key in mpos:
            _dup(self.ctx, mpos, key, lineno, col + 1, join_key(top.path, key))
            top = _Frame(col, {}, {}, False, top.path)  # parsed for its own issues, then dropped
        elif vkind != 0:
            v, child = self._value(tok, lineno, top, key)
            top.data[key] = v
            mpos[key] = (lineno, col + 1, lineno, base + voff + 1, child)
            return
        if vkind == 0:
            self.pending = (top, key, col, lineno, col + 1)
        else:
            self._value(tok, lineno, top, key)

    def _value(self, tok: tuple[Any, ...], lineno: int, frame: _Frame, slot: str | int) -> tuple[Any, Any]:
        base, _, _, _, vkind, value, voff, s, _, _ = tok
        return _value(s, vkind, value, voff, lineno, base + voff, self.ctx, frame, slot)




def _parse(text: str) -> ParseResult:
    """The document, line by line. The common lines are taken here without a token: ``- {k: v, ...}``
    next in the current sequence (:class:`_FlowLines`: a run of them by template, else one by
    :func:`split_pairs`) and
    ``key: scalar`` next in the current mapping;
    ``key: {...}`` entries and the first ``- {...}`` of a block go through :meth:`_Parser.flow_line`,
    everything else through a cached token and :meth:`_Parser.advance`.

    Raises:
        Bail: the text is outside the subset (:func:`fast_parse` then returns None).
    """
    p = _Parser()
    # the current collection, unpacked for the fast path
    top_col, top_is_seq = -1, True
    top_pos: Any = None
    top_data: Any = None
    cache: dict[str, tuple[Any, ...]] = {}
    cache_get = cache.get
    flow_items = p.lines.items_at
    lines = text.split("\n")
    numbered = enumerate(lines, 1)
    for lineno, raw in numbered:
        if raw[-1:] == "}":
            if top_is_seq and (taken := flow_items(lines, lineno - 1, top_col, top_data, top_pos)):
                # "- {k: v, ...}" items of the current sequence (NICs, links): no token needed
                next(islice(numbered, taken - 1, taken - 1), None)  # the run's other lines
                continue
            if taken := p.flow_line(lines, lineno - 1):
                next(islice(numbered, taken - 1, taken - 1), None)
                top_col, top_is_seq, top_pos, top_data = p.current()
                continue
        tok = cache_get(raw)
        if tok is None:
            tok = cache[raw] = _line_token(raw)
        if len(tok) == 1:
            p.skip(tok)
            continue
        base, _, key, _, _, value, _, _, simple, vcol1 = tok
        if simple == 1 and base == top_col and not top_is_seq and key not in top_pos:
            top_data[key] = value  # the common line, "key: scalar", continuing the current mapping
            top_pos[key] = (lineno, base + 1, lineno, vcol1, None)
            continue
        top_col, top_is_seq, top_pos, top_data = p.advance(tok, lineno)
    return p.finish()


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
