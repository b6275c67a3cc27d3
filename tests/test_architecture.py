"""Architecture rules checked with ``ast`` over ``roce_tune/`` (issue 11):

* no module outside ``roce_tune/platforms/`` names a platform (a string literal equal to a platform name,
  a comparison of a ``platform`` attribute with ``"host"``, or an import of a specific platform module):
  platform knowledge is reached through the registry (:func:`roce_tune.platforms.platform`);
* the platform package imports nothing from ``render``, ``deploy``, ``verify``, ``audit`` or the tuner;
* the package-level import graph of ``roce_tune/`` (subpackages and top-level modules as nodes, imports at
  module level and inside functions as edges) has no cycle; a failure lists the cycle and the imports.

``KNOWN`` lists the modules still naming platforms, with how many names and why (empty now; it may only
shrink): the test fails when something new appears, and when a listed entry is gone.
"""

from __future__ import annotations

import ast
from collections import Counter, defaultdict
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1] / "roce_tune"
PLATFORM_NAMES = frozenset({"sonic", "eos", "nxos", "junos", "cumulus"})
PLATFORM_MODULES = frozenset({*PLATFORM_NAMES, "host"})

#: module -> (most platform names it may still hold, why). To shrink, not to grow.
KNOWN: dict[str, tuple[int, str]] = {}


@cache
def _parse(path: Path, mtime_ns: int, size: int) -> ast.Module:
    """``path`` parsed once per version of the file (every test here reads the same tree of sources)."""
    return ast.parse(path.read_text(), str(path))


def parse(path: Path) -> ast.Module:
    """The syntax tree of ``path`` (cached per modification time and size; the tree is never modified)."""
    st = path.stat()
    return _parse(path, st.st_mtime_ns, st.st_size)


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
           'if t.kind == "host": pass\ny = "sonic-buildimage"\nfrom roce_tune.platforms.eos_counters import '
           'x\nfrom roce_tune.platforms import counters, nxos_readback\n')
    assert [w for _, w in sorted(platform_names(ast.parse(src)))] == [
        "'eos'", "platform == 'host'", "import of roce_tune.platforms", "import of roce_tune.platforms.junos",
        "import of roce_tune.platforms.nxos", "import of roce_tune.platforms.eos_counters",
        "import of roce_tune.platforms"]


def test_no_module_outside_platforms_names_a_platform() -> None:
    problems = []
    for path in _modules():
        rel = path.relative_to(ROOT).as_posix()
        hits = platform_names(parse(path))
        allowed = KNOWN.get(rel, (0, ""))[0]
        if len(hits) > allowed:
            shown = ", ".join(f"{line}: {what}" for line, what in sorted(hits))
            problems.append(f"roce_tune/{rel} names a platform {len(hits)} time(s) (allowed {allowed}): "
                            f"{shown}")
    assert not problems, ("platform knowledge belongs in roce_tune/platforms/ (reach it through the "
                          "registry):\n") \
        + "\n".join(problems)


def test_known_list_is_current() -> None:
    """A module that no longer names platforms leaves KNOWN (so the list only shrinks)."""
    stale = []
    for rel, (allowed, _why) in KNOWN.items():
        path = ROOT / rel
        hits = len(platform_names(parse(path))) if path.exists() else 0
        if hits < allowed:
            stale.append(f"{rel}: {hits} < {allowed}")
    assert not stale, "lower or drop these KNOWN entries: " + "; ".join(stale)


def _package(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return parts[0] if len(parts) > 1 else f"<{parts[0]}>"


def import_sites() -> dict[tuple[str, str], list[str]]:
    """(package, imported package) -> ``path:line`` of every such import inside ``roce_tune`` (a top-level
    module is its own node ``<name>``), imports inside functions included."""
    files = tuple((path, path.stat().st_mtime_ns, path.stat().st_size) for path in sorted(ROOT.rglob("*.py")))
    return {edge: list(where) for edge, where in _import_sites(files).items()}


@cache
def _import_sites(files: tuple[tuple[Path, int, int], ...]) -> dict[tuple[str, str], tuple[str, ...]]:
    """:func:`import_sites` of one version of the sources (nine tests ask for the same graph)."""
    sites: dict[tuple[str, str], list[str]] = defaultdict(list)
    for path, mtime_ns, size in files:
        src = _package(path)
        for node in ast.walk(_parse(path, mtime_ns, size)):
            names: list[str] = []
            line = 0
            if isinstance(node, ast.Import):
                names, line = [a.name for a in node.names], node.lineno
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names, line = [node.module], node.lineno
            for name in names:
                parts = name.split(".")
                if parts[0] != "roce_tune" or len(parts) < 2:
                    continue
                dst = parts[1] if (ROOT / parts[1]).is_dir() else f"<{parts[1]}>"
                if dst != src:
                    sites[(src, dst)].append(f"{path.relative_to(ROOT.parent).as_posix()}:{line}")
    return {edge: tuple(where) for edge, where in sites.items()}


def import_graph() -> dict[str, Counter[str]]:
    """Package-level imports inside ``roce_tune`` (a top-level module is its own node ``<name>``),
    counting imports inside functions too."""
    graph: dict[str, Counter[str]] = defaultdict(Counter)
    for (src, dst), where in import_sites().items():
        graph[src][dst] += len(where)
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


def find_cycle(graph: dict[str, Counter[str]]) -> list[str] | None:
    """One cycle of ``graph`` as ``[a, b, …, a]`` (depth-first, nodes in name order), None when acyclic."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return path[path.index(nxt):] + [nxt]
            if nxt not in state and (found := visit(nxt)):
                return found
        state[node] = 2
        path.pop()
        return None

    for start in sorted(graph):
        if start not in state and (found := visit(start)):
            return found
    return None


def test_find_cycle_lists_the_cycle() -> None:
    graph: dict[str, Counter[str]] = {"a": Counter({"b": 1}), "b": Counter({"c": 1}), "c": Counter({"a": 1}),
                                      "d": Counter({"a": 1})}
    assert find_cycle(graph) == ["a", "b", "c", "a"]
    del graph["c"]
    assert find_cycle(graph) is None


def test_the_package_import_graph_has_no_cycle() -> None:
    """Subpackages and top-level modules of ``roce_tune`` as nodes, imports at module level and inside
    functions as edges: no cycle at all (issue 11)."""
    cycle = find_cycle(import_graph())
    if cycle:
        sites = import_sites()
        edges = "\n".join(f"  {a} -> {b}: {', '.join(sites[(a, b)][:4])}" for a, b in zip(cycle, cycle[1:]))
        pytest.fail(f"package import cycle {' -> '.join(cycle)}:\n{edges}")


def test_platforms_are_in_no_package_cycle() -> None:
    graph = import_graph()
    assert not [dst for dst in graph.get("platforms", {}) if _reaches(graph, dst, "platforms")]
