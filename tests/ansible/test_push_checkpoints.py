"""push.yml's checkpoint retention on the loopback NX-OS and SONiC emulators (Ansible's own connections):
at NX-OS's limit of ten user checkpoints roce-tune's own oldest are deleted first and the operator's never
(a switch their own checkpoints fill fails before any change); after a push only roce-tune's newest
``roce_tune_keep_checkpoints`` stay; SONiC's uploaded patch file is removed; a delete the switch refuses is
a warning, never a failure."""

from __future__ import annotations

import copy
import re
from pathlib import Path

import pytest

from tests.ansible.harness import ansible_missing, prepare_lab, ssh_keypair
from tests.emulators import EmulatorSpec

from .test_push_nvue_sonic import _lab

pytestmark = [pytest.mark.emulator,
              pytest.mark.skipif(ansible_missing() is not None, reason=ansible_missing() or "")]

DEVICES = {"eos1": "eos", "qfx1": "junos", "nx1": "nxos", "gpu01": "host", "gpu02": "host"}
#: the name a push gives its checkpoint (roce_tune.platforms.checkpoints.new_tag: milliseconds and a counter)
OWN = re.compile(r"^roce_tune_\d{8}_\d{6}_\d{3}[0-9a-f]{2}$")


def _checkpoint(fleet, name: str, names: list[str], delete: bool = False) -> None:  # type: ignore[no-untyped-def]
    conn = fleet.connect(name)
    try:
        for cp in names:
            assert "Done" in conn.send_command(f"{'no ' if delete else ''}checkpoint {cp}")
    finally:
        conn.disconnect()


@pytest.mark.slow
def test_nxos_push_keeps_operator_checkpoints_and_frees_its_own(emulator_fleet,  # type: ignore[no-untyped-def]
                                                                tmp_path: Path) -> None:
    key, pub = ssh_keypair(tmp_path)
    fleet = emulator_fleet([EmulatorSpec("nxos", "nx1", username="admin", password="not-used",
                                         authorized_keys=[pub], time_scale=0.01)])
    lab = prepare_lab(tmp_path / "lab", {n: fleet.port("nx1") if n == "nx1" else 1 for n in DEVICES})
    lab.env.pop("ROCE_TUNE_PASSWORD", None)
    common = ["--limit", "platform_nxos", "-e", f"roce_tune_base_dir={lab.workdir}", "-e",
              f"ansible_ssh_private_key_file={key}", "-e", "ansible_become=false", "-e",
              "ansible_command_timeout=20"]
    dev = fleet["nx1"]
    operator = [f"maint_{i}" for i in range(8)]
    _checkpoint(fleet, "nx1", [*operator, "roce_tune_20250101120000", "roce-tune-20250102120000"])
    factory = dev.running_config()
    for _ in range(2):  # at the limit each time: roce-tune's oldest own checkpoint makes room
        res = lab.playbook("push.yml", *common)
        assert res.returncode == 0, res.stdout[-5000:] + res.stderr[-2000:]
    assert dev.running_config() != factory and "pause pfc-cos 3" in dev.running_config()
    ours = [n for n in dev.checkpoints if n not in operator]
    assert sorted(dev.checkpoints) == sorted(operator + ours) and len(ours) == 2, list(dev.checkpoints)
    assert all(OWN.match(n) for n in ours), ours

    _checkpoint(fleet, "nx1", ours, delete=True)
    _checkpoint(fleet, "nx1", ["maint_8", "maint_9"])
    before = dev.running_config()
    dev.clear_faults()
    full = lab.playbook("push.yml", *common)
    out = full.stdout + full.stderr
    assert full.returncode != 0, out[-5000:]
    assert "nx1 has 10 user checkpoints" in out and "no checkpoint <name>" in out, out[-5000:]
    assert dev.running_config() == before
    assert sorted(dev.checkpoints) == sorted(f"maint_{i}" for i in range(10))


@pytest.mark.slow
def test_sonic_push_prunes_and_removes_the_patch_file(emulator_fleet,  # type: ignore[no-untyped-def]
                                                      tmp_path: Path) -> None:
    dev, lab, key = _lab(emulator_fleet, tmp_path, "sonic1")
    common = ["--limit", "sonic1", "-e", f"roce_tune_base_dir={lab.workdir}", "-e",
              f"ansible_ssh_private_key_file={key}"]
    factory = dict(dev.config_db)
    (dev.cp_dir / "before-upgrade.cp.json").write_text(dev.dump())
    for name in ("roce-tune-20250101120000", "roce_tune_20250102_120000"):  # earlier runs' checkpoints
        (dev.cp_dir / f"{name}.cp.json").write_text(dev.dump())
    dev.set_fault(reject_pattern=r"delete-checkpoint roce-tune-20250101120000")
    res = lab.playbook("push.yml", *common)
    out = res.stdout + res.stderr
    assert res.returncode == 0, out[-5000:]
    warning = "warning: sonic1: `sudo config delete-checkpoint roce-tune-20250101120000` failed"
    assert warning in out, out[-5000:]
    ours = [n for n in dev.checkpoints if OWN.match(n)]
    assert sorted(dev.checkpoints) == sorted(["before-upgrade", "roce-tune-20250101120000",
                                              "roce_tune_20250102_120000", *ours]), list(dev.checkpoints)
    assert len(ours) == 1
    assert not list((dev.sandbox / "tmp").glob("*.json"))

    dev.clear_faults()
    dev.config_db = factory
    again = lab.playbook("push.yml", *common)
    assert again.returncode == 0, again.stdout[-5000:] + again.stderr[-2000:]
    # the delete refused before goes now, with the other earlier run's: this run's and the previous stay
    assert sorted(n for n in dev.checkpoints if not OWN.match(n)) == ["before-upgrade"]
    kept = sorted(n for n in dev.checkpoints if OWN.match(n))
    assert len(kept) == 2 and kept[0] == ours[0] and kept[1] > ours[0], kept
    assert not list((dev.sandbox / "tmp").glob("*.json"))


#: the one second every clock of the frozen controller shows (:func:`_freeze_second`)
FROZEN = "2026-01-01 12:00:00"

SITECUSTOMIZE = f"""\
import time

_second = time.mktime(time.strptime({FROZEN!r}, "%Y-%m-%d %H:%M:%S"))
_localtime = time.localtime
time.localtime = lambda secs=None: _localtime(_second)  # the date and time of day stop; time.time() runs on
"""


def _freeze_second(lab, directory: Path) -> None:  # type: ignore[no-untyped-def]
    """Make every run of ``lab``'s playbooks happen within the one second :data:`FROZEN`, as two runs started
    within a second do: ``date`` on the PATH prints that date and time (whatever the format asked), and the
    controller's Python turns every timestamp into it (``time.localtime``, in a ``sitecustomize`` on its
    PYTHONPATH); the sub-second clock (``time.time()``) and so every timeout run on."""
    directory.mkdir()
    (directory / "sitecustomize.py").write_text(SITECUSTOMIZE)
    date = directory / "date"
    date.write_text(f'#!/bin/sh\nexec /bin/date -d "{FROZEN}" "$@"\n')
    date.chmod(0o755)
    lab.env["PATH"] = f"{directory}:{lab.env['PATH']}"
    lab.env["PYTHONPATH"] = f"{directory}:{lab.env['PYTHONPATH']}"


@pytest.mark.slow
def test_two_sonic_pushes_within_one_second_keep_two_checkpoints(emulator_fleet,  # type: ignore[no-untyped-def]
                                                                 tmp_path: Path) -> None:
    """Two pushes to one switch within the same second each keep their own rollback point. Before, both
    were named ``roce_tune_<date>_<time>`` to the second and SONiC's ``config checkpoint`` silently saved
    the second over the first."""
    dev, lab, key = _lab(emulator_fleet, tmp_path, "sonic1")
    _freeze_second(lab, tmp_path / "frozen")
    common = ["--limit", "sonic1", "-e", f"roce_tune_base_dir={lab.workdir}", "-e",
              f"ansible_ssh_private_key_file={key}"]
    factory = copy.deepcopy(dev.config_db)
    for run in range(2):
        dev.config_db = copy.deepcopy(factory)  # each run has a change to push, so each takes its checkpoint
        res = lab.playbook("push.yml", *common)
        assert res.returncode == 0, f"run {run + 1}: " + (res.stdout + res.stderr)[-5000:]
    taken = sorted(n for n in dev.checkpoints if n.startswith("roce"))
    assert len(taken) == 2, taken
    assert all(n.startswith("roce_tune_20260101_120000_") and OWN.match(n) for n in taken), taken
