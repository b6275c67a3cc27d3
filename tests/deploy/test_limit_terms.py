"""``apply --limit``: every term must select a device. A mistyped second name (``--limit spine1 --limit
spnie2``) used to be dropped silently: the run pushed spine1 alone and exited 0, and the engineer took
spine2 for done. Each term that selects nothing is now named, before any device is contacted (exit 2)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from roce_tune.deploy.runner import Target, unmatched_limits

from .conftest import REPO

LAB = str(REPO / "inventories" / "lab-2node.yaml")


def _t(name: str, role: str, platform: str) -> Target:
    return Target(name, "switch", platform, role, "127.0.0.1", 22, {}, "")


@pytest.mark.parametrize(("limit", "unmatched"), [
    (["leaf1"], []),
    (["leaf1", "spnie2"], ["spnie2"]),
    (["leaf*", "role:spine", "platform:nxos"], []),
    (["role:Spine", "leaf1"], ["role:Spine"]),
    (["spine1,leaf1"], ["spine1,leaf1"]),
])
def test_each_term_that_selects_nothing_is_named(limit: list[str], unmatched: list[str]) -> None:
    targets = [_t("leaf1", "leaf", "eos"), _t("spine1", "spine", "nxos")]
    assert unmatched_limits(targets, limit) == unmatched


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "roce_tune.cli", *args], capture_output=True, text=True,
                          cwd=REPO, env={**os.environ, "COLUMNS": "200"}, timeout=300)


def test_cli_a_mistyped_second_limit_exits_2_naming_it_before_any_device() -> None:
    res = _cli("apply", LAB, "--dry-run", "--limit", "lab-leaf1", "--limit", "lab-laef2")
    assert res.returncode == 2, res.stdout + res.stderr
    assert "--limit lab-laef2 matches no device" in res.stderr, res.stderr
    assert "DRY RUN" not in res.stdout


def test_cli_comma_separated_names_get_a_hint() -> None:
    res = _cli("apply", LAB, "--dry-run", "--limit", "lab-leaf1,node1")
    assert res.returncode == 2, res.stdout + res.stderr
    assert "one --limit per name" in res.stderr, res.stderr


def test_verify_names_a_mistyped_second_limit_too() -> None:
    """verify's ``--limit`` is apply's: a term that reads back nothing is an error, not a silent skip."""
    from roce_tune.pipeline import open_source
    from roce_tune.verify.run import limited_devices

    plan = open_source(REPO / "inventories" / "lab-2node.yaml").plan
    assert limited_devices(plan, ["lab-leaf1"]) == {"lab-leaf1"}
    with pytest.raises(ValueError, match="--limit node3 matches no device"):
        limited_devices(plan, ["node1", "node3"])
