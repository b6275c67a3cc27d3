"""SONiC images without the Generic Config Updater (202012 and older: the ``config checkpoint`` /
``rollback`` / ``list-checkpoints`` commands came with GCU, designed in sonic-net/SONiC PR #736, March 2021)
are refused before anything is written, dry runs included, naming the device and the command.

Before, a dry run said "would change" and a push reached ``sudo config checkpoint`` — the rollback point
every push takes first — and stopped there with click's "No such command" as a rejected command: the
operator learnt only mid-push that apply cannot work on this image at all.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import PASSWORD, REPO, USER, dry_run_then_push, emulated_inventory

pytestmark = pytest.mark.emulator
SWITCH = "lab-leaf1"


def _old_image(fleet) -> None:  # type: ignore[no-untyped-def]
    dev = fleet[SWITCH]
    fleet.call(setattr, dev, "release", "202012.83")
    fleet.call(setattr, dev, "has_gcu", False)


def test_dry_run_and_push_refuse_an_image_without_config_checkpoint(tmp_path: Path) -> None:
    fleet, inv, known = emulated_inventory("lab-2node.yaml", tmp_path)
    try:
        _old_image(fleet)
        dev = fleet[SWITCH]
        before = dev.running_config()
        for res in dry_run_then_push(inv, SWITCH, tmp_path, known):
            assert res.state == "failed" and res.error is not None, (res.state, res.error)
            assert res.error.startswith("preflight: "), res.error
            assert "`sudo config checkpoint --help`" in res.error and "config rollback" in res.error
            assert "nothing was changed" in res.error
            assert not res.rolled_back
        assert dev.running_config() == before
        assert not any(c.startswith(("sudo config checkpoint roce", "sudo sonic-cfggen -j"))
                       for c in dev.commands_seen), dev.commands_seen

        env = dict(os.environ, ROCE_TUNE_USERNAME=USER, ROCE_TUNE_PASSWORD=PASSWORD, COLUMNS="250")
        proc = subprocess.run([sys.executable, "-m", "roce_tune.cli", "apply", str(inv), "--allow-disruptive",
                               "--known-hosts", str(known), "--log-dir", str(tmp_path / "logs"),
                               "--session-timing", "fast"],
                              capture_output=True, text=True, env=env, cwd=REPO, timeout=120)
        assert proc.returncode != 0, proc.stdout
        text = " ".join(proc.stdout.split())
        assert SWITCH in text and "`sudo config checkpoint --help`" in text, proc.stdout
    finally:
        fleet.stop()


def test_an_image_with_gcu_passes_the_probe(tmp_path: Path) -> None:
    fleet, inv, known = emulated_inventory("lab-2node.yaml", tmp_path)
    try:
        (res,) = dry_run_then_push(inv, SWITCH, tmp_path, known, dry_run_only=True)
        assert res.state == "would-change", (res.state, res.error)
        assert "sudo config checkpoint --help; echo ROCE_TUNE_RC=$?" in fleet[SWITCH].commands_seen
    finally:
        fleet.stop()
