"""Junos CoS bound through ``apply-groups``, group wildcards (``<et-*>``), CoS interface wildcards
(``et-0/0/*``) and ``class-of-service interfaces all``, as real QFX configurations write it.

Junos semantics (Juniper docs): a group's statements are inherited where ``apply-groups`` names the group, a
``<pattern>`` in a group matches the objects configured at that level, the first group listed wins over later
ones and the local configuration wins over every group ("Configuration Groups", "display inheritance"); a CoS
component can be bound to interfaces by wildcard and a congestion-notification profile to ``all`` interfaces
("Assigning CoS Components to Interfaces", QFX): a statement for the interface itself beats a wildcard, a
wildcard beats ``all``.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from roce_tune.audit import audit_dir
from roce_tune.platforms import platform
from tests.audit.test_running_config import INVENTORY, _capture, _running

PORTS = [f"et-0/0/{i}" for i in range(8)]


def _grouped(running: str) -> str:
    """The rendered running config rewritten the way a Junos engineer writes it by hand: MTU from a group
    with a wildcard (a second, lower-priority group says 1514), PFC bound to ``all`` (ports 4-7 keep their
    own 20 m profile), the classifier by CoS wildcard, the 400G-N4 scheduler map from a group applied at
    ``class-of-service``."""
    keep = []
    for line in running.splitlines():
        m = re.match(r"set (?:class-of-service )?interfaces (et-0/0/(\d)) (\S+)", line)
        if m and m.group(3) == "mtu":
            keep.append(f"set interfaces {m.group(1)} description \"gpu{m.group(2)} rail\"")
            keep.append(f"set interfaces {m.group(1)} unit 0 family inet address 10.0.{m.group(2)}.1/31")
            continue
        if m and (m.group(3) == "unit" or (m.group(3) == "congestion-notification-profile"
                                            and "RT_PFC_3M" in line)):
            continue
        if m and m.group(3) == "scheduler-map" and "N4" in line:
            continue
        keep.append(line)
    cnp = "RT_PFC_3M"
    n4 = next(w for t in running.splitlines() for w in t.split()
              if w.startswith("RT_SM_") and w.endswith("N4"))
    return "\n".join([
        "set version 22.4R3.25",
        "set groups JUMBO interfaces <et-*> mtu 9216",
        "set groups LEGACY interfaces <*> mtu 1514",
        f"set groups COS-N4 class-of-service interfaces <et-0/0/[4-7]> scheduler-map {n4}",
        "set groups OLD class-of-service interfaces <et-*> congestion-notification-profile NONE",
        "deactivate groups OLD",
        "set apply-groups JUMBO",
        "set apply-groups LEGACY",
        "set apply-groups OLD",
        "set class-of-service apply-groups COS-N4",
        *keep,
        f"set class-of-service interfaces all congestion-notification-profile {cnp}",
        "set class-of-service interfaces et-0/0/* unit * classifiers dscp RT_DSCP",
        "set interfaces em0 unit 0 family inet address 192.0.2.30/24",
    ]) + "\n"


def test_groups_wildcards_and_all_bind_cos_per_port(tmp_path: Path) -> None:
    device, running = _running("junos", tmp_path)
    want = platform("junos").read_back(running)
    got = platform("junos").read_back(_grouped(running))
    for port in PORTS:
        assert got.ports[port] == want.ports[port], port
    assert got.ports["et-0/0/4"].cable_m == 20.0  # its own profile beats `all` (3 m)
    assert got.ports["et-0/0/0"].cable_m == 3.0
    assert got.ports["em0"].pfc_priorities == []  # `all` is the switch ports, not management
    cap, _ = _capture(tmp_path, device, "junos", _grouped(running))
    for source in (INVENTORY, None):
        found = [f for f in audit_dir(cap, source).findings if f.device == device]
        assert found == [], [(f.rule, f.port, f.message) for f in found]


def test_a_wildcard_that_matches_nothing_leaves_the_port_without_pfc(tmp_path: Path) -> None:
    device, running = _running("junos", tmp_path)
    text = _grouped(running).replace("interfaces all congestion", "interfaces xe-0/0/* congestion")
    text = text.replace("set apply-groups JUMBO\n", "")  # JUMBO no longer applied
    cap, _ = _capture(tmp_path, device, "junos", text)
    found = {(f.rule, f.port) for f in audit_dir(cap, INVENTORY).findings if f.device == device}
    assert {p for r, p in found if r == "RT420"} == set(PORTS[:4])
    assert {p for r, p in found if r == "RT442"} == set(PORTS)  # LEGACY's 1514 is what is left


def test_interface_level_apply_groups_except_and_deactivated_inheritance(tmp_path: Path) -> None:
    _, running = _running("junos", tmp_path)
    text = _grouped(running) + (
        "set interfaces et-0/0/7 apply-groups-except JUMBO\n"
        "deactivate class-of-service interfaces et-0/0/6\n")
    qos = platform("junos").read_back(text)
    assert qos.ports["et-0/0/7"].mtu == 1514 and qos.ports["et-0/0/6"].mtu == 9216
    # et-0/0/6's own binding is inactive: the switch-wide `all` profile (3 m) binds it instead
    assert qos.ports["et-0/0/6"].cable_m == 3.0


@pytest.mark.slow  # end-to-end (subprocesses/emulators), seconds each: .ci/run runs it (-m slow)
def test_live_reads_junos_with_display_inheritance(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """``audit --live`` asks Junos for ``show configuration | display inheritance | display set``: Junos
    expands groups and interface ranges itself and leaves ``groups`` / ``apply-groups`` out (Junos XML
    protocol guide: ``inherit="inherit"`` is the CLI's ``show | display inheritance``). The emulator
    answers it so; the grouped switch reads as clean, the commands stay read-only."""
    import pytest

    from roce_tune.audit import LiveOptions, audit_live
    from roce_tune.deploy.runner import ApplyOptions, SessionTiming
    from tests.deploy.conftest import PASSWORD, USER, emulated_inventory
    from tests.emulators.junos import _norm

    pytest.importorskip("netmiko")
    monkeypatch.setenv("ROCE_TUNE_USERNAME", USER)
    monkeypatch.setenv("ROCE_TUNE_PASSWORD", PASSWORD)
    device, running = _running("junos", tmp_path)
    fleet, inv, known = emulated_inventory("mixed-vendor.yaml", tmp_path, hosts=True)  # the plan of INVENTORY
    with fleet:
        dev = next(d for d in fleet if d.spec.name == device)
        dev.history[0].lines[:] = [_norm(t.removeprefix("set ")) for t in _grouped(running).splitlines()
                                   if t.startswith("set ") and "OLD" not in t] + [
            "interfaces et-0/0/6 apply-groups-except JUMBO"]
        dev.history[0].lines.append("interfaces et-0/0/6 mtu 9216")  # its own MTU: the same as JUMBO's
        r = audit_live(inv, LiveOptions(apply=ApplyOptions(known_hosts=str(known),
                                                           timing=SessionTiming(fast_cli=True,
                                                                                global_delay_factor=0.1)),
                                        save_dir=tmp_path / "caps", concurrency=4))
        seen = list(dev.commands_seen)
    assert "show configuration | display inheritance | display set" in seen
    saved = (tmp_path / "caps" / f"{device}.live.txt").read_text()
    assert "set groups" not in saved and "apply-groups" not in saved
    assert "set interfaces et-0/0/3 mtu 9216" in saved  # inherited from JUMBO, not LEGACY's 1514
    found = [f for f in r.findings if f.device == device]
    assert found == [], [(f.rule, f.port, f.message) for f in found]


def test_read_only_pipes_are_display_and_json_only() -> None:
    import pytest

    from roce_tune.audit.live import check_read_only

    assert check_read_only("show configuration | display inheritance | display set")
    for bad in ("show configuration | save /var/tmp/x | display set",
                "show configuration | display set | save /var/tmp/x | display set",
                "show configuration | request system reboot | json"):
        with pytest.raises(ValueError, match="read-only"):
            check_read_only(bad)
