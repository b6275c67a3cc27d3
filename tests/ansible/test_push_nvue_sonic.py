"""push.yml against the Cumulus (NVUE) and SONiC loopback emulators over Ansible's OpenSSH connection
(``raw``): --check --diff changes nothing and shows the diff; a real push leaves the rendered settings
applied and saved; a second push changes nothing."""

from __future__ import annotations

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
OTHERS = ("eos1", "qfx1", "nx1", "gpu01", "gpu02")


def _lab(emulator_fleet, tmp_path: Path, name: str,  # type: ignore[no-untyped-def]
         reject: str | None = None) -> tuple[Any, Lab, Path]:
    """The emulator of ``name`` (key login only; refusing commands matching ``reject`` if given) and a lab
    whose inventory adds the SONiC and Cumulus leaves to the shared fabric: (emulator, lab, private key)."""
    key, pub = ssh_keypair(tmp_path)
    fleet = emulator_fleet([EmulatorSpec(NAMES[name], name, username="admin", password="not-used",
                                         authorized_keys=[pub], time_scale=0.1)])
    dev = fleet[name]
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
