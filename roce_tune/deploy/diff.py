"""Diffs between a device's running configuration and the rendered desired configuration.

Three shapes, chosen by the platform's :class:`~roce_tune.platforms.contract.DiffRules` ``kind`` (each
platform module's ``DIFF``, collected in :data:`DIFF_RULES`):

* ``hier``: hierarchical CLI via hier-config. The desired config is *partial*: it is
  merged onto the running config (``HConfig.future``) so unrelated lines are never removed; inside
  sections roce-tune owns (e.g. ``qos profile ROCE_LOSSLESS``) the desired children are
  authoritative, so stale lines there are negated.
* ``set``: flat lines ``<path…> <value>``. Under the owned roots
  (``set class-of-service``, ``nv set qos``) the desired lines are authoritative; elsewhere a desired
  line replaces the running line with the same path (all tokens but the value).
* ``json`` (a config database): an RFC 6902 JSON Patch restricted to the tables and keys roce-tune
  renders, plus stale per-port keys of the ports it manages.

Each returns a :class:`ConfigChange`: the lines/ops to push, a human diff in the platform's own
terms, and the disruptive-change reasons found by the platform's rules.
"""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TypeAlias

import jsonpatch
from hier_config import HConfig, WorkflowRemediation, get_hconfig, get_hconfig_driver
from hier_config import Platform as HierPlatform
from hier_config.models import IdempotentCommandsRule, MatchRule
from hier_config.platforms.driver_base import HConfigDriverBase
from jsonpointer import JsonPointer

from roce_tune.platforms import SWITCH_PLATFORMS, platform
from roce_tune.platforms.cli_readback import id_list
from roce_tune.platforms.contract import DiffRules

#: diff data of every switch platform (each platform module's ``DIFF``), by platform name
DIFF_RULES: dict[str, DiffRules] = {
    name: rules for name in SWITCH_PLATFORMS if (rules := platform(name).diff) is not None}


@dataclass
class ConfigChange:
    """What a push would change on one device.

    Attributes:
        commands: CLI lines to send (``hier``/``set``) — empty when nothing changes.
        patch: JSON Patch operations (``json``).
        diff: human diff in the platform's terms (``+``/``-`` lines, or patch ops).
        disruptive: reasons this change briefly stops traffic (empty = hitless).
    """

    commands: list[str] = field(default_factory=list)
    patch: list[dict[str, object]] = field(default_factory=list)
    diff: list[str] = field(default_factory=list)
    disruptive: list[str] = field(default_factory=list)

    @property
    def empty(self) -> bool:
        """True when the device already matches."""
        return not self.commands and not self.patch

    def held_back(self, allow_disruptive: bool, option: str = "--allow-disruptive") -> str | None:
        """Why this change is not pushed in the normal batches (``disruptive change needs <option>:
        <reasons>``), or None: hitless, or ``allow_disruptive`` (then the caller pushes it one device at a
        time). ``option`` is how the operator allows it (apply's flag; the playbooks'
        ``-e roce_tune_allow_disruptive=true``). The reasons are the platform's ``DiffRules.disruptive``
        texts. Never raises."""
        if not self.disruptive or allow_disruptive:
            return None
        return f"disruptive change needs {option}: " + "; ".join(self.disruptive)


def _flag(rules: DiffRules, lines: list[str]) -> list[str]:
    reasons = []
    for pattern, reason in rules.disruptive:
        rx = re.compile(pattern)
        if any(rx.search(line) for line in lines) and reason not in reasons:
            reasons.append(reason)
    return reasons


def _strip_comments(text: str, comment: str) -> str:
    return "\n".join(line for line in text.splitlines() if line.strip()
                     and not line.lstrip().startswith(comment))


#: an indented CLI text as a tree: line -> the lines indented under it
_Tree: TypeAlias = "dict[str, _Tree]"


def merge_sections(text: str) -> str:
    """Merge repeated sections of an indented CLI text (a renderer enters ``qos profile X`` once per
    section template; the device merges them, and so must the diff). Order of first appearance kept."""
    root: _Tree = {}
    stack: list[tuple[int, _Tree]] = [(-1, root)]
    for line in text.splitlines():
        if not line.strip():
            continue
        indent = len(line) - len(line.lstrip(" "))
        while stack and indent <= stack[-1][0]:
            stack.pop()
        children = stack[-1][1].setdefault(line.strip(), {})
        stack.append((indent, children))

    def dump(tree: _Tree, depth: int) -> list[str]:
        out = []
        for key, sub in tree.items():
            out.append(" " * (3 * depth) + key)
            out += dump(sub, depth + 1)
        return out

    return "\n".join(dump(root, 0)) + "\n"


def _hier_driver(rules: DiffRules) -> HConfigDriverBase:
    """hier-config's driver for the platform, with the platform's extra idempotent command paths."""
    assert rules.hier_platform is not None
    driver = get_hconfig_driver(HierPlatform[rules.hier_platform])
    for path in rules.idempotent:
        driver.rules.idempotent_commands.append(
            IdempotentCommandsRule(match_rules=tuple(MatchRule(startswith=p) for p in path)))
    return driver


def _delete_stale(rules: DiffRules, run_h: HConfig, want_h: HConfig, future: HConfig) -> list[str]:
    """Delete from ``future`` the running top-level objects ``rules.stale`` names (roce-tune's own) that the
    desired config no longer has; returns their texts."""
    wanted = {child.text for child in want_h.children}
    stale = [child.text for child in run_h.children
             if child.text not in wanted and any(re.search(p, child.text) for p in rules.stale)]
    for text in stale:
        fut = future.get_child(equals=text)
        if fut is not None:
            fut.delete()
    return stale


def _replace_owned(rules: DiffRules, want_h: HConfig, future: HConfig) -> None:
    """Sections roce-tune owns whole (``rules.owned_sections``) become exactly the desired ones in
    ``future``."""
    owned = [re.compile(p) for p in rules.owned_sections]
    for child in list(want_h.children):
        if any(rx.search(child.text) for rx in owned):
            fut = future.get_child(equals=child.text)
            if fut is not None:
                fut.delete()
            future.add_deep_copy_of(child)


def _reindent(lines: Iterable[str], indent: int) -> list[str]:
    """hier-config indents by 2; re-indent to the platform's unit (EOS pastes use 3) so a device that reads
    indentation as context (as EOS does for pasted config) enters the right sub-mode."""
    out = []
    for line in lines:
        depth = (len(line) - len(line.lstrip(" "))) // 2
        out.append(" " * (indent * depth) + line.lstrip(" "))
    return out


@dataclass
class _KeyedChange:
    """The keyed top-level lines' part of a ``hier`` change (:func:`_keyed_change`)."""

    running: str
    desired: str
    commands: list[str] = field(default_factory=list)
    diff: list[str] = field(default_factory=list)


_KeyedLine: TypeAlias = "tuple[int, re.Match[str]]"


def _keyed_lines(patterns: list[re.Pattern[str]], text: str) -> tuple[list[str], list[_KeyedLine]]:
    """``text``'s lines split into (other lines, [(pattern index, match)] of top-level keyed lines)."""
    rest, keyed = [], []
    for line in text.splitlines():
        hit = next(((i, m) for i, rx in enumerate(patterns) if not line.startswith(" ")
                    and (m := rx.match(line.rstrip()))), None)
        if hit is None:
            rest.append(line)
        else:
            keyed.append(hit)
    return rest, keyed


def _entries(m: re.Match[str]) -> dict[int, str]:
    return dict.fromkeys(id_list(m["keys"]), m["value"])


def _keyed_change(rules: DiffRules, running: str, desired: str) -> _KeyedChange:
    """Compare the top-level lines ``rules.keyed`` names key by key (the device holds one value per key).

    A desired line the running config already holds for every key (on one line or several) changes
    nothing. Any other desired line is sent as it is (the device replaces each of its keys) and shown
    ``+``; each running line of the same pattern that holds one of its keys with another value is shown
    ``-``, followed by ``+`` the line with the keys it keeps (if any). Returns both texts without these
    lines (hier-config compares the rest)."""
    patterns = [re.compile(p) for p in rules.keyed]
    run_rest, have = _keyed_lines(patterns, running)
    want_rest, want = _keyed_lines(patterns, desired)
    out = _KeyedChange("\n".join(run_rest) + "\n", "\n".join(want_rest) + "\n")
    held: dict[tuple[int, int], str] = {}
    for i, m in have:
        held.update({(i, k): v for k, v in _entries(m).items()})
    wanted: dict[tuple[int, int], str] = {}
    for i, m in want:
        if any(held.get((i, k)) != v for k, v in _entries(m).items()):
            out.commands.append(m.string)
            wanted.update({(i, k): v for k, v in _entries(m).items()})
    out.diff = _replaced(have, wanted) + [f"+ {c}" for c in out.commands]
    return out


def _replaced(have: list[_KeyedLine], wanted: dict[tuple[int, int], str]) -> list[str]:
    """``- line`` for each running keyed line a desired value replaces some key of, then ``+`` the line
    with the keys it keeps (when some are left)."""
    diff = []
    for i, m in have:
        keys = id_list(m["keys"])
        kept = [k for k in keys if wanted.get((i, k), m["value"]) == m["value"]]
        if len(kept) < len(keys):
            diff.append(f"- {m.string}")
            if kept:
                ids = " ".join(map(str, kept))
                diff.append(f"+ {m.string[:m.start('keys')]}{ids}{m.string[m.end('keys'):]}")
    return diff


def hier_diff(rules: DiffRules, running: str, desired: str, comment: str = "!") -> ConfigChange:
    """Hierarchical diff (hier-config) of a partial desired config merged onto the running one."""
    driver = _hier_driver(rules)
    keyed = _keyed_change(rules, merge_sections(_strip_comments(running, comment)),
                          merge_sections(_strip_comments(desired, comment)))
    run_h = get_hconfig(driver, keyed.running)
    want_h = get_hconfig(driver, keyed.desired)
    future = run_h.future(want_h)
    stale = _delete_stale(rules, run_h, want_h, future)
    _replace_owned(rules, want_h, future)
    remediation: HConfig = WorkflowRemediation(run_h, future).remediation_config
    commands = _reindent(remediation.dump_simple(sectional_exiting=True), rules.indent)
    # stale objects go last: by then no interface refers to them any more
    last = {f"no {text}" for text in stale}
    commands = [c for c in commands if c not in last] + [c for c in commands if c in last]
    diff = list(run_h.unified_diff(future))
    commands = keyed.commands + (commands if diff else [])
    diff = keyed.diff + diff
    return ConfigChange(commands=commands, diff=diff,
                        disruptive=_flag(rules, [re.sub(r"^\s*([+-])\s*", r"\1", d) for d in diff]))


def _key(line: str) -> str:
    return line.rsplit(" ", 1)[0] if " " in line else line


def _set_lines(text: str, comment: str) -> list[str]:
    """Non-empty, non-comment lines of a ``set``-style config, stripped."""
    return [ln.strip() for ln in text.splitlines() if ln.strip() and not ln.lstrip().startswith(comment)]


def _negated(rules: DiffRules, line: str) -> str:
    """The command that removes ``line`` (``set …`` → ``delete …`` per ``rules.negate``)."""
    strip, repl = rules.negate
    return repl + line[len(strip):] if line.startswith(strip) else line


def set_diff(rules: DiffRules, running: str, desired: str, comment: str = "#") -> ConfigChange:
    """Flat ``set``-style diff (Junos ``set``, NVUE ``nv set``)."""
    want, have = _set_lines(desired, comment), _set_lines(running, comment)
    want_set, have_set = set(want), set(have)
    want_keys = {_key(w) for w in want}
    # removed: running lines under a root roce-tune owns, or whose setting the desired config sets otherwise
    removed = [h for h in have if h not in want_set and (
        any(h.startswith(root) for root in rules.owned_roots) or _key(h) in want_keys
        or any(re.match(p, h) for p in rules.owned_lines))]
    added = [w for w in want if w not in have_set]
    commands = [_negated(rules, h) for h in removed] + added
    diff = [f"-{h}" for h in removed] + [f"+{w}" for w in added]
    return ConfigChange(commands=commands, diff=diff, disruptive=_flag(rules, diff))


Tables = dict[str, dict[str, dict[str, object]]]


def _in_scope(key: str, rows: dict[str, dict[str, object]], managed_ports: set[str],
              port_keyed: bool = False) -> bool:
    """A live row roce-tune compares: one it renders, a per-port key (``Ethernet0|3``) of a managed port, or,
    in a table keyed by port name (``port_keyed``, ``DiffRules.port_rows``), a managed port's row."""
    return key in rows or key.split("|", 1)[0] in managed_ports and ("|" in key or port_keyed)


def _scoped_row(live_row: object, want_row: object, owned: tuple[str, ...] = ()) -> object:
    """Field-level merge: a desired row names only the fields roce-tune manages (e.g. PORT.mtu), so the live
    row is compared on those fields and on the table's ``owned`` fields (``DiffRules.owned_fields``), which
    are removed when the desired row leaves them out."""
    if isinstance(live_row, dict) and isinstance(want_row, dict):
        return {f: v for f, v in live_row.items() if f in want_row or f in owned}
    return live_row


def _scope_have(running: Tables, desired: Tables, managed_ports: set[str],
                owned_fields: dict[str, tuple[str, ...]] | None = None,
                port_rows: tuple[str, ...] = ()) -> dict[str, dict[str, object]]:
    """The running tables cut to what roce-tune renders; stale per-port keys (and managed ports' rows of the
    ``port_rows`` tables) are kept whole (to be removed)."""
    scope_have: dict[str, dict[str, object]] = {}
    for table, rows in desired.items():
        live = running.get(table, {})
        owned = (owned_fields or {}).get(table, ())
        keyed = table in port_rows
        kept = {k: _scoped_row(v, rows[k], owned) if k in rows else v
                for k, v in live.items() if _in_scope(k, rows, managed_ports, keyed)}
        if table in running or kept:
            scope_have[table] = kept
    return scope_have


def json_diff(rules: DiffRules, running: Tables, desired: Tables, managed_ports: set[str]) -> ConfigChange:
    """SONiC CONFIG_DB JSON Patch restricted to the tables/keys roce-tune renders.

    ``managed_ports`` are the ports in the plan: their per-port keys (``Ethernet0|3``) not in the
    desired tables are removed (e.g. a stale PG range); the keys ``rules.overlaps`` names (a running range
    that overlaps a desired key) always are, and their diff line names the desired key they overlap.
    The patch holds only ``add``/``remove``/``replace``: a ``move``/``copy`` that jsonpatch finds (a stale
    row whose value equals a new row's) is written as ``remove`` + ``add`` so every removed key is named.
    """
    scope_have = _scope_have(running, desired, managed_ports, dict(rules.owned_fields), rules.port_rows)
    target: dict[str, dict[str, object]] = {t: dict(r) for t, r in desired.items()}
    overlapped = _removals(rules, running, desired, managed_ports, scope_have, target)
    patch = _canonical_order(scope_have, target,
                             _plain_ops(scope_have, jsonpatch.make_patch(scope_have, target).patch))
    # make_patch emits "add /TABLE" for a whole missing table: fine for apply-patch; keep ops sorted
    diff = [_diff_line(op, overlapped) for op in patch]
    paths = [str(op["path"]) for op in patch] + diff
    return ConfigChange(patch=patch, diff=diff, disruptive=_flag(rules, paths))


def _removals(rules: DiffRules, running: dict[str, dict[str, dict[str, object]]],
              desired: dict[str, dict[str, dict[str, object]]], managed_ports: set[str],
              scope_have: dict[str, dict[str, object]], target: dict[str, dict[str, object]]) -> dict[str,
                                                                                                      str]:
    """Put the rows to remove into ``scope_have`` (absent from ``target``): roce-tune's own stale rows and the
    running ranges ``rules.overlaps`` names. Returns patch path -> desired key, for the overlapping ones."""
    for table, key in _stale_rows(rules, running, desired):  # roce-tune's own, no longer used: removed
        scope_have.setdefault(table, {})[key] = running[table][key]
        target.setdefault(table, {})
    overlaps = rules.overlaps(running, desired, managed_ports) if rules.overlaps else []
    for table, key, _hit in overlaps:  # a running range overlapping a desired key: always removed
        scope_have.setdefault(table, {})[key] = running[table][key]
    return {JsonPointer.from_parts([t, k]).path: hit for t, k, hit in overlaps}


_OP_RANK = {"remove": 0, "replace": 1, "add": 2}


def _holds_list(doc: object) -> bool:
    """True when ``doc`` (JSON-like) holds a list anywhere."""
    if isinstance(doc, list):
        return True
    return isinstance(doc, dict) and any(_holds_list(v) for v in doc.values())


def _canonical_order(have: Mapping[str, object], target: Mapping[str, object],
                     patch: list[dict[str, object]]) -> list[dict[str, object]]:
    """``patch`` in one order for every run: removes, replaces, then adds, each by path.

    ``jsonpatch.make_patch`` walks a dict's removed and added keys as Python sets, whose order changes with
    the interpreter's string-hash seed, so the same change came out in a different order from run to run
    (dry-run diffs that differ for no reason). Reordering is safe only when the operations commute: every
    path a dict key (neither document holds a list, so no path is an index) and no path equal to or inside
    another; otherwise the patch keeps jsonpatch's order."""
    if _holds_list(have) or _holds_list(target):
        return patch
    keyed = sorted(((_OP_RANK.get(str(op["op"]), 3), JsonPointer(str(op["path"])).parts, i)
                    for i, op in enumerate(patch)), key=lambda k: (k[0], k[1]))
    paths = sorted(parts for _rank, parts, _i in keyed)
    if any(a == b[:len(a)] for a, b in zip(paths, paths[1:])) or any(r == 3 for r, _p, _i in keyed):
        return patch
    return [patch[i] for _rank, _parts, i in keyed]


def _diff_line(op: dict[str, object], overlapped: dict[str, str]) -> str:
    """``remove /BUFFER_PG/Ethernet0|3-4  (overlaps Ethernet0|3)`` / ``add /PATH = <json>``."""
    line = f"{op['op']} {op['path']}"
    if "value" in op:
        line += f" = {json.dumps(op['value'], sort_keys=True)}"
    if op["op"] == "remove" and op["path"] in overlapped:
        line += f"  (overlaps {overlapped[str(op['path'])]})"
    return line


def _plain_ops(doc: Mapping[str, object], patch: list[dict[str, object]]) -> list[dict[str, object]]:
    """``patch`` with each ``move`` as ``remove`` + ``add`` and each ``copy`` as ``add`` (values as they are
    at that step of the patch applied to ``doc``), so a diff names every key it removes."""
    out: list[dict[str, object]] = []
    work = jsonpatch.JsonPatch([]).apply(doc)  # a deep copy
    for op in patch:
        if op["op"] in ("move", "copy"):
            value = jsonpatch.JsonPointer(str(op["from"])).resolve(work)
            steps: list[dict[str, object]] = [{"op": "add", "path": op["path"], "value": value}]
            if op["op"] == "move":
                steps.insert(0, {"op": "remove", "path": op["from"]})
        else:
            steps = [op]
        for step in steps:
            work = jsonpatch.JsonPatch([step]).apply(work)
        out += steps
    return out


def _stale_rows(rules: DiffRules, running: dict[str, dict[str, dict[str, object]]],
                desired: dict[str, dict[str, dict[str, object]]]) -> list[tuple[str, str]]:
    """(table, key) of running rows named by ``rules.stale`` that the desired config lacks and that no
    row left after the change refers to (a plain ``name`` or ``[TABLE|name]`` reference)."""
    candidates = [(table, key) for table, rx in rules.stale for key in running.get(table, {})
                  if key not in desired.get(table, {}) and re.search(rx, key)]
    if not candidates:
        return []
    after = {t: dict(rows) for t, rows in running.items()}
    for t, rows in desired.items():
        after.setdefault(t, {}).update(rows)
    out = []
    for table, key in candidates:
        refs = {key, f"[{table}|{key}]"}
        used = any(v in refs for t, rows in after.items() for k, row in rows.items()
                   if (t, k) != (table, key) and isinstance(row, dict) for v in row.values())
        if not used:
            out.append((table, key))
    return out


def unified(before: str, after: str, name: str) -> list[str]:
    """Plain unified diff of two texts (used for reports and read-back mismatches)."""
    return list(difflib.unified_diff(before.splitlines(), after.splitlines(), f"{name} (running)",
                                     f"{name} (plan)", lineterm=""))


__all__ = ["DIFF_RULES", "ConfigChange", "DiffRules", "hier_diff", "set_diff", "json_diff", "unified"]
