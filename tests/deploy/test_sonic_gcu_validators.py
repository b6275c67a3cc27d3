"""SONiC's Generic Config Updater refuses changes to RDMA tables outside its allow-list; apply must then fail
before anything changed, say why, and leave the switch as it was.

GCU (sonic-net/sonic-utilities ``generic_config_updater/gu_common.py`` ``validate_field_operation``, with
``gcu_field_operation_validators.conf.json``) lets ``config apply-patch`` change ``WRED_PROFILE`` only in
the green thresholds/probability of ``AZURE_LOSSLESS``, ``BUFFER_PROFILE`` only in ``dynamic_th``/``xoff``,
``BUFFER_POOL`` only in ``ingress_lossless_pool`` size/xoff and ``egress_lossy_pool`` size, and ``PFC_WD``
only on the ASICs (HwSKUs) it lists — all by ``replace`` from a given release on. roce-tune's patch adds
its own WRED and buffer profiles, so GCU refuses it (a known limitation: the report to the lead describes
it). The emulator models the validator (:func:`tests.emulators.sonic.gcu_field_operation_errors`).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from roce_tune.deploy.apply import load_source
from roce_tune.deploy.drivers import PushOptions
from roce_tune.deploy.runner import ApplyOptions, apply_targets
from tests.emulators import LOOPBACK_TIMING
from tests.emulators.sonic import gcu_field_operation_errors

from .conftest import emulated_inventory

pytestmark = pytest.mark.emulator

SWITCH = "lab-leaf1"


@pytest.mark.parametrize(("asic", "branch"), [("spc3", "20231100"), ("unknown", "20240500")])
def test_a_patch_gcu_refuses_fails_cleanly_and_changes_nothing(tmp_path: Path, asic: str,
                                                              branch: str) -> None:
    fleet, inv, known = emulated_inventory("lab-2node.yaml", tmp_path, hosts=True)
    try:
        dev = fleet[SWITCH]
        dev.validate = lambda target: gcu_field_operation_errors(dev.config_db, target, asic, branch)
        before = dev.running_config()
        targets, _ = load_source(inv)
        opts = ApplyOptions(known_hosts=str(known), log_dir=tmp_path / "logs",
                            push=PushOptions(confirm_s=60, read_timeout_s=20), timing=LOOPBACK_TIMING,
                            allow_disruptive=True)
        (res,) = apply_targets([t for t in targets if t.name == SWITCH], opts)
        assert res.state == "failed", (res.state, res.error)
        assert res.error and "table is illegal" in res.error, res.error
        assert dev.running_config() == before
    finally:
        fleet.stop()
