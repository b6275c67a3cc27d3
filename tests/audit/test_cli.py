"""`roce-tune audit`: exit codes 0/1/2, formats, and a comparison with a plan.

The exit codes and the stdout/stderr split are checked on a real process (:func:`audit`); the checks of
what a report says run the same command in this process (:func:`audit_here`, typer's CliRunner), which
spares a Python start and a fresh import of roce_tune (~0.5 s of CPU) per run."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from typer.testing import CliRunner

from roce_tune.cli import app
from tests.audit.conftest import field_cases_dir

REPO = Path(__file__).resolve().parents[2]
CLEAN = "root@gpu01:~# mlnx_qos -i ens1f0np0\nPFC configuration:\n" \
        "        priority    0   1   2   3   4   5   6   7\n" \
        "        enabled     0   0   0   1   0   0   0   0\n"
BAD = CLEAN.replace("0   0   0   1   0", "1   0   0   0   0")
RUNNER = CliRunner()


def audit(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO), "COLUMNS": "200"}
    return subprocess.run([sys.executable, "-m", "roce_tune.cli", "audit", *args], check=False,
                          capture_output=True, text=True, env=env, timeout=120)


def audit_here(*args: str) -> subprocess.CompletedProcess[str]:
    """``roce-tune audit ARGS`` run in this process by typer's CliRunner: the command's exit code, stdout
    and stderr (kept apart) in the shape :func:`audit` returns. An exception the command did not turn into
    an exit code is raised here, not passed off as exit code 1."""
    r = RUNNER.invoke(app, ["audit", *args], env={"COLUMNS": "200"})
    if r.exception is not None and not isinstance(r.exception, SystemExit):
        raise r.exception
    return subprocess.CompletedProcess(["roce-tune", "audit", *args], r.exit_code, r.stdout, r.stderr)


def test_exit_codes(tmp_path: Path) -> None:
    clean, bad = tmp_path / "clean", tmp_path / "bad"
    clean.mkdir()
    bad.mkdir()
    (clean / "gpu01.txt").write_text(CLEAN)
    (bad / "gpu01.qos.txt").write_text(BAD)
    ok = audit("--from", str(clean))
    assert ok.returncode == 0, ok.stderr
    assert "0 error(s)" in ok.stdout
    fail = audit("--from", str(bad))
    assert fail.returncode == 1 and "RT420" in fail.stdout and "gpu01.qos.txt:4" in fail.stdout
    for args in (["--from", str(tmp_path / "missing")], ["--from", str(clean), "--format", "yaml"], [],
                 ["--from", str(tmp_path / "empty-dir-file.txt")]):
        r = audit(*args)
        assert r.returncode == 2, (args, r.stdout, r.stderr)
        assert "error:" in r.stderr


def test_unreadable_capture_is_a_usage_error(tmp_path: Path) -> None:
    (tmp_path / "gpu01.txt").write_text(CLEAN)
    (tmp_path / "gpu02.txt").mkdir()  # a directory named like a capture is skipped, a broken file is not
    target = tmp_path / "gpu03.txt"
    target.symlink_to(tmp_path / "nowhere.txt")
    r = audit("--from", str(tmp_path))
    assert r.returncode in (0, 2)
    if os.geteuid() != 0:
        f = tmp_path / "gpu04.txt"
        f.write_text(CLEAN)
        f.chmod(0)
        r = audit("--from", str(tmp_path))
        assert r.returncode == 2 and "gpu04.txt" in r.stderr


def test_formats(tmp_path: Path) -> None:
    (tmp_path / "gpu01.txt").write_text(BAD + "root@gpu01:~# show_gids\nbash: show_gids: command not found\n")
    doc = json.loads(audit_here("--from", str(tmp_path), "--format", "json").stdout)
    f = doc["findings"][0]
    assert {k: f[k] for k in ("rule", "severity", "device", "port")} == {
        "rule": "RT420", "severity": "error", "device": "gpu01", "port": "ens1f0np0"}
    assert f["evidence"] == ["gpu01.txt:4"] and f["fix"] and f["message"]
    assert doc["not_understood"] == [{"file": "gpu01.txt", "line": 6, "end_line": 6, "command": "show_gids",
                                      "first_line": "bash: show_gids: command not found"}]
    assert any(n["rule"] == "RT401" or n["rule"] == "RT440" for n in doc["not_checked"])
    gh = audit_here("--from", str(tmp_path), "--format", "github").stdout
    # GitHub resolves file= from the workspace: the capture's path as --from gives it, not its bare name
    assert gh.splitlines()[0].startswith(f"::error file={tmp_path / 'gpu01.txt'},line=4,title=RT420 "
                                         "gpu01%3Aens1f0np0::")
    assert f"::warning file={tmp_path / 'gpu01.txt'},line=6,title=not understood::" in gh
    md = audit_here("--from", str(tmp_path), "--format", "markdown").stdout
    assert "| RT420 | error | gpu01 | ens1f0np0 |" in md and "## Not understood" in md


def test_with_inventory_line_rate_and_nccl_env(tmp_path: Path) -> None:
    src = field_cases_dir() / "nccl" / "allreduce-roce-h100-2node-400g.txt"
    if not src.is_file():
        import pytest

        pytest.skip(f"field case {src} not present")
    (tmp_path / "node1.nccl.txt").write_text(src.read_text())
    r = audit_here(str(REPO / "inventories" / "lab-2node.yaml"), "--from", str(tmp_path), "--format", "json")
    doc = json.loads(r.stdout)
    rules = {f["rule"] for f in doc["findings"]}
    # 15 GB/s busbw on a 400 Gb/s NIC: far below line rate (the inventory gives the rate)
    assert "RT472" in rules and r.returncode == 0
    low = next(f for f in doc["findings"] if f["rule"] == "RT472")
    assert "30%" in low["message"] and low["evidence"] == ["node1.nccl.txt:69"]
    assert doc["expectations"] == "plan"


def test_every_rule_is_documented() -> None:
    import re

    code = (REPO / "roce_tune" / "audit" / "checks.py").read_text() + (REPO / "roce_tune" / "audit" /
                                                                     "expect.py").read_text()
    doc = (REPO / "docs" / "audit.md").read_text()
    rules = set(re.findall(r'"(RT4\d\d)"', code))
    documented = set(re.findall(r"^\| (RT4\d\d) \|", doc, re.MULTILINE))
    assert len(rules) >= 25 and rules <= documented


def test_policy_file(tmp_path: Path) -> None:
    caps = tmp_path / "caps"
    caps.mkdir()
    # PFC on priority 4 only: wrong for the defaults (3), right for a policy that makes 4 lossless
    (caps / "gpu01.txt").write_text(CLEAN.replace("0   0   0   1   0   0   0   0",
                                                  "0   0   0   0   1   0   0   0"))
    assert audit_here("--from", str(caps)).returncode == 1
    pol = tmp_path / "policy.yaml"
    pol.write_text("policy:\n  lossless_priorities: [4]\n  roce_dscp: [34]\n")
    r = audit_here("--from", str(caps), "--policy", str(pol))
    assert r.returncode == 0, r.stdout
    assert "policy " + str(pol) in r.stdout
    # an invalid policy file is a usage error (exit 2, as docs/audit.md says), not a fabric error (1), and
    # names the file, line and column of the bad value
    pol.write_text("policy:\n  roce_dscp: [26]\n  lossless_priorities: [3, 9]\n")
    bad = audit_here("--from", str(caps), "--policy", str(pol))
    assert bad.returncode == 2 and f"{pol}:3:" in bad.stderr and "RT400" in bad.stderr, bad.stderr
    assert "lossless_priorities" in bad.stderr and not bad.stdout
    pol.write_text("policy:\n  lossless_priorities: [3]\n  pfc_watchdog_ms: 200\n")
    bad = audit_here("--from", str(caps), "--policy", str(pol))
    assert bad.returncode == 2 and f"{pol}:3:3 policy.pfc_watchdog_ms: error RT400" in bad.stderr, bad.stderr
    pol.write_text("policy:\n  lossless_priorities: [3\n")
    bad = audit_here("--from", str(caps), "--policy", str(pol))
    assert bad.returncode == 2 and f"{pol}:" in bad.stderr and "RT400" in bad.stderr, bad.stderr
    pol.write_bytes(b"policy:\n  roce_dscp: [26] # \xe9\n")  # Latin-1 from an old editor
    bad = audit_here("--from", str(caps), "--policy", str(pol))
    assert bad.returncode == 2 and str(pol) in bad.stderr and "RT400" in bad.stderr
    assert "None" not in bad.stderr
    inv = tmp_path / "inv.yaml"
    inv.write_text("site: {name: x}\nswitches: [\n")
    bad = audit_here(str(inv), "--from", str(caps))
    assert bad.returncode == 2 and f"{inv}:3:1: error RT001" in bad.stderr, bad.stderr


def test_github_annotations_follow_the_workflow_command_syntax(tmp_path: Path) -> None:
    """``::level key=value,…::message`` (a space before the properties), property values escaped as the
    Actions toolkit's ``escapeProperty`` does (``:`` → %3A, ``,`` → %2C): a finding without evidence (RT490)
    was ``::warning,title=…``, which the runner does not take for a warning at all."""
    from roce_tune.audit.checks import AuditFinding
    from roce_tune.audit.expect import expect_from_policy
    from roce_tune.audit.model import AuditData, Ev
    from roce_tune.audit.run import AuditResult, format_report
    from roce_tune.findings import Severity
    from roce_tune.inventory.models import Policy

    findings = [AuditFinding("RT490", Severity.warning, "leaf1", None, "leaf1 was not checked: refused",
                             "reach it", (), "live"),
                AuditFinding("RT420", Severity.error, "gpu01", "ens1f0np0", "no PFC on 3", "mlnx_qos --pfc",
                             (Ev("rack 1,row 2/gpu01.txt", 4),), "PFC")]
    r = AuditResult(findings, [], AuditData(hosts={}, switches={}), expect_from_policy(Policy(), "defaults"))
    lines = format_report(r, "github").splitlines()
    assert lines[0].startswith("::warning title=RT490 leaf1::leaf1 was not checked"), lines[0]
    want = "::error file=rack 1%2Crow 2/gpu01.txt,line=4,title=RT420 gpu01%3Aens1f0np0::"
    assert lines[1].startswith(want), lines[1]


def test_an_inventory_and_a_policy_file_together_is_a_usage_error(tmp_path: Path) -> None:
    """The plan's policy decides when an inventory is given: a --policy beside it was silently ignored."""
    (tmp_path / "gpu01.txt").write_text(CLEAN)
    pol = tmp_path.parent / f"{tmp_path.name}-policy.yaml"
    pol.write_text("policy:\n  lossless_priorities: [4]\n")
    r = audit(str(REPO / "inventories" / "lab-2node.yaml"), "--from", str(tmp_path), "--policy", str(pol))
    assert r.returncode == 2 and "--policy" in r.stderr and not r.stdout, (r.stdout, r.stderr)


def test_policy_file_errors_name_line_and_column_and_all_are_reported(tmp_path: Path) -> None:
    """A --policy file is input like an inventory: every bad key at file:line:col, in one run."""
    caps = tmp_path / "caps"
    caps.mkdir()
    (caps / "gpu01.txt").write_text(CLEAN)
    pol = tmp_path / "policy.yaml"
    pol.write_text("# site policy\npolicy:\n  host_mtu: \"9000\"\n  lossless_priorities: [3]\n  dcqcn: off\n")
    bad = audit_here("--from", str(caps), "--policy", str(pol))
    assert bad.returncode == 2, bad.stdout + bad.stderr
    lines = [ln for ln in bad.stderr.splitlines() if "RT400" in ln]
    assert len(lines) == 2, bad.stderr
    assert lines[0].startswith(f"{pol}:3:13 ") and "policy.host_mtu" in lines[0]
    assert lines[1].startswith(f"{pol}:5:10 ") and "policy.dcqcn" in lines[1]


def test_an_audit_that_understood_no_block_is_not_clean(tmp_path: Path) -> None:
    """Every block "not understood" (a tool nobody reads, a typo'd command): nothing was checked, so the
    audit exits 2 saying so and lists each block (it exited 0 with "0 error(s)", a clean-looking audit of
    nothing); one understood block among them is an ordinary audit again."""
    caps = tmp_path / "caps"
    caps.mkdir()
    (caps / "gpu01.txt").write_text("root@gpu01:~# nvidia-smi topo -m\n\tGPU0\tGPU1\tNIC0\n"
                                    "GPU0\t X \tNV18\tPXB\n"
                                    "root@gpu01:~# mlnx_qso -i ens1f0np0\nmlnx_qso: command not found\n")
    r = audit_here("--from", str(caps))
    assert r.returncode == 2, (r.stdout, r.stderr)
    assert "nothing was understood" in r.stdout and "2 block(s) not understood" in r.stdout
    assert "gpu01.txt:2-3" in r.stdout and "gpu01.txt:5" in r.stdout, r.stdout
    j = audit_here("--from", str(caps), "--format", "json")
    doc = json.loads(j.stdout)
    assert j.returncode == 2 and doc["summary"]["blocks_understood"] == 0 and doc["summary"]["nothing_read"]
    assert len(doc["not_understood"]) == 2
    (caps / "gpu01.qos.txt").write_text(CLEAN)
    ok = audit_here("--from", str(caps))
    assert ok.returncode == 0 and "nothing was understood" not in ok.stdout, ok.stdout


def test_secrets_in_lines_not_understood_are_masked(tmp_path: Path) -> None:
    """A whole ``env`` pasted instead of ``env | grep NCCL`` (or a config line audit does not read) holds
    secrets; the report listed the first line of each run not understood as it was, so a token or password
    reached the terminal, the JSON and GitHub annotations. The lines are still listed, their values masked."""
    from roce_tune.audit import audit_dir
    from roce_tune.audit.run import format_report

    secrets = ("wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "hf_abcdefghijklmnopqrstuvwxyz012345", "hunter2",
               "s3cr3tC0mm")
    (tmp_path / "gpu01.txt").write_text(
        "root@gpu01:~# env\nHOME=/root\nNCCL_IB_HCA=mlx5_0\n"
        f"AWS_SECRET_ACCESS_KEY={secrets[0]}\nNCCL_IB_TC=106\nHF_TOKEN={secrets[1]}\n"
        f"NCCL_IB_GID_INDEX=3\nexport DB_PASSWORD='{secrets[2]}'\n"
        f"root@gpu01:~# curl -s https://admin:{secrets[2]}@netbox.example/api/\n{{}}\n")
    (tmp_path / "leaf1.txt").write_text(f"leaf1# show snmp\nsnmp-server community {secrets[3]} ro\n")
    r = audit_dir(tmp_path)
    listed = [u.first for u in r.data.unparsed]
    assert any(x.startswith("AWS_SECRET_ACCESS_KEY=") for x in listed)
    assert any(x.startswith("snmp-server community") for x in listed)
    for fmt in ("text", "json", "github", "markdown"):
        report = format_report(r, fmt)
        assert not [s for s in secrets if s in report], fmt
