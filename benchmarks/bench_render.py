"""Benchmark: render the plan of a synthetic rail-optimised fabric (switch configs, host files, plan.md).

Usage::

    python benchmarks/bench_render.py --hosts 4096             # one size
    python benchmarks/bench_render.py --sweep                  # N = 256, 1024, 4096
    python benchmarks/bench_render.py --hosts 1024 --distinct  # also: every switch rendered on its own

Pinned to one CPU (the lowest the process may use); times are CPU seconds of this process. Prints per
size ``render hosts=N switches=M switch_s=… host_s=… outputs_s=… distinct_switch_renders=…
host_bytes_per_host=… files=…``; with ``--distinct`` also the switch render time when no two switches
share a render (a fabric whose switches all differ, e.g. in cable lengths).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from roce_tune.inventory.catalog import load_catalog  # noqa: E402
from roce_tune.inventory.models import Inventory  # noqa: E402
from roce_tune.inventory.synthetic import rail_optimised_fabric  # noqa: E402
from roce_tune.plan import Plan  # noqa: E402
from roce_tune.platforms import HOST_PLATFORM, get_platform, platform_findings, templating  # noqa: E402
from roce_tune.render.outputs import render_outputs  # noqa: E402
from roce_tune.tuner.compose import build_plan  # noqa: E402


def _switches(plan: Plan, distinct: bool) -> float:
    t0 = time.process_time()
    for sw in plan.switches:
        if distinct:
            templating._RENDERS.clear()
        get_platform(sw.platform).render(plan, sw)
        platform_findings(plan, sw)
    return time.process_time() - t0


def run(n_hosts: int, distinct: bool) -> None:
    """Derive the plan of ``n_hosts`` hosts (not timed), then time each render stage and print one line."""
    plan = build_plan(Inventory.model_validate(rail_optimised_fabric(n_hosts)), load_catalog(),
                      inventory_file=f"synthetic-{n_hosts}")
    host = get_platform(HOST_PLATFORM)
    get_platform(plan.switches[0].platform).render(plan, plan.switches[0])  # templates compiled: not timed
    templating._RENDERS.clear()
    switch_s = _switches(plan, False)
    t0 = time.process_time()
    host_files = host.render_hosts(plan, plan.hosts)
    host_s = time.process_time() - t0
    templating._RENDERS.clear()
    t0 = time.process_time()
    files = render_outputs(plan)
    outputs_s = time.process_time() - t0
    data = [len(text) for name, text in host_files.items() if name != host.SHARED_SCRIPT]
    print(f"render hosts={n_hosts} switches={len(plan.switches)} switch_s={switch_s:.3f} host_s={host_s:.3f} "
          f"outputs_s={outputs_s:.3f} distinct_switch_renders={len(templating._RENDERS)} "
          f"host_bytes_per_host={sum(data) // max(len(data), 1)} files={len(files)} "
          f"bytes={sum(len(v) for v in files.values())}")
    if distinct:
        print(f"render hosts={n_hosts} every_switch_distinct_switch_s={_switches(plan, True):.3f}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--hosts", type=int, default=4096)
    ap.add_argument("--sweep", action="store_true")
    ap.add_argument("--distinct", action="store_true")
    args = ap.parse_args()
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
    for n in (256, 1024, 4096) if args.sweep else (args.hosts,):
        run(n, args.distinct)


if __name__ == "__main__":
    main()
