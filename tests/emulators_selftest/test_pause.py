"""The ``pause_pattern`` fault knob: a device holds at a command until the test resumes it."""

from __future__ import annotations

import threading
from typing import Any

from tests.emulators import Faults


def _in_thread(fn: Any) -> tuple[threading.Thread, list[Any]]:
    box: list[Any] = []
    th = threading.Thread(target=lambda: box.append(fn()), daemon=True)
    th.start()
    return th, box


def test_cli_device_holds_after_processing_the_command(one):
    fleet, conn = one("eos", name="leaf1", faults=Faults(pause_pattern=r"^mtu 9214$"))
    dev = fleet["leaf1"]
    lines = ["interface Ethernet1", "mtu 9214", "description after"]
    th, box = _in_thread(lambda: conn.send_config_set(lines, read_timeout=30))
    assert dev.wait_paused(20)
    # processed (configure terminal applies each line at once), its prompt held; the next line not yet sent
    running = dev.running_config()
    assert "mtu 9214" in running and "description after" not in running
    th.join(0.5)
    assert th.is_alive(), "the client must still wait for the prompt"
    other = fleet.connect("leaf1")  # the loop is not blocked: other sessions go on
    try:
        assert "leaf1" in other.send_command("show hostname")
    finally:
        other.disconnect()
    dev.resume()
    th.join(30)
    assert not th.is_alive() and "description after" in dev.running_config()
    assert any("paused after 'mtu 9214'" in e for e in dev.events)
    # fires once; set_fault re-arms it
    conn.send_config_set(["interface Ethernet2", "mtu 9214"], read_timeout=10)
    dev.set_fault(pause_pattern=r"^show hostname$")
    th, box = _in_thread(lambda: conn.send_command("show hostname", read_timeout=30))
    assert dev.wait_paused(20)
    dev.resume()
    th.join(30)
    assert box and "leaf1" in box[0]


def test_host_tool_holds_before_acting(one):
    fleet, conn = one("host", name="gpu01", password="pw",
                      faults=Faults(pause_pattern=r"^cma_roce_tos .*-t \d+"))
    dev = fleet["gpu01"]
    assert conn.send_command("cma_roce_tos -d mlx5_0 -p 1") == "0"  # a read does not match
    th, box = _in_thread(lambda: conn.send_command("cma_roce_tos -d mlx5_0 -p 1 -t 106; echo done",
                                                   read_timeout=30))
    assert dev.wait_paused(20)
    assert "default_roce_tos = 0" in dev.running_config()  # held before the tool wrote anything
    dev.resume()
    th.join(30)
    assert box and box[0].endswith("done") and "default_roce_tos = 106" in dev.running_config()
    assert conn.send_command("cma_roce_tos -d mlx5_0 -p 1 -t 24", read_timeout=10) == "24"  # fires once
    dev.set_fault(pause_pattern=r"^mlnx_qos .*--trust")  # re-armed, for sessions opened after it
    again = fleet.connect("gpu01")
    try:
        th, box = _in_thread(lambda: again.send_command("mlnx_qos -i ens1f0np0 --trust dscp",
                                                        read_timeout=30))
        assert dev.wait_paused(20)
        dev.resume()
        th.join(30)
        assert box and "Priority trust state: dscp" in box[0]
    finally:
        again.disconnect()
