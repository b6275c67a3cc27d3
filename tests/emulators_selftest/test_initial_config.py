"""A device started from another device's running config reproduces it byte for byte.

This is how deploy tests build an "already configured" switch: configure one emulator
(or write the text by hand), then pass ``running_config()`` as ``initial_config``.
"""

from __future__ import annotations

import json

import pytest

from tests.emulators import EmulatorSpec

pytestmark = pytest.mark.emulator

PUSH = {
    "eos": ["interface Ethernet1", "   mtu 9214", "qos profile ROCE", "   tx-queue 3", "      no priority",
            "      bandwidth percent 50", "   priority-flow-control on"],
    "nxos": ["policy-map type queuing Q", "  class type queuing c-out-8q-q3",
             "    bandwidth remaining percent 50",
             "interface Ethernet1/1", "  mtu 9216"],
    "junos": ["set class-of-service schedulers S_ROCE transmit-rate percent 50",
              "set class-of-service forwarding-classes class ROCE queue-num 3 no-loss"],
    "cumulus": ["nv set qos roce mode lossless", "nv set qos pfc default-global cable-length 10"],
}


@pytest.mark.parametrize("platform", sorted(PUSH))
def test_running_config_round_trips_through_initial_config(emulator_fleet, platform):
    fleet = emulator_fleet([EmulatorSpec(platform, "a")])
    conn = fleet.connect("a")
    try:
        if platform == "junos":
            conn.send_config_set(PUSH[platform], config_mode_command="configure private",
                                 exit_config_mode=False)
            conn.commit(and_quit=True)
        elif platform == "cumulus":
            conn.send_config_set(PUSH[platform], enter_config_mode=False, exit_config_mode=False)
            conn.send_command("nv config apply -y")
        else:
            conn.send_config_set(PUSH[platform])
    finally:
        conn.disconnect()
    text = fleet["a"].running_config()
    assert any(PUSH[platform][-1].split()[-1] in ln for ln in text.splitlines())
    twin = emulator_fleet([EmulatorSpec(platform, "a", initial_config=text)])
    assert twin["a"].running_config() == text


def test_sonic_initial_config_dict(emulator_fleet):
    db = {"DEVICE_METADATA": {"localhost": {"hostname": "s9"}}, "PORT": {"Ethernet0": {"mtu": "9100"}}}
    fleet = emulator_fleet([EmulatorSpec("sonic", "s9", initial_config=db)])
    assert json.loads(fleet["s9"].running_config()) == db
    conn = fleet.connect("s9")
    try:
        assert conn.base_prompt == "admin@s9:~"
    finally:
        conn.disconnect()
