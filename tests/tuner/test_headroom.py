"""PFC headroom against published oracles (DOMAIN.md §Oracles A-D, SONiC pg_profile_lookup.ini tables)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from roce_tune.inventory.catalog import CatalogError, load_catalog
from roce_tune.inventory.models import HeadroomModel
from roce_tune.tuner.headroom import (
    cable_bytes,
    calc_headroom,
    cell_occupancy,
    compute_headroom,
    compute_headroom_sonic_lua,
    nic_xoff_bytes,
    pause_quanta,
    peer_response_bytes,
    select_headroom_model,
    with_model_comparison,
)
from roce_tune.units import KNOWN_SPEEDS_GBPS

DATA = Path(__file__).resolve().parents[1] / "data" / "sonic_pg_profile"
CAT = load_catalog()
NAME_RE = re.compile(r"^[A-Za-z][A-Za-z0-9_-]*$")


def _table(name: str) -> list[tuple[int, float, int, int, int, int]]:
    """Rows (speed_gbps, cable_m, size, xon, xoff, threshold) of a SONiC pg_profile_lookup.ini copy."""
    rows = []
    for line in (DATA / name).read_text().splitlines():
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        speed, cable, size, xon, xoff, threshold = line.split()[:6]
        rows.append((int(speed) // 1000, float(cable.rstrip("m")), int(size), int(xon), int(xoff),
                     int(threshold)))
    return rows


# --- component oracles (DOMAIN.md Oracle C, "Component oracles") ----------------------------------
def test_cable_bytes_400g_40m_true_and_lua_units() -> None:
    assert cable_bytes(400, 40) == pytest.approx(20202.0, abs=0.05)
    assert cable_bytes(400, 40, lua_units=True) == pytest.approx(19728.5, abs=0.05)
    assert cable_bytes(400, 40, lua_units=True) == pytest.approx(cable_bytes(400, 40) * 1000 / 1024)


@pytest.mark.parametrize("speed_gbps, expected", [
    (10, 4288), (25, 5120), (40, 7552), (50, 9408), (100, 25216), (200, 28992), (400, 57920), (800, 57920)])
def test_peer_response_bytes_oracle(speed_gbps: int, expected: int) -> None:
    assert peer_response_bytes(speed_gbps) == expected


def test_pause_quanta_unknown_speed_names_known_speeds() -> None:
    with pytest.raises(ValueError, match="known: .*400G"):
        pause_quanta(1600)


def test_cell_occupancy_oracle_b_factor() -> None:
    # Oracle B: Spectrum-1 (96-B cells) inflates by 192/97; 192-B cells by 192/64.
    assert cell_occupancy(96) == pytest.approx(192 / 97)
    assert cell_occupancy(192) == pytest.approx(3.0)
    assert cell_occupancy(192, 0) == 1.0


# --- Oracle C: current SONiC Lua, bit for bit ------------------------------------------------------
SP1, SP3, SP4 = CAT.asic("spectrum-1"), CAT.asic("spectrum-3"), CAT.asic("spectrum-4")
SP2 = CAT.asic("spectrum-2")
SP6 = SP4.model_copy(update={"id": "spectrum-6", "cell_bytes": 256, "pipeline_latency_bytes": 42 * 1024})

ORACLE_C = [
    (SP1, 100, 5, 4, 19456, 72704, 92160), (SP1, 100, 40, 4, 19456, 80896, 100352),
    (SP2, 100, 5, 4, 19456, 81920, 101376), (SP3, 100, 40, 4, 19456, 92160, 111616),
    (SP2, 400, 5, 4, 19456, 159744, 179200), (SP3, 400, 40, 4, 19456, 198656, 218112),
    (SP3, 400, 300, 4, 19456, 487424, 506880),
    (SP4, 400, 5, 4, 19456, 211968, 231424), (SP4, 400, 40, 4, 19456, 264192, 283648),
    (SP4, 400, 300, 4, 19456, 649216, 668672),
    (SP4, 800, 5, 8, 37888, 220160, 267264), (SP4, 800, 40, 8, 37888, 323584, 370688),
    (SP6, 800, 40, 4, 43008, 431104, 474112),
]


@pytest.mark.parametrize("asic, speed, cable, lanes, xon, xoff, size", ORACLE_C,
                         ids=[f"{r[0].id}-{r[1]}G-{r[2]}m-{r[3]}l" for r in ORACLE_C])
def test_sonic_lua_reproduces_oracle_c(asic, speed, cable, lanes,  # type: ignore[no-untyped-def]
                                       xon, xoff, size) -> None:
    hr = compute_headroom_sonic_lua(asic, speed, cable, 9100, lanes=lanes)
    assert (hr.xon_bytes, hr.xoff_bytes, hr.size_bytes) == (xon, xoff, size)
    assert hr.model == "sonic-lua"
    assert compute_headroom(asic, speed, cable, 9100, lanes=lanes, model="sonic-lua") == hr


def test_sonic_lua_shared_headroom_pool_size_is_xon() -> None:
    hr = compute_headroom_sonic_lua(SP4, 400, 40, 9100, lanes=4, shared_headroom_pool=True)
    assert (hr.xoff_bytes, hr.size_bytes) == (264192, 19456)


# --- sonic-static: every row of the published SONiC tables --------------------------------------
STATIC = [("spectrum-1", "ACS-MSN2700.ini", row) for row in _table("ACS-MSN2700.ini")] + \
         [("spectrum-3", "ACS-MSN4700.ini", row) for row in _table("ACS-MSN4700.ini")]


def test_static_tables_complete() -> None:
    assert len(STATIC) == 15 + 21  # DOMAIN.md §1.4: all 15 SN2700 rows and all 21 SN4700 rows


@pytest.mark.parametrize("asic_id, table, row", STATIC, ids=[f"{a}-{r[0]}G-{r[1]:g}m" for a, _, r in STATIC])
def test_sonic_static_reproduces_every_row(asic_id: str, table: str,
                                           row: tuple) -> None:  # type: ignore[type-arg]
    speed, cable, size, xon, xoff, _ = row
    asic = CAT.asic(asic_id)
    assert asic.sonic_static_tables
    hr = compute_headroom(asic, speed, cable, 9216, model=HeadroomModel.sonic_static)
    assert (hr.xon_bytes, hr.xoff_bytes, hr.size_bytes) == (xon, xoff, size), table


def test_sn5600_table_is_not_reproduced_and_catalog_says_so() -> None:
    # DOMAIN.md §1.4: the SP4 table has an extra term; Oracle A row 400G/40m = 303104/19456/283648.
    row = next(r for r in _table("ACS-SN5600.ini") if r[:2] == (400, 40.0))
    assert row[2:5] == (303104, 19456, 283648)
    assert not SP4.sonic_static_tables
    hr = compute_headroom(SP4, 400, 40, 9216, model="sonic-static")
    assert (hr.xon_bytes, hr.xoff_bytes, hr.size_bytes) != row[2:5]
    assert "NOT generated" in hr.rationale["xoff_bytes"].note


# --- Oracle D: mlx5 kernel integer formula ---------------------------------------------------------
@pytest.mark.parametrize("speed, cable, mtu, xoff", [
    (25, 7, 1500, 16720), (100, 7, 1500, 35680), (100, 7, 9000, 56080), (200, 7, 4200, 74624),
    (400, 7, 4200, 137824), (400, 7, 9000, 150880), (400, 30, 9000, 170480)])
def test_nic_xoff_oracle_d(speed: int, cable: int, mtu: int, xoff: int) -> None:
    assert nic_xoff_bytes(speed, cable, mtu) == xoff


# --- ieee model -------------------------------------------------------------------------------------
def test_ieee_uses_true_cable_bytes_and_pause_quanta() -> None:
    hr = compute_headroom(SP4, 400, 40, 9100, lanes=4)
    inputs = hr.rationale["xoff_bytes"].inputs
    assert inputs["cable_bytes"] == pytest.approx(20202.0, abs=0.05)
    assert inputs["peer_response_bytes"] == 57920
    # true cable bytes exceed the Lua's, everything else equal: never less headroom than SONiC
    assert hr.xoff_bytes >= compute_headroom_sonic_lua(SP4, 400, 40, 9100, lanes=4).xoff_bytes


def test_default_lanes_apply_8_lane_rule_on_spectrum_3_400g() -> None:
    hr = compute_headroom(SP3, 400, 5, 9216)
    assert hr.lanes == 8 and hr.xon_bytes == 2 * 19456 - 1024
    assert hr.size_bytes >= hr.xoff_bytes + hr.xon_bytes + 9216
    assert CAT.asic("tomahawk-3").family != "spectrum"
    assert compute_headroom(CAT.asic("tomahawk-3"), 400, 5, 9216).xon_bytes == 3072  # 2540 B rounded to 1 KiB


def test_rationale_for_each_number() -> None:
    hr = compute_headroom(SP3, 100, 40, 9216)
    for field in ("xon_bytes", "xoff_bytes", "size_bytes", "size_cells", "lanes"):
        r = hr.rationale[field]
        assert r.formula and r.source
    assert {"speed_gbps", "cable_m", "port_mtu_bytes", "cell_bytes"} <= set(hr.rationale["xoff_bytes"].inputs)
    assert hr.size_cells * SP3.cell_bytes >= hr.size_bytes > (hr.size_cells - 1) * SP3.cell_bytes


def test_profile_names() -> None:
    assert compute_headroom(SP4, 400, 40, 9216).profile == "pg_lossless_400000_40m_profile"
    assert compute_headroom(SP4, 400, 2.5, 9216).profile == "pg_lossless_400000_2p5m_profile"
    # different inputs never share a name
    a = compute_headroom(SP4, 400, 40, 9216, shared_headroom_pool=True)
    b = compute_headroom(SP4, 400, 40, 9100)
    assert len({a.profile, b.profile, "pg_lossless_400000_40m_profile"}) == 3


def test_errors() -> None:
    with pytest.raises(ValueError, match="maximum port speed"):
        compute_headroom(SP1, 400, 5, 9216)
    with pytest.raises(ValueError, match="unknown headroom model"):
        compute_headroom(SP1, 100, 5, 9216, model="magic")
    with pytest.raises(ValueError):
        compute_headroom(SP1, 100, -1, 9216)


def test_calc_headroom_parses_units() -> None:
    """Without ``model`` calc gives the model ``plan`` uses for the ASIC (sonic-static on Spectrum-3), with
    the other model's numbers in its rationale; unit spellings give the same result."""
    chosen, other, reason = select_headroom_model(SP3, None)
    assert chosen == "sonic-static"
    expected = with_model_comparison(compute_headroom(SP3, 400, 40.0, 9216, model=chosen),
                                     compute_headroom(SP3, 400, 40.0, 9216, model=other), reason)
    assert calc_headroom("spectrum-3", "400G", "40m") == expected
    assert calc_headroom("spectrum-3", "400000", "40", catalog=CAT) == expected
    assert calc_headroom("spectrum-3", "400G", "40m", model="ieee") == compute_headroom(SP3, 400, 40.0, 9216)
    assert calc_headroom("spectrum-1", "100G", "5m", model="sonic-static").xoff_bytes == 30720  # Oracle A row
    with pytest.raises(CatalogError, match="known: .*spectrum-3"):
        calc_headroom("spectrum-9", "100G", "5m")
    with pytest.raises(ValueError):
        calc_headroom("spectrum-3", "fast", "5m")


@pytest.mark.parametrize("mtu", [99999, 1000, 0])
def test_calc_headroom_refuses_an_mtu_no_port_has(mtu: int) -> None:
    """--mtu 99999 sized xoff for a frame no Ethernet port sends; the inventory's port MTU range applies."""
    with pytest.raises(ValueError, match="outside the 1500..9216 B"):
        calc_headroom("spectrum-3", "400G", "3m", mtu=mtu, catalog=CAT)
    assert calc_headroom("spectrum-3", "400G", "3m", mtu=9100, catalog=CAT).xoff_bytes > 0


# --- properties -------------------------------------------------------------------------------------
ASICS = CAT.asics
MODELS = ["ieee", "sonic-static"]


def _speeds(asic) -> list[int]:  # type: ignore[no-untyped-def]
    return [s for s in KNOWN_SPEEDS_GBPS if s <= asic.max_port_speed_gbps]


@settings(max_examples=150, deadline=None)
@given(asic=st.sampled_from(ASICS), model=st.sampled_from(MODELS), a=st.floats(0, 2000), b=st.floats(0, 2000),
       data=st.data(), shp=st.booleans())
def test_monotonic_in_cable_length(asic, model, a, b, data, shp) -> None:  # type: ignore[no-untyped-def]
    speed = data.draw(st.sampled_from(_speeds(asic)))
    lo, hi = sorted((a, b))
    h_lo = compute_headroom(asic, speed, lo, 9216, model=model, shared_headroom_pool=shp)
    h_hi = compute_headroom(asic, speed, hi, 9216, model=model, shared_headroom_pool=shp)
    assert h_lo.xoff_bytes <= h_hi.xoff_bytes and h_lo.size_bytes <= h_hi.size_bytes
    assert NAME_RE.match(h_lo.profile) and NAME_RE.match(h_hi.profile)


@settings(max_examples=100, deadline=None)
@given(asic=st.sampled_from(ASICS), model=st.sampled_from(MODELS), cable=st.floats(0, 2000),
       mtu=st.integers(1500, 9216))
def test_monotonic_in_speed_and_size_covers_xoff_xon(asic, model,  # type: ignore[no-untyped-def]
                                                     cable, mtu) -> None:
    prev = None
    for speed in _speeds(asic):
        hr = compute_headroom(asic, speed, cable, mtu, model=model)
        assert hr.size_bytes >= hr.xoff_bytes + hr.xon_bytes
        assert hr.size_bytes % 1024 == hr.xoff_bytes % 1024 == hr.xon_bytes % 1024 == 0
        if prev is not None:
            assert hr.xoff_bytes >= prev.xoff_bytes and hr.size_bytes >= prev.size_bytes
        prev = hr
        assert compute_headroom(asic, speed, cable, mtu, model=model, shared_headroom_pool=True).size_bytes \
            == hr.xon_bytes


def test_static_pg_thresholds_have_hysteresis() -> None:
    """Static-PG view (NX-OS pause buffer-size/pause-threshold/resume-threshold): pause = buffer - xoff,
    resume one port MTU lower (mlx5 port_buffer.c structure), buffer large enough to keep resume >= a cell."""
    from roce_tune.plan import Headroom
    from roce_tune.tuner.headroom import static_pg_thresholds

    hr = Headroom(model="ieee", profile="p", xon_bytes=19456, xoff_bytes=72704, size_bytes=92160,
                  size_cells=960, lanes=4)
    s = static_pg_thresholds(hr, 9216, 96)
    assert (s.static_buffer_bytes, s.pause_threshold_bytes, s.resume_threshold_bytes) == (92160, 19456, 10240)
    assert s.resume_threshold_bytes < s.pause_threshold_bytes
    assert s.rationale["resume_threshold_bytes"].formula == "pause_threshold - port_mtu"
    # shared-headroom-pool profile (size = xon): a static PG still needs xon + xoff
    shp = static_pg_thresholds(hr.model_copy(update={"size_bytes": 19456}), 9216, 96)
    assert shp.static_buffer_bytes == 92160
    # tiny xon: the buffer grows to xoff + MTU + cell so resume stays a whole cell above empty
    small = static_pg_thresholds(hr.model_copy(update={"xon_bytes": 1024, "size_bytes": 1024}), 9216, 254)
    assert (small.pause_threshold_bytes, small.resume_threshold_bytes) == (9216 + 254, 254)
    with pytest.raises(ValueError):
        static_pg_thresholds(hr, 0, 96)
    # the tuner fills them for every derived lossless port
    derived = compute_headroom(load_catalog().asic("spectrum-1"), 100, 5, 9216)
    assert derived.resume_threshold_bytes == derived.pause_threshold_bytes - 9216 > 0


# --- default headroom model: the vendor-validated one where the catalog has it ----------------------
def test_default_model_is_vendor_validated_where_the_catalog_has_it() -> None:
    from roce_tune.tuner.headroom import select_headroom_model

    cat = load_catalog()
    for asic_id in ("spectrum-1", "spectrum-2", "spectrum-3"):
        assert select_headroom_model(cat.asic(asic_id), None)[:2] == ("sonic-static", "ieee")
    for asic_id in ("spectrum-4", "tomahawk-3", "trident-4", "cloudscale-gx2"):
        assert select_headroom_model(cat.asic(asic_id), None)[:2] == ("ieee", "sonic-static")
    chosen, other, reason = select_headroom_model(cat.asic("spectrum-1"), HeadroomModel.ieee)
    assert (chosen, other) == ("ieee", "sonic-static") and "policy.headroom_model" in reason


def test_plan_shows_both_models_and_the_reason() -> None:
    """lab-2node (Spectrum-3, no headroom_model): sonic-static is rendered, ieee's numbers are beside it in
    the rationale and in plan.md; the DOMAIN.md oracle pair (SP1 100G/5 m: 30,720 vs 72,704 B) holds."""
    from roce_tune.render.outputs import render_outputs
    from tests.render.golden import pipeline_plan

    sp1 = load_catalog().asic("spectrum-1")
    assert compute_headroom(sp1, 100, 5, 9216, model="sonic-static").xoff_bytes == 30720
    assert compute_headroom_sonic_lua(sp1, 100, 5).xoff_bytes == 72704

    plan = pipeline_plan("lab-2node")
    assert plan.policy["headroom_model"] is None
    ports = [p for sw in plan.switches for p in sw.ports if p.headroom is not None]
    assert ports
    for p in ports:
        why = p.headroom.rationale["model"]
        assert p.headroom.model == "sonic-static" and why.inputs["other_model"] == "ieee"
        assert why.inputs["sonic-static_xoff_bytes"] == p.headroom.xoff_bytes < why.inputs["ieee_xoff_bytes"]
        assert "vendor-validated" in why.note
    md = render_outputs(plan, include_hosts=False)["plan.md"]
    section = md.split("## PFC headroom")[1].split("## Buffers")[0]
    assert "| other model | its xoff B | its size B |" in section
    hr = ports[0].headroom
    assert f"| sonic-static | {hr.xon_bytes} | {hr.xoff_bytes} | {hr.size_bytes} |" in section
    assert f"| ieee | {hr.rationale['model'].inputs['ieee_xoff_bytes']} |" in section
    assert "- spectrum-3: **sonic-static** — default: spectrum-3 has SONiC's vendor-validated" in section
    # site.yaml pins ieee: kept, and the static numbers are still shown
    site = pipeline_plan("site")
    hs = [p.headroom for sw in site.switches for p in sw.ports if p.headroom is not None]
    assert {h.model for h in hs} == {"ieee"} and all("sonic-static_xoff_bytes" in h.rationale["model"].inputs
                                                     for h in hs)
