"""Speed of ``roce-tune simulate`` on one core: prints wall-clock figures (targets in brackets).

* 32 x 8 MB incast at 100G, model M, SONiC thresholds      (target <= 5 s)
* 40 ms long-lived run, 16 flows at 100G, model M           (target <= 10 s)
"""

from __future__ import annotations

import time

from roce_tune.simulate import EcnSetting, Scenario, simulate


def _time(label: str, sc: Scenario, target_s: float) -> None:
    t0 = time.perf_counter()
    m = simulate(sc)
    dt = time.perf_counter() - t0
    # a long-lived run has no completion, so no efficiency: say nothing rather than "0.0 %"
    eff = f"efficiency {m.efficiency_percent:.1f} %, " if m.efficiency_percent is not None else ""
    print(f"{label}: {dt:.2f} s (target <= {target_s:g} s) -- {m.packets} packets, "
          f"{m.packets / dt / 1000:.0f} k packets/s; {eff}"
          f"utilisation {m.utilisation_percent:.1f} %, PFC {m.pfc_pause_ms:.1f} ms")


def main() -> None:
    sonic = EcnSetting(1_048_576, 2_097_152, 5.0)
    _time("incast 32 x 8 MB @100G (M)", Scenario(kind="incast", speed_gbps=100, fan_in=32,
                                                 message_bytes=8_000_000,
                                                  ecn=sonic, model="M"), 5.0)
    _time("long-lived 16 flows 40 ms @100G (M)", Scenario(kind="long-lived", speed_gbps=100, fan_in=16,
                                                           duration_us=40_000.0, ecn=sonic, model="M"), 10.0)


if __name__ == "__main__":
    main()
