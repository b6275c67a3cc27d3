"""Cumulus NVUE renderer: the YAML parses, the command list and the YAML describe the same settings
(an independent parser of ``nv set`` lines), the values are the plan's, shell safety, refusals, golden files.

Oracles: NVUE's command grammar and YAML shape (CL 5.14 QoS/RoCE docs; an NVUE configuration dump:
numeric ids are quoted string keys, collections like a PFC profile's switch priorities are ``'3': {}``),
and the plan itself.
"""

from __future__ import annotations

import shlex
from itertools import product
from pathlib import Path
from typing import Any

import pytest
from ruamel.yaml import YAML

from roce_tune.plan import Plan, SwitchPlan
from roce_tune.platforms import cumulus, get_platform

from .golden import assert_golden, pipeline_plan

try:  # tests/render is a package when it has __init__.py, a plain rootdir otherwise
    from . import plans_sonic_cumulus as pb
except ImportError:
    import plans_sonic_cumulus as pb  # type: ignore[no-redef]


MIXED = [pb.P("swp1", 400, 3), pb.P("swp2", 400, 3), pb.P("swp3", 400, 2.5), pb.P("swp31", 800, 30, "switch"),
         pb.P("swp32", 800, 30, "switch"), pb.P("swp10", 400, 3, "none")]
UNIFORM = [pb.P(f"swp{i}", 800, 30, "switch") for i in range(1, 5)] + [pb.P("swp9", 800, 30, "none")]


def _hand(ports: list[pb.P] = MIXED, **kw: Any) -> tuple[Plan, SwitchPlan]:
    sw = pb.switch("spine1", "cumulus", "spectrum-4", ports, **kw)
    return pb.plan([sw]), sw


def _files(plan: Plan, sw: SwitchPlan) -> tuple[str, str]:
    out = cumulus.render(plan, sw)
    assert sorted(out) == [f"{sw.name}.nvue.sh", f"{sw.name}.nvue.yaml"]
    return out[f"{sw.name}.nvue.sh"], out[f"{sw.name}.nvue.yaml"]


# --- an independent reading of both files ---------------------------------------------------------
def _is_collection(path: tuple[str, ...]) -> bool:
    """NVUE collections whose last command token is an id, not a value: ``qos pfc <p> switch-priority 3``,
    ``qos traffic-pool <pool> switch-priority 2,5``."""
    return (len(path) == 4 and path[:2] in {("qos", "pfc"), ("qos", "traffic-pool")}
            and path[3] == "switch-priority")


def _put(tree: dict, path: list[str], value: Any) -> None:
    for key in path[:-1]:
        tree = tree.setdefault(key, {})
        assert isinstance(tree, dict), f"{path} descends into a value"
    assert path[-1] not in tree or tree[path[-1]] == value, f"{path} set twice to different values"
    tree[path[-1]] = value


def commands_to_tree(text: str) -> dict:
    """``nv set a b c value`` lines -> nested dict; comma lists in a path expand to one key each."""
    tree: dict = {}
    for line in text.splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        tokens = shlex.split(line)
        assert tokens[:2] == ["nv", "set"], line
        path, value = tokens[2:-1], tokens[-1]
        for expanded in product(*[t.split(",") for t in path]):
            if _is_collection(expanded):
                for v in value.split(","):
                    _put(tree, [*expanded, v], {})
            else:
                _put(tree, list(expanded), int(value) if value.isdigit() else value)
    return tree


def yaml_tree(text: str) -> dict:
    doc = YAML(typ="safe").load(text)
    assert isinstance(doc, list) and len(doc) == 1 and list(doc[0]) == ["set"], "one set operation"
    return doc[0]["set"]


# --- tests ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("ports,kw", [(MIXED, {}), (UNIFORM, {}), (MIXED, {"watchdog": False}),
                                      (MIXED, {"lossless": [3, 4]})])
def test_commands_and_yaml_describe_the_same_settings(ports: list[pb.P], kw: dict) -> None:
    sw = pb.switch("spine1", "cumulus", "spectrum-4", ports, **kw)
    sh, yml = _files(pb.plan([sw], pb.classification(kw.get("lossless", pb.LOSSLESS))), sw)
    assert commands_to_tree(sh) == yaml_tree(yml)


def check_plan_values(plan: Plan, sw: SwitchPlan, cfg: dict) -> None:
    """Maps, PFC, ECN (through the port's bound or the default-global profile), ETS, watchdog and pool
    shares carry the plan's values; lossy ports get no bindings; the CNP queue is strict."""
    c, qos = plan.classification, cfg["qos"]
    assert qos["roce"] == {"mode": "lossless"}
    mapping = qos["mapping"]["default-global"]
    assert mapping["trust"] == "l3"
    assert {int(d): v["switch-priority"] for d, v in mapping["dscp"].items()} == c.dscp_to_tc
    sp_to_tc = {int(s): v["traffic-class"] for s,
                v in qos["egress-queue-mapping"]["default-global"]["switch-priority"]
                .items()}
    scheduled = {s.queue for s in c.schedulers}
    assert sp_to_tc == c.tc_to_queue and set(sp_to_tc.values()) <= scheduled  # every priority served
    ecn = {e.name: e for e in sw.ecn_profiles}
    ifaces = cfg.get("interface", {})
    for p in sw.ports:
        assert ifaces[p.name]["link"] == {"mtu": p.mtu}
        iq = ifaces[p.name].get("qos", {})
        if not p.lossless:
            assert not iq
            continue
        assert iq["pfc-watchdog"] == {"state": "enable"}
        pfc = qos["pfc"][iq.get("pfc", {}).get("profile", "default-global")]
        assert sorted(int(x) for x in pfc["switch-priority"]) == p.pfc_priorities
        assert pfc["tx"] == pfc["rx"] == "enable"
        assert p.cable_m <= pfc["cable-length"] < p.cable_m + 1
        cc = qos["congestion-control"][iq.get("congestion-control", {}).get("profile", "default-global")]
        e = ecn[p.ecn_profile]
        for q in c.lossless_queues:
            assert cc["traffic-class"][str(q)] == {"ecn": "enable", "red": "disable",
                                                   "min-threshold": e.kmin_bytes,
                                                   "max-threshold": e.kmax_bytes,
                                                   "probability": e.pmax_percent}
    sched = qos["egress-scheduler"]["default-global"]["traffic-class"]
    for s in c.schedulers:
        want = {"mode": "strict"} if s.mode == "strict" else {"mode": "dwrr", "bw-percent": s.weight_percent}
        assert sched[str(s.queue)] == want
    assert sched[str(c.cnp_queue)] == {"mode": "strict"}
    wd = qos["pfc-watchdog"]
    assert wd["polling-interval"] == sw.watchdog.poll_ms
    assert wd["polling-interval"] * wd["robustness"] == sw.watchdog.detection_ms
    sizes = {p.name: p.size_bytes for p in sw.buffers.pools}
    pools = (("roce-lossless", "ingress_lossless_pool"), ("default-lossy", "ingress_lossy_pool"))
    total = sum(sizes[plan_pool] for _, plan_pool in pools)
    # NVUE: pools share 100
    # %
    assert sum(qos["traffic-pool"][pool]["memory-percent"] for pool, _ in pools) == 100
    for pool, plan_pool in pools:  # each share within 1 % of the plan pool's share of the two
        assert abs(qos["traffic-pool"][pool]["memory-percent"] - sizes[plan_pool] * 100 / total) < 1


def test_values_are_the_plans() -> None:
    plan, sw = _hand()
    check_plan_values(plan, sw, yaml_tree(_files(plan, sw)[1]))


def test_ports_that_differ_get_profiles_and_uniform_ports_use_default_global() -> None:
    plan, sw = _hand(UNIFORM)
    cfg = yaml_tree(_files(plan, sw)[1])
    assert list(cfg["qos"]["pfc"]) == ["default-global"]
    assert list(cfg["qos"]["congestion-control"]) == ["default-global"]
    lossless = {p.name for p in sw.ports if p.lossless}
    assert all(set(i["qos"]) == {"pfc-watchdog"} for n, i in cfg["interface"].items() if n in lossless)
    plan, sw = _hand(MIXED)
    cfg = yaml_tree(_files(plan, sw)[1])
    speeds = {p.speed_gbps for p in sw.ports if p.lossless}
    assert len(cfg["qos"]["congestion-control"]) == len(speeds)  # one ECN profile per speed here
    cables = {cumulus.metres(p.cable_m) for p in sw.ports if p.lossless}
    assert len(cfg["qos"]["pfc"]) == len(cables)


def _lossy_warnings(plan: Plan, sw: SwitchPlan) -> list[str]:
    return [f.message for f in cumulus.render_findings(plan, sw)
            if f.severity.value == "warning" and f.message.startswith("lossy ports")]


def test_lossy_ports_are_warned_whenever_roce_mode_reaches_them() -> None:
    """``nv set qos roce mode lossless`` (written on every Cumulus switch) enables PFC on switch priority 3
    and ECN on traffic class 3 on default-global (NVIDIA CL 5.x RoCE page, "Default RoCE Configuration":
    "Enable PFC on switch priority 3 (RoCE)" in lossless mode), so a port the plan has lossy gets them even
    when roce-tune writes no default-global profile: lossless ports on per-port profiles (MIXED: two cable
    lengths) or no lossless port at all. Before, only the default-global case was warned."""
    plan, sw = _hand(MIXED)  # per-port PFC profiles (3 m and 30 m), swp10 lossy
    sh, _ = _files(plan, sw)
    assert "nv set qos roce mode lossless" in sh and "qos pfc default-global" not in sh
    (msg,) = _lossy_warnings(plan, sw)
    assert "swp10" in msg and "switch priority 3" in msg and "roce mode lossless" in msg
    lossy_only = [pb.P("swp1", 400, 3, "none"), pb.P("swp2", 400, 3, "none")]
    plan, sw = _hand(lossy_only)
    assert not any(p.lossless for p in sw.ports)
    (msg,) = _lossy_warnings(plan, sw)
    assert "swp1, swp2" in msg and "switch priority 3" in msg
    plan, sw = _hand(UNIFORM)  # default-global written with the plan's priorities: the warning as before
    assert _lossy_warnings(plan, sw) == ["lossy ports swp9: default-global PFC/ECN profiles apply to them "
                                         "too, although the plan has them lossy"]
    plan, sw = _hand([p for p in UNIFORM if p.peer != "none"])
    assert _lossy_warnings(plan, sw) == []


def test_command_file_is_safe_and_ends_with_the_apply_note() -> None:
    plan, sw = _hand()
    evil = sw.model_copy(update={"ports": [sw.ports[0].model_copy(update={"name": "swp1;reboot"}),
                                           *sw.ports[1:]]})
    sh, _ = _files(plan, evil)
    lines = sh.splitlines()
    assert sh.endswith("\n") and not sh.endswith("\n\n")
    assert lines[-1].startswith("#") and "nv config apply" in " ".join(lines[-2:])
    commands = [ln for ln in lines if ln.strip() and not ln.startswith("#")]
    assert all(ln.startswith("nv set ") for ln in commands)
    evil_lines = [shlex.split(ln) for ln in commands if "reboot" in ln]
    # one quoted word, never a
    # command
    assert evil_lines and all("swp1;reboot" in toks for toks in evil_lines)


def test_watchdog_off_and_trust_pcp() -> None:
    plan, sw = _hand(watchdog=False)
    sh, yml = _files(plan, sw)
    assert "pfc-watchdog" not in sh.replace("# PFC watchdog off", "") and "pfc-watchdog" not in yml
    assert all("pfc-watchdog" not in i.get("qos", {}) for i in yaml_tree(yml)["interface"].values())
    pcp = plan.model_copy(update={"classification": pb.classification(trust="pcp")})
    cfg = yaml_tree(_files(pcp, sw)[1])
    assert cfg["qos"]["mapping"]["default-global"] == {"trust": "l2"}


def test_refuses_what_nvue_cannot_express() -> None:
    plan, sw = _hand()
    wd = sw.watchdog
    with pytest.raises(ValueError, match="only drop"):
        cumulus.render(plan, sw.model_copy(update={"watchdog": wd.model_copy(update={"action": "forward"})}))
    with pytest.raises(ValueError, match="whole number"):
        cumulus.render(plan, sw.model_copy(update={"watchdog": wd.model_copy(update={"detection_ms": 300})}))
    frac = sw.model_copy(update={"ecn_profiles": [e.model_copy(update={"pmax_percent": 2.5})
                                                  for e in sw.ecn_profiles]})
    with pytest.raises(ValueError, match="integer"):
        cumulus.render(plan, frac)
    with pytest.raises(ValueError, match="not cumulus"):
        cumulus.render(plan, sw.model_copy(update={"platform": "sonic"}))


def test_registry_and_spec() -> None:
    mod = get_platform("cumulus")
    assert mod is cumulus and mod.SPEC.netmiko_device_type == "cumulus_linux"
    root = Path(__file__).resolve().parents[2] / "templates" / "cumulus"
    for section in mod.SPEC.sections:
        assert (root / f"{section}.j2").is_file() and (root / f"{section}.yaml.j2").is_file()


# --- golden files ---------------------------------------------------------------------------------
def test_golden_hand_built() -> None:
    plan, sw = _hand()
    assert_golden("cumulus", "hand-built", cumulus.render(plan, sw))


@pytest.mark.parametrize("inventory,switches", [("spectrum-x-su", ["su1-spine1"]),
                                                ("mixed-vendor", ["leaf7", "leaf8"])])
def test_golden_inventories(inventory: str, switches: list[str]) -> None:
    plan = pipeline_plan(inventory)
    files: dict[str, str] = {}
    for name in switches:
        sw = plan.switch(name)
        assert sw.platform == "cumulus"
        rendered = cumulus.render(plan, sw)
        sh, yml = rendered[f"{name}.nvue.sh"], rendered[f"{name}.nvue.yaml"]
        assert commands_to_tree(sh) == yaml_tree(yml)
        check_plan_values(plan, sw, yaml_tree(yml))
        files.update(rendered)
    assert_golden("cumulus", inventory, files)


# --- issue 12: release grammar, MTU, scheduled traffic classes, ECN on TC 0, pools ------------------
def test_os_version_selects_the_nvue_release_keywords() -> None:
    plan, sw = _hand()
    sh514, _ = _files(plan, sw)
    sh516, yml516 = _files(plan, sw.model_copy(update={"os_version": "5.16.0"}))
    assert "qos pfc-watchdog state enable\n" in sh514 and "NVUE syntax of Cumulus Linux 5.14" in sh514
    assert "qos pfc-watchdog state enabled\n" in sh516 and "Cumulus Linux 5.16" in sh516
    assert "state enable\n" not in sh516 and commands_to_tree(sh516) == yaml_tree(yml516)
    assert cumulus.read_back(sh516).ports["swp1"].watchdog is True


def test_release_findings_default_and_unknown() -> None:
    plan, sw = _hand()
    msgs = [f.message for f in cumulus.render_findings(plan, sw) if f.rule == "RT241"]
    assert any("default" in m and cumulus.DEFAULT_RELEASE in m for m in msgs)
    unknown = [f for f in cumulus.render_findings(plan, sw.model_copy(update={"os_version": "4.4.3"}))
               if "4.4.3" in f.message]
    assert unknown and unknown[0].severity.value == "warning"
    assert not [f for f in cumulus.render_findings(plan, sw.model_copy(update={"os_version": "5.16.1"}))
                if "Cumulus Linux 5.16" in f.message or "os_version" in f.message]
    assert cumulus.NVUE_GRAMMAR["5.16"].source.startswith("https://docs.nvidia.com/")


def test_interface_mtu_is_set_and_read_back() -> None:
    plan, sw = _hand()
    sh, _ = _files(plan, sw)
    for p in sw.ports:
        assert f"nv set interface {p.name} link mtu {p.mtu}\n" in sh
    seen = cumulus.read_back(sh)
    assert {n: q.mtu for n, q in seen.ports.items()} == {p.name: p.mtu for p in sw.ports}
    assert not [f for f in cumulus.render_findings(plan, sw) if "MTU" in f.message]


def test_every_switch_priority_reaches_a_scheduled_traffic_class() -> None:
    plan, sw = _hand()
    sh, _ = _files(plan, sw)
    seen = cumulus.read_back(sh)
    scheduled = {s.queue for s in seen.schedulers or []}
    assert seen.tc_to_queue is not None and set(seen.tc_to_queue) == set(range(8))
    assert set(seen.tc_to_queue.values()) <= scheduled, seen.tc_to_queue
    # the plan itself sends unused switch priorities to TC 0 (RoCE mode); NVUE writes the plan's map as is
    assert seen.tc_to_queue == plan.classification.tc_to_queue
    assert not [f for f in cumulus.render_findings(plan, sw) if "switch priorities" in f.message]


def test_ecn_on_tc0_lost_by_per_port_profiles_is_a_finding() -> None:
    plan, sw = _hand(MIXED)  # ports differ -> per-port congestion-control profiles
    assert any("ECN on traffic class 0" in f.message for f in cumulus.render_findings(plan, sw))
    plan, sw = _hand(UNIFORM)  # default-global keeps RoCE mode's ECN on traffic class 0
    assert not any("ECN on traffic class 0" in f.message for f in cumulus.render_findings(plan, sw))


def test_traffic_pools_sum_to_100_percent() -> None:
    for inventory in ("spectrum-x-su", "mixed-vendor"):
        plan = pipeline_plan(inventory)
        for sw in plan.switches:
            if sw.platform == "cumulus":
                pools = yaml_tree(_files(plan, sw)[1])["qos"]["traffic-pool"]
                assert sum(p["memory-percent"] for p in pools.values()) == 100, (sw.name, pools)


def test_traffic_pool_percentages_are_reported_with_their_bytes() -> None:
    plan = pipeline_plan("mixed-vendor")
    sw = next(s for s in plan.switches if s.platform == "cumulus")
    pools = yaml_tree(_files(plan, sw)[1])["qos"]["traffic-pool"]
    msgs = [f.message for f in cumulus.render_findings(plan, sw) if "traffic pools" in f.message]
    assert len(msgs) == 1, msgs
    for p in sw.buffers.pools:
        if p.name in cumulus.TRAFFIC_POOL_BY_PLAN_POOL:
            name = cumulus.TRAFFIC_POOL_BY_PLAN_POOL[p.name]
            assert f"{p.name} {p.size_bytes} B" in msgs[0]
            assert f"{name} {pools[name]['memory-percent']} %" in msgs[0]


@pytest.mark.parametrize("lossless", [[2, 5], [4], [3, 4]])
def test_lossless_priorities_other_than_3_go_to_the_roce_lossless_pool(lossless: list[int]) -> None:
    """RoCE lossless mode puts switch priority 3 (only) into the RoCE lossless traffic pool ("Switch
    priority 3 allocated to RoCE lossless traffic pool", CL 5.x RoCE page, default table; ``nv show qos
    roce``: roce-reserved-ingress switch-priorities 3, lossy-default-ingress 0,1,2,4,5,6,7). A plan with other
    lossless priorities moves them with ``qos traffic-pool <pool> switch-priority`` (the RoCE page's own
    example remaps switch priority 4 that way), or they stay in the lossy pool."""
    sw = pb.switch("spine1", "cumulus", "spectrum-4", MIXED, lossless=lossless)
    sh, yml = _files(pb.plan([sw], pb.classification(lossless)), sw)
    pools = yaml_tree(yml)["qos"]["traffic-pool"]
    assert sorted(int(sp) for sp in pools["roce-lossless"]["switch-priority"]) == lossless
    lossy = sorted(int(sp) for sp in pools["default-lossy"]["switch-priority"])
    assert lossy == [sp for sp in range(8) if sp not in lossless]
    assert commands_to_tree(sh) == yaml_tree(yml)
    assert f"nv set qos traffic-pool roce-lossless switch-priority {','.join(map(str, lossless))}" in sh


def test_lossless_priority_3_keeps_roce_mode_pools() -> None:
    """Priority 3 alone is RoCE mode's own pool mapping: nothing is written (and nothing changes)."""
    plan, sw = _hand(MIXED)
    sh, yml = _files(plan, sw)
    assert "switch-priority" not in str(yaml_tree(yml)["qos"]["traffic-pool"])
    assert not [ln for ln in sh.splitlines() if "traffic-pool" in ln and "switch-priority" in ln]


# --- every line against NVUE's grammar (tests/emulators/nvue_grammar.py: the command reference) ------
def _grammar_errors(sh: str, yml: str, release: str) -> list[str]:
    from tests.emulators.cumulus import flatten
    from tests.emulators.nvue_grammar import nvue_error

    paths = [" ".join(shlex.split(ln)[2:]) for ln in sh.splitlines() if ln.startswith("nv set ")]
    paths += flatten(yaml_tree(yml))
    return [f"{release}: nv set {p}: {e}" for p in paths if (e := nvue_error(p, release))]


def _grammar_variants() -> list[tuple[Plan, SwitchPlan]]:
    out = [(pipeline_plan(inv), sw) for inv in ("spectrum-x-su", "mixed-vendor")
           for sw in pipeline_plan(inv).switches if sw.platform == "cumulus"]
    for lossless in ([3], [2, 5], [3, 4]):
        for ports in (MIXED, UNIFORM):
            sw = pb.switch("spine1", "cumulus", "spectrum-4", ports, lossless=lossless, separate_ecn=True)
            out.append((pb.plan([sw], pb.classification(lossless)), sw))
    plan, sw = _hand()
    out.append((plan.model_copy(update={"classification": pb.classification(trust="pcp")}), sw))
    out.append(_hand(watchdog=False))
    for detection, poll in ((100, 100), (5000, 100), (1000, 1000)):
        wd = sw.watchdog.model_copy(update={"detection_ms": detection, "poll_ms": poll})
        out.append((plan, sw.model_copy(update={"watchdog": wd})))
    return out


@pytest.mark.parametrize("release", ["5.6.0", "5.9.1", "5.14.0", "5.16.0"])
def test_every_line_is_valid_nvue(release: str) -> None:
    """Every ``nv set`` line and every YAML leaf of the shipped inventories' Cumulus switches, and of plans
    with other lossless priorities, per-port profiles and the watchdog timer range, is accepted by NVUE's
    grammar (keywords and ranges of the NVUE command reference; the release's watchdog ``state`` word)."""
    errors: list[str] = []
    for plan, sw in _grammar_variants():
        sw = sw.model_copy(update={"os_version": release})
        sh, yml = _files(plan, sw)
        errors += _grammar_errors(sh, yml, release)
    assert errors == []


def test_the_grammar_rejects_what_nvue_rejects() -> None:
    """The oracle is not vacuous: a value out of NVUE's range, the other release's watchdog word, a keyword
    that does not exist."""
    from tests.emulators.nvue_grammar import nvue_error

    bad = ["qos pfc-watchdog polling-interval 50", "qos pfc-watchdog robustness 0",
           "qos pfc default-global cable-length 0", "qos congestion-control p traffic-class 8 ecn enable",
           "qos congestion-control p traffic-class 3 probability 101", "interface swp1 link mtu 9600",
           "qos traffic-pool roce-lossles memory-percent 50", "qos mapping default-global trust dscp",
           "qos egress-scheduler default-global traffic-class 3 mode wrr", "qos pfc default-global tx on"]
    assert [p for p in bad if nvue_error(p, "5.14.0") is None] == []
    assert nvue_error("interface swp1 qos pfc-watchdog state enabled", "5.14.0")
    assert nvue_error("interface swp1 qos pfc-watchdog state enable", "5.16.0")
