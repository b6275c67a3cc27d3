"""Benchmark: `apply` across many emulated devices, sequential vs concurrent.

Starts N loopback SSH emulators (EOS, NX-OS, Junos, Cumulus, SONiC in turn; tests/emulators), plans a
synthetic inventory whose switches point at them, and times the real apply engine (netmiko's real
drivers) twice: ``--concurrency 1`` and ``--concurrency C``. Default mode is the dry run (connect, read
the running config, diff); ``--push`` pushes for real (fresh emulators for each pass).

Usage::

    python benchmarks/bench_apply.py --devices 50 --concurrency 10 [--push]

Last line: ``apply devices=N sequential_s=S concurrent_s=C concurrency=K ratio=R``.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from roce_tune.deploy.drivers import PushOptions  # noqa: E402
from roce_tune.deploy.runner import ApplyOptions, apply_targets, targets_from_files  # noqa: E402
from roce_tune.inventory.models import Inventory  # noqa: E402
from roce_tune.render.outputs import render_outputs  # noqa: E402
from roce_tune.tuner.compose import build_plan  # noqa: E402
from tests.emulators import EmulatorSpec, start_emulators  # noqa: E402

PLATFORMS = {  # platform: (model, port names of 4 host ports)
    "eos": ("7060DX5-64S", "Ethernet[1-4]/1"),
    "nxos": ("N9K-C9364D-GX2A", "Ethernet1/[1-4]"),
    "junos": ("QFX5130-32CD", "et-0/0/[0-3]"),
    "cumulus": ("SN4700", "swp[1-4]"),
    "sonic": ("SN4700", "Ethernet[0-24/8]"),
}


def fleet_inventory(n: int, ports: dict[str, int]) -> dict[str, object]:
    """Inventory data: n leaves round-robin over the platforms, 4 host ports each, mgmt on loopback."""
    from roce_tune.inventory.models import expand_interface_pattern

    switches, hosts = [], []
    names = list(PLATFORMS)
    for i in range(n):
        plat = names[i % len(names)]
        model, pattern = PLATFORMS[plat]
        name = f"{plat}{i}"
        switches.append({"name": name, "platform": plat, "model": model, "role": "leaf",
                         "mgmt": {"host": "127.0.0.1", "port": ports[name]},
                         "ports": [{"name": pattern, "speed": "400G"}]})
        for k, port in enumerate(expand_interface_pattern(pattern)):
            hosts.append({"name": f"h{i}x{k}", "nics": [{"model": "connectx-7", "netdev": "ens1f0np0",
                                                          "rdma_device": "mlx5_0", "speed": "400G",
                                                          "switch_port": f"{name}:{port}",
                                                         "cable_length": "3m"}]})
    return {"site": {"name": "bench"}, "switches": switches, "hosts": hosts}


def one_pass(n: int, concurrency: int, push: bool, workdir: Path) -> float:
    names = list(PLATFORMS)
    specs = [EmulatorSpec(names[i % len(names)], f"{names[i % len(names)]}{i}", username="bench",
                          password="bench-pw") for i in range(n)]
    fleet = start_emulators(specs, workdir=workdir / f"emu-{concurrency}")
    try:
        inv = Inventory.model_validate(fleet_inventory(n, {s.name: fleet.port(s.name) for s in specs}))
        plan = build_plan(inv)
        targets = [t for t in targets_from_files(plan, render_outputs(plan, include_hosts=False))]
        opts = ApplyOptions(dry_run=not push, concurrency=concurrency, allow_disruptive=push,
                            insecure_skip_host_key_check=True, log_dir=workdir / f"logs-{concurrency}",
                            push=PushOptions(confirm_s=120, read_timeout_s=30))
        t0 = time.perf_counter()
        results = apply_targets(targets, opts)
        elapsed = time.perf_counter() - t0
        bad = [(r.name, r.state, r.error) for r in results if r.failed]
        states = sorted({r.state for r in results})
        print(f"pass concurrency={concurrency} devices={len(results)} seconds={elapsed:.2f} states={states}"
              + (f" failed={bad[:3]}" if bad else ""))
        return elapsed
    finally:
        fleet.stop()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--devices", type=int, default=50)
    ap.add_argument("--concurrency", type=int, default=10)
    ap.add_argument("--push", action="store_true", help="push for real instead of the dry run")
    args = ap.parse_args()
    os.environ.setdefault("ROCE_TUNE_USERNAME", "bench")
    os.environ.setdefault("ROCE_TUNE_PASSWORD", "bench-pw")
    with tempfile.TemporaryDirectory() as tmp:
        seq = one_pass(args.devices, 1, args.push, Path(tmp))
        con = one_pass(args.devices, args.concurrency, args.push, Path(tmp))
    print(f"apply devices={args.devices} sequential_s={seq:.2f} concurrent_s={con:.2f} "
          f"concurrency={args.concurrency} ratio={seq / con:.1f}")


if __name__ == "__main__":
    main()
