"""One measurement: counters → nccl-tests → counters, then the parsed run, the deltas and the checks."""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor
from itertools import combinations

from pydantic import BaseModel, ConfigDict, Field

from roce_tune.plan import Plan
from roce_tune.verify.as_found import AsFound
from roce_tune.verify.collect import DevicePool, snapshot
from roce_tune.verify.counters import CounterSnapshot, delta_snapshot
from roce_tune.verify.diagnose import CheckResult, Observation, diagnose
from roce_tune.verify.hostfacts import NicFacts
from roce_tune.verify.launch import LaunchCommand, LaunchSpec, build_launch
from roce_tune.verify.nccl import NcclRun, parse_nccl_output

__all__ = ["Measurement", "measure", "pairwise", "run_launch", "traffic_time_s"]


class Measurement(BaseModel):
    """What one run produced.

    Attributes:
        command: the command(s) actually run, ``host$ line`` per line.
        outputs: raw stdout per host that ran a command.
        run: the run judged (mpirun/srun: rank 0's table; ssh: the slowest host's) or None.
        host_runs: ssh launcher: every host's run.
        delta: counter deltas over the run.
        traffic_time_s: Σ row time × (iters + warmup) × placements, s (:func:`traffic_time_s`).
        busbw_by_size: ``[(size_bytes, busbw GB/s)]`` of the judged run.
        fraction: largest-message busbw / line rate.
        wall_s: wall time of the launch.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    command: str
    launcher: str
    outputs: dict[str, str]
    run: NcclRun | None
    host_runs: dict[str, NcclRun] = Field(default_factory=dict)
    delta: CounterSnapshot | None
    traffic_time_s: float | None
    busbw_by_size: list[tuple[int, float]]
    fraction: float | None
    checks: list[CheckResult]
    wall_s: float

    @property
    def largest_busbw_gbps(self) -> float | None:
        """busbw (GB/s) at the largest message size."""
        return self.busbw_by_size[-1][1] if self.busbw_by_size else None


def traffic_time_s(run: NcclRun, iters: int, warmup: int) -> float | None:
    """Seconds the collective moved data: Σ over rows of (out-of-place + in-place time) × (iters + warmup)."""
    total = sum((r.oop_time_us or 0) + (r.ip_time_us or 0) for r in run.rows if r.size_bytes > 0)
    return total * (iters + warmup) / 1e6 if total else None


def _launch_on(pool: DevicePool, host: str, line: str, timeout_s: float) -> str:
    """stdout of ``line`` on ``host``; when the session fails or the run outlasts ``timeout_s`` (a hung
    collective), a ``roce-tune:`` line saying so instead (the checks report it as RT311 with this text).
    Sent once: a retry would start the whole run again."""
    try:
        return pool.run(host, line, timeout_s, retry=False)
    except Exception as exc:  # noqa: BLE001 — netmiko ReadTimeout, a dropped session: judged as no run
        first = next((ln.strip() for ln in str(exc).splitlines() if ln.strip()), "")
        timed_out = "timeout" in type(exc).__name__.lower()
        return (f"roce-tune: the launch on {host} failed: {type(exc).__name__}"
                + (f" after --run-timeout {timeout_s:g} s (the run hung or is too long)" if timed_out else "")
                + (f": {first}" if first else "") + "\n")


def run_launch(pool: DevicePool, cmd: LaunchCommand, timeout_s: float) -> dict[str, str]:
    """Run every line of ``cmd`` on its host (concurrently for the ssh launcher); host → stdout (or the
    ``roce-tune:`` line of :func:`_launch_on` when the launch failed there). Never raises for a device."""
    with ThreadPoolExecutor(max_workers=max(1, len(cmd.commands))) as ex:
        futs = {h: ex.submit(_launch_on, pool, h, line, timeout_s) for h, line in cmd.commands.items()}
        return {h: f.result() for h, f in futs.items()}


def _judged(outputs: dict[str, str], launcher: str) -> tuple[NcclRun | None, dict[str, NcclRun]]:
    per_host: dict[str, NcclRun] = {}
    for host, text in outputs.items():
        try:
            runs = parse_nccl_output(text, source=host)
        except Exception:  # noqa: BLE001, S112 — RT301 "not nccl-tests output": judged as no run
            continue
        if runs:
            per_host[host] = runs[-1]
    if not per_host:
        return None, {}
    if launcher != "ssh":
        return next(iter(per_host.values())), {}
    worst = min(per_host.values(), key=lambda r: (r.status != "failed", r.max_busbw_gbps or 0.0))
    return worst, per_host


def measure(pool: DevicePool, plan: Plan, spec: LaunchSpec, switches: list[str], *, line_rate_gbps: float,
            target_ratio: float, facts: list[NicFacts], timeout_s: float = 1800.0,
            pair_fractions: dict[tuple[str, str], float] | None = None,
            as_found: AsFound | None = None) -> Measurement:
    """Counters before, the launch, counters after; parse, take deltas, run the checks.

    ``as_found``: what the devices were read back running before this run (None: not read back); the checks
    reason from those values (:meth:`Observation.seen`).

    The plan's ``nccl_env`` of the head host (hosts[0]) is what ``spec.env`` should hold; the caller
    builds the spec. Device failures while reading counters are recorded in the snapshot, not raised.

    A launch that fails on its device (session lost, ``timeout_s`` exceeded) gives a measurement without a
    run: RT311 quotes why, and ``--adjust`` treats it as a step that made busbw worse (rolls back).

    Raises:
        ValueError: a bad launch spec (see :func:`~roce_tune.verify.launch.build_launch`).
    """
    cmd = build_launch(spec)
    before = snapshot(pool, plan, spec.hosts, switches)
    t0 = time.monotonic()
    outputs = run_launch(pool, cmd, timeout_s)
    wall = time.monotonic() - t0
    after = snapshot(pool, plan, spec.hosts, switches)
    delta = delta_snapshot(before, after)
    run, host_runs = _judged(outputs, cmd.launcher)
    tt = traffic_time_s(run, spec.iters, spec.warmup) if run else None
    rows = [(r.size_bytes, r.busbw_gbps) for r in run.rows if r.size_bytes > 0 and r.busbw_gbps is not None] \
        if run and run.status != "failed" else []
    obs = Observation(plan=plan, hosts=list(spec.hosts), run=run, delta=delta, facts=facts, traffic_time_s=tt,
                      line_rate_gbps=line_rate_gbps, target_ratio=target_ratio, pair_fractions=pair_fractions,
                      fabric_run=cmd.launcher != "ssh", launcher_output=outputs, as_found=as_found)
    return Measurement(command=cmd.describe(), launcher=cmd.launcher, outputs=outputs, run=run,
                       host_runs=host_runs,
                       delta=delta, traffic_time_s=tt, busbw_by_size=rows,
                       fraction=obs.busbw_fraction() if obs.fabric_run else None, checks=diagnose(obs),
                       wall_s=round(wall, 3))


def pairwise(pool: DevicePool, spec: LaunchSpec, line_rate_gbps: float,
             timeout_s: float = 1800.0) -> tuple[dict[tuple[str, str], float], list[str]]:
    """Run the collective on every pair of hosts (one pair at a time, so pairs do not share links).

    Returns:
        ``({(a, b): largest-message busbw / line rate}, commands run)``; a pair whose run failed or was cut
        short (no summary) gets 0.0.
    """
    from roce_tune.verify.nccl import busbw_fraction_of_line_rate

    fractions: dict[tuple[str, str], float] = {}
    commands: list[str] = []
    for a, b in combinations(spec.hosts, 2):
        cmd = build_launch(spec.model_copy(update={"hosts": [a, b], "head": None}))
        commands.append(cmd.describe())
        run, _ = _judged(run_launch(pool, cmd, timeout_s), cmd.launcher)
        usable = run is not None and run.status not in ("failed", "incomplete")
        frac = busbw_fraction_of_line_rate(run, line_rate_gbps).largest_message if run and usable else None
        fractions[(a, b)] = frac or 0.0
    return fractions, commands
