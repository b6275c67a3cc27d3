"""Every name that reaches a device CLI, a shell script, a comment or a file name is matched in full:
a final newline (which ``re.match`` with ``$`` lets through), an embedded line break or any other
control character is an RT003 error at the value, never a clean lint."""

from __future__ import annotations

import json

import pytest

from roce_tune.findings import MESSAGE_LIMIT, Finding, Location, RoceTuneError, Severity
from roce_tune.inventory.loader import load_inventory_text
from tests.inventory.conftest import load_errors

#: A small inventory that uses every name field once; ``{field}`` placeholders take the value under test.
TEMPLATE = """\
site: {{name: {site}}}
policy:
  overrides:
    - {{device: {ov_device}, port: {ov_port}, set: {{kmin_bytes: 150KB}}}}
switches:
  - name: {switch}
    platform: sonic
    model: SN4700
    role: leaf
    mgmt: {{host: {switch_mgmt}}}
    credentials: {{username_env: {username_env}, password_env: {password_env}, key_file_env: {key_file_env}}}
    ports:
      - {{name: {port}, speed: 400G}}
      - {{name: Ethernet8, speed: 400G}}
  - {{name: spine1, platform: sonic, model: SN4700, role: spine, ports: [{{name: Ethernet0, speed: 400G}}]}}
links:
  - {{a: {link_a}, b: "spine1:Ethernet0"}}
hosts:
  - name: {host}
    mgmt: {{host: {host_mgmt}}}
    socket_ifname: {socket_ifname}
    credentials: {{username_env: {host_username_env}}}
    nics:
      - {{model: connectx-7, netdev: {netdev}, rdma_device: {rdma_device}, speed: 400G, \
switch_port: {switch_port}}}
"""
GOOD = {
    "site": "lab", "ov_device": "leaf1", "ov_port": "Ethernet0", "switch": "leaf1", "switch_mgmt": "10.0.0.1",
    "username_env": "NET_USER", "password_env": "NET_PASS", "key_file_env": "NET_KEY", "port": "Ethernet0",
    "link_a": "leaf1:Ethernet8", "host": "gpu01", "host_mgmt": "gpu01.example.net", "socket_ifname": "eno1",
    "host_username_env": "HOST_USER", "netdev": "ens1f0np0", "rdma_device": "mlx5_0",
    "switch_port": "leaf1:Ethernet0",
}
#: Field -> (path of the value in the inventory, which other placeholders must follow the new name).
FIELDS = {
    "site": "site.name",
    "switch": "switches[0].name",
    "port": "switches[0].ports[0].name",
    "host": "hosts[0].name",
    "netdev": "hosts[0].nics[0].netdev",
    "rdma_device": "hosts[0].nics[0].rdma_device",
    "socket_ifname": "hosts[0].socket_ifname",
    "username_env": "switches[0].credentials.username_env",
    "password_env": "switches[0].credentials.password_env",
    "key_file_env": "switches[0].credentials.key_file_env",
    "host_username_env": "hosts[0].credentials.username_env",
    "switch_mgmt": "switches[0].mgmt.host",
    "host_mgmt": "hosts[0].mgmt.host",
    "ov_device": "policy.overrides[0].device",
    "ov_port": "policy.overrides[0].port",
    "link_a": "links[0].a",
    "switch_port": "hosts[0].nics[0].switch_port",
}
#: Trailing and embedded line breaks and other control characters (the YAML double-quoted escapes keep
#: them in the value: \\n, \\r, \\t, ESC, NEL, LS/PS, NUL, DEL, a C1 control).
BAD_SUFFIXES = ["\n", "\r\n", "\r", "\t", "\x1b[2J", "\u2028", "\u2029", "\x85", "\x00", "\x7f", "\x9b",
                " ", "\nreboot"]


def render(**values: str) -> str:
    """The inventory with ``values`` (JSON strings are valid YAML double-quoted scalars)."""
    merged = {**GOOD, **values}
    return TEMPLATE.format(**{k: json.dumps(v) for k, v in merged.items()})


def test_the_clean_template_loads() -> None:
    inv = load_inventory_text(render(), "ok.yaml").inventory
    assert inv.site.name == "lab" and inv.hosts[0].nics[0].netdev == "ens1f0np0"


@pytest.mark.parametrize("suffix", BAD_SUFFIXES, ids=repr)
@pytest.mark.parametrize("field", sorted(FIELDS))
def test_a_control_character_in_any_name_is_an_error_at_the_value(field: str, suffix: str,
                                                                  reader: str) -> None:
    text = render(**{field: GOOD[field] + suffix})
    findings = load_errors(text, "names.yaml")
    at = [f for f in findings if f.location.path == FIELDS[field]]
    assert at, [str(f) for f in findings]
    f = at[0]
    assert f.rule == "RT003" and f.location.line and f.location.col
    # the message names the value but stays on one line
    assert "\n" not in str(f) and "\r" not in str(f) and "\u2028" not in str(f) and "\x1b" not in str(f)


@pytest.mark.parametrize("field", ["netdev", "socket_ifname"])
def test_linux_interface_names_are_at_most_15_characters(field: str) -> None:
    assert load_inventory_text(render(**{field: "a" * 15}))
    with pytest.raises(RoceTuneError) as exc:
        load_inventory_text(render(**{field: "a" * 16}))
    assert [f.location.path for f in exc.value.findings] == [FIELDS[field]]


@pytest.mark.parametrize("ch", ["\n", "\r", "\t", "\x1b", "\x00", "\x7f", "\x85", "\x9b", "\u2028", "\u2029",
                                "\u202e", "\ufeff"])
def test_a_finding_is_always_one_line(ch: str) -> None:
    f = Finding(rule="RT003", severity=Severity.error, message=f"bad{ch}value", fix=f"do{ch}this",
                location=Location(file=f"in{ch}v.yaml", line=1, col=1, device=f"d{ch}", port=f"p{ch}"))
    text = str(f)
    assert len(text.splitlines()) == 1 and ch not in text
    assert "bad" in text and "value" in text  # escaped, not dropped


def test_long_values_are_cut_in_messages() -> None:
    findings = load_errors(render(site="a" * 5000 + "\u2028", netdev="e" * 3000))
    assert findings and all(len(str(f)) < 600 for f in findings), [len(str(f)) for f in findings]
    huge = Finding(rule="RT003", severity=Severity.error, message="x" * 10**6)
    assert len(huge.message) == MESSAGE_LIMIT and huge.message.endswith("…")
