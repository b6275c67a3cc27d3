"""README: "the tuner's safety checks still run on pinned values". A pin replaces a formula, never the
physics: pinned headroom below the minimum, xon above xoff, a profile smaller than its headroom (RT203),
Kmin >= Kmax or Kmax above the PFC trigger (RT210) are errors at the pin, in lint and in plan."""

from __future__ import annotations

from pathlib import Path

import pytest

from roce_tune.checks import check_inventory
from roce_tune.findings import Severity
from roce_tune.inventory.loader import load_inventory_text
from roce_tune.pipeline import derive_plan

REPO = Path(__file__).resolve().parents[2]
LAB = (REPO / "inventories" / "lab-2node.yaml").read_text()


def pinned(pins: str, policy_extra: str = "") -> str:
    return LAB.replace("  cnp_priority: 6\n", f"  cnp_priority: 6\n{policy_extra}  overrides:\n"
                       f"    - {{device: lab-leaf1, port: Ethernet0, set: {{{pins}}}}}\n", 1)


def errors(text: str) -> list:  # type: ignore[type-arg]
    return [f for f in check_inventory(load_inventory_text(text, "pin.yaml")) if f.severity is Severity.error]


@pytest.mark.parametrize(("pins", "rule", "key", "words"), [
    ("xoff_bytes: 0", "RT203", "xoff_bytes", "below the"),
    ("xoff_bytes: 10KB", "RT203", "xoff_bytes", "frames in flight"),
    ("xon_bytes: 500KB", "RT203", "xon_bytes", "above xoff"),
    ("size_bytes: 1KB", "RT203", "size_bytes", "reserves less"),
    ("kmin_bytes: 900KB, kmax_bytes: 800KB", "RT210", None, "Kmin"),
])
def test_unsafe_pins_are_errors_at_the_pin(pins: str, rule: str, key: str | None, words: str) -> None:
    text = pinned(pins)
    got = [f for f in errors(text) if f.rule == rule]
    assert got, [str(f) for f in errors(text)]
    f = got[0]
    assert words in f.message and f.location.file == "pin.yaml" and f.location.line and f.location.col
    assert f.location.device == "lab-leaf1" and f.location.port == "Ethernet0"  # only the pinned port
    if key:
        assert f.location.path == f"policy.overrides[0].set.{key}"
        line = text.splitlines()[f.location.line - 1]
        assert line[f.location.col - 1:].startswith(pins.split(": ", 1)[1].split(",")[0])
    plan = derive_plan(load_inventory_text(text, "pin.yaml"))  # plan refuses to write on these errors
    assert rule in {x.rule for x in plan.findings if x.severity is Severity.error}


@pytest.mark.parametrize("pins", ["xoff_bytes: 200KB", "xoff_bytes: 1MB", "xon_bytes: 20KB",
                                  "size_bytes: 1MB"])
def test_safe_pins_stay_clean(pins: str) -> None:
    assert not [f for f in errors(pinned(pins)) if f.rule == "RT203"]


def test_without_a_shared_headroom_pool_the_size_follows_a_pinned_xoff() -> None:
    text = pinned("xoff_bytes: 400KB", policy_extra="  shared_headroom_pool: false\n")
    assert not [f for f in errors(text) if f.rule == "RT203"]
    plan = derive_plan(load_inventory_text(text, "pin.yaml"))
    sw = plan.switch("lab-leaf1")
    pin = next(p for p in sw.ports if p.name == "Ethernet0").headroom
    other = next(p for p in sw.ports if p.name == "Ethernet8").headroom
    assert pin.xoff_bytes == 400_000 and pin.xon_bytes == other.xon_bytes
    assert pin.size_bytes - other.size_bytes == 400_000 - other.xoff_bytes  # same overhead, pinned xoff
    assert "follows the pinned" in pin.rationale["size_bytes"].note
