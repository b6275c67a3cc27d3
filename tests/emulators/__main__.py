"""CLI: ``python -m tests.emulators --platform eos --name leaf1 --port 0``.

Prints one ``listening 127.0.0.1:PORT NAME PLATFORM`` line per device (first line is
``listening 127.0.0.1:PORT`` for a single device, as Ansible tests parse it), then
serves until SIGINT/SIGTERM.  ``--fleet FILE`` (YAML or JSON list of EmulatorSpec
fields) starts several devices; ``--state-dir DIR`` writes ``DIR/<name>.running`` with
each device's running configuration whenever it changes (polled every 0.2 s) and on exit.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import threading
from pathlib import Path

import yaml

from .core import EmulatorSpec, Faults
from .server import start_emulators


def _specs(args: argparse.Namespace) -> list[EmulatorSpec]:
    if args.fleet:
        doc = yaml.safe_load(Path(args.fleet).read_text())
        specs = []
        for item in doc:
            faults = Faults(**item.pop("faults", {}))
            specs.append(EmulatorSpec(faults=faults, **item))
        return specs
    spec = EmulatorSpec(args.platform, args.name, port=args.port, time_scale=args.time_scale)
    if args.username:
        spec.username = args.username
    if args.password:
        spec.password = args.password
    if args.authorized_key:
        spec.authorized_keys = list(args.authorized_key)
    if args.initial_config:
        text = Path(args.initial_config).read_text()
        spec.initial_config = json.loads(text) if args.platform == "sonic" else text
    return [spec]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m tests.emulators", description=__doc__.splitlines()[0])
    ap.add_argument("--platform", choices=["eos", "nxos", "junos", "cumulus", "sonic", "host"])
    ap.add_argument("--name", default="dev1")
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--username", default=os.environ.get("ROCE_TUNE_USERNAME"))
    ap.add_argument("--password", default=os.environ.get("ROCE_TUNE_PASSWORD"))
    ap.add_argument("--authorized-key", action="append", help="OpenSSH public key line or .pub path")
    ap.add_argument("--time-scale", type=float, default=1.0)
    ap.add_argument("--initial-config", help="file with the starting configuration")
    ap.add_argument("--fleet", help="YAML/JSON list of EmulatorSpec dicts")
    ap.add_argument("--state-dir", help="write <name>.running files here")
    args = ap.parse_args(argv)
    if not args.fleet and not args.platform:
        ap.error("--platform or --fleet is required")
    fleet = start_emulators(_specs(args))
    for i, dev in enumerate(fleet):
        suffix = "" if len(fleet) == 1 else f" {dev.name} {dev.platform}"
        print(f"listening 127.0.0.1:{dev.port}{suffix}", flush=True)
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    state_dir = Path(args.state_dir) if args.state_dir else None
    last: dict[str, str] = {}

    def dump() -> None:
        if state_dir is None:
            return
        state_dir.mkdir(parents=True, exist_ok=True)
        for dev in fleet:
            text = dev.running_config()
            if last.get(dev.name) != text:
                (state_dir / f"{dev.name}.running").write_text(text)
                last[dev.name] = text

    try:
        while not stop.wait(0.2):
            dump()
    finally:
        dump()
        fleet.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
