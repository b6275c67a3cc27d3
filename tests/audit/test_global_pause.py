"""RT428: global (802.3x) pause on a NIC port with PFC, read from ``ethtool -a`` as ethtool prints it
(``netlink/pause.c``: ``Pause parameters for IF:``, ``Autonegotiate:``/``RX:``/``TX:``, ``RX
negotiated:``/``TX negotiated:`` after autonegotiation, ``Statistics:`` with ``-I``; the ioctl path's
``Cannot get device pause settings: …``). Unread or failed output is "not checked", never "off"."""

from __future__ import annotations

import json
from pathlib import Path

from tests.audit.conftest import ev, rules
from tests.audit.test_cli import CLEAN, REPO, audit_here

LAB = str(REPO / "inventories" / "lab-2node.yaml")


def pause(netdev: str, rx: str = "on", tx: str = "on", autoneg: str = "off", extra: str = "",
          prompt: str = "root@gpu01:~# ") -> str:
    """An ``ethtool -a`` session as ethtool ≥ 5.6 prints it (tabs, a blank line after the report)."""
    return (f"{prompt}ethtool -a {netdev}\nPause parameters for {netdev}:\nAutonegotiate:\t{autoneg}\n"
            f"RX:\t\t{rx}\nTX:\t\t{tx}\n{extra}\n")


def not_checked(doc: dict, rule: str = "RT428") -> dict[str | None, list[str]]:  # type: ignore[type-arg]
    out: dict[str | None, list[str]] = {}
    for n in doc["not_checked"]:
        if n["rule"] == rule:
            out.setdefault(n["device"], []).append(n["needs"])
    return out


def test_pause_on_a_pfc_port_is_an_error_with_its_lines(tmp_path: Path) -> None:
    """Before: the README asks for ``ethtool -a`` but audit listed it as not understood and exited 0."""
    (tmp_path / "gpu01.txt").write_text(CLEAN + pause("ens1f0np0"))
    r = audit_here("--from", str(tmp_path), "--format", "json")
    assert r.returncode == 1, r.stdout + r.stderr
    doc = json.loads(r.stdout)
    found = [f for f in doc["findings"] if f["rule"] == "RT428"]
    assert [(f["severity"], f["device"], f["port"]) for f in found] == [("error", "gpu01", "ens1f0np0")]
    assert "global 802.3x pause on (RX on, TX on)" in found[0]["message"]
    assert "mlnx_qos shows PFC on priority 3" in found[0]["message"]
    assert found[0]["fix"].startswith("ethtool -A ens1f0np0 rx off tx off")
    # the PFC row (line 4), then RX: and TX: of the report (lines 8, 9)
    assert found[0]["evidence"] == ["gpu01.txt:4", "gpu01.txt:8", "gpu01.txt:9"]
    assert doc["not_understood"] == []


def test_pause_off_is_clean_and_read(tmp_path: Path) -> None:
    (tmp_path / "gpu01.txt").write_text(CLEAN + pause("ens1f0np0", "off", "off"))
    r = audit_here("--from", str(tmp_path), "--format", "json")
    assert r.returncode == 0, r.stdout
    doc = json.loads(r.stdout)
    assert not [f for f in doc["findings"] if f["rule"] == "RT428"]
    assert not not_checked(doc) and doc["not_understood"] == []


def test_one_direction_on_is_enough(captures) -> None:  # type: ignore[no-untyped-def]
    r = captures({"gpu01.txt": CLEAN + pause("ens1f0np0", rx="on", tx="off")})
    f = rules(r)["RT428"][0]
    assert "(RX on)" in f.message and ev(f) == ["gpu01.txt:4", "gpu01.txt:8"]


def test_a_loop_over_nics_is_one_report_per_nic(captures) -> None:  # type: ignore[no-untyped-def]
    qos = "".join(CLEAN.replace("ens1f0np0", n) for n in ("ens1f0np0", "ens2f0np0"))
    loop = ("root@gpu01:~# for i in ens1f0np0 ens2f0np0; do ethtool -a $i; done\n"
            "Pause parameters for ens1f0np0:\nAutonegotiate:\toff\nRX:\t\toff\nTX:\t\toff\n\n"
            "Pause parameters for ens2f0np0:\nAutonegotiate:\toff\nRX:\t\ton\nTX:\t\ton\n\n")
    r = captures({"gpu01.txt": qos + loop})
    assert [(f.port, ev(f)[1:]) for f in rules(r)["RT428"]] == [
        ("ens2f0np0", ["gpu01.txt:17", "gpu01.txt:18"])]
    assert not r.data.unparsed and not [s for s in r.not_checked if s.rule == "RT428"]


def test_autonegotiated_pause_judges_the_negotiated_result(captures) -> None:  # type: ignore[no-untyped-def]
    """Autonegotiation on: RX/TX are what the port advertises, ``RX/TX negotiated`` what runs."""
    idle = pause("ens1f0np0", autoneg="on", extra="RX negotiated: off\nTX negotiated: off\n")
    f = rules(captures({"gpu01.txt": CLEAN + idle}))["RT428"][0]
    assert f.severity.value == "warning" and "advertised only" in f.message
    assert f.fix.startswith("ethtool -A ens1f0np0 autoneg off rx off tx off")
    running = pause("ens1f0np0", autoneg="on", extra="RX negotiated: on\nTX negotiated: on\nStatistics:\n"
                                                     "  tx_pause_frames: 12345\n  rx_pause_frames: 0\n")
    (f,) = rules(captures({"gpu01.txt": CLEAN + running}))["RT428"]
    assert f.severity.value == "error" and "tx_pause_frames 12,345" in f.message
    assert "gpu01.txt:13" in ev(f)  # the tx_pause_frames line


def test_a_driver_without_pause_parameters_is_not_checked(captures) -> None:  # type: ignore[no-untyped-def]
    """ethtool's ioctl path prints the header, then perror's line; neither is "pause off"."""
    failed = ("root@gpu01:~# ethtool -a ens1f0np0\nPause parameters for ens1f0np0:\n"
              "Cannot get device pause settings: Operation not supported\n")
    r = captures({"gpu01.txt": CLEAN + failed})
    assert "RT428" not in rules(r) and not r.data.unparsed
    (skip,) = [s for s in r.not_checked if s.rule == "RT428"]
    assert skip.device == "gpu01"
    assert skip.needs == ("ethtool -a ens1f0np0 (it said `Operation not supported` at gpu01.txt:7: the "
                          "driver gave no pause parameters)")


def test_a_netlink_error_is_not_checked(captures) -> None:  # type: ignore[no-untyped-def]
    r = captures({"gpu01.txt": CLEAN + "root@gpu01:~# ethtool -a ens1f0np0\nnetlink error: Operation not "
                                       "supported\n"})
    assert "RT428" not in rules(r) and not r.data.unparsed
    assert [s.needs for s in r.not_checked if s.rule == "RT428"] == [
        "ethtool -a ens1f0np0 (it said `Operation not supported` at gpu01.txt:6: the driver gave no pause "
        "parameters)"]


def test_unreadable_values_are_not_checked_and_listed(captures) -> None:  # type: ignore[no-untyped-def]
    """``n/a`` (the driver gave no value) and a mangled line are never read as off."""
    r = captures({"gpu01.txt": CLEAN + pause("ens1f0np0", rx="n/a", tx="off")})
    assert "RT428" not in rules(r)
    assert [s.needs for s in r.not_checked if s.rule == "RT428"] == [
        "ethtool -a ens1f0np0 with RX: and TX: on or off (read RX: n/a, TX: off)"]
    r = captures({"gpu01.txt": CLEAN + pause("ens1f0np0", rx="yes please", tx="off")})
    assert "RT428" not in rules(r)
    assert [str(u) for u in r.data.unparsed] == ["gpu01.txt:8: `ethtool -a ens1f0np0`: RX:\t\tyes please"]
    assert [s.needs for s in r.not_checked if s.rule == "RT428"] == [
        "ethtool -a ens1f0np0 with RX: and TX: on or off (read RX: missing, TX: off)"]


def test_without_a_plan_pfc_must_be_known(captures) -> None:  # type: ignore[no-untyped-def]
    """Pause on a NIC whose PFC was not captured: not checked (it may be a lossy management port)."""
    r = captures({"gpu01.txt": pause("eno1")})
    assert "RT428" not in rules(r)
    assert [s.needs for s in r.not_checked if s.rule == "RT428"] == [
        "mlnx_qos -i eno1 (global pause is on: has the port PFC?)"]
    r = captures({"gpu01.txt": CLEAN})
    assert [(s.device, s.needs) for s in r.not_checked if s.rule == "RT428"] == [
        ("gpu01", "ethtool -a ens1f0np0")]
    # a NIC without PFC may run global pause: both read, nothing to say
    no_pfc = CLEAN.replace("0   0   0   1   0", "0   0   0   0   0")
    r = captures({"gpu01.txt": no_pfc + pause("ens1f0np0")})
    assert "RT428" not in rules(r) and not [s for s in r.not_checked if s.rule == "RT428"]
    stats = "root@gpu01:~# ethtool -S ens1f0np0\nNIC statistics:\n     rx_prio3_pause: 0\n"
    r = captures({"gpu01.txt": stats})
    assert [(s.device, s.needs) for s in r.not_checked if s.rule == "RT428"] == [
        (None, "ethtool -a <if> (global pause) and mlnx_qos -i <if> (PFC) on the hosts")]


def test_with_a_plan_every_planned_pfc_nic_is_judged(tmp_path: Path) -> None:
    """lab-2node: node1 has pause on (error), node2 has no ``ethtool -a`` (not checked); eno1, not a plan
    NIC, is not judged."""
    (tmp_path / "node1.txt").write_text(pause("ens1f0np0", prompt="root@node1:~# ")
                                        + pause("eno1", prompt="root@node1:~# "))
    (tmp_path / "node2.txt").write_text(CLEAN.replace("gpu01", "node2"))
    r = audit_here(LAB, "--from", str(tmp_path), "--format", "json")
    doc = json.loads(r.stdout)
    found = [(f["severity"], f["device"], f["port"], f["evidence"]) for f in doc["findings"]
             if f["rule"] == "RT428"]
    assert found == [("error", "node1", "ens1f0np0", ["node1.txt:4", "node1.txt:5"])]
    assert "the plan puts PFC on priority 3" in next(f["message"] for f in doc["findings"]
                                                      if f["rule"] == "RT428")
    assert not_checked(doc) == {"node2": ["ethtool -a ens1f0np0"]}
    assert r.returncode == 1
