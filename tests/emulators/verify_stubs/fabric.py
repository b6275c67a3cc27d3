"""Run one emulated nccl-tests job: read the live settings of every host (its fake sysfs and the
emulator's ``mlnx_qos`` state) and of the switch (state file written by the SONiC model device),
apply :mod:`model`, add the run's counter deltas to hosts and switch, and print nccl-tests output.

Layout of ``$ROCE_EMU_FABRIC`` (written by :mod:`tests.emulators.verify_stubs.fleet`)::

    fabric.json            {"model": {...}, "hosts": {name: {sysroot, netdev, rdma, switch, port, slow,
                            pfc_storm}}}
    switch-<name>.json     per port: pfc_enable, dscp_to_tc, tc_to_pg, queues{q: ecn,kmin,kmax,pmax},
                            pg_buffers / queue_buffers{id: pool_bytes,dynamic_th | static_bytes}
    counters-<name>.json   per port switch counter totals (names of roce_tune.verify.counters)
    runs.log               one JSON line per job (settings and outcome), for tests
"""

from __future__ import annotations

import json
import os
import random
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

import model as m  # type: ignore[import-not-found]  # the stub directory is on sys.path

DEFAULT_DSCP2PRIO = [d // 8 for d in range(64)]
#: nccl-tests table header (current layout, with redop/root/#wrong)
HEADER = (
    "#                                                              out-of-place                       "
    "in-place          ",
    "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   "
    "busbw #wrong",
    "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  "
    "(GB/s)       ",
)


@dataclass
class Job:
    """One nccl-tests invocation as the launcher saw it."""

    collective: str
    hosts: list[str]
    ranks_per_host: int
    env: dict[str, str]
    min_bytes: int = 1 << 20
    max_bytes: int = 1 << 30
    factor: int = 2
    gpus: int = 1
    iters: int = 20
    warmup: int = 5
    check: int = 1
    notes: list[str] = field(default_factory=list)


def _read(path: Path, default: str = "") -> str:
    return path.read_text().strip() if path.is_file() else default


class HostView:
    """The live settings of one emulated host (paths under its sysroot)."""

    def __init__(self, name: str, info: dict):
        self.name, self.info = name, info
        self.root = Path(info["sysroot"])
        self.netdev, self.rdma = info["netdev"], info["rdma"]
        net = self.root / "sys/class/net" / self.netdev
        self.speed_gbps = int(_read(net / "speed", "100000")) / 1000
        self.mtu = int(_read(net / "mtu", "1500"))
        qos = m.read_json(self.root / "var/lib/roce-emu/mlnx_qos" / f"{self.netdev}.json", {})
        self.trust = qos.get("trust", "pcp")
        self.pfc = qos.get("pfc", [0] * 8)
        self.dscp2prio = qos.get("dscp2prio", DEFAULT_DSCP2PRIO)
        tc = _read(self.root / "sys/class/infiniband" / self.rdma
                   / "tc/1/traffic_class").replace("Global tclass=", "")
        self.traffic_class = int(tc) if tc.isdigit() else 0
        self.rp = {p: _read(net / f"ecn/roce_rp/enable/{p}", "0") == "1" for p in range(8)}
        self.np = {p: _read(net / f"ecn/roce_np/enable/{p}", "0") == "1" for p in range(8)}
        self.ai = float(_read(net / "ecn/roce_rp/rpg_ai_rate", "5"))

    def prio_of(self, dscp: int) -> int:
        """802.1p priority the NIC uses for a DSCP (DSCP trust) — 0 for untagged PCP trust."""
        return int(self.dscp2prio[dscp]) if self.trust == "dscp" else 0

    def active_mtu(self) -> int:
        room = self.mtu - 96
        return max([x for x in m.MTU_FACTOR if x <= room] or [256])

    def bump(self, ethtool: dict[str, float], hw: dict[str, float]) -> None:
        """Add deltas to this host's ``ethtool -S`` state and hw_counters files."""
        m.zero_nic_counters(self.root, self.netdev, self.rdma)
        path = self.root / "var/lib/roce-emu/ethtool_stats" / f"{self.netdev}.json"
        stats = m.read_json(path, {})
        m.add_counts(stats, ethtool)
        m.write_json(path, stats)
        hwdir = self.root / "sys/class/infiniband" / self.rdma / "ports/1/hw_counters"
        for name, inc in hw.items():
            f = hwdir / name
            f.parent.mkdir(parents=True, exist_ok=True)
            f.write_text(f"{int(_read(f, '0') or 0) + round(inc)}\n")


def load_fabric() -> tuple[Path, dict]:
    """``$ROCE_EMU_FABRIC`` and its fabric.json. Raises KeyError when the variable is unset."""
    fdir = Path(os.environ["ROCE_EMU_FABRIC"])
    return fdir, m.read_json(fdir / "fabric.json", {"hosts": {}, "model": {}})


def _link(s: HostView, r: HostView, tos: int, sw: dict, fab: dict) -> tuple[m.LinkSettings, dict]:
    ports = sw.get("ports", {})
    ps, pr = ports.get(s.info["port"], {}), ports.get(r.info["port"], {})
    dscp = tos >> 2
    prio_tx, prio_rx = s.prio_of(dscp), r.prio_of(dscp)
    tc = int(ps.get("dscp_to_tc", {}).get(str(dscp), ps.get("dscp_to_tc", {}).get(dscp, 0)))
    lossless = (tc == prio_tx and bool(s.pfc[prio_tx]) and bool(r.pfc[prio_rx]) and tc in ps.get("pfc_enable",
                                                                                                 [])
                and tc in pr.get("pfc_enable", []))
    q = pr.get("queues", {}).get(str(tc), {})
    slow = float(fab["hosts"][s.name].get("slow", 1.0)) * float(fab["hosts"][r.name].get("slow", 1.0))
    if fab["hosts"][r.name].get("pfc_storm"):
        slow *= 0.5  # the receiver keeps pausing its switch port
    ls = m.LinkSettings(
        speed_gbps=min(s.speed_gbps, r.speed_gbps), prio_tx=prio_tx, prio_rx=prio_rx, lossless=lossless,
        ecn_on=bool(q.get("ecn")), ect=(tos & 3) != 0, kmin=float(q.get("kmin", 0)),
        kmax=float(q.get("kmax", 0)),
        pmax_percent=float(q.get("pmax", 0)), rp_enabled=s.rp[prio_tx], np_enabled=r.np[prio_rx],
        ai_mbps=s.ai,
        mtu=min(s.active_mtu(), r.active_mtu()), slow=slow)
    return ls, {"tc": tc, "switch_in": s.info["port"], "switch_out": r.info["port"]}


def _onset(sw: dict, where: dict) -> float | None:
    """Egress queue at PFC onset on this link's path from the switch's buffers
    (:func:`model.pfc_onset_bytes`): the ingress port's PG for the TC (TC→PG map, identity when none), the
    egress port's queue, the job's fan-in."""
    ports = sw.get("ports", {})
    pin, pout = ports.get(where["switch_in"], {}), ports.get(where["switch_out"], {})
    tc = where["tc"]
    pg = {int(k): int(v) for k, v in pin.get("tc_to_pg", {}).items()}.get(tc, tc)
    return m.pfc_onset_bytes(pin.get("pg_buffers", {}).get(str(pg)),
                             pout.get("queue_buffers", {}).get(str(tc)),
                             where["fan_in"])


def run_job(job: Job) -> str:
    """Simulate ``job`` on the fabric, update every counter, return nccl-tests stdout."""
    fdir, fab = load_fabric()
    params = fab.get("model", {})
    views = [HostView(h, fab["hosts"][h]) for h in job.hosts if h in fab["hosts"]]
    missing = [h for h in job.hosts if h not in fab["hosts"]]
    if missing:
        return f"ssh: Could not resolve hostname {missing[0]}: Name or service not known\n"
    nranks = len(views) * job.ranks_per_host if len(views) > 1 else job.gpus
    sizes = m.message_sizes(job.min_bytes, job.max_bytes, job.factor)
    unit = 4 * (nranks if job.collective in ("all_gather", "alltoall") else 1)
    sizes = [s // unit * unit for s in sizes if s >= unit]
    env_tc = job.env.get("NCCL_IB_TC", "")
    with m.locked(fdir):
        links = []
        if len(views) > 1:
            swname = views[0].info["switch"]
            sw = m.read_json(fdir / f"switch-{swname}.json", {"ports": {}})
            pending = []
            for i, s in enumerate(views):
                r = views[(i + 1) % len(views)]
                tos = int(env_tc) if env_tc.lstrip("-").isdigit() and int(env_tc) >= 0 else s.traffic_class
                pending.append((s, r, *_link(s, r, tos, sw, fab)))
            # fan-in of the job on each egress queue: the ingress ports (PGs) that feed it
            feeders: dict[tuple[str, int], set[str]] = {}
            for _, _, _, where in pending:
                feeders.setdefault((where["switch_out"], where["tc"]), set()).add(where["switch_in"])
            for s, r, ls, where in pending:
                where["fan_in"] = len(feeders[(where["switch_out"], where["tc"])])
                ls = replace(ls, pfc_onset_bytes=_onset(sw, where))
                links.append((s, r, ls, m.link_outcome(ls, params), where))
            peak = min(o.efficiency * ls.speed_gbps / 8 for _, _, ls, o, _ in links)
        else:
            peak = params.get("nvlink_gbytes", m.DEFAULTS["nvlink_gbytes"]) if nranks > 1 else 0.0
        busbw = m.busbw_curve(peak, sizes, params)
        factor = m.BUSBW_FACTOR[job.collective](nranks) if nranks > 1 else 1.0
        rows = []
        for size, bb in zip(sizes, busbw):
            algbw = bb / factor if factor else bb
            t = size / (algbw * 1e3) if algbw > 0 else 5.0 + size / 2e4
            rows.append((size, t, size / t / 1e3, bb))
        if links:
            _count(fdir, fab, job, rows, links, factor)
        with open(fdir / "runs.log", "a") as fh:
            fh.write(json.dumps({"job": asdict(job), "peak_gbytes": peak, "links": [
                {"from": s.name, "to": r.name, "settings": asdict(ls), "efficiency": o.efficiency,
                 "q_star": None if o.q_star == float("inf") else o.q_star, "pause_share": o.pause_share,
                 "mark_prob": o.mark_prob, "loss_rate": o.loss_rate, "pfc_onset_bytes": o.pfc_onset_bytes,
                 "fan_in": where["fan_in"], "notes": o.notes} for s, r, ls, o, where in links]}) + "\n")
    return _format(job, views, nranks, rows)


def _count(fdir: Path, fab: dict, job: Job, rows: list, links: list, factor: float) -> None:
    rounds = (job.iters + job.warmup) * 2
    busy_us = sum(t for _, t, _, _ in rows) * rounds
    swname = links[0][0].info["switch"]
    sw_path = fdir / f"counters-{swname}.json"
    swc = m.read_json(sw_path, {})
    host_inc: dict[str, tuple[dict, dict]] = {v.name: ({}, {}) for v, *_ in links}
    for s, r, ls, o, where in links:
        per_rank = factor if job.collective != "sendrecv" else 1.0
        nbytes = sum(size for size, *_ in rows) * per_rank * rounds
        pkts = nbytes / ls.mtu
        wire = nbytes + pkts * m.WIRE_OVERHEAD_BYTES
        se, sh = host_inc[s.name]
        re_, rh = host_inc[r.name]
        for d, key in ((se, f"tx_prio{ls.prio_tx}"), (re_, f"rx_prio{ls.prio_rx}")):
            d[f"{key}_packets"] = d.get(f"{key}_packets", 0) + pkts
            d[f"{key}_bytes"] = d.get(f"{key}_bytes", 0) + wire
        for d in (se, re_):
            d["tx_prio0_packets"] = d.get("tx_prio0_packets", 0) + 200
            d["rx_prio0_packets"] = d.get("rx_prio0_packets", 0) + 200
        tc, pin, pout = where["tc"], where["switch_in"], where["switch_out"]
        m.add_counts(swc.setdefault(pout, {}), {f"q{tc}_tx_pkts": pkts, f"q{tc}_tx_bytes": wire})
        if o.pause_share and ls.lossless:
            frames = o.pause_share * busy_us / 40.0
            m.add_counts(swc.setdefault(pin, {}), {f"pfc_tx_prio{tc}": frames})
            se[f"rx_prio{ls.prio_tx}_pause"] = se.get(f"rx_prio{ls.prio_tx}_pause", 0) + frames
            key = f"rx_prio{ls.prio_tx}_pause_duration"
            se[key] = se.get(key, 0) + o.pause_share * busy_us
        marks = pkts * o.mark_prob
        if marks:
            m.add_counts(swc.setdefault(pout, {}), {f"q{tc}_ecn_marked_pkts": marks})
            rh["np_ecn_marked_roce_packets"] = rh.get("np_ecn_marked_roce_packets", 0) + marks
            if ls.np_enabled:
                cnps = 0.8 * marks
                rh["np_cnp_sent"] = rh.get("np_cnp_sent", 0) + cnps
                key = "rp_cnp_handled" if ls.rp_enabled else "rp_cnp_ignored"
                sh[key] = sh.get(key, 0) + cnps
        drops = pkts * o.loss_rate
        if drops >= 1:
            m.add_counts(swc.setdefault(pout, {}), {f"q{tc}_drop_pkts": drops})
            rh["out_of_sequence"] = rh.get("out_of_sequence", 0) + 4 * drops
            sh["packet_seq_err"] = sh.get("packet_seq_err", 0) + drops
            sh["local_ack_timeout_err"] = sh.get("local_ack_timeout_err", 0) + drops / 50
        if fab["hosts"][r.name].get("pfc_storm"):
            m.add_counts(swc.setdefault(pout, {}), {
                f"pfc_rx_prio{tc}": busy_us / 40.0, f"q{tc}_wd_storm_detected": 1,
                f"q{tc}_wd_storm_restored": 1,
                f"q{tc}_wd_tx_drop": pkts / 100})
    for v, *_ in links:
        eth, hw = host_inc[v.name]
        v.bump(eth, hw)
    m.write_json(sw_path, swc)


def _format(job: Job, views: list[HostView], nranks: int, rows: list) -> str:
    rnd = random.Random(hash((tuple(job.hosts), job.collective)) & 0xFFFF)
    name = f"{job.collective}_perf"
    hosts = [v.name for v in views]
    redop = "sum" if job.collective == "all_reduce" else "none"
    out = ["# nccl-tests version 2.13.11 nccl-headers=22304 nccl-library=22304",
           f"# Collective test starting: {name}",
           (f"# nThread 1 nGpus {job.gpus} minBytes {job.min_bytes} maxBytes {job.max_bytes} step: "
            f"{job.factor}(factor) warmup iters: {job.warmup} iters: {job.iters} agg iters: 1 validation: "
            f"{job.check} graph: 0"), "#", "# Using devices"]
    ranks = [(h, g) for h in hosts for g in range(job.ranks_per_host)] if len(hosts) > 1 else \
        [(hosts[0], g) for g in range(job.gpus)]
    pid0 = 40000 + rnd.randrange(20000)
    for rank, (h, g) in enumerate(ranks):
        pid = pid0 + (rank if len(hosts) == 1 else 7 * rank)
        out.append(f"#  Rank {rank:2d} Group  0 Pid {pid:6d} on {h:>10} device {g:2d} "
                   f"[0000:{0x18 + g:02x}:00] NVIDIA H100 80GB HBM3")
    h0 = hosts[0]
    for key in sorted(k for k in job.env if k.startswith("NCCL_")):
        out.append(f"{h0}:{pid0}:{pid0} [0] NCCL INFO {key} set by environment to {job.env[key]}")
    out.append(f"{h0}:{pid0}:{pid0} [0] NCCL INFO NCCL version 2.23.4+cuda12.6")
    out += ["#", HEADER[0], HEADER[1], HEADER[2]]
    total = 0.0
    for size, t, alg, bb in rows:
        count = size // 4 // (nranks if job.collective in ("all_gather", "alltoall") else 1)
        t2 = t * 1.002
        out.append(f"{size:12d}  {count:12d}     float  {redop:>6}      -1  {t:7.1f}  {alg:6.2f}  "
                   f"{bb:6.2f}      0  {t2:7.1f}  {size / t2 / 1e3:6.2f}  {bb / 1.002:6.2f}      0")
        total += bb + bb / 1.002
    out += ["# Out of bounds values : 0 OK", f"# Avg bus bandwidth    : {total / max(1, 2 * len(rows)):.4f} ",
            "#",
            f"# Collective test concluded: {name}", ""]
    return "\n".join(out)
