"""RT139: a switch port name the platform reads as something other than a physical front-panel port (a Junos
logical unit, a subinterface, a LAG) is a lint error at the port's file:line:col, with a fix naming the
physical port; every physical form the platforms use (breakouts, CLI abbreviations) passes."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from roce_tune.findings import Finding, Severity
from roce_tune.inventory.catalog import Catalog
from roce_tune.inventory.lint import lint, lint_text
from roce_tune.inventory.loader import load_inventory

REPO = Path(__file__).resolve().parents[2]

#: a model each platform runs on (no RT125)
MODELS = {"sonic": "SN4700", "cumulus": "SN4700", "eos": "7060DX5-64S", "nxos": "N9K-C9364D-GX2A",
          "junos": "QFX5130-32CD"}


def _inventory(platform: str, *ports: str) -> str:
    rows = "".join(f'      - {{name: "{p}", speed: 100G}}\n' for p in ports)
    return (f"site: {{name: lab}}\nswitches:\n  - name: leaf1\n    platform: {platform}\n"
            f"    model: {MODELS[platform]}\n    role: leaf\n    ports:\n{rows}")


def _rt139(text: str, catalog: Catalog) -> list[Finding]:
    return [f for f in lint_text(text, "inv.yaml", catalog) if f.rule == "RT139"]


@pytest.mark.parametrize(("platform", "name", "physical"), [
    ("junos", "et-0/0/0.0", "'et-0/0/0'"),                # the brief's case: unit 0
    ("junos", "et-0/0/1:2.0", "'et-0/0/1:2'"),            # a unit of a channelized port
    ("junos", "xe-0/0/[0-3].0", "'xe-0/0/[0-3]'"),        # a range of units: the fix keeps the range
    ("cumulus", "swp1.100", "'swp1'"),
    ("cumulus", "swp1s0.100", "'swp1s0'"),
    ("sonic", "Ethernet0.10", "'Ethernet0'"),
    ("eos", "Ethernet1/1.100", "'Ethernet1/1'"),
    ("eos", "Et1/1.100", "'Et1/1'"),                     # the physical port as the user wrote it
    ("nxos", "Ethernet1/1.100", "'Ethernet1/1'"),
    ("nxos", "Eth1/1/2.7", "'Eth1/1/2'"),
])
def test_a_logical_unit_or_subinterface_names_its_physical_port(platform: str, name: str, physical: str,
                                                                 catalog: Catalog) -> None:
    text = _inventory(platform, name)
    got = _rt139(text, catalog)
    assert len(got) == 1, got
    f = got[0]
    line = text.split("\n").index(f'      - {{name: "{name}", speed: 100G}}') + 1
    assert (f.location.line, f.location.col) == (line, 16)  # the quoted name
    assert f.severity is Severity.error and f.location.device == "leaf1"
    assert f.location.path == "switches[0].ports[0].name"
    assert "logical unit / subinterface" in f.message and f"name the physical port: {physical}" in f.fix


@pytest.mark.parametrize(("platform", "name", "example"), [
    ("junos", "ae0", "et-0/0/0"),
    ("junos", "ET-0/0/0", "et-0/0/0"),
    ("cumulus", "bond1", "swp1"),
    ("cumulus", "eth0", "swp1"),
    ("sonic", "PortChannel0001", "Ethernet0"),
    ("sonic", "Eth1/1", "Ethernet0"),
    ("eos", "Port-Channel10", "Ethernet1/1"),
    ("eos", "Management1", "Ethernet1/1"),
    ("nxos", "port-channel5", "Ethernet1/1"),
    ("nxos", "Ethernet1", "Ethernet1/1"),
])
def test_a_lag_or_management_port_is_not_a_physical_port(platform: str, name: str, example: str,
                                                          catalog: Catalog) -> None:
    got = _rt139(_inventory(platform, name), catalog)
    assert len(got) == 1, got
    assert "is not a physical front-panel port name" in got[0].message
    assert got[0].fix.endswith(f"e.g. {example}")


@pytest.mark.parametrize(("platform", "names"), [
    ("junos", ["et-0/0/0", "et-0/0/1:1", "xe-0/0/[0-3]", "ge-0/0/4", "mge-0/0/5", "et-1/0/[0-3]:0"]),
    ("cumulus", ["swp1", "swp2s0", "swp[3-4]", "swp5s[0-3]"]),
    ("sonic", ["Ethernet0", "Ethernet[4-12/4]", "Ethernet256"]),
    ("eos", ["Ethernet1", "Ethernet1/1", "Ethernet3/1/1", "Et1/5", "Eth2/1/2", "ethernet4/1",
             "Ethernet[5-8]/1"]),
    ("nxos", ["Ethernet1/1", "Ethernet1/1/2", "Eth1/3", "Et1/4", "e1/5", "Ethernet1/[6-8]", "Eth1/9/[1-4]"]),
])
def test_every_physical_form_passes(platform: str, names: list[str], catalog: Catalog) -> None:
    assert _rt139(_inventory(platform, *names), catalog) == []


def test_no_shipped_or_test_inventory_file_has_a_non_physical_port(catalog: Catalog) -> None:
    files = sorted({*REPO.glob("inventories/**/*.yaml"), *REPO.glob("tests/**/*.yaml")})
    checked = 0
    for path in files:
        text = path.read_text(encoding="utf-8")
        if "switches" not in text or "ports" not in text:
            continue
        checked += 1
        assert _rt139(text, catalog) == [], path
    assert checked >= 5


def test_lint_cli_exits_1_and_positions_the_port(tmp_path: Path) -> None:
    """``roce-tune lint`` (a real subprocess) on mixed-vendor.yaml with leaf3's host ports written as unit 0
    (line 50): RT139 at the range's quoted name, exit 1; the shipped file has none."""
    text = (REPO / "inventories" / "mixed-vendor.yaml").read_text(encoding="utf-8")
    old = '      - {name: "et-0/0/[0-3]", speed: 400G}    # hosts'
    assert text.split("\n")[49] == old
    path = tmp_path / "mixed.yaml"
    path.write_text(text.replace(old, old.replace("[0-3]", "[0-3].0"), 1), encoding="utf-8")
    proc = subprocess.run([sys.executable, "-m", "roce_tune.cli", "lint", str(path)], capture_output=True,
                          text=True, check=False, cwd=tmp_path)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    lines = [ln for ln in (proc.stdout + proc.stderr).splitlines() if "RT139" in ln]
    assert len(lines) == 1, proc.stdout + proc.stderr
    at = f"{path}:50:16 leaf3:et-0/0/0.0 switches[2].ports[0].name: error RT139"
    assert lines[0].startswith(at), lines[0]
    assert "name the physical port: 'et-0/0/[0-3]'" in lines[0]
    assert lint(load_inventory(REPO / "inventories" / "mixed-vendor.yaml"), select={"RT139"}) == []
