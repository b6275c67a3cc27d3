"""push.yml (network_cli, library/roce_tune_junos_cli.py) on a Junos switch that refuses ``commit
confirmed`` in ``configure private`` (the emulator's ``refuse_private_confirm`` fault: ``error: commit
confirmed not supported for private configuration``), as ``roce-tune apply`` handles it: nothing was
committed, so the module discards the private candidate, proves it from ``show system commit`` and pushes
from ``configure exclusive``; a shared candidate locked by another session fails the push before any change,
naming the holder. Before, the module marked the commit sent before the refusal and the rescue reported
"the device had already rolled it back by itself", which was false (nothing had been committed)."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from roce_tune.deploy.drivers import compute_change
from tests.ansible.harness import Lab, ansible_missing, prepare_lab, recap, ssh_keypair
from tests.emulators import EmulatorSpec

from .test_push_emulators import DEVICES

pytestmark = [pytest.mark.emulator, pytest.mark.slow,
              pytest.mark.skipif(ansible_missing() is not None, reason=ansible_missing() or "")]


def _lab(emulator_fleet, tmp_path: Path) -> tuple[Any, Lab, list[str]]:  # type: ignore[no-untyped-def]
    """The Junos emulator qfx1 refusing commit confirmed in private mode, its lab and the push arguments."""
    key, pub = ssh_keypair(tmp_path)
    fleet = emulator_fleet([EmulatorSpec("junos", "qfx1", username="admin", password="not-used",
                                         authorized_keys=[pub], time_scale=0.1)])
    qfx = fleet["qfx1"]
    qfx.set_fault(refuse_private_confirm=True)
    lab = prepare_lab(tmp_path / "lab", {n: fleet.port(n) if n == "qfx1" else 1 for n in DEVICES})
    lab.env.pop("ROCE_TUNE_PASSWORD", None)
    return qfx, lab, ["push.yml", "--limit", "platform_junos", "-e", f"roce_tune_base_dir={lab.workdir}",
                      "-e", f"ansible_ssh_private_key_file={key}"]


def test_refused_private_confirm_pushes_from_exclusive_and_says_so(emulator_fleet,  # type: ignore[no-untyped-def]
                                                                    tmp_path: Path) -> None:
    qfx, lab, args = _lab(emulator_fleet, tmp_path)
    history = len(qfx.history)
    res = lab.playbook(*args)
    out = res.stdout + res.stderr
    assert res.returncode == 0, out[-5000:]
    assert "pushed from `configure exclusive`" in out, out[-5000:]
    desired = (lab.out_dir / "switches" / "qfx1.set").read_text()
    # roce-tune's own diff of the device's `show configuration | display set` against the rendered file
    assert compute_change("junos", qfx.running_config(), desired, set()).commands == []
    assert not qfx.confirm_pending and qfx.exclusive_owner is None, qfx.events
    # exactly the exclusive commit confirmed and its confirm: nothing was committed in private mode
    new = qfx.history[:len(qfx.history) - history]  # newest first
    assert [c.comment for c in new] == ["confirmed", f"roce-tune {_site(lab)}"], \
        [(c.comment, c.method) for c in qfx.history]
    again = lab.playbook(*args)
    assert again.returncode == 0 and recap(again.stdout)["qfx1"]["changed"] == 0, again.stdout[-5000:]


def test_exclusive_locked_by_another_session_fails_before_any_change(emulator_fleet,  # type: ignore[no-untyped-def]
                                                                     tmp_path: Path) -> None:
    """bob takes the exclusive lock between the private refusal and the retry: the push fails, names bob's
    session, says nothing was committed (not "rolled it back by itself"), and nothing changed."""
    qfx, lab, args = _lab(emulator_fleet, tmp_path)
    before, history = qfx.running_config(), len(qfx.history)
    bob = qfx.new_session("bob", True)
    qfx.set_fault(pause_pattern=r"^commit confirmed")
    with ThreadPoolExecutor(1) as pool:
        done = pool.submit(lab.playbook, *args)
        qfx.wait_held(done, "commit confirmed", timeout_s=120)
        with qfx.lock:
            assert "Entering configuration mode" in bob.configure(["exclusive"])
        qfx.resume()
        res = done.result(timeout=240)
    out = res.stdout + res.stderr
    assert res.returncode != 0, out[-5000:]
    assert "device refused `configure exclusive` (configuration database locked by:" in out, out[-5000:]
    assert f"bob terminal pts/0 (pid {bob.pid})" in out, out[-5000:]
    assert "push failed and nothing was committed (the exclusive candidate was discarded)" in out, out[-5000:]
    assert "rolled it back by itself" not in out, out[-5000:]
    assert qfx.running_config() == before and len(qfx.history) == history, "nothing may change"
    assert qfx.exclusive_owner is bob, "bob's lock is his"


def _site(lab: Lab) -> str:
    import yaml

    data = yaml.safe_load(lab.hosts_yml.read_text())
    found: list[str] = []

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            if "roce_tune_site" in node:
                found.append(str(node["roce_tune_site"]))
            for v in node.values():
                walk(v)

    walk(data)
    return found[0]
