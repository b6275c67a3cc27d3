"""Junos: a device that refuses ``commit confirmed`` in ``configure private`` (``error: commit confirmed not
supported for private configuration``, some releases/platforms: Juniper/py-junos-eznc pull request #954)
used to fail every push. The push now discards the private candidate, proves nothing was committed and runs
the same steps (load, ``commit check``, ``commit confirmed N``, read-back, confirm) in ``configure
exclusive``; a shared candidate locked by another session fails the push before any change, naming the
holder; a failure after the exclusive ``commit confirmed`` rolls back (``rollback N`` by commit comment).
Real SSH to the loopback Junos emulator (tests/emulators/junos.py, fault ``refuse_private_confirm``).
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from roce_tune.deploy.apply import load_source
from roce_tune.deploy.drivers import PushOptions
from roce_tune.deploy.runner import ApplyOptions, DeviceResult, apply_targets
from tests.emulators.core import EmulatedDevice
from tests.emulators.junos import _Db

from .conftest import emulated_inventory
from .test_apply import _opts

pytestmark = [pytest.mark.emulator, pytest.mark.slow]  # each is a full multi-step push (or two)

DEVICE = "leaf3"  # a Junos switch of mixed-vendor.yaml
REFUSED = "error: commit confirmed not supported for private configuration"


def _opts_for(tmp_path: Path, known: Path, confirm_s: int = 60) -> ApplyOptions:
    return _opts(tmp_path, known, allow_disruptive=True, limit=[DEVICE],
                 push=PushOptions(confirm_s=confirm_s, read_timeout_s=20))


def _apply(tmp_path: Path, known: Path, inv: Path) -> DeviceResult:
    targets, _ = load_source(inv)
    [res] = apply_targets(targets, _opts_for(tmp_path, known))
    return res


def _apply_held(tmp_path: Path, known: Path, inv: Path, dev: EmulatedDevice, *holds: Callable[[], None],
                confirm_s: int = 60) -> DeviceResult:
    """Push while the device holds at its pause pattern: each of ``holds`` runs once the device holds
    (it resumes the device, or re-arms the pause for the next one); returns the device's result."""
    with ThreadPoolExecutor(1) as pool:
        targets, _ = load_source(inv)
        done = pool.submit(apply_targets, targets, _opts_for(tmp_path, known, confirm_s))
        for during in holds:
            dev.wait_held(done, "commit confirmed", timeout_s=120)
            during()
        [res] = done.result(timeout=240)
    return res


def test_private_confirm_refused_pushes_from_exclusive_and_says_so(tmp_path: Path) -> None:
    fleet, inv, known = emulated_inventory("mixed-vendor.yaml", tmp_path,
                                           faults={DEVICE: {"refuse_private_confirm": True}})
    try:
        dev = fleet[DEVICE]
        before = list(dev.history)
        res = _apply(tmp_path, known, inv)
        assert res.state == "pushed", (res.state, res.error)
        assert any("`configure exclusive`" in w and "refused in `configure private`" in w
                   for w in res.warnings), res.warnings
        seen = dev.commands_seen
        assert "configure private" in seen and "configure exclusive" in seen, seen
        # the refused private candidate was discarded, the exclusive session committed and confirmed
        assert seen.index("rollback 0") < seen.index("configure exclusive"), seen
        assert dev.history[0].comment == "confirmed", dev.history[:3]
        assert dev.history[1].comment.startswith("roce_tune_"), dev.history[:3]  # the run tag
        assert len(dev.history) == len(before) + 2, "one commit confirmed + its confirm, nothing else"
        assert not dev.confirm_pending and dev.exclusive_owner is None
        log = Path(res.log_file or "").read_text()
        assert REFUSED in log and "configure exclusive" in log
    finally:
        fleet.stop()


def test_exclusive_locked_by_another_session_fails_before_any_change(tmp_path: Path) -> None:
    fleet, inv, known = emulated_inventory("mixed-vendor.yaml", tmp_path,
                                           faults={DEVICE: {"refuse_private_confirm": True}})
    try:
        dev = fleet[DEVICE]
        before, history = dev.running_config(), len(dev.history)
        bob = dev.new_session("bob", True)
        dev.set_fault(pause_pattern=r"^commit confirmed")  # bob locks between the refusal and the retry

        def during() -> None:
            with dev.lock:
                assert "Entering configuration mode" in bob.configure(["exclusive"])
            dev.resume()

        res = _apply_held(tmp_path, known, inv, dev, during)
        error = res.error or ""
        assert res.state == "failed" and not res.rolled_back, (res.state, error)
        assert "refused `configure exclusive`" in error and "locked by" in error, error
        assert "bob terminal" in error and f"pid {bob.pid}" in error, error
        assert DEVICE in error, error
        assert dev.running_config() == before and len(dev.history) == history, "nothing may change"
        assert dev.exclusive_owner is bob, "bob's lock is his"
        assert dev.shared is not None and dev.shared.lines == dev.active, "bob's candidate untouched"
    finally:
        fleet.stop()


def test_exclusive_modified_shared_candidate_fails_before_any_change(tmp_path: Path) -> None:
    """Someone edits the shared candidate (plain `configure`) after roce-tune's private attempt: Junos
    refuses `configure exclusive` (`error: configuration database modified`); nothing changes and their
    uncommitted edit stays."""
    fleet, inv, known = emulated_inventory("mixed-vendor.yaml", tmp_path,
                                           faults={DEVICE: {"refuse_private_confirm": True,
                                                            "pause_pattern": r"^commit confirmed"}})
    try:
        dev = fleet[DEVICE]
        before = dev.running_config()

        def during() -> None:
            with dev.lock:
                dev.shared = _Db([*dev.active, "system location building b2"])
            dev.resume()

        res = _apply_held(tmp_path, known, inv, dev, during)
        error = res.error or ""
        assert res.state == "failed", (res.state, error)
        assert "refused `configure exclusive` (configuration database modified" in error, error
        assert dev.running_config() == before
        assert dev.shared is not None and "system location building b2" in dev.shared.lines
    finally:
        fleet.stop()


def test_failure_after_exclusive_commit_confirmed_rolls_back(tmp_path: Path) -> None:
    """The read-back after the exclusive `commit confirmed` fails (a line the device drops on commit): the
    rollback finds roce-tune's commit by its comment and undoes it from `configure exclusive`."""
    fleet, inv, known = emulated_inventory("mixed-vendor.yaml", tmp_path,
                                           faults={DEVICE: {"refuse_private_confirm": True,
                                                            "pause_pattern": r"^commit confirmed \d+"}})
    try:
        dev = fleet[DEVICE]
        before = dev.running_config()

        def rearm() -> None:  # the refused private one: hold again at the exclusive one
            dev.set_fault(pause_pattern=r"^commit confirmed \d+")  # (releases the held one)

        def lose_a_line() -> None:  # the commit "loses" one of roce-tune's lines: the read-back must fail
            with dev.lock:
                assert dev.history[0].comment.startswith("roce_tune_"), dev.history[0]
                dropped = next(ln for ln in dev.active if ln.startswith("class-of-service schedulers "))
                dev.active.remove(dropped)
                assert dev.shared is not None  # the exclusive session's (shared) candidate is the commit
                dev.shared.lines.remove(dropped)
            dev.resume()

        res = _apply_held(tmp_path, known, inv, dev, rearm, lose_a_line, confirm_s=600)
        error = res.error or ""
        assert res.state == "failed" and res.rolled_back, (res.state, res.rolled_back, error)
        assert error.startswith("verify:"), error
        assert dev.running_config() == before, "rolled back to the configuration before the push"
        assert not dev.confirm_pending and dev.exclusive_owner is None
        seen = dev.commands_seen
        assert seen.count("configure exclusive") == 2, "push + rollback both in exclusive mode"
        assert any(c.startswith("rollback ") and c != "rollback 0" for c in seen), seen
        assert dev.history[0].comment.endswith("-rollback"), dev.history[0]
    finally:
        fleet.stop()
