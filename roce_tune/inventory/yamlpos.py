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
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.error import MarkedYAMLError, YAMLError
from ruamel.yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode
from ruamel.yaml.reader import ReaderError

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
    ``", "`` (what :func:`roce_tune.inventory.fastflow.split_pairs` reads), kept as ``(inner, line, base)``
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


# --- ruamel path -----------------------------------------------------------------------------------
_CORE_TAGS = {
    "tag:yaml.org,2002:str", "tag:yaml.org,2002:int", "tag:yaml.org,2002:float",
    "tag:yaml.org,2002:bool", "tag:yaml.org,2002:null", "tag:yaml.org,2002:map",
    "tag:yaml.org,2002:seq",
}
_MERGE_TAG = "tag:yaml.org,2002:merge"


def _tag_text(tag: str) -> str:
    return "!!" + tag[len("tag:yaml.org,2002:"):] if tag.startswith("tag:yaml.org,2002:") else tag


def _offset_to_line_col(text: str, offset: int) -> tuple[int, int]:
    line = text.count("\n", 0, offset) + 1
    return line, offset - (text.rfind("\n", 0, offset) + 1) + 1


def _marked_issue(exc: MarkedYAMLError) -> YamlIssue:
    """RT001 at a ruamel error's mark: its problem, and where the construct it is in started."""
    fix = "fix the YAML syntax at this position (check indentation, quotes, brackets and ': ')"
    mark = exc.problem_mark or exc.context_mark
    line, col = (mark.line + 1, mark.column + 1) if mark is not None else (1, 1)
    msg = str(exc.problem or exc.context or "malformed YAML")
    if exc.context and exc.problem:
        where = ""
        if exc.context_mark is not None and exc.context_mark is not exc.problem_mark:
            where = f" started at line {exc.context_mark.line + 1} column {exc.context_mark.column + 1}"
        msg = f"{msg} ({exc.context}{where})"
    if "\\t" in msg or "'\\t'" in msg or "\t" in msg:
        fix = "indent with spaces; YAML does not allow tabs in indentation"
    return YamlIssue("RT001", f"malformed YAML: {msg}", fix, line, col)


def syntax_issue(exc: BaseException, text: str) -> YamlIssue:
    """Turn any exception raised while composing YAML into an RT001 issue with a position."""
    fix = "fix the YAML syntax at this position (check indentation, quotes, brackets and ': ')"
    if isinstance(exc, MarkedYAMLError):
        return _marked_issue(exc)
    if isinstance(exc, ReaderError):
        line, col = _offset_to_line_col(text, exc.position if isinstance(exc.position, int) else 0)
        return YamlIssue("RT001", f"malformed YAML: unacceptable character {exc.character!r}: {exc.reason}",
                         "remove control characters; save the file as plain UTF-8 text", line, col)
    if isinstance(exc, RecursionError):
        return YamlIssue("RT001", "malformed YAML: nesting is too deep", "flatten the document", 1, 1)
    return YamlIssue("RT001", f"malformed YAML: {exc}", fix, 1, 1)


class _Walker:
    """Builds data and positions from a composed ruamel node graph."""

    def __init__(self) -> None:
        self.issues: list[YamlIssue] = []
        self.bad_paths: set[str] = set()
        self.seen: set[int] = set()
        self.active: set[int] = set()
        self.alias_nodes = 0

    def _issue(self, rule: str, msg: str, fix: str, node: Node, path: str) -> None:
        self.issues.append(YamlIssue(rule, msg, fix, node.start_mark.line + 1, node.start_mark.column + 1,
                                     path or None))

    def value(self, node: Node, path: str, depth: int, at: Node | None = None) -> tuple[Any, PosChild]:
        nid = id(node)
        if nid in self.active:
            self._issue("RT001", "malformed YAML: an alias refers to the node that contains it",
                        "replace the recursive alias with the values it should hold", at or node, path)
            self.bad_paths.add(path)
            return None, None
        if nid in self.seen:  # an alias: expanded again, within a budget
            self.alias_nodes += 1
            if self.alias_nodes > MAX_ALIAS_NODES:
                raise YamlSyntaxError(YamlIssue(
                    "RT001", f"malformed YAML: aliases expand to more than {MAX_ALIAS_NODES} nodes",
                    "write the values out instead of nesting aliases", node.start_mark.line + 1,
                    node.start_mark.column + 1, path or None))
        self.seen.add(nid)
        if depth > MAX_DEPTH:
            raise YamlSyntaxError(YamlIssue("RT001", f"malformed YAML: nested deeper than {MAX_DEPTH} levels",
                                            "flatten the document", node.start_mark.line + 1,
                                            node.start_mark.column + 1, path or None))
        if isinstance(node, ScalarNode):
            return self.scalar(node, path), None
        self.active.add(nid)
        try:
            if isinstance(node, SequenceNode):
                if not self._tag_ok(node, "tag:yaml.org,2002:seq", path):
                    return None, None
                return self.sequence(node, path, depth)
            if isinstance(node, MappingNode):
                if not self._tag_ok(node, "tag:yaml.org,2002:map", path):
                    return None, None
                return self.mapping(node, path, depth)
        finally:
            self.active.discard(nid)
        return None, None  # pragma: no cover - ruamel has no other node kinds

    def _tag_ok(self, node: Node, implied: str, path: str) -> bool:
        tag = str(node.tag)
        if tag == implied or (tag in _CORE_TAGS and tag == implied):
            return True
        self._issue("RT006", f"YAML tag {_tag_text(tag)} is not allowed here",
                    "remove the tag; inventories use plain YAML (no tags that construct objects)", node, path)
        self.bad_paths.add(path)
        return False

    def scalar(self, node: ScalarNode, path: str) -> Any:
        tag, text = str(node.tag), node.value
        explicit = node.ctag.handle is not None
        if node.style is not None and not explicit:  # quoted or block scalar: always a string
            return text
        if explicit and tag not in _CORE_TAGS:
            self._issue("RT006", f"YAML tag {_tag_text(tag)} is not allowed",
                        "remove the tag; inventories use plain YAML (no tags that construct "
                        "objects)", node, path)
            self.bad_paths.add(path)
            return None
        if tag == "tag:yaml.org,2002:str" and explicit:
            return text
        try:
            value = resolve_plain(text)
        except ScalarError as exc:
            self._issue("RT003", str(exc), "write a number in the documented range", node, path)
            self.bad_paths.add(path)
            return text
        if explicit:
            want: Any = {"tag:yaml.org,2002:int": int, "tag:yaml.org,2002:float": (float, int),
                    "tag:yaml.org,2002:bool": bool, "tag:yaml.org,2002:null": type(None)}.get(tag)
            if want is None or not isinstance(value, want) or (want is int and isinstance(value, bool)):
                self._issue("RT006", f"{text!r} is not a valid {_tag_text(tag)}",
                            "remove the tag or fix the value", node, path)
                self.bad_paths.add(path)
            elif tag == "tag:yaml.org,2002:float":
                value = float(value)
        return value

    def sequence(self, node: SequenceNode, path: str, depth: int) -> tuple[list[Any], PosSeq]:
        out: list[Any] = []
        pos: PosSeq = []
        for i, item in enumerate(node.value):
            v, child = self.value(item, join_index(path, i), depth + 1)
            out.append(v)
            pos.append((item.start_mark.line + 1, item.start_mark.column + 1, child))
        return out, pos

    def mapping(self, node: MappingNode, path: str, depth: int) -> tuple[dict[str, Any], PosMap]:
        out: dict[str, Any] = {}
        pos: PosMap = {}
        merges: list[Node] = []
        for knode, vnode in node.value:
            if not isinstance(knode, ScalarNode):
                self._issue("RT003", "a mapping key must be a plain name, not a list or mapping",
                            "write the key as a plain word like 'name'", knode, path)
                continue
            if str(knode.tag) == _MERGE_TAG:
                merges.append(vnode)
                continue
            key = knode.value
            kl, kc = knode.start_mark.line + 1, knode.start_mark.column + 1
            sub = join_key(path, key)
            if key in pos:
                first = pos[key]
                self.issues.append(YamlIssue(
                    "RT002", f"duplicate key {key!r} (first defined at line {first[0]} column {first[1]})",
                    f"remove one of the two '{key}:' entries or merge their values", kl, kc, sub))
                self.value(vnode, sub, depth + 1, knode)  # for the problems inside it; the value is dropped
                continue
            v, child = self.value(vnode, sub, depth + 1, knode)
            if isinstance(vnode, ScalarNode) and vnode.value == "" and vnode.style is None:
                vl, vc = kl, kc  # empty value: point at its key
            else:
                vl, vc = vnode.start_mark.line + 1, vnode.start_mark.column + 1
            out[key] = v
            pos[key] = (kl, kc, vl, vc, child)
        for m in merges:
            self._merge(m, out, pos, path, depth)
        return out, pos

    def _merge(self, vnode: Node, out: dict[str, Any], pos: PosMap, path: str, depth: int) -> None:
        sources = vnode.value if isinstance(vnode, SequenceNode) else [vnode]
        for src in sources:
            if not isinstance(src, MappingNode):
                self._issue("RT003", "a merge key '<<' must name a mapping (or a list of mappings)",
                            "point '<<' at an anchored mapping like '<<: *defaults'", src, path)
                continue
            data, child = self.value(src, path, depth)
            if not isinstance(data, dict) or not isinstance(child, dict):
                continue
            for k, v in data.items():
                if k not in out:
                    out[k] = v
                    pos[k] = child[k]


def compose_ruamel(text: str) -> ParseResult:
    """Parse ``text`` with ruamel.yaml and build data + positions.

    Raises:
        YamlSyntaxError: malformed YAML (RT001, with ruamel's position) or an empty document /
            a top level that is not a mapping (RT004).
    """
    yaml = YAML(typ="rt")
    yaml.max_depth = MAX_DEPTH
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            node = yaml.compose(text)
    except (YAMLError, RecursionError) as exc:
        raise YamlSyntaxError(syntax_issue(exc, text)) from None
    except Exception as exc:  # noqa: BLE001 - a parser bug must still end in a finding
        raise YamlSyntaxError(syntax_issue(exc, text)) from None
    if node is None:
        raise YamlSyntaxError(YamlIssue("RT004", "the file is empty (no YAML document)",
                                        "start from inventories/lab-2node.yaml; an inventory needs at least "
                                        "'site: {name: ...}'", 1, 1))
    if not isinstance(node, MappingNode):
        kind = "a list" if isinstance(node, SequenceNode) else "a single value"
        raise YamlSyntaxError(YamlIssue("RT004",
                                        f"the top level of an inventory must be a mapping, not {kind}",
                                        "write top-level keys: site, policy, defaults, switches, links, "
                                        "hosts",
                                        node.start_mark.line + 1, node.start_mark.column + 1))
    walker = _Walker()
    try:
        data, pos = walker.value(node, "", 0)
    except RecursionError as exc:
        raise YamlSyntaxError(syntax_issue(exc, text)) from None
    return ParseResult(data, node.start_mark.line + 1, node.start_mark.column + 1, pos,
                       walker.issues, walker.bad_paths)
