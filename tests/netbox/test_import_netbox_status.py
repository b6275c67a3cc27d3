"""`roce-tune import netbox` and NetBox's device and cable status, against a real NetBox (marker netbox).

A pod as NetBox holds one mid-change: a spine being decommissioned, a leaf planned, a staged one, a spare in
inventory, a cable being removed between two active switches. Each test makes its own site (random suffix).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from roce_tune.inventory.loader import load_inventory
from tests.netbox.conftest import NetboxServer
from tests.netbox.test_import_netbox_messy import Fabric, _get_or_create, _import

pynetbox = pytest.importorskip("pynetbox", reason="pip install 'roce-tune[netbox]'")
pytestmark = pytest.mark.netbox


@pytest.fixture
def fab(netbox: NetboxServer) -> Fabric:
    return Fabric(pynetbox.api(netbox.url, token=netbox.token))


def _pod(fab: Fabric) -> Any:
    site = fab.site("status")
    dev = {name: fab.device(site, name, role, status=status) for name, role, status in (
        ("spine1", "spine", "active"), ("spine9", "spine", "decommissioning"), ("leaf1", "leaf", "active"),
        ("leaf2", "leaf", "planned"), ("leaf3", "leaf", "staged"), ("leaf6", "leaf", "inventory"))}
    dev["gpu01"] = fab.device(site, "gpu01", "gpu-server", status="active")

    def port(end: str, **fields: Any) -> Any:
        name, iface = end.split(":")
        found = fab.api.dcim.interfaces.get(device_id=dev[name].id, name=iface)
        return found or fab.iface(dev[name], iface, **fields)

    fab.cable(port("leaf1:Ethernet0"), port("spine1:Ethernet0"), length=3, length_unit="m")
    fab.cable(port("leaf2:Ethernet0"), port("spine1:Ethernet4"), length=3, length_unit="m", status="planned")
    fab.cable(port("leaf3:Ethernet0"), port("spine1:Ethernet8"), length=3, length_unit="m")
    fab.cable(port("leaf1:Ethernet4"), port("spine9:Ethernet0"), length=3, length_unit="m")
    fab.cable(port("leaf1:Ethernet8"), port("spine1:Ethernet12"), length=3, length_unit="m",
              status="decommissioning", label="OLD-1")
    fab.cable(fab.nic(dev["gpu01"], "ens1f0np0", "mlx5_0"), port("leaf1:Ethernet12"), length=3,
              length_unit="m")
    port("leaf3:Ethernet16", mark_connected=True)
    return site


def test_statuses_by_default_and_with_status(fab: Fabric, netbox: NetboxServer, tmp_path: Path) -> None:
    site = _pod(fab)
    out = tmp_path / "pod.yaml"
    proc = _import(netbox, out, "--site", site.slug)
    assert proc.returncode == 0, proc.stderr
    inv = load_inventory(out).inventory
    assert sorted(s.name for s in inv.switches) == ["leaf1", "leaf2", "leaf3", "spine1"]
    assert sorted((str(link.a), str(link.b)) for link in inv.links) == [
        ("leaf1:Ethernet0", "spine1:Ethernet0"), ("leaf2:Ethernet0", "spine1:Ethernet4"),
        ("leaf3:Ethernet0", "spine1:Ethernet8")]
    assert ("note: left out 2 device(s) by their NetBox status (imported: active, planned, staged; choose "
            "with --status): leaf6 (inventory), spine9 (decommissioning)") in proc.stderr
    assert ("note: left out 1 cable(s) by their NetBox status (imported: connected, planned; choose with "
            "--cable-status): cable OLD-1 leaf1:Ethernet8 - spine1:Ethernet12 (decommissioning)"
            ) in proc.stderr
    assert ("note: left out 1 cable(s) to spine9 (left out by its NetBox status decommissioning, so no "
            "fabric link): leaf1:Ethernet4") in proc.stderr
    assert ("note: left out 1 interface(s) marked connected in NetBox without a cable (the far end is "
            "unknown, so no link; cable them in NetBox): leaf3:Ethernet16") in proc.stderr

    # only what is in service today; the planned leaf's cable is listed under it
    proc = _import(netbox, out, "--site", site.slug, "--status", "active")
    assert proc.returncode == 0, proc.stderr
    assert sorted(s.name for s in load_inventory(out).inventory.switches) == ["leaf1", "spine1"]
    assert ("note: left out 1 cable(s) to leaf2 (left out by its NetBox status planned, so no fabric link): "
            "spine1:Ethernet4") in proc.stderr


def test_status_filter_that_leaves_nothing_is_an_error(fab: Fabric, netbox: NetboxServer,
                                                       tmp_path: Path) -> None:
    site = fab.site("newbuild")
    leaf = fab.device(site, "leaf1", "leaf", status="planned")
    spine = fab.device(site, "spine1", "spine", status="planned")
    fab.cable(fab.iface(leaf, "Ethernet0"), fab.iface(spine, "Ethernet0"), status="planned")
    out = tmp_path / "new.yaml"
    proc = _import(netbox, out, "--site", site.slug, "--status", "active")
    assert proc.returncode == 1
    assert ("error: none of the 2 NetBox device(s) with a roce-tune role has a status selected by --status "
            "active (their statuses: planned 2): nothing to import") in proc.stderr
    assert not out.exists()
    proc = _import(netbox, out, "--site", site.slug, "--cable-status", "connected")
    assert proc.returncode == 1
    assert "error: no cable of the imported devices is left to import: 1 cable(s)" in proc.stderr
    assert not out.exists()


def test_planned_path_through_patch_panels_is_followed(fab: Fabric, netbox: NetboxServer,
                                                       tmp_path: Path) -> None:
    """NetBox calls a path active only when every cable on it is connected, so a new build cabled through
    patch panels (all planned) gave no link; its trace's cable statuses now decide. A trunk being removed
    (decommissioning) on the path leaves the link out, listed by status."""
    site = fab.site("ppstatus")
    leaf, spine = fab.device(site, "leaf1", "leaf", status="planned"), fab.device(site, "spine1", "spine")
    generic = fab.api.dcim.manufacturers.get(slug="generic").id
    panel_type = _get_or_create(fab.api.dcim.device_types, {"slug": "pp-24-lc"}, model="PP-24-LC",
                                manufacturer=generic).id
    panel_role = _get_or_create(fab.api.dcim.device_roles, {"slug": "patch-panel"}, name="patch-panel",
                                color="9e9e9e").id
    panels = [fab.api.dcim.devices.create(name=f"pp{i}", site=site.id, role=panel_role,
                                          device_type=panel_type, status="active") for i in (1, 2)]
    pairs = []
    for panel in panels:
        rear = fab.api.dcim.rear_ports.create(device=panel.id, name="R1", type="lc", positions=1)
        front = fab.api.dcim.front_ports.create(device=panel.id, name="F1", type="lc",
                                                rear_ports=[{"rear_port": rear.id, "position": 1}])
        pairs.append((front, rear))

    def cable(a: tuple[str, int], b: tuple[str, int], **fields: Any) -> Any:
        return fab.api.dcim.cables.create(a_terminations=[{"object_type": a[0], "object_id": a[1]}],
                                          b_terminations=[{"object_type": b[0], "object_id": b[1]}], **fields)

    iface, front, rear = "dcim.interface", "dcim.frontport", "dcim.rearport"
    ups = [cable((iface, fab.iface(leaf, "Ethernet0").id), (front, pairs[0][0].id), label="U1",
                 status="planned")]
    trunk = cable((rear, pairs[0][1].id), (rear, pairs[1][1].id), label="T1", status="planned")
    ups.append(cable((front, pairs[1][0].id), (iface, fab.iface(spine, "Ethernet0").id), label="U2",
                     status="planned"))
    out = tmp_path / "pp.yaml"
    proc = _import(netbox, out, "--site", site.slug)
    assert proc.returncode == 0, proc.stderr
    assert [(ln.a, ln.b) for ln in load_inventory(out).inventory.links] == [("leaf1:Ethernet0",
                                                                              "spine1:Ethernet0")]
    trunk.update({"status": "decommissioning"})
    proc = _import(netbox, out, "--site", site.slug)
    assert proc.returncode == 1  # no cable left: an error naming the filter, nothing written
    assert ("cable U1 leaf1:Ethernet0 - patch panel (the path through the patch panels has a cable "
            "decommissioning)") in proc.stderr
    # patch cords connected, the trunk still planned: followed by default; with only connected cables the
    # path is not active in NetBox, and the note says so
    trunk.update({"status": "planned"})
    for up in ups:
        up.update({"status": "connected"})
    proc = _import(netbox, out, "--site", site.slug)
    assert proc.returncode == 0, proc.stderr
    assert len(load_inventory(out).inventory.links) == 1
    proc = _import(netbox, out, "--site", site.slug, "--cable-status", "connected")
    assert ("cable U1 (leaf1:Ethernet0 - patch panel): NetBox traces no complete active path from "
            "leaf1:Ethernet0") in proc.stderr
