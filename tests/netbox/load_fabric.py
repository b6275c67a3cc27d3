"""Load a shipped roce-tune inventory into a real NetBox through its REST API (pynetbox), the way a DC team
models a fabric there: one site, manufacturers and device types, device roles, platforms (vendor-style
slugs such as ``arista-eos``), devices with a management interface and primary IP, front-panel
interfaces with type and speed, cables with length, unit and type, and the RDMA name, NIC model and rail
of each host NIC in interface custom fields.

Lengths are entered in rotating units (m, cm, ft, in) to exercise the importer's conversion (NetBox keeps
two decimals in the entered unit; the importer rounds to the centimetre).
Switch ports of spines are entered without ``speed`` (type only), so the importer's type fallback runs.
"""

from __future__ import annotations

import ipaddress
import re
from typing import Any

from roce_tune.inventory.catalog import load_catalog
from roce_tune.inventory.models import Inventory

#: roce-tune platform -> the NetBox platform (slug, name) a team would create (vendor-style slugs)
PLATFORM_SLUGS = {"sonic": ("sonic", "SONiC"), "cumulus": ("cumulus-linux", "Cumulus Linux"),
                  "eos": ("arista-eos", "Arista EOS"), "nxos": ("cisco-nxos", "Cisco NX-OS"),
                  "junos": ("juniper-junos", "Juniper Junos")}
ROLE_SLUGS = {"leaf": "leaf", "spine": "spine", "superspine": "superspine", "host": "gpu-server"}
UNITS = ("m", "cm", "ft", "in")
_PER_M = {"m": 1.0, "cm": 100.0, "ft": 1 / 0.3048, "in": 1 / 0.0254}
MEDIA_TYPES = {"dac": "dac-passive", "aoc": "aoc", "optic": "smf"}
IF_TYPES = {25: "25gbase-x-sfp28", 50: "50gbase-x-sfp56", 100: "100gbase-x-qsfp28", 200: "200gbase-x-qsfp56",
            400: "400gbase-x-osfp", 800: "800gbase-x-osfp"}


def _get_or_create(endpoint: Any, lookup: dict[str, Any], **fields: Any) -> Any:
    found = endpoint.get(**lookup)
    return found if found is not None else endpoint.create(**lookup, **fields)


def ensure_schema(api: Any) -> None:
    """Custom fields the importer reads (NetBox 4: ``object_types``), roles and platforms."""
    for name, kind, obj in (("rdma_device", "text", "dcim.interface"),
                            ("nic_model", "text", "dcim.interface"),
                            ("rail", "integer", "dcim.interface"), ("rails", "text", "dcim.device"),
                            ("ssh_port", "integer", "dcim.device")):
        _get_or_create(api.extras.custom_fields, {"name": name}, type=kind, object_types=[obj])
    for role, slug in ROLE_SLUGS.items():
        _get_or_create(api.dcim.device_roles, {"slug": slug}, name=slug, color="2196f3")
    for slug, name in PLATFORM_SLUGS.values():
        _get_or_create(api.dcim.platforms, {"slug": slug}, name=name)


def _length(metres: float, i: int) -> dict[str, Any]:
    unit = UNITS[i % len(UNITS)]
    return {"length": round(metres * _PER_M[unit], 2), "length_unit": unit}


def load(api: Any, inv: Inventory, site_slug: str) -> dict[str, int]:
    """Create the fabric of ``inv`` as NetBox site ``site_slug``. Returns object counts."""
    ensure_schema(api)
    catalog = load_catalog()
    site = _get_or_create(api.dcim.sites, {"slug": site_slug}, name=site_slug, status="active")
    roles = {r: api.dcim.device_roles.get(slug=s).id for r, s in ROLE_SLUGS.items()}
    platforms = {p: api.dcim.platforms.get(slug=s).id for p, (s, _) in PLATFORM_SLUGS.items()}

    def device_type(vendor: str, model: str) -> int:
        maker = _get_or_create(api.dcim.manufacturers, {"slug": vendor.lower()}, name=vendor)
        slug = re.sub(r"[^a-z0-9]+", "-", model.lower()).strip("-")
        return _get_or_create(api.dcim.device_types, {"slug": slug}, model=model,
                              manufacturer=maker.id).id

    devices: dict[str, Any] = {}
    mgmt_ifaces: list[tuple[Any, str]] = []
    for sw in inv.switches:
        spec = catalog.switch_model(sw.model)
        cf: dict[str, Any] = {}
        if sw.served_rails is not None:
            cf["rails"] = ",".join(str(r) for r in sorted(sw.served_rails))
        if sw.mgmt and sw.mgmt.port != 22:
            cf["ssh_port"] = sw.mgmt.port
        devices[sw.name] = api.dcim.devices.create(
            name=sw.name, site=site.id, role=roles[sw.role.value], platform=platforms[sw.platform.value],
            device_type=device_type(spec.vendor, spec.id), status="active", custom_fields=cf)
        if sw.mgmt:
            mgmt_ifaces.append((devices[sw.name], sw.mgmt.host))
    host_type = device_type("Generic", "GPU server 8-GPU")
    for host in inv.hosts:
        cf = {"ssh_port": host.mgmt.port} if host.mgmt and host.mgmt.port != 22 else {}
        devices[host.name] = api.dcim.devices.create(
            name=host.name, site=site.id, role=roles["host"], device_type=host_type, status="active",
            custom_fields=cf)
        if host.mgmt:
            mgmt_ifaces.append((devices[host.name], host.mgmt.host))

    # management interfaces (mgmt_only, left out by the importer) and primary IPs
    for dev, address in mgmt_ifaces:
        iface = api.dcim.interfaces.create(device=dev.id, name="mgmt0", type="1000base-t", mgmt_only=True)
        ip = ipaddress.ip_address(address)
        ipa = api.ipam.ip_addresses.create(address=f"{ip}/{32 if ip.version == 4 else 128}",
                                           assigned_object_type="dcim.interface", assigned_object_id=iface.id)
        dev.primary_ip4 = ipa.id
        dev.save()

    ifaces: list[dict[str, Any]] = []
    for sw in inv.switches:
        for port in sw.ports:
            for name in port.names():
                row: dict[str, Any] = {"device": devices[sw.name].id, "name": name,
                                       "type": IF_TYPES.get(port.speed, "other")}
                if sw.role.value != "spine":  # spines: type only, the importer takes the rate from it
                    row["speed"] = port.speed * 1_000_000
                if port.mtu:
                    row["mtu"] = port.mtu
                ifaces.append(row)
    for host in inv.hosts:
        for nic in host.nics:
            cf = {"rdma_device": nic.rdma_device, "nic_model": nic.model}
            if nic.rail is not None:
                cf["rail"] = nic.rail
            ifaces.append({"device": devices[host.name].id, "name": nic.netdev,
                           "speed": nic.speed * 1_000_000,
                           "type": IF_TYPES.get(nic.speed, "other"), "custom_fields": cf,
                           **({"mtu": nic.mtu} if nic.mtu else {})})
    created = api.dcim.interfaces.create(ifaces)
    by_name = {(r.device.name, r.name): r.id for r in created}

    default_m, default_media = inv.defaults.cable_length, inv.defaults.media.value
    cables: list[dict[str, Any]] = []

    def cable(a: tuple[str, str], b: tuple[str, str], metres: float, media: str) -> None:
        cables.append({
            "a_terminations": [{"object_type": "dcim.interface", "object_id": by_name[a]}],
            "b_terminations": [{"object_type": "dcim.interface", "object_id": by_name[b]}],
            "type": MEDIA_TYPES[media], "status": "connected", **_length(metres, len(cables))})

    for link in inv.links:
        a_dev, a_port = link.a.split(":", 1)
        b_dev, b_port = link.b.split(":", 1)
        cable((a_dev, a_port), (b_dev, b_port),
              link.cable_length if link.cable_length is not None else default_m,
              (link.media.value if link.media else default_media))
    for host in inv.hosts:
        for nic in host.nics:
            if nic.switch_port is None:
                continue
            sw_name, sw_port = nic.switch_port.split(":", 1)
            cable((host.name, nic.netdev), (sw_name, sw_port),
                  nic.cable_length if nic.cable_length is not None else default_m,
                  nic.media.value if nic.media else default_media)
    api.dcim.cables.create(cables)
    return {"devices": len(devices), "interfaces": len(ifaces), "cables": len(cables)}
