"""Build the nccl-tests command lines ``roce-tune verify`` runs (pure: no I/O).

Three launchers; the command is always run *through an SSH session* to a plan host:

``mpirun`` (default)
    Open MPI on the head host (the first selected host, or ``--head``), which reaches the others
    over its own SSH/PMIx: ``mpirun -np N -H h1:k,h2:k --map-by ppr:k:node --bind-to none
    -x NCCL_IB_TC=106 … BIN/all_reduce_perf -b 1M -e 8G -f 2 -g 1 -n 20 -w 5 -c 1``. ``-x VAR=value``
    sets the value on every rank whatever the head's own environment holds (Open MPI ``mpirun(1)``
    "-x"). nccl-tests must be built with ``MPI=1``, else every rank runs alone (the parser reports it).
``srun``
    Slurm on the head host (a login node that is also a plan host, or ``--head``): ``srun --nodes=N
    --ntasks-per-node=k --nodelist=h1,h2 --mpi=pmix --export=ALL,NCCL_IB_TC=106,… BIN/…``. Slurm splits
    ``--export`` on commas, so a value containing a comma (``NCCL_IB_HCA=mlx5_0,mlx5_1``) is passed
    with an ``env VAR=value`` prefix on the task instead (Slurm ``srun(1)`` "--export").
``ssh``
    No MPI: the same binary is started on every selected host through that host's own session, with
    ``env NCCL_…=…`` and ``-g <ranks_per_host>`` (one process driving the host's GPUs). On a real cluster
    each process forms its own communicator, so this measures every host *alone* (NVLink/PCIe, no
    fabric traffic): useful to find a bad host, not to judge the fabric; the report says so.

Host names on the command lines are the plan's host names; they must resolve on the head host.
"""

from __future__ import annotations

import re
import shlex
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from roce_tune.units import parse_bytes

Launcher = Literal["mpirun", "srun", "ssh"]
Collective = Literal["all_reduce", "all_gather", "alltoall", "sendrecv"]
COLLECTIVES: tuple[str, ...] = ("all_reduce", "all_gather", "alltoall", "sendrecv")
LAUNCHERS: tuple[str, ...] = ("mpirun", "srun", "ssh")

__all__ = [
    "COLLECTIVES",
    "LAUNCHERS",
    "Collective",
    "LaunchCommand",
    "LaunchSpec",
    "Launcher",
    "build_launch",
    "nccl_args",
    "parse_nccl_size",
    "size_arg",
]


def parse_nccl_size(value: str | int) -> int:
    """A message size as nccl-tests reads it: ``K``/``M``/``G`` suffixes are powers of 1024
    (nccl-tests ``src/common.cu`` ``parsesize``); other spellings (``1MiB``, ``150KB``) go through
    :func:`roce_tune.units.parse_bytes`.

    >>> parse_nccl_size("8G"), parse_nccl_size("1M"), parse_nccl_size(4096)
    (8589934592, 1048576, 4096)

    Raises:
        ValueError: not a size.
    """
    if isinstance(value, str):
        m = re.fullmatch(r"\s*(\d+)\s*([kKmMgG])\s*", value)
        if m:
            # int ** int is typed Any (a negative exponent gives a float); the exponent here is 0..2
            size_bytes: int = int(m.group(1)) * 1024 ** "kmg".index(m.group(2).lower()) * 1024
            return size_bytes
    return parse_bytes(value)


def size_arg(value: str | int) -> str:
    """Bytes in nccl-tests' own spelling: ``1048576`` → ``1M``, ``8589934592`` → ``8G``, else plain.

    Raises:
        ValueError: not a byte size (see :func:`parse_nccl_size`).
    """
    n = parse_nccl_size(value)
    for suffix, scale in (("G", 1 << 30), ("M", 1 << 20), ("K", 1 << 10)):
        if n >= scale and n % scale == 0:
            return f"{n // scale}{suffix}"
    return str(n)


class LaunchSpec(BaseModel):
    """What to run.

    Attributes:
        launcher: ``mpirun``, ``srun`` or ``ssh`` (module docstring).
        collective: nccl-tests binary ``<collective>_perf``.
        hosts: plan host names taking part, in rank order; ``head`` runs mpirun/srun (default hosts[0]).
        ranks_per_host: ranks (one GPU each) per host for mpirun/srun; GPUs per process for ``ssh``.
        env: NCCL environment (the plan's ``nccl_env``), exported to every rank.
        min_bytes / max_bytes: message-size range (bytes or ``1M``-style); step_factor: ``-f``.
        iters / warmup: ``-n`` / ``-w``; check: ``-c`` (1 = validate results).
        binary_dir: where the nccl-tests binaries are (``…/nccl-tests/build``); None = on PATH.
        launcher_args: extra arguments for mpirun/srun (e.g. ``--mca pml ucx``).
    """

    model_config = ConfigDict(frozen=True)

    launcher: Launcher = "mpirun"
    collective: Collective = "all_reduce"
    hosts: list[str] = Field(min_length=1)
    head: str | None = None
    ranks_per_host: int = Field(default=1, ge=1, le=64)
    env: dict[str, str] = Field(default_factory=dict)
    min_bytes: str | int = "1M"
    max_bytes: str | int = "8G"
    step_factor: int = Field(default=2, ge=2)
    iters: int = Field(default=20, ge=1)
    warmup: int = Field(default=5, ge=0)
    check: int = Field(default=1, ge=0, le=1)
    binary_dir: str | None = None
    launcher_args: list[str] = Field(default_factory=list)

    @property
    def head_host(self) -> str:
        """Where mpirun/srun runs."""
        return self.head or self.hosts[0]

    @property
    def binary(self) -> str:
        """Path (or name) of the nccl-tests binary."""
        name = f"{self.collective}_perf"
        return f"{self.binary_dir.rstrip('/')}/{name}" if self.binary_dir else name


class LaunchCommand(BaseModel):
    """A built command: ``commands`` maps the host that runs it to the shell line."""

    model_config = ConfigDict(frozen=True)

    launcher: Launcher
    commands: dict[str, str]
    nranks: int

    def describe(self) -> str:
        """One ``host$ command`` line per host (what the report and the console print)."""
        return "\n".join(f"{host}$ {cmd}" for host, cmd in self.commands.items())


def nccl_args(spec: LaunchSpec, gpus_per_process: int) -> list[str]:
    """nccl-tests arguments: ``-b -e -f -g -n -w -c`` (nccl-tests README "Arguments").

    Raises:
        ValueError: min_bytes > max_bytes or an unreadable size.
    """
    lo, hi = parse_nccl_size(spec.min_bytes), parse_nccl_size(spec.max_bytes)
    if lo > hi:
        raise ValueError(f"min_bytes {spec.min_bytes} is above max_bytes {spec.max_bytes}")
    return ["-b", size_arg(lo), "-e", size_arg(hi), "-f", str(spec.step_factor), "-g", str(gpus_per_process),
            "-n", str(spec.iters), "-w", str(spec.warmup), "-c", str(spec.check)]


def _join(argv: list[str]) -> str:
    return " ".join(shlex.quote(a) for a in argv)


def _check_names(spec: LaunchSpec) -> None:
    """Raise ValueError for a host name or environment variable name a shell or launcher would split."""
    for h in spec.hosts:
        if not h or any(c in h for c in " ,:;'\"$`"):
            raise ValueError(f"host name {h!r} cannot be put on an mpirun/srun command line")
    for var in spec.env:
        if not var.replace("_", "").isalnum():
            raise ValueError(f"environment variable name {var!r} is not valid")


def _mpirun(spec: LaunchSpec, env: dict[str, str]) -> LaunchCommand:
    """One mpirun line on the head host: ``ranks_per_host`` ranks per host, env exported with ``-x``."""
    n_hosts, k = len(spec.hosts), spec.ranks_per_host
    argv = ["mpirun", "-np", str(n_hosts * k), "-H", ",".join(f"{h}:{k}" for h in spec.hosts),
            "--map-by", f"ppr:{k}:node", "--bind-to", "none"]
    for name, value in env.items():
        argv += ["-x", f"{name}={value}"]
    argv += list(spec.launcher_args) + [spec.binary] + nccl_args(spec, 1)
    return LaunchCommand(launcher="mpirun", commands={spec.head_host: _join(argv)}, nranks=n_hosts * k)


def _srun(spec: LaunchSpec, env: dict[str, str]) -> LaunchCommand:
    """One srun line on the head host; values with a comma (which ``--export`` would split) go through
    ``env`` instead."""
    n_hosts, k = len(spec.hosts), spec.ranks_per_host
    plain = {n: v for n, v in env.items() if "," not in v}
    comma = {n: v for n, v in env.items() if "," in v}
    argv = ["srun", f"--nodes={n_hosts}", f"--ntasks-per-node={k}", f"--nodelist={','.join(spec.hosts)}",
            "--mpi=pmix", "--export=" + ",".join(["ALL"] + [f"{n}={v}" for n, v in plain.items()])]
    argv += list(spec.launcher_args)
    if comma:
        argv += ["env"] + [f"{n}={v}" for n, v in comma.items()]
    argv += [spec.binary] + nccl_args(spec, 1)
    return LaunchCommand(launcher="srun", commands={spec.head_host: _join(argv)}, nranks=n_hosts * k)


def _ssh(spec: LaunchSpec, env: dict[str, str]) -> LaunchCommand:
    """The same single-host line for every host (each runs alone with ``ranks_per_host`` GPUs)."""
    argv = (["env"] + [f"{n}={v}" for n, v in env.items()] if env else []) + [spec.binary] + \
        nccl_args(spec, spec.ranks_per_host)
    line = _join(argv)
    return LaunchCommand(launcher="ssh", commands={h: line for h in spec.hosts}, nranks=spec.ranks_per_host)


_LAUNCHERS = {"mpirun": _mpirun, "srun": _srun}


def build_launch(spec: LaunchSpec) -> LaunchCommand:
    """The command line(s) for ``spec`` (see the module docstring for each launcher).

    Raises:
        ValueError: bad sizes, or a host name / env name a shell would split.
    """
    _check_names(spec)
    env = dict(sorted(spec.env.items()))
    return _LAUNCHERS.get(spec.launcher, _ssh)(spec, env)
