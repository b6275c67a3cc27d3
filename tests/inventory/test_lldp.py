"""LLDP: every platform's capture read back, import lldp round trips, lint --lldp finds planted mistakes."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from roce_tune.findings import RoceTuneError
from roce_tune.inventory.lldp import inventory_from_lldp, read_lldp_dir, render_lldp_view, write_lldp_view
from roce_tune.inventory.lldp_lint import check_lldp
from roce_tune.inventory.loader import load_inventory
from roce_tune.inventory.models import Inventory
from roce_tune.inventory.skeleton import SkeletonOptions, inventory_yaml
from roce_tune.platforms import cumulus, eos, junos, nxos, sonic
from roce_tune.platforms.lldp import parse_lldpctl_json
from tests.inventory.cabling_helpers import REPO, SHIPPED, cabling, run


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: p.name)
def test_lldp_view_imports_back_to_the_same_cabling(path: Path, tmp_path: Path) -> None:
    inv = load_inventory(path).inventory
    write_lldp_view(inv, tmp_path / "lldp")
    out = tmp_path / "imported.yaml"
    r = run("import", "lldp", str(tmp_path / "lldp"), "--out", str(out))
    assert r.returncode == 0, r.stderr
    back = load_inventory(out).inventory
    assert cabling(back) == cabling(inv)
    assert {(s.name, s.platform, s.model) for s in back.switches} == {
        (s.name, s.platform, s.model) for s in inv.switches
    }
    assert {s.name: s.role for s in back.switches} == {s.name: s.role for s in inv.switches}
    assert check_lldp(load_inventory(path), read_lldp_dir(tmp_path / "lldp")) == []


def _plant(path: Path, tmp_path: Path, change: Callable[[dict[str, Any]], None]) -> Path:
    data = load_inventory(path).inventory.model_dump(mode="json", exclude_none=True)
    change(data)
    write_lldp_view(Inventory.model_validate(data), tmp_path / "lldp")
    return tmp_path / "lldp"


def test_planted_swap_is_rt132_at_the_switch_port(tmp_path: Path) -> None:
    inv_path = REPO / "inventories" / "mixed-vendor.yaml"

    def swap(d: dict[str, Any]) -> None:
        a, b = d["links"][0], d["links"][1]
        a["b"], b["b"] = b["b"], a["b"]

    lldp = _plant(inv_path, tmp_path, swap)
    r = run("lint", "--no-plan-checks", "--lldp", str(lldp), str(inv_path))
    assert r.returncode == 1
    loaded = load_inventory(inv_path).inventory
    a, b = loaded.links[0], loaded.links[1]
    got = [ln for ln in r.stdout.splitlines() if "RT13" in ln]
    assert len(got) == 1 and "RT132" in got[0], r.stdout
    assert f" {a.a} links[0]" in got[0] or f" {a.b} links[0]" in got[0]
    assert a.b in got[0] and b.b in got[0]


def test_planted_missing_link_is_rt130(tmp_path: Path) -> None:
    inv_path = REPO / "inventories" / "site.yaml"
    loaded = load_inventory(inv_path)
    gone = loaded.inventory.links[5]
    lldp = _plant(inv_path, tmp_path, lambda d: d["links"].pop(5))
    found = check_lldp(loaded, read_lldp_dir(lldp))
    assert [f.rule for f in found] == ["RT130"]
    loc = found[0].location
    assert loc.path == "links[5]" and f"{loc.device}:{loc.port}" in (gone.a, gone.b)
    assert loc.line == loaded.locate("links[5]").line


def test_planted_rail_mixup_is_rt133_at_the_leaf_port(tmp_path: Path) -> None:
    inv_path = REPO / "inventories" / "spectrum-x-su.yaml"
    loaded = load_inventory(inv_path)
    host = loaded.inventory.hosts[3]
    rail0_leaf = host.nics[0].switch_port.split(":")[0]
    free = "Ethernet200"

    def mix(d: dict[str, Any]) -> None:
        d["switches"][[s["name"] for s in d["switches"]].index(rail0_leaf)]["ports"].append(
            {"name": free, "speed": "400G"}
        )
        d["hosts"][3]["nics"][1]["switch_port"] = f"{rail0_leaf}:{free}"

    found = check_lldp(loaded, read_lldp_dir(_plant(inv_path, tmp_path, mix)))
    assert [f.rule for f in found] == ["RT133"]
    f = found[0]
    assert (f.location.device, f.location.port, f.location.path) == (
        rail0_leaf,
        free,
        "hosts[3].nics[1].switch_port",
    )
    assert f"{host.name} {host.nics[1].netdev} (rail 1)" in f.message


def test_moved_cable_is_rt134_and_unknown_neighbour_rt131(tmp_path: Path) -> None:
    inv_path = REPO / "inventories" / "lab-2node.yaml"
    loaded = load_inventory(inv_path)

    def move(d: dict[str, Any]) -> None:
        d["switches"][0]["ports"].append({"name": "Ethernet16", "speed": "400G"})
        d["switches"].append(
            {
                "name": "border1",
                "platform": "sonic",
                "model": "SN4700",
                "role": "spine",
                "ports": [{"name": "Ethernet0", "speed": "400G"}],
            }
        )
        d["switches"][0]["ports"].append({"name": "Ethernet24", "speed": "400G"})
        d["links"] = [{"a": "lab-leaf1:Ethernet24", "b": "border1:Ethernet0"}]
        d["hosts"][1]["nics"][0]["switch_port"] = "lab-leaf1:Ethernet16"

    lldp = _plant(inv_path, tmp_path, move)
    (lldp / "border1.lldp.txt").unlink()
    found = check_lldp(loaded, read_lldp_dir(lldp))
    assert sorted(f.rule for f in found) == ["RT131", "RT134"]
    extra = next(f for f in found if f.rule == "RT131")
    assert "border1 is not in the inventory" in extra.message and extra.location.file.endswith(
        "lab-leaf1.lldp.txt"
    )
    assert (extra.location.device, extra.location.port) == ("lab-leaf1", "Ethernet24")


def test_direct_cable_p0_to_p1_is_rt135(tmp_path: Path) -> None:
    from roce_tune.inventory.lldp_lint import example_report

    (bad,) = example_report("RT135")
    assert (
        "RT135" in bad
        and "gpu01:ens1f0np0" in bad
        and "NCCL pairs gpu01 ens1f0np0 with gpu02 ens1f0np0" in bad
    )
    assert example_report("RT135", fixed=True) == []


def test_unknown_platform_capture_is_an_error_with_position_and_nothing_written(tmp_path: Path) -> None:
    d = tmp_path / "lldp"
    d.mkdir()
    inv = load_inventory(REPO / "inventories" / "lab-2node.yaml").inventory
    for dev, text in render_lldp_view(inv).items():
        (d / f"{dev}.txt").write_text(text)
    (d / "r1.txt").write_text(
        "r1#show version\nCisco IOS XR Software, Version 7.9.2\n"
        "r1#show lldp neighbors\nDevice ID  Local Intf  Hold-time  Capability  Port ID\n"
    )
    out = tmp_path / "inv.yaml"
    r = run("import", "lldp", str(d), "--out", str(out))
    assert r.returncode == 1 and not out.exists()
    # the LLDP table is the shape NX-OS prints (read as such); the IOS XR version output is what no
    # platform reads, and that is the error
    assert "r1.txt:1: error RT010" in r.stderr
    r = run("lint", "--lldp", str(d), "inventories/lab-2node.yaml")
    assert r.returncode == 1 and "r1.txt:1" in r.stderr


def test_broken_json_is_an_error_at_its_line(tmp_path: Path) -> None:
    d = tmp_path / "lldp"
    d.mkdir()
    (d / "leaf1.txt").write_text(
        'leaf1# show lldp neighbors detail | json\n{\n  "lldpNeighbors": {\n    "Ethernet1": [\n}\n'
    )
    with pytest.raises(RoceTuneError) as exc:
        read_lldp_dir(d)
    (f,) = exc.value.findings
    assert f.location.file.endswith("leaf1.txt") and f.location.line == 5 and "JSON" in f.message


# --- each platform's reader on the shapes real devices print ---------------------------------------------
def test_lldpctl_single_interface_object_list_and_mac_port_id() -> None:
    one = {
        "lldp": {
            "interface": {
                "ens1f0np0": {
                    "via": "LLDP",
                    "chassis": {"leaf1.example.net": {"id": {"type": "mac", "value": "0c:42:a1:00:00:01"}}},
                    "port": {"id": {"type": "ifname", "value": "Ethernet0"}, "descr": "Ethernet0"},
                }
            }
        }
    }
    (n,) = parse_lldpctl_json(json.dumps(one, indent=2))
    assert (n.local_port, n.remote_system, n.remote_port, n.remote_is_nic) == (
        "ens1f0np0",
        "leaf1.example.net",
        "Ethernet0",
        False,
    )
    many = {
        "lldp": {
            "interface": [
                {
                    "swp1": {
                        "chassis": {"gpu01": {}},
                        "port": {"id": {"type": "mac", "value": "02:00:00:00:00:01"}, "descr": "ens1f0np0"},
                    }
                },
                {
                    "swp2": {
                        "chassis": {"id": {"type": "mac", "value": "02:00:00:00:00:09"}},
                        "port": {"id": {"type": "local", "value": "Eth1/5"}},
                    }
                },
            ]
        }
    }
    a, b = parse_lldpctl_json(json.dumps(many, indent=2))
    assert (a.remote_system, a.remote_port, a.remote_is_nic) == ("gpu01", "ens1f0np0", True)
    assert (b.local_port, b.remote_system, b.remote_port) == ("swp2", None, "Eth1/5")


def test_sonic_table_with_an_empty_capability_and_descriptions_with_spaces() -> None:
    text = (
        "Capability codes: (R) Router, (B) Bridge, (O) Other\n"
        "LocalPort    RemoteDevice    RemotePortID       Capability    RemotePortDescr\n"
        "-----------  --------------  -----------------  ------------  -----------------\n"
        "Ethernet0    gpu01           0c:42:a1:11:22:33                ens1f0np0\n"
        "Ethernet128  spine1          Ethernet4          BR            to leaf1 port 128\n"
        "--------------------------------------------------\nTotal entries displayed:  2\n"
    )
    a, b = sonic.parse_lldp_table(text)
    assert (a.local_port, a.remote_system, a.remote_port, a.remote_is_nic) == (
        "Ethernet0",
        "gpu01",
        "ens1f0np0",
        True,
    )
    assert (b.remote_port, b.index) == ("Ethernet4", 4)


def test_eos_quoted_interface_id_and_version_json() -> None:
    doc = {
        "lldpNeighbors": {
            "Ethernet1/1": {
                "lldpNeighborInfo": [
                    {
                        "systemName": "spine1",
                        "neighborInterfaceInfo": {
                            "interfaceIdType": "interfaceName",
                            "interfaceId": '"Ethernet3/1"',
                            "interfaceDescription": "x",
                        },
                    }
                ]
            }
        }
    }
    (n,) = eos.parse_lldp_json(json.dumps(doc))
    assert (n.local_port, n.remote_port) == ("Ethernet1/1", "Ethernet3/1")
    facts = eos.parse_show_version('{"modelName": "DCS-7060DX5-64S", "version": "4.31.2F"}')
    assert (facts.model, facts.os_version) == ("7060DX5-64S", "4.31.2F")


@pytest.mark.parametrize("written", ["Eth1/7", "Et1/7", "e1/7", "ethernet1/7"])
def test_nxos_single_row_object_and_abbreviated_local_port(written: str) -> None:
    """Every abbreviation NX-OS accepts is the port audit and import call Ethernet1/7 (one normaliser)."""
    doc = {
        "TABLE_nbor_detail": {
            "ROW_nbor_detail": {
                "l_port_id": written,
                "sys_name": "leaf3",
                "port_id": "swp61",
                "port_desc": "swp61",
            }
        }
    }
    (n,) = nxos.parse_lldp_json(json.dumps(doc))
    assert (n.local_port, n.remote_system, n.remote_port) == ("Ethernet1/7", "leaf3", "swp61")


def test_junos_older_keys_local_interface_and_port_description() -> None:
    doc = {
        "lldp-neighbors-information": [
            {
                "lldp-neighbor-information": [
                    {
                        "lldp-local-interface": [{"data": "et-0/0/3"}],
                        "lldp-remote-chassis-id": [{"data": "aa:bb:cc:dd:ee:ff"}],
                        "lldp-remote-port-description": [{"data": "Ethernet1/2"}],
                        "lldp-remote-system-name": [{"data": "spine1"}],
                    }
                ]
            }
        ]
    }
    (n,) = junos.parse_lldp_json(json.dumps(doc))
    assert (n.local_port, n.remote_system, n.remote_port) == ("et-0/0/3", "spine1", "Ethernet1/2")


def test_cumulus_nvue_and_version_via_part_number() -> None:
    doc = {
        "swp1": {
            "lldp": {
                "neighbor": {
                    "gpu01": {
                        "chassis": {"system-name": "gpu01"},
                        "port": {"type": "mac", "id": "02:00:00:00:00:01", "description": "ens1f0np0"},
                    }
                }
            }
        },
        "eth0": {"lldp": {}},
    }
    (n,) = cumulus.parse_nv_lldp_json(json.dumps(doc, indent=2))
    assert (n.local_port, n.remote_system, n.remote_port, n.remote_is_nic) == (
        "swp1",
        "gpu01",
        "ens1f0np0",
        True,
    )
    facts = cumulus.parse_nv_system_json('{"build": "Cumulus Linux 5.9.1", "part-number": "MSN5600-WS2FO"}')
    assert (facts.model, facts.os_version) == ("SN5600", "5.9.1")


def test_import_lldp_skeleton_marks_rails_and_external_neighbours(tmp_path: Path) -> None:
    inv = load_inventory(REPO / "inventories" / "spectrum-x-su.yaml").inventory
    write_lldp_view(inv, tmp_path)
    data = inventory_from_lldp(read_lldp_dir(tmp_path), SkeletonOptions())
    assert data["site"]["rail_optimised"] is True
    rails = {s["name"]: s.get("rail") for s in data["switches"]}
    assert rails == {s.name: s.rail for s in inv.switches}
    assert "links:" in inventory_yaml(data)
