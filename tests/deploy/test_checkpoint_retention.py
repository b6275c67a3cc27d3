"""Checkpoint retention end to end against the loopback NX-OS and SONiC emulators (real SSH, netmiko).

Every push takes a uniquely named checkpoint. NX-OS keeps at most ten user checkpoints per switch ("You can
create up to ten checkpoints of your configuration per switch", Cisco Nexus 3548 NX-OS System Management
Configuration Guide, "Configuring Rollback"), so an apply that never deletes its own checkpoints fails from
the eleventh push on; SONiC keeps every checkpoint and uploaded patch file on the switch's disk. apply keeps
roce-tune's own newest checkpoints (the one just taken and the previous one) and never touches the
operator's.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from roce_tune.deploy.apply import load_source
from roce_tune.deploy.drivers import PushOptions
from roce_tune.deploy.runner import ApplyOptions, DeviceResult, Target, apply_targets
from tests.emulators import LOOPBACK_TIMING

from .conftest import emulated_inventory

pytestmark = pytest.mark.emulator

NXOS = "spine1"
SONIC = "lab-leaf1"


def _tag(i: int) -> str:
    """The i-th run's tag in the format apply gives it (one a minute: runs in one second would collide)."""
    return f"roce_tune_20261201_{10 + i // 60:02d}{i % 60:02d}00"


def _opts(tmp_path: Path, known: Path, tag: str, **kw: Any) -> ApplyOptions:
    return ApplyOptions(known_hosts=str(known), log_dir=tmp_path / "logs", timing=LOOPBACK_TIMING,
                        allow_disruptive=True, push=PushOptions(confirm_s=60, read_timeout_s=20, tag=tag, **kw))


@pytest.fixture
def nxos(tmp_path: Path):  # type: ignore[no-untyped-def]
    fleet, inv, known = emulated_inventory("mixed-vendor.yaml", tmp_path)
    targets, _ = load_source(inv)
    yield fleet, [t for t in targets if t.name == NXOS], known
    fleet.stop()


@pytest.fixture
def sonic(tmp_path: Path):  # type: ignore[no-untyped-def]
    fleet, inv, known = emulated_inventory("lab-2node.yaml", tmp_path)
    targets, _ = load_source(inv)
    yield fleet, [t for t in targets if t.name == SONIC], known
    fleet.stop()


def _drift(fleet: Any, name: str, factory: Any) -> None:
    """Put the device back to its configuration as found (an operator's change), so the next apply pushes."""
    dev = fleet[name]
    if dev.platform == "nxos":
        fleet.call(dev.replace_running, factory)
    else:
        fleet.call(setattr, dev, "config_db", json.loads(json.dumps(factory)))


def _factory(fleet: Any, name: str) -> Any:
    dev = fleet[name]
    return dev.running.copy() if dev.platform == "nxos" else json.loads(json.dumps(dev.config_db))


def _push(targets: list[Target], tmp_path: Path, known: Path, tag: str, **kw: Any) -> DeviceResult:
    (res,) = apply_targets(targets, _opts(tmp_path, known, tag, **kw))
    return res


def _pushes(fleet: Any, targets: list[Target], tmp_path: Path, known: Path, runs: int,
            first: int = 0) -> list[DeviceResult]:
    """``runs`` applies, each after the device drifted back to its factory configuration (so each pushes)."""
    name = targets[0].name
    factory = _factory(fleet, name)
    out = []
    for i in range(first, first + runs):
        _drift(fleet, name, factory)
        res = _push(targets, tmp_path, known, _tag(i))
        assert res.state == "pushed", (i, res.state, res.error)
        out.append(res)
    return out


def test_nxos_eleven_pushes_keep_two_own_checkpoints(nxos, tmp_path: Path) -> None:
    """Twelve applies in a row all push (the device refuses an eleventh checkpoint): each keeps roce-tune's
    newest two checkpoints, says which one is the rollback point and what it pruned."""
    fleet, targets, known = nxos
    results = _pushes(fleet, targets, tmp_path, known, 12)
    assert sorted(fleet[NXOS].checkpoints) == [_tag(10), _tag(11)]
    last = results[-1]
    assert last.rollback_point is not None and _tag(11) in last.rollback_point
    assert f"rollback running-config checkpoint {_tag(11)} atomic" in last.rollback_point
    assert last.pruned == [_tag(9)] and last.warnings == []
    assert results[0].pruned == []
