"""Start an emulated lab for ``roce-tune verify`` from an inventory: the SONiC model switch(es) and
GPU hosts whose PATH starts with the verify stubs, a fabric directory wiring them to the response
model, and a copy of the inventory whose management ports point at the emulators.

Only SONiC switches are emulated here (the platform the lab inventory uses).
"""

from __future__ import annotations

import copy
import io
import socket
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ruamel.yaml import YAML

from roce_tune.inventory.loader import load_inventory
from roce_tune.pipeline import derive_plan
from roce_tune.plan import Plan
from roce_tune.platforms import host
from roce_tune.render.outputs import render_outputs

from .. import EmulatorFleet, EmulatorSpec, start_emulators
from ..host import HostDevice
from ..sonic import factory_db
from . import model as m
from .switch import PLATFORM

STUB_DIR = Path(__file__).resolve().parent
#: MLNX_OFED ``roce_rp`` files the host script writes that the host emulator does not create (firmware
#: defaults)
MISSING_RP_KNOBS = {"rpg_min_dec_fac": 50}
TOOLS = ("all_reduce_perf", "all_gather_perf", "alltoall_perf", "sendrecv_perf", "mpirun", "srun",
         "ibv_devinfo", "ip")


class _WriteAllOs:
    """``os`` for :mod:`tests.emulators.host` whose ``write`` finishes partial writes.

    WORKAROUND (reported to the emulator owner): the host emulator writes client input to its
    non-blocking PTY master with one ``os.write`` and ignores a short write, so a large here-document
    (an ~11 KB host script) intermittently loses bytes and the apply engine times out. While a lab is
    running this proxy retries until every byte is written.
    """

    def __init__(self, real):  # type: ignore[no-untyped-def]
        self._real = real

    def __getattr__(self, name: str):  # type: ignore[no-untyped-def]
        return getattr(self._real, name)

    def write(self, fd: int, data: bytes) -> int:
        import select

        view, done = memoryview(data), 0
        while done < len(view):
            try:
                done += self._real.write(fd, view[done:])
            except BlockingIOError:
                select.select([], [fd], [], 1.0)
        return done


_PATCHED = [0]


def _pty_fix(on: bool) -> None:
    from .. import host as host_mod

    if on:
        if _PATCHED[0] == 0 and not isinstance(host_mod.os, _WriteAllOs):
            host_mod.os = _WriteAllOs(host_mod.os)  # type: ignore[assignment]
        _PATCHED[0] += 1
    else:
        _PATCHED[0] = max(0, _PATCHED[0] - 1)
        if _PATCHED[0] == 0 and isinstance(host_mod.os, _WriteAllOs):
            host_mod.os = host_mod.os._real  # type: ignore[assignment]


def make_stub_bin(dest: Path) -> Path:
    """Write one-line wrappers for every stub tool into ``dest`` (the host's ``stub_dirs`` entry)."""
    dest.mkdir(parents=True, exist_ok=True)
    for tool in TOOLS:
        path = dest / tool
        # -S: the stubs need only the standard library; skipping site halves each call's start-up
        path.write_text(f'#!/bin/sh\nexec "{sys.executable}" -S "{STUB_DIR / "stub_main.py"}" {tool} "$@"\n')
        path.chmod(0o755)
    return dest


def switch_db(plan: Plan, name: str) -> dict[str, Any]:
    """A CONFIG_DB with the plan's ports of switch ``name`` (speeds in Mb/s, MTU 9100) and no QoS."""
    sw = plan.switch(name)
    db = factory_db(name, 0)
    db["PORT"] = {p.name: {"admin_status": "up", "mtu": "9100", "speed": str(p.speed_gbps * 1000),
                           "lanes": ",".join(str(8 * i + k) for k in range(p.lanes))}
                  for i, p in enumerate(sw.ports)}
    return db


@dataclass
class VerifyLab:
    """A running lab: ``fleet``, ``fabric_dir``, and ``inventory`` (the port-patched copy)."""

    fleet: EmulatorFleet
    fabric_dir: Path
    inventory: Path
    workdir: Path
    original: Path
    ports: dict[str, int] = field(default_factory=dict)

    def stop(self) -> None:
        self.fleet.stop()
        _pty_fix(False)

    def __enter__(self) -> VerifyLab:  # noqa: PYI034
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def write_inventory(self, dest: Path, overrides: list[dict[str, Any]] | None = None,
                        hosts_patch: dict[str, dict[str, Any]] | None = None) -> Path:
        """Copy of the original inventory with the emulators' ports, plus ``policy.overrides`` entries."""
        yaml = YAML()
        data = yaml.load(self.original.read_text())
        for kind in ("switches", "hosts"):
            for dev in data.get(kind, []):
                if dev["name"] in self.ports:
                    dev["mgmt"]["port"] = self.ports[dev["name"]]
                    dev["mgmt"]["host"] = "127.0.0.1"
                for k, v in (hosts_patch or {}).get(dev["name"], {}).items():
                    dev[k] = v
        if overrides:
            data.setdefault("policy", {}).setdefault("overrides", [])
            data["policy"]["overrides"].extend(copy.deepcopy(overrides))
        buf = io.StringIO()
        yaml.dump(data, buf)
        dest.write_text(buf.getvalue())
        return dest

    def set_host(self, name: str, **values: Any) -> None:
        """Change a host's entry in fabric.json (``slow`` factor, ``pfc_storm``)."""
        with m.locked(self.fabric_dir):
            fab = m.read_json(self.fabric_dir / "fabric.json", {})
            fab["hosts"][name].update(values)
            m.write_json(self.fabric_dir / "fabric.json", fab)

    def set_model(self, **params: float) -> None:
        """Change model parameters (:data:`model.DEFAULTS` or :data:`model.ONSET_OVERRIDES` names).

        Raises:
            ValueError: an unknown parameter name.
        """
        _check_model(params)
        with m.locked(self.fabric_dir):
            fab = m.read_json(self.fabric_dir / "fabric.json", {})
            fab["model"].update(params)
            m.write_json(self.fabric_dir / "fabric.json", fab)

    def deploy(self, plan: Plan) -> None:
        """Put ``plan`` on the lab directly (test setup, not the apply engine): merge each switch's
        rendered CONFIG_DB tables into its running DB and run each host script in its sandbox."""
        import json

        files = render_outputs(plan)
        for sw in plan.switches:
            dev = self.fleet[sw.name]
            desired = json.loads(files[f"switches/{sw.name}.json"])

            def merge(dev=dev, desired=desired) -> None:
                db = copy.deepcopy(dev.config_db)
                for table, rows in desired.items():
                    for key, val in rows.items():
                        db.setdefault(table, {}).setdefault(key, {}).update(val)
                dev.config_db = db
            self.fleet.call(merge)
        for h in plan.hosts:
            dev = self.host(h.name)
            script = host.host_script(files, h.name)  # its data file and the shared host script, as pushed
            assert script is not None, f"no host script for {h.name}"
            # run from a file, as apply runs it: the script installs itself as the boot script (rt_self), and
            # its read-back (--check, verify's as-found read) compares that file with the running script
            path = dev.home / f"{h.name}.deploy.sh"
            path.write_text(script)
            res = subprocess.run(["bash", str(path)], env=dev.env(), capture_output=True,
                                 text=True, cwd=str(dev.home), timeout=60, check=False)
            path.unlink()
            if res.returncode != 0:
                raise RuntimeError(f"host script of {h.name} failed: {res.stdout[-500:]}{res.stderr[-500:]}")

    def host(self, name: str) -> HostDevice:
        """The emulated host ``name``."""
        dev = self.fleet[name]
        assert isinstance(dev, HostDevice)
        return dev

    def runs(self) -> list[dict[str, Any]]:
        """Every job the stubs simulated (``runs.log``)."""
        import json

        path = self.fabric_dir / "runs.log"
        return [json.loads(line) for line in path.read_text().splitlines()] if path.is_file() else []


def _check_model(params: dict[str, float]) -> None:
    unknown = sorted(set(params) - set(m.DEFAULTS) - set(m.ONSET_OVERRIDES))
    if unknown:
        raise ValueError(f"unknown response-model parameter(s) {', '.join(unknown)}; known: "
                         f"{', '.join(sorted([*m.DEFAULTS, *m.ONSET_OVERRIDES]))}")


def start_lab(inventory: str | Path, workdir: Path, *, fixed_ports: bool = False,
              model: dict[str, float] | None = None, username: str = "admin",
              password: str = "admin") -> VerifyLab:
    """Start the lab for ``inventory`` (its SONiC switches and hosts) under ``workdir``.

    Args:
        fixed_ports: listen on the inventory's management ports (CLI demo) instead of OS-chosen ones.
        model: response-model parameters (:data:`model.DEFAULTS` or :data:`model.ONSET_OVERRIDES` names;
            without an onset override the PFC onset follows the switch's buffer configuration).

    Raises:
        ValueError: a switch that is not SONiC, a device without ``mgmt``, or an unknown model parameter.
    """
    _check_model(model or {})
    original = Path(inventory).resolve()
    plan = derive_plan(load_inventory(original))
    fabric_dir = workdir / "fabric"
    fabric_dir.mkdir(parents=True, exist_ok=True)
    stub_bin = make_stub_bin(workdir / "stub-bin")
    specs = []
    for sw in plan.switches:
        if sw.platform != "sonic":
            raise ValueError(f"{sw.name}: only SONiC switches are emulated by the verify lab")
        specs.append(EmulatorSpec(PLATFORM, sw.name, port=(sw.mgmt_port or 0) if fixed_ports else 0,
                                  username=username, password=password,
                                  initial_config=switch_db(plan, sw.name),
                                  options={"fabric_dir": str(fabric_dir)}))
    for j, h in enumerate(plan.hosts):
        nics = [{"netdev": n.netdev, "rdma": n.rdma_device, "pci": n.pci_address
                 or f"0000:{0x17 + i:02x}:00.0",
                 "speed_mbps": n.speed_gbps * 1000, "ipv4": f"192.0.2.{11 + 16 * j + i}"}
                for i, n in enumerate(h.nics)]
        specs.append(EmulatorSpec("host", h.name, port=(h.mgmt_port or 0) if fixed_ports else 0,
                                  username=username,
                                  password=password, options={"nics": nics, "stub_dirs": [str(stub_bin)],
                                                              "sudo_nopasswd": True,
                                                              "env": {"ROCE_EMU_FABRIC": str(fabric_dir)}}))
    _pty_fix(True)
    try:
        fleet = start_emulators(specs, workdir=workdir / "emu")
    except BaseException:
        _pty_fix(False)
        raise
    for h in plan.hosts:
        for n in h.nics:  # knobs the MLNX_OFED sysfs has and the host emulator leaves out
            rp = fleet[h.name].sysroot / "sys/class/net" / n.netdev / "ecn/roce_rp"  # type: ignore[attr-defined]
            for knob, value in MISSING_RP_KNOBS.items():
                if not (rp / knob).exists():
                    (rp / knob).write_text(f"{value}\n")
            m.zero_nic_counters(fleet[h.name].sysroot, n.netdev, n.rdma_device)  # type: ignore[attr-defined]
    hosts: dict[str, dict[str, Any]] = {}
    for h in plan.hosts:
        nic = h.nics[0]
        sw_name, _, port = (nic.switch_port or ":").partition(":")
        sysroot = fleet[h.name].sysroot  # type: ignore[attr-defined]
        hosts[h.name] = {"sysroot": str(sysroot), "netdev": nic.netdev, "rdma": nic.rdma_device,
                         "switch": sw_name, "port": port, "slow": 1.0, "pfc_storm": False}
    m.write_json(fabric_dir / "fabric.json", {"model": dict(model or {}), "hosts": hosts})
    lab = VerifyLab(fleet=fleet, fabric_dir=fabric_dir, inventory=workdir / original.name, workdir=workdir,
                    original=original, ports={d.name: d.port for d in fleet})
    lab.write_inventory(lab.inventory)
    return lab


def close_switch_mgmt(inventory: Path, index: int = 0) -> int:
    """Point ``switches[index]``'s management port in ``inventory`` at a loopback port nothing listens on (a
    switch verify, audit or apply cannot reach); returns that port."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        closed = int(s.getsockname()[1])
    yaml = YAML()
    data = yaml.load(inventory.read_text())
    data["switches"][index]["mgmt"]["port"] = closed
    buf = io.StringIO()
    yaml.dump(data, buf)
    inventory.write_text(buf.getvalue())
    return closed
