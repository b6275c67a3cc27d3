"""Fixtures for the emulator self-tests: netmiko's real drivers against each emulator."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from netmiko import ConnectHandler

from tests.emulators import EmulatorFleet, EmulatorSpec, start_emulators
from tests.emulators.pytest_plugin import emulator_fleet  # noqa: F401


@pytest.fixture
def one(tmp_path: Path) -> Iterator[Callable[..., tuple[EmulatorFleet, Any]]]:
    """``fleet, conn = one("eos", time_scale=0.001)``: one device and a netmiko connection."""
    fleets: list[EmulatorFleet] = []
    conns: list[Any] = []

    def start(platform: str, name: str = "dut", connect: bool = True, **spec_kw: Any) -> tuple[EmulatorFleet,
                                                                                               Any]:
        fleet = start_emulators([EmulatorSpec(platform, name, **spec_kw)],
                                workdir=tmp_path / f"f{len(fleets)}")
        fleets.append(fleet)
        conn = None
        if connect:
            conn = ConnectHandler(**fleet.netmiko_params(name))
            conns.append(conn)
        return fleet, conn

    yield start
    for conn in conns:
        with contextlib.suppress(Exception):
            conn.disconnect()
    for fleet in fleets:
        fleet.stop()
