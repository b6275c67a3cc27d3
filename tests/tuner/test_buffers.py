"""Buffer pools/profiles, SHP sizing, admission checks and the PFC trigger
(DOMAIN.md §1.3, §6, Oracles C/E)."""

from __future__ import annotations

from pathlib import Path

import pytest

from roce_tune.findings import Severity
from roce_tune.inventory.catalog import load_catalog
from roce_tune.tuner.buffers import (
    check_headroom_admission,
    check_total_buffer,
    derive_buffers,
    pg_shared_limit_bytes,
)
from roce_tune.tuner.headroom import compute_headroom, compute_headroom_sonic_lua

CAT = load_catalog()
SP1, SP3, SP4 = CAT.asic("spectrum-1"), CAT.asic("spectrum-3"), CAT.asic("spectrum-4")
TH3, TH5 = CAT.asic("tomahawk-3"), CAT.asic("tomahawk-5")
DATA = Path(__file__).resolve().parents[1] / "data" / "sonic_pg_profile"


def _ports(hr, n_ports: int, pgs: int = 2):  # type: ignore[no-untyped-def]
    return [(f"Ethernet{i * 8}", hr, pgs) for i in range(n_ports)]


# --- SHP oracle (DOMAIN.md Oracle C, last line) ----------------------------------------------------
def test_shared_headroom_pool_oracle() -> None:
    # 32 ports x 2 lossless PGs x xoff 264192 - 32 x 10240 = 16,580,608 -> ratio 8 -> 2,072,576 B
    hr = compute_headroom_sonic_lua(SP4, 400, 40, 9100, lanes=4, shared_headroom_pool=True)
    assert hr.xoff_bytes == 264192
    buf = derive_buffers(SP4, _ports(hr, 32), 32, True, 8)
    why = buf.rationale["shared_headroom_pool_bytes"].inputs
    assert why["shp_ratio_bytes"] == 2_072_576  # the Lua's pool, reproduced
    # ... raised to the lossless-safety floor: 64 PGs / ratio 8 = 8 PGs in headroom at once, 8 x 264192
    assert why["shp_required_bytes"] == 8 * 264192 == 2_113_536
    assert buf.shared_headroom_pool_bytes == 2_113_536
    pool = next(p for p in buf.pools if p.name == "ingress_lossless_pool")
    assert pool.xoff_bytes == 2_113_536 and pool.mode == "dynamic"
    assert "over_subscribe_ratio" in why


def test_shp_default_when_nothing_to_share() -> None:
    # buffer_pool_mellanox.lua: shp_size = 655360 when the computed size is 0
    buf = derive_buffers(SP4, [], 32, True, 8)
    assert buf.shared_headroom_pool_bytes == 655360


# --- dynamic threshold (DOMAIN.md §6, Oracle E) -----------------------------------------------------
@pytest.mark.parametrize("th, n, share", [
    (0, 1, 0.50), (0, 8, 1 / 9), (3, 1, 8 / 9), (3, 8, 8 / 65), (-2, 1, 0.20), (-2, 8, 0.25 / 3)])
def test_pg_shared_limit_fraction(th: int, n: int, share: float) -> None:
    pool = 10_000_000
    assert pg_shared_limit_bytes(pool, th, n) == pytest.approx(share * pool, abs=1)


def test_pg_shared_limit_edges() -> None:
    assert pg_shared_limit_bytes(1_000_000, 7, 4) == 250_000  # Mellanox SAI: 7 = alpha infinity
    assert pg_shared_limit_bytes(1_000_000, -8, 1) == 0
    assert pg_shared_limit_bytes(1_000_000, 0, 0) == pg_shared_limit_bytes(1_000_000, 0, 1)
    with pytest.raises(ValueError):
        pg_shared_limit_bytes(-1, 0, 1)


# --- Spectrum pool layout (buffer_pool_mellanox.lua, DOMAIN.md §1.3) ------------------------------
def test_spectrum_pools_follow_the_lua_accounting() -> None:
    hr = compute_headroom(SP1, 100, 5, 9216, model="sonic-static")  # SN2700 table: size 50176
    assert hr.size_bytes == 50176
    buf = derive_buffers(SP1, _ports(hr, 32), 32, False, 8)
    pools = {p.name: p for p in buf.pools}
    assert set(pools) == {"ingress_lossless_pool", "ingress_lossy_pool", "egress_lossless_pool",
                          "egress_lossy_pool"}
    # DOMAIN.md §1.3: pool = mmu - (PG reservations + lossy-PG reserve per admin-up port (x2: PG0 and the
    # management PG) + 10 KiB mirror per port + 256 KiB mgmt pool), egress lossy 9216 per port, split in two.
    reserved = 32 * 2 * 50176 + 32 * (2 * 19456 + 10 * 1024 + 9216) + 256 * 1024
    half = -(-(SP1.buffer_bytes - reserved) // 2)
    assert pools["ingress_lossless_pool"].size_bytes == pools["ingress_lossy_pool"].size_bytes == half
    assert pools["egress_lossy_pool"].size_bytes == half
    assert pools["egress_lossless_pool"].size_bytes == SP1.buffer_bytes
    assert pools["ingress_lossless_pool"].xoff_bytes is None and buf.shared_headroom_pool_bytes is None
    assert buf.headroom_total_bytes == 32 * 2 * 50176
    assert check_total_buffer(SP1, "leaf1", buf) == []


def test_eight_lane_ports_reserve_more() -> None:
    # Lua: lossy-PG and management-PG reserves are (2*19 - 1) KiB instead of 19 KiB on 8-lane ports
    hr8 = compute_headroom(SP3, 400, 5, 9216, shared_headroom_pool=True)
    assert hr8.lanes == 8
    hr4 = hr8.model_copy(update={"lanes": 4})  # same sizes, only the lane count differs

    def pool(hr):  # type: ignore[no-untyped-def]
        buf = derive_buffers(SP3, _ports(hr, 32), 32, True, 8)
        return next(p.size_bytes for p in buf.pools if p.name == "ingress_lossless_pool")

    extra = 32 * 2 * ((2 * 19 - 1) * 1024 - 19 * 1024)
    assert pool(hr4) - pool(hr8) == extra // 2


def test_profiles_one_per_distinct_headroom() -> None:
    a = compute_headroom(SP4, 400, 5, 9216, shared_headroom_pool=True)
    b = compute_headroom(SP4, 400, 40, 9216, shared_headroom_pool=True)
    buf = derive_buffers(SP4, _ports(a, 30) + [("Ethernet500", b, 2), ("Ethernet508", b, 2)], 40, True, 8)
    names = [p.name for p in buf.profiles]
    assert len(names) == len(set(names))
    assert {"ingress_lossless_profile", "ingress_lossy_profile", "egress_lossless_profile",
            "egress_lossy_profile", a.profile, b.profile} == set(names)
    pg = next(p for p in buf.profiles if p.name == b.profile)
    assert (pg.pool, pg.xon_bytes, pg.xoff_bytes, pg.size_bytes) == ("ingress_lossless_pool", b.xon_bytes,
                                                                      b.xoff_bytes, b.size_bytes)


def test_spectrum_pg_threshold_matches_sonic_table_column() -> None:
    thresholds = {int(line.split()[5]) for line in (DATA / "ACS-MSN4700.ini").read_text().splitlines()
                  if line.strip() and not line.lstrip().startswith("#")}
    hr = compute_headroom(SP3, 100, 5, 9216)
    pg = next(p for p in derive_buffers(SP3, _ports(hr, 4), 4, False, 8).profiles if p.name == hr.profile)
    assert {pg.dynamic_th} == thresholds == {0}
    lossless = next(p for p in derive_buffers(SP3, _ports(hr, 4), 4, False, 8).profiles
                    if p.name == "ingress_lossless_profile")
    assert lossless.dynamic_th == SP3.lossless_dynamic_th == 7


def test_every_number_has_a_rationale() -> None:
    for asic in (SP4, TH5):
        hr = compute_headroom(asic, 400, 40, 9216, shared_headroom_pool=True)
        buf = derive_buffers(asic, _ports(hr, 16), 16, True, 8)
        assert {"shared_headroom_pool_bytes", "headroom_total_bytes"} <= set(buf.rationale)
        for p in buf.pools:
            assert "size_bytes" in p.rationale and (p.xoff_bytes is None or "xoff_bytes" in p.rationale)
        for prof in buf.profiles:
            for field in ("size_bytes", "dynamic_th", "static_th_bytes", "xon_bytes", "xoff_bytes"):
                if getattr(prof, field) is not None:
                    assert prof.rationale[field].source, (asic.id, prof.name, field)


# --- Broadcom layout (SONiC Z9332f / 7060X6 SKUs) ----------------------------------------------------
@pytest.mark.parametrize("asic", [TH3, TH5], ids=lambda a: a.id)
def test_broadcom_layout(asic) -> None:  # type: ignore[no-untyped-def]
    hr = compute_headroom(asic, 400, 40, 9216, shared_headroom_pool=True)
    buf = derive_buffers(asic, _ports(hr, 32), 32, True, 8)
    pools = {p.name: p for p in buf.pools}
    assert set(pools) == {"ingress_lossless_pool", "egress_lossless_pool"}
    assert pools["ingress_lossless_pool"].xoff_bytes == buf.shared_headroom_pool_bytes
    assert buf.shared_headroom_pool_bytes == -(-(32 * 2 * hr.xoff_bytes) // 8)
    lossy = next(p for p in buf.profiles if p.name == "egress_lossy_profile")
    assert (lossy.pool, lossy.size_bytes) == ("egress_lossless_pool", 1778)  # SONiC TH3/TH5 SKUs: 1778 B
    pg = next(p for p in buf.profiles if p.name == hr.profile)
    assert pg.dynamic_th == asic.lossless_dynamic_th
    assert check_total_buffer(asic, "spine1", buf) == []


def test_broadcom_shp_larger_than_pool_is_flagged() -> None:
    hr = compute_headroom(TH3, 400, 2000, 9216, shared_headroom_pool=True)
    buf = derive_buffers(TH3, _ports(hr, 128, 8), 128, True, 1)
    findings = check_total_buffer(TH3, "spine1", buf)
    assert findings and all(f.rule == "RT202" and f.severity is Severity.error for f in findings)
    assert findings[0].location.device == "spine1"


# --- admission checks ---------------------------------------------------------------------------------
def test_admission_accepts_every_sonic_static_row() -> None:
    for asic, table in ((SP1, "ACS-MSN2700.ini"), (SP3, "ACS-MSN4700.ini")):
        for line in (DATA / table).read_text().splitlines():
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            speed, cable = int(line.split()[0]) // 1000, float(line.split()[1].rstrip("m"))
            hr = compute_headroom(asic, speed, cable, 9216, model="sonic-static")
            assert check_headroom_admission(asic, "leaf1", "Ethernet0", hr, 2, hr.lanes) == []


def test_admission_rejects_too_long_cable_naming_device_and_port() -> None:
    hr = compute_headroom(SP1, 100, 1000, 9216)
    findings = check_headroom_admission(SP1, "leaf7", "Ethernet12", hr, 2, 4)
    assert len(findings) == 1
    f = findings[0]
    assert (f.rule, f.severity, f.location.device, f.location.port) == ("RT201", Severity.error,
                                                                        "leaf7", "Ethernet12")
    assert "leaf7" in f.message and "Ethernet12" in f.message
    assert str(SP1.port_max_headroom_bytes) in f.message
    # the shared headroom pool takes xoff out of the per-port sum
    shp = compute_headroom(SP1, 100, 1000, 9216, shared_headroom_pool=True)
    assert check_headroom_admission(SP1, "leaf7", "Ethernet12", shp, 2, 4) == []


def test_total_buffer_overflow() -> None:
    hr = compute_headroom(SP1, 100, 2000, 9216)
    buf = derive_buffers(SP1, _ports(hr, 64, 8), 64, False, 8)
    findings = check_total_buffer(SP1, "leaf1", buf)
    assert [f.rule for f in findings] == ["RT202"]
    assert all(p.size_bytes >= 0 for p in buf.pools)


def test_bad_ratio() -> None:
    with pytest.raises(ValueError):
        derive_buffers(SP4, [], 1, True, 0)


# --- RT204: the shared headroom pool must hold the xoff of the PGs that may be paused at once -------
def test_shp_floor_is_the_k_largest_xoff() -> None:
    from roce_tune.tuner.buffers import shp_required_bytes

    assert shp_required_bytes([], 8) == (0, 0)
    assert shp_required_bytes([156672, 156672], 8) == (156672, 1)  # never less than one PG's xoff
    assert shp_required_bytes([100, 300, 200, 50], 2) == (500, 2)  # 4 PGs / 2 -> 2 paused at once
    assert shp_required_bytes([10] * 64, 8) == (80, 8)
    with pytest.raises(ValueError):
        shp_required_bytes([1], 0)


def test_rt203_fires_on_a_constructed_unsafe_pool() -> None:
    """The lab-2node case before the fix: two lossless ports, ratio 8, pool 36608 B (the ratio formula)
    against one port's xoff of about 157 KB."""
    from roce_tune.tuner.buffers import check_shared_headroom_pool

    asic = load_catalog().asic("spectrum-3")
    hr = compute_headroom(asic, 400, 5, 9216, shared_headroom_pool=True)
    ports = [("Ethernet0", hr, 1), ("Ethernet8", hr, 1)]
    unsafe = check_shared_headroom_pool("lab-leaf1", 36608, ports, 8)
    assert [(f.rule, f.severity) for f in unsafe] == [("RT204", Severity.error)]
    assert unsafe[0].location.device == "lab-leaf1" and f"largest xoff {hr.xoff_bytes} B" in unsafe[0].message
    assert check_shared_headroom_pool("lab-leaf1", hr.xoff_bytes, ports, 8) == []
    assert check_shared_headroom_pool("lab-leaf1", hr.xoff_bytes, ports, 1)  # ratio 1: both may pause
    assert check_shared_headroom_pool("lab-leaf1", None, ports, 8) == []  # no pool: PGs carry their own xoff


def test_derived_pools_are_safe_for_every_shipped_inventory() -> None:
    """The tuner sizes the pool to the floor: no shipped plan carries RT204, and lab-2node's pool holds
    at least its largest xoff (it was 36,608 B against 156,672 B)."""
    from tests.render.golden import pipeline_plan

    inventories = sorted(p.stem for p in (Path(__file__).resolve().parents[2] / "inventories").glob("*.yaml"))
    assert "lab-2node" in inventories
    for inv in inventories:
        plan = pipeline_plan(inv)
        assert not [f for f in plan.findings if f.rule == "RT204"], inv
        for sw in plan.switches:
            shp = sw.buffers.shared_headroom_pool_bytes
            xoffs = [p.headroom.xoff_bytes for p in sw.ports if p.lossless and p.headroom]
            if shp is not None and xoffs:
                assert shp >= max(xoffs), (inv, sw.name)
                assert sw.buffers.rationale["shared_headroom_pool_bytes"].inputs["shp_required_bytes"] <= shp
