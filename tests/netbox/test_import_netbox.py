"""`roce-tune import netbox` against a real NetBox: shipped fabrics loaded through the REST API, imported,
linted and planned; cabling, speeds, lengths and platforms compared with the source inventory; errors
(unreachable URL, refused token, unknown platform / device type) exit 1 and write nothing."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from ruamel.yaml import YAML

from roce_tune.inventory.loader import load_inventory
from roce_tune.inventory.models import Inventory
from tests.netbox.conftest import NetboxServer
from tests.netbox.load_fabric import ensure_schema, load

pynetbox = pytest.importorskip("pynetbox", reason="pip install 'roce-tune[netbox]'")
pytestmark = pytest.mark.netbox

REPO = Path(__file__).resolve().parents[2]
FABRICS = {"site-a": "site.yaml", "mixed": "mixed-vendor.yaml"}


def cli(*args: str, token: str | None = None) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    env.pop("NB_TEST_TOKEN", None)
    if token is not None:
        env["NB_TEST_TOKEN"] = token
    return subprocess.run([sys.executable, "-m", "roce_tune.cli", *args], capture_output=True, text=True,
                          cwd=REPO, env=env, timeout=600)


@pytest.fixture(scope="module")
def api(netbox: NetboxServer) -> Any:
    return pynetbox.api(netbox.url, token=netbox.token)


@pytest.fixture(scope="module")
def loaded(api: Any) -> dict[str, Inventory]:
    out = {}
    for site, name in FABRICS.items():
        inv = load_inventory(REPO / "inventories" / name).inventory
        load(api, inv, site)
        out[site] = inv
    return out


def _cabling(inv: Inventory) -> dict[str, Any]:
    """What must survive the round trip: switches (platform, model, role, rails, port speeds), links and
    host NICs with their effective cable length and media."""
    d_len, d_media = inv.defaults.cable_length, inv.defaults.media.value
    switches = {
        sw.name: (sw.platform.value, sw.model, sw.role.value,
                  sorted(sw.served_rails) if sw.served_rails else None,
                  sorted((n, p.speed) for p in sw.ports for n in p.names()),
                  sw.mgmt.host if sw.mgmt else None)
        for sw in inv.switches}
    links = {frozenset((ln.a, ln.b)): (ln.cable_length if ln.cable_length is not None else d_len,
                                       ln.media.value if ln.media else d_media) for ln in inv.links}
    nics = {(h.name, n.netdev): (n.model, n.rdma_device, n.speed, n.rail, n.switch_port,
                                 n.cable_length if n.cable_length is not None else d_len,
                                 n.media.value if n.media else d_media)
            for h in inv.hosts for n in h.nics}
    return {"switches": switches, "links": links, "nics": nics}


def _configs(root: Path) -> dict[str, bytes]:
    """Rendered files as they are (a device file names no inventory file or hash: plan.json does)."""
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.mark.parametrize("site", sorted(FABRICS))
def test_import_round_trips_the_fabric_and_lints_and_plans(
        site: str, netbox: NetboxServer, loaded: dict[str, Inventory], tmp_path: Path) -> None:
    out = tmp_path / f"{site}.yaml"
    source = loaded[site]
    proc = cli("import", "netbox", "--url", netbox.url, "--token-env", "NB_TEST_TOKEN", "--site", site,
               "--site-name", source.site.name, "--out", str(out), token=netbox.token)
    assert proc.returncode == 0, proc.stderr
    assert netbox.token not in proc.stdout + proc.stderr + out.read_text()
    assert f"wrote {out}" in proc.stderr

    got, want = _cabling(load_inventory(out).inventory), _cabling(source)
    # platforms (from vendor-style slugs), models, roles, rails, ports and speeds, management addresses;
    # lengths entered in m, cm, ft and in come back in metres
    assert got == want

    lint = cli("lint", str(out))
    assert lint.returncode == 0, lint.stdout + lint.stderr
    plan = cli("plan", str(out), "--out", str(tmp_path / "plan"))
    assert plan.returncode == 0, plan.stdout + plan.stderr
    assert (tmp_path / "plan" / "plan.json").is_file()
    assert {p.name.split(".")[0] for p in (tmp_path / "plan" / "switches").iterdir()} == set(got["switches"])
    # NetBox carries no roce-tune policy (docs/import-netbox.md): with the source's policy section added,
    # every switch config renders byte for byte as from the hand-written source (headroom by cable length,
    # ECN by speed and fan-in, ports, platforms), provenance line included
    yaml = YAML(typ="safe")
    src_doc = yaml.load((REPO / "inventories" / FABRICS[site]).read_text())
    doc = yaml.load(out.read_text())
    assert "policy" not in doc
    doc["policy"] = src_doc.get("policy", {})
    with_policy = tmp_path / f"{site}-with-policy.yaml"
    with with_policy.open("w") as fh:
        yaml.dump(doc, fh)
    plan = cli("plan", str(with_policy), "--out", str(tmp_path / "plan"))
    assert plan.returncode == 0, plan.stdout + plan.stderr
    src_plan = cli("plan", str(REPO / "inventories" / FABRICS[site]), "--out", str(tmp_path / "src"))
    assert src_plan.returncode == 0, src_plan.stderr
    assert _configs(tmp_path / "plan" / "switches") == _configs(tmp_path / "src" / "switches")


def test_tag_selects_devices_and_cables_to_the_rest_are_left_out(api: Any, netbox: NetboxServer,
                                                                 loaded: dict[str, Inventory],
                                                                 tmp_path: Path) -> None:
    tag = api.extras.tags.get(slug="rail0") or api.extras.tags.create(name="rail0", slug="rail0")
    picked = ["leaf1", "gpu01"]
    for name in picked:
        dev = api.dcim.devices.get(name=name, site="site-a")
        dev.tags = [tag.id]
        dev.save()
    out = tmp_path / "rail0.yaml"
    proc = cli("import", "netbox", "--url", netbox.url, "--token-env", "NB_TEST_TOKEN", "--tag", "rail0",
               "--site-name", "rail0", "--out", str(out), token=netbox.token)
    assert proc.returncode == 0, proc.stderr
    inv = load_inventory(out).inventory
    assert [s.name for s in inv.switches] == ["leaf1"] and [h.name for h in inv.hosts] == ["gpu01"]
    assert inv.links == []  # leaf1's uplinks go to spines that are not selected
    gpu01 = {n.netdev: n.switch_port for n in inv.hosts[0].nics}
    src = {n.netdev: n.switch_port for h in loaded["site-a"].hosts if h.name == "gpu01" for n in h.nics}
    assert gpu01 == {k: (v if v and v.startswith("leaf1:") else None) for k, v in src.items()}
    assert "goes to a device that is not imported" in proc.stderr


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_unreachable_url_exits_1_and_keeps_the_old_file(tmp_path: Path) -> None:
    out = tmp_path / "inv.yaml"
    out.write_text("previous content\n")
    url = f"http://127.0.0.1:{_free_port()}"
    proc = cli("import", "netbox", "--url", url, "--token-env", "NB_TEST_TOKEN", "--out", str(out),
               token="nbt_abc.secretvalue")
    assert proc.returncode == 1
    assert f"cannot reach NetBox at {url}" in proc.stderr and "Connection refused" in proc.stderr
    assert "secretvalue" not in proc.stdout + proc.stderr
    assert out.read_text() == "previous content\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["inv.yaml"]


def test_refused_token_exits_1_names_the_variable_not_the_token(netbox: NetboxServer, tmp_path: Path) -> None:
    out = tmp_path / "inv.yaml"
    bad = "nbt_" + "A" * 12 + ".wrongsecretwrongsecretwrongsecret12345678"
    proc = cli("import", "netbox", "--url", netbox.url, "--token-env", "NB_TEST_TOKEN", "--out", str(out),
               token=bad)
    assert proc.returncode == 1
    assert "refused the API token in $NB_TEST_TOKEN (HTTP 403" in proc.stderr
    assert "wrongsecret" not in proc.stdout + proc.stderr
    assert not out.exists()


def test_missing_token_variable_exits_1(netbox: NetboxServer, tmp_path: Path) -> None:
    proc = cli("import", "netbox", "--url", netbox.url, "--token-env", "NB_TEST_TOKEN",
               "--out", str(tmp_path / "x.yaml"))
    assert proc.returncode == 1
    assert "environment variable NB_TEST_TOKEN is not set or empty" in proc.stderr
    assert not (tmp_path / "x.yaml").exists()


def test_unknown_platform_and_device_type_name_the_device(api: Any, netbox: NetboxServer,
                                                          tmp_path: Path) -> None:
    ensure_schema(api)
    site = api.dcim.sites.create(name="odd", slug="odd", status="active")
    maker = api.dcim.manufacturers.get(slug="acme") or api.dcim.manufacturers.create(name="Acme", slug="acme")
    dtype = api.dcim.device_types.create(model="Acme 9000", slug="acme-9000", manufacturer=maker.id)
    vyos = api.dcim.platforms.create(name="VyOS", slug="vyos")
    leaf = api.dcim.device_roles.get(slug="leaf")
    sn2700 = api.dcim.device_types.get(slug="sn2700")
    api.dcim.devices.create(name="odd-leaf1", site=site.id, role=leaf.id, device_type=dtype.id,
                            platform=api.dcim.platforms.get(slug="sonic").id)
    api.dcim.devices.create(name="odd-leaf2", site=site.id, role=leaf.id, device_type=sn2700.id,
                            platform=vyos.id)
    api.dcim.devices.create(name="odd-leaf3", site=site.id, role=leaf.id, device_type=sn2700.id)
    out = tmp_path / "odd.yaml"
    proc = cli("import", "netbox", "--url", netbox.url, "--token-env", "NB_TEST_TOKEN", "--site", "odd",
               "--out", str(out), token=netbox.token)
    assert proc.returncode == 1
    err = proc.stderr
    assert "device odd-leaf1: NetBox device type 'Acme 9000' (slug acme-9000) is no switch model" in err
    assert "--model-map 'Acme 9000=<model>'" in err
    assert "device odd-leaf2: NetBox platform 'VyOS' (slug vyos) maps to no roce-tune platform" in err
    assert "device odd-leaf3: no platform set in NetBox" in err
    assert not out.exists()

    # the documented way out: map them, and the import goes through
    proc = cli("import", "netbox", "--url", netbox.url, "--token-env", "NB_TEST_TOKEN", "--site", "odd",
               "--model-map", "Acme 9000=SN4700", "--platform-map", "vyos=sonic", "--out", str(out),
               token=netbox.token)
    assert "odd-leaf3: no platform set" in proc.stderr and proc.returncode == 1
    api.dcim.devices.get(name="odd-leaf3").delete()
    proc = cli("import", "netbox", "--url", netbox.url, "--token-env", "NB_TEST_TOKEN", "--site", "odd",
               "--model-map", "Acme 9000=SN4700", "--platform-map", "vyos=sonic", "--out", str(out),
               token=netbox.token)
    assert proc.returncode == 0, proc.stderr
    models = {s.name: (s.model, s.platform.value) for s in load_inventory(out).inventory.switches}
    assert models == {"odd-leaf1": ("SN4700", "sonic"), "odd-leaf2": ("SN2700", "sonic")}


def test_unknown_site_slug_is_a_clear_error(netbox: NetboxServer, tmp_path: Path) -> None:
    proc = cli("import", "netbox", "--url", netbox.url, "--token-env", "NB_TEST_TOKEN",
               "--site", "no-such-site", "--out", str(tmp_path / "x.yaml"), token=netbox.token)
    assert proc.returncode == 1
    assert "no-such-site" in proc.stderr
    assert not (tmp_path / "x.yaml").exists()


def test_host_to_host_and_breakout_cables_are_errors_naming_the_cable(
        api: Any, netbox: NetboxServer, loaded: dict[str, Inventory], tmp_path: Path) -> None:
    # device types SN4700 and the GPU server exist once the shipped fabrics are loaded
    site = api.dcim.sites.create(name="cabling", slug="cabling", status="active")
    sn4700 = api.dcim.device_types.get(slug="sn4700")
    gpu = api.dcim.device_types.get(slug="gpu-server-8-gpu")
    leaf = api.dcim.devices.create(name="c-leaf1", site=site.id, device_type=sn4700.id,
                                   role=api.dcim.device_roles.get(slug="leaf").id,
                                   platform=api.dcim.platforms.get(slug="sonic").id)
    host_role = api.dcim.device_roles.get(slug="gpu-server").id
    hosts = [api.dcim.devices.create(name=f"c-gpu{i}", site=site.id, role=host_role, device_type=gpu.id)
             for i in (1, 2)]
    ports = api.dcim.interfaces.create([{"device": leaf.id, "name": f"Ethernet{i}", "type": "400gbase-x-osfp"}
                                        for i in (0, 4, 8)])
    nics = api.dcim.interfaces.create([{"device": h.id, "name": "ens1f0np0", "type": "400gbase-x-osfp",
                                        "custom_fields": {"rdma_device": "mlx5_0", "nic_model": "connectx-7"}}
                                       for h in hosts])

    def term(*ifaces: Any) -> list[dict[str, Any]]:
        return [{"object_type": "dcim.interface", "object_id": i.id} for i in ifaces]

    api.dcim.cables.create(label="HH-1", a_terminations=term(nics[0]), b_terminations=term(nics[1]),
                           length=2, length_unit="m")
    api.dcim.cables.create(label="BO-1", a_terminations=term(ports[0]),
                           b_terminations=term(ports[1], ports[2]))
    # names that would reach a switch CLI or a host script unchecked
    api.dcim.interfaces.create(device=leaf.id, name="Ethernet 12", type="400gbase-x-osfp")
    api.dcim.interfaces.create(device=hosts[0].id, name="ens2f0np0", type="400gbase-x-osfp",
                               custom_fields={"rdma_device": "mlx5_1;reboot", "nic_model": "connectx-7"})
    out = tmp_path / "cabling.yaml"
    proc = cli("import", "netbox", "--url", netbox.url, "--token-env", "NB_TEST_TOKEN", "--site", "cabling",
               "--out", str(out), token=netbox.token)
    assert proc.returncode == 1
    assert "cable HH-1 (c-gpu1:ens1f0np0 - c-gpu2:ens1f0np0): a cable between two hosts" in proc.stderr
    assert ("cable BO-1 (c-leaf1:Ethernet0 - c-leaf1:Ethernet4,c-leaf1:Ethernet8): 1 x 2 terminations"
            in proc.stderr)
    assert "c-leaf1:Ethernet 12: the interface name is not usable in switch CLIs" in proc.stderr
    assert "c-gpu1:ens2f0np0: rdma_device = 'mlx5_1;reboot' is not an RDMA device name" in proc.stderr
    assert not out.exists()
