"""verify's as-found read (roce_tune.verify.as_found) on real plan data: what the baseline's settings say for
devices that run the plan, differ per port, or were not read; the host script's MISMATCH lines."""

from __future__ import annotations

from pathlib import Path

from roce_tune.inventory.loader import load_inventory
from roce_tune.pipeline import derive_plan
from roce_tune.platforms import HOST_PLATFORM, get_platform
from roce_tune.verify.adjust import plan_settings
from roce_tune.verify.as_found import AsFound, Difference, _Device

REPO = Path(__file__).resolve().parents[2]
PLAN = derive_plan(load_inventory(REPO / "inventories" / "lab-2node.yaml"))


def test_a_profile_whose_ports_run_different_values_is_split_per_port() -> None:
    sw = PLAN.switches[0]
    [(p0, prof), (p1, _)] = list(sw.lossless_ecn_ports())[:2]
    leaf = _Device(sw.name, values={p0.name: {"kmin_bytes": 20000, "kmax_bytes": 60000, "pmax_percent": 1.0},
                                    p1.name: {"kmin_bytes": prof.kmin_bytes, "kmax_bytes": prof.kmax_bytes,
                                              "pmax_percent": prof.pmax_percent}},
                   differences=[Difference(sw.name, f"{p0.name} queue 3 kmin_bytes", "x", "20000")])
    found = AsFound({sw.name: leaf, "node1": _Device("node1"), "node2": _Device("node2", error="timeout")})
    s = found.settings(PLAN, plan_settings(PLAN))
    assert s["ecn"][f"{sw.name}/{p0.name}"]["running"] == "differs from the plan"
    assert s["ecn"][f"{sw.name}/{p0.name}"]["kmax_bytes"] == 60000
    assert s["ecn"][f"{sw.name}/{p1.name}"]["running"] == "as planned"
    assert s["dcqcn"]["node1"]["running"] == "as planned"
    assert s["dcqcn"]["node2"] == {"rpg_ai_rate_mbps": None, "rpg_hai_rate_mbps": None, "running": "not read"}
    assert found.refusal() is not None and "node2: not read (timeout)" in found.refusal()  # type: ignore[operator]


def test_host_check_mismatch_lines_name_the_dcqcn_key() -> None:
    out = ("roce-tune: node1: 3 value(s) did not read back as set:\n"
           "  MISMATCH ens1f0np0 ecn/roce_rp/rpg_ai_rate: expected '400', read '1'\n"
           "  MISMATCH ens1f0np0 pfc: expected '0,0,0,1,0,0,0,0', read '0,0,0,0,0,0,0,0'\n"
           "  MISMATCH node1 systemd unit /etc/systemd/system/roce-tune-host.service: expected 'as planned', "
           "read 'missing'\nROCE_TUNE_RC=1\n")
    got = get_platform(HOST_PLATFORM).check_mismatches(out)
    assert [(m.device, m.what, m.planned, m.running, m.dcqcn_key) for m in got] == [
        ("ens1f0np0", "ecn/roce_rp/rpg_ai_rate", "400", "1", "rpg_ai_rate_mbps"),
        ("ens1f0np0", "pfc", "0,0,0,1,0,0,0,0", "0,0,0,0,0,0,0,0", None),
        ("node1", "systemd unit /etc/systemd/system/roce-tune-host.service", "as planned", "missing", None)]


def test_a_switch_differing_outside_ecn_is_named_value_by_value() -> None:
    """Drift that is not ECN (here PFC on one port, MTU on another) was one RT332 quoting dry-run lines; it is
    now one difference per value, found by audit's comparison (qos.differences of platforms.planned_qos)."""
    from roce_tune.platforms import planned_qos
    from roce_tune.verify.as_found import _qos_differences

    plan = derive_plan(load_inventory(REPO / "inventories" / "site.yaml"))
    sw = plan.switches[0]
    want = planned_qos(plan, sw)
    (first, p1), (second, p2) = [(n, p) for n, p in want.ports.items() if p.pfc_priorities and p.mtu][:2]
    edited = {first: p1.model_copy(update={"pfc_priorities": []}),
              second: p2.model_copy(update={"mtu": 1500})}
    seen = want.model_copy(update={"ports": {**want.ports, **edited}})
    found = {(d.device, d.value, d.planned, d.running) for d in _qos_differences(sw.name, want, seen)}
    assert found == {(sw.name, f"ports[{first}].pfc_priorities", repr(p1.pfc_priorities), "[]"),
                     (sw.name, f"ports[{second}].mtu", repr(p2.mtu), "1500")}
    assert _qos_differences(sw.name, want, want) == []
