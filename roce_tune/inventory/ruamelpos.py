"""The ruamel.yaml path of :mod:`roce_tune.inventory.yamlpos`: compose a document with ruamel.yaml and build
data + positions from its node graph (the oracle :mod:`roce_tune.inventory.fastyaml` equals, and the reader
of every document the fast reader declines). Its own module so that ruamel.yaml is imported only when a
document needs it (:func:`roce_tune.inventory.yamlpos.compose_ruamel` imports it on first use).
"""

from __future__ import annotations

import warnings
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.error import MarkedYAMLError, YAMLError
from ruamel.yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode
from ruamel.yaml.reader import ReaderError

from roce_tune.inventory.yamlpos import (
    MAX_ALIAS_NODES,
    MAX_DEPTH,
    ParseResult,
    PosChild,
    PosMap,
    PosSeq,
    ScalarError,
    YamlIssue,
    YamlSyntaxError,
    join_index,
    join_key,
    resolve_plain,
)

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
