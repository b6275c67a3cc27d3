"""format_findings: text, json and GitHub workflow-command output."""

from __future__ import annotations

import json

import pytest

from roce_tune.findings import Finding, Location, Severity
from roce_tune.inventory.report import format_findings

F = [
    Finding(rule="RT104", severity=Severity.error,
            message="gpu01 ens1f0np0 is 200G but leaf1:Ethernet0 is 400G",
            fix="set the NIC speed to 400G",
            location=Location(file="inv.yaml", line=15, col=16, path="hosts[0].nics[0].speed", device="gpu01",
                              port="ens1f0np0")),
    Finding(rule="RT107", severity=Severity.warning, message="no cable_length, 50%\nof headroom",
            location=Location(file="dir,x/inv:1.yaml", line=3, col=1)),
    Finding(rule="RT116", severity=Severity.info, message="single host", location=Location(path="hosts")),
]


def test_text() -> None:
    out = format_findings(F, "text").splitlines()
    assert out[0] == ("inv.yaml:15:16 gpu01:ens1f0np0 hosts[0].nics[0].speed: error RT104: gpu01 ens1f0np0 "
                      "is 200G but leaf1:Ethernet0 is 400G (fix: set the NIC speed to 400G)")
    # a newline in a message is escaped: one finding, one line
    assert len(out) == 3 and out[1].endswith("RT107: no cable_length, 50%\\nof headroom")
    assert out[-1] == "hosts: info RT116: single host"
    assert format_findings([], "text") == "" and format_findings([], "github") == ""
    assert format_findings([], "json") == "[]"


def test_json_round_trips() -> None:
    data = json.loads(format_findings(F, "json"))
    assert [Finding.model_validate(d) for d in data] == F
    assert data[0]["location"]["line"] == 15 and data[0]["severity"] == "error"


def test_github_workflow_commands() -> None:
    out = format_findings(F, "github").splitlines()
    assert out[0] == ("::error file=inv.yaml,line=15,col=16,title=RT104::gpu01:ens1f0np0: gpu01 ens1f0np0 is "
                      "200G but leaf1:Ethernet0 is 400G (fix: set the NIC speed to 400G)")
    # properties escape ',' and ':'; data escapes '%' (GitHub Actions toolkit rules); the message's newline
    # was escaped by Finding itself
    assert out[1] == ("::warning file=dir%2Cx/inv%3A1.yaml,line=3,col=1,title=RT107::no cable_length, "
                      "50%25\\nof headroom")
    assert out[2] == "::notice title=RT116::hosts: single host"


def test_unknown_format() -> None:
    with pytest.raises(ValueError, match="text, json, github"):
        format_findings(F, "xml")
