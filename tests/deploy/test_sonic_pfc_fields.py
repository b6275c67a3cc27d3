"""SONiC: apply owns ``pfc_enable`` and ``pfcwd_sw_enable`` of every port row it writes, also when the plan
leaves them out — end to end against the loopback SONiC emulator.

The SKU's ``qos_config.j2`` (sonic-net/sonic-buildimage ``files/build_templates/qos_config.j2``) writes
``"pfc_enable": "3,4"`` and ``"pfcwd_sw_enable": "3,4"`` into ``PORT_QOS_MAP`` for every active port. The
rendered file gives a lossy port a ``PORT_QOS_MAP`` row without ``pfc_enable`` (PFC off) and a switch whose
watchdog the plan turns off rows without ``pfcwd_sw_enable``; the patch compares live rows only on the
desired row's fields, so those SKU fields stayed: PFC stayed on at priorities 3 and 4 of a port the plan
made lossy (read-back then fails and apply rolls back). Now the patch removes them.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from roce_tune.deploy.apply import load_source
from roce_tune.deploy.diff import json_diff
from roce_tune.deploy.drivers import PushOptions
from roce_tune.deploy.runner import ApplyOptions, apply_targets
from roce_tune.platforms import sonic
from tests.emulators import LOOPBACK_TIMING
from tests.emulators.sonic import gcu_field_operation_errors

from .conftest import emulated_inventory

SWITCH = "lab-leaf1"
SKU_PFC = {"pfc_enable": "3,4", "pfcwd_sw_enable": "3,4"}


def _seed_sku_port_qos(db: dict[str, Any]) -> None:
    """``PORT_QOS_MAP`` as qos_config.j2 writes it for every active port (maps named AZURE)."""
    db["PORT_QOS_MAP"] = {p: {"dscp_to_tc_map": "AZURE", "tc_to_queue_map": "AZURE", "tc_to_pg_map": "AZURE",
                              "pfc_to_queue_map": "AZURE", **SKU_PFC} for p in db["PORT"]}


def test_patch_removes_pfc_fields_the_desired_row_leaves_out() -> None:
    rules = sonic.DIFF
    running = {"PORT_QOS_MAP": {"Ethernet0": {"dscp_to_tc_map": "AZURE", **SKU_PFC},
                                "Ethernet4": {"dscp_to_tc_map": "AZURE", **SKU_PFC}}}
    desired = {"PORT_QOS_MAP": {"Ethernet0": {"dscp_to_tc_map": "ROCE", "pfc_enable": "3"},  # watchdog off
                                "Ethernet4": {"dscp_to_tc_map": "ROCE"}}}  # lossy
    change = json_diff(rules, running, desired, {"Ethernet0", "Ethernet4"})
    ops = {(op["op"], op["path"]) for op in change.patch}
    assert ("remove", "/PORT_QOS_MAP/Ethernet4/pfc_enable") in ops
    assert ("remove", "/PORT_QOS_MAP/Ethernet4/pfcwd_sw_enable") in ops
    assert ("remove", "/PORT_QOS_MAP/Ethernet0/pfcwd_sw_enable") in ops
    assert ("replace", "/PORT_QOS_MAP/Ethernet0/pfc_enable") in ops
    # other fields of a live row the plan does not name stay as they are
    running["PORT_QOS_MAP"]["Ethernet4"]["tc_to_dscp_map"] = "AZURE"
    change = json_diff(rules, running, desired, {"Ethernet0", "Ethernet4"})
    assert not any("tc_to_dscp_map" in str(op["path"]) for op in change.patch)


@pytest.mark.emulator
def test_apply_turns_pfc_off_on_ports_the_plan_makes_lossy(tmp_path: Path) -> None:
    fleet, inv, known = emulated_inventory("lab-2node.yaml", tmp_path)  # no hosts: the ports are lossy
    try:
        dev = fleet[SWITCH]
        _seed_sku_port_qos(dev.config_db)
        dev.validate = lambda target: gcu_field_operation_errors(dev.config_db, target, "unknown")  # GCU on
        targets, _ = load_source(inv)
        (target,) = [t for t in targets if t.name == SWITCH]
        desired = json.loads(target.desired)
        lossy = sorted(p for p, row in desired["PORT_QOS_MAP"].items()
                       if p != "global" and "pfc_enable" not in row)
        assert lossy, "lab-2node without hosts has lossy switch ports"
        opts = ApplyOptions(known_hosts=str(known), log_dir=tmp_path / "logs",
                            push=PushOptions(confirm_s=60, read_timeout_s=20), timing=LOOPBACK_TIMING,
                            allow_disruptive=True)
        (res,) = apply_targets([target], opts)
        assert res.state == "pushed", (res.state, res.error)
        for port in lossy:
            row = dev.config_db["PORT_QOS_MAP"][port]
            assert "pfc_enable" not in row and "pfcwd_sw_enable" not in row, (port, row)
            hdel = f"sudo sonic-db-cli CONFIG_DB HDEL 'PORT_QOS_MAP|{port}' pfc_enable pfcwd_sw_enable"
            assert f"{hdel}; echo ROCE_TUNE_RC=$?" in dev.commands_seen, dev.commands_seen[-20:]
        (again,) = apply_targets([target], opts)
        assert again.state == "no-change", (again.state, again.diff)
    finally:
        fleet.stop()
