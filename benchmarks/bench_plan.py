"""Benchmark: derive (and optionally render + write) the plan of a synthetic rail-optimised fabric.

Usage::

    python benchmarks/bench_plan.py --hosts 4096            # derive only (with the deadlock check)
    python benchmarks/bench_plan.py --hosts 4096 --render   # + render and write all files
    python benchmarks/bench_plan.py --sweep                 # N = 512, 1024, 2048, 4096

Prints figures per stage (seconds, peak RSS MB) and, as its last line,
``plan hosts=N switches=M seconds=S peak_rss_mb=R`` where S is the derive time.
"""

from __future__ import annotations

import argparse
import resource
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from roce_tune.inventory.catalog import load_catalog  # noqa: E402
from roce_tune.inventory.models import Inventory  # noqa: E402
from roce_tune.inventory.synthetic import rail_optimised_fabric  # noqa: E402
from roce_tune.tuner.compose import build_plan  # noqa: E402


def peak_rss_mb() -> float:
    """Peak resident set size of this process in MB (Linux ru_maxrss is KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def run(n_hosts: int, render: bool) -> tuple[int, float]:
    catalog = load_catalog()
    t0 = time.perf_counter()
    inv = Inventory.model_validate(rail_optimised_fabric(n_hosts))
    t1 = time.perf_counter()
    plan = build_plan(inv, catalog, inventory_file=f"synthetic-{n_hosts}")
    t2 = time.perf_counter()
    print(f"validate hosts={n_hosts} seconds={t1 - t0:.3f}")
    print(f"derive hosts={n_hosts} switches={len(plan.switches)} ports={sum(len(s.ports) for s in plan.switches)} "
          f"seconds={t2 - t1:.3f} peak_rss_mb={peak_rss_mb():.0f} deadlock_nodes={plan.deadlock.nodes} "
          f"deadlock_edges={plan.deadlock.edges} scenarios={plan.deadlock.scenarios_checked}")
    if render:
        from roce_tune.render.outputs import render_outputs, write_tree

        t3 = time.perf_counter()
        files = render_outputs(plan)
        t4 = time.perf_counter()
        print(f"render files={len(files)} bytes={sum(len(v) for v in files.values())} seconds={t4 - t3:.3f} "
              f"peak_rss_mb={peak_rss_mb():.0f}")
        with tempfile.TemporaryDirectory() as tmp:
            t5 = time.perf_counter()
            write_tree(files, Path(tmp) / "out")
            t6 = time.perf_counter()
        print(f"write files={len(files)} seconds={t6 - t5:.3f} peak_rss_mb={peak_rss_mb():.0f}")
    return len(plan.switches), t2 - t1


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--hosts", type=int, default=4096)
    ap.add_argument("--render", action="store_true")
    ap.add_argument("--sweep", action="store_true")
    args = ap.parse_args()
    if args.sweep:
        for n in (512, 1024, 2048, 4096):
            switches, secs = run(n, False)
            print(f"sweep hosts={n} switches={switches} seconds={secs:.3f} s_per_host_ms={1000 * secs / n:.3f}")
    switches, secs = run(args.hosts, args.render)
    print(f"plan hosts={args.hosts} switches={switches} seconds={secs:.3f} peak_rss_mb={peak_rss_mb():.0f}")


if __name__ == "__main__":
    main()
