"""``--secrets-file``: every value is the text as written (a password of digits, ``0x1F``, ``1e3`` … is not
a YAML number), and a password with shell/regex/YAML special characters works and reaches no output."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from roce_tune.deploy.credentials import CredentialError, resolve_credentials

from .conftest import REPO, USER, emulated_inventory

pytestmark = pytest.mark.emulator

REFS: dict[str, str | None] = {"username_env": "RT_USER", "password_env": "RT_PASS"}


@pytest.mark.parametrize("written, meant", [("0123", "0123"), ("1e3", "1e3"), ("0x1F", "0x1F"),
                                            ("12_345", "12_345"), (".NaN", ".NaN"), ("'0123'", "0123")])
def test_values_are_the_text_as_written(tmp_path: Path, written: str, meant: str) -> None:
    f = tmp_path / "secrets.yaml"
    f.write_text(f"default: {{username: 007, password: {written}}}\n")
    creds = resolve_credentials("leaf1", REFS, env={}, secrets_file=f)
    assert (creds.username, creds.password) == ("007", meant)


def test_a_yaml_error_names_line_and_column_never_the_text(tmp_path: Path) -> None:
    f = tmp_path / "secrets.yaml"
    f.write_text("default:\n  username: ops\n  password: hunter2: x\n")
    with pytest.raises(CredentialError) as err:
        resolve_credentials("leaf1", REFS, env={}, secrets_file=f)
    assert f"secrets file {f}:3:20 cannot be read: ScannerError (YAML syntax: quote" in str(err.value)
    assert "hunter2" not in str(err.value)


def test_an_empty_value_is_no_value(tmp_path: Path) -> None:
    f = tmp_path / "secrets.yaml"
    f.write_text("leaf1: {username: ops, password: }\n")
    assert resolve_credentials("leaf1", REFS, env={"RT_PASS": "from-env"}, secrets_file=f).password == \
        "from-env"
    with pytest.raises(CredentialError, match="no password or key"):
        resolve_credentials("leaf1", REFS, env={}, secrets_file=f)


@pytest.mark.parametrize("password, yaml_value", [
    ("0123", "0123"),                                               # digits: was sent as "123"
    ("p@ss$(id) \"w0rd\" \\1 .*|;&'x", "'p@ss$(id) \"w0rd\" \\1 .*|;&''x'"),  # shell/regex/YAML specials
])
def test_secrets_file_password_logs_in_and_never_shows(tmp_path: Path, password: str,
                                                       yaml_value: str) -> None:
    fleet, inv, known = emulated_inventory("lab-2node.yaml", tmp_path, password=password)
    try:
        secrets = tmp_path / "secrets.yaml"
        secrets.write_text(f"default:\n  username: {USER}\n  password: {yaml_value}\n")
        env = {k: v for k, v in os.environ.items() if not k.startswith("ROCE_TUNE_")}
        logs = tmp_path / "logs"
        proc = subprocess.run([sys.executable, "-m", "roce_tune.cli", "apply", str(inv), "--dry-run",
                               "--format", "json", "--known-hosts", str(known), "--log-dir", str(logs),
                               "--secrets-file", str(secrets), "--session-timing", "fast"],
                              capture_output=True, text=True, env=env, cwd=REPO, timeout=120)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        assert '"state": "would-change"' in proc.stdout, proc.stdout
        assert password not in proc.stdout + proc.stderr
        files = [p for p in logs.rglob("*") if p.is_file()]
        assert files and not [p for p in files if password in p.read_text()]
    finally:
        fleet.stop()


def test_a_key_file_that_is_not_there_names_device_path_and_origin(tmp_path: Path) -> None:
    """netmiko's own error lost the path ("... key_file does not exist:" and nothing after it)."""
    refs = {**REFS, "key_file_env": "RT_KEY"}
    with pytest.raises(CredentialError, match=re.escape(f"leaf1: SSH key file {tmp_path}/nope ($RT_KEY) does "
                                                        "not exist")):
        resolve_credentials("leaf1", refs, env={"RT_USER": "ops", "RT_KEY": str(tmp_path / "nope")})
    f = tmp_path / "secrets.yaml"
    f.write_text(f"leaf1: {{username: ops, key_file: {tmp_path}/gone}}\n")
    with pytest.raises(CredentialError, match=re.escape(f"SSH key file {tmp_path}/gone (secrets file {f})")):
        resolve_credentials("leaf1", refs, env={}, secrets_file=f)


def test_a_key_file_under_home_written_with_a_tilde_logs_in(tmp_path: Path) -> None:
    """``key_file: ~/.ssh/id_ed25519`` in a secrets file logs in (``~`` expanded); a missing one fails the
    device naming the expanded path and where it came from (before: "ValueError: use_keys has been set to
    True, but specified key_file does not exist:" and no path)."""
    import asyncssh

    fleet, inv, known = emulated_inventory("lab-2node.yaml", tmp_path)
    try:
        home = tmp_path / "home"
        (home / ".ssh").mkdir(parents=True)
        key = asyncssh.generate_private_key("ssh-ed25519")
        key.write_private_key(str(home / ".ssh" / "id_rt"))
        (home / ".ssh" / "id_rt").chmod(0o600)
        fleet.call(fleet["lab-leaf1"].spec.authorized_keys.append, key.export_public_key().decode().strip())
        env = {k: v for k, v in os.environ.items() if not k.startswith("ROCE_TUNE_") and k != "SSH_AUTH_SOCK"}
        env["HOME"] = str(home)
        secrets = tmp_path / "secrets.yaml"
        for key_file, state in (("~/.ssh/id_rt", '"state": "would-change"'), ("~/.ssh/id_gone", '"failed"')):
            secrets.write_text(f"lab-leaf1:\n  username: {USER}\n  key_file: {key_file}\n")
            proc = subprocess.run([sys.executable, "-m", "roce_tune.cli", "apply", str(inv), "--dry-run",
                                   "--limit", "lab-leaf1", "--format", "json", "--known-hosts", str(known),
                                   "--secrets-file", str(secrets), "--session-timing", "fast",
                                   "--log-dir", str(tmp_path / "logs")],
                                  capture_output=True, text=True, env=env, cwd=REPO, timeout=120)
            assert state in proc.stdout, proc.stdout + proc.stderr
        assert proc.returncode == 1 and f"SSH key file {home}/.ssh/id_gone (secrets file" in proc.stdout
    finally:
        fleet.stop()
