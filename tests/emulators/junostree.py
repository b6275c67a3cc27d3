"""Junos configuration as ``set`` lines, and its hierarchical / ``show | compare`` views.

The emulator stores a configuration as ordered, de-duplicated set-lines (without the
``set`` keyword).  Without the Junos schema, the hierarchical view uses one rule: the
first two levels (unless followed by a single value) and any level with two or more
children (or a statement of its own) are containers (``name {``); a chain of single
children is one statement (``a b c;``).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from re import Pattern

_TOKEN = re.compile(r'"[^"]*"|\S+')


#: Keywords of named list entries, shown as one statement head ("class ROCE {").
LIST_KEYWORDS = frozenset({"class", "forwarding-class", "unit", "user", "dscp", "ieee-802.1", "exp",
                           "inet-precedence", "queue", "code-point"})


def tokens(text: str) -> list[str]:
    return _TOKEN.findall(text)


def path_tokens(text: str) -> list[str]:
    """Tokens with list keywords merged with their entry name (``class ROCE``)."""
    out: list[str] = []
    toks = tokens(text)
    i = 0
    while i < len(toks):
        if toks[i] in LIST_KEYWORDS and i + 2 < len(toks):
            out.append(toks[i] + " " + toks[i + 1])
            i += 2
        else:
            out.append(toks[i])
            i += 1
    return out


class Trie:
    __slots__ = ("end", "kids")

    def __init__(self) -> None:
        self.kids: dict[str, Trie] = {}
        self.end = False


def build(lines: Iterable[str]) -> Trie:
    root = Trie()
    for line in lines:
        cur = root
        for tok in path_tokens(line):
            cur = cur.kids.setdefault(tok, Trie())
        cur.end = True
    return root


def node_at(trie: Trie, toks: list[str]) -> Trie | None:
    cur = trie
    for tok in toks:
        nxt = cur.kids.get(tok)
        if nxt is None:
            return None
        cur = nxt
    return cur


def container_fn(trie: Trie) -> Callable[[tuple[str, ...]], bool]:
    def is_container(path: tuple[str, ...]) -> bool:
        node = node_at(trie, list(path))
        if node is None or not node.kids:
            return False
        if len(node.kids) >= 2 or node.end:
            return True
        only = next(iter(node.kids.values()))
        return len(path) <= 2 and bool(only.kids)
    return is_container


def render(node: Trie, path: tuple[str, ...], is_container: Callable[[tuple[str, ...]], bool],
           indent: int = 0, mark: str = "") -> list[str]:
    """Hierarchical text of ``node`` (whose own tokens are ``path``)."""
    out: list[str] = []
    for tok, child in node.kids.items():
        chain = [tok]
        cur = child
        cur_path = path + (tok,)
        while len(cur.kids) == 1 and not cur.end and not is_container(cur_path):
            nxt_tok, cur = next(iter(cur.kids.items()))
            chain.append(nxt_tok)
            cur_path = cur_path + (nxt_tok,)
        pad = " " * indent
        lead = mark + pad[len(mark):] if mark else pad
        if cur.kids:
            out.append(f"{lead}{' '.join(chain)} {{")
            out.extend(render(cur, cur_path, is_container, indent + 4, mark))
            out.append(f"{lead}}}")
        else:
            out.append(f"{lead}{' '.join(chain)};")
    return out


def leaf_start(is_container: Callable[[tuple[str, ...]], bool], toks: list[str]) -> int:
    last = -1
    for i in range(len(toks) - 1):
        if is_container(tuple(toks[: i + 1])):
            last = i
    return last + 1


def compare(old: list[str], new: list[str]) -> str:
    """``show | compare`` text: ``[edit path]`` headers with ``+``/``-`` statements."""
    old_set, new_set = set(old), set(new)
    added = [ln for ln in new if ln not in old_set]
    removed = [ln for ln in old if ln not in new_set]
    if not added and not removed:
        return ""
    union = build(list(old) + [ln for ln in new if ln not in old_set])
    old_trie, new_trie = build(old), build(new)
    own = {0: container_fn(old_trie), 1: container_fn(new_trie)}
    groups: dict[tuple[str, ...], tuple[list[str], list[str]]] = {}
    for lines, other, slot in ((removed, new_trie, 0), (added, old_trie, 1)):
        for line in lines:
            toks = path_tokens(line)
            exist = 0
            while exist < len(toks) and node_at(other, toks[: exist + 1]) is not None:
                exist += 1
            cut = min(exist, leaf_start(own[slot], toks))
            groups.setdefault(tuple(toks[:cut]), ([], []))[slot].append(line)
    out: list[str] = []
    for path in sorted(groups, key=lambda h: _order(union, h)):
        rem, add = groups[path]
        out.append("[edit" + "".join(" " + t for t in path) + "]")
        for mark, lines, slot in (("-", rem, 0), ("+", add, 1)):
            if lines:
                sub = node_at(build(lines), list(path))
                assert sub is not None
                out.extend(render(sub, path, own[slot], 4, mark))
    return "\n".join(out) + "\n"


def _order(trie: Trie, path: tuple[str, ...]) -> list[int]:
    idx: list[int] = []
    cur = trie
    for tok in path:
        keys = list(cur.kids)
        idx.append(keys.index(tok) if tok in keys else len(keys))
        cur = cur.kids.get(tok, Trie())
    return idx


def leaf_list_lines(line: str) -> list[str]:
    """``a b [ v1 v2 ]`` -> ``["a b v1", "a b v2"]``: Junos stores a leaf-list value by value and
    ``display set`` prints one line per value; any other line is returned as is."""
    toks = tokens(line)
    if len(toks) > 2 and toks[-1] == "]" and "[" in toks:
        at = len(toks) - 1 - toks[::-1].index("[")
        return [" ".join([*toks[:at], v]) for v in toks[at + 1:-1]]
    return [line]


def apply_set(lines: list[str], line: str, single_value: tuple[Pattern[str], ...]) -> None:
    """Add one set-line (without ``set``) replacing single-valued statements in place."""
    if line in lines:
        return
    for pat in single_value:
        m = pat.match(line)
        if m:
            key = m.group(1)
            for i, old in enumerate(lines):
                om = pat.match(old)
                if om and om.group(1) == key:
                    lines[i] = line
                    del_rest = [j for j in range(i + 1, len(lines))
                                if (pm := pat.match(lines[j])) and pm.group(1) == key]
                    for j in reversed(del_rest):
                        del lines[j]
                    return
    lines.append(line)


def apply_delete(lines: list[str], path: str) -> int:
    before = len(lines)
    lines[:] = [ln for ln in lines if not (ln == path or ln.startswith(path + " "))]
    return before - len(lines)
