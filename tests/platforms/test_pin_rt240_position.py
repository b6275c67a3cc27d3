"""A pinned value its platform cannot write is refused (RT240) at the override entry that pinned it.

``pmax_percent: 0.5`` pinned for a SONiC switch (WRED_PROFILE takes an integer percent) or 2.5 for Cumulus
(NVUE: integer 1..100) was reported at the switch's line, whose entry holds nothing to change; the line to
change is the pin (``policy.overrides[i].set.pmax_percent``). ``roce-tune lint`` and ``roce-tune plan`` both
report it (lint from the platforms' checks, plan from rendering). The tuner's RT210/RT237 on a pinned ECN ramp
likewise point at the pin."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from roce_tune.pipeline import plan_inventory
from roce_tune.platforms import cannot_render_finding
from roce_tune.platforms.base import CannotExpressValue

REPO = Path(__file__).resolve().parents[2]
LAB = REPO / "inventories" / "lab-2node.yaml"
PIN = '    - {device: lab-leaf1, set: {pmax_percent: %s}, reason: "vendor TAC advice"}\n'
WD_PIN = '    - {device: lab-leaf1, set: {%s}, reason: "vendor TAC advice"}\n'


def _as_platform(text: str, platform: str) -> str:
    """lab-2node's SONiC leaf as a ``platform`` switch, its ports named as that platform names physical ports
    (Cumulus ``swpN``; RT139 stops lint before the platforms' checks otherwise)."""
    text = text.replace("platform: sonic", f"platform: {platform}")
    if platform == "cumulus":
        text = text.replace("Ethernet0", "swp1").replace("Ethernet8", "swp2")
    return text


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.run([sys.executable, "-m", "roce_tune.cli", *args], capture_output=True, text=True,
                          cwd=REPO, env=env, timeout=300)


@pytest.mark.parametrize(("platform", "pmax", "says"), [
    ("sonic", "0.5", "cannot be written to SONiC (integer percent 0..100)"),
    ("cumulus", "2.5", "cannot be written to NVUE (integer 1..100)"),
])
def test_unwritable_pin_is_reported_at_the_override(tmp_path: Path, platform: str, pmax: str,
                                                    says: str) -> None:
    text = LAB.read_text().replace("  cnp_priority: 6\n", "  cnp_priority: 6\n  overrides:\n" + PIN % pmax)
    text = _as_platform(text, platform)
    inv = tmp_path / "lab.yaml"
    inv.write_text(text)
    line = text.splitlines().index((PIN % pmax).rstrip("\n")) + 1
    col = (PIN % pmax).index(pmax) + 1
    where = f"{inv}:{line}:{col} lab-leaf1 policy.overrides[0].set.pmax_percent: error RT240:"
    lint = _run("lint", str(inv))
    plan = _run("plan", str(inv), "--out", str(tmp_path / "out"), "--no-scorecard")
    for proc in (lint, plan):
        assert proc.returncode != 0
        (rt240,) = [ln for ln in (proc.stdout + proc.stderr).splitlines() if "RT240" in ln]
        assert rt240.startswith(where), rt240
        assert says in rt240 and "fix: pin pmax_percent at policy.overrides[0].set.pmax_percent" in rt240
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(("pin", "key", "says"), [
    ("action: forward", "action", "Cumulus PFC watchdog can only drop, the plan asks for 'forward'"),
    ("detection_ms: 350", "detection_ms", "detection 350 ms is not a whole number of 200 ms polls"),
    ("poll_ms: 150", "poll_ms", "detection 200 ms is not a whole number of 150 ms polls"),
])
def test_unwritable_watchdog_pin_is_reported_at_the_override(tmp_path: Path, pin: str, key: str,
                                                             says: str) -> None:
    """NVUE's PFC watchdog only drops and counts detection in whole polls (robustness)."""
    text = LAB.read_text().replace("  cnp_priority: 6\n", "  cnp_priority: 6\n  overrides:\n" + WD_PIN % pin)
    text = _as_platform(text, "cumulus")
    inv = tmp_path / "lab.yaml"
    inv.write_text(text)
    line = text.splitlines().index((WD_PIN % pin).rstrip("\n")) + 1
    col = (WD_PIN % pin).index(pin.split(": ")[1]) + 1
    proc = _run("lint", str(inv))
    (rt240,) = [ln for ln in proc.stdout.splitlines() if "RT240" in ln]
    where = f"{inv}:{line}:{col} lab-leaf1 policy.overrides[0].set.{key}: error RT240:"
    assert rt240.startswith(where), rt240
    assert says in rt240, rt240


def test_unwritable_derived_value_stays_at_the_switch() -> None:
    """Without a pin nothing in ``policy.overrides`` is to blame: the RT240 keeps the switch's position."""
    plan = plan_inventory(LAB, None, scorecards=False).plan
    (sw,) = plan.switches
    (e,) = sw.ecn_profiles
    derived = CannotExpressValue("x cannot be written", "pmax_percent", e.rationale["pmax_percent"])
    assert not e.rationale["pmax_percent"].pinned_by_user
    for exc in (derived, CannotExpressValue("x", "pmax_percent", None), ValueError("x")):
        f = cannot_render_finding(sw, exc)
        assert (f.rule, f.location.device, f.location.path) == ("RT240", "lab-leaf1", None), f
        assert f.fix.startswith("check that the platform runs on this switch model"), f.fix


@pytest.mark.parametrize("pin", ["kmax_bytes: 50MB", "kmin_bytes: 40MB"])
def test_an_ecn_pin_above_the_pfc_onset_is_reported_at_the_override(tmp_path: Path, pin: str) -> None:
    """RT210/RT237 (Kmax above the egress PFC onset) of a pinned ramp were at the port's and the switch's
    line; the value to change is the pin (a Kmin pin moves the unpinned Kmax above it, so it is to blame)."""
    entry = f"    - {{device: lab-leaf1, port: Ethernet0, set: {{{pin}}}}}\n"
    text = LAB.read_text().replace("  cnp_priority: 6\n", "  cnp_priority: 6\n  overrides:\n" + entry)
    inv = tmp_path / "lab.yaml"
    inv.write_text(text)
    line = text.splitlines().index(entry.rstrip("\n")) + 1
    col = entry.index(pin.split(": ")[1]) + 1
    where = f"{inv}:{line}:{col} lab-leaf1"
    proc = _run("lint", str(inv))
    found = {ln.split(" error ")[1][:5] for ln in proc.stdout.splitlines() if " error RT2" in ln}
    assert found == {"RT210", "RT237"}, proc.stdout
    for ln in proc.stdout.splitlines():
        if " error RT2" in ln:
            assert ln.startswith(where) and f"policy.overrides[0].set.{pin.split(':')[0]}: error" in ln, ln
