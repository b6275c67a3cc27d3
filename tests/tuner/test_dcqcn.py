"""DCQCN parameter derivation: DOMAIN.md §3 and Oracle E (HPCC scaling, mlx5 firmware defaults)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from roce_tune.inventory.catalog import NicSpec, load_catalog
from roce_tune.tuner.dcqcn import calc_dcqcn, derive_dcqcn
from roce_tune.tuner.fluid import FluidParams

#: DOMAIN.md §3 / Oracle E "mlx5 DCQCN defaults" (NVIDIA DOCA DCQCN CC Parameters).
ORACLE_FW = {
    "rpg_time_reset_us": 300, "rpg_byte_reset_bytes": 32767, "rpg_threshold": 1, "rpg_max_rate_mbps": 0,
    "rpg_ai_rate_mbps": 5, "rpg_hai_rate_mbps": 50, "rpg_gd": 11, "rpg_min_dec_fac_percent": 50,
    "rpg_min_rate_mbps": 1, "rate_to_set_on_first_cnp_mbps": 0, "dce_tcp_g": 1019, "dce_tcp_rtt_us": 1,
    "rate_reduce_monitor_period_us": 4, "initial_alpha_value": 1023, "min_time_between_cnps_us": 2,
    "clamp_tgt_rate": 0, "clamp_tgt_rate_after_time_inc": 1, "cnp_dscp": 48, "cnp_802p_prio": 6,
}


def _nic(defaults: dict[str, int] | None = None) -> NicSpec:
    return NicSpec(id="connectx-7", name="ConnectX-7", vendor="nvidia", max_speed_gbps=400, ports=2,
                   latency_us=1.0, dcqcn_defaults=dict(ORACLE_FW if defaults is None else defaults),
                   sources={k: "test" for k in ("max_speed_gbps", "ports", "latency_us", "dcqcn_defaults")})


NIC = _nic()


def _d(speed: int, **kw: object):  # type: ignore[no-untyped-def]
    args: dict = {"enabled": True, "priorities": [3], "cnp_dscp": 48, "cnp_priority": 6, **kw}
    return derive_dcqcn(NIC, speed, **args)


@pytest.mark.parametrize("speed, timer", [(25, 300), (100, 300), (200, 150), (400, 75), (800, 38)])
def test_timer_derived_and_steps_firmware(speed: int, timer: int) -> None:
    """docs/derivation.md#dcqcn-timer: 300 us x min(1, 100/speed); AI/HAI stay at firmware 5/50 Mb/s
    (docs/derivation.md#dcqcn-increase-steps: the HPCC x speed/25G scaling buys nothing with the byte
    counter on)."""
    d = _d(speed)
    assert d.params["rpg_time_reset_us"] == timer
    assert (d.params["rpg_ai_rate_mbps"], d.params["rpg_hai_rate_mbps"]) == (5, 50)
    assert "tuning-sweeps.md#dcqcn-knobs" in d.rationale["rpg_time_reset_us"].source
    assert "tuning-sweeps.md#dcqcn-knobs" in d.rationale["rpg_ai_rate_mbps"].source


def test_keys_and_firmware_defaults_match_nicspec() -> None:
    d = _d(400)
    assert set(d.params) == set(NIC.dcqcn_defaults) == set(d.firmware_defaults)
    assert d.firmware_defaults == ORACLE_FW
    assert set(d.rationale) == set(d.params)
    assert all(r.source and r.formula for r in d.rationale.values())


def test_unscaled_params_keep_firmware_values() -> None:
    """Only rpg_time_reset and rpg_byte_reset follow the speed; each other param stays at the firmware
    default (its note says why)."""
    d = _d(400)
    for k, v in ORACLE_FW.items():
        if k not in ("rpg_time_reset_us", "rpg_byte_reset_bytes"):
            assert d.params[k] == v, k
    assert "N*min_rate < C" in d.rationale["rpg_min_rate_mbps"].note


def test_catalog_nics_share_the_contract_keys() -> None:
    for nic in load_catalog().nics:
        d = derive_dcqcn(nic, nic.max_speed_gbps, True, [3], 48, 6)
        assert set(d.params) == set(nic.dcqcn_defaults)


def test_cnp_class_follows_site() -> None:
    d = _d(100, cnp_dscp=46, cnp_priority=5)
    assert (d.params["cnp_dscp"], d.params["cnp_802p_prio"]) == (46, 5)
    assert d.firmware_defaults["cnp_dscp"] == 48
    with pytest.raises(ValueError, match="site's CNP class"):
        _d(100, cnp_dscp=46, cnp_priority=5, overrides={"cnp_dscp": 48})


def test_enabled_priorities() -> None:
    assert _d(100, priorities=[4, 3, 3]).enabled_priorities == [3, 4]


def test_disabled_relies_on_pfc() -> None:
    d = _d(400, enabled=False)
    assert not d.enabled and d.enabled_priorities == []
    for word in ("PFC", "receiver-driven", "Meta", "watchdog", "out_of_sequence", "pause duration"):
        assert word in d.relies_on
    assert d.params["rpg_time_reset_us"] == 75  # kept for re-enabling
    assert _d(400).relies_on == ""


def test_override_pinned_with_derived_value() -> None:
    d = _d(400, overrides={"rpg_ai_rate_mbps": 40, "rpg_threshold": 5})
    assert d.params["rpg_ai_rate_mbps"] == 40 and d.params["rpg_threshold"] == 5
    r = d.rationale["rpg_ai_rate_mbps"]
    assert r.pinned_by_user and r.derived_value == 5
    assert d.rationale["rpg_threshold"].derived_value == 1
    assert not d.rationale["rpg_hai_rate_mbps"].pinned_by_user


@pytest.mark.parametrize("key, value, match", [
    ("rpg_threshold", 0, "1..31"), ("rpg_threshold", 32, "1..31"), ("dce_tcp_g", 1024, "0..1023"),
    ("rpg_min_dec_fac_percent", 101, "0..100"), ("rpg_ai_rate_mbps", 500_000, "0?1..400000"),
    ("cnp_dscp", 64, "0..63"), ("rpg_threshold", True, "rpg_threshold"), ("no_such_knob", 1, "unknown"),
])
def test_override_range_checked(key: str, value: int, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        _d(400, overrides={key: value})


def test_catalog_default_out_of_range_is_refused() -> None:
    with pytest.raises(ValueError, match="rpg_threshold"):
        derive_dcqcn(_nic({**ORACLE_FW, "rpg_threshold": 40}), 100, True, [3], 48, 6)


def test_missing_catalog_keys_fall_back_to_firmware_table() -> None:
    d = derive_dcqcn(_nic({"rpg_ai_rate_mbps": 5}), 100, True, [3], 48, 6)
    assert d.firmware_defaults == ORACLE_FW


@settings(max_examples=40, deadline=None)
@given(lo=st.sampled_from([10, 25, 40, 50, 100, 200]), hi=st.sampled_from([100, 200, 400, 800, 1600]))
def test_increase_steps_non_decreasing_in_speed(lo: int, hi: int) -> None:
    if lo > hi:
        lo, hi = hi, lo
    a, b = _d(lo).params, _d(hi).params
    assert a["rpg_ai_rate_mbps"] == b["rpg_ai_rate_mbps"] and a["rpg_hai_rate_mbps"] == b["rpg_hai_rate_mbps"]
    # the timer never lengthens with speed, and its period in bytes at line rate never exceeds 3.75 MB
    assert a["rpg_time_reset_us"] >= b["rpg_time_reset_us"]
    assert b["rpg_time_reset_us"] * hi * 125 <= 3.75e6 * 1.02


def test_feeds_the_fluid_model() -> None:
    fp = FluidParams.from_dcqcn_params(_d(400).params, 400)
    assert fp.rai_mbps == 5 and fp.tau_s == pytest.approx(4e-6) and fp.timer_s == pytest.approx(75e-6)
    # RoCE frames, not the paper's 1000 B (docs/derivation.md#fluid-packet-size)
    assert fp.packet_bytes == 4096 + 62


def test_calc_dcqcn_parses_speed() -> None:
    a, b = calc_dcqcn("400G"), calc_dcqcn(400000)
    assert a.params == b.params and a.params["rpg_time_reset_us"] == 75
    with pytest.raises(ValueError):
        calc_dcqcn("fast")


@pytest.mark.parametrize("speed, byte_reset", [(25, 32767), (50, 32767), (100, 0), (200, 0), (400, 0),
                                                (800, 0)])
def test_byte_counter_disabled_from_100g(speed: int, byte_reset: int) -> None:
    """docs/derivation.md#dcqcn-byte-counter: the firmware counter (field max 32767 B) below 100G, 0
    (disabled, mlxconfig "Disabled=0") from 100G, where it fires faster than a CNP can come back, cannot grow
    with C and drives model M's fast-recovery limit cycle (sweep docs/tuning-sweeps.md#dcqcn-byte-counter)."""
    d = _d(speed)
    assert d.params["rpg_byte_reset_bytes"] == byte_reset
    assert d.firmware_defaults["rpg_byte_reset_bytes"] == 32767
    r = d.rationale["rpg_byte_reset_bytes"]
    assert "tuning-sweeps.md#dcqcn-byte-counter" in r.source
    assert "derivation.md#dcqcn-byte-counter" in r.source
    assert r.inputs["counter_period_at_line_rate_ns"] == round(32767 * 8 / speed)


def test_pinned_byte_counter_wins_over_the_rule() -> None:
    """A pinned rpg_byte_reset at 400G replaces the derived 0 and records it."""
    d = _d(400, overrides={"rpg_byte_reset_bytes": 32767})
    assert d.params["rpg_byte_reset_bytes"] == 32767
    assert d.rationale["rpg_byte_reset_bytes"].derived_value == 0
