"""Entry point of the verify stubs on the emulated hosts: ``python stub_main.py TOOL ARGS...``.

Tools: ``all_reduce_perf``, ``all_gather_perf``, ``alltoall_perf``, ``sendrecv_perf`` (run alone:
this host's GPUs only), ``mpirun`` and ``srun`` (one job across the hosts they name, rank 0's output),
and ``ibv_devinfo`` (shadows the host emulator's: RoCE ``active_mtu`` follows the netdev MTU minus
96 B as in the kernel's ``iboe_get_mtu``). Stdlib only.
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from fabric import Job, run_job  # type: ignore[import-not-found]

COLLECTIVES = ("all_reduce", "all_gather", "alltoall", "sendrecv")


def _size(tok: str) -> int:
    m = re.fullmatch(r"(\d+)([kKmMgG]?)", tok)
    if not m:
        raise SystemExit(f"invalid size {tok}")
    return int(m.group(1)) * (1024 ** ("_kmg".index(m.group(2).lower())) if m.group(2) else 1)


def _nccl_job(program: str, args: list[str], hosts: list[str], ranks: int, env: dict[str, str]) -> Job:
    coll = Path(program).name.removesuffix("_perf")
    if coll not in COLLECTIVES:
        raise SystemExit(f"{program}: command not found")
    job = Job(collective=coll, hosts=hosts, ranks_per_host=ranks, env=env)
    it = iter(args)
    for a in it:
        val = next(it, "")
        if a in ("-b", "--minbytes"):
            job.min_bytes = _size(val)
        elif a in ("-e", "--maxbytes"):
            job.max_bytes = _size(val)
        elif a in ("-f", "--stepfactor"):
            job.factor = int(val)
        elif a in ("-g", "--ngpus"):
            job.gpus = int(val)
        elif a in ("-n", "--iters"):
            job.iters = int(val)
        elif a in ("-w", "--warmup_iters"):
            job.warmup = int(val)
        elif a in ("-c", "--check"):
            job.check = int(val)
    return job


def _nccl_env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k.startswith("NCCL_")}


def nccl_alone(tool: str, args: list[str]) -> int:
    host = os.environ.get("ROCE_TUNE_EMU_HOST", "localhost")
    sys.stdout.write(run_job(_nccl_job(tool, args, [host], 1, _nccl_env())))
    return 0


def _program_split(args: list[str], takes_value: set[str]) -> tuple[list[str], list[str]]:
    i = 0
    while i < len(args):
        a = args[i]
        if not a.startswith("-"):
            return args[:i], args[i:]
        if a in takes_value:
            i += 2
        else:
            i += 1
    return args, []


def mpirun(args: list[str]) -> int:
    with_value = {"-np", "-n", "-H", "--host", "--map-by", "--bind-to", "-x", "--hostfile"}
    opts, rest = _program_split(args, with_value | {"--mca"})
    hosts: list[str] = []
    ranks, np_total = 1, None
    env = _nccl_env()
    i = 0
    while i < len(opts):
        a = opts[i]
        v = opts[i + 1] if i + 1 < len(opts) else ""
        if a in ("-H", "--host"):
            for item in v.split(","):
                name, _, k = item.partition(":")
                hosts.append(name)
                ranks = int(k) if k else ranks
        elif a in ("-np", "-n"):
            np_total = int(v)
        elif a == "-x":
            name, eq, value = v.partition("=")
            if eq:
                env[name] = value
            elif name in os.environ:
                env[name] = os.environ[name]
        i += 3 if a == "--mca" else 2 if a in with_value else 1
    if not rest:
        print("mpirun: no executable given", file=sys.stderr)
        return 1
    if np_total and hosts and np_total != len(hosts) * ranks:
        ranks = max(1, np_total // len(hosts))
    here = os.environ.get("ROCE_TUNE_EMU_HOST", "")
    sys.stdout.write(run_job(_nccl_job(rest[0], rest[1:], hosts or [here], ranks, env)))
    return 0


def srun(args: list[str]) -> int:
    opts, rest = _program_split(args, {"-w", "-N", "-n"})
    hosts: list[str] = []
    ranks = 1
    env = _nccl_env()
    for i, a in enumerate(opts):
        key, _, v = a.partition("=")
        if key in ("--nodelist",) or (a == "-w" and i + 1 < len(opts)):
            hosts = (v if key == "--nodelist" else opts[i + 1]).split(",")
        elif key == "--ntasks-per-node":
            ranks = int(v)
        elif key == "--export":
            for item in v.split(","):
                name, eq, value = item.partition("=")
                if eq:
                    env[name] = value
    if rest and rest[0] == "env":
        rest = rest[1:]
        while rest and "=" in rest[0]:
            name, _, value = rest.pop(0).partition("=")
            env[name] = value
    if not rest:
        print("srun: fatal: No command given to execute.", file=sys.stderr)
        return 1
    sys.stdout.write(run_job(_nccl_job(rest[0], rest[1:], hosts, ranks, env)))
    return 0


def ibv_devinfo(args: list[str]) -> int:
    root = Path(os.environ.get("ROCE_TUNE_SYSROOT", "/nonexistent"))
    ib_dir, net_dir = root / "sys/class/infiniband", root / "sys/class/net"
    devs = sorted(p.name for p in ib_dir.iterdir()) if ib_dir.is_dir() else []
    nets = sorted(p for p in net_dir.iterdir() if (p / "mtu").is_file()) if net_dir.is_dir() else []
    wanted = [args[args.index("-d") + 1]] if "-d" in args else devs
    for dev in wanted:
        base = ib_dir / dev
        if not base.is_dir():
            print(f"IB device '{dev}' wasn't found", file=sys.stderr)
            return 255
        idx = devs.index(dev)
        net = nets[idx] if idx < len(nets) else (nets[0] if nets else None)
        mtu = int((net / "mtu").read_text().strip()) if net else 1500
        active = max([x for x in (256, 512, 1024, 2048, 4096) if x <= mtu - 96] or [256])
        code = {256: 1, 512: 2, 1024: 3, 2048: 4, 4096: 5}[active]
        guid = (base / "node_guid").read_text().strip() if (base / "node_guid").is_file() else ""
        print(f"hca_id:\t{dev}\n\ttransport:\t\t\tInfiniBand (0)\n\tfw_ver:\t\t\t\t28.41.1000\n"
              f"\tnode_guid:\t\t\t{guid}\n\tvendor_id:\t\t\t0x02c9\n\tphys_port_cnt:\t\t\t1\n\t\tport:\t1\n"
              "\t\t\tstate:\t\t\tPORT_ACTIVE (4)\n\t\t\tmax_mtu:\t\t4096 (5)\n"
              f"\t\t\tactive_mtu:\t\t{active} ({code})\n\t\t\tlink_layer:\t\tEthernet\n")
    return 0


def ip(args: list[str]) -> int:
    """The host emulator's ``ip`` plus ``-o`` (one record per line, continuation lines joined with ``\\``)."""
    import contextlib
    import io

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    import host_stubs  # type: ignore[import-not-found]  # tests/emulators/host_stubs.py

    oneline = "-o" in args or "-oneline" in args
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        rc = host_stubs.ip([a for a in args if a not in ("-o", "-oneline")])
    text = buf.getvalue()
    if oneline:
        records: list[str] = []
        for line in text.splitlines():
            if re.match(r"^\d+:", line) or not records:
                records.append(line)
            else:
                records[-1] += " \\" + line
        text = "".join(r + "\n" for r in records)
    sys.stdout.write(text)
    return rc


def main(argv: list[str]) -> int:
    tool, args = Path(argv[0]).name, argv[1:]
    if tool == "ip":
        return ip(args)
    if tool == "mpirun":
        return mpirun(args)
    if tool == "srun":
        return srun(args)
    if tool == "ibv_devinfo":
        return ibv_devinfo(args)
    return nccl_alone(tool, args)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
