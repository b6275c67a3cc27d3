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
from roce_tune.deploy.runner import ApplyOptions, DeviceResult, Target, apply_targets, results_json
from tests.emulators import LOOPBACK_TIMING

from .conftest import emulated_inventory

pytestmark = pytest.mark.emulator

NXOS = "spine1"
SONIC = "lab-leaf1"


def _tag(i: int) -> str:
    """The i-th run's tag in the format apply gives it (one a minute: runs in one second would collide)."""
    return f"roce_tune_20261201_{10 + i // 60:02d}{i % 60:02d}00"


def _opts(tmp_path: Path, known: Path, tag: str, **kw: Any) -> ApplyOptions:
    push = PushOptions(confirm_s=60, read_timeout_s=20, tag=tag, **kw)
    return ApplyOptions(known_hosts=str(known), log_dir=tmp_path / "logs", timing=LOOPBACK_TIMING,
                        allow_disruptive=True, push=push)


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


@pytest.mark.slow  # several full pushes over SSH (~3.5 s each); CI runs -m slow
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
    (device,) = json.loads(results_json([last], dry_run=False))["devices"]
    assert device["rollback_point"] == last.rollback_point and device["pruned"] == [_tag(9)]
    assert device["warnings"] == []


def _operator_checkpoints(fleet: Any, name: str, names: list[str]) -> None:
    """The operator's own checkpoints, taken over SSH as an operator would."""
    conn = fleet.connect(name)
    try:
        for cp in names:
            assert "Done" in conn.send_command(f"checkpoint {cp}")
    finally:
        conn.disconnect()


@pytest.mark.slow  # several full pushes over SSH (~3.5 s each); CI runs -m slow
def test_nxos_operator_checkpoints_are_never_deleted(nxos, tmp_path: Path) -> None:
    """Eight operator checkpoints (one named like a user's default) and two of roce-tune's from older
    playbook runs fill the switch to nine... ten with the first push: the push deletes roce-tune's oldest to
    make room, later pushes keep two of roce-tune's, and the operator's eight are all still there."""
    fleet, targets, known = nxos
    operator = ["before_upgrade", "user-checkpoint-1", "stable", "roce_tune", "roce_tune_manual",
                "pre_roce_tune_20250101_000000", "nightly", "ops_2026"]
    legacy = ["roce_tune_20250101120000", "roce_tune_20250102120000"]  # the playbooks' earlier name form
    _operator_checkpoints(fleet, NXOS, operator + legacy)
    results = _pushes(fleet, targets, tmp_path, known, 3)
    assert results[0].pruned == ["roce_tune_20250101120000"], results[0]
    assert results[1].pruned == ["roce_tune_20250102120000"]
    assert results[2].pruned == [_tag(0)]
    assert sorted(fleet[NXOS].checkpoints) == sorted(operator + [_tag(1), _tag(2)])


def test_nxos_limit_filled_by_operator_fails_before_any_change(nxos, tmp_path: Path) -> None:
    """Ten operator checkpoints: the push fails before it changes anything, naming the device, the count and
    the command that frees one; none of the operator's checkpoints is deleted."""
    fleet, targets, known = nxos
    operator = [f"maint_{i}" for i in range(10)]
    _operator_checkpoints(fleet, NXOS, operator)
    before = fleet[NXOS].running_config()
    res = _push(targets, tmp_path, known, _tag(0))
    assert res.state == "failed" and not res.rolled_back
    assert res.error is not None
    assert f"{NXOS} has 10 user checkpoints, NX-OS's limit of 10, and 0 of them are roce-tune's" in res.error
    assert "`no checkpoint <name>`" in res.error and "nothing changed" in res.error
    assert fleet[NXOS].running_config() == before
    assert sorted(fleet[NXOS].checkpoints) == sorted(operator)
    assert res.rollback_point is None and res.pruned == []


@pytest.mark.slow  # several full pushes over SSH (~3.5 s each); CI runs -m slow
def test_nxos_refused_delete_is_a_warning_not_a_failure(nxos, tmp_path: Path, capsys) -> None:
    """The switch refuses ``no checkpoint``: the push stands (pushed, not rolled back) and the report warns,
    naming the device and the command; the apply report prints the rollback point and the warning."""
    from rich.console import Console

    from roce_tune.deploy.apply import print_results

    fleet, targets, known = nxos
    factory = _factory(fleet, NXOS)
    _pushes(fleet, targets, tmp_path, known, 2)
    fleet[NXOS].set_fault(reject_pattern=r"^no checkpoint ")
    _drift(fleet, NXOS, factory)
    console = Console(width=300, force_terminal=False)
    (res,) = print_results(targets, _opts(tmp_path, known, _tag(2)), apply_targets, console)
    assert res.state == "pushed" and res.error is None and not res.rolled_back
    assert res.pruned == []
    assert len(res.warnings) == 1
    assert res.warnings[0].startswith(f"{NXOS}: `no checkpoint {_tag(0)}` failed")
    assert sorted(fleet[NXOS].checkpoints) == [_tag(0), _tag(1), _tag(2)]
    out = capsys.readouterr().out
    assert f"{NXOS}: rollback point: checkpoint {_tag(2)}" in out
    assert f"warning: {NXOS}: `no checkpoint {_tag(0)}` failed" in out


def _patch_files(fleet: Any, name: str) -> list[str]:
    return sorted(p.name for p in (fleet[name].sandbox / "tmp").glob("*.json"))


@pytest.mark.slow  # several pushes over SSH to the emulators (~10 s); CI runs -m slow
def test_sonic_prunes_checkpoints_and_removes_patch_files(sonic, tmp_path: Path) -> None:
    """SONiC: four pushes leave roce-tune's newest two checkpoints beside the operator's, and no uploaded
    CONFIG_DB file; a push whose write the switch rejects rolls back and removes its files too."""
    fleet, targets, known = sonic
    conn = fleet.connect(SONIC)
    try:
        conn.send_command("sudo config checkpoint before-upgrade")
    finally:
        conn.disconnect()
    factory = _factory(fleet, SONIC)
    results = _pushes(fleet, targets, tmp_path, known, 4)
    assert sorted(fleet[SONIC].checkpoints) == sorted(["before-upgrade", _tag(2), _tag(3)])
    assert [r.pruned for r in results] == [[], [], [_tag(0)], [_tag(1)]]
    assert results[-1].rollback_point == (f"checkpoint {_tag(3)} (to return to it: "
                                          f"`sudo config rollback {_tag(3)}`)")
    assert _patch_files(fleet, SONIC) == []

    _drift(fleet, SONIC, factory)
    fleet[SONIC].set_fault(reject_pattern=r"PFC_PRIORITY_TO_PRIORITY_GROUP_MAP")  # the write fails
    failed = _push(targets, tmp_path, known, _tag(4))
    assert failed.state == "failed" and failed.rolled_back, failed
    assert failed.rollback_point is None
    assert _patch_files(fleet, SONIC) == []
    fleet[SONIC].clear_faults()

    _drift(fleet, SONIC, factory)
    fleet[SONIC].set_fault(reject_pattern=r"delete-checkpoint")
    warned = _push(targets, tmp_path, known, _tag(5))
    assert warned.state == "pushed" and warned.pruned == [], warned
    assert [w.split(" failed")[0] for w in warned.warnings] == [
        f"{SONIC}: `sudo config delete-checkpoint {_tag(i)}`" for i in (2, 3)]
    assert _patch_files(fleet, SONIC) == []


@pytest.mark.slow  # end-to-end (subprocesses/emulators), seconds each: .ci/run runs it (-m slow)
def test_cli_keep_checkpoints_and_text_report(tmp_path: Path) -> None:
    """``roce-tune apply --keep-checkpoints 1`` (a real subprocess) on NX-OS: roce-tune's two older
    checkpoints are deleted, the operator's stays, and the text report names the rollback point and what it
    pruned; ``--keep-checkpoints 0`` is refused (the checkpoint just taken is the rollback point)."""
    import os
    import re
    import subprocess
    import sys

    from .conftest import PASSWORD, REPO, USER

    fleet, inv, known = emulated_inventory("mixed-vendor.yaml", tmp_path)
    try:
        older = ["roce_tune_20250101_120000", "roce-tune-20250102120000"]  # the CLI's and a playbook's form
        _operator_checkpoints(fleet, NXOS, ["stable", *older])
        env = dict(os.environ, ROCE_TUNE_USERNAME=USER, ROCE_TUNE_PASSWORD=PASSWORD, COLUMNS="250")
        cmd = [sys.executable, "-m", "roce_tune.cli", "apply", str(inv), "--limit", NXOS,
               "--allow-disruptive", "--known-hosts", str(known), "--log-dir", str(tmp_path / "logs"),
               "--session-timing", "fast"]
        refused = subprocess.run([*cmd, "--keep-checkpoints", "0"], capture_output=True, text=True, env=env,
                                 cwd=REPO, timeout=120)
        assert refused.returncode == 2 and "--keep-checkpoints" in refused.stderr
        proc = subprocess.run([*cmd, "--keep-checkpoints", "1"], capture_output=True, text=True, env=env,
                              cwd=REPO, timeout=120)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        (taken,) = [n for n in fleet[NXOS].checkpoints if n != "stable"]
        assert re.fullmatch(r"roce_tune_\d{8}_\d{6}_\d{3}[0-9a-f]{2}", taken)
        assert (f"{NXOS}: rollback point: checkpoint {taken} (to return to it: `rollback running-config "
                f"checkpoint {taken} atomic`); pruned roce-tune's older checkpoint(s): {', '.join(older)}"
                ) in " ".join(proc.stdout.split())
    finally:
        fleet.stop()
