"""The host script at boot (the systemd unit's ``--boot`` run) and the restore point's lock.

At boot no one watches: a GPU node with one dead NIC must still get trust, PFC, TOS and DCQCN on its healthy
NICs (else they run lossy RoCE into a lossless fabric), name the missing one in the journal and fail the unit.
A push (``--save``), a plain run and ``--check`` still stop before any change when a planned NIC is missing.

Runs the real rendered script with ``bash`` against a fake root (``ROCE_TUNE_SYSROOT``), the stub NIC tools of
tests/render/test_host.py and the emulator's ``systemctl``/``udevadm``/``ethtool`` stubs.
"""

from __future__ import annotations

import configparser
import fcntl
import shlex
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from roce_tune.plan import Plan
from roce_tune.platforms import host

from .plan_builder import build_plan
from .test_host import Box, _box_env, _device_view, _run_file

SCRIPT = Path(host.PERSIST_SCRIPT.lstrip("/"))


def _plan_and_script() -> tuple[Plan, str, dict[str, str]]:
    plan = build_plan()
    files = host.render_hosts(plan, plan.hosts)
    h = plan.hosts[0]
    return plan, host.host_script({f"hosts/{k}": v for k, v in files.items()}, h.name) or "", files


def _unit_argv(files: dict[str, str], root: Path) -> list[str]:
    """The unit's ExecStart as an argv, its script path under ``root`` (where the push installed it)."""
    parser = configparser.ConfigParser(strict=True, interpolation=None, comment_prefixes=("#", ";"))
    parser.read_string(files[host.UNIT_NAME])
    argv = shlex.split(parser["Service"]["ExecStart"])
    return [str(root / a.lstrip("/")) if a == host.PERSIST_SCRIPT else a for a in argv]


def _remove_nic(box: Box, netdev: str, rdma: str) -> None:
    """The NIC is gone (dead card, firmware stuck in reset, driver not bound): no netdev, no RDMA device."""
    shutil.rmtree(box.state / "netdev" / netdev)
    shutil.rmtree(box.state / "rdma" / rdma)
    shutil.rmtree(box.root / "sys/class/net" / netdev)
    shutil.rmtree(box.root / "sys/class/infiniband" / rdma)


def _only(view: dict[str, str], netdev: str, rdma: str) -> dict[str, str]:
    return {k: v for k, v in view.items() if netdev in k or f"/{rdma}/" in k or k.startswith(f"{rdma} ")}


def _booted_box(tmp_path: Path, script: str, files: dict[str, str]) -> tuple[Box, list[str]]:
    """A host the push configured (so its boot files are installed), then rebooted: its NICs back at the
    driver's defaults, the installed script, unit and rule kept. Returns the box and the unit's argv."""
    plan = build_plan()
    h = plan.hosts[0]
    (tmp_path / "pushed").mkdir()
    pushed = Box(tmp_path / "pushed", h)
    res = _run_file(_write(tmp_path / "push.sh", script), env=_box_env(pushed))
    assert res.returncode == 0, res.stderr
    (tmp_path / "booted").mkdir()
    box = Box(tmp_path / "booted", h)
    for rel in (SCRIPT, Path(host.UNIT_PATH.lstrip("/")), Path(host.UDEV_RULE_PATH.lstrip("/"))):
        (box.root / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(pushed.root / rel, box.root / rel)
    shutil.copytree(pushed.root / "etc/systemd/system/multi-user.target.wants",
                    box.root / "etc/systemd/system/multi-user.target.wants", symlinks=True)
    return box, _unit_argv(files, box.root)


def _write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def test_the_unit_runs_the_installed_script_in_boot_mode() -> None:
    _, _, files = _plan_and_script()
    assert _unit_argv(files, Path("/")) == ["/bin/bash", host.PERSIST_SCRIPT, "--boot"]


@pytest.mark.parametrize("gone", [0, 1])
def test_at_boot_a_missing_nic_is_named_and_every_other_nic_is_configured(tmp_path: Path, gone: int) -> None:
    # A GPU node boots with one NIC dead. The unit's run used to stop (exit 2) before any change, leaving the
    # healthy NICs on PCP trust with PFC off: lossy RoCE into a lossless fabric.
    plan, script, files = _plan_and_script()
    h = plan.hosts[0]
    box, argv = _booted_box(tmp_path, script, files)
    env = _box_env(box)
    missing, kept = h.nics[gone], h.nics[1 - gone]
    _remove_nic(box, missing.netdev, missing.rdma_device)
    res = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=120, check=False)
    assert res.returncode == 4, res.stdout + res.stderr
    assert f"{missing.netdev} ({missing.rdma_device} port 1)" in res.stderr, res.stderr
    assert "not configured" in res.stderr and "MISMATCH" not in res.stderr, res.stderr
    assert "all values set" not in res.stdout  # the run does not claim a success it did not have
    # the healthy NIC holds every planned value: the same view as on a host whose NICs are all there
    (tmp_path / "full").mkdir()
    full = Box(tmp_path / "full", h)
    ok = _run_file(_write(tmp_path / "full.sh", script), env=_box_env(full))
    assert ok.returncode == 0, ok.stderr
    want = _only(_device_view(full, h, _box_env(full)), kept.netdev, kept.rdma_device)
    got = _only(_device_view(box, h, env), kept.netdev, kept.rdma_device)
    assert want and got == want
    # and a --check of that NIC reads back clean: only the missing NIC's values are named
    check = _run_file(box.root / SCRIPT, "--check", env=env)
    assert check.returncode == 1
    named = {ln.split()[1] for ln in check.stderr.splitlines() if ln.strip().startswith("MISMATCH")}
    assert named <= {missing.netdev, missing.rdma_device}, check.stderr


def _fail_step(box: Box, netdev: str, how: str) -> str:
    """Make one step of ``netdev``'s configuration fail after the ready check; returns what stderr names.
    ``sysfs``: the driver refuses a DCQCN value (every write to /dev/full fails, as an -EINVAL store does);
    ``tool``: mlnx_qos refuses the NIC's PFC/cable call (it says why on stdout, exit 1)."""
    if how == "sysfs":
        target = box.root / "sys/class/net" / netdev / "ecn/roce_rp/rpg_ai_rate"
        target.unlink()
        target.symlink_to("/dev/full")
        return f"writing 80 to {target} failed"
    (box.bin / "mlnx_qos").rename(box.bin / "mlnx_qos.real")
    (box.bin / "mlnx_qos").write_text(
        f'#!/bin/bash\nif [[ "$2" == {netdev} && "$3" == --pfc ]]; then\n'
        '    echo "Error: PFC is locked"; exit 1\nfi\n'
        'exec "$(dirname "$0")/mlnx_qos.real" "$@"\n')
    (box.bin / "mlnx_qos").chmod(0o755)
    return f"mlnx_qos -i {netdev} --pfc 0,0,0,1,0,0,0,0 --cable_len 2 failed (exit 1): Error: PFC is locked"


@pytest.mark.slow  # end-to-end (subprocesses/emulators), seconds each: .ci/run runs it (-m slow)
@pytest.mark.parametrize("how", ["sysfs", "tool"])
@pytest.mark.parametrize("failing", [0, 1])
def test_at_boot_a_nic_whose_step_fails_is_named_and_every_other_nic_is_configured(
        tmp_path: Path, failing: int, how: str) -> None:
    # Every NIC passed the ready check, then one step of one NIC failed (a DCQCN value its firmware refuses,
    # mlnx_qos refusing its PFC call). The boot run used to stop there, exit 2: a failure on the first NIC
    # left every later NIC on the driver's defaults (PCP trust, PFC off), lossy RoCE into a lossless fabric.
    plan, script, files = _plan_and_script()
    h = plan.hosts[0]
    box, argv = _booted_box(tmp_path, script, files)
    env = _box_env(box)
    bad, kept = h.nics[failing], h.nics[1 - failing]
    said = _fail_step(box, bad.netdev, how)
    res = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=120, check=False)
    assert res.returncode == 4, res.stdout + res.stderr
    assert said in res.stderr, res.stderr
    last = res.stderr.splitlines()[-2:]  # the summary names the NIC, then the others' result
    assert f"failed part-way, not read back: {bad.netdev} ({bad.rdma_device} port 1)" in last[0], res.stderr
    assert "every other NIC set and read back" in last[1] and "MISMATCH" not in res.stderr, res.stderr
    assert "all values set" not in res.stdout
    (tmp_path / "full").mkdir()
    full = Box(tmp_path / "full", h)
    ok = _run_file(_write(tmp_path / "full.sh", script), env=_box_env(full))
    assert ok.returncode == 0, ok.stderr
    want = _only(_device_view(full, h, _box_env(full)), kept.netdev, kept.rdma_device)
    got = _only(_device_view(box, h, env), kept.netdev, kept.rdma_device)
    assert want and got == want


def test_at_boot_every_nic_whose_step_fails_is_named(tmp_path: Path) -> None:
    plan, script, files = _plan_and_script()
    h = plan.hosts[0]
    box, argv = _booted_box(tmp_path, script, files)
    said = [_fail_step(box, h.nics[0].netdev, "tool"), _fail_step(box, h.nics[1].netdev, "sysfs")]
    res = subprocess.run(argv, env=_box_env(box), capture_output=True, text=True, timeout=120, check=False)
    assert res.returncode == 4, res.stdout + res.stderr
    assert all(s in res.stderr for s in said), res.stderr
    assert ("boot run: 2 of 2 planned NIC(s) failed part-way, not read back: "
            f"{h.nics[0].netdev} ({h.nics[0].rdma_device} port 1), "
            f"{h.nics[1].netdev} ({h.nics[1].rdma_device} port 1)") in res.stderr, res.stderr


@pytest.mark.parametrize("args", [(), ("--save", "RESTORE")])
def test_a_push_or_plain_run_still_stops_at_the_first_nic_step_that_fails(
        tmp_path: Path, args: tuple[str, ...]) -> None:
    plan, script, _ = _plan_and_script()
    h = plan.hosts[0]
    box = Box(tmp_path, h)
    env = _box_env(box)
    said = _fail_step(box, h.nics[0].netdev, "tool")
    argv = [str(tmp_path / "r.sh") if a == "RESTORE" else a for a in args]
    res = _run_file(_write(tmp_path / "push.sh", script), *argv, env=env)
    assert res.returncode == 2 and said in res.stderr, res.stderr
    assert "boot run" not in res.stderr
    # the next NIC was not touched: it stopped there (apply then runs the restore point)
    assert "pcp" in subprocess.run(["mlnx_qos", "-i", h.nics[1].netdev], env=env, capture_output=True,
                                   text=True, check=True).stdout


def test_at_boot_with_every_nic_missing_nothing_is_changed_and_each_is_named(tmp_path: Path) -> None:
    plan, script, files = _plan_and_script()
    h = plan.hosts[0]
    box, argv = _booted_box(tmp_path, script, files)
    for n in h.nics:
        _remove_nic(box, n.netdev, n.rdma_device)
    before = box.snapshot()
    res = subprocess.run(argv, env=_box_env(box), capture_output=True, text=True, timeout=120, check=False)
    assert res.returncode == 4, res.stdout + res.stderr
    for n in h.nics:
        assert f"{n.netdev} ({n.rdma_device} port 1)" in res.stderr, res.stderr
    assert {k: v for k, v in box.snapshot().items() if not k.endswith(".lock")} == before


def test_at_boot_with_every_nic_there_the_run_is_a_plain_apply(tmp_path: Path) -> None:
    plan, script, files = _plan_and_script()
    box, argv = _booted_box(tmp_path, script, files)
    res = subprocess.run(argv, env=_box_env(box), capture_output=True, text=True, timeout=120, check=False)
    assert res.returncode == 0, res.stderr
    assert "all values set and read back" in res.stdout and res.stderr == ""


@pytest.mark.parametrize("args", [(), ("--save", "RESTORE")])
def test_a_push_or_plain_run_still_stops_before_any_change_when_a_nic_is_missing(
        tmp_path: Path, args: tuple[str, ...]) -> None:
    plan, script, _ = _plan_and_script()
    h = plan.hosts[0]
    box = Box(tmp_path, h)
    _remove_nic(box, h.nics[1].netdev, h.nics[1].rdma_device)
    env = _box_env(box)
    before = _device_view(box, h, env)
    argv = [str(tmp_path / "r.sh") if a == "RESTORE" else a for a in args]
    res = _run_file(_write(tmp_path / "push.sh", script), *argv, env=env)
    assert res.returncode == 2, res.stderr
    assert f"mlnx_qos -i {h.nics[1].netdev} failed" in res.stderr, res.stderr
    assert _device_view(box, h, env) == before


def test_boot_is_refused_with_another_argument(tmp_path: Path) -> None:
    plan, script, _ = _plan_and_script()
    box = Box(tmp_path, plan.hosts[0])
    path = _write(tmp_path / "push.sh", script)
    for args in (("--boot", "--check"), ("--check", "--boot"), ("--boot", "x")):
        res = _run_file(path, *args, env=_box_env(box))
        assert res.returncode == 2 and "usage:" in res.stderr, res.stderr


@pytest.mark.slow  # end-to-end (subprocesses/emulators), seconds each: .ci/run runs it (-m slow)
def test_the_restore_point_waits_for_the_lock_another_run_holds(tmp_path: Path) -> None:
    # apply runs the restore point after a failed push; the boot unit (started by udev when a NIC comes back)
    # may run the host script at that moment. Both writing the NIC at once interleave: the restore point must
    # take the lock every run of the script holds, and wait for it rather than write alongside.
    plan, script, _ = _plan_and_script()
    h = plan.hosts[0]
    box = Box(tmp_path, h)
    env = _box_env(box)
    before = _device_view(box, h, env)
    restore = tmp_path / "restore.sh"
    res = _run_file(_write(tmp_path / "push.sh", script), "--save", str(restore), env=env)
    assert res.returncode == 0, res.stderr
    changed = _device_view(box, h, env)
    assert changed != before
    lock = box.root / host.LOCK_PATH.lstrip("/")
    with open(lock, "a", encoding="utf-8") as held:
        fcntl.flock(held, fcntl.LOCK_EX | fcntl.LOCK_NB)
        proc = subprocess.Popen(["bash", str(restore)], env=env, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)
        time.sleep(3)
        assert proc.poll() is None, proc.communicate()  # still waiting for the lock ...
        assert _device_view(box, h, env) == changed  # ... and nothing put back meanwhile
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, out + err
    assert _device_view(box, h, env) == before


def test_the_per_nic_sections_are_next_to_each_other_in_section_order() -> None:
    # script.j2 wraps them in one function (rt_nic_steps) that a --boot run calls once per NIC
    start = host.SPEC.sections.index(host.NIC_SECTIONS[0])
    assert host.SPEC.sections[start:start + len(host.NIC_SECTIONS)] == host.NIC_SECTIONS
    assert "snapshot" not in host.NIC_SECTIONS and "persist" not in host.NIC_SECTIONS


@pytest.mark.parametrize("how", ["netdev-gone", "mlnx_qos-fails"])
def test_check_names_an_absent_nic_in_one_line_with_the_tools_message(tmp_path: Path, how: str) -> None:
    # --check on a host whose NIC is gone (or whose mlnx_qos fails for it) printed one MISMATCH per value
    # of that NIC, most "read ''" (trust, pfc, cable_len, mtu ...), and never what was wrong. It now names
    # the NIC once: what is missing and the tool's own message; the exit stays 1 (values not as planned).
    plan, script, _ = _plan_and_script()
    h = plan.hosts[0]
    box = Box(tmp_path, h)
    env = _box_env(box)
    path = _write(tmp_path / "push.sh", script)
    assert _run_file(path, env=env).returncode == 0
    nic, kept = h.nics[1], h.nics[0]
    if how == "netdev-gone":
        _remove_nic(box, nic.netdev, nic.rdma_device)
        said = [f"no /sys/class/net/{nic.netdev}", f'Cannot find device "{nic.netdev}"']
    else:
        (box.bin / "mlnx_qos").rename(box.bin / "mlnx_qos.real")
        _write(box.bin / "mlnx_qos",
               f'#!/bin/bash\n[[ "$*" == *{nic.netdev}* ]] && '
               '{ echo "Netlink error: Operation not supported"; exit 1; }\n'
               'exec "$(dirname "$0")/mlnx_qos.real" "$@"\n').chmod(0o755)
        said = ["Netlink error: Operation not supported"]
    res = _run_file(path, "--check", env=env)
    assert res.returncode == 1, res.stderr
    lines = [ln.strip() for ln in res.stderr.splitlines() if ln.strip().startswith("MISMATCH")]
    assert len(lines) == 1, res.stderr
    assert lines[0].startswith(f"MISMATCH {nic.netdev} NIC ({nic.rdma_device} port 1): expected 'present', "
                               f"read '"), lines
    assert f"mlnx_qos -i {nic.netdev} failed (exit 1)" in lines[0] and all(s in lines[0] for s in said), lines
    assert "read ''" not in res.stderr and kept.netdev not in res.stderr, res.stderr
    # the same line as apply --dry-run and verify read it (host.check_mismatches)
    (m,) = host.check_mismatches(res.stderr)
    assert (m.device, m.what, m.planned) == (nic.netdev, f"NIC ({nic.rdma_device} port 1)", "present")
