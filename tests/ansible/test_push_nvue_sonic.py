"""push.yml against the Cumulus (NVUE) and SONiC loopback emulators over Ansible's OpenSSH connection
(``raw``): --check --diff changes nothing and shows the diff; a real push leaves the rendered settings
applied and saved; a second push changes nothing."""

from __future__ import annotations

import copy
import re
from pathlib import Path
from typing import Any

import pytest

from tests.ansible.harness import FABRIC_TEMPLATE, Lab, ansible_missing, prepare_lab, recap, ssh_keypair
from tests.emulators import EmulatorSpec

pytestmark = [pytest.mark.emulator,
              pytest.mark.skipif(ansible_missing() is not None, reason=ansible_missing() or "")]

EXTRA = """  - name: sonic1
    platform: sonic
    model: DellEMC-Z9332f
    role: leaf
    mgmt: {host: 127.0.0.1, port: @PORT_sonic1@}
    ports:
      - {name: "Ethernet[0-24/8]", speed: 400G}
  - name: cul1
    platform: cumulus
    model: SN4700
    role: leaf
    mgmt: {host: 127.0.0.1, port: @PORT_cul1@}
    ports:
      - {name: "swp[1-4]", speed: 400G}
"""
NAMES = {"sonic1": "sonic", "cul1": "cumulus"}
#: sonic1 as the inventory declares it (EXTRA): a Dell Z9332f (Broadcom TH3, SONiC's traditional buffer model
#: with its SKU's pool modes, the egress lossless pool static) with four 400G ports Ethernet0..24. The
#: emulator's default CONFIG_DB is an SN2700's (four 100G ports, every pool dynamic), which push.yml's
#: preflight refuses as roce-tune apply does: a pool's mode changes only when bufferorch creates the pool.
SONIC1_DB = {
    "DEVICE_METADATA": {"hwsku": "DellEMC-Z9332f-O32", "platform": "x86_64-dellemc_z9332f_d1508-r0"},
    "BUFFER_POOL": {"ingress_lossless_pool": {"mode": "dynamic", "size": "66394076", "type": "ingress"},
                    "egress_lossless_pool": {"mode": "static", "size": "38462204", "type": "egress"}},
    "PORT": {f"Ethernet{8 * i}": {"admin_status": "up", "alias": f"etp{i + 1}", "index": str(i + 1),
                                  "lanes": ",".join(str(8 * i + k) for k in range(8)), "mtu": "9100",
                                  "speed": "400000"} for i in range(4)},
}
OTHERS = ("eos1", "qfx1", "nx1", "gpu01", "gpu02")


def as_declared(dev: Any) -> None:
    """Give the sonic1 emulator ``dev`` the CONFIG_DB of the switch the inventory declares
    (:data:`SONIC1_DB`); any other emulator stays as it is."""
    if dev.name == "sonic1":
        db = copy.deepcopy(SONIC1_DB)
        dev.config_db["DEVICE_METADATA"]["localhost"].update(db.pop("DEVICE_METADATA"))
        dev.config_db.update(db)


def _lab(emulator_fleet, tmp_path: Path, name: str,  # type: ignore[no-untyped-def]
         reject: str | None = None) -> tuple[Any, Lab, Path]:
    """The emulator of ``name`` (key login only; refusing commands matching ``reject`` if given) and a lab
    whose inventory adds the SONiC and Cumulus leaves to the shared fabric: (emulator, lab, private key)."""
    key, pub = ssh_keypair(tmp_path)
    fleet = emulator_fleet([EmulatorSpec(NAMES[name], name, username="admin", password="not-used",
                                         authorized_keys=[pub], time_scale=0.1)])
    dev = fleet[name]
    as_declared(dev)
    if reject is not None:
        dev.set_fault(reject_pattern=reject)
    template = FABRIC_TEMPLATE.read_text().replace("  - name: nx1\n", EXTRA + "  - name: nx1\n")
    ports = {n: 1 for n in (*OTHERS, *NAMES)} | {name: fleet.port(name)}
    lab = prepare_lab(tmp_path / "lab", ports, template=template)
    lab.env.pop("ROCE_TUNE_PASSWORD", None)
    return dev, lab, key


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(NAMES))
def test_push_check_push_idempotent(emulator_fleet, tmp_path: Path, name: str) -> None:  # type: ignore[no-untyped-def]
    dev, lab, key = _lab(emulator_fleet, tmp_path, name)
    common = ["--limit", name, "-e", f"roce_tune_base_dir={lab.workdir}", "-e",
              f"ansible_ssh_private_key_file={key}"]
    before = dev.running_config()
    dry = lab.playbook("push.yml", "--check", "--diff", *common)
    assert dry.returncode == 0, dry.stdout[-5000:] + dry.stderr[-2000:]
    assert dev.running_config() == before
    assert recap(dry.stdout)[name]["changed"] >= 1, dry.stdout[-3000:]
    push = lab.playbook("push.yml", "--diff", *common)
    assert push.returncode == 0, push.stdout[-5000:] + push.stderr[-2000:]
    assert dev.running_config() != before
    again = lab.playbook("push.yml", *common)
    assert again.returncode == 0, again.stdout[-5000:] + again.stderr[-2000:]
    assert recap(again.stdout)[name]["changed"] == 0, again.stdout[-5000:]


@pytest.mark.slow
@pytest.mark.parametrize(("name", "reject"), [("cul1", r"^nv config apply -y"),
                                              ("sonic1", r"sonic-cfggen -j /tmp/\S+\.write\d+\.json")])
def test_push_refused_by_the_switch_leaves_it_as_found(emulator_fleet, tmp_path: Path,  # type: ignore[no-untyped-def]
                                                       name: str, reject: str) -> None:
    """The switch refuses the apply: the push fails, says it reverted, and the switch is as found, with no
    staged revision left behind for the next `nv set` to stack on (Cumulus)."""
    dev, lab, key = _lab(emulator_fleet, tmp_path, name, reject)
    before = dev.running_config()
    res = lab.playbook("push.yml", "--limit", name, "-e", f"roce_tune_base_dir={lab.workdir}", "-e",
                       f"ansible_ssh_private_key_file={key}")
    out = res.stdout + res.stderr
    assert res.returncode != 0, out[-5000:]
    assert dev.running_config() == before, out[-5000:]
    assert re.search(r"push failed and (was|were) (reverted|rolled back)", out), out[-5000:]
    if NAMES[name] == "cumulus":
        assert dev.pending is None, dev.pending
