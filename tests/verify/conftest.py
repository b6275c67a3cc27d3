"""Paths shared by the verify tests."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.references import reference

FIXTURES = Path(__file__).parent / "fixtures"


@pytest.fixture
def field_case():
    """Path of one nccl-tests capture of the ``field-cases`` reference set (``tests/references.py``),
    skipping the test when it is not present."""

    def get(name: str) -> Path:
        return reference("field-cases", "nccl", name)

    return get
