"""RT250: a plan names the recalled/assumed ([R]) catalog constants it rests on, per ASIC in use."""

from __future__ import annotations

from pathlib import Path

import pytest

from roce_tune.findings import Severity
from roce_tune.inventory.catalog import Catalog, load_catalog
from roce_tune.inventory.loader import load_inventory
from roce_tune.inventory.topology import asic_of
from roce_tune.tuner.compose import build_plan
from roce_tune.tuner.provenance import SAFETY_FIELDS, TUNING_FIELDS, check_catalog_provenance

REPO = Path(__file__).resolve().parents[2]


def _with_sources(catalog: Catalog, asic_id: str, tag_of: dict[str, str]) -> Catalog:
    """``catalog`` with ``asic_id``'s sources re-tagged: every field [V], except ``tag_of`` overrides."""
    asics = []
    for a in catalog.asics:
        if a.id == asic_id:
            sources = {k: "[V] test" for k in a.sources}
            sources.update({k: f"{tag} test citation" for k, tag in tag_of.items()})
            a = a.model_copy(update={"sources": sources})
        asics.append(a)
    return catalog.model_copy(update={"asics": asics})


@pytest.fixture(scope="module")
def lab():  # type: ignore[no-untyped-def]
    return load_inventory(REPO / "inventories" / "lab-2node.yaml").inventory


def test_all_verified_gives_no_finding(lab) -> None:  # type: ignore[no-untyped-def]
    cat = load_catalog()
    asic = asic_of(lab.switches[0], cat)
    assert check_catalog_provenance(lab, _with_sources(cat, asic, {})) == []


@pytest.mark.parametrize("field", sorted(SAFETY_FIELDS))
def test_a_recalled_headroom_or_buffer_constant_is_a_warning(lab, field: str) -> None:  # type: ignore[no-untyped-def]
    cat = load_catalog()
    asic = asic_of(lab.switches[0], cat)
    out = check_catalog_provenance(lab, _with_sources(cat, asic, {field: "[R]", "serdes_gbps": "[D]"}))
    assert [(f.rule, f.severity) for f in out] == [("RT250", Severity.warning)]
    assert f"{field}=" in out[0].message and SAFETY_FIELDS[field] in out[0].message
    assert out[0].location.device == lab.switches[0].name


@pytest.mark.parametrize("field", sorted(TUNING_FIELDS))
def test_a_recalled_tuning_constant_is_info(lab, field: str) -> None:  # type: ignore[no-untyped-def]
    cat = load_catalog()
    asic = asic_of(lab.switches[0], cat)
    out = check_catalog_provenance(lab, _with_sources(cat, asic, {field: "[R]"}))
    assert [(f.rule, f.severity) for f in out] == [("RT250", Severity.info)]
    assert f"{field}=" in out[0].message


def test_shipped_mixed_vendor_plan_names_each_asic_once_per_kind() -> None:
    inv = load_inventory(REPO / "inventories" / "mixed-vendor.yaml").inventory
    cat = load_catalog()
    plan = build_plan(inv, cat)
    rt250 = [f for f in plan.findings if f.rule == "RT250"]
    in_use = {asic_of(sw, cat) for sw in inv.switches}
    for asic_id in in_use:
        asic = cat.asic(asic_id)
        for fields, severity in ((SAFETY_FIELDS, Severity.warning), (TUNING_FIELDS, Severity.info)):
            recalled = [f for f in fields if asic.sources.get(f, "").startswith("[R]")]
            hits = [f for f in rt250 if f.severity is severity and f"({asic_id})" in f.message]
            assert len(hits) == (1 if recalled else 0), (asic_id, severity, recalled)
            for name in recalled:
                assert f"{name}=" in hits[0].message
    assert not [f for f in plan.findings if f.severity is Severity.error]
