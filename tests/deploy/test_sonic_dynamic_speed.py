"""SONiC dynamic buffer model: apply refuses a switch whose port runs at another speed than the plan's
headroom assumed.

On the dynamic model the plan writes a headroom override: a ``BUFFER_PROFILE`` with the plan's xon/xoff/size
that the lossless ``BUFFER_PG`` rows name, which buffermgrdyn leaves alone (sonic-net/SONiC
``doc/qos/dynamically-headroom-calculation.md``: it computes headroom from speed, cable length and MTU only
for a PG whose profile is NULL). The switch therefore never re-sizes that headroom when the port's speed is
not the planned one: an 800G port holding a 400G xoff overflows its headroom and drops lossless traffic.
The preflight checked speeds on the traditional model only (where buffermgrd's profile name carries it).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from roce_tune.deploy.apply import load_source
from roce_tune.platforms import sonic

from .conftest import REPO, dry_run_then_push, emulated_inventory

SWITCH = "lab-leaf1"


def _desired_and_running() -> tuple[str, dict]:  # type: ignore[type-arg]
    (target,) = [t for t in load_source(REPO / "inventories" / "lab-2node.yaml")[0] if t.name == SWITCH]
    desired = json.loads(target.desired)
    assert desired["DEVICE_METADATA"]["localhost"]["buffer_model"] == "dynamic"
    running = {"DEVICE_METADATA": {"localhost": {"buffer_model": "dynamic"}},
               "PORT": {p: {"speed": "400000", "mtu": "9100"} for p in desired["PORT"]}}
    return target.desired, running


def test_dynamic_model_refuses_a_port_at_another_speed() -> None:
    desired, running = _desired_and_running()
    assert sonic.preflight(json.dumps(running), desired) is None
    running["PORT"]["Ethernet8"]["speed"] = "800000"
    refused = sonic.preflight(json.dumps(running), desired)
    assert refused is not None
    assert "Ethernet8 runs at 800000 Mb/s but the plan's headroom is for 400000 Mb/s" in refused, refused
    assert "Ethernet0" not in refused


@pytest.mark.emulator
def test_apply_refuses_before_any_change(tmp_path: Path) -> None:
    fleet, inv, known = emulated_inventory("lab-2node.yaml", tmp_path, hosts=True)
    try:
        dev = fleet[SWITCH]
        db = json.loads(json.dumps(dev.config_db))
        db["PORT"]["Ethernet0"]["speed"] = "100000"
        fleet.call(setattr, dev, "config_db", db)
        before = dev.running_config()
        for res in dry_run_then_push(inv, SWITCH, tmp_path, known):
            error = res.error or ""
            assert res.state == "failed" and error.startswith("preflight: "), (res.state, error)
            assert "Ethernet0 runs at 100000 Mb/s but the plan's headroom is for 400000 Mb/s" in error
        assert dev.running_config() == before
    finally:
        fleet.stop()
