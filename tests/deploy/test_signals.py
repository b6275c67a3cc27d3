"""SIGINT/SIGTERM during ``roce-tune apply``: a real ``roce-tune apply`` subprocess against the loopback
emulators, signalled while a device holds mid-push (the emulator's ``pause_pattern``: the device has
processed the matching command and withholds its prompt until the test resumes it, so "mid-push" is
exact, not a sleep). Each device must end byte-identical to before and the report must say so.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from roce_tune.deploy.apply import load_source
from roce_tune.deploy.drivers import PushOptions
from roce_tune.deploy.runner import ApplyOptions, StopRequest, apply_targets

from .conftest import PASSWORD, REPO, USER, emulated_inventory
from .test_apply import _host_state

# real signals to apply subprocesses against SSH emulators; CI runs them (.ci/run, -m
# slow)
pytestmark = pytest.mark.slow


class Apply:
    """A ``roce-tune apply`` subprocess with stdout/stderr in files (read while it runs)."""

    def __init__(self, tmp_path: Path, inv: Path, known: Path, *args: str) -> None:
        self.out_path, self.err_path = tmp_path / "apply.out", tmp_path / "apply.err"
        self.log_dir = tmp_path / "logs"
        env = dict(os.environ, ROCE_TUNE_USERNAME=USER, ROCE_TUNE_PASSWORD=PASSWORD, COLUMNS="250",
                   PYTHONPATH=os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]))
        with open(self.out_path, "w") as out, open(self.err_path, "w") as err:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "roce_tune.cli", "apply", str(inv), "--known-hosts", str(known),
                 "--log-dir", str(self.log_dir), "--confirm-seconds", "60", "--session-timing", "fast",
                 *args],
                stdout=out, stderr=err, env=env, cwd=REPO)

    def wait_paused(self, device, timeout: float = 90) -> None:  # type: ignore[no-untyped-def]
        """Wait until the emulated ``device`` holds at its pause pattern (fail at once if apply ended)."""
        deadline = time.monotonic() + timeout
        while not device.wait_paused(0.05):
            assert time.monotonic() < deadline and self.proc.poll() is None, \
                f"{device.name} never paused:\n{self.out_path.read_text()}\n{self.err_path.read_text()}"

    def signal(self, sig: int = signal.SIGINT) -> None:
        self.proc.send_signal(sig)

    def interrupt(self, device, sig: int | None = None) -> None:  # type: ignore[no-untyped-def]
        """Once the emulated ``device`` holds mid-push: send ``sig`` (default SIGINT) and wait until apply
        says it is stopping (the caller releases the device)."""
        sig = signal.SIGINT if sig is None else sig
        self.wait_paused(device)
        self.signal(sig)
        self.wait_stderr(rf"{signal.Signals(sig).name} received: stopping")

    def wait_stderr(self, pattern: str, timeout: float = 30) -> None:
        """Wait until stderr matches ``pattern`` (the handler writes at once; this is not a sleep)."""
        deadline = time.monotonic() + timeout
        while not re.search(pattern, self.err_path.read_text()):
            assert time.monotonic() < deadline and self.proc.poll() is None, \
                f"no {pattern!r} on stderr:\n{self.err_path.read_text()}\n{self.out_path.read_text()}"
            time.sleep(0.02)

    def finish(self, timeout: float = 120) -> tuple[int, str, str]:
        try:
            rc = self.proc.wait(timeout)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
        return rc, self.out_path.read_text(), self.err_path.read_text()


def _signalled_mid_push(tmp_path: Path, inventory: str, device: str, pattern: str, later: list[str],
                        sig: int = signal.SIGINT, hosts: bool = False):  # type: ignore[no-untyped-def]
    """Push ``device`` (then ``later`` devices, concurrency 1), signal while ``device`` holds at
    ``pattern``, resume it; return (fleet, states before, exit status, stdout, stderr)."""
    fleet, inv, known = emulated_inventory(inventory, tmp_path, hosts=hosts,
                                           faults={device: {"pause_pattern": pattern}})
    names = [device, *later]
    if hosts:  # the stub tools create their state files on first read: prime them with a dry run first
        targets, _ = load_source(inv)
        apply_targets(targets, ApplyOptions(dry_run=True, limit=[device], known_hosts=str(known),
                                            push=PushOptions(read_timeout_s=20)))
    state = _host_state if hosts else (lambda f, n: f[n].running_config())
    before = {n: state(fleet, n) for n in names}
    run = Apply(tmp_path, inv, known, "--allow-disruptive", "--concurrency", "1",
                *[a for n in names for a in ("--limit", n)])
    try:
        run.interrupt(fleet[device], sig)
    finally:
        fleet[device].resume()
    rc, out, err = run.finish()
    print(out, err)  # shown when the test fails
    return fleet, before, {n: state(fleet, n) for n in names}, rc, out, err


@pytest.mark.parametrize("inventory, device, pattern, never_sent, later, sig, sent", [
    # EOS: the session is committed with a commit timer (running config changed), not yet confirmed
    ("mixed-vendor.yaml", "leaf1", r"^commit timer", r"^configure session \S+ commit$", ["leaf2"],
     signal.SIGINT, True),
    # EOS: half of the lines are in the (uncommitted) configuration session: no change was sent, the aborted
    # session changed nothing (it was reported "rolled-back")
    ("mixed-vendor.yaml", "leaf2", r"^interface Ethernet3/1$", r"^commit timer", ["leaf3"], signal.SIGINT,
     False),
    # NX-OS: configure terminal applies each line at once: half-configured at interface Ethernet1/3
    ("mixed-vendor.yaml", "spine1", r"^interface Ethernet1/3$", r"^interface Ethernet1/4$", ["spine2"],
     signal.SIGINT, True),
    # Junos: `commit confirmed` done (active config changed), the confirming commit not yet sent
    ("mixed-vendor.yaml", "leaf3", r"^commit confirmed", r"^commit comment confirmed$", ["leaf4"],
     signal.SIGINT, True),
    # Junos: half of the `set` lines are in the private candidate, nothing committed
    ("mixed-vendor.yaml", "leaf4", r"^set interfaces et-0/0/4 mtu", r"^commit", ["leaf5"], signal.SIGINT,
     False),
    # SONiC: the first CONFIG_DB write is applied, the others, the read-back and the save not yet
    ("mixed-vendor.yaml", "leaf5", r"sonic-cfggen -j", r"config save", ["leaf6"], signal.SIGINT, True),
    # Cumulus: half of the `nv set`s are in the device-wide pending revision; SIGTERM this time
    ("mixed-vendor.yaml", "leaf7", r"^nv set qos pfc default-global tx enable",
     r"^nv set qos pfc default-global rx enable", ["leaf8"], signal.SIGTERM, False),
    # host: the script already changed trust, PFC and MTU and is about to set the RoCE ToS (the script is
    # one command: it runs to its end, then the restore point it wrote first puts every value back)
    ("lab-2node.yaml", "node1", r"^cma_roce_tos .*-t \d+", None, ["node2"], signal.SIGINT, True),
])
def test_signal_mid_push_rolls_back_and_reports(tmp_path: Path, inventory: str, device: str, pattern: str,
                                                never_sent: str | None, later: list[str], sig: int,
                                                sent: bool) -> None:
    """``sent``: the push had sent a change (:meth:`Driver.change_sent`) when the signal came: the device is
    reported rolled back; else "nothing changed", listed with the devices that were never started."""
    fleet, before, after, rc, out, err = _signalled_mid_push(tmp_path, inventory, device, pattern, later, sig,
                                                              hosts=device.startswith("node"))
    try:
        assert rc == 128 + sig, (rc, out, err)
        assert after == before, f"{device} is not as it was before the push:\n{out}\n{err}"
        name = signal.Signals(sig).name
        assert f"interrupted by {name}" in out, out
        if sent:
            assert re.search(rf"^\s*rolled back: {device}$", out, re.MULTILINE), out
            assert re.search(rf"^\s*nothing changed: {' ?, ?'.join(later)}$", out, re.MULTILINE), out
            assert re.search(rf"{device}\s.*rolled-back\s.*{name} received; stopped before sending", out), out
        else:
            assert "rolled back:" not in out and "rolled-back" not in out, out
            listed = rf"^\s*nothing changed: {device}, {' ?, ?'.join(later)}$"
            assert re.search(listed, out, re.MULTILINE), out
            assert re.search(rf"{device}\s.*not-started\s.*{name} received; stopped before sending", out), \
                out
            assert "nothing changed: the push was stopped before it sent any change" in out, out
        if never_sent:  # the push stopped at the next command: the rest of it never reached the device
            assert not [c for c in fleet[device].commands_seen if re.search(never_sent, c)]
        if fleet[device].platform == "cumulus":  # nothing left for the next `nv config apply` to pick up
            assert fleet[device].pending is None
        if fleet[device].platform == "host":  # its restore point is kept locally
            kept = list((tmp_path / "logs").glob(f"{device}.*.before.sh"))
            assert kept and "rt_put" in kept[0].read_text()
    finally:
        fleet.stop()


def test_signal_before_any_device_starts(tmp_path: Path) -> None:
    """A stop requested before the run: no device is contacted, each is reported not started."""
    fleet, inv, known = emulated_inventory("mixed-vendor.yaml", tmp_path)
    try:
        targets, _ = load_source(inv)
        stop = StopRequest()
        stop.request(signal.SIGINT)
        seen: list[str] = []
        results = apply_targets(targets, ApplyOptions(known_hosts=str(known), log_dir=tmp_path / "logs",
                                                      allow_disruptive=True),
                                on_result=lambda r: seen.append(r.name), stop=stop)
        assert {r.state for r in results} == {"not-started"} and all(r.failed for r in results)
        assert sorted(seen) == sorted(t.name for t in targets)
        assert all(dev.connections == 0 for dev in fleet), "no device may be contacted"
        assert stop.exit_status == 130
    finally:
        fleet.stop()


def test_signal_while_first_device_reads_starts_nothing(tmp_path: Path) -> None:
    """CLI: SIGINT while the first device is still reading its running config: nothing is pushed anywhere,
    every device is reported not started, the summary is printed and the exit status is 130 (JSON too)."""
    fleet, inv, known = emulated_inventory("mixed-vendor.yaml", tmp_path,
                                           faults={"leaf1": {"pause_pattern": r"^show running-config$"}})
    try:
        names = ["leaf1", "leaf3", "spine1"]
        before = {n: fleet[n].running_config() for n in names}
        run = Apply(tmp_path, inv, known, "--allow-disruptive", "--concurrency", "1", "--format", "json",
                    *[a for n in names for a in ("--limit", n)])
        try:
            run.interrupt(fleet["leaf1"])
        finally:
            fleet["leaf1"].resume()
        rc, out, err = run.finish()
        assert rc == 130, (rc, out, err)
        data = json.loads(out)
        assert data["interrupted"] == "SIGINT"
        assert {d["name"]: d["state"] for d in data["devices"]} == dict.fromkeys(names, "not-started")
        assert re.search(r"^\s*nothing changed: leaf1, leaf3, spine1$", err, re.MULTILINE), err
        assert {n: fleet[n].running_config() for n in names} == before
        assert fleet["leaf3"].connections == 0 and fleet["spine1"].connections == 0
    finally:
        fleet.stop()


def test_second_signal_aborts_and_says_what_is_left_where(tmp_path: Path) -> None:
    """A second SIGINT while NX-OS is half-configured: exit at once with what the switch is left in, the
    command that puts it back (which works) and where the restore point is."""
    fleet, inv, known = emulated_inventory("mixed-vendor.yaml", tmp_path,
                                           faults={"spine1": {"pause_pattern": r"^interface Ethernet1/3$"}})
    try:
        before = fleet["spine1"].running_config()
        run = Apply(tmp_path, inv, known, "--limit", "spine1", "--allow-disruptive")
        try:
            run.interrupt(fleet["spine1"])
            run.signal()
            rc, out, err = run.finish(30)  # while the switch still holds: nothing waits for it
        finally:
            fleet["spine1"].resume()
        assert rc == 130, (rc, out, err)
        assert "SIGINT received again: aborting now" in err
        line = next(ln for ln in err.splitlines() if ln.strip().startswith("spine1 (nxos"))
        assert f"127.0.0.1:{fleet.port('spine1')}" in line
        assert "stopped mid-push; may be half-configured" in line
        command = re.search(r"`(rollback running-config checkpoint \S+ atomic)`",
                            line).group(1)  # type: ignore[union-attr]
        restore = Path(re.search(r"restore point: (\S+)$", line).group(1))  # type: ignore[union-attr]
        assert restore.is_file() and "interface Ethernet1/1" in restore.read_text()
        assert fleet["spine1"].running_config() != before  # aborted: left half-configured, as reported
        conn = fleet.connect("spine1")
        try:
            assert "Invalid" not in conn.send_command(command)
        finally:
            conn.disconnect()
        assert fleet["spine1"].running_config() == before
    finally:
        fleet.stop()


def test_first_signal_does_not_cut_a_rollback_short(tmp_path: Path) -> None:
    """A push fails (a rejected line), and SIGINT arrives as its rollback starts (it leaves config mode,
    then rolls back to the checkpoint): the rollback completes, the switch is as before, the run still
    stops (exit 130) and says the device was rolled back."""
    fleet, inv, known = emulated_inventory("mixed-vendor.yaml", tmp_path, faults={"spine1": {
        "reject_pattern": r"^interface Ethernet1/5$",
        "pause_pattern": r"^end$"}})  # the rollback's first step (the push itself never leaves config mode)
    try:
        before = {n: fleet[n].running_config() for n in ("spine1", "spine2")}
        run = Apply(tmp_path, inv, known, "--allow-disruptive", "--concurrency", "1", "--limit", "spine1",
                    "--limit", "spine2")
        try:
            run.wait_paused(fleet["spine1"])
            assert fleet["spine1"].running_config() != before["spine1"]  # half-configured, rollback to come
            run.signal()
            run.wait_stderr("SIGINT received: stopping")
        finally:
            fleet["spine1"].resume()
        rc, out, err = run.finish()
        assert rc == 130, (rc, out, err)
        assert {n: fleet[n].running_config() for n in before} == before
        assert re.search(r"spine1\s.*failed\s.*rolled back", out) and "new session" not in out, out
        assert re.search(r"^\s*failed: spine1$", out, re.MULTILINE), out
        assert re.search(r"^\s*nothing changed: spine2$", out, re.MULTILINE), out
    finally:
        fleet.stop()


def test_stopped_push_whose_rollback_fails_is_reported_unknown_with_its_restore_point(tmp_path: Path) -> None:
    """SIGINT mid-push on NX-OS whose checkpoint rollback is refused (on every session): the device is
    reported in an unknown state with what it is left in, the command to put it back and its restore point."""
    fleet, inv, known = emulated_inventory("mixed-vendor.yaml", tmp_path, faults={"spine1": {
        "pause_pattern": r"^interface Ethernet1/3$", "reject_pattern": r"^rollback running-config"}})
    try:
        run = Apply(tmp_path, inv, known, "--allow-disruptive", "--limit", "spine1")
        try:
            run.interrupt(fleet["spine1"])
        finally:
            fleet["spine1"].resume()
        rc, out, err = run.finish()
        assert rc == 130, (rc, out, err)
        assert re.search(r"^\s*UNKNOWN STATE \(check by hand\): spine1$", out, re.MULTILINE), out
        detail = next(ln for ln in out.splitlines() if ln.strip().startswith("spine1: "))
        assert "ROLLBACK FAILED" in detail and "may be half-configured" in detail
        assert re.search(r"`rollback running-config checkpoint \S+ atomic`", detail)
        restore = Path(re.search(r"restore point: (\S+)$", detail).group(1))  # type: ignore[union-attr]
        assert restore.is_file() and restore.parent == tmp_path / "logs"
    finally:
        fleet.stop()
