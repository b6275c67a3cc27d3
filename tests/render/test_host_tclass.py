"""The mlx5 global traffic class and the TOS values NCCL asks for.

MLNX_OFED mlx5_ib puts a global traffic class (``/sys/class/infiniband/<dev>/tc/<port>/traffic_class``) on
every RoCE QP of the port, over the traffic class the application set (``tclass_get_tclass_locked``: the
global value wins whenever it is >= 0; a write re-marks the QPs already in RTS). A policy with a second
lossless priority that has its own RoCE DSCP gives NCCL ``NCCL_IB_FIFO_TC`` = that class for its CTS
messages; a global traffic class of ``NCCL_IB_TC`` would silently put them back on the data class. There
the host script unsets the global class and reads it back unset. The real script runs under ``bash`` on
the fake sysfs tree and stub tools of ``tests/render/test_host.py``.
"""

from __future__ import annotations

from pathlib import Path

from roce_tune.pipeline import derive_plan, load
from roce_tune.platforms import host

from .golden import REPO, pipeline_plan
from .test_host import Box, _box_env, _run_file

INVENTORIES = REPO / "inventories"


def _two_class_plan(tmp_path: Path):  # type: ignore[no-untyped-def]
    """lab-2node with a second lossless priority (4) that has its own RoCE DSCP (34)."""
    text = (INVENTORIES / "lab-2node.yaml").read_text(encoding="utf-8")
    text = text.replace("lossless_priorities: [3]", "lossless_priorities: [3, 4]")
    text = text.replace("roce_dscp: [26]", "roce_dscp: [26, 34]")
    inv = tmp_path / "two-class.yaml"
    inv.write_text(text, encoding="utf-8")
    return derive_plan(load(inv))


def test_a_second_lossless_class_for_nccl_leaves_the_global_traffic_class_unset(tmp_path: Path) -> None:
    plan = _two_class_plan(tmp_path)
    h = plan.hosts[0]
    assert (h.nccl_env["NCCL_IB_TC"], h.nccl_env["NCCL_IB_FIFO_TC"]) == ("106", "138")
    assert not host.forces_global_tclass(h)
    files = host.render_hosts(plan, [h])
    assert "RT_TCLASS_GLOBAL=0" in files[f"{h.name}.sh"]
    script = host.host_script({f"hosts/{k}": v for k, v in files.items()}, h.name) or ""
    (tmp_path / "box").mkdir()
    box = Box(tmp_path / "box", h)
    env = _box_env(box)
    tcs = [box.root / "sys/class/infiniband" / n.rdma_device / "tc" / str(n.rdma_port) / "traffic_class"
           for n in h.nics]
    for tc in tcs:  # an earlier NVIDIA-style setup forced TOS 106 on every QP
        tc.write_text("Global tclass=106\n")
    path, restore = tmp_path / "apply.sh", tmp_path / "restore.sh"
    path.write_text(script, encoding="utf-8")
    res = _run_file(path, "--save", str(restore), env=env)
    assert res.returncode == 0, res.stderr
    assert [tc.read_text() for tc in tcs] == [f"{host.TCLASS_UNSET}\n"] * len(tcs)
    assert (box.state / "cm" / h.nics[0].rdma_device / "1" / "tos").read_text() == "106"  # RDMA-CM keeps it
    assert _run_file(path, "--check", env=env).returncode == 0
    tcs[0].write_text("Global tclass=106\n")  # set again by hand: NCCL's FIFO class is lost again
    res = _run_file(path, "--check", env=env)
    assert res.returncode == 1
    assert f"MISMATCH {h.nics[0].rdma_device} traffic_class: expected 'unset', read '106'" in res.stderr
    assert _run_file(restore, env=env).returncode == 0
    assert [tc.read_text() for tc in tcs] == ["106\n"] * len(tcs)


def test_the_global_traffic_class_is_set_where_nccl_asks_only_for_the_roce_tos() -> None:
    plan = pipeline_plan("lab-2node")
    for h in plan.hosts:
        assert host.nccl_tos_values(h) == [106] and host.forces_global_tclass(h)
        assert "RT_TCLASS_GLOBAL" not in host.render_host_data(plan, h)
        pinned = h.model_copy(update={"nccl_env": {**h.nccl_env, "NCCL_IB_TC": "98"}})
        assert not host.forces_global_tclass(pinned)  # a pinned NCCL_IB_TC would be overridden too
        unpinned = h.model_copy(update={"nccl_env": {k: v for k, v in h.nccl_env.items()
                                                     if k not in host.NCCL_TOS_VARS}})
        assert host.forces_global_tclass(unpinned)
