"""Plan-check findings on a switch port point at that port's own line in the inventory (the ``ports:`` entry
that declares it, or for a cable fix the link/NIC that cables it), not at the switch's ``name:`` line.

Run as real ``roce-tune`` subprocesses on real files: the shipped site.yaml at 50G (RT211 on a port of a
range entry) and a lab inventory with a 990 m host cable (RT201; 999 m is the longest the NIC driver keeps,
RT128) and a lossless link to a device outside the inventory (RT221).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from roce_tune.findings import Finding, Location, Severity
from roce_tune.inventory.loader import load_inventory
from roce_tune.pipeline import locate_findings

REPO = Path(__file__).resolve().parents[1]


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO), "COLUMNS": "400"}
    return subprocess.run([sys.executable, "-m", "roce_tune.cli", *args], capture_output=True, text=True,
                          cwd=REPO, env=env, timeout=300)


def _line_of(path: Path, text: str, after: int = 0) -> int:
    """1-based number of the first line of ``path`` after line ``after`` containing ``text``."""
    hits = [i for i, line in enumerate(path.read_text().splitlines(), 1) if text in line and i > after]
    assert hits, text
    return hits[0]


def _lint_json(path: Path) -> list[dict[str, Any]]:
    res = _run("lint", str(path), "--format", "json")
    assert res.returncode in (0, 1), res.stderr
    found: list[dict[str, Any]] = json.loads(res.stdout)
    return found


def _on(findings: list[dict[str, Any]], rule: str, device: str, port: str) -> dict[str, Any]:
    hits: list[dict[str, Any]] = [f["location"] for f in findings if f["rule"] == rule
                                  and (f["location"]["device"], f["location"]["port"]) == (device, port)]
    assert len(hits) == 1, (rule, device, port, findings)
    return hits[0]


def test_ecn_finding_on_a_port_of_a_range_entry_points_at_that_entry(tmp_path: Path) -> None:
    """site.yaml at 50G (below 100G the byte counter stays on and its fast-recovery limit cycle makes the
    leaf downlinks PFC-bound, RT211; docs/derivation.md#dcqcn-byte-counter): RT211 on leaf1:Ethernet0 was
    at leaf1's ``- name: leaf1`` line; it is at the ``Ethernet[0-60/4]`` entry that declares the port."""
    inv = tmp_path / "site.yaml"
    inv.write_text((REPO / "inventories" / "site.yaml").read_text().replace("100G", "50G"))
    findings = _lint_json(inv)
    leaf1 = _line_of(inv, "- name: leaf1")
    down = _on(findings, "RT211", "leaf1", "Ethernet0")
    entry = _line_of(inv, '"Ethernet[0-60/4]"', leaf1)
    assert (down["file"], down["line"], down["path"]) == (str(inv), entry, "switches[0].ports[0]")
    assert down["col"] == 9  # the entry's ``{``
    assert down["line"] != leaf1


def _long_cable_lab(tmp_path: Path) -> Path:
    text = (REPO / "inventories" / "lab-2node.yaml").read_text()
    text = text.replace("  cnp_priority: 6\n", "  cnp_priority: 6\n  shared_headroom_pool: false\n")
    text = text.replace('switch_port: "lab-leaf1:Ethernet8", cable_length: 2m}',
                        'switch_port: "lab-leaf1:Ethernet8", cable_length: 990m, media: optic}')
    text = text.replace("      - {name: Ethernet8, speed: 400G}\n",
                        '      - {name: Ethernet8, speed: 400G}\n'
                        '      - {name: "Ethernet[16-24/8]", speed: 400G}\n')
    text += '\nlinks:\n  - {a: "lab-leaf1:Ethernet24", b: "border1:Ethernet0", cable_length: 10m}\n'
    path = tmp_path / "long-cable.yaml"
    path.write_text(text)
    return path


def test_cable_findings_point_at_the_nic_or_link_that_cables_the_port(tmp_path: Path) -> None:
    """RT201 (shorten the cable) on lab-leaf1:Ethernet8 points at node2's NIC line that gives the 990m cable,
    RT221 (make the link lossy) on lab-leaf1:Ethernet24 at the link line; both were at the switch line."""
    path = _long_cable_lab(tmp_path)
    findings = _lint_json(path)
    headroom = _on(findings, "RT201", "lab-leaf1", "Ethernet8")
    assert (headroom["file"], headroom["line"], headroom["col"], headroom["path"]) == (
        str(path), _line_of(path, "cable_length: 990m"), 9, "hosts[1].nics[0]")
    unknown = _on(findings, "RT221", "lab-leaf1", "Ethernet24")
    assert (unknown["line"], unknown["col"], unknown["path"]) == (_line_of(path, "border1:Ethernet0"), 5,
                                                                  "links[0]")
    # roce-tune plan refuses the plan and names the same position
    res = _run("plan", str(path), "--out", str(tmp_path / "out"), "--no-scorecard")
    assert res.returncode == 1
    line = _line_of(path, "cable_length: 990m")
    where = f"{path}:{line}:9 lab-leaf1:Ethernet8 hosts[1].nics[0]: error RT201"
    assert where in res.stdout + res.stderr
    assert not (tmp_path / "out").exists()


def test_fallbacks_port_declared_nowhere_host_netdev_and_pins(tmp_path: Path) -> None:
    """A port no entry declares or cables falls back to the switch; a host port (netdev) goes to its NIC;
    a finding that names a field path (a pin) keeps it; an already positioned finding is left alone."""
    path = _long_cable_lab(tmp_path)
    loaded = load_inventory(path)

    def at(device: str | None, port: str | None, rule: str = "RT211", path_: str | None = None) -> Location:
        f = Finding(rule=rule, severity=Severity.warning, message="m", fix="f",
                    location=Location(device=device, port=port, path=path_))
        return locate_findings(loaded, [f])[0].location

    assert at("lab-leaf1", "Ethernet99").path == "switches[0]"
    assert at("lab-leaf1", "Ethernet16").path == "switches[0].ports[2]"  # range entry, not cabled
    assert at("lab-leaf1", "Ethernet16", rule="RT201").path == "switches[0].ports[2]"  # no cable: the entry
    assert at("lab-leaf1", "Ethernet8").path == "switches[0].ports[1]"
    nic = at("node2", "ens1f0np0")
    assert (nic.path, nic.line) == ("hosts[1].nics[0]", _line_of(path, "cable_length: 990m"))
    pin = at("lab-leaf1", "Ethernet8", path_="policy.cnp_dscp")
    assert (pin.path, pin.line) == ("policy.cnp_dscp", _line_of(path, "cnp_dscp: 48"))
    assert at("nowhere", "Ethernet0").file == str(path) and at("nowhere", "Ethernet0").line is None
    done = Finding(rule="RT211", severity=Severity.warning, message="m", fix="f",
                   location=Location(file="x.yaml", line=3, col=4, device="lab-leaf1", port="Ethernet8"))
    assert locate_findings(loaded, [done]) == [done]
