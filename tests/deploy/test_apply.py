"""roce-tune apply end to end against real SSH servers on loopback (netmiko's real drivers).

Every fault test asserts the device's running configuration is byte-identical to before the push.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from roce_tune.deploy.apply import load_source
from roce_tune.deploy.drivers import PushOptions
from roce_tune.deploy.runner import ApplyOptions, apply_targets
from tests.emulators import LOOPBACK_TIMING

from .conftest import PASSWORD, REPO, emulated_inventory

pytestmark = pytest.mark.emulator


def _opts(tmp_path: Path, known: Path, **kw) -> ApplyOptions:  # type: ignore[no-untyped-def]
    """Apply options for the emulators: loopback netmiko pacing (they answer at once), logs in tmp_path."""
    push = kw.pop("push", PushOptions(confirm_s=60, read_timeout_s=20))
    kw.setdefault("timing", LOOPBACK_TIMING)
    return ApplyOptions(known_hosts=str(known), log_dir=tmp_path / "logs", push=push, **kw)


def _running(fleet, names) -> dict[str, str]:  # type: ignore[no-untyped-def]
    return {n: fleet[n].running_config() for n in names}


@pytest.fixture
def mixed(tmp_path: Path):  # type: ignore[no-untyped-def]
    fleet, inv, known = emulated_inventory("mixed-vendor.yaml", tmp_path)
    yield fleet, inv, known
    fleet.stop()


@pytest.mark.slow
def test_dry_run_push_and_idempotent(mixed, tmp_path: Path) -> None:
    fleet, inv, known = mixed
    targets, _ = load_source(inv)
    names = [t.name for t in targets]
    assert {t.platform for t in targets} == {"eos", "nxos", "junos", "cumulus", "sonic"}
    before = _running(fleet, names)

    dry = apply_targets(targets, _opts(tmp_path, known, dry_run=True))
    assert {r.state for r in dry} == {"would-change"}, [(r.name, r.state, r.error) for r in dry]
    assert all(r.diff for r in dry)
    assert _running(fleet, names) == before, "a dry run must change nothing"
    # fresh devices get PFC enabled: every platform's rules mark that disruptive, with a reason
    assert all(r.disruptive for r in dry if r.platform != "nxos")

    blocked = apply_targets(targets, _opts(tmp_path, known))
    assert {r.state for r in blocked if r.disruptive} == {"blocked-disruptive"}
    assert all(fleet[r.name].running_config() == before[r.name] for r in blocked if r.disruptive)

    pushed = apply_targets(targets, _opts(tmp_path, known, allow_disruptive=True))
    assert all(r.state == "pushed" for r in pushed), [(r.name, r.state,
                                                       r.error) for r in pushed if r.state != "pushed"]
    assert all(fleet[n].running_config() != before[n] for n in names)

    again = apply_targets(targets, _opts(tmp_path, known, dry_run=True))
    assert {r.state for r in again} == {"no-change"}, [(r.name, r.diff[:5]) for r in again if r.diff]
    # a second real run sends nothing either
    after = _running(fleet, names)
    rerun = apply_targets(targets, _opts(tmp_path, known, allow_disruptive=True))
    assert {r.state for r in rerun} == {"no-change"}
    assert _running(fleet, names) == after

    # logs exist per device and never contain the password
    logs = list((tmp_path / "logs").glob("*.log"))
    assert len(logs) == len(names)
    # every run keeps each device's running config as found (a manual restore point)
    for n in names:
        kept = sorted((tmp_path / "logs").glob(f"{n}.*.before.txt"))
        assert kept and all(p.read_text().strip() for p in kept)
    assert all(PASSWORD not in p.read_text() for p in logs)


# the label says what happened: a failure before the commit/apply (an EOS session line rejected, a Junos
# candidate line rejected, a drop mid `nv set`) changed nothing; one after it was rolled back
NOTHING, ROLLED = "nothing changed", "rolled back"


@pytest.mark.parametrize("device, fault, label", [
    ("leaf1", {"reject_pattern": r"random-detect ecn"}, NOTHING),   # eos: rejected command in the session
    ("leaf3", {"reject_pattern": r"drop-profiles"}, NOTHING),       # junos: rejected command in the candidate
    ("spine1", {"drop_after_config_lines": 5}, ROLLED),             # nxos: connection dropped mid-push
    ("leaf5", {"reject_pattern": r"WRED_PROFILE"}, ROLLED),         # sonic: apply-patch rejects the patch
    ("leaf7", {"drop_after_config_lines": 4}, NOTHING),             # cumulus: dropped mid nv set
    ("leaf2", {"lose_confirm": True}, ROLLED),                      # eos: confirmation lost
    ("leaf4", {"lose_confirm": True}, ROLLED),                      # junos: commit confirmed never confirmed
    ("leaf8", {"lose_confirm": True}, ROLLED),                      # cumulus: --confirm-yes lost
])
@pytest.mark.slow  # end-to-end (subprocesses/emulators), seconds each: .ci/run runs it (-m slow)
def test_fault_rolls_back_only_that_device(tmp_path: Path, device: str, fault: dict[str, object],
                                           label: str) -> None:
    # a lost confirmation is only undone by the device's own timer (a rollback commit is "lost" too):
    # run those devices' clocks 10x faster and wait for the timer
    lost = bool(fault.get("lose_confirm"))
    fleet, inv, known = emulated_inventory("mixed-vendor.yaml", tmp_path, faults={device: fault},
                                           time_scale=0.1 if lost else 1.0)
    try:
        targets, _ = load_source(inv)
        before = _running(fleet, [t.name for t in targets])
        healthy = {"leaf1": "leaf3", "spine1": "leaf5"}.get(device, "leaf1")
        results = {r.name: r for r in apply_targets(
            targets, _opts(tmp_path, known, allow_disruptive=True, limit=[device, healthy],
                           device_timeout_s=240,
                           push=PushOptions(confirm_s=120, read_timeout_s=8)))}
        assert set(results) == {device, healthy}
        bad = results[device]
        assert bad.state == "failed" and bad.error, (bad.state, bad.error)
        assert label in bad.error and (NOTHING if label == ROLLED else ROLLED) not in bad.error, bad.error
        assert bad.rolled_back is (label == ROLLED), bad
        deadline = time.monotonic() + (40 if lost else 0)
        while fleet[device].running_config() != before[device] and time.monotonic() < deadline:
            time.sleep(0.5)
        assert fleet[device].running_config() == before[device], "the failed device must be back where it was"
        others = [r for n, r in results.items() if n != device]
        assert all(r.state == "pushed" for r in others), [(r.name, r.state, r.error) for r in others]
    finally:
        fleet.stop()


def test_canary_stops_the_rollout(tmp_path: Path) -> None:
    fleet, inv, known = emulated_inventory("mixed-vendor.yaml", tmp_path,
                                           faults={"leaf1": {"reject_pattern": r"qos map"}})
    try:
        targets, _ = load_source(inv)
        before = _running(fleet, [t.name for t in targets])
        results = apply_targets(targets, _opts(tmp_path, known, canary=1, limit=["leaf*"],
                                               allow_disruptive=True))
        assert [r.state for r in results][:1] == ["failed"]
        assert {r.state for r in results[1:]} == {"skipped"}
        assert all(len(results) == 8 and fleet[t.name].running_config() == before[t.name] for t in targets)
    finally:
        fleet.stop()


def test_unknown_host_key_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fleet, inv, known = emulated_inventory("lab-2node.yaml", tmp_path)
    try:
        targets, _ = load_source(inv)
        other = tmp_path / "empty_known_hosts"
        other.write_text("")
        home = tmp_path / "home"  # an empty ~/.ssh: the user's own known_hosts cannot vouch for the emulator
        (home / ".ssh").mkdir(parents=True)
        monkeypatch.setenv("HOME", str(home))
        res = apply_targets(targets, _opts(tmp_path, other, dry_run=True, limit=["lab-leaf1"]))
        assert res[0].state == "failed" and "known" in (res[0].error or "").lower(), res[0].error
        ok = apply_targets(targets, _opts(tmp_path, other, dry_run=True, limit=["lab-leaf1"],
                                          insecure_skip_host_key_check=True))
        assert ok[0].state == "would-change"
    finally:
        fleet.stop()


def test_hosts_dry_run_then_push(tmp_path: Path) -> None:
    """Hosts: the script's --check mode is the dry run; the real run's read-back decides success."""
    fleet, inv, known = emulated_inventory("lab-2node.yaml", tmp_path, hosts=True)
    try:
        targets, _ = load_source(inv)
        hosts = [t.name for t in targets if t.kind == "host"]
        before = _running(fleet, hosts)
        dry = apply_targets(targets, _opts(tmp_path, known, dry_run=True, limit=hosts))
        assert {r.state for r in dry} == {"would-change"}, [(r.name, r.state, r.error) for r in dry]
        assert all(any("MISMATCH" in line for line in r.diff) for r in dry)
        sysfs = {n: [ln for ln in text.splitlines() if ln.startswith("sys/")] for n, text in before.items()}
        assert {n: [ln for ln in t.splitlines() if ln.startswith("sys/")]
                for n, t in _running(fleet, hosts).items()} == sysfs, "a dry run must not write sysfs"
        # (the stub tools create their state files on the first read; a second dry run changes nothing)
        primed = _running(fleet, hosts)
        apply_targets(targets, _opts(tmp_path, known, dry_run=True, limit=hosts))
        assert _running(fleet, hosts) == primed
        pushed = apply_targets(targets, _opts(tmp_path, known, limit=hosts))
        assert {r.state for r in pushed} == {"pushed"}, [(r.name, r.state, r.error) for r in pushed]
        again = apply_targets(targets, _opts(tmp_path, known, dry_run=True, limit=hosts))
        assert {r.state for r in again} == {"no-change"}
    finally:
        fleet.stop()


@pytest.mark.slow  # end-to-end (subprocesses/emulators), seconds each: .ci/run runs it (-m slow)
def test_a_host_roce_dscp_moved_to_a_lossy_priority_is_a_change_and_the_push_puts_it_back(
        tmp_path: Path) -> None:
    """After a push, someone runs ``mlnx_qos --dscp2prio set,26,0`` on a host (DSCP trust kept): RoCE DSCP 26
    rides lossy priority 0 although the plan's 26 -> 3 is the ConnectX default. The dry run must name it and
    the push set it back."""
    fleet, inv, known = emulated_inventory("lab-2node.yaml", tmp_path, hosts=True)
    try:
        targets, _ = load_source(inv)
        hosts = [t.name for t in targets if t.kind == "host"]
        pushed = apply_targets(targets, _opts(tmp_path, known, limit=hosts))
        assert {r.state for r in pushed} == {"pushed"}, [(r.name, r.state, r.error) for r in pushed]
        emu = fleet[hosts[0]]
        netdev = emu.nics[0]["netdev"]
        subprocess.run(["mlnx_qos", "-i", netdev, "--dscp2prio", "set,26,0"], env=emu.env(), check=True,
                       capture_output=True, timeout=30)
        dry = {r.name: r for r in apply_targets(targets, _opts(tmp_path, known, dry_run=True, limit=hosts))}
        assert dry[hosts[0]].state == "would-change"
        assert any(f"{netdev} dscp2prio/26: expected '3', read '0'" in line for line in dry[hosts[0]].diff)
        assert {r.state for n, r in dry.items() if n != hosts[0]} == {"no-change"}
        again = apply_targets(targets, _opts(tmp_path, known, limit=[hosts[0]]))
        assert [r.state for r in again] == ["pushed"], [(r.name, r.state, r.error) for r in again]
        qos = subprocess.run(["mlnx_qos", "-i", netdev], env=emu.env(), check=True, capture_output=True,
                             text=True, timeout=30).stdout
        assert re.search(r"prio:3 dscp:[0-9,]*\b26,", qos), qos
    finally:
        fleet.stop()


def _host_state(fleet, name: str) -> str:  # type: ignore[no-untyped-def]
    """The emulated host's sysfs, configfs and tool state files, with an unset mlx5 global traffic class
    written as -1 shown as the driver shows it (empty)."""
    return "\n".join(ln[:-len(" = -1")] + " = " if ln.endswith("traffic_class = -1") else ln
                     for ln in fleet[name].running_config().splitlines())


def test_failed_host_push_is_restored_and_says_so(tmp_path: Path) -> None:
    """A host whose driver lacks one DCQCN knob: the script stops half-way, apply runs the restore point
    the script wrote before changing anything, and the host is as found (and the report says so)."""
    fleet, inv, known = emulated_inventory("lab-2node.yaml", tmp_path, hosts=True)
    try:
        targets, _ = load_source(inv)
        host = next(t for t in targets if t.kind == "host")
        # prime the stub tools' state files (created on first read) with a dry run, then break one knob
        apply_targets(targets, _opts(tmp_path, known, dry_run=True, limit=[host.name]))
        sysroot = fleet[host.name].sandbox / "sysroot"
        # a DCQCN knob this driver lacks: the script stops there (exit 2) after changing the values before it
        next(sysroot.glob("sys/class/net/*/ecn/roce_rp/rpg_ai_rate")).unlink()
        before = _host_state(fleet, host.name)
        tag = f"rt_test_restore_{uuid.uuid4().hex[:8]}"  # the host's /tmp is this machine's: no fixed name
        push = PushOptions(confirm_s=60, read_timeout_s=20, tag=tag)
        res = apply_targets(targets, _opts(tmp_path, known, limit=[host.name], push=push))[0]
        assert res.state == "failed" and res.rolled_back, (res.state, res.error)
        assert "rpg_ai_rate does not exist" in (res.error or "") and "rolled back" in (res.error or "")
        assert _host_state(fleet, host.name) == before
        kept = (tmp_path / "logs" / f"{host.name}.{tag}.before.sh").read_text()
        assert "--trust pcp" in kept and "rt_put" in kept
        assert not list(Path("/tmp").glob(f"{tag}-*"))  # script and restore point removed on the host
    finally:
        fleet.stop()


@pytest.mark.slow  # end-to-end (subprocesses/emulators), seconds each: .ci/run runs it (-m slow)
def test_host_restore_that_cannot_put_everything_back_says_so(tmp_path: Path) -> None:
    """A knob that read empty before the push cannot be put back: apply restores everything else, does
    not claim a rollback, names the knob and does not retry (ROLLBACK INCOMPLETE)."""
    fleet, inv, known = emulated_inventory("lab-2node.yaml", tmp_path, hosts=True)
    try:
        targets, _ = load_source(inv)
        host = next(t for t in targets if t.kind == "host")
        apply_targets(targets, _opts(tmp_path, known, dry_run=True, limit=[host.name]))
        sysroot = fleet[host.name].sandbox / "sysroot"
        next(sysroot.glob("sys/class/net/*/ecn/roce_rp/rpg_ai_rate")).unlink()  # the push stops here
        empty = next(sysroot.glob("sys/class/net/*/ecn/roce_rp/dce_tcp_g"))  # written before rpg_ai_rate
        empty.write_text("")  # unreadable before the change
        before = _host_state(fleet, host.name)
        push = PushOptions(confirm_s=60, read_timeout_s=20, tag="rt_test_incomplete")
        res = apply_targets(targets, _opts(tmp_path, known, limit=[host.name], push=push))[0]
        assert res.state == "failed" and not res.rolled_back, (res.state, res.error)
        assert "ROLLBACK INCOMPLETE" in (res.error or "") and "dce_tcp_g" in (res.error or "")
        assert "(rolled back)" not in (res.error or "")
        changed = [a for a, b in zip(before.splitlines(), _host_state(fleet,
                                                                      host.name).splitlines()) if a != b]
        assert [ln.split(" = ")[0] for ln in changed] == [str(empty.relative_to(sysroot))]
        log = (tmp_path / "logs" / f"{host.name}.log").read_text()
        assert "rollback attempt failed" not in log  # reported once, not retried on new sessions
    finally:
        fleet.stop()


def test_host_timeout_is_not_reported_as_reverting_by_itself(tmp_path: Path) -> None:
    fleet, inv, known = emulated_inventory("lab-2node.yaml", tmp_path, hosts=True)
    try:
        targets, _ = load_source(inv)
        host = next(t for t in targets if t.kind == "host")
        push = PushOptions(confirm_s=60, read_timeout_s=20, tag="rt_test_timeout")
        res = apply_targets(targets, _opts(tmp_path, known, limit=[host.name], push=push,
                                           device_timeout_s=0.5))[0]
        assert res.state == "failed"
        assert "commit-confirm timer" not in (res.error or "")
        assert "host has no commit-confirm" in (res.error or "") and "rt_test_timeout.before.sh" in (res.error
                                                                                                     or "")
        log = tmp_path / "logs" / f"{host.name}.log"
        deadline = time.monotonic() + 60  # let the abandoned worker finish before the emulator stops
        while time.monotonic() < deadline and "# result:" not in (log.read_text() if log.exists() else ""):
            time.sleep(0.5)
    finally:
        fleet.stop()


def test_cli_dry_run_json(tmp_path: Path) -> None:
    fleet, inv, known = emulated_inventory("lab-2node.yaml", tmp_path)
    try:
        env = dict(os.environ, ROCE_TUNE_USERNAME="netops", ROCE_TUNE_PASSWORD=PASSWORD)
        proc = subprocess.run([sys.executable, "-m", "roce_tune.cli", "apply", str(inv), "--dry-run",
                               "--format",
                               "json", "--known-hosts", str(known), "--log-dir", str(tmp_path / "logs")],
                              capture_output=True, text=True, env=env, cwd=REPO, timeout=120)
        assert proc.returncode == 0, proc.stderr
        data = json.loads(proc.stdout)
        assert data["dry_run"] is True
        assert [d["state"] for d in data["devices"]] == ["would-change"]
        assert any(op.startswith("add /") or op.startswith("replace /") for op in data["devices"][0]["diff"])
    finally:
        fleet.stop()


@pytest.mark.slow  # end-to-end (subprocesses/emulators), seconds each: .ci/run runs it (-m slow)
@pytest.mark.parametrize("running_model, pool_mode", [("traditional", "dynamic"), ("dynamic", "static")])
def test_sonic_buffer_model_or_pool_mode_mismatch_refuses_before_any_push(tmp_path: Path, running_model: str,
                                                                           pool_mode: str) -> None:
    """lab-2node's SN4700 is planned for the dynamic model: a switch running the traditional model, or with a
    pool whose mode bufferorch only sets at creation, is refused with the reason, nothing is sent, exit 1."""
    fleet, inv, known = emulated_inventory("lab-2node.yaml", tmp_path)
    try:
        dev = fleet["lab-leaf1"]
        dev.config_db["DEVICE_METADATA"]["localhost"]["buffer_model"] = running_model
        dev.config_db["BUFFER_POOL"]["egress_lossless_pool"]["mode"] = pool_mode
        before = dev.running_config()
        env = dict(os.environ, ROCE_TUNE_USERNAME="netops", ROCE_TUNE_PASSWORD=PASSWORD)
        for extra in (["--dry-run"], ["--allow-disruptive"]):
            proc = subprocess.run([sys.executable, "-m", "roce_tune.cli", "apply", str(inv), *extra,
                                   "--format",
                                   "json", "--known-hosts", str(known), "--log-dir", str(tmp_path / "logs")],
                                  capture_output=True, text=True, env=env, cwd=REPO, timeout=120)
            assert proc.returncode != 0, proc.stdout
            (device,) = json.loads(proc.stdout)["devices"]
            assert device["state"] == "failed" and device["error"].startswith("preflight: "), device
            want = "buffer model" if running_model != "dynamic" else ("BUFFER_POOL|egress_lossless_pool mode "
                                                                      "is static")
            assert want in device["error"] and "config reload" in device["error"]
            assert not device.get("rolled_back")
            assert dev.running_config() == before, "nothing may be sent to a refused switch"
    finally:
        fleet.stop()
