"""netmiko pacing of roce-tune's SSH sessions: production keeps netmiko's conservative timing; the
loopback pacing the emulator tests use is a setting they pass, and netmiko really takes both."""

from __future__ import annotations

import contextlib
from pathlib import Path

import pytest
from netmiko import ConnectHandler

from roce_tune.deploy.credentials import Credentials
from roce_tune.deploy.runner import ApplyOptions, SessionTiming, Target, netmiko_params
from tests.emulators import LOOPBACK_TIMING, EmulatorSpec, start_emulators

from .conftest import PASSWORD, USER

CREDS = Credentials(USER, PASSWORD)


def _target(port: int = 22) -> Target:
    return Target("leaf1", "switch", "eos", "leaf", "127.0.0.1", port, {}, "")


def test_production_default_is_netmikos_conservative_pacing() -> None:
    assert ApplyOptions().timing == SessionTiming(fast_cli=False, global_delay_factor=1.0)
    params = netmiko_params(_target(), ApplyOptions(), CREDS)
    assert (params["fast_cli"], params["global_delay_factor"], params["conn_timeout"]) == (False, 1.0, 15.0)


def test_loopback_pacing_is_passed_not_defaulted() -> None:
    params = netmiko_params(_target(), ApplyOptions(timing=LOOPBACK_TIMING), CREDS)
    assert (params["fast_cli"], params["global_delay_factor"]) == (True, 0.1)
    assert LOOPBACK_TIMING != SessionTiming()


@pytest.mark.emulator
def test_netmiko_session_runs_with_the_pacing_given(tmp_path: Path) -> None:
    """A real session to an emulator: netmiko keeps factor 1.0 for the default and 0.1 for loopback
    (netmiko itself would turn a fast_cli session's 1.0 into 0.1, so the default must say fast_cli=False)."""
    with start_emulators([EmulatorSpec("eos", "leaf1", username=USER, password=PASSWORD)],
                         workdir=tmp_path / "emu") as fleet:
        for timing, factor in ((SessionTiming(), 1.0), (LOOPBACK_TIMING, 0.1)):
            opts = ApplyOptions(timing=timing, insecure_skip_host_key_check=True)
            conn = ConnectHandler(**netmiko_params(_target(fleet.port("leaf1")), opts, CREDS))
            try:
                assert (conn.fast_cli, conn.global_delay_factor) == (timing.fast_cli, factor)
                assert conn.find_prompt().endswith("#") or conn.find_prompt().endswith(">")
            finally:
                with contextlib.suppress(Exception):
                    conn.disconnect()
