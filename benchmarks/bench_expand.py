"""Benchmark: expand a fabric intent (roce_tune.inventory.intent) of 256-4,096 hosts x 8 NICs.

Prints the expansion time (intent already validated) and the full load of the intent file (parse +
expand + validate), each the best of 3, pinned to one core where the OS allows. Target: expanding a
4,096-host intent in <= 1 s on one core (issue: compact fabric intent).

    python benchmarks/bench_expand.py
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from ruamel.yaml import YAML  # noqa: E402

from roce_tune.inventory.intent import expand_fabric  # noqa: E402
from roce_tune.inventory.loader import load_inventory  # noqa: E402
from roce_tune.inventory.models import FabricIntent  # noqa: E402
from roce_tune.inventory.synthetic import rail_optimised_intent  # noqa: E402


def _best(fn, n: int = 3) -> float:  # type: ignore[no-untyped-def]
    times = []
    for _ in range(n):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def main() -> None:
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
    print(f"{'hosts':>6} {'switches':>8} {'links':>6} {'expand_s':>9} {'load_intent_file_s':>19}")
    for n in (256, 1024, 2048, 4096):
        data = rail_optimised_intent(n)
        intent = FabricIntent.model_validate(data["fabric"])
        exp = expand_fabric(intent)
        t_expand = _best(lambda: expand_fabric(intent))
        with tempfile.TemporaryDirectory() as d:
            path = Path(d) / "intent.yaml"
            with path.open("w") as fh:
                YAML().dump(data, fh)
            t_load = _best(lambda: load_inventory(path))
        print(f"{n:>6} {len(exp.switches):>8} {len(exp.links):>6} {t_expand:>9.3f} {t_load:>19.3f}")


if __name__ == "__main__":
    main()
