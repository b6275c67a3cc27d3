"""Helpers for running the playbooks against the loopback emulators with Ansible's own connections.

The test writes a roce-tune inventory whose mgmt ports are the emulators' ports, runs ``roce-tune
plan`` and ``roce-tune ansible-inventory`` (the real CLI, as a user would), an ``ansible.cfg`` that
turns host-key checking off (the emulators' host key is generated per run; tests only), and runs
``ansible-playbook`` as a subprocess.
"""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

REPO = Path(__file__).resolve().parents[2]
PLAYBOOKS = REPO / "playbooks"
FABRIC_TEMPLATE = Path(__file__).with_name("fabric.yaml.in")

ANSIBLE_CFG = """\
[defaults]
host_key_checking = False
stdout_callback = ansible.builtin.default
forks = 8
timeout = 20
retry_files_enabled = False
interpreter_python = auto_silent

[persistent_connection]
command_timeout = 20
connect_timeout = 30

[ssh_connection]
ssh_args = -o ControlMaster=no -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o \
PreferredAuthentications=publickey
"""


def load_filters(module_name: str) -> ModuleType:
    """The playbooks' filter plugin (playbooks/filter_plugins/roce_tune.py) imported as ``module_name``, the
    way Ansible loads it: from its file, not as a package module."""
    path = PLAYBOOKS / "filter_plugins" / "roce_tune.py"
    spec = importlib.util.spec_from_file_location(module_name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def ansible_missing() -> str | None:
    """Why the Ansible tests cannot run here, or None."""
    if shutil.which("ansible-playbook") is None:
        return "ansible-playbook not installed (pip install '.[ansible]'; .ci/run installs it)"
    try:
        import ansible_collections.arista.eos
        import ansible_collections.junipernetworks.junos  # noqa: F401
    except ImportError:
        return "community network collections missing (the 'ansible' package bundles them)"
    return None


@dataclass
class Lab:
    """One prepared working directory: inventories, rendered configs, ansible.cfg."""

    workdir: Path
    hosts_yml: Path
    out_dir: Path
    env: dict[str, str]

    def playbook(self, name: str, *args: str, timeout_s: float = 240,
                 allow_disruptive: bool = True) -> subprocess.CompletedProcess[str]:
        """Run ``ansible-playbook -i hosts.yml playbooks/<name> ARGS`` in the lab directory; push.yml with
        ``-e roce_tune_allow_disruptive=true`` unless ``allow_disruptive`` is False (a first push to an
        emulator sets its pools and turns PFC on: disruptive; apply's own tests pass allow_disruptive too)."""
        allow = ["-e", "roce_tune_allow_disruptive=true"] if allow_disruptive and name == "push.yml" else []
        cmd = ["ansible-playbook", "-i", str(self.hosts_yml), str(PLAYBOOKS / name), *args, *allow]
        return subprocess.run(cmd, cwd=self.workdir, env=self.env, text=True, capture_output=True,
                              timeout=timeout_s, check=False)


def ssh_keypair(directory: Path) -> tuple[Path, str]:
    """A fresh passphrase-less ed25519 key in ``directory`` (``ssh-keygen``): its private key file and its
    public key line (for an emulator's ``authorized_keys``)."""
    key = directory / "id_ed25519"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(key)], check=True)
    return key, key.with_suffix(".pub").read_text().strip()


def write_fabric(path: Path, ports: dict[str, int], template: str | None = None) -> Path:
    """The test fabric (``template`` text, default fabric.yaml.in) with ``@PORT_<name>@`` replaced by
    emulator ports."""
    text = FABRIC_TEMPLATE.read_text(encoding="utf-8") if template is None else template
    text = re.sub(r"@PORT_([A-Za-z0-9]+)@", lambda m: str(ports[m.group(1)]), text)
    path.write_text(text, encoding="utf-8")
    return path


def prepare_lab(workdir: Path, ports: dict[str, int], key_file: Path | None = None,
                template: str | None = None) -> Lab:
    """Write the fabric, plan it and emit the Ansible inventory with the roce-tune CLI."""
    workdir.mkdir(parents=True, exist_ok=True)
    fabric = write_fabric(workdir / "fabric.yaml", ports, template)
    # network_cli's persistent-connection sockets go in a short directory of their own: under a deep pytest
    # tmp path (xdist worker dirs, a lab path with spaces) ANSIBLE_HOME/pc/<hash> passes the 108-byte
    # AF_UNIX path limit and every network_cli task fails with "AF_UNIX path too long"
    control = Path(tempfile.gettempdir()) / f"rt-pc-{os.getpid()}"
    control.mkdir(mode=0o700, exist_ok=True)
    env = dict(os.environ, ANSIBLE_CONFIG=str(workdir / "ansible.cfg"), ANSIBLE_NOCOLOR="1",
               ANSIBLE_LOCAL_TEMP=str(workdir / ".ansible-tmp"), ANSIBLE_HOME=str(workdir / ".ansible"),
               ANSIBLE_PERSISTENT_CONTROL_PATH_DIR=str(control),
               ROCE_TUNE_USERNAME="admin", ROCE_TUNE_PASSWORD="admin", PYTHONPATH=str(REPO))
    if key_file is not None:
        env["ROCE_TUNE_KEY_FILE"] = str(key_file)
    (workdir / "ansible.cfg").write_text(ANSIBLE_CFG, encoding="utf-8")
    cli = [sys.executable, "-m", "roce_tune.cli"]
    subprocess.run([*cli, "plan", "fabric.yaml"], cwd=workdir, env=env, check=True, capture_output=True,
                   text=True)
    hosts = workdir / "hosts.yml"
    subprocess.run([*cli, "ansible-inventory", "fabric.yaml", "-o", str(hosts)], cwd=workdir, env=env,
                   check=True, capture_output=True, text=True)
    return Lab(workdir, hosts, workdir / "out" / fabric.stem, env)


def recap(output: str) -> dict[str, dict[str, int]]:
    """PLAY RECAP counters per host: ``{"eos1": {"ok": 5, "changed": 1, "failed": 0, ...}}``."""
    out: dict[str, dict[str, int]] = {}
    for m in re.finditer(r"^(\S+)\s+:\s+((?:\w+=\d+\s*)+)$", output, re.MULTILINE):
        out.setdefault(m.group(1), {}).update({k: int(v) for k, v in re.findall(r"(\w+)=(\d+)", m.group(2))})
    return out


def limit_args(lab: Lab, name: str, key: Path) -> list[str]:
    """push.yml's arguments for device ``name`` alone in ``lab``, logging in with private ``key``."""
    return ["--limit", name, "-e", f"roce_tune_base_dir={lab.workdir}", "-e",
            f"ansible_ssh_private_key_file={key}"]


def refused_before_any_write(dev: Any, lab: Lab, name: str, *args: str) -> list[str]:
    """Run push.yml on ``name`` (emulator ``dev``) under --check --diff, then for real (``args``: the
    --limit, base-dir and key arguments): each run fails the device and changes nothing, the device's
    running configuration is as before and no command it was told to reject (its ``reject_pattern``: the
    writes) was even tried. The outputs (stdout + stderr) of the two runs, for the caller's own checks."""
    before = dev.running_config()
    outs = []
    for mode in (["--check", "--diff"], []):
        res = lab.playbook("push.yml", *mode, *args)
        out = res.stdout + res.stderr
        assert res.returncode != 0, out[-5000:]
        assert recap(res.stdout)[name]["changed"] == 0, out[-3000:]
        outs.append(out)
    assert dev.running_config() == before
    assert not [e for e in dev.events if e.startswith("fault: rejected")], dev.events
    return outs
