"""PFC watchdog: SONiC start_default scaling, Juniper defaults, sonic-pfcwd.yang ranges
(DOMAIN.md §4, Oracle E)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from roce_tune.tuner.watchdog import derive_watchdog

#: sonic-pfcwd.yang: detection_time 100..5000, restoration_time 100..60000, POLL_INTERVAL 100..1000 (ms).
YANG = {"detection_ms": (100, 5000), "restoration_ms": (100, 60000), "poll_ms": (100, 1000)}
PLATFORMS = ("sonic", "cumulus", "eos", "nxos", "junos")


@pytest.mark.parametrize("n, expect", [
    (32, (200, 200, 200)), (64, (400, 400, 400)), (160, (1000, 1000, 1000)),  # Oracle E, start_default
    (1, (200, 200, 200)), (0, (200, 200, 200)),  # SONiC defaults 200/200/200
])
def test_sonic_start_default_oracle(n: int, expect: tuple[int, int, int]) -> None:
    w = derive_watchdog(n, True, "drop", "sonic")
    assert (w.detection_ms, w.restoration_ms, w.poll_ms) == expect
    assert w.action == "drop" and w.pfc_ports == n and w.enabled


def test_junos_defaults() -> None:
    """Juniper: poll 100 ms, detection 200 ms, recovery 200 ms, whatever the port count."""
    for n in (8, 160):
        w = derive_watchdog(n, True, "drop", "junos")
        assert (w.poll_ms, w.detection_ms, w.restoration_ms) == (100, 200, 200)
    assert "Juniper" in w.rationale["poll_ms"].source or "Junos" in w.rationale["poll_ms"].source


def test_every_field_explained() -> None:
    for plat in PLATFORMS:
        w = derive_watchdog(64, True, "drop", plat)
        assert {"detection_ms", "restoration_ms", "poll_ms", "action"} <= set(w.rationale)
    assert "[gap]" in derive_watchdog(64, True, "drop", "eos").rationale["detection_ms"].note


@settings(max_examples=100, deadline=None)
@given(n=st.integers(0, 5000), platform=st.sampled_from(PLATFORMS))
def test_always_within_yang_ranges(n: int, platform: str) -> None:
    w = derive_watchdog(n, True, "drop", platform)
    for key, (lo, hi) in YANG.items():
        assert lo <= getattr(w, key) <= hi
    assert w.detection_ms >= w.poll_ms and w.restoration_ms >= w.poll_ms


@settings(max_examples=60, deadline=None)
@given(n=st.integers(0, 4000))
def test_sonic_times_non_decreasing_in_ports(n: int) -> None:
    """More PFC ports -> longer poll cycle on the switch CPU -> longer detection (start_default)."""
    a, b = derive_watchdog(n, True, "drop", "sonic"), derive_watchdog(n + 1, True, "drop", "sonic")
    assert a.detection_ms <= b.detection_ms and a.poll_ms <= b.poll_ms


def test_disabled_keeps_timers() -> None:
    w = derive_watchdog(64, False, "drop", "sonic")
    assert not w.enabled and w.detection_ms == 400


def test_override_pinned_with_derived_value() -> None:
    w = derive_watchdog(64, True, "drop", "sonic", {"detection_ms": 800, "action": "forward"})
    assert w.detection_ms == 800 and w.action == "forward"
    r = w.rationale["detection_ms"]
    assert r.pinned_by_user and r.derived_value == 400
    assert w.rationale["action"].derived_value == "drop"


def test_pinned_time_below_derived_poll_lowers_poll() -> None:
    w = derive_watchdog(160, True, "drop", "sonic", {"detection_ms": 300})
    assert w.poll_ms == 300 and w.detection_ms >= w.poll_ms and w.restoration_ms >= w.poll_ms
    assert "lowered" in w.rationale["poll_ms"].note


def test_pinned_poll_above_derived_time_raises_time() -> None:
    w = derive_watchdog(8, True, "drop", "sonic", {"poll_ms": 500})
    assert w.detection_ms == 500 and w.restoration_ms == 500
    assert "raised" in w.rationale["detection_ms"].note


@pytest.mark.parametrize("ov, match", [
    ({"detection_ms": 50}, "100..5000"), ({"detection_ms": 6000}, "100..5000"),
    ({"restoration_ms": 70000}, "100..60000"), ({"poll_ms": 2000}, "100..1000"),
    ({"action": "shutdown"}, "drop, forward, alert"),
    ({"detection_ms": 200, "poll_ms": 300}, "POLL_INTERVAL"),
    ({"timeout_ms": 200}, "unknown"), ({"detection_ms": 250.5}, "detection_ms"),
])
def test_overrides_range_checked(ov: dict, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        derive_watchdog(64, True, "drop", "sonic", ov)


def test_bad_arguments() -> None:
    with pytest.raises(ValueError, match="action"):
        derive_watchdog(8, True, "ignore", "sonic")
    with pytest.raises(ValueError, match="platform"):
        derive_watchdog(8, True, "drop", "ios")
    with pytest.raises(ValueError):
        derive_watchdog(-1, True, "drop", "sonic")
