"""With a plan, ``audit --from`` says which of the plan's devices it never saw (no file, an empty file) and
which captured device the plan does not know (a file name that is not a device name): a fabric half
captured is not "0 errors"."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.audit.test_cli import CLEAN, REPO, audit_here

LAB = str(REPO / "inventories" / "lab-2node.yaml")


def test_plan_devices_without_a_capture_are_not_checked(tmp_path: Path) -> None:
    (tmp_path / "node1.txt").write_text(CLEAN.replace("gpu01", "node1"))
    (tmp_path / "node2.qos.txt").write_text("")  # the copy failed: an empty file
    (tmp_path / "lab-leaf-1.txt").write_text("admin@lab-leaf-1:~$ show pfc counters\n"
                                             "     Port Rx    PFC0    PFC3\n"
                                             "-----------  ------  ------\n"
                                             "  Ethernet0       0       5\n")
    r = audit_here(LAB, "--from", str(tmp_path), "--format", "json")
    doc = json.loads(r.stdout)
    missing = {(n["rule"], n["device"]): n["needs"] for n in doc["not_checked"] if n["rule"] == "RT492"}
    assert set(missing) == {("RT492", "lab-leaf1"), ("RT492", "node2"), ("RT492", "lab-leaf-1")}, missing
    assert "switch lab-leaf1" in missing[("RT492", "lab-leaf1")]
    assert "node2.qos.txt is empty" in missing[("RT492", "node2")]
    assert "not a device of the plan" in missing[("RT492", "lab-leaf-1")]
    text = audit_here(LAB, "--from", str(tmp_path)).stdout
    assert "RT492 lab-leaf1: needs" in text and "RT492 node2: needs" in text
    # every device captured: nothing listed
    for name in ("node2.qos.txt", "lab-leaf-1.txt"):
        (tmp_path / name).unlink()
    (tmp_path / "node2.txt").write_text(CLEAN.replace("gpu01", "node2"))
    (tmp_path / "lab-leaf1.txt").write_text("admin@lab-leaf1:~$ show pfc counters\n"
                                            "     Port Rx    PFC0    PFC3\n"
                                            "-----------  ------  ------\n"
                                            "  Ethernet0       0       5\n")
    doc = json.loads(audit_here(LAB, "--from", str(tmp_path), "--format", "json").stdout)
    assert not [n for n in doc["not_checked"] if n["rule"] == "RT492"]


def test_an_empty_capture_without_a_plan_is_named(tmp_path: Path) -> None:
    (tmp_path / "gpu01.txt").write_text(CLEAN)
    (tmp_path / "gpu02.txt").write_text("\n\n")
    doc = json.loads(audit_here("--from", str(tmp_path), "--format", "json").stdout)
    assert {"rule": "RT492", "device": "gpu02",
            "needs": "a capture of gpu02: gpu02.txt is empty"} in doc["not_checked"]


@pytest.mark.parametrize("listing", [sorted, lambda xs: sorted(xs, reverse=True)])
def test_before_and_after_directories_form_a_delta(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                    listing) -> None:  # type: ignore[no-untyped-def]
    """``before/gpu01.txt`` and ``after/gpu01.txt`` (or ``t0-before``/``t1_after``) are read in that order:
    the delta is after − before, whatever order the file system lists them in."""
    from roce_tune.audit import audit_dir

    for sub, pause in (("run1_after", 5000), ("run1-before", 1000)):
        (tmp_path / sub).mkdir()
        (tmp_path / sub / "gpu01.txt").write_text(
            f"root@gpu01:~# ethtool -S ens1f0np0\n     tx_prio3_pause: {pause}\n")
    rglob = Path.rglob
    monkeypatch.setattr(Path, "rglob", lambda self, pattern: iter(listing(rglob(self, pattern))))
    nic = audit_dir(tmp_path).data.hosts["gpu01"].nics["ens1f0np0"]
    assert nic.delta("tx_prio3_pause") == (4000, True)
    assert nic.ethtool["tx_prio3_pause"].ev.file == "run1_after/gpu01.txt"



@pytest.mark.parametrize("device, first, second", [("gpu01", "pre", "post"), ("gpu01", "start", "end"),
                                                   ("gpu01", "baseline", "after"),
                                                   ("pre-prod-gpu01", "before", "after")])
def test_pre_and_post_captures_form_a_delta(tmp_path: Path, device: str, first: str, second: str) -> None:
    """``gpu01.pre.txt``/``gpu01.post.txt`` (``start``/``end``, ``baseline``/``after``) are a before and an
    after: "post" sorts before "pre", so the post counters were read as the earlier snapshot and the pre
    total (400) reported as the pauses "during the capture", with the pre file as evidence (right: 500)."""
    from roce_tune.audit import audit_dir

    for word, pause in ((first, 400), (second, 900)):
        (tmp_path / f"{device}.{word}.txt").write_text(
            f"root@{device}:~# ethtool -S ens1f0np0\n     tx_prio3_pause: {pause}\n")
    nic = audit_dir(tmp_path).data.hosts[device].nics["ens1f0np0"]
    assert nic.delta("tx_prio3_pause") == (500, True)
    assert nic.ethtool["tx_prio3_pause"].ev.file == f"{device}.{second}.txt"

def test_archive_and_editor_litter_is_not_a_device(tmp_path: Path) -> None:
    """An archive unpacked on a Mac holds ``__MACOSX/._gpu01.txt`` (AppleDouble, binary) and editors leave
    ``.gpu01.txt.swp``-like dot files: none is a capture (the AppleDouble file became a host named '')."""
    from roce_tune.audit import audit_dir

    (tmp_path / "gpu01.txt").write_text(CLEAN)
    (tmp_path / "__MACOSX").mkdir()
    (tmp_path / "__MACOSX" / "._gpu01.txt").write_bytes(b"\x00\x05\x16\x07\x00\x02\x00\x00Mac OS X        ")
    (tmp_path / "._gpu01.txt").write_bytes(b"\x00\x05\x16\x07\x00\x02\x00\x00Mac OS X        ")
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "description.txt").write_text("Unnamed repository\n")
    r = audit_dir(tmp_path)
    assert set(r.data.hosts) == {"gpu01"} and r.data.files == 1 and not r.data.unparsed


def test_a_plan_switch_with_only_unknown_output_is_not_read_as_a_host(tmp_path: Path) -> None:
    """With a plan, lab-leaf1 is a switch even when none of its blocks is a known switch format: its lines
    are not read as a host's ``ethtool -S`` counters (and no host check judges them)."""
    from roce_tune.audit import audit_dir

    (tmp_path / "lab-leaf1.txt").write_text("admin@lab-leaf1:~$ show interfaces counters detailed Ethernet0\n"
                                            "     rx_pause: 12\n     tx_prio3_pause: 4000\n")
    r = audit_dir(tmp_path, REPO / "inventories" / "lab-2node.yaml")
    assert "lab-leaf1" in r.data.switches and "lab-leaf1" not in r.data.hosts
    assert not [f for f in r.findings if f.device == "lab-leaf1"]
    assert [(u.file, u.line) for u in r.data.unparsed] == [("lab-leaf1.txt", 2)]
