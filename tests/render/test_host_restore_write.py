"""The host script's restore point (``--save FILE``) is written whole or not at all.

The real rendered script runs under ``bash`` against the fake sysfs tree and stub tools of
``tests/render/test_host.py`` (``Box``). A restore point is what apply runs when a host push fails and what
an operator keeps as ``<host>.<tag>.before.sh``: a file cut short (the run stopped while it was being
written, a disk that filled up) would run part of the commands and still exit 0, as if every value had
been put back. A FILE that cannot be written at all stops the run before any change with exit 2 (the
script's "stopped" status), naming FILE, not exit 1 ("values did not read back").
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

from .test_host import Box, _box_env, _device_view, _run_file, _script


def _setup(tmp_path: Path) -> tuple[object, Box, Path, dict[str, str]]:
    plan, script = _script()
    h = plan.hosts[0]  # type: ignore[attr-defined]
    box = Box(tmp_path, h)
    path = tmp_path / "apply.sh"
    path.write_text(script, encoding="utf-8")
    return h, box, path, _box_env(box)


def test_a_restore_point_that_cannot_be_written_stops_before_any_change_with_exit_2(tmp_path: Path) -> None:
    h, box, path, env = _setup(tmp_path)
    before = _device_view(box, h, env)
    target = tmp_path / "no-such-dir" / "restore.sh"
    res = _run_file(path, "--save", str(target), env=env)
    assert res.returncode == 2, (res.returncode, res.stderr)
    assert f"roce-tune: {h.name}: cannot write the restore point {target}" in res.stderr  # type: ignore[attr-defined]
    assert "nothing was changed" in res.stderr
    assert _device_view(box, h, env) == before
    assert not target.exists()


def test_a_run_stopped_while_writing_the_restore_point_leaves_no_partial_file(tmp_path: Path) -> None:
    h, box, path, env = _setup(tmp_path)
    before = _device_view(box, h, env)
    # cma_roce_mode is first called by the restore point of the second NIC (the pre-flight check does not
    # call it): it announces itself there and hangs, so the run is stopped half-way through writing FILE
    real = box.bin / "cma_roce_mode.real"
    (box.bin / "cma_roce_mode").rename(real)
    reached = tmp_path / "reached"
    second = h.nics[1].rdma_device  # type: ignore[attr-defined]
    (box.bin / "cma_roce_mode").write_text(
        "#!/bin/bash\n"
        f'if [[ " $* " == *" {second} "* ]]; then : > {reached}; sleep 60; fi\n'
        f'exec {real} "$@"\n', encoding="utf-8")
    (box.bin / "cma_roce_mode").chmod(0o755)
    for sig in (signal.SIGTERM, signal.SIGKILL):
        reached.unlink(missing_ok=True)
        target = tmp_path / f"restore-{sig.name}.sh"
        proc = subprocess.Popen(["bash", str(path), "--save", str(target)], env=env, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, start_new_session=True)
        deadline = time.monotonic() + 30
        while not reached.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert reached.exists(), proc.communicate(timeout=5)
        os.killpg(proc.pid, sig)
        _, err = proc.communicate(timeout=30)
        assert proc.returncode != 0
        assert not target.exists(), f"{sig.name}: a partial restore point was left:\n{target.read_text()}"
        if sig == signal.SIGTERM:  # (a trapped signal also removes the temp file; SIGKILL cannot be trapped)
            assert "nothing was changed" in err, err
            assert not [p.name for p in tmp_path.iterdir() if p.name.startswith(".roce-tune")]
    real.replace(box.bin / "cma_roce_mode")
    assert _device_view(box, h, env) == before  # stopped before any change


def test_a_complete_restore_point_is_in_place_once_the_apply_begins(tmp_path: Path) -> None:
    h, box, path, env = _setup(tmp_path)
    before = _device_view(box, h, env)
    target = tmp_path / "restore.sh"
    res = _run_file(path, "--save", str(target), env=env)
    assert res.returncode == 0, res.stderr
    text = target.read_text(encoding="utf-8")
    assert text.startswith("#!/usr/bin/env bash\n") and text.rstrip().endswith('exit "$RT_FAIL"\n}')
    assert not [p.name for p in tmp_path.iterdir() if p.name.startswith(".roce-tune")]
    assert _run_file(target, env=env).returncode == 0
    assert _device_view(box, h, env) == before
