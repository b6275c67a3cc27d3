"""Hand-written inventories with the slips a new engineer makes: each must end in a positioned error
(or lint finding), never be accepted with a silently different meaning. Both YAML readers (the fast
block-subset reader and ruamel.yaml) must agree (``reader`` fixture)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from roce_tune.inventory import loader
from roce_tune.inventory.lint import lint_text
from roce_tune.inventory.models import parse_pin
from roce_tune.inventory.rules import RULES
from tests.inventory.conftest import load_errors

REPO = Path(__file__).resolve().parents[2]
LAB = (REPO / "inventories" / "lab-2node.yaml").read_text(encoding="utf-8")


def _lab(old: str, new: str) -> str:
    assert old in LAB
    return LAB.replace(old, new, 1)


PORT0 = "{name: Ethernet0, speed: 400G}"


@pytest.mark.parametrize(("old", "new", "line", "col", "words"), [
    # YAML 1.2 (ruamel's default, and the fast reader's): only true/false are booleans
    (PORT0, '{name: Ethernet0, speed: 400G, admin_up: "no"}', 29, 50, "true or false, got the text 'no'"),
    (PORT0, "{name: Ethernet0, speed: 400G, admin_up: off}", 29, 50, "true or false, got the text 'off'"),
    (PORT0, '{name: Ethernet0, speed: 400G, admin_up: "false"}', 29, 50, "true or false, got the text"),
    (PORT0, "{name: Ethernet0, speed: 400G, admin_up: 0}", 29, 50, "true or false, got 0"),
    # a boolean is not a priority, a DSCP or a port number; a quoted number is text
    ("cnp_priority: 6", "cnp_priority: true", 16, 17, "a whole number, got true"),
    ("lossless_priorities: [3]", "lossless_priorities: [true]", 13, 25, "a whole number, got true"),
    ("cnp_dscp: 48", 'cnp_dscp: "48"', 15, 13, "a whole number, got the text '48'"),
    ("port: 2201}", "port: true}", 27, 35, "a whole number, got true"),
    ("cnp_dscp: 48", "cnp_dscp: 48\n  mtu: 9216.0", 16, 8, "a whole number, got 9216.0"),
    ("cnp_dscp: 48", "cnp_dscp: 48\n  pfc_watchdog: yes", 16, 17, "true or false, got the text 'yes'"),
    ("cnp_dscp: 48", "cnp_dscp: 48\n  target_utilisation: true", 16, 23, "a number, got true"),
])
def test_wrong_scalar_type_is_an_error_not_a_coercion(reader: str, old: str, new: str, line: int, col: int,
                                                       words: str) -> None:
    (f,) = load_errors(_lab(old, new))
    assert (f.rule, f.location.line, f.location.col) == ("RT003", line, col), f
    assert words in f.message


def test_unquoted_booleans_still_load(reader: str) -> None:
    inv = loader.load_inventory_text(_lab(PORT0, "{name: Ethernet0, speed: 400G, admin_up: false}")).inventory
    assert inv.switches[0].ports[0].admin_up is False


NIC0 = "speed: 400G, switch_port: \"lab-leaf1:Ethernet0\", cable_length: 2m}"


@pytest.mark.parametrize(("old", "new", "col", "words"), [
    # a no-break space (U+00A0) pasted from a spreadsheet or a datasheet, and full-width digits
    (PORT0, "{name: Ethernet0, speed: 400\u00a0G}", 34, "is not a speed"),
    (PORT0, '{name: Ethernet0, speed: "400G\u00a0"}', 34, "is not a speed"),
    (PORT0, '{name: Ethernet0, speed: "\u00a0400000"}', 34, "is not a speed"),
    (PORT0, "{name: Ethernet0, speed: \uff14\uff10\uff10G}", 34, "is not a speed"),
    (NIC0, 'speed: 400G, switch_port: "lab-leaf1:Ethernet0", cable_length: "2\u00a0m"}', 132, "not a length"),
    (NIC0, 'speed: 400G, switch_port: "lab-leaf1:Ethernet0", cable_length: \uff12m}', 132, "not a length"),
])
def test_non_ascii_digits_and_spaces_in_units_are_errors(reader: str, old: str, new: str, col: int,
                                                         words: str) -> None:
    (f,) = load_errors(_lab(old, new))
    assert (f.rule, f.location.col) == ("RT003", col), f
    assert words in f.message


@pytest.mark.parametrize(("key", "value"), [
    ("poll_ms", "\uff11\uff10\uff10"), ("rpg_ai_rate_mbps", "80\u00a0Mbps"), ("pmax_percent", "5\u00a0%"),
    ("kmin_bytes", "150\u00a0KB")])
def test_pinned_values_take_ascii_numbers_only(key: str, value: str) -> None:
    with pytest.raises(ValueError, match="is not a"):
        parse_pin(key, value)


@pytest.mark.parametrize("args", [["--speed", "400\u00a0G", "--cable", "3m"],
                                  ["--speed", "400G", "--cable", "\uff13m"]])
def test_calc_refuses_non_ascii_units(args: list[str]) -> None:
    cmd = [sys.executable, "-m", "roce_tune.cli", "calc", "headroom", "--asic", "spectrum-3", *args]
    r = subprocess.run(cmd, capture_output=True, text=True, check=False)
    assert r.returncode == 2 and "is not a" in r.stderr, (r.returncode, r.stdout[-500:], r.stderr)


def test_nic_faster_than_its_model_is_rt111(tmp_path: Path) -> None:
    """A ConnectX-7 (400G at most, NVIDIA product brief) declared at 800G on an 800G switch port: the plan
    would size headroom and ECN for a line rate the NIC never runs at."""
    inv = (LAB.replace("model: SN4700", "model: SN5600").replace("speed: 400G", "speed: 800G"))
    path = tmp_path / "nic800.yaml"
    path.write_text(inv, encoding="utf-8")
    r = subprocess.run([sys.executable, "-m", "roce_tune.cli", "lint", "--no-plan-checks", "--format", "json",
                        str(path)], capture_output=True, text=True, check=False)
    assert r.returncode == 1, r.stdout + r.stderr
    found = [f for f in json.loads(r.stdout) if f["rule"] == "RT111"]
    assert [(f["location"]["line"], f["location"]["col"], f["location"]["device"]) for f in found] == [
        (37, 76, "node1"), (42, 76, "node2")]
    assert "800G is faster than a connectx-7 port (400G)" in found[0]["message"]


def _lint_json(tmp_path: Path, text: str) -> tuple[int, list[dict[str, Any]]]:
    path = tmp_path / "inv.yaml"
    path.write_text(text, encoding="utf-8")
    r = subprocess.run([sys.executable, "-m", "roce_tune.cli", "lint", "--no-plan-checks", "--format", "json",
                        str(path)], capture_output=True, text=True, check=False)
    return r.returncode, json.loads(r.stdout)


def test_device_names_differing_only_in_case_are_rt120(tmp_path: Path) -> None:
    """node1 and NODE1: one host to DNS (RFC 4343), and hosts/node1.sh vs hosts/NODE1.sh in the plan."""
    rc, findings = _lint_json(tmp_path, _lab("name: node2", "name: NODE1"))
    (f,) = [f for f in findings if f["rule"] == "RT120"]
    assert rc == 1 and (f["location"]["line"], f["location"]["col"]) == (38, 11)
    assert "'node1' and 'NODE1' differ only in case" in f["message"]


@pytest.mark.parametrize(("old", "new", "line", "col"), [
    (NIC0, 'speed: 400G, switch_port: "lab-leaf1:Ethernet0", cable_length: 0m}', 37, 132),
    ("cable_length: 3m", "cable_length: 0", 19, 17),
    ("cable_length: 3m", "cable_length: 0.0m", 19, 17),
])
def test_zero_cable_length_is_an_error(reader: str, old: str, new: str, line: int, col: int) -> None:
    """A cable has a length (the shortest DAC is ~0.5 m); SONiC reads CABLE_LENGTH 0m as 'no lossless PG
    for this port' (sonic-swss cfgmgr/buffermgr.cpp), so 0 never means 'very short'."""
    (f,) = load_errors(_lab(old, new))
    assert (f.rule, f.location.line, f.location.col) == ("RT003", line, col), f
    assert "outside 0..100000 m (above 0" in f.message


def test_zero_cable_is_refused_by_pins_and_calc() -> None:
    with pytest.raises(ValueError, match="above 0"):
        parse_pin("cable_m", 0)
    cmd = [sys.executable, "-m", "roce_tune.cli", "calc", "headroom", "--asic", "spectrum-3",
           "--speed", "400G", "--cable", "0m"]
    r = subprocess.run(cmd, capture_output=True, text=True, check=False)
    assert r.returncode == 2 and "above 0" in r.stderr, (r.stdout[-300:], r.stderr)


@pytest.mark.parametrize(("new", "ok"), [
    ("{name: Ethernet0, speed: 100G, breakout: 4x200G}", False),
    ("{name: Ethernet0, speed: 400G, breakout: 4x100G}", False),
    ("{name: Ethernet0, speed: 100G, breakout: 4x100G}", True),
])
def test_breakout_port_speed_must_be_the_entry_speed(reader: str, new: str, ok: bool) -> None:
    """``breakout: 4x100G`` makes 100G ports: an entry that says ``speed: 400G`` contradicts itself."""
    text = _lab(PORT0, new).replace("speed: 400G, switch_port: \"lab-leaf1:Ethernet0\"",
                                    "speed: 100G, switch_port: \"lab-leaf1:Ethernet0\"")
    if ok:
        assert loader.load_inventory_text(text).inventory.switches[0].ports[0].breakout == "4x100G"
        return
    (f,) = load_errors(text)
    assert (f.rule, f.location.line, f.location.col) == ("RT003", 29, 50), f
    assert "makes" in f.message and "but this entry's speed is" in f.message


def test_intent_breakout_contradicting_speed_points_at_the_intent(tmp_path: Path) -> None:
    intent = (REPO / "inventories" / "intent" / "lab-2node.yaml").read_text(encoding="utf-8")
    old = 'host_ports: {name: "Ethernet{8*p}", speed: 400G}'
    assert old in intent
    rc, findings = _lint_json(tmp_path, intent.replace(old, old[:-1] + ", breakout: 2x200G}"))
    (f,) = findings
    assert rc == 1 and f["rule"] == "RT003" and f["location"]["path"] == "fabric.leaf.host_ports.breakout"


@pytest.mark.parametrize(("spine_speed", "hint"), [("200G", "breakout: 2x200G"), ("100G", "breakout: 4x100G"),
                                                   ("25G", None)])
def test_link_speed_mismatch_suggests_a_breakout_that_exists(spine_speed: str, hint: str | None) -> None:
    """400G to 200G is a 2x200G breakout, not 4x200G (1600G out of a 400G cage); 400G to 25G has none
    within the 1-8 ports a breakout may have."""
    text = RULES["RT103"].bad.replace("speed: 100G", f"speed: {spine_speed}")
    (f,) = [f for f in lint_text(text) if f.rule == "RT103"]
    assert f"({spine_speed})" in f.message
    if hint is None:
        assert "breakout" not in f.fix, f.fix
    else:
        assert hint in f.fix, f.fix


@pytest.mark.parametrize(("value", "hint"), [('"6"', True), ("On", True), ('"true"', True), ("six", False),
                                             ("6\u00a0", False)])
def test_text_for_a_number_names_yaml_12_only_where_it_explains(reader: str, value: str, hint: bool) -> None:
    (f,) = load_errors(_lab("cnp_priority: 6", f"cnp_priority: {value}"))
    assert f.message.startswith("expected a whole number, got the text")
    assert ("YAML 1.2 reads quoted values" in f.message) is hint, f.message
    assert ("without quotes" in f.fix) is hint, f.fix


@pytest.mark.parametrize(("args", "rc"), [
    (["--speed", "800G"], 2), (["--speed", "800G", "--nic", "connectx-8"], 0),
    (["--speed", "400G", "--nic", "connectx-6-dx"], 2)])
def test_calc_dcqcn_refuses_a_speed_the_nic_cannot_run(args: list[str], rc: int) -> None:
    """ConnectX-7 tops out at 400G, ConnectX-6 Dx at 200G (catalog max_speed_gbps, NVIDIA product briefs)."""
    r = subprocess.run([sys.executable, "-m", "roce_tune.cli", "calc", "dcqcn", "--format", "json", *args],
                       capture_output=True, text=True, check=False)
    assert r.returncode == rc, (r.stdout[-300:], r.stderr)
    if rc:
        assert "maximum port speed of connectx-" in r.stderr
    else:
        assert json.loads(r.stdout)["enabled"] is True


def test_the_models_shape_example_loads() -> None:
    """The YAML in roce_tune.inventory.models' docstring is what a reader copies first."""
    from roce_tune.inventory import models

    doc = models.__doc__ or ""
    example = doc.split("```yaml\n", 1)[1].split("```", 1)[0]
    assert loader.load_inventory_text(example).inventory.policy.roce_dscp == [26]


def _with_overrides(overrides: str) -> str:
    return _lab("cnp_priority: 6", f"cnp_priority: 6\n  overrides: [{overrides}]")


def test_nic_scoped_override_pins_that_nic(tmp_path: Path) -> None:
    """RT121 accepts a host override scoped to a NIC (port: netdev); the plan ignored it (rpg_ai stayed at
    the firmware 5 Mb/s) because host pins were resolved without a port. Rendered host script checked."""
    path = tmp_path / "inv.yaml"
    path.write_text(_with_overrides("{device: node1, set: {rpg_hai_rate_mbps: 60}}, "
                                    "{device: node1, port: ens1f0np0, set: {rpg_ai_rate_mbps: 20}}"),
                    encoding="utf-8")
    out = tmp_path / "out"
    r = subprocess.run([sys.executable, "-m", "roce_tune.cli", "plan", str(path), "--out", str(out),
                        "--no-scorecard"], capture_output=True, text=True, check=False)
    assert r.returncode == 0, r.stdout[-500:] + r.stderr[-500:]
    node1 = (out / "hosts" / "node1.sh").read_text(encoding="utf-8")
    node2 = (out / "hosts" / "node2.sh").read_text(encoding="utf-8")
    assert "'1 roce_rp/rpg_ai_rate 20'" in node1 and "'1 roce_rp/rpg_hai_rate 60'" in node1
    assert "'1 roce_rp/rpg_ai_rate 5'" in node2


def test_nic_scoped_override_out_of_range_is_rt127() -> None:
    (f,) = [f for f in lint_text(_with_overrides("{device: node1, port: ens1f0np0, "
                                                 "set: {rpg_ai_rate_mbps: 500000}}")) if f.rule == "RT127"]
    assert f.location.path == "policy.overrides[0].set.rpg_ai_rate_mbps" and f.location.port == "ens1f0np0"


@pytest.mark.parametrize(("override", "key", "col"), [
    ("{device: node1, set: {xoff_bytes: 1}}", "xoff_bytes", 49),                   # no switch buffer
    ("{role: host, set: {kmax_bytes: 400KB, rpg_ai_rate_mbps: 20}}", "kmax_bytes", 46),
    ("{device: lab-leaf1, set: {rpg_ai_rate_mbps: 20}}", "rpg_ai_rate_mbps", 59),  # DCQCN is the NIC's
    ("{role: leaf, set: {rpg_gd: 7}}", "rpg_gd", 42),
    ("{device: lab-leaf1, port: Ethernet0, set: {detection_ms: 400}}", "detection_ms", 72),  # per switch
])
def test_override_pinning_what_its_target_lacks_is_rt121(override: str, key: str, col: int) -> None:
    """Each of these planned clean and changed nothing: the tuner resolves a host's pins for DCQCN only, a
    switch's for headroom/ECN/watchdog, the watchdog's per switch (no port)."""
    (f,) = [f for f in lint_text(_with_overrides(override), "inv.yaml") if f.rule == "RT121"]
    assert (f.location.path, f.location.line, f.location.col) == (f"policy.overrides[0].set.{key}", 17, col)
    assert "which does not take it" in f.message


@pytest.mark.parametrize("override", ["{set: {rpg_gd: 7, xoff_bytes: 50000}}",
                                      "{device: lab-leaf1, port: Ethernet0, set: {kmax_bytes: 400KB}}",
                                      "{device: node1, port: ens1f0np0, set: {rpg_gd: 7}}",
                                      "{role: leaf, set: {detection_ms: 400, cable_m: 30}}"])
def test_override_pinning_what_its_target_takes_is_clean(override: str) -> None:
    assert not [f for f in lint_text(_with_overrides(override)) if f.rule == "RT121"]


def test_bare_1600_says_it_was_read_as_mbps(reader: str) -> None:
    """'speed: 1600' said "1600 is not a supported port speed (known: ..., 1600G)": a contradiction unless
    it says the bare number was read as Mb/s (the SONiC/ethtool spelling) and 1600G is the way to write it."""
    (f,) = load_errors(_lab(PORT0, "{name: Ethernet0, speed: 1600}"))
    assert (f.rule, f.location.line, f.location.col) == ("RT003", 29, 34)
    assert "read as Mb/s (1.6 Gb/s" in f.message


def test_lint_finding_on_an_expanded_nic_field_points_at_that_intent_field(tmp_path: Path) -> None:
    """A finding about hosts[i].nics[0].speed in an intent pointed at the whole 'nic:' mapping (its line
    and the column of its '{'); it now points at the intent's own 'speed:' value."""
    intent = (REPO / "inventories" / "intent" / "lab-2node.yaml").read_text(encoding="utf-8")
    flow = "nic: {model: connectx-7, speed: 400G, netdev: ens1f0np0, rdma_device: mlx5_0, cable_length: 2m}"
    block = ("nic:\n      model: connectx-7\n      speed: 800G\n      netdev: ens1f0np0\n"
             "      rdma_device: mlx5_0\n      cable_length: 2m")
    assert flow in intent
    text = (intent.replace(flow, block).replace("model: SN4700", "model: SN5600")
            .replace('speed: 400G}', 'speed: 800G}'))
    rc, findings = _lint_json(tmp_path, text)
    lines = text.splitlines()
    speed_line = next(i for i, ln in enumerate(lines, 1) if ln == "      speed: 800G")
    got = {(f["location"]["line"], f["location"]["col"]) for f in findings if f["rule"] == "RT111"}
    assert rc == 1 and got == {(speed_line, 14)}, findings


@pytest.mark.parametrize(("old", "new", "got"), [('nccl_version: "2.23.4"', "nccl_version: 2.20", "2.2"),
                                                 ("model: SN4700", "model: 4700", "4700")])
def test_number_where_text_belongs_says_to_quote_it(reader: str, old: str, new: str, got: str) -> None:
    """'nccl_version: 2.20' is the float 2.2: the finding says it was read as a number and to quote the value
    as written (not '2.2', which would be another version)."""
    (f,) = load_errors(_lab(old, new))
    assert f.rule == "RT003" and f.message.startswith(f"expected a text value, got the number {got} ")
    assert f.fix.startswith("put the value in quotes as you wrote it")


@pytest.mark.parametrize(("new", "words"), [("port: 22:01}", "a whole number, got the text '22:01'"),
                                            ("port: 70000}", "70000"),
                                            ("port: Ethernet0}", "a whole number")])
def test_a_bad_ssh_port_is_fixed_with_a_port_number_not_an_interface_name(reader: str, new: str,
                                                                         words: str) -> None:
    """mgmt.port is the SSH port; its fix said 'use the interface name as the switch shows it, e.g.
    Ethernet0 or swp1' (the fix of a switch port's name), which is what the third case wrote."""
    (f,) = load_errors(_lab("port: 2201}", new))
    assert (f.rule, f.location.line, f.location.col) == ("RT003", 27, 35), f
    assert words in f.message and f.location.path == "switches[0].mgmt.port"
    assert "SSH" in f.fix and "interface" not in f.fix, f.fix


@pytest.mark.parametrize(("host", "words"), [('"10.0.0.1:2201"', "port field"), ("leaf1:22", "port field"),
                                             ('"2001:db8:::1"', "not an IPv6 address"),
                                             ("10.0.0.256", "not an IPv4 address"),
                                             ("10.0.0", "not an IPv4 address")])
def test_a_management_host_that_is_no_address_is_an_error(reader: str, host: str, words: str) -> None:
    """'host: 10.0.0.1:2201' (the SSH port written into the host), an octet over 255 or a three-part
    address passed the host-name pattern and failed only when apply or verify tried to connect."""
    (f,) = load_errors(_lab("{host: 127.0.0.1, port: 2201}", f"{{host: {host}, port: 2201}}"))
    assert (f.rule, f.location.line, f.location.col, f.location.path) == ("RT003", 27, 18,
                                                                          "switches[0].mgmt.host"), f
    assert words in f.message, f.message


@pytest.mark.parametrize("host", ["10.0.0.1", "2001:db8::1", "leaf1.example.net", "leaf-01", "0x1f"])
def test_management_hosts_that_are_addresses_or_names_load(reader: str, host: str) -> None:
    inv = loader.load_inventory_text(_lab("{host: 127.0.0.1, port: 2201}",
                                          f'{{host: "{host}", port: 2201}}')).inventory
    assert inv.switches[0].mgmt is not None and inv.switches[0].mgmt.host == host
