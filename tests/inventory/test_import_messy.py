"""Cabling plans and LLDP captures as they come from the field (spreadsheet exports, vendor captures):
defects found by feeding the importers messy real-world input (real files, real CLI)."""

from __future__ import annotations

import difflib
import shutil
import subprocess
from pathlib import Path

import pytest

from roce_tune.inventory.loader import load_inventory
from tests.inventory.cabling_helpers import REPO, run


def _changed_lines(before: str, after: str) -> list[str]:
    return [
        d
        for d in difflib.unified_diff(before.splitlines(), after.splitlines(), lineterm="", n=0)
        if d[:1] in "+-" and not d.startswith(("+++", "---"))
    ]


def test_merge_changes_only_the_lines_the_plan_changes(tmp_path: Path) -> None:
    """--into on a shipped inventory (block lists indented under their key, no links: key): a plan that
    changes one cable length changes that one line; indentation and absent keys stay as they were."""
    inv = tmp_path / "lab.yaml"
    shutil.copy(REPO / "inventories" / "lab-2node.yaml", inv)
    before = inv.read_text(encoding="utf-8")
    plan = tmp_path / "plan.csv"
    plan.write_text(
        "Device A,Port A,Device B,Port B,Length\r\n"
        "node1,ens1f0np0,lab-leaf1,Ethernet0,2 m\r\n"
        "node2,ens1f0np0,lab-leaf1,Ethernet8,5 m\r\n",
        encoding="utf-8",
    )
    r = run("import", "cabling", str(plan), "--into", str(inv))
    assert r.returncode == 0, r.stderr
    after = inv.read_text(encoding="utf-8")
    changed = _changed_lines(before, after)
    assert len(changed) == 2, "\n".join(changed)
    assert changed[0].startswith("-") and "cable_length: 2m}" in changed[0]
    assert changed[1] == changed[0].replace("-", "+", 1).replace("cable_length: 2m}", "cable_length: 5m}")


def test_merge_keeps_a_zero_indented_sequence_layout(tmp_path: Path) -> None:
    """An inventory written with list items at the key's column (ruamel's and many editors' default) keeps
    that layout; an added switch port and NIC follow it."""
    text = (
        "# lab\n"
        "site:\n"
        "  name: lab\n"
        "switches:\n"
        "- name: leaf1  # the one leaf\n"
        "  platform: sonic\n"
        "  model: SN4700\n"
        "  role: leaf\n"
        "  ports:\n"
        "  - {name: Ethernet0, speed: 400G}\n"
        "hosts:\n"
        "- name: gpu01\n"
        "  nics:\n"
        "  - {model: connectx-7, netdev: ens1f0np0, rdma_device: mlx5_0, speed: 400G, "
        'switch_port: "leaf1:Ethernet0"}\n'
    )
    inv = tmp_path / "lab.yaml"
    inv.write_text(text, encoding="utf-8")
    plan = tmp_path / "plan.csv"
    plan.write_text("Device A,Port A,Device B,Port B\ngpu02,ens1f0np0,leaf1,Ethernet4\n", encoding="utf-8")
    r = run("import", "cabling", str(plan), "--into", str(inv))
    assert r.returncode == 0, r.stderr
    changed = _changed_lines(text, inv.read_text(encoding="utf-8"))
    assert all(c.startswith("+") for c in changed), changed
    assert "+  - {name: Ethernet4, speed: 400G}" in changed and "+- name: gpu02" in changed


def test_device_spelt_in_two_cases_is_an_error_at_its_cell(tmp_path: Path) -> None:
    """'LEAF-01' on one row and 'leaf-01' on the next are one device (hostnames are not case-sensitive);
    the import made two switches of them (one of them with no uplinks) and lint passed."""
    plan = tmp_path / "plan.csv"
    plan.write_text(
        "Device A;Port A;Device B;Port B\r\n"
        "LEAF-01;Ethernet0;gpu01;ens1f0np0\r\n"
        "leaf-01;Ethernet4;gpu02;ens1f0np0\r\n"
        "leaf-01;Ethernet248;spine01;Ethernet0\r\n"
        "spine01;Ethernet4;Leaf-01;Ethernet252\r\n",
        encoding="utf-8",
    )
    out = tmp_path / "fabric.yaml"
    r = run("import", "cabling", str(plan), "--out", str(out))
    assert r.returncode == 1, r.stdout
    assert not out.exists()
    lines = [ln for ln in r.stderr.splitlines() if "RT008" in ln]
    assert len(lines) == 3, r.stderr
    wheres = ("plan.csv:3:1 Device A:", "plan.csv:4:1 Device A:", "plan.csv:5:3 Device B:")
    for line, where in zip(lines, wheres, strict=True):
        assert where in line and "is spelt 'LEAF-01' on line 2" in line


def test_a_repeated_row_is_one_finding_naming_the_first(tmp_path: Path) -> None:
    """The same cable twice (a copied row, or listed once from each end) is one finding, not one per
    port."""
    plan = tmp_path / "plan.csv"
    plan.write_text(
        "Device A,Port A,Device B,Port B\n"
        "leaf1,Ethernet0,gpu01,ens1f0np0\n"
        "leaf1,Ethernet0,gpu01,ens1f0np0\n"
        "gpu01,ens1f0np0,leaf1,Ethernet0\n",
        encoding="utf-8",
    )
    r = run("import", "cabling", str(plan))
    assert r.returncode == 1 and r.stdout == ""
    lines = [ln for ln in r.stderr.splitlines() if "RT008" in ln]
    assert len(lines) == 2, r.stderr
    assert "plan.csv:3:1 Device A: error RT008" in lines[0] and "the same cable as line 2" in lines[0]
    assert "plan.csv:4:1 Device A: error RT008" in lines[1] and "the same cable as line 2" in lines[1]


def test_merge_refuses_a_device_spelt_otherwise_than_in_the_inventory(tmp_path: Path) -> None:
    """The plan writes 'LAB-LEAF1' for the inventory's 'lab-leaf1': the merge added a second switch
    'LAB-LEAF1' (platform guessed, model unknown) with the new host on it."""
    inv = tmp_path / "lab.yaml"
    shutil.copy(REPO / "inventories" / "lab-2node.yaml", inv)
    before = inv.read_text(encoding="utf-8")
    plan = tmp_path / "plan.csv"
    plan.write_text(
        "Device A,Port A,Device B,Port B\nnode3,ens1f0np0,LAB-LEAF1,Ethernet16\n", encoding="utf-8"
    )
    r = run("import", "cabling", str(plan), "--into", str(inv))
    assert r.returncode == 1, r.stderr
    assert "plan.csv:2" in r.stderr and "RT009" in r.stderr
    assert "'LAB-LEAF1'" in r.stderr and "lab-leaf1" in r.stderr and "lab.yaml:23" in r.stderr
    assert inv.read_text(encoding="utf-8") == before


def _mgmt_captures(tmp_path: Path) -> Path:
    """The shipped mixed-vendor fabric's captures, each switch's LLDP showing its out-of-band management
    port on the management switch too (what the real commands print: SONiC's ``show lldp table`` lists
    ``eth0``, EOS ``Management1``, NX-OS ``mgmt0``, Junos ``em0``, Cumulus ``eth0``)."""
    from roce_tune.inventory.lldp import write_lldp_view
    from roce_tune.inventory.loader import load_inventory
    from roce_tune.inventory.models import Inventory
    from roce_tune.platforms import platform

    inv = load_inventory(REPO / "inventories" / "mixed-vendor.yaml").inventory
    data = inv.model_dump(mode="json", exclude_none=True)
    ports = {"sonic": "eth0", "cumulus": "eth0", "eos": "Management1", "nxos": "mgmt0", "junos": "em0"}
    for i, sw in enumerate(data["switches"]):
        mgmt = ports[sw["platform"]]
        assert platform(sw["platform"]).inventory.mgmt_port is not None
        sw["ports"].append({"name": mgmt, "speed": "1G"})
        data["links"].append({"a": f"{sw['name']}:{mgmt}", "b": f"oob-sw1:Ethernet{i + 1}"})
    data["switches"].append(
        {"name": "oob-sw1", "platform": "sonic", "model": "SN2700", "role": "leaf",
         "ports": [{"name": f"Ethernet{i + 1}", "speed": "1G"} for i in range(len(data["switches"]))]}
    )
    cap = tmp_path / "cap"
    write_lldp_view(Inventory.model_validate(data), cap)
    (cap / "oob-sw1.lldp.txt").unlink()
    return cap


def test_lldp_neighbours_on_management_ports_are_not_fabric_cabling(tmp_path: Path) -> None:
    """Every switch's capture shows its management port's neighbour: the import made each one a 400G
    fabric port linked to an external 'oob-sw1', and lint --lldp reported an RT131 error per switch."""
    cap = _mgmt_captures(tmp_path)
    out = tmp_path / "fabric.yaml"
    r = run("import", "lldp", str(cap), "--out", str(out))
    assert r.returncode == 0, r.stderr
    text = out.read_text(encoding="utf-8")
    assert "oob-sw1" not in text and "eth0" not in text and "Management1" not in text, text
    r = run("lint", "--lldp", str(cap), str(REPO / "inventories" / "mixed-vendor.yaml"))
    assert "RT13" not in r.stdout + r.stderr, r.stdout + r.stderr


def test_sonic_table_row_of_a_neighbour_without_a_system_name() -> None:
    """lldpshow prints '' for a neighbour that sends no System Name TLV (sonic-utilities scripts/lldpshow:
    ``r_name = ''``; tabulate leaves the cell blank): the parser rejected the whole capture as 'does not
    fit the table's columns'. It is a neighbour with no name, as the JSON readers give it."""
    from roce_tune.platforms import sonic

    text = (
        "Capability codes: (R) Router, (B) Bridge, (O) Other\n"
        "LocalPort    RemoteDevice    RemotePortID       Capability    RemotePortDescr\n"
        "-----------  --------------  -----------------  ------------  -----------------\n"
        "Ethernet0                    0c:42:a1:11:22:33  O             ens1f0np0\n"
        "Ethernet128  spine1          Ethernet4          BR            leaf1:Ethernet128\n"
        "--------------------------------------------------\nTotal entries displayed:  2\n"
    )
    a, b = sonic.parse_lldp_table(text)
    assert (a.local_port, a.remote_system, a.remote_port, a.remote_is_nic) == (
        "Ethernet0", None, "ens1f0np0", True
    )
    assert (b.remote_system, b.remote_port) == ("spine1", "Ethernet4")


def test_captures_ending_with_the_next_empty_prompt_read_as_without(tmp_path: Path) -> None:
    """A terminal paste ends with the prompt the device printed after the command ('admin@leaf7:~$ ',
    'leaf1#'): the line was read as output, every JSON capture failed with 'Extra data' and the advice
    was to capture the output unedited."""
    from roce_tune.inventory.lldp import write_lldp_view
    from roce_tune.inventory.loader import load_inventory

    inv = load_inventory(REPO / "inventories" / "mixed-vendor.yaml").inventory
    clean, pasted = tmp_path / "clean", tmp_path / "pasted"
    write_lldp_view(inv, clean)
    shutil.copytree(clean, pasted)
    prompts = {"leaf1": "leaf1#", "leaf3": "admin@leaf3> ", "leaf7": "cumulus@leaf7:mgmt:~$ ",
               "node01": "[root@node01 ~]# ", "spine1": "spine1# "}
    for dev, prompt in prompts.items():
        with (pasted / f"{dev}.lldp.txt").open("a", encoding="utf-8") as fh:
            fh.write(prompt + "\r\n")
    outs = _lldp_imports(tmp_path, clean, pasted)
    assert outs[0] == outs[1]


def test_an_empty_capture_or_a_command_without_output_is_an_error(tmp_path: Path) -> None:
    """leaf1.txt empty and leaf5's 'show lldp table' cut off after its prompt: both devices vanished from
    the import (their cables kept as links to external devices) and lint --lldp said nothing."""
    from roce_tune.inventory.lldp import write_lldp_view
    from roce_tune.inventory.loader import load_inventory

    inv = load_inventory(REPO / "inventories" / "mixed-vendor.yaml").inventory
    cap = tmp_path / "cap"
    write_lldp_view(inv, cap)
    (cap / "leaf1.lldp.txt").write_text("", encoding="utf-8")
    leaf5 = (cap / "leaf5.lldp.txt").read_text(encoding="utf-8")
    cut = leaf5[: leaf5.index("admin@leaf5:~$ show lldp table")] + "admin@leaf5:~$ show lldp table\n"
    (cap / "leaf5.lldp.txt").write_text(cut, encoding="utf-8")
    out = tmp_path / "fabric.yaml"
    r = run("import", "lldp", str(cap), "--out", str(out))
    assert r.returncode == 1 and not out.exists()
    errors = [ln for ln in r.stderr.splitlines() if "RT010" in ln]
    assert len(errors) == 2, r.stderr
    assert "leaf1.lldp.txt:1: error RT010" in errors[0] and "empty" in errors[0]
    line = cut.count("\n")
    assert f"leaf5.lldp.txt:{line}: error RT010" in errors[1]
    assert "'show lldp table' printed nothing" in errors[1]
    r = run("lint", "--lldp", str(cap), str(REPO / "inventories" / "mixed-vendor.yaml"))
    assert r.returncode == 1 and "RT010" in r.stdout + r.stderr


def test_device_names_in_lldp_match_without_case(tmp_path: Path) -> None:
    """The capture is LEAF5.txt while the spines' LLDP report 'leaf5' (and the inventory says leaf5):
    the import wrote each of leaf5's uplinks twice (LEAF5 - spine and spine - leaf5) and lint --lldp
    reported every LEAF5 cable as RT131 and every leaf5 cable missing."""
    from roce_tune.inventory.lldp import write_lldp_view
    from roce_tune.inventory.loader import load_inventory

    inv = load_inventory(REPO / "inventories" / "mixed-vendor.yaml").inventory
    cap = tmp_path / "cap"
    write_lldp_view(inv, cap)
    (cap / "leaf5.lldp.txt").rename(cap / "LEAF5.lldp.txt")
    out = tmp_path / "fabric.yaml"
    r = run("import", "lldp", str(cap), "--out", str(out))
    assert r.returncode == 0, r.stderr
    back = load_inventory(out).inventory
    ends = [e.lower() for link in back.links for e in (link.a, link.b)]
    assert len(ends) == len(set(ends)), sorted(ends)
    r = run("lint", "--lldp", str(cap), str(REPO / "inventories" / "mixed-vendor.yaml"))
    assert "RT13" not in r.stdout + r.stderr, r.stdout + r.stderr


def _ifname_hosts(tmp_path: Path) -> Path:
    """leaf5's capture (mixed-vendor) with its hosts advertising their netdev as port ID (lldpd
    ``configure lldp portidsubtype ifname``, lldpcli(8)) instead of a MAC."""
    import re

    from roce_tune.inventory.lldp import write_lldp_view
    from roce_tune.inventory.loader import load_inventory

    full = tmp_path / "full"
    write_lldp_view(load_inventory(REPO / "inventories" / "mixed-vendor.yaml").inventory, full)
    cap = tmp_path / "cap"
    cap.mkdir()
    text = (full / "leaf5.lldp.txt").read_text(encoding="utf-8")
    (cap / "leaf5.txt").write_text(re.sub(r"02(?::[0-9a-f]{2}){5}  O  ", "ens1f0np0          O  ", text))
    return cap


def test_lldp_neighbours_advertising_netdev_port_ids_are_hosts(tmp_path: Path) -> None:
    """Hosts whose lldpd sends the interface name as port ID were imported as external switches: no
    hosts, leaf5 a 'spine', its host ports links to nowhere."""
    cap = _ifname_hosts(tmp_path)
    out = tmp_path / "fabric.yaml"
    r = run("import", "lldp", str(cap), "--out", str(out))
    assert r.returncode == 0, r.stderr
    from roce_tune.inventory.loader import load_inventory

    inv = load_inventory(out).inventory
    assert [h.name for h in inv.hosts] == ["node09", "node10", "node11", "node12"]
    assert inv.hosts[0].nics[0].switch_port == "leaf5:Ethernet0"
    assert {s.name: s.role.value for s in inv.switches} == {"leaf5": "leaf"}
    r = run("import", "lldp", str(cap), "--out", str(out), "--switches", "node1[12]")
    assert r.returncode == 0, r.stderr
    assert [h.name for h in load_inventory(out).inventory.hosts] == ["node09", "node10"]


def test_media_cells_as_spreadsheets_write_them(tmp_path: Path) -> None:
    """'Passive DAC', 'QSFP112 DAC', '400G-DR4', 'Active Optical Cable (AOC)': what cable-type columns
    hold (part descriptions, not one word) were each an 'unknown media' error. A cell that names one
    media is read as it; one naming two ('DAC/AOC') stays an error at its cell."""
    plan = tmp_path / "plan.csv"
    plan.write_text(
        "Device A,Port A,Device B,Port B,Media\n"
        "leaf1,Ethernet0,gpu01,ens1f0np0,Passive DAC\n"
        "leaf1,Ethernet4,gpu02,ens1f0np0,QSFP112 DAC\n"
        "leaf1,Ethernet8,gpu03,ens1f0np0,400G-DR4\n"
        "leaf1,Ethernet12,gpu04,ens1f0np0,Active Optical Cable (AOC)\n"
        "leaf1,Ethernet16,gpu05,ens1f0np0,OSFP 2xSR4 transceiver\n",
        encoding="utf-8",
    )
    from roce_tune.inventory.cabling_import import read_cabling_csv

    assert [c.media for c in read_cabling_csv(plan).cables] == ["dac", "dac", "optic", "aoc", "optic"]
    plan.write_text("Device A,Port A,Device B,Port B,Media\nleaf1,Ethernet0,gpu01,ens1f0np0,DAC/AOC\n")
    r = run("import", "cabling", str(plan))
    assert r.returncode == 1 and "plan.csv:2:5 Media: error RT008" in r.stderr and "'DAC/AOC'" in r.stderr


def test_hosts_whose_ports_look_like_no_switch_port_are_named_on_stderr(tmp_path: Path) -> None:
    """Hosts whose plan ports are 'p0' (or 'NIC1') read as switches: the skeleton had no hosts, every
    switch a 'spine', and nothing said so. The import now names the devices whose ports look like no
    switch platform's, with the fix (--hosts)."""
    plan = tmp_path / "plan.csv"
    plan.write_text(
        "Device A,Port A,Device B,Port B\n"
        "leaf-01,Ethernet0,leaf-gpu-01,p0\n"
        "leaf-01,Ethernet4,leaf-gpu-02,NIC1\n"
        "leaf-01,Ethernet8,spine-01,Ethernet0\n",
        encoding="utf-8",
    )
    r = run("import", "cabling", str(plan), "--out", str(tmp_path / "a.yaml"))
    assert r.returncode == 0, r.stderr
    notes = [ln for ln in r.stderr.splitlines() if ln.startswith("note:")]
    assert len(notes) == 1, r.stderr
    assert "leaf-gpu-01 (p0)" in notes[0] and "leaf-gpu-02 (NIC1)" in notes[0] and "--hosts" in notes[0]
    assert "spine-01" not in notes[0] and "leaf-01" not in notes[0]
    r = run("import", "cabling", str(plan), "--out", str(tmp_path / "b.yaml"), "--hosts", "leaf-gpu-.*")
    assert r.returncode == 0 and "note:" not in r.stderr, r.stderr


_PORTS = '[{name: "Ethernet[0-248/8]", speed: 400G}]'
_NIC = "model: connectx-7, netdev: ens1f0np0, rdma_device: mlx5_0, speed: 400G"
_SONIC_CLOS = "site: {name: sonic-clos}\nswitches:\n" + "".join(
    f"  - {{name: {n}, platform: sonic, model: SN4700, role: {n[:-1]}, ports: {_PORTS}}}\n"
    for n in ("leaf1", "leaf2", "spine1", "spine2")
) + """\
links:
  - {a: "leaf1:Ethernet128", b: "spine1:Ethernet0"}
  - {a: "leaf1:Ethernet136", b: "spine1:Ethernet8"}
  - {a: "leaf1:Ethernet144", b: "spine2:Ethernet0"}
  - {a: "leaf1:Ethernet152", b: "spine2:Ethernet8"}
  - {a: "leaf2:Ethernet128", b: "spine1:Ethernet16"}
  - {a: "leaf2:Ethernet136", b: "spine1:Ethernet24"}
  - {a: "leaf2:Ethernet144", b: "spine2:Ethernet16"}
  - {a: "leaf2:Ethernet152", b: "spine2:Ethernet24"}
hosts:
""" + "".join(
    f'  - {{name: gpu0{i}, nics: [{{{_NIC}, switch_port: "leaf{i}:Ethernet0"}}]}}\n' for i in (1, 2)
)


def test_sonic_to_sonic_cables_read_once_with_each_ends_own_port_name(tmp_path: Path) -> None:
    """SONiC advertises its port ID as the port's alias (lldpmgrd: ``lldpcli configure ports <port> lldp
    portidsubtype local <alias>``), so between two SONiC switches neither end's view names the other's
    port: the import wrote each leaf-spine cable twice (leaf1:Ethernet128 - spine1:etp1 and
    spine1:Ethernet0 - leaf1:etp17) and lint --lldp reported every one RT130 + RT131."""
    import re

    from roce_tune.inventory.lldp import write_lldp_view
    from roce_tune.inventory.loader import load_inventory, load_inventory_text
    from tests.inventory.cabling_helpers import cabling

    inv_file = tmp_path / "clos.yaml"
    inv_file.write_text(_SONIC_CLOS, encoding="utf-8")
    inv = load_inventory_text(_SONIC_CLOS).inventory
    cap = tmp_path / "cap"
    write_lldp_view(inv, cap)
    for f in cap.glob("*.txt"):
        text = f.read_text(encoding="utf-8")
        # switch neighbours: the RemotePortID column holds the far port's alias etp<N/8+1>
        text = re.sub(
            r"^(Ethernet\d+\s+(?:leaf|spine)\d\s+)Ethernet(\d+)(\s+)",
            lambda m: f"{m.group(1)}{f'etp{int(m.group(2)) // 8 + 1}':<{len(m.group(2)) + 8}}{m.group(3)}",
            text,
            flags=re.M,
        )
        f.write_text(text, encoding="utf-8")
    assert "etp17" in (cap / "spine1.lldp.txt").read_text(encoding="utf-8")
    out = tmp_path / "fabric.yaml"
    r = run("import", "lldp", str(cap), "--out", str(out))
    assert r.returncode == 0, r.stderr
    assert cabling(load_inventory(out).inventory) == cabling(inv)
    r = run("lint", "--lldp", str(cap), str(inv_file))
    assert "RT13" not in r.stdout + r.stderr, r.stdout + r.stderr


def test_lldpctl_keyvalue_on_a_host_reads_as_its_json() -> None:
    """``lldpctl -f keyvalue`` (lldpd's line format: ``lldp.<interface>.<path>=<value>``, one ``via`` line
    per neighbour) was an 'unknown platform or command' error; it reads as the JSON form does, including
    an interface name with a dot (a VLAN netdev) and a neighbour without a system name."""
    from roce_tune.platforms.lldp import parse_lldpctl_keyvalue

    text = (
        "lldp.ens1f0np0.via=LLDP\n"
        "lldp.ens1f0np0.rid=1\n"
        "lldp.ens1f0np0.age=0 day, 01:02:03\n"
        "lldp.ens1f0np0.chassis.mac=0c:42:a1:00:00:01\n"
        "lldp.ens1f0np0.chassis.name=leaf1.dc1.example.net\n"
        "lldp.ens1f0np0.chassis.descr=SONiC Software Version: SONiC.202311\n"
        "lldp.ens1f0np0.chassis.Bridge.enabled=on\n"
        "lldp.ens1f0np0.port.local=etp1\n"
        "lldp.ens1f0np0.port.descr=Ethernet0\n"
        "lldp.ens1f0np0.port.ttl=120\n"
        "lldp.ens1f0np0.port.auto-negotiation.supported=no\n"
        "lldp.eth0.100.via=LLDP\n"
        "lldp.eth0.100.chassis.name=oob1\n"
        "lldp.eth0.100.port.ifname=swp7\n"
        "lldp.ens2f0np0.via=LLDP\n"
        "lldp.ens2f0np0.chassis.mac=0c:42:a1:00:00:02\n"
        "lldp.ens2f0np0.port.mac=0c:42:a1:00:00:99\n"
        "lldp.ens2f0np0.port.descr=ens2f0np0\n"
    )
    a, b, c = parse_lldpctl_keyvalue(text)
    assert (a.local_port, a.remote_system, a.remote_port, a.remote_is_nic, a.index) == (
        "ens1f0np0", "leaf1.dc1.example.net", "etp1", False, 0
    )
    assert (b.local_port, b.remote_system, b.remote_port, b.index) == ("eth0.100", "oob1", "swp7", 11)
    assert (c.local_port, c.remote_system, c.remote_port, c.remote_is_nic) == (
        "ens2f0np0", None, "ens2f0np0", True
    )


def test_import_lldp_reads_host_captures_in_keyvalue_form(tmp_path: Path) -> None:
    """A fabric whose hosts were captured with ``lldpctl -f keyvalue`` imports as with ``-f json``."""
    from roce_tune.inventory.lldp import write_lldp_view
    from roce_tune.inventory.loader import load_inventory
    from roce_tune.platforms.lldp import parse_lldpctl_json

    inv = load_inventory(REPO / "inventories" / "lab-2node.yaml").inventory
    cap = tmp_path / "cap"
    write_lldp_view(inv, cap)
    for host in ("node1", "node2"):
        f = cap / f"{host}.lldp.txt"
        (n,) = parse_lldpctl_json(f.read_text(encoding="utf-8"))
        f.write_text(
            f"root@{host}:~# lldpctl -f keyvalue\n"
            f"lldp.{n.local_port}.via=LLDP\nlldp.{n.local_port}.chassis.name={n.remote_system}\n"
            f"lldp.{n.local_port}.port.ifname={n.remote_port}\nlldp.{n.local_port}.port.descr=x\n"
            f"root@{host}:~# \n",
            encoding="utf-8",
        )
    out = tmp_path / "fabric.yaml"
    r = run("import", "lldp", str(cap), "--out", str(out))
    assert r.returncode == 0, r.stderr
    from tests.inventory.cabling_helpers import cabling

    assert cabling(load_inventory(out).inventory) == cabling(inv)


def test_title_rows_above_the_header_and_an_excel_sep_line(tmp_path: Path) -> None:
    """A sheet exported with its title rows ('Cabling plan DC1 hall 2 (rev 3)', blank lines) above the
    header, or with Excel's 'sep=;' first line: the first line was taken for the header ('no column for
    a_device …'). Rows before the header with fewer than four cells filled (no cable fits in them) are
    skipped; line numbers stay those of the file."""
    plan = tmp_path / "plan.csv"
    plan.write_text(
        "sep=;\r\n"
        "Cabling plan DC1 hall 2 (rev 3);;;;\r\n"
        "Owner:;dc-ops;;;\r\n"
        ";;;;\r\n"
        "Device A;Port A;Device B;Port B;Length\r\n"
        "leaf1;Ethernet0;gpu01;ens1f0np0;3,5\r\n"
        "leaf1;Ethernet4;gpu02;ens1f0np0;-1\r\n",
        encoding="utf-8",
    )
    r = run("import", "cabling", str(plan))
    assert r.returncode == 1, r.stdout
    assert "plan.csv:7:5 Length: error RT008" in r.stderr and "negative" in r.stderr, r.stderr
    plan.write_text(plan.read_text(encoding="utf-8").replace(";-1", ";2"), encoding="utf-8")
    from roce_tune.inventory.cabling_import import read_cabling_csv

    read = read_cabling_csv(plan)
    assert read.delimiter == ";" and [(c.b_device, c.length_m) for c in read.cables] == [
        ("gpu01", 3.5), ("gpu02", 2.0)
    ]
    plan.write_text("leaf0,Ethernet0,gpu00,ens1f0np0\nDevice A,Port A,Device B,Port B\n", encoding="utf-8")
    r = run("import", "cabling", str(plan))
    assert r.returncode == 1 and "plan.csv:1: error RT008: no column for" in r.stderr, r.stderr


def test_merge_into_a_crlf_inventory_keeps_its_line_ends(tmp_path: Path) -> None:
    """An inventory saved with Windows line ends: --into rewrote every line (CRLF -> LF), so the diff of a
    one-length change was the whole file."""
    inv = tmp_path / "lab.yaml"
    before = (REPO / "inventories" / "lab-2node.yaml").read_text(encoding="utf-8").replace("\n", "\r\n")
    inv.write_bytes(before.encode())
    plan = tmp_path / "plan.csv"
    plan.write_text("Device A,Port A,Device B,Port B,Length\nnode2,ens1f0np0,lab-leaf1,Ethernet8,5m\n")
    r = run("import", "cabling", str(plan), "--into", str(inv))
    assert r.returncode == 0, r.stderr
    after = inv.read_bytes().decode()
    assert after.count("\r\n") == after.count("\n") == before.count("\n")
    assert len(_changed_lines(before, after)) == 2


def test_lldp_evidence_lines_point_at_the_local_port_entry(tmp_path: Path) -> None:
    """The capture line of a neighbour was the first line quoting its local port name, which can be an
    earlier entry's remote port (EOS leaf1 Ethernet5/1's neighbour port 'Ethernet1/1' before leaf1's own
    'Ethernet1/1' entry): lint findings pointed at the wrong neighbour. Each entry's line is now the line
    of its own key (or, for list forms, the first match after the previous entry)."""
    from roce_tune.inventory.lldp import render_lldp_view
    from roce_tune.inventory.loader import load_inventory
    from roce_tune.platforms import cumulus, eos, junos, nxos
    from roce_tune.platforms.lldp import parse_lldpctl_json

    inv = load_inventory(REPO / "inventories" / "mixed-vendor.yaml").inventory
    views = render_lldp_view(inv)
    parsers = {"eos": eos.parse_lldp_json, "junos": junos.parse_lldp_json, "nxos": nxos.parse_lldp_json,
               "cumulus": cumulus.parse_nv_lldp_json, "host": parse_lldpctl_json}
    platform = {s.name: s.platform.value for s in inv.switches} | {h.name: "host" for h in inv.hosts}
    checked = 0
    for dev, text in views.items():
        if platform[dev] not in parsers:
            continue
        body = text[text.rindex("\n{") + 1:] if "\n{" in text else text
        lines = body.splitlines()
        for n in parsers[platform[dev]](body):
            local = n.local_port if platform[dev] != "nxos" else n.local_port.replace("Ethernet", "Eth")
            assert local in lines[n.index], (dev, n.local_port, n.index, lines[n.index])
            wrong = ("interfaceId", 'port-id"', "remote")
            assert not any(k in lines[n.index] for k in wrong), lines[n.index]
            checked += 1
    assert checked > 40


def test_lint_lldp_ignores_a_host_management_nic_on_a_switch_outside_the_fabric(tmp_path: Path) -> None:
    """lldpd on a GPU host reports every interface, so the host's management NIC (eno1 on the
    out-of-band switch) is in every host capture: lint --lldp reported it as an undeclared cable (RT131
    error) on every host. A host port that is no declared NIC, seen on a device the inventory does not
    have, is not fabric cabling; the same port on a fabric switch still is RT131."""
    from roce_tune.inventory.lldp import render_lldp_view
    from roce_tune.inventory.loader import load_inventory
    from roce_tune.platforms import host
    from roce_tune.platforms.lldp import RemoteEnd

    inv_file = REPO / "inventories" / "lab-2node.yaml"
    views = render_lldp_view(load_inventory(inv_file).inventory)
    cap = tmp_path / "cap"
    cap.mkdir()
    for dev, text in views.items():
        (cap / f"{dev}.txt").write_text(text, encoding="utf-8")
    for node, peer in (("node1", "oob-sw1"), ("node2", "lab-leaf1")):
        ends = [RemoteEnd("ens1f0np0", "lab-leaf1", "Ethernet0" if node == "node1" else "Ethernet8"),
                RemoteEnd("eno1", peer, "Ethernet31")]
        (cap / f"{node}.txt").write_text(
            f"root@{node}:~# lldpctl -f json\n" + host.render_lldp(node, ends), encoding="utf-8"
        )
    r = run("lint", "--lldp", str(cap), str(inv_file))
    found = [ln for ln in (r.stdout + r.stderr).splitlines() if "RT13" in ln]
    assert len(found) == 1 and "RT131" in found[0] and "node2:eno1 - lab-leaf1:Ethernet31" in found[0], found


def test_import_lldp_leaves_out_host_nics_on_switches_nobody_captured(tmp_path: Path) -> None:
    """Every host capture shows its management NIC (eno1) on the out-of-band switch: the import made eno1
    an RDMA NIC (mlx5_0, rail 0, shifting the real NIC to mlx5_1 / rail 1) cabled to the undeclared
    'oob-sw1', and the inventory failed lint (RT101). Host cables to a device nobody captured are left
    out and named on stderr."""
    from roce_tune.inventory.lldp import render_lldp_view
    from roce_tune.inventory.loader import load_inventory
    from roce_tune.platforms import host
    from roce_tune.platforms.lldp import RemoteEnd

    views = render_lldp_view(load_inventory(REPO / "inventories" / "lab-2node.yaml").inventory)
    cap = tmp_path / "cap"
    cap.mkdir()
    for dev, text in views.items():
        (cap / f"{dev}.txt").write_text(text, encoding="utf-8")
    for node, port in (("node1", "Ethernet0"), ("node2", "Ethernet8")):
        oob = RemoteEnd("eno1", "oob-sw1", f"Ethernet{port[8:]}")
        ends = [RemoteEnd("ens1f0np0", "lab-leaf1", port), oob]
        (cap / f"{node}.txt").write_text(
            f"root@{node}:~# lldpctl -f json\n" + host.render_lldp(node, ends), encoding="utf-8"
        )
    out = tmp_path / "fabric.yaml"
    r = run("import", "lldp", str(cap), "--out", str(out))
    assert r.returncode == 0, r.stderr
    notes = [ln for ln in r.stderr.splitlines() if ln.startswith("note:")]
    assert len(notes) == 1 and "node1:eno1 - oob-sw1:Ethernet0" in notes[0], r.stderr
    assert "node2:eno1 - oob-sw1:Ethernet8" in notes[0]
    inv = load_inventory(out).inventory
    assert [(n.netdev, n.rdma_device, n.switch_port) for n in inv.hosts[0].nics] == [
        ("ens1f0np0", "mlx5_0", "lab-leaf1:Ethernet0")
    ]
    r = run("lint", str(out))
    assert " error" not in r.stdout + r.stderr.replace("0 error(s)", ""), r.stdout


def test_merge_leaves_a_length_that_is_the_same_in_other_spelling(tmp_path: Path) -> None:
    """The inventory says 'cable_length: 2' or '2.0m', the plan '2 m': the merge rewrote the value and
    reported a change ('2 -> 2m'); importing the plan changed nothing that mattered but the file."""
    inv = tmp_path / "lab.yaml"
    text = (REPO / "inventories" / "lab-2node.yaml").read_text(encoding="utf-8")
    text = text.replace("cable_length: 2m}", "cable_length: 2}", 1)
    text = text.replace("cable_length: 2m}", "cable_length: 2.0m}")
    inv.write_text(text, encoding="utf-8")
    plan = tmp_path / "plan.csv"
    plan.write_text(
        "Device A,Port A,Device B,Port B,Length\n"
        "node1,ens1f0np0,lab-leaf1,Ethernet0,2 m\n"
        "node2,ens1f0np0,lab-leaf1,Ethernet8,2.0m\n"
    )
    r = run("import", "cabling", str(plan), "--into", str(inv))
    assert r.returncode == 0, r.stderr
    assert "cable_length" not in r.stderr, r.stderr
    assert inv.read_text(encoding="utf-8") == text


def test_excel_unicode_text_export_utf16_tab_separated(tmp_path: Path) -> None:
    """Excel's 'Unicode Text' export (UTF-16 LE with a BOM, tab separated, CRLF) was 'not UTF-8 (byte
    0xff)'; it reads like the CSV."""
    from roce_tune.inventory.cabling_import import read_cabling_csv

    plan = tmp_path / "plan.txt"
    text = "Device A\tPort A\tDevice B\tPort B\tLength\r\nleaf1\tEthernet0\tgpu01\tens1f0np0\t3 m\r\n"
    plan.write_bytes(text.encode("utf-16"))
    read = read_cabling_csv(plan)
    assert read.delimiter == "\t" and [(c.a_device, c.b_port, c.length_m) for c in read.cables] == [
        ("leaf1", "ens1f0np0", 3.0)
    ]


def test_a_capture_file_holding_two_devices_prompts_is_an_error(tmp_path: Path) -> None:
    """leaf5's and leaf6's captures pasted into one leaf5.txt: leaf6's neighbours were read as leaf5's
    (two hosts on each leaf5 port) without a word. Prompts of two devices in one file are an RT010 error
    at the first prompt of the second device; one device's prompt that is not the file name (a switch
    still called 'sonic') is fine."""
    from roce_tune.inventory.lldp import render_lldp_view
    from roce_tune.inventory.loader import load_inventory

    views = render_lldp_view(load_inventory(REPO / "inventories" / "mixed-vendor.yaml").inventory)
    cap = tmp_path / "cap"
    cap.mkdir()
    (cap / "leaf5.txt").write_text(views["leaf5"] + views["leaf6"], encoding="utf-8")
    r = run("import", "lldp", str(cap), "--out", str(tmp_path / "x.yaml"))
    assert r.returncode == 1, r.stderr
    line = views["leaf5"].count("\n") + 1
    assert f"leaf5.txt:{line}: error RT010" in r.stderr and "leaf6" in r.stderr, r.stderr
    (cap / "leaf5.txt").write_text(views["leaf5"].replace("admin@leaf5", "admin@sonic"), encoding="utf-8")
    r = run("import", "lldp", str(cap), "--out", str(tmp_path / "x.yaml"))
    assert r.returncode == 0, r.stderr



def _lldp_imports(tmp_path: Path, clean: Path, edited: Path) -> list[str]:
    """``roce-tune import lldp`` of each capture folder (both must succeed): the inventories written, the
    edited folder's name spelt as the clean one's (the inventory's header names its source)."""
    outs = []
    for d in (clean, edited):
        out = tmp_path / f"{d.name}.yaml"
        r = run("import", "lldp", str(d), "--out", str(out))
        assert r.returncode == 0, r.stderr
        outs.append(out.read_text(encoding="utf-8").replace(d.name, clean.name))
    return outs


def _refused(kind: str, source: Path, out: Path,
             rule: str) -> tuple[list[str], subprocess.CompletedProcess[str]]:
    """``roce-tune import KIND SOURCE --out OUT`` that must fail writing nothing: its stderr lines naming
    ``rule``, and the run."""
    r = run("import", kind, str(source), "--out", str(out))
    assert r.returncode == 1 and not out.exists(), r.stderr
    return [ln for ln in r.stderr.splitlines() if rule in ln], r

def test_a_length_with_a_thousands_separator_is_an_error_not_a_decimal_comma(tmp_path: Path) -> None:
    """'1,000 m' (a 1 km optic as a US sheet writes it) was read with a decimal comma as 1 m: headroom
    sized for a thousandth of the cable, silently. A comma before exactly three digits is either; the
    plan must say which. '2,5' (a decimal comma) still reads as 2.5 m."""
    plan = tmp_path / "plan.csv"
    plan.write_text(
        "Device A,Port A,Device B,Port B,Length\n"
        "leaf1,Ethernet0,gpu1,ens1f0np0,\"2,5\"\n"
        "leaf1,Ethernet8,gpu2,ens1f0np0,\"1,000 m\"\n"
        "leaf1,Ethernet16,gpu3,ens1f0np0,\"2,500\"\n",
        encoding="utf-8",
    )
    out = tmp_path / "fabric.yaml"
    errors, r = _refused("cabling", plan, out, "RT008")
    assert len(errors) == 2, r.stderr
    assert errors[0].startswith(f"{plan}:3:5 Length") and "'1,000 m'" in errors[0], errors
    assert errors[1].startswith(f"{plan}:4:5 Length") and "thousands" in errors[1], errors
    plan.write_text(plan.read_text(encoding="utf-8").replace('"1,000 m"', "1000 m").replace('"2,500"', "2.5"),
                    encoding="utf-8")
    r = run("import", "cabling", str(plan), "--out", str(out))
    assert r.returncode == 0, r.stderr
    text = out.read_text(encoding="utf-8")
    assert "cable_length: 1000m" in text and text.count("cable_length: 2.5m") == 2


def test_captures_logged_by_script_or_putty_read_as_without(tmp_path: Path) -> None:
    """A session logged with util-linux script(1) starts with 'Script started on DATE [TERM=...]' and ends
    with 'Script done on DATE [COMMAND_EXIT_CODE="0"]'; a PuTTY session log starts with its '=~=~=... PuTTY
    log DATE =~=~=...' header. The first was 'output without a command prompt' (RT010 at line 1) and the
    last made the JSON before it 'Extra data' (RT010): the import refused logs exactly as they are kept."""
    from roce_tune.captures import split_blocks
    from roce_tune.inventory.lldp import write_lldp_view
    from roce_tune.inventory.loader import load_inventory

    inv = load_inventory(REPO / "inventories" / "mixed-vendor.yaml").inventory
    clean, logged = tmp_path / "clean", tmp_path / "logged"
    write_lldp_view(inv, clean)
    shutil.copytree(clean, logged)
    script_head = 'Script started on 2026-12-02 02:50:11+00:00 [TERM="xterm-256color" TTY="/dev/pts/0"]\n'
    script_tail = '\nScript done on 2026-12-02 02:51:40+00:00 [COMMAND_EXIT_CODE="0"]\n'
    putty_head = "=~=~=~=~=~=~=~=~=~=~=~= PuTTY log 2026.12.02 02:50:11 =~=~=~=~=~=~=~=~=~=~=~=\r\n"
    for dev, head, tail in (("leaf1", script_head, script_tail), ("node01", script_head, script_tail),
                            ("leaf5", putty_head, ""), ("leaf3", putty_head, "")):
        path = logged / f"{dev}.lldp.txt"
        path.write_text(head + path.read_text(encoding="utf-8") + tail, encoding="utf-8")
    text = (logged / "leaf1.lldp.txt").read_text(encoding="utf-8")
    assert [b.start for b in split_blocks(text, "leaf1.lldp.txt", "leaf1")][0] == 2
    outs = _lldp_imports(tmp_path, clean, logged)
    assert outs[0] == outs[1]


def test_a_login_banner_above_the_first_prompt_is_no_capture_block(tmp_path: Path) -> None:
    """A session captured from the login on starts with the device's banner (Debian's MOTD on SONiC and
    Cumulus, 'Last login: ...'): it was RT010 'output without a command prompt is not a capture roce-tune
    reads' at line 1. Output without any prompt, or an unreadable block after a prompt, is still RT010."""
    from roce_tune.inventory.lldp import write_lldp_view
    from roce_tune.inventory.loader import load_inventory

    inv = load_inventory(REPO / "inventories" / "mixed-vendor.yaml").inventory
    clean, logged = tmp_path / "clean", tmp_path / "logged"
    write_lldp_view(inv, clean)
    shutil.copytree(clean, logged)
    banner = ("Linux leaf5 6.1.0-11-2-amd64 #1 SMP PREEMPT_DYNAMIC Debian 6.1.38-4 x86_64\n"
              "You are on\n  ____   ___  _   _ _  ____\n / ___| / _ \\| \\ | (_)/ ___|\n\n"
              "-- Software for Open Networking in the Cloud --\n\n"
              "Last login: Tue Dec  1 09:12:03 2026 from 10.0.0.5\n")
    leaf5 = logged / "leaf5.lldp.txt"
    leaf5.write_text(banner + leaf5.read_text(encoding="utf-8"), encoding="utf-8")
    outs = _lldp_imports(tmp_path, clean, logged)
    assert outs[0] == outs[1]
    leaf5.write_text(banner, encoding="utf-8")
    r = run("import", "lldp", str(logged), "--out", str(tmp_path / "x.yaml"))
    assert r.returncode == 1 and "leaf5.lldp.txt:1: error RT010" in r.stderr, r.stderr
    leaf5.write_text("admin@leaf5:~$ show lldp table\n" + banner, encoding="utf-8")
    r = run("import", "lldp", str(logged), "--out", str(tmp_path / "x.yaml"))
    assert r.returncode == 1 and "leaf5.lldp.txt:1: error RT010" in r.stderr, r.stderr


@pytest.mark.parametrize("form", ["utf-16", "script-crcrlf", "ansi-prompt"])
def test_two_devices_in_one_capture_are_found_in_every_form_the_splitter_reads(tmp_path: Path,
                                                                              form: str) -> None:
    """The two-devices check read the file as UTF-8 and split it with str.splitlines: a UTF-16 capture
    (PowerShell 5's redirection) or one with colour prompts hid leaf6's prompt, and leaf6's neighbours were
    read as leaf5's without a word; a script(1) log's '\\r\\r\\n' counted twice, so the line was wrong."""
    from roce_tune.inventory.lldp import render_lldp_view
    from roce_tune.inventory.loader import load_inventory

    views = render_lldp_view(load_inventory(REPO / "inventories" / "mixed-vendor.yaml").inventory)
    cap = tmp_path / "cap"
    cap.mkdir()
    text = views["leaf5"] + views["leaf6"]
    if form == "utf-16":
        raw = text.encode("utf-16")
    elif form == "script-crcrlf":
        raw = text.replace("\n", "\r\r\n").encode("utf-8")
    else:
        raw = text.replace("admin@leaf", "\x1b[01;32madmin@leaf").replace(":~$ ", "\x1b[00m:~$ ").encode()
    (cap / "leaf5.txt").write_bytes(raw)
    r = run("import", "lldp", str(cap), "--out", str(tmp_path / "x.yaml"))
    assert r.returncode == 1, r.stderr
    line = views["leaf5"].count("\n") + 1
    assert f"leaf5.txt:{line}: error RT010" in r.stderr and "leaf6" in r.stderr, r.stderr


@pytest.mark.parametrize("header", ["Device,Port,Device,Port,Length",
                                    "Hostname,Interface,Hostname,Interface,Length",
                                    "A Hostname,A Interface,Z Hostname,Z Interface,Length",
                                    "Device A,Port A,Device Z,Port Z,Length",
                                    "A Side Device,A Side Port,Z Side Device,Z Side Port,Length"])
def test_header_layouts_of_real_cabling_sheets(tmp_path: Path, header: str) -> None:
    """A sheet with the ends side by side under repeated headers (Device, Port, Device, Port), or naming the
    far end Z as cabling (A-end/Z-end) does, was RT008 'no column for ...' with --columns as the fix, which
    cannot pick the second of two 'Device' columns: such a plan could not be imported at all."""
    plan = tmp_path / "plan.csv"
    plan.write_text(f"{header}\nleaf1,Ethernet0,gpu1,ens1f0np0,3m\nleaf1,Ethernet8,gpu2,ens1f0np0,3m\n",
                    encoding="utf-8")
    out = tmp_path / "fabric.yaml"
    r = run("import", "cabling", str(plan), "--out", str(out))
    assert r.returncode == 0, r.stderr
    text = out.read_text(encoding="utf-8")
    assert 'switch_port: "leaf1:Ethernet0"' in text and 'switch_port: "leaf1:Ethernet8"' in text, text


def test_three_device_columns_are_still_ambiguous(tmp_path: Path) -> None:
    """Repeated headers pair up only when there are exactly two of them: a third 'Device' (a patch panel in
    the middle) is no cable end the importer can guess."""
    plan = tmp_path / "plan.csv"
    plan.write_text("Device,Port,Device,Port,Device,Port\nleaf1,Ethernet0,pp1,1,gpu1,ens1f0np0\n",
                    encoding="utf-8")
    r = run("import", "cabling", str(plan), "--out", str(tmp_path / "fabric.yaml"))
    assert r.returncode == 1 and f"{plan}:1: error RT008: no column for a_device" in r.stderr, r.stderr


def test_merge_into_a_symlinked_inventory_writes_the_file_it_points_to(tmp_path: Path) -> None:
    """fabric.yaml -> repo/inventories/pod2.yaml (a link into the team's repository): the rename put a new
    regular file in place of the link, 'wrote fabric.yaml' was printed and the repository's inventory kept
    the old cable length. The file the link names is written (atomically) and the link stays."""
    repo = tmp_path / "repo"
    repo.mkdir()
    real = repo / "pod2.yaml"
    shutil.copy(REPO / "inventories" / "lab-2node.yaml", real)
    real.chmod(0o640)
    link = tmp_path / "fabric.yaml"
    link.symlink_to(real)
    plan = tmp_path / "plan.csv"
    plan.write_text("Device A,Port A,Device B,Port B,Length\nnode1,ens1f0np0,lab-leaf1,Ethernet0,7 m\n",
                    encoding="utf-8")
    r = run("import", "cabling", str(plan), "--into", str(link))
    assert r.returncode == 0, r.stderr
    assert link.is_symlink() and link.resolve() == real
    assert 'switch_port: "lab-leaf1:Ethernet0", cable_length: 7m' in real.read_text(encoding="utf-8")
    assert real.stat().st_mode & 0o777 == 0o640
    assert [p.name for p in repo.iterdir()] == ["pod2.yaml"]  # no temporary file left


def test_a_switch_whose_port_names_fit_two_platforms_is_named_on_stderr(tmp_path: Path) -> None:
    """ar1's ports Et1/1/1 (EOS's breakout form) and Ethernet32/1 (NX-OS's form, and EOS's): the guesses
    disagreed and the switch was written as the --platform default, sonic, with 'Et1/1/1' left abbreviated,
    and nothing said so. The note names the switch, the platforms its ports fit and the fix."""
    plan = tmp_path / "plan.csv"
    plan.write_text(
        "Device A,Port A,Device B,Port B\n"
        "ar1,Et1/1/1,gpu1,ens1f0np0\n"
        "ar1,Ethernet32/1,spine1,swp1\n"
        "nx1,Eth1/1,gpu2,ens1f0np0\n"
        "nx1,Ethernet1/32,spine1,swp2\n",
        encoding="utf-8",
    )
    r = run("import", "cabling", str(plan), "--out", str(tmp_path / "a.yaml"))
    assert r.returncode == 0, r.stderr
    notes = [ln for ln in r.stderr.splitlines() if ln.startswith("note:")]
    assert len(notes) == 1, r.stderr
    assert "ar1 (eos: Et1/1/1; nxos: Ethernet32/1)" in notes[0] and "written as sonic" in notes[0], notes
    assert "nx1" not in notes[0] and "spine1" not in notes[0] and "--platform" in notes[0]
    r = run("import", "cabling", str(plan), "--out", str(tmp_path / "b.yaml"), "--platform", "eos")
    assert r.returncode == 0 and "note:" in r.stderr  # --platform is the default of the undecided, not forced


def test_lldpctl_keyvalue_value_over_several_lines_is_one_value(tmp_path: Path) -> None:
    """lldpd's keyvalue writer prints a value as it is (src/client/kv_writer.c: "%s=%s\\n"), so an NX-OS
    leaf's system description ('... Software 10.3(4a)', 'TAC support: ...', 'Copyright ...') spans three
    lines: the second was RT010 'is not an lldpctl -f keyvalue line' and the host's capture was refused.
    A line before the first key=value line is still an error."""
    from roce_tune.platforms.lldp import LldpParseError, parse_lldpctl_keyvalue

    text = (
        "lldp.ens1f0np0.via=LLDP\n"
        "lldp.ens1f0np0.chassis.name=leaf1\n"
        "lldp.ens1f0np0.chassis.descr=Cisco Nexus Operating System (NX-OS) Software 10.3(4a)\n"
        "TAC support: http://www.cisco.com/tac\n"
        "Copyright (c) 2002-2023, Cisco Systems, Inc. All rights reserved.\n"
        "lldp.ens1f0np0.port.ifname=Ethernet1/1\n"
        "lldp.ens2f0np0.via=LLDP\n"
        "lldp.ens2f0np0.chassis.name=leaf2\n"
        "lldp.ens2f0np0.port.ifname=Ethernet1/1\n"
    )
    a, b = parse_lldpctl_keyvalue(text)
    assert (a.local_port, a.remote_system, a.remote_port) == ("ens1f0np0", "leaf1", "Ethernet1/1")
    assert (b.local_port, b.remote_system, b.remote_port, b.index) == ("ens2f0np0", "leaf2", "Ethernet1/1", 6)
    with pytest.raises(LldpParseError):
        parse_lldpctl_keyvalue("TAC support: http://www.cisco.com/tac\n" + text)
    cap = tmp_path / "cap"
    cap.mkdir()
    (cap / "gpu1.txt").write_text("root@gpu1:~# lldpctl -f keyvalue\n" + text, encoding="utf-8")
    out = tmp_path / "fabric.yaml"
    r = run("import", "lldp", str(cap), "--out", str(out))
    assert r.returncode == 0, r.stderr


@pytest.mark.parametrize(("subtype", "port_id", "descr", "want"), [
    ("local", "513", "et-0/0/0", "et-0/0/0"),              # Junos default: the SNMP ifIndex, locally assigned
    ("Locally assigned", "537", "et-0/0/4", "et-0/0/4"),
    (None, "513", "et-0/0/0", "et-0/0/0"),                 # SONiC's table: no subtype column
    ("local", "etp1", "Ethernet0", "etp1"),                # SONiC's alias: a name, kept
    ("local", "513", None, "513"),                         # nothing better to say
    ("ifname", "1", "uplink", "1"),                        # an interface named 1 is its name
])
def test_a_numeric_locally_assigned_port_id_gives_way_to_the_port_description(
        subtype: str | None, port_id: str, descr: str | None, want: str) -> None:
    """Junos sends the interface's SNMP index as a locally assigned port ID by default (port-id-subtype
    locally-assigned) and its name as the port description: a SONiC leaf's table showed the Junos spine's
    port as '513', and an uncaptured Junos spine was imported as spine1:513 (lint --lldp: a cable on
    another port than declared)."""
    from roce_tune.platforms.lldp import remote_port_name

    assert remote_port_name(subtype, port_id, descr) == (want, False)


def test_two_capture_files_of_one_device_spelt_in_two_cases_are_one_device(tmp_path: Path) -> None:
    """leaf1.lldp.txt and LEAF1.show.txt (device names are not case-sensitive, docs/import.md): the import
    made a second switch 'LEAF1', a superspine cabled to the same spine ports as leaf1, and said nothing
    (lint of the result: RT120 and RT102 at lines of the written inventory, not of the captures)."""
    from roce_tune.inventory.lldp import write_lldp_view
    from roce_tune.inventory.loader import load_inventory

    inv = load_inventory(REPO / "inventories" / "mixed-vendor.yaml").inventory
    clean, doubled = tmp_path / "clean", tmp_path / "doubled"
    write_lldp_view(inv, clean)
    shutil.copytree(clean, doubled)
    shutil.copy(doubled / "leaf1.lldp.txt", doubled / "LEAF1.show.txt")
    outs = [text.replace("LEAF1", "leaf1") for text in _lldp_imports(tmp_path, clean, doubled)]
    assert outs[0] == outs[1]  # one device, spelt as its first file (LEAF1.show.txt sorts first)


def test_two_captures_of_one_device_that_disagree_are_an_error_at_the_capture(tmp_path: Path) -> None:
    """leaf1.txt from today and leaf1.old.txt from before a re-cabling (spine1:Ethernet1/1 moved from
    leaf1:Ethernet5/1 to Ethernet9/1 in one of them): both cables were imported, spine1:Ethernet1/1 cabled
    twice, exit 0. Now RT010 at the later capture's line, naming the earlier one; exit 1, nothing written."""
    from roce_tune.inventory.lldp import write_lldp_view
    from roce_tune.inventory.loader import load_inventory

    inv = load_inventory(REPO / "inventories" / "mixed-vendor.yaml").inventory
    cap = tmp_path / "cap"
    write_lldp_view(inv, cap)
    text = (cap / "leaf1.lldp.txt").read_text(encoding="utf-8")
    (cap / "leaf1.old.txt").write_text(text.replace('"Ethernet5/1"', '"Ethernet9/1"'), encoding="utf-8")
    out = tmp_path / "fabric.yaml"
    errors, r = _refused("lldp", cap, out, "RT010")
    line = text.splitlines().index('    "Ethernet5/1": {') + 1
    assert len(errors) == 1 and f"leaf1.old.txt:{line}: error RT010" in errors[0], r.stderr
    assert "spine1:Ethernet1/1" in errors[0] and f"leaf1.lldp.txt:{line}" in errors[0], errors


def test_lldp_names_an_inventory_cannot_hold_are_errors_at_the_capture(tmp_path: Path) -> None:
    """A neighbour advertising 'gpu01 (rack 3)', 'spine$(reboot)' or the port 'Ethernet 1/1' was written
    into the inventory as it came ('wrote fabric.yaml', exit 0) and failed only when linted, at lines of
    the written file. Each is RT010 at its capture line, exit 1, nothing written."""
    cap = tmp_path / "cap"
    cap.mkdir()
    (cap / "leaf1.txt").write_text(
        "admin@leaf1:~$ show version\n\nSONiC Software Version: SONiC.202311.1\n"
        "HwSKU: Mellanox-SN4700-O8C48\n"
        "admin@leaf1:~$ show lldp table\n"
        "Capability codes: (R) Router, (B) Bridge, (O) Other\n"
        "LocalPort   RemoteDevice       RemotePortID       Capability  RemotePortDescr\n"
        "----------  -----------------  -----------------  ----------  ----------------\n"
        "Ethernet0   gpu01 (rack 3)     b8:3f:d2:00:00:01  O           ens1f0np0\n"
        "Ethernet8   spine$(reboot)     Ethernet0          BR          leaf1:Ethernet8\n"
        "Ethernet16  spine2             Ethernet 1/1       BR          x\n"
        "Ethernet24  spine3             Ethernet0          BR          leaf1:Ethernet24\n"
        "--------------------------------------------------\nTotal entries displayed:  4\n",
        encoding="utf-8",
    )
    out = tmp_path / "fabric.yaml"
    errors, r = _refused("lldp", cap, out, "RT010")
    assert len(errors) == 3, r.stderr
    for line, name in ((9, "'gpu01 (rack 3)'"), (10, "'spine$(reboot)'"), (11, "'Ethernet 1/1'")):
        assert any(f"leaf1.txt:{line}: error RT010" in e and name in e for e in errors), (line, errors)


def test_a_plan_with_a_header_and_no_cable_rows_is_an_error(tmp_path: Path) -> None:
    """A sheet exported with its header but an empty or filtered-out body (every row a '#' comment) wrote
    an inventory with no switches, links or hosts, 'wrote fabric.yaml', exit 0; lint found nothing."""
    plan = tmp_path / "plan.csv"
    plan.write_text("Device A,Port A,Device B,Port B\n# leaf1,Ethernet0,gpu1,ens1f0np0\n\n", encoding="utf-8")
    out = tmp_path / "fabric.yaml"
    r = run("import", "cabling", str(plan), "--out", str(out))
    assert r.returncode == 1 and not out.exists(), r.stderr
    assert f"{plan}:1: error RT008" in r.stderr and "no cable rows" in r.stderr, r.stderr


@pytest.mark.parametrize(("magic", "what"), [(b"PK\x03\x04\x14\x00\x06\x00", "(.xlsx"),
                                             (b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1", "(.xls,")])
def test_a_spreadsheet_workbook_given_as_the_plan_says_so(tmp_path: Path, magic: bytes, what: str) -> None:
    """An .xlsx (a zip) or .xls (OLE) saved as plan.csv was 'the file is not UTF-8 (byte 0x..)'."""
    plan = tmp_path / "plan.csv"
    plan.write_bytes(magic + b"\x00\xb5U0#\xf4\x00[Content_Types].xml")
    r = run("import", "cabling", str(plan), "--out", str(tmp_path / "fabric.yaml"))
    assert r.returncode == 1, r.stderr
    assert f"{plan}:1: error RT008: the file is a spreadsheet workbook {what}" in r.stderr
    assert "CSV UTF-8" in r.stderr, r.stderr


def test_captures_without_any_lldp_neighbour_are_an_error(tmp_path: Path) -> None:
    """Every captured 'show lldp table' empty (LLDP off, or the links down when captured): the import wrote
    an inventory with no switches, links or hosts (the captured switch left out too), exit 0."""
    cap = tmp_path / "cap"
    cap.mkdir()
    (cap / "leaf1.txt").write_text(
        "admin@leaf1:~$ show version\n\nSONiC Software Version: SONiC.202311.1\n"
        "HwSKU: Mellanox-SN4700-O8C48\n"
        "admin@leaf1:~$ show lldp table\n"
        "Capability codes: (R) Router, (B) Bridge, (O) Other\n"
        "LocalPort    RemoteDevice    RemotePortID    Capability    RemotePortDescr\n"
        "-----------  --------------  --------------  ------------  -----------------\n"
        "--------------------------------------------------\nTotal entries displayed:  0\n",
        encoding="utf-8",
    )
    out = tmp_path / "fabric.yaml"
    r = run("import", "lldp", str(cap), "--out", str(out))
    assert r.returncode == 1 and not out.exists(), r.stderr
    assert "leaf1.txt:1: error RT010" in r.stderr and "no LLDP neighbour" in r.stderr, r.stderr


def test_merge_adds_a_port_at_the_speed_of_the_switchs_other_ports(tmp_path: Path) -> None:
    """--into site.yaml (SN2700 leaves and spines, every port 100G) without --speed: a new cable on a port
    the inventory does not declare adds it at 100G, as its switch's other ports, and says so on stderr (it
    was added at the 400G default, which the SN2700 cannot run: lint RT111). A switch whose ports run at
    several speeds keeps --speed."""
    inv = tmp_path / "site.yaml"
    text = (REPO / "inventories" / "site.yaml").read_text(encoding="utf-8")
    inv.write_text(text, encoding="utf-8")
    plan = tmp_path / "plan.csv"
    plan.write_text("Device A,Port A,Device B,Port B,Length\nleaf1,Ethernet2,spine1,Ethernet2,10m\n",
                    encoding="utf-8")
    r = run("import", "cabling", str(plan), "--into", str(inv))
    assert r.returncode == 0, r.stderr
    speeds = {(s.name, p.name): p.speed for s in load_inventory(inv).inventory.switches for p in s.ports}
    assert speeds[("leaf1", "Ethernet2")] == speeds[("spine1", "Ethernet2")] == 100
    assert "added port leaf1:Ethernet2 (100G: the speed of leaf1's other ports; not --speed 400G)" in r.stderr
    lint = run("lint", str(inv))
    assert "RT111" not in lint.stdout + lint.stderr, lint.stdout
    mixed = text.replace('{name: "Ethernet[64-124/4]", speed: 100G}    # uplinks to spine1/spine2',
                         '{name: "Ethernet[64-124/4]", speed: 40G}    # uplinks to spine1/spine2', 1)
    assert mixed != text
    inv.write_text(mixed, encoding="utf-8")
    r = run("import", "cabling", str(plan), "--into", str(inv), "--speed", "200G")
    assert r.returncode == 0, r.stderr
    speeds = {(s.name, p.name): p.speed for s in load_inventory(inv).inventory.switches for p in s.ports}
    assert (speeds[("leaf1", "Ethernet2")], speeds[("spine1", "Ethernet2")]) == (200, 100)
    assert "added port leaf1:Ethernet2 (200G)" in r.stderr
