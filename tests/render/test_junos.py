"""Juniper Junos renderer: structure read back from the set lines, percent conversion, CNPs, golden files.

Oracles: DSCP 26 = ``011010``, DSCP 48 = ``110000`` (VENDORS.md §5); fill-level = bytes x 100 / queue
buffer rounded down (150000 of 2000000 = 7.5 % -> 7); Juniper watchdog default detection 200 ms at a
100 ms poll = 2 polls (DOMAIN.md §4).
"""

from __future__ import annotations

import re

import pytest

from roce_tune.plan import EcnProfile, Plan
from roce_tune.platforms import get_platform, junos
from tests.references import reference

from . import cli_structure as cs
from . import junos_yang
from .plan_builder import build_plan

# one xdist worker runs this module: Juniper's YANG takes pyang ~7 s of CPU to load, once per process
# (junos_yang.load_junos_yang is cached), and several tests here walk set lines through it
pytestmark = pytest.mark.xdist_group("junos-yang")


def _render(**kw: object) -> tuple[object, str]:
    plan = build_plan(**kw)  # type: ignore[arg-type]
    files = junos.render(plan, plan.switch("leaf3"))
    assert list(files) == ["leaf3.set"]
    return plan, files["leaf3.set"]


def test_lossless_structure_read_back_from_text() -> None:
    plan, text = _render()
    cs.check_lossless_structure(plan, plan.switch("leaf3"),
                                cs.parse_junos(text))  # type: ignore[attr-defined]


def test_code_points_and_no_loss_class() -> None:
    _, text = _render()
    assert (junos.code_point(26) == "011010" and junos.code_point(48) == "110000"
            and junos.code_point(0) == "000000")
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
    ports = dict(re.findall(r"^set class-of-service interfaces (\S+) scheduler-map (\S+)$", text,
                            re.MULTILINE))
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
    cnps = dict(re.findall(r"^set class-of-service interfaces (\S+) congestion-notification-profile (\S+)$",
                           text, re.MULTILINE))
    assert cnps == {"et-0/0/0": "RT_PFC_3M", "et-0/0/1": "RT_PFC_3M", "et-0/0/4": "RT_PFC_20M"}
    for name, metres in (("RT_PFC_3M", 3), ("RT_PFC_20M", 20)):
        assert (f"set class-of-service congestion-notification-profile {name} input cable-length "
                f"{metres}" in text)
        assert (f"set class-of-service congestion-notification-profile {name} input dscp code-point 011010 "
                "pfc" in text)
        assert (f"set class-of-service congestion-notification-profile {name} pfc-watchdog poll-interval "
                "100" in text)
        assert f"set class-of-service congestion-notification-profile {name} pfc-watchdog detection 2" in text
        assert (f"set class-of-service congestion-notification-profile {name} pfc-watchdog recovery "
                "200" in text)
        assert (f"set class-of-service congestion-notification-profile {name} pfc-watchdog watchdog-action "
                "drop") in text
        # Juniper's watchdog page: the watchdog works only on queues declared flow-control queues
        assert (f"set class-of-service congestion-notification-profile {name} output ieee-802.1 code-point "
                "011 flow-control-queue 3") in text
    assert "recovery-time" not in text


def test_pfc_code_points_carry_the_port_mtu_as_mru() -> None:
    """Junos sizes PFC headroom from the CNP's cable length AND the MRU of each PFC code point; the MRU
    defaults to 2500 bytes for priority 3 and for user-configured priorities (Juniper CLI reference, "mru
    (Congestion Notification Profiles)", hierarchy ``[edit class-of-service congestion-notification-profile
    P input dscp code-point BBBBBB pfc]``, https://juniper.net/documentation/us/en/software/junos/
    cli-reference/topics/ref/statement/mru-edit-class-of-service-congestion-notification-qfx-series.html).
    The plan's headroom assumes a full port-MTU frame in flight, so every PFC code point carries
    ``mru <largest MTU of the CNP's lossless ports>``; a smaller-MTU port sharing the CNP only gets more."""
    plan = build_plan()
    sw = plan.switch("leaf3")
    mtus = {"et-0/0/0": 9216, "et-0/0/1": 9000, "et-0/0/4": 4200}  # 3 m, 3 m, 20 m lossless ports
    ports = [p.model_copy(update={"mtu": mtus.get(p.name, p.mtu)}) for p in sw.ports]
    text = junos.render(plan, sw.model_copy(update={"ports": ports}))["leaf3.set"]
    want = {"RT_PFC_3M": 9216, "RT_PFC_20M": 4200}
    got = dict(re.findall(r"^set class-of-service congestion-notification-profile (\S+) input dscp "
                          r"code-point 011010 pfc mru (\d+)$", text, re.MULTILINE))
    assert {k: int(v) for k, v in got.items()} == want
    assert not re.search(r"code-point 011010 pfc$", text, re.MULTILINE)
    junos_yang.check_set_text(_schema(), text)  # skips (not AttributeError) without the Juniper YANG


def test_lossy_port_gets_mtu_only() -> None:
    _, text = _render()
    lines = [ln for ln in text.splitlines() if "et-0/0/31" in ln and ln.startswith("set ")]
    assert lines == ["set interfaces et-0/0/31 mtu 9216"]


def test_watchdog_action_and_flow_control_queues() -> None:
    _, text = _render(action="forward")
    assert "pfc-watchdog watchdog-action forward" in text
    plan = build_plan(action="alert")
    _, alert = _render(action="alert")
    assert ("pfc-watchdog watchdog-action" not in alert
            and "plan action 'alert' has no Junos watchdog-action" in alert)
    found = junos.render_findings(plan, plan.switch("leaf3"))
    assert [f.rule for f in found if "watchdog" in f.message] == ["RT241"]
    assert not [f for f in junos.render_findings(build_plan(),
                                                 build_plan().switch("leaf3")) if "watchdog" in f.message]
    # a lossless priority on another queue: the output stanza names that priority's code point and queue
    plan = build_plan()
    cls = plan.classification.model_copy(update={"lossless_queues": [5], "pfc_priority_to_queue": {
        **plan.classification.pfc_priority_to_queue, 3: 5}, "tc_to_queue": {**plan.classification.tc_to_queue,
                                                                            3: 5}})
    text = junos.render(plan.model_copy(update={"classification": cls}), plan.switch("leaf3"))["leaf3.set"]
    assert "output ieee-802.1 code-point 011 flow-control-queue 5" in text
    assert "flow-control-queue 3" not in text


def test_watchdog_not_rendered_on_evo_models_juniper_does_not_list() -> None:
    """Juniper's "PFC Watchdog" page (AI-ML Data Center Feature Guide, Junos OS Evolved,
    https://www.juniper.net/documentation/us/en/software/junos/ai-ml-evo/topics/topic-map/pfc-watchdog.html)
    lists QFX5230-64CD, QFX5240-64OD and QFX5240-64QD only: on a QFX5130/QFX5220 the plan's watchdog is
    not rendered, a RT241 warning says so, and what Junos can carry (read-back expectation) has none."""
    from roce_tune.platforms import junos_readback

    plan = build_plan()
    for model, shown in (("QFX5130-32CD", False), ("qfx5220-32cd", False), ("QFX5240-64OD", True),
                         ("QFX5230-64CD", True), ("QFX5120-48Y", True), ("test-model", True)):
        sw = plan.switch("leaf3").model_copy(update={"model": model})
        text = junos.render(plan, sw)["leaf3.set"]
        assert ("pfc-watchdog" in text) is shown, model
        # the output stanza still declares the PFC queues (received PFC pauses exactly those)
        assert "output ieee-802.1 code-point 011 flow-control-queue 3" in text
        warned = [f for f in junos.render_findings(plan, sw) if "watchdog not rendered" in f.message]
        want_rules = [] if shown else [("RT241", "warning")]
        assert [(f.rule, f.severity.value) for f in warned] == want_rules, model
        want = junos_readback.expressible_qos(plan, sw)
        assert (want.watchdog is not None) is shown, model
        assert all(p.watchdog is shown for n, p in want.ports.items()
                   if next(q for q in sw.ports if q.name == n).lossless), model
        if not shown:
            assert f"# not rendered: Juniper documents no PFC watchdog for {model} (RT241)" in text
            seen = junos_readback.read_back(text)
            assert seen.watchdog is None and not any(p.watchdog for p in seen.ports.values())


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
                                                 "pfc_priority_to_queue": {
                                                     **plan.classification.pfc_priority_to_queue, 4: 3}})
    with pytest.raises(ValueError, match="one pfc-priority"):
        junos.render(plan.model_copy(update={"classification": cls}), sw)


def test_golden_hand_built() -> None:
    _, text = _render()
    cs.assert_golden("junos", "hand-built", {"leaf3.set": text})


def test_golden_mixed_vendor_inventory() -> None:
    plan = cs.pipeline_plan("mixed-vendor")
    assert all(e.queue_buffer_bytes for sw in plan.switches if sw.platform == "junos"
               for e in sw.ecn_profiles)
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
    ecn = [e.model_copy(update={"kmin_bytes": 75_000, "kmax_bytes": 1_221_000,
                                "queue_buffer_bytes": 26_392_240})
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
        sw.model_copy(update={"ecn_profiles": [e.model_copy(update={"kmin_bytes": 75_000})
                                               for e in sw.ecn_profiles]})
        if sw.platform == "junos" else sw for sw in plan.switches]})
    found: list = []
    files = render_outputs(plan, include_hosts=False, findings=found)
    junos_leaves = sorted(sw.name for sw in plan.switches if sw.platform == "junos")
    # other platforms have their own
    # RT241
    found = [f for f in found if f.location.device in set(junos_leaves)
             # info RT241s (headroom sized by Junos, roundings) are
             # read-back's; the QFX5130 watchdog warning is
             # test_watchdog_not_rendered_on_evo_models_juniper_does_not_list's
             and f.severity.value == "warning" and "watchdog" not in f.message]
    flagged = sorted({f.location.device for f in found if f.rule == "RT241"})
    assert flagged == [n for n in junos_leaves if "# WARNING: whole-percent" in files[f"switches/{n}.set"]]
    assert flagged, "the mixed-vendor QFX ramps are coarser than 1 % of their queue buffer"
    assert all(f.severity.value == "warning" and "Kmin from 75000 B" in f.message for f in found)
    assert len([f for f in json.loads(files["plan.json"])["findings"]
                if f["rule"] == "RT241" and f["location"]["device"] in junos_leaves
                and f["severity"] == "warning" and "watchdog" not in f["message"]]) == len(found)
    assert "RT241" in files["plan.md"]
    assert not [f for f in plan.findings if f.rule == "RT241"]  # the tuner's plan itself is unchanged
    hand = build_plan()
    quiet: list = []
    render_outputs(hand, include_hosts=False, findings=quiet)
    assert not [f for f in quiet if f.rule == "RT241" and f.location.device == "leaf3"
                and f.severity.value == "warning"]


# --- Juniper's own YANG: every set line walked through the schema (tests/render/junos_yang.py) ----
def _schema():  # type: ignore[no-untyped-def]
    pytest.importorskip("pyang")
    reference("junos-yang", junos_yang.JUNOS_YANG_RELEASE)  # skips, named in the summary, when absent
    schema = junos_yang.load_junos_yang()
    assert schema is not None, f"Juniper YANG at {junos_yang.junos_yang_dir()} did not load"
    return schema


def _watchdog_variants(plan: Plan) -> list[Plan]:
    """The plan as derived plus non-default watchdog settings (every action, long/short timers)."""
    out = [plan]
    for action, det, rest, poll in (("forward", 500, 60000, 250), ("alert", 100, 100, 100),
                                    ("drop", 5000, 600, 1000)):
        switches = [sw.model_copy(update={"watchdog": sw.watchdog.model_copy(update={
            "action": action, "detection_ms": det, "restoration_ms": rest,
            "poll_ms": poll})}) for sw in plan.switches]
        out.append(plan.model_copy(update={"switches": switches}))
    off = [sw.model_copy(update={"watchdog": sw.watchdog.model_copy(update={"enabled": False})})
           for sw in plan.switches]
    return [*out, plan.model_copy(update={"switches": off})]


def _shipped_junos_inventories() -> list[str]:
    names = []
    for path in sorted((junos_yang.REPO_ROOT / "inventories").glob("*.yaml")):
        if re.search(r"^\s*platform:\s*junos\b", path.read_text(encoding="utf-8"), re.MULTILINE):
            names.append(path.stem)
    return names


def test_shipped_inventories_with_junos_are_found() -> None:
    assert "mixed-vendor" in _shipped_junos_inventories()


@pytest.mark.parametrize("inventory", _shipped_junos_inventories())
def test_every_set_line_is_in_junipers_yang(inventory: str) -> None:
    schema = _schema()
    checked = 0
    for plan in _watchdog_variants(cs.pipeline_plan(inventory)):
        files = cs.render_platform(plan, "junos")
        assert files
        for text in files.values():
            checked += junos_yang.check_set_text(schema, text)
    assert checked > 100


def test_hand_built_plan_set_lines_are_in_junipers_yang() -> None:
    schema = _schema()
    for plan in _watchdog_variants(build_plan()):
        assert junos_yang.check_set_text(schema, junos.render(plan, plan.switch("leaf3"))["leaf3.set"]) > 30


def test_yang_check_rejects_planted_errors() -> None:
    """An unknown keyword, an out-of-range value, a bad enum/pattern and a missing companion statement
    (pfc-watchdog without the output flow-control queues) each fail the check."""
    schema = _schema()
    _, text = _render()
    assert junos_yang.check_set_text(schema, text) > 30
    cnp = "set class-of-service congestion-notification-profile RT_PFC_3M"
    planted = {
        "pfc-watchdog recovery-time 200": f"{cnp} pfc-watchdog recovery-time 200",
        "70000": f"{cnp} pfc-watchdog recovery 70000",  # uint16
        "flow-control-queue": f"{cnp} output ieee-802.1 code-point 011 flow-control-queue 9",  # 0..7
        "code-point": f"{cnp} output ieee-802.1 code-point 3 flow-control-queue 3",  # xxx bits
        "watchdog-action": f"{cnp} pfc-watchdog watchdog-action alert",  # drop | forward
        "incomplete": "set class-of-service forwarding-classes",
    }
    for what, line in planted.items():
        with pytest.raises(junos_yang.JunosSchemaError, match=what if what != "incomplete" else "incomplete"):
            junos_yang.check_set_text(schema, text + line + "\n")
    without_output = "\n".join(ln for ln in text.splitlines() if " output ieee-802.1 " not in ln)
    with pytest.raises(junos_yang.JunosSchemaError, match="output"):
        junos_yang.check_set_text(schema, without_output)


def _scheduler_maps(text: str) -> dict[str, dict[str, str]]:
    maps: dict[str, dict[str, str]] = {}
    for sm, fc, sched in re.findall(r"^set class-of-service scheduler-maps (\S+) forwarding-class (\S+) "
                                    r"scheduler (\S+)$", text, re.MULTILINE):
        maps.setdefault(sm, {})[fc] = sched
    return maps


def _transmit_rates(text: str) -> dict[str, int]:
    return {s: int(r) for s, r in re.findall(r"^set class-of-service schedulers (\S+) transmit-rate percent "
                                             r"(\d+)$", text, re.MULTILINE)}


def test_network_control_queue_has_a_scheduler_in_every_map() -> None:
    """QFX sends routing-protocol traffic the switch itself originates to the network-control class, queue 7
    (Juniper "Understanding Host Routing Engine Outbound Traffic Queues and Defaults": "the queue must be
    properly configured on all interfaces"); a class with no scheduler in the interface's map "might lack
    adequate buffer space" (Juniper CoS guide, caution on forwarding classes without a scheduler). Every
    map gets network-control with Junos's default 5 % share, taken from the largest lossy DWRR queue so
    the guaranteed rates still add up to the plan's 100 % and the lossless queue keeps its own."""
    plan, text = _render()
    maps = _scheduler_maps(text)
    rates = _transmit_rates(text)
    assert maps
    for sm, fcs in maps.items():
        assert fcs.get("network-control") == junos.NC_SCHEDULER, (sm, fcs)
        assert sum(rates.get(s, 0) for s in fcs.values()) == 100, (sm, fcs, rates)
    assert rates[junos.NC_SCHEDULER] == junos.NC_TRANSMIT_PERCENT == 5
    assert rates["RT_S_Q0"] == 45  # plan: lossy queue 0 at 50 %
    assert all(r == 50 for s, r in rates.items() if s.startswith("RT_S_Q3_"))  # lossless share unchanged
    notes = [f.message for f in junos.render_findings(plan, plan.switch("leaf3"))]  # type: ignore[attr-defined]
    assert any("network-control" in m and "RT_S_Q0" in m for m in notes), notes
    assert junos_yang.check_set_text(_schema(), text) > 30


def test_network_control_share_refused_without_a_lossy_queue_to_lend_it() -> None:
    """A plan whose lossy DWRR queue has no more than the 5 % to give is refused (RT240), not
    oversubscribed past 100 %."""
    plan = build_plan()
    cls = plan.classification
    scheds = [s.model_copy(update={"weight_percent": 5 if s.queue == 0 else 95}) if s.mode == "dwrr" else s
              for s in cls.schedulers]
    bad = plan.model_copy(update={"classification": cls.model_copy(update={"schedulers": scheds})})
    with pytest.raises(ValueError, match="network-control"):
        junos.render(bad, bad.switch("leaf3"))


def test_plan_that_schedules_queue_7_lends_network_control_its_scheduler() -> None:
    """A plan with its own queue-7 class: network-control shares that queue's scheduler, no weight moves."""
    from roce_tune.plan import QueueScheduler

    plan = build_plan()
    cls = plan.classification
    scheds = [s.model_copy(update={"weight_percent": 40}) if s.queue == 0 else s for s in cls.schedulers]
    scheds.append(QueueScheduler(queue=7, mode="dwrr", weight_percent=10, name="CTRL_DWRR"))
    plan = plan.model_copy(update={"classification": cls.model_copy(update={"schedulers": scheds})})
    text = junos.render(plan, plan.switch("leaf3"))["leaf3.set"]
    for fcs in _scheduler_maps(text).values():
        assert fcs["network-control"] == fcs["RT_Q7"] == "RT_S_Q7", fcs
    assert junos.NC_SCHEDULER not in text and _transmit_rates(text)["RT_S_Q0"] == 40
    findings = junos.render_findings(plan, plan.switch("leaf3"))
    assert not [f for f in findings if "network-control" in f.message]


# --- decimal fill levels: Junos OS Evolved 24.4R1 types them decimal64 (junos.py docstring) -------------
EVO_DECIMAL = "24.4R1-EVO"


@pytest.mark.parametrize("os_version, model, decimal", [
    ("24.4R1-EVO", "QFX5130-32CD", True),         # Juniper/yang 24.4R1-EVO: decimal64, fraction-digits 9
    ("25.2R1-S1.3-EVO", "QFX5240-64OD", True),    # later Evolved releases
    ("24.4R1-S2.4-evo", "test-model", True),      # the -EVO suffix alone says Evolved
    ("24.4R1", "QFX5130-32CD", True),             # QFX5130 runs only Junos OS Evolved
    ("24.2R1-EVO", "QFX5130-32CD", False),        # Juniper/yang 24.2R1-EVO: uint32
    ("23.4R2-S2.1-EVO", "QFX5220-32CD", False),   # Juniper/yang 23.4R1-EVO: uint32
    ("24.4R1.11", "QFX5120-48Y", False),          # Junos OS (junos-qfx) 24.4R1: uint32
    ("21.4R3-S2.3", "QFX5120-48Y", False),        # Junos OS 21.4R1: uint32
    (None, "QFX5130-32CD", False),                # release unknown: whole percent, the safe form
    ("unknown", "QFX5130-32CD", False),
])
def test_decimal_fill_levels_only_where_junipers_yang_types_them_decimal64(
        os_version: str | None, model: str, decimal: bool) -> None:
    sw = build_plan().switch("leaf3").model_copy(update={"os_version": os_version, "model": model})
    assert junos.decimal_fill_levels(sw) is decimal


def test_fill_level_text_is_plain_decimal_without_trailing_zeros() -> None:
    from decimal import Decimal

    values = ("7.500", "7E+1", "0.000000001", "100", "2.50000000")
    assert [junos.fill_level_text(Decimal(v)) for v in values] == ["7.5", "70", "0.000000001", "100", "2.5"]


def _fill_values(text: str) -> dict[str, tuple[str, str]]:
    return {name: (lo, hi) for name, lo, hi in re.findall(
        r"^set class-of-service drop-profiles RT_ECN_(\S+) interpolate fill-level \[ (\S+) (\S+) \]$", text,
        re.MULTILINE)}


@pytest.mark.parametrize("kmin, kmax, buf", [
    (150_000, 1_500_000, 2_000_000),          # 7.5 % / 75 %: whole percent said 7 % = 140000 B
    (75_000, 1_221_000, 26_392_240),          # 0.284 %: whole percent said 1 % = 263922 B (a WARNING)
    (123_457, 987_653, 31_999_999),           # no short decimal: rounded at the 9th digit
])
def test_decimal_fill_levels_are_the_plans_bytes_within_one_byte(kmin: int, kmax: int, buf: int) -> None:
    """On Junos OS Evolved 24.4R1+ the rendered fill levels, read as the device reads them (percent of
    the queue buffer), give back the plan's Kmin/Kmax to within one byte; no RT241 fill-level finding;
    every line is in Juniper's 24.4R1-EVO YANG (decimal64, at most 9 fraction digits)."""
    from decimal import Decimal

    plan = build_plan()
    sw = plan.switch("leaf3")
    ecn = [e.model_copy(update={"kmin_bytes": kmin, "kmax_bytes": kmax, "queue_buffer_bytes": buf})
           for e in sw.ecn_profiles]
    sw = sw.model_copy(update={"ecn_profiles": ecn, "os_version": EVO_DECIMAL})
    text = junos.render(plan, sw)["leaf3.set"]
    fills = _fill_values(text)
    assert set(fills) == {e.name for e in ecn}
    for lo, hi in fills.values():
        assert abs(Decimal(lo) * buf / 100 - kmin) < 1 and abs(Decimal(hi) * buf / 100 - kmax) < 1, (lo, hi)
        assert not lo.endswith("0") and "E" not in lo.upper() and len(lo.partition(".")[2]) <= 9
    assert "WARNING" not in text
    assert not [f for f in junos.render_findings(plan, sw) if "fill level" in f.message]
    assert junos_yang.check_set_text(_schema(), text) > 30


def test_whole_percent_elsewhere_says_how_to_get_decimals() -> None:
    """Without a release that takes decimals (here: none given) the fill levels stay whole percent, with
    the RT241 finding, whose fix names the release that would render the plan's bytes exactly."""
    plan = build_plan()
    sw = plan.switch("leaf3")
    ecn = [e.model_copy(update={"kmin_bytes": 75_000, "kmax_bytes": 1_221_000,
                                "queue_buffer_bytes": 26_392_240}) for e in sw.ecn_profiles]
    sw = sw.model_copy(update={"ecn_profiles": ecn, "os_version": "24.2R1-EVO"})
    assert "fill-level [ 1 4 ]" in junos.render(plan, sw)["leaf3.set"]
    warned = [f for f in junos.render_findings(plan, sw) if "fill levels move Kmin" in f.message]
    assert warned and all("24.4R1" in f.fix and f.severity.value == "warning" for f in warned)


def test_decimal_fill_levels_read_back_as_the_plan_says_them() -> None:
    """The read-back takes the decimal fill levels of a rendered file (and of ``display set``'s one value
    per line) to the percent the plan's bytes are; audit's comparison (expressible_qos vs read_back) finds
    nothing to report."""
    from roce_tune.platforms import junos_readback
    from roce_tune.qos import differences

    plan = build_plan()
    sw = plan.switch("leaf3").model_copy(update={"os_version": EVO_DECIMAL})
    text = junos.render(plan, sw)["leaf3.set"]
    assert "fill-level [ 7.5 75 ]" in text and "fill-level [ 2.5 20 ]" in text
    for form in (text, junos.display_set_lines(text)):
        seen = junos_readback.read_back(form)
        ecn = seen.ports["et-0/0/0"].ecn
        assert ecn is not None and ecn[3].kmin_percent == 7.5 and ecn[3].kmax_percent == 75.0
        assert differences(junos_readback.expressible_qos(plan, sw), seen) == []
    drifted = text.replace("fill-level [ 7.5 75 ]", "fill-level [ 7 75 ]")
    found = differences(junos_readback.expressible_qos(plan, sw), junos_readback.read_back(drifted))
    assert any("kmin_percent: 7.5 != 7.0" in d for d in found)


def test_yang_check_refuses_fill_levels_outside_decimal64() -> None:
    """The YANG walk type-checks fill levels (decimal64, fraction-digits 9, range 0 .. 100): a 10th
    fraction digit, a value above 100 and a non-number each fail, so a rendering that over-rounds or
    overflows cannot pass the YANG tests."""
    schema = _schema()
    _, text = _render()
    head = "set class-of-service drop-profiles RT_ECN_ecn-400g interpolate fill-level"
    assert junos_yang.check_set_text(schema, text + f"{head} 7.123456789\n") > 30
    for bad in ("7.1234567891", "100.5", "7,5"):
        with pytest.raises(junos_yang.JunosSchemaError, match="fill-level"):
            junos_yang.check_set_text(schema, text + f"{head} {bad}\n")
