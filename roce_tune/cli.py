"""``roce-tune`` command line: argument parsing and printing only; every command calls a library function.

Exit codes: 0 success, 1 error-level findings (or failed runs), 2 usage errors; also 2 when a command could
not check what it exists to check (``audit`` that read nothing, ``verify`` INCOMPLETE).
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable, Mapping
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn, ParamSpec, TypeVar

import typer
from rich.console import Console
from rich.text import Text

from roce_tune import __version__
from roce_tune.platforms import DEFAULT_SWITCH_PLATFORM

if TYPE_CHECKING:
    from rich.table import Table

    from roce_tune.deploy.drivers import PushOptions
    from roce_tune.deploy.runner import SessionTiming, StopRequest, Target
    from roce_tune.findings import Finding
    from roce_tune.inventory.loader import LoadedInventory
    from roce_tune.inventory.skeleton import SkeletonOptions
    from roce_tune.plan import Plan
    from roce_tune.plandir import WriteStats
    from roce_tune.render.summary import PlanSummary
    from roce_tune.simulate import DcqcnParams, EcnSetting, Scenario, SeedSummary
    from roce_tune.simulate.settings import PlanPort

# pretty_exceptions_show_locals=False: typer < 0.16 printed a crash's local variables (an API token among
# them, e.g. in import netbox) by default
app = typer.Typer(add_completion=True, no_args_is_help=True, pretty_exceptions_show_locals=False,
                  help="Derive, explain and render lossless RoCEv2 "
                  "settings (PFC, headroom, ECN, DCQCN, watchdog) for GPU cluster fabrics.")
calc_app = typer.Typer(no_args_is_help=True, help="What-if calculators (no inventory needed).")
app.add_typer(calc_app, name="calc")
simulate_app = typer.Typer(no_args_is_help=True,
                           help="Packet-level PFC/ECN/DCQCN simulation of an N:1 bottleneck "
                           "(incast, long-lived flows, a plan's port); see docs/simulate.md.")
app.add_typer(simulate_app, name="simulate")
import_app = typer.Typer(no_args_is_help=True,
                         help="Build or complete an inventory from where the fabric is already "
                         "described: a cabling plan (CSV), LLDP captures or NetBox; see docs/import.md.")
app.add_typer(import_app, name="import")
#: width of tables when output is not a terminal (CI logs, pipes): rich would use 80 and cut profile
#: names and findings; a terminal's own width (or $COLUMNS) still wins
PIPE_WIDTH = 160


def _console(stderr: bool = False) -> Console:
    stream = sys.stderr if stderr else sys.stdout
    width = None if stream.isatty() or os.environ.get("COLUMNS") else PIPE_WIDTH
    return Console(stderr=stderr, highlight=False, soft_wrap=True, width=width)


out = _console()
err = _console(stderr=True)


def _table() -> Table:
    """A table with a bold header (rich.table is imported here: most commands print none)."""
    from rich.table import Table

    return Table(show_header=True, header_style="bold")


class OutFormat(str, Enum):
    """Output of a command: a table for people or JSON with unit-named keys."""

    text = "text"
    json = "json"


class LintFormat(str, Enum):
    """Lint output: text, JSON, or GitHub workflow annotations (``::error file=…,line=…::``)."""

    text = "text"
    json = "json"
    github = "github"


def _version(value: bool) -> None:
    if value:
        print(f"roce-tune {__version__}")
        raise typer.Exit(0)


@app.callback()
def main_callback(
    version: bool = typer.Option(False, "--version", callback=_version, is_eager=True,
                                 help="Print the version."),
) -> None:
    """roce-tune."""


def _fail(findings: list[Finding], fmt: str = "text", code: int = 1) -> NoReturn:
    from roce_tune.inventory.report import format_findings

    sys.stderr.write(format_findings(findings, fmt if fmt in ("text", "json", "github") else "text"))
    if not format_findings(findings, "text").endswith("\n"):
        sys.stderr.write("\n")
    raise typer.Exit(code)


def _load(path: Path) -> LoadedInventory:
    from roce_tune.pipeline import StageError, load

    try:
        return load(path)
    except StageError as exc:
        _fail(exc.findings)


@app.command()
def lint(
    # no exists=True: a missing, unreadable or directory path is finding RT005 in the chosen format (CI
    # reads --format json/github), and the other files are still linted
    inventories: list[Path] = typer.Argument(..., help="Inventory YAML files."),
    fmt: LintFormat = typer.Option(LintFormat.text, "--format", help="text, json or github annotations."),
    strict: bool = typer.Option(False, "--strict", help="Warnings fail too."),
    no_plan_checks: bool = typer.Option(False, "--no-plan-checks",
                                        help="Skip the tuner's safety checks (RT2xx); inventory rules only."),
    lldp_dir: Path | None = typer.Option(None, "--lldp", help="Directory of LLDP captures (<device>.txt): "
                                            "compare the declared cabling with what LLDP sees "
                                            "(RT130-RT135)."),
) -> None:
    """Validate inventories: schema, names, units, semantic rules (RT0xx/RT1xx) and the plan's safety
    checks (RT2xx: headroom budget, ECN below the PFC trigger, deadlock, consistency). A path that cannot be
    read (missing, a directory, no permission) is RT005 and the others are linted; exit 1 on any error,
    2 on a usage error (unknown option or format)."""
    from roce_tune.checks import check_inventory
    from roce_tune.findings import RoceTuneError, Severity, has_errors
    from roce_tune.inventory.loader import load_inventory
    from roce_tune.inventory.report import format_findings

    findings: list[Finding] = []
    view = None
    if lldp_dir is not None:
        from roce_tune.inventory.lldp import read_lldp_dir

        try:
            view = read_lldp_dir(lldp_dir)
        except RoceTuneError as exc:
            _fail(exc.findings, fmt.value)
    for path in inventories:
        try:
            loaded = load_inventory(path)
            findings.extend(check_inventory(loaded, plan_checks=not no_plan_checks))
            if view is not None:
                from roce_tune.inventory.lldp_lint import check_lldp

                findings.extend(check_lldp(loaded, view))
        except RoceTuneError as exc:
            findings.extend(exc.findings)
    text = format_findings(findings, fmt.value)
    if text:
        sys.stdout.write(text if text.endswith("\n") else text + "\n")
    failing = has_errors(findings) or (strict and any(f.severity is Severity.warning for f in findings))
    if fmt is LintFormat.text:
        n_err = sum(f.severity is Severity.error for f in findings)
        n_warn = sum(f.severity is Severity.warning for f in findings)
        err.print(f"{len(inventories)} inventory file(s): {n_err} error(s), {n_warn} warning(s)")
    raise typer.Exit(1 if failing else 0)


@app.command()
def schema(plan: bool = typer.Option(False, "--plan", help="Print the plan's JSON Schema instead.")) -> None:
    """Print the inventory JSON Schema (or the plan's with --plan)."""
    if plan:
        from roce_tune.plan import plan_json_schema

        print(json.dumps(plan_json_schema(), indent=2, sort_keys=True))
    else:
        from roce_tune.inventory.schema import inventory_json_schema_text

        sys.stdout.write(inventory_json_schema_text())


@app.command()
def expand(
    inventory: Path = typer.Argument(..., help="Inventory with a fabric: intent section."),
    out: Path | None = typer.Option(None, "--out",
                                    help="Write the full form here (atomically) instead of stdout."),
) -> None:
    """Print (or write with --out) the full form of an inventory: its fabric intent expanded into switches,
    links and hosts."""
    from roce_tune.findings import RoceTuneError
    from roce_tune.inventory.intent import full_form_yaml
    from roce_tune.inventory.loader import full_form_data

    if out is not None and _same_file(out, inventory):
        err.print(f"error: --out {out} is the inventory it expands: the full form would replace its fabric: "
                  "intent and comments; write it to another file", markup=False)
        raise typer.Exit(2)
    try:
        data = full_form_data(inventory)
    except RoceTuneError as exc:
        _fail(exc.findings)
    _write_inventory(full_form_yaml(data, str(inventory)), out)


def _same_file(a: Path, b: Path) -> bool:
    """Whether ``a`` and ``b`` name one existing file (through links); False when either cannot be read."""
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


@app.command()
def plan(
    inventory: Path = typer.Argument(..., exists=True, dir_okay=False, help="Inventory YAML."),
    out_dir: Path | None = typer.Option(None, "--out",
                                        help="Output directory (default out/<inventory name>)."),
    platform_only: list[str] = typer.Option([], "--platform-only",
                                            help="Render only these switch platforms."),
    fmt: OutFormat = typer.Option(OutFormat.text, "--format", help="Summary as text or json."),
    no_scorecard: bool = typer.Option(False, "--no-scorecard",
                                      help="Skip the simulator scorecards in plan.md (saves their plan "
                                      "time)."),
    timings: bool = typer.Option(False, "--timings",
                                 help="Print seconds per stage (load, lint, derive, render, "
                                 "write) and the files written on one line to stderr."),
    force: bool = typer.Option(False, "--force",
                               help="Plan again even when the plan in force was made from the same inputs "
                               "and its files are intact (unchanged files are still not rewritten)."),
) -> None:
    """Validate, derive, render and write configs plus a reviewable plan (with simulator scorecards per
    lossless port class in plan.md, cached on disk; see docs/simulate.md). Only changed files are \
rewritten."""
    from roce_tune.pipeline import StageError, StageProgress, Timings, plan_inventory, reuse_plan
    from roce_tune.plandir import WriteStats
    from roce_tune.platforms import SWITCH_PLATFORMS

    bad = [p for p in platform_only if p not in SWITCH_PLATFORMS]
    if bad:
        err.print(f"error: unknown platform(s) {', '.join(bad)}; known: {', '.join(SWITCH_PLATFORMS)}")
        raise typer.Exit(2)
    clock = Timings()
    target = out_dir or Path("out") / inventory.stem
    platforms, scorecards = platform_only or None, not no_scorecard
    try:
        summary = None
        if not force:
            with clock.stage("reuse"):  # the plan in force made from these very inputs, intact: nothing to do
                summary = reuse_plan(inventory, target, platforms=platforms, scorecards=scorecards)
        done = ("files: plan unchanged, nothing written (inventory, roce-tune and options as for the plan in "
                "force, its files intact: nothing derived)")
        stats = WriteStats()  # a reused plan: nothing written
        if summary is None:
            result = plan_inventory(inventory, target, platforms=platforms, scorecards=scorecards,
                                    timings=clock, progress=StageProgress(err))
            summary, target = result.summary, result.out_dir or target
            stats = result.written or stats
            done = stats.describe()
    except StageError as exc:
        if exc.headline:
            err.print(f"[bold red]{exc.headline}; nothing written[/]")
        _fail(exc.findings)
    except OSError as exc:
        err.print(f"error: cannot write the plan: {exc}")
        raise typer.Exit(1) from None
    if timings:
        err.print(f"{clock.summary()}; {done}", markup=False, highlight=False)
    _warn_idle_platforms(platform_only, summary["facts"]["switches_per_platform"], inventory)
    _print_plan(summary, fmt, target.absolute(), stats)


def _warn_idle_platforms(platform_only: list[str], in_use: Mapping[str, int], inventory: Path) -> None:
    """Warn (stderr) about each ``--platform-only`` platform no switch of the inventory runs: the plan then
    has no switch config for it, which is rarely what was meant."""
    for name in dict.fromkeys(platform_only):
        if name not in in_use:
            err.print(f"warning: --platform-only {name}: no switch of {inventory} runs it (platforms here: "
                      f"{', '.join(in_use) or 'none'}); no switch config written for it",
                      markup=False, highlight=False)


def _print_plan(summary: PlanSummary, fmt: OutFormat, target: Path, stats: WriteStats) -> None:
    """The summary of a written plan: JSON, or the table and the non-info findings (stderr). What the write
    did (``stats``): :meth:`WriteStats.changes` (what a re-plan changed against the plan in force) on its own
    line, and in JSON as ``changes`` when not empty, beside :meth:`WriteStats.as_json`'s fields."""
    from roce_tune.render.summary import summary_json, summary_table

    changes = stats.changes()
    if fmt is OutFormat.json:
        doc = summary_json(summary, target)
        doc.update(stats.as_json(summary["files"]))
        if changes:
            doc["changes"] = changes
        print(json.dumps(doc, indent=2, sort_keys=True))
    else:
        out.print(summary_table(summary))
        for f in summary["findings"]:
            err.print(f"[yellow]{f}[/]")
        out.print(stats.headline(len(summary["files"]), f"[bold]{target}[/]"))
        if changes:
            out.print(changes, markup=False, highlight=False)


@app.command()
def explain(
    inventory: Path = typer.Argument(..., exists=True, dir_okay=False),
    target: str = typer.Argument(..., help="DEVICE or DEVICE:PORT (a host's port is its netdev)."),
    param: str | None = typer.Argument(None, help="e.g. xoff_bytes, kmax_bytes, detection_ms, NCCL_IB_TC."),
    no_scorecard: bool = typer.Option(False, "--no-scorecard",
                                      help="Do not simulate the port class for ECN values."),
) -> None:
    """Print the rationale for one value (or every explained value of a device/port). For a switch port's
    ECN values (kmin_bytes, kmax_bytes, pmax_percent) it also prints the port class's simulator scorecard."""
    from roce_tune.explain import ExplainError, explanation_lines
    from roce_tune.explain import explain as run_explain
    from roce_tune.findings import RoceTuneError
    from roce_tune.pipeline import derive_device, derive_plan

    loaded = _load(inventory)
    scorecard = not no_scorecard and param in ("kmin_bytes", "kmax_bytes", "pmax_percent")
    try:  # only what the device's values depend on, not the whole plan; prints no findings
        # the scorecard is plan.md's for the port's class: the class takes the DCQCN of the NIC behind the
        # port and counts ports over the fabric, so it needs the whole plan (hosts included)
        device = target.partition(":")[0]
        the_plan = (derive_plan(loaded) if scorecard
                    else derive_device(loaded, device, lint_warnings=False, preceding=False))
    except RoceTuneError as exc:
        _fail(exc.findings)
    try:
        entries = run_explain(the_plan, target, param)
    except ExplainError as exc:
        err.print(f"error: {exc}")
        raise typer.Exit(2) from None
    for e in entries:
        head, *rest = explanation_lines(e)
        out.print(f"[bold]{head}[/]")
        for line in rest:
            out.print(line)
    if scorecard:
        _explain_scorecard(the_plan, target)
    _leave_to_exit(loaded, the_plan)


#: True once :func:`main` (the console script, ``python -m roce_tune.cli``) runs the command: this process
#: ends with it, so :func:`_leave_to_exit` may leave memory to the exit
_PROCESS_ENDS_WITH_COMMAND = False


def _leave_to_exit(*objects: object) -> None:
    """Leave ``objects`` (an inventory and plan the command is done with) to the process's exit instead of
    freeing them object by object: a 4,096-host inventory and plan are about a million objects, and
    deallocating them one at a time costs ~0.05 s CPU (``benchmarks/bench_plan.py --hosts 4096``, explain)
    that the operating system saves by dropping the address space at once. They are put in a reference cycle
    moved to the collector's permanent generation (:func:`gc.freeze`), which neither reference counting nor
    interpreter shutdown frees. Only when the process ends with the command (:func:`main`): a caller that
    runs ``app`` in its own process (``CliRunner``, an embedding tool) keeps its memory and its collector
    as they were.
    """
    if not _PROCESS_ENDS_WITH_COMMAND:
        return
    import gc

    keep: list[object] = [*objects]
    keep.append(keep)
    gc.freeze()


def _explain_scorecard(the_plan: Plan, target: str) -> None:
    """Print the simulator scorecard of the port class of ``target`` (DEVICE:PORT, a lossless switch port)."""
    from roce_tune.render.review import scorecard_caveat
    from roce_tune.simulate.scorecard import port_class_of, scorecard, scorecard_lines

    device, _, port = target.partition(":")
    pc = port_class_of(the_plan, device, port) if port else None
    if pc is not None:
        out.print("")
        out.print("\n".join(scorecard_caveat(the_plan) + scorecard_lines(scorecard(pc))), markup=False,
                  highlight=False)


def _print_calc(result: dict[str, object], fmt: OutFormat) -> None:
    if fmt is OutFormat.json:
        print(json.dumps(result, indent=2, sort_keys=True))
        return
    table = _table()
    table.add_column("value")
    table.add_column("result", justify="right")
    table.add_column("why")
    rationale = result.get("rationale", {})
    for k, v in result.items():
        if k == "rationale" or isinstance(v, (dict, list)):
            continue
        why = rationale.get(k, {}) if isinstance(rationale, dict) else {}
        table.add_row(k, str(v), (why.get("formula", "") + (f" [{why.get('source')}]" if why else "")))
    out.print(table)


_P = ParamSpec("_P")
_R = TypeVar("_R")


def _calc_call(fn: Callable[_P, _R], *args: _P.args, **kwargs: _P.kwargs) -> _R:
    try:
        return fn(*args, **kwargs)
    except (ValueError, KeyError) as exc:
        err.print(f"error: {exc}")
        raise typer.Exit(2) from None


def _calc_option(flag: str, check: Callable[[Any], object], value: object) -> None:
    """Refuse a calc option's value before the calculation: ``check`` (a roce_tune.units parser or a range
    check) raising ValueError ends the command with exit 2 and ``error: FLAG: why``, so the message names the
    option the value came from. None (an option not given) is not checked."""
    if value is None:
        return
    try:
        check(value)
    except ValueError as exc:
        err.print(f"error: {flag}: {exc}", markup=False, highlight=False)
        raise typer.Exit(2) from None


def _above_zero(parse: Callable[[Any], float], what: str) -> Callable[[Any], float]:
    """``parse`` that also refuses 0: a base RTT of 0 µs makes no BDP and a PFC trigger of 0 B pauses at the
    first byte, leaving ECN no room (Kmin = Kmax = 0 B)."""
    def check(value: Any) -> float:
        parsed = parse(value)
        if parsed <= 0:
            raise ValueError(f"{value!r}: the {what} must be above 0")
        return parsed
    return check


@calc_app.command("headroom")
def calc_headroom(
    asic: str = typer.Option(..., "--asic", help="catalog ASIC id, e.g. spectrum-3"),
    speed: str = typer.Option(..., "--speed", help="100G, 400G or Mb/s like 400000"),
    cable: str = typer.Option(..., "--cable", help="40m or 40"),
    mtu: int = typer.Option(9216, "--mtu"),
    model: str | None = typer.Option(None, "--model", help="ieee, sonic-static or sonic-lua (SONiC's Lua "
                                     "script); default: the model plan uses for the ASIC (sonic-static on "
                                     "Spectrum-1/2/3, else ieee)"),
    fmt: OutFormat = typer.Option(OutFormat.text, "--format"),
) -> None:
    """PFC headroom (xon/xoff/size) for one port.

    Warns (on stderr, exit 0; the JSON gains a ``warnings`` list) when the headroom does not fit the ASIC
    as plan would find it: RT201 (the per-port maximum), RT202 (the ASIC's whole buffer, from the catalog).
    """
    from roce_tune.inventory.catalog import load_catalog
    from roce_tune.tuner.buffers import check_calc_headroom
    from roce_tune.tuner.headroom import calc_headroom as fn
    from roce_tune.tuner.headroom import check_port_mtu
    from roce_tune.units import parse_length_m, parse_speed_gbps

    _calc_option("--speed", parse_speed_gbps, speed)
    _calc_option("--cable", parse_length_m, cable)
    _calc_option("--mtu", check_port_mtu, mtu)
    hr = _calc_call(fn, asic, speed, cable, mtu=mtu, model=model)
    warnings = check_calc_headroom(load_catalog().asic(asic), hr)
    data = hr.model_dump(mode="json")
    if warnings:
        data["warnings"] = [f.model_dump(mode="json", exclude_none=True) for f in warnings]
    _print_calc(data, fmt)
    for f in warnings:
        err.print(f"warning {f.rule}: {f.message} (fix: {f.fix})", markup=False, highlight=False)


@calc_app.command("ecn")
def calc_ecn(
    speed: str = typer.Option(..., "--speed"),
    rtt: str = typer.Option("10us", "--rtt", help="base RTT, e.g. 10us"),
    fan_in: int = typer.Option(8, "--fan-in", min=1),
    pfc_trigger: str | None = typer.Option(None, "--pfc-trigger", help="PFC xoff trigger bytes, e.g. 4MB"),
    profile: str = typer.Option("derived", "--profile",
                                help="derived, bdp, nvidia-default, sonic-default, dcqcn-paper"),
    nic: str = typer.Option("connectx-7", "--nic"),
    fmt: OutFormat = typer.Option(OutFormat.text, "--format"),
) -> None:
    """ECN Kmin/Kmax/Pmax for the lossless queue, checked against the DCQCN fixed point."""
    from roce_tune.tuner.ecn import calc_ecn as fn
    from roce_tune.units import parse_bytes, parse_speed_gbps, parse_time_us

    _calc_option("--speed", parse_speed_gbps, speed)
    _calc_option("--rtt", _above_zero(parse_time_us, "base RTT"), rtt)
    _calc_option("--pfc-trigger", _above_zero(parse_bytes, "PFC trigger"), pfc_trigger)
    prof = _calc_call(fn, speed, rtt, fan_in, pfc_trigger_bytes=pfc_trigger, profile=profile, nic_id=nic)
    _print_calc(prof.model_dump(mode="json"), fmt)


@calc_app.command("dcqcn")
def calc_dcqcn(
    speed: str = typer.Option(..., "--speed"),
    nic: str = typer.Option("connectx-7", "--nic"),
    fmt: OutFormat = typer.Option(OutFormat.text, "--format"),
) -> None:
    """DCQCN NIC parameters for a link speed, with firmware defaults."""
    from roce_tune.tuner.dcqcn import nic_speed_gbps
    from roce_tune.tuner.ecn import calc_dcqcn as fn
    from roce_tune.units import parse_speed_gbps

    _calc_option("--speed", parse_speed_gbps, speed)
    dq = _calc_call(fn, _calc_call(nic_speed_gbps, nic, speed), nic_id=nic)
    data = dq.model_dump(mode="json")
    if fmt is OutFormat.json:
        print(json.dumps(data, indent=2, sort_keys=True))
        return
    table = _table()
    for col in ("parameter", "value", "firmware default", "why"):
        table.add_column(col)
    for k, v in sorted(dq.params.items()):
        why = dq.rationale.get(k)
        table.add_row(k, str(v), str(dq.firmware_defaults.get(k, "-")), why.formula if why else "")
    out.print(table)


class SimModel(str, Enum):
    """DCQCN reaction-point model: M (byte counter + CNP pacing) or T (timer only); docs/simulate.md."""

    M = "M"
    T = "T"


class SimTopology(str, Enum):
    """One switch (N:1 star) or leaf-spine-leaf with an uplink bottleneck."""

    star = "star"
    leaf_spine_leaf = "leaf-spine-leaf"


#: a simulated link as the CLI resolved it: speed Gb/s, fan-in, base RTT us, buffer B, PFC alpha, ECN, DCQCN
_SimLink = tuple[int, int, float, int, float, "EcnSetting", "DcqcnParams"]


def _sim_link_of_plan(pp: PlanPort, profile: str | None, ecn: str | None, dcqcn: str | None) -> _SimLink:
    """The link of a plan port (``simulate plan``); ``--profile``/``--ecn``/``--dcqcn`` replace its
    settings (a ``--dcqcn KEY=VALUE,...`` list changes the port's own DCQCN values).

    Raises:
        ValueError: a bad option, or no ``--dcqcn`` for a port whose NICs run without DCQCN (simulating the
            values the plan keeps would show DCQCN acting where it does not).
    """
    from roce_tune.simulate.settings import resolve_dcqcn, resolve_ecn

    speed_gbps, rtt_us, buf, alpha = pp.speed_gbps, pp.base_rtt_us, pp.buffer_bytes, pp.pfc_alpha
    fan_in = pp.fan_in
    ecn_s = pp.ecn if not (profile or ecn) else resolve_ecn(profile, ecn, speed_gbps, fan_in, rtt_us, buf,
                                                            alpha)
    if dcqcn is None and not pp.dcqcn_enabled:
        raise ValueError(f"{pp.device}:{pp.port}: DCQCN is off on the NICs behind it in this plan "
                         "(policy.dcqcn false: PFC alone), and the simulator models senders that react to "
                         "CNPs; give --dcqcn plan (the values the plan keeps for re-enabling), derived or "
                         "firmware to simulate it with DCQCN on")
    dq = pp.dcqcn if dcqcn is None else resolve_dcqcn(dcqcn, speed_gbps, plan=pp.dcqcn)
    return speed_gbps, fan_in, rtt_us, buf, alpha, ecn_s, dq


def _sim_link_of_args(speed: str, fan_in: int, profile: str | None, ecn: str | None, dcqcn: str | None,
                      base_rtt: str, buffer: str | None, pfc_alpha: float) -> _SimLink:
    """The link from the command's arguments; ValueError/KeyError on a bad one."""
    from roce_tune.simulate.model import DEFAULT_BUFFER_BYTES
    from roce_tune.simulate.settings import resolve_dcqcn, resolve_ecn
    from roce_tune.units import parse_bytes, parse_speed_gbps, parse_time_us

    speed_gbps = _sim_option("--speed", parse_speed_gbps, speed)
    rtt_us = _sim_option("--base-rtt", parse_time_us, base_rtt)
    buf = _sim_option("--buffer", parse_bytes, buffer) if buffer is not None else DEFAULT_BUFFER_BYTES
    _check_sim_link(fan_in, rtt_us, buf, pfc_alpha)
    ecn_s = resolve_ecn(profile, ecn, speed_gbps, fan_in, rtt_us, buf, pfc_alpha)
    return speed_gbps, fan_in, rtt_us, buf, pfc_alpha, ecn_s, resolve_dcqcn(dcqcn, speed_gbps)


def _sim_option(option: str, parse: Callable[[str], _R], value: str) -> _R:
    """``parse(value)``, its ValueError prefixed with ``option`` (the simulator takes three byte counts and
    two times: "'1e9' is not a byte count" alone does not say which option was wrong).

    Raises:
        ValueError: ``OPTION: <the parser's message>``.
    """
    try:
        return parse(value)
    except ValueError as exc:
        raise ValueError(f"{option}: {exc}") from None


def _check_sim_link(fan_in: int, rtt_us: float, buffer_bytes: int, pfc_alpha: float) -> None:
    """The link options checked before anything is derived from them (``derived`` ECN reads the pool and
    alpha), so a bad one is named as the engineer wrote it rather than as a failure further on.

    Raises:
        ValueError: fan-in below 1, a base RTT of 0, a shared pool smaller than one data frame, or an alpha
            that is not a finite number above 0.
    """
    import math

    from roce_tune.simulate.model import DEFAULT_HEADER_BYTES, DEFAULT_PAYLOAD_BYTES

    frame = DEFAULT_PAYLOAD_BYTES + DEFAULT_HEADER_BYTES
    if fan_in < 1:
        raise ValueError(f"--fan-in {fan_in}: must be >= 1")
    if not rtt_us > 0:
        raise ValueError(f"--base-rtt {rtt_us:g} us: must be above 0")
    if buffer_bytes < frame:
        raise ValueError(f"--buffer {buffer_bytes} B: the shared lossless pool must hold at least one "
                         f"{frame} B frame ({DEFAULT_PAYLOAD_BYTES} B RoCE payload + "
                         f"{DEFAULT_HEADER_BYTES} B of headers); did you mean KB or MB?")
    if not (math.isfinite(pfc_alpha) and pfc_alpha > 0):
        raise ValueError(f"--pfc-alpha {pfc_alpha:g}: must be a finite number above 0 (alpha = "
                         "2^dynamic_th, e.g. 128 for dynamic_th 7, 0.5 for -1)")


def _sim_json(sc: Scenario, summary: SeedSummary, plan_port: PlanPort | None = None) -> str:
    """The scenario as run (with its ECN and DCQCN settings; for ``simulate plan`` the port, ``DEVICE:PORT``,
    else null) and the seeds' summary, as JSON."""
    incast = sc.kind == "incast"
    ecn_s, dq = sc.ecn, sc.dcqcn
    port = f"{plan_port.device}:{plan_port.port}" if plan_port is not None else None
    data = {"scenario": {"port": port, "kind": sc.kind, "speed_gbps": sc.speed_gbps, "fan_in": sc.fan_in,
                         "model": sc.model,
                         "topology": sc.topology, "base_rtt_us": sc.base_rtt_us,
                         "buffer_bytes": sc.buffer_bytes,
                         "pfc_alpha": sc.pfc_alpha, "headroom_bytes": sc.headroom_effective_bytes,
                         "message_bytes": sc.message_bytes if incast else None,
                         "duration_us": sc.duration_us if not incast else None,
                         "ecn": {"kmin_bytes": ecn_s.kmin_bytes, "kmax_bytes": ecn_s.kmax_bytes,
                                 "pmax_percent": ecn_s.pmax_percent, "label": ecn_s.label},
                         "dcqcn": {k: getattr(dq, k) for k in dq.keys()}, "dcqcn_label": dq.label},
            **summary.to_json()}
    return json.dumps(data, indent=2, sort_keys=True)


def _sim_text(sc: Scenario, summary: SeedSummary, seeds: int, title: str) -> None:
    """Print the scenario, its settings, the median/min/max table over seeds and the paused senders."""
    ecn_s, dq = sc.ecn, sc.dcqcn
    out.print(title or f"{sc.kind} {sc.speed_gbps}G N={sc.fan_in} model {sc.model} ({sc.topology}), "
                       f"{seeds} seed(s)")
    out.print(f"ECN {ecn_s.label}: Kmin {ecn_s.kmin_bytes} B, Kmax {ecn_s.kmax_bytes} B, Pmax "
              f"{ecn_s.pmax_percent:g} %; DCQCN {dq.label}: ai {dq.rpg_ai_rate_mbps:g} / hai "
              f"{dq.rpg_hai_rate_mbps:g} Mb/s, time_reset {dq.rpg_time_reset_us:g} us, byte_reset "
              f"{dq.rpg_byte_reset_bytes} B")
    table = _table()
    for col in ("metric", "median", "min", "max"):
        table.add_column(col, justify="right" if col != "metric" else "left")
    for k in ("efficiency_percent", "slowest_fct_ratio", "utilisation_percent", "pfc_pause_ms",
              "mean_queue_bytes",
              "queue_std_bytes", "peak_queue_bytes", "completion_us"):
        if summary.median[k] is None:
            continue
        table.add_row(k, *(f"{v[k]:.1f}" if k != "slowest_fct_ratio" else f"{v[k]:.2f}"
                           for v in (summary.median, summary.minimum, summary.maximum)))
    out.print(table)
    paused = ", ".join(str(i) for i in summary.paused_senders) or "none"
    out.print(f"senders that received PAUSE (any seed): {paused}")


def _sim_run(kind: str, speed: str, fan_in: int, size: str, profile: str | None, ecn: str | None,
             dcqcn: str | None, model: SimModel, seeds: int, base_rtt: str, buffer: str | None,
             pfc_alpha: float, topology: SimTopology, fmt: OutFormat, title: str = "",
             plan_port: PlanPort | None = None) -> None:
    """Parse, run ``seeds`` seeds, print; every bad argument exits 2 with the reason."""
    from roce_tune.simulate import Scenario, run_seeds
    from roce_tune.units import parse_bytes, parse_time_us

    try:
        if seeds < 1:
            raise ValueError(f"--seeds {seeds}: must be >= 1")
        link = (_sim_link_of_plan(plan_port, profile, ecn, dcqcn) if plan_port is not None
                else _sim_link_of_args(speed, fan_in, profile, ecn, dcqcn, base_rtt, buffer, pfc_alpha))
        speed_gbps, fan_in, rtt_us, buf, alpha, ecn_s, dq = link
        extra: dict[str, object] = (
            {"message_bytes": _sim_option("--message", parse_bytes, size)} if kind == "incast"
            else {"duration_us": _sim_option("--duration", parse_time_us, size)})
        sc = Scenario(kind=kind,  # type: ignore[arg-type]
                      speed_gbps=speed_gbps, fan_in=fan_in, ecn=ecn_s, dcqcn=dq,
                      model=model.value, base_rtt_us=rtt_us, buffer_bytes=buf, pfc_alpha=alpha,
                      topology=topology.value, **extra)  # type: ignore[arg-type]
    except (ValueError, KeyError) as exc:
        err.print(f"error: {exc}")
        raise typer.Exit(2) from None
    summary = run_seeds(sc, seeds)
    if fmt is OutFormat.json:
        print(_sim_json(sc, summary, plan_port))
        return
    _sim_text(sc, summary, seeds, title)


_SIM_PROFILE = typer.Option(None, "--profile",
                            help="derived, bdp, nvidia-default, sonic-default or dcqcn-paper")
_SIM_ECN = typer.Option(None, "--ecn", help="KMIN,KMAX,PMAX e.g. 150KB,1500KB,100 (instead of --profile)")
_SIM_DCQCN = typer.Option(None, "--dcqcn",
                          help="derived (default), firmware, or [derived|firmware,]KEY=VALUE,... (a list "
                               "without a first word changes the default's values)")
_SIM_MODEL = typer.Option(SimModel.M, "--model", help="M: byte counter + CNP pacing; T: timer only")
_SIM_RTT = typer.Option("6.164us", "--base-rtt", help="propagation round trip without serialisation")
_SIM_BUFFER = typer.Option(None, "--buffer", help="shared lossless pool in bytes (default 5306864)")
_SIM_ALPHA = typer.Option(128.0, "--pfc-alpha", help="dynamic threshold alpha (XOFF at alpha x free pool)")
_SIM_TOPO = typer.Option(SimTopology.star, "--topology", help="star or leaf-spine-leaf (uplink bottleneck)")


@simulate_app.command("incast")
def simulate_incast(
    speed: str = typer.Option("100G", "--speed"),
    fan_in: int = typer.Option(16, "--fan-in"),
    message: str = typer.Option("8MB", "--message", help="bytes per sender, e.g. 1MB"),
    profile: str | None = _SIM_PROFILE, ecn: str | None = _SIM_ECN, dcqcn: str | None = _SIM_DCQCN,
    model: SimModel = _SIM_MODEL, seeds: int = typer.Option(5, "--seeds"), base_rtt: str = _SIM_RTT,
    buffer: str | None = _SIM_BUFFER, pfc_alpha: float = _SIM_ALPHA, topology: SimTopology = _SIM_TOPO,
    fmt: OutFormat = typer.Option(OutFormat.text, "--format"),
) -> None:
    """N:1 incast: every sender sends one message; efficiency = ideal / actual completion."""
    _sim_run("incast", speed, fan_in, message, profile, ecn, dcqcn, model, seeds, base_rtt, buffer, pfc_alpha,
             topology, fmt)


@simulate_app.command("long-lived")
def simulate_long_lived(
    speed: str = typer.Option("100G", "--speed"),
    fan_in: int = typer.Option(16, "--fan-in"),
    duration: str = typer.Option("40ms", "--duration", help="run length; statistics over the second half"),
    profile: str | None = _SIM_PROFILE, ecn: str | None = _SIM_ECN, dcqcn: str | None = _SIM_DCQCN,
    model: SimModel = _SIM_MODEL, seeds: int = typer.Option(3, "--seeds"), base_rtt: str = _SIM_RTT,
    buffer: str | None = _SIM_BUFFER, pfc_alpha: float = _SIM_ALPHA, topology: SimTopology = _SIM_TOPO,
    fmt: OutFormat = typer.Option(OutFormat.text, "--format"),
) -> None:
    """N long-lived flows into one port: utilisation, queue and PFC pause over the second half."""
    _sim_run("long-lived", speed, fan_in, duration, profile, ecn, dcqcn, model, seeds, base_rtt, buffer,
             pfc_alpha,
             topology, fmt)


@simulate_app.command("plan")
def simulate_plan(
    plan_dir: Path = typer.Argument(..., help="a directory written by `roce-tune plan` (reads plan.json)"),
    port: str = typer.Option(..., "--port", help="DEVICE:PORT, e.g. leaf1:Ethernet0"),
    kind: str = typer.Option("incast", "--kind", help="incast or long-lived"),
    message: str | None = typer.Option(None, "--message", help="bytes per sender, incast (default 8MB)"),
    duration: str | None = typer.Option(None, "--duration", help="run length, long-lived (default 40ms)"),
    profile: str | None = _SIM_PROFILE, ecn: str | None = _SIM_ECN, dcqcn: str | None = _SIM_DCQCN,
    model: SimModel = _SIM_MODEL, seeds: int = typer.Option(5, "--seeds"), topology: SimTopology = _SIM_TOPO,
    fmt: OutFormat = typer.Option(OutFormat.text, "--format"),
) -> None:
    """Simulate one port of a plan with its own speed, fan-in, buffer, ECN and DCQCN values
    (``--dcqcn rpg_ai_rate_mbps=20`` changes that knob of the port's DCQCN; ``firmware,...`` or
    ``derived,...`` start from those values instead)."""
    from roce_tune.simulate.settings import plan_port

    if kind not in ("incast", "long-lived"):
        err.print(f"error: --kind {kind!r}: incast or long-lived")
        raise typer.Exit(2)
    stray = "--duration" if kind == "incast" and duration is not None else (
        "--message" if kind == "long-lived" and message is not None else "")
    if stray:  # it was ignored: a long-lived run has no message size, an incast no duration
        err.print(f"error: {stray} does not apply to --kind {kind} (--message is for incast, --duration for "
                  "long-lived)")
        raise typer.Exit(2)
    try:
        pp = plan_port(plan_dir, port)
    except ValueError as exc:
        err.print(f"error: {exc}")
        raise typer.Exit(2) from None
    size = (message or "8MB") if kind == "incast" else (duration or "40ms")
    _sim_run(kind, "", pp.fan_in, size, profile, ecn, dcqcn, model, seeds,
             "", None, pp.pfc_alpha, topology, fmt, plan_port=pp,
             title=f"{port} ({pp.speed_gbps}G, fan-in {pp.fan_in}, pool {pp.buffer_bytes} B, alpha "
                   f"{pp.pfc_alpha:g}): {kind}, model {model.value}, {seeds} seed(s)")


class SessionPacing(str, Enum):
    """netmiko's pacing of each SSH session (:class:`roce_tune.deploy.runner.SessionTiming`)."""

    conservative = "conservative"
    fast = "fast"


_SESSION_TIMING = typer.Option(
    SessionPacing.conservative, "--session-timing",
    help="netmiko pacing: conservative (default, for switches whose control plane may answer slowly) or fast "
         "(netmiko's fast_cli preset, for devices that answer at once such as the loopback emulators).")


def _session_timing(pacing: SessionPacing) -> SessionTiming:
    from roce_tune.deploy.runner import SessionTiming

    return SessionTiming(fast_cli=True,
                         global_delay_factor=0.1) if pacing is SessionPacing.fast else SessionTiming()


@app.command()
def apply(
    source: Path = typer.Argument(..., exists=True,
                                  help="Inventory YAML (planned first) or a plan directory."),
    dry_run: bool = typer.Option(False, "--dry-run", help="Show per-device diffs; change nothing."),
    limit: list[str] = typer.Option([], "--limit", help="Device name or glob, role:ROLE or platform:NAME."),
    concurrency: int = typer.Option(8, "--concurrency", min=1, max=256),
    canary: int = typer.Option(0, "--canary", min=0, help="Push N devices first; stop if any fails."),
    allow_disruptive: bool = typer.Option(False, "--allow-disruptive",
                                          help="Push traffic-stopping changes, one device at a time."),
    confirm_s: int = typer.Option(300, "--confirm-seconds", min=30,
                                  help="Commit-confirm window (Junos counts whole minutes: a value that is "
                                  "not one is rounded up, and apply says so)."),
    insecure: bool = typer.Option(False, "--insecure-skip-host-key-check",
                                  help="Labs only: accept unknown keys."),
    known_hosts: Path | None = typer.Option(None, "--known-hosts", exists=True, dir_okay=False,
                                               help="Extra known_hosts file (must exist)."),
    secrets_file: Path | None = typer.Option(None, "--secrets-file", help="YAML secrets outside the repo."),
    log_dir: Path | None = typer.Option(None, "--log-dir", help="Session logs (default <out>/logs)."),
    fmt: OutFormat = typer.Option(OutFormat.text, "--format"),
    no_save: bool = typer.Option(False, "--no-save",
                                 help="Do not persist to startup config after confirming."),
    device_timeout: int = typer.Option(900, "--device-timeout", min=10,
                                       help="Give up on one device after N s."),
    read_timeout: float = typer.Option(30.0, "--read-timeout", min=1.0,
                                       help="Seconds to wait for a show command or config line."),
    commit_timeout: float = typer.Option(300.0, "--commit-timeout", min=1.0,
                                         help="Seconds to wait for a commit, save, checkpoint, rollback or "
                                         "host script."),
    keepalive: float = typer.Option(10.0, "--keepalive", min=0.0,
                                    help="SSH keepalive interval in s (0 = off)."),
    rollback_retry: float = typer.Option(120.0, "--rollback-retry", min=0.0,
                                         help="Seconds to keep reconnecting to roll back a dropped device."),
    keep_checkpoints: int = typer.Option(2, "--keep-checkpoints", min=1,
                                         help="roce-tune's own checkpoints kept on a switch whose platform "
                                         "takes them, after a push (the one just taken included); older "
                                         "ones of its own are deleted, the operator's never."),
    session_timing: SessionPacing = _SESSION_TIMING,
) -> None:
    """Diff (--dry-run) or push the plan with commit-confirm and rollback.

    SIGINT/SIGTERM: no new device starts, devices mid-push stop at the next command and roll back, then
    the summary says which devices were pushed, rolled back or left with nothing changed (not started, or
    stopped before the push sent any change); exit status 130/143. A second
    signal aborts at once after saying what each running device is left in."""
    from roce_tune.deploy.drivers import PushOptions
    from roce_tune.deploy.runner import StopRequest, stop_on_signals

    push = PushOptions(confirm_s=confirm_s, save=not no_save, read_timeout_s=read_timeout,
                       commit_timeout_s=commit_timeout, keepalive_s=keepalive,
                       rollback_retry_s=rollback_retry, keep_checkpoints=keep_checkpoints)
    stop = StopRequest()
    with stop_on_signals(stop):
        code = _apply(stop, source, dry_run, limit, concurrency, canary, allow_disruptive, insecure,
                      known_hosts, secrets_file, log_dir, fmt, push, device_timeout, session_timing)
    raise typer.Exit(stop.exit_status or code)


def _apply_targets_of(source: Path, limit: list[str]) -> tuple[list[Target], Path]:
    """The devices of ``source`` (inventory or plan directory) and its default log directory; exits 2 when
    it cannot be read or a ``--limit`` term matches no device."""
    from roce_tune.deploy.apply import load_source
    from roce_tune.deploy.runner import unmatched_limits
    from roce_tune.findings import RoceTuneError

    try:
        targets, default_logs = load_source(source)
    except RoceTuneError as exc:
        _fail(exc.findings)
    except (OSError, ValueError) as exc:
        what = "cannot read this plan directory" if source.is_dir() else ("not an inventory or a plan "
                                                                          "directory")
        err.print(f"error: {source}: {what}: {exc}", markup=False, highlight=False)
        raise typer.Exit(2) from None
    unmatched = unmatched_limits(targets, limit)
    if unmatched:
        hint = ("; give one --limit per name (--limit A --limit B), not a comma-separated list"
                if any("," in term for term in unmatched) else "")
        err.print(f"error: --limit {' '.join(unmatched)} matches no device{hint}; nothing was done; devices: "
                  + ", ".join(t.name for t in targets[:12]) + (" …" if len(targets) > 12 else ""),
                  markup=False, highlight=False)
        raise typer.Exit(2)
    return targets, default_logs


def _make_log_dir(path: Path, given: bool) -> None:
    """Create apply's log directory (0700) before any device is contacted; exits 2 naming it when it
    cannot be made (a file in its place, a read-only file system): no push runs without its logs and
    restore points."""
    from roce_tune.deploy.credentials import private_dir

    try:
        private_dir(path)
    except OSError as exc:
        what = "--log-dir" if given else "log directory"
        err.print(f"error: {what} {path}: cannot create it: {exc.strerror or exc}; nothing was done",
                  markup=False, highlight=False)
        raise typer.Exit(2) from None


def _check_secrets_file(secrets_file: Path | None) -> None:
    """Read ``--secrets-file`` (else ``$ROCE_TUNE_SECRETS_FILE``) once before any device is contacted; exits
    2 with its file:line:column (never its text) when it cannot be read: every device would fail alike."""
    from roce_tune.deploy.credentials import CredentialError, check_secrets_file

    path = secrets_file or os.environ.get("ROCE_TUNE_SECRETS_FILE")
    if not path:
        return
    try:
        check_secrets_file(path)
    except CredentialError as exc:
        err.print(f"error: {exc}; nothing was done", markup=False, highlight=False)
        raise typer.Exit(2) from None


def _apply(stop: StopRequest, source: Path, dry_run: bool, limit: list[str], concurrency: int, canary: int,
           allow_disruptive: bool, insecure: bool, known_hosts: Path | None, secrets_file: Path | None,
           log_dir: Path | None, fmt: OutFormat, push: PushOptions, device_timeout: int,
           session_timing: SessionPacing) -> int:
    """Body of ``apply`` (under its signal handlers); returns the exit status."""
    import functools
    import logging

    from roce_tune.deploy.apply import print_results
    from roce_tune.deploy.runner import (
        ApplyOptions,
        apply_targets,
        confirm_window_notes,
        results_json,
        stop_summary,
    )

    logging.getLogger("paramiko").setLevel(logging.CRITICAL)  # per-device errors are reported in the results
    targets, default_logs = _apply_targets_of(source, limit)
    if insecure:
        err.print("[bold yellow]warning: host-key checking is OFF (--insecure-skip-host-key-check); labs "
                  "only[/]")
    opts = ApplyOptions(dry_run=dry_run, limit=limit, concurrency=concurrency, canary=canary,
                        allow_disruptive=allow_disruptive, insecure_skip_host_key_check=insecure,
                        known_hosts=str(known_hosts) if known_hosts else None,
                        secrets_file=str(secrets_file) if secrets_file else None,
                        log_dir=log_dir or default_logs, push=push, device_timeout_s=device_timeout,
                        timing=_session_timing(session_timing))
    _make_log_dir(log_dir or default_logs, given=log_dir is not None)
    _check_secrets_file(secrets_file)
    if fmt is OutFormat.json:  # the text report prints them under its header
        for note in confirm_window_notes(targets, opts):
            err.print(f"note: {note}", markup=False, highlight=False)
    results = print_results(targets, opts, functools.partial(apply_targets, stop=stop),
                            out if fmt is OutFormat.text else None)
    if fmt is OutFormat.json:
        sys.stdout.write(results_json(results, dry_run, stop.signal))
    for line in stop_summary(results, stop):
        (out if fmt is OutFormat.text else err).print(line, markup=False, highlight=False)
    return 1 if any(r.failed for r in results) else 0


@app.command("nccl-report")
def nccl_report(
    files: list[Path] = typer.Argument(..., exists=True, dir_okay=False),
    fmt: OutFormat = typer.Option(OutFormat.text, "--format"),
    line_rate: str | None = typer.Option(None, "--line-rate", help="NIC line rate, e.g. 400G"),
) -> None:
    """Read nccl-tests logs: per run busbw, validation status, fraction of line rate."""
    from roce_tune.findings import RoceTuneError
    from roce_tune.verify.nccl_report import nccl_report as fn

    try:
        text, code = fn([str(f) for f in files], line_rate, fmt.value)
    except RoceTuneError as exc:
        err.print("error: " + "; ".join(f.message for f in exc.findings))
        raise typer.Exit(2) from None
    sys.stdout.write(text if text.endswith("\n") else text + "\n")
    raise typer.Exit(code)


def _print_verify_summary(rep: dict[str, Any], paths: dict[str, Path]) -> None:
    """``verify --format text``: each finding with its change, everything that could not be checked (a check
    for want of counters, a device's running values: "not checked", never a silent pass; the status is then
    INCOMPLETE), then the status and where the report is."""
    for f in rep["findings"]:  # messages quote device and tool output: Text, never markup
        style = "bold red" if f["severity"] == "error" else "yellow"
        out.print(Text.assemble((f"{f['rule']} {f['name']}", style), f": {f['message']}"), highlight=False)
        out.print(f"    change: {f['fix']}", markup=False, highlight=False)
    for line in rep["not_checked"]:
        out.print(f"not checked: {line}", markup=False, highlight=False)
    out.print(Text.assemble((rep["status"].upper(), "bold"), (" (not a pass: see not checked)"
                                                             if rep["status"] == "incomplete" else ""),
                            f"; report: {paths['md']} ("
                            + ", ".join(str(p.name) for k, p in paths.items() if k != "md") + ")"))


@app.command()
def verify(
    source: Path = typer.Argument(..., exists=True,
                                  help="Inventory YAML (planned first) or a plan directory."),
    launcher: str = typer.Option("mpirun", "--launcher", help="mpirun, srun or ssh (each host alone)."),
    collective: str = typer.Option("all_reduce", "--collective",
                                   help="all_reduce, all_gather, alltoall or sendrecv (nccl-tests "
                                   "<name>_perf)."),
    hosts: list[str] = typer.Option([], "--hosts", help="Host names or globs taking part (default: all)."),
    limit: list[str] = typer.Option([], "--limit", help="Device name or glob, role:ROLE or platform:NAME (as "
                                    "apply): only these are read back and their counters read; nccl-tests "
                                    "runs on the hosts among them (include two or more)."),
    head: str | None = typer.Option(None, "--head", help="Host that runs mpirun/srun (default: the first)."),
    ranks_per_host: int | None = typer.Option(None, "--ranks-per-host", min=1,
                                              help="Default: NICs per host."),
    min_bytes: str = typer.Option("1M", "--min-bytes", help="nccl-tests -b (K/M/G = powers of 1024)."),
    max_bytes: str = typer.Option("8G", "--max-bytes", help="nccl-tests -e."),
    step_factor: int = typer.Option(2, "--step-factor", min=2, help="nccl-tests -f."),
    iters: int = typer.Option(20, "--iters", min=1, help="nccl-tests -n."),
    warmup: int = typer.Option(5, "--warmup", min=0, help="nccl-tests -w."),
    nccl_tests_dir: str | None = typer.Option(None, "--nccl-tests-dir",
                                              help="Directory of the *_perf binaries."),
    launcher_arg: list[str] = typer.Option([], "--launcher-arg",
                                           help="Extra mpirun/srun argument (repeatable)."),
    target_ratio: float | None = typer.Option(None, "--target-ratio", min=0.01, max=1.0,
                                                 help="busbw / line rate goal (default: policy "
                                              "target_utilisation)."),
    adjust: bool = typer.Option(False, "--adjust",
                                help="Closed loop: step ECN/DCQCN through the tuner, apply, re-measure."),
    max_iterations: int = typer.Option(5, "--max-iterations", min=1, help="Most adjust steps."),
    tolerance: float = typer.Option(0.02, "--tolerance", min=0.0, max=0.5,
                                    help="A step worse than best x (1 - t) stops."),
    simulate_steps: bool = typer.Option(True, "--simulate-steps/--no-simulate-steps",
                                        help="--adjust: size each ECN/DCQCN step by simulating candidates "
                                        "(bounded)."),
    pairwise_matrix: bool = typer.Option(False, "--pairwise",
                                         help="Also run every host pair (finds a slow host)."),
    out_dir: Path | None = typer.Option(None, "--out",
                                        help="Report directory (default out/<inventory>/verify)."),
    confirm_s: int = typer.Option(300, "--confirm-seconds", min=30,
                                  help="Commit-confirm window for --adjust pushes."),
    insecure: bool = typer.Option(False, "--insecure-skip-host-key-check",
                                  help="Labs only: accept unknown keys."),
    known_hosts: Path | None = typer.Option(None, "--known-hosts", exists=True, dir_okay=False,
                                               help="Extra known_hosts file (must exist)."),
    secrets_file: Path | None = typer.Option(None, "--secrets-file", help="YAML secrets outside the repo."),
    concurrency: int = typer.Option(8, "--concurrency", min=1, max=256),
    run_timeout: float = typer.Option(1800.0, "--run-timeout", min=1.0,
                                      help="Seconds one nccl-tests run may take."),
    fmt: OutFormat = typer.Option(OutFormat.text, "--format",
                                  help="Progress and summary as text, or the JSON report."),
) -> None:
    """Run nccl-tests with the plan's NCCL env, read counters around it, diagnose; --adjust closes the \
loop.

    First it reads what every device runs (as apply --dry-run) and reports each value that differs from \
the plan; the diagnoses reason from those running values (a value not read back is the plan's, said to be \
unconfirmed); --adjust refuses (exit 2) unless every device runs the plan.

    Exit 0 PASS; 1 FAIL; 2 INCOMPLETE (nothing failed, but a check could not run for want of counters or \
a device's running values were not read: not a pass), or a usage error."""
    from roce_tune.deploy.drivers import PushOptions
    from roce_tune.deploy.runner import ApplyOptions
    from roce_tune.findings import RoceTuneError
    from roce_tune.verify.launch import COLLECTIVES, LAUNCHERS
    from roce_tune.verify.run import VerifyOptions, verify_fabric

    for option, value, allowed in (("--launcher", launcher, LAUNCHERS),
                                   ("--collective", collective, COLLECTIVES)):
        if value not in allowed:
            err.print(f"error: {option} {value!r} is not one of {', '.join(allowed)}", markup=False,
                      highlight=False)
            raise typer.Exit(2)
    if insecure:
        err.print("[bold yellow]warning: host-key checking is OFF (--insecure-skip-host-key-check); labs "
                  "only[/]")
    conn = ApplyOptions(concurrency=concurrency, insecure_skip_host_key_check=insecure,
                        known_hosts=str(known_hosts) if known_hosts else None,
                        secrets_file=str(secrets_file) if secrets_file else None,
                        push=PushOptions(confirm_s=confirm_s))
    opts = VerifyOptions(launcher=launcher, collective=collective, hosts=hosts, limit=limit, head=head,
                         ranks_per_host=ranks_per_host,
                         min_bytes=min_bytes, max_bytes=max_bytes, step_factor=step_factor, iters=iters,
                         warmup=warmup,
                         binary_dir=nccl_tests_dir, launcher_args=launcher_arg, target_ratio=target_ratio,
                         adjust=adjust, max_iterations=max_iterations, tolerance=tolerance,
                         pairwise=pairwise_matrix,
                         simulate_steps=simulate_steps,
                         out_dir=out_dir, connection=conn, run_timeout_s=run_timeout)
    progress = err if fmt is OutFormat.json else out
    try:
        result = verify_fabric(source, opts, on_event=lambda line: progress.print(line, markup=False))
    except RoceTuneError as exc:
        _fail(exc.findings)
    except ValueError as exc:
        err.print(f"error: {source}: {exc}", markup=False, highlight=False)
        raise typer.Exit(2) from None
    if fmt is OutFormat.json:
        print(json.dumps(result.report, indent=2, sort_keys=True, default=str))
    else:
        _print_verify_summary(result.report, result.paths)
    raise typer.Exit(result.exit_code)


@app.command()
def audit(
    source: Path | None = typer.Argument(None, help="Inventory YAML or plan directory to compare with "
                                            "(default: the policy defaults; required with --live)."),
    from_dir: Path | None = typer.Option(None, "--from", help="Directory of captures, one file per device: "
                                            "<device>[.<anything>].txt"),
    live: bool = typer.Option(False, "--live", help="Read the devices of the inventory over SSH instead "
                                 "(read-only show commands)."),
    fmt: str = typer.Option("text", "--format", help="text, json, github (annotations) or markdown."),
    policy: Path | None = typer.Option(None, "--policy", help="YAML with a `policy:` section (without an "
                                          "inventory)."),
    concurrency: int = typer.Option(10, "--concurrency", min=1, help="--live: devices read at once."),
    device_timeout: float = typer.Option(120.0, "--device-timeout", min=1.0,
                                         help="--live: seconds one device may take, connect included."),
    save_captures: Path | None = typer.Option(None, "--save-captures", help="--live: write each device's "
                                                 "output to DIR/<device>.live.txt (0600; evidence points "
                                                 "there)."),
    insecure: bool = typer.Option(False, "--insecure-skip-host-key-check",
                                  help="Labs only: accept unknown keys."),
    known_hosts: Path | None = typer.Option(None, "--known-hosts", exists=True, dir_okay=False,
                                            help="Extra known_hosts file (--live)."),
    secrets_file: Path | None = typer.Option(None, "--secrets-file",
                                             help="YAML secrets outside the repo (--live)."),
) -> None:
    """What is wrong with the running fabric, from captured show/ethtool/sysfs/NCCL output or read live \
(RT4xx)."""
    from roce_tune.audit import FORMATS, AuditUsageError, LiveOptions, audit_dir, audit_live, format_report
    from roce_tune.findings import RoceTuneError

    if fmt not in FORMATS:
        err.print(f"error: --format must be one of {', '.join(FORMATS)}, not {fmt!r}", markup=False)
        raise typer.Exit(2)
    if (from_dir is None) == (not live):
        err.print("error: give the captures with --from DIR, or --live with an inventory (not both)",
                  markup=False)
        raise typer.Exit(2)
    if source is not None and policy is not None:
        err.print("error: --policy is for audits without an inventory or plan (the plan's policy decides); "
                  "give one of them", markup=False)
        raise typer.Exit(2)
    for path, what in ((source, "inventory/plan"), (policy, "--policy file")):
        if path is not None and not path.exists():
            err.print(f"error: {what} {path} does not exist", markup=False)
            raise typer.Exit(2)
    try:
        if live:
            from roce_tune.deploy.runner import ApplyOptions  # netmiko/paramiko: only an audit that connects

            if insecure:
                err.print("[bold yellow]warning: host-key checking is OFF (--insecure-skip-host-key-check); "
                          "labs only[/]")
            aopts = ApplyOptions(insecure_skip_host_key_check=insecure,
                                 secrets_file=str(secrets_file) if secrets_file else None,
                                 known_hosts=str(known_hosts) if known_hosts else None)
            result = audit_live(source,  # type: ignore[arg-type]
                                LiveOptions(concurrency=concurrency, device_timeout_s=device_timeout,
                                            apply=aopts, save_dir=save_captures), policy)
        else:
            result = audit_dir(from_dir, source, policy)  # type: ignore[arg-type]
        text = format_report(result, fmt)
    except AuditUsageError as exc:
        err.print(f"error: {exc}", markup=False)
        raise typer.Exit(2) from None
    except RoceTuneError as exc:  # an invalid inventory, plan or --policy file: a usage error
        _fail(exc.findings, code=2)
    except (FileNotFoundError, ValueError) as exc:
        err.print(f"error: {source}: {exc}", markup=False)
        raise typer.Exit(2) from None
    sys.stdout.write(text)
    raise typer.Exit(result.exit_code)


@app.command("ansible-inventory")
def ansible_inventory(
    inventory: Path = typer.Argument(..., exists=True, dir_okay=False, help="Inventory YAML."),
    out_dir: str | None = typer.Option(None, "--out", help="Where `roce-tune plan` wrote the configs "
                                          "(default out/<inventory name>, as plan)."),
    fmt: str = typer.Option("yaml", "--format", help="yaml or json."),
    junos_connection: str = typer.Option("network_cli", "--junos-connection",
                                         help="network_cli (cli_command + commit confirmed) or netconf "
                                              "(junos_config)."),
    output: Path | None = typer.Option(None, "--output", "-o", help="Write here instead of stdout."),
) -> None:
    """Print an Ansible inventory (groups per platform and role, connection vars, rendered config paths)."""
    from roce_tune.ansible_inventory import build_ansible_inventory, default_out_dir, dump_ansible_inventory

    if fmt not in ("yaml", "json"):
        err.print(f"error: --format must be yaml or json, not {fmt!r}")
        raise typer.Exit(2)
    loaded = _load(inventory)
    try:
        data = build_ansible_inventory(loaded.inventory, str(inventory),
                                       out_dir or default_out_dir(inventory),
                                       junos_connection=junos_connection)
    except ValueError as exc:
        err.print(f"error: {exc}")
        raise typer.Exit(2) from None
    _write_inventory(dump_ansible_inventory(data, fmt), output)


_IMPORT_HOSTS = typer.Option(None, "--hosts",
                             help="Regex (full match) of host names; default: devices whose ports "
                             "all look like NIC netdevs (ens1f0np0, eth0) are hosts.")
_IMPORT_SWITCHES = typer.Option(None, "--switches", help="Regex (full match) of switch names.")
_IMPORT_PLATFORM = typer.Option(DEFAULT_SWITCH_PLATFORM, "--platform",
                                help="Platform of switches whose port names do not tell.")
_IMPORT_MODEL = typer.Option("unknown", "--model", help="Switch model to write where the source has none.")
_IMPORT_SPEED = typer.Option("400G", "--speed", help="Port and NIC speed to write (sources do not carry it).")
_IMPORT_NIC = typer.Option("connectx-7", "--nic-model", help="Catalog id of the host NICs.")


def _import_opts(site: str, hosts: str | None, switches: str | None, platform: str, model: str, speed: str,
                 nic_model: str) -> SkeletonOptions:
    import re

    from roce_tune.inventory.models import DEVICE_NAME_RE
    from roce_tune.inventory.skeleton import SkeletonOptions
    from roce_tune.platforms import SWITCH_PLATFORMS
    from roce_tune.units import parse_speed_gbps

    for rx, what in ((hosts, "--hosts"), (switches, "--switches")):
        if rx is not None:
            try:
                re.compile(rx)
            except re.error as exc:
                err.print(f"error: {what} {rx!r} is not a regular expression: {exc}", markup=False)
                raise typer.Exit(2) from None
    if platform not in SWITCH_PLATFORMS:
        err.print(f"error: --platform must be one of {', '.join(SWITCH_PLATFORMS)}", markup=False)
        raise typer.Exit(2)
    try:
        parse_speed_gbps(speed)
    except ValueError as exc:
        err.print(f"error: --speed: {exc}", markup=False)
        raise typer.Exit(2) from None
    site = re.sub(r"[^A-Za-z0-9._-]", "-", site)
    if not DEVICE_NAME_RE.fullmatch(site):
        site = "imported"
    return SkeletonOptions(site=site, hosts=hosts, switches=switches, platform=platform, model=model,
                           speed=speed,
                           nic_model=nic_model)


def _write_inventory(text: str, dest: Path | None) -> None:
    from roce_tune.atomic import write_text_atomic

    if dest is None:
        sys.stdout.write(text)
        return
    try:
        write_text_atomic(dest, text)
    except OSError as exc:
        err.print(f"error: cannot write {dest}: {exc.strerror or exc}; nothing written", markup=False)
        raise typer.Exit(1) from None
    err.print(f"wrote {dest}", markup=False)


@import_app.command("cabling")
def import_cabling(
    csv_file: Path = typer.Argument(..., exists=True, dir_okay=False,
                                    help="Cabling plan: CSV (comma, semicolon or "
                                    "tab) with device A, port A, device B, port B, length, media."),
    into: Path | None = typer.Option(None, "--into", exists=True, dir_okay=False,
                                        help="Merge into this inventory (comments kept); written back unless "
                                     "--out."),
    out_file: Path | None = typer.Option(None, "--out",
                                         help="Write here (default: stdout, or --into's file)."),
    columns: str | None = typer.Option(None, "--columns",
                                       help="Header names: a_device=Device A,a_port=Port A,"
                                          "b_device=...,b_port=...,length=...,unit=...,media=..."),
    hosts: str | None = _IMPORT_HOSTS, switches: str | None = _IMPORT_SWITCHES,
    platform: str = _IMPORT_PLATFORM, model: str = _IMPORT_MODEL, speed: str = _IMPORT_SPEED,
    nic_model: str = _IMPORT_NIC,
) -> None:
    """Write an inventory skeleton from a cabling plan, or merge the plan's cabling into an inventory.
    Any bad row: every problem at file:line with its column, exit 1, nothing written."""
    from roce_tune.findings import RoceTuneError
    from roce_tune.inventory.cabling_import import (
        merge_into,
        parse_columns_option,
        read_cabling_csv,
        skeleton_from_cables,
    )
    from roce_tune.inventory.skeleton import inventory_yaml, undecided_switches, unlikely_switches

    try:
        given = parse_columns_option(columns)
    except ValueError as exc:
        err.print(f"error: {exc}", markup=False)
        raise typer.Exit(2) from None
    opts = _import_opts(csv_file.stem, hosts, switches, platform, model, speed, nic_model)
    try:
        plan = read_cabling_csv(csv_file, given)
        if into is not None:
            merged = merge_into(into, plan, opts)
            for line in merged.changes:
                err.print(line, markup=False)
            _write_inventory(merged.text, out_file or into)
            return
        data = skeleton_from_cables(plan, opts)
    except RoceTuneError as exc:
        _fail(exc.findings)
    odd = unlikely_switches(plan.cables, opts)
    if odd:
        err.print("note: read as switches, but their ports look like no switch's: "
                  + ", ".join(f"{d} ({', '.join(p)})" for d, p in odd.items())
                  + "; if they are hosts, name them with --hosts REGEX", markup=False, soft_wrap=True)
    undecided = undecided_switches(plan.cables, opts)
    if undecided:
        err.print("note: port names that fit more than one platform: "
                  + ", ".join(f"{d} ({'; '.join(f'{p}: ' + ', '.join(n) for p, n in by.items())})"
                              for d, by in undecided.items())
                  + f"; written as {opts.platform} (the --platform default): set each one's platform",
                  markup=False, soft_wrap=True)
    text = inventory_yaml(data, f"Imported by roce-tune import cabling from {csv_file.name}; check platform, "
                          "model,\nspeed and rdma_device (placeholders where the plan does not say).")
    _write_inventory(text, out_file)


@import_app.command("lldp")
def import_lldp(
    captures: Path = typer.Argument(..., help="Directory of captures, one file per device: "
                                    "<device>[.<anything>].txt with its LLDP command and show version (see "
                                    "docs/import.md)."),
    out_file: Path | None = typer.Option(None, "--out", help="Write here (default: stdout)."),
    hosts: str | None = _IMPORT_HOSTS, switches: str | None = _IMPORT_SWITCHES,
    platform: str = _IMPORT_PLATFORM, model: str = _IMPORT_MODEL, speed: str = _IMPORT_SPEED,
    nic_model: str = _IMPORT_NIC,
) -> None:
    """Build an inventory from what the network reports: devices, ports, links and host NICs from LLDP,
    switch models and OS releases from show version. An unreadable capture: file:line, exit 1."""
    from roce_tune.findings import RoceTuneError
    from roce_tune.inventory.lldp import inventory_from_lldp, read_lldp_dir
    from roce_tune.inventory.skeleton import inventory_yaml

    opts = _import_opts(captures.resolve().name, hosts, switches, platform, model, speed, nic_model)
    left_out: list[str] = []
    try:
        view = read_lldp_dir(captures)
        data = inventory_from_lldp(view, opts, left_out)
    except RoceTuneError as exc:
        _fail(exc.findings)
    if view.errors:
        err.print("note: LLDP commands printed errors; the neighbours of what failed (an lldp container "
                  "not running, a port lldpctl did not know) are not in the captures: "
                  + "; ".join(view.errors), markup=False, soft_wrap=True)
    if view.unnamed:
        err.print("note: left out neighbours that send no system name (LLDP does not say which device they "
                  "are; set the neighbour's hostname, or declare the cable): " + "; ".join(view.unnamed),
                  markup=False, soft_wrap=True)
    if left_out:
        err.print("note: left out host cables to devices nobody captured (a NIC is declared on a captured "
                  "switch; capture the switch to import them): " + "; ".join(left_out), markup=False,
                  soft_wrap=True)
    text = inventory_yaml(data, f"Imported by roce-tune import lldp from {captures.name}/; check speed, NIC "
                          "model and\nrdma_device (LLDP does not carry them), and cable_length for headroom.")
    _write_inventory(text, out_file)
@import_app.command("netbox")
def import_netbox(
    url: str = typer.Option(..., "--url", help="NetBox base URL, e.g. https://netbox.example.net"),
    token_env: str = typer.Option(..., "--token-env",
                                  help="Name of the environment variable holding the API token."),
    site: str | None = typer.Option(None, "--site", help="Only devices of this NetBox site (slug)."),
    tag: str | None = typer.Option(None, "--tag", help="Only devices with this NetBox tag (slug)."),
    out: Path | None = typer.Option(None, "--out",
                                    help="Write the inventory here (atomically) instead of stdout."),
    role_map: list[str] = typer.Option([], "--role-map",
                                       help="NETBOX_ROLE_SLUG=leaf|spine|superspine|host (repeat)."),
    platform_map: list[str] = typer.Option([], "--platform-map",
                                           help="NETBOX_PLATFORM_SLUG=sonic|cumulus|eos|nxos|junos "
                                           "(repeat)."),
    model_map: list[str] = typer.Option([], "--model-map",
                                        help="NETBOX_DEVICE_TYPE_MODEL=CATALOG_MODEL (repeat)."),
    rdma_field: str = typer.Option("rdma_device", "--rdma-field",
                                   help="Interface custom field with the RDMA name."),
    nic_model_field: str = typer.Option("nic_model", "--nic-model-field",
                                        help="Interface custom field with the catalog NIC model."),
    site_name: str | None = typer.Option(None, "--site-name",
                                         help="Inventory site name (default: --site or netbox)."),
    status: list[str] = typer.Option([], "--status",
                                     help="Import devices with this NetBox status (repeat; default: active, "
                                     "planned, staged)."),
    cable_status: list[str] = typer.Option([], "--cable-status",
                                           help="Import cables with this NetBox status: connected|planned|"
                                           "decommissioning (repeat; default: connected, planned)."),
) -> None:
    """Import devices, interfaces, cables and RDMA NIC names from NetBox into a full-form inventory
    (mapping rules: docs/import-netbox.md)."""
    from roce_tune.atomic import write_text_atomic
    from roce_tune.importers import netbox as nb
    from roce_tune.inventory.models import ENV_VAR_RE, Platform

    def fail(messages: list[str]) -> None:
        for m in messages:
            err.print(f"error: {m}", markup=False, highlight=False, soft_wrap=True)
        raise typer.Exit(1)

    if not ENV_VAR_RE.fullmatch(token_env):
        fail([f"--token-env {token_env!r} is not an environment variable name (e.g. NETBOX_TOKEN)"])
    token = os.environ.get(token_env, "")
    if not token.strip():
        fail([f"environment variable {token_env} is not set or empty; it must hold the NetBox API token"])
    try:
        mapping = nb.Mapping(
            roles=nb.DEFAULT_ROLES | nb.parse_map(role_map, "--role-map", nb.ROLE_CHOICES),
            platforms=nb.DEFAULT_PLATFORMS | nb.parse_map(platform_map, "--platform-map",
                                                          [p.value for p in Platform]),
            models=nb.parse_map(model_map, "--model-map"),
            rdma_field=rdma_field, nic_model_field=nic_model_field,
            device_statuses=nb.parse_statuses(status, "--status", nb.DEFAULT_DEVICE_STATUSES),
            cable_statuses=nb.parse_statuses(cable_status, "--cable-status", nb.DEFAULT_CABLE_STATUSES,
                                             nb.CABLE_STATUSES))
        text, result = nb.import_netbox(url, token.strip(), token_env, site=site, tag=tag, mapping=mapping,
                                        site_name=site_name)
    except nb.NetboxImportError as exc:
        fail(exc.messages)
    for line in result.skipped:
        err.print(f"note: left out {line}", markup=False, highlight=False, soft_wrap=True)
    data = result.data
    summary = (f"{len(data['switches'])} switches, {len(data['links'])} links, {len(data['hosts'])} hosts "
               f"({sum(len(h['nics']) for h in data['hosts'])} RDMA NICs)")
    if out is None:
        sys.stdout.write(text)
        err.print(f"imported {summary}", markup=False, highlight=False)
        return
    try:
        write_text_atomic(out, text)
    except OSError as exc:
        fail([f"cannot write {out}: {exc.strerror or exc}"])
    err.print(f"wrote {out}: {summary}", markup=False, highlight=False)


def main() -> None:
    """Console-script entry point (the process ends with the command: see :func:`_leave_to_exit`)."""
    global _PROCESS_ENDS_WITH_COMMAND
    _PROCESS_ENDS_WITH_COMMAND = True
    app()


if __name__ == "__main__":
    main()
