"""Cisco NX-OS renderer: structure read back from the CLI text, unit conversions, headroom, golden files.

Oracles: the plan's numbers through NX-OS units (1 kbyte = 1024 B, rounded down — 150000 B -> 146,
1500000 B -> 1464); headroom pause-threshold = size - xoff and resume = xon (the Cisco 93180YC-EX minimum
27456/12480/12480 has exactly this shape); watchdog 200 ms over a 100 ms poll = multiplier 2.
"""

from __future__ import annotations

import re

import pytest

from roce_tune.platforms import get_platform, nxos

from . import cli_structure as cs
from .plan_builder import build_plan


def _render(**kw: object) -> tuple[object, str]:
    plan = build_plan(**kw)  # type: ignore[arg-type]
    files = nxos.render(plan, plan.switch("spine1"))
    assert list(files) == ["spine1.cfg"]
    return plan, files["spine1.cfg"]


def test_lossless_structure_read_back_from_text() -> None:
    plan, text = _render()
    cs.check_lossless_structure(plan, plan.switch("spine1"),
                                cs.parse_nxos(text))  # type: ignore[attr-defined]


def test_ecn_in_kbytes_per_speed() -> None:
    _, text = _render()
    pol = dict(re.findall(r"^policy-map type queuing (RT_EGRESS_ecn-\S+)\n  class type queuing c-out-8q-q3\n"
                          r"    (random-detect .*)$", text, re.MULTILINE))
    assert pol["RT_EGRESS_ecn-400g"] == ("random-detect minimum-threshold 146 kbytes maximum-threshold 1464 "
                                         "kbytes drop-probability 100 weight 0 ecn")
    assert pol["RT_EGRESS_ecn-100g"] == ("random-detect minimum-threshold 48 kbytes maximum-threshold 390 "
                                         "kbytes drop-probability 20 weight 0 ecn")
    assert nxos.kbytes(1024) == 1 and nxos.kbytes(2047) == 1 and nxos.kbytes(10) == 1
    ifaces = dict(re.findall(r"^interface (\S+)\n(?:  .*\n)*?  service-policy type queuing output (\S+)$",
                             text, re.MULTILINE))
    assert ifaces == {"Ethernet1/1": "RT_EGRESS_ecn-100g", "Ethernet1/2": "RT_EGRESS_ecn-400g",
                      "Ethernet1/3": "RT_EGRESS_ecn-400g", "Ethernet1/64": "RT_EGRESS_LOSSY"}


def test_headroom_as_ingress_pause_thresholds_with_hysteresis() -> None:
    """The tuner's static-PG numbers are printed as they are; resume sits one MTU below pause."""
    plan, text = _render()
    sw = plan.switch("spine1")  # type: ignore[attr-defined]
    for port in sw.ports:
        if not port.lossless:
            continue
        hr = port.headroom
        block = re.search(rf"^policy-map type queuing RT_INGRESS_{hr.profile}\n  class type queuing c-in-q3\n"
                          r"    pause buffer-size (\d+) pause-threshold (\d+) resume-threshold (\d+)$", text,
                          re.MULTILINE)
        assert block, hr.profile
        size, pause, resume = map(int, block.groups())
        assert (size, pause, resume) == (hr.static_buffer_bytes, hr.pause_threshold_bytes,
                                         hr.resume_threshold_bytes)
        assert (size, pause, resume) == (hr.xon_bytes + hr.xoff_bytes, hr.xon_bytes, hr.xon_bytes - port.mtu)
        assert resume < pause, "pause and resume at the same occupancy: no hysteresis"
        assert re.search(rf"^interface {re.escape(port.name)}\n(?:  .*\n)*?  service-policy type queuing "
                         rf"input RT_INGRESS_{hr.profile}$", text, re.MULTILINE)
    # no static-PG numbers in the plan (not derived by the tuner): refused, not guessed here
    bare = sw.ports[0].headroom.model_copy(update={"pause_threshold_bytes": None})
    with pytest.raises(ValueError, match="no static-PG"):
        nxos._headroom(bare, [3])
    with pytest.raises(ValueError, match="0 < resume < pause"):
        nxos._headroom(sw.ports[0].headroom.model_copy(update={"resume_threshold_bytes": 0}), [3])


def test_no_drop_only_on_lossless_class_and_unused_queues_zero() -> None:
    _, text = _render()
    assert re.findall(r"^    pause pfc-cos (.+)$", text, re.MULTILINE) == ["3"]
    assert re.search(r"class type network-qos c-8q-nq3\n    mtu 9216\n    pause pfc-cos 3\n", text)
    sched = text.split("! ===== scheduler =====")[1].split("! ===== watchdog =====")[0]
    first = sched.split("policy-map type queuing ")[1]
    assert "class type queuing c-out-8q-q6\n    priority level 1" in first
    assert "class type queuing c-out-8q-q5\n    bandwidth remaining percent 0" in first
    assert "class type queuing c-out-8q-q-default\n    bandwidth remaining percent 50" in first


def test_classification_ranges_and_default() -> None:
    _, text = _render(cnp_dscp=40)
    assert "class-map type qos match-any RT_Q6\n  match dscp 40\n" in text
    assert "  class class-default\n    set qos-group 0\n" in text
    assert nxos.dscp_ranges([0, 1, 2, 5, 7, 8, 63]) == "0-2,5,7-8,63"
    view = cs.parse_nxos(text)
    assert view.dscp_to_queue[40] == 6 and view.dscp_to_queue[26] == 3 and view.dscp_to_queue[0] == 0


def test_watchdog_only_sourced_lines_and_a_finding_for_the_timers() -> None:
    """Only ``watch-dog-interval on`` has a Cisco source; the unverified interval/multiplier lines are gone
    and the plan's timers are an RT241 finding (device defaults apply)."""
    plan, text = _render()
    lines = text.splitlines()
    assert "priority-flow-control watch-dog-interval on" in lines
    assert not [ln for ln in lines if not ln.startswith("!") and ("multiplier" in ln or "watch-dog " in ln)]
    found = [f for f in nxos.render_findings(plan, plan.switch("spine1"))  # type: ignore[attr-defined]
             if "watchdog" in f.message]
    assert [f.rule for f in found] == ["RT241"] and "detection 200 ms" in found[0].message
    plan = build_plan(action="forward")
    sw = plan.switch("spine1")
    off = sw.model_copy(update={"watchdog": sw.watchdog.model_copy(update={"enabled": False})})
    assert [f for f in nxos.render_findings(plan, off) if "watchdog" in f.message] == []
    assert "action forward" in [f for f in nxos.render_findings(plan,
                                                                sw) if "watchdog" in f.message][0].message


def test_lossy_port_pfc_off_no_classification() -> None:
    _, text = _render()
    block = re.search(r"^interface Ethernet1/64\n((?:  .*\n)+)", text, re.MULTILINE)
    assert block
    assert "priority-flow-control mode off" in block.group(1)
    assert "service-policy type qos input" not in block.group(1)
    assert "service-policy type queuing input" not in block.group(1)


def test_sections_in_spec_order_deterministic_registered() -> None:
    _, text = _render()
    assert tuple(re.findall(r"^! ===== (\w+) =====$", text, re.MULTILINE)) == nxos.SPEC.sections
    assert text == _render()[1]
    assert get_platform("nxos") is nxos and nxos.SPEC.netmiko_device_type == "cisco_nxos"


def test_refusals() -> None:
    plan = build_plan()
    sw = plan.switch("spine1")
    hostile = sw.ports[0].model_copy(update={"name": "Ethernet1/1 ; reload"})
    with pytest.raises(ValueError, match="not a safe CLI word"):
        nxos.render(plan, sw.model_copy(update={"ports": [hostile, *sw.ports[1:]]}))
    with pytest.raises(ValueError, match="no ports"):
        nxos.render(plan, sw.model_copy(update={"ports": []}))


def test_golden_hand_built() -> None:
    _, text = _render()
    cs.assert_golden("nxos", "hand-built", {"spine1.cfg": text})


def test_golden_mixed_vendor_inventory() -> None:
    plan = cs.pipeline_plan("mixed-vendor")
    files = cs.render_platform(plan, "nxos")
    assert files, "mixed-vendor.yaml has NX-OS spines"
    for sw in plan.switches:
        if sw.platform == "nxos":
            cs.check_lossless_structure(plan, sw, cs.parse_nxos(files[f"{sw.name}.cfg"]))
    cs.assert_golden("nxos", "mixed-vendor", files)


def _long_profile_switch(plan: object, profiles: list[str]) -> object:
    """spine1 with its lossless ports' headroom profiles renamed to the tuner's long SONiC-style names and
    a long ECN profile name (what a 400G fabric with 150 m links produces)."""
    sw = plan.switch("spine1")  # type: ignore[attr-defined]
    ports, lossless = [], [p for p in sw.ports if p.lossless]
    for p in sw.ports:
        if p.lossless:
            name = profiles[lossless.index(p) % len(profiles)]
            p = p.model_copy(update={"headroom": p.headroom.model_copy(update={"profile": name}),
                                     "ecn_profile": "ROCE_LOSSLESS_400G_N15_SPINE_UPLINKS"})
        ports.append(p)
    ecn = [e.model_copy(update={"name": "ROCE_LOSSLESS_400G_N15_SPINE_UPLINKS"}) for e in sw.ecn_profiles[:1]]
    return sw.model_copy(update={"ports": ports, "ecn_profiles": ecn})


def test_policy_and_class_names_fit_nxos_40_characters() -> None:
    """NX-OS class-map and policy-map names are 1-40 characters (Cisco Nexus 9000 QoS guide, "Configuring
    Classification"/"Creating Policy Maps"; Batfish's NX-OS grammar ``class_map_name``/``policy_map_name``
    "1-40 characters"): the tuner's 31-character headroom profile names made 41-42-character ones."""
    plan = build_plan()
    long_names = ["pg_lossless_400000_20m_profile", "pg_lossless_400000_150m_profile",
                  "pg_lossless_400000_1500m_profile"]
    sw = _long_profile_switch(plan, long_names)
    text = nxos.render(plan, sw)["spine1.cfg"]  # type: ignore[arg-type]
    defined = re.findall(r"^(?:class-map|policy-map) type \S+ (?:match-\S+ )?(\S+)$", text, re.MULTILINE)
    assert defined and all(len(n) <= nxos.MAX_NAME_LEN == 40 for n in defined), defined
    ingress = sorted({n for n in defined if n.startswith("RT_INGRESS_")})
    assert len(ingress) == 3, ingress  # three profiles stay three policies after shortening
    # every policy an interface or system qos uses is one the file defines
    used = re.findall(r"service-policy type \S+ (?:input |output )?(\S+)$", text, re.MULTILINE)
    assert set(used) <= set(defined), set(used) - set(defined)
    # deterministic: the same plan renders the same names; a name that fits is kept as it is
    assert nxos.render(plan, sw)["spine1.cfg"] == text  # type: ignore[arg-type]
    assert nxos.ingress_policy(sw.ports[0].headroom.model_copy(  # type: ignore[attr-defined]
        update={"profile": "pg_lossless_100g_20m"})) == "RT_INGRESS_pg_lossless_100g_20m"


def test_profiles_that_shorten_to_one_name_are_refused() -> None:
    """Two profiles whose names give the same NX-OS policy are refused, never merged silently."""
    plan = build_plan()
    sw = _long_profile_switch(plan, ["pg_lossless_400000_150m_profile"])
    ecn = sw.ecn_profiles[0]  # type: ignore[attr-defined]
    clash = ecn.model_copy(update={"name": "LOSSY"})  # RT_EGRESS_LOSSY is the lossy ports' policy
    ports = [p.model_copy(update={"ecn_profile": "LOSSY"}) if p.lossless else p
             for p in sw.ports]  # type: ignore[attr-defined]
    bad = sw.model_copy(update={"ecn_profiles": [clash], "ports": ports})  # type: ignore[attr-defined]
    with pytest.raises(ValueError, match="both render as NX-OS policy RT_EGRESS_LOSSY"):
        nxos.build_context(plan, bad)  # type: ignore[arg-type]
