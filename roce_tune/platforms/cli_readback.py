"""Shared pieces of the read-backs of indented CLI configurations (EOS, NX-OS): an indentation tree that
merges re-entered modes, and small parsers for id lists and units.

A running config and roce-tune's own output differ in order, comments and unrelated blocks; the tree
keeps every line under its parent whatever the order and merges blocks entered twice (``qos profile P``
in several sections) into one, so readers look values up by the block header.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field


@dataclass
class Block:
    """One configuration line and the lines indented under it (merged when the header repeats)."""

    line: str
    children: dict[str, Block] = field(default_factory=dict)

    def words(self) -> list[str]:
        """The header line split on whitespace."""
        return self.line.split()

    def child_lines(self) -> list[str]:
        """The child header lines, in file order."""
        return list(self.children)

    def starting(self, *prefix: str) -> list[Block]:
        """Children whose words start with ``prefix`` (in file order)."""
        n = len(prefix)
        return [b for b in self.children.values() if tuple(b.words()[:n]) == prefix]


def cli_tree(text: str, comment: str) -> Block:
    """The configuration as a tree of :class:`Block` under an empty root.

    Lines starting with ``comment`` (after indentation) and blank lines are skipped; indentation decides
    the parent (any width: EOS 3 spaces, NX-OS 2). A header that appears again under the same parent
    (a mode entered twice) continues the first block.
    """
    root = Block("")
    stack: list[tuple[int, Block]] = [(-1, root)]
    for raw in text.splitlines():
        stripped = raw.strip()
        if not stripped or stripped.startswith(comment):
            continue
        indent = len(raw) - len(raw.lstrip(" "))
        while stack[-1][0] >= indent:
            stack.pop()
        parent = stack[-1][1]
        key = " ".join(stripped.split())
        block = parent.children.setdefault(key, Block(key))
        stack.append((indent, block))
    return root


def id_list(text: str) -> list[int]:
    """``"0 1 2"``, ``"0,3"``, ``"0-25,27"`` -> ids (ranges expanded).

    >>> id_list("0-2,5 7")
    [0, 1, 2, 5, 7]
    """
    out: list[int] = []
    for part in text.replace(",", " ").split():
        lo, _, hi = part.partition("-")
        out.extend(range(int(lo), int(hi or lo) + 1))
    return out


#: Standard DSCP names (RFC 2474 class selectors, RFC 2597 AF, RFC 3246 EF) as CLIs accept them.
STANDARD_DSCP_NAMES: dict[str, int] = {
    "default": 0,
    "ef": 46,
    **{f"cs{i}": 8 * i for i in range(8)},
    **{f"af{c}{d}": 8 * c + 2 * d for c in range(1, 5) for d in range(1, 4)},
}


def dscp_list(text: str) -> list[int]:
    """``"24-26,30"`` / ``"af31 ef"`` -> DSCP values (names per :data:`STANDARD_DSCP_NAMES`; unknown words
    are skipped).

    >>> dscp_list("0-2,af31 ef")
    [0, 1, 2, 26, 46]
    """
    out: list[int] = []
    for part in text.replace(",", " ").split():
        if part.lower() in STANDARD_DSCP_NAMES:
            out.append(STANDARD_DSCP_NAMES[part.lower()])
        elif re.fullmatch(r"\d+(-\d+)?", part):
            out.extend(id_list(part))
    return out


#: Threshold units -> bytes. ``kbytes``/``mbytes`` are binary multiples as NX-OS documents them (x1024,
#: see nxos.ECN_UNIT_BYTES); ``segments``/``milliseconds`` depend on the ASIC and are not converted (None).
UNIT_BYTES: dict[str, int] = {"bytes": 1, "kbytes": 1024, "mbytes": 1024 * 1024}


def to_bytes(value: str, unit: str) -> int | None:
    """``value`` in ``unit`` as bytes, None for a unit without a fixed byte size."""
    mult = UNIT_BYTES.get(unit)
    return int(value) * mult if mult is not None else None


def after(words: list[str], key: str) -> str | None:
    """The word following ``key`` in ``words`` (None if ``key`` is absent or last)."""
    try:
        return words[words.index(key) + 1]
    except (ValueError, IndexError):
        return None
