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


@pytest.mark.parametrize("speed, ai, hai", [(25, 5, 50), (100, 20, 200), (400, 80, 800), (800, 160, 1600)])
def test_hpcc_scaling_oracle_e(speed: int, ai: int, hai: int) -> None:
    p = _d(speed).params
    assert (p["rpg_ai_rate_mbps"], p["rpg_hai_rate_mbps"]) == (ai, hai)


def test_keys_and_firmware_defaults_match_nicspec() -> None:
    d = _d(400)
    assert set(d.params) == set(NIC.dcqcn_defaults) == set(d.firmware_defaults)
    assert d.firmware_defaults == ORACLE_FW
    assert set(d.rationale) == set(d.params)
    assert all(r.source and r.formula for r in d.rationale.values())


def test_unscaled_params_keep_firmware_values() -> None:
    """Only AI/HAI scale with speed; each other param stays at the firmware default (its note says why)."""
    d = _d(400)
    for k, v in ORACLE_FW.items():
        if k not in ("rpg_ai_rate_mbps", "rpg_hai_rate_mbps"):
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
    assert d.params["rpg_ai_rate_mbps"] == 80  # kept for re-enabling
    assert _d(400).relies_on == ""


def test_override_pinned_with_derived_value() -> None:
    d = _d(400, overrides={"rpg_ai_rate_mbps": 40, "rpg_threshold": 5})
    assert d.params["rpg_ai_rate_mbps"] == 40 and d.params["rpg_threshold"] == 5
    r = d.rationale["rpg_ai_rate_mbps"]
    assert r.pinned_by_user and r.derived_value == 80
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
    assert a["rpg_ai_rate_mbps"] <= b["rpg_ai_rate_mbps"] and a["rpg_hai_rate_mbps"] <= b["rpg_hai_rate_mbps"]
    # relative step AI/C is the same at every speed (within integer rounding)
    assert b["rpg_ai_rate_mbps"] / (hi * 1000) == pytest.approx(5 / 25_000, rel=0.1)


def test_feeds_the_fluid_model() -> None:
    fp = FluidParams.from_dcqcn_params(_d(400).params, 400)
    assert fp.rai_mbps == 80 and fp.tau_s == pytest.approx(4e-6)


def test_calc_dcqcn_parses_speed() -> None:
    a, b = calc_dcqcn("400G"), calc_dcqcn(400000)
    assert a.params == b.params and a.params["rpg_hai_rate_mbps"] == 800
    with pytest.raises(ValueError):
        calc_dcqcn("fast")
