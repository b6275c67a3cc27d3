"""Arista EOS renderer: structure read back from the CLI text, per-speed ECN, units, refusals, golden files.

Oracles: the plan's own numbers (EOS takes bytes and whole percent, so they must appear unchanged);
VENDORS.md §3 syntax (AVD-verified); DOMAIN.md §4 watchdog defaults 200 ms -> ``0.2`` seconds.
"""

from __future__ import annotations

import re

import pytest

from roce_tune.platforms import eos, get_platform

from . import cli_structure as cs
from .plan_builder import build_plan


def _render(**kw: object) -> tuple[object, str]:
    plan = build_plan(**kw)  # type: ignore[arg-type]
    sw = plan.switch("leaf1")
    files = eos.render(plan, sw)
    assert list(files) == ["leaf1.cfg"]
    return plan, files["leaf1.cfg"]


def test_lossless_structure_read_back_from_text() -> None:
    plan, text = _render()
    view = cs.parse_eos(text)
    cs.check_lossless_structure(plan, plan.switch("leaf1"), view)  # type: ignore[attr-defined]
    assert view.ports["Ethernet9/1"].pfc_priorities == set()  # the edge port stays lossy


def test_each_speed_uses_its_own_ecn_profile() -> None:
    plan, text = _render()
    sw = plan.switch("leaf1")  # type: ignore[attr-defined]
    profiles = {e.name: e for e in sw.ecn_profiles}
    blocks = re.findall(r"^qos profile (\S+)\n((?:   .*\n)+)", text, re.MULTILINE)
    ecn = {}
    for name, body in blocks:  # the profile is entered once per section; the ECN block is one of them
        m = re.search(r"random-detect ecn minimum-threshold (\d+) bytes maximum-threshold (\d+) bytes "
                      r"max-mark-probability (\d+) weight 0", body)
        if m:
            ecn[name] = m.groups()
    for port in sw.ports:
        if not port.lossless:
            continue
        sp = re.search(rf"^interface {re.escape(port.name)}\n(?:   .*\n)*?   service-profile (\S+)$", text,
                       re.MULTILINE)
        assert sp, port.name
        e = profiles[port.ecn_profile]
        assert ecn[sp.group(1)] == (str(e.kmin_bytes), str(e.kmax_bytes),
                                    str(round(e.pmax_percent))), port.name
    assert ecn["ecn-400g"] != ecn["ecn-100g"]


def test_uc_tx_queue_on_tomahawk_tx_queue_on_jericho() -> None:
    plan = build_plan()
    sw = plan.switch("leaf1")
    assert eos.queue_keyword(sw) == "uc-tx-queue"
    assert eos.queue_keyword(sw.model_copy(update={"asic": "trident-4"})) == "uc-tx-queue"
    assert eos.queue_keyword(sw.model_copy(update={"asic": "jericho2"})) == "tx-queue"
    jericho = sw.model_copy(update={"asic": "jericho2"})
    text = eos.render(plan, jericho)["leaf1.cfg"]
    assert "\n   tx-queue 3\n" in text and "uc-tx-queue" not in text
    with pytest.raises(KeyError, match="no EOS queue keyword"):
        eos.queue_keyword(sw.model_copy(update={"asic": "spectrum-4"}))


def test_watchdog_in_seconds() -> None:
    _, text = _render()
    for line in ("priority-flow-control pause watchdog default timeout 0.2",
                 "priority-flow-control pause watchdog default recovery-time 0.2",
                 "priority-flow-control pause watchdog default polling-interval 0.1",
                 "   priority-flow-control pause watchdog port action drop"):
        assert line in text.splitlines()
    assert eos.seconds(50) == "0.05" and eos.seconds(1000) == "1" and eos.seconds(1500) == "1.5"


def test_watchdog_actions_map_to_what_eos_has() -> None:
    """EOS per-port actions are drop and notify-only (default errdisable); there is no no-drop."""
    plan = build_plan()
    assert not [f for f in eos.render_findings(plan, plan.switch("leaf1")) if "watchdog" in f.message]
    _, alert = _render(action="alert")
    assert "   priority-flow-control pause watchdog port action notify-only" in alert.splitlines()
    assert not [f for f in eos.render_findings(build_plan(action="alert"),
                                               build_plan(action="alert").switch("leaf1"))
                if "watchdog" in f.message]
    _, fwd = _render(action="forward")
    assert "no-drop" not in fwd.replace("priority-flow-control priority 3 no-drop", "")
    assert "   priority-flow-control pause watchdog port action drop" in fwd.splitlines()
    assert "! plan action 'forward' has no EOS equivalent" in fwd
    fplan = build_plan(action="forward")
    found = [f for f in eos.render_findings(fplan, fplan.switch("leaf1")) if "watchdog" in f.message]
    assert [f.rule for f in found] == ["RT241"] and "rendered as drop" in found[0].message
    for text in (alert, fwd):  # the only action lines are the per-port ones, every one of a known action
        actions = re.findall(r"pause watchdog (?:port )?action (\S+)", text)
        assert actions and set(actions) <= {"drop", "notify-only"}
        assert "pause watchdog action" not in text


def test_polling_rule_is_flagged() -> None:
    plan = build_plan()
    sw = plan.switch("leaf1")
    slow = sw.model_copy(update={"watchdog": sw.watchdog.model_copy(update={"poll_ms": 200})})
    text = eos.render(plan, slow)["leaf1.cfg"]
    assert "polling 200 ms > min(timeout, recovery)/2" in text


def test_mtu_clamped_to_eos_maximum_and_said_so() -> None:
    _, text = _render()
    view = cs.parse_eos(text)
    assert view.ports["Ethernet1/1"].mtu == 9214  # plan 9216; EOS L3 maximum 9214
    assert "! plan MTU 9216 clamped to the EOS maximum 9214" in text
    assert view.ports["Ethernet9/1"].mtu == 1500


def test_no_headroom_knob_is_said_not_configured() -> None:
    _, text = _render()
    section = text.split("! ===== buffers =====")[1].split("! ===== ecn =====")[0]
    assert "no simple per-port PFC headroom knob" in section and "FADT" in section
    assert all(ln.startswith("!") for ln in section.strip().splitlines())
    assert "Ethernet5/1: cable 20.0 m, xoff 40000 B" in section


def test_sections_in_spec_order_and_maps_cover_all_dscp() -> None:
    _, text = _render()
    heads = re.findall(r"^! ===== (\w+) =====$", text, re.MULTILINE)
    assert tuple(heads) == eos.SPEC.sections
    view = cs.parse_eos(text)
    assert sorted(view.dscp_to_queue) == list(range(64))
    assert "qos map traffic-class 7" not in text  # fixed on EOS


def test_fixed_tc7_is_said_not_rendered_and_other_unused_tcs_go_to_queue_0() -> None:
    """The plan sends unused TCs to queue 0 (scheduled); EOS keeps TC 7 on tx-queue 7 for its control
    traffic, so that one pair is an RT241 finding, not a line, and read-back shows the fixed pair."""
    plan, text = _render()
    assert "qos map traffic-class 1 to tx-queue 0" in text and "traffic-class 7 to" not in text
    sw = plan.switch("leaf1")  # type: ignore[attr-defined]
    found = [f for f in eos.render_findings(plan, sw)
             if "traffic-class 7" in f.message]  # type: ignore[arg-type]
    assert len(found) == 1 and found[0].rule == "RT241" and "queue 0" in found[0].message
    assert eos.read_back(text).tc_to_queue == {**plan.classification.tc_to_queue,
                                               7: 7}  # type: ignore[attr-defined]


def test_pmax_rounded_to_whole_percent_with_a_note() -> None:
    plan = build_plan()
    sw = plan.switch("leaf1")
    ecn = [e.model_copy(update={"pmax_percent": 0.2}) for e in sw.ecn_profiles]
    text = eos.render(plan, sw.model_copy(update={"ecn_profiles": ecn}))["leaf1.cfg"]
    assert "max-mark-probability 1 weight 0" in text
    assert "plan Pmax 0.2% rendered as 1%" in text


def test_refusals() -> None:
    plan = build_plan()
    sw = plan.switch("leaf1")
    bad_port = sw.ports[0].model_copy(update={"ecn_profile": "nope"})
    with pytest.raises(ValueError, match="names ECN profile 'nope'"):
        eos.render(plan, sw.model_copy(update={"ports": [bad_port, *sw.ports[1:]]}))
    hostile = sw.ports[0].model_copy(update={"name": "Ethernet1\nreload now"})
    with pytest.raises(ValueError, match="not a safe CLI word"):
        eos.render(plan, sw.model_copy(update={"ports": [hostile, *sw.ports[1:]]}))
    cls = plan.classification.model_copy(update={"tc_to_queue": {**plan.classification.tc_to_queue, 7: 5},
                                                 "dscp_to_tc": {**plan.classification.dscp_to_tc, 56: 7}})
    with pytest.raises(ValueError, match="fixes traffic-class 7"):
        eos.render(plan.model_copy(update={"classification": cls}), sw)


def test_deterministic_and_registered() -> None:
    assert _render()[1] == _render()[1]
    assert get_platform("eos") is eos
    assert eos.SPEC.netmiko_device_type == "arista_eos" and eos.SPEC.negate_prefix == "no "


def test_golden_hand_built() -> None:
    _, text = _render()
    cs.assert_golden("eos", "hand-built", {"leaf1.cfg": text})


def test_golden_mixed_vendor_inventory() -> None:
    plan = cs.pipeline_plan("mixed-vendor")
    files = cs.render_platform(plan, "eos")
    assert files, "mixed-vendor.yaml has EOS leaves"
    for sw in plan.switches:
        if sw.platform == "eos":
            cs.check_lossless_structure(plan, sw, cs.parse_eos(files[f"{sw.name}.cfg"]))
    cs.assert_golden("eos", "mixed-vendor", files)
