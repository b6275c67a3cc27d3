"""The local side fails while apply writes its records (session log, restore point): a full disk, a log
directory that cannot be made. A record that cannot be written never leaves a switch half-pushed or the run
hanging: before the first change the device fails with the path and the OS error; mid-push the push (or its
rollback) goes on to its end and the result says the session log is incomplete."""

from __future__ import annotations

import errno
import io
import os
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import TextIO

import pytest

import roce_tune.deploy.credentials as credentials
from roce_tune.deploy.apply import load_source
from roce_tune.deploy.runner import apply_targets

from .conftest import REPO, emulated_inventory
from .test_apply import _opts

pytestmark = pytest.mark.emulator


class _FullDisk(io.TextIOBase):
    """A file on a disk that fills up after ``room[0]`` characters (shared by every file opened on it, and
    staying full): each write past it fails with ENOSPC."""

    def __init__(self, path: Path, room: list[int]):
        self._fh = open(path, "a", encoding="utf-8")  # noqa: SIM115 — closed in close()
        self.room = room

    def write(self, s: str) -> int:
        if len(s) > self.room[0]:
            self.room[0] = 0
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        self.room[0] -= len(s)
        return self._fh.write(s)

    def flush(self) -> None:
        self._fh.flush()

    def close(self) -> None:
        super().close()
        self._fh.close()


@pytest.mark.slow
def test_disk_full_mid_push_finishes_the_push_and_says_the_log_is_incomplete(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """NX-OS (``configure terminal``: each line applies at once): the session log's disk fills up after the
    push began. Before: netmiko's log write raised mid-push, the worker thread died, the switch was left
    half-pushed and the run waited for the device timeout, then blamed a commit-confirm timer."""
    real_open, room = credentials.open_private, [6000]

    def open_private(path: Path, append: bool = True) -> TextIO:
        if path.suffix == ".log":
            return _FullDisk(path, room)  # type: ignore[return-value]
        return real_open(path, append)

    monkeypatch.setattr(credentials, "open_private", open_private)
    fleet, inv, known = emulated_inventory("mixed-vendor.yaml", tmp_path)
    try:
        targets, _ = load_source(inv)
        t0 = time.monotonic()
        [res] = apply_targets(targets, _opts(tmp_path, known, allow_disruptive=True, limit=["spine1"],
                                             device_timeout_s=60))
        assert time.monotonic() - t0 < 50, "the run waited for the device timeout"
        assert res.state == "pushed", (res.state, res.error)
        assert any("session log" in w and "incomplete" in w and "No space left on device" in w
                   for w in res.warnings), res.warnings
        monkeypatch.setattr(credentials, "open_private", real_open)
        [again] = apply_targets(targets, _opts(tmp_path, known, dry_run=True, limit=["spine1"]))
        assert again.state == "no-change", again.diff  # the whole change is on the switch, not part of it
    finally:
        fleet.stop()


def test_a_log_directory_that_cannot_be_made_fails_the_device_at_once(tmp_path: Path) -> None:
    """``log_dir`` is a file: each device fails before it is contacted, naming the directory and the OS
    error (before: the worker thread died and the run waited out the device timeout)."""
    fleet, inv, known = emulated_inventory("mixed-vendor.yaml", tmp_path)
    try:
        targets, _ = load_source(inv)
        before = fleet["leaf1"].running_config()
        (tmp_path / "afile").write_text("")
        t0 = time.monotonic()
        opts = replace(_opts(tmp_path, known, limit=["leaf1"], device_timeout_s=20),
                       log_dir=tmp_path / "afile")
        [res] = apply_targets(targets, opts)
        assert time.monotonic() - t0 < 10
        assert res.state == "failed" and not res.rolled_back, res
        assert res.error is not None and str(tmp_path / "afile") in res.error, res.error
        assert "nothing changed" in res.error and "timed out" not in res.error, res.error
        assert fleet["leaf1"].running_config() == before
    finally:
        fleet.stop()


def test_cli_log_dir_that_cannot_be_made_exits_2_before_any_device(tmp_path: Path) -> None:
    (tmp_path / "afile").write_text("")
    res = subprocess.run([sys.executable, "-m", "roce_tune.cli", "apply",
                          str(REPO / "inventories" / "lab-2node.yaml"), "--dry-run",
                          "--log-dir", str(tmp_path / "afile" / "logs")],
                         capture_output=True, text=True, cwd=REPO, timeout=120,
                         env={**os.environ, "COLUMNS": "200"})
    assert res.returncode == 2, res.stdout + res.stderr
    assert "--log-dir" in res.stderr and str(tmp_path / "afile" / "logs") in res.stderr, res.stderr
    assert "Not a directory" in res.stderr, res.stderr
    assert "DRY RUN" not in res.stdout
