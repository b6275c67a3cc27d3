"""Credential input errors that concern the whole run are said once, before any device is contacted
(exit 2), and the per-device hint names only what the inventory can really set."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from roce_tune.deploy.credentials import CredentialError, resolve_credentials

from .conftest import REPO

LAB = str(REPO / "inventories" / "lab-2node.yaml")


def _cli(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "roce_tune.cli", *args], capture_output=True, text=True,
                          cwd=REPO, env={**os.environ, "COLUMNS": "200", **env}, timeout=300)


@pytest.mark.parametrize("via_env", [False, True])
def test_a_broken_secrets_file_exits_2_before_any_device(tmp_path: Path, via_env: bool) -> None:
    """Before: every device failed on its own with the same YAML error (exit 1), after the run started."""
    bad = tmp_path / "secrets.yaml"
    bad.write_text('default: {username: netops, password: "Hunter2-secret"\n')
    args = ["apply", LAB, "--dry-run"] + ([] if via_env else ["--secrets-file", str(bad)])
    res = _cli(*args, env={"ROCE_TUNE_SECRETS_FILE": str(bad)} if via_env else {})
    assert res.returncode == 2, res.stdout + res.stderr
    assert f"secrets file {bad}:2:1 cannot be read" in res.stderr, res.stderr
    assert "DRY RUN" not in res.stdout
    assert "Hunter2" not in res.stdout + res.stderr


def test_no_password_hint_names_no_unset_variable() -> None:
    """Before: ``set $ROCE_TUNE_PASSWORD, $a key file variable, …`` (and ``$None`` without a password
    variable)."""
    with pytest.raises(CredentialError) as info:
        resolve_credentials("leaf1", {"username_env": "U", "password_env": "P", "key_file_env": None},
                            env={"U": "netops"})
    msg = str(info.value)
    assert "$P" in msg and "$a " not in msg and "key_file_env" in msg, msg
    with pytest.raises(CredentialError) as info:
        resolve_credentials("leaf1", {"username_env": None, "password_env": None, "key_file_env": None},
                            env={})
    assert "$None" not in str(info.value), str(info.value)
