"""``roce-tune verify INVENTORY|PLAN_DIR``: measure the fabric with nccl-tests, diagnose, optionally
adjust (closed loop), and write the report. Library side of the CLI command (which only prints)."""

from __future__ import annotations

import dataclasses
import fnmatch
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from roce_tune.deploy.runner import (
    ApplyOptions,
    DeviceResult,
    Target,
    apply_targets,
    select,
    targets_from_files,
    unmatched_limits,
)
from roce_tune.findings import Finding, Location, RoceTuneError, Severity
from roce_tune.inventory.models import Inventory
from roce_tune.pipeline import render
from roce_tune.plan import Plan
from roce_tune.platforms.checkpoints import new_tag
from roce_tune.verify.adjust import Iteration, LoopOptions, LoopResult, adjust_loop, plan_settings
from roce_tune.verify.as_found import AsFound, read_as_found
from roce_tune.verify.collect import DevicePool, collect_facts
from roce_tune.verify.hostfacts import NicFacts
from roce_tune.verify.launch import LaunchSpec, build_launch
from roce_tune.verify.measure import Measurement, measure, pairwise
from roce_tune.verify.observation import Diagnosis
from roce_tune.verify.report import STATUS_EXIT, plot_busbw, report_dict, write_report

__all__ = ["VerifyOptions", "VerifyOutcome", "common_env", "limited_devices", "load_for_verify",
           "select_hosts", "verify_fabric"]


@dataclass
class VerifyOptions:
    """Options of one verify run (``roce-tune verify --help``).

    ``target_ratio`` None = the plan's ``policy.target_utilisation``; ``ranks_per_host`` None = NICs per
    host (one rank per NIC, so busbw compares with one NIC's line rate). ``connection`` carries the
    session settings (host keys, secrets file) and the commit-confirm window used by ``--adjust``.
    """

    launcher: str = "mpirun"
    collective: str = "all_reduce"
    hosts: list[str] = field(default_factory=list)
    head: str | None = None
    ranks_per_host: int | None = None
    min_bytes: str = "1M"
    max_bytes: str = "8G"
    step_factor: int = 2
    iters: int = 20
    warmup: int = 5
    binary_dir: str | None = None
    launcher_args: list[str] = field(default_factory=list)
    #: ``--limit``: the devices verify reads (apply's device selection: name or glob, ``role:ROLE``,
    #: ``platform:NAME``); empty = every device with a management address (:func:`limited_devices`)
    limit: list[str] = field(default_factory=list)
    target_ratio: float | None = None
    adjust: bool = False
    max_iterations: int = 5
    tolerance: float = 0.02
    factor: float = 2.0
    #: --adjust sizes ECN/DCQCN steps with a bounded simulator search (roce_tune.verify.sim_step)
    simulate_steps: bool = True
    pairwise: bool = False
    out_dir: Path | None = None
    connection: ApplyOptions = field(default_factory=ApplyOptions)
    run_timeout_s: float = 1800.0
    read_timeout_s: float = 120.0


@dataclass
class VerifyOutcome:
    """Result: the JSON report (dict), written paths, exit code (0 pass, 1 fail, 2 incomplete: a check could
    not run for want of counters or a device's running values were not read), the loop (if any)."""

    report: dict[str, Any]
    paths: dict[str, Path]
    exit_code: int
    iterations: list[Iteration]
    loop: LoopResult | None = None


def load_for_verify(source: Path) -> tuple[Plan, Inventory | None]:
    """Plan (and inventory, needed by ``--adjust``) from an inventory file or a plan directory.

    A plan directory gives an inventory only when ``plan.inventory_file`` still exists with the same
    sha256 (the loop must derive from exactly what produced the plan).

    Raises:
        RoceTuneError: lint errors, or plan error findings (verify measures only a plan that could be
            applied).
        PlanDirError: a plan directory that does not hold one complete plan (no plan.json, a device's
            files missing, an interrupted ``roce-tune plan``).
    """
    from roce_tune.pipeline import open_source

    src = open_source(source, files=False, inventory=True)
    return src.plan, src.loaded.inventory if src.loaded is not None else None


def limited_devices(plan: Plan, limit: list[str]) -> set[str] | None:
    """The plan's devices ``--limit`` selects, by apply's own matcher (:func:`roce_tune.deploy.runner.select`:
    a name or glob, ``role:ROLE`` or ``platform:NAME``; a host's role is ``host``); None without a limit.

    Raises:
        ValueError: a limit term that matches no device of the plan (names it and the devices): a mistyped
            name among several would otherwise leave its device unchecked without a word.
    """
    if not limit:
        return None
    targets = [Target.of_switch(s) for s in plan.switches] + [Target.of_host(h) for h in plan.hosts]
    unmatched = unmatched_limits(targets, limit)
    if unmatched:
        raise ValueError(f"--limit {' '.join(unmatched)} matches no device; devices: "
                         + ", ".join(t.name for t in targets))
    return {t.name for t in select(targets, limit)}


def select_hosts(plan: Plan, patterns: list[str], within: set[str] | None = None) -> list[str]:
    """Plan hosts (in plan order) with a management address that match any glob (all when none given) and,
    when ``within`` is given (the devices of ``--limit``), are in it.

    Raises:
        RoceTuneError: fewer than one host selected (RT330).
    """
    hosts = [h.name for h in plan.hosts if h.mgmt_host and (not patterns or any(
        fnmatch.fnmatchcase(h.name, p) for p in patterns)) and (within is None or h.name in within)]
    if not hosts:
        limited = " within --limit" if within is not None else ""
        raise RoceTuneError([Finding(
            rule="RT330", severity=Severity.error, location=Location(),
            message=f"no host with a management address matches {patterns or 'any'}{limited}",
            fix="give hosts mgmt addresses in the inventory or fix --hosts" + (
                "; nccl-tests runs on the hosts the limit selects: include them in --limit" if limited
                else ""))])
    return hosts


def common_env(plan: Plan, hosts: list[str]) -> tuple[dict[str, str], list[str]]:
    """NCCL variables equal on every selected host (what a launcher can export to all ranks), and the
    names that differ per host (left to each host's /etc/nccl.conf or the plan's hosts/<name>.nccl.env)."""
    envs = [plan.host(h).nccl_env for h in hosts]
    keys = sorted({k for e in envs for k in e})
    same = {k: envs[0][k] for k in keys if all(k in e for e in envs) and len({e[k] for e in envs}) == 1}
    return same, [k for k in keys if k not in same]


def _apply_fn(opts: VerifyOptions, plan0: Plan) -> Callable[[Plan], list[DeviceResult]]:
    """Apply a plan with the apply engine, touching only devices whose rendered configuration differs
    from what was last applied (``plan0`` is what the devices run: verify read them back before the
    baseline and refuses ``--adjust`` otherwise, :mod:`roce_tune.verify.as_found`).

    Every push gets its own ``apply_targets`` call and a fresh tag (``checkpoints.new_tag``): the loop
    pushes a switch once per iteration, and a checkpoint name may be taken only once (a switch refuses a
    second one of that name, or saves over the first rollback point); distinct tags also keep hosts sharing
    a /tmp — emulators, some containers — from running each other's script. Disruptive changes are never
    pushed (they come back ``blocked-disruptive``, which stops the loop).
    """
    from concurrent.futures import ThreadPoolExecutor

    last = {t.name: t.desired for t in targets_from_files(plan0, render(plan0)[1])}

    def apply(plan: Plan) -> list[DeviceResult]:
        targets = [t for t in targets_from_files(plan, render(plan)[1]) if t.host
                   and last.get(t.name) != t.desired]
        base = dataclasses.replace(opts.connection, dry_run=False, allow_disruptive=False, limit=[], canary=0)

        def one(t: Target) -> DeviceResult:
            push = dataclasses.replace(base.push, tag=new_tag())
            res = apply_targets([t], dataclasses.replace(base, push=push))[0]
            if res.state in ("pushed", "no-change"):
                last[t.name] = t.desired
            return res
        with ThreadPoolExecutor(max_workers=max(1, min(base.concurrency, len(targets) or 1))) as ex:
            return list(ex.map(one, targets))
    return apply


def _check_options(opts: VerifyOptions) -> None:
    """ValueError for ``--adjust`` with the ssh launcher (each host runs alone: no fabric figure to adjust
    on) or with ``--limit`` (a step re-plans and pushes every device whose values it moves, and rolls back
    to the plan: it must read all of them)."""
    if opts.adjust and opts.launcher == "ssh":
        raise ValueError("--adjust needs a fabric measurement: use --launcher mpirun or srun (ssh runs each "
                         "host alone)")
    if opts.adjust and opts.limit:
        raise ValueError("--adjust steps and pushes every device whose ECN/DCQCN values it moves and reads "
                         "them all back: run it without --limit")


def _check_fabric_hosts(opts: VerifyOptions, hosts: list[str]) -> None:
    """ValueError for mpirun/srun on a single host: every rank is on it, NCCL moves the data over
    NVLink/PCIe (or shared memory) and busbw says nothing about the fabric (it can be several times the
    NIC's line rate)."""
    if opts.launcher != "ssh" and len(hosts) < 2:
        limited = (" (nccl-tests runs on the hosts --limit selects: include at least two in it)"
                   if opts.limit else "")
        raise ValueError(f"--launcher {opts.launcher} on one host ({', '.join(hosts)}) sends nothing over "
                         "the fabric (the ranks talk over NVLink/PCIe): select at least two hosts, or use "
                         f"--launcher ssh to test a host alone{limited}")


def _out_dir(opts: VerifyOptions, plan: Plan) -> Path:
    """``--out``, else ``out/<inventory stem or site>/verify``."""
    return opts.out_dir or Path("out") / f"{Path(plan.inventory_file).stem or plan.site}" / "verify"


def _require_inventory(source: Path, inv: Inventory | None) -> Inventory:
    """The inventory ``--adjust`` re-derives plans from; RoceTuneError RT331 when it is gone or changed."""
    if inv is None:
        raise RoceTuneError([Finding(rule="RT331", severity=Severity.error,
                                     location=Location(file=str(source)),
                                     message="--adjust needs the inventory the plan came from (missing or "
                                     "changed)",
                                     fix="run verify --adjust on the inventory file")])
    return inv


def _target_ratio(opts: VerifyOptions, plan: Plan) -> float:
    """``--target-ratio``, else the plan's ``policy.target_utilisation``, else 0.9."""
    if opts.target_ratio is not None:
        return opts.target_ratio
    policy_target = plan.policy.get("target_utilisation", 0.9)
    return float(policy_target) if isinstance(policy_target, (int, float)) else 0.9


def _launch_spec(opts: VerifyOptions, plan: Plan, hosts: list[str], env: dict[str, str]) -> LaunchSpec:
    """The nccl-tests launch; ranks per host default to the fewest NICs of any selected host."""
    rph = opts.ranks_per_host or max(1, min(len(plan.host(h).nics) for h in hosts))
    return LaunchSpec(launcher=opts.launcher, collective=opts.collective,  # type: ignore[arg-type]
                      hosts=hosts, head=opts.head, ranks_per_host=rph, env=env, min_bytes=opts.min_bytes,
                      max_bytes=opts.max_bytes, step_factor=opts.step_factor, iters=opts.iters,
                      warmup=opts.warmup, binary_dir=opts.binary_dir, launcher_args=opts.launcher_args)


@dataclass
class _Runs:
    """Measures one run after another (numbered from 0, reported through ``say``), keeping each host's
    launcher output as ``nccl-run<n>-<host>.txt``. A run given ``found`` (what the devices were read back
    running just before it: the baseline's read, or after an ``--adjust`` push the changed devices read again)
    has its checks reason from those values; one without, from the plan's, said to be unconfirmed."""

    pool: DevicePool
    spec: LaunchSpec
    switches: list[str]
    line_rate_gbps: float
    target_ratio: float
    timeout_s: float
    say: Callable[[str], None]
    facts: list[NicFacts] = field(default_factory=list)
    outputs: dict[str, str] = field(default_factory=dict)
    count: int = 0
    #: RT332/RT333 of the read-backs after ``--adjust`` pushes (:func:`_adjust`)
    after_push: list[Diagnosis] = field(default_factory=list)

    def __call__(self, p: Plan, pairs: dict[tuple[str, str], float] | None = None,
                 found: AsFound | None = None) -> Measurement:
        n = self.count
        self.count += 1
        self.say(f"[{n}] running:\n" + build_launch(self.spec).describe())
        m = measure(self.pool, p, self.spec, self.switches, line_rate_gbps=self.line_rate_gbps,
                    target_ratio=self.target_ratio, facts=self.facts, timeout_s=self.timeout_s,
                    pair_fractions=pairs, as_found=found)
        for host, text in m.outputs.items():
            self.outputs[f"nccl-run{n}-{host}.txt"] = text
        busbw = m.largest_busbw_gbps
        self.say(f"[{n}] " + (f"busbw {busbw} GB/s at the largest size = "
                              + (f"{m.fraction:.1%}" if m.fraction is not None else "-") + " of line rate"
                              if busbw is not None else "no busbw (no complete run)") + "; findings: "
                 + (", ".join(sorted({d.rule for c in m.checks for d in c.diagnoses})) or "none"))
        return m


#: apply states after which a device may run something else than before the push: read it back again
_MAY_HAVE_CHANGED = ("pushed", "failed", "rolled-back", "unknown")


def _read_after_push(runs: _Runs, opts: VerifyOptions, plan: Plan, results: list[DeviceResult],
                     found: AsFound) -> AsFound:
    """Read back the devices a push touched (``results`` in a state of :data:`_MAY_HAVE_CHANGED`), as the
    baseline read them (:func:`~roce_tune.verify.as_found.read_as_found`: the dry run's diff and the
    platform's read-back against ``plan``, the one just pushed), and return ``found`` with their new reads.
    On a device apply reported ``pushed`` each value that differs (the push did not take) and a device not
    read are findings in ``runs.after_push`` and progress lines; a device whose push failed (rolled back:
    the stop reason says so) is read only so that the iteration's settings say what it runs."""
    touched = [r.name for r in results if r.state in _MAY_HAVE_CHANGED]
    if not touched:
        return found
    again = read_as_found(runs.pool, plan, touched, touched, lambda p: render(p)[1],
                          opts.connection.concurrency)
    pushed = AsFound({n: d for n, d in again.devices.items()
                      if any(r.name == n and r.state == "pushed" for r in results)})
    if pushed.devices:
        runs.after_push += (said := pushed.diagnoses(f"read back after the --adjust push before run "
                                                     f"{runs.count}"))
        runs.say(f"read back after the push: {', '.join(pushed.devices)} "
                 + ("run the pushed plan" if pushed.as_planned else
                    f"— {len(pushed.differences)} value(s) differ, {len(pushed.not_read)} device(s) not "
                    "read"))
        for d in said:
            runs.say(f"  {d.rule} {d.message}")
    return found.merged(again)


def _adjust(runs: _Runs, opts: VerifyOptions, plan: Plan, inv: Inventory,
            pairs: dict[tuple[str, str], float] | None, found: AsFound) -> LoopResult:
    """The closed loop (:func:`~roce_tune.verify.adjust.adjust_loop`); the pairwise matrix goes with the first
    measurement only. Each measurement and iteration's settings reason from the devices as read back: the
    read before the loop (``found``, which found the plan running), then after each push the devices it
    changed, read again (:func:`_read_after_push`)."""
    first = [True]
    now = [found]
    push = _apply_fn(opts, plan)

    def apply(p: Plan) -> list[DeviceResult]:
        results = push(p)
        now[0] = _read_after_push(runs, opts, p, results, now[0])
        return results

    def m_fn(p: Plan) -> Measurement:
        m = runs(p, pairs if first[0] else None, now[0])
        first[0] = False
        return m
    loop = adjust_loop(inv, plan, m_fn, apply, LoopOptions(
        target_ratio=runs.target_ratio, max_iterations=opts.max_iterations, tolerance=opts.tolerance,
        factor=opts.factor, simulate=opts.simulate_steps),
        settings_of=lambda p: now[0].settings(p, plan_settings(p)))
    runs.say(f"adjust: {loop.stop_reason}")
    return loop


Pairs = dict[tuple[str, str], float]


def _measure_all(runs: _Runs, opts: VerifyOptions, plan: Plan, adjust_inv: Inventory | None, hosts: list[str],
                 found: AsFound) -> tuple[list[Iteration], LoopResult | None, Pairs | None, list[str]]:
    """NIC facts, the pairwise matrix (``--pairwise`` with more than two hosts), then one measurement
    (labelled with the values ``found`` running) or the adjust loop (when ``adjust_inv`` is given: every
    device runs the plan). Returns the iterations, the loop, the pair fractions and the pairwise commands."""
    runs.facts = collect_facts(runs.pool, plan, hosts)
    pairs: dict[tuple[str, str], float] | None = None
    pair_cmds: list[str] = []
    if opts.pairwise and len(hosts) > 2:
        pairs, pair_cmds = pairwise(runs.pool, runs.spec, runs.line_rate_gbps, opts.run_timeout_s)
    if adjust_inv is not None:
        loop = _adjust(runs, opts, plan, adjust_inv, pairs, found)
        return loop.iterations, loop, pairs, pair_cmds
    m = runs(plan, pairs, found)
    baseline = Iteration(index=0, kind="baseline", settings=found.settings(plan, plan_settings(plan)),
                         measurement=m.model_copy(update={"checks": found.caveat(m.checks)}))
    return [baseline], None, pairs, pair_cmds


def _as_found(pool: DevicePool, opts: VerifyOptions, plan: Plan, switches: list[str], hosts: list[str],
              say: Callable[[str], None]) -> AsFound:
    """Read what every device runs (:mod:`roce_tune.verify.as_found`) and say each difference.

    Raises:
        ValueError: ``--adjust`` while a device does not run the plan or was not read (nothing measured or
            written yet).
    """
    found = read_as_found(pool, plan, switches, hosts, lambda p: render(p)[1], opts.connection.concurrency)
    say("as found: " + ("every device runs the plan" if found.as_planned else
                        f"{len(found.differences)} value(s) differ from the plan, "
                        f"{len(found.not_read)} device(s) not read"))
    for d in found.diagnoses():
        say(f"  {d.rule} {d.message}")
    if opts.adjust and (why := found.refusal()) is not None:
        raise ValueError(why)
    return found


def _meta(source: Path, opts: VerifyOptions, plan: Plan, spec: LaunchSpec, switches: list[str],
          line_rate: float, target: float, differing: list[str], pair_cmds: list[str]) -> dict[str, Any]:
    """What was run, for the report: site, source, launcher, hosts, switches, line rate (Gb/s), target, NCCL
    environment (common to all hosts, and the names that differ per host), pairwise commands."""
    return {"site": plan.site, "source": str(source), "inventory_file": plan.inventory_file,
            "launcher": opts.launcher, "collective": opts.collective, "hosts": spec.hosts,
            "switches": switches,
            "line_rate_gbps": line_rate, "target_ratio": target, "ranks_per_host": spec.ranks_per_host,
            "nccl_env": spec.env,
            "nccl_env_per_host": differing, "pairwise_commands": pair_cmds,
            "note": "ssh launcher: every host ran alone; no fabric figure" if opts.launcher == "ssh" else ""}


def verify_fabric(source: Path, opts: VerifyOptions, on_event: Callable[[str],
                                                                        None] | None = None) -> VerifyOutcome:
    """Run verify end to end (module docstring); ``on_event`` gets one progress line at a time.

    Raises:
        RoceTuneError: the source does not plan cleanly, no host selected, or ``--adjust`` from a plan
            directory whose inventory is gone or changed.
        ValueError: bad launch options (sizes, launcher, collective), or mpirun/srun on a single host.
    """
    say = on_event or (lambda s: None)
    _check_options(opts)
    plan, inv = load_for_verify(source)
    adjust_inv = _require_inventory(source, inv) if opts.adjust else None
    within = limited_devices(plan, opts.limit)
    hosts = select_hosts(plan, opts.hosts, within)
    _check_fabric_hosts(opts, hosts)
    switches = [s.name for s in plan.switches if s.mgmt_host and (within is None or s.name in within)]
    line_rate = float(min((n.speed_gbps for h in hosts for n in plan.host(h).nics), default=400))
    target = _target_ratio(opts, plan)
    env, differing = common_env(plan, hosts)
    spec = _launch_spec(opts, plan, hosts, env)
    out_dir = _out_dir(opts, plan)
    pool = DevicePool(plan, opts.connection, opts.read_timeout_s, out_dir / "logs")
    runs = _Runs(pool, spec, switches, line_rate, target, opts.run_timeout_s, say)
    try:
        say(f"hosts {', '.join(hosts)}; switches {', '.join(switches) or '-'}; line rate {line_rate:g} Gb/s, "
            f"target {target:.0%}")
        found = _as_found(pool, opts, plan, switches, hosts, say)
        iterations, loop, pairs, pair_cmds = _measure_all(runs, opts, plan, adjust_inv, hosts, found)
    finally:
        pool.close()
    meta = _meta(source, opts, plan, spec, switches, line_rate, target, differing, pair_cmds)
    cls = plan.classification
    png = plot_busbw(iterations, out_dir / "busbw.png", line_rate, target,
                     f"{plan.site}: {opts.collective} busbw")
    rep = report_dict(meta=meta, iterations=iterations, loop=loop, facts=runs.facts, pairwise=pairs,
                      as_found=found.diagnoses() + runs.after_push,
                      lossless=list(cls.lossless_priorities), queues=list(cls.lossless_queues),
                      plot=png.name if png else None)
    log = [f"{dev}$ {cmd}" for dev, cmd in pool.log]
    paths = write_report(out_dir, rep, outputs=runs.outputs, commands_log=log)
    if png:
        paths["png"] = png
    return VerifyOutcome(report=rep, paths=paths, exit_code=STATUS_EXIT[rep["status"]],
                         iterations=iterations, loop=loop)
