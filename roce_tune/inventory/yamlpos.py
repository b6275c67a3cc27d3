"""YAML -> plain Python data plus the line:column of every key and value (the loader's reference path).

ruamel.yaml *composes* the document (scanner, parser and composer; no object construction), and this
module builds plain ``dict`` / ``list`` / scalar data from the node graph itself. Doing the
construction here rather than with ruamel's round-trip constructor gives the loader three things:

* every duplicate key is reported (ruamel's constructor stops at the first ``DuplicateKeyError``);
* no YAML tag can construct an object: only the core-schema tags (``!!str``, ``!!int`` …) are
  accepted, everything else (``!!python/object``, ``!foo``) is an RT006 finding;
* scalars resolve by one function, :func:`resolve_plain` (YAML 1.2 core schema), shared with the
  fast block-subset parser in :mod:`roce_tune.inventory.fastyaml`, so both paths give identical data.

Positions are kept in a small tree parallel to the data (:data:`PosMap` / :data:`PosSeq`) and are
1-based. A value that is empty (``key:`` with nothing after it) is placed at its key, because ruamel
marks an empty scalar at the *next* token, which is a confusing place to point at.

The ruamel.yaml code lives in :mod:`roce_tune.inventory.ruamelpos`; :func:`compose_ruamel` imports it on
first use, so a document the fast reader takes never imports ruamel.yaml.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

#: Deepest nesting accepted (an inventory needs about 6 levels); deeper input is an RT001 finding.
MAX_DEPTH = 64
#: Nodes that aliases may expand to before the input is rejected ("billion laughs" guard).
MAX_ALIAS_NODES = 100_000
#: Longest integer literal accepted; Python refuses to convert more than 4300 digits.
MAX_INT_DIGITS = 100

# --- position tree -----------------------------------------------------------------------------
class LazyPos:
    """A position subtree built on first use (:meth:`resolve`): an expanded intent element's subtree is
    only needed when a finding points into it, so ~50k of them need not be built up front."""

    __slots__ = ("_build", "_node")

    def __init__(self, build: Callable[[], PosMap | PosSeq | None]):
        self._build: Callable[[], PosMap | PosSeq | None] | None = build
        self._node: PosMap | PosSeq | None = None

    def resolve(self) -> PosMap | PosSeq | None:
        """The subtree (built once, then kept)."""
        if self._build is not None:
            self._node, self._build = self._build(), None
        return self._node


class SplitPos(tuple[str, int, int]):
    """The positions of a one-line flow mapping ``{inner}`` whose pairs are ``key: value`` joined by
    ``", "`` (what :func:`roce_tune.inventory.fastflow.flow_map_split` reads), kept as ``(inner, line, base)``
    (``base``: the 0-based column of its ``{``) and worked out on each :meth:`resolve`: a 4,096-host
    inventory has 75k such mappings and a finding points into few of them. A tuple subclass, so one
    costs a third of a :class:`LazyPos`."""

    __slots__ = ()

    def resolve(self) -> PosMap:
        """key -> (line, key col, line, value col, None), 1-based columns."""
        inner, line, base = self
        pos: PosMap = {}
        i = base + 2
        for part in inner.split(", "):
            key = part.partition(": ")[0]
            pos[key] = (line, i, line, i + len(key) + 2, None)
            i += len(part) + 2
        return pos


class LineSplitPos(SplitPos):
    """A :class:`SplitPos` kept as ``(line text, line, base)``: the whole line, whose ``{`` is at index
    ``base`` and ``}`` last, so a reader of many such lines keeps the text it has rather than cutting out
    each mapping's inner text (cut on :meth:`resolve` instead)."""

    __slots__ = ()

    def resolve(self) -> PosMap:
        """key -> (line, key col, line, value col, None), 1-based columns (see :class:`SplitPos`)."""
        text, line, base = self
        return SplitPos((text[base + 1:-1], line, base)).resolve()


def resolve_pos(node: PosChild) -> PosMap | PosSeq | None:
    """``node`` itself, or the subtree of a :class:`LazyPos` / :class:`SplitPos`."""
    return node.resolve() if isinstance(node, (LazyPos, SplitPos)) else node


#: A mapping's positions: key -> (key line, key col, value line, value col, child positions).
PosMap = dict[str, tuple[int, int, int, int, "PosChild"]]
#: A sequence's positions: one (line, col, child positions) per item.
PosSeq = list[tuple[int, int, "PosChild"]]
PosChild = PosMap | PosSeq | LazyPos | SplitPos | None


@dataclass
class YamlIssue:
    """A problem found while reading YAML, before schema validation (becomes a Finding).

    ``path`` is the dotted field path where known; ``line``/``col`` are 1-based.
    """

    rule: str
    message: str
    fix: str
    line: int
    col: int
    path: str | None = None


class YamlSyntaxError(Exception):
    """The text is not YAML (RT001) or not an inventory-shaped document (RT004); carries one issue."""

    def __init__(self, issue: YamlIssue):
        super().__init__(issue.message)
        self.issue = issue


@dataclass
class ParseResult:
    """Plain data (dicts, lists, str/int/float/bool/None), its position tree and non-fatal issues.

    ``bad_paths`` are paths whose scalar could not be read (e.g. a 5000-digit number); the loader
    drops schema errors at those paths because an issue already explains them.
    """

    data: Any
    root_line: int
    root_col: int
    pos: PosChild
    issues: list[YamlIssue] = field(default_factory=list)
    bad_paths: set[str] = field(default_factory=set)


# --- scalar resolution (YAML 1.2 core schema) ---------------------------------------------------
_NULL = frozenset(("", "~", "null", "Null", "NULL"))
_BOOL = {"true": True, "True": True, "TRUE": True, "false": False, "False": False, "FALSE": False}
_INT_RE = re.compile(r"[-+]?[0-9]+\Z")
_OCT_RE = re.compile(r"0o[0-7]+\Z")
_HEX_RE = re.compile(r"0x[0-9a-fA-F]+\Z")
_FLOAT_RE = re.compile(r"[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?\Z")
_INF = {".inf": float("inf"), ".Inf": float("inf"), ".INF": float("inf")}
_NAN = frozenset((".nan", ".NaN", ".NAN"))
_NUMERIC_START = frozenset("0123456789+-.")


class ScalarError(ValueError):
    """A scalar that looks like a number but cannot be represented (too many digits)."""


def resolve_plain(text: str) -> Any:
    """Resolve an unquoted scalar by the YAML 1.2 core schema.

    ``null``/``~``/empty -> None; ``true``/``false`` (3 spellings each) -> bool; decimal, ``0o`` and
    ``0x`` integers -> int; decimals, exponents, ``.inf``, ``.nan`` -> float; anything else stays a
    string (so ``yes``, ``on``, ``400G``, ``1:30`` and ``2.21.5`` are strings).

    Raises:
        ScalarError: an integer literal longer than :data:`MAX_INT_DIGITS` digits.

    Examples::

        >>> [resolve_plain(t) for t in ("400G", "9216", "0x10", "1.5", "~", "True", "yes")]
        ['400G', 9216, 16, 1.5, None, True, 'yes']
    """
    if text in _NULL:
        return None
    c = text[0]
    if c not in _NUMERIC_START:
        return _BOOL.get(text, text)
    if _INT_RE.match(text):
        if len(text) > MAX_INT_DIGITS:
            raise ScalarError(f"the number {text[:20]}… has {len(text)} digits; numbers here are far smaller")
        return int(text)
    if _FLOAT_RE.match(text):
        return float(text)
    if _OCT_RE.match(text) or _HEX_RE.match(text):
        if len(text) > MAX_INT_DIGITS:
            raise ScalarError(f"the number {text[:20]}… is too long")
        return int(text[2:], 8 if text[1] == "o" else 16)
    sign = -1.0 if c == "-" else 1.0
    tail = text[1:] if c in "+-" else text
    if tail in _INF:
        return sign * _INF[tail]
    if text in _NAN:
        return float("nan")
    return text


# --- path helpers ----------------------------------------------------------------------------------
def join_key(parent: str, key: str) -> str:
    """``join_key("switches[0]", "ports")`` -> ``"switches[0].ports"``; the root path is ``""``."""
    return f"{parent}.{key}" if parent else key


def join_index(parent: str, index: int) -> str:
    """``join_index("switches", 0)`` -> ``"switches[0]"``."""
    return f"{parent}[{index}]"


# --- ruamel path (in roce_tune.inventory.ruamelpos, imported on first use) ------------------------
def compose_ruamel(text: str) -> ParseResult:
    """Parse ``text`` with ruamel.yaml and build data + positions (:func:`roce_tune.inventory.ruamelpos.
    compose_ruamel`; ruamel.yaml is imported here, on first use, as the fast reader needs it only for the
    documents it declines).

    Raises:
        YamlSyntaxError: malformed YAML (RT001, with ruamel's position) or an empty document /
            a top level that is not a mapping (RT004).
    """
    from roce_tune.inventory.ruamelpos import compose_ruamel as compose

    return compose(text)
