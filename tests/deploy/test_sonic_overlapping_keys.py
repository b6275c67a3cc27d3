"""SONiC: the SKU's range keys (``BUFFER_PG|Ethernet0|3-4``, ``BUFFER_QUEUE|Ethernet0|3-4``) beside the plan's
narrower keys (``Ethernet0|3``) are removed by apply, named in --dry-run, and restored by a rollback —
end to end against the loopback SONiC emulator (``sonic-cfggen --write-to-db``, ``sonic-db-cli CONFIG_DB
DEL``, the snapshot restore)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from roce_tune.deploy.apply import load_source
from roce_tune.deploy.drivers import PushOptions
from roce_tune.deploy.runner import ApplyOptions, apply_targets
from tests.emulators import LOOPBACK_TIMING

from .conftest import emulated_inventory

pytestmark = pytest.mark.emulator

SWITCH = "lab-leaf1"
TABLES = ("BUFFER_PG", "BUFFER_QUEUE")


def _ids(key: str) -> set[int]:
    lo, _, hi = key.rsplit("|", 1)[1].partition("-")
    return set(range(int(lo), int(hi or lo) + 1))


def _overlaps(db: dict[str, Any]) -> list[tuple[str, str, str]]:
    """Pairs of distinct keys of one port in one range table that name a common PG/queue id."""
    out = []
    for table in TABLES:
        keys = sorted(db.get(table, {}))
        for i, a in enumerate(keys):
            out += [(table, a, b) for b in keys[i + 1:]
                    if a.split("|")[0] == b.split("|")[0] and _ids(a) & _ids(b)]
    return out


def _seed_sku_defaults(db: dict[str, Any]) -> None:
    """What SONiC's buffers template writes at boot (ranges 3-4 lossless, 0-2 / 5-6 lossy), with profiles
    whose values the plan also uses for the egress queues (so a naive JSON diff would 'move' them)."""
    ports = list(db["PORT"])
    db["BUFFER_PROFILE"] = {
        "ingress_lossy_profile": {"pool": "ingress_lossless_pool", "size": "0", "dynamic_th": "3"},
        "pg_lossless_400000_5m_profile": {"pool": "ingress_lossless_pool", "size": "56368", "xon": "19456",
                                          "xoff": "36912", "dynamic_th": "0"},
        "egress_lossless_profile": {"pool": "egress_lossless_pool", "size": "0", "dynamic_th": "7"},
        "egress_lossy_profile": {"pool": "egress_lossy_pool", "size": "9216", "dynamic_th": "3"}}
    db["BUFFER_PG"] = {**{f"{p}|0": {"profile": "ingress_lossy_profile"} for p in ports},
                       **{f"{p}|3-4": {"profile": "pg_lossless_400000_5m_profile"} for p in ports}}
    db["BUFFER_QUEUE"] = {k: v for p in ports for k, v in (
        (f"{p}|0-2", {"profile": "egress_lossy_profile"}), (f"{p}|3-4",
                                                            {"profile": "egress_lossless_profile"}),
        (f"{p}|5-6", {"profile": "egress_lossy_profile"}))}


@pytest.fixture
def lab(tmp_path: Path):  # type: ignore[no-untyped-def]
    """lab-2node with its hosts (so the switch ports are lossless) and the SKU's default range keys."""
    fleet, inv, known = emulated_inventory("lab-2node.yaml", tmp_path, hosts=True)
    _seed_sku_defaults(fleet[SWITCH].config_db)
    targets, _ = load_source(inv)
    yield fleet, [t for t in targets if t.name == SWITCH], known
    fleet.stop()


def _opts(tmp_path: Path, known: Path, **kw: Any) -> ApplyOptions:
    push = kw.pop("push", PushOptions(confirm_s=60, read_timeout_s=20))
    return ApplyOptions(known_hosts=str(known), log_dir=tmp_path / "logs", push=push, timing=LOOPBACK_TIMING,
                        allow_disruptive=True, **kw)


def test_dry_run_names_each_overlapping_key_and_changes_nothing(lab,
                                                                tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    fleet, targets, known = lab
    before = fleet[SWITCH].running_config()
    assert _overlaps(fleet[SWITCH].config_db) == []
    (res,) = apply_targets(targets, _opts(tmp_path, known, dry_run=True))
    assert res.state == "would-change", (res.state, res.error)
    for port, plan_pg in (("Ethernet0", "Ethernet0|3"), ("Ethernet8", "Ethernet8|3")):
        assert f"remove /BUFFER_PG/{port}|3-4  (overlaps {plan_pg})" in res.diff
        assert f"remove /BUFFER_QUEUE/{port}|3-4  (overlaps {port}|3)" in res.diff
        assert f"remove /BUFFER_QUEUE/{port}|5-6  (overlaps {port}|4-7)" in res.diff
    assert not any(line.startswith(("move ", "copy ")) for line in res.diff)
    assert "a headroom profile swap on a live port" in res.disruptive
    assert fleet[SWITCH].running_config() == before


def test_push_leaves_no_overlapping_key_and_is_idempotent(lab,
                                                          tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    fleet, targets, known = lab
    (res,) = apply_targets(targets, _opts(tmp_path, known))
    assert res.state == "pushed", (res.state, res.error)
    db = fleet[SWITCH].config_db
    assert _overlaps(db) == [], _overlaps(db)
    assert {"Ethernet0|0", "Ethernet0|3"} <= set(db["BUFFER_PG"])
    assert {"Ethernet0|0-2", "Ethernet0|3", "Ethernet0|4-7"} <= set(db["BUFFER_QUEUE"])
    (again,) = apply_targets(targets, _opts(tmp_path, known))
    assert again.state == "no-change", (again.state, again.diff)


@pytest.mark.slow  # end-to-end (subprocesses/emulators), seconds each: .ci/run runs it (-m slow)
def test_failure_after_the_patch_rolls_back_to_the_original_keys(lab,
                                                                 tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """The change is written, then the switch re-creates the SKU's ``<port>|3-4`` PG (buffermgrd on the
    traditional model does so when a port's MTU changes, which roce-tune's PORT mtu write is): read-back
    shows the overlapping key again, apply fails, restores its snapshot and the original keys are back."""
    fleet, targets, known = lab
    dev = fleet[SWITCH]
    before = dev.running_config()

    def buffermgrd(old: dict[str, Any], new: dict[str, Any]) -> None:
        for port, row in new.get("PORT", {}).items():
            if row.get("mtu") != old["PORT"].get(port, {}).get("mtu"):
                new.setdefault("BUFFER_PG", {})[f"{port}|3-4"] = {"profile": "pg_lossless_400000_5m_profile"}

    dev.on_write = buffermgrd
    (res,) = apply_targets(targets, _opts(tmp_path, known))
    assert res.state == "failed" and res.rolled_back, (res.state, res.error)
    assert res.error and res.error.startswith("verify") and "remove /BUFFER_PG/Ethernet0|3-4" in res.error
    assert "rolled back" in res.error
    assert dev.running_config() == before
    assert {"Ethernet0|3-4", "Ethernet8|3-4"} <= set(dev.config_db["BUFFER_PG"])
    assert {"Ethernet0|3-4", "Ethernet0|5-6"} <= set(dev.config_db["BUFFER_QUEUE"])
