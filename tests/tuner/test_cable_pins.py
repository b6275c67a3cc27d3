"""A pinned ``cable_m`` is the length of the cable, and every value that depends on it follows the pin.

An engineer pins ``cable_m`` on a switch port because the real cable differs from the inventory (a 100 m run
recorded as 2 m, an imported inventory nobody may edit). The pin moved only that port's headroom: the
fabric's base RTT (and the ECN thresholds derived from it) still read the inventory's lengths, the NIC at the
other end of the same cable kept ``mlnx_qos --cable_len 2`` and its 2 m xoff, the far switch port of a
switch-to-switch cable kept its short-cable headroom, and plan.md's "values pinned by user" section did not
list the pin at all. Each test compares the pinned plan with the plan of the same inventory whose cable is
simply recorded at the pinned length: the values must be the same, and the rationale must name the pin.
"""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import yaml

from roce_tune.inventory.loader import load_inventory_text
from roce_tune.inventory.synthetic import rail_optimised_fabric
from roce_tune.pipeline import derive_device, derive_plan, plan_inventory
from roce_tune.plan import Plan

REPO = Path(__file__).resolve().parents[2]
LAB = REPO / "inventories" / "lab-2node.yaml"
REASON = "100 m run recorded as 2 m"
PIN = ("  overrides:\n"
       f"    - {{device: lab-leaf1, port: Ethernet0, set: {{cable_m: 100}}, reason: \"{REASON}\"}}\n")
LABEL = f"lab-leaf1:Ethernet0, policy.overrides[0] (reason: {REASON})"
NIC1 = ("switch_port: \"lab-leaf1:Ethernet0\", cable_length: 2m}")


def _lab(tmp_path: Path, *, pinned: bool) -> Path:
    """lab-2node with the cable of lab-leaf1:Ethernet0 (node1's NIC) pinned to 100 m, or recorded so."""
    text = LAB.read_text()
    assert NIC1 in text
    text = (text.replace("  cnp_priority: 6\n", "  cnp_priority: 6\n" + PIN) if pinned
            else text.replace(NIC1, NIC1.replace("2m", "100m")))
    inv = tmp_path / ("pinned.yaml" if pinned else "recorded.yaml")
    inv.write_text(text)
    return inv


def _bare(value: Any) -> Any:
    """``value`` (a model dump) without any ``rationale``: the numbers only."""
    if isinstance(value, dict):
        return {k: _bare(v) for k, v in value.items() if k != "rationale"}
    if isinstance(value, list):
        return [_bare(v) for v in value]
    return value


def _values(plan: Plan) -> dict[str, Any]:
    """Every value a cable's length reaches, without rationale."""
    (sw,) = plan.switches
    ports = {p.name: p for p in sw.ports}
    hr = {n: p.headroom.model_dump(exclude={"rationale"}) for n, p in ports.items() if p.headroom}
    ecn = [e.model_dump(exclude={"rationale"}) for e in sw.ecn_profiles]
    nics = {h.name: (n.cable_m, n.nic_xoff_bytes) for h in plan.hosts for n in h.nics}
    return {"cable": {n: p.cable_m for n, p in ports.items()}, "headroom": hr, "ecn": ecn, "nics": nics,
            "buffers": _bare(sw.buffers.model_dump()),
            "base_rtt": [n for n in plan.notes if n.startswith("base RTT")][0].split(";")[0]}


def test_a_pinned_host_cable_moves_every_value_the_recorded_length_would(tmp_path: Path) -> None:
    """The base RTT (ECN Kmin/Kmax, BDP) and the NIC end (cable_len, NIC xoff) kept the inventory's 2 m."""
    pinned = plan_inventory(_lab(tmp_path, pinned=True), None, scorecards=False).plan
    recorded = plan_inventory(_lab(tmp_path, pinned=False), None, scorecards=False).plan
    assert _values(pinned) == _values(recorded)
    assert _values(pinned)["nics"]["node1"][0] == 100.0


def test_values_that_follow_a_pinned_cable_name_the_pin(tmp_path: Path) -> None:
    res = plan_inventory(_lab(tmp_path, pinned=True), None, scorecards=False)
    plan = res.plan
    (sw,) = plan.switches
    ports = {p.name: p for p in sw.ports}
    hr = ports["Ethernet0"].headroom
    assert hr is not None and LABEL in hr.rationale["xoff_bytes"].note, hr.rationale["xoff_bytes"]
    other = ports["Ethernet8"].headroom
    assert other is not None and "pinned" not in other.rationale["xoff_bytes"].note
    (prof,) = sw.ecn_profiles
    for key in ("kmin_bytes", "kmax_bytes"):
        assert f"100.0 m at {LABEL.replace(', ', ', pinned by ', 1)}" in prof.rationale[key].note, key
    assert any("base RTT counts pinned cable lengths" in n and REASON in n for n in plan.notes)
    nics = {h.name: h.nics[0] for h in plan.hosts}
    why = nics["node1"].rationale["cable_m"]
    assert (why.pinned_by_user, why.derived_value) == (True, 2.0)
    assert why.source == f"inventory override for {LABEL}"
    assert LABEL in nics["node1"].rationale["nic_xoff_bytes"].note
    assert "cable_m" not in nics["node2"].rationale  # node2's cable is not pinned
    assert "cable 100.0 m" in res.files["hosts/node1.sh"] and "cable 2.0 m" in res.files["hosts/node2.sh"]
    # plan.json carries the same rationale (shared sections resolved by their $ref)
    shared = json.loads(res.files["plan.json"])["shared"]
    nic_why = [w for w in shared["NicRationale"].values() if "cable_m" in w]
    assert len(nic_why) == 1 and nic_why[0]["cable_m"]["pinned_by_user"], nic_why


def test_plan_md_lists_a_pinned_cable_with_its_override(tmp_path: Path) -> None:
    """The section "Values that differ from defaults, and values pinned by user" listed pinned xoff/Kmin but
    not a pinned cable length; the headroom table's cable column did not say it was pinned."""
    md = plan_inventory(_lab(tmp_path, pinned=True), None, scorecards=False).files["plan.md"]
    section = md.split("## Values that differ from defaults, and values pinned by user", 1)[1]
    section = section.split("\n## ")[0]
    lines = [ln for ln in section.splitlines() if "cable_m = " in ln]
    assert len(lines) == 2, lines
    switch_end, nic_end = lines
    assert switch_end.startswith("- `lab-leaf1:Ethernet0` cable_m = 100.0 (pinned by user)")
    assert LABEL in switch_end
    assert nic_end.startswith("- `node1:ens1f0np0` cable_m = 100.0 (pinned by user)") and LABEL in nic_end
    assert "| 100.0 (pinned) |" in md and "| 2.0 |" in md


def test_explain_shows_where_the_cable_length_came_from(tmp_path: Path) -> None:
    inv = _lab(tmp_path, pinned=True)
    env = {**os.environ, "PYTHONPATH": str(REPO)}

    def explain(*args: str) -> str:
        proc = subprocess.run([sys.executable, "-m", "roce_tune.cli", "explain", str(inv), *args],
                              capture_output=True, text=True, cwd=REPO, env=env, timeout=300)
        assert proc.returncode == 0, proc.stderr
        return proc.stdout

    xoff = explain("lab-leaf1:Ethernet0", "xoff_bytes")
    assert "cable_m=100.0" in xoff and f"cable_m 100.0 pinned by inventory override for {LABEL}" in xoff, xoff
    kmax = explain("lab-leaf1:Ethernet0", "kmax_bytes")
    assert "base RTT counts pinned cable lengths: 100.0 m at lab-leaf1:Ethernet0" in kmax, kmax
    nic = explain("node1:ens1f0np0", "cable_m")
    assert f"source:  inventory override for {LABEL}" in nic and "derived value 2.0" in nic, nic


# a two-tier fabric: leaves cabled to spines with 30 m optics
FABRIC = rail_optimised_fabric(64)
LEAF, SPINE = "su0-leaf1", "p0-spine0"


def _uplink(data: dict[str, Any]) -> dict[str, Any]:
    return next(lk for lk in data["links"]
                if lk["a"].startswith(f"{LEAF}:") and lk["b"].startswith(f"{SPINE}:"))


def _fabric(overrides: list[dict[str, Any]] | None = None, cable: str | None = None) -> Any:
    data = copy.deepcopy(FABRIC)
    if overrides:
        data.setdefault("policy", {})["overrides"] = overrides
    if cable:
        _uplink(data)["cable_length"] = cable
    return load_inventory_text(yaml.safe_dump(data, sort_keys=False), "fabric.yaml")


def test_a_pin_on_one_end_of_a_switch_cable_moves_the_other_end_and_the_base_rtt() -> None:
    """The spine end of a leaf uplink pinned to 150 m: the leaf end (its ingress headroom absorbs what is in
    flight on the same cable) and the base RTT (a longest leaf-to-spine cable) kept the inventory's 30 m."""
    link = _uplink(copy.deepcopy(FABRIC))
    spine, spine_port = link["b"].split(":")
    leaf_port = link["a"].split(":")[1]
    pinned = derive_plan(_fabric([{"device": spine, "port": spine_port, "set": {"cable_m": 150},
                                   "reason": "patch panel"}]))
    recorded = derive_plan(_fabric(cable="150m"))

    def facts(plan: Plan) -> tuple[Any, ...]:
        lp = next(p for p in plan.switch(LEAF).ports if p.name == leaf_port)
        sp = next(p for p in plan.switch(spine).ports if p.name == spine_port)
        return (lp.cable_m, sp.cable_m, lp.headroom and lp.headroom.xoff_bytes,
                sp.headroom and sp.headroom.xoff_bytes, plan.switch(LEAF).ecn_profiles[0].base_rtt_us,
                plan.switch(spine).ecn_profiles[0].kmin_bytes)

    assert facts(pinned) == facts(recorded)
    assert facts(pinned)[0] == 150.0
    lp = next(p for p in pinned.switch(LEAF).ports if p.name == leaf_port)
    why = lp.rationale["cable_m"]
    assert why.pinned_by_user and why.derived_value == 30.0 and why.pin_path("cable_m") == (
        "policy.overrides[0].set.cable_m")
    assert why.source == (f"inventory override for {spine}:{spine_port}, policy.overrides[0] "
                          "(reason: patch panel)")
    # explain derives only what the switch depends on: the same values and rationale as the full plan
    loaded = _fabric([{"device": spine, "port": spine_port, "set": {"cable_m": 150},
                       "reason": "patch panel"}])
    for name in (LEAF, spine):
        assert derive_device(loaded, name).switches[-1] == pinned.switch(name)


def test_the_more_specific_pin_of_a_cable_wins_at_both_ends() -> None:
    """A role pin at one end and a port pin at the other describe one cable: the port pin wins (overrides
    resolve port over device over role over site), at both ends."""
    link = _uplink(copy.deepcopy(FABRIC))
    spine, spine_port = link["b"].split(":")
    leaf_port = link["a"].split(":")[1]
    plan = derive_plan(_fabric([{"device": spine, "port": spine_port, "set": {"cable_m": 150}},
                                {"role": "leaf", "set": {"cable_m": 5}}]))
    lp = next(p for p in plan.switch(LEAF).ports if p.name == leaf_port)
    sp = next(p for p in plan.switch(spine).ports if p.name == spine_port)
    assert (lp.cable_m, sp.cable_m) == (150.0, 150.0)
    assert lp.rationale["cable_m"].source.startswith(f"inventory override for {spine}:{spine_port}, "
                                                     "policy.overrides[0]")
    other = next(p for p in plan.switch(LEAF).ports if p.peer and p.name != leaf_port)
    assert other.cable_m == 5.0  # the leaf's other cables take the role pin


def test_a_role_wide_cable_pin_is_a_few_lines_of_plan_md() -> None:
    """A role-wide pin reaches thousands of cable ends (every spine port and every leaf uplink): plan.md lists
    one line per length and override entry, naming the first ends and how many more."""
    from roce_tune.render.review import render_review

    loaded = _fabric([{"role": "spine", "set": {"cable_m": 40}, "reason": "re-measured"}])
    plan = derive_plan(loaded)
    md = render_review(plan)
    lines = [ln for ln in md.splitlines() if "cable_m = 40.0 (pinned by user)" in ln]
    # what the pin reaches, from the fabric: every spine port and the leaf end of every leaf-spine link
    spines = {sw.name for sw in loaded.inventory.switches if sw.role == "spine"}
    spine_ports = sum(len(sw.ports) for sw in plan.switches if sw.name in spines)
    far_ends = sum((a.split(":")[0] in spines) != (b.split(":")[0] in spines)
                   for a, b in ((link.a, link.b) for link in loaded.inventory.links))
    assert (spine_ports, far_ends) == (512, 256)
    counts = [int(ln.split(" cable ends", 1)[0].removeprefix("- ")) for ln in lines]
    assert len(lines) == 3, lines  # the far (leaf) ends, and the spine ports down and up
    assert sum(counts) == spine_ports + far_ends, (counts, spine_ports, far_ends)
    for ln, n in zip(lines, counts):  # the first 8 ends named, then how many more
        assert "policy.overrides[0] (reason: re-measured)" in ln and f" and {n - 8} more)" in ln, ln
        assert ln.split(" and ", 1)[0].count("`") == 16, ln


def test_a_pinned_cable_the_nic_cannot_take_is_rt128_at_the_pin(tmp_path: Path) -> None:
    """The NIC end follows the pin, so a pin beyond mlnx_qos --cable_len's 1..999 m passed lint and failed
    rendering the host script (RT299, "please report it as a roce-tune bug")."""
    from roce_tune.inventory.lint import lint_text

    text = _lab(tmp_path, pinned=True).read_text()
    (f,) = [f for f in lint_text(text.replace("cable_m: 100}", "cable_m: 5000}"), "inv.yaml")
            if f.rule == "RT128"]
    assert (f.severity.value, f.location.path) == ("error", "policy.overrides[0].set.cable_m")
    assert "node1 ens1f0np0" in f.message and "lab-leaf1:Ethernet0" in f.message
    assert not [f for f in lint_text(text, "inv.yaml") if f.rule == "RT128"]


def test_a_pinned_cable_without_a_recorded_length_is_not_rt107(tmp_path: Path) -> None:
    """RT107 warned that "headroom uses 3 m from defaults.cable_length" for a cable whose length a pin gives
    (the NIC and both switch ends use the pin)."""
    from roce_tune.inventory.lint import lint_text

    text = _lab(tmp_path, pinned=True).read_text().replace(NIC1, NIC1.replace(", cable_length: 2m", ""))
    unpinned = text.replace(PIN, "")
    assert [f.location.device for f in lint_text(unpinned, "inv.yaml") if f.rule == "RT107"] == ["node1"]
    assert not [f for f in lint_text(text, "inv.yaml") if f.rule == "RT107"]
    link = _uplink(copy.deepcopy(FABRIC))
    spine, spine_port = link["b"].split(":")
    data = copy.deepcopy(FABRIC)
    del _uplink(data)["cable_length"]
    rt107 = [f.location.path for f in lint_text(yaml.safe_dump(data, sort_keys=False), "f.yaml")
             if f.rule == "RT107"]
    data["policy"] = {"overrides": [{"device": spine, "port": spine_port, "set": {"cable_m": 30}}]}
    assert len(rt107) == 1 and not [f for f in lint_text(yaml.safe_dump(data, sort_keys=False), "f.yaml")
                                    if f.rule == "RT107"]


def test_a_pin_that_shortens_the_longest_cable_is_named_by_the_base_rtt(tmp_path: Path) -> None:
    """node1's cable recorded as 100 m (the inventory's longest host cable) and pinned to 2 m: the base RTT
    follows the pin (the same as the inventory with the cable recorded at 2 m), but its note named only pins
    that set a longest cable, so the pin that moved it (node2's unpinned 2 m cable is now the longest) was
    not named anywhere the base RTT is explained."""
    reason = "re-measured: 2 m, recorded as 100 m"
    text = LAB.read_text()
    shortened = text.replace(NIC1, NIC1.replace("2m", "100m")).replace(
        "  cnp_priority: 6\n", "  cnp_priority: 6\n" + PIN.replace("cable_m: 100", "cable_m: 2")
        .replace(REASON, reason))
    inv = tmp_path / "shortened.yaml"
    inv.write_text(shortened)
    plan = plan_inventory(inv, None, scorecards=False).plan
    same = plan_inventory(LAB, None, scorecards=False).plan
    assert plan.switches[0].ecn_profiles[0].base_rtt_us == same.switches[0].ecn_profiles[0].base_rtt_us
    said = (f"2.0 m at lab-leaf1:Ethernet0 instead of the recorded 100.0 m (the inventory's longest host "
            f"cable), pinned by policy.overrides[0] (reason: {reason})")
    (note,) = [n for n in plan.notes if n.startswith("base RTT")]
    assert "base RTT counts pinned cable lengths: " in note and said in note, note
    (prof,) = plan.switches[0].ecn_profiles
    rtt_values = [k for k, why in prof.rationale.items() if "base_rtt_us" in why.inputs]
    assert {"kmin_bytes", "kmax_bytes"} <= set(rtt_values), rtt_values
    for key in rtt_values:  # every value derived from the base RTT repeats what it says of the pin
        assert said in prof.rationale[key].note, (key, prof.rationale[key].note)
    # a pin that shortens a cable that is not the longest leaves the base RTT alone and is not named
    other = text.replace(
        "  cnp_priority: 6\n", "  cnp_priority: 6\n" + PIN.replace("cable_m: 100", "cable_m: 1"))
    inv.write_text(other)
    plan = plan_inventory(inv, None, scorecards=False).plan
    assert plan.switches[0].ecn_profiles[0].base_rtt_us == same.switches[0].ecn_profiles[0].base_rtt_us
    assert not [n for n in plan.notes if "pinned cable lengths" in n]


def test_a_pin_that_shortens_the_longest_uplink_is_named_by_the_base_rtt() -> None:
    """A leaf uplink recorded as 150 m (every other uplink is 30 m) and pinned to 30 m at its spine end: the
    base RTT is the all-30 m fabric's, and its note names the pin that brought the longest uplink down."""
    link = _uplink(copy.deepcopy(FABRIC))
    spine, spine_port = link["b"].split(":")
    pinned = derive_plan(_fabric([{"device": spine, "port": spine_port, "set": {"cable_m": 30},
                                   "reason": "patch panel"}], cable="150m"))
    plain = derive_plan(_fabric())
    assert pinned.switch(LEAF).ecn_profiles[0].base_rtt_us == plain.switch(LEAF).ecn_profiles[0].base_rtt_us
    (note,) = [n for n in pinned.notes if n.startswith("base RTT")]
    assert (f"30.0 m at {spine}:{spine_port} instead of the recorded 150.0 m (the inventory's longest cable "
            "from a tier-0 switch up), pinned by policy.overrides[0] (reason: patch panel)") in note, note
