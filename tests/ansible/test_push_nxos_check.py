"""push.yml's NX-OS play under --check succeeds and never claims a rollback of a push that did not happen
(nothing is pushed in check mode, and no checkpoint is taken)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.ansible.harness import ansible_missing, prepare_lab, recap, ssh_keypair
from tests.emulators import EmulatorSpec

pytestmark = pytest.mark.skipif(ansible_missing() is not None, reason=ansible_missing() or "")

DEVICES = {"eos1": "eos", "qfx1": "junos", "nx1": "nxos", "gpu01": "host", "gpu02": "host"}


@pytest.mark.slow
def test_nxos_check_mode_never_says_rolled_back(emulator_fleet,
                                                tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    key, pub = ssh_keypair(tmp_path)
    fleet = emulator_fleet([EmulatorSpec(p, n, username="admin", password="not-used", authorized_keys=[pub],
                                         time_scale=0.01) for n, p in DEVICES.items() if p != "host"])
    lab = prepare_lab(tmp_path / "lab", {n: fleet.port(n) if n in ("eos1", "qfx1",
                                                                   "nx1") else 1 for n in DEVICES})
    lab.env.pop("ROCE_TUNE_PASSWORD", None)
    before = fleet["nx1"].running_config()
    res = lab.playbook("push.yml", "--check", "--diff", "--limit", "platform_nxos", "-e",
                       f"roce_tune_base_dir={lab.workdir}", "-e", f"ansible_ssh_private_key_file={key}",
                       "-e", "ansible_become=false", "-e", "ansible_command_timeout=20")
    out = res.stdout + res.stderr
    # strict since the NX-OS emulator prints a login banner (cisco.nxos's prompt regex needs a line break
    # before the prompt): the dry run succeeds, shows what it would change, and changes nothing
    assert res.returncode == 0, out[-4000:]
    assert recap(res.stdout)["nx1"]["failed"] == 0, out[-4000:]
    assert "rolled back" not in out, out[-4000:]
    assert fleet["nx1"].running_config() == before
    assert not fleet["nx1"].checkpoints, "check mode takes no checkpoint"
