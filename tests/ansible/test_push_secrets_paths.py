"""push.yml as an engineer runs it from a checkout whose path has spaces, with the password in the
environment only: at -vvv (Ansible's most verbose level short of connection debugging) the password
never appears in the output, and the dry run works with every path containing a space."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.ansible.harness import ansible_missing, prepare_lab, recap
from tests.emulators import EmulatorSpec

pytestmark = [pytest.mark.emulator,
              pytest.mark.skipif(ansible_missing() is not None, reason=ansible_missing() or "")]

DEVICES = {"eos1": "eos", "qfx1": "junos", "nx1": "nxos", "gpu01": "host", "gpu02": "host"}
PASSWORD = "Pw-0f-the-Fabric+9"
NICS = [{"netdev": f"ens1f{i}np{i}", "rdma": f"mlx5_{i}", "pci": f"0000:17:00.{i}", "speed_mbps": 400000,
         "ipv4": f"192.0.2.{101 + i}"} for i in range(2)]


@pytest.mark.slow
def test_password_never_printed_at_vvv_and_paths_with_spaces(emulator_fleet,  # type: ignore[no-untyped-def]
                                                              tmp_path: Path) -> None:
    keys = tmp_path / "ssh keys"
    keys.mkdir()
    key = keys / "id ed25519"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(key)], check=True)
    pub = Path(str(key) + ".pub").read_text().strip()
    used = {"eos1", "qfx1", "gpu01"}
    # the switches accept only the password (no authorized key): network_cli falls back to it
    fleet = emulator_fleet([EmulatorSpec(p, n, username="admin", password=PASSWORD,
                                         authorized_keys=[pub] if p == "host" else [],
                                         time_scale=0.1, options={"nics": NICS} if p == "host" else {})
                           for n, p in DEVICES.items() if n in used])
    lab = prepare_lab(tmp_path / "my lab" / "roce tune", {n: fleet.port(n) if n in used else 1
                                                          for n in DEVICES})
    lab.env["ROCE_TUNE_PASSWORD"] = PASSWORD
    assert PASSWORD not in lab.hosts_yml.read_text()
    # the GPU host logs in with the key (host_vars next to hosts.yml; no sshpass on this machine)
    (lab.hosts_yml.parent / "host_vars").mkdir()
    (lab.hosts_yml.parent / "host_vars" / "gpu01.yml").write_text(
        json.dumps({"ansible_ssh_private_key_file": str(key)}))
    before = {n: fleet[n].running_config() for n in ("eos1", "qfx1")}
    # switches: password authentication (network_cli/paramiko); the GPU host: the key (no sshpass here)
    res = lab.playbook("push.yml", "--check", "--diff", "-vvv", "--limit", "eos1:qfx1:gpu01",
                       "-e", json.dumps({"roce_tune_base_dir": str(lab.workdir)}),
                       "-e", '{"roce_tune_serial": ["100%"], "roce_tune_host_serial": ["100%"]}',
                       "-e", "ansible_become=false")
    out = res.stdout + res.stderr
    assert res.returncode == 0, out[-5000:]
    assert PASSWORD not in out, [ln for ln in out.splitlines() if PASSWORD in ln][:5]
    assert {n: fleet[n].running_config() for n in ("eos1", "qfx1")} == before
    assert "+qos profile ROCE_LOSSLESS_400G" in out
    counts = recap(res.stdout)
    assert all(counts[n]["changed"] >= 1 and counts[n]["failed"] == 0 for n in used), counts
