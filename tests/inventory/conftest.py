"""Shared fixtures for the inventory tests."""

from __future__ import annotations

import pytest

from roce_tune.findings import Finding, RoceTuneError
from roce_tune.inventory import loader
from roce_tune.inventory.catalog import Catalog, load_catalog
from roce_tune.inventory.yamlpos import compose_ruamel


@pytest.fixture(scope="session")
def catalog() -> Catalog:
    """The shipped hardware catalog (roce_tune/catalog/*.yaml)."""
    return load_catalog()


@pytest.fixture(params=["fast", "ruamel"])
def reader(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Run a test once with the fast block-subset reader allowed and once with ruamel.yaml only."""
    if request.param == "ruamel":
        monkeypatch.setattr(loader, "parse_yaml", compose_ruamel)
    return str(request.param)


def load_errors(text: str, name: str = "inv.yaml") -> list[Finding]:
    """The findings a failing load raises (fails the test if the load succeeds)."""
    with pytest.raises(RoceTuneError) as exc:
        loader.load_inventory_text(text, name)
    return exc.value.findings
