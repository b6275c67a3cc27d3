"""EOS tx-queue order: a strict (CNP) queue numbered below a round-robin (lossless) queue is refused.

Oracle: EOS serves tx-queues strict from the highest number down, and ``no priority`` on queue N makes N and
every lower-numbered queue round-robin whatever they are configured as; ``show qos interfaces`` prints such a
queue ``RR / SP`` (operational / configured): queue 2 ``no priority`` with queues 1 and 0 left strict shows
all three ``RR`` ("Understanding the output of show qos interface eth#",
https://aristaeos.blogspot.com/2020/09/understanding-output-of-show-qos.html, read from the EOS QoS chapter's
transmit-queue section). A CNP queue below a lossless DWRR queue would therefore run round-robin, not strict.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from roce_tune.checks import check_inventory
from roce_tune.findings import Severity
from roce_tune.inventory.loader import load_inventory
from roce_tune.platforms import eos

REPO = Path(__file__).resolve().parents[2]
MIXED = REPO / "inventories" / "mixed-vendor.yaml"
#: mixed-vendor.yaml's policy block (two EOS leaves, leaf1 and leaf2)
POLICY = "lossless_priorities: [3]\n  roce_dscp: [26]\n  cnp_dscp: 48\n  cnp_priority: 6\n"


def _inventory(tmp_path: Path, lossless: str, dscp: str, cnp: int) -> Path:
    text = MIXED.read_text(encoding="utf-8")
    assert POLICY in text, "mixed-vendor.yaml's policy changed: update POLICY"
    path = tmp_path / "inv.yaml"
    path.write_text(text.replace(POLICY, f"lossless_priorities: {lossless}\n  roce_dscp: {dscp}\n  "
                                         f"cnp_dscp: 48\n  cnp_priority: {cnp}\n"), encoding="utf-8")
    return path


def test_cnp_below_a_lossless_queue_is_refused_at_lint_for_every_eos_switch(tmp_path: Path) -> None:
    path = _inventory(tmp_path, "[2, 5]", "[26, 24]", 1)
    found = [f for f in check_inventory(load_inventory(path)) if f.rule == "RT240"]
    assert [f.location.device for f in found] == ["leaf1", "leaf2"]  # only EOS refuses; other platforms plan
    first = found[0]
    assert first.severity is Severity.error
    assert (first.location.file, first.location.line) == (str(path), 28)  # leaf1's entry
    assert "cannot render leaf1 for eos" in first.message
    assert "CNP tx-queue 1 (priority strict) is numbered below round-robin tx-queue(s) 2, 5" in first.message
    assert first.fix == ("set policy.cnp_priority above every lossless priority (6 is usual) or move "
                         "the lossless priorities below the CNP priority 1")


def test_plan_refuses_and_writes_nothing(tmp_path: Path) -> None:
    path = _inventory(tmp_path, "[3]", "[26]", 2)
    out = tmp_path / "out"
    run = subprocess.run([sys.executable, "-m", "roce_tune.cli", "plan", str(path), "--out", str(out),
                          "--no-scorecard"], capture_output=True, text=True, cwd=REPO, timeout=300)
    assert run.returncode != 0
    said = run.stdout + run.stderr
    assert "RT240" in said
    assert "CNP tx-queue 2 (priority strict) is numbered below round-robin tx-queue(s) 3" in said
    assert not list(out.rglob("leaf1.cfg"))


def test_lossless_at_6_leaves_only_moving_them_down(tmp_path: Path) -> None:
    path = _inventory(tmp_path, "[6]", "[26]", 5)
    found = [f for f in check_inventory(load_inventory(path)) if f.rule == "RT240"]
    assert found and found[0].fix == "move the lossless priorities below the CNP priority 5"


@pytest.mark.parametrize(("lossless", "dscp", "cnp"), [("[2, 5]", "[26, 24]", 6), ("[3]", "[26]", 6)])
def test_cnp_above_every_lossless_queue_renders_strict_on_top(tmp_path: Path, lossless: str, dscp: str,
                                                              cnp: int) -> None:
    path = _inventory(tmp_path, lossless, dscp, cnp)
    assert not [f for f in check_inventory(load_inventory(path)) if f.rule == "RT240"]


def test_check_queue_order_alone() -> None:
    rows = [{"queue": 0, "strict": False}, {"queue": 3, "strict": False}, {"queue": 6, "strict": True}]
    eos.check_queue_order(rows)  # strict on top: fine
    rows[2]["queue"] = 2
    with pytest.raises(ValueError, match=r"CNP tx-queue 2 .* round-robin tx-queue\(s\) 3 "):
        eos.check_queue_order(rows)
