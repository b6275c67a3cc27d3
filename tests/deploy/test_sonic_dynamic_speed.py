"""SONiC dynamic buffer model: apply refuses a switch whose port runs at another speed than the plan's
headroom assumed.

On the dynamic model the plan writes a headroom override: a ``BUFFER_PROFILE`` with the plan's xon/xoff/size
that the lossless ``BUFFER_PG`` rows name, which buffermgrdyn leaves alone (sonic-net/SONiC
``doc/qos/dynamically-headroom-calculation.md``: it computes headroom from speed, cable length and MTU only
for a PG whose profile is NULL). The switch therefore never re-sizes that headroom when the port's speed is
not the planned one: an 800G port holding a 400G xoff overflows its headroom and drops lossless traffic.
The preflight checked speeds on the traditional model only (where buffermgrd's profile name carries it).

The planned speed is the plan's port speed, which apply hands the preflight (``Target.port_speeds_mbps``):
a headroom profile's name need not carry it (a plan's own names such as ``ROCE_HDRM_400G_2M``, or a renamed
one), and a name-only check passed such a switch.
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


def _renamed(desired: str) -> str:
    """``desired`` with every headroom profile renamed to a name that carries no speed."""
    db = json.loads(desired)
    names = {n for n, row in db["BUFFER_PROFILE"].items() if "xoff" in row}
    assert names and all(sonic.HEADROOM_SPEED_NAME_RE.match(n) for n in names)
    text = desired
    for i, name in enumerate(sorted(names)):
        text = text.replace(f'"{name}"', f'"ROCE_HEADROOM_{i}"')
    assert not [n for n in json.loads(text)["BUFFER_PROFILE"] if sonic.HEADROOM_SPEED_NAME_RE.match(n)]
    return text


def test_the_plans_speed_is_judged_whatever_the_profile_is_named() -> None:
    """A profile name that carries no speed (the plan names its own, or someone renamed it): the plan's port
    speed, which apply hands the preflight, is still checked; without it only the name could be read."""
    desired, running = _desired_and_running()
    (target,) = [t for t in load_source(REPO / "inventories" / "lab-2node.yaml")[0] if t.name == SWITCH]
    assert target.port_speeds_mbps["Ethernet8"] == 400000
    renamed = _renamed(desired)
    preflight = sonic.PLATFORM.push.preflight  # what PushMethod.refusal asks first
    assert preflight is not None
    assert preflight(json.dumps(running), renamed, target.port_speeds_mbps) is None
    running["PORT"]["Ethernet8"]["speed"] = "800000"
    refused = preflight(json.dumps(running), renamed, target.port_speeds_mbps)
    assert refused is not None
    assert "Ethernet8 runs at 800000 Mb/s but the plan's headroom is for 400000 Mb/s" in refused, refused
    assert "Ethernet0" not in refused
    # the plan's speed wins over a name that says otherwise
    running["PORT"]["Ethernet8"]["speed"] = "400000"
    misnamed = desired.replace("pg_lossless_400000_", "pg_lossless_800000_")
    assert preflight(json.dumps(running), misnamed, target.port_speeds_mbps) is None


@pytest.mark.emulator
def test_apply_refuses_a_renamed_profile_at_another_speed(tmp_path: Path) -> None:
    """The runner hands the plan's speeds to the preflight: dry run and push both refused, nothing changed."""
    fleet, inv, known = emulated_inventory("lab-2node.yaml", tmp_path, hosts=True)  # hosts: lossless ports
    try:
        dev = fleet[SWITCH]
        db = json.loads(json.dumps(dev.config_db))
        db["PORT"]["Ethernet8"]["speed"] = "800000"
        fleet.call(setattr, dev, "config_db", db)
        before = dev.running_config()
        for res in dry_run_then_push(inv, SWITCH, tmp_path, known, edit=_renamed):
            error = res.error or ""
            assert res.state == "failed" and error.startswith("preflight: "), (res.state, error)
            assert "Ethernet8 runs at 800000 Mb/s but the plan's headroom is for 400000 Mb/s" in error
        assert dev.running_config() == before
    finally:
        fleet.stop()
