"""Paths shared by the verify tests."""

from __future__ import annotations

from pathlib import Path

import pytest

FIXTURES = Path(__file__).parent / "fixtures"
#: Curated field captures (``<repo>/../shared/field-cases/nccl``); tests skip when absent.
FIELD_NCCL = Path(__file__).resolve().parents[2].parent / "shared" / "field-cases" / "nccl"


@pytest.fixture
def field_case():
    """Path of one field case, skipping the test when the field-case folder is not present."""

    def get(name: str) -> Path:
        path = FIELD_NCCL / name
        if not path.is_file():
            pytest.skip(f"field case {path} not present")
        return path

    return get
