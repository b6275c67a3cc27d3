"""verify orchestration pieces that need no device: sources, host selection, NCCL env, run merging."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from roce_tune.findings import RoceTuneError
from roce_tune.inventory.loader import load_inventory
from roce_tune.pipeline import derive_plan
from roce_tune.render.outputs import render_outputs, write_tree
from roce_tune.verify.measure import _judged, traffic_time_s
from roce_tune.verify.nccl_parser import parse_nccl_output
from roce_tune.verify.run import VerifyOptions, common_env, load_for_verify, select_hosts, verify_fabric

REPO = Path(__file__).resolve().parents[2]
TABLE = """\
# Collective test starting: all_reduce_perf
#  Rank  0 Group  0 Pid   1001 on      {host} device  0 [0000:18:00] NVIDIA H100
#  Rank  1 Group  0 Pid   1002 on      {host} device  1 [0000:19:00] NVIDIA H100
#       size         count      type   redop    root     time   algbw   \
busbw #wrong     time   algbw   busbw #wrong
     1048576        262144     float     sum      -1    100.0   10.49   {bw}      \
0    110.0    9.53   {bw}      0
     2097152        524288     float     sum      -1    150.0   13.98   {bw}      \
0    150.0   13.98   {bw}      0
# Out of bounds values : 0 OK
# Avg bus bandwidth    : {bw}
"""


@pytest.fixture
def inv_copy(tmp_path: Path) -> Path:
    dest = tmp_path / "lab-2node.yaml"
    shutil.copy(REPO / "inventories" / "lab-2node.yaml", dest)
    return dest


def test_plan_dir_gives_the_inventory_only_while_it_is_unchanged(inv_copy: Path, tmp_path: Path) -> None:
    plan = derive_plan(load_inventory(inv_copy))
    out = write_tree(render_outputs(plan), tmp_path / "plan")
    p, inv = load_for_verify(out)
    # plan.json carries the render findings (RT241, known defects) on top of the derived plan's
    assert p.model_copy(update={"findings": []}) == plan.model_copy(update={"findings": []})
    assert all(f in p.findings for f in plan.findings)
    assert inv is not None and inv.site.name == "lab-2node"
    inv_copy.write_text(inv_copy.read_text() + "\n# edited after planning\n")
    _, inv = load_for_verify(out)
    assert inv is None
    with pytest.raises(RoceTuneError) as exc:
        verify_fabric(out, VerifyOptions(adjust=True, out_dir=tmp_path / "v"))
    assert exc.value.findings[0].rule == "RT331"


def test_host_selection_and_common_env(inv_copy: Path) -> None:
    plan = derive_plan(load_inventory(inv_copy))
    assert select_hosts(plan, []) == ["node1", "node2"]
    assert select_hosts(plan, ["*2"]) == ["node2"]
    with pytest.raises(RoceTuneError):
        select_hosts(plan, ["gpu*"])
    env, differing = common_env(plan, ["node1", "node2"])
    assert env["NCCL_IB_TC"] == "106" and differing == []
    hosts = [plan.hosts[0], plan.hosts[1].model_copy(update={"nccl_env": {**plan.hosts[1].nccl_env,
                                                                          "NCCL_IB_HCA": "=mlx5_1:1"}})]
    env, differing = common_env(plan.model_copy(update={"hosts": hosts}), ["node1", "node2"])
    assert "NCCL_IB_HCA" not in env and differing == ["NCCL_IB_HCA"]


def test_ssh_runs_are_merged_by_the_slowest_host() -> None:
    outputs = {"node1": TABLE.format(host="node1", bw="40.00"),
               "node2": TABLE.format(host="node2", bw="20.00")}
    run, per_host = _judged(outputs, "ssh")
    assert set(per_host) == {"node1", "node2"} and run is per_host["node2"]
    run, per_host = _judged({"node1": outputs["node1"]}, "mpirun")
    assert per_host == {} and run is not None and run.max_busbw_gbps == 40.0
    assert _judged({"node1": "bash: mpirun: command not found\n"}, "mpirun") == (None, {})


def test_traffic_time_counts_both_placements_and_every_iteration() -> None:
    run = parse_nccl_output(TABLE.format(host="node1", bw="40.00"))[0]
    # (100 + 110 + 150 + 150) µs per iteration, 20 timed + 5 warm-up iterations
    assert traffic_time_s(run, iters=20, warmup=5) == pytest.approx(510e-6 * 25)


def test_adjust_refuses_the_ssh_launcher(inv_copy: Path, tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="fabric measurement"):
        verify_fabric(inv_copy, VerifyOptions(adjust=True, launcher="ssh", out_dir=tmp_path / "v"))


@pytest.mark.parametrize("launcher", ["mpirun", "srun"])
def test_a_fabric_launch_on_one_host_is_refused(inv_copy: Path, tmp_path: Path, launcher: str) -> None:
    """mpirun/srun on one host put every rank on that host: NCCL moves the data over NVLink/PCIe, busbw is
    not bounded by the NIC (several times its line rate) and verify passed the fabric without a packet on
    it. It is refused before anything runs, pointing at the ssh launcher for a host alone."""
    with pytest.raises(ValueError, match=r"one host \(node1\).*--launcher ssh"):
        verify_fabric(inv_copy, VerifyOptions(launcher=launcher, hosts=["node1"], out_dir=tmp_path / "v"))
    assert not (tmp_path / "v").exists()


@pytest.mark.parametrize("args,named", [
    (["--collective", "reduce_scatter"],
     "--collective 'reduce_scatter' is not one of all_reduce, all_gather, alltoall, sendrecv"),
    (["--launcher", "pdsh"], "--launcher 'pdsh' is not one of mpirun, srun, ssh")])
def test_a_bad_launcher_or_collective_is_named_with_its_value(inv_copy: Path, args: list[str],
                                                               named: str) -> None:
    """``--collective reduce_scatter`` (an nccl-tests binary verify does not run) was answered with the lists
    of both options, naming neither the option nor the value that was wrong."""
    from typer.testing import CliRunner

    from roce_tune.cli import app
    res = CliRunner().invoke(app, ["verify", str(inv_copy), *args])
    assert res.exit_code == 2
    assert f"error: {named}" in res.output
    assert ("--launcher" in named) != ("--collective" in res.output)


def test_after_a_push_a_failed_device_is_read_again_but_not_blamed(monkeypatch: pytest.MonkeyPatch) -> None:
    """After an --adjust push the devices it touched are read back. A device whose push failed (apply rolled
    it back, and the stop reason says so) still runs its old values: it is read again, so the iteration says
    what it runs (before, its earlier read against the old plan stood for the new one: "as planned"), but it
    is no "push did not take" finding; a pushed device that differs is one; an unchanged one is not read."""
    import roce_tune.verify.run as run_mod
    from roce_tune.deploy.runner import DeviceResult
    from roce_tune.verify.as_found import AsFound, Difference, _Device

    plan = derive_plan(load_inventory(REPO / "inventories" / "lab-2node.yaml"))
    asked: list[list[str]] = []

    def read(pool, p, switches, hosts, render, workers):  # type: ignore[no-untyped-def]
        asked.append(sorted(set(switches) | set(hosts)))
        ai = "ens1f0np0 ecn/roce_rp/rpg_ai_rate"
        return AsFound({n: _Device(n, differences=[Difference(n, ai, "5", "1")]) for n in ("node1", "node2")})
    monkeypatch.setattr(run_mod, "read_as_found", read)
    said: list[str] = []
    runs = run_mod._Runs(pool=None, spec=None, switches=[], line_rate_gbps=400.0,  # type: ignore[arg-type]
                         target_ratio=0.9, timeout_s=1.0, say=said.append)
    before = AsFound({n: _Device(n) for n in ("lab-leaf1", "node1", "node2")})
    results = [DeviceResult("node1", "host", "pushed"), DeviceResult("node2", "host", "failed"),
               DeviceResult("lab-leaf1", "sonic", "no-change")]
    now = run_mod._read_after_push(runs, VerifyOptions(), plan, results, before)
    assert asked == [["node1", "node2"]]
    assert [(d.rule, d.location.device) for d in runs.after_push] == [("RT332", "node1")]
    assert "the push did not take" in runs.after_push[0].message
    assert now.devices["node2"].differences and not now.devices["lab-leaf1"].differences
    assert any("node1 ens1f0np0" in s for s in said) and not any("node2" in s for s in said)
