"""Juniper Junos renderer: structure read back from the set lines, percent conversion, CNPs, golden files.

Oracles: DSCP 26 = ``011010``, DSCP 48 = ``110000`` (VENDORS.md §5); fill-level = bytes x 100 / queue
buffer rounded down (150000 of 2000000 = 7.5 % -> 7); Juniper watchdog default detection 200 ms at a
100 ms poll = 2 polls (DOMAIN.md §4).
"""

from __future__ import annotations

import re

import pytest

from roce_tune.plan import EcnProfile
from roce_tune.platforms import get_platform, junos

from . import cli_structure as cs
from .plan_builder import build_plan


def _render(**kw: object) -> tuple[object, str]:
    plan = build_plan(**kw)  # type: ignore[arg-type]
    files = junos.render(plan, plan.switch("leaf3"))
    assert list(files) == ["leaf3.set"]
    return plan, files["leaf3.set"]


def test_lossless_structure_read_back_from_text() -> None:
    plan, text = _render()
    cs.check_lossless_structure(plan, plan.switch("leaf3"), cs.parse_junos(text))  # type: ignore[attr-defined]


def test_code_points_and_no_loss_class() -> None:
    _, text = _render()
    assert junos.code_point(26) == "011010" and junos.code_point(48) == "110000" and junos.code_point(0) == "000000"
    assert "set class-of-service forwarding-classes class RT_Q3 no-loss" in text
    assert "set class-of-service forwarding-classes class RT_Q3 pfc-priority 3" in text
    assert "forwarding-class RT_Q3 loss-priority low code-points [ 011010 ]" in text
    assert "forwarding-class RT_Q6 loss-priority low code-points [ 110000 ]" in text
    assert len(cs.parse_junos(text).dscp_to_queue) == 64


def test_ecn_fill_levels_are_percent_of_queue_buffer() -> None:
    _, text = _render()
    assert "set class-of-service drop-profiles RT_ECN_ecn-400g interpolate fill-level [ 7 75 ]" in text
    assert "set class-of-service drop-profiles RT_ECN_ecn-400g interpolate drop-probability [ 0 100 ]" in text
    assert "set class-of-service drop-profiles RT_ECN_ecn-100g interpolate fill-level [ 2 20 ]" in text
    ports = dict(re.findall(r"^set class-of-service interfaces (\S+) scheduler-map (\S+)$", text, re.MULTILINE))
    assert ports == {"et-0/0/0": "RT_SM_ecn-400g", "et-0/0/1": "RT_SM_ecn-400g", "et-0/0/4": "RT_SM_ecn-100g"}


def _ecn(kmin: int, kmax: int, buf: int | None) -> EcnProfile:
    return build_plan().switch("leaf3").ecn_profiles[0].model_copy(
        update={"kmin_bytes": kmin, "kmax_bytes": kmax, "queue_buffer_bytes": buf})


def test_fill_level_conversion_and_refusals() -> None:
    assert junos.fill_levels(_ecn(150_000, 1_500_000, 2_000_000)) == (7, 75)
    assert junos.fill_levels(_ecn(1_000, 500_000, 1_000_000)) == (1, 50)  # 0.1 % -> at least 1
    with pytest.raises(ValueError, match="queue_buffer_bytes"):
        junos.fill_levels(_ecn(150_000, 1_500_000, None))
    with pytest.raises(ValueError, match="whole percent cannot express"):
        junos.fill_levels(_ecn(150_000, 190_000, 100_000_000))  # 0.15 % .. 0.19 %
    plan = build_plan(queue_buffer=None)
    with pytest.raises(ValueError, match="queue_buffer_bytes"):
        junos.render(plan, plan.switch("leaf3"))


def test_one_cnp_per_cable_length_with_watchdog() -> None:
    _, text = _render()
    cnps = dict(re.findall(r"^set class-of-service interfaces (\S+) congestion-notification-profile (\S+)$", text, re.MULTILINE))
    assert cnps == {"et-0/0/0": "RT_PFC_3M", "et-0/0/1": "RT_PFC_3M", "et-0/0/4": "RT_PFC_20M"}
    for name, metres in (("RT_PFC_3M", 3), ("RT_PFC_20M", 20)):
        assert f"set class-of-service congestion-notification-profile {name} input cable-length {metres}" in text
        assert f"set class-of-service congestion-notification-profile {name} input dscp code-point 011010 pfc" in text
        assert f"set class-of-service congestion-notification-profile {name} pfc-watchdog poll-interval 100" in text
        assert f"set class-of-service congestion-notification-profile {name} pfc-watchdog detection 2" in text
        assert f"set class-of-service congestion-notification-profile {name} pfc-watchdog recovery-time 200" in text


def test_lossy_port_gets_mtu_only() -> None:
    _, text = _render()
    lines = [ln for ln in text.splitlines() if "et-0/0/31" in ln and ln.startswith("set ")]
    assert lines == ["set interfaces et-0/0/31 mtu 9216"]


def test_watchdog_action_and_flow_control_notes() -> None:
    _, text = _render(action="forward")
    assert "plan action 'forward': the Junos watchdog flushes the stalled queue" in text
    plan = build_plan()
    cls = plan.classification.model_copy(update={"lossless_queues": [5], "pfc_priority_to_queue": {
        **plan.classification.pfc_priority_to_queue, 3: 5}, "tc_to_queue": {**plan.classification.tc_to_queue, 3: 5}})
    text = junos.render(plan.model_copy(update={"classification": cls}), plan.switch("leaf3"))["leaf3.set"]
    assert "# lossless queue 5 is not a default PFC flow-control queue" in text


def test_every_line_is_set_or_comment_and_sections_in_order() -> None:
    _, text = _render()
    assert all(ln.startswith(("set ", "#")) for ln in text.splitlines())
    assert tuple(re.findall(r"^# ===== (\w+) =====$", text, re.MULTILINE)) == junos.SPEC.sections
    assert text == _render()[1]
    assert get_platform("junos") is junos and junos.SPEC.negate_prefix == "delete "


def test_refusals() -> None:
    plan = build_plan()
    sw = plan.switch("leaf3")
    hostile = sw.ports[0].model_copy(update={"name": "et-0/0/0\ndelete system"})
    with pytest.raises(ValueError, match="not a safe CLI word"):
        junos.render(plan, sw.model_copy(update={"ports": [hostile, *sw.ports[1:]]}))
    cls = plan.classification.model_copy(update={"lossless_priorities": [3, 4],
                                                 "pfc_priority_to_queue": {**plan.classification.pfc_priority_to_queue, 4: 3}})
    with pytest.raises(ValueError, match="one pfc-priority"):
        junos.render(plan.model_copy(update={"classification": cls}), sw)


def test_golden_hand_built() -> None:
    _, text = _render()
    cs.assert_golden("junos", "hand-built", {"leaf3.set": text})


def test_golden_mixed_vendor_inventory() -> None:
    plan = cs.pipeline_plan("mixed-vendor")
    assert all(e.queue_buffer_bytes for sw in plan.switches if sw.platform == "junos" for e in sw.ecn_profiles)
    files = cs.render_platform(plan, "junos")
    assert files, "mixed-vendor.yaml has Junos leaves"
    for sw in plan.switches:
        if sw.platform == "junos":
            cs.check_lossless_structure(plan, sw, cs.parse_junos(files[f"{sw.name}.set"]))
    cs.assert_golden("junos", "mixed-vendor", files)


def test_coarse_percent_resolution_is_flagged() -> None:
    # 75 KB of a 26.4 MB queue buffer is 0.28 %: whole percent can only say 1 % = 263922 B.
    plan = build_plan()
    sw = plan.switch("leaf3")
    ecn = [e.model_copy(update={"kmin_bytes": 75_000, "kmax_bytes": 1_221_000, "queue_buffer_bytes": 26_392_240})
           for e in sw.ecn_profiles]
    text = junos.render(plan, sw.model_copy(update={"ecn_profiles": ecn}))["leaf3.set"]
    assert "fill-level [ 1 4 ]" in text
    assert "# WARNING: whole-percent fill levels move Kmin from 75000 B to 263922 B" in text
    _, fine = _render()  # 150 KB of 2 MB -> 7 % = 140 KB: within tolerance, no warning
    assert "Kmin from 150000" not in fine


def test_coarse_percent_resolution_reaches_the_plan_review_and_lint() -> None:
    """RT241: the render warning is a plan finding (plan.json, plan.md, the caller's list), not only a
    comment in the .set file; a fine-grained ramp gives none."""
    import json

    from roce_tune.render.outputs import render_outputs

    plan = cs.pipeline_plan("mixed-vendor")
    # the derived ramps (Kmax = half the PFC onset) are fine-grained; a 75 KB Kmin (the old BDP rule's size,
    # ``policy.ecn_profile: bdp``) is 0.28 % of the QFX queue buffer
    plan = plan.model_copy(update={"switches": [
        sw.model_copy(update={"ecn_profiles": [e.model_copy(update={"kmin_bytes": 75_000}) for e in sw.ecn_profiles]})
        if sw.platform == "junos" else sw for sw in plan.switches]})
    found: list = []
    files = render_outputs(plan, include_hosts=False, findings=found)
    junos_leaves = sorted(sw.name for sw in plan.switches if sw.platform == "junos")
    flagged = sorted({f.location.device for f in found if f.rule == "RT241"})
    assert flagged == [n for n in junos_leaves if "# WARNING: whole-percent" in files[f"switches/{n}.set"]]
    assert flagged, "the mixed-vendor QFX ramps are coarser than 1 % of their queue buffer"
    assert all(f.severity.value == "warning" and "Kmin from 75000 B" in f.message for f in found)
    assert [f["rule"] for f in json.loads(files["plan.json"])["findings"]].count("RT241") == len(found)
    assert "RT241" in files["plan.md"]
    assert not [f for f in plan.findings if f.rule == "RT241"]  # the tuner's plan itself is unchanged
    hand = build_plan()
    quiet: list = []
    render_outputs(hand, include_hosts=False, findings=quiet)
    assert not [f for f in quiet if f.rule == "RT241"]
