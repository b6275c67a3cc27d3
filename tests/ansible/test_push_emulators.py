"""push.yml against the loopback emulators, through Ansible's own connections (network_cli for EOS
and Junos, OpenSSH for the GPU hosts): --check --diff changes nothing and shows the diff; a real push
leaves every rendered line in the emulated running configs, with Junos committed through
``commit confirmed`` and confirmed, and runs the host scripts on the emulated GPU hosts; a second
push changes nothing.

Runs only where ansible-playbook and the community collections are installed (``.ci/run`` installs
the ``ansible`` extra). Measured: ~60 s on 2 cores.
"""

from __future__ import annotations

import re
import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from roce_tune.platforms import host
from roce_tune.platforms.host import DCQCN_KNOBS
from roce_tune.platforms.junos import display_set_lines
from tests.ansible.harness import FABRIC_TEMPLATE as FABRIC
from tests.ansible.harness import ansible_missing, prepare_lab, recap, ssh_keypair
from tests.emulators import EmulatorSpec

pytestmark = [pytest.mark.emulator,
              pytest.mark.skipif(ansible_missing() is not None, reason=ansible_missing() or "")]

DEVICES = {"eos1": "eos", "qfx1": "junos", "nx1": "nxos", "gpu01": "host", "gpu02": "host"}
PUSHED = ("eos1", "qfx1", "gpu01", "gpu02")
NICS = [{"netdev": f"ens1f{i}np{i}", "rdma": f"mlx5_{i}", "pci": f"0000:17:00.{i}", "speed_mbps": 400000,
         "ipv4": f"192.0.2.{101 + i}"} for i in range(2)]
SWITCHES = ("eos1", "qfx1")
LIMIT = "platform_eos:platform_junos:gpu_hosts"
PUSH_LIMIT = LIMIT


def _config_lines(text: str, comment: str) -> list[str]:
    return [ln.strip() for ln in text.splitlines() if ln.strip() and not ln.strip().startswith(comment)]


def _add_driver_knobs(device) -> None:  # type: ignore[no-untyped-def]
    """Create every DCQCN sysfs knob the host script writes that the emulator's default sysroot lacks
    (an MLNX_OFED/DOCA driver exposes them all; the emulator ships the common subset)."""
    for nic in NICS:
        for knob in DCQCN_KNOBS.values():
            path = device.sysroot / "sys/class/net" / nic["netdev"] / "ecn" / knob.side / knob.sysfs
            if not path.exists():
                path.write_text("0\n")


def _state(fleet, name: str) -> str:  # type: ignore[no-untyped-def]
    """Running config; for hosts only the sysfs/configfs values (stubs create their state on first read)."""
    text = fleet[name].running_config()
    if DEVICES[name] != "host":
        return text
    return "\n".join(ln for ln in text.splitlines() if ln.startswith("sys/"))


@pytest.mark.slow
def test_push_check_then_push_then_idempotent(emulator_fleet,
                                              tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    key, pub = ssh_keypair(tmp_path)
    # Junos gets a 30 s commit confirmed window (5 min x 0.1): between `commit confirmed` and the confirm run
    # three Ansible tasks (read back, check, confirm), measured at ~5.5 s on a loaded 2-core machine, so the
    # 3 s of the other devices' scale let the device revert the push before the confirm came.
    fleet = emulator_fleet([EmulatorSpec(p, n, username="admin", password="not-used", authorized_keys=[pub],
                                         time_scale=0.1 if p == "junos" else 0.01,
                                         options={"nics": NICS} if p == "host" else {})
                           for n, p in DEVICES.items()])
    for name, platform in DEVICES.items():
        if platform == "host":
            _add_driver_knobs(fleet[name])
    lab = prepare_lab(tmp_path / "lab", {n: fleet.port(n) for n in DEVICES})
    lab.env.pop("ROCE_TUNE_PASSWORD", None)  # key authentication everywhere: no sshpass needed
    common = ["-e", f"roce_tune_base_dir={lab.workdir}", "-e", f"ansible_ssh_private_key_file={key}",
              "-e", "ansible_become=false"]
    before = {n: _state(fleet, n) for n in PUSHED}

    # 1. dry run: diffs shown, nothing changed anywhere (default staged serial: 1 device, then 25 %)
    dry = lab.playbook("push.yml", "--check", "--diff", "--limit", LIMIT, *common)
    assert dry.returncode == 0, dry.stdout[-4000:] + dry.stderr[-2000:]
    assert {n: _state(fleet, n) for n in PUSHED} == before
    assert "+qos profile ROCE_LOSSLESS_400G" in dry.stdout          # eos_config session diff
    assert re.search(r"(?m)^\+\s+class-of-service \{", dry.stdout)     # Junos show | compare
    counts = recap(dry.stdout)
    assert all(counts[n]["changed"] >= 1 for n in PUSHED), counts
    assert fleet["qfx1"].history[0].lines == fleet["qfx1"].history[-1].lines  # no commit at all

    # 2. real push
    push = lab.playbook("push.yml", "--diff", "--limit", PUSH_LIMIT, "-e",
                        '{"roce_tune_serial": [1, "100%"]}',
                        *common)
    assert push.returncode == 0, push.stdout[-4000:] + push.stderr[-2000:]
    eos_running = fleet["eos1"].running_config()
    eos_desired = (lab.out_dir / "switches" / "eos1.cfg").read_text()
    for line in _config_lines(eos_desired, "!"):
        assert line in eos_running, f"EOS line missing after push: {line}"
    eos_startup = "\n".join(fleet["eos1"].body_lines(fleet["eos1"].startup))
    assert "qos profile ROCE_LOSSLESS_400G" in eos_startup                # saved after the session commit
    qfx_running = fleet["qfx1"].running_config().splitlines()
    # Junos prints a leaf-list (fill-level, drop-probability, code-points) one value per line
    qfx_desired = display_set_lines((lab.out_dir / "switches" / "qfx1.set").read_text())
    missing = [ln for ln in _config_lines(qfx_desired, "#") if ln not in qfx_running]
    assert not missing, missing[:5]
    assert not fleet["qfx1"].confirm_pending
    kinds = " ".join(str(e) for e in fleet["qfx1"].events)
    assert "confirm" in kinds, fleet["qfx1"].events               # commit confirmed was armed and confirmed
    for name in ("gpu01", "gpu02"):                               # hosts: the script ran and read back
        host_after = _state(fleet, name)
        assert host_after != before[name]
        assert re.search(r"(?m)^sys/class/net/ens1f0np0/ecn/roce_np/enable/3 = 1$", host_after)
        assert "sys/class/infiniband/mlx5_0/tc/1/traffic_class = Global tclass=106" in host_after \
            or "sys/class/infiniband/mlx5_0/tc/1/traffic_class = 106" in host_after
        # the script installed itself (as apply would send it) and enabled the unit that re-runs it at boot
        plan_files = {f"hosts/{p.name}": p.read_text() for p in (lab.out_dir / "hosts").iterdir()}
        sysroot = fleet[name].sysroot
        assert (sysroot / host.PERSIST_SCRIPT.lstrip("/")).read_text() == host.host_script(plan_files, name)
        assert (sysroot / host.UNIT_PATH.lstrip("/")).read_text() == plan_files[f"hosts/{host.UNIT_NAME}"]
        assert (sysroot / "etc/systemd/system/multi-user.target.wants" / host.UNIT_NAME).is_symlink()

    # 3. second push: nothing to do
    again = lab.playbook("push.yml", "--limit", PUSH_LIMIT, *common)
    assert again.returncode == 0, again.stdout[-4000:] + again.stderr[-2000:]
    counts = recap(again.stdout)
    assert all(counts[n]["changed"] == 0 for n in PUSHED), counts
    assert fleet["eos1"].running_config() == eos_running


def _tail(res: subprocess.CompletedProcess[str]) -> str:
    return res.stdout[-4000:]


@pytest.mark.slow
@pytest.mark.parametrize("late_at", ["commit", "confirm"])
def test_junos_timer_runs_out_before_the_confirm(emulator_fleet,  # type: ignore[no-untyped-def]
                                                 tmp_path: Path, late_at: str) -> None:
    """The device reverts the commit confirmed by itself before the confirm comes (a slow controller, a
    paused run): the push fails and says the device rolled it back, and the configuration stays the one found.

    ``commit``: the device holds the output of ``commit confirmed`` until its timer ran out, so the read-back
    already shows the old configuration; a ``rollback 1`` then would put the unconfirmed change back.
    ``confirm``: the read-back is held until the timer ran out, so it still shows the change and the confirm
    comes late: its ``commit`` commits nothing and says "commit complete"."""
    key, pub = ssh_keypair(tmp_path)
    # 5 min x 1/30 = a 10 s window, longer than the way from `commit confirmed` to the held read-back
    fleet = emulator_fleet([EmulatorSpec("junos", "qfx1", username="admin", password="not-used",
                                         authorized_keys=[pub], time_scale=1 / 30)])
    qfx = fleet["qfx1"]
    lab = prepare_lab(tmp_path / "lab", {n: fleet.port(n) if n == "qfx1" else 1 for n in DEVICES})
    lab.env.pop("ROCE_TUNE_PASSWORD", None)
    before = qfx.running_config()
    qfx.set_fault(pause_pattern=r"^commit confirmed")
    with ThreadPoolExecutor(1) as pool:
        done = pool.submit(lab.playbook, "push.yml", "--limit", "platform_junos",
                           "-e", f"roce_tune_base_dir={lab.workdir}",
                           "-e", f"ansible_ssh_private_key_file={key}")
        qfx.wait_held(done, "commit confirmed", describe=_tail)
        if late_at == "confirm":
            qfx.set_fault(pause_pattern=r"^show configuration")  # releases the commit, holds the read-back
            qfx.wait_held(done, "the read-back", describe=_tail)
            assert qfx.confirm_pending, qfx.events
        qfx.wait_reverted_by_timer()
        qfx.set_fault(pause_pattern=None)  # releases the held session
        res = done.result()
    out = res.stdout + res.stderr
    assert res.returncode != 0, out[-4000:]
    assert qfx.running_config() == before, out[-4000:]            # nothing of the push is active
    assert "the device had already rolled it back by itself" in out, out[-4000:]
    assert "was rolled back" not in out, out[-4000:]
    assert not qfx.confirm_pending


@pytest.mark.slow
@pytest.mark.parametrize(("fault", "outcome"), [
    ({"reject_pattern": r"^commit check"}, "nothing was committed"),
    ({"reject_pattern": r"^set class-of-service schedulers"}, "nothing was committed"),
    ({"drop_after_pattern": r"^commit confirmed"}, "push failed and was rolled back"),
])
def test_junos_failure_in_the_load_task_is_reported_and_rolled_back(emulator_fleet,  # type: ignore[no-untyped-def]
                                                                    tmp_path: Path, fault: dict[str, str],
                                                                    outcome: str) -> None:
    """The device refuses the change before anything is committed (``commit check`` fails, or a set line is
    a syntax error in ``load set terminal``): the push fails saying nothing was committed. The session drops
    right after ``commit confirmed`` took effect: the change is active, so the push rolls it back at once
    and says so (it said "candidate discarded" and left it to the device's timer). Either way the rollout
    stops there: the GPU hosts' play does not run."""
    key, pub = ssh_keypair(tmp_path)
    fleet = emulator_fleet([EmulatorSpec("junos", "qfx1", username="admin", password="not-used",
                                         authorized_keys=[pub], time_scale=0.1)])
    qfx = fleet["qfx1"]
    qfx.set_fault(**fault)
    lab = prepare_lab(tmp_path / "lab", {n: fleet.port(n) if n == "qfx1" else 1 for n in DEVICES})
    lab.env.pop("ROCE_TUNE_PASSWORD", None)
    before = qfx.running_config()
    res = lab.playbook("push.yml", "--limit", "platform_junos:gpu_hosts",
                       "-e", f"roce_tune_base_dir={lab.workdir}", "-e", f"ansible_ssh_private_key_file={key}")
    out = res.stdout + res.stderr
    assert res.returncode != 0, out[-4000:]
    assert qfx.running_config() == before, out[-4000:]
    assert outcome in out, out[-4000:]
    assert "rolled it back by itself" not in out, out[-4000:]
    assert not qfx.confirm_pending, qfx.events
    counts = recap(res.stdout)
    assert counts["qfx1"]["failed"] == 1 and "gpu01" not in counts and "gpu02" not in counts, counts


QFX2 = """  - name: qfx2
    platform: junos
    model: QFX5130-32CD
    role: leaf
    mgmt: {host: 127.0.0.1, port: @PORT_qfx2@}
    ports:
      - {name: "et-0/0/[0-1]", speed: 400G}
"""


@pytest.mark.slow
def test_junos_batch_with_one_failing_device(emulator_fleet, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """Two Junos switches in one batch; qfx2's session drops right after its ``commit confirmed`` took
    effect. The run fails, qfx2 is rolled back at once and the output says so; no device is left with an
    unconfirmed commit (which would revert by itself minutes later, after the run said it was done)."""
    key, pub = ssh_keypair(tmp_path)
    names = ("qfx1", "qfx2")
    fleet = emulator_fleet([EmulatorSpec("junos", n, username="admin", password="not-used",
                                         authorized_keys=[pub], time_scale=0.1) for n in names])
    fleet["qfx2"].set_fault(drop_after_pattern=r"^commit confirmed")
    template = FABRIC.read_text().replace("  - name: nx1\n", QFX2 + "  - name: nx1\n")
    lab = prepare_lab(tmp_path / "lab", {n: fleet.port(n) if n in names else 1 for n in (*DEVICES, "qfx2")},
                      template=template)
    lab.env.pop("ROCE_TUNE_PASSWORD", None)
    before = {n: fleet[n].running_config() for n in names}
    res = lab.playbook("push.yml", "--limit", "platform_junos:gpu_hosts", "-e", '{"roce_tune_serial": [2]}',
                       "-e", f"roce_tune_base_dir={lab.workdir}", "-e", f"ansible_ssh_private_key_file={key}")
    out = res.stdout + res.stderr
    assert res.returncode != 0, out[-5000:]
    assert fleet["qfx2"].running_config() == before["qfx2"], out[-5000:]
    assert re.search(r"fatal: \[qfx2\].*push failed and was rolled back", out), out[-5000:]
    assert not any(fleet[n].confirm_pending for n in names), out[-5000:]
    counts = recap(res.stdout)
    assert "gpu01" not in counts, counts


@pytest.mark.slow
def test_host_push_failure_restores_the_values_as_found(emulator_fleet,  # type: ignore[no-untyped-def]
                                                        tmp_path: Path) -> None:
    """A GPU host where the second NIC's DCQCN knob is a directory where the driver's file should be (it
    can be neither read nor written): the host script fails after it changed other values, the restore
    point runs at once and the task output says the rollback is incomplete for exactly that value; every
    other sysfs value is the one found before the push."""
    key, pub = ssh_keypair(tmp_path)
    fleet = emulator_fleet([EmulatorSpec("host", "gpu01", username="admin", password="not-used",
                                         authorized_keys=[pub], options={"nics": NICS})])
    _add_driver_knobs(fleet["gpu01"])
    knob = fleet["gpu01"].sysroot / "sys/class/net/ens1f1np1/ecn/roce_np/enable/3"
    knob.unlink()
    knob.mkdir()
    lab = prepare_lab(tmp_path / "lab", {n: fleet.port(n) if n == "gpu01" else 1 for n in DEVICES})
    lab.env.pop("ROCE_TUNE_PASSWORD", None)
    before = _state(fleet, "gpu01")
    res = lab.playbook("push.yml", "--limit", "gpu01", "-e", f"roce_tune_base_dir={lab.workdir}",
                       "-e", f"ansible_ssh_private_key_file={key}", "-e", "ansible_become=false")
    out = res.stdout + res.stderr
    assert res.returncode != 0, out[-4000:]
    assert "host script failed (exit 2); ROLLBACK INCOMPLETE" in out, out[-4000:]
    assert "not restorable: rt_put " in out and "ens1f1np1/ecn/roce_np/enable/3" in out, out[-4000:]
    # the restore unsets a global traffic class found unset by writing -1, as the mlx5 driver takes it
    # (templates/host/snapshot.j2); the emulator's sysfs keeps the -1 instead of reading back empty
    after = re.sub(r"(?m)(/traffic_class = )-1$", r"\1", _state(fleet, "gpu01"))
    assert after == before, "\n".join(sorted(set(after.splitlines()) ^ set(before.splitlines())))


@pytest.mark.slow
def test_eos_save_failure_says_the_change_is_live_and_unsaved(emulator_fleet,  # type: ignore[no-untyped-def]
                                                              tmp_path: Path) -> None:
    """EOS commits the session, then `write memory` fails (startup unchanged): as `roce-tune apply` says,
    the push fails saying the change is live but not saved (a reload would lose it), never silently ok."""
    key, pub = ssh_keypair(tmp_path)
    fleet = emulator_fleet([EmulatorSpec("eos", "eos1", username="admin", password="not-used",
                                         authorized_keys=[pub], time_scale=0.01)])
    eos = fleet["eos1"]
    eos.set_fault(fail_save=True)
    lab = prepare_lab(tmp_path / "lab", {n: fleet.port(n) if n == "eos1" else 1 for n in DEVICES})
    lab.env.pop("ROCE_TUNE_PASSWORD", None)
    res = lab.playbook("push.yml", "--limit", "eos1", "-e", f"roce_tune_base_dir={lab.workdir}",
                       "-e", f"ansible_ssh_private_key_file={key}", "-e", "ansible_become=false")
    out = res.stdout + res.stderr
    assert res.returncode != 0, out[-4000:]
    assert "live (the configuration session was committed) but NOT saved" in out, out[-4000:]
    assert "qos profile ROCE_LOSSLESS_400G" in eos.running_config()         # the change is live


@pytest.mark.slow
def test_junos_someone_elses_uncommitted_changes_are_left_alone(emulator_fleet,  # type: ignore[no-untyped-def]
                                                                tmp_path: Path) -> None:
    """Another user left uncommitted changes in the shared candidate: `configure private` is refused. The
    push fails saying nothing was committed; the other user's candidate is kept and nothing is active."""
    from tests.emulators import junos as junos_emu

    key, pub = ssh_keypair(tmp_path)
    fleet = emulator_fleet([EmulatorSpec("junos", "qfx1", username="admin", password="not-used",
                                         authorized_keys=[pub], time_scale=0.1)])
    qfx = fleet["qfx1"]
    theirs = [*qfx.active, "system host-name their-change"]

    def _edit() -> None:
        qfx.shared = junos_emu._Db(list(theirs))

    fleet.call(_edit)
    lab = prepare_lab(tmp_path / "lab", {n: fleet.port(n) if n == "qfx1" else 1 for n in DEVICES})
    lab.env.pop("ROCE_TUNE_PASSWORD", None)
    before = qfx.running_config()
    res = lab.playbook("push.yml", "--limit", "qfx1", "-e", f"roce_tune_base_dir={lab.workdir}",
                       "-e", f"ansible_ssh_private_key_file={key}")
    out = res.stdout + res.stderr
    assert res.returncode != 0, out[-4000:]
    assert "nothing was committed" in out and "shared configuration database modified" in out, out[-4000:]
    assert qfx.running_config() == before
    assert qfx.shared is not None and qfx.shared.lines == theirs


GPU03 = """  - name: gpu03
    mgmt: {host: 127.0.0.1, port: @PORT_gpu03@}
    nics:
      - {model: connectx-7, netdev: ens1f0np0, rdma_device: mlx5_0, speed: 400G,
         switch_port: "eos1:Ethernet3/1", cable_length: 2m}
"""


@pytest.mark.slow
def test_an_unreachable_host_stops_the_rollout(emulator_fleet, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """Batches [2, 1]: gpu01 cannot be reached, gpu02 (same batch) is pushed, gpu03 is in the next batch.
    Ansible's max_fail_percentage ignores unreachable devices, so the rollout went on to gpu03; an
    unreachable device now counts as a failure ("nothing was pushed to it") and the rollout stops."""
    key, pub = ssh_keypair(tmp_path)
    fleet = emulator_fleet([EmulatorSpec("host", n, username="admin", password="not-used",
                                         authorized_keys=[pub], options={"nics": NICS})
                            for n in ("gpu02", "gpu03")])
    for name in ("gpu02", "gpu03"):
        _add_driver_knobs(fleet[name])
    template = FABRIC.read_text().replace('"Ethernet[1-2]/1"', '"Ethernet[1-3]/1"') + GPU03
    lab = prepare_lab(tmp_path / "lab", {n: fleet.port(n) if n in ("gpu02", "gpu03") else 1
                                         for n in (*DEVICES, "gpu03")}, template=template)
    lab.env.pop("ROCE_TUNE_PASSWORD", None)
    before = fleet["gpu03"].running_config()
    res = lab.playbook("push.yml", "--limit", "gpu_hosts", "-e", '{"roce_tune_host_serial": [2, 1]}',
                       "-e", f"roce_tune_base_dir={lab.workdir}", "-e", f"ansible_ssh_private_key_file={key}",
                       "-e", "ansible_become=false")
    out = res.stdout + res.stderr
    assert res.returncode != 0, out[-4000:]
    assert re.search(r"fatal: \[gpu01\].*unreachable, nothing was pushed to it", out), out[-4000:]
    assert fleet["gpu03"].running_config() == before, out[-4000:]
    counts = recap(res.stdout)
    assert counts["gpu01"]["failed"] == 1 and counts["gpu02"]["failed"] == 0, counts
    assert "gpu03" not in counts, counts
