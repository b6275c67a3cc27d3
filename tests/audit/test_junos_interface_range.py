"""Junos ``interfaces interface-range`` in a ``show configuration | display set`` capture read from a file.

Junos semantics (Juniper, "Interface Ranges for Physical Interfaces" and "Configuring Interface Ranges for EX
Series Switches with ELS"): ``member-range A to B`` takes the interfaces from A to B in order, ``member`` one
name or a number pattern per field (``*`` = 0..47, ``[low-high]``, ``[n1,n2]``); a range's statements apply
to every member, the interface's own statement over the range's (the page's "Configuration Inheritance for
Member Interfaces"). A planned port whose MTU the capture does not state is listed as not checked (RT442).
"""

from __future__ import annotations

import re
from pathlib import Path

from roce_tune.audit import audit_dir
from roce_tune.platforms import platform
from tests.audit.test_running_config import INVENTORY, _capture, _running

PORTS = [f"et-0/0/{i}" for i in range(8)]


def _ranged(running: str, *extra: str) -> str:
    """The rendered running config with its per-port ``mtu`` lines replaced by interface ranges, as a QFX
    ``show configuration | display set`` prints them (ranges before the interfaces, quoted patterns)."""
    keep = [t for t in running.splitlines() if not re.match(r"set interfaces et-0/0/\d mtu ", t)]
    return "\n".join([
        "set version 23.4R2-S2.1",
        "set interfaces interface-range GPU-RAILS member-range et-0/0/0 to et-0/0/3",
        'set interfaces interface-range GPU-RAILS member "et-0/0/[4-5]"',
        "set interfaces interface-range GPU-RAILS member et-0/0/6",
        'set interfaces interface-range GPU-RAILS description "GPU rails"',
        "set interfaces interface-range GPU-RAILS mtu 9216",
        "set interfaces interface-range GPU-RAILS unit 0 family inet",
        "set interfaces interface-range SPARE member et-0/0/7",
        *extra,
        *keep,
        "set interfaces et-0/0/7 description spare",
        "set interfaces em0 unit 0 family inet address 192.0.2.30/24",
    ]) + "\n"


def test_range_mtu_reaches_every_member(tmp_path: Path) -> None:
    device, running = _running("junos", tmp_path)
    qos = platform("junos").read_back(_ranged(running, "set interfaces interface-range SPARE mtu 9216"))
    assert {p: qos.ports[p].mtu for p in PORTS} == dict.fromkeys(PORTS, 9216)
    assert "interface-range" not in qos.ports and "GPU-RAILS" not in qos.ports
    text = _ranged(running, "set interfaces interface-range SPARE mtu 9216")
    cap, _ = _capture(tmp_path, device, "junos", text)
    for source in (INVENTORY, None):
        r = audit_dir(cap, source)
        assert [f for f in r.findings if f.device == device] == [], source
        assert not [s for s in r.not_checked if s.rule == "RT442" and s.device == device]


def test_a_wrong_range_mtu_is_found_and_the_ports_own_mtu_wins(tmp_path: Path) -> None:
    device, running = _running("junos", tmp_path)
    text = _ranged(running, "set interfaces interface-range SPARE mtu 1514",
                   "set interfaces et-0/0/6 mtu 1500").replace("GPU-RAILS mtu 9216", "GPU-RAILS mtu 1514")
    text += "set interfaces et-0/0/5 mtu 9216\n"  # its own statement beats the range's 1514
    qos = platform("junos").read_back(text)
    assert qos.ports["et-0/0/5"].mtu == 9216 and qos.ports["et-0/0/6"].mtu == 1500
    assert qos.ports["et-0/0/0"].mtu == 1514 and qos.ports["et-0/0/7"].mtu == 1514
    cap, _ = _capture(tmp_path, device, "junos", text)
    for source in (INVENTORY, None):
        found = {f.port for f in audit_dir(cap, source).findings if f.device == device and f.rule == "RT442"}
        assert found == set(PORTS) - {"et-0/0/5"}, source


def test_member_patterns_and_a_range_across_pics() -> None:
    text = "\n".join([
        'set interfaces interface-range A member "et-0/[0-1]/[0,2]"',
        "set interfaces interface-range A member et-0/0/1:2",
        "set interfaces interface-range A mtu 9000",
        "set interfaces interface-range B member-range et-1/0/46 to et-1/1/1",
        "set interfaces interface-range B mtu 9100",
        'set interfaces interface-range C member "xe-2/0/*"',
        "set interfaces interface-range C mtu 9200",
        "deactivate interfaces interface-range C",
    ]) + "\n"
    ports = platform("junos").read_back(text).ports
    assert {n: p.mtu for n, p in ports.items()} == {
        "et-0/0/0": 9000, "et-0/0/2": 9000, "et-0/1/0": 9000, "et-0/1/2": 9000, "et-0/0/1:2": 9000,
        "et-1/0/46": 9100, "et-1/0/47": 9100, "et-1/1/0": 9100, "et-1/1/1": 9100}


def test_a_planned_port_whose_mtu_is_not_stated_is_not_checked(tmp_path: Path) -> None:
    """Before: no ``mtu`` statement read as "no MTU difference": the audit passed the port silently."""
    device, running = _running("junos", tmp_path)
    text = "\n".join(t for t in running.splitlines() if not re.match(r"set interfaces et-0/0/[67] mtu ", t))
    cap, _ = _capture(tmp_path, device, "junos", text + "\n")
    for source in (INVENTORY, None):
        r = audit_dir(cap, source)
        assert not [f for f in r.findings if f.device == device and f.rule == "RT442"], source
        skipped = [s for s in r.not_checked if s.rule == "RT442" and s.device == device]
        assert len(skipped) == 1 and "et-0/0/6, et-0/0/7" in skipped[0].needs, (source, r.not_checked)
