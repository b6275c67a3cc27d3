"""Fixtures for apply tests: shipped inventories re-pointed at loopback SSH emulators."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import asyncssh
import pytest
from ruamel.yaml import YAML

from roce_tune.deploy.runner import DeviceResult
from tests.emulators import EmulatorSpec, start_emulators
from tests.emulators.pytest_plugin import emulator_fleet  # noqa: F401
from tests.emulators.sonic import factory_db

REPO = Path(__file__).resolve().parents[2]
USER, PASSWORD = "netops", "s3cret-Pa55"


@pytest.fixture(autouse=True)
def _credentials(monkeypatch: pytest.MonkeyPatch) -> None:
    """Credentials come from the environment variables the inventory names (never the inventory)."""
    monkeypatch.setenv("ROCE_TUNE_USERNAME", USER)
    monkeypatch.setenv("ROCE_TUNE_PASSWORD", PASSWORD)


def _sonic_db(sw: dict) -> dict:  # type: ignore[type-arg]
    """A factory CONFIG_DB whose PORT table has every port the inventory declares (a real switch has
    all its ports; the emulator's default has four)."""
    from roce_tune.inventory.models import expand_interface_pattern
    from roce_tune.units import parse_speed_gbps

    db = factory_db(sw["name"])
    # Broadcom SKU (DellEMC-Z9332f-O32): SONiC's traditional model
    # and
    if not str(sw["model"]).startswith("SN"):
        db["DEVICE_METADATA"]["localhost"]["hwsku"] = f"{sw['model']}-O32"  # the plan's pool modes and types
        db["BUFFER_POOL"] = {"ingress_lossless_pool": {"mode": "dynamic", "size": "66394076",
                                                       "type": "ingress"},
                             "egress_lossless_pool": {"mode": "static", "size": "38462204", "type": "egress"}}
    db["DEVICE_METADATA"]["localhost"]["buffer_model"] = sw.get("buffer_model") or (
        "dynamic" if str(sw["model"]).startswith("SN") else "traditional")  # SONiC's default per ASIC
    db["PORT"] = {}
    for i, port in enumerate(p for entry in sw["ports"] for p in [(entry, n) for n in
                                                                     expand_interface_pattern(entry["name"])]):
        entry, name = port
        db["PORT"][name] = {"admin_status": "up", "alias": f"etp{i + 1}", "index": str(i + 1), "mtu": "9100",
                            "speed": str(parse_speed_gbps(entry["speed"]) * 1000), "lanes": str(i * 8)}
    return db


def emulated_inventory(inventory: str, tmp_path: Path, *, hosts: bool = False, time_scale: float = 1.0,
                       faults: dict[str, dict[str, object]] | None = None,
                       host_nics: bool = True, password: str = PASSWORD):  # type: ignore[no-untyped-def]
    """Start one emulator per device of a shipped inventory and write a copy whose ``mgmt`` points at them.

    Returns (fleet, inventory path, known_hosts path). Hosts are emulated only with ``hosts=True``
    (otherwise they are dropped from the copy). Every device takes ``username`` USER and ``password``.
    """
    data = YAML(typ="safe").load((REPO / "inventories" / inventory).read_text())
    if not hosts:
        data["hosts"] = []
    specs = [EmulatorSpec(sw["platform"], sw["name"], username=USER, password=password, time_scale=time_scale,
                          initial_config=_sonic_db(sw) if sw["platform"] == "sonic" else None)
             for sw in data["switches"]]
    for h in data.get("hosts", []):
        nics = [{"netdev": n["netdev"], "rdma": n["rdma_device"], "pci": f"0000:{17 + i:02x}:00.0",
                 "speed_mbps": 400000} for i, n in enumerate(h["nics"])]
        specs.append(EmulatorSpec("host", h["name"], username=USER, password=password,
                                  options={"nics": nics} if host_nics else {}))
    for spec in specs:
        if faults and spec.name in faults:
            from tests.emulators import Faults

            spec.faults = Faults(**faults[spec.name])  # type: ignore[arg-type]
    fleet = start_emulators(specs, workdir=tmp_path / "emu")
    for dev in data["switches"] + data.get("hosts", []):
        dev["mgmt"] = {"host": "127.0.0.1", "port": fleet.port(dev["name"])}
    path = tmp_path / inventory
    with open(path, "w") as fh:
        YAML().dump(data, fh)
    pub = asyncssh.read_private_key(str(fleet.host_key_path)).export_public_key().decode().split()
    known = tmp_path / "known_hosts"
    known.write_text("".join(f"[127.0.0.1]:{fleet.port(s.name)} {pub[0]} {pub[1]}\n" for s in specs))
    return fleet, path, known


def dry_run_then_push(inv: Path, device: str, tmp_path: Path, known: Path,
                      edit: Callable[[str], str] | None = None,
                      dry_run_only: bool = False) -> list[DeviceResult]:
    """``apply_targets`` on ``device`` of ``inv`` twice, as a dry run then as a push (loopback timing,
    disruptive changes allowed): the two results, for tests of refusals that must come before any write.
    ``edit``: desired text -> the text pushed instead (a hand-edited rendering); ``dry_run_only``: the dry
    run's result alone."""
    from roce_tune.deploy.apply import load_source
    from roce_tune.deploy.drivers import PushOptions
    from roce_tune.deploy.runner import ApplyOptions, apply_targets
    from tests.emulators import LOOPBACK_TIMING

    (target,) = [t for t in load_source(inv)[0] if t.name == device]
    if edit is not None:
        target = replace(target, desired=edit(target.desired))
    results: list[DeviceResult] = []
    for dry in (True, False):
        opts = ApplyOptions(known_hosts=str(known), log_dir=tmp_path / "logs", timing=LOOPBACK_TIMING,
                            allow_disruptive=True, dry_run=dry,
                            push=PushOptions(confirm_s=60, read_timeout_s=20))
        results.extend(apply_targets([target], opts))
        if dry and dry_run_only:
            break
    return results


def refused_in_dry_run_and_push(inv: Path, device: str, tmp_path: Path, known: Path) -> list[str]:
    """:func:`dry_run_then_push` on ``device``, asserting both runs were refused at the preflight (failed,
    nothing rolled back); returns their two error texts for the caller's own checks."""
    errors = []
    for res in dry_run_then_push(inv, device, tmp_path, known):
        assert res.state == "failed" and res.error is not None, (res.state, res.error)
        assert res.error.startswith("preflight: ") and not res.rolled_back, res.error
        errors.append(res.error)
    return errors


def colleague_session(fleet, device: str, commands: list[str], config_mode: bool = False) -> None:  # type: ignore[no-untyped-def]
    """Someone else's CLI session on ``device`` (netmiko's real driver): ``commands`` one at a time (in
    configuration mode with ``config_mode``), each read up to the device's next prompt, then it logs out.
    (``send_command_timing`` would wait netmiko's 2 s of silence after every command instead.)"""
    conn = fleet.connect(device)
    if config_mode:
        conn.config_mode()
    for command in commands:
        conn.send_command(command, read_timeout=20)
    if config_mode:
        conn.exit_config_mode()
    conn.disconnect()
