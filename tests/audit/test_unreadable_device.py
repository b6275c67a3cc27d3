"""A device whose capture no reader understood is not a host.

Every capture block nobody could read fell through to the host line readers, which made its device a host:
a switch whose ``show`` output was in a format roce-tune does not know was summarised as "1 host(s),
0 switch(es)" and listed in the JSON report's ``devices.hosts``. Now such a device counts as what the plan
says it is (a plan's switch or host), and as "unreadable" where nothing states its kind."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from roce_tune.audit import audit_dir, format_report

REPO = Path(__file__).resolve().parents[2]
EOS_RUNNING = REPO / "tests" / "audit" / "fixtures" / "running" / "leaf1-eos-7060.txt"
LAB = REPO / "inventories" / "lab-2node.yaml"
GARBLED = "leaf1# show hardware counter drop\nfoo bar baz\nqux 1 2 3\n"


def test_an_unreadable_capture_is_no_host_without_a_plan(tmp_path: Path) -> None:
    (tmp_path / "leaf1.txt").write_text(GARBLED)
    (tmp_path / "leaf2.txt").write_text(EOS_RUNNING.read_text())
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    text = subprocess.run([sys.executable, "-m", "roce_tune.cli", "audit", "--from", str(tmp_path)],
                          capture_output=True, text=True, cwd=REPO, env=env, timeout=300).stdout
    assert "2 file(s), 0 host(s), 1 switch(es), 1 unreadable (leaf1) against policy defaults" in text, text
    assert "leaf1.txt:2-3: `show hardware counter drop`: foo bar baz" in text  # still listed, not dropped
    doc = json.loads(subprocess.run([sys.executable, "-m", "roce_tune.cli", "audit", "--from", str(tmp_path),
                                     "--format", "json"], capture_output=True, text=True, cwd=REPO, env=env,
                                    timeout=300).stdout)
    assert doc["devices"] == {"hosts": [], "switches": ["leaf2"], "unreadable": ["leaf1"]}


def test_the_plan_names_the_kind_of_an_unreadable_device(tmp_path: Path) -> None:
    (tmp_path / "lab-leaf1.txt").write_text(GARBLED)
    (tmp_path / "node1.txt").write_text("node1$ some-tool --dump\nfoo bar baz\n")
    (tmp_path / "node2.txt").write_text(GARBLED.replace("leaf1#", "node2$"))
    r = audit_dir(tmp_path, LAB)
    assert (sorted(r.data.hosts), sorted(r.data.switches), r.data.unreadable) == (
        ["node1", "node2"], ["lab-leaf1"], [])
    assert "3 file(s), 2 host(s), 1 switch(es) against" in format_report(r, "text")
    assert json.loads(format_report(r, "json"))["devices"]["unreadable"] == []
