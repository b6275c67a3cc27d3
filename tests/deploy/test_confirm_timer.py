"""EOS ``commit timer`` and Cumulus ``nv config apply --confirm``: the device's window runs out before
roce-tune's confirm arrives (the Junos case is tests/deploy/test_junos_confirm_timer.py).

Both devices revert the change by themselves when the window runs out. A confirm that comes later
confirms nothing: EOS finds the session no longer pending (its reply is no error line roce-tune knows),
NVUE answers that there is no apply to confirm. Either way apply must report failed, say that the window
ran out and how to lengthen it, leave the device as it found it and not claim it rolled back itself.
The emulators hold a reply (``pause_pattern``) while their scaled timer (``time_scale``) runs out, so the
timer fires at an exact step of the push.
"""

from __future__ import annotations

from pathlib import Path
from typing import NamedTuple

import pytest

from roce_tune.deploy.runner import DeviceResult

from .test_junos_confirm_timer import CONFIRM_S, _apply_with_timer_run_out

pytestmark = [pytest.mark.emulator, pytest.mark.slow]  # each waits for a 6 s device timer to run out


class Case(NamedTuple):
    device: str  # a switch of mixed-vendor.yaml
    before_timer: str  # a command after the read of the running config and before the timer is armed
    timer: str  # the command that arms the device's timer
    read_back: str  # the read-back after the timer is armed
    window: str  # how the platform's window is written in the report
    reverted: str  # the report's words when the device had reverted the change by itself
    rolled_back: str  # the report's words when roce-tune rolled it back


CASES = {
    "eos": Case("leaf1", r"^show session-config diffs", r"^commit timer", r"^show running-config$",
                "`commit timer 00:01:00`",
                "EOS had already restored the configuration from before the session",
                "rolled back by roce-tune (`configure session"),
    "cumulus": Case("leaf7", r"^nv config diff$", r"^nv config apply -y --confirm", r"^nv config show",
                    "`nv config apply --confirm 60s`", "NVUE had already reverted to the revision before the "
                    "apply", "rolled back by roce-tune (`nv config apply --confirm-no`)"),
}


def _failed(res: DeviceResult, events: list[str]) -> str:
    assert res.state == "failed", (res.state, res.error, events)
    return res.error or ""


@pytest.mark.parametrize("platform", sorted(CASES))
def test_timer_runs_out_before_the_confirm_fails_the_apply(tmp_path: Path, platform: str) -> None:
    """Held at the read-back (the change still active) until the timer ran out: the read-back passes, the
    confirm comes late and confirms nothing: apply must fail, not report pushed, say why in the platform's
    terms and how to lengthen the window, and must not put the change back."""
    case = CASES[platform]
    res, before, after, events = _apply_with_timer_run_out(tmp_path, case.before_timer, case.read_back,
                                                           device=case.device)
    error = _failed(res, events)
    assert error.startswith("confirm: "), error
    assert "timer ran out before the confirm arrived" in error and case.window in error, error
    assert f"--confirm-seconds N` (now {CONFIRM_S} s" in error, error
    assert case.reverted in error and case.rolled_back not in error, error
    assert after == before, "the device reverted the push by itself; nothing of it may be active"


@pytest.mark.parametrize("platform", sorted(CASES))
def test_timer_runs_out_then_the_read_back_fails_does_not_roll_back(tmp_path: Path, platform: str) -> None:
    """The output of the command that armed the timer held until the timer ran out: the read-back then
    fails (the change is gone) and the rollback must leave the device alone and say the device reverted
    it, not roce-tune."""
    case = CASES[platform]
    res, before, after, events = _apply_with_timer_run_out(tmp_path, case.timer, None, device=case.device)
    error = _failed(res, events)
    assert error.startswith("verify: device does not match the plan"), error
    assert after == before, events
    assert case.reverted in error and case.rolled_back not in error, error

