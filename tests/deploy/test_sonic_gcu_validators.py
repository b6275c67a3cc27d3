"""SONiC's Generic Config Updater refuses roce-tune's change; apply writes CONFIG_DB without it and keeps
every safety property: a snapshot of the keys it touches, a rollback to exactly that snapshot, a clean report.

GCU (sonic-net/sonic-utilities ``generic_config_updater/gu_common.py`` ``validate_field_operation``, with
``gcu_field_operation_validators.conf.json``) lets ``config apply-patch`` change ``WRED_PROFILE`` only in
the green thresholds/probability of ``AZURE_LOSSLESS``, ``BUFFER_PROFILE`` only in ``dynamic_th``/``xoff``,
``BUFFER_POOL`` only in ``ingress_lossless_pool`` size/xoff and ``egress_lossy_pool`` size, and ``PFC_WD``
only on the ASICs (HwSKUs) it lists — all by ``replace`` from a given release on; ``config rollback`` and
``config replace`` go through the same check. roce-tune's change adds its own WRED and buffer profiles, so
GCU would refuse it; apply writes it with ``sonic-cfggen -j FILE --write-to-db`` and ``sonic-db-cli
CONFIG_DB DEL/HDEL`` instead, which GCU does not check. The emulator models the validator on its GCU
commands (:func:`tests.emulators.sonic.gcu_field_operation_errors`), switched on in every test here.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from roce_tune.deploy.apply import load_source
from roce_tune.deploy.drivers import PushOptions
from roce_tune.deploy.runner import ApplyOptions, apply_targets
from tests.emulators import LOOPBACK_TIMING
from tests.emulators.sonic import gcu_field_operation_errors

from .conftest import emulated_inventory

pytestmark = pytest.mark.emulator

SWITCH = "lab-leaf1"


def _opts(tmp_path: Path, known: Path, **kw: Any) -> ApplyOptions:
    push = PushOptions(confirm_s=60, read_timeout_s=20, rollback_retry_s=kw.pop("rollback_retry_s", 120.0))
    return ApplyOptions(known_hosts=str(known), log_dir=tmp_path / "logs", push=push, timing=LOOPBACK_TIMING,
                        allow_disruptive=True, **kw)


def _with_gcu(dev: Any, asic: str, branch: str) -> None:
    dev.validate = lambda target: gcu_field_operation_errors(dev.config_db, target, asic, branch)


def _desired_rows_in(db: dict[str, Any], desired: dict[str, Any]) -> list[str]:
    """Every desired table|key.field the switch's CONFIG_DB does not hold with the desired value."""
    return [f"{t}|{k}.{f}" for t, rows in desired.items() for k, row in rows.items() for f, v in row.items()
            if db.get(t, {}).get(k, {}).get(f) != v]


@pytest.fixture
def lab(tmp_path: Path):  # type: ignore[no-untyped-def]
    fleet, inv, known = emulated_inventory("lab-2node.yaml", tmp_path, hosts=True)
    try:
        targets, _ = load_source(inv)
        yield fleet, [t for t in targets if t.name == SWITCH], known
    finally:
        fleet.stop()


@pytest.mark.parametrize(("asic", "branch"), [("spc3", "20231100"), ("unknown", "20240500")])
def test_push_succeeds_although_gcu_refuses_the_change(lab, tmp_path: Path, asic: str,  # type: ignore[no-untyped-def]
                                                       branch: str) -> None:
    fleet, targets, known = lab
    dev = fleet[SWITCH]
    _with_gcu(dev, asic, branch)
    desired = json.loads(targets[0].desired)
    merged = json.loads(dev.running_config())
    for table, rows in desired.items():
        for key, row in rows.items():
            merged.setdefault(table, {}).setdefault(key, {}).update(row)
    assert gcu_field_operation_errors(dev.config_db, merged, asic, branch), "GCU would refuse this change"
    (res,) = apply_targets(targets, _opts(tmp_path, known))
    assert res.state == "pushed", (res.state, res.error)
    assert _desired_rows_in(dev.config_db, desired) == []
    assert not any("apply-patch" in c for c in dev.commands_seen), "GCU is not used"
    assert any(c.startswith("sudo sonic-cfggen -j /tmp/") for c in dev.commands_seen)
    saved = json.loads((dev.sandbox / "etc/sonic/config_db.json").read_text())
    assert saved == dev.config_db, "config save -y wrote the pushed CONFIG_DB"


def test_dry_run_is_a_diff_and_writes_nothing(lab, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    fleet, targets, known = lab
    dev = fleet[SWITCH]
    _with_gcu(dev, "spc3", "20231100")
    before = dev.running_config()
    (res,) = apply_targets(targets, _opts(tmp_path, known, dry_run=True))
    assert res.state == "would-change" and res.diff, (res.state, res.error)
    assert any(line.startswith("add /WRED_PROFILE") for line in res.diff), res.diff
    assert dev.running_config() == before
    # (the read-only probe `sudo config checkpoint --help` runs; no checkpoint is taken)
    assert not any(("sonic-cfggen -j" in c or "sonic-db-cli CONFIG_DB " in c or "apply-patch" in c
                    or ("config checkpoint" in c and "--help" not in c)) for c in dev.commands_seen), \
        dev.commands_seen


@pytest.mark.slow
def test_reapply_changes_nothing(lab, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    fleet, targets, known = lab
    dev = fleet[SWITCH]
    _with_gcu(dev, "spc3", "20231100")
    (first,) = apply_targets(targets, _opts(tmp_path, known))
    assert first.state == "pushed", (first.state, first.error)
    pushed = dev.running_config()
    writes = sum("sonic-cfggen -j" in c for c in dev.commands_seen)
    (again,) = apply_targets(targets, _opts(tmp_path, known))
    assert again.state == "no-change", (again.state, again.diff)
    assert dev.running_config() == pushed
    assert sum("sonic-cfggen -j" in c for c in dev.commands_seen) == writes


def test_a_write_that_fails_after_the_first_rolls_back_to_the_exact_config_db(  # type: ignore[no-untyped-def]
        lab, tmp_path: Path) -> None:
    """The first CONFIG_DB write (pools and profiles) lands, the second (PG rows) fails as a lost redis
    connection does: apply restores its snapshot (deleting the profiles it added, writing back the pool
    sizes it replaced), reads it back and says "rolled back"; the whole CONFIG_DB equals the one before."""
    fleet, targets, known = lab
    dev = fleet[SWITCH]
    _with_gcu(dev, "spc3", "20231100")
    before = dev.running_config()
    dev.set_fault(fail_db_write=2)
    (res,) = apply_targets(targets, _opts(tmp_path, known))
    assert res.state == "failed" and res.rolled_back, (res.state, res.error)
    assert res.error and res.error.startswith("commit: `sudo sonic-cfggen -j /tmp/"), res.error
    assert "redis.exceptions.ConnectionError" in res.error, res.error
    assert "restored from roce-tune's snapshot and read back" in res.error, res.error
    assert "fault: CONFIG_DB write 2 failed" in dev.events
    assert dev.running_config() == before
    assert not list((dev.sandbox / "tmp").glob("*.json")), "uploaded files are removed"


@pytest.mark.slow
def test_a_restore_that_fails_names_the_checkpoint_and_the_manual_ways_back(  # type: ignore[no-untyped-def]
        lab, tmp_path: Path) -> None:
    fleet, targets, known = lab
    dev = fleet[SWITCH]
    _with_gcu(dev, "spc3", "20231100")
    dev.set_fault(fail_db_write=2, fail_db_write_count=1000)  # redis stays down after the first write
    (res,) = apply_targets(targets, _opts(tmp_path, known, rollback_retry_s=2.0))
    assert res.state == "failed" and not res.rolled_back, (res.state, res.error)
    error = res.error or ""
    assert error.startswith("PushError: commit: `sudo sonic-cfggen -j /tmp/"), error
    assert "ROLLBACK FAILED" in error, error
    # the push's own checkpoint, not the read-only GCU probe (`sudo config checkpoint --help; echo ...`)
    tag = next(c.split()[-1] for c in dev.commands_seen if c.startswith("sudo config checkpoint roce_tune_"))
    assert f"`sudo config rollback {tag}`" in error and "may refuse it" in error, error
    assert "config reload" in error, error
    assert tag in dev.checkpoints, "the operator's checkpoint is kept"
    log = Path(res.log_file or "").read_text()
    assert "restoring roce-tune's snapshot did not complete" in log, log[-2000:]
