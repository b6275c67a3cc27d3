"""RT141: overrides that pin the two ends of one cable to different lengths are a lint warning at the losing
override, naming both overrides and the length used.

``pinned_cables`` makes the more specific pin the cable's length at both ends (port over device over role over
site, the later of equals); the other pin was dropped silently, so an engineer who pinned spine ports at 25 m
never learnt that a leaf's port pin of 40 m was used on the same cable instead."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SITE = REPO / "inventories" / "site.yaml"
ANCHOR = "  ecn_profile: derived\n"


def _lint(tmp_path: Path, overrides: str) -> tuple[int, str, list[dict[str, object]]]:
    """Lint site.yaml with ``overrides`` (YAML list entries) under ``policy.overrides``: (rc, text, RT141)."""
    text = SITE.read_text()
    assert text.count(ANCHOR) == 1
    text = text.replace(ANCHOR, ANCHOR + "  overrides:\n" + overrides)
    inv = tmp_path / "site.yaml"
    inv.write_text(text)
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    proc = subprocess.run([sys.executable, "-m", "roce_tune.cli", "lint", str(inv), "--format", "json"],
                          capture_output=True, text=True, cwd=REPO, env=env, timeout=300)
    data = json.loads(proc.stdout)
    findings = data["findings"] if isinstance(data, dict) else data
    return proc.returncode, text, [f for f in findings if f["rule"] == "RT141"]


def test_a_losing_device_pin_is_reported_at_its_override(tmp_path: Path) -> None:
    """leaf1:Ethernet64 <-> spine1:Ethernet0: the port pin (40 m) beats spine1's device pin (25 m)."""
    rc, text, found = _lint(tmp_path, (
        '    - {device: leaf1, port: Ethernet64, set: {cable_m: 40}, reason: "measured run"}\n'
        '    - {device: spine1, set: {cable_m: 25}, reason: "spine cables"}\n'))
    assert rc == 0  # a warning
    (f,) = [f for f in found if "leaf1:Ethernet64" in str(f["message"])]
    loc = f["location"]
    assert isinstance(loc, dict)
    line = text.splitlines().index('    - {device: spine1, set: {cable_m: 25}, reason: "spine cables"}') + 1
    assert (f["severity"], loc["line"], loc["path"]) == ("warning", line, "policy.overrides[1].set.cable_m")
    msg = str(f["message"])
    assert "spine1:Ethernet0 <-> leaf1:Ethernet64" in msg
    assert "policy.overrides[1] (reason: spine cables) pins cable_m 25 m" in msg
    assert "policy.overrides[0] (reason: measured run) pins 40 m; 40 m is used at both ends" in msg
    # spine1's other cables have no pin at the leaf end: the device pin holds there, no finding
    assert len(found) == 1, found


def test_later_of_two_port_pins_wins_and_the_earlier_is_reported(tmp_path: Path) -> None:
    rc, _, found = _lint(tmp_path, (
        "    - {device: spine1, port: Ethernet0, set: {cable_m: 25}}\n"
        "    - {device: leaf1, port: Ethernet64, set: {cable_m: 40}}\n"))
    (f,) = found
    loc = f["location"]
    assert isinstance(loc, dict)
    assert loc["path"] == "policy.overrides[0].set.cable_m"
    assert "policy.overrides[0] (no reason given) pins cable_m 25 m" in str(f["message"])
    assert "40 m is used at both ends" in str(f["message"])


def test_agreeing_or_one_sided_pins_pass(tmp_path: Path) -> None:
    assert _lint(tmp_path, ("    - {device: spine1, port: Ethernet0, set: {cable_m: 40}}\n"
                            "    - {device: leaf1, port: Ethernet64, set: {cable_m: 40}}\n"))[2] == []
    assert _lint(tmp_path, "    - {device: leaf1, port: Ethernet64, set: {cable_m: 40}}\n")[2] == []
    assert _lint(tmp_path, "    - {role: spine, set: {cable_m: 40}}\n")[2] == []
