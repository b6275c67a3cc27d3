"""Benchmark: import a cabling plan (CSV) of 256-4,096 hosts x 8 NICs (roce-tune import cabling).

The plan is generated from ``roce_tune.inventory.synthetic.rail_optimised_fabric(n)``: one row per
leaf-spine(-superspine) link and per host NIC, ``Device A, Port A, Device B, Port B, Length, Media``.
Timed: read and check the CSV, build the skeleton, write its YAML (what the command does), best of 3,
pinned to one core where the OS allows. Also printed: loading the written inventory (schema
validation, not part of the import). Target: a 4,096-host plan in <= 2 s on one core (issue 15).

    python benchmarks/bench_import.py
"""

from __future__ import annotations

import csv
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from roce_tune.inventory.cabling_import import read_cabling_csv, skeleton_from_cables  # noqa: E402
from roce_tune.inventory.loader import load_inventory  # noqa: E402
from roce_tune.inventory.skeleton import SkeletonOptions, inventory_yaml, write_atomic  # noqa: E402
from roce_tune.inventory.synthetic import rail_optimised_fabric  # noqa: E402


def plan_csv(data: dict[str, Any], path: Path) -> int:
    """Write the fabric's cabling plan; returns the number of rows."""
    rows = 0
    with open(path, "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(["Device A", "Port A", "Device B", "Port B", "Length", "Media"])
        for link in data["links"]:
            w.writerow(
                [
                    *link["a"].split(":", 1),
                    *link["b"].split(":", 1),
                    link.get("cable_length", "30m"),
                    link.get("media", "optic"),
                ]
            )
            rows += 1
        for h in data["hosts"]:
            for nic in h["nics"]:
                w.writerow(
                    [
                        h["name"],
                        nic["netdev"],
                        *nic["switch_port"].split(":", 1),
                        nic.get("cable_length", "3m"),
                        nic.get("media", "dac"),
                    ]
                )
                rows += 1
    return rows


def main() -> None:
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
    print(f"{'hosts':>6} {'rows':>7} {'csv_MB':>7} {'import_s':>9} {'yaml_lines':>10} {'load_written_s':>15}")
    with tempfile.TemporaryDirectory() as tmp:
        for n in (256, 1024, 4096):
            csv_path = Path(tmp) / f"plan-{n}.csv"
            rows = plan_csv(rail_optimised_fabric(n), csv_path)
            out = Path(tmp) / f"inv-{n}.yaml"
            best = float("inf")
            text = ""
            for _ in range(3):
                t = time.perf_counter()
                plan = read_cabling_csv(csv_path)
                text = inventory_yaml(skeleton_from_cables(plan, SkeletonOptions(model="SN5600")))
                write_atomic(out, text)
                best = min(best, time.perf_counter() - t)
            t = time.perf_counter()
            load_inventory(out)
            load_s = time.perf_counter() - t
            print(
                f"{n:>6} {rows:>7} {csv_path.stat().st_size / 1e6:>7.2f} {best:>9.3f} "
                f"{text.count(chr(10)):>10} {load_s:>15.3f}"
            )
    print("target: 4,096 hosts <= 2 s (import_s)")


if __name__ == "__main__":
    main()
