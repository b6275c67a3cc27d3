"""The hardware catalog, for existing imports: it lives in :mod:`roce_tune.catalog` (below both the inventory
and the platforms, so that they do not import each other)."""

from __future__ import annotations

from roce_tune.catalog import AsicSpec, Catalog, CatalogError, NicSpec, SwitchModelSpec, load_catalog

__all__ = ["AsicSpec", "Catalog", "CatalogError", "NicSpec", "SwitchModelSpec", "load_catalog"]
