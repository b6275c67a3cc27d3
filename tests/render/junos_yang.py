"""Check rendered Junos ``set`` lines against Juniper's own YANG (``junos-yang/<release>`` in the references
folder, tests/references.py).

Each ``set`` statement is walked keyword by keyword down the schema tree under ``/configuration``
(pyang, PyPI), the way the Junos CLI reads it:

* containers and leaves by name; ``choice``/``case`` are transparent;
* a list by its keyword followed by its key value(s); a list or leaf marked
  ``junos:cli-feature "nokeyword"`` is written without its keyword (``set class-of-service interfaces
  et-0/0/0 ...``: the ``interface`` list has no keyword; key leaves named ``name`` are given bare);
* a leaf takes one value (none for ``type empty``), a leaf-list one value or ``[ v1 v2 ]``;
* values are checked against the leaf's YANG type (ranges, lengths, enumerations, patterns, and
  Juniper's ``junos:posix-pattern`` extension); in a union any member type may accept the value;
* a statement may not stop at a non-presence container (Junos rejects an incomplete statement);
* after all lines, every node a line created whose ``junos:must`` is a plain relative path
  (``".. output"``) needs that path configured too (Juniper: "pfc-watchdog configurations mandate
  output config").

What this cannot prove (see the README of the YANG folder): cross-references, loosely typed leaves,
platform support and other commit-time constraints.

Usage::

    schema = load_junos_yang()          # None when pyang or the directory is missing
    check_set_text(schema, text)        # raises JunosSchemaError naming the line and the keyword
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from tests.references import reference_path

REPO_ROOT = Path(__file__).resolve().parents[2]
#: the Junos OS Evolved release whose YANG the rendered set lines are checked against
JUNOS_YANG_RELEASE = "24.4R1-EVO"
_DATA = ("container", "leaf", "leaf-list", "list")
_MUST_PATH = re.compile(r'^\(\s*"((?:\.\.\s+)*[A-Za-z0-9_.-]+)"\s*\)$')


class JunosSchemaError(AssertionError):
    """A ``set`` line that Juniper's YANG does not accept (message names line, keyword and reason)."""


@dataclass
class JunosYang:
    """pyang context with the Junos modules loaded and the ``/configuration`` container."""

    ctx: Any
    configuration: Any


def junos_yang_dir() -> Path:
    """``junos-yang/<release>`` in the references folder (``--references``, ``$ROCE_TUNE_REFERENCES`` or
    ``<repo>/../shared``: tests/references.py); it may not exist."""
    return reference_path("junos-yang", JUNOS_YANG_RELEASE)


def load_junos_yang(directory: Path | None = None) -> JunosYang | None:
    """Load every ``*.yang`` of ``directory`` (default :func:`junos_yang_dir`) with pyang, once per folder;
    None if pyang or the directory is missing."""
    return _load_junos_yang(junos_yang_dir() if directory is None else directory)


@cache
def _load_junos_yang(directory: Path) -> JunosYang | None:
    if not directory.is_dir():
        return None
    try:
        from pyang import context, repository
    except ImportError:
        return None
    ctx = context.Context(repository.FileRepository(str(directory), use_env=False))
    for path in sorted(directory.glob("*.yang")):
        ctx.add_module(str(path), path.read_text(encoding="utf-8"))
    ctx.validate()
    root = ctx.get_module("junos-conf-root")
    return JunosYang(ctx, root.search_one("container", "configuration"))


def _ext(stmt: Any, name: str) -> list[str]:
    return [s.arg for s in stmt.substmts if isinstance(s.keyword, tuple) and s.keyword[1] == name]


def _nokeyword(stmt: Any) -> bool:
    return "nokeyword" in _ext(stmt, "cli-feature")


def _children(node: Any) -> list[Any]:
    out = []
    for c in getattr(node, "i_children", []):
        if c.keyword in ("choice", "case"):
            out += _children(c)
        elif c.keyword in _DATA:
            out.append(c)
    return out


def _keys(lst: Any) -> list[str]:
    key = lst.search_one("key")
    return key.arg.split() if key is not None else []


def _type_ok(type_stmt: Any, value: str) -> bool:
    """Does YANG type ``type_stmt`` (with its typedef chain and Junos posix-pattern) accept ``value``?"""
    spec = type_stmt.i_type_spec
    if type_stmt.arg == "union":
        members = type_stmt.search("type")
        if not members and getattr(type_stmt, "i_typedef", None) is not None:
            members = type_stmt.i_typedef.search_one("type").search("type")
        return any(_type_ok(m, value) for m in members)
    if type_stmt.arg == "empty":
        return False
    for pattern in _ext(type_stmt, "posix-pattern"):
        if not re.search(pattern, value):
            return False
    if spec is None:
        return True
    errors: list[Any] = []
    val = spec.str_to_val(errors, type_stmt.pos, value, type_stmt.i_module)
    if val is None or errors:
        return False
    return bool(spec.validate(errors, type_stmt.pos, val, "")) and not errors


def _describe_type(type_stmt: Any) -> str:
    if type_stmt.arg == "union":
        return " | ".join(_describe_type(m) for m in type_stmt.search("type")
                          if not (m.arg == "string" and m.search_one("pattern") is not None
                                  and m.search_one("pattern").arg == "<.*>|$.*"))
    detail = [f"{s.keyword} {s.arg}" for s in type_stmt.substmts if s.keyword in ("range", "length",
                                                                                  "pattern")]
    detail += [f"enum {s.arg}" for s in type_stmt.search("enum")]
    detail += [f"posix-pattern {p}" for p in _ext(type_stmt, "posix-pattern")]
    return type_stmt.arg + (f" ({', '.join(detail)})" if detail else "")


def _check_value(leaf: Any, value: str, where: str) -> None:
    t = leaf.search_one("type")
    if not _type_ok(t, value):
        raise JunosSchemaError(f"{where}: value {value!r} of {leaf.arg} is not a {_describe_type(t)}")


def _take_values(tokens: list[str], where: str, what: str) -> list[str]:
    if not tokens:
        raise JunosSchemaError(f"{where}: {what} needs a value")
    if tokens[0] != "[":
        return [tokens.pop(0)]
    if "]" not in tokens:
        raise JunosSchemaError(f"{where}: unclosed [ for {what}")
    end = tokens.index("]")
    values = tokens[1:end]
    del tokens[: end + 1]
    if not values:
        raise JunosSchemaError(f"{where}: empty [ ] for {what}")
    return values


def _walk(schema: JunosYang, line: str) -> list[tuple[tuple[str, ...], Any]]:
    """Walk one ``set`` line; return the (instance path, schema node) of every node it touches."""
    tokens = shlex.split(line)
    if not tokens or tokens[0] != "set":
        raise JunosSchemaError(f"{line!r}: not a set statement")
    tokens.pop(0)
    node, path = schema.configuration, ()
    touched: list[tuple[tuple[str, ...], Any]] = []
    keys_here: list[str] = []
    while tokens:
        tok = tokens[0]
        where = f"{line!r} at {tok!r} (under /{'/'.join(path)})"
        kids = [c for c in _children(node) if c.arg not in keys_here]
        named = {c.arg: c for c in kids if not _nokeyword(c)}
        bare = [c for c in kids if _nokeyword(c)]
        child = named.get(tok)
        if child is not None:
            tokens.pop(0)
        else:
            fits = [c for c in bare if c.keyword == "list" or
                    (c.keyword in ("leaf", "leaf-list") and _type_ok(c.search_one("type"), tok))]
            if not fits:
                raise JunosSchemaError(f"{where}: unknown keyword; {node.keyword} {node.arg} takes "
                                       f"{sorted(named) or '(nothing by name)'}")
            child = fits[0]
        if child.keyword == "container":
            node, path, keys_here = child, (*path, child.arg), []
            touched.append((path, child))
        elif child.keyword == "list":
            keys = _keys(child)
            values = []
            for k in keys:
                key_leaf = next(c for c in _children(child) if c.arg == k)
                # a key without nokeyword is given as "<key> <value>" (drop-profile-map loss-priority any)
                if not _nokeyword(key_leaf) and (not tokens or tokens.pop(0) != k):
                    raise JunosSchemaError(f"{where}: list {child.arg} needs its key as '{k} <value>'")
                if not tokens:
                    raise JunosSchemaError(f"{where}: list {child.arg} needs its key {k}")
                value = tokens.pop(0)
                _check_value(key_leaf, value, where)
                values.append(value)
            node, path, keys_here = child, (*path, f"{child.arg}[{' '.join(values)}]"), keys
            touched.append((path, child))
        elif child.keyword == "leaf":
            if child.search_one("type").arg != "empty":
                _check_value(child, tokens.pop(0) if tokens else _missing(where, child), where)
            touched.append(((*path, child.arg), child))
        else:  # leaf-list
            for value in _take_values(tokens, where, child.arg):
                _check_value(child, value, where)
            touched.append(((*path, child.arg), child))
    last = touched[-1][1] if touched else None
    if last is None or (last.keyword == "container" and last.search_one("presence") is None):
        raise JunosSchemaError(f"{line!r}: incomplete statement (stops at container "
                               f"{last.arg if last is not None else 'configuration'})")
    return touched


def _missing(where: str, leaf: Any) -> str:
    raise JunosSchemaError(f"{where}: leaf {leaf.arg} needs a value")


def check_set_text(schema: JunosYang, text: str) -> int:
    """Check every ``set`` line of ``text`` (comments and blank lines skipped) and the ``junos:must``
    companions of what they configure. Returns the number of set lines checked.

    Raises:
        JunosSchemaError: the first line or companion the schema rejects.
    """
    configured: set[tuple[str, ...]] = set()
    musts: list[tuple[tuple[str, ...], str, str]] = []
    count = 0
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        count += 1
        for path, node in _walk(schema, line):
            configured.update(path[:i] for i in range(1, len(path) + 1))
            for expr in _ext(node, "must"):
                m = _MUST_PATH.match(expr)
                if m:
                    musts.append((path, m.group(1), line))
    for path, rel, line in musts:
        steps = rel.split()
        base = path
        while steps and steps[0] == "..":
            base, steps = base[:-1], steps[1:]
        want = (*base, *steps)
        if not any(p[: len(want)] == want or _same(p, want) for p in configured):
            raise JunosSchemaError(f"{line!r}: {path[-1]} needs {rel!r} configured too (junos:must); "
                                   f"nothing configures /{'/'.join(want)}")
    return count


def _same(configured: tuple[str, ...], want: tuple[str, ...]) -> bool:
    """``want``'s last step names a node; a configured list entry ``name[key]`` matches it by name."""
    return (len(configured) == len(want) and configured[:-1] == want[:-1]
            and configured[-1].split("[", 1)[0] == want[-1])
