"""Mapping rules of `roce-tune import netbox` that need no NetBox (the importer itself is tested against a
real NetBox in tests/netbox/, marker netbox): length units, port ranges, --*-map parsing, atomic write."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from roce_tune.atomic import write_text_atomic
from roce_tune.importers.netbox import NetboxImportError, cable_length_m, compress_ports, parse_map
from roce_tune.inventory.models import expand_interface_pattern


@pytest.mark.parametrize(("length", "unit", "metres"), [
    (3, "m", 3.0), (250, "cm", 2.5), (10, "ft", 3.05), (49.21, "ft", 15.0), (118.11, "in", 3.0),
    (0.04, "km", 40.0),
    ("1.5", "m", 1.5), (None, None, None), (None, "m", None),
])
def test_cable_length_units_to_metres(length: object, unit: str | None, metres: float | None) -> None:
    assert cable_length_m(length, unit) == metres  # type: ignore[arg-type]


def test_length_without_unit_is_an_error() -> None:
    with pytest.raises(ValueError, match="has unit None"):
        cable_length_m(3, None)
    with pytest.raises(ValueError, match="'yd'"):
        cable_length_m(3, "yd")


def _ports(names: list[str], speed: str = "400G") -> list[dict[str, object]]:
    return [{"name": n, "speed": speed} for n in names]


def test_compress_ports_makes_ranges_the_loader_expands_back() -> None:
    names = [f"Ethernet{i}" for i in range(0, 128, 4)] + ["Ethernet200", "Ethernet201"]
    names += [f"swp{i}" for i in range(1, 33)] + ["Ethernet1/1", "Ethernet1/2", "Ethernet1/3", "mgmt01"]
    out = compress_ports(_ports(names))
    assert [p["name"] for p in out] == ["Ethernet[0-124/4]", "Ethernet200", "Ethernet201", "swp[1-32]",
                                        "Ethernet1/[1-3]", "mgmt01"]
    assert [n for p in out for n in expand_interface_pattern(str(p["name"]))] == names


def test_compress_ports_splits_on_speed_and_step_changes() -> None:
    ports = _ports(["Ethernet0", "Ethernet4", "Ethernet8"]) + _ports(["Ethernet12", "Ethernet16"], "100G")
    ports += _ports(["Ethernet20", "Ethernet22", "Ethernet30"], "100G")
    out = compress_ports(ports)
    assert [(p["name"], p["speed"]) for p in out] == [
        ("Ethernet[0-8/4]", "400G"), ("Ethernet[12-20/4]", "100G"), ("Ethernet22", "100G"),
        ("Ethernet30", "100G")]


def test_parse_map() -> None:
    assert parse_map(["gpu-node=host", " tor = leaf "], "--role-map", ["leaf", "host"]) == {
        "gpu-node": "host", "tor": "leaf"}
    with pytest.raises(NetboxImportError, match="write NETBOX=ROCE_TUNE"):
        parse_map(["gpu-node"], "--role-map")
    with pytest.raises(NetboxImportError, match="'router' is not one of host, leaf"):
        parse_map(["x=router"], "--role-map", ["leaf", "host"])


def test_write_text_atomic_replaces_whole_and_keeps_mode(tmp_path: Path) -> None:
    target = tmp_path / "inv.yaml"
    target.write_text("old\n")
    os.chmod(target, 0o600)
    write_text_atomic(target, "new\n")
    assert target.read_text() == "new\n" and (target.stat().st_mode & 0o777) == 0o600
    with pytest.raises(OSError):
        write_text_atomic(tmp_path / "missing-dir" / "x.yaml", "x")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["inv.yaml"]


def test_text_custom_fields_that_are_no_numbers_are_errors_naming_the_object() -> None:
    """A text custom field ``rail = "rail0"`` on a NIC, or ``ssh_port = "22x"`` on a device, crashed the
    import with a ValueError traceback; each is now a message naming the interface or device."""
    from roce_tune.importers.netbox import Snapshot, build

    devices = [
        {"id": 1, "name": "leaf1", "role": {"slug": "leaf"}, "platform": {"slug": "sonic", "name": "SONiC"},
         "device_type": {"model": "SN4700", "slug": "sn4700"}},
        {"id": 2, "name": "gpu01", "role": {"slug": "gpu-node"}, "primary_ip4": {"address": "10.0.0.2/24"},
         "custom_fields": {"ssh_port": "22x"}},
    ]
    interfaces = [
        {"id": 10, "name": "Ethernet0", "device": {"id": 1}, "type": {"value": "400gbase-x-osfp"},
         "cable": 5},
        {"id": 20, "name": "ens1f0np0", "device": {"id": 2}, "type": {"value": "400gbase-x-osfp"},
         "cable": 5,
         "custom_fields": {"rdma_device": "mlx5_0", "nic_model": "connectx-7", "rail": "rail0"}},
    ]
    cables = [{"id": 5, "a_terminations": [{"object_type": "dcim.interface", "object_id": 10}],
               "b_terminations": [{"object_type": "dcim.interface", "object_id": 20}]}]
    with pytest.raises(NetboxImportError) as exc:
        build(Snapshot(devices, interfaces, cables))
    assert exc.value.messages == [
        "device gpu01: custom field ssh_port = '22x' is not a whole number",
        "gpu01:ens1f0np0: custom field rail = 'rail0' is not a whole number",
    ]
    interfaces[1]["custom_fields"]["rail"] = "0"  # type: ignore[index]
    devices[1]["custom_fields"] = {"ssh_port": 2222}
    data = build(Snapshot(devices, interfaces, cables)).data
    assert data["hosts"][0]["mgmt"] == {"host": "10.0.0.2", "port": 2222}
    assert data["hosts"][0]["nics"][0]["rail"] == 0
    assert data["hosts"][0]["nics"][0]["switch_port"] == "leaf1:Ethernet0"


def test_rate_from_interface_type_includes_terabit_types() -> None:
    """NetBox 4.7's 1.6 Tb/s types (``1.6tbase-x-osfp1600``, dcim/choices.py InterfaceTypeChoices) gave no
    speed, so a cabled 1.6T port without a speed stopped the import; copper ``1000base-t`` management
    ports still give none (they are no fabric ports)."""
    from roce_tune.importers.netbox import Snapshot, build

    devices = [{"id": 1, "name": "spine1", "role": {"slug": "spine"}, "platform": {"slug": "sonic"},
                "device_type": {"model": "SN4700", "slug": "sn4700"}}]
    types = {"Ethernet0": "1.6tbase-x-osfp1600", "Ethernet8": "800gbase-x-osfp",
             "Ethernet16": "400gbase-x-qsfpdd", "eth0": "1000base-t", "eth1": "2.5gbase-t"}
    interfaces = [{"id": i, "name": name, "device": {"id": 1}, "type": {"value": kind, "label": kind}}
                  for i, (name, kind) in enumerate(types.items(), start=10)]
    ports = build(Snapshot(devices, interfaces, [])).data["switches"][0]["ports"]
    assert ports == [{"name": "Ethernet0", "speed": "1600G"}, {"name": "Ethernet8", "speed": "800G"},
                     {"name": "Ethernet16", "speed": "400G"}]


@contextlib.contextmanager
def _json_api(results: list[dict[str, object]] | dict[str, list[dict[str, object]]],
              tls: tuple[Path, Path] | None = None) -> Iterator[str]:
    """A loopback HTTP(S) server answering every GET with one page of NetBox-shaped JSON holding
    ``results`` (a dict: the results per URL path, e.g. ``/api/dcim/cables/``, none for other paths);
    yields its base URL (https with ``tls`` = (certificate, key) PEM files) and stops after."""
    import json
    import ssl
    import threading
    from http.server import BaseHTTPRequestHandler, HTTPServer
    from urllib.parse import urlsplit

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 (http.server's name)
            page = results.get(urlsplit(self.path).path, []) if isinstance(results, dict) else results
            body = json.dumps({"count": len(page), "next": None, "previous": None,
                               "results": page}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    server = HTTPServer(("127.0.0.1", 0), Handler)
    if tls is not None:
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(*tls)
        server.socket = ctx.wrap_socket(server.socket, server_side=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"{'https' if tls else 'http'}://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def test_json_that_is_not_netbox_is_a_clear_error_not_a_traceback(tmp_path: Path) -> None:
    """A URL that answers JSON but not NetBox's objects ended in a KeyError traceback (objects without an
    id) or wrote an empty inventory with exit 0 (string ids, as Nautobot's UUIDs); now exit 1 with a
    message naming the URL, the token nowhere."""
    import subprocess
    import sys

    from roce_tune.cli import app

    pytest.importorskip("pynetbox", reason="pip install 'roce-tune[netbox]'")
    out = tmp_path / "inv.yaml"
    with _json_api([{"id": "0f5c8a52-uuid", "name": "leaf1"}]) as url:
        proc = subprocess.run([sys.executable, "-m", "roce_tune.cli", "import", "netbox", "--url", url,
                               "--token-env", "NB_T", "--out", str(out)], capture_output=True, text=True,
                              env={**os.environ, "NB_T": "nbt_abc.tokensecret42"}, timeout=120)
    assert proc.returncode == 1
    assert f"error: {url} did not answer as the NetBox REST API" in proc.stderr
    assert "Traceback" not in proc.stderr and "tokensecret42" not in proc.stdout + proc.stderr
    assert not out.exists()
    # and should anything else crash, typer prints no local variables (the token is one in import netbox)
    assert app.pretty_exceptions_show_locals is False


def test_no_device_with_a_known_role_is_an_error_not_an_empty_inventory() -> None:
    """A NetBox whose roles are all named otherwise ("Network Switch", "DGX") gave an inventory with no
    switch and no host, written with exit 0; now an error that lists the roles to map."""
    from roce_tune.importers.netbox import Snapshot, build

    devices = [{"id": 1, "name": "leaf1", "role": {"slug": "network-switch", "name": "Network Switch"}},
               {"id": 2, "name": "dgx01", "role": {"slug": "dgx", "name": "DGX"}}]
    with pytest.raises(NetboxImportError) as exc:
        build(Snapshot(devices, [], []))
    assert exc.value.messages == [
        "none of the 2 NetBox device(s) has a role that maps to a roce-tune role (leaf, spine, superspine, "
        "host): nothing to import",
        "left out 1 device(s) with role dgx (no roce-tune role; --role-map dgx=ROLE to import them): dgx01",
        "left out 1 device(s) with role network-switch (no roce-tune role; --role-map network-switch=ROLE to "
        "import them): leaf1"]
    devices[0]["role"] = {"slug": "leaf", "name": "Leaf"}
    devices[0] |= {"platform": {"slug": "sonic"}, "device_type": {"model": "SN4700"}}
    assert [s["name"] for s in build(Snapshot(devices, [], [])).data["switches"]] == ["leaf1"]


@pytest.mark.parametrize(("url", "shown", "reason"), [
    ("netbox.example.net", "netbox.example.net", "not an http(s) URL; give the NetBox base URL"),
    ("http://127.0.0.1:99999", "http://127.0.0.1:99999", "not a valid URL; give the NetBox base URL"),
    ("http://svc:pw0rd@127.0.0.1:{port}/", "http://***@127.0.0.1:{port}", "Connection refused"),
    ("http://127.0.0.1:{port}", "http://127.0.0.1:{port}", "the API token holds a character an HTTP header "
                                                           "cannot carry (a line break inside?)"),
])
def test_bad_url_says_what_is_wrong_and_hides_credentials(url: str, shown: str, reason: str,
                                                          tmp_path: Path) -> None:
    """A URL without scheme or with a bad port said only "MissingSchema" / "InvalidURL"; a
    ``user:password@`` URL (a basic-auth proxy in front of NetBox) was echoed, password included; a token
    with a line break inside (pasted from a wrapped file) said only "InvalidHeader"."""
    import socket
    import subprocess
    import sys

    pytest.importorskip("pynetbox", reason="pip install 'roce-tune[netbox]'")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.run([sys.executable, "-m", "roce_tune.cli", "import", "netbox", "--url",
                           url.format(port=port), "--token-env", "NB_T", "--out", str(tmp_path / "x.yaml")],
                          capture_output=True, text=True, timeout=120,
                          env={**os.environ, "NB_T": "nbt_a.pw0rd\r\nb" if "token" in reason else "nbt_a.b"})
    assert proc.returncode == 1
    assert f"error: cannot reach NetBox at {shown.format(port=port)}: " in proc.stderr
    assert reason in proc.stderr and "pw0rd" not in proc.stderr
    assert not (tmp_path / "x.yaml").exists()


def _self_signed(tmp_path: Path) -> tuple[Path, Path]:
    """A certificate for 127.0.0.1 and its key (PEM files), signed by itself."""
    import datetime
    import ipaddress

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "netbox.test")])
    now = datetime.datetime.now(datetime.timezone.utc)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(hours=1))
            .not_valid_after(now + datetime.timedelta(days=1))
            .add_extension(x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
                           critical=False)
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .sign(key, hashes.SHA256()))
    cert_pem, key_pem = tmp_path / "cert.pem", tmp_path / "key.pem"
    cert_pem.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_pem.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                          serialization.NoEncryption()))
    return cert_pem, key_pem


def test_tls_with_a_private_ca_names_the_way_to_trust_it(tmp_path: Path) -> None:
    """NetBox behind a certificate of a private CA failed with only "certificate verify failed"; the
    message now names REQUESTS_CA_BUNDLE (which requests reads), and with it the import gets through TLS."""
    import subprocess
    import sys

    pytest.importorskip("pynetbox", reason="pip install 'roce-tune[netbox]'")
    env = {k: v for k, v in os.environ.items() if k not in ("REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE")}
    env["NB_T"] = "nbt_a.tlssecret"
    cert, key = _self_signed(tmp_path)
    with _json_api([], tls=(cert, key)) as url:
        def run(**extra: str) -> subprocess.CompletedProcess[str]:
            return subprocess.run([sys.executable, "-m", "roce_tune.cli", "import", "netbox", "--url", url,
                                   "--token-env", "NB_T"], capture_output=True, text=True,
                                  env={**env, **extra}, timeout=120)

        untrusted, trusted = run(), run(REQUESTS_CA_BUNDLE=str(cert))
    assert untrusted.returncode == 1
    assert (f"cannot reach NetBox at {url}: certificate verify failed (a NetBox certificate from a private "
            f"CA: give its CA bundle in REQUESTS_CA_BUNDLE=/path/to/ca.pem)") in untrusted.stderr
    assert trusted.returncode == 1 and f"no device in NetBox at {url}" in trusted.stderr  # TLS passed
    assert "tlssecret" not in untrusted.stderr + trusted.stderr


@pytest.mark.parametrize(("rails", "want"), [("0,1", [0, 1]), (" 0, 1 ", [0, 1]), ("[0, 1]", [0, 1]),
                                             ("2", [2]), ([3], [3])])
def test_leaf_rails_custom_field_as_text_or_json(rails: object, want: list[int]) -> None:
    """docs/import-netbox.md: the device field ``rails`` is text ``0`` or ``0,1`` (or a JSON list); a text
    field holding the JSON list ``[0, 1]`` was an error ('not a list of rail numbers')."""
    from roce_tune.importers.netbox import Mapping, _rails

    errors: list[str] = []
    assert _rails({"custom_fields": {"rails": rails}}, Mapping(), "leaf1", errors) == want and not errors
    _rails({"custom_fields": {"rails": "0;1"}}, Mapping(), "leaf1", errors)
    assert errors == ["device leaf1: custom field rails = '0;1' is not a list of rail numbers (write 0 or "
                      "0,1)"]
