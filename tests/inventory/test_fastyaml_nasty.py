"""Hand-made nasty inputs for the fast YAML reader (issue 16): quoted commas, braces, colons and ``#``,
trailing comments, tabs, CRLF, a BOM, duplicate keys, unicode, very long lines, anchors and aliases, keys
without values, numbers YAML reads as floats/octal/bools. The fast reader must agree exactly with ruamel.yaml
or decline, and an inventory's findings must keep the same file:line:col whichever reader read it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from roce_tune.findings import RoceTuneError
from roce_tune.inventory import loader
from roce_tune.inventory.catalog import load_catalog
from roce_tune.inventory.fastyaml import fast_parse
from roce_tune.inventory.loader import load_inventory_text
from roce_tune.pipeline import lint_loaded
from tests.inventory.test_fastyaml import assert_agrees

REPO = Path(__file__).resolve().parents[2]

DOCS = {
 'quoted comma': 's:\n- {a: "x, y", b: 1}\n',
 'quoted brace': 's:\n- {a: "x}", b: 1}\n',
 'quoted brace2': "s:\n- {a: 'x}', b: 1}\n",
 'quoted colon': 's:\n- {a: "x: y", b: 1}\n',
 'quoted colon nospace': 's:\n- {a: "x:y", b: 1}\n',
 'hash in quotes': 's:\n- {a: "x #y", b: 1}\n',
 'hash in quotes2': 's:\n- {a: "x#y", b: 1}\n',
 'hash in sq': "s:\n- {a: 'x #y', b: 1}\n",
 'trailing comment': 's:\n- {a: x, b: 1} # hi\n',
 'trailing comment glued': 's:\n- {a: x, b: 1}# hi\n',
 'tab': 's:\n- {a: x,\tb: 1}\n',
 'crlf': 's:\r\n- {a: x, b: 1}\r\n- {a: y, b: 2}\r\n',
 'bom': '\ufeffs:\n- {a: x, b: 1}\n',
 'dup': 's:\n- {a: x, a: 1}\n- {a: x, b: 1}\n- {a: x, a: 1}\n',
 'unicode': 's:\n- {a: "spine-ü", b: 1}\n- {a: spine-ü, b: 1}\n',
 'unicode key': 's:\n- {ä: 1}\n',
 'long': 's:\n- {a: ' + 'x'*5000 + ', b: 1}\n',
 'long num': 's:\n- {a: ' + '9'*5000 + ', b: 1}\n',
 'anchor': 's:\n- &a {a: x, b: 1}\n- *a\n',
 'anchor in map': 's:\n- {a: &x v, b: *x}\n',
 'key no value': 's:\n- {a, b: 1}\n',
 'key no value2': 's:\n- {a:, b: 1}\n',
 'key no value3': 's:\n- {a: , b: 1}\n',
 'octal': 's:\n- {mtu: 0o11, b: 1}\n- {mtu: 011, b: 1}\n',
 'float': 's:\n- {speed: 1e2, b: 1}\n- {speed: 1.0e+2, b: 1}\n- {speed: .5}\n',
 'bool': 's:\n- {name: no, b: yes}\n- {name: on, b: off}\n- {name: No, b: NO}\n- {name: y, b: n}\n',
 'null': 's:\n- {name: null, b: ~}\n- {name: Null, b: NULL}\n',
 'sexagesimal': 's:\n- {a: 1:30, b: 190:20:30}\n',
 'hex': 's:\n- {a: 0x1f, b: 0b101}\n',
 'underscores': 's:\n- {a: 1_000, b: 0o1_7}\n',
 'inf nan': 's:\n- {a: .inf, b: .NaN, c: -.Inf}\n',
 'plus': 's:\n- {a: +1, b: +.5, c: -0}\n',
 'date': 's:\n- {a: 2024-01-01, b: 2024-01-01T00:00:00Z}\n',
 'colons': 's:\n- {a: leaf1:Ethernet0, b: "leaf1:Ethernet0"}\n',
 'url': 's:\n- {a: http://x, b: 1}\n',
 'double space': 's:\n- {a:  x, b:  1}\n',
 'no space': 's:\n- {a: x,b: 1}\n',
 'trailing comma': 's:\n- {a: x, b: 1,}\n',
 'empty': 's:\n- {}\n- {a: 1}\n',
 'escape': 's:\n- {a: "x\\ty", b: 1}\n',
 'sq doubled': "s:\n- {a: 'it''s', b: 1}\n",
 'quoted key': 's:\n- {"a": x, b: 1}\n',
 'quoted key sq': "s:\n- {'a': x, b: 1}\n",
 'nested': 's:\n- {a: {b: 1}, c: [1, 2]}\n',
 'spaces before close': 's:\n- {a: x, b: 1 }\n',
 'space after open': 's:\n- { a: x, b: 1}\n',
 'trailing ws': 's:\n- {a: x, b: 1}  \n',
 'tag': 's:\n- {a: !!str 1, b: 1}\n',
 'mapping entry': 'm:\n  x: {a: "x, y", b: 1}\n  y: {a: 0o11}\n',
 'mapping entry dup': 'm:\n  x: {a: 1}\n  x: {a: 2}\n',
 'dash value': 's:\n- {a: -, b: 1}\n',
 'dash2': 's:\n- {a: -x, b: 1}\n',
 'question': 's:\n- {a: ?x, b: 1}\n',
 'pct': 's:\n- {a: 50%, b: 1}\n',
 'at': 's:\n- {a: x@y, b: 1}\n',
 'slash': 's:\n- {a: Ethernet1/1, b: 1}\n',
 'brackets': 's:\n- {a: "E[0-3]", b: 1}\n',
 'key dots': 's:\n- {a.b: 1, -c: 2}\n',
 'key digits': 's:\n- {1: 1, 0o11: 2, 1e2: 3}\n',
 'key bool': 's:\n- {no: 1, yes: 2}\n',
 'key null': 's:\n- {null: 1}\n',
 'key ~': 's:\n- {~: 1}\n',
 'dup bool keys': 's:\n- {no: 1, false: 2}\n',
 'dup int keys': 's:\n- {1: 1, 01: 2}\n',
 'dup int keys2': 'a:\n  1: x\n  0x1: y\n',
 'block dup bool': 'a:\n  no: x\n  false: y\n',
 'block octal': 'a: 0o11\nb: 011\nc: 0x_1\nd: 1e2\ne: 1E2\nf: 1.e2\n',
 'block bool': 'a: no\nb: Yes\nc: on\nd: OFF\ne: y\nf: N\n',
 'long key': 'a' * 1001 + ': 1\n',
 'long key flow': 's:\n- {' + 'a' * 1001 + ': 1}\n',
 'key 1000': 's:\n- {' + 'a' * 1000 + ': 1}\n',
 'key 1024': 'b' * 1024 + ': 1\n',
 'colon end value': 's:\n- {a: x:, b: 1}\n',
 'colon value': 's:\n- {a: x:y:z, b: 1}\n',
 'sq with hash': "s:\n- {a: 'x#', b: 1}\n",
 'dq empty': 's:\n- {a: "", b: 1}\n',
 'sq empty': "s:\n- {a: '', b: 1}\n",
 'merge key': 'd: &d {a: 1}\ns:\n- {<<: *d, b: 1}\n',
 'merge key2': 's:\n- {<<: 1, b: 1}\n',
 'comment after key': 'a: # c\n  b: 1\n',
 'nbsp': 's:\n- {a: x\u00a0y, b: 1}\n',
 'nbsp2': 's:\n- {a:\u00a0x, b: 1}\n',
 'zero width': 's:\n- {a: x\u200b, b: 1}\n',
 'linesep': 's:\n- {a: x, b: 1}\u2028\n',
 'nel': 's:\n- {a: x, b: 1}\x85',
 'lone cr': 's:\r- {a: x, b: 1}\n',
 'no final nl': 's:\n- {a: x, b: 1}',
 'cr at end': 's:\n- {a: x, b: 1}\r',
 'dots doc end': 's:\n- {a: x}\n...\n',
 'dashes doc': '---\ns:\n- {a: x}\n---\nb: 1\n',
 'flow seq item': 's:\n- [a, b]\n',
 'yaml 1.1 bool': 's:\n- {a: True, b: FALSE, c: tRUE}\n',
 'int sign octal': 's:\n- {a: -0o11, b: +0x1f}\n',
 'many zeros': 's:\n- {a: 00, b: 0.0, c: -0.0}\n',
 'big float': 's:\n- {a: 1e400, b: -1e400}\n',
 'huge int': 'a: ' + '1' * 4301 + '\n',
 'huge int flow': 's:\n- {a: ' + '1' * 4301 + '}\n',
 'huge hex': 'a: 0x' + 'f' * 4000 + '\n',
 'key with colon': 's:\n- {a:b: 1}\n',
 'value with ", "': 's:\n- {a: "x", b: "y, z"}\n',
 'value sq comma': "s:\n- {a: 'x, y: z', b: 1}\n",
 'value dq brace comma': 's:\n- {a: "}, b: {", b: 1}\n',
 'sq colon space': "s:\n- {a: 'a: b'}\n",
 'indent sibling': 's:\n  - {a: 1}\n  - {a: 2}\n - {a: 3}\n',
 'seq at key col': 's:\n- {a: 1}\nt:\n- {a: 2}\n',
 'item dedent': 'h:\n  - n:\n    - {a: 1}\n  - {a: 2}\n',
}

#: texts the fast reader must take itself (else the cases above would test ruamel.yaml against itself)
FAST = ["quoted comma", "quoted brace", "quoted colon", "hash in quotes", "trailing comment", "crlf", "dup",
        "unicode", "long", "octal", "float", "bool", "null", "sexagesimal", "mapping entry dup", "huge int"]


@pytest.mark.parametrize("name", sorted(DOCS))
def test_nasty_documents_agree_with_ruamel_or_decline(name: str) -> None:
    assert_agrees(DOCS[name], must_accept=name in FAST)


base = (REPO / "inventories" / "lab-2node.yaml").read_text()
NIC1 = ('{model: connectx-7, netdev: ens1f0np0, rdma_device: mlx5_0, speed: 400G, switch_port: '
        '"lab-leaf1:Ethernet0", cable_length: 2m}')


def nic(s: str) -> str:
    return base.replace(NIC1, s, 1)


def port(s: str) -> str:
    return base.replace("{name: Ethernet0, speed: 400G}", s, 1)


def pin(s: str) -> str:
    pinned = f"    - {{device: lab-leaf1, port: Ethernet0, set: {s}}}\n"
    return base.replace("policy:\n", f"policy:\n  overrides:\n{pinned}", 1)


V = {
 'float speed': nic(NIC1.replace('speed: 400G', 'speed: 1e2')),
 'octal mtu': nic(NIC1.replace('cable_length: 2m}', 'cable_length: 2m, mtu: 0o11}')),
 'octal mtu2': nic(NIC1.replace('cable_length: 2m}', 'cable_length: 2m, mtu: 011}')),
 'bool speed': nic(NIC1.replace('speed: 400G', 'speed: yes')),
 'name no': base.replace('- name: node1', '- name: no'),
 'switch name no': base.replace('- name: lab-leaf1', '- name: no'),
 'quoted comma netdev': nic(NIC1.replace('netdev: ens1f0np0', 'netdev: "ens1f0np0, x"')),
 'quoted brace netdev': nic(NIC1.replace('netdev: ens1f0np0', "netdev: 'ens1f0}np0'")),
 'quoted colon netdev': nic(NIC1.replace('netdev: ens1f0np0', 'netdev: "ens1: f0"')),
 'hash port': nic(NIC1.replace('lab-leaf1:Ethernet0"', 'lab-leaf1:Ethernet0 #x"')),
 'trailing comment': nic(NIC1 + '  # the first NIC'),
 'dup key': nic(NIC1.replace('speed: 400G', 'speed: 400G, speed: 100G')),
 'unicode name': base.replace('- name: node1', '- name: nöde1'),
 'unicode netdev': nic(NIC1.replace('netdev: ens1f0np0', 'netdev: ensü')),
 'crlf': base.replace('\n', '\r\n'),
 'crlf + error': nic(NIC1.replace('speed: 400G', 'speed: 1e2')).replace('\n', '\r\n'),
 'bom + error': '\ufeff' + nic(NIC1.replace('speed: 400G', 'speed: 1e2')),
 'tab + error': nic(NIC1.replace('speed: 400G', 'speed:\t1e2')),
 'tab indent': base.replace('  - name: node2', '\t- name: node2'),
 'long netdev': nic(NIC1.replace('netdev: ens1f0np0', 'netdev: ' + 'e' * 5000)),
 'long value error': nic(NIC1.replace('speed: 400G', 'speed: ' + '4' * 5000 + 'G')),
 'anchor': base.replace('mgmt: {host: 127.0.0.1, port: 2211}', 'mgmt: &m {host: 127.0.0.1, port: 2211}')
     .replace('mgmt: {host: 127.0.0.1, port: 2212}', 'mgmt: *m'),
 'anchor + error': nic(NIC1.replace('speed: 400G', 'speed: 1e2')).replace('policy:', 'policy: &p'),
 'key no value': nic(NIC1.replace('rdma_device: mlx5_0', 'rdma_device:')),
 'key no value2': nic(NIC1.replace('rdma_device: mlx5_0', 'rdma_device: ,')),
 'port mtu octal': port('{name: Ethernet0, speed: 400G, mtu: 0o11}'),
 'port speed float': port('{name: Ethernet0, speed: 1e2}'),
 'port speed int': port('{name: Ethernet0, speed: 400}'),
 'port admin no': port('{name: Ethernet0, speed: 400G, admin_up: no}'),
 'port admin str': port('{name: Ethernet0, speed: 400G, admin_up: "no"}'),
 'cable 1e2': nic(NIC1.replace('cable_length: 2m', 'cable_length: 1e2')),
 'cable neg': nic(NIC1.replace('cable_length: 2m', 'cable_length: -2m')),
 'cable .inf': nic(NIC1.replace('cable_length: 2m', 'cable_length: .inf')),
 'cable huge': nic(NIC1.replace('cable_length: 2m', 'cable_length: ' + '9' * 5000)),
 'unknown key': nic(NIC1.replace('cable_length: 2m', 'cable_lenght: 2m')),
 'null model': nic(NIC1.replace('model: connectx-7', 'model: ~')),
 'nbsp': nic(NIC1.replace('speed: 400G', 'speed: 400G\u00a0')),
 'double space': nic(NIC1.replace('speed: 400G', 'speed:  4000G')),
 'no space': nic(NIC1.replace('speed: 400G, ', 'speed: 4000G,')),
 'spaces in braces': nic(NIC1.replace('{model', '{ model').replace('2m}', '2m }')
                         .replace('speed: 400G', 'speed: 4000G')),
 'nested flow': nic(NIC1.replace('cable_length: 2m', 'cable_length: [2m]')),
 'sexagesimal': nic(NIC1.replace('speed: 400G', 'speed: 1:30')),
 'pinned str': pin('{kmin_bytes: 1e2}'),
 'pinned octal': pin('{kmin_bytes: 0o11, kmax_bytes: 0x10}'),
 'port name quoted': port("{name: 'Ethernet0', speed: 400G, mtu: 99999}"),
 'dq escape': nic(NIC1.replace('netdev: ens1f0np0', 'netdev: "ens\\x41"')),
}


def _findings(text: str) -> tuple[str, list[tuple[Any, ...]]]:
    try:
        loaded = load_inventory_text(text, "inv.yaml")
    except RoceTuneError as exc:
        return "load", [(f.rule, f.location.file, f.location.line, f.location.col, f.message)
                        for f in exc.findings]
    try:
        found = lint_loaded(loaded, load_catalog())
    except RoceTuneError as exc:
        found = exc.findings
    return "lint", [(f.rule, f.location.file, f.location.line, f.location.col, f.message) for f in found]


@pytest.mark.parametrize("name", sorted(V))
def test_findings_keep_file_line_col_whichever_reader_reads_the_inventory(
        name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    text = V[name]
    assert NIC1 in base and (text != base or name == "crlf")
    fast = _findings(text)
    monkeypatch.setattr(loader, "fast_parse", lambda t: None)
    assert _findings(text) == fast
    for _, file, line, col, _ in fast[1]:
        assert file == "inv.yaml" and line is not None and col is not None


@pytest.mark.parametrize(("name", "line", "col", "rule"), [
    ("octal mtu", 37, 141, "RT003"), ("bool speed", 37, 76, "RT003"), ("dup key", 37, 82, "RT002"),
    ("quoted comma netdev", 37, 37, "RT003"), ("hash port", 37, 95, "RT003"),
    ("cable .inf", 37, 132, "RT003"),
    ("port mtu octal", 29, 45, "RT003"), ("crlf + error", 37, 76, "RT104"), ("no space", 37, 76, "RT003"),
    ("double space", 37, 77, "RT003")])
def test_a_finding_in_a_flow_map_points_at_its_value(name: str, line: int, col: int, rule: str) -> None:
    assert fast_parse(V[name]) is not None  # the fast reader's lazy positions
    found = _findings(V[name])[1]
    assert [(r, ln, c) for r, _, ln, c, _ in found] == [(rule, line, col)]
