"""Ansible ``become`` (sudo) against the emulated GPU host: the host group's connection uses
``ansible_become: true`` with ``ansible.builtin.sudo`` (roce_tune.platforms.host.ANSIBLE), so the emulator's
sudo must answer what Ansible's sudo become plugin sends (``sudo -H -S [-n] [-p PROMPT] -u root /bin/sh -c
'echo BECOME-SUCCESS-...; ...'``): its own prompt on stderr, the password read from stdin, ``-n`` anywhere
among the flags, ``-u USER``. The stub took the first word after ``-p``/``-u`` for the command to run and
only a leading ``-n``, so a play with become hung until Ansible's timeout.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from tests.ansible.harness import ANSIBLE_CFG, ansible_missing, ssh_keypair
from tests.emulators import EmulatorSpec

pytestmark = [pytest.mark.emulator, pytest.mark.slow,
              pytest.mark.skipif(ansible_missing() is not None, reason=ansible_missing() or "")]


def _ansible(tmp_path: Path, port: int, key: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    (tmp_path / "ansible.cfg").write_text(ANSIBLE_CFG, encoding="utf-8")
    (tmp_path / "hosts.ini").write_text(
        f"gpu01 ansible_host=127.0.0.1 ansible_port={port} ansible_user=admin "
        f"ansible_ssh_private_key_file={key} ansible_become=true ansible_become_method=ansible.builtin.sudo "
        "ansible_python_interpreter=auto_silent\n", encoding="utf-8")
    env = {**os.environ, "ANSIBLE_CONFIG": str(tmp_path / "ansible.cfg")}
    return subprocess.run(["ansible", "gpu01", "-i", str(tmp_path / "hosts.ini"), "-m", "ansible.builtin.raw",
                           "-a", 'echo "user=$USER sysroot=$ROCE_TUNE_SYSROOT"', "-e", "ansible_timeout=15",
                           *extra], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120,
                          check=False)


@pytest.mark.parametrize("how", ["password", "wrong-password", "no-password", "nopasswd"])
def test_ansible_become_through_the_emulated_sudo(emulator_fleet, tmp_path: Path,  # type: ignore[no-untyped-def]
                                                   how: str) -> None:
    key, pub = ssh_keypair(tmp_path)
    fleet = emulator_fleet([EmulatorSpec("host", "gpu01", username="admin", password="not-used",
                                         authorized_keys=[pub], secret="s3cret",
                                         options={"sudo_nopasswd": how == "nopasswd"})])
    extra = {"password": ["-e", "ansible_become_password=s3cret"],
             "wrong-password": ["-e", "ansible_become_password=wrong"]}.get(how, [])
    res = _ansible(tmp_path, fleet.port("gpu01"), key, *extra)
    out = res.stdout + res.stderr
    if how in ("password", "nopasswd"):
        assert res.returncode == 0, out
        assert "user=root sysroot=" + str(fleet["gpu01"].sysroot) in out, out
    elif how == "wrong-password":
        assert res.returncode != 0 and "Incorrect sudo password" in out, out
    else:
        assert res.returncode != 0 and "Missing sudo password" in out, out
