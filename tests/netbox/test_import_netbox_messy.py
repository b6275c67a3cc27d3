"""`roce-tune import netbox` against a real NetBox modelled the way production NetBoxes look: the same device
name in two sites, copper management ports that are not marked management-only and go to an out-of-band
switch, host NICs cabled to management ports, custom fields and MTUs out of roce-tune's range.

Every test makes its own sites (a random suffix), so the module can run again against one NetBox
(``ROCE_TUNE_NETBOX_ENV``) and in any order with tests/netbox/test_import_netbox.py.
"""

from __future__ import annotations

import secrets
from pathlib import Path
from typing import Any

import pytest

from roce_tune.inventory.loader import load_inventory
from tests.netbox.conftest import NetboxServer
from tests.netbox.load_fabric import ensure_schema
from tests.netbox.test_import_netbox import cli

pynetbox = pytest.importorskip("pynetbox", reason="pip install 'roce-tune[netbox]'")
pytestmark = pytest.mark.netbox


def _get_or_create(endpoint: Any, lookup: dict[str, Any], **fields: Any) -> Any:
    found = endpoint.get(**lookup)
    return found if found is not None else endpoint.create(**lookup, **fields)


class Fabric:
    """Creates sites, devices, interfaces and cables in a real NetBox, named with a per-test suffix."""

    def __init__(self, api: Any):
        self.api = api
        self.suffix = secrets.token_hex(3)
        ensure_schema(api)
        maker = _get_or_create(api.dcim.manufacturers, {"slug": "nvidia"}, name="NVIDIA")
        generic = _get_or_create(api.dcim.manufacturers, {"slug": "generic"}, name="Generic")
        self.sn4700 = _get_or_create(api.dcim.device_types, {"slug": "sn4700"}, model="SN4700",
                                     manufacturer=maker.id).id
        self.server = _get_or_create(api.dcim.device_types, {"slug": "gpu-server-8-gpu"},
                                     model="GPU server 8-GPU", manufacturer=generic.id).id
        self.roles = {slug: _get_or_create(api.dcim.device_roles, {"slug": slug}, name=slug,
                                           color="2196f3").id
                      for slug in ("leaf", "spine", "gpu-server", "oob-switch")}
        self.sonic = api.dcim.platforms.get(slug="sonic").id

    def site(self, name: str) -> Any:
        slug = f"{name}-{self.suffix}"
        return self.api.dcim.sites.create(name=slug, slug=slug, status="active")

    def device(self, site: Any, name: str, role: str, **fields: Any) -> Any:
        if role in ("leaf", "spine"):
            fields.setdefault("platform", self.sonic)
        dtype = self.server if role == "gpu-server" else self.sn4700
        fields.setdefault("status", "active")
        return self.api.dcim.devices.create(name=name, site=site.id, role=self.roles[role], device_type=dtype,
                                            **fields)

    def iface(self, dev: Any, name: str, kind: str = "400gbase-x-osfp", **fields: Any) -> Any:
        return self.api.dcim.interfaces.create(device=dev.id, name=name, type=kind, **fields)

    def nic(self, dev: Any, name: str, rdma: str) -> Any:
        return self.iface(dev, name, custom_fields={"rdma_device": rdma, "nic_model": "connectx-7"})

    def primary_ip(self, dev: Any, address: str) -> None:
        """A management interface with ``address`` (with its prefix length, as NetBox keeps it) as the
        device's primary IPv4 or IPv6 address."""
        iface = self.iface(dev, "mgmt0", "1000base-t", mgmt_only=True)
        ip = self.api.ipam.ip_addresses.create(address=address, assigned_object_type="dcim.interface",
                                               assigned_object_id=iface.id)
        self.api.dcim.devices.get(dev.id).update({"primary_ip6" if ":" in address else "primary_ip4": ip.id})

    def cable(self, a: Any, b: Any, **fields: Any) -> Any:
        return self.api.dcim.cables.create(
            a_terminations=[{"object_type": "dcim.interface", "object_id": a.id}],
            b_terminations=[{"object_type": "dcim.interface", "object_id": b.id}], **fields)


@pytest.fixture
def fab(netbox: NetboxServer) -> Fabric:
    return Fabric(pynetbox.api(netbox.url, token=netbox.token))


def _import(netbox: NetboxServer, out: Path, *args: str) -> Any:
    return cli("import", "netbox", "--url", netbox.url, "--token-env", "NB_TEST_TOKEN", "--out", str(out),
               *args, token=netbox.token)


def test_same_device_name_in_two_sites_is_an_error_naming_both(fab: Fabric, netbox: NetboxServer,
                                                               tmp_path: Path) -> None:
    """NetBox names are unique per site (and tenant) only: leaf1 of dc1 and leaf1 of dc2, selected
    together by a tag, became two switches ``leaf1`` in one inventory (lint RT120, RT102) and were written."""
    tag = fab.api.extras.tags.create(name=f"pod-{fab.suffix}", slug=f"pod-{fab.suffix}")
    dc1, dc2 = fab.site("dc1"), fab.site("dc2")
    first = fab.device(dc1, "leaf1", "leaf", tags=[tag.id])
    second = fab.device(dc2, "leaf1", "leaf", tags=[tag.id])
    for dev in (first, second):
        fab.iface(dev, "Ethernet0")
    out = tmp_path / "pod.yaml"
    proc = _import(netbox, out, "--tag", tag.slug)
    assert proc.returncode == 1, proc.stderr
    assert (f"device leaf1 (NetBox id {second.id}, site {dc2.slug}): the name is also used by device leaf1 "
            f"(NetBox id {first.id}, site {dc1.slug})") in proc.stderr
    assert not out.exists()
    # one site selected: no clash
    proc = _import(netbox, out, "--site", dc1.slug)
    assert proc.returncode == 0, proc.stderr
    assert [s.name for s in load_inventory(out).inventory.switches] == ["leaf1"]


def test_copper_mgmt_port_to_oob_switch_is_left_out_nic_on_mgmt_port_is_an_error(
        fab: Fabric, netbox: NetboxServer, tmp_path: Path) -> None:
    """A leaf's eth0 (type 1000base-t, no speed, not marked management-only) cabled to the out-of-band
    switch stopped the import ("cabled, but NetBox gives no speed"), though that cable leaves the fabric.
    A host NIC cabled to the leaf's management-only port was written as switch_port of a port the leaf
    does not declare (lint RT101)."""
    site = fab.site("oob")
    leaf = fab.device(site, "leaf1", "leaf")
    oob = fab.device(site, "oob1", "oob-switch")
    gpus = [fab.device(site, f"gpu0{i}", "gpu-server") for i in (1, 2)]
    ports = [fab.iface(leaf, f"Ethernet{i}") for i in (0, 4)]
    fab.cable(fab.iface(leaf, "eth0", "1000base-t"), fab.iface(oob, "ge-0/0/1", "1000base-t"), label="OOB-1")
    fab.cable(fab.nic(gpus[0], "ens1f0np0", "mlx5_0"), ports[0], length=3, length_unit="m")
    mgmt = fab.iface(leaf, "Management1", "1000base-t", mgmt_only=True)
    wrong = fab.cable(fab.nic(gpus[1], "ens1f0np0", "mlx5_0"), mgmt, label="BAD-1")
    out = tmp_path / "oob.yaml"
    proc = _import(netbox, out, "--site", site.slug)
    assert proc.returncode == 1
    assert ("cable BAD-1 (gpu02:ens1f0np0 - leaf1:Management1): the switch end leaf1:Management1 is "
            "management-only, no fabric port") in proc.stderr
    assert "eth0" not in proc.stderr.replace("cable OOB-1 (leaf1:eth0", "")  # no error about eth0
    assert not out.exists()

    wrong.delete()
    fab.cable(fab.api.dcim.interfaces.get(device_id=gpus[1].id, name="ens1f0np0"), ports[1], length=3,
              length_unit="m")
    proc = _import(netbox, out, "--site", site.slug)
    assert proc.returncode == 0, proc.stderr
    assert "cable OOB-1 (leaf1:eth0 - oob1:ge-0/0/1) goes to a device that is not imported" in proc.stderr
    inv = load_inventory(out).inventory
    assert [n for p in inv.switches[0].ports for n in p.names()] == ["Ethernet0", "Ethernet4"]
    lint = cli("lint", str(out))
    assert lint.returncode == 0, lint.stdout + lint.stderr


def test_values_out_of_range_name_the_netbox_object(fab: Fabric, netbox: NetboxServer,
                                                    tmp_path: Path) -> None:
    """ssh_port 70000 (an integer custom field) and MTU 65536 (NetBox's maximum) were reported at
    ``<netbox import>:9:36 switches[0].mgmt.port`` (a line of a text never written) with the fix "use the
    interface name as the switch shows it"; each now names the device (and interface)."""
    site = fab.site("range")
    leaf = fab.device(site, "leaf1", "leaf", custom_fields={"ssh_port": 70000})
    fab.primary_ip(leaf, "10.20.0.11/24")
    fab.iface(leaf, "Ethernet0", mtu=65536)
    out = tmp_path / "range.yaml"
    proc = _import(netbox, out, "--site", site.slug)
    assert proc.returncode == 1
    assert "device leaf1: custom field ssh_port = 70000 is not a TCP port (1-65535)" in proc.stderr
    assert "<netbox import>" not in proc.stderr
    fab.api.dcim.devices.get(leaf.id).update({"custom_fields": {"ssh_port": 2222}})
    proc = _import(netbox, out, "--site", site.slug)
    assert proc.returncode == 1
    assert "device leaf1 interface Ethernet0: mtu: 65536 is out of range" in proc.stderr
    assert "<netbox import>" not in proc.stderr and "switches[0]" not in proc.stderr
    assert not out.exists()


def test_cabling_through_patch_panels_follows_netbox_paths(fab: Fabric, netbox: NetboxServer,
                                                           tmp_path: Path) -> None:
    """Structured cabling (NIC -> panel front port, panel rear port -> trunk -> rear port of a second
    panel, its front port -> leaf) was left out ("patch panels are not followed"): the NIC had no
    switch_port and the uplink no link. NetBox traces such paths itself (the interface's
    connected_endpoints); they are now imported, without a length (NetBox has none for the whole path:
    the inventory default applies and lint says so), and a path NetBox cannot complete is listed."""
    site = fab.site("panels")
    leaf, spine = fab.device(site, "leaf1", "leaf"), fab.device(site, "spine1", "spine")
    gpus = [fab.device(site, f"gpu0{i}", "gpu-server") for i in (1, 2)]
    generic = fab.api.dcim.manufacturers.get(slug="generic").id
    panel_type = _get_or_create(fab.api.dcim.device_types, {"slug": "pp-24-lc"}, model="PP-24-LC",
                                manufacturer=generic).id
    panel_role = _get_or_create(fab.api.dcim.device_roles, {"slug": "patch-panel"}, name="patch-panel",
                                color="9e9e9e").id
    panels = [fab.api.dcim.devices.create(name=f"pp{i}", site=site.id, role=panel_role,
                                          device_type=panel_type, status="active") for i in (1, 2, 3)]

    def port_pair(panel: Any, n: int) -> tuple[Any, Any]:
        rear = fab.api.dcim.rear_ports.create(device=panel.id, name=f"R{n}", type="lc", positions=1)
        front = fab.api.dcim.front_ports.create(device=panel.id, name=f"F{n}", type="lc",
                                                rear_ports=[{"rear_port": rear.id, "position": 1}])
        return front, rear

    def cable(a: tuple[str, int], b: tuple[str, int], **fields: Any) -> None:
        fab.api.dcim.cables.create(a_terminations=[{"object_type": a[0], "object_id": a[1]}],
                                   b_terminations=[{"object_type": b[0], "object_id": b[1]}], **fields)

    ports = [fab.iface(leaf, f"Ethernet{i}") for i in (0, 4, 8)]
    uplink = fab.iface(spine, "Ethernet0")
    nics = [fab.nic(g, "ens1f0np0", "mlx5_0") for g in gpus]
    (f1, r1), (f2, r2), (f3, r3) = port_pair(panels[0], 1), port_pair(panels[1], 1), port_pair(panels[2], 1)
    dead_front, _ = port_pair(panels[0], 2)
    iface, front, rear = "dcim.interface", "dcim.frontport", "dcim.rearport"
    cable((iface, nics[0].id), (front, f1.id), label="H1", length=2, length_unit="m", type="mmf-om4")
    cable((rear, r1.id), (rear, r2.id), label="TRUNK-1", length=40, length_unit="m")
    cable((front, f2.id), (iface, ports[0].id), label="L1", length=1, length_unit="m")
    cable((iface, ports[1].id), (front, f3.id), label="U1")
    cable((rear, r3.id), (iface, uplink.id), label="U2")
    cable((iface, nics[1].id), (front, dead_front.id), label="H2")  # the panel's rear port goes nowhere
    out = tmp_path / "panels.yaml"
    proc = _import(netbox, out, "--site", site.slug)
    assert proc.returncode == 0, proc.stderr
    inv = load_inventory(out).inventory
    cabled = {(h.name, n.netdev): (n.switch_port, n.cable_length) for h in inv.hosts for n in h.nics}
    assert cabled == {("gpu01", "ens1f0np0"): ("leaf1:Ethernet0", None),
                      ("gpu02", "ens1f0np0"): (None, None)}
    links = [(ln.a, ln.b, ln.cable_length) for ln in inv.links]
    assert links == [("leaf1:Ethernet4", "spine1:Ethernet0", None)]
    assert ("cable H2 (gpu02:ens1f0np0 - patch panel): NetBox traces no complete path from gpu02:ens1f0np0 "
            "through the patch panels to an interface of an imported device") in proc.stderr
    lint = cli("lint", str(out))
    assert "gpu01 ens1f0np0 has no cable_length" in lint.stdout  # RT107: the default applies, said so


def test_zero_cable_length_is_an_error_naming_the_cable(fab: Fabric, netbox: NetboxServer,
                                                        tmp_path: Path) -> None:
    """NetBox accepts a cable length of 0 (utilities/conversion.py refuses only negative lengths): a 0
    entered for "unknown" became ``cable_length: 0m``, which the inventory accepts and sizes headroom for no
    cable at all. Now an error naming the cable; with the length cleared, the inventory default applies."""
    site = fab.site("zero")
    leaf, spine = fab.device(site, "leaf1", "leaf"), fab.device(site, "spine1", "spine")
    gpu = fab.device(site, "gpu01", "gpu-server")
    zero = fab.cable(fab.nic(gpu, "ens1f0np0", "mlx5_0"), fab.iface(leaf, "Ethernet0"), label="Z-1",
                     length=0, length_unit="m")
    fab.cable(fab.iface(leaf, "Ethernet4"), fab.iface(spine, "Ethernet0"), label="U-1", length=0,
              length_unit="ft")
    out = tmp_path / "zero.yaml"
    proc = _import(netbox, out, "--site", site.slug)
    assert proc.returncode == 1
    assert "cable Z-1 (gpu01:ens1f0np0 - leaf1:Ethernet0): length 0" in proc.stderr
    assert "cable U-1 (leaf1:Ethernet4 - spine1:Ethernet0): length 0" in proc.stderr
    assert proc.stderr.count("is no cable length (headroom is sized by it)") == 2
    assert not out.exists()
    fab.api.dcim.cables.get(zero.id).update({"length": None, "length_unit": None})
    fab.api.dcim.cables.get(label="U-1", site_id=site.id).update({"length": 10, "length_unit": "ft"})
    proc = _import(netbox, out, "--site", site.slug)
    assert proc.returncode == 0, proc.stderr
    inv = load_inventory(out).inventory
    assert inv.hosts[0].nics[0].cable_length is None and inv.links[0].cable_length == 3.05


def test_hosts_without_any_rdma_field_are_an_error_not_hosts_without_nics(
        fab: Fabric, netbox: NetboxServer, tmp_path: Path) -> None:
    """A NetBox whose NICs carry no ``rdma_device`` custom field (roce-tune's convention, absent from most
    NetBoxes; or named otherwise) gave hosts with ``nics: []`` that lint and plan accept: a fabric tuned as
    if no host were cabled. Now an error that names the fields and --rdma-field."""
    site = fab.site("nofield")
    leaf = fab.device(site, "leaf1", "leaf")
    gpus = [fab.device(site, f"gpu0{i}", "gpu-server") for i in (1, 2)]
    for gpu, port in zip(gpus, ("Ethernet0", "Ethernet4")):
        fab.cable(fab.iface(gpu, "ens1f0np0", custom_fields={"nic_model": "connectx-7"}),
                  fab.iface(leaf, port), length=3, length_unit="m")
    out = tmp_path / "nofield.yaml"
    proc = _import(netbox, out, "--site", site.slug)
    assert proc.returncode == 1
    assert ("none of the interfaces of the 2 host(s) has the custom field rdma_device: no RDMA NIC to import"
            in proc.stderr)
    assert "--rdma-field" in proc.stderr and not out.exists()
    # the team's own field name, given with --rdma-field, imports them
    _get_or_create(fab.api.extras.custom_fields, {"name": "rdma_name"}, type="text",
                   object_types=["dcim.interface"])
    for gpu in gpus:
        fab.api.dcim.interfaces.get(device_id=gpu.id, name="ens1f0np0").update(
            {"custom_fields": {"rdma_name": "mlx5_0"}})
    proc = _import(netbox, out, "--site", site.slug, "--rdma-field", "rdma_name")
    assert proc.returncode == 0, proc.stderr
    assert [n.switch_port for h in load_inventory(out).inventory.hosts for n in h.nics] == [
        "leaf1:Ethernet0", "leaf1:Ethernet4"]
