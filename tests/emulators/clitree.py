"""Indented CLI configuration tree shared by the EOS and NX-OS emulators.

A running configuration is a tree of :class:`Node` (text + ordered children), the way
``show running-config`` indents it.  Which commands open a sub-mode, which are only
valid at the top, which replace an earlier value and which ``no`` forms are stored is
platform *data* (a :class:`Dialect`), not code — see ``eos.py`` / ``nxos.py``.

Context rules when a line is entered in configuration mode (same outcome a real
parser gives for well-formed input):

1. An indented line (``indent > 0``) first pops the context to ``indent // unit``.
2. A sub-mode command is placed under the deepest open context listed in its rule's
   ``parents`` (popping as needed); none → ``% Invalid input``.
3. A leaf that matches ``root_only`` pops to the top; otherwise a leaf that does not
   match the current mode's ``leaf_patterns`` (when the mode defines them) pops one
   level and is retried, like a real CLI falling back to the parent mode.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from re import Pattern


class Node:
    """One configuration line and its indented children."""

    __slots__ = ("children", "text")

    def __init__(self, text: str = "", children: list[Node] | None = None) -> None:
        self.text = text
        self.children: list[Node] = children if children is not None else []

    def find(self, text: str) -> Node | None:
        for child in self.children:
            if child.text == text:
                return child
        return None

    def copy(self) -> Node:
        return Node(self.text, [c.copy() for c in self.children])

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Node) and self.text == other.text and self.children == other.children

    def __repr__(self) -> str:
        return f"Node({self.text!r}, {len(self.children)} children)"


@dataclass(frozen=True)
class ModeRule:
    """A command that opens a configuration sub-mode.

    Attributes:
        pattern: matched (``re.match``) against the normalised command.
        mode: mode id of the sub-mode (used in ``parents`` of other rules).
        parents: mode ids under which the command is valid (``"root"`` = top level).
        prompt: prompt suffix; ``{0}``, ``{1}`` … are the pattern's groups.
        leaf_patterns: leaves valid in this mode; ``None`` accepts any leaf.
    """

    pattern: Pattern[str]
    mode: str
    parents: frozenset[str]
    prompt: str | Callable[[re.Match[str]], str]
    leaf_patterns: tuple[Pattern[str], ...] | None = None


@dataclass(frozen=True)
class Dialect:
    """Platform quirks of an indented CLI (EOS: unit 3, NX-OS: unit 2)."""

    indent_unit: int
    modes: tuple[ModeRule, ...]
    root_only: tuple[Pattern[str], ...] = ()
    single_value: tuple[Pattern[str], ...] = ()
    stored_negations: tuple[Pattern[str], ...] = ()
    comment: str = "!"
    ignored: tuple[str, ...] = ("end",)
    invalid_format: str = "% Invalid input"
    nested_prompt: bool = False
    extra: dict[str, str] = field(default_factory=dict)


def rx(*patterns: str) -> tuple[Pattern[str], ...]:
    return tuple(re.compile(p) for p in patterns)


def normalise(line: str) -> str:
    return " ".join(line.split())


@dataclass
class Context:
    """Open sub-modes from the top: list of (node, mode id, prompt suffix)."""

    stack: list[tuple[Node, str, str]] = field(default_factory=list)

    def mode(self, depth: int | None = None) -> str:
        depth = len(self.stack) if depth is None else depth
        return "root" if depth == 0 else self.stack[depth - 1][1]

    def node(self, root: Node) -> Node:
        return self.stack[-1][0] if self.stack else root

    def prompt_suffix(self) -> str:
        return self.stack[-1][2] if self.stack else ""


class ConfigError(Exception):
    """A configuration line the emulated parser rejects."""


def _mode_rule(dialect: Dialect, body: str) -> tuple[ModeRule, re.Match[str]] | None:
    for rule in dialect.modes:
        m = rule.pattern.match(body)
        if m:
            return rule, m
    return None


def _remove(parent: Node, body: str) -> int:
    before = len(parent.children)
    exact = [c for c in parent.children if c.text == body]
    if exact:
        parent.children = [c for c in parent.children if c.text != body]
    else:
        parent.children = [c for c in parent.children if not c.text.startswith(body + " ")]
    return before - len(parent.children)


def _add_leaf(parent: Node, line: str, dialect: Dialect) -> Node:
    existing = parent.find(line)
    if existing is not None:
        return existing
    parent.children = [
        c for c in parent.children
        if not (c.text.startswith("no ") and (line == c.text[3:] or line.startswith(c.text[3:] + " ")))
    ]
    for pat in dialect.single_value:
        m = pat.match(line)
        if m:
            key = m.group(1)
            parent.children = [
                c for c in parent.children
                if not ((cm := pat.match(c.text)) and cm.group(1) == key and c.text != line)
            ]
            break
    node = Node(line)
    parent.children.append(node)
    return node


def apply_line(root: Node, ctx: Context, raw: str, dialect: Dialect) -> None:
    """Apply one configuration-mode line to ``root`` at ``ctx`` (both mutated).

    Raises:
        ConfigError: the line is not valid here (message is the device's error text).
    """
    indent = len(raw) - len(raw.lstrip(" \t"))
    line = normalise(raw)
    if not line or line.startswith(dialect.comment) or line in dialect.ignored:
        return
    if indent > 0:
        depth = indent // dialect.indent_unit
        if depth < len(ctx.stack):
            del ctx.stack[depth:]
    negate = False
    body = line
    for prefix in ("no ", "default "):
        if line.startswith(prefix):
            negate, body = True, line[len(prefix):]
            break
    found = _mode_rule(dialect, body)
    if found is not None:
        rule, match = found
        for depth in range(len(ctx.stack), -1, -1):
            if ctx.mode(depth) in rule.parents:
                del ctx.stack[depth:]
                break
        else:
            raise ConfigError(dialect.invalid_format)
        parent = ctx.node(root)
        if negate:
            _remove(parent, body)
            return
        node = parent.find(body)
        if node is None:
            node = Node(body)
            parent.children.append(node)
        suffix = rule.prompt(match) if callable(rule.prompt) else rule.prompt.format(*match.groups())
        if dialect.nested_prompt and ctx.stack:
            suffix = ctx.stack[-1][2] + "-" + suffix
        ctx.stack.append((node, rule.mode, suffix))
        return
    if any(p.match(body) for p in dialect.root_only):
        ctx.stack.clear()
    else:
        while ctx.stack:
            mode = ctx.mode()
            leaf_rule = next((r for r in dialect.modes if r.mode == mode), None)
            if leaf_rule is None or leaf_rule.leaf_patterns is None or any(p.match(line)
                                                                           for p in leaf_rule.leaf_patterns):
                break
            ctx.stack.pop()
    parent = ctx.node(root)
    if negate:
        if any(p.match(line) for p in dialect.stored_negations):
            _remove(parent, body)
            _add_leaf(parent, line, dialect)
        else:
            _remove(parent, body)
        return
    _add_leaf(parent, line, dialect)


def parse_config(text: str, dialect: Dialect) -> Node:
    """Build a tree from ``show running-config``-style indented text (headers ignored)."""
    root = Node()
    ctx = Context()
    for raw in text.splitlines():
        stripped = raw.strip()
        if not stripped or stripped.startswith(dialect.comment) or stripped in dialect.ignored:
            continue
        if stripped.startswith("version "):
            continue
        apply_line(root, ctx, raw, dialect)
    return root


def render(root: Node, unit: int, separator: str | None,
           is_section: Callable[[Node], bool] | None = None) -> list[str]:
    """Render a tree to indented lines.

    Args:
        root: tree to render (its own text is not printed).
        unit: spaces per level.
        separator: ``"!"`` (EOS: ``!`` around sub-sections at every level), ``""``
            (NX-OS: blank line before each top-level section) or ``None``.
    """
    out: list[str] = []

    def walk(node: Node, level: int) -> None:
        pad = " " * (unit * level)
        prev_section = False
        for i, child in enumerate(node.children):
            section = bool(child.children) or (is_section is not None and is_section(child))
            if separator == "!" and (section or prev_section) and (i > 0 or level == 0):
                out.append(pad + "!")
            elif separator == "" and level == 0 and (section or prev_section):
                out.append("")
            out.append(pad + child.text)
            walk(child, level + 1)
            prev_section = section

    walk(root, 0)
    return out


def rollback_patch(source: Node, target: Node, unit: int) -> list[str]:
    """Commands that turn ``source`` into ``target`` (NX-OS rollback-patch style)."""
    out: list[str] = []

    def walk(src: Node, dst: Node, path: list[str]) -> None:
        header_done = [False]

        def header() -> None:
            if not header_done[0]:
                for lvl, text in enumerate(path):
                    out.append(" " * (unit * lvl) + text)
                header_done[0] = True

        pad = " " * (unit * len(path))
        dst_texts = {c.text for c in dst.children}
        for child in src.children:
            if child.text not in dst_texts:
                header()
                out.append(pad + "no " + child.text)
        src_map = {c.text: c for c in src.children}
        for child in dst.children:
            old = src_map.get(child.text)
            if old is None:
                header()
                out.append(pad + child.text)
                out.extend(" " * (unit * (len(path) + 1)) + ln for ln in render(child, unit, None))
            elif old != child:
                walk(old, child, path + [child.text])

    walk(source, target, [])
    return out
