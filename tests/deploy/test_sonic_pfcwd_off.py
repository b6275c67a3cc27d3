"""SONiC: ``policy.pfc_watchdog: false`` turns a running PFC watchdog off on the ports roce-tune manages.

The watchdog runs on a port while CONFIG_DB has a ``PFC_WD|<port>`` row: ``pfcwd start`` writes it and
``pfcwd stop <port>`` deletes it (sonic-net/sonic-utilities ``pfcwd/main.py``: ``stop`` is
``config_db.mod_entry(PFC_WD, port, None)``), and a SKU's ``pfcwd start_default`` writes one for every port
with ``pfc_enable``. A plan with the watchdog off rendered no ``PFC_WD`` table at all, so the diff never
looked at that table: the rows stayed, the watchdog kept running, and apply said "no change".
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from ruamel.yaml import YAML

from roce_tune.deploy.apply import load_source
from roce_tune.deploy.diff import json_diff
from roce_tune.deploy.drivers import PushOptions
from roce_tune.deploy.runner import ApplyOptions, apply_targets
from roce_tune.platforms import sonic
from tests.emulators import LOOPBACK_TIMING

from .conftest import emulated_inventory

SWITCH = "lab-leaf1"
#: ``pfcwd start_default``'s row (sonic-utilities pfcwd/main.py DEFAULT_* values)
DEFAULT_ROW = {"action": "drop", "detection_time": "200", "restoration_time": "200"}


def test_diff_removes_watchdog_rows_of_managed_ports_only() -> None:
    running = {"PFC_WD": {"GLOBAL": {"POLL_INTERVAL": "200", "BIG_RED_SWITCH": "disable"},
                          "Ethernet0": dict(DEFAULT_ROW), "Ethernet8": dict(DEFAULT_ROW),
                          "Ethernet16": dict(DEFAULT_ROW)}}
    desired = {"PFC_WD": {"GLOBAL": {"POLL_INTERVAL": "200"}}}
    change = json_diff(sonic.DIFF, running, desired, {"Ethernet0", "Ethernet8"})
    assert sorted(change.diff) == ["remove /PFC_WD/Ethernet0", "remove /PFC_WD/Ethernet8"]
    assert not change.disruptive
    # watchdog on for Ethernet0 only (Ethernet8 made lossy): Ethernet8's row goes, Ethernet0's is compared
    desired = {"PFC_WD": {"GLOBAL": {"POLL_INTERVAL": "200"}, "Ethernet0": dict(DEFAULT_ROW)}}
    change = json_diff(sonic.DIFF, running, desired, {"Ethernet0", "Ethernet8"})
    assert change.diff == ["remove /PFC_WD/Ethernet8"]


def _watchdog_off(inv: Path) -> None:
    yaml = YAML()
    data = yaml.load(inv.read_text())
    data["policy"]["pfc_watchdog"] = False
    with open(inv, "w") as fh:
        yaml.dump(data, fh)


def _opts(tmp_path: Path, known: Path, dry_run: bool = False) -> ApplyOptions:
    return ApplyOptions(known_hosts=str(known), log_dir=tmp_path / "logs", timing=LOOPBACK_TIMING,
                        allow_disruptive=True, dry_run=dry_run,
                        push=PushOptions(confirm_s=60, read_timeout_s=20))


@pytest.mark.emulator
def test_apply_stops_a_running_watchdog_the_plan_turns_off(tmp_path: Path) -> None:
    fleet, inv, known = emulated_inventory("lab-2node.yaml", tmp_path, hosts=True)
    try:
        _watchdog_off(inv)
        dev = fleet[SWITCH]
        db: dict[str, Any] = json.loads(json.dumps(dev.config_db))
        db["PFC_WD"] = {"GLOBAL": {"POLL_INTERVAL": "200"}, "Ethernet0": dict(DEFAULT_ROW),
                        "Ethernet8": dict(DEFAULT_ROW)}
        fleet.call(setattr, dev, "config_db", db)
        (target,) = [t for t in load_source(inv)[0] if t.name == SWITCH]
        assert {"Ethernet0", "Ethernet8"} <= target.managed_ports

        (dry,) = apply_targets([target], _opts(tmp_path, known, dry_run=True))
        assert "remove /PFC_WD/Ethernet0" in dry.diff and "remove /PFC_WD/Ethernet8" in dry.diff, dry.diff
        # a dry run writes nothing
        assert set(dev.config_db["PFC_WD"]) == {"GLOBAL", "Ethernet0", "Ethernet8"}

        (res,) = apply_targets([target], _opts(tmp_path, known))
        assert res.state == "pushed", (res.state, res.error)
        assert dev.config_db["PFC_WD"] == {"GLOBAL": {"POLL_INTERVAL": "200"}}
        assert "sudo sonic-db-cli CONFIG_DB DEL 'PFC_WD|Ethernet0'; echo ROCE_TUNE_RC=$?" in dev.commands_seen
        (again,) = apply_targets([target], _opts(tmp_path, known))
        assert again.state == "no-change", (again.state, again.diff)
    finally:
        fleet.stop()


def test_audit_reports_a_running_watchdog_the_plan_turns_off(tmp_path: Path) -> None:
    """``roce-tune audit`` of a captured ``show runningconfiguration all`` whose CONFIG_DB is the plan's but
    for the watchdog rows ``pfcwd start_default`` left: RT427 on each such port, in words (it said "plan
    False, running config True"), and none without them."""
    from roce_tune.audit import audit_dir

    inv = tmp_path / "lab-2node.yaml"
    inv.write_text((Path(__file__).resolve().parents[2] / "inventories" / "lab-2node.yaml").read_text())
    _watchdog_off(inv)
    (target,) = [t for t in load_source(inv)[0] if t.name == SWITCH]
    db = json.loads(target.desired)
    caps = tmp_path / "caps"
    caps.mkdir()

    def audit(running: dict[str, Any]) -> dict[str | None, str]:
        (caps / f"{SWITCH}.txt").write_text(f"admin@{SWITCH}:~$ show runningconfiguration all\n"
                                            + json.dumps(running, indent=4) + "\n")
        return {f.port: f.message for f in audit_dir(caps, inv).findings if f.rule == "RT427"}

    assert audit(db) == {}
    db["PFC_WD"].update({"Ethernet0": dict(DEFAULT_ROW), "Ethernet8": dict(DEFAULT_ROW)})
    found = audit(db)
    assert set(found) == {"Ethernet0", "Ethernet8"}, found
    assert found["Ethernet0"] == ("PFC watchdog is on on lab-leaf1 Ethernet0 (running config); the plan "
                                  "turns it off"), found
