"""RT414 and the switch's trust mode: a switch (or port) that classifies by PCP, or by no marking, never
looks RoCE's DSCP up in its DSCP map, so judging the DSCP map alone said "fine" while RoCE marked by DSCP
could land in a lossy class.

The audit read neither NVUE's ``nv set qos mapping <profile> trust l2|l3|both|port`` (nor ``trust:`` in
``nv config show`` YAML) nor EOS's ``qos trust cos|dscp`` / ``no qos trust``. Now the EOS and Cumulus
read-backs read the trust (``SwitchQos.trust``, ``PortQos.trust``), and with DSCP trust planned a RoCE port
trusting PCP or nothing is an RT414 error; a configuration that states no trust is "not checked" (neither
platform's default trust is stated by a source roce-tune holds), never passed.
"""

from __future__ import annotations

import io
from pathlib import Path

from roce_tune.audit import audit_dir
from roce_tune.audit.run import AuditResult
from roce_tune.platforms import platform
from tests.audit.test_running_config import INVENTORY, _capture, _running

REPO = Path(__file__).resolve().parents[2]
EOS_7060 = (REPO / "tests" / "audit" / "fixtures" / "running" / "leaf1-eos-7060.txt").read_text()
NVUE = (REPO / "tests" / "audit" / "fixtures" / "running" / "leaf7-nvue-commands.txt").read_text()
EOS_PORT = "interface Ethernet1/1\n   description gpu01-rail0\n"


def _audit(tmp_path: Path, device: str, text: str, source: Path | None = None) -> AuditResult:
    cap = tmp_path / "cap"
    cap.mkdir(parents=True, exist_ok=True)
    (cap / f"{device}.txt").write_text(text, encoding="utf-8")
    return audit_dir(cap, source)


def _trust(r: AuditResult) -> tuple[list[str], list[str]]:
    """(RT414 messages, RT414 not-checked needs) about trust."""
    return ([f.message for f in r.findings if f.rule == "RT414" and "classifies by" in f.message],
            [s.needs for s in r.not_checked if s.rule == "RT414" and "trust mode" in s.needs])


def test_eos_port_trusting_cos_is_an_error_and_unstated_trust_is_not_checked(tmp_path: Path) -> None:
    assert EOS_7060.count(EOS_PORT) == 1
    r = _audit(tmp_path, "leaf1", EOS_7060.replace(EOS_PORT, EOS_PORT + "   qos trust cos\n"))
    msgs, needs = _trust(r)
    assert len(msgs) == 1, msgs
    assert msgs[0].startswith("leaf1 Ethernet1/1 classifies by PCP (trust cos): the DSCP map is not used; "
                              "RoCE PCP 3 -> TC"), msgs
    (f,) = [f for f in r.findings if f.rule == "RT414" and "classifies by" in f.message]
    assert f.port == "Ethernet1/1" and f.severity.value == "error"
    lines = (tmp_path / "cap" / "leaf1.txt").read_text().splitlines()
    assert [lines[e.line - 1].strip() for e in f.evidence] == ["qos trust cos"]
    (need,) = needs  # the other ports state no trust: the EOS default is not known
    assert need.startswith("the trust mode of Ethernet2/1, Ethernet3/1, Ethernet4/1"), need


def test_eos_no_qos_trust_overrides_the_profiles_dscp_trust(tmp_path: Path) -> None:
    text = EOS_7060.replace("interface Ethernet1/1\n", "qos profile RP\n   qos trust dscp\n!\n"
                            "interface Ethernet1/1\n   service-profile RP\n   no qos trust\n")
    text = text.replace("interface Ethernet2/1\n", "interface Ethernet2/1\n   service-profile RP\n")
    r = _audit(tmp_path, "leaf1", text)
    q = r.data.switches["leaf1"].running
    assert q is not None
    assert (q.value.ports["Ethernet1/1"].trust, q.value.ports["Ethernet2/1"].trust,
            q.value.ports["Ethernet3/1"].trust) == ("none", "dscp", None)
    (msg,) = _trust(r)[0]
    assert msg.startswith("leaf1 Ethernet1/1 classifies by no marking (trust disabled")


def test_roce_tunes_own_eos_and_cumulus_configs_trust_dscp(tmp_path: Path) -> None:
    """The rendered configurations (qos trust dscp in the profile; trust l3) pass, with and without a plan."""
    for name in ("eos", "cumulus"):
        device, running = _running(name, tmp_path / name)
        cap, _ = _capture(tmp_path / name, device, name, running)
        for source in (INVENTORY, None):
            r = audit_dir(cap, source)
            assert _trust(r) == ([], []), (name, source)
            q = r.data.switches[device].running
            assert q is not None
            trusts = {q.value.trust} | {p.trust for p in q.value.ports.values()}
            assert "dscp" in trusts, (name, trusts)


def test_eos_plan_flags_a_port_trusting_cos(tmp_path: Path) -> None:
    device, running = _running("eos", tmp_path)
    assert "   qos trust dscp\n" in running
    cap, _ = _capture(tmp_path, device, "eos", running.replace("   qos trust dscp\n", "   qos trust cos\n"))
    msgs, _ = _trust(audit_dir(cap, INVENTORY))
    assert msgs and all("classifies by PCP (trust cos)" in m and "(plan: RoCE is classified by DSCP 26" in m
                        for m in msgs), msgs


def test_cumulus_trust_l2_is_an_error_l3_passes_unstated_is_not_checked(tmp_path: Path) -> None:
    assert "nv set qos mapping default-global trust l3\n" in NVUE
    r = _audit(tmp_path / "l2", "leaf7", NVUE.replace("trust l3", "trust l2"))
    (msg,) = _trust(r)[0]
    assert msg.startswith("leaf7 swp1, swp2, swp3, swp4 and 4 more classifies by PCP (trust l2): the DSCP "
                          "map is not used"), msg
    assert _trust(_audit(tmp_path / "l3", "leaf7", NVUE)) == ([], [])
    r = _audit(tmp_path / "none", "leaf7", NVUE.replace("nv set qos mapping default-global trust l3\n", ""))
    assert _trust(r)[0] == [] and len(_trust(r)[1]) == 1
    port = NVUE.replace("nv set qos mapping default-global trust l3\n",
                        "nv set qos mapping default-global trust l3\nnv set qos mapping pcp-only trust port\n"
                        "nv set interface swp8 qos mapping profile pcp-only\n")
    (msg,) = _trust(_audit(tmp_path / "port", "leaf7", port))[0]
    assert msg.startswith("leaf7 swp8 classifies by no marking (trust port"), msg


def test_cumulus_yaml_trust_is_read(tmp_path: Path) -> None:
    from ruamel.yaml import YAML

    from tests.emulators.cumulus import unflatten

    device, running = _running("cumulus", tmp_path)
    assert " trust l3\n" in running
    buf = io.StringIO()
    YAML(typ="safe").dump([{"header": {"model": "VX", "version": "Cumulus Linux 5.9.0"}},
                           {"set": unflatten([ln[len("nv set "):].replace(" trust l3", " trust l2")
                                              for ln in running.splitlines() if ln.startswith("nv set ")])}],
                          buf)
    assert "trust: l2" in buf.getvalue()
    r = _audit(tmp_path, device, f"cumulus@{device}:mgmt:~$ nv config show\n{buf.getvalue()}", INVENTORY)
    assert r.data.switches[device].running is not None and not r.data.unparsed
    msgs, _ = _trust(r)
    assert msgs and "classifies by PCP (trust l2)" in msgs[0], msgs
    assert platform("cumulus").push.read_running  # the commands capture form is covered above


def test_cumulus_switch_wide_trust_l2_without_interfaces(tmp_path: Path) -> None:
    """A capture that names no interface (``nv config show -o commands | grep qos``) still shows the trust."""
    text = "\n".join(ln for ln in NVUE.replace("trust l3", "trust l2").splitlines()
                     if "interface" not in ln) + "\n"
    (msg,) = _trust(_audit(tmp_path, "leaf7", text))[0]
    assert msg.startswith("leaf7 classifies by PCP (trust l2): the DSCP map is not used"), msg
