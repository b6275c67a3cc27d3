"""The shipped ASIC / NIC / switch-model catalog: completeness, citations, published constants."""

from __future__ import annotations

import re

import pytest
from pydantic import ValidationError

from roce_tune.inventory.catalog import AsicSpec, CatalogError, load_catalog

CAT = load_catalog()
TAG = re.compile(r"\[(V|D|R)\]")
_NOT_NUMBERS = ("id", "name", "vendor", "sources", "family", "notes", "asic")


def _numeric_fields(entry) -> list[str]:  # type: ignore[no-untyped-def]
    return [k for k, v in entry if k not in _NOT_NUMBERS and v is not None and not isinstance(v, bool)]


def test_required_entries_present() -> None:
    asics = {a.id for a in CAT.asics}
    assert {"spectrum-1", "spectrum-2", "spectrum-3", "spectrum-4", "spectrum-5", "tomahawk-2", "tomahawk-3",
            "tomahawk-4", "tomahawk-5", "trident-4", "jericho2", "cloudscale-gx2"} <= asics
    assert {"connectx-6-dx", "connectx-7", "bluefield-3"} <= {n.id for n in CAT.nics}
    assert {"SN2700", "SN3700", "SN4600C", "SN4700", "SN5600", "7060X6-64PE", "7060DX5-64S", "7800R3",
            "DellEMC-Z9332f", "QFX5130-32CD", "QFX5220-32CD", "QFX5240-64OD",
            "N9K-C9364D-GX2A"} <= {s.id for s in CAT.switch_models}


@pytest.mark.parametrize("entry", [*CAT.asics, *CAT.nics, *CAT.switch_models], ids=lambda e: e.id)
def test_every_number_has_a_tagged_citation(entry) -> None:  # type: ignore[no-untyped-def]
    for field in _numeric_fields(entry):
        citation = entry.sources.get(field, "")
        assert citation.strip(), f"{entry.id}.{field} has no source"
        assert TAG.search(citation), f"{entry.id}.{field} citation lacks a [V]/[D]/[R] tag: {citation!r}"
    assert set(entry.sources) <= {k for k, _ in entry}, f"{entry.id}: source for an unknown field"


def test_uncited_number_is_rejected() -> None:
    data = CAT.asic("spectrum-3").model_dump()
    del data["sources"]["cell_bytes"]
    with pytest.raises(ValidationError, match="no source for cell_bytes"):
        AsicSpec.model_validate(data)


@pytest.mark.parametrize("lookup, bad, known", [
    ("asic", "spectrum-9", "spectrum-3"), ("nic", "connectx-9", "connectx-7"),
    ("switch_model", "SN9999", "SN4700")])
def test_unknown_ids_list_known_ones(lookup: str, bad: str, known: str) -> None:
    with pytest.raises(CatalogError) as exc:
        getattr(CAT, lookup)(bad)
    assert bad in str(exc.value) and known in str(exc.value)


def test_switch_model_lookup_is_case_insensitive() -> None:
    assert CAT.switch_model("sn4700").asic == "spectrum-3"
    assert CAT.switch_model("dellemc-z9332F").asic == "tomahawk-3"


# --- published constants (DOMAIN.md §1.2 asic_table.j2, §6) --------------------------------------------
@pytest.mark.parametrize("asic_id, cell", [
    ("spectrum-1", 96), ("spectrum-2", 144), ("spectrum-3", 144), ("spectrum-4", 192), ("spectrum-5", 192),
    ("tomahawk-2", 208), ("tomahawk-3", 254), ("tomahawk-5", 254)])
def test_cell_sizes(asic_id: str, cell: int) -> None:
    assert CAT.asic(asic_id).cell_bytes == cell


@pytest.mark.parametrize("asic_id", ["spectrum-1", "spectrum-2", "spectrum-3", "spectrum-4", "spectrum-5"])
def test_spectrum_asic_table_constants(asic_id: str) -> None:
    a = CAT.asic(asic_id)
    assert (a.pipeline_latency_bytes, a.mac_phy_delay_bytes, a.peer_response_bytes) == (19 * 1024, 0.8 * 1024,
                                                                                       3.8 * 1024)
    assert a.family == "spectrum" and a.ecn_separate_thresholds


def test_static_tables_only_for_legacy_spectrum() -> None:
    assert {a.id for a in CAT.asics if a.sonic_static_tables} == {"spectrum-1", "spectrum-2", "spectrum-3"}


@pytest.mark.parametrize("asic_id, pool", [
    ("spectrum-1", 3302912), ("spectrum-2", 12457984), ("spectrum-3", 20627456), ("spectrum-4", 52161690),
    ("tomahawk-3", 66394076), ("tomahawk-5", 165660324)])
def test_sonic_pool_sizes(asic_id: str, pool: int) -> None:
    a = CAT.asic(asic_id)
    assert a.ingress_lossless_pool_bytes == pool < a.buffer_bytes


@pytest.mark.parametrize("asic_id, serdes", [
    ("spectrum-1", 25), ("spectrum-2", 50), ("spectrum-3", 50), ("spectrum-4", 100), ("spectrum-5", 200),
    ("tomahawk-3", 50), ("tomahawk-4", 50), ("tomahawk-5", 100), ("trident-4", 50), ("jericho2", 50)])
def test_serdes(asic_id: str, serdes: int) -> None:
    assert CAT.asic(asic_id).serdes_gbps == serdes


def test_shp_support() -> None:
    assert all(CAT.asic(a).shared_headroom_pool for a in ("spectrum-2", "spectrum-3", "spectrum-4",
                                                         "tomahawk-3", "tomahawk-5"))


# --- NICs: DCQCN defaults (DOMAIN.md §3 table) -----------------------------------------------------------
DCQCN_DEFAULTS = {
    "rpg_time_reset_us": 300, "rpg_byte_reset_bytes": 32767, "rpg_threshold": 1, "rpg_max_rate_mbps": 0,
    "rpg_ai_rate_mbps": 5, "rpg_hai_rate_mbps": 50, "rpg_gd": 11, "rpg_min_dec_fac_percent": 50,
    "rpg_min_rate_mbps": 1, "rate_to_set_on_first_cnp_mbps": 0, "dce_tcp_g": 1019, "dce_tcp_rtt_us": 1,
    "rate_reduce_monitor_period_us": 4, "initial_alpha_value": 1023, "min_time_between_cnps_us": 2,
    "clamp_tgt_rate": 0, "clamp_tgt_rate_after_time_inc": 1, "cnp_dscp": 48, "cnp_802p_prio": 6,
}


@pytest.mark.parametrize("nic", CAT.nics, ids=lambda n: n.id)
def test_nic_dcqcn_defaults(nic) -> None:  # type: ignore[no-untyped-def]
    assert nic.dcqcn_defaults == DCQCN_DEFAULTS


# --- switch models -----------------------------------------------------------------------------------------
@pytest.mark.parametrize("sm", CAT.switch_models, ids=lambda s: s.id)
def test_switch_models_consistent_with_asic(sm) -> None:  # type: ignore[no-untyped-def]
    asic = CAT.asic(sm.asic)
    assert sm.max_speed_gbps <= asic.max_port_speed_gbps
    assert sm.max_logical_ports >= sm.ports


def test_asic_family_reads_the_catalog_once_for_switches_of_several_asics(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    # renderers ask for the family of every switch; with a cache of one id, a fabric whose switches
    # alternate between two ASICs read and validated the whole catalog again for each switch (issue 16)
    import roce_tune.catalog as catalog

    reads: list[str] = []
    real = catalog._read

    def counting(name: str) -> object:
        reads.append(name)
        return real(name)

    monkeypatch.setattr(catalog, "_read", counting)
    catalog.asic_family.cache_clear()
    catalog._shipped_catalog.cache_clear()
    families = [catalog.asic_family(a) for a in ["spectrum-4", "tomahawk-5"] * 20]
    assert families == ["spectrum", "tomahawk"] * 20
    assert len(reads) == 3  # asics.yaml, nics.yaml, switch_models.yaml: once
