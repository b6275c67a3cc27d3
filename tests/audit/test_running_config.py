"""Switch running configurations in captures: each platform's emulator prints a running config (from
roce-tune's rendering, with planted errors, and its factory state); audit recognises the block by content,
reads it back and compares it with the plan (or the policy without one), with evidence lines."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from roce_tune.audit import audit_dir
from roce_tune.platforms import SWITCH_PLATFORMS, get_platform, platform
from tests.emulators import EmulatorSpec
from tests.emulators.server import device_class
from tests.render.golden import REPO, pipeline_plan
from tests.render.test_readback_running import PLANTS

INVENTORY = REPO / "inventories" / "mixed-vendor.yaml"
#: rules audit gives running-configuration findings
RUNNING_RULES = {"RT414", "RT415", "RT416", "RT420", "RT426", "RT427", "RT431", "RT434", "RT442", "RT480"}


def _running(name: str, tmp: Path, plant: str | None = None) -> tuple[str, str]:
    """(switch name, the emulator's running config of the mixed-vendor rendering for ``name``'s platform)."""
    plan = pipeline_plan("mixed-vendor")
    sw = next(s for s in plan.switches if s.platform == name)
    text = next(t for n, t in get_platform(name).render(plan, sw).items() if not n.endswith(".nvue.yaml"))
    if plant is not None:
        text = PLANTS[name][plant][0](text)
    initial: object = text
    if name == "sonic":
        initial = {**device_class(name)(EmulatorSpec(name, "f"), tmp / "f").config_db, **json.loads(text)}
    return sw.name, device_class(name)(EmulatorSpec(name, sw.name, initial_config=initial),
                                       tmp).running_config()


def _capture(tmp: Path, device: str, name: str, running: str) -> tuple[Path, Path]:
    cap = tmp / "captures"
    cap.mkdir(exist_ok=True)
    path = cap / f"{device}.txt"
    path.write_text(f"# captured for the audit\nadmin@{device}# "
                    f"{platform(name).push.read_running}\n{running}",
                    encoding="utf-8")
    return cap, path


def _line_of(path: Path, pred) -> int:  # type: ignore[no-untyped-def]
    return next(i for i, t in enumerate(path.read_text().splitlines(), start=1) if pred(t))


@pytest.mark.parametrize("name", SWITCH_PLATFORMS)
def test_a_correct_running_config_gives_no_finding(name: str, tmp_path: Path) -> None:
    device, running = _running(name, tmp_path)
    cap, _ = _capture(tmp_path, device, name, running)
    for source in (INVENTORY, None):
        r = audit_dir(cap, source)
        assert r.data.switches[device].running is not None, name
        assert r.data.switches[device].platform == name
        assert not r.data.unparsed
        assert [f for f in r.findings if f.device == device] == [], (name, source)
        assert not [s for s in r.not_checked if s.rule == "RT431"]


@pytest.mark.parametrize("name", SWITCH_PLATFORMS)
def test_pfc_on_the_wrong_priority_is_found_with_and_without_a_plan(name: str, tmp_path: Path) -> None:
    device, running = _running(name, tmp_path, "pfc")
    cap, path = _capture(tmp_path, device, name, running)
    with_plan = [f for f in audit_dir(cap, INVENTORY).findings if f.device == device]
    assert with_plan and {f.rule for f in with_plan} == {"RT420"}, with_plan
    f = with_plan[0]
    assert f.message == (f"priority 3 is not lossless on {device} {f.port} (plan: PFC on 3; running config: "
                         "PFC on 4)")
    assert f.evidence and f.evidence[0].file == f"{device}.txt"
    lines = [path.read_text().splitlines()[e.line - 1].lower() for e in f.evidence]
    # the line stating the port's PFC, or the port's line and the profile line it binds (EOS service-profile)
    assert any(w in t for t in lines for w in ("pfc", "priority-flow-control", "switch-priority",
                                               "pause")), lines
    assert len(lines) == 1 or any(f.port.lower() in t for t in lines)  # type: ignore[union-attr]
    without = [f for f in audit_dir(cap).findings if f.device == device]
    assert {f.rule for f in without} == {"RT420"} and all("policy defaults: PFC on 3" in f.message
                                                          for f in without if f.port)


@pytest.mark.parametrize("name", SWITCH_PLATFORMS)
def test_roce_dscp_in_a_lossy_queue(name: str, tmp_path: Path) -> None:
    device, running = _running(name, tmp_path, "dscp")
    cap, _ = _capture(tmp_path, device, name, running)
    for source in (INVENTORY, None):
        r = audit_dir(cap, source)
        found = [f for f in r.findings if f.device == device and f.rule == "RT414"]
        if getattr(get_platform(name), "UNMAPPED_DSCP_TC", 0) is None:
            # the plant removes DSCP 26 from the map: on EOS/NVUE it keeps the platform's default class,
            # which the configuration does not state (tests/audit/test_vendor_running.py states it wrong)
            assert not found and [s for s in r.not_checked if s.rule == "RT414" and "DSCP 26" in s.needs]
            continue
        assert len(found) == 1 and "DSCP 26" in found[0].message and "queue 0" in found[0].message, source
        assert found[0].severity.value == "error"


@pytest.mark.parametrize("name", SWITCH_PLATFORMS)
def test_ecn_threshold_and_mtu_differences_need_the_plan(name: str, tmp_path: Path) -> None:
    for kind, rule, words in (("kmax", "RT434", "ECN Kmax"), ("mtu", "RT442", "MTU on")):
        device, running = _running(name, tmp_path / kind, kind)
        cap, _ = _capture(tmp_path / kind, device, name, running)
        found = [f for f in audit_dir(cap, INVENTORY).findings if f.device == device]
        assert found and {f.rule for f in found} == {rule}, (kind, found)
        assert (words in found[0].message and "plan" in found[0].message
                and "running config" in found[0].message)
        assert not [f for f in audit_dir(cap).findings if f.device == device], kind  # policy: no judgement


@pytest.mark.parametrize("name", SWITCH_PLATFORMS)
def test_factory_config_without_pfc_is_a_hop_without_pfc(name: str, tmp_path: Path) -> None:
    running = device_class(name)(EmulatorSpec(name, "sw9"), tmp_path).running_config()
    cap, _ = _capture(tmp_path, "sw9", name, running)
    r = audit_dir(cap)
    if name == "nxos":  # no `priority-flow-control mode` = auto (DCBX): unknown, not off
        assert [s for s in r.not_checked if s.rule == "RT420" and s.device == "sw9"]
        assert not [f for f in r.findings if f.rule == "RT420"]
        return
    found = [f for f in r.findings if f.rule == "RT420" and f.device == "sw9"]
    assert (len(found) == 1 and found[0].port is None
            and "no port of sw9 has PFC on RoCE priority 3" in found[0].message)


def test_ecn_not_bound_to_the_lossless_queue_without_a_plan(tmp_path: Path) -> None:
    device, running = _running("sonic", tmp_path)
    db = json.loads(running)
    port = "Ethernet0"
    for key in [k for k in db["QUEUE"] if k.startswith(port + "|")]:
        db["QUEUE"][key].pop("wred_profile", None)
    cap, path = _capture(tmp_path, device, "sonic", json.dumps(db, indent=4))
    found = [f for f in audit_dir(cap).findings if f.device == device]
    assert [(f.rule, f.port) for f in found] == [("RT431", port)]
    assert "WRED/ECN is not bound to lossless queue 3" in found[0].message
    assert port in path.read_text().splitlines()[found[0].evidence[0].line - 1]
    with_plan = [f for f in audit_dir(cap, INVENTORY).findings if f.device == device]
    assert [(f.rule, f.port) for f in with_plan] == [("RT431", port)]


def test_nvue_yaml_running_config_reads_like_the_commands(tmp_path: Path) -> None:
    import io

    from ruamel.yaml import YAML

    from tests.emulators.cumulus import unflatten

    device, running = _running("cumulus", tmp_path, "pfc")
    buf = io.StringIO()  # `nv config show` prints the applied revision as YAML (header, then set)
    YAML(typ="safe").dump([{"header": {"model": "VX", "version": "Cumulus Linux 5.9.0"}},
                           {"set": unflatten([ln[len("nv set "):] for ln in running.splitlines()
                                              if ln.startswith("nv set ")])}], buf)
    cap = tmp_path / "captures"
    cap.mkdir()
    (cap / f"{device}.txt").write_text(f"cumulus@{device}:mgmt:~$ nv config show\n{buf.getvalue()}",
                                       encoding="utf-8")
    r = audit_dir(cap, INVENTORY)
    assert r.data.switches[device].running is not None and not r.data.unparsed
    assert {f.rule for f in r.findings if f.device == device} == {"RT420"}


def test_an_unreadable_running_config_is_listed_not_dropped(tmp_path: Path) -> None:
    cap = tmp_path / "c"
    cap.mkdir()
    (cap / "leaf1.txt").write_text('admin@leaf1:~$ show runningconfiguration all\n{\n    "PORT_QOS_MAP": {\n'
                                   '        "Ethernet0": {"pfc_enable": "3",\n', encoding="utf-8")
    r = audit_dir(cap)
    assert len(r.data.unparsed) == 1 and r.data.unparsed[0].line == 1
    assert "CONFIG_DB JSON invalid at line" in r.data.unparsed[0].first
    # every format says why, not only JSON's first_line
    from roce_tune.audit import format_report

    for fmt in ("text", "markdown", "github"):
        assert "CONFIG_DB JSON invalid at line" in format_report(r, fmt), fmt


def test_watchdog_flapping_names_the_known_defect(tmp_path: Path) -> None:
    stats = ("admin@leaf5:~$ show pfcwd stats\n"
             "      QUEUE       STATUS    STORM DETECTED/RESTORED    TX OK/DROP    RX OK/DROP    TX LAST "
             "OK/DROP    RX LAST OK/DROP\n"
             "-------------  ---------  -------------------------  ------------  ------------  "
             "-----------------  -----------------\n"
             "Ethernet0:3  stormed                      14/13        0/4102           0/0                0/0"
             "                0/0\n")
    cap = tmp_path / "c"
    cap.mkdir()
    (cap / "leaf5.txt").write_text(stats, encoding="utf-8")
    # no plan: the ASIC is unknown, the defect is named as possible
    f = next(f for f in audit_dir(cap).findings if f.rule == "RT423")
    assert "flapping" in f.message and "may be known defect RT251" in f.message and "29203" in f.message
    assert [str(e) for e in f.evidence][0] == "leaf5.txt:4"
    # with a plan whose leaf5 is a Tomahawk-5 with the watchdog on: it matches
    from dataclasses import replace

    from roce_tune.audit.checks import run_checks
    from roce_tune.audit.expect import load_expect
    from roce_tune.audit.run import read_dir

    exp, _ = load_expect(INVENTORY, None)
    assert exp.switches["leaf5"].watchdog.enabled
    exp = replace(exp, switches={**exp.switches,
                                 "leaf5": exp.switches["leaf5"].model_copy(update={"asic": "tomahawk-5"})})
    findings, _ = run_checks(read_dir(cap, exp), exp)
    f = next(f for f in findings if f.rule == "RT423")
    assert "matches known defect RT251" in f.message and "tomahawk-5" in f.message
    exp = replace(exp, switches={**exp.switches,
                                 "leaf5": exp.switches["leaf5"].model_copy(update={"asic": "tomahawk-4"})})
    findings, _ = run_checks(read_dir(cap, exp), exp)
    f = next(f for f in findings if f.rule == "RT423")
    assert "RT251" not in f.message and "flapping" in f.message


def test_sonic_dscp_map_bound_to_no_port_is_not_in_effect(tmp_path: Path) -> None:
    """A whole CONFIG_DB whose DSCP_TO_TC_MAP no PORT_QOS_MAP row (nor its ``global`` row) binds: the ASIC
    classifies every DSCP to TC 0 — RoCE rides a lossy queue although the map exists (RT414). Before, the
    table's only map was read as if bound."""
    device, running = _running("sonic", tmp_path)
    db = json.loads(running[running.index("{"):])
    for row in db["PORT_QOS_MAP"].values():
        row.pop("dscp_to_tc_map", None)
    cap, path = _capture(tmp_path, device, "sonic", json.dumps(db, indent=4))
    for source in (INVENTORY, None):
        found = [f for f in audit_dir(cap, source).findings if f.rule == "RT414"]
        assert found, source
        assert "DSCP 26 → TC 0" in found[0].message, found[0].message


@pytest.mark.parametrize(("doc", "where"), [
    ('{"PORT": {"Ethernet0": "x"}}', "/PORT/Ethernet0 is a JSON string"),
    ('{"PORT_QOS_MAP": {"Ethernet0": ["3"]}}', "/PORT_QOS_MAP/Ethernet0 is a JSON array"),
    ('{"QUEUE": "Ethernet0|3"}', "/QUEUE is a JSON string"),
    ('{"BUFFER_PG": {"Ethernet0|3-4": null}}', "/BUFFER_PG/Ethernet0|3-4 is a JSON null"),
    ('{"DSCP_TO_TC_MAP": {"AZURE": {"26": "three"}}, '
     '"PORT_QOS_MAP": {"Ethernet0": {"dscp_to_tc_map": "AZURE"}}}',
     "/DSCP_TO_TC_MAP/AZURE/26 maps"),
])
def test_sonic_rows_that_are_not_objects_are_named_by_json_path(tmp_path: Path, doc: str, where: str) -> None:
    """CONFIG_DB rows that are not JSON objects (hand-edited config_db.json) raise ValueError naming the JSON
    Pointer of the row, and audit lists the block with that reason (it was ``AttributeError: 'str' object
    has no attribute 'get'``, naming nothing)."""
    from roce_tune.platforms.sonic_readback import read_back

    with pytest.raises(ValueError, match="SONiC read-back: CONFIG_DB " + re.escape(where)):
        read_back(doc)
    cap = tmp_path / "c"
    cap.mkdir()
    whole = {"DEVICE_METADATA": {"localhost": {"buffer_model": "traditional"}}, **json.loads(doc)}
    pretty = json.dumps(whole, indent=4)  # a whole running CONFIG_DB, as the switch prints it
    (cap / "leaf1.txt").write_text(f"admin@leaf1:~$ show runningconfiguration all\n{pretty}\n",
                                   encoding="utf-8")
    r = audit_dir(cap)
    assert len(r.data.unparsed) == 1 and where in r.data.unparsed[0].first, r.data.unparsed
    assert "AttributeError" not in r.data.unparsed[0].first


def test_junos_deactivated_statements_are_not_in_effect(tmp_path: Path) -> None:
    """``show configuration | display set`` prints an inactive statement as its ``set`` line followed by a
    ``deactivate`` line (Junos CLI; seen in public QFX/MX captures). A port whose congestion-notification
    profile was deactivated runs without PFC: it was read as lossless and the audit was clean."""
    device, running = _running("junos", tmp_path)
    port = "et-0/0/0"
    assert f"set class-of-service interfaces {port} congestion-notification-profile" in running
    cap, path = _capture(tmp_path, device, "junos", running + (
        f"deactivate class-of-service interfaces {port} congestion-notification-profile\n"
        "deactivate class-of-service interfaces et-0/0/1\n"))
    found = [f for f in audit_dir(cap, INVENTORY).findings if f.device == device]
    assert {(f.rule, f.port) for f in found if f.rule == "RT420"} == {("RT420", port), ("RT420", "et-0/0/1")}
    # a deactivated statement of another port, or one that only shares a word prefix, is untouched
    qos = platform("junos").read_back(running + "deactivate class-of-service interfaces et-0/0/1\n"
                                      "deactivate interfaces et-0/0/2 descr\n")
    assert qos.ports[port].pfc_priorities == [3] and qos.ports["et-0/0/1"].pfc_priorities == []
    assert qos.ports["et-0/0/2"].pfc_priorities == [3]


def test_cumulus_roce_mode_alone_leaves_pfc_and_ecn_unknown(tmp_path: Path) -> None:
    """``nv set qos roce mode lossless`` alone (NVIDIA's one-line RoCE setup: PFC and ECN from RoCE mode's
    defaults, CL RoCE page) states no PFC or ECN per port. It was read as PFC off on every port: "no port
    of leaf7 has PFC on RoCE priority 3" without a plan, and RT420 + RT431 on every port with one."""
    cap = tmp_path / "captures"
    cap.mkdir()
    (cap / "leaf7.txt").write_text("cumulus@leaf7:mgmt:~$ nv config show -o commands\n"
                                   "nv set interface swp1-8 link mtu 9216\nnv set qos roce mode lossless\n"
                                   "nv set system hostname leaf7\n")
    for source in (None, INVENTORY):
        r = audit_dir(cap, source)
        assert not [f for f in r.findings if f.rule in ("RT420", "RT431")], (source, r.findings)
        skipped = [s for s in r.not_checked if s.rule == "RT420" and s.device == "leaf7"]
        assert len(skipped) == 1 and "nv show qos roce" in skipped[0].needs
    assert "swp1, swp2" in skipped[0].needs
    qos = platform("cumulus").read_back("nv set qos roce mode lossy\nnv set interface swp1 link mtu 9216\n")
    assert qos.ports["swp1"].pfc_priorities == []  # lossy mode: no PFC, known
    qos = platform("cumulus").read_back("nv set qos roce\nnv set qos pfc default-global switch-priority 4\n"
                                        "nv set interface swp1 link mtu 9216\n")
    assert qos.ports["swp1"].pfc_priorities == [4]  # a stated PFC profile is read as it is
