"""Boot persistence of the host script: the systemd unit and udev rule a plan carries, what a run installs
(script, unit, rule; daemon-reload; enable), idempotence, the restore point, and --check's report.

Runs the real rendered script with ``bash`` against a fake root (``ROCE_TUNE_SYSROOT``) and the emulator's
``systemctl``/``udevadm`` stubs (tests/emulators/host_stubs.py), which act on the unit files under that root.
"""

from __future__ import annotations

import configparser
import fnmatch
import os
import re
import shutil
import stat
import subprocess
from pathlib import Path

import pytest

from roce_tune.platforms import host

from .plan_builder import build_plan
from .test_host import Box, _box_env, _run_file

UNIT = Path(host.UNIT_PATH.lstrip("/"))
RULE = Path(host.UDEV_RULE_PATH.lstrip("/"))
SCRIPT = Path(host.PERSIST_SCRIPT.lstrip("/"))
WANTS = Path("etc/systemd/system/multi-user.target.wants") / host.UNIT_NAME


def _plan_files() -> tuple[object, dict[str, str]]:
    plan = build_plan()
    return plan, host.render_hosts(plan, plan.hosts)


def _setup(tmp_path: Path) -> tuple[Box, dict[str, str], str, dict[str, str]]:
    plan, files = _plan_files()
    h = plan.hosts[0]  # type: ignore[attr-defined]
    box = Box(tmp_path, h)
    script = host.host_script({f"hosts/{k}": v for k, v in files.items()}, h.name) or ""
    return box, files, script, _box_env(box)


def _push(tmp_path: Path, script: str, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    path = tmp_path / "push.sh"
    path.write_text(script, encoding="utf-8")
    return _run_file(path, *args, env=env)


def test_unit_is_a_oneshot_after_the_driver_that_runs_the_installed_script() -> None:
    _, files = _plan_files()
    unit = files[host.UNIT_NAME]
    parser = configparser.ConfigParser(strict=True, interpolation=None, comment_prefixes=("#", ";"))
    parser.optionxform = str  # type: ignore[assignment,method-assign]
    parser.read_string(unit)
    svc = parser["Service"]
    assert svc["Type"] == "oneshot" and svc["RemainAfterExit"] == "yes"
    assert svc["ExecStart"] == f"/bin/bash {host.PERSIST_SCRIPT} --boot"  # boot mode: no --check, no --save
    assert "Restart" not in svc and int(svc["TimeoutStartSec"]) == host.UNIT_TIMEOUT_S
    assert "openibd.service" in parser["Unit"]["After"].split()
    assert parser["Install"]["WantedBy"] == "multi-user.target"
    rule = [ln for ln in files[host.UDEV_RULE_FILE].splitlines() if ln and not ln.startswith("#")]
    assert rule == [f'ACTION=="add", SUBSYSTEM=="{subsystem}", DRIVERS=="mlx5_core", '
                    f'TEST=="{host.UNIT_PATH}", RUN+="/bin/systemctl --no-block restart {host.UNIT_NAME}"'
                    for subsystem in ("net", "infiniband")]


_RULE_KEY = re.compile(r'\s*([A-Z]+)(==|!=|\+=|=)"([^"]*)"\s*(?:,|$)')


def _restarts(rules: str, event: dict[str, object]) -> bool:
    """Whether udev restarts the unit for ``event`` (ACTION, SUBSYSTEM, the DRIVERS of the device and its
    parents, installed: the unit file exists): a rule line fires when every one of its match keys (``==``,
    ``!=``; DRIVERS: any of the device's ancestors; TEST: the file exists) holds (udev(7))."""
    for line in rules.splitlines():
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        keys = _RULE_KEY.findall(line)
        assert "".join(f'{k}{op}"{v}", ' for k, op, v in keys).rstrip(", ") == line.strip(), line
        fires = True
        for key, op, value in keys:
            if op not in ("==", "!="):
                continue
            if key == "DRIVERS":
                hit = any(fnmatch.fnmatchcase(d, value) for d in event["DRIVERS"])  # type: ignore[attr-defined]
            elif key == "TEST":
                hit = bool(event["installed"]) and value == host.UNIT_PATH
            else:
                hit = fnmatch.fnmatchcase(str(event[key]), value)
            fires = fires and hit == (op == "==")
        if fires and any(k == "RUN" and f"restart {host.UNIT_NAME}" in v for k, _op, v in keys):
            return True
    return False


@pytest.mark.parametrize("what, event, restarts", [
    # MLNX_OFED 23.04+ (and a driver reload with any driver): the netdev is destroyed and re-created
    ("netdev re-created", {"ACTION": "add", "SUBSYSTEM": "net", "DRIVERS": ["mlx5_core"]}, True),
    # a firmware reset, devlink reload or health recovery with the upstream driver or MLNX_OFED before 23.04:
    # mlx5_core suspends and resumes the Ethernet function (netdev kept, no event) but removes and adds the
    # RDMA one (mlx5_ib has no suspend): only the RDMA device appears again, with the firmware's defaults
    ("RDMA device re-created", {"ACTION": "add", "SUBSYSTEM": "infiniband",
                                "DRIVERS": ["mlx5_ib.rdma", "mlx5_core"]}, True),
    ("another vendor's NIC", {"ACTION": "add", "SUBSYSTEM": "net", "DRIVERS": ["ice"]}, False),
    ("RDMA device going away", {"ACTION": "remove", "SUBSYSTEM": "infiniband", "DRIVERS": ["mlx5_core"]},
     False),
    ("netdev renamed", {"ACTION": "move", "SUBSYSTEM": "net", "DRIVERS": ["mlx5_core"]}, False),
])
@pytest.mark.parametrize("installed", [True, False])
def test_udev_rule_reruns_the_unit_whenever_an_mlx5_function_comes_back(what: str, event: dict[str, object],
                                                                        restarts: bool,
                                                                        installed: bool) -> None:
    _, files = _plan_files()
    fired = _restarts(files[host.UDEV_RULE_FILE], {**event, "installed": installed})
    assert fired is (restarts and installed), what


@pytest.mark.skipif(shutil.which("systemd-analyze") is None, reason="systemd-analyze not installed")
def test_systemd_analyze_verify_accepts_the_unit(tmp_path: Path) -> None:
    _, files = _plan_files()
    path = tmp_path / host.UNIT_NAME
    path.write_text(files[host.UNIT_NAME], encoding="utf-8")
    res = subprocess.run(["systemd-analyze", "verify", str(path)], capture_output=True, text=True, timeout=60,
                         check=False)
    assert res.returncode == 0 and not res.stderr.strip(), res.stderr


def test_push_installs_script_unit_and_rule_reloads_and_enables(tmp_path: Path) -> None:
    box, files, script, env = _setup(tmp_path)
    res = _push(tmp_path, script, env)
    assert res.returncode == 0, res.stderr
    root = box.root
    assert (root / SCRIPT).read_text() == script  # the bundle apply pushes, byte for byte
    assert (root / UNIT).read_text() == files[host.UNIT_NAME]
    assert (root / RULE).read_text() == files[host.UDEV_RULE_FILE]
    assert stat.S_IMODE((root / SCRIPT).stat().st_mode) == 0o755
    assert stat.S_IMODE((root / UNIT).stat().st_mode) == 0o644
    assert os.readlink(root / WANTS) == host.UNIT_PATH  # enabled
    # daemon-reload and udevadm control --reload ran after the files were in place
    assert (root / "run/systemd-emu/loaded" / host.UNIT_NAME).read_text() == files[host.UNIT_NAME]
    assert (root / "run/udev-emu/loaded" / RULE.name).read_text() == files[host.UDEV_RULE_FILE]
    assert not list((root / SCRIPT).parent.glob(".roce-tune.*"))  # no temp file left
    check = _run_file(root / SCRIPT, "--check", env=env)  # what the unit runs, read-back only
    assert check.returncode == 0, check.stderr


def test_run_from_the_plan_directory_installs_the_same_script_as_apply(tmp_path: Path) -> None:
    box, files, script, env = _setup(tmp_path)
    plan_dir = tmp_path / "hosts"
    plan_dir.mkdir()
    for name, text in files.items():
        (plan_dir / name).write_text(text, encoding="utf-8")
    res = _run_file(plan_dir / "node1.sh", env=env)  # data file sourcing the shared script
    assert res.returncode == 0, res.stderr
    assert (box.root / SCRIPT).read_text() == script


@pytest.mark.slow  # end-to-end (subprocesses/emulators), seconds each: .ci/run runs it (-m slow)
def test_second_push_and_the_boot_run_rewrite_nothing(tmp_path: Path) -> None:
    box, _files, script, env = _setup(tmp_path)
    assert _push(tmp_path, script, env).returncode == 0
    inodes = {p: (box.root / p).stat().st_ino for p in (SCRIPT, UNIT, RULE)}
    shutil.rmtree(box.root / "run")  # a daemon-reload or udev reload would make it again
    (box.root / WANTS).unlink()  # someone disabled the unit: the push enables it again
    assert _push(tmp_path, script, env).returncode == 0
    boot = _run_file(box.root / SCRIPT, env=env)  # as the unit runs it at boot
    assert boot.returncode == 0, boot.stderr
    assert {p: (box.root / p).stat().st_ino for p in (SCRIPT, UNIT, RULE)} == inodes
    assert not (box.root / "run/systemd-emu").exists() and not (box.root / "run/udev-emu").exists()
    assert (box.root / WANTS).is_symlink()


def test_check_reports_a_missing_stale_or_disabled_unit(tmp_path: Path) -> None:
    box, _files, script, env = _setup(tmp_path)
    assert _push(tmp_path, script, env).returncode == 0
    unit = (box.root / UNIT).read_text()
    (box.root / UNIT).write_text(unit.replace("TimeoutStartSec=180", "TimeoutStartSec=5"))
    (box.root / WANTS).unlink()
    (box.root / RULE).unlink()
    res = _push(tmp_path, script, env, "--check")
    assert res.returncode == 1
    mismatches = [ln.strip() for ln in res.stderr.splitlines() if "MISMATCH" in ln]
    assert mismatches == [
        f"MISMATCH node1 systemd unit {box.root / UNIT}: expected 'as planned', "
        "read 'stale (differs from the plan)'",
        f"MISMATCH node1 udev rule {box.root / RULE}: expected 'as planned', read 'missing'",
        f"MISMATCH node1 systemctl is-enabled {host.UNIT_NAME}: expected 'enabled', read 'disabled'",
    ]
    # an installed script of another plan (here: an extra line) is stale too
    (box.root / SCRIPT).write_text(script.replace("RT_HOST=", "RT_HOST_OLD=x\nRT_HOST=", 1))
    res = _push(tmp_path, script, env, "--check")
    assert f"MISMATCH node1 boot script {box.root / SCRIPT}: expected 'as planned', read 'stale" in res.stderr


#: the ExecStart comment of the unit before --boot also left out a NIC whose step fails (what hosts pushed
#: with that roce-tune still have installed)
PREVIOUS_BOOT_COMMENT = ("# --boot: a planned NIC that is missing is named and left out, the others are "
                         "configured, the run fails\n")


def test_the_unit_names_both_nics_boot_leaves_out_and_a_host_with_the_previous_unit_sees_it_stale(
        tmp_path: Path) -> None:
    """The unit's comment said --boot leaves out only a missing NIC; it also leaves out a NIC whose step
    fails. A host pushed with the previous unit: --check names the unit stale (push again), the one push
    rewrites it and reloads systemd, and --check is clean after."""
    box, files, script, env = _setup(tmp_path)
    unit = files[host.UNIT_NAME]
    assert "missing, or whose step fails, is named and left out" in unit, unit
    assert PREVIOUS_BOOT_COMMENT not in unit
    assert _push(tmp_path, script, env).returncode == 0
    comment = next(ln for ln in unit.splitlines(keepends=True) if ln.startswith("# --boot:"))
    nxt = unit.split(comment, 1)[1].split("\n", 1)[0] + "\n"  # its second line
    (box.root / UNIT).write_text(unit.replace(comment + nxt, PREVIOUS_BOOT_COMMENT))
    res = _push(tmp_path, script, env, "--check")
    assert res.returncode == 1
    assert [ln.strip() for ln in res.stderr.splitlines() if "MISMATCH" in ln] == [
        f"MISMATCH node1 systemd unit {box.root / UNIT}: expected 'as planned', "
        "read 'stale (differs from the plan)'"], res.stderr
    shutil.rmtree(box.root / "run")  # (what systemd loaded: made again only by a daemon-reload)
    assert _push(tmp_path, script, env).returncode == 0  # push again: the unit is rewritten and reloaded
    assert (box.root / UNIT).read_text() == unit
    assert (box.root / "run/systemd-emu/loaded" / host.UNIT_NAME).read_text() == unit
    assert _push(tmp_path, script, env, "--check").returncode == 0


def test_restore_point_removes_what_the_push_installed(tmp_path: Path) -> None:
    box, _files, script, env = _setup(tmp_path)
    restore = tmp_path / "restore.sh"
    assert _push(tmp_path, script, env, "--save", str(restore)).returncode == 0
    back = _run_file(restore, env=env)
    assert back.returncode == 0, back.stderr
    for p in (SCRIPT, UNIT, RULE, WANTS):
        assert not os.path.lexists(box.root / p), p
    assert not (box.root / "run/systemd-emu/loaded" / host.UNIT_NAME).exists()  # reloaded after removal


@pytest.mark.slow  # end-to-end (subprocesses/emulators), seconds each: .ci/run runs it (-m slow)
def test_restore_point_puts_back_an_older_unit_and_its_enable_state(tmp_path: Path) -> None:
    box, _files, script, env = _setup(tmp_path)
    old_unit = "[Unit]\nDescription=older roce-tune\n\n[Service]\nType=oneshot\nExecStart=/bin/true\n\n" \
               "[Install]\nWantedBy=multi-user.target\n"
    (box.root / UNIT).parent.mkdir(parents=True)
    (box.root / UNIT).write_text(old_unit)
    (box.root / SCRIPT).parent.mkdir(parents=True)
    (box.root / SCRIPT).write_text("#!/bin/bash\necho old\n")
    (box.root / SCRIPT).chmod(0o700)
    for enabled in (False, True):
        if enabled:
            subprocess.run(["systemctl", "enable", host.UNIT_NAME], env=env, check=True, capture_output=True)
        restore = tmp_path / f"restore-{enabled}.sh"
        assert _push(tmp_path, script, env, "--save", str(restore)).returncode == 0
        assert (box.root / WANTS).is_symlink()
        _run_file(restore, env=env)
        assert (box.root / UNIT).read_text() == old_unit
        assert (box.root / SCRIPT).read_text() == "#!/bin/bash\necho old\n"
        assert stat.S_IMODE((box.root / SCRIPT).stat().st_mode) == 0o700
        assert not (box.root / RULE).exists()
        assert (box.root / WANTS).is_symlink() is enabled


def test_restore_point_masks_again_a_unit_the_push_found_masked(tmp_path: Path) -> None:
    # `systemctl mask roce-tune-host.service` (the unit file a link to /dev/null): the push installs and
    # enables the unit (--check names the mask first); the restore point must put the mask back, not an
    # empty regular file of mode 666 (what reading the link as a file gave), and remove the enable link.
    box, _files, script, env = _setup(tmp_path)
    (box.root / UNIT).parent.mkdir(parents=True)
    (box.root / UNIT).symlink_to("/dev/null")
    check = _push(tmp_path, script, env, "--check")
    assert f"MISMATCH node1 systemctl is-enabled {host.UNIT_NAME}: expected 'enabled', read 'masked'" \
        in check.stderr
    restore = tmp_path / "restore.sh"
    assert _push(tmp_path, script, env, "--save", str(restore)).returncode == 0
    assert not (box.root / UNIT).is_symlink() and (box.root / WANTS).is_symlink()
    back = _run_file(restore, env=env)
    assert back.returncode == 0, back.stderr
    assert (box.root / UNIT).is_symlink() and os.readlink(box.root / UNIT) == "/dev/null"
    assert not os.path.lexists(box.root / WANTS)
    assert subprocess.run(["systemctl", "is-enabled", host.UNIT_NAME], env=env, capture_output=True,
                          text=True, check=False).stdout.strip() == "masked"


def test_a_refused_install_stops_with_exit_2_naming_the_file(tmp_path: Path) -> None:
    box, _files, script, env = _setup(tmp_path)
    (box.root / "etc/systemd").mkdir(parents=True)
    (box.root / "etc/systemd/system").write_text("not a directory\n")
    res = _push(tmp_path, script, env)
    assert res.returncode == 2
    assert f"roce-tune: node1: installing {box.root / UNIT} failed:" in res.stderr
