"""``roce-tune import cabling``: CSV cabling plans into inventory skeletons and merges
(real files, real CLI)."""

from __future__ import annotations

from pathlib import Path

import pytest

from roce_tune.findings import RoceTuneError
from roce_tune.inventory.cabling_import import (
    merge_into,
    parse_length,
    read_cabling_csv,
    render_cabling_csv,
    skeleton_from_cables,
)
from roce_tune.inventory.loader import load_inventory, load_inventory_text
from roce_tune.inventory.models import expand_interface_pattern
from roce_tune.inventory.skeleton import SkeletonOptions, inventory_yaml
from tests.inventory.cabling_helpers import REPO, SHIPPED, cabling, run


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: p.name)
def test_shipped_inventory_cabling_survives_csv_round_trip(path: Path, tmp_path: Path) -> None:
    inv = load_inventory(path).inventory
    csv_file = tmp_path / "plan.csv"
    csv_file.write_text(render_cabling_csv(inv), encoding="utf-8")
    out = tmp_path / "imported.yaml"
    r = run("import", "cabling", str(csv_file), "--out", str(out))
    assert r.returncode == 0, r.stderr
    back = load_inventory(out).inventory
    assert cabling(back) == cabling(inv)
    lengths = {(h.name, n.netdev): n.cable_length for h in back.hosts for n in h.nics}
    want = {
        (h.name, n.netdev): n.cable_length or inv.defaults.cable_length for h in inv.hosts for n in h.nics
    }
    assert lengths == want
    roles = {s.name: s.role for s in back.switches}
    assert roles == {s.name: s.role for s in inv.switches}


def test_semicolon_bom_quotes_and_header_spellings(tmp_path: Path) -> None:
    text = (
        "\ufeffSource Device;Interface A;Destination Device;Interface B;Cable Length (ft);Cable Type;Label\n"
        'leaf1;Ethernet0;gpu01;ens1f0np0;10;"Passive Copper";"row 1; rack A"\n'
        'leaf1;Ethernet120;spine1;Ethernet0;"2,5 m";SR4;x\n'
    )
    f = tmp_path / "plan.csv"
    f.write_text(text, encoding="utf-8")
    plan = read_cabling_csv(f)
    assert plan.delimiter == ";"
    assert plan.columns["length"] == "Cable Length (ft)" and plan.columns["media"] == "Cable Type"
    c0, c1 = plan.cables
    assert (c0.a_device, c0.b_port, c0.length_m, c0.media) == ("leaf1", "ens1f0np0", 3.048, "dac")
    assert (c1.length_m, c1.media) == (2.5, "optic")
    data = skeleton_from_cables(plan, SkeletonOptions())
    inv = load_inventory_text(inventory_yaml(data)).inventory
    assert [h.name for h in inv.hosts] == ["gpu01"] and inv.hosts[0].nics[0].switch_port == "leaf1:Ethernet0"
    assert {s.name: s.role.value for s in inv.switches} == {"leaf1": "leaf", "spine1": "spine"}


def test_tab_separated_and_columns_option(tmp_path: Path) -> None:
    f = tmp_path / "plan.tsv.csv"
    f.write_text(
        "Switch\tSwitch Interface\tServer\tServer NIC\tMetres\nsw-a\tswp1\tnode7\teth2\t3\n", encoding="utf-8"
    )
    with pytest.raises(RoceTuneError) as exc:
        read_cabling_csv(f)
    assert "no column for a_device, a_port, b_device, b_port" in str(exc.value)
    cols = "a_device=Switch,a_port=Switch Interface,b_device=Server,b_port=Server NIC,length=Metres"
    plan = read_cabling_csv(f, dict(kv.split("=") for kv in cols.split(",")))
    assert plan.delimiter == "\t"
    c = plan.cables[0]
    assert (c.a_device, c.a_port, c.b_device, c.b_port, c.length_m) == ("sw-a", "swp1", "node7", "eth2", 3.0)
    r = run("import", "cabling", str(f), "--columns", cols)
    assert r.returncode == 0, r.stderr
    assert 'switch_port: "sw-a:swp1"' in r.stdout and "platform: cumulus" in r.stdout


def test_every_bad_row_is_reported_with_line_and_column_and_nothing_is_written(tmp_path: Path) -> None:
    f = tmp_path / "bad.csv"
    f.write_text(
        "Device A,Port A,Device B,Port B,Length,Media\n"
        "leaf1,Ethernet0,gpu1,ens1f0np0,3m,DAC\n"
        '"leaf1",Ethernet4,gpu2,"ens1f0np0",3yd,DAC\n'
        "leaf1,Ethernet8,gpu3,ens1f0np0,-2m,DAC\n"
        "leaf1,Ethernet12,leaf1,Ethernet12,1m,DAC\n"
        "leaf1,Ethernet0,gpu4,ens1f0np0,3m,DAC\n"
        "leaf1,,gpu5,ens1f0np0,3m,DAC\n"
        '"leaf 1",Ethernet16,gpu6,ens1f0np0,3m,"multi\nline"\n'
        "leaf1,Ethernet20,gpu7,ens1f0np0,3m,carrier pigeon\n",
        encoding="utf-8",
    )
    out = tmp_path / "inv.yaml"
    r = run("import", "cabling", str(f), "--out", str(out))
    assert r.returncode == 1
    assert not out.exists() and not list(tmp_path.glob(".inv.yaml.*"))
    lines = r.stderr.splitlines()
    expect = [
        ("bad.csv:3:5 Length", "unknown unit 'yd'"),
        ("bad.csv:4:5 Length", "is negative"),
        ("bad.csv:5:4 Port B", "both ends are leaf1:Ethernet12"),
        ("bad.csv:6:2 Port A", "leaf1:Ethernet0 is already cabled on line 2"),
        ("bad.csv:7:2 Port A", "empty field"),
        ("bad.csv:8:1 Device A", "'leaf 1' is not a usable device name"),
        ("bad.csv:8:6 Media", "unknown media"),
        ("bad.csv:10:6 Media", "unknown media 'carrier pigeon'"),
    ]
    for where, what in expect:
        assert any(where in ln and what in ln and "RT008" in ln for ln in lines), (where, what, r.stderr)


def test_parse_length_units() -> None:
    assert parse_length("3m", None) == 3.0 and parse_length("300 cm", None) == 3.0
    assert parse_length("10", "ft") == 3.048 and parse_length("2,5", None) == 2.5
    assert parse_length("2,75 m", None) == 2.75 and parse_length("1000", None) == 1000.0
    for bad in ("3 parsecs", "-1m", "0m", "abc", "1,000", "2,500 m"):
        with pytest.raises(ValueError):
            parse_length(bad, None)


INVENTORY = """\
# the lab inventory: comments must survive a merge
site: {name: lab}
switches:
  - name: leaf1   # rack A
    platform: sonic
    model: SN4700
    role: leaf
    ports:
      - {name: "Ethernet[0-8/4]", speed: 400G}
  - {name: spine1, platform: sonic, model: SN4700, role: spine, ports: [{name: Ethernet0, speed: 400G}]}
links: []
hosts:
  - name: gpu01
    nics:
      - {model: connectx-7, netdev: ens1f0np0, rdma_device: mlx5_0, speed: 400G, \
switch_port: "leaf1:Ethernet0"}
"""


def test_merge_keeps_comments_updates_and_adds(tmp_path: Path) -> None:
    inv = tmp_path / "lab.yaml"
    inv.write_text(INVENTORY, encoding="utf-8")
    plan = tmp_path / "plan.csv"
    plan.write_text(
        "Device A,Port A,Device B,Port B,Length,Media\n"
        "gpu01,ens1f0np0,leaf1,Ethernet0,2m,dac\n"
        "leaf1,Ethernet12,spine1,Ethernet0,30m,optic\n"
        "gpu02,ens1f0np0,leaf1,Ethernet4,3m,dac\n",
        encoding="utf-8",
    )
    r = run("import", "cabling", str(plan), "--into", str(inv))
    assert r.returncode == 0, r.stderr
    text = inv.read_text()
    assert "# the lab inventory: comments must survive a merge" in text and "# rack A" in text
    loaded = load_inventory(inv).inventory
    assert loaded.hosts[0].nics[0].cable_length == 2.0 and loaded.hosts[0].nics[0].media.value == "dac"
    assert [(link.a, link.b, link.cable_length) for link in loaded.links] == [
        ("leaf1:Ethernet12", "spine1:Ethernet0", 30.0)
    ]
    assert "Ethernet12" in [p.name for p in loaded.switches[0].ports]
    assert [h.name for h in loaded.hosts] == ["gpu01", "gpu02"]
    assert "added link leaf1:Ethernet12 - spine1:Ethernet0" in r.stderr


def test_merge_conflict_writes_nothing(tmp_path: Path) -> None:
    inv = tmp_path / "lab.yaml"
    inv.write_text(INVENTORY, encoding="utf-8")
    plan = tmp_path / "plan.csv"
    plan.write_text("Device A,Port A,Device B,Port B\ngpu01,ens1f0np0,leaf1,Ethernet8\n", encoding="utf-8")
    r = run("import", "cabling", str(plan), "--into", str(inv))
    assert r.returncode == 1
    assert (
        "plan.csv:2" in r.stderr
        and "RT009" in r.stderr
        and "lab.yaml:15 cables it to leaf1:Ethernet0" in r.stderr
    )
    assert inv.read_text() == INVENTORY


def test_merge_refuses_intent_form(tmp_path: Path) -> None:
    plan = tmp_path / "plan.csv"
    plan.write_text("Device A,Port A,Device B,Port B\ngpu01,ens1f0np0,leaf1,Ethernet8\n", encoding="utf-8")
    with pytest.raises(RoceTuneError) as exc:
        merge_into(REPO / "inventories" / "intent" / "site.yaml", read_cabling_csv(plan), SkeletonOptions())
    assert "roce-tune expand" in str(exc.value)


def test_inventory_yaml_writes_empty_lists_and_nested_values_that_load_back() -> None:
    """The one full-form writer (imports, expand): an empty port or NIC list stays a list, lists and
    nested mappings round-trip (a switch with no ports yet is what a NetBox device without cables gives)."""
    data = {"site": {"name": "x", "nccl_version": "2.21.5"},
            "policy": {"lossless_priorities": [3], "overrides": [{"device": "l1",
                                                                  "set": {"kmin_bytes": "150KB"}}]},
            "switches": [{"name": "l1", "platform": "sonic", "model": "SN4700", "role": "leaf", "ports": []}],
            "links": [], "hosts": [{"name": "h1", "nics": []}]}
    inv = load_inventory_text(inventory_yaml(data)).inventory
    assert inv.switches[0].ports == [] and inv.hosts[0].nics == [] and inv.site.nccl_version == "2.21.5"
    assert inv.policy.lossless_priorities == [3] and inv.policy.overrides[0].set == {"kmin_bytes": 150_000}


def test_abbreviated_eos_and_nxos_port_names_are_expanded(tmp_path: Path) -> None:
    """``Et1/1``, ``Eth1/2``, ``eth1/3`` in a plan are the switch's ``Ethernet1/1`` … (EOS and NX-OS name
    their ports so in configuration; the abbreviations are what ``show interfaces status`` / LLDP print and
    what people type). They were kept as written, so the inventory's ports did not match the switch's, and a
    merge added ``Et1/1`` beside a declared ``Ethernet1/1``. SONiC/Cumulus names are untouched."""
    plan = tmp_path / "plan.csv"
    plan.write_text(
        "Device A,Port A,Device B,Port B\n"
        "gpu01,ens1f0np0,leaf1,Et1/1/1\n"       # EOS breakout port (three levels tell EOS)
        "gpu02,ens1f0np0,leaf1,eth1/2/1\n"
        "leaf1,Et32/1/1,spine1,Eth1/1\n"        # spine1: NX-OS-shaped (two levels)
        "leaf2,Ethernet0,spine1,ETH1/2\n"       # leaf2: SONiC, kept
        "gpu03,ens1f0np0,leaf2,Ethernet4\n",
        encoding="utf-8",
    )
    out = tmp_path / "new.yaml"
    r = run("import", "cabling", str(plan), "--out", str(out))
    assert r.returncode == 0, r.stderr
    inv = load_inventory(out).inventory
    ports = {s.name: sorted(n for p in s.ports for n in expand_interface_pattern(p.name))
             for s in inv.switches}
    platforms = {s.name: s.platform for s in inv.switches}
    assert platforms == {"leaf1": "eos", "spine1": "nxos", "leaf2": "sonic"}, platforms
    assert ports["leaf1"] == ["Ethernet1/1/1", "Ethernet1/2/1", "Ethernet32/1/1"], ports
    assert ports["spine1"] == ["Ethernet1/1", "Ethernet1/2"], ports
    assert ports["leaf2"] == ["Ethernet0", "Ethernet4"], ports
    assert {h.name: h.nics[0].switch_port for h in inv.hosts} == {
        "gpu01": "leaf1:Ethernet1/1/1", "gpu02": "leaf1:Ethernet1/2/1", "gpu03": "leaf2:Ethernet4"}
    assert {(link.a, link.b) for link in inv.links} == {("leaf1:Ethernet32/1/1", "spine1:Ethernet1/1"),
                                                       ("leaf2:Ethernet0", "spine1:Ethernet1/2")}
    # a merge into an inventory that declares the full names cables the declared ports, adds none
    declared = tmp_path / "lab.yaml"
    declared.write_text(out.read_text(encoding="utf-8"), encoding="utf-8")
    again = tmp_path / "again.csv"
    again.write_text("Device A,Port A,Device B,Port B,Length\ngpu01,ens1f0np0,leaf1,et1/1/1,3m\n",
                     encoding="utf-8")
    r = run("import", "cabling", str(again), "--into", str(declared))
    assert r.returncode == 0, r.stderr
    merged = load_inventory(declared).inventory
    leaf1 = next(s for s in merged.switches if s.name == "leaf1")
    assert sorted(n for p in leaf1.ports for n in expand_interface_pattern(p.name)) == ports["leaf1"]
    gpu01 = next(h for h in merged.hosts if h.name == "gpu01").nics[0]
    assert (gpu01.switch_port, gpu01.cable_length) == ("leaf1:Ethernet1/1/1", 3.0)


def test_one_port_written_two_ways_is_the_same_port(tmp_path: Path) -> None:
    """``Eth1/1`` and ``Ethernet1/1`` of one NX-OS switch (and ``Et1/1`` / ``Ethernet1/1`` of an EOS one)
    are one port: the duplicate check ran on names as written, so both rows were taken and two cables landed
    on one port. Now RT008 at the later row's file:line:col naming the earlier row's, nothing written; also
    on a merge."""
    plan = tmp_path / "plan.csv"
    plan.write_text(
        "Device A,Port A,Device B,Port B\n"
        "gpu01,ens1f0np0,spine1,Ethernet1/1\n"
        "gpu02,ens1f0np0,spine1,Eth1/2\n"
        "gpu03,ens1f0np0,spine1,Eth1/1\n"          # spine1's Ethernet1/1 again (line 2)
        "leaf1,Et1/1/1,gpu04,ens1f0np0\n"          # leaf1: EOS (three levels)
        "leaf1,Ethernet1/1/1,gpu05,ens1f0np0\n",   # leaf1's Ethernet1/1/1 again (line 5)
        encoding="utf-8",
    )
    out = tmp_path / "new.yaml"
    r = run("import", "cabling", str(plan), "--out", str(out))
    assert r.returncode == 1, (r.stdout, r.stderr)
    assert not out.exists() and not list(tmp_path.glob(".new.yaml.*"))
    lines = [ln for ln in r.stderr.splitlines() if "RT008" in ln]
    assert any("plan.csv:4:4 Port B" in ln and "port spine1:Ethernet1/1 (written 'Eth1/1') is already cabled "
               f"at {plan}:2:4 (written 'Ethernet1/1')" in ln for ln in lines), r.stderr
    assert any("plan.csv:6:2 Port A" in ln and "port leaf1:Ethernet1/1/1 (written 'Ethernet1/1/1') is "
               f"already cabled at {plan}:5:2 (written 'Et1/1/1')" in ln for ln in lines), r.stderr
    assert len(lines) == 2, r.stderr
    # merge: the inventory's platform expands the names; the same two rows are refused, nothing written
    inv = tmp_path / "inv.yaml"
    inv.write_text((REPO / "inventories" / "mixed-vendor.yaml").read_text(encoding="utf-8"), encoding="utf-8")
    before = inv.read_bytes()
    spine = next(s for s in load_inventory(inv).inventory.switches if s.platform == "nxos")
    again = tmp_path / "again.csv"
    again.write_text(f"Device A,Port A,Device B,Port B\ngpuX,ens1f0np0,{spine.name},Ethernet1/30\n"
                     f"gpuY,ens1f0np0,{spine.name},eth1/30\n", encoding="utf-8")
    r = run("import", "cabling", str(again), "--into", str(inv))
    assert r.returncode == 1 and inv.read_bytes() == before, (r.stdout, r.stderr)
    assert "again.csv:3:4 Port B" in r.stderr and f"port {spine.name}:Ethernet1/30" in r.stderr, r.stderr
