"""A multi-ASIC SONiC switch is refused before anything is written, dry runs included, naming the switch, its
ASIC count and what to do instead.

On a multi-ASIC box each ASIC's CONFIG_DB lives in its own namespace (``asic0``, ``asic1``...: the
front-panel ports, their buffers and QoS maps) next to the host's (``localhost``); ``sonic-cfggen -d``,
``sonic-db-cli CONFIG_DB`` and ``config apply-patch`` without ``-n`` reach only the host's. Before, apply
diffed the plan against whatever ``show runningconfiguration all`` printed and wrote every row into the
host's CONFIG_DB, where no daemon of an ASIC reads it: a "pushed" switch with none of its ports changed.
Two shapes of the same box: an image whose ``show runningconfiguration all`` prints every namespace
(``{"localhost": ..., "asic0": ...}``: the preflight sees it) and one that prints the host's CONFIG_DB only
(the probe's ``show platform summary`` says ``ASIC Count: 2``).
"""

from __future__ import annotations

import copy
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from .conftest import PASSWORD, REPO, USER, dry_run_then_push, emulated_inventory, refused_in_dry_run_and_push

pytestmark = pytest.mark.emulator
SWITCH = "lab-leaf1"
#: the commands that change a SONiC switch (the probes only read)
WRITES = ("sudo config checkpoint roce", "sudo sonic-cfggen -j", "sudo sonic-db-cli", "sudo config save",
          "sudo config apply-patch", "cat > ")


def per_namespace(db: dict[str, Any], asics: int = 2) -> dict[str, Any]:
    """A single CONFIG_DB split as a multi-ASIC box keeps it: the host's ``localhost`` (device metadata, no
    front-panel port) and ``asic0``.. each with its share of the ports and a copy of every other table."""
    ports = sorted(db["PORT"], key=lambda p: int(p[len("Ethernet"):]))
    out: dict[str, Any] = {"localhost": {"DEVICE_METADATA": copy.deepcopy(db["DEVICE_METADATA"])}}
    for i in range(asics):
        ns = {t: copy.deepcopy(rows) for t, rows in db.items() if t != "PORT"}
        ns["DEVICE_METADATA"]["localhost"].update(asic_name=f"asic{i}", sub_role="FrontEnd")
        ns["PORT"] = {p: copy.deepcopy(db["PORT"][p]) for p in ports[i::asics]}
        out[f"asic{i}"] = ns
    return out


def _cli_apply(inv: Path, known: Path, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, ROCE_TUNE_USERNAME=USER, ROCE_TUNE_PASSWORD=PASSWORD, COLUMNS="250")
    return subprocess.run([sys.executable, "-m", "roce_tune.cli", "apply", str(inv), "--allow-disruptive",
                           "--known-hosts", str(known), "--log-dir", str(tmp_path / "logs"),
                           "--session-timing", "fast"],
                          capture_output=True, text=True, env=env, cwd=REPO, timeout=120)


def _assert_nothing_written(dev, before: str) -> None:  # type: ignore[no-untyped-def]
    assert dev.running_config() == before
    assert not dev.checkpoints and dev.db_writes_seen == 0
    assert not [c for c in dev.commands_seen if c.startswith(WRITES)], dev.commands_seen


def test_a_per_namespace_running_config_is_refused(tmp_path: Path) -> None:
    """The running config read is ``{"localhost": ..., "asic0": ..., "asic1": ...}``: refused by the
    preflight with the ASIC count, the CLI exits non-zero naming the switch."""
    fleet, inv, known = emulated_inventory("lab-2node.yaml", tmp_path)
    try:
        dev = fleet[SWITCH]
        fleet.call(setattr, dev, "config_db", per_namespace(dev.config_db))
        fleet.call(setattr, dev, "asic_count", 2)
        before = dev.running_config()
        for error in refused_in_dry_run_and_push(inv, SWITCH, tmp_path, known):
            assert ("multi-ASIC SONiC switch with 2 ASICs (`show runningconfiguration all` prints the "
                    "namespaces asic0, asic1)") in error, error
            assert "nothing was changed" in error and "sonic-cfggen -n asicN" in error, error
        _assert_nothing_written(dev, before)

        proc = _cli_apply(inv, known, tmp_path)
        assert proc.returncode != 0, proc.stdout
        text = " ".join(proc.stdout.split())
        assert SWITCH in text and "multi-ASIC SONiC switch with 2 ASICs" in text, proc.stdout
        _assert_nothing_written(dev, before)
    finally:
        fleet.stop()


def test_a_host_only_running_config_is_refused_by_the_asic_count(tmp_path: Path) -> None:
    """The image prints the host's CONFIG_DB only (it looks like a single-ASIC switch's);
    ``show platform summary`` says ``ASIC Count: 4``: refused by the probe."""
    fleet, inv, known = emulated_inventory("lab-2node.yaml", tmp_path)
    try:
        dev = fleet[SWITCH]
        fleet.call(setattr, dev, "asic_count", 4)
        before = dev.running_config()
        for error in refused_in_dry_run_and_push(inv, SWITCH, tmp_path, known):
            assert "multi-ASIC SONiC switch with 4 ASICs (`show platform summary`: ASIC Count: 4)" in error, \
                error
            assert "nothing was changed" in error, error
            assert "`sudo config checkpoint --help` failed" not in error, error  # the one reason that holds
        assert "show platform summary" in dev.commands_seen
        _assert_nothing_written(dev, before)
    finally:
        fleet.stop()


def test_an_unreadable_asic_count_is_refused(tmp_path: Path) -> None:
    """``show platform summary`` prints no ``ASIC Count`` line: not read as 1 (single ASIC), refused."""
    fleet, inv, known = emulated_inventory("lab-2node.yaml", tmp_path)
    try:
        dev = fleet[SWITCH]
        fleet.call(setattr, dev, "asic_count", None)
        before = dev.running_config()
        for error in refused_in_dry_run_and_push(inv, SWITCH, tmp_path, known):
            assert "could not read how many ASICs" in error and "no `ASIC Count:` line" in error, error
        _assert_nothing_written(dev, before)
    finally:
        fleet.stop()


def test_a_single_asic_switch_passes_the_probe(tmp_path: Path) -> None:
    fleet, inv, known = emulated_inventory("lab-2node.yaml", tmp_path)
    try:
        (res,) = dry_run_then_push(inv, SWITCH, tmp_path, known, dry_run_only=True)
        assert res.state == "would-change", (res.state, res.error)
        seen = fleet[SWITCH].commands_seen
        assert "show platform summary" in seen
        assert "sudo config checkpoint --help; echo ROCE_TUNE_RC=$?" in seen
    finally:
        fleet.stop()
