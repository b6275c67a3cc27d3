"""50 emulated devices in one fleet: 10 netmiko workers beat sequential connects by a wide margin."""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from tests.emulators import EmulatorSpec

pytestmark = pytest.mark.emulator

SHOW = {"eos": "show version", "nxos": "show version", "junos": "show version",
        "cumulus": "nv show system", "sonic": "show version"}
PLATFORMS = list(SHOW)


@pytest.mark.slow
def test_fifty_devices_parallel_vs_sequential(emulator_fleet):
    specs = [EmulatorSpec(PLATFORMS[i % len(PLATFORMS)], f"sw{i:02d}") for i in range(50)]
    t0 = time.perf_counter()
    fleet = emulator_fleet(specs)
    start_s = time.perf_counter() - t0
    assert len({dev.port for dev in fleet}) == 50

    def job(dev) -> str:
        conn = fleet.connect(dev.name)
        try:
            return conn.send_command(SHOW[dev.platform])
        finally:
            conn.disconnect()

    t0 = time.perf_counter()
    seq = [job(dev) for dev in fleet]
    seq_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    with ThreadPoolExecutor(max_workers=10) as pool:
        par = list(pool.map(job, list(fleet)))
    par_s = time.perf_counter() - t0
    assert par == seq and all(out.strip() for out in par)
    ratio = seq_s / par_s
    print(f"\n50 devices: start {start_s:.2f}s, sequential {seq_s:.2f}s, 10 workers {par_s:.2f}s, "
          f"speed-up x{ratio:.1f}")
    assert ratio >= 3.0
