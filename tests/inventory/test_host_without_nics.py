"""RT140: a host without NICs is a lint warning at its ``nics`` (or at the host when the key is missing).

A host with ``nics: []`` linted clean and got a host script that configures nothing; a spreadsheet row or
import that lost the NIC columns went unnoticed."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
LAB = REPO / "inventories" / "lab-2node.yaml"
NODE2_NIC = ('      - {model: connectx-7, netdev: ens1f0np0, rdma_device: mlx5_0, speed: 400G, '
             'switch_port: "lab-leaf1:Ethernet8", cable_length: 2m}\n')


def _lint(inv: Path) -> tuple[int, list[dict[str, object]]]:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    proc = subprocess.run([sys.executable, "-m", "roce_tune.cli", "lint", str(inv), "--format", "json"],
                          capture_output=True, text=True, cwd=REPO, env=env, timeout=300)
    data = json.loads(proc.stdout)
    findings = data["findings"] if isinstance(data, dict) else data
    return proc.returncode, [f for f in findings if f["rule"] == "RT140"]


@pytest.mark.parametrize(("nics", "where"), [
    ("    nics: []\n", ("hosts[1].nics", 11)),  # at the empty list's value
    ("", ("hosts[1]", None)),  # no key: at the host's entry
])
def test_host_without_nics_is_a_warning_at_the_host(tmp_path: Path, nics: str,
                                                    where: tuple[str, int | None]) -> None:
    text = LAB.read_text()
    assert text.count("    nics:\n" + NODE2_NIC) == 1
    text = text.replace("    nics:\n" + NODE2_NIC, nics)
    inv = tmp_path / "lab.yaml"
    inv.write_text(text)
    rc, (found,) = _lint(inv)
    assert rc == 0  # a warning: lint passes without --strict
    loc = found["location"]
    assert isinstance(loc, dict)
    line = text.splitlines().index(nics.rstrip("\n") if nics else "  - name: node2") + 1
    assert (found["severity"], loc["file"], loc["line"], loc["device"], loc["path"]) == (
        "warning", str(inv), line, "node2", where[0]), found
    if where[1] is not None:
        assert loc["col"] == where[1], found
    assert "host node2 has no NICs" in str(found["message"])


def test_hosts_with_nics_pass() -> None:
    assert _lint(LAB)[1] == []
