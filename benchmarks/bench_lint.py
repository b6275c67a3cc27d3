"""Benchmark: the resolved topology and every lint rule, CPU seconds each (issue 16).

Usage (one core, low priority)::

    taskset -c 1 nice -n 10 python benchmarks/bench_lint.py --hosts 256 4096
    taskset -c 1 nice -n 10 python benchmarks/bench_lint.py --inventory bench4096.yaml

The fabric is the synthetic rail-optimised one (:mod:`roce_tune.inventory.synthetic`, its intent expanded
by the loader) unless an inventory file is given. Each figure is the best of ``--repeat`` runs with the
cyclic collector paused, as ``roce-tune`` runs them; the platform modules the rules read are imported
first (an import is not the rule's cost). Prints one line per rule slower than 1 ms, then ``topology``,
``rules`` and ``topology+rules`` with the issue's target (0.35 s at 4,096 hosts) marked ok/MISS.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from roce_tune.gcpause import gc_paused  # noqa: E402
from roce_tune.inventory.catalog import load_catalog  # noqa: E402
from roce_tune.inventory.loader import LoadedInventory, load_inventory, load_inventory_text  # noqa: E402
from roce_tune.inventory.rules import RULES, LintContext  # noqa: E402
from roce_tune.inventory.synthetic import rail_optimised_intent  # noqa: E402
from roce_tune.inventory.topology import build_topology  # noqa: E402
from roce_tune.platforms import ALL_PLATFORMS, get_platform  # noqa: E402

#: topology + all lint rules at 4,096 hosts x 8 NICs (issue 16)
TARGET_S = 0.35


def measure(loaded: LoadedInventory, repeat: int) -> dict[str, float]:
    """Best CPU seconds of the topology and of each rule over ``repeat`` runs (fresh topology each run)."""
    catalog = load_catalog()
    best: dict[str, float] = {}
    for _ in range(repeat):
        with gc_paused():
            t0 = time.process_time()
            topo = build_topology(loaded.inventory)
            best["topology"] = min(best.get("topology", 1e9), time.process_time() - t0)
            ctx = LintContext(loaded, topo, catalog)
            for r in RULES.values():
                ctx.rule_id = r.id
                t0 = time.process_time()
                list(r.check(ctx))
                key = f"{r.id} {r.name}"
                best[key] = min(best.get(key, 1e9), time.process_time() - t0)
    return best


def report(label: str, best: dict[str, float], hosts: int | None) -> None:
    """Print the figures of one inventory."""
    rules = sum(v for k, v in best.items() if k != "topology")
    for name, secs in sorted(best.items(), key=lambda kv: -kv[1]):
        if name != "topology" and secs >= 0.001:
            print(f"  {name:40s} {secs:.3f}")
    total = best["topology"] + rules
    mark = "" if hosts != 4096 else (" ok" if total <= TARGET_S else " MISS") + f" (target {TARGET_S} s)"
    print(f"{label}: topology {best['topology']:.3f} s, rules {rules:.3f} s, "
          f"topology+rules {total:.3f} s{mark}")


def main() -> None:
    """Parse the arguments and print the figures."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--hosts", type=int, nargs="*", default=[4096])
    ap.add_argument("--inventory", type=Path, help="an inventory file instead of the synthetic fabrics")
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    for name in ALL_PLATFORMS:
        get_platform(name)
    if args.inventory:
        report(str(args.inventory), measure(load_inventory(args.inventory), args.repeat), None)
        return
    for hosts in args.hosts:
        loaded = load_inventory_text(json.dumps(rail_optimised_intent(hosts)), f"synthetic-{hosts}.yaml")
        report(f"hosts={hosts}", measure(loaded, args.repeat), hosts)


if __name__ == "__main__":
    main()
