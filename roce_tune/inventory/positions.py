"""Dotted field path -> line:column look-up over the loader's position tree.

Paths look like ``switches[0].ports[3].speed``; the root is ``""``. Look-ups walk the tree, so a
4,096-host inventory needs no 300k-entry dict unless someone iterates the whole mapping (which then
builds it once).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any

from roce_tune.inventory.yamlpos import PosChild, join_index, join_key, resolve_pos

_TOKEN_RE = re.compile(r"\[(\d+)\]|\.?([^.\[\]]+)")


def split_path(path: str) -> list[str | int]:
    """``"hosts[2].nics[0].netdev"`` -> ``["hosts", 2, "nics", 0, "netdev"]``."""
    out: list[str | int] = []
    for m in _TOKEN_RE.finditer(path):
        out.append(int(m.group(1)) if m.group(1) is not None else m.group(2))
    return out


def format_path(parts: list[str | int] | tuple[Any, ...]) -> str:
    """Inverse of :func:`split_path`: ``["hosts", 2, "mtu"]`` -> ``"hosts[2].mtu"``."""
    path = ""
    for p in parts:
        path = join_index(path, p) if isinstance(p, int) else join_key(path, str(p))
    return path


class PositionIndex(Mapping[str, tuple[int, int]]):
    """Read-only mapping: field path -> (line, col) of the value, 1-based.

    Besides the mapping protocol: :meth:`key` gives the position of the key itself and
    :meth:`nearest` the closest recorded ancestor of a path that has no node (a missing field).
    """

    def __init__(self, root_line: int, root_col: int, tree: PosChild):
        self._root = (root_line, root_col)
        self._tree = tree
        self._flat: dict[str, tuple[int, int]] | None = None

    def _walk(self, path: str) -> tuple[int, tuple[int, int], tuple[int, int] | None]:
        """Follow ``path`` as far as it exists: (parts matched, value pos, key pos of the last part)."""
        parts = split_path(path)
        pos, key_pos, node = self._root, None, self._tree
        for n, part in enumerate(parts):
            node = resolve_pos(node)
            if isinstance(part, int):
                if not isinstance(node, list) or not 0 <= part < len(node):
                    return n, pos, key_pos if n else None
                line, col, node = node[part]
                pos, key_pos = (line, col), None
            else:
                if not isinstance(node, dict) or part not in node:
                    return n, pos, key_pos if n else None
                kl, kc, vl, vc, node = node[part]
                pos, key_pos = (vl, vc), (kl, kc)
        return len(parts), pos, key_pos

    def __getitem__(self, path: str) -> tuple[int, int]:
        matched, pos, _ = self._walk(path)
        if matched != len(split_path(path)):
            raise KeyError(path)
        return pos

    def key(self, path: str) -> tuple[int, int] | None:
        """Position of the key of the last path element (None for list items and unknown paths)."""
        matched, _, key_pos = self._walk(path)
        return key_pos if matched == len(split_path(path)) else None

    def nearest(self, path: str) -> tuple[str, tuple[int, int]]:
        """The longest recorded prefix of ``path`` and its value position."""
        parts = split_path(path)
        matched, pos, _ = self._walk(path)
        return format_path(parts[:matched]), pos

    def _flatten(self) -> dict[str, tuple[int, int]]:
        if self._flat is None:
            flat: dict[str, tuple[int, int]] = {"": self._root}
            stack: list[tuple[str, PosChild]] = [("", self._tree)]
            while stack:
                prefix, child_node = stack.pop()
                node = resolve_pos(child_node)
                if isinstance(node, dict):
                    for k, (_, _, vl, vc, child) in node.items():
                        p = join_key(prefix, k)
                        flat[p] = (vl, vc)
                        stack.append((p, child))
                elif isinstance(node, list):
                    for i, (line, col, child) in enumerate(node):
                        p = join_index(prefix, i)
                        flat[p] = (line, col)
                        stack.append((p, child))
            self._flat = flat
        return self._flat

    def __iter__(self) -> Iterator[str]:
        return iter(self._flatten())

    def __len__(self) -> int:
        return len(self._flatten())

    def __contains__(self, path: object) -> bool:
        return isinstance(path, str) and self._walk(path)[0] == len(split_path(path))
