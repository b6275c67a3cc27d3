"""ECN profiles: DOMAIN.md §2 / Oracle E, the ECN-before-PFC rule and the DCQCN fluid check."""

from __future__ import annotations

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from roce_tune.findings import Severity
from roce_tune.inventory.models import PROFILE_NAME_RE, EcnProfileName
from roce_tune.tuner.dcqcn import MLX5_FIRMWARE_DEFAULTS
from roce_tune.tuner.ecn import NAMED_PROFILES, base_rtt_us, calc_ecn, check_ecn, derive_ecn

KB = 1000
SPEEDS = (25, 100, 200, 400, 800)


def fw_params(speed: int) -> dict[str, int]:
    """Firmware DCQCN params with the derived timer (what dcqcn.derive_dcqcn produces)."""
    return {**MLX5_FIRMWARE_DEFAULTS, "rpg_time_reset_us": max(1, round(300 * min(1.0, 100 / speed)))}


#: SIGCOMM'15 defaults as mlx5-style knobs (tau 50 µs, tau' 55 µs, T 55 µs, B 10 MB, F 5, AI 40 Mb/s,
#: g 1/256).
PAPER_PARAMS = {**MLX5_FIRMWARE_DEFAULTS, "min_time_between_cnps_us": 50, "rate_reduce_monitor_period_us": 50,
                "dce_tcp_rtt_us": 55, "rpg_time_reset_us": 55, "rpg_byte_reset_bytes": 10_000_000,
                "rpg_threshold": 5, "rpg_ai_rate_mbps": 40, "dce_tcp_g": 1020}
BIG = 10**9


def ecn(speed: int = 100, rtt: float = 10.0, fan_in: int = 8,  # type: ignore[no-untyped-def]
        trigger: int = BIG, **kw: object):
    sep = kw.pop("sep", False)
    return derive_ecn(speed, rtt, fan_in, trigger, fw_params(speed), sep, **kw)  # type: ignore[arg-type]


# --- base RTT ----------------------------------------------------------------------------------
def test_base_rtt_components() -> None:
    rtt, r = base_rtt_us(3, 20.0, 2.0, 0.6)
    # 2 x 20 m at 1.98e8 m/s = 0.202 µs; 3 switches x 2 ways x 0.6; 2 NICs x 2.0
    assert rtt == pytest.approx(2 * 20 / 1.98e8 * 1e6 + 6 * 0.6 + 4.0, abs=1e-3)
    assert r.inputs["hops"] == 3 and "5.05" in r.formula


def test_base_rtt_one_km_of_fibre() -> None:
    assert base_rtt_us(0, 1000, 0, 0)[0] == pytest.approx(10.1, abs=0.01)  # 2 km at 1.98e8 m/s


def test_base_rtt_rejects_negative() -> None:
    with pytest.raises(ValueError):
        base_rtt_us(-1, 10, 1, 1)


# --- named profiles (Oracle E) -----------------------------------------------------------------
@pytest.mark.parametrize("name, kmin, kmax, pmax", [
    ("sonic-default", 1_048_576, 2_097_152, 5.0),       # qos_config.j2 AZURE_LOSSLESS
    ("nvidia-default", 150_000, 1_500_000, None),        # Onyx/Cumulus RoCE lossless
    ("dcqcn-paper", 5 * KB, 200 * KB, 1.0),              # SIGCOMM'15
])
def test_named_profiles(name: str, kmin: int, kmax: int, pmax: float | None) -> None:
    p = ecn(profile=name)
    assert (p.kmin_bytes, p.kmax_bytes, p.source_profile) == (kmin, kmax, name)
    if pmax is not None:
        assert p.pmax_percent == pmax
    assert p.rationale["kmax_bytes"].source == NAMED_PROFILES[name][3]


def test_enum_profile_names_all_known() -> None:
    for e in EcnProfileName:
        assert ecn(profile=e).source_profile == e.value


def test_named_profile_failing_fluid_is_flagged_not_fixed() -> None:
    """DCQCN-MODEL.md §1.5: 40G, N = 64, Kmax 200 KB / Pmax 1 % has p* = 0.059 > Pmax."""
    p = derive_ecn(40, 10.0, 64, BIG, PAPER_PARAMS, False, profile="dcqcn-paper", frame_bytes=1000)
    assert p.fluid.p_star == pytest.approx(0.059, rel=0.02)
    assert not p.fluid.on_ramp and not p.fluid.ok
    assert (p.kmin_bytes, p.kmax_bytes, p.pmax_percent) == (5 * KB, 200 * KB, 1.0)
    assert "FAILED" in p.rationale["fluid"].note
    f = check_ecn(p, "leaf1", "Ethernet0")
    assert [x.rule for x in f] == ["RT211"] and f[0].severity is Severity.warning
    assert f[0].location.device == "leaf1" and f[0].location.port == "Ethernet0"


def test_paper_profile_on_ramp_for_few_flows() -> None:
    p = derive_ecn(40, 10.0, 2, BIG, PAPER_PARAMS, False, profile="dcqcn-paper", frame_bytes=1000)
    assert p.fluid.ok and p.fluid.q_star_bytes == pytest.approx(20.2 * KB, rel=0.02)


def test_sonic_default_above_trigger_is_rt210() -> None:
    p = ecn(profile="sonic-default", trigger=1_500_000, fan_in=1)
    assert p.kmax_bytes == 2_097_152  # not clamped
    assert "above the egress PFC onset" in p.rationale["kmax_bytes"].note
    errs = [f for f in check_ecn(p, "leaf1", None) if f.rule == "RT210"]
    assert errs and errs[0].severity is Severity.error


# --- derived rule ------------------------------------------------------------------------------
@pytest.mark.parametrize("fan_in", [1, 8, 64, 256])
def test_huawei_bdp_rule_100g_20us(fan_in: int) -> None:
    """Oracle E: BDP(100G, 20 µs) = 250 KB; Kmax = 2-3 x BDP = 500-750 KB (the ``bdp`` profile and the
    ``latency`` objective keep that rule)."""
    for p in (ecn(100, 20.0, fan_in, profile="bdp"), ecn(100, 20.0, fan_in, objective="latency")):
        assert 500 * KB <= p.kmax_bytes <= 750 * KB
        assert p.kmin_bytes < 250 * KB


@pytest.mark.parametrize("fan_in", [4, 16, 32])
def test_throughput_kmax_is_half_the_egress_onset(fan_in: int) -> None:
    """docs/derivation.md#kmax-first-rtt-burst: onset = N x one PG's trigger (like with like), Kmax = onset/2,
    Kmin = Kmax/2; the per-PG clamp of the bdp rule would have put Kmax at 0.8 x the PG trigger."""
    trigger = int(128 * 5_306_864 / (1 + 128 * fan_in))  # the reference pool, alpha 128
    p = ecn(100, 6.164, fan_in, trigger=trigger)
    assert p.pfc_onset_bytes == fan_in * trigger and p.objective == "throughput"
    assert p.kmax_bytes == pytest.approx(fan_in * trigger / 2, abs=1000)
    assert p.kmin_bytes == pytest.approx(p.kmax_bytes / 2, abs=1000)
    assert p.kmax_bytes > (fan_in - 1) * 100 * 125 * 6.164 or fan_in == 32  # absorbs the first-RTT burst
    assert not [f for f in check_ecn(p, "s", "p") if f.rule == "RT210"]
    old = ecn(100, 6.164, fan_in, trigger=trigger, profile="bdp")
    assert old.kmax_bytes <= 0.8 * trigger + 1 or old.kmax_bytes < 3 * 100 * 125 * 6.164 + 1000


@pytest.mark.parametrize("speed, fan_in", [(100, 8), (400, 8), (400, 32), (800, 16)])
def test_throughput_kmax_bounded_by_two_timer_periods_on_deep_buffers(speed: int, fan_in: int) -> None:
    """docs/tuning-sweeps.md#kmax-bound: on a Spectrum-4-class pool (~ 75 MB onset) Kmax = 2 x C x
    rpg_time_reset (7.5 MB with the derived timer at >= 100G), not half the onset (37 MB); the note
    says why."""
    trigger = 75_000_000 // fan_in
    p = ecn(speed, 6.164, fan_in, trigger=trigger)
    timer_us = fw_params(speed)["rpg_time_reset_us"]
    bound = int(2 * speed * 1e9 / 8 * timer_us * 1e-6) // 1000 * 1000
    assert p.kmax_bytes == bound and p.kmin_bytes == bound // 2 and 7_500_000 <= bound <= 7_600_000
    assert p.kmax_bytes < p.pfc_onset_bytes / 2
    r = p.rationale["kmax_bytes"]
    assert "2 x C x rpg_time_reset" in r.formula and r.inputs["timer_queue_bytes"] == bound
    assert "bounded by 2 x C x rpg_time_reset" in (r.note or "")
    # a shallow pool keeps Kmax = onset / 2 (the bound does not bind)
    small = ecn(speed, 6.164, fan_in, trigger=4_000_000 // fan_in)
    assert small.kmax_bytes == pytest.approx(small.pfc_onset_bytes / 2, abs=1000)
    assert "bounded by" not in (small.rationale["kmax_bytes"].note or "")


@pytest.mark.parametrize("fan_in, kmax, pmax", [(4, 180_000, 2.0), (8, 193_000, 2.0), (16, 206_000, 5.0)])
def test_bdp_profile_keeps_the_previous_values(fan_in: int, kmax: int, pmax: float) -> None:
    """``policy.ecn_profile: bdp`` reproduces what roce-tune derived before the sweeps (the reference's
    setting (a) for inventories/site.yaml at 100G), whatever the current DCQCN rule."""
    trigger = int(128 * 5_306_864 / (1 + 128 * fan_in))
    p = ecn(100, 6.164, fan_in, trigger=trigger, profile="bdp")
    assert (p.kmin_bytes, p.kmax_bytes, p.pmax_percent) == (18_432, kmax, pmax)


def test_balanced_sits_between_latency_and_throughput() -> None:
    trigger = int(128 * 5_306_864 / (1 + 128 * 8))
    lat, bal, thr = (ecn(100, 6.164, 8, trigger=trigger, objective=o)
                     for o in ("latency", "balanced", "throughput"))
    assert lat.kmax_bytes <= bal.kmax_bytes <= thr.kmax_bytes
    with pytest.raises(ValueError, match="objective"):
        ecn(objective="speed")


def test_pmax_has_margin_over_p_star() -> None:
    for n in (1, 8, 64, 256):
        p = ecn(400, 10.0, n)
        assert p.pmax_percent / 100 >= 2 * p.fluid.p_star
        assert p.fluid.on_ramp and p.fluid.q_star_bytes < p.kmax_bytes


def test_rationale_names_vendor_defaults() -> None:
    assert "1048576/2097152" in ecn(400, 10.0, 8).rationale["kmax_bytes"].note
    p = ecn(400, 10.0, 8, profile="bdp")
    for key in ("kmin_bytes", "kmax_bytes", "pmax_percent"):
        note = p.rationale[key].note
        assert "150000/1500000" in note and "1048576/2097152" in note and "5000/200000" in note
    assert "1600000/6400000" in p.rationale["kmax_bytes"].note  # HPCC rule at 400G (Oracle E 1600/6400 KB)


def test_clamped_below_trigger_with_note() -> None:
    p = ecn(400, 10.0, 8, trigger=400 * KB, profile="bdp")
    assert p.kmin_bytes < p.kmax_bytes <= 0.8 * 400 * KB
    assert "clamped" in p.rationale["kmax_bytes"].note
    assert check_ecn(p, "s", "p") == [] or [f.rule for f in check_ecn(p, "s", "p")] == ["RT211"]


def test_trigger_too_small_still_produces_flagged_profile() -> None:
    p = ecn(400, 10.0, 8, trigger=20 * KB, profile="bdp")  # < 2 jumbo frames / 0.8
    assert p.kmin_bytes < p.kmax_bytes <= 20 * KB
    assert not p.fluid.ok and "too small" in p.rationale["fluid"].note
    assert [f.rule for f in check_ecn(p, "s", "p")] == ["RT211"]


def test_drop_thresholds_only_when_separate() -> None:
    a, b = ecn(sep=False), ecn(sep=True)
    assert a.drop_min_bytes is None and a.drop_max_bytes is None and a.drop_probability_percent is None
    assert b.drop_min_bytes is not None and b.drop_max_bytes is not None
    assert b.kmax_bytes <= b.drop_min_bytes < b.drop_max_bytes  # mark before drop


def test_name_default_and_validation() -> None:
    p = ecn(400, 10.0, 8)
    assert p.name == "ROCE_LOSSLESS_400G_N8" and PROFILE_NAME_RE.match(p.name)
    assert ecn(name="MY-PROFILE_1").name == "MY-PROFILE_1"
    with pytest.raises(ValueError, match="must match"):
        ecn(name="bad name;rm")


def test_bad_inputs() -> None:
    with pytest.raises(ValueError, match="unknown ECN profile"):
        ecn(profile="cisco")
    with pytest.raises(ValueError):
        ecn(rtt=0)


# --- overrides -----------------------------------------------------------------------------------
def test_override_pinned_and_still_checked() -> None:
    derived = ecn(100, 10.0, 8, trigger=100_000)
    p = ecn(100, 10.0, 8, trigger=100_000, overrides={"kmax_bytes": 1_200_000})
    r = p.rationale["kmax_bytes"]
    assert p.kmax_bytes == 1_200_000 and r.pinned_by_user and r.derived_value == derived.kmax_bytes
    assert any(f.rule == "RT210" for f in check_ecn(p, "leaf1", "Ethernet0"))


def test_override_spellings_and_kmin_ge_kmax() -> None:
    p = ecn(overrides={"kmin_bytes": "150KB", "pmax_percent": "5%"})
    assert p.kmin_bytes == 150_000 and p.pmax_percent == 5.0 and p.kmin_bytes < p.kmax_bytes
    bad = ecn(overrides={"kmin_bytes": 500_000, "kmax_bytes": 400_000})
    assert any("Kmin" in f.message and f.rule == "RT210" for f in check_ecn(bad, "s", None))


def test_low_pinned_pmax_fails_fluid() -> None:
    p = ecn(100, 10.0, 256, overrides={"pmax_percent": 1})
    assert p.rationale["pmax_percent"].pinned_by_user and not p.fluid.on_ramp
    assert any(f.rule == "RT211" for f in check_ecn(p, "s", None))


@pytest.mark.parametrize("ov", [{"pmax_percent": 0}, {"pmax_percent": 150}, {"kmin_bytes": -1},
                                {"kmax_bytes": "lots"}, {"xoff_bytes": 1}])
def test_impossible_overrides_raise(ov: dict) -> None:
    with pytest.raises(ValueError):
        ecn(overrides=ov)


# --- properties ---------------------------------------------------------------------------------
@settings(max_examples=150, deadline=None)
@given(speed=st.sampled_from(SPEEDS), rtt=st.floats(1, 50), fan_in=st.integers(1, 256),
       trigger=st.integers(50 * KB, 50_000 * KB))
def test_kmin_lt_kmax_le_trigger(speed: int, rtt: float, fan_in: int, trigger: int) -> None:
    p = ecn(speed, rtt, fan_in, trigger=trigger)
    assert 0 < p.kmin_bytes < p.kmax_bytes <= fan_in * trigger
    # the derived ramp never trips RT210; a PFC-bound steady state is reported (RT211), never "ok"
    assert [f.rule for f in check_ecn(p, "d", None)] in ([], ["RT211"])
    assert p.fluid.ok == (p.fluid.steady_state == "ramp")


@settings(max_examples=60, deadline=None)
@given(rtt=st.floats(1, 50), fan_in=st.integers(1, 256), trigger=st.integers(50 * KB, 50_000 * KB),
       pair=st.tuples(st.sampled_from(SPEEDS), st.sampled_from(SPEEDS)))
def test_thresholds_non_decreasing_in_speed(rtt: float, fan_in: int, trigger: int,
                                            pair: tuple[int, int]) -> None:
    """BDP grows with R at fixed RTT; the trigger clamp is speed-independent."""
    lo, hi = sorted(pair)
    a, b = ecn(lo, rtt, fan_in, trigger=trigger), ecn(hi, rtt, fan_in, trigger=trigger)
    assert a.kmax_bytes <= b.kmax_bytes and a.kmin_bytes <= b.kmin_bytes


@settings(max_examples=60, deadline=None)
@given(speed=st.sampled_from(SPEEDS), rtt=st.floats(1, 50), n=st.integers(1, 255))
def test_kmax_and_pmax_non_decreasing_in_fan_in(speed: int, rtt: float, n: int) -> None:
    """More flows: p* rises (CoNEXT'16), so Pmax may not fall; Kmax multiplier rises 2 -> 3."""
    a, b = ecn(speed, rtt, n), ecn(speed, rtt, n + 1)
    assert a.kmax_bytes <= b.kmax_bytes and a.pmax_percent <= b.pmax_percent


@settings(max_examples=60, deadline=None)
@given(speed=st.sampled_from(SPEEDS), fan_in=st.integers(1, 256), r1=st.floats(1, 50), r2=st.floats(1, 50))
def test_thresholds_non_decreasing_in_rtt(speed: int, fan_in: int, r1: float, r2: float) -> None:
    assume(r1 != r2)
    lo, hi = sorted((r1, r2))
    a, b = ecn(speed, lo, fan_in), ecn(speed, hi, fan_in)
    assert a.kmin_bytes <= b.kmin_bytes and a.kmax_bytes <= b.kmax_bytes


# --- CLI helper --------------------------------------------------------------------------------
def test_calc_ecn_cli_spellings() -> None:
    p = calc_ecn("400G", "10us", 8)
    assert p.speed_gbps == 400 and p.base_rtt_us == 10.0 and p.fan_in == 8
    assert p.pfc_trigger_bytes == p.kmax_bytes and "not given" in p.rationale["pfc_trigger_bytes"].note
    assert p.kmax_bytes >= 8 * 400 * 125 * 10  # the first-RTT burst N x BDP
    q = calc_ecn("400G", "0.01ms", 8, pfc_trigger_bytes="1MB")
    assert q.kmax_bytes <= 8 * 1_000_000 / 2 and q.pfc_onset_bytes == 8_000_000  # half the egress onset
    assert q.base_rtt_us == pytest.approx(10.0)
    assert calc_ecn("100G", "10us", 8, profile="sonic-default").kmax_bytes == 2_097_152


def test_calc_ecn_without_a_trigger_shows_no_stand_in_onset() -> None:
    """Without --pfc-trigger the onset is unknown: None, and the 2^62 B stand-in the ramp is derived with
    appears in no rationale (it printed as pfc_onset_bytes 4611686018427387904)."""
    p = calc_ecn("400G", "10us", 8)
    assert p.pfc_onset_bytes is None
    assert all(v != 1 << 62 for why in p.rationale.values() for v in why.inputs.values())
    assert "4611686018427387904" not in p.model_dump_json()


def test_ecn_module_exposes_calc_dcqcn_for_the_cli() -> None:
    from roce_tune.tuner import ecn

    # firmware (docs/derivation.md#dcqcn-increase-steps)
    assert ecn.calc_dcqcn("100G").params["rpg_ai_rate_mbps"] == 5
