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
from tests.netbox.test_import_netbox_messy import Fabric, _import

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
    proc = _import(netbox, out, "--site", site.slug, "--status", "active", "--cable-status", "connected")
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
