"""Launcher command lines (no real mpirun/srun): the arguments each launcher documents."""

from __future__ import annotations

import shlex

import pytest

from roce_tune.verify.launch import LaunchSpec, build_launch, parse_nccl_size, size_arg

ENV = {"NCCL_IB_TC": "106", "NCCL_IB_HCA": "=mlx5_0:1", "NCCL_SOCKET_IFNAME": "=eno1"}


def _argv(line: str) -> list[str]:
    return shlex.split(line)


def test_mpirun_exports_every_variable_with_its_value_and_places_ranks() -> None:
    cmd = build_launch(LaunchSpec(hosts=["gpu1", "gpu2", "gpu3"], ranks_per_host=8, env=ENV,
                                  binary_dir="/opt/nt/build"))
    assert list(cmd.commands) == ["gpu1"]  # runs on the head host
    argv = _argv(cmd.commands["gpu1"])
    assert argv[:3] == ["mpirun", "-np", "24"]
    assert argv[argv.index("-H") + 1] == "gpu1:8,gpu2:8,gpu3:8"
    assert argv[argv.index("--map-by") + 1] == "ppr:8:node"
    exported = [argv[i + 1] for i, a in enumerate(argv) if a == "-x"]
    assert sorted(exported) == sorted(f"{k}={v}" for k, v in ENV.items())
    tail = argv[argv.index("/opt/nt/build/all_reduce_perf"):]
    assert tail == ["/opt/nt/build/all_reduce_perf", "-b", "1M", "-e", "8G", "-f", "2", "-g", "1", "-n", "20",
                    "-w", "5", "-c", "1"]
    assert cmd.nranks == 24


def test_srun_export_and_comma_values_go_through_env() -> None:
    env = {**ENV, "NCCL_IB_HCA": "=mlx5_0,mlx5_1"}
    cmd = build_launch(LaunchSpec(launcher="srun", collective="alltoall", hosts=["a", "b"], head="login1",
                                  env=env,
                                  ranks_per_host=4, launcher_args=["--gpus-per-task=1"]))
    argv = _argv(cmd.commands["login1"])
    assert argv[:5] == ["srun", "--nodes=2", "--ntasks-per-node=4", "--nodelist=a,b", "--mpi=pmix"]
    export = next(a for a in argv if a.startswith("--export="))
    # no comma-containing value
    # inside
    assert export == "--export=ALL,NCCL_IB_TC=106,NCCL_SOCKET_IFNAME==eno1"
    assert argv[argv.index("env") + 1] == "NCCL_IB_HCA==mlx5_0,mlx5_1"
    assert "--gpus-per-task=1" in argv
    assert "alltoall_perf" in argv


def test_ssh_runs_on_every_host_with_local_gpus() -> None:
    cmd = build_launch(LaunchSpec(launcher="ssh", hosts=["a", "b"], ranks_per_host=8,
                                  env={"NCCL_IB_TC": "106"},
                                  collective="sendrecv", min_bytes=8, max_bytes="128M"))
    assert set(cmd.commands) == {"a", "b"}
    argv = _argv(cmd.commands["a"])
    assert argv[:3] == ["env", "NCCL_IB_TC=106", "sendrecv_perf"]
    assert argv[argv.index("-g") + 1] == "8"
    assert argv[argv.index("-b") + 1] == "8" and argv[argv.index("-e") + 1] == "128M"


def test_values_with_shell_characters_survive_quoting() -> None:
    cmd = build_launch(LaunchSpec(hosts=["a", "b"], env={"NCCL_DEBUG_SUBSYS": "INIT,NET", "NCCL_X": "a b;c"}))
    argv = _argv(cmd.commands["a"])
    assert "NCCL_X=a b;c" in argv and "NCCL_DEBUG_SUBSYS=INIT,NET" in argv


@pytest.mark.parametrize("value,nbytes", [("8G", 8 << 30), ("1M", 1 << 20), ("64K", 64 << 10), (4096, 4096),
                                          ("1MiB", 1 << 20), ("150KB", 150_000)])
def test_sizes_follow_nccl_tests_binary_suffixes(value: str | int, nbytes: int) -> None:
    # nccl-tests parsesize: K/M/G multiply by 1024, 1024^2, 1024^3
    assert parse_nccl_size(value) == nbytes


def test_size_arg_spelling() -> None:
    assert [size_arg(v) for v in (8 << 30, 1 << 20, 3 << 10, 1000)] == ["8G", "1M", "3K", "1000"]


@pytest.mark.parametrize("spec", [
    {"hosts": ["a b"]}, {"hosts": ["a", "b:2"]}, {"hosts": ["a"], "env": {"BAD-NAME": "1"}},
    {"hosts": ["a"], "min_bytes": "2G", "max_bytes": "1G"},
])
def test_bad_specs_are_refused(spec: dict) -> None:  # type: ignore[type-arg]
    with pytest.raises(ValueError):
        build_launch(LaunchSpec(**spec))
