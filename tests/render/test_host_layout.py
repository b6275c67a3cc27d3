"""The host side of an output tree (issue 16): one shared host script, a small data file per host that
sources it, and a per-host NCCL env file only where a host's variables are not all in ``nccl.env``.
The scripts run for real (bash, stub tools, fake sysfs: :class:`tests.render.test_host.Box`)."""

from __future__ import annotations

import subprocess
from pathlib import Path

from roce_tune.deploy.runner import targets_from_files
from roce_tune.pipeline import missing_device_files
from roce_tune.platforms import host
from roce_tune.render.outputs import render_outputs

from .plan_builder import build_plan
from .test_host import Box, _box_env


def _tree(files: dict[str, str], root: Path) -> Path:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    return root


def test_tree_holds_one_shared_script_and_a_small_data_file_per_host() -> None:
    plan = build_plan()
    files = render_outputs(plan)
    shared = files[f"hosts/{host.SHARED_SCRIPT}"]
    data = files["hosts/node1.sh"]
    assert {rel for rel in files if rel.startswith("hosts/") and rel.endswith(".sh")} == \
        {f"hosts/{host.SHARED_SCRIPT}", "hosts/node1.sh"}
    assert "RT_HOST=node1" in data and "node1" not in shared  # the shared script names no host
    assert "rt_qos_pfc()" in shared and "rt_qos_pfc()" not in data  # and the data file holds no logic
    assert len(data) < len(shared) / 2


def test_the_data_file_in_the_tree_runs_the_shared_script(tmp_path: Path) -> None:
    # `bash out/hosts/<name>.sh [--check]` on a host that has the output tree: it sources the shared script
    plan = build_plan()
    root = _tree(render_outputs(plan), tmp_path / "out")
    (tmp_path / "box").mkdir()
    box = Box(tmp_path / "box", plan.hosts[0])
    env = _box_env(box)
    run = [("bash", str(root / "hosts/node1.sh"), "--check"), ("bash", str(root / "hosts/node1.sh")),
           ("bash", str(root / "hosts/node1.sh"), "--check")]
    check, apply, again = (subprocess.run(list(a), env=env, capture_output=True, text=True, timeout=60,
                                          check=False)
                           for a in run)
    assert check.returncode == 1 and "did not read back as set" in check.stderr
    assert apply.returncode == 0 and "all values set and read back" in apply.stdout, apply.stderr
    assert again.returncode == 0 and "every value already as planned" in again.stdout


def test_apply_pushes_the_data_file_and_shared_script_as_one_script() -> None:
    plan = build_plan()
    files = render_outputs(plan)
    [target] = [t for t in targets_from_files(plan, files) if t.kind == "host"]
    assert target.desired == host.render_host(plan, plan.hosts[0])["node1.sh"]
    assert target.desired.startswith(files["hosts/node1.sh"].split(host.SHARED_MARKER)[0])
    assert "source " not in target.desired and "rt_qos_pfc()" in target.desired
    assert target.desired.splitlines().count("#!/usr/bin/env bash") == 1


def test_a_self_contained_script_of_an_older_plan_is_pushed_as_it_is() -> None:
    plan = build_plan()
    old = {"hosts/node1.sh": "#!/usr/bin/env bash\necho old layout\n"}
    assert host.host_script(old, "node1") == old["hosts/node1.sh"]
    assert missing_device_files(plan, {**old, "hosts/node1.nccl.env": ""}).get("node1") is None


def test_a_data_file_without_its_shared_script_is_an_incomplete_plan() -> None:
    plan = build_plan()
    files = render_outputs(plan)
    del files[f"hosts/{host.SHARED_SCRIPT}"]
    assert missing_device_files(plan, files)["node1"] == [f"hosts/{host.SHARED_SCRIPT}"]


def test_shared_script_refuses_data_of_another_version(tmp_path: Path) -> None:
    plan = build_plan()
    data = host.render_host_data(plan, plan.hosts[0]).replace(
        f"RT_DATA_VERSION={host.HOST_SCRIPT_VERSION}\n", "RT_DATA_VERSION=1\n")
    script = host.bundle(data, host.render_shared_script(plan.generator))
    box = Box(tmp_path, plan.hosts[0])
    before = box.snapshot()
    res = box.run(script)
    assert res.returncode == 2 and "does not match shared host script version" in res.stderr
    assert box.snapshot() == before


def test_per_host_nccl_env_only_where_the_host_differs() -> None:
    plan = build_plan()
    h = plan.hosts[0]
    other = h.model_copy(update={"name": "node2", "nccl_env": {**h.nccl_env,
                                                               "NCCL_IB_PCI_RELAXED_ORDERING": "1"}})
    same = h.model_copy(update={"name": "node3"})
    files = render_outputs(plan.model_copy(update={"hosts": [h, other, same]}))
    assert "hosts/node2.nccl.env" in files
    assert "hosts/node1.nccl.env" not in files and "hosts/node3.nccl.env" not in files
    common = files["nccl.env"]
    assert ("# per-host: NCCL_IB_PCI_RELAXED_ORDERING" in common
            and "NCCL_IB_PCI_RELAXED_ORDERING=" not in common)
    assert "NCCL_IB_PCI_RELAXED_ORDERING=1" in files["hosts/node2.nccl.env"]
    alone = render_outputs(plan)
    assert not [rel for rel in alone if rel.endswith(".nccl.env") and rel != "nccl.env"]
    assert all(f"{k}=" in alone["nccl.env"] for k in h.nccl_env)  # nccl.env is then the host's whole env


def test_a_data_file_copied_without_the_shared_script_stops_with_exit_2_naming_it(tmp_path: Path) -> None:
    # `scp out/hosts/node1.sh gpu01:` then `sudo bash node1.sh --check`: the shared script it sources is not
    # there. Exit 2 ("stopped", not 1 = "values did not read back") naming the file to copy; nothing runs.
    plan = build_plan()
    root = _tree(dict(render_outputs(plan)), tmp_path / "out")
    alone = tmp_path / "copied"
    alone.mkdir()
    (alone / "node1.sh").write_text((root / "hosts/node1.sh").read_text(encoding="utf-8"), encoding="utf-8")
    (tmp_path / "box").mkdir()
    box = Box(tmp_path / "box", plan.hosts[0])
    for args in ((), ("--check",)):
        res = subprocess.run(["bash", str(alone / "node1.sh"), *args], env=_box_env(box), capture_output=True,
                             text=True, timeout=60, check=False)
        assert res.returncode == 2, (args, res.returncode, res.stderr)
        assert f"roce-tune: {alone / host.SHARED_SCRIPT} not found" in res.stderr
        assert f"copy hosts/{host.SHARED_SCRIPT} beside" in res.stderr


def _usage(script: str) -> list[str]:
    """The usage block of a host script's header: the ``Usage:`` comment line and its option lines."""
    lines = script.splitlines()
    start = next(i for i, ln in enumerate(lines) if ln.startswith("# Usage: "))
    block = [lines[start]]
    for ln in lines[start + 1:]:
        if not ln.startswith("#   --"):
            break
        block.append(ln)
    return block


def test_the_data_file_names_the_same_usage_as_the_shared_script() -> None:
    # An operator reads `bash hosts/<name>.sh` from the file they run: its usage said
    # `[--check | --save FILE]` while the shared script (and the boot unit) also take --boot.
    files = render_outputs(build_plan())
    shared, data = files[f"hosts/{host.SHARED_SCRIPT}"], files["hosts/node1.sh"]
    assert _usage(data) == _usage(shared)
    assert "--boot" in _usage(data)[0] and any(ln.startswith("#   --boot ") for ln in _usage(data))
    # and the argument check agrees with both
    assert 'rt_usage() { echo "usage: $0 [--check | --save FILE | --boot]" >&2; exit 2; }' in shared
