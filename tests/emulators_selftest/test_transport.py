"""SSH transport: public-key auth, bad password, paramiko shells (Ansible style), exec, SCP/SFTP, CLI."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import asyncssh
import paramiko
import pytest
import scp
from netmiko.exceptions import NetmikoAuthenticationException

from tests.emulators import EmulatorSpec

pytestmark = pytest.mark.emulator

REPO = Path(__file__).resolve().parents[2]


def _client(port: int, **kw) -> paramiko.SSHClient:
    client = paramiko.SSHClient()
    client.set_missing_host_key_policy(paramiko.AutoAddPolicy())
    client.connect("127.0.0.1", port, allow_agent=False, look_for_keys=False, **kw)
    return client


def test_public_key_auth_and_bad_password(emulator_fleet, tmp_path):
    key = asyncssh.generate_private_key("ssh-ed25519")
    key_file = tmp_path / "id_ed25519"
    key.write_private_key(str(key_file))
    pub = key.export_public_key().decode()
    fleet = emulator_fleet([EmulatorSpec("eos", "leaf1", password="s3cret", authorized_keys=[pub])])
    conn = fleet.connect("leaf1", password=None, use_keys=True, key_file=str(key_file))
    try:
        assert conn.find_prompt() == "leaf1#"
    finally:
        conn.disconnect()
    with pytest.raises(NetmikoAuthenticationException):
        fleet.connect("leaf1", password="wrong")


def test_env_credentials_are_the_default(emulator_fleet, monkeypatch):
    monkeypatch.setenv("ROCE_TUNE_USERNAME", "netops")
    monkeypatch.setenv("ROCE_TUNE_PASSWORD", "pw-from-env")
    fleet = emulator_fleet([EmulatorSpec("junos", "qfx1")])
    conn = fleet.connect("qfx1")
    try:
        assert conn.base_prompt == "netops@qfx1" and fleet["qfx1"].spec.password == "pw-from-env"
    finally:
        conn.disconnect()


def _read_until(chan: paramiko.Channel, marker: str, timeout: float = 5.0) -> str:
    buf = ""
    end = time.monotonic() + timeout
    while marker not in buf and time.monotonic() < end:
        if chan.recv_ready():
            buf += chan.recv(65536).decode()
        else:
            time.sleep(0.01)
    assert marker in buf, buf
    return buf


def test_paramiko_invoke_shell_with_cr_like_network_cli(emulator_fleet):
    fleet = emulator_fleet([EmulatorSpec("eos", "leaf1"), EmulatorSpec("junos", "qfx1")])
    client = _client(fleet.port("leaf1"), username="admin", password="admin")
    try:
        chan = client.invoke_shell(term="vt100", width=200, height=48)
        _read_until(chan, "leaf1#")
        chan.send(b"terminal length 0\r")
        assert "Pagination disabled." in _read_until(chan, "leaf1#")
        chan.send(b"configure session ans1\rinterface Ethernet3\r   mtu 9100\rend\r")
        out = _read_until(chan, "\r\nleaf1#")
        assert "\r\nleaf1(config-s-ans1-if-Et3)#   mtu 9100\r\n" in out
        chan.send(b"show session-config named ans1 diffs\r")
        assert "\r\n+   mtu 9100\r\n" in _read_until(chan, " !\r\nleaf1#")
    finally:
        client.close()
    client = _client(fleet.port("qfx1"), username="admin", password="admin")
    try:
        _, out, _ = client.exec_command("show configuration | display set")
        assert out.read().decode() == fleet["qfx1"].running_config()
        assert out.channel.recv_exit_status() == 0
    finally:
        client.close()


def test_scp_and_sftp_land_in_the_sandbox(emulator_fleet, tmp_path):
    fleet = emulator_fleet([EmulatorSpec("sonic", "sonic1"), EmulatorSpec("cumulus", "leaf9")])
    src = tmp_path / "patch.json"
    src.write_text('[{"op": "replace", "path": "/PORT/Ethernet4/mtu", "value": "9216"}]\n')
    client = _client(fleet.port("sonic1"), username="admin", password="admin")
    try:
        with scp.SCPClient(client.get_transport()) as copier:
            copier.put(str(src), "/tmp/patch.json")
        sftp = client.open_sftp()
        sftp.put(str(src), "/tmp/patch2.json")
        sftp.close()
    finally:
        client.close()
    assert (fleet["sonic1"].sandbox / "tmp/patch.json").read_text() == src.read_text()
    conn = fleet.connect("sonic1")
    try:
        assert "Patch applied successfully." in conn.send_command("sudo config apply-patch /tmp/patch2.json")
        assert fleet["sonic1"].config_db["PORT"]["Ethernet4"]["mtu"] == "9216"
    finally:
        conn.disconnect()


def test_cli_prints_listening_port_and_serves(tmp_path):
    env = dict(os.environ, PYTHONPATH=str(REPO), ROCE_TUNE_USERNAME="ops", ROCE_TUNE_PASSWORD="pw")
    proc = subprocess.Popen([sys.executable, "-m", "tests.emulators", "--platform", "nxos", "--name", "nx7",
                             "--port", "0", "--state-dir", str(tmp_path)],
                            cwd=REPO, env=env, stdout=subprocess.PIPE, text=True)
    try:
        line = proc.stdout.readline().strip()
        assert line.startswith("listening 127.0.0.1:")
        port = int(line.rsplit(":", 1)[1])
        from netmiko import ConnectHandler
        conn = ConnectHandler(device_type="cisco_nxos", host="127.0.0.1", port=port, username="ops",
                              password="pw")
        conn.send_config_set(["interface Ethernet1/1", "mtu 9216"])
        conn.disconnect()
        deadline = time.monotonic() + 5
        state = tmp_path / "nx7.running"
        while time.monotonic() < deadline and "mtu 9216" not in (state.read_text() if state.exists() else ""):
            time.sleep(0.1)
        assert "interface Ethernet1/1\n  mtu 9216" in state.read_text()
    finally:
        proc.terminate()
        assert proc.wait(10) == 0
