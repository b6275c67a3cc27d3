"""``--secrets-file``: every value is the text as written (a password of digits, ``0x1F``, ``1e3`` … is not
a YAML number), and a password with shell/regex/YAML special characters works and reaches no output."""

from __future__ import annotations

import os
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
