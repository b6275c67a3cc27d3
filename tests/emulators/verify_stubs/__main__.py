"""Serve an emulated lab for ``roce-tune verify`` on the inventory's own management ports.

Usage (from the repo root)::

    python -m tests.emulators.verify_stubs --inventory inventories/lab-2node.yaml [--mistune]
        [--workdir DIR] [--model pfc_onset_bdp=0.72 | pfc_onset_bytes=N ...] [--username admin --password
        admin]

It deploys the inventory's plan (``--mistune``: the plan of a copy with deliberately bad ECN and
DCQCN pins, whose path it prints), prints the ``roce-tune verify`` command to try, and serves until
SIGINT/SIGTERM.
"""

from __future__ import annotations

import argparse
import signal
import tempfile
import threading
from pathlib import Path

from roce_tune.inventory.loader import load_inventory
from roce_tune.pipeline import derive_plan

from .fleet import start_lab

#: Mis-tuned the way the adjust loop can fix by stepping toward the tuner's values (both are accepted by the
#: tuner's safety checks): an ECN ramp far below one BDP (250 kB at 400G), so DCQCN cuts the rate before the
#: queue can keep the link busy, and increase steps a fifth of the firmware's 5/50 Mb/s, so it recovers
#: slowly.
MISTUNE = [{"set": {"kmin_bytes": 20_000, "kmax_bytes": 60_000}, "reason": "deliberately mis-tuned ECN: ramp "
            "<< BDP"},
           {"role": "host", "set": {"rpg_ai_rate_mbps": 1, "rpg_hai_rate_mbps": 10},
            "reason": "deliberately mis-tuned DCQCN: increase steps below the firmware's"}]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m tests.emulators.verify_stubs")
    ap.add_argument("--inventory", required=True)
    ap.add_argument("--mistune", action="store_true", help="deploy a deliberately mis-tuned plan")
    ap.add_argument("--workdir", help="state directory (default: a temporary one)")
    ap.add_argument("--model", nargs="*", default=[], help="response-model parameters NAME=VALUE")
    ap.add_argument("--username", default="admin")
    ap.add_argument("--password", default="admin")
    a = ap.parse_args(argv)
    work = Path(a.workdir or tempfile.mkdtemp(prefix="roce-verify-lab-"))
    model = {k: float(v) for k, v in (item.split("=", 1) for item in a.model)}
    lab = start_lab(a.inventory, work, fixed_ports=True, model=model, username=a.username,
                    password=a.password)
    inv = Path(a.inventory)
    if a.mistune:
        inv = lab.write_inventory(work / f"{inv.stem}-mistuned.yaml", overrides=MISTUNE)
    lab.deploy(derive_plan(load_inventory(inv)))
    for dev in lab.fleet:
        print(f"listening 127.0.0.1:{dev.port} {dev.name} {dev.spec.platform}", flush=True)
    print(f"inventory {inv}\ntry: ROCE_TUNE_USERNAME={a.username} ROCE_TUNE_PASSWORD=... roce-tune verify "
          f"{inv} --insecure-skip-host-key-check{' --adjust' if a.mistune else ''}", flush=True)
    stop = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stop.set())
    stop.wait()
    lab.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
