"""The one path from an inventory to a plan directory, and the one reader of a plan directory.

Stages (:data:`STAGES`), each a function here that every command uses::

    load    inventory YAML -> LoadedInventory (schema, positions)           :func:`load`
    lint    inventory rules RT0xx/RT1xx                                      :func:`lint_loaded`
    derive  the tuner: Plan with rationale and safety findings (RT2xx)       :func:`derive`
    render  the plan -> relative path -> text (configs, host files, review)  :func:`render`
    write   the files -> out/<site>/ atomically, only what changed           :func:`write`

:func:`plan_inventory` runs all five (``roce-tune plan``); :func:`derive_inventory` the first three
(``explain``, ``verify``, ``audit`` from an inventory); :func:`open_source` gives apply, verify and audit
the plan (and files) of an inventory *or* a plan directory; :func:`read_plan_dir` is the reader of a plan
directory for every command that acts on devices (plan, every device's files, checksums verified).
``simulate plan`` alone reads ``plan.json`` by itself, so that an engineer can simulate a hand-edited plan.
A :class:`Timings` collects seconds per stage (``roce-tune plan --timings``); a :class:`StageProgress` shows
a rich progress bar on stderr for a stage that runs longer than about a second, when stderr is a terminal.

Failures are :class:`StageError` (a :class:`~roce_tune.findings.RoceTuneError` with its stage and what was
left undone); an input no lint rule caught becomes RT299 at the inventory, never a traceback.
"""

from __future__ import annotations

import hashlib
import os
import sys
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING, cast

from roce_tune.findings import (
    TUNER_FAILURES,
    Finding,
    RoceTuneError,
    Severity,
    has_errors,
    internal_finding,
)

if TYPE_CHECKING:
    from rich.console import Console
    from rich.progress import Progress

    from roce_tune.inventory.catalog import Catalog
    from roce_tune.inventory.loader import LoadedInventory
    from roce_tune.inventory.models import Inventory
    from roce_tune.inventory.topology import Topology
    from roce_tune.plan import Plan
    from roce_tune.plandir import PlanDirError, PlanFiles, Provenance, WriteStats
    from roce_tune.render.summary import PlanSummary

__all__ = ["STAGES", "TUNER_FAILURES", "PlanDir", "PlanDirError", "PlanResult", "Source", "StageError",
           "StageProgress", "Timings", "derive", "derive_device", "derive_inventory", "derive_plan",
           "internal_finding", "lint_loaded", "load", "locate_findings", "missing_device_files",
           "open_source", "plan_inputs", "plan_inventory", "read_plan_dir", "render", "reuse_plan", "write"]

STAGES = ("load", "lint", "derive", "render", "write")


def __getattr__(name: str) -> object:
    """``PlanDirError``, re-exported from :mod:`roce_tune.plandir` on first use: the plan directory code is
    imported by the functions that read or write one, not by lint or explain (issue 16).

    Raises:
        AttributeError: any other unknown name.
    """
    if name == "PlanDirError":
        from roce_tune.plandir import PlanDirError

        return PlanDirError
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

#: Exceptions a tuner or renderer raises when an input slipped past the inventory rules: reported as RT299
#: (with the inventory's position) instead of a traceback. Every such case is a missing lint rule.

#: seconds a stage runs before its progress bar appears (environment ``ROCE_TUNE_PROGRESS_AFTER_S``)
PROGRESS_AFTER_S = 1.0


# ------------------------------------------------------------------------------------ timings and progress


@dataclass
class Timings:
    """Seconds per pipeline stage, in the order the stages ran: CPU time of this process
    (``time.process_time``) and wall clock (``time.perf_counter``); on a shared machine the two differ.

    >>> t = Timings()
    >>> with t.stage("load"):
    ...     pass
    >>> t.summary().startswith("timings (s, cpu/wall): load 0.00/0.00")
    True
    """

    cpu_s: dict[str, float] = field(default_factory=dict)
    wall_s: dict[str, float] = field(default_factory=dict)

    @contextmanager
    def stage(self, name: str) -> Iterator[None]:
        """Add the time spent in the ``with`` body to stage ``name`` (also when it raises)."""
        cpu, wall = time.process_time(), time.perf_counter()
        try:
            yield
        finally:
            self.cpu_s[name] = self.cpu_s.get(name, 0.0) + time.process_time() - cpu
            self.wall_s[name] = self.wall_s.get(name, 0.0) + time.perf_counter() - wall

    def summary(self) -> str:
        """One line: ``timings (s, cpu/wall): load 0.12/0.13, lint 0.30/0.31, derive 1.20/1.25, render
        2.00/2.10, write 0.40/0.90; total 4.02/4.69`` (stages that did not run are left out)."""
        parts = [f"{name} {cpu:.2f}/{self.wall_s[name]:.2f}" for name, cpu in self.cpu_s.items()]
        return (f"timings (s, cpu/wall): {', '.join(parts)}; "
                f"total {sum(self.cpu_s.values()):.2f}/{sum(self.wall_s.values()):.2f}")


class StageProgress:
    """A rich progress bar on ``console`` (stderr) for a pipeline stage running longer than ``after_s``.

    Nothing is drawn when the console is not a terminal (CI logs, pipes) or the stage ends first. A stage
    with a known number of items (files written) gets a bar with a count; the others a pulsing bar with
    the elapsed time. The bar is transient: it is gone from the terminal when the stage ends.
    """

    def __init__(self, console: Console, after_s: float | None = None) -> None:
        """``after_s`` None = ``$ROCE_TUNE_PROGRESS_AFTER_S`` or :data:`PROGRESS_AFTER_S`."""
        self.console = console
        env = os.environ.get("ROCE_TUNE_PROGRESS_AFTER_S", "")
        self.after_s = after_s if after_s is not None else float(env) if env else PROGRESS_AFTER_S
        self._lock = threading.Lock()
        self._bar: Progress | None = None
        self._done = 0

    @contextmanager
    def stage(self, name: str, total: int | None = None) -> Iterator[Callable[[int], None]]:
        """Run a stage; yields ``advance(n)`` to count ``n`` of ``total`` items done."""
        self._done = 0
        if not self.console.is_terminal:
            yield self._count
            return
        timer = threading.Timer(self.after_s, self._start, (name, total))
        timer.daemon = True
        timer.start()
        try:
            yield self._advance
        finally:
            timer.cancel()
            with self._lock:
                if self._bar is not None:
                    self._bar.stop()
                    self._bar = None

    def _count(self, n: int) -> None:
        self._done += n

    def _start(self, name: str, total: int | None) -> None:
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

        columns = [TextColumn(f"{name:<7}"), BarColumn(), *([MofNCompleteColumn()] if total else []),
                   TimeElapsedColumn()]
        with self._lock:
            self._bar = Progress(*columns, console=self.console, transient=True)
            self._bar.add_task(name, total=total, completed=self._done)
            self._bar.start()

    def _advance(self, n: int) -> None:
        self._done += n
        bar = self._bar
        if bar is not None:
            bar.update(bar.task_ids[0], completed=self._done)


@contextmanager
def _stage(name: str, timings: Timings | None, progress: StageProgress | None,
           total: int | None = None) -> Iterator[Callable[[int], None]]:
    with (timings or Timings()).stage(name):
        if progress is None:
            yield lambda n: None
        else:
            with progress.stage(name, total) as advance:
                yield advance


# ------------------------------------------------------------------------------------------------- errors


class StageError(RoceTuneError):
    """A stage failed; ``findings`` say why (positioned in the inventory where they can be).

    Attributes:
        stage: one of :data:`STAGES`.
        headline: what a command prints before the findings ("" = nothing), e.g. "rendering failed".
    """

    def __init__(self, stage: str, findings: list[Finding], headline: str = "") -> None:
        super().__init__(findings)
        self.stage = stage
        self.headline = headline


def _device_paths(loaded: LoadedInventory) -> dict[str, str]:
    inv = loaded.inventory
    paths = {sw.name: f"switches[{i}]" for i, sw in enumerate(inv.switches)}
    paths.update({h.name: f"hosts[{i}]" for i, h in enumerate(inv.hosts)})
    return paths


#: Plan checks whose fix is made on the cable of the port (its length, or ``lossless: false`` on the link):
#: RT201 per-port headroom (shorten the cable), RT220-RT223 PFC deadlock (a lossy link). They are located at
#: the link or NIC that cables the port; every other port finding at the port's own ``ports:`` entry (its
#: speed, MTU, the pins that match it). Either falls back to the other, then to the device's entry.
CABLE_RULES = frozenset({"RT201", "RT220", "RT221", "RT222", "RT223"})


class _PortPaths:
    """(device, port) -> the inventory field path that declares or cables that port, built on first use
    and only as far as asked: one switch's port entries at a time (a range entry such as
    ``Ethernet[0-124/4]`` stands for each of its ports), the link/NIC index once (~100k ends at 4,096
    hosts, only when a finding asks for a cable)."""

    def __init__(self, inventory: Inventory, device_paths: dict[str, str]) -> None:
        self._inv = inventory
        self._device_paths = device_paths
        self._declared: dict[str, dict[str, str]] = {}
        self._cabled: dict[tuple[str, str], str] | None = None

    def declared(self, device: str, port: str) -> str | None:
        """``switches[i].ports[j]``: the first entry of ``device`` that declares ``port`` (None if none)."""
        per = self._declared.get(device)
        if per is None:
            per = self._declared[device] = {}
            where = self._device_paths.get(device, "")
            if where.startswith("switches["):
                si = int(where[len("switches["):-1])
                for pi, entry in enumerate(self._inv.switches[si].ports):
                    try:
                        names = entry.names()
                    except ValueError:  # an empty/bad range: lint reports it (RT1xx)
                        continue
                    for name in names:
                        per.setdefault(name, f"{where}.ports[{pi}]")
        return per.get(port)

    def cabled(self, device: str, port: str) -> str | None:
        """``links[i]`` or ``hosts[i].nics[j]``: the first link or NIC that cables ``device:port`` (a host's
        ``netdev`` is its NIC entry), None if none."""
        if self._cabled is None:
            cabled: dict[tuple[str, str], str] = {}
            for li, link in enumerate(self._inv.links):
                for end in (link.a, link.b):
                    dev, _, name = end.partition(":")
                    cabled.setdefault((dev, name), f"links[{li}]")
            for hi, host in enumerate(self._inv.hosts):
                for ni, nic in enumerate(host.nics):
                    path = f"hosts[{hi}].nics[{ni}]"
                    cabled.setdefault((host.name, nic.netdev), path)
                    if nic.switch_port is not None:
                        dev, _, name = nic.switch_port.partition(":")
                        cabled.setdefault((dev, name), path)
            self._cabled = cabled
        return self._cabled.get((device, port))

    def path(self, rule: str, device: str, port: str) -> str | None:
        """The most specific path for a ``rule`` finding on ``device:port`` (:data:`CABLE_RULES`), or None."""
        if rule in CABLE_RULES:
            return self.cabled(device, port) or self.declared(device, port)
        return self.declared(device, port) or self.cabled(device, port)


def locate_findings(loaded: LoadedInventory, findings: list[Finding]) -> list[Finding]:
    """Give tuner findings (device/port, or the field path of a pin) the ``file:line:col`` of that entry in
    the inventory, so CI annotations and terminals point at the line to change.

    Precedence: the pin's field path (``location.path``) if the finding names one; else, for a finding on a
    port, the port's own entry: the ``ports:`` item that declares it (a range entry for a port of a range)
    or, for :data:`CABLE_RULES` and ports declared nowhere, the link/NIC that cables it; else the device's
    entry; else just the file. A finding that already has a file is kept as it is.
    """
    paths = _device_paths(loaded)
    ports = _PortPaths(loaded.inventory, paths)
    out = []
    for f in findings:
        loc = f.location
        if loc.file is not None:
            out.append(f)
            continue
        where = loc.path if loc.path and loc.path in loaded.positions else None  # e.g. the pin behind it
        if where is None and loc.device is not None and loc.port is not None:
            where = ports.path(f.rule, loc.device, loc.port)
        if where is None and loc.device in paths:
            where = paths[loc.device]
        if where is None:
            update: dict[str, object] = {"file": str(loaded.path)}
        else:
            pos = loaded.locate(where)
            update = {"file": pos.file, "line": pos.line, "col": pos.col, "path": loc.path or where}
        out.append(f.model_copy(update={"location": loc.model_copy(update=update)}))
    return out


def plan_errors(plan: Plan) -> list[Finding]:
    """The error-level findings of ``plan`` (a plan with any must not be written, applied or measured)."""
    return [f for f in plan.findings if f.severity is Severity.error]


# ------------------------------------------------------------------------------------------------- stages


def load(path: Path) -> LoadedInventory:
    """Stage ``load``: read and validate the inventory YAML (with positions for findings).

    Raises:
        StageError: stage ``load``; the schema/YAML findings at file:line:col.
    """
    from roce_tune.inventory.loader import load_inventory

    try:
        return load_inventory(path)
    except StageError:
        raise
    except RoceTuneError as exc:
        raise StageError("load", exc.findings) from None


def topology(loaded: LoadedInventory) -> Topology:
    """The resolved topology of ``loaded``, built once and shared by :func:`lint_loaded` and
    :func:`derive`."""
    from roce_tune.gcpause import gc_paused
    from roce_tune.inventory.topology import build_topology

    with gc_paused():
        return build_topology(loaded.inventory)


def lint_loaded(loaded: LoadedInventory, catalog: Catalog, topo: Topology | None = None,
                errors_only: bool = False) -> list[Finding]:
    """Stage ``lint``: the inventory rules (RT0xx/RT1xx); ``topo`` from :func:`topology` (built when None);
    ``errors_only``: run only the rules that can report an error (the same pass/fail, fewer warnings).

    Returns:
        the warnings and infos (carried into the plan).

    Raises:
        StageError: stage ``lint``, with every error-level finding; nothing is derived.
    """
    from roce_tune.inventory.lint import lint

    findings = lint(loaded, catalog, topology=topo, min_severity=Severity.error if errors_only else None)
    if has_errors(findings):
        raise StageError("lint", [f for f in findings if f.severity is Severity.error])
    return findings


def derive(loaded: LoadedInventory, catalog: Catalog, lint_findings: list[Finding] | None = None,
           inventory: Inventory | None = None, topo: Topology | None = None,
           findings_only: bool = False) -> Plan:
    """Stage ``derive``: the tuner's plan for a linted inventory (``inventory`` replaces the loaded one,
    e.g. with changed overrides; ``topo``, lint's topology of the same inventory, is reused when given).
    The plan may carry error-level safety findings: see :func:`plan_errors`. ``findings_only``: the same
    findings from a plan without host plans whose repeated switches share port plans (``roce-tune lint``;
    see :func:`roce_tune.tuner.compose.build_plan`).

    Raises:
        StageError: stage ``derive``, RT299 when the tuner fails on an input no lint rule caught.
    """
    from roce_tune.tuner.compose import build_plan

    try:
        return build_plan(inventory or loaded.inventory, catalog, inventory_file=str(loaded.path),
                          inventory_sha256=loaded.sha256, lint_findings=lint_findings,
                          topology=topo if inventory is None else None, findings_only=findings_only)
    except TUNER_FAILURES as exc:  # an input no lint rule caught: a finding (RT299), never a traceback
        raise StageError("derive", [internal_finding(exc, str(loaded.path), "be derived")]) from None


def derive_plan(loaded: LoadedInventory, catalog: Catalog | None = None) -> Plan:
    """Lint then derive, sharing one topology: the library form of ``roce-tune plan`` without writing.

    Args:
        loaded: the inventory as :func:`load` returns it.
        catalog: default the shipped catalog.

    Raises:
        StageError: lint found errors (all of them are in the exception; nothing is derived), or RT299
            when the tuner fails on an input no lint rule caught.
    """
    from roce_tune.inventory.catalog import load_catalog

    catalog = catalog or load_catalog()
    topo = topology(loaded)
    return derive(loaded, catalog, lint_loaded(loaded, catalog, topo), topo=topo)


def derive_device(loaded: LoadedInventory, device: str, catalog: Catalog | None = None,
                  lint_warnings: bool = True, preceding: bool = True) -> Plan:
    """Lint, then derive only what the values of ``device`` depend on: the library form of
    ``roce-tune explain`` (:func:`roce_tune.tuner.compose.build_partial_plan` says what that is).
    ``lint_warnings`` False runs only the lint rules that can report an error (``explain`` prints values,
    not findings): the same refusal on lint errors, and the plan's findings then lack lint's warnings.
    ``preceding`` False leaves the switches before a switch ``device`` out of the plan (their effects on it
    are still derived; see ``build_partial_plan``): for a caller that reads nothing but ``device``.

    Raises:
        StageError: lint errors, or RT299 when the tuner fails on an input no lint rule caught.
    """
    from roce_tune.gcpause import gc_paused
    from roce_tune.inventory.catalog import load_catalog
    from roce_tune.tuner.compose import build_partial_plan

    catalog = catalog or load_catalog()
    topo = topology(loaded)
    lint_findings = lint_loaded(loaded, catalog, topo, errors_only=not lint_warnings)
    try:
        with gc_paused():
            return build_partial_plan(loaded, catalog, topo, device, lint_findings, preceding=preceding)
    except TUNER_FAILURES as exc:
        raise StageError("derive", [internal_finding(exc, str(loaded.path), "be derived")]) from None


def render(plan: Plan, *, platforms: list[str] | None = None, include_hosts: bool = True,
           scorecards: bool = False, loaded: LoadedInventory | None = None) -> tuple[Plan, Mapping[str, str]]:
    """Stage ``render``: every file of the plan (``scorecards``: simulate each lossless port class for
    plan.md, cached on disk; counted in this stage).

    Returns:
        (the plan with the platforms' render warnings (RT241) added to its findings, relative path -> text).

    Raises:
        StageError: stage ``render``, headline "rendering failed": RT240 for every switch its platform
            cannot express (positioned in ``loaded`` when given), or RT299 for a renderer failure on an
            input no lint rule caught.
    """
    from roce_tune.gcpause import gc_frozen

    with gc_frozen():  # the plan's objects are not walked by every collection the render triggers
        return _render(plan, platforms, include_hosts, scorecards, loaded)


def _render(plan: Plan, platforms: list[str] | None, include_hosts: bool, scorecards: bool,
            loaded: LoadedInventory | None) -> tuple[Plan, Mapping[str, str]]:
    """:func:`render`'s body (it runs with the collector's older objects frozen)."""
    from roce_tune.render.outputs import render_outputs

    cards = None
    if scorecards:
        from roce_tune.simulate.scorecard import plan_scorecards

        cards = plan_scorecards(plan)
    warnings: list[Finding] = []
    try:
        files = render_outputs(plan, platforms=platforms, include_hosts=include_hosts, findings=warnings,
                               scorecards=cards)
    except RoceTuneError as exc:
        found = locate_findings(loaded, exc.findings) if loaded is not None else exc.findings
        raise StageError("render", found, "rendering failed") from None
    except TUNER_FAILURES as exc:
        file = str(loaded.path) if loaded is not None else plan.inventory_file
        raise StageError("render", [internal_finding(exc, file, "be rendered")], "rendering failed") from None
    if warnings:
        plan = plan.model_copy(update={"findings": [*plan.findings, *warnings]})
    return plan, files


def write(files: Mapping[str, str], out_dir: Path, advance: Callable[[int], None] | None = None,
          provenance: Provenance | None = None) -> tuple[Path, WriteStats]:
    """Stage ``write``: publish ``files`` in ``out_dir`` atomically, rewriting only what changed
    (:func:`roce_tune.plandir.write_tree_stats`); ``provenance`` (:func:`plan_inputs` and the summary) is
    kept with them for :func:`reuse_plan`.

    Raises:
        OSError: the directory cannot be written; the plan in force stays as it was.
    """
    from roce_tune.plandir import write_tree_stats

    return write_tree_stats(files, out_dir, advance, provenance)


# ------------------------------------------------------------------------------------ unchanged re-plan

#: third-party packages whose version can change a rendered byte (templates, JSON encoding, models)
_RENDERING_DISTRIBUTIONS = ("jinja2", "orjson", "pydantic", "pydantic-core", "ruamel.yaml", "pyyaml")


@lru_cache(maxsize=1)
def _code_digest() -> str:
    """A digest of the roce-tune code, templates and catalog in use (path, size, mtime of every file; no file
    read): a changed or reinstalled roce-tune never reuses a plan made by another, even at one version."""
    import roce_tune
    from roce_tune.platforms.templating import templates_dir

    h = hashlib.sha256()
    for root in dict.fromkeys((Path(roce_tune.__file__).resolve().parent, templates_dir())):
        for dirpath, dirnames, filenames in os.walk(root):
            dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
            for name in sorted(filenames):
                st = os.stat(os.path.join(dirpath, name))
                h.update(f"{os.path.relpath(os.path.join(dirpath, name), root)}"
                         f"\0{st.st_size}\0{st.st_mtime_ns}\n".encode())
    return h.hexdigest()


def _versions() -> list[str]:
    out = [f"python {sys.version}"]
    for dist in _RENDERING_DISTRIBUTIONS:
        try:
            out.append(f"{dist} {metadata.version(dist)}")
        except metadata.PackageNotFoundError:
            out.append(f"{dist} -")
    return out


def plan_inputs(path: Path, inventory_sha256: str, *, platforms: list[str] | None, scorecards: bool,
                include_hosts: bool = True) -> str:
    """A digest of everything ``roce-tune plan`` makes a plan directory from: the inventory's path (plan.json
    names it) and the sha256 of its bytes (as loaded), roce-tune's version and code (:func:`_code_digest`:
    code, templates, catalog), the rendering libraries' versions and the options. Equal digests give
    byte-identical files."""
    import roce_tune

    parts = [inventory_sha256, str(path), roce_tune.__version__, _code_digest(),
             *_versions(), f"platforms {sorted(platforms) if platforms else 'all'}",
             f"scorecards {scorecards}", f"hosts {include_hosts}"]
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()


def reuse_plan(path: Path, out_dir: Path, *, platforms: list[str] | None = None,
               scorecards: bool = True) -> PlanSummary | None:
    """The summary of the plan in force in ``out_dir`` when it was made from exactly these inputs
    (:func:`plan_inputs`) and its files are intact (:func:`roce_tune.plandir.reusable`), so ``roce-tune plan``
    can skip every stage; None = plan it (:func:`plan_inventory`). Nothing is loaded, derived or written.

    Returns:
        ``{"facts", "findings", "files"}`` as :func:`roce_tune.render.summary.plan_summary` made them.

    Raises:
        OSError: the inventory cannot be read.
    """
    if not out_dir.is_dir():
        return None
    sha256 = hashlib.sha256(path.read_bytes()).hexdigest()
    from roce_tune.plandir import reusable
    from roce_tune.render.summary import as_plan_summary

    return as_plan_summary(reusable(out_dir, plan_inputs(path, sha256, platforms=platforms,
                                                         scorecards=scorecards)))


# --------------------------------------------------------------------------------------- whole pipelines


@dataclass
class PlanResult:
    """What :func:`plan_inventory` produced: the inventory, the plan (with render warnings), its files, what
    ``roce-tune plan`` prints of it (kept in the manifest for :func:`reuse_plan`), where they were written and
    what the write did (None when nothing was written)."""

    loaded: LoadedInventory
    plan: Plan
    files: Mapping[str, str]
    summary: PlanSummary
    out_dir: Path | None = None
    written: WriteStats | None = None


def derive_inventory(path: Path, catalog: Catalog | None = None, timings: Timings | None = None,
                     progress: StageProgress | None = None) -> tuple[LoadedInventory, Plan]:
    """Stages load, lint, derive.

    Raises:
        StageError: the failing stage's findings (load, lint, or RT299 from derive). A plan with
            error-level findings is returned: the caller decides (:func:`plan_errors`).
    """
    from roce_tune.inventory.catalog import load_catalog

    with _stage("load", timings, progress):
        loaded = load(path)
        catalog = catalog or load_catalog()
    with _stage("lint", timings, progress):
        topo = topology(loaded)
        lint_findings = lint_loaded(loaded, catalog, topo)
    with _stage("derive", timings, progress):
        plan = derive(loaded, catalog, lint_findings, topo=topo)  # the topology lint resolved, not a second
    return loaded, plan


def plan_inventory(path: Path, out_dir: Path | None, *, platforms: list[str] | None = None,
                   scorecards: bool = True, timings: Timings | None = None,
                   progress: StageProgress | None = None) -> PlanResult:
    """``roce-tune plan``: load, lint, derive, render and (``out_dir`` given) write, recording what the
    plan was made from and its summary (:func:`reuse_plan` reads them back on the next run).

    Raises:
        StageError: a stage failed; nothing was written. A plan with error-level findings fails stage
            ``derive`` with headline "plan has error-level findings" (findings at file:line:col).
        OSError: the output directory cannot be written (the plan in force stays as it was).
    """
    loaded, plan = derive_inventory(path, None, timings, progress)
    errors = plan_errors(plan)
    if errors:
        raise StageError("derive", locate_findings(loaded, errors), "plan has error-level findings")
    with _stage("render", timings, progress):
        plan, files = render(plan, platforms=platforms, scorecards=scorecards, loaded=loaded)
    from roce_tune.render.summary import plan_summary

    result = PlanResult(loaded=loaded, plan=plan, files=files, summary=plan_summary(
        plan, files, lambda shown: locate_findings(loaded, shown)))
    if out_dir is not None:
        with _stage("write", timings, progress, total=len(files)) as advance:
            inputs = plan_inputs(path, loaded.sha256, platforms=platforms, scorecards=scorecards)
            from roce_tune.plandir import Provenance

            provenance = Provenance(inputs, cast("dict[str, object]", result.summary))
            result.out_dir, result.written = write(files, out_dir, advance, provenance)
    return result


# ----------------------------------------------------------------------------------------- plan directory


def missing_device_files(plan: Plan, files: Mapping[str, str]) -> dict[str, list[str]]:
    """Devices of ``plan`` whose rendered files are not in ``files``.

    Every host needs ``hosts/<name>.sh`` (and, when that is a data file, the shared script it sources; a
    self-contained script of an older roce-tune needs none), and ``hosts/<name>.nccl.env`` if its NCCL
    environment is not just the common ``nccl.env``. A switch needs its platform's
    desired-config file (the platform's ``push.desired_file``), unless no switch of its platform has one
    (``plan --platform-only`` left that platform out).

    Returns:
        device name -> missing relative paths (empty when the plan is complete).
    """
    from roce_tune.platforms import HOST_PLATFORM, get_platform, platform
    from roce_tune.render.outputs import per_host_nccl_env

    desired = {sw.name: f"switches/{platform(sw.platform).push.desired_file}".format(name=sw.name)
               for sw in plan.switches}
    rendered = {sw.platform for sw in plan.switches if desired[sw.name] in files}
    missing: dict[str, list[str]] = {}
    for sw in plan.switches:
        if sw.platform in rendered and desired[sw.name] not in files:
            missing[sw.name] = [desired[sw.name]]
    host = get_platform(HOST_PLATFORM)
    shared = f"hosts/{host.SHARED_SCRIPT}"
    own_env = set(per_host_nccl_env(plan))
    for h in plan.hosts:
        wanted = [f"hosts/{h.name}.sh"] + ([f"hosts/{h.name}.nccl.env"] if h.name in own_env else [])
        lacking = [rel for rel in wanted if rel not in files]
        if host.SHARED_MARKER in files.get(f"hosts/{h.name}.sh", "") and shared not in files:
            lacking.append(shared)  # a data file without the shared script it sources
        if lacking:
            missing[h.name] = lacking
    return missing


@dataclass
class PlanDir:
    """One complete plan directory, as :func:`read_plan_dir` read it.

    Attributes:
        path: the output directory given (``out/<site>``).
        root: the directory the files came from (the version ``.current`` points at, or ``path`` itself
            for the layout of roce-tune versions before ``.current``).
        layout: ``versioned``, ``sums`` (real entries with ``SHA256SUMS``) or ``legacy`` (no checksums).
        plan: the plan (``plan.json``).
        files: relative path -> text of every file (``plan.json``, ``plan.md``, ``switches/…``, ``hosts/…``,
            ``nccl.env``); every one checked against ``SHA256SUMS`` when the directory has it.
        sha256: relative path -> verified sha256 (empty for ``legacy``).
    """

    path: Path
    root: Path
    layout: str
    plan: Plan
    files: dict[str, str]
    sha256: dict[str, str]

    def inventory(self) -> LoadedInventory | None:
        """The inventory the plan came from, when ``plan.inventory_file`` still exists with the same sha256
        (what ``verify --adjust`` and ``audit`` need); None otherwise.

        Raises:
            RoceTuneError: the file exists, unchanged, but no longer loads (e.g. a catalog change).
        """
        from roce_tune.inventory.loader import load_inventory

        inv_path = Path(self.plan.inventory_file)
        if not inv_path.is_file():
            return None
        loaded = load_inventory(inv_path)
        return loaded if loaded.sha256 == self.plan.inventory_sha256 else None


def read_plan_dir(path: Path, *, require_device_files: bool = True) -> PlanDir:
    """Read the plan in force in the plan directory ``path``: plan, device files, checksums verified.

    Args:
        path: an output directory of ``roce-tune plan`` (any layout it ever wrote).
        require_device_files: refuse a plan whose devices lack their files (apply, verify, audit); False
            for a reader that only needs ``plan.json``.

    Raises:
        PlanDirError: the directory does not hold one complete plan: no ``plan.json``; a file missing,
            edited (sha256 differs from ``SHA256SUMS``) or not listed there; leftovers of an interrupted
            write; ``plan.json`` not a plan; or a device's files missing (each device and file named).
        OSError: a file cannot be read.
    """
    from roce_tune.plan import plan_from_json
    from roce_tune.plandir import PlanDirError, read_version

    version: PlanFiles = read_version(path)
    try:
        plan = plan_from_json(version.files["plan.json"])
    except ValueError as exc:
        raise PlanDirError(f"{version.root / 'plan.json'}: not a roce-tune plan: {exc}") from None
    if require_device_files:
        missing = missing_device_files(plan, version.files)
        if missing:
            listed = [f"{name} ({', '.join(rels)})" for name, rels in missing.items()]
            shown = "; ".join(listed[:10]) + (
                f"; and {len(listed) - 10} more devices" if len(listed) > 10 else "")
            raise PlanDirError(f"incomplete plan: {len(missing)} device(s) lack their files: {shown}; "
                               "nothing was done. Run `roce-tune plan` again")
    return PlanDir(path=path, root=version.root, layout=version.layout, plan=plan, files=version.files,
                   sha256=version.sha256)


@dataclass
class Source:
    """What apply, verify and audit act on: the plan of an inventory (derived now) or of a plan directory.

    Attributes:
        plan: the plan (never with error-level findings).
        files: its rendered files (relative path -> text); None when not asked for.
        loaded: the inventory (for a plan directory: the one it came from, if unchanged; else None).
        plan_dir: the plan directory read, or None for an inventory.
    """

    plan: Plan
    files: Mapping[str, str] | None
    loaded: LoadedInventory | None
    plan_dir: PlanDir | None = None


def open_source(source: Path, *, files: bool = True, inventory: bool = False) -> Source:
    """The plan (and, with ``files``, its rendered files) of an inventory file or a plan directory.

    A plan directory is read by :func:`read_plan_dir` (the files a reviewer approved, never re-rendered);
    with ``inventory`` its inventory is loaded too when unchanged since the plan. An inventory is planned
    now (load, lint, derive, and render when ``files``).

    Raises:
        StageError: the inventory does not load, lint, derive or render cleanly.
        RoceTuneError: the plan has error-level findings (all listed).
        PlanDirError: the plan directory does not hold one complete plan (see :func:`read_plan_dir`).
        OSError: a file cannot be read.
    """
    if source.is_dir():
        pd = read_plan_dir(source)
        src = Source(plan=pd.plan, files=pd.files, loaded=pd.inventory() if inventory else None, plan_dir=pd)
    else:
        loaded, plan = derive_inventory(source)
        src = Source(plan=plan, files=None, loaded=loaded)
    errors = plan_errors(src.plan)
    if errors:
        raise RoceTuneError(errors)
    if files and src.files is None:
        src.plan, src.files = render(src.plan, loaded=src.loaded)
    return src
