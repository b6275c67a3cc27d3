"""Time `roce-tune audit --from` over captures of 512 hosts and 64 switches (target ≤ 10 s on one core).

Each host file holds what the README asks users to capture: ethtool -S (full mlx5 set, ~200 counters),
RDMA hw_counters (grep -H), show_gids, ibv_devinfo -v, ip -d link, mlnx_qos and the job's NCCL env; each
switch file holds SONiC show pfc counters, show queue counters and show pfcwd stats for 64 ports.
Run: ``python benchmarks/bench_audit.py [--hosts 512 --switches 64]``; prints the figures.

``--live [--devices 50 --concurrency 10]`` times ``audit --live``'s SSH reads instead, against loopback
emulated switches (tests/emulators, in a separate process so their CPU is not the client's; SONiC and EOS
alternating; netmiko's fast preset, as the emulators answer at once; run from the repository root). Parallel
efficiency = T(1 device) x N / (concurrency x T(N devices)), T(1 device) the mean of 4 single-device runs
(2 SONiC, 2 EOS: the fleet's mix) after a discarded warm-up run:
1.0 when N devices at concurrency C take N/C single-device times (target >= 0.8 at N=50, C=10).
"""

from __future__ import annotations

import argparse
import resource
import tempfile
import time
from pathlib import Path

from roce_tune.audit import audit_dir, format_report

HW = ("duplicate_request", "implied_nak_seq_err", "lifespan", "local_ack_timeout_err", "np_cnp_sent",
      "np_ecn_marked_roce_packets", "out_of_buffer", "out_of_sequence", "packet_seq_err", "req_cqe_error",
      "req_cqe_flush_error", "req_remote_access_errors", "req_remote_invalid_request", "resp_cqe_error",
      "resp_cqe_flush_error", "resp_local_length_error", "resp_remote_access_errors", "rnr_nak_retry_err",
      "roce_adp_retrans", "roce_slow_restart", "rp_cnp_handled", "rp_cnp_ignored", "rx_atomic_requests",
      "rx_icrc_encapsulated", "rx_read_requests", "rx_write_requests")


def host_capture(i: int) -> str:
    h = f"gpu{i:03d}"
    nic = "ens1f0np0"
    lines = [f"root@{h}:~# ethtool -S {nic}", "NIC statistics:"]
    for k in range(60):
        lines.append(f"     rx_queue_{k}_packets: {i * 1000 + k}")
    for p in range(8):
        for what in ("bytes", "packets", "pause", "pause_duration", "pause_transition", "discards"):
            for d in ("rx", "tx"):
                v = (9_000_000 + i) if (p == 3 and what == "packets") else (300 if what == "packets" else 0)
                lines.append(f"     {d}_prio{p}_{what}: {v}")
    lines.append("     rx_discards_phy: 0")
    lines.append(f"root@{h}:~# grep -H '' /sys/class/infiniband/mlx5_0/ports/1/hw_counters/*")
    for k in HW:
        v = 5000 if k in ("np_cnp_sent", "rp_cnp_handled", "np_ecn_marked_roce_packets") else 0
        lines.append(f"/sys/class/infiniband/mlx5_0/ports/1/hw_counters/{k}:{v}")
    o = i % 250 + 1
    lines += [f"root@{h}:~# show_gids mlx5_0",
              "DEV     PORT    INDEX   GID                                     IPv4            VER     DEV",
              "---     ----    -----   ---                                     ------------    ---     ---",
              f"mlx5_0  1       0       fe80:0000:0000:0000:0ac0:ebff:fe3a:{i:04x}                 v1      "
              f"{nic}",
              f"mlx5_0  1       1       fe80:0000:0000:0000:0ac0:ebff:fe3a:{i:04x}                 v2      "
              f"{nic}",
              f"mlx5_0  1       2       0000:0000:0000:0000:0000:ffff:c000:02{o:02x} 192.0.2.{o}      "
              f"v1      {nic}",
              f"mlx5_0  1       3       0000:0000:0000:0000:0000:ffff:c000:02{o:02x} 192.0.2.{o}      "
              f"v2      {nic}",
              "n_gids_found=4",
              f"root@{h}:~# ibv_devinfo -v -d mlx5_0", "hca_id:\tmlx5_0", "\tfw_ver:\t\t\t\t28.39.1002",
              "\t\tport:\t1", "\t\t\tstate:\t\t\tPORT_ACTIVE (4)", "\t\t\tmax_mtu:\t\t4096 (5)",
              "\t\t\tactive_mtu:\t\t4096 (5)", "\t\t\tlink_layer:\t\tEthernet",
              f"root@{h}:~# ip -d link show {nic}",
              (f"4: {nic}: <BROADCAST,MULTICAST,UP,LOWER_UP> mtu 9000 qdisc mq state UP mode DEFAULT group "
              "default qlen 1000"),
              "    link/ether 08:c0:eb:3a:1b:2c brd ff:ff:ff:ff:ff:ff promiscuity 0 minmtu 68 maxmtu 9978",
              f"root@{h}:~# mlnx_qos -i {nic}", "Priority trust state: dscp", "PFC configuration:",
              "        priority    0   1   2   3   4   5   6   7",
              "        enabled     0   0   0   1   0   0   0   0",
              f"root@{h}:~# env | grep NCCL", "NCCL_IB_HCA==mlx5_0:1", "NCCL_IB_TC=106",
              "NCCL_IB_GID_INDEX=3"]
    return "\n".join(lines) + "\n"


def switch_capture(s: int) -> str:
    ports = [f"Ethernet{p * 8}" for p in range(64)]
    pfc = "  Port {d}    PFC0    PFC1    PFC2    PFC3    PFC4    PFC5    PFC6    PFC7\n" \
          "-----------  ------  ------  ------  ------  ------  ------  ------  ------\n"
    out = [f"admin@leaf{s:02d}:~$ show pfc counters"]
    for d in ("Rx", "Tx"):
        out.append(pfc.format(d=d).rstrip("\n"))
        out += [f"{p:>11}       0       0       0  {12 + s:>6}       0       0       0       0"
                for p in ports]
        out.append("")
    out += [f"admin@leaf{s:02d}:~$ show queue counters",
            "       Port    TxQ    Counter/pkts    Counter/bytes    Drop/pkts     Drop/bytes",
            "-----------  -----  --------------  ---------------  -----------  -------------"]
    for p in ports:
        for q in range(8):
            pk = 9_000_000 if q == 3 else 1000
            out.append(f"{p:>11}    UC{q}  {pk:>14,}  {pk * 1000:>15,}            0              0")
    out += [f"admin@leaf{s:02d}:~$ show pfcwd stats",
            ("      QUEUE       STATUS    STORM DETECTED/RESTORED    TX OK/DROP    RX OK/DROP    TX LAST "
            "OK/DROP    RX LAST OK/DROP"),
            ("-----------  -----------  -------------------------  ------------  ------------  "
            "-----------------  -----------------")]
    out += [f"{p}:3  operational                        0/0           0/0           0/0                0/0"
            "                0/0" for p in ports]
    return "\n".join(out) + "\n"


def _fleet(n: int, workdir: Path):  # type: ignore[no-untyped-def]
    """Start ``n`` emulated switches in a child process; returns (process, [(name, platform, port)])."""
    import json
    import os
    import subprocess
    import sys

    specs = [{"platform": "sonic" if i % 2 == 0 else "eos", "name": f"sw{i:02d}", "username": "bench",
              "password": "bench-pw"} for i in range(n)]
    fleet = workdir / "fleet.json"
    fleet.write_text(json.dumps(specs))
    repo = Path(__file__).resolve().parents[1]
    env = {**os.environ, "PYTHONPATH": str(repo)}
    proc = subprocess.Popen([sys.executable, "-m", "tests.emulators", "--fleet", str(fleet)], cwd=repo,
                            env=env,
                            stdout=subprocess.PIPE, text=True)
    devices = []
    assert proc.stdout is not None
    while len(devices) < n:
        line = proc.stdout.readline()
        if not line:
            raise RuntimeError("the emulator fleet exited before listening")
        words = line.split()
        if words[:1] == ["listening"] and len(words) == 4:
            devices.append((words[2], words[3], int(words[1].rsplit(":", 1)[1])))
    return proc, devices


def _plan(devices: list[tuple[str, str, int]]):  # type: ignore[no-untyped-def]
    """The part of a plan ``read_live`` reads: switches with a management address and lossless ports."""
    from types import SimpleNamespace

    creds = {"username_env": "BENCH_USER", "password_env": "BENCH_PASSWORD", "key_file_env": None}
    ports = {"sonic": ["Ethernet0", "Ethernet4"], "eos": ["Ethernet1", "Ethernet2"]}
    return SimpleNamespace(hosts=[], switches=[
        SimpleNamespace(name=name, platform=plat, role="leaf", mgmt_host="127.0.0.1", mgmt_port=port,
                        credentials=creds, ports=[SimpleNamespace(name=p,
                                                                  lossless=True) for p in ports[plat]])
        for name, plat, port in devices])


def bench_live(n: int, concurrency: int) -> None:
    """Time ``audit --live`` reads of 1 and of ``n`` emulated switches; print the parallel efficiency."""
    import os
    import signal
    import statistics

    from roce_tune.audit.live import LiveOptions, read_live
    from roce_tune.deploy.runner import ApplyOptions, SessionTiming

    os.environ.update(BENCH_USER="bench", BENCH_PASSWORD="bench-pw")
    opts = ApplyOptions(insecure_skip_host_key_check=True, timing=SessionTiming(fast_cli=True,
                                                                                global_delay_factor=0.1))
    with tempfile.TemporaryDirectory() as tmp:
        proc, devices = _fleet(n, Path(tmp))
        try:
            one = []
            # warm-up (imports, first
            # SSH)
            read_live(_plan(devices[4:5]), LiveOptions(concurrency=1, apply=opts))
            for i in range(4):
                t0 = time.perf_counter()
                _, devs, _ = read_live(_plan(devices[i:i + 1]), LiveOptions(concurrency=1, apply=opts))
                one.append(time.perf_counter() - t0)
                assert all(d.error is None for d in devs), [d.error for d in devs]
            t1 = statistics.mean(one)
            t0 = time.perf_counter()
            blocks, devs, _ = read_live(_plan(devices), LiveOptions(concurrency=concurrency, apply=opts))
            tn = time.perf_counter() - t0
        finally:
            proc.send_signal(signal.SIGTERM)
            proc.wait(timeout=30)
    failed = [d for d in devs if d.error]
    eff = t1 * n / (concurrency * tn)
    print(f"audit --live: {n} emulated switches (SONiC/EOS), {len(blocks)} command outputs, {len(failed)} "
          "failed")
    print(f"T(1 device) = {t1:.2f} s (mean of {', '.join(f'{x:.2f}' for x in one)}: 2 SONiC, 2 EOS alone); "
          f"T({n} devices, concurrency {concurrency}) = {tn:.2f} s; per device "
          f"{statistics.mean(d.seconds for d in devs):.2f} s")
    print(f"parallel efficiency = T1 x {n} / ({concurrency} x T{n}) = {eff:.2f} (target >= 0.8)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--hosts", type=int, default=512)
    ap.add_argument("--switches", type=int, default=64)
    ap.add_argument("--live", action="store_true", help="time audit --live against emulated switches instead")
    ap.add_argument("--devices", type=int, default=50)
    ap.add_argument("--concurrency", type=int, default=10)
    args = ap.parse_args()
    if args.live:
        bench_live(args.devices, args.concurrency)
        return
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        for i in range(args.hosts):
            (root / f"gpu{i:03d}.txt").write_text(host_capture(i))
        for s in range(args.switches):
            (root / f"leaf{s:02d}.txt").write_text(switch_capture(s))
        size = sum(p.stat().st_size for p in root.iterdir())
        lines = sum(p.read_text().count("\n") for p in root.iterdir())
        t0, c0 = time.perf_counter(), time.process_time()
        result = audit_dir(root)
        report = format_report(result, "json")
        wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"captures: {args.hosts} hosts + {args.switches} switches, {lines:,} lines, {size / 1e6:.1f} MB")
    print(f"audit --from: wall {wall:.2f} s, cpu {cpu:.2f} s (target <= 10 s on one core), peak RSS "
          f"{rss_mb:.0f} MB")
    print(f"read {len(result.data.blocks)} blocks; {len(result.findings)} findings, "
          f"{len(result.not_checked)} not checked, {len(result.data.unparsed)} not understood; json report "
          f"{len(report) / 1e3:.0f} kB")


if __name__ == "__main__":
    main()
