"""Netdev, RDMA device and endpoint names are matched by pydantic-core (no Python call per value); they
must accept exactly what ``regex.fullmatch`` accepts and be reported exactly as the Python-checked name
types are (message, fix, file:line:col)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import TypeAdapter, ValidationError

from roce_tune.findings import RoceTuneError
from roce_tune.inventory.loader import load_inventory_text
from roce_tune.inventory.models import (
    ENDPOINT_RE,
    NATIVE_NAME_PATTERNS,
    NETDEV_RE,
    RDMA_DEVICE_RE,
    Endpoint,
    Netdev,
    RdmaDevice,
    name_error,
)
from roce_tune.inventory.validation import FIELD_FIX

_TYPES = [(Netdev, NETDEV_RE), (RdmaDevice, RDMA_DEVICE_RE), (Endpoint, ENDPOINT_RE)]
_TEXT = st.text(alphabet=st.sampled_from(list("aZ09_.-/:") + ["\n", " ", "\t", "é", "\ud800", "\x00", "$"]),
                max_size=80)


def _accepts(adapter: TypeAdapter[str], value: str) -> bool:
    try:
        adapter.validate_python(value)
    except ValidationError:
        return False
    return True


@settings(max_examples=300, deadline=None)
@given(st.one_of(_TEXT, st.builds(lambda a, b: a + ":" + b, _TEXT, _TEXT)))
def test_native_patterns_accept_exactly_what_fullmatch_accepts(value: str) -> None:
    for tp, regex in _TYPES:
        assert _accepts(TypeAdapter(tp), value) == bool(regex.fullmatch(value)), (tp, value)


@pytest.mark.parametrize("value", ["ens1f0np0\n", "mlx5_0\n", "leaf1:Ethernet0\n", "a" * 15, "a" * 16,
                                   "x" * 63 + ":E", "x" * 64 + ":E"])
def test_boundaries(value: str) -> None:
    for tp, regex in _TYPES:
        assert _accepts(TypeAdapter(tp), value) == bool(regex.fullmatch(value)), (tp, value)


_INVENTORY = """\
site: {{name: lab}}
switches:
  - {{name: leaf1, platform: sonic, model: SN4700, role: leaf, ports: [{{name: Ethernet0, speed: 400G}}]}}
links:
  - {{a: {v}, b: "leaf1:Ethernet0"}}
hosts:
  - name: gpu01
    socket_ifname: {v}
    nics:
      - {{model: connectx-7, netdev: {v}, rdma_device: {v}, speed: 400G, switch_port: {v}}}
"""
#: field path -> (field, pattern) of every natively matched name in :data:`_INVENTORY`
_FIELDS = {
    "links[0].a": ("a", ENDPOINT_RE),
    "hosts[0].socket_ifname": ("socket_ifname", NETDEV_RE),
    "hosts[0].nics[0].netdev": ("netdev", NETDEV_RE),
    "hosts[0].nics[0].rdma_device": ("rdma_device", RDMA_DEVICE_RE),
    "hosts[0].nics[0].switch_port": ("switch_port", ENDPOINT_RE),
}


@pytest.mark.parametrize(("written", "value"), [
    ('"bad name"', "bad name"), ('"x\\n"', "x\n"), ('"\\ud800"', "\ud800"), ("é", "é"),
    ('"$(reboot)"', "$(reboot)"), ('"a:b c"', "a:b c"), ('"leaf1:"', "leaf1:"), ("ens1", "ens1")])
def test_bad_names_are_reported_as_the_python_checked_names_are(written: str, value: str) -> None:
    """One RT003 per field at the value, worded by name_error (as a Python-checked name is), with
    the field's fix."""
    text = _INVENTORY.format(v=written)
    with pytest.raises(RoceTuneError) as info:
        load_inventory_text(text, "inv.yaml")
    lines = text.splitlines()
    got = {f.location.path: f for f in info.value.findings}
    for path, (field, regex) in _FIELDS.items():
        if regex.fullmatch(value):
            assert path not in got
            continue
        finding = got[path]
        assert finding.rule == "RT003"
        assert finding.message == name_error(value, regex.pattern, *NATIVE_NAME_PATTERNS[regex.pattern])
        assert finding.fix == FIELD_FIX[field]
        line = lines[finding.location.line - 1]
        key_col = finding.location.col - 1 - len(field) - 2
        assert line[key_col:].startswith(f"{field}: {written}"), (path, line)


def test_a_lone_surrogate_in_a_netdev_reads_as_before() -> None:
    """Captured from the Python-checked validator (main at 27f1826)."""
    with pytest.raises(RoceTuneError) as info:
        load_inventory_text(_INVENTORY.format(v='"a\\ud800"'), "inv.yaml")
    nic = next(f for f in info.value.findings if f.location.path == "hosts[0].nics[0].netdev")
    assert nic.message == (
        r"'a\ud800' is not a valid netdev name (allowed: ^[A-Za-z][A-Za-z0-9_.-]{0,14}$, e.g. ens1f0np0); "
        "shell/CLI metacharacters, spaces, quotes and newlines are rejected")
    assert nic.fix == ("use the Linux interface name, e.g. ens1f0np0 (letters, digits, '.', '_', '-'; "
                       "at most 15 characters)")
    assert (nic.location.line, nic.location.col) == (10, 37)
