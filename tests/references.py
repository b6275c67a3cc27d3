"""Third-party reference data the tests check against, read from one folder outside the repository.

Some tests compare roce-tune's output with other people's published data: SONiC's own YANG models
(``sonic-yang/``), Juniper's YANG models (``junos-yang/``), SONiC SKU buffer tables (``sonic-sku/``) and
field captures of nccl-tests and counter output (``field-cases/``). None of it is copied into this
repository (licences, size, and it is someone else's to maintain). It lives in one *references folder*:

1. ``pytest --references DIR``, else
2. the environment variable ``ROCE_TUNE_REFERENCES``, else
3. ``<repo>/../shared`` (the default).

``scripts/fetch-references DIR`` downloads the pinned public sources into ``DIR`` (needs internet).
When a set is missing, each test that needs it is skipped with a reason that starts with
:data:`SKIP_PREFIX`, and the terminal summary says once what was missing and how to get it
(``tests/conftest.py``).

Use in a test::

    from tests.references import reference

    def test_x() -> None:
        text = reference("field-cases", "counters", "x.txt").read_text()   # skips when absent
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from roce_tune.simulate.reference import Reference

REPO = Path(__file__).resolve().parents[1]
DEFAULT_ROOT = REPO.parent / "shared"
ENV_VAR = "ROCE_TUNE_REFERENCES"
#: Every skip for missing reference data starts with this; the terminal summary counts on it.
SKIP_PREFIX = "reference data missing"
FETCH_SCRIPT = "scripts/fetch-references"
#: packet-level simulation results (a file at the top of the references folder, not one of :data:`SETS`)
SIMULATION_REFERENCE = "SIMULATION-REFERENCE.md"


@dataclass(frozen=True)
class ReferenceSet:
    """One sub-folder of the references folder: what it holds and whether the fetch script gets it."""

    what: str
    fetchable: bool = True


SETS: dict[str, ReferenceSet] = {
    "sonic-yang": ReferenceSet("SONiC YANG models (sonic-buildimage src/sonic-yang-models)"),
    "junos-yang": ReferenceSet("Juniper Junos OS Evolved 24.4R1 YANG models (github.com/Juniper/yang)"),
    "sonic-sku": ReferenceSet("SONiC SKU buffer tables (sonic-buildimage device/...)"),
    "field-cases": ReferenceSet("curated nccl-tests and counter captures from public reports "
                                "(no public download; ask the maintainers for the folder)", fetchable=False),
}

_root_override: Path | None = None


def set_root(path: Path | None) -> None:
    """Use ``path`` as the references folder (the ``--references`` option); None restores the default."""
    global _root_override
    _root_override = path


def references_root() -> Path:
    """The references folder: ``--references``, else ``$ROCE_TUNE_REFERENCES``, else ``<repo>/../shared``."""
    if _root_override is not None:
        return _root_override
    env = os.environ.get(ENV_VAR)
    return Path(env).expanduser() if env else DEFAULT_ROOT


def reference_path(set_name: str, *parts: str) -> Path:
    """Where ``<set>/<parts...>`` would be in the references folder (it may not exist).

    Raises:
        KeyError: ``set_name`` is not one of :data:`SETS` (add it there, with what it holds).
    """
    if set_name not in SETS:
        raise KeyError(f"unknown reference set {set_name!r}; known: {', '.join(SETS)}")
    return references_root().joinpath(set_name, *parts)


def reference(set_name: str, *parts: str) -> Path:
    """``<set>/<parts...>`` in the references folder; skips the calling test when it is not there.

    The skip reason starts with :data:`SKIP_PREFIX` and names the set, so the terminal summary can
    say once what is missing and how to get it.
    """
    path = reference_path(set_name, *parts)
    if not path.exists():
        pytest.skip(f"{SKIP_PREFIX}: {set_name} ({path} not found)")
    return path


def simulation_reference() -> Path | None:
    """The packet-level simulation results (:data:`SIMULATION_REFERENCE`) in the references folder, or
    ``$ROCE_TUNE_REFERENCES`` itself when it names that file; None when absent (see
    :func:`simulation_reference_skip`). Read at collection time, after ``--references`` is applied."""
    env = os.environ.get(ENV_VAR)
    if _root_override is None and env and Path(env).expanduser().is_file():
        return Path(env).expanduser()
    path = references_root() / SIMULATION_REFERENCE
    return path if path.is_file() else None


def simulation_reference_skip() -> str:
    """Skip reason for a test that needs :data:`SIMULATION_REFERENCE` (counted in the terminal summary)."""
    return f"{SKIP_PREFIX}: {SIMULATION_REFERENCE} ({references_root() / SIMULATION_REFERENCE} not found)"


def load_simulation_reference() -> tuple[Reference | None, str]:
    """The parsed :data:`SIMULATION_REFERENCE` (read leniently: what cannot be read fails only the rows that
    need it, see :func:`roce_tune.simulate.reference.parse_reference`) and "", or None and why: the skip
    reason when the file is absent, else the reader's error (file, line, the line). For test modules that
    read the file at import time: a file the reader cannot read then fails their
    ``test_reference_file_parsed`` instead of breaking the collection of every test of the module."""
    from roce_tune.simulate.reference import load_reference

    path = simulation_reference()
    if path is None:
        return None, simulation_reference_skip()
    try:
        return load_reference(path, strict=False), ""
    except (OSError, ValueError) as exc:
        return None, f"{SIMULATION_REFERENCE} cannot be read: {exc}"


def missing_sets() -> list[str]:
    """The reference sets whose folder is absent from the references folder."""
    return [name for name in SETS if not reference_path(name).is_dir()]


def summary_lines(skipped_by_set: dict[str, int]) -> list[str]:
    """The terminal-summary text for tests skipped for want of reference data (empty when none)."""
    if not skipped_by_set:
        return []
    total = sum(skipped_by_set.values())
    root = references_root()
    sets = ", ".join(f"{name} ({n})" for name, n in sorted(skipped_by_set.items()))
    lines = [f"{total} test(s) skipped: reference data not found in {root}: {sets}."]
    fetchable = [name for name in skipped_by_set if name in SETS and SETS[name].fetchable]
    if fetchable:
        lines.append(f"Get {', '.join(sorted(fetchable))} with `{FETCH_SCRIPT} {root}` (needs internet), "
                     f"or point --references DIR / {ENV_VAR}=DIR at a folder that has them.")
    for name in sorted(skipped_by_set):
        if name in SETS and not SETS[name].fetchable:
            lines.append(f"{name}: {SETS[name].what}.")
    return lines
