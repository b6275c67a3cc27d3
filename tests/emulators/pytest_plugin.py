"""pytest fixtures for the emulators; import them in a conftest.py::

    from tests.emulators.pytest_plugin import emulator_fleet  # noqa: F401

``emulator_fleet(specs)`` starts a fleet and stops it when the test ends.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest

from .core import EmulatorSpec
from .server import EmulatorFleet, start_emulators


@pytest.fixture
def emulator_fleet(tmp_path) -> Iterator[Callable[[list[EmulatorSpec]], EmulatorFleet]]:  # type: ignore[no-untyped-def]
    """Factory fixture: ``fleet = emulator_fleet([EmulatorSpec("eos", "leaf1")])``."""
    fleets: list[EmulatorFleet] = []

    def start(specs: list[EmulatorSpec]) -> EmulatorFleet:
        fleet = start_emulators(specs, workdir=tmp_path / f"emu{len(fleets)}")
        fleets.append(fleet)
        return fleet

    yield start
    for fleet in fleets:
        fleet.stop()
