"""Architecture rules checked with ``ast`` over ``roce_tune/`` (issue 11):

* no module outside ``roce_tune/platforms/`` names a platform (a string literal equal to a platform name,
  a comparison of a ``platform`` attribute with ``"host"``, or an import of a specific platform module):
  platform knowledge is reached through the registry (:func:`roce_tune.platforms.platform`);
* the platform package imports nothing from ``render``, ``deploy``, ``verify``, ``audit`` or the tuner, and
  the package-level import graph has no cycle through ``platforms`` (``render`` <-> ``platforms`` is gone).

``KNOWN`` lists the modules still naming platforms, with how many names and why; the test fails when a
module not listed names a platform, or a listed one names more (the list may only shrink).
"""

from __future__ import annotations

import ast
from collections import Counter, defaultdict
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1] / "roce_tune"
PLATFORM_NAMES = frozenset({"sonic", "eos", "nxos", "junos", "cumulus"})
PLATFORM_MODULES = frozenset({*PLATFORM_NAMES, "host"})

#: module -> (most platform names it may still hold, why). To shrink, not to grow.
KNOWN: dict[str, tuple[int, str]] = {
    "audit/readers.py": (21, "audit capture readers per platform: to move with the counter parsers"),
    "verify/counters.py": (2, "re-exports the SONiC/EOS counter parsers for audit/readers.py until it moves"),
    "verify/vendor_counters.py": (3, "re-exports the vendor counter parsers for audit/readers.py until it moves"),
}


def _modules() -> list[Path]:
    return sorted(p for p in ROOT.rglob("*.py") if "platforms" not in p.relative_to(ROOT).parts)


def _is_platform_attr(node: ast.expr) -> bool:
    return (isinstance(node, ast.Attribute) and node.attr == "platform") or (
        isinstance(node, ast.Name) and node.id == "platform")


def _platform_module(name: str) -> bool:
    """``sonic``, ``sonic_counters``, ``host`` …: a module of one platform (not ``contract``, ``lldp`` …)."""
    return name.split("_")[0] in PLATFORM_MODULES


def platform_names(tree: ast.AST) -> list[tuple[int, str]]:
    """(line, what) of every place ``tree`` names a platform."""
    hits: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in PLATFORM_NAMES:
            hits.append((node.lineno, repr(node.value)))
        elif isinstance(node, ast.Compare):
            sides = [node.left, *node.comparators]
            if any(_is_platform_attr(s) for s in sides) and any(
                    isinstance(s, ast.Constant) and s.value == "host" for s in sides):
                hits.append((node.lineno, "platform == 'host'"))
        elif isinstance(node, ast.ImportFrom) and node.module:
            mod = node.module.split(".")
            if mod[:2] == ["roce_tune", "platforms"] and (
                    (len(mod) > 2 and _platform_module(mod[2]))
                    or any(_platform_module(a.name) for a in node.names)):
                hits.append((node.lineno, f"import of {node.module}"))
        elif isinstance(node, ast.Import):
            for a in node.names:
                mod = a.name.split(".")
                if mod[:2] == ["roce_tune", "platforms"] and len(mod) > 2 and _platform_module(mod[2]):
                    hits.append((node.lineno, f"import of {a.name}"))
    return hits


def test_the_checker_sees_each_kind_of_platform_name() -> None:
    src = ('x = "eos"\nif sw.platform == "host": pass\nfrom roce_tune.platforms import sonic\n'
           'import roce_tune.platforms.junos\nfrom roce_tune.platforms.nxos import SPEC\n'
           'if t.kind == "host": pass\ny = "sonic-buildimage"\nfrom roce_tune.platforms.eos_counters import x\n'
           'from roce_tune.platforms import counters, nxos_readback\n')
    assert [w for _, w in sorted(platform_names(ast.parse(src)))] == [
        "'eos'", "platform == 'host'", "import of roce_tune.platforms", "import of roce_tune.platforms.junos",
        "import of roce_tune.platforms.nxos", "import of roce_tune.platforms.eos_counters",
        "import of roce_tune.platforms"]


def test_no_module_outside_platforms_names_a_platform() -> None:
    problems = []
    for path in _modules():
        rel = path.relative_to(ROOT).as_posix()
        hits = platform_names(ast.parse(path.read_text(), str(path)))
        allowed = KNOWN.get(rel, (0, ""))[0]
        if len(hits) > allowed:
            shown = ", ".join(f"{line}: {what}" for line, what in sorted(hits))
            problems.append(f"roce_tune/{rel} names a platform {len(hits)} time(s) (allowed {allowed}): {shown}")
    assert not problems, "platform knowledge belongs in roce_tune/platforms/ (reach it through the registry):\n" \
        + "\n".join(problems)


def test_known_list_is_current() -> None:
    """A module that no longer names platforms leaves KNOWN (so the list only shrinks)."""
    stale = []
    for rel, (allowed, _why) in KNOWN.items():
        path = ROOT / rel
        hits = len(platform_names(ast.parse(path.read_text()))) if path.exists() else 0
        if hits < allowed:
            stale.append(f"{rel}: {hits} < {allowed}")
    assert not stale, "lower or drop these KNOWN entries: " + "; ".join(stale)


def _package(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return parts[0] if len(parts) > 1 else f"<{parts[0]}>"


def import_graph() -> dict[str, Counter[str]]:
    """Package-level imports inside ``roce_tune`` (a top-level module is its own node ``<name>``),
    counting imports inside functions too."""
    graph: dict[str, Counter[str]] = defaultdict(Counter)
    for path in ROOT.rglob("*.py"):
        src = _package(path)
        for node in ast.walk(ast.parse(path.read_text())):
            names: list[str] = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names = [node.module]
            for name in names:
                parts = name.split(".")
                if parts[0] != "roce_tune" or len(parts) < 2:
                    continue
                dst = parts[1] if (ROOT / parts[1]).is_dir() else f"<{parts[1]}>"
                if dst != src:
                    graph[src][dst] += 1
    return graph


def _reaches(graph: dict[str, Counter[str]], start: str, goal: str) -> bool:
    seen, todo = set(), [start]
    while todo:
        node = todo.pop()
        if node == goal:
            return True
        if node not in seen:
            seen.add(node)
            todo += list(graph.get(node, ()))
    return False


@pytest.mark.parametrize("forbidden", ["render", "deploy", "verify", "audit", "tuner", "simulate", "<cli>"])
def test_platforms_do_not_import_the_engines(forbidden: str) -> None:
    assert forbidden not in import_graph().get("platforms", {}), \
        f"roce_tune/platforms imports {forbidden}: renderers read only the plan"


#: package -> why the platforms still import it (a cycle through it is tolerated until it moves)
KNOWN_CYCLES = {
    "inventory": "platforms/{cumulus,eos,sonic}.py read the ASIC catalog (family, buffer size) and host.py the "
                 "inventory's name regexes: the plan must carry these (issue 11 item 2)",
}


def test_no_package_cycle_through_platforms() -> None:
    graph = import_graph()
    cycles = [dst for dst in graph.get("platforms", {}) if _reaches(graph, dst, "platforms")]
    assert not set(cycles) - set(KNOWN_CYCLES), f"package cycle platforms -> {cycles} -> platforms"
    assert "render" not in cycles
