"""Issue 16: the tuner derives each distinct switch shape once and repeats it for the switches of the same
shape (``compose._shape_key``). A plan made that way must equal the plan derived switch by switch, on
fabrics whose switches differ in each fact the key holds, and each differing switch must get its own values.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import pytest
import yaml

from roce_tune.inventory.loader import load_inventory_text
from roce_tune.inventory.synthetic import rail_optimised_fabric
from roce_tune.pipeline import derive_device, derive_plan
from roce_tune.plan import HostPlan, Plan, SwitchPlan, plan_to_json
from roce_tune.tuner import compose

Inventory = dict[str, Any]
BASE = rail_optimised_fabric(64)  # 16 leaves of one shape per pod, 16 spines, no superspine
LEAF = "su0-leaf1"  # a leaf with twins (su0-leaf0 and every su1 leaf share its rail-independent shape)


def _link(data: Inventory, end: str) -> dict[str, Any]:
    return next(lk for lk in data["links"] if end in (lk["a"], lk["b"]))


def _cable(data: Inventory) -> None:
    _link(data, f"{LEAF}:Ethernet136")["cable_length"] = "20m"  # below the longest leaf cable: same base RTT


def _host_cable(data: Inventory) -> None:
    nic = next(n for h in data["hosts"] for n in h["nics"] if n["switch_port"] == f"{LEAF}:Ethernet4")
    nic["cable_length"] = "2m"


def _lossy_link(data: Inventory) -> None:
    _link(data, f"{LEAF}:Ethernet144")["lossless"] = False


def _unplugged(data: Inventory) -> None:
    data["links"].remove(_link(data, f"{LEAF}:Ethernet152"))


def _port_down(data: Inventory) -> None:
    sw = next(s for s in data["switches"] if s["name"] == LEAF)
    sw["ports"].append({"name": "Ethernet256", "speed": "400G", "admin_up": False})


def _port_speed(data: Inventory) -> None:
    sw = next(s for s in data["switches"] if s["name"] == LEAF)
    sw["ports"].append({"name": "Ethernet256", "speed": "100G"})


def _port_mtu(data: Inventory) -> None:
    sw = next(s for s in data["switches"] if s["name"] == LEAF)
    sw["ports"][0] = {**sw["ports"][0], "mtu": 9100}


def _buffer_model(data: Inventory) -> None:
    sw = next(s for s in data["switches"] if s["name"] == LEAF)
    sw["buffer_model"] = "traditional"


def _pin(scope: dict[str, str], pins: dict[str, object]) -> Callable[[Inventory], None]:
    def apply(data: Inventory) -> None:
        data.setdefault("policy", {})["overrides"] = [{**scope, "set": pins}]
    return apply


VARIANTS: dict[str, Callable[[Inventory], None]] = {
    "uplink-cable": _cable,
    "host-cable": _host_cable,
    "lossy-link": _lossy_link,
    "unplugged-uplink": _unplugged,
    "admin-down-port": _port_down,
    "port-speed": _port_speed,
    "port-mtu": _port_mtu,
    "buffer-model": _buffer_model,
    "port-pin": _pin({"device": LEAF, "port": "Ethernet0"}, {"kmin_bytes": 400000}),
    "device-pin": _pin({"device": LEAF}, {"detection_ms": 300}),
    "role-pin": _pin({"role": "spine"}, {"detection_ms": 300}),
    "role-cable-pin": _pin({"role": "spine"}, {"cable_m": 40}),
    "host-pin": _pin({"role": "host"}, {"rpg_time_reset_us": 600}),
}


def _plan(data: Inventory, reuse: bool, monkeypatch: pytest.MonkeyPatch) -> Plan:
    monkeypatch.setattr(compose, "REUSE_SHAPES", reuse)
    return derive_plan(load_inventory_text(yaml.safe_dump(data, sort_keys=False), "shapes.yaml"))


def _difference(a: Plan, b: Plan) -> str | None:
    """Where the plan.json of ``a`` and ``b`` first differ (None when equal; short: no huge assert diff)."""
    ja, jb = plan_to_json(a), plan_to_json(b)
    if ja == jb:
        return None
    i = next((k for k, (x, y) in enumerate(zip(ja, jb)) if x != y), min(len(ja), len(jb)))
    return f"at {i}: {ja[max(0, i - 300):i + 100]!r} vs {jb[max(0, i - 300):i + 100]!r}"


def _switch_json(plan: Plan, name: str) -> str:
    sw = plan.switch(name)
    return sw.model_dump_json(exclude={"name", "mgmt_host", "mgmt_port"}) + str([p.peer for p in sw.ports])


@pytest.mark.slow  # end-to-end (subprocesses/emulators), seconds each: .ci/run runs it (-m slow)
@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_reused_shapes_give_the_switch_by_switch_plan(variant: str, monkeypatch: pytest.MonkeyPatch) -> None:
    data = copy.deepcopy(BASE)
    VARIANTS[variant](data)
    derived = []
    real = compose._derive_shape

    def counting(*args: Any, **kwargs: Any) -> Any:
        derived.append(args[1].name)
        return real(*args, **kwargs)

    monkeypatch.setattr(compose, "_derive_shape", counting)
    reused = _plan(data, True, monkeypatch)
    n_reused = len(derived)
    each = _plan(data, False, monkeypatch)
    if variant == "role-cable-pin":  # every switch has a cable pinned at one end: its rationale names the pin
        assert len(derived) - n_reused == len(each.switches) == n_reused
    else:
        assert len(derived) - n_reused == len(each.switches) > n_reused  # shapes were reused
    assert _difference(reused, each) is None
    base = _plan(copy.deepcopy(BASE), True, monkeypatch)
    changed = {s.name for s in base.switches if _switch_json(base, s.name) != _switch_json(reused, s.name)}
    if variant == "host-pin":
        assert not changed  # a host override matches no switch: every switch keeps its shape
    elif variant == "role-pin":
        assert changed == {s.name for s in base.switches if s.role == "spine"}
    elif variant == "role-cable-pin":  # a cable has one length: the leaf end of each spine cable follows
        assert changed == {s.name for s in base.switches}
        leaf = reused.switch(LEAF)
        up = [p for p in leaf.ports if p.peer and p.peer.startswith("p0-spine")]
        assert up and all(p.cable_m == 40.0 and p.rationale["cable_m"].pinned_by_user for p in up)
    else:
        assert LEAF in changed and "su0-leaf0" not in changed, changed


def test_a_reused_shape_repeats_the_pfc_bound_carriers(monkeypatch: pytest.MonkeyPatch) -> None:
    """RT211 is reported once per ECN profile, naming every switch that has it: reused switches included."""
    reused, each = _plan(BASE, True, monkeypatch), _plan(BASE, False, monkeypatch)
    rt211 = [f for f in reused.findings if f.rule == "RT211"]
    assert rt211 and rt211 == [f for f in each.findings if f.rule == "RT211"]
    assert any("same profile on 16 switches" in f.message for f in rt211)


def test_explain_of_a_late_switch_equals_the_full_plan(monkeypatch: pytest.MonkeyPatch) -> None:
    data = copy.deepcopy(BASE)
    _cable(data)
    loaded = load_inventory_text(yaml.safe_dump(data, sort_keys=False), "shapes.yaml")
    full = derive_plan(loaded)
    for name in ("su1-leaf1", LEAF, "p0-spine15"):
        for preceding in (True, False):
            part = derive_device(loaded, name, preceding=preceding)
            assert part.switches[-1] == full.switch(name)
            assert [f for f in part.findings if f.rule == "RT211"] == [
                f for f in derive_device(loaded, name, preceding=not preceding).findings if f.rule == "RT211"]



def test_copied_ports_and_nics_validate_to_themselves(monkeypatch: pytest.MonkeyPatch) -> None:
    """Ports of a reused shape (``copy_each_trusted``) and NICs copied from their class's first NIC
    (``construct_ordered``) are built without validation: each must still validate to exactly itself and
    carry its own peer / identity."""
    plan = _plan(BASE, True, monkeypatch)
    for sw in plan.switches:
        assert SwitchPlan.model_validate(sw.model_dump()) == sw
    peers = {(h["name"], n["netdev"]): n["switch_port"] for h in BASE["hosts"] for n in h["nics"]}
    for host in plan.hosts:
        assert HostPlan.model_validate(host.model_dump()) == host
        assert all(n.switch_port == peers[(host.name, n.netdev)] for n in host.nics)
        for n in host.nics:
            dev, port = (n.switch_port or "").split(":")
            assert next(p for p in plan.switch(dev).ports if p.name == port).peer == f"{host.name}:{n.netdev}"
