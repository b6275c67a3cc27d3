"""The dry run shows every global map entry a push replaces (EOS ``qos map dscp …``, ``qos map cos …``,
``qos map traffic-class …``), and a map the switch holds on other lines is no change.

EOS keeps one traffic class per DSCP (per CoS, one tx-queue per TC): ``qos map dscp 26 to traffic-class 3``
moves DSCP 26 off a running ``qos map dscp 24 26 to traffic-class 1``, and running-config lists the DSCPs of
one traffic class on one line (EOS User Manual, Quality of Service, ``qos map dscp to traffic-class``). The
diff compared whole lines: the dry run listed only ``+ qos map dscp 26 to traffic-class 3``, not the old
mapping going, and a switch holding the planned map grouped otherwise (``qos map dscp 26 48 …``) was a
change on every run.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from roce_tune.deploy.drivers import compute_change
from tests.deploy.conftest import colleague_session, emulated_inventory

GOLDEN = Path(__file__).resolve().parents[1] / "golden" / "eos" / "mixed-vendor" / "leaf1.cfg"
TC0 = ("qos map dscp 0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 27 28 29 30 31 32 "
       "33 34 35 36 37 38 39 40 41 42 43 44 45 46 47 49 50 51 52 53 54 55 56 57 58 59 60 61 62 63 to "
       "traffic-class 0")


@pytest.mark.parametrize(("old", "new", "diff", "commands"), [
    ("qos map dscp 26 to traffic-class 3", "qos map dscp 26 to traffic-class 1",
     ["- qos map dscp 26 to traffic-class 1", "+ qos map dscp 26 to traffic-class 3"],
     ["qos map dscp 26 to traffic-class 3"]),
    # DSCP 24 moves back to TC 0 with the plan's TC-0 line; 26 to TC 3
    ("qos map dscp 26 to traffic-class 3", "qos map dscp 24 26 to traffic-class 1",
     ["- qos map dscp 24 26 to traffic-class 1", f"+ {TC0}", "+ qos map dscp 26 to traffic-class 3"],
     [TC0, "qos map dscp 26 to traffic-class 3"]),
    # the running line keeps its other DSCP: shown as it will read
    ("qos map dscp 48 to traffic-class 6", "qos map dscp 26 48 to traffic-class 6",
     ["- qos map dscp 26 48 to traffic-class 6", "+ qos map dscp 48 to traffic-class 6",
      "+ qos map dscp 26 to traffic-class 3"],
     ["qos map dscp 26 to traffic-class 3"]),
    ("qos map traffic-class 3 to tx-queue 3", "qos map traffic-class 3 to tx-queue 0",
     ["- qos map traffic-class 3 to tx-queue 0", "+ qos map traffic-class 3 to tx-queue 3"],
     ["qos map traffic-class 3 to tx-queue 3"]),
])
def test_a_replaced_map_entry_is_shown_removed(old: str, new: str, diff: list[str],
                                               commands: list[str]) -> None:
    desired = GOLDEN.read_text()
    running = desired.replace(f"{old}\n", f"{new}\n", 1)
    if new.startswith("qos map dscp 26 48"):  # the switch lists DSCP 26 once
        running = running.replace("qos map dscp 26 to traffic-class 3\n", "", 1)
    change = compute_change("eos", running, desired, {"Ethernet5/1"})
    assert change.diff == diff
    assert change.commands == commands
    assert compute_change("eos", desired, desired, {"Ethernet5/1"}).empty  # re-applied: no change


@pytest.mark.parametrize(("platform", "name", "ours", "theirs"), [
    ("eos", "leaf1", "priority-flow-control pause watchdog default timeout 0.2",
     "priority-flow-control pause watchdog default timeout 0.5"),
    ("eos", "leaf1", "priority-flow-control pause watchdog default recovery-time 0.2",
     "priority-flow-control pause watchdog default recovery-time 1.0"),
    ("eos", "leaf1", "priority-flow-control pause watchdog default polling-interval 0.1",
     "priority-flow-control pause watchdog default polling-interval 0.05"),
    # on | off (Nexus 9000 QoS configuration guide, "Configuring a Priority Flow Control Watchdog Interval")
    ("nxos", "spine1", "priority-flow-control watch-dog-interval on",
     "priority-flow-control watch-dog-interval off"),
])
def test_a_replaced_global_value_is_shown_removed(platform: str, name: str, ours: str, theirs: str) -> None:
    """A global single-value line (the watchdog's timers and state): the new value replaces the old one on
    the switch, so the dry run shows the old one go and the push sends the new line alone."""
    desired = (GOLDEN.parents[2] / platform / "mixed-vendor" / f"{name}.cfg").read_text()
    running = desired.replace(f"\n{ours}\n", f"\n{theirs}\n", 1)
    assert running != desired
    change = compute_change(platform, running, desired, {"Ethernet1/1"})
    assert change.diff == [f"- {theirs}", f"+ {ours}"]
    assert change.commands == [ours]


def test_the_planned_map_grouped_otherwise_is_no_change() -> None:
    desired = GOLDEN.read_text()
    # running-config lists DSCPs by traffic class; another cos map and an unrelated map stay untouched
    running = (desired.replace("qos map dscp 26 to traffic-class 3\nqos map dscp 48 to traffic-class 6\n",
                               "qos map dscp 48 to traffic-class 6\nqos map dscp 26 to traffic-class 3\n"
                               "qos map cos 1 2 to traffic-class 2\n")
               .replace("qos map traffic-class 0 to tx-queue 0\nqos map traffic-class 1 to tx-queue 0\n",
                        "qos map traffic-class 0 1 to tx-queue 0\n"))
    assert running != desired
    assert compute_change("eos", running, desired, {"Ethernet5/1"}).empty


def test_apply_replaces_an_operators_dscp_map_on_eos(tmp_path: Path) -> None:
    from roce_tune.deploy.apply import load_source
    from roce_tune.deploy.drivers import PushOptions
    from roce_tune.deploy.runner import ApplyOptions, apply_targets
    from tests.emulators import LOOPBACK_TIMING

    fleet, inv, known = emulated_inventory("mixed-vendor.yaml", tmp_path)
    with fleet:
        colleague_session(fleet, "leaf1", ["qos map dscp 24 26 to traffic-class 1",
                                           "qos map dscp 48 to traffic-class 5",
                                           "priority-flow-control pause watchdog default timeout 0.5"],
                          config_mode=True)
        (target,) = [t for t in load_source(inv)[0] if t.name == "leaf1"]

        def run(dry: bool):  # type: ignore[no-untyped-def]
            opts = ApplyOptions(known_hosts=str(known), log_dir=tmp_path / "logs", timing=LOOPBACK_TIMING,
                                allow_disruptive=True, dry_run=dry,
                                push=PushOptions(confirm_s=60, read_timeout_s=20))
            (res,) = apply_targets([target], opts)
            return res

        dry = run(True)
        assert dry.state == "would-change", dry.error
        diff = [d.strip() for d in dry.diff]
        for line in ("- qos map dscp 24 26 to traffic-class 1", "- qos map dscp 48 to traffic-class 5",
                     "+ qos map dscp 26 to traffic-class 3", "+ qos map dscp 48 to traffic-class 6",
                     "- priority-flow-control pause watchdog default timeout 0.5",
                     "+ priority-flow-control pause watchdog default timeout 0.2"):
            assert line in diff, dry.diff
        pushed = run(False)
        assert pushed.state == "pushed", pushed.error
        running = fleet["leaf1"].running_config()
        maps = [ln for ln in running.splitlines() if ln.startswith("qos map dscp")]
        assert maps == [TC0, "qos map dscp 26 to traffic-class 3", "qos map dscp 48 to traffic-class 6"]
        assert [ln for ln in running.splitlines() if "watchdog default timeout" in ln] == [
            "priority-flow-control pause watchdog default timeout 0.2"]
        again = run(True)
        assert again.state == "no-change", again.diff
