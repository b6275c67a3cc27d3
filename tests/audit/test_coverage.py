"""With a plan, ``audit --from`` says which of the plan's devices it never saw (no file, an empty file) and
which captured device the plan does not know (a file name that is not a device name): a fabric half
captured is not "0 errors"."""

from __future__ import annotations

import json
from pathlib import Path

from tests.audit.test_cli import CLEAN, REPO, audit

LAB = str(REPO / "inventories" / "lab-2node.yaml")


def test_plan_devices_without_a_capture_are_not_checked(tmp_path: Path) -> None:
    (tmp_path / "node1.txt").write_text(CLEAN.replace("gpu01", "node1"))
    (tmp_path / "node2.qos.txt").write_text("")  # the copy failed: an empty file
    (tmp_path / "lab-leaf-1.txt").write_text("admin@lab-leaf-1:~$ show pfc counters\n"
                                             "     Port Rx    PFC0    PFC3\n"
                                             "-----------  ------  ------\n"
                                             "  Ethernet0       0       5\n")
    r = audit(LAB, "--from", str(tmp_path), "--format", "json")
    doc = json.loads(r.stdout)
    missing = {(n["rule"], n["device"]): n["needs"] for n in doc["not_checked"] if n["rule"] == "RT492"}
    assert set(missing) == {("RT492", "lab-leaf1"), ("RT492", "node2"), ("RT492", "lab-leaf-1")}, missing
    assert "switch lab-leaf1" in missing[("RT492", "lab-leaf1")]
    assert "node2.qos.txt is empty" in missing[("RT492", "node2")]
    assert "not a device of the plan" in missing[("RT492", "lab-leaf-1")]
    text = audit(LAB, "--from", str(tmp_path)).stdout
    assert "RT492 lab-leaf1: needs" in text and "RT492 node2: needs" in text
    # every device captured: nothing listed
    for name in ("node2.qos.txt", "lab-leaf-1.txt"):
        (tmp_path / name).unlink()
    (tmp_path / "node2.txt").write_text(CLEAN.replace("gpu01", "node2"))
    (tmp_path / "lab-leaf1.txt").write_text("admin@lab-leaf1:~$ show pfc counters\n"
                                            "     Port Rx    PFC0    PFC3\n"
                                            "-----------  ------  ------\n"
                                            "  Ethernet0       0       5\n")
    doc = json.loads(audit(LAB, "--from", str(tmp_path), "--format", "json").stdout)
    assert not [n for n in doc["not_checked"] if n["rule"] == "RT492"]


def test_an_empty_capture_without_a_plan_is_named(tmp_path: Path) -> None:
    (tmp_path / "gpu01.txt").write_text(CLEAN)
    (tmp_path / "gpu02.txt").write_text("\n\n")
    doc = json.loads(audit("--from", str(tmp_path), "--format", "json").stdout)
    assert {"rule": "RT492", "device": "gpu02",
            "needs": "a capture of gpu02: gpu02.txt is empty"} in doc["not_checked"]
