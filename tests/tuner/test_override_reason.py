"""A pinned value's rationale names the override that pinned it and the override's ``reason``.

``policy.overrides[].reason`` (README: e.g. "vendor TAC advice") was dropped: every pinned value's source was
just "inventory override", so plan.md, plan.json and ``roce-tune explain`` could not say why a value was
pinned, nor which of several overrides pinned it. Values pinned alike by two overrides with different
reasons must each keep their own (the tuner memoises profiles, watchdogs and NIC classes by their pins)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from roce_tune.pipeline import plan_inventory

REPO = Path(__file__).resolve().parents[2]
LAB = REPO / "inventories" / "lab-2node.yaml"
PINS = """  overrides:
    - {device: lab-leaf1, port: Ethernet0, set: {kmin_bytes: 200KB}, reason: "vendor TAC advice"}
    - {device: lab-leaf1, port: Ethernet8, set: {kmin_bytes: 200KB, xoff_bytes: 200000}, reason: "long cable"}
    - {device: lab-leaf1, set: {detection_ms: 300}, reason: "TAC case 4711"}
    - {device: node1, set: {rpg_time_reset_us: 600}, reason: "NIC firmware note"}
    - {device: node2, set: {rpg_time_reset_us: 600}}
"""


def _inventory(tmp_path: Path) -> Path:
    inv = tmp_path / "lab.yaml"
    inv.write_text(LAB.read_text().replace("  cnp_priority: 6\n", "  cnp_priority: 6\n" + PINS))
    return inv


def test_pinned_values_name_their_override_and_reason(tmp_path: Path) -> None:
    res = plan_inventory(_inventory(tmp_path), None, scorecards=False)
    (sw,) = res.plan.switches
    ports = {p.name: p for p in sw.ports}
    profiles = {e.name: e for e in sw.ecn_profiles}
    kmin = {name: profiles[str(ports[name].ecn_profile)].rationale["kmin_bytes"].source
            for name in ("Ethernet0", "Ethernet8")}
    # the same pinned value on two ports, for two reasons: two profiles, each with its own reason
    assert kmin == {"Ethernet0": "inventory override policy.overrides[0] (reason: vendor TAC advice)",
                    "Ethernet8": "inventory override policy.overrides[1] (reason: long cable)"}, kmin
    hr = ports["Ethernet8"].headroom
    assert hr is not None
    assert hr.rationale["xoff_bytes"].source == (
        "inventory override for lab-leaf1:Ethernet8, policy.overrides[1] (reason: long cable)")
    assert sw.watchdog.rationale["detection_ms"].source == (
        "inventory override policy.overrides[2] (reason: TAC case 4711)")
    dq = {h.name: h.nics[0].dcqcn.rationale["rpg_time_reset_us"].source for h in res.plan.hosts}
    assert dq == {"node1": "inventory override policy.overrides[3] (reason: NIC firmware note)",
                  "node2": "inventory override policy.overrides[4] (no reason given)"}, dq
    md, plan_json = res.files["plan.md"], res.files["plan.json"]
    for text in ("vendor TAC advice", "long cable", "TAC case 4711", "NIC firmware note",
                 "policy.overrides[4] (no reason given)"):
        assert text in md, text
        assert text in plan_json, text
    json.loads(plan_json)


def test_explain_prints_the_pins_reason(tmp_path: Path) -> None:
    inv = _inventory(tmp_path)
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    proc = subprocess.run([sys.executable, "-m", "roce_tune.cli", "explain", str(inv), "lab-leaf1:Ethernet8",
                           "kmin_bytes"], capture_output=True, text=True, cwd=REPO, env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert "source:  inventory override policy.overrides[1] (reason: long cable)" in proc.stdout, proc.stdout
    assert "pinned by user; derived value" in proc.stdout, proc.stdout


def test_a_pinned_cable_length_says_it_was_pinned(tmp_path: Path) -> None:
    """A ``cable_m`` pin replaced the port's length but its rationale still said "inventory link/NIC
    cable_length" (source ``inventory``), as if the cable were 40 m long."""
    inv = tmp_path / "lab.yaml"
    inv.write_text(LAB.read_text().replace("  cnp_priority: 6\n", "  cnp_priority: 6\n  overrides:\n"
                                           "    - {device: lab-leaf1, port: Ethernet0, set: {cable_m: 40}, "
                                           "reason: \"patch panel adds 38 m\"}\n"))
    (sw,) = plan_inventory(inv, None, scorecards=False).plan.switches
    ports = {p.name: p for p in sw.ports}
    why = ports["Ethernet0"].rationale["cable_m"]
    assert (ports["Ethernet0"].cable_m, why.pinned_by_user, why.derived_value) == (40.0, True, 2.0), why
    assert why.source == ("inventory override for lab-leaf1:Ethernet0, policy.overrides[0] "
                          "(reason: patch panel adds 38 m)"), why
    assert not ports["Ethernet8"].rationale["cable_m"].pinned_by_user  # the other port keeps its cable's
    assert ports["Ethernet8"].rationale["cable_m"].formula == "inventory link/NIC cable_length"


def test_a_multi_line_reason_is_one_line_in_the_plan(tmp_path: Path) -> None:
    """A block-scalar reason (as pasted from a TAC mail) kept its line breaks: its blank line ended plan.md's
    list item and the rest read as a paragraph (or a heading) of its own."""
    inv = tmp_path / "lab.yaml"
    inv.write_text(LAB.read_text().replace("  cnp_priority: 6\n", "  cnp_priority: 6\n  overrides:\n"
                                           "    - device: lab-leaf1\n      set: {detection_ms: 300}\n"
                                           "      reason: |\n        TAC case 4711:\n\n"
                                           "        ## raise it\n"))
    res = plan_inventory(inv, None, scorecards=False)
    (sw,) = res.plan.switches
    assert sw.watchdog.rationale["detection_ms"].source == (
        "inventory override policy.overrides[0] (reason: TAC case 4711: ## raise it)")
    assert "\n## raise it" not in res.files["plan.md"]
