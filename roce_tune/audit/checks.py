"""RT4xx audit checks: pure functions over :class:`~roce_tune.audit.model.AuditData` and an
:class:`~roce_tune.audit.expect.Expect`.

Each check returns findings (rule, severity, device, port, message, fix, evidence = capture lines) and
"not checked" notes naming the command whose output it needed. A counter that was not captured is
never read as zero. Families: GID RT401–RT404, priority RT410–RT413, PFC RT420–RT425, ECN/DCQCN
RT430–RT433, MTU RT440–RT441, ECE RT450, load balance/topology RT460–RT463, nccl-tests RT470–RT472.

Thresholds [D] (chosen here; ratios so they hold for any capture length):
:data:`MIN_PACKETS` packets before a NIC's priority split is judged; :data:`ROCE_SHARE` share of a
direction that counts as "RoCE rides this priority"; :data:`LOSS_PER_MILLION` loss-recovery events per
million packets; :data:`OUTLIER_Z` modified z-score (Iglewicz & Hoaglin 1993: |M| > 3.5) for a slow host.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, cast

from roce_tune.audit.expect import Expect
from roce_tune.audit.model import AuditData, Ev, HostObs, NicObs, RdmaObs, Val
from roce_tune.findings import Severity
from roce_tune.verify.hostfacts import roce_active_mtu
from roce_tune.verify.nccl import NcclRun

__all__ = ["CHECKS", "AuditFinding", "NotChecked", "run_checks"]

MIN_PACKETS = 10_000
ROCE_SHARE = 0.9
LOSSY_QUEUE_SHARE = 0.10
DROP_SHARE = 0.001
LOSS_PER_MILLION = 1.0
LOSS_NO_RATE_ERROR = 10_000
OUTLIER_Z = 3.5
LOSS_COUNTERS = ("out_of_sequence", "packet_seq_err", "local_ack_timeout_err", "implied_nak_seq_err")


@dataclass(frozen=True)
class AuditFinding:
    """One audit finding; ``evidence`` are the capture lines it rests on."""

    rule: str
    severity: Severity
    device: str | None
    port: str | None
    message: str
    fix: str
    evidence: tuple[Ev, ...] = ()
    family: str = ""


@dataclass(frozen=True)
class NotChecked:
    """A check that could not run: ``needs`` names the command whose output was missing."""

    rule: str
    device: str | None
    needs: str


@dataclass
class Out:
    """Collector a check writes to."""

    family: str
    findings: list[AuditFinding] = field(default_factory=list)
    not_checked: list[NotChecked] = field(default_factory=list)

    def add(self, rule: str, sev: Severity, device: str | None, port: str | None, message: str, fix: str,
            evidence: Iterable[Ev | Val[Any] | None] = ()) -> None:
        evs = sorted({e.ev if isinstance(e, Val) else e for e in evidence if e is not None})
        self.findings.append(AuditFinding(rule, sev, device, port, message, fix, tuple(evs), self.family))

    def skip(self, rule: str, device: str | None, needs: str) -> None:
        self.not_checked.append(NotChecked(rule, device, needs))


E, W, INFO = Severity.error, Severity.warning, Severity.info


def _eth_devs(h: HostObs) -> list[RdmaObs]:
    return [d for d in h.rdma.values() if d.link_layer is None or d.link_layer.value.lower() == "ethernet"]


def _pinned_gid(h: HostObs) -> Val[str] | None:
    return h.nccl_setting("NCCL_IB_GID_INDEX")


def _used_devices(h: HostObs) -> list[str] | None:
    """RDMA devices NCCL uses: NCCL INFO ``NET/IB : Using``, else NCCL_IB_HCA (``^`` excludes), else None."""
    if h.nccl_used:
        return sorted({v.value.split(":")[0] for v in h.nccl_used})
    hca = h.nccl_setting("NCCL_IB_HCA")
    if hca is None or not hca.value.strip():
        return None
    spec = hca.value.strip()
    names = [x.split(":")[0] for x in spec.lstrip("^=").split(",") if x]
    if spec.startswith("^"):
        return sorted({d.device for d in _eth_devs(h)} - set(names))
    if spec.startswith("="):
        return sorted(set(names))
    return sorted({d.device for d in h.rdma.values() if any(d.device.startswith(n) for n in names)} or set(names))


def _nic_of(h: HostObs, d: RdmaObs) -> NicObs | None:
    if d.netdev and d.netdev in h.nics:
        return h.nics[d.netdev]
    if len(h.rdma) == 1 and len(h.nics) == 1:
        return next(iter(h.nics.values()))
    return None


# ------------------------------------------------------------------------------------------------ GID
def check_gid(data: AuditData, exp: Expect, out: Out) -> None:
    """RT401 no IPv4 RoCE v2 GID; RT402 pinned index is link-local / v1 / absent; RT403 the RoCE v2 index
    differs between hosts or HCAs while one index is pinned; RT404 ``NCCL_IB_GID_INDEX=""`` (= index 0)."""
    v2_index: dict[str, list[int]] = {}
    pins: dict[str, Val[str]] = {}
    for h in data.hosts.values():
        pin = _pinned_gid(h)
        devs = [d for d in _eth_devs(h) if d.gid_table is not None]
        used = _used_devices(h)
        if used is not None:
            devs = [d for d in devs if d.device in used] or devs
        if not devs and (h.rdma or h.env or h.runs):
            out.skip("RT401", h.name, "show_gids (or grep -H '' /sys/class/infiniband/*/ports/*/gids/* "
                                      "/sys/class/infiniband/*/ports/*/gid_attrs/{types,ndevs}/*)")
        if pin is not None and pin.value.strip() != "":
            pins[h.name] = pin
        for d in devs:
            good = sorted(g.index for g, _ in d.gids if g.ver.lower() == "v2" and g.ipv4)
            v2_index[f"{h.name}:{d.device}"] = good
            port = d.netdev or d.device
            if not good:
                kinds = sorted({("link-local " if g.gid.lower().startswith("fe80") else "") + f"RoCE {g.ver}"
                                for g, _ in d.gids})
                out.add("RT401", E, h.name, port,
                        f"{d.device} port {d.port} has no RoCE v2 GID with an IPv4 address (only "
                        f"{', '.join(kinds) or 'an empty table'}): RoCE v2 traffic cannot be routed",
                        "give the RoCE netdev an IPv4 address (the RoCE v2 IPv4 GID appears with it) and set "
                        "RoCE v2 for RDMA-CM (cma_roce_mode -d DEV -p 1 -m 2)",
                        [d.gid_table] + [e for _, e in d.gids[:4]])
            if pin is None:
                continue
            if pin.value.strip() == "":
                g0 = next(((g, e) for g, e in d.gids if g.index == 0), None)
                what = (f"{g0[0].gid} (RoCE {g0[0].ver})" if g0 else "the link-local RoCE v1 GID")
                out.add("RT404", E, h.name, port,
                        f'NCCL_IB_GID_INDEX is set but empty: NCCL reads "" as 0 and uses GID 0 of {d.device}, '
                        f"{what}, not the RoCE v2 IPv4 GID{' at ' + ','.join(map(str, good)) if good else ''}",
                        "unset NCCL_IB_GID_INDEX (NCCL >= 2.21 picks the RoCE v2 GID itself) or set it to the "
                        "RoCE v2 IPv4 index from show_gids", [pin, g0[1] if g0 else None])
                continue
            if not pin.value.strip().lstrip("-").isdigit() or int(pin.value) < 0:
                continue
            idx = int(pin.value)
            entry = next(((g, e) for g, e in d.gids if g.index == idx), None)
            bad = None
            if entry is None:
                bad = f"no GID at index {idx}"
            elif entry[0].gid.lower().startswith("fe80"):
                bad = f"GID {idx} is the link-local {entry[0].gid}"
            elif entry[0].ver.lower() != "v2":
                bad = f"GID {idx} is RoCE {entry[0].ver}"
            elif not entry[0].ipv4:
                bad = f"GID {idx} is an IPv6 RoCE v2 GID"
            if bad:
                out.add("RT402", E, h.name, port,
                        f"NCCL_IB_GID_INDEX={idx} but on {d.device}: {bad}; its RoCE v2 IPv4 GID is at "
                        f"{', '.join(map(str, good)) or 'no index'}",
                        "set NCCL_IB_GID_INDEX to the RoCE v2 IPv4 index (or unset it so NCCL selects by "
                        "NCCL_IB_ROCE_VERSION_NUM=2)", [pin, entry[1] if entry else d.gid_table])
    if pins:
        values = {p.value for p in pins.values()}
        if len(values) > 1:
            out.add("RT403", W, None, None,
                    "NCCL_IB_GID_INDEX differs between hosts: " + ", ".join(f"{h}={p.value}" for h, p in
                                                                           sorted(pins.items())),
                    "use one way of choosing the GID everywhere (unset it, or pin the RoCE v2 IPv4 index each host "
                    "actually has)", pins.values())
        firsts = {k: v[0] for k, v in v2_index.items() if v}
        if len(set(firsts.values())) > 1 and len(values) == 1:
            out.add("RT403", W, None, None,
                    f"NCCL_IB_GID_INDEX={values.pop()} is pinned, but the RoCE v2 IPv4 GID sits at different "
                    "indexes on different hosts/HCAs: " + ", ".join(f"{k}={v}" for k, v in sorted(firsts.items())),
                    "unset NCCL_IB_GID_INDEX (automatic RoCE v2 selection) or pin it per host",
                    list(pins.values()))


# ----------------------------------------------------------------------------------------- priority
def _prio_split(nic: NicObs, direction: str) -> tuple[dict[int, tuple[int, Val[int]]], bool] | None:
    vals: dict[int, tuple[int, Val[int]]] = {}
    is_delta = False
    for p in range(8):
        name = f"{direction}_prio{p}_packets"
        d = nic.delta(name)
        if d is not None:
            vals[p] = (d[0], nic.ethtool[name])
            is_delta = is_delta or d[1]
    return (vals, is_delta) if vals else None


def _rdma_active(h: HostObs) -> bool:
    return bool(h.runs or h.nccl_used or any(v.value for d in h.rdma.values() for v in d.hw.values()))


def check_priority(data: AuditData, exp: Expect, out: Out) -> None:
    """RT410 RoCE on priority 0 (or another lossy one); RT411 marking differs between directions or nodes;
    RT412 a switch queue other than the lossless one carries and drops the bulk; RT413 RoCE ToS maps to a
    lossy priority."""
    lossless = set(exp.lossless_priorities)
    any_prio = False
    for h in data.hosts.values():
        for nic in h.nics.values():
            tx, rx = _prio_split(nic, "tx"), _prio_split(nic, "rx")
            if tx is None and rx is None:
                continue
            any_prio = True
            port = None if nic.netdev == "-" else nic.netdev
            label = f"{h.name}:{nic.netdev}" if port else f"{h.name} (ethtool -S of an unnamed interface)"
            when = "during the capture" if (tx or rx or ({}, False))[1] else "since the counters were cleared"
            sides = {}
            for name, split in (("tx", tx), ("rx", rx)):
                if split is None:
                    continue
                good = sum(n for p, (n, _) in split[0].items() if p in lossless)
                bad = {p: n for p, (n, _) in split[0].items() if p not in lossless and n}
                sides[name] = (good, bad, split[0])
            if not sides:
                continue
            total = {k: g + sum(b.values()) for k, (g, b, _) in sides.items()}
            if all(total[k] < MIN_PACKETS for k in total):
                continue
            # RT410: the lossless priority carries (almost) nothing while the host is doing RDMA
            if all(g < (1 - ROCE_SHARE) * total[k] for k, (g, _, _) in sides.items()) and _rdma_active(h):
                top = max(((p, n) for _, b, _ in sides.values() for p, n in b.items()), key=lambda x: x[1])
                evs = [v for _, _, split in sides.values() for p, (_, v) in split.items() if p == top[0] or
                       p in lossless]
                out.add("RT410", E, h.name, port,
                        f"{label} carries its traffic on priority {top[0]} ({top[1]:,} packets "
                        f"{when}) and almost none on lossless priority {'/'.join(map(str, sorted(lossless)))}, "
                        "while the host runs RDMA: RoCE rides a priority without PFC",
                        f"mark RoCE: NCCL_IB_TC={exp.roce_tos} (DSCP {exp.roce_dscp[0]} | ECT), mlnx_qos -i "
                        f"{port or '<if>'} --trust dscp, and map DSCP {exp.roce_dscp[0]} to priority "
                        f"{exp.roce_priority} on NIC and switch", evs)
                continue
            # RT411: one direction on the lossless priority, the other on a lossy one
            if "tx" in sides and "rx" in sides and min(total.values()) >= MIN_PACKETS:
                for a, b_ in (("tx", "rx"), ("rx", "tx")):
                    ga, _, _ = sides[a]
                    gb, bb, sb = sides[b_]
                    if ga >= ROCE_SHARE * total[a] and sum(bb.values()) > max(gb, 0.5 * ga):
                        wrong = max(bb, key=lambda p: bb[p])
                        evs = [sides[a][2][p][1] for p in sides[a][2] if p in lossless] + [sb[wrong][1]]
                        out.add("RT411", E, h.name, port,
                                f"{h.name}:{nic.netdev} {'sends' if a == 'tx' else 'receives'} RoCE on priority "
                                f"{'/'.join(map(str, sorted(lossless)))} ({ga:,} packets {when}) but "
                                f"{'receives' if a == 'tx' else 'sends'} {bb[wrong]:,} on priority {wrong}: the "
                                "two directions are marked differently",
                                "the peer (or a switch re-marking) uses another ToS/DSCP: make NCCL_IB_TC, "
                                "mlnx_qos --trust dscp and the switch DSCP→TC map equal on every node", evs)
                        break
    if not any_prio and data.hosts:
        out.skip("RT410", None, "ethtool -S <if> (rx_prioN_packets / tx_prioN_packets) on the hosts")
    # RT411 across nodes / RT413 ToS → priority
    tcs = {h.name: v for h in data.hosts.values() if (v := h.nccl_setting("NCCL_IB_TC")) is not None}
    if len({v.value for v in tcs.values()}) > 1:
        out.add("RT411", E, None, None, "NCCL_IB_TC differs between nodes: " +
                ", ".join(f"{h}={v.value}" for h, v in sorted(tcs.items())) +
                "; the nodes mark RoCE differently", f"set NCCL_IB_TC={exp.roce_tos} on every node", tcs.values())
    for h in data.hosts.values():
        sources = [("NCCL_IB_TC", h.nccl_setting("NCCL_IB_TC"))] + [
            (f"{d.device} traffic_class", d.traffic_class) for d in h.rdma.values()]
        for what, v in sources:
            if v is None or not v.value.__str__().strip().isdigit():
                continue
            tos = int(v.value)
            dscp = tos >> 2
            nic_maps = [n.dscp_to_prio for n in h.nics.values() if n.dscp_to_prio]
            prio = (nic_maps[0][dscp].value if nic_maps and dscp in nic_maps[0] else
                    exp.dscp_to_priority.get(dscp, dscp >> 3))
            if prio not in lossless:
                out.add("RT413" if prio else "RT410", E, h.name, None,
                        f"{what}={tos} is DSCP {dscp}, which maps to priority {prio}"
                        f"{' (the default class)' if prio == 0 else ''}: RoCE would ride a priority without PFC",
                        f"set {what.split()[0] if what.startswith('NCCL') else 'the RoCE ToS'} to {exp.roce_tos} "
                        f"(DSCP {exp.roce_dscp[0]} → priority {exp.roce_priority})",
                        [v] + ([nic_maps[0][dscp]] if nic_maps and dscp in nic_maps[0] else []))
    # RT412: switch queues
    lq = set(exp.lossless_queues)
    for sw in data.switches.values():
        for port, cs in sw.ports.items():
            qs: dict[int, tuple[int, int, Val[int]]] = {}
            for name, v in cs.items():
                if name.endswith("_tx_pkts") and name[1:-8].isdigit():
                    q = int(name[1:-8])
                    tx = sw.counter(port, name)[0]  # type: ignore[index]
                    dr = sw.counter(port, f"q{q}_drop_pkts")
                    qs[q] = (tx, dr[0] if dr else 0, v)
            total = sum(t for t, _, _ in qs.values())
            if total < MIN_PACKETS:
                continue
            for q, (tx, dr, v) in sorted(qs.items()):
                if q in lq or tx < LOSSY_QUEUE_SHARE * total:
                    continue
                dropped = dr > DROP_SHARE * (tx + dr)
                if dropped or exp.from_plan:
                    out.add("RT412", E if dropped else W, sw.name, port,
                            f"{sw.name}:{port} queue {q} carries {tx:,} packets ({tx / total:.0%} of the port's "
                            f"unicast){f' and dropped {dr:,} ({dr / (tx + dr):.1%})' if dropped else ''}, but the "
                            f"lossless queue is {'/'.join(map(str, sorted(lq)))}: if this is RoCE, the ASIC does not "
                            "classify it as the configuration says",
                            "check the DSCP→TC→queue map the ASIC uses (show qos map / CONFIG_DB DSCP_TO_TC_MAP and "
                            "PORT_QOS_MAP on this port) and the ToS the hosts send", [v])


# ----------------------------------------------------------------------------------------------- PFC
def check_pfc(data: AuditData, exp: Expect, out: Out) -> None:
    """RT420 a hop without PFC on the RoCE priority; RT421 NIC sends pause (cannot drain); RT422 switch and
    NIC pause counts disagree; RT423 watchdog storm flapping; RT424 discards on a lossless class while PFC
    is silent; RT425 RoCE loss recovery."""
    lossless = sorted(exp.lossless_priorities)
    qos_seen = False
    for h in data.hosts.values():
        for nic in h.nics.values():
            if nic.pfc_enabled is not None:
                qos_seen = True
                missing = [p for p in lossless if p not in nic.pfc_enabled.value]
                if missing:
                    out.add("RT420", E, h.name, nic.netdev,
                            f"{h.name}:{nic.netdev} has PFC on priority "
                            f"{','.join(map(str, nic.pfc_enabled.value)) or 'none'}, not on RoCE priority "
                            f"{','.join(map(str, missing))}",
                            f"mlnx_qos -i {nic.netdev} --pfc " +
                            ",".join("1" if p in lossless else "0" for p in range(8)), [nic.pfc_enabled])
            for p in lossless:
                tx = nic.delta(f"tx_prio{p}_pause")
                if tx and tx[0] > 0:
                    out.add("RT421", W, h.name, nic.netdev,
                            f"{h.name}:{nic.netdev} sent {tx[0]:,} PFC pause frames on priority {p} "
                            f"{'during the capture' if tx[1] else 'since the counters were cleared'}: its receive "
                            "buffer fills — the host cannot drain what arrives",
                            "look at the host before the fabric: PCIe width/speed and errors, GPU↔NIC NUMA/PCIe "
                            "placement (nvidia-smi topo -m), GPUDirect RDMA, CPU affinity of the receiving ranks",
                            [nic.ethtool[f"tx_prio{p}_pause"]])
            # RT424 NIC side
            disc = [(k, nic.delta(k)) for k in ("rx_discards_phy", *(f"rx_prio{p}_discards" for p in lossless),
                                                 *(f"rx_prio{p}_buf_discard" for p in lossless))]
            disc = [(k, d) for k, d in disc if d and d[0] > 0]
            pauses = [nic.delta(f"{d}_prio{p}_pause") for d in ("rx", "tx") for p in lossless]
            if disc:
                if any(x is None for x in pauses):
                    out.skip("RT424", h.name, f"ethtool -S {nic.netdev} with rx_prio{lossless[0]}_pause and "
                                              f"tx_prio{lossless[0]}_pause (the capture filtered them out)")
                elif all(x[0] == 0 for x in pauses if x):
                    out.add("RT424", E, h.name, nic.netdev,
                            f"{h.name}:{nic.netdev} discarded {', '.join(f'{k} {d[0]:,}' for k, d in disc)} while "
                            f"no PFC pause was sent or received on priority {','.join(map(str, lossless))}: the "
                            "lossless class is not protected on this hop",
                            f"enable PFC on priority {exp.roce_priority} on the NIC (mlnx_qos --pfc) and on the "
                            "switch port facing it; check trust dscp so RoCE lands on that priority",
                            [nic.ethtool[k] for k, _ in disc])
    if data.hosts and not qos_seen:
        out.skip("RT420", None, "mlnx_qos -i <if> on the hosts (PFC enabled per priority)")
    for sw in data.switches.values():
        pfc_prio = sw.roce.get("pfc-priority")
        if pfc_prio is not None:
            prios = {int(x) for x in pfc_prio.value.split(",") if x.strip().isdigit()}
            missing = [p for p in lossless if p not in prios]
            if missing:
                out.add("RT420", E, sw.name, None,
                        f"{sw.name} runs PFC on priority {pfc_prio.value}, not on RoCE priority "
                        f"{','.join(map(str, missing))}",
                        f"nv set qos roce … / nv set qos pfc default-global switch-priority {exp.roce_priority}",
                        [pfc_prio])
        for key, v in sw.roce.items():
            if key.endswith(("rx-enabled", "tx-enabled")) and v.value.lower() not in ("enabled", "on", "true"):
                out.add("RT420", E, sw.name, key.split(":")[0] if ":" in key else None,
                        f"{sw.name} PFC {key.rsplit(':', 1)[-1]} is {v.value}", "enable PFC rx and tx for RoCE", [v])
        # RT423 watchdog flapping, RT424 lossless drops without PFC
        for port, cs in sw.ports.items():
            for q in sorted(exp.lossless_queues):
                det = sw.counter(port, f"q{q}_wd_storm_detected")
                if det and det[0] > 0:
                    res = sw.counter(port, f"q{q}_wd_storm_restored")
                    drops = [sw.counter(port, f"q{q}_wd_{d}_drop") for d in ("tx", "rx")]
                    dropped = sum(d[0] for d in drops if d)
                    flapping = det[0] >= 2 and res is not None and res[0] >= 1
                    out.add("RT423", E, sw.name, port,
                            f"{sw.name}:{port} queue {q}: PFC watchdog storm detected {det[0]} time(s), restored "
                            f"{res[0] if res else '?'}{' — storm/restore flapping' if flapping else ''}; "
                            f"{dropped:,} lossless packets dropped by the watchdog",
                            "find the device pausing this port without draining (a stalled NIC or host with PFC on); "
                            "the watchdog only hides it. Compare with the platform's known PFC-watchdog defects "
                            "before raising detection/restoration times",
                            [cs.get(f"q{q}_wd_storm_detected")] + [cs.get(f"q{q}_wd_{d}_drop") for d in ("tx", "rx")])
                dr = sw.counter(port, f"q{q}_drop_pkts")
                if dr and dr[0] > 0:
                    pf = [sw.counter(port, f"pfc_{d}_prio{p}") for d in ("rx", "tx") for p in lossless]
                    if any(x is None for x in pf):
                        if "pfc" not in sw.families:
                            out.skip("RT424", sw.name, "show pfc counters (or the platform's PFC counters)")
                    elif all(x[0] == 0 for x in pf if x):
                        out.add("RT424", E, sw.name, port,
                                f"{sw.name}:{port} dropped {dr[0]:,} packets on lossless queue {q} while no PFC "
                                f"frame was sent or received on priority {','.join(map(str, lossless))}: PFC is not "
                                "protecting this queue",
                                "check pfc_enable on this port and the priority→PG/queue maps; check headroom (xoff)",
                                [cs.get(f"q{q}_drop_pkts")] + [cs.get(f"pfc_{d}_prio{p}") for d in ("rx", "tx")
                                                               for p in lossless])
    # RT422 needs the cabling (plan) and two snapshots on both sides (totals were cleared at different times)
    if data.hosts and data.switches and not exp.nic_switch_port:
        out.skip("RT422", None, "an inventory or plan (which switch port faces which NIC) to compare pause counts")
    for (host, netdev), where in sorted(exp.nic_switch_port.items()):
        h, (swname, _, port) = data.hosts.get(host), where.partition(":")
        sw = data.switches.get(swname)
        if h is None or sw is None or netdev not in h.nics:
            continue
        nic = h.nics[netdev]
        for p in lossless:
            rx, tx = nic.delta(f"rx_prio{p}_pause"), sw.counter(port, f"pfc_tx_prio{p}")
            if rx is None or tx is None or not (rx[1] and tx[1]):
                out.skip("RT422", host, f"ethtool -S {netdev} and the switch's PFC counters on {where}, each "
                                        "captured before and after the same interval")
                continue
            if abs(rx[0] - tx[0]) > max(100, 0.1 * max(rx[0], tx[0])):
                out.add("RT422", W, host, netdev,
                        f"{where} sent {tx[0]:,} PFC frames on priority {p} to {host}:{netdev}, which counted "
                        f"{rx[0]:,} received over the same interval: the two counter sources disagree",
                        "check the cabling matches the inventory, that both sides count the same priority, and "
                        "that the NIC honours PFC (mlnx_qos --pfc); a NIC that ignores pause loses packets",
                        [nic.ethtool[f"rx_prio{p}_pause"], sw.ports[port][f"pfc_tx_prio{p}"]])
    # RT425 RoCE loss recovery
    for h in data.hosts.values():
        for key, d in h.rdma.items():
            loss = {k: x for k in LOSS_COUNTERS if (x := d.delta(k)) is not None and x[0] > 0}
            if not loss:
                continue
            n = sum(x[0] for x in loss.values())
            nic = _nic_of(h, d)
            pk = None
            if nic is not None:
                parts = [nic.delta(f"rx_prio{p}_packets") for p in range(8)]
                if any(parts):
                    pk = sum(x[0] for x in parts if x)
                elif nic.delta("rx_packets_phy"):
                    pk = nic.delta("rx_packets_phy")[0]  # type: ignore[index]
            detail = ", ".join(f"{k} {x[0]:,}" for k, x in loss.items())
            evs = [d.hw[k] for k in loss]
            fix = ("make PFC cover the RoCE priority end to end (NIC --pfc, switch pfc_enable, DSCP maps) and check "
                   "headroom; RoCE on a lossy priority (RT410/RT411) or ECN not marking (RT430) explain loss too")
            if pk:
                per_m = n / pk * 1e6
                if per_m > LOSS_PER_MILLION:
                    out.add("RT425", E, h.name, d.netdev or d.device,
                            f"{h.name}:{d.device} recovered from loss {n:,} times ({per_m:.1f} per million received "
                            f"packets: {detail})", fix, evs)
            else:
                out.add("RT425", E if n >= LOSS_NO_RATE_ERROR else W, h.name, d.netdev or d.device,
                        f"{h.name}:{d.device} recovered from loss {n:,} times ({detail}); the packet count was not "
                        "captured, so no rate per packet", fix + " (capture ethtool -S too for a rate)", evs)


# ---------------------------------------------------------------------------------------- ECN / DCQCN
def check_ecn(data: AuditData, exp: Expect, out: Out) -> None:
    """RT430 no CE marks under congestion; RT431 ECN/WRED not on the lossless queue; RT432 CNPs sent but not
    handled; RT433 RNR / out_of_buffer (receiver shortage, not fabric loss)."""
    lossless = sorted(exp.lossless_priorities)
    sent: list[tuple[str, int, Val[int]]] = []
    handled: list[tuple[str, int, Val[int]]] = []
    for h in data.hosts.values():
        for d in h.rdma.values():
            marked = d.delta("np_ecn_marked_roce_packets")
            loss = {k: x[0] for k in LOSS_COUNTERS if (x := d.delta(k)) is not None and x[0] > 0}
            nic = _nic_of(h, d)
            pauses = [nic.delta(f"{di}_prio{p}_pause") for di in ("rx", "tx") for p in lossless] if nic else []
            paused = sum(x[0] for x in pauses if x)
            if marked is not None and marked[0] == 0 and (loss or paused):
                why = (f"PFC paused {paused:,} times" if paused else
                       "loss recovery (" + ", ".join(f"{k} {v:,}" for k, v in loss.items()) + ")")
                quiet = ("" if paused else " and PFC pause counters were not captured" if not any(pauses)
                         else " while PFC stayed quiet")
                out.add("RT430", E if paused else W, h.name, d.netdev or d.device,
                        f"{h.name}:{d.device} received no ECN-marked RoCE packet (np_ecn_marked_roce_packets 0) "
                        f"under congestion — {why}{quiet}: the switch does not mark the queue RoCE uses",
                        f"enable ECN (WRED with ecn) on lossless queue {exp.lossless_queues[0]} with Kmin/Kmax below "
                        "the PFC trigger, and check RoCE is sent ECN-capable (ToS with ECT) on the lossless priority",
                        [d.hw["np_ecn_marked_roce_packets"]] + [d.hw[k] for k in loss] +
                        [nic.ethtool.get(f"{di}_prio{p}_pause") for di in ("rx", "tx") for p in lossless
                         if nic is not None and (nic.delta(f"{di}_prio{p}_pause") or (0,))[0] > 0])
            if (x := d.delta("np_cnp_sent")) is not None and x[0] > 0:
                sent.append((h.name, x[0], d.hw["np_cnp_sent"]))
            if (x := d.delta("rp_cnp_handled")) is not None:
                handled.append((h.name, x[0], d.hw["rp_cnp_handled"]))
            for k in ("out_of_buffer", "rnr_nak_retry_err"):
                x = d.delta(k)
                if x and x[0] > 0:
                    out.add("RT433", W, h.name, d.netdev or d.device,
                            f"{h.name}:{d.device} {k} {x[0]:,}: the receiver had no receive buffer posted "
                            "(a host-side shortage), not packets lost in the fabric",
                            "no PFC/ECN change fixes this: check the application posts receives in time (RNR "
                            "retry/timeout, receive queue depth, CPU starvation of the receiving process)", [d.hw[k]])
    total_sent = sum(n for _, n, _ in sent)
    if total_sent >= 100:
        if not handled:
            out.skip("RT432", None, "rp_cnp_handled from the sending hosts' hw_counters "
                                    "(grep -H '' /sys/class/infiniband/*/ports/*/hw_counters/*)")
        else:
            got = sum(n for _, n, _ in handled)
            if got < 0.01 * total_sent:
                out.add("RT432", E, None, None,
                        f"receivers sent {total_sent:,} CNPs but the captured senders "
                        f"({', '.join(sorted({h for h, _, _ in handled}))}) handled {got:,}: the reaction point is "
                        "not cutting rates",
                        f"enable the DCQCN reaction point on priority {exp.roce_priority} "
                        f"(/sys/class/net/<if>/ecn/roce_rp/enable/{exp.roce_priority} = 1) and check CNPs travel on "
                        f"priority {exp.cnp_priority}", [v for _, _, v in sent + handled])
    for h in data.hosts.values():
        for nic in h.nics.values():
            for side in ("roce_rp", "roce_np"):
                v = nic.ecn_sysfs.get(f"{side}/enable/{exp.roce_priority}")
                if v is not None and v.value == 0:
                    out.add("RT432", E, h.name, nic.netdev,
                            f"{h.name}:{nic.netdev} DCQCN {'reaction' if side == 'roce_rp' else 'notification'} point "
                            f"is off on priority {exp.roce_priority} ({side}/enable/{exp.roce_priority} = 0)",
                            f"echo 1 > /sys/class/net/{nic.netdev}/ecn/{side}/enable/{exp.roce_priority}", [v])
    # RT431 switch ECN config read back (Cumulus nv show qos roce)
    for sw in data.switches.values():
        mode = sw.roce.get("congestion-mode")
        tcs = sw.roce.get("enabled-tc")
        if mode is not None and "ecn" not in mode.value.lower():
            out.add("RT431", E, sw.name, None, f"{sw.name} congestion-control mode is {mode.value}, not ECN",
                    "nv set qos congestion-control default-global … ecn enable", [mode])
        if tcs is not None:
            enabled = {int(x) for x in tcs.value.split(",") if x.strip().isdigit()}
            want = {sw.sp_to_tc[p].value if p in sw.sp_to_tc else p for p in lossless}
            missing = sorted(want - enabled)
            if missing:
                out.add("RT431", E, sw.name, None,
                        f"{sw.name} marks ECN on traffic-class {tcs.value}, not on lossless TC "
                        f"{','.join(map(str, missing))}",
                        f"nv set qos congestion-control default-global traffic-class {missing[0]} ecn enable",
                        [tcs] + [sw.sp_to_tc.get(p) for p in lossless])
    if data.switches and not any(s.roce for s in data.switches.values()):
        out.skip("RT431", None, "the switch QoS configuration read back (nv show qos roce; running-config read-back "
                                "for SONiC/EOS/NX-OS/Junos is not implemented yet)")


# ----------------------------------------------------------------------------------------------- MTU
def check_mtu(data: AuditData, exp: Expect, out: Out) -> None:
    """RT440 netdev MTU, RoCE active MTU and the policy disagree on a host; RT441 MTUs differ across nodes."""
    actives: dict[str, Val[int]] = {}
    netdevs: dict[str, Val[int]] = {}
    for h in data.hosts.values():
        for d in _eth_devs(h):
            nic = _nic_of(h, d)
            if d.active_mtu is not None:
                actives[f"{h.name}:{d.device}"] = d.active_mtu
            if nic is None or nic.mtu is None:
                if d.active_mtu is not None and d.active_mtu.value < exp.roce_mtu:
                    out.add("RT440", E, h.name, d.device,
                            f"{h.name}:{d.device} RoCE active MTU {d.active_mtu.value} is below {exp.roce_mtu} "
                            f"({exp.source})", f"raise the netdev MTU to {exp.host_mtu} (active MTU follows it)",
                            [d.active_mtu])
                continue
            want_active = roce_active_mtu(nic.mtu.value)
            msgs = []
            if nic.mtu.value < exp.host_mtu_by_nic.get((h.name, nic.netdev), exp.host_mtu):
                msgs.append(f"netdev MTU {nic.mtu.value} is below {exp.host_mtu} ({exp.source})")
            if d.active_mtu is not None and want_active is not None and d.active_mtu.value < want_active:
                msgs.append(f"RoCE active MTU {d.active_mtu.value} is below the {want_active} its netdev MTU "
                            f"{nic.mtu.value} allows (the link partner or port is at a lower MTU)")
            if msgs:
                out.add("RT440", E, h.name, nic.netdev, f"{h.name}:{nic.netdev}: " + "; ".join(msgs),
                        f"ip link set dev {nic.netdev} mtu {exp.host_mtu}; the switch port MTU must be ≥ it "
                        f"({exp.switch_mtu}); RoCE active MTU = largest IB MTU ≤ netdev MTU − 96",
                        [nic.mtu, d.active_mtu])
        for nic in h.nics.values():
            if nic.mtu is not None and (nic.ethtool or nic.pfc_enabled or any(d.netdev == nic.netdev
                                                                             for d in h.rdma.values())):
                netdevs[f"{h.name}:{nic.netdev}"] = nic.mtu
    for label, vals in (("RoCE active MTU", actives), ("netdev MTU", netdevs)):
        by_host = {k: v for k, v in vals.items()}
        if len({v.value for v in by_host.values()}) > 1 and len({k.split(":")[0] for k in by_host}) > 1:
            top = max(v.value for v in by_host.values())
            low = {k: v for k, v in by_host.items() if v.value < top}
            out.add("RT441", W, None, None,
                    f"{label} differs across nodes: " + ", ".join(f"{k}={v.value}" for k, v in sorted(by_host.items()))
                    + f"; a connection runs at the smaller end ({', '.join(sorted(low))})",
                    f"set the same MTU on every node ({exp.host_mtu} netdev, {exp.roce_mtu} RoCE)", low.values())
    if data.hosts and not actives:
        out.skip("RT440", None, "ibv_devinfo -v (active_mtu) and ip -d link (netdev MTU) on the hosts")


# ----------------------------------------------------------------------------------------------- ECE
def _version_tuple(v: str) -> tuple[int, ...]:
    return tuple(int(x) for x in v.split("-")[0].split(".")[:3] if x.isdigit())


def check_ece(data: AuditData, exp: Expect, out: Out) -> None:
    """RT450: NCCL ≥ 2.22 (or UCX RC) negotiates ECE by default; with firmware that differs across hosts the
    negotiated congestion-control options can differ per connection."""
    fws = {h.name: d.fw_ver for h in data.hosts.values() for d in h.rdma.values() if d.fw_ver is not None}
    for h in data.hosts.values():
        ver = h.nccl_info.get("version")
        ece = h.nccl_setting("NCCL_IB_ECE_ENABLE")
        ucx = h.ucx.get("UCX_IB_ECE") or h.ucx.get("UCX_RC_ECE")
        on = (ver is not None and _version_tuple(ver.value) >= (2, 22) and (ece is None or ece.value != "0")) or \
             (ucx is not None and ucx.value.lower() not in ("0", "n", "no", "off", "false"))
        if not on:
            continue
        if len({v.value for v in fws.values()}) > 1:
            out.add("RT450", W, h.name, None,
                    f"{h.name} negotiates ECE ({'NCCL ' + ver.value if ver else 'UCX'}) while NIC firmware differs "
                    "across hosts (" + ", ".join(f"{k} {v.value}" for k, v in sorted(fws.items())) + "): the "
                    "congestion-control options each connection ends up with can differ",
                    "align firmware, or set NCCL_IB_ECE_ENABLE=0 (UCX_IB_ECE=0) so DCQCN behaves alike everywhere",
                    [ver, ece, ucx] + list(fws.values()))
        elif not fws:
            out.skip("RT450", h.name, "ibv_devinfo -v (fw_ver) on every host, to judge ECE")


# ------------------------------------------------------------------------------ load balance / topology
def _busbw(run: NcclRun) -> float | None:
    row = run.largest_message_row
    return row.busbw_gbps if row is not None else None


def check_balance(data: AuditData, exp: Expect, out: Out) -> None:
    """RT460 bonded HCA with one QP per connection; RT461 adaptive routing without NCCL_IB_ADAPTIVE_ROUTING=1;
    RT462 NCCL_IB_HCA uses fewer NICs than the host has; RT463 slow host (median/MAD on the pair matrix)."""
    for h in data.hosts.values():
        bonded = [b for b in h.bonds.values()] + [d for d in h.rdma.values() if "bond" in d.device]
        if bonded:
            qps = h.nccl_setting("NCCL_IB_QPS_PER_CONNECTION")
            if h.env_read is None and qps is None:
                out.skip("RT460", h.name, "env | grep NCCL (or /etc/nccl.conf) of the job")
            elif qps is None or qps.value.strip() in ("", "1"):
                b0 = next(iter(h.bonds.values()), None)
                # cast: b0 is None only when the host has no bonds, so bonded holds RdmaObs only
                out.add("RT460", W, h.name, b0.name if b0 else None,
                        f"{h.name} runs RoCE over a bond ({b0.mode.value if b0 else cast(RdmaObs, bonded[0]).device}) with one QP "
                        "per connection: each connection hashes onto one member link, so a pair of ranks gets one "
                        "link's bandwidth", "set NCCL_IB_QPS_PER_CONNECTION=2 (or more; one per member) so the "
                        "flows spread", [b0.mode if b0 else None, qps])
        if exp.adaptive_routing is None:
            pass
        elif exp.adaptive_routing and (h.env_read is not None or h.info_read is not None):
            ar = h.nccl_setting("NCCL_IB_ADAPTIVE_ROUTING")
            if ar is None and h.env_read is None:
                out.skip("RT461", h.name, "env | grep NCCL of the job (the NCCL INFO log does not name "
                                          "NCCL_IB_ADAPTIVE_ROUTING)")
            elif ar is None or ar.value.strip() != "1":
                out.add("RT461", W, h.name, None,
                        "the fabric does adaptive routing but NCCL_IB_ADAPTIVE_ROUTING is "
                        f"{'unset' if ar is None else ar.value}: NCCL does not spray/re-order for it",
                        "set NCCL_IB_ADAPTIVE_ROUTING=1 in the job environment", [ar, h.env_read])
        used = _used_devices(h)
        eth = sorted({d.device for d in _eth_devs(h) if d.state is None or "ACTIVE" in d.state.value.upper()})
        if used is not None and len(eth) > len(used) and len(eth) > 1:
            ev = h.nccl_setting("NCCL_IB_HCA") or (h.nccl_used[0] if h.nccl_used else None)
            out.add("RT462", W, h.name, None,
                    f"NCCL uses {len(used)} of {h.name}'s {len(eth)} RoCE NICs ({', '.join(used)} of "
                    f"{', '.join(eth)}): the others carry nothing",
                    "list every rail NIC in NCCL_IB_HCA (or unset it) so each GPU uses its nearest NIC",
                    [ev] + [d.state or d.link_layer for d in _eth_devs(h)][:4])
    if exp.adaptive_routing is None and any(h.env_read or h.info_read for h in data.hosts.values()):
        out.skip("RT461", None, "an inventory (site.adaptive_routing) to know whether the fabric does adaptive "
                                "routing")
    # RT463 pair matrix
    pairs: dict[tuple[str, str], tuple[float, str, int]] = {}
    for h in data.hosts.values():
        for run, file in h.runs:
            hosts = sorted(set(run.hosts))
            bw = _busbw(run)
            if len(hosts) == 2 and bw is not None and run.status != "failed":
                pairs[(hosts[0], hosts[1])] = (bw, file, run.line or 1)
    names = sorted({x for p in pairs for x in p})
    if len(names) >= 3 and len(pairs) >= 3:
        per_host = {n: statistics.median(bw for p, (bw, _, _) in pairs.items() if n in p) for n in names}
        med = statistics.median(per_host.values())
        mad = statistics.median(abs(v - med) for v in per_host.values())
        scale = max(1.4826 * mad, 0.01 * med)
        for n, v in sorted(per_host.items()):
            z = (v - med) / scale if scale else 0.0
            if z < -OUTLIER_Z:
                evs = [Ev(f, line) for p, (_, f, line) in pairs.items() if n in p]
                out.add("RT463", E, n, None,
                        f"{n} is slow: the pairs it is in reach a median {v:.1f} GB/s busbw against {med:.1f} GB/s "
                        f"for the fabric (modified z-score {z:.1f}, median/MAD over {len(pairs)} pairs)",
                        f"inspect {n}: NIC link speed/FEC and cable, PCIe width, GPU↔NIC affinity, firmware, "
                        "thermal throttling; compare its counters with a good host", evs)


# -------------------------------------------------------------------------------------------- nccl-tests
def check_nccl_runs(data: AuditData, exp: Expect, out: Out) -> None:
    """RT470 run failed; RT471 log ends before the summary; RT472 busbw far below line rate."""
    for h in data.hosts.values():
        for run, file in h.runs:
            ev = Ev(file, run.line or 1)
            if not run.complete and not run.rows and all("no result rows" in p for p in run.problems):
                out.add("RT471", INFO, h.name, None,
                        f"nccl-tests {run.collective} log ends before any result row (cut, or still starting)",
                        "capture the whole log", [ev])
                continue
            if run.status == "failed":
                out.add("RT470", E, h.name, None,
                        f"nccl-tests {run.collective} run failed: {'; '.join(run.problems) or 'no result'}",
                        "fix the run first (MPI build, wrong results, hung ranks); no bandwidth figure is judged from "
                        "a failed run", [ev])
                continue
            if not run.complete:
                out.add("RT471", INFO, h.name, None,
                        f"nccl-tests {run.collective} log ends before its summary (cut or still running); "
                        "figures are from the rows read", "capture the whole log", [ev])
            bw = _busbw(run)
            rate = exp.line_rate_gbps.get(h.name) or next(
                (n.speed_mbps.value / 1000 for n in h.nics.values() if n.speed_mbps), None)
            if bw is None or run.largest_message_row is None or run.largest_message_row.size_bytes < 1 << 26:
                continue
            if rate is None:
                out.skip("RT472", h.name, "the NIC line rate: an inventory, or `ethtool <if>` (Speed:)")
                continue
            frac = bw * 8 / rate
            if frac < exp.target_utilisation:
                out.add("RT472", W, h.name, None,
                        f"busbw {bw:g} GB/s at {run.largest_message_row.size_bytes:,} B is {frac:.0%} of "
                        f"{rate:g} Gb/s (target {exp.target_utilisation:.0%})",
                        "see the other findings for the cause; with none, check NIC/GPU placement, PCIe and "
                        "NCCL_IB_HCA", [Ev(file, run.largest_message_row.line or ev.line)
                                        if getattr(run.largest_message_row, "line", None) else ev])


def check_plan_env(data: AuditData, exp: Expect, out: Out) -> None:
    """RT464: a host's captured NCCL environment lacks or changes a variable the plan sets."""
    if exp.host_env is None:
        return
    for h in data.hosts.values():
        want = exp.host_env.get(h.name)
        if want is None:
            continue
        if h.env_read is None and h.info_read is None:
            out.skip("RT464", h.name, "env | grep NCCL (or /etc/nccl.conf) of the job, to compare with the plan")
            continue
        for key, value in sorted(want.items()):
            got = h.nccl_setting(key)
            if got is None and h.env_read is None:
                # NCCL INFO names only the variables it logs: absence there is not "unset"
                out.skip("RT464", h.name, f"env | grep NCCL (or /etc/nccl.conf) of the job: {key} is not in the "
                                          "NCCL INFO log")
                continue
            if got is None or got.value.strip() != str(value):
                out.add("RT464", W, h.name, None,
                        f"{key} is {'unset' if got is None else repr(got.value)} in the job on {h.name}; the plan "
                        f"sets {value!r}", f"export {key}={value} (the plan's hosts/{h.name}.nccl.env)",
                        [got, h.env_read or h.info_read])


CHECKS: tuple[tuple[str, Callable[[AuditData, Expect, Out], None]], ...] = (
    ("GID", check_gid), ("priority", check_priority), ("PFC", check_pfc), ("ECN/DCQCN", check_ecn),
    ("MTU", check_mtu), ("ECE", check_ece), ("load balance", check_balance), ("plan", check_plan_env),
    ("nccl-tests", check_nccl_runs))


def run_checks(data: AuditData, exp: Expect) -> tuple[list[AuditFinding], list[NotChecked]]:
    """Every check; findings sorted errors first, then by rule, device and port."""
    findings: list[AuditFinding] = []
    skipped: list[NotChecked] = []
    for family, fn in CHECKS:
        out = Out(family)
        fn(data, exp, out)
        findings += out.findings
        skipped += out.not_checked
    order = {E: 0, W: 1, INFO: 2}
    findings.sort(key=lambda f: (order[f.severity], f.rule, f.device or "", f.port or ""))
    seen: set[tuple[str, str | None, str]] = set()
    uniq = []
    for s in skipped:
        if (s.rule, s.device, s.needs) not in seen:
            seen.add((s.rule, s.device, s.needs))
            uniq.append(s)
    return findings, uniq
