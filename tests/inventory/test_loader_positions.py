"""Loader: every problem reported at its exact file:line:col, all of them in one run, never a traceback.

Positions are 1-based; each case states the line and the column of the offending node in the
literal YAML above it, and the test also checks the text found at that position, so a wrong
oracle shows up as a mismatch with the file itself.
"""

from __future__ import annotations

import hashlib

import pytest

from roce_tune.findings import RoceTuneError, Severity
from roce_tune.inventory.loader import load_inventory, load_inventory_text
from tests.inventory.conftest import load_errors

GOOD = """\
site:
  name: lab
switches:
  - name: leaf1
    platform: sonic
    model: SN4700
    role: leaf
    ports:
      - {name: Ethernet0, speed: 400G}
      - name: Ethernet4
        speed: 400G
hosts:
  - name: gpu01
    nics:
      - model: connectx-7
        netdev: ens1f0np0
        rdma_device: mlx5_0
        speed: 400G
        switch_port: "leaf1:Ethernet0"
"""


def _at(text: str, line: int, col: int) -> str:
    return text.split("\n")[line - 1][col - 1:]


def _one(text: str, rule: str) -> tuple[int, int, str, str]:
    found = [f for f in load_errors(text) if f.rule == rule]
    assert len(found) == 1, found
    f = found[0]
    assert f.severity is Severity.error and f.fix and f.location.file == "inv.yaml"
    return f.location.line or 0, f.location.col or 0, f.location.path or "", f.message


def test_good_inventory_loads_with_positions(reader: str) -> None:
    loaded = load_inventory_text(GOOD, "inv.yaml")
    assert loaded.inventory.switches[0].ports[1].speed == 400
    pos = loaded.positions
    assert pos["switches[0].ports[1].speed"] == (11, 16)
    assert pos["switches[0].ports[0].speed"] == (9, 34)        # inside a flow mapping
    assert pos["hosts[0].nics[0]"] == (15, 9)                  # a '- key:' item starts at its first key
    assert pos.key("hosts[0].nics[0].netdev") == (16, 9)
    assert loaded.locate("hosts[0].nics[0].mtu").line == 15   # absent: nearest ancestor, the NIC
    assert loaded.locate("hosts[0].nics[0].mtu").path == "hosts[0].nics[0].mtu"
    assert "switches[0].ports[1].name" in pos and len(pos) == len(list(pos))
    assert loaded.sha256 == hashlib.sha256(GOOD.encode()).hexdigest()


def test_unknown_field_points_at_the_key_and_suggests_the_name(reader: str) -> None:
    text = GOOD.replace("        speed: 400G\n        switch_port", "        sped: 400G\n        switch_port")
    line, col, path, msg = _one(text, "RT003")
    assert (line, col) == (18, 9) and _at(text, line, col).startswith("sped:")
    assert path == "hosts[0].nics[0].sped"
    assert "did you mean 'speed'" in msg


def test_bad_unit_points_at_the_value(reader: str) -> None:
    text = GOOD.replace("      - {name: Ethernet0, speed: 400G}", "      - {name: Ethernet0, speed: fast}")
    line, col, path, msg = _one(text, "RT003")
    assert (line, col) == (9, 34) and _at(text, line, col).startswith("fast}")
    assert path == "switches[0].ports[0].speed" and "'fast' is not a speed" in msg


@pytest.mark.parametrize("spelling", ["100G", "400Gbps", "100000", "40m"])
def test_accepted_unit_spellings(spelling: str) -> None:
    if spelling.endswith("m"):
        text = GOOD.replace('switch_port: "leaf1:Ethernet0"',
                            f'switch_port: "leaf1:Ethernet0"\n        cable_length: {spelling}')
        assert load_inventory_text(text).inventory.hosts[0].nics[0].cable_length == 40.0
    else:
        text = GOOD.replace("        speed: 400G\n        switch_port",
                            f"        speed: {spelling}\n        switch_port")
        assert load_inventory_text(text).inventory.hosts[0].nics[0].speed in (100, 400)


def test_duplicate_key_points_at_the_second_key(reader: str) -> None:
    text = GOOD.replace("    role: leaf\n", "    role: leaf\n    role: spine\n")
    line, col, path, msg = _one(text, "RT002")
    assert (line, col) == (8, 5) and _at(text, line, col).startswith("role: spine")
    assert path == "switches[0].role" and "line 7 column 5" in msg


@pytest.mark.parametrize(("value", "col"), [
    ('"eth0; reboot"', 17),
    ('"$(reboot)"', 17),
    ("'eth0\"x'", 17),                 # a quote inside the name
    ('"eth0\\nreboot"', 17),           # an escaped newline inside a double-quoted name
    ("eth0`id`", 17),
])
def test_shell_metacharacters_in_a_netdev_are_rejected_at_the_value(reader: str, value: str,
                                                                    col: int) -> None:
    text = GOOD.replace("netdev: ens1f0np0", f"netdev: {value}")
    line, c, path, msg = _one(text, "RT003")
    assert (line, c) == (16, col) and _at(text, line, c).startswith(value[:4])
    assert path == "hosts[0].nics[0].netdev" and "not a valid netdev name" in msg


def test_newline_inside_a_multi_line_quoted_name(reader: str) -> None:
    text = GOOD.replace("  - name: gpu01\n", '  - name: "gpu01\n      reboot"\n')
    line, col, path, msg = _one(text, "RT003")
    assert (line, col) == (13, 11) and path == "hosts[0].name" and "gpu01 reboot" in msg  # folded to a space
    text = GOOD.replace("  - name: gpu01\n", "  - name: |\n      gpu01\n      reboot\n")
    line, col, path, msg = _one(text, "RT003")
    assert (line, col) == (13, 11) and "'gpu01\\nreboot\\n'" in msg


def test_malformed_yaml_has_a_position_and_no_traceback(reader: str) -> None:
    text = GOOD.replace("      - {name: Ethernet0, speed: 400G}", "      - {name: Ethernet0, speed: 400G")
    findings = load_errors(text)
    assert [f.rule for f in findings] == ["RT001"]
    # the flow mapping opened at 9:9 swallows the next line's "- name" and stops at its ':'
    assert (findings[0].location.line, findings[0].location.col) == (10, 13)
    assert _at(text, 10, 13).startswith(": Ethernet4") and "line 9 column 9" in findings[0].message


def test_tab_indentation(reader: str) -> None:
    findings = load_errors("site:\n\tname: lab\n")
    assert [(f.rule, f.location.line, f.location.col) for f in findings] == [("RT001", 2, 1)]
    assert "tab" in findings[0].fix


def test_all_problems_in_one_run(reader: str) -> None:
    text = GOOD.replace("  name: lab\n", "  name: lab\n  nmae: x\n") \
        .replace("speed: 400G}", "speed: fast}") \
        .replace("    role: leaf\n", "    role: leaf\n    role: leaf\n") \
        .replace("netdev: ens1f0np0", 'netdev: "eth0; reboot"')
    got = [(f.rule, f.location.line, f.location.col) for f in load_errors(text)]
    assert got == [("RT003", 3, 3), ("RT002", 9, 5), ("RT003", 11, 34), ("RT003", 18, 17)]


def test_missing_required_field_points_at_its_parent(reader: str) -> None:
    text = GOOD.replace("        rdma_device: mlx5_0\n", "")
    line, col, path, msg = _one(text, "RT003")
    assert (line, col) == (15, 9) and path == "hosts[0].nics[0].rdma_device" and "missing" in msg


@pytest.mark.parametrize(("text", "rule"), [
    ("", "RT004"), ("# only a comment\n", "RT004"), ("- site\n", "RT004"), ("just text\n", "RT004"),
    ("site: {name: lab}\n---\nsite: {name: b}\n", "RT001"),
])
def test_empty_or_not_a_mapping(text: str, rule: str) -> None:
    findings = load_errors(text)
    assert [f.rule for f in findings] == [rule] and findings[0].location.line


def test_file_errors(tmp_path) -> None:
    with pytest.raises(RoceTuneError) as exc:
        load_inventory(tmp_path / "missing.yaml")
    assert exc.value.findings[0].rule == "RT005"
    with pytest.raises(RoceTuneError) as exc:
        load_inventory(tmp_path)  # a directory
    assert exc.value.findings[0].rule == "RT005"
    bad = tmp_path / "latin1.yaml"
    bad.write_bytes(b"site:\n  name: caf\xe9\n")
    with pytest.raises(RoceTuneError) as exc:
        load_inventory(bad)
    f = exc.value.findings[0]
    assert (f.rule, f.location.line, f.location.col) == ("RT001", 2, 12)
    good = tmp_path / "good.yaml"
    good.write_bytes(GOOD.encode())
    loaded = load_inventory(good)
    assert loaded.path == str(good) and loaded.sha256 == hashlib.sha256(GOOD.encode()).hexdigest()


def test_tags_that_construct_objects_are_rejected(reader: str) -> None:
    text = "site: {name: lab}\nhosts: !!python/object/apply:os.system [reboot]\n"
    findings = load_errors(text)
    assert [(f.rule, f.location.line, f.location.col) for f in findings] == [("RT006", 2, 8)]
    findings = load_errors("site: {name: !custom lab}\n")
    assert findings[0].rule == "RT006"
    assert load_inventory_text("site: {name: !!str lab}\n").inventory.site.name == "lab"


def test_anchors_aliases_and_merge_keys(reader: str) -> None:
    text = """\
site: {name: lab}
switches:
  - &leaf
    name: leaf1
    platform: sonic
    model: SN4700
    role: leaf
  - <<: *leaf
    name: leaf2
"""
    loaded = load_inventory_text(text)
    assert [s.name for s in loaded.inventory.switches] == ["leaf1", "leaf2"]
    assert loaded.inventory.switches[1].model == "SN4700"
    assert loaded.positions["switches[1].name"] == (9, 11)
    # billion laughs: rejected with a finding, quickly
    laughs = "a: &a [x, x, x, x, x, x, x, x, x, x]\n" + "".join(
        f"{chr(98 + i)}: &{chr(98 + i)} [{', '.join(['*' + chr(97 + i)] * 10)}]\n" for i in range(8))
    findings = load_errors("site: {name: lab}\n" + laughs)
    assert findings[0].rule == "RT001" and "aliases expand" in findings[0].message
    findings = load_errors("site: &s {name: lab, x: *s}\n")
    assert findings[0].rule == "RT001" and (findings[0].location.line, findings[0].location.col) == (1, 22)


def test_huge_numbers_and_unicode(reader: str) -> None:
    findings = load_errors("site: {name: lab}\npolicy: {mtu: " + "9" * 5000 + "}\n")
    assert [(f.rule, f.location.line, f.location.col) for f in findings] == [("RT003", 2, 15)]
    findings = load_errors("site: {name: lab}\npolicy: {mtu: 1e999, host_mtu: .inf}\n")
    assert {f.location.path for f in findings} == {"policy.mtu", "policy.host_mtu"}
    findings = load_errors("site: {name: lab}\nswitches: [{name: l, platform: sonic, model: X, role: leaf, "
                           "ports: [{name: E0, speed: .inf}]}]\n")
    assert findings[0].location.path == "switches[0].ports[0].speed"
    findings = load_errors("site:\n  name: läb-ü\n")
    assert (findings[0].location.line, findings[0].location.col) == (2, 9)
    text = "site:\n  name: lab\n  description: Rechenzentrum Zürich — 机房 ✓\n"
    assert load_inventory_text(text).inventory.site.description.endswith("✓")


def test_crlf_and_bom(reader: str) -> None:
    loaded = load_inventory_text(GOOD.replace("\n", "\r\n"))
    assert loaded.positions["switches[0].ports[1].speed"] == (11, 16)
    loaded = load_inventory_text("\ufeff" + GOOD)
    assert loaded.inventory.site.name == "lab"


def test_union_errors_merge_into_one_finding(reader: str) -> None:
    text = "site: {name: lab}\npolicy:\n  overrides:\n    - role: lef\n      set: {xoff_bytes: 1}\n"
    findings = load_errors(text)
    assert len(findings) == 1
    assert (findings[0].location.line, findings[0].location.col) == (4, 13)
    assert "'leaf', 'spine', 'superspine' or 'host'" in findings[0].message
