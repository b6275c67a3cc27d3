"""Lint rules: each rule's bad example fails with that rule at the exact line:col, its fixed example
does not; plus the behaviour that the examples alone do not pin down.

The expected positions were read off the example YAML (``roce_tune/inventory/rules/*.py``); the test
also checks the text found there, so an oracle that drifts from the example shows up at once.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from roce_tune.findings import Severity
from roce_tune.inventory import lint as lint_module
from roce_tune.inventory.catalog import Catalog
from roce_tune.inventory.lint import RULES, lint, lint_text, rules_markdown
from roce_tune.inventory.loader import load_inventory, load_inventory_text

REPO = Path(__file__).resolve().parents[2]

#: rule -> (line, col, text at that position) of the first finding of the rule in its bad example.
EXPECTED = {
    "RT101": (16, 22, '"leaf1:Ethernet4"'),          # NIC switch_port to an undeclared port
    "RT102": (15, 95, '"leaf1:Ethernet0"'),          # second NIC on Ethernet0
    "RT103": (6, 5, '{a: "leaf1:Ethernet120"'),      # the link
    "RT104": (15, 16, "200G"),                       # the NIC's speed
    "RT105": (12, 10, "9216"),                       # host mtu 9216 > switch 9216 - 22
    "RT106": (4, 13, "4000"),                        # policy.host_mtu
    "RT107": (12, 9, "model: connectx-7"),           # the NIC without cable_length
    "RT108": (3, 28, "6]"),                          # lossless priority 6 == cnp_priority
    "RT109": (3, 19, "48]"),                         # roce_dscp 48 == cnp_dscp
    "RT110": (3, 24, "[2, 3, 4]"),
    "RT111": (8, 7, "- {name: 'Ethernet[0-129]'"),   # 130 ports on a 128-port SN4700
    "RT112": (3, 43, "SN9999"),
    "RT113": (5, 33, '"border1:Ethernet0"'),
    "RT114": (3, 12, "leaf1"),
    "RT115": (8, 7, "- {name: 'Ethernet[0-68/4]'"),
    "RT116": (3, 3, "- name: gpu01"),
    "RT117": (9, 104, '"leaf-r0:Ethernet0"'),        # rail-1 NIC on the rail-0 leaf
    "RT118": (9, 124, '"leaf1:Ethernet4"'),          # second port of PCI slot 3b:00 on leaf1 again
    "RT119": (11, 10, "1500"),
    "RT120": (4, 12, "leaf1"),                       # second switch named leaf1
    "RT121": (12, 13, "Ethernet4"),
    "RT122": (11, 13, "spine"),
    "RT123": (8, 16, "'Ethernet[124-0/4]'"),
    "RT124": (6, 37, "ens1f0np0"),
    "RT125": (4, 15, "eos"),                         # EOS on an NVIDIA SN4700
    "RT126": (4, 17, "0"),                           # cnp_priority 0
    "RT127": (5, 31, "150000}"),                     # a 150 Gb/s AI step on a 100G NIC
    "RT128": (12, 96, "100000m"),                    # 100 km NIC cable
    "RT129": (7, 20, '"swp1s0-uplink-a1"'),          # 16 characters on Cumulus
    "RT136": (7, 17, "4.4.3"),                       # a Cumulus release without a known NVUE grammar
    "RT137": (3, 28, "4]"),                          # lossless priority 4 past the last RoCE DSCP
    "RT138": (9, 11, "10.10.1.250"),                 # 8 hosts counted up from .250 reach .255 and .2.0
    "RT139": (7, 20, '"et-0/0/0.0"'),                # a Junos logical unit, not the port
    "RT140": (6, 25, "[]"),                          # gpu02's empty nics list
    "RT141": (10, 39, "30"),                         # spine1's losing device pin
}


def test_every_rule_has_an_expected_position() -> None:
    assert sorted(EXPECTED) == sorted(RULES)
    assert list(RULES) == sorted(RULES)


@pytest.mark.parametrize("rule_id", sorted(RULES))
def test_bad_example_fails_at_the_exact_position(rule_id: str, catalog: Catalog, tmp_path: Path) -> None:
    rule = RULES[rule_id]
    path = tmp_path / "bad.yaml"
    path.write_text(rule.bad, encoding="utf-8")
    findings = [f for f in lint(load_inventory(path), catalog) if f.rule == rule_id]
    assert findings, f"{rule_id} did not fire on its bad example"
    line, col, snippet = EXPECTED[rule_id]
    first = findings[0]
    assert (first.location.file, first.location.line, first.location.col) == (str(path), line, col)
    assert rule.bad.split("\n")[line - 1][col - 1:].startswith(snippet)
    assert first.fix and first.message and first.location.path


@pytest.mark.parametrize("rule_id", sorted(RULES))
def test_fixed_example_does_not_raise_the_rule(rule_id: str, catalog: Catalog) -> None:
    rule = RULES[rule_id]
    bad = {f.severity for f in lint_text(rule.bad, "bad.yaml", catalog) if f.rule == rule_id}
    fixed = [f for f in lint_text(rule.fixed, "fixed.yaml", catalog) if f.rule == rule_id]
    assert not any(f.rule.startswith("RT0") for f in lint_text(rule.fixed, "f", catalog)), "fixed must load"
    # RT114 reports the ratio as info even when fine: what the fix removes is the warning.
    assert not [f for f in fixed if f.severity in bad], fixed


def test_examples_have_their_default_severity_where_fixed(catalog: Catalog) -> None:
    for rule in RULES.values():
        got = [f for f in lint_text(rule.bad, "b", catalog) if f.rule == rule.id]
        expected = Severity.warning if rule.id == "RT114" else rule.severity
        assert got[0].severity is expected, rule.id


def test_lint_is_deterministic_and_sorted(catalog: Catalog) -> None:
    text = RULES["RT102"].bad.replace("speed: 400G, switch_port", "speed: 100G, switch_port") \
        .replace("cable_length: 3m}", "}")
    a, b = lint_text(text, "x.yaml", catalog), lint_text(text, "x.yaml", catalog)
    assert a == b
    keys = [(f.location.line, f.location.col, f.rule) for f in a]
    assert keys == sorted(keys) and {"RT102", "RT104", "RT107"} <= {f.rule for f in a}


def test_dangling_versus_external() -> None:
    base = RULES["RT113"].bad
    # unknown device: external (warning), not dangling
    assert {f.rule for f in lint_text(base)} >= {"RT113"} and "RT101" not in {f.rule for f in lint_text(base)}
    # declared switch, undeclared port: dangling (error)
    text = base.replace("border1:Ethernet0", "leaf1:Ethernet0")
    got = [f for f in lint_text(text) if f.rule == "RT101"]
    assert len(got) == 1 and got[0].severity is Severity.error and got[0].location.path == "links[0].b"
    # a host named on a link: RT113 says to use the NIC's switch_port
    text = base + "hosts:\n  - {name: border1, nics: []}\n"
    got = [f for f in lint_text(text) if f.rule == "RT113"]
    assert len(got) == 1 and "switch_port" in got[0].fix
    # NIC to an undeclared switch: dangling
    text = RULES["RT101"].bad.replace('"leaf1:Ethernet4"', '"leaf9:Ethernet0"')
    assert [f.location.line for f in lint_text(text) if f.rule == "RT101"] == [16]


def test_rail_pair_leaves_check_every_nic_against_their_rails() -> None:
    """site.yaml's leaves serve two rails each (``rails: [2k, 2k+1]``): a rail-2 NIC on leaf1 (rails 0, 1) is
    RT117 at that NIC's switch_port; the shipped cabling is clean."""
    text = (REPO / "inventories" / "site.yaml").read_text()
    assert "RT117" not in {f.rule for f in lint_text(text)}
    wrong = text.replace('rail: 2, switch_port: "leaf2:Ethernet0"',
                         'rail: 2, switch_port: "leaf1:Ethernet60"', 1)
    assert wrong != text
    got = [f for f in lint_text(wrong) if f.rule == "RT117"]
    assert len(got) == 1 and got[0].message.endswith("cabled to leaf1, a leaf of rails 0, 1")
    assert got[0].location.path == "hosts[0].nics[2].switch_port"
    both = text.replace("rails: [0, 1]", "rails: [0, 1]\n    rail: 0", 1)
    assert any("either 'rail'" in f.message for f in lint_text(both))
    twice = text.replace("rails: [0, 1]", "rails: [0, 0]", 1)
    assert any("lists a rail twice" in f.message for f in lint_text(twice))
    for bad in ('rails: ["1"]', "rails: [true]"):  # no coercion: a rail is an integer
        assert any(f.rule == "RT003" for f in lint_text(text.replace("rails: [0, 1]", bad, 1))), bad


@pytest.mark.parametrize("value", ['"no"', "0", "1", '"false"'])
def test_link_lossless_must_be_a_boolean(value: str) -> None:
    text = RULES["RT113"].bad.replace("cable_length: 30m}", f"cable_length: 30m, lossless: {value}}}")
    assert text != RULES["RT113"].bad
    got = [f for f in lint_text(text) if f.rule == "RT003"]
    assert got and got[0].location.line == 5, got


def test_lossy_link_without_cable_length_is_not_a_headroom_warning() -> None:
    text = RULES["RT113"].bad.replace(", cable_length: 30m}", "}")
    assert "RT107" in {f.rule for f in lint_text(text)}
    assert "RT107" not in {f.rule for f in lint_text(text.replace('"border1:Ethernet0"}',
                                                                  '"border1:Ethernet0", lossless: false}'))}


def test_cabled_twice_and_declared_twice() -> None:
    text = RULES["RT102"].fixed.replace("- {name: 'Ethernet[0-8/4]', speed: 400G}",
                                        "- {name: 'Ethernet[0-8/4]', speed: 400G}\n      - {name: Ethernet4, "
                                        "speed: 400G}")
    got = [f for f in lint_text(text) if f.rule == "RT102"]
    assert [(f.location.line, f.location.col) for f in got] == [(9, 16)]
    assert "declared twice" in got[0].message


def test_mtu_mismatch_is_reported_once_per_setting() -> None:
    hosts = "".join(f"  - {{name: gpu{i}, nics: [{{model: connectx-7, netdev: ens1f0np0, rdma_device: "
                    f"mlx5_0, speed: 400G, switch_port: \"leaf1:Ethernet{4 * i}\", cable_length: "
                    "3m}]}\n" for i in range(4))
    text = ("site: {name: lab}\npolicy: {mtu: 9100, host_mtu: 9100}\nswitches:\n"
            "  - {name: leaf1, platform: sonic, model: SN4700, role: leaf, ports: [{name: "
            "'Ethernet[0-12/4]', speed: 400G}]}\nhosts:\n" + hosts)
    got = [f for f in lint_text(text) if f.rule == "RT105"]
    assert len(got) == 1 and "4 ports" in got[0].message
    assert got[0].location.path == "policy.host_mtu"
    assert (got[0].location.line, got[0].location.col) == (2, 31)
    assert text.split("\n")[1][30:].startswith("9100}")
    # host 9000 + 22 = 9022 fits the default 9216 and SONiC's 9100
    assert not [f for f in lint_text(text.replace("host_mtu: 9100", "host_mtu: 9000")) if f.rule == "RT105"]


def test_roce_mtu_thresholds() -> None:
    def rt106(host_mtu: int, roce_mtu: int) -> bool:
        text = f"site: {{name: lab}}\npolicy: {{host_mtu: {host_mtu}, roce_mtu: {roce_mtu}}}\n"
        return any(f.rule == "RT106" for f in lint_text(text))
    # RoCE MTU 4096 needs netdev MTU >= 4200; 2048 needs >= 2152 (kernel iboe_get_mtu: +96, rounded as NVIDIA)
    assert rt106(4199, 4096) and not rt106(4200, 4096)
    assert not rt106(4000, 2048) and not rt106(2152, 2048) and rt106(2151, 2048)


def test_oversubscription_ratio_and_severity() -> None:
    got = [f for f in lint_text(RULES["RT114"].bad) if f.rule == "RT114"]
    assert "2.00:1" in got[0].message and "800G toward hosts / 400G uplinks" in got[0].message
    got = [f for f in lint_text(RULES["RT114"].fixed) if f.rule == "RT114"]
    assert got[0].severity is Severity.info and "1.00:1" in got[0].message


def test_catalog_unavailable_is_a_finding(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken() -> Catalog:
        raise FileNotFoundError("asics.yaml")
    monkeypatch.setattr(lint_module, "load_catalog", broken)
    findings = lint(load_inventory_text(RULES["RT112"].bad, "x.yaml"))
    assert [f.rule for f in findings if f.severity is Severity.error] == ["RT100"]


def test_select_runs_only_the_named_rules(catalog: Catalog) -> None:
    loaded = load_inventory_text(RULES["RT102"].bad)
    assert {f.rule for f in lint(loaded, catalog, select={"RT107"})} <= {"RT107"}


@pytest.mark.parametrize("inventory", sorted(p.name for p in (REPO / "inventories").glob("*.yaml")))
def test_shipped_inventories_lint_without_errors(inventory: str, catalog: Catalog) -> None:
    findings = lint(load_inventory(REPO / "inventories" / inventory), catalog)
    errors = [str(f) for f in findings if f.severity is Severity.error]
    assert not errors, "\n".join(errors)


def test_lint_rules_doc_is_in_sync(catalog: Catalog) -> None:
    doc = (REPO / "docs" / "lint-rules.md").read_text(encoding="utf-8")
    assert doc == rules_markdown(catalog), ("regenerate: python -m roce_tune.inventory.lint > "
                                            "docs/lint-rules.md")
    for rule in RULES.values():
        assert f"### {rule.id}" in doc and rule.bad.strip() in doc and rule.fixed.strip() in doc


def _site_policy(tmp_path: Path, old: str, new: str) -> Path:
    """inventories/site.yaml with ``old`` replaced by ``new`` in its policy block, as a real file."""
    text = (REPO / "inventories" / "site.yaml").read_text(encoding="utf-8")
    assert old in text
    path = tmp_path / "site.yaml"
    path.write_text(text.replace(old, new, 1), encoding="utf-8")
    return path


def test_lossless_priority_without_a_dscp_is_a_warning_at_its_entry(tmp_path: Path, catalog: Catalog) -> None:
    """site.yaml with a second lossless priority and still one RoCE DSCP: RT137 at the ``4`` of
    ``lossless_priorities: [3, 4]`` (line 22 of site.yaml), naming the priority, its PFC headroom and the
    fixes; lint passes (a warning) unless --strict."""
    path = _site_policy(tmp_path, "lossless_priorities: [3]", "lossless_priorities: [3, 4]")
    got = [f for f in lint(load_inventory(path), catalog) if f.rule == "RT137"]
    assert len(got) == 1 and got[0].severity is Severity.warning
    line = path.read_text(encoding="utf-8").split("\n")[got[0].location.line - 1]
    assert (got[0].location.file, got[0].location.line, got[0].location.col) == (str(path), 22, 28)
    assert line == "  lossless_priorities: [3, 4]" and line[27:] == "4]"
    assert got[0].location.path == "policy.lossless_priorities[1]"
    assert got[0].message.startswith("lossless priority 4 has no RoCE DSCP (roce_dscp [26] maps to "
                                     "priority 3)")
    assert "PFC headroom" in got[0].message
    assert "roce_dscp: [26, 28]" in got[0].fix and "remove 4 from policy.lossless_priorities" in got[0].fix
    assert "Tagger" in got[0].fix
    run = subprocess.run([sys.executable, "-m", "roce_tune.cli", "lint", str(path)], capture_output=True,
                         text=True, cwd=REPO, timeout=300)
    assert run.returncode == 0 and f"{path}:22:28" in run.stdout and "RT137" in run.stdout, run.stdout[-2000:]
    strict = subprocess.run([sys.executable, "-m", "roce_tune.cli", "lint", "--strict", str(path)],
                            capture_output=True, text=True, cwd=REPO, timeout=300)
    assert strict.returncode == 1


@pytest.mark.parametrize(("old", "new"), [
    ("lossless_priorities: [3]\n  roce_dscp: [26]", "lossless_priorities: [3, 4]\n  roce_dscp: [26, 28]"),
    ("lossless_priorities: [3]\n  roce_dscp: [26]", "lossless_priorities: [3]\n  roce_dscp: [26, 28]"),
    ("lossless_priorities: [3]\n  roce_dscp: [26]\n  cnp_dscp: 48\n  cnp_priority: 6\n  trust: dscp",
     "lossless_priorities: [3, 4]\n  roce_dscp: [26]\n  cnp_dscp: 48\n  cnp_priority: 6\n  trust: pcp"),
])
def test_every_lossless_priority_reachable_is_not_rt137(tmp_path: Path, catalog: Catalog, old: str,
                                                        new: str) -> None:
    """A DSCP per lossless priority (extra DSCPs fall back to the first priority), or PCP trust (the hosts
    tag the priority themselves): no RT137."""
    path = _site_policy(tmp_path, old, new)
    findings = lint(load_inventory(path), catalog)
    assert not [f for f in findings if f.rule.startswith("RT0")]
    assert "RT137" not in {f.rule for f in findings}


def test_shipped_inventories_map_a_dscp_to_every_lossless_priority(catalog: Catalog) -> None:
    shipped = sorted((REPO / "inventories").glob("*.yaml")) + sorted((REPO / "inventories" / "intent")
                                                                     .glob("*.yaml"))
    assert shipped
    for path in shipped:
        assert "RT137" not in {f.rule for f in lint(load_inventory(path), catalog)}, path


def test_mgmt_addresses_counted_over_an_octet_edge_are_warned_at_the_intent_line(tmp_path: Path,
                                                                                 catalog: Catalog) -> None:
    """RT138 on a real intent file: hosts counted from .250 and a leaf at .255 are each a warning at their
    tier's mgmt line, naming the device and address; SSH-port counting, IPv6 and names are not."""
    text = RULES["RT138"].bad.replace("mgmt: 10.10.0.11", "mgmt: 10.10.0.255")
    path = tmp_path / "intent.yaml"
    path.write_text(text, encoding="utf-8")
    found = [f for f in lint(load_inventory(path), catalog) if f.rule == "RT138"]
    assert [(f.severity, f.location.line, f.location.device) for f in found] == [
        (Severity.warning, 9, "gpu06"), (Severity.warning, 9, "gpu07"), (Severity.warning, 15, "leaf1")]
    assert "10.10.0.255 is the broadcast address" in found[2].message
    assert "10.10.2.0 is the network address" in found[1].message and "crosses octet" in found[1].message
    for other in ("mgmt: 127.0.0.1\n    mgmt_port: 2211\n    count_up: port", "mgmt: fd00::fe"):
        path.write_text(RULES["RT138"].bad.replace("mgmt: 10.10.1.250", other), encoding="utf-8")
        assert not [f for f in lint(load_inventory(path), catalog) if f.rule == "RT138"]
    # the full form (roce-tune expand) warns the same devices, at their own lines
    path.write_text(text, encoding="utf-8")
    full = subprocess.run([sys.executable, "-m", "roce_tune.cli", "expand", str(path)], capture_output=True,
                          text=True, check=True, cwd=REPO)
    (tmp_path / "full.yaml").write_text(full.stdout, encoding="utf-8")
    assert [f.location.device for f in lint(load_inventory(tmp_path / "full.yaml"), catalog)
            if f.rule == "RT138"] == ["leaf1", "gpu06", "gpu07"]  # switches come first there
