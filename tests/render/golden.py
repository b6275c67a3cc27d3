"""Golden-file comparison and the real pipeline, shared by every renderer's tests."""

from __future__ import annotations

import difflib
import os
from functools import cache
from pathlib import Path

import pytest

from roce_tune.inventory.loader import load_inventory
from roce_tune.pipeline import derive_plan
from roce_tune.plan import Plan
from roce_tune.platforms import get_platform

REPO = Path(__file__).resolve().parents[2]
GOLDEN = REPO / "tests" / "golden"


def assert_golden(platform: str, scenario: str, files: dict[str, str]) -> None:
    """Compare ``files`` with ``tests/golden/<platform>/<scenario>/`` byte for byte; on mismatch fail with
    a unified diff. A golden file with no rendered counterpart is stale and fails too.
    ``ROCE_TUNE_UPDATE_GOLDEN=1`` rewrites the folder instead (review the git diff afterwards)."""
    folder = GOLDEN / platform / scenario
    if os.environ.get("ROCE_TUNE_UPDATE_GOLDEN") == "1":
        folder.mkdir(parents=True, exist_ok=True)
        for stale in {p.name for p in folder.iterdir()} - set(files):
            (folder / stale).unlink()
        for name, text in files.items():
            (folder / name).write_text(text, encoding="utf-8", newline="\n")
        return
    on_disk = {p.name for p in folder.iterdir()} if folder.is_dir() else set()
    assert on_disk <= set(files), f"stale golden files in {folder}: {sorted(on_disk - set(files))}"
    for name, text in sorted(files.items()):
        path = folder / name
        assert path.is_file(), f"no golden file {path}; run with ROCE_TUNE_UPDATE_GOLDEN=1 and review it"
        want = path.read_text(encoding="utf-8")
        if text != want:
            diff = "".join(difflib.unified_diff(want.splitlines(True), text.splitlines(True),
                                                f"golden/{platform}/{scenario}/{name}", "rendered"))
            pytest.fail(f"{path} differs from the rendering (ROCE_TUNE_UPDATE_GOLDEN=1 to accept):\n{diff}")


@cache
def pipeline_plan(inventory: str) -> Plan:
    """``derive_plan(load_inventory("inventories/<inventory>.yaml"))`` run from the repository root, so
    the plan (and file headers) name the inventory by its repo-relative path."""
    cwd = os.getcwd()
    try:
        os.chdir(REPO)
        return derive_plan(load_inventory(f"inventories/{inventory}.yaml"))
    finally:
        os.chdir(cwd)


def render_platform(plan: Plan, platform: str, switches: list[str] | None = None) -> dict[str, str]:
    """Every file the platform renders for the plan's switches of that platform (or the named ones)."""
    files: dict[str, str] = {}
    for sw in plan.switches:
        if sw.platform == platform and (switches is None or sw.name in switches):
            files.update(get_platform(platform).render(plan, sw))
    return files
