"""Benchmark: ``lint``, ``explain`` of one value, derive, and reading plan.json back, on synthetic fabrics.

Usage (issue 16: one core, low priority)::

    taskset -c 0 nice -n 10 python benchmarks/bench_derive.py --hosts 1024 4096

The inventory is the synthetic rail-optimised fabric (:mod:`roce_tune.inventory.synthetic`) written as an
intent YAML file, so every figure goes through the real file -> load -> lint/derive path. ``lint`` and
``explain`` run the CLI commands in-process (typer's runner: no interpreter start-up in the figure);
``--subprocess`` also times them as ``python -m roce_tune.cli`` (start-up and imports included).

Prints one line per stage: ``<stage> hosts=N cpu_s=… wall_s=…`` plus sizes where they apply, the peak RSS
after load, lint and derive, and ``peak_rss_mb`` at the end of each fabric.
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from typer.testing import CliRunner  # noqa: E402

from roce_tune.cli import app  # noqa: E402
from roce_tune.inventory.loader import load_inventory  # noqa: E402
from roce_tune.inventory.synthetic import rail_optimised_intent  # noqa: E402
from roce_tune.pipeline import derive_plan  # noqa: E402
from roce_tune.plan import plan_from_json, plan_to_json  # noqa: E402

_T = TypeVar("_T")


def _timed(stage: str, hosts: int, fn: Callable[[], _T], extra: str = "") -> _T:
    c0, w0 = time.process_time(), time.perf_counter()
    result = fn()
    cpu, wall = time.process_time() - c0, time.perf_counter() - w0
    print(f"{stage} hosts={hosts} cpu_s={cpu:.3f} "
          f"wall_s={wall:.3f}{(' ' + extra) if extra else ''}", flush=True)
    return result


def _cli(args: list[str]) -> str:
    result = CliRunner().invoke(app, args)
    if result.exit_code not in (0, 1):
        raise RuntimeError(f"roce-tune {' '.join(args)} exited {result.exit_code}: {result.output[-2000:]}")
    return result.output


def run(hosts: int, subproc: bool) -> None:
    """Time every stage on a fabric of ``hosts`` hosts x 8 NICs."""
    with tempfile.TemporaryDirectory() as tmp:
        inv = Path(tmp) / f"synthetic-{hosts}.yaml"
        inv.write_text(yaml.safe_dump(rail_optimised_intent(hosts), sort_keys=False), encoding="utf-8")
        loaded = _timed("load", hosts, lambda: load_inventory(inv))
        plan = _timed("derive", hosts, lambda: derive_plan(loaded))
        # the front half's own peak (the stages below add plan.json text and a second plan on top of it)
        print(f"  peak_rss_mb after load+lint+derive={_peak_rss_mb():.0f}", flush=True)
        sw = next(s for s in plan.switches if s.role == "leaf")
        port = next(p for p in sw.ports if p.lossless)
        target = f"{sw.name}:{port.name}"
        text = _timed("lint", hosts, lambda: _cli(["lint", str(inv)]))
        print(f"  lint findings lines={text.count(chr(10))}")
        _timed("explain", hosts, lambda: _cli(["explain", str(inv), target, "xoff_bytes"]),
               f"target={target}")
        _timed("explain-kmax", hosts,
               lambda: _cli(["explain", str(inv), target, "kmax_bytes", "--no-scorecard"]))
        last = plan.switches[-1]  # worst case: every switch before it is derived (ECN profile names)
        _timed("explain-last-switch", hosts,
               lambda: _cli(["explain", str(inv), f"{last.name}:{last.ports[0].name}", "kmax_bytes",
                             "--no-scorecard"]), f"target={last.name}")
        _timed("explain-host", hosts,
               lambda: _cli(["explain", str(inv), plan.hosts[-1].name, "nic_xoff_bytes"]))
        doc = _timed("plan.json-dump", hosts, lambda: plan_to_json(plan))
        print(f"  plan.json bytes={len(doc.encode()) if isinstance(doc, str) else len(doc)}")
        _timed("plan.json-load", hosts, lambda: plan_from_json(doc))
        if subproc:
            env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
            for stage, args in (("lint-cli", ["lint", str(inv)]),
                                ("explain-cli", ["explain", str(inv), target, "xoff_bytes"])):
                w0 = time.perf_counter()
                subprocess.run([sys.executable, "-m", "roce_tune.cli", *args], env=env, check=False,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                print(f"{stage} hosts={hosts} wall_s={time.perf_counter() - w0:.3f}", flush=True)
    print(f"peak_rss_mb={_peak_rss_mb():.0f}")


def _peak_rss_mb() -> float:
    """Peak resident set of this process so far, MB (Linux reports ``ru_maxrss`` in KB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("--hosts", type=int, nargs="+", default=[1024, 4096])
    ap.add_argument("--subprocess", action="store_true", help="also time lint/explain as separate processes")
    args = ap.parse_args()
    for n in args.hosts:
        run(n, args.subprocess)


if __name__ == "__main__":
    main()
