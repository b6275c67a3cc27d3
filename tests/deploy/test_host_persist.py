"""`roce-tune apply` to GPU hosts over SSH (loopback emulator): the push leaves the host able to re-apply its
values at boot (script, systemd unit and udev rule installed, unit enabled), a host that lost its unit shows
up in the dry run, and a push that fails after installing them rolls them back with the values."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from roce_tune.deploy.apply import load_source
from roce_tune.deploy.drivers import PushOptions
from roce_tune.deploy.runner import apply_targets
from roce_tune.platforms import host

from .conftest import emulated_inventory
from .test_apply import _host_state, _opts

pytestmark = pytest.mark.emulator

UNIT = host.UNIT_PATH.lstrip("/")
WANTS = f"etc/systemd/system/multi-user.target.wants/{host.UNIT_NAME}"


@pytest.mark.slow  # end-to-end (subprocesses/emulators), seconds each: .ci/run runs it (-m slow)
def test_push_installs_and_enables_the_unit_and_a_lost_unit_is_a_change(tmp_path: Path) -> None:
    fleet, inv, known = emulated_inventory("lab-2node.yaml", tmp_path, hosts=True)
    try:
        targets, _ = load_source(inv)
        name = next(t for t in targets if t.kind == "host").name
        sysroot = fleet[name].sandbox / "sysroot"
        pushed = apply_targets(targets, _opts(tmp_path, known, limit=[name]))[0]
        assert pushed.state == "pushed", pushed.error
        desired = next(t for t in targets if t.name == name).desired
        unit = (sysroot / UNIT).read_text()  # the unit the plan carries (hosts/roce-tune-host.service)
        assert f"<<'RT_UNIT_END' || true\n{unit}RT_UNIT_END\n" in desired and "Type=oneshot" in unit
        assert os.readlink(sysroot / WANTS) == host.UNIT_PATH
        # the script apply pushed, byte for byte (the upload keeps blank lines at its chunk boundaries)
        assert (sysroot / host.PERSIST_SCRIPT.lstrip("/")).read_text() == desired
        again = apply_targets(targets, _opts(tmp_path, known, dry_run=True, limit=[name]))[0]
        assert again.state == "no-change", again.diff
        (sysroot / WANTS).unlink()  # someone disabled it: values intact, but the next reboot loses them
        lost = apply_targets(targets, _opts(tmp_path, known, dry_run=True, limit=[name]))[0]
        assert lost.state == "would-change"
        assert [ln for ln in lost.diff if "MISMATCH" in ln] == [
            f"  MISMATCH {name} systemctl is-enabled {host.UNIT_NAME}: expected 'enabled', read 'disabled'"]
    finally:
        fleet.stop()


@pytest.mark.slow  # end-to-end (subprocesses/emulators), seconds each: .ci/run runs it (-m slow)
def test_push_that_fails_after_installing_the_unit_removes_it_again(tmp_path: Path) -> None:
    fleet, inv, known = emulated_inventory("lab-2node.yaml", tmp_path, hosts=True)
    try:
        targets, _ = load_source(inv)
        name = next(t for t in targets if t.kind == "host").name
        apply_targets(targets, _opts(tmp_path, known, dry_run=True, limit=[name]))  # prime the stub state
        sysroot = fleet[name].sandbox / "sysroot"
        # `systemctl enable` cannot make its link: the script stops (exit 2) after writing every value and
        # installing the script, the unit and the rule
        (sysroot / WANTS).parent.parent.mkdir(parents=True)
        (sysroot / WANTS).parent.write_text("not a directory\n")
        before = _host_state(fleet, name)
        push = PushOptions(confirm_s=60, read_timeout_s=20, tag="rt_test_persist_rollback")
        res = apply_targets(targets, _opts(tmp_path, known, limit=[name], push=push))[0]
        assert res.state == "failed" and res.rolled_back, (res.state, res.error)
        assert f"systemctl enable {host.UNIT_NAME} failed" in (res.error or "")
        assert _host_state(fleet, name) == before
        assert not (sysroot / UNIT).exists() and not (sysroot / host.PERSIST_SCRIPT.lstrip("/")).exists()
    finally:
        fleet.stop()


def test_upload_keeps_blank_lines_and_trailing_spaces_at_a_chunk_end() -> None:
    from roce_tune.deploy.drivers import _heredoc

    body = "line one  \n\n"  # a chunk ending in a line with trailing spaces, then a blank line
    assert _heredoc("/tmp/x", body) == f"cat > /tmp/x <<'ROCE_TUNE_EOF'\n{body}\nROCE_TUNE_EOF"


def test_a_dry_run_whose_host_check_cannot_run_is_a_failure_naming_why_not_a_change(tmp_path: Path) -> None:
    # The GPU node lacks mlnx_qos (MLNX_OFED/DOCA tools not installed): the script's --check stops before it
    # reads anything, exit 2 (`required command 'mlnx_qos' not found`). The dry run reported the host as
    # "would-change" with an empty diff, as if its values merely differed, and hid why; the playbook
    # (tasks/push_host.yml) already fails the host on any exit but 0 and 1.
    fleet, inv, known = emulated_inventory("lab-2node.yaml", tmp_path, hosts=True)
    try:
        targets, _ = load_source(inv)
        name = next(t for t in targets if t.kind == "host").name
        (fleet[name].bin / "mlnx_qos").unlink()
        sysroot = fleet[name].sandbox / "sysroot"
        before = sorted(p.relative_to(sysroot) for p in sysroot.rglob("*"))
        for dry_run in (True, False):
            res = apply_targets(targets, _opts(tmp_path, known, dry_run=dry_run, limit=[name]))[0]
            assert res.state == "failed", (res.state, res.diff, res.error)
            assert res.error and "exited 2" in res.error, res.error
            assert "required command 'mlnx_qos' not found" in res.error, res.error
            assert not res.rolled_back  # (nothing was changed, nothing to roll back)
        after = sorted(p.relative_to(sysroot) for p in sysroot.rglob("*") if not p.name.endswith(".lock"))
        assert after == [p for p in before if not p.name.endswith(".lock")]
    finally:
        fleet.stop()
