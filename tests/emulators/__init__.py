"""Loopback SSH device emulators for roce-tune's deploy and Ansible tests.

Public API::

    from tests.emulators import EmulatorSpec, Faults, start_emulators
    with start_emulators([EmulatorSpec("eos", "leaf1"), EmulatorSpec("junos", "qfx1")]) as fleet:
        params = fleet.netmiko_params("leaf1")      # for netmiko.ConnectHandler(**params)
        fleet["leaf1"].running_config()              # canonical running config text
        fleet["qfx1"].set_fault(lose_confirm=True)   # runtime fault knobs

See README.md in this directory for prompts, commands per platform and deviations.
"""

from __future__ import annotations

from netmiko.exceptions import ReadTimeout

from roce_tune.deploy.runner import SessionTiming

from .core import LOOPBACK_NETMIKO_TIMING, CliSession, DropConnection, EmulatedDevice, EmulatorSpec, Faults
from .server import EmulatorFleet, start_emulators

#: roce-tune's netmiko pacing for sessions to the emulators: ``ApplyOptions(timing=LOOPBACK_TIMING)``.
LOOPBACK_TIMING = SessionTiming(**LOOPBACK_NETMIKO_TIMING)

#: What netmiko raises when an emulator drops the connection mid-command.
NETMIKO_DROP_ERRORS = (ReadTimeout, OSError, EOFError)

PLATFORMS = ("eos", "nxos", "junos", "cumulus", "sonic", "host")

__all__ = [
    "LOOPBACK_NETMIKO_TIMING",
    "LOOPBACK_TIMING",
    "NETMIKO_DROP_ERRORS",
    "PLATFORMS",
    "CliSession",
    "DropConnection",
    "EmulatedDevice",
    "EmulatorFleet",
    "EmulatorSpec",
    "Faults",
    "start_emulators",
]
