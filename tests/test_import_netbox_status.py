"""`roce-tune import netbox` and NetBox's device and cable status (no NetBox needed: the mapping on
NetBox-shaped JSON, and the command against a loopback NetBox API stub; tests/netbox/ checks the same
against a real NetBox).

Before: every device and cable was imported whatever its status, so a decommissioning spine, an offline spare
or a cable being removed became live fabric (headroom, configs, PFC on a port to nothing), and a switch in
``inventory`` (on the shelf) became a device. Now devices with status active, planned or staged and cables
connected or planned are imported (``--status`` / ``--cable-status`` choose), and what is left out is listed.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from roce_tune.importers.netbox import (
    DEFAULT_DEVICE_STATUSES,
    DEVICE_STATUSES,
    Mapping,
    NetboxImportError,
    Snapshot,
    build,
    parse_statuses,
)
from roce_tune.inventory.loader import load_inventory
from tests.test_import_netbox_rules import _json_api


class _Fabric:
    """NetBox-shaped JSON (REST API 4.x: status as ``{"value", "label"}``, cable terminations carrying their
    interface and its device) for a small fabric built by the calls below."""

    def __init__(self) -> None:
        self.devices: list[dict[str, Any]] = []
        self.interfaces: list[dict[str, Any]] = []
        self.cables: list[dict[str, Any]] = []
        self._ifaces: dict[str, dict[str, Any]] = {}

    def switch(self, name: str, status: str = "active", role: str = "leaf") -> None:
        self.devices.append({"id": len(self.devices) + 1, "name": name, "role": {"slug": role},
                             "status": {"value": status, "label": status.title()},
                             "platform": {"slug": "sonic", "name": "SONiC"},
                             "device_type": {"model": "SN4700", "slug": "sn4700"}})

    def host(self, name: str, status: str = "active") -> None:
        self.devices.append({"id": len(self.devices) + 1, "name": name, "role": {"slug": "gpu-node"},
                             "status": {"value": status, "label": status.title()}})

    def iface(self, end: str, **fields: Any) -> dict[str, Any]:
        """``leaf1:Ethernet0``, made on first use (a 400G port; a host's gets an RDMA NIC's custom fields)."""
        if end not in self._ifaces:
            dev_name, name = end.split(":")
            dev = next(d for d in self.devices if d["name"] == dev_name)
            iface = {"id": 1000 + len(self._ifaces), "name": name,
                     "device": {"id": dev["id"], "name": dev_name},
                     "type": {"value": "400gbase-x-osfp", "label": "OSFP (400GE)"}, "enabled": True,
                     "mark_connected": False, "cable": None}
            if "platform" not in dev:
                iface["custom_fields"] = {"rdma_device": f"mlx5_{len(self._ifaces)}",
                                          "nic_model": "connectx-7"}
            self._ifaces[end] = iface
            self.interfaces.append(iface)
        self._ifaces[end].update(fields)
        return self._ifaces[end]

    def cable(self, a: str, b: str, status: str = "connected") -> None:
        cid = len(self.cables) + 1
        sides = []
        for end in (a, b):
            iface = self.iface(end, cable={"id": cid})
            sides.append([{"object_type": "dcim.interface", "object_id": iface["id"],
                           "object": {"id": iface["id"], "name": iface["name"], "device": iface["device"]}}])
        self.cables.append({"id": cid, "status": {"value": status, "label": status.title()},
                            "a_terminations": sides[0], "b_terminations": sides[1],
                            "length": 3, "length_unit": {"value": "m", "label": "Meters"},
                            "type": "dac-passive"})

    def snapshot(self) -> Snapshot:
        return Snapshot(self.devices, self.interfaces, self.cables)


def _names(data: dict[str, Any]) -> list[str]:
    return [d["name"] for d in data["switches"] + data["hosts"]]


@pytest.mark.parametrize("status", DEVICE_STATUSES)
def test_each_device_status_in_or_out_by_default(status: str) -> None:
    fab = _Fabric()
    fab.switch("spine1", role="spine")
    fab.switch("leaf1", status)
    fab.cable("leaf1:Ethernet0", "spine1:Ethernet0")
    result = build(fab.snapshot())
    if status in ("active", "planned", "staged"):
        assert _names(result.data) == ["leaf1", "spine1"]
        assert result.data["links"] == [{"a": "leaf1:Ethernet0", "b": "spine1:Ethernet0",
                                         "cable_length": "3m", "media": "dac"}]
        assert result.skipped == []
    else:
        assert _names(result.data) == ["spine1"] and result.data["links"] == []
        assert result.skipped == [
            f"1 device(s) by their NetBox status (imported: active, planned, staged; choose with --status): "
            f"leaf1 ({status})",
            f"1 cable(s) to leaf1 (left out by its NetBox status {status}, so no fabric link): "
            f"spine1:Ethernet0"]


@pytest.mark.parametrize(("status", "imported"), [("connected", True), ("planned", True),
                                                  ("decommissioning", False)])
def test_each_cable_status_in_or_out_by_default(status: str, imported: bool) -> None:
    """A decommissioning cable between two active switches is no link (no headroom, no PFC for it)."""
    fab = _Fabric()
    fab.switch("spine1", role="spine")
    fab.switch("leaf1")
    fab.cable("leaf1:Ethernet0", "spine1:Ethernet0")
    fab.cable("leaf1:Ethernet4", "spine1:Ethernet4", status)
    result = build(fab.snapshot())
    ends = [(link["a"], link["b"]) for link in result.data["links"]]
    assert (("leaf1:Ethernet4", "spine1:Ethernet4") in ends) is imported
    assert result.skipped == ([] if imported else [
        "1 cable(s) by their NetBox status (imported: connected, planned; choose with --cable-status): "
        "cable 2 leaf1:Ethernet4 - spine1:Ethernet4 (decommissioning)"])
    # --cable-status chooses: with decommissioning cables (a removal not done yet), without planned ones
    chosen = build(fab.snapshot(), Mapping(cable_statuses=("connected", "decommissioning"))).data["links"]
    assert (("leaf1:Ethernet4", "spine1:Ethernet4") in [(x["a"], x["b"]) for x in chosen]) is (
        status != "planned")


def _pod() -> _Fabric:
    """Two spines of which one is being decommissioned, an offline spare, leaves active/planned/staged, a
    failed one and one still in inventory, a host on leaf1."""
    fab = _Fabric()
    for name, status in (("spine1", "active"), ("spine9", "decommissioning"), ("spine8", "offline")):
        fab.switch(name, status, role="spine")
    for name, status in (("leaf1", "active"), ("leaf2", "planned"), ("leaf3", "staged"), ("leaf7", "failed"),
                         ("leaf6", "inventory")):
        fab.switch(name, status)
    fab.host("gpu01")
    for i, leaf in enumerate(("leaf1", "leaf2", "leaf3", "leaf7")):
        fab.cable(f"{leaf}:Ethernet0", f"spine1:Ethernet{4 * i}")
        fab.cable(f"{leaf}:Ethernet4", f"spine9:Ethernet{4 * i}")
    fab.cable("leaf3:Ethernet8", "spine8:Ethernet0")
    fab.cable("leaf1:Ethernet8", "spine1:Ethernet32", "decommissioning")
    fab.cable("gpu01:ens1f0np0", "leaf1:Ethernet12")
    fab.iface("leaf2:Ethernet16", mark_connected=True)  # "treat as if a cable is connected": far end unknown
    fab.cable("leaf3:Ethernet12", "spine1:Ethernet40")
    fab.iface("leaf3:Ethernet12", enabled=False)  # shut down in NetBox
    return fab


def test_pod_default_report_lists_what_was_left_out_and_why() -> None:
    result = build(_pod().snapshot())
    data = result.data
    assert _names(data) == ["leaf1", "leaf2", "leaf3", "spine1", "gpu01"]
    assert [(x["a"], x["b"]) for x in data["links"]] == [
        ("leaf1:Ethernet0", "spine1:Ethernet0"), ("leaf2:Ethernet0", "spine1:Ethernet4"),
        ("leaf3:Ethernet0", "spine1:Ethernet8")]
    assert data["hosts"][0]["nics"][0]["switch_port"] == "leaf1:Ethernet12"
    assert result.skipped == [
        "4 device(s) by their NetBox status (imported: active, planned, staged; choose with --status): "
        "leaf6 (inventory), leaf7 (failed), spine8 (offline), spine9 (decommissioning)",
        "1 interface(s) marked connected in NetBox without a cable (the far end is unknown, so no link; "
        "cable them in NetBox): leaf2:Ethernet16",
        "cable 12 (leaf3:Ethernet12 - spine1:Ethernet40): leaf3:Ethernet12 disabled in NetBox (enabled off), "
        "so no fabric link; enable the interface in NetBox to import it",
        "1 cable(s) by their NetBox status (imported: connected, planned; choose with --cable-status): "
        "cable 10 leaf1:Ethernet8 - spine1:Ethernet32 (decommissioning)",
        "1 cable(s) to leaf7 (left out by its NetBox status failed, so no fabric link): spine1:Ethernet12",
        "1 cable(s) to spine8 (left out by its NetBox status offline, so no fabric link): leaf3:Ethernet8",
        "3 cable(s) to spine9 (left out by its NetBox status decommissioning, so no fabric link): "
        "leaf1:Ethernet4, leaf2:Ethernet4, leaf3:Ethernet4"]


def test_status_option_chooses_the_device_statuses() -> None:
    """``--status active`` leaves out the planned and staged leaves (and says which cables went with them);
    ``--status`` with decommissioning imports the spine being removed, e.g. to plan the fabric until then."""
    fab = _pod()
    active = build(fab.snapshot(), Mapping(device_statuses=("active",)))
    assert _names(active.data) == ["leaf1", "spine1", "gpu01"]
    assert active.skipped[0] == (
        "6 device(s) by their NetBox status (imported: active; choose with --status): leaf2 (planned), "
        "leaf3 (staged), leaf6 (inventory), leaf7 (failed), spine8 (offline), spine9 (decommissioning)")
    # listed under leaf2: its cables to imported devices only (the one to spine9, left out too, is not)
    assert ("1 cable(s) to leaf2 (left out by its NetBox status planned, so no fabric link): "
            "spine1:Ethernet4") in active.skipped
    wider = build(fab.snapshot(), Mapping(device_statuses=(*DEFAULT_DEVICE_STATUSES, "decommissioning")))
    assert "spine9" in _names(wider.data)
    assert ("leaf1:Ethernet4", "spine9:Ethernet0") in [(x["a"], x["b"]) for x in wider.data["links"]]


def test_cable_through_patch_panels_to_a_decommissioning_device_is_named() -> None:
    """A leaf cabled to a patch panel whose traced far end is an interface of a left-out spine: the note
    names the spine and its status, not "no complete path"."""
    fab = _Fabric()
    fab.switch("leaf1")
    fab.switch("spine9", "decommissioning", role="spine")
    near = fab.iface("leaf1:Ethernet0", cable={"id": 1})
    far = fab.iface("spine9:Ethernet0", cable={"id": 2})
    near |= {"connected_endpoints_type": "dcim.interface", "connected_endpoints_reachable": True,
             "connected_endpoints": [{"id": far["id"], "name": "Ethernet0", "device": far["device"]}]}
    panel = {"object_type": "dcim.frontport", "object_id": 77,
             "object": {"id": 77, "name": "F1", "device": {"id": 99, "name": "pp1"}}}
    fab.cables.append({"id": 1, "status": "connected", "b_terminations": [panel],
                       "a_terminations": [{"object_type": "dcim.interface", "object_id": near["id"]}]})
    result = build(fab.snapshot())
    assert result.skipped[-1] == ("1 cable(s) to spine9 (left out by its NetBox status decommissioning, so "
                                  "no fabric link): leaf1:Ethernet0 (through patch panels)")


def _panel_path(path_statuses: list[str] | None) -> Snapshot:
    """leaf1:Ethernet0 -> patch panels -> spine1:Ethernet0, both patch cords connected; NetBox traces the
    path complete but not active (a trunk between the panels is not connected); ``path_statuses``: the
    statuses on the trace (None: not traced)."""
    fab = _Fabric()
    fab.switch("leaf1")
    fab.switch("spine1", role="spine")
    ends = [fab.iface("leaf1:Ethernet0", cable={"id": 1}), fab.iface("spine1:Ethernet0", cable={"id": 2})]
    for i, (near, far) in enumerate((ends, ends[::-1])):
        near |= {"connected_endpoints_type": "dcim.interface", "connected_endpoints_reachable": False,
                 "connected_endpoints": [{"id": far["id"], "name": far["name"], "device": far["device"]}]}
        panel = {"object_type": "dcim.frontport", "object_id": 70 + i,
                 "object": {"id": 70 + i, "name": "F1", "device": {"id": 90 + i, "name": f"pp{i + 1}"}}}
        fab.cables.append({"id": i + 1, "label": f"U{i + 1}", "status": "connected",
                           "b_terminations": [panel],
                           "a_terminations": [{"object_type": "dcim.interface", "object_id": near["id"]}]})
    traced = {} if path_statuses is None else {e["id"]: path_statuses for e in ends}
    return Snapshot(fab.devices, fab.interfaces, fab.cables, traced)


def test_path_through_patch_panels_by_the_statuses_of_its_cables() -> None:
    """NetBox marks a path active only when all its cables are connected: a planned trunk between panels
    made the link "no complete path" (a new build through structured cabling lost every link). The trace's
    cable statuses now decide, like a direct cable's status."""
    planned = build(_panel_path(["connected", "planned", "connected"]))
    assert planned.data["links"] == [{"a": "leaf1:Ethernet0", "b": "spine1:Ethernet0"}]
    assert planned.skipped == []
    with pytest.raises(NetboxImportError) as exc:  # the only link: nothing left, an error naming the filter
        build(_panel_path(["connected", "decommissioning", "connected"]))
    assert exc.value.messages == [
        "no cable of the imported devices is left to import: 2 cable(s) have a NetBox status outside "
        "--cable-status connected --cable-status planned (cable U1 leaf1:Ethernet0 - patch panel (the path "
        "through the patch panels has a cable decommissioning), cable U2 spine1:Ethernet0 - patch panel (the "
        "path through the patch panels has a cable decommissioning)); add their status with --cable-status "
        "to import them"]
    kept = build(_panel_path(["connected", "decommissioning", "connected"]),
                 Mapping(cable_statuses=("connected", "planned", "decommissioning")))
    assert len(kept.data["links"]) == 1
    untraced = build(_panel_path(None), Mapping(cable_statuses=("connected",)))
    assert untraced.data["links"] == []
    assert untraced.skipped[0] == (
        "cable U1 (leaf1:Ethernet0 - patch panel): NetBox traces no complete active path from "
        "leaf1:Ethernet0 through the patch panels to an interface of an imported device")


def test_filter_that_leaves_no_device_is_an_error_naming_it() -> None:
    fab = _Fabric()
    fab.switch("spine1", "planned", role="spine")
    fab.switch("leaf1", "planned")
    fab.switch("leaf2", "staged")
    with pytest.raises(NetboxImportError) as exc:
        build(fab.snapshot(), Mapping(device_statuses=("active",)))
    assert exc.value.messages == [
        "none of the 3 NetBox device(s) with a roce-tune role has a status selected by --status active "
        "(their statuses: planned 2, staged 1): nothing to import; add their status, e.g. --status planned",
        "left out 3 device(s) by their NetBox status (imported: active; choose with --status): "
        "leaf1 (planned), leaf2 (staged), spine1 (planned)"]


def test_cable_filter_that_leaves_no_cable_is_an_error_naming_it() -> None:
    fab = _Fabric()
    fab.switch("spine1", role="spine")
    fab.switch("leaf1")
    fab.host("gpu01")
    fab.cable("leaf1:Ethernet0", "spine1:Ethernet0", "planned")
    fab.cable("gpu01:ens1f0np0", "leaf1:Ethernet4", "planned")
    with pytest.raises(NetboxImportError) as exc:
        build(fab.snapshot(), Mapping(cable_statuses=("connected",)))
    assert exc.value.messages == [
        "no cable of the imported devices is left to import: 2 cable(s) have a NetBox status outside "
        "--cable-status connected (cable 1 leaf1:Ethernet0 - spine1:Ethernet0 (planned), cable 2 "
        "gpu01:ens1f0np0 - leaf1:Ethernet4 (planned)); add their status with --cable-status to import them"]


def test_status_values_a_typo_and_a_custom_status() -> None:
    """A --status value that is no NetBox status and that no device has is a typo (an error, not an
    import with fewer devices); a status the installation added (FIELD_CHOICES) that devices carry works."""
    assert parse_statuses([], "--status", DEFAULT_DEVICE_STATUSES) == ("active", "planned", "staged")
    assert parse_statuses(["Active,staged", "active"], "--status", ()) == ("active", "staged")
    with pytest.raises(NetboxImportError, match="--cable-status 'conected' is not a NetBox status "
                                                r"\(connected, planned, decommissioning\)"):
        parse_statuses(["conected"], "--cable-status", (), ("connected", "planned", "decommissioning"))
    fab = _Fabric()
    fab.switch("leaf1")
    fab.switch("leaf2", "burn-in")
    with pytest.raises(NetboxImportError) as exc:
        build(fab.snapshot(), Mapping(device_statuses=("activ", "burn-in")))
    assert exc.value.messages == [
        "--status 'activ' is not a NetBox device status (offline, active, planned, staged, failed, "
        "inventory, decommissioning) and no selected device has it (their statuses: active 1, burn-in 1)"]
    assert _names(build(fab.snapshot(), Mapping(device_statuses=("active", "burn-in"))).data) == [
        "leaf1", "leaf2"]


def _api(fab: _Fabric) -> dict[str, list[dict[str, Any]]]:
    return {"/api/dcim/devices/": fab.devices, "/api/dcim/interfaces/": fab.interfaces,
            "/api/dcim/cables/": fab.cables}


def _cli(url: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "roce_tune.cli", "import", "netbox", "--url", url,
                           "--token-env", "NB_T", *args], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "NB_T": "nbt_a.statussecret"})


def test_cli_reports_left_out_devices_and_writes_a_loadable_inventory(tmp_path: Path) -> None:
    pytest.importorskip("pynetbox", reason="pip install 'roce-tune[netbox]'")
    out = tmp_path / "pod.yaml"
    with _json_api(_api(_pod())) as url:
        proc = _cli(url, "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    assert ("note: left out 4 device(s) by their NetBox status (imported: active, planned, staged; choose "
            "with --status): leaf6 (inventory), leaf7 (failed), spine8 (offline), spine9 (decommissioning)"
            ) in proc.stderr
    assert ("note: left out 3 cable(s) to spine9 (left out by its NetBox status decommissioning, so no "
            "fabric link): leaf1:Ethernet4, leaf2:Ethernet4, leaf3:Ethernet4") in proc.stderr
    assert f"wrote {out}: 4 switches, 3 links, 1 hosts (1 RDMA NICs)" in proc.stderr
    text = out.read_text()
    assert ("# devices with NetBox status active, planned, staged; cables with status connected, "
            "planned.") in text
    inv = load_inventory(out)
    assert sorted(s.name for s in inv.inventory.switches) == ["leaf1", "leaf2", "leaf3", "spine1"]
    assert "statussecret" not in proc.stdout + proc.stderr + text


def test_cli_status_filter_leaving_nothing_exits_1_and_writes_nothing(tmp_path: Path) -> None:
    pytest.importorskip("pynetbox", reason="pip install 'roce-tune[netbox]'")
    fab = _Fabric()
    fab.switch("spine1", "planned", role="spine")
    fab.switch("leaf1", "planned")
    fab.cable("leaf1:Ethernet0", "spine1:Ethernet0", "planned")
    out = tmp_path / "pod.yaml"
    out.write_text("old\n")
    with _json_api(_api(fab)) as url:
        proc = _cli(url, "--out", str(out), "--status", "active")
        typo = _cli(url, "--cable-status", "removed")
        chosen = _cli(url, "--status", "planned", "--cable-status", "planned")
    assert proc.returncode == 1
    assert ("error: none of the 2 NetBox device(s) with a roce-tune role has a status selected by --status "
            "active (their statuses: planned 2): nothing to import; add their status, e.g. --status planned"
            ) in proc.stderr
    assert out.read_text() == "old\n" and "Traceback" not in proc.stderr
    assert typo.returncode == 1 and ("error: --cable-status 'removed' is not a NetBox status (connected, "
                                     "planned, decommissioning)") in typo.stderr
    assert chosen.returncode == 0, chosen.stderr
    assert "# devices with NetBox status planned; cables with status planned." in chosen.stdout
