"""apply tells the truth: rejected saves, rejected commands, dropped sessions, unreachable devices and
host keys, device text in the report, stale profiles — end to end against the loopback SSH emulators."""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import time
from pathlib import Path

import asyncssh
import pytest
from ruamel.yaml import YAML

from roce_tune.deploy.apply import load_source
from roce_tune.deploy.drivers import PushOptions
from roce_tune.deploy.runner import ApplyOptions, apply_targets
from tests.emulators import LOOPBACK_TIMING

from .conftest import REPO, emulated_inventory


def _opts(tmp_path: Path, known: Path, **kw) -> ApplyOptions:  # type: ignore[no-untyped-def]
    push = kw.pop("push", PushOptions(confirm_s=60, read_timeout_s=20))
    # netmiko pacing for loopback emulators
    # (tests/emulators/README.md)
    kw.setdefault("timing", LOOPBACK_TIMING)
    return ApplyOptions(known_hosts=str(known), log_dir=tmp_path / "logs", push=push, **kw)


@pytest.mark.slow  # several pushes over SSH to the emulators (~10 s); CI runs -m slow
def test_rejected_save_is_a_failure_that_says_startup_differs(tmp_path: Path) -> None:
    """EOS write memory, NX-OS copy, SONiC config save and Cumulus nv config save each refused: the change
    is live and verified (not rolled back), the device is `failed`, and the error says startup differs."""
    devices = {"leaf1": "eos", "spine1": "nxos", "leaf5": "sonic", "leaf7": "cumulus"}
    fleet, inv, known = emulated_inventory("mixed-vendor.yaml", tmp_path,
                                           faults={n: {"fail_save": True} for n in devices})
    try:
        targets, _ = load_source(inv)
        before = {n: fleet[n].running_config() for n in devices}
        results = {r.name: r for r in apply_targets(targets, _opts(tmp_path, known, allow_disruptive=True,
                                                                    limit=list(devices)))}
        for name in devices:
            r = results[name]
            assert r.state == "failed" and r.failed, (name, r.state, r.error)
            assert not r.rolled_back and "rolled back" not in (r.error or ""), (name, r.error)
            assert (r.error and r.error.startswith("save: ")
                    and "differs from the startup configuration" in r.error)
            assert fleet[name].running_config() != before[name], f"{name}: the verified change stays live"
        assert "No space left on device" in (results["leaf1"].error or "")
        assert "ERROR: Configuration save failed" in (results["spine1"].error or "")
        assert "`copy running-config startup-config`" in (results["spine1"].error or "")
        eos = fleet["leaf1"]
        assert eos.startup.copy().children != eos.running.copy().children  # startup kept the old config
        # without the fault the same save passes and the devices are "pushed"
        for name in devices:
            fleet[name].clear_faults()
        again = apply_targets(targets, _opts(tmp_path, known, allow_disruptive=True, limit=list(devices)))
        assert {r.state for r in again} == {"no-change"}
    finally:
        fleet.stop()


@pytest.mark.slow  # end-to-end (subprocesses/emulators), seconds each: .ci/run runs it (-m slow)
def test_rejected_command_names_the_command_and_the_device_error(tmp_path: Path) -> None:
    faults = {"leaf1": {"reject_pattern": r"random-detect ecn"},
              "spine1": {"reject_pattern": r"random-detect"},
              "leaf3": {"reject_pattern": r"drop-profiles"}}
    fleet, inv, known = emulated_inventory("mixed-vendor.yaml", tmp_path, faults=faults)
    try:
        targets, _ = load_source(inv)
        results = {r.name: r for r in apply_targets(targets, _opts(tmp_path, known, allow_disruptive=True,
                                                                    limit=list(faults)))}
        expect = {"leaf1": ("% Invalid input", "random-detect ecn"),
                  "spine1": ("% Invalid command at '^' marker.", "random-detect"),
                  "leaf3": ("syntax error", "drop-profiles")}
        # a line rejected in an EOS session / Junos candidate changed nothing; on NX-OS the lines before it
        # took effect and were rolled back
        label = {"leaf1": "nothing changed", "spine1": "rolled back", "leaf3": "nothing changed"}
        for name, (device_error, command) in expect.items():
            err = results[name].error or ""
            assert results[name].state == "failed" and label[name] in err, (name, err)
            assert device_error in err, (name, err)
            assert "device rejected `" in err and command in err.split("device rejected `",
                                                                       1)[1].split("`")[0]
            assert "(config" not in err and "#" not in err.split("`")[0], (f"{name}: a prompt is not an "
                                                                           f"error: {err}")
    finally:
        fleet.stop()


@pytest.mark.slow  # several pushes over SSH to the emulators (~10 s); CI runs -m slow
@pytest.mark.parametrize("device, fault, label", [
    # cumulus: dropped mid `nv set` (nothing applied: the new session only detaches the pending sets)
    ("leaf7", {"drop_after_config_lines": 4, "drop_reconnects": 3},
     "(nothing changed: the push failed before it sent any change)"),
    # sonic: the first CONFIG_DB write applied, its reply lost
    ("leaf5", {"drop_after_pattern": r"sonic-cfggen -j", "drop_reconnects": 3},
     "on a new session: rolled back"),
])
def test_dropped_session_is_noticed_at_once_and_rolled_back(tmp_path: Path, device: str,
                                                           fault: dict[str, object], label: str) -> None:
    """With the default timeouts (the CLI's), a dropped session is noticed when it drops (not after a read
    timeout), and reconnects that keep dropping are retried until the rollback (or the clean-up of a push
    that sent no change) runs; the label says which."""
    fleet, inv, known = emulated_inventory("mixed-vendor.yaml", tmp_path, faults={device: fault})
    try:
        targets, _ = load_source(inv)
        before = fleet[device].running_config()
        t0 = time.monotonic()
        res = apply_targets(targets, _opts(tmp_path, known, allow_disruptive=True, limit=[device],
                                           push=PushOptions(confirm_s=120)))[0]
        took = time.monotonic() - t0
        assert res.state == "failed" and res.rolled_back is ("rolled back" in label), (res.state, res.error)
        assert label in (res.error or ""), res.error
        assert fleet[device].running_config() == before
        assert sum("reconnect will be dropped" in e for e in fleet[device].events) == 3
        assert took < 60, f"a dropped session took {took:.0f} s to handle"
    finally:
        fleet.stop()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_connect_failures_name_device_address_and_cause(tmp_path: Path) -> None:
    fleet, inv, known = emulated_inventory("lab-2node.yaml", tmp_path)
    try:
        targets, _ = load_source(inv)
        leaf = next(t for t in targets if t.name == "lab-leaf1")
        port = fleet.port("lab-leaf1")
        home = tmp_path / "home"  # no ~/.ssh/known_hosts of the test runner can interfere
        home.mkdir()
        old_home = os.environ.get("HOME")
        os.environ["HOME"] = str(home)
        try:
            # unreachable: nothing listens on the port
            dead = _free_port()
            leaf.port = dead
            r = apply_targets([leaf], _opts(tmp_path, known, dry_run=True))[0]
            assert r.state == "failed"
            assert (r.error
                    or "").startswith(f"connect: lab-leaf1 (127.0.0.1:{dead}): TCP connection "
                                      "failed"), r.error
            assert "refused" in (r.error or "").lower()
            leaf.port = port
            # unknown host key: an empty known_hosts file
            empty = tmp_path / "empty_known_hosts"
            empty.write_text("")
            r = apply_targets([leaf], _opts(tmp_path, empty, dry_run=True))[0]
            assert f"lab-leaf1 (127.0.0.1:{port}): host key unknown" in (r.error or ""), r.error
            assert str(empty) in (r.error or "") and "NetmikoTimeoutException" not in (r.error or "")
            # a different key recorded for the device: a mismatch, said as such
            other = asyncssh.generate_private_key("ssh-ed25519").export_public_key().decode().split()
            wrong = tmp_path / "wrong_known_hosts"
            wrong.write_text(f"[127.0.0.1]:{port} {other[0]} {other[1]}\n")
            r = apply_targets([leaf], _opts(tmp_path, wrong, dry_run=True))[0]
            assert "HOST KEY MISMATCH" in (r.error or "") and str(wrong) in (r.error or ""), r.error
            # a known_hosts file that does not exist is an error, not silently "no extra keys"
            r = apply_targets([leaf], _opts(tmp_path, tmp_path / "missing", dry_run=True))[0]
            assert r.state == "failed" and "does not exist" in (r.error or ""), r.error
        finally:
            if old_home is not None:
                os.environ["HOME"] = old_home
    finally:
        fleet.stop()


def _cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "roce_tune.cli", *args], capture_output=True, text=True,
                          cwd=REPO, env={**os.environ, "COLUMNS": "200", **(env or {})}, timeout=600)


def test_cli_known_hosts_missing_file_exits_2(tmp_path: Path) -> None:
    res = _cli("apply", str(REPO / "inventories" / "lab-2node.yaml"), "--dry-run",
               "--known-hosts", str(tmp_path / "nope"))
    assert res.returncode == 2, res.stdout + res.stderr
    assert "--known-hosts" in res.stderr and "does not exist" in res.stderr


@pytest.mark.slow
def test_cli_prints_device_text_verbatim_and_each_device_once(tmp_path: Path) -> None:
    """A host tool's error with rich-markup-like text ("[/dev/mst/…]") is printed as is and the run goes
    on; with --allow-disruptive every device is counted and printed once (no interim blocked-disruptive)."""
    fleet, inv, known = emulated_inventory("lab-2node.yaml", tmp_path, hosts=True)
    try:
        host = fleet["node1"]
        stub = host.bin / "mlnx_qos"
        real = stub.read_text().splitlines()[-1]
        # reads pass; a write fails the way mlnx_qos does without access to the MST device
        stub.write_text("#!/bin/sh\nfor a in \"$@\"; do case \"$a\" in "
                        "--trust|--pfc|-f|--dscp2prio|--cable_len)\necho 'mlnx_qos: cannot open "
                        "[/dev/mst/mt4129_pciconf0] [bold]' >&2; exit 1;; esac; done\n"
                        + real + "\n")
        log_dir = tmp_path / "cli-logs"
        res = _cli("apply", str(inv), "--known-hosts", str(known), "--allow-disruptive", "--log-dir",
                   str(log_dir),
                   "--limit", "node1", "--limit", "lab-leaf1", "--limit", "node2", "--session-timing", "fast")
        out = res.stdout + res.stderr
        assert res.returncode == 1, out
        assert "Traceback" not in out and "MarkupError" not in out, out
        assert "cannot open [/dev/mst/mt4129_pciconf0] [bold]" in out, out
        assert "blocked-disruptive" not in out, out
        lines = [ln.split() for ln in res.stdout.splitlines() if ln.split()[:1] in (["node1"], ["node2"],
                                                                                    ["lab-leaf1"])]
        states = {ln[0]: ln[1] for ln in lines if len(ln) > 1 and ln[1] in ("pushed", "failed", "no-change")}
        assert states == {"node1": "failed", "node2": "pushed", "lab-leaf1": "pushed"}, res.stdout
        progress_done = [ln for ln in res.stdout.splitlines() if "devices" in ln and "/3" in ln]
        assert progress_done and all("4/3" not in ln and "5/3" not in ln for ln in res.stdout.splitlines())
        assert "3/3" in res.stdout
    finally:
        fleet.stop()


def _with_pinned_ecn(tmp_path: Path, inv: Path) -> Path:
    data = YAML(typ="safe").load(inv.read_text())
    data.setdefault("policy", {})["overrides"] = [{"set": {"kmax_bytes": "900KB"}, "reason": "test: pinned"}]
    out = tmp_path / "pinned.yaml"
    with open(out, "w") as fh:
        YAML().dump(data, fh)
    return out


@pytest.mark.slow  # several pushes over SSH to the emulators (~10 s); CI runs -m slow
def test_reapply_removes_own_stale_profiles_only(tmp_path: Path) -> None:
    """Push with a pinned ECN value (profiles ROCE_LOSSLESS_…_PIN), then without: the dry run shows the
    _PIN profiles as removals, the push removes them, and objects roce-tune did not name stay."""
    devices = ["leaf1", "spine1", "leaf5"]
    fleet, inv, known = emulated_inventory("mixed-vendor.yaml", tmp_path)
    try:
        pinned, _ = load_source(_with_pinned_ecn(tmp_path, inv))
        first = apply_targets(pinned, _opts(tmp_path, known, allow_disruptive=True, limit=devices))
        assert {r.state for r in first} == {"pushed"}, [(r.name, r.error) for r in first]
        assert all("_PIN" in fleet[n].running_config() for n in devices)
        # objects that are not roce-tune's: an operator's WRED profile and EOS qos profile
        sonic = fleet["leaf5"]
        with sonic.lock:
            sonic.config_db.setdefault("WRED_PROFILE", {})["AZURE_LOSSLESS"] = {"ecn": "ecn_all",
                                                                                "wred_green_enable": "true"}
        conn = fleet.connect("leaf1")
        conn.send_config_set(["qos profile OPERATOR_QOS", "   qos trust cos"])
        conn.disconnect()
        kept = {"leaf5": "AZURE_LOSSLESS", "leaf1": "qos profile OPERATOR_QOS"}
        assert all(v in fleet[n].running_config() for n, v in kept.items())

        targets, _ = load_source(inv)
        dry = {r.name: r for r in apply_targets(targets, _opts(tmp_path, known, dry_run=True, limit=devices))}
        assert any(d.startswith("remove /WRED_PROFILE/ROCE_LOSSLESS_") and "_PIN" in d
                   for d in dry["leaf5"].diff)
        assert any(re.fullmatch(r"- qos profile ROCE_LOSSLESS_\w+_PIN",
                                d) for d in dry["leaf1"].diff), dry["leaf1"].diff
        assert any(re.fullmatch(r"- policy-map type queuing RT_EGRESS_ROCE_LOSSLESS_\w+_PIN", d)
                   for d in dry["spine1"].diff), dry["spine1"].diff
        assert not any("OPERATOR_QOS" in d or "AZURE_LOSSLESS" in d for r in dry.values() for d in r.diff)
        second = apply_targets(targets, _opts(tmp_path, known, allow_disruptive=True, limit=devices))
        assert {r.state for r in second} == {"pushed"}, [(r.name, r.error) for r in second]
        for name in devices:
            assert "_PIN" not in fleet[name].running_config(), name
        assert all(v in fleet[n].running_config() for n, v in kept.items())
        again = apply_targets(targets, _opts(tmp_path, known, dry_run=True, limit=devices))
        assert {r.state for r in again} == {"no-change"}, [(r.name, r.diff[:5]) for r in again]
    finally:
        fleet.stop()
