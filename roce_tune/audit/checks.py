"""RT4xx audit checks: pure functions over :class:`~roce_tune.audit.model.AuditData` and an
:class:`~roce_tune.audit.expect.Expect`.

Each check returns findings (rule, severity, device, port, message, fix, evidence = capture lines) and
"not checked" notes naming the command whose output it needed. A counter that was not captured is
never read as zero. Families: GID RT401–RT404, priority RT410–RT413, PFC RT420–RT428, ECN/DCQCN
RT430–RT435, MTU RT440–RT441, ECE RT450, load balance/topology RT460–RT463, nccl-tests RT470–RT472.

Thresholds [D] (chosen here; ratios so they hold for any capture length):
:data:`MIN_PACKETS` packets before a NIC's priority split is judged; :data:`ROCE_SHARE` share of a
direction that counts as "RoCE rides this priority"; :data:`LOSS_PER_MILLION` loss-recovery events per
million packets; :data:`OUTLIER_Z` modified z-score (Iglewicz & Hoaglin 1993: |M| > 3.5) for a slow host.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from roce_tune.audit.expect import Expect
from roce_tune.audit.model import AuditData, Ev, HostObs, NicObs, RdmaObs, SwitchObs, Val
from roce_tune.findings import Severity
from roce_tune.verify.hostfacts import GidEntry, roce_active_mtu
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
        """Append one :class:`AuditFinding` of this family; ``evidence`` (``None`` entries dropped,
        :class:`Val` unwrapped to its :class:`Ev`) is deduplicated and sorted."""
        evs = sorted({e.ev if isinstance(e, Val) else e for e in evidence if e is not None})
        self.findings.append(AuditFinding(rule, sev, device, port, message, fix, tuple(evs), self.family))

    def skip(self, rule: str, device: str | None, needs: str) -> None:
        """Record that ``rule`` could not be checked on ``device`` for want of ``needs``."""
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
    return sorted({d.device for d in h.rdma.values() if any(d.device.startswith(n) for n in names)}
                  or set(names))


def _nic_of(h: HostObs, d: RdmaObs) -> NicObs | None:
    if d.netdev and d.netdev in h.nics:
        return h.nics[d.netdev]
    if len(h.rdma) == 1 and len(h.nics) == 1:
        return next(iter(h.nics.values()))
    return None


# ------------------------------------------------------------------------------------------------ GID
def _gid_devices(h: HostObs) -> list[RdmaObs]:
    """The host's Ethernet RDMA devices with a GID table, narrowed to those NCCL uses when that is known."""
    devs = [d for d in _eth_devs(h) if d.gid_table is not None]
    used = _used_devices(h)
    if used is not None:
        devs = [d for d in devs if d.device in used] or devs
    return devs


def _gid_no_v2_ipv4(h: HostObs, d: RdmaObs, out: Out) -> None:
    """RT401: the device's GID table has no RoCE v2 GID with an IPv4 address."""
    kinds = sorted({("link-local " if g.gid.lower().startswith("fe80") else "") + f"RoCE {g.ver}"
                    for g, _ in d.gids})
    out.add("RT401", E, h.name, d.netdev or d.device,
            f"{d.device} port {d.port} has no RoCE v2 GID with an IPv4 address (only "
            f"{', '.join(kinds) or 'an empty table'}): RoCE v2 traffic cannot be routed",
            "give the RoCE netdev an IPv4 address (the RoCE v2 IPv4 GID appears with it) and set "
            "RoCE v2 for RDMA-CM (cma_roce_mode -d DEV -p 1 -m 2)",
            [d.gid_table] + [e for _, e in d.gids[:4]])


def _gid_empty_pin(h: HostObs, d: RdmaObs, pin: Val[str], good: list[int], out: Out) -> None:
    """RT404: ``NCCL_IB_GID_INDEX=""``, which NCCL reads as index 0."""
    g0 = next(((g, e) for g, e in d.gids if g.index == 0), None)
    what = (f"{g0[0].gid} (RoCE {g0[0].ver})" if g0 else "the link-local RoCE v1 GID")
    out.add("RT404", E, h.name, d.netdev or d.device,
            f'NCCL_IB_GID_INDEX is set but empty: NCCL reads "" as 0 and uses GID 0 of {d.device}, '
            f"{what}, not the RoCE v2 IPv4 GID{' at ' + ','.join(map(str, good)) if good else ''}",
            "unset NCCL_IB_GID_INDEX (NCCL >= 2.21 picks the RoCE v2 GID itself) or set it to the "
            "RoCE v2 IPv4 index from show_gids", [pin, g0[1] if g0 else None])


def _gid_empty_pin_no_table(h: HostObs, pin: Val[str], out: Out) -> None:
    """RT404 without a GID table: ``NCCL_IB_GID_INDEX=""`` is index 0 on every HCA, whatever GID 0 is."""
    out.add("RT404", E, h.name, None,
            'NCCL_IB_GID_INDEX is set but empty: NCCL reads "" as 0 and uses GID 0 of every HCA, the '
            "link-local RoCE v1 GID on a default host, not a RoCE v2 IPv4 GID",
            "unset NCCL_IB_GID_INDEX (NCCL >= 2.21 picks the RoCE v2 GID itself) or set it to the "
            "RoCE v2 IPv4 index from show_gids", [pin])


def _gid_index_problem(entry: tuple[GidEntry, Ev] | None, idx: int) -> str | None:
    """Why GID ``idx`` (its table ``entry``, None when absent) is not a RoCE v2 IPv4 GID; None when it is."""
    if entry is None:
        return f"no GID at index {idx}"
    gid = entry[0]
    if gid.gid.lower().startswith("fe80"):
        return f"GID {idx} is the link-local {gid.gid}"
    if gid.ver.lower() != "v2":
        return f"GID {idx} is RoCE {gid.ver}"
    if not gid.ipv4:
        return f"GID {idx} is an IPv6 RoCE v2 GID"
    return None


def _gid_pinned_index(h: HostObs, d: RdmaObs, pin: Val[str], good: list[int], out: Out) -> None:
    """RT402: the pinned ``NCCL_IB_GID_INDEX`` is absent, link-local, RoCE v1 or IPv6 on this device."""
    if not pin.value.strip().lstrip("-").isdigit() or int(pin.value) < 0:
        return
    idx = int(pin.value)
    entry = next(((g, e) for g, e in d.gids if g.index == idx), None)
    bad = _gid_index_problem(entry, idx)
    if bad:
        out.add("RT402", E, h.name, d.netdev or d.device,
                f"NCCL_IB_GID_INDEX={idx} but on {d.device}: {bad}; its RoCE v2 IPv4 GID is at "
                f"{', '.join(map(str, good)) or 'no index'}",
                "set NCCL_IB_GID_INDEX to the RoCE v2 IPv4 index (or unset it so NCCL selects by "
                "NCCL_IB_ROCE_VERSION_NUM=2)", [pin, entry[1] if entry else d.gid_table])


def _gid_pins_across_hosts(pins: dict[str, Val[str]], v2_index: dict[str, list[int]], out: Out) -> None:
    """RT403: the pinned index differs between hosts, or one pinned index meets RoCE v2 GIDs at different
    indexes (``v2_index``: ``host:device`` → its RoCE v2 IPv4 indexes)."""
    if not pins:
        return
    values = {p.value for p in pins.values()}
    if len(values) > 1:
        out.add("RT403", W, None, None,
                "NCCL_IB_GID_INDEX differs between hosts: "
                + ", ".join(f"{h}={p.value}" for h, p in sorted(pins.items())),
                "use one way of choosing the GID everywhere (unset it, or pin the RoCE v2 IPv4 index each "
                "host actually has)", pins.values())
    firsts = {k: v[0] for k, v in v2_index.items() if v}
    if len(set(firsts.values())) > 1 and len(values) == 1:
        out.add("RT403", W, None, None,
                f"NCCL_IB_GID_INDEX={values.pop()} is pinned, but the RoCE v2 IPv4 GID sits at different "
                "indexes on different hosts/HCAs: "
                + ", ".join(f"{k}={v}" for k, v in sorted(firsts.items())),
                "unset NCCL_IB_GID_INDEX (automatic RoCE v2 selection) or pin it per host",
                list(pins.values()))


def _gid_device(h: HostObs, d: RdmaObs, pin: Val[str] | None, out: Out) -> list[int]:
    """RT401, RT404 and RT402 of one RDMA device (``pin``: the host's NCCL_IB_GID_INDEX); returns the
    indexes of its RoCE v2 IPv4 GIDs."""
    good = sorted(g.index for g, _ in d.gids if g.ver.lower() == "v2" and g.ipv4)
    if not good:
        _gid_no_v2_ipv4(h, d, out)
    if pin is None:
        return good
    if pin.value.strip() == "":
        _gid_empty_pin(h, d, pin, good, out)
    else:
        _gid_pinned_index(h, d, pin, good, out)
    return good


def check_gid(data: AuditData, exp: Expect, out: Out) -> None:
    """RT401 no IPv4 RoCE v2 GID; RT402 pinned index is link-local / v1 / absent; RT403 the RoCE v2 index
    differs between hosts or HCAs while one index is pinned; RT404 ``NCCL_IB_GID_INDEX=""`` (= index 0)."""
    v2_index: dict[str, list[int]] = {}
    pins: dict[str, Val[str]] = {}
    for h in data.hosts.values():
        pin = _pinned_gid(h)
        devs = _gid_devices(h)
        if not devs and (h.rdma or h.env or h.runs):
            out.skip("RT401", h.name, "show_gids (or grep -H '' /sys/class/infiniband/*/ports/*/gids/* "
                                      "/sys/class/infiniband/*/ports/*/gid_attrs/{types,ndevs}/*)")
            if pin is not None and pin.value.strip() == "":
                _gid_empty_pin_no_table(h, pin, out)
        if pin is not None and pin.value.strip() != "":
            pins[h.name] = pin
        for d in devs:
            v2_index[f"{h.name}:{d.device}"] = _gid_device(h, d, pin, out)
    _gid_pins_across_hosts(pins, v2_index, out)


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


@dataclass(frozen=True)
class _PrioSide:
    """One direction (tx or rx) of a NIC: packets on the lossless priorities (``good``), on each lossy
    priority that carried any (``bad``), and the per-priority (packets, counter) split they come from."""

    good: int
    bad: dict[int, int]
    split: dict[int, tuple[int, Val[int]]]

    @classmethod
    def of(cls, split: dict[int, tuple[int, Val[int]]], lossless: set[int]) -> _PrioSide:
        return cls(good=sum(n for p, (n, _) in split.items() if p in lossless),
                   bad={p: n for p, (n, _) in split.items() if p not in lossless and n}, split=split)

    @property
    def total(self) -> int:
        """Packets of this direction on every priority."""
        return self.good + sum(self.bad.values())


@dataclass(frozen=True)
class _NicPrio:
    """A NIC's per-priority packet split (``sides``: ``"tx"``/``"rx"`` → :class:`_PrioSide`) and how to
    name it."""

    h: HostObs
    nic: NicObs
    sides: dict[str, _PrioSide]
    when: str  # "during the capture" (a delta) or "since the counters were cleared"

    @property
    def port(self) -> str | None:
        return None if self.nic.netdev == "-" else self.nic.netdev


def _roce_on_lossy(np_: _NicPrio, exp: Expect, out: Out) -> bool:
    """RT410: the lossless priority carries (almost) nothing while the host is doing RDMA; True if found."""
    lossless = set(exp.lossless_priorities)
    sides, h, port = np_.sides, np_.h, np_.port
    if not all(s.good < (1 - ROCE_SHARE) * s.total for s in sides.values()) or not _rdma_active(h):
        return False
    top = max(((p, n) for s in sides.values() for p, n in s.bad.items()), key=lambda x: x[1])
    evs = [v for s in sides.values() for p, (_, v) in s.split.items() if p == top[0] or p in lossless]
    label = f"{h.name}:{np_.nic.netdev}" if port else f"{h.name} (ethtool -S of an unnamed interface)"
    out.add("RT410", E, h.name, port,
            f"{label} carries its traffic on priority {top[0]} ({top[1]:,} packets "
            f"{np_.when}) and almost none on lossless priority {'/'.join(map(str, sorted(lossless)))}, "
            "while the host runs RDMA: RoCE rides a priority without PFC",
            f"mark RoCE: NCCL_IB_TC={exp.roce_tos} (DSCP {exp.roce_dscp[0]} | ECT), mlnx_qos -i "
            f"{port or '<if>'} --trust dscp, and map DSCP {exp.roce_dscp[0]} to priority "
            f"{exp.roce_priority} on NIC and switch", evs)
    return True


def _directions_differ(np_: _NicPrio, exp: Expect, out: Out) -> None:
    """RT411: one direction on the lossless priority, the other on a lossy one."""
    sides = np_.sides
    if "tx" not in sides or "rx" not in sides or min(s.total for s in sides.values()) < MIN_PACKETS:
        return
    lossless = set(exp.lossless_priorities)
    for a, b_ in (("tx", "rx"), ("rx", "tx")):
        ga, gb, bb = sides[a].good, sides[b_].good, sides[b_].bad
        if ga >= ROCE_SHARE * sides[a].total and sum(bb.values()) > max(gb, 0.5 * ga):
            wrong = max(bb, key=lambda p: bb[p])
            evs = [sides[a].split[p][1] for p in sides[a].split if p in lossless]
            evs.append(sides[b_].split[wrong][1])
            out.add("RT411", E, np_.h.name, np_.port,
                    f"{np_.h.name}:{np_.nic.netdev} {'sends' if a == 'tx' else 'receives'} RoCE on priority "
                    f"{'/'.join(map(str, sorted(lossless)))} ({ga:,} packets {np_.when}) but "
                    f"{'receives' if a == 'tx' else 'sends'} {bb[wrong]:,} on priority {wrong}: the "
                    "two directions are marked differently",
                    "the peer (or a switch re-marking) uses another ToS/DSCP: make NCCL_IB_TC, "
                    "mlnx_qos --trust dscp and the switch DSCP→TC map equal on every node", evs)
            return


def _nic_priorities(h: HostObs, nic: NicObs, exp: Expect, out: Out) -> bool:
    """RT410/RT411 from one NIC's per-priority packet counters; False when it has none."""
    tx, rx = _prio_split(nic, "tx"), _prio_split(nic, "rx")
    if tx is None and rx is None:
        return False
    lossless = set(exp.lossless_priorities)
    sides = {name: _PrioSide.of(split[0], lossless) for name, split in (("tx", tx), ("rx", rx))
             if split is not None}
    if all(s.total < MIN_PACKETS for s in sides.values()):
        return True
    when = "during the capture" if (tx or rx or ({}, False))[1] else "since the counters were cleared"
    np_ = _NicPrio(h, nic, sides, when)
    if not _roce_on_lossy(np_, exp, out):
        _directions_differ(np_, exp, out)
    return True


def _tc_across_nodes(data: AuditData, exp: Expect, out: Out) -> None:
    """RT411: NCCL_IB_TC differs between nodes."""
    tcs = {h.name: v for h in data.hosts.values() if (v := h.nccl_setting("NCCL_IB_TC")) is not None}
    if len({v.value for v in tcs.values()}) > 1:
        out.add("RT411", E, None, None, "NCCL_IB_TC differs between nodes: " +
                ", ".join(f"{h}={v.value}" for h, v in sorted(tcs.items())) +
                "; the nodes mark RoCE differently", f"set NCCL_IB_TC={exp.roce_tos} on every node",
                tcs.values())


def _tos_settings(h: HostObs) -> list[tuple[str, Val[str] | Val[int]]]:
    """(name, value) of the host's RoCE ToS settings that hold a number: NCCL_IB_TC, then each RDMA
    device's traffic_class."""
    sources: list[tuple[str, Val[str] | Val[int] | None]] = [("NCCL_IB_TC", h.nccl_setting("NCCL_IB_TC"))]
    sources += [(f"{d.device} traffic_class", d.traffic_class) for d in h.rdma.values()]
    return [(what, v) for what, v in sources if v is not None and v.value.__str__().strip().isdigit()]


def _nic_classification(h: HostObs, nic: NicObs, exp: Expect, out: Out) -> None:
    """RT410/RT413 from the NIC's own ``mlnx_qos`` state: it trusts another field than the plan/policy
    (``pcp`` where DSCP is expected: untagged RoCE lands on priority 0), or its DSCP map sends a RoCE DSCP
    no captured ToS setting names (those are judged by :func:`_tos_priority`) to a lossy priority."""
    if nic.trust is not None and nic.trust.value.lower() != exp.trust:
        to_zero = exp.trust == "dscp"
        out.add("RT410" if to_zero else "RT413", E, h.name, nic.netdev,
                f"{h.name}:{nic.netdev} trusts {nic.trust.value}, not {exp.trust}"
                + (f": RoCE marked DSCP {exp.roce_dscp[0]} without a VLAN tag is classified to priority 0, "
                   "which has no PFC" if to_zero else ": priorities follow the DSCP map, not the PCP the "
                   "plan classifies by"),
                f"mlnx_qos -i {nic.netdev} --trust {exp.trust}", [nic.trust])
        return
    named = {int(v.value) >> 2 for _, v in _tos_settings(h)}
    lossless = set(exp.lossless_priorities)
    for dscp in exp.roce_dscp:
        got = nic.dscp_to_prio.get(dscp)
        if dscp in named or got is None or got.value in lossless:
            continue
        want = exp.dscp_to_priority.get(dscp, exp.roce_priority)
        out.add("RT413" if got.value else "RT410", E, h.name, nic.netdev,
                f"{h.name}:{nic.netdev} maps RoCE DSCP {dscp} to priority {got.value}, which has no PFC "
                f"(lossless: {','.join(map(str, sorted(lossless)))})",
                f"mlnx_qos -i {nic.netdev} --dscp2prio set,{dscp},{want}", [got])


def _tos_priority(h: HostObs, exp: Expect, out: Out) -> None:
    """RT413 (RT410 for priority 0): NCCL_IB_TC or an RDMA device's traffic_class maps to a lossy priority,
    through the NIC's DSCP map when captured, else the expected one."""
    lossless = set(exp.lossless_priorities)
    nic_maps = [n.dscp_to_prio for n in h.nics.values() if n.dscp_to_prio]
    for what, v in _tos_settings(h):
        tos = int(v.value)
        dscp = tos >> 2
        mapped = nic_maps[0][dscp] if nic_maps and dscp in nic_maps[0] else None
        prio = mapped.value if mapped is not None else exp.dscp_to_priority.get(dscp, dscp >> 3)
        if prio in lossless:
            continue
        out.add("RT413" if prio else "RT410", E, h.name, None,
                f"{what}={tos} is DSCP {dscp}, which maps to priority {prio}"
                f"{' (the default class)' if prio == 0 else ''}: RoCE would ride a priority without PFC",
                f"set {what.split()[0] if what.startswith('NCCL') else 'the RoCE ToS'} to {exp.roce_tos} "
                f"(DSCP {exp.roce_dscp[0]} → priority {exp.roce_priority})",
                [v] + ([mapped] if mapped is not None else []))


def _port_queues(sw: SwitchObs, port: str) -> dict[int, tuple[int, int, Val[int]]]:
    """Queue → (unicast packets sent, dropped (0 when not captured), the tx counter) of a switch port."""
    qs: dict[int, tuple[int, int, Val[int]]] = {}
    for name, v in sw.ports[port].items():
        if name.endswith("_tx_pkts") and name[1:-8].isdigit():
            q = int(name[1:-8])
            tx = sw.counter(port, name)[0]  # type: ignore[index]
            dr = sw.counter(port, f"q{q}_drop_pkts")
            qs[q] = (tx, dr[0] if dr else 0, v)
    return qs


def _lossy_queue_bulk(sw: SwitchObs, port: str, exp: Expect, out: Out) -> None:
    """RT412: a queue other than the lossless one carries (and drops) a large share of a port's unicast."""
    lq = set(exp.lossless_queues)
    qs = _port_queues(sw, port)
    total = sum(t for t, _, _ in qs.values())
    if total < MIN_PACKETS:
        return
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


def check_priority(data: AuditData, exp: Expect, out: Out) -> None:
    """RT410 RoCE on priority 0 (or another lossy one); RT411 marking differs between directions or nodes;
    RT412 a switch queue other than the lossless one carries and drops the bulk; RT413 RoCE ToS maps to a
    lossy priority."""
    any_prio = False
    for h in data.hosts.values():
        for nic in h.nics.values():
            any_prio = _nic_priorities(h, nic, exp, out) or any_prio
    if not any_prio and data.hosts:
        out.skip("RT410", None, "ethtool -S <if> (rx_prioN_packets / tx_prioN_packets) on the hosts")
    _tc_across_nodes(data, exp, out)
    for h in data.hosts.values():
        _tos_priority(h, exp, out)
        for nic in h.nics.values():
            _nic_classification(h, nic, exp, out)
    for sw in data.switches.values():
        for port in sw.ports:
            _lossy_queue_bulk(sw, port, exp, out)


# ----------------------------------------------------------------------------------------------- PFC
def _pfc_nic(h: HostObs, nic: NicObs, exp: Expect, out: Out) -> None:
    """RT420 (``mlnx_qos`` PFC row), RT421 (NIC sends pause) and RT424 (NIC discards, PFC silent) of one
    NIC."""
    _nic_pfc_enabled(h, nic, exp, out)
    _nic_pause(h, nic, exp, out)
    _nic_discards(h, nic, exp, out)


def _nic_pfc_enabled(h: HostObs, nic: NicObs, exp: Expect, out: Out) -> None:
    lossless = sorted(exp.lossless_priorities)
    if nic.pfc_enabled is not None:
        missing = [p for p in lossless if p not in nic.pfc_enabled.value]
        if missing:
            out.add("RT420", E, h.name, nic.netdev,
                    f"{h.name}:{nic.netdev} has PFC on priority "
                    f"{','.join(map(str, nic.pfc_enabled.value)) or 'none'}, not on RoCE priority "
                    f"{','.join(map(str, missing))}",
                    f"mlnx_qos -i {nic.netdev} --pfc " +
                    ",".join("1" if p in lossless else "0" for p in range(8)), [nic.pfc_enabled])


def _nic_pause(h: HostObs, nic: NicObs, exp: Expect, out: Out) -> None:
    for p in sorted(exp.lossless_priorities):
        tx = nic.delta(f"tx_prio{p}_pause")
        if tx and tx[0] > 0:
            out.add("RT421", W, h.name, nic.netdev,
                    f"{h.name}:{nic.netdev} sent {tx[0]:,} PFC pause frames on priority {p} "
                    f"{'during the capture' if tx[1] else 'since the counters were cleared'}: its receive "
                    "buffer fills — the host cannot drain what arrives",
                    "look at the host before the fabric: PCIe width/speed and errors, GPU↔NIC NUMA/PCIe "
                    "placement (nvidia-smi topo -m), GPUDirect RDMA, CPU affinity of the receiving ranks",
                    [nic.ethtool[f"tx_prio{p}_pause"]])


def _discard_hits(nic: NicObs, lossless: list[int]) -> list[tuple[str, int]]:
    """(counter, count) of the NIC's receive discards on the lossless priorities that rose (or are > 0)."""
    names = ("rx_discards_phy", *(f"rx_prio{p}_discards" for p in lossless), *(f"rx_prio{p}_buf_discard"
                                                                                 for p in lossless))
    return [(k, d[0]) for k in names if (d := nic.delta(k)) is not None and d[0] > 0]


def _nic_discards(h: HostObs, nic: NicObs, exp: Expect, out: Out) -> None:
    lossless = sorted(exp.lossless_priorities)
    hits = _discard_hits(nic, lossless)
    if not hits:
        return
    pauses = [nic.delta(f"{d}_prio{p}_pause") for d in ("rx", "tx") for p in lossless]
    if any(x is None for x in pauses):
        out.skip("RT424", h.name, f"ethtool -S {nic.netdev} with rx_prio{lossless[0]}_pause and "
                                  f"tx_prio{lossless[0]}_pause (the capture filtered them out)")
    elif all(x[0] == 0 for x in pauses if x):
        out.add("RT424", E, h.name, nic.netdev,
                f"{h.name}:{nic.netdev} discarded {', '.join(f'{k} {n:,}' for k, n in hits)} while "
                f"no PFC pause was sent or received on priority {','.join(map(str, lossless))}: the "
                "lossless class is not protected on this hop",
                f"enable PFC on priority {exp.roce_priority} on the NIC (mlnx_qos --pfc) and on the "
                "switch port facing it; check trust dscp so RoCE lands on that priority",
                [nic.ethtool[k] for k, _ in hits])


# ------------------------------------------------------------------------------ global (802.3x) pause
def _prios(prios: tuple[int, ...]) -> str:
    return ",".join(map(str, prios))


def _pause_on(nic: NicObs) -> list[str]:
    """The directions (``rx``, ``tx``) ``ethtool -a`` showed global pause on in."""
    return [d for d in ("rx", "tx") if d in nic.pause and nic.pause[d].value == "on"]


def _pause_finding(h: HostObs, nic: NicObs, on: list[str], why: str, out: Out,
                   pfc: Val[tuple[int, ...]] | None) -> None:
    """RT428 on ``nic``, global pause on in the directions ``on``: an error, a warning when
    autonegotiation is on and its result (``RX/TX negotiated``) says pause does not run now."""
    p = nic.pause
    autoneg = p.get("autoneg") is not None and p["autoneg"].value == "on"
    negotiated = [p[k] for k in ("rx_negotiated", "tx_negotiated") if k in p]
    idle = autoneg and bool(negotiated) and all(v.value == "off" for v in negotiated)
    frames = nic.pause_frames
    counted = (f"; {', '.join(f'{k} {v.value:,}' for k, v in sorted(frames.items()))} since the counters "
               "were cleared") if frames else ""
    now = (" (advertised only: autonegotiation left it off on this link, until a link partner that "
           "advertises pause comes up)") if idle else ""
    out.add("RT428", W if idle else E, h.name, nic.netdev,
            f"{h.name}:{nic.netdev} has global 802.3x pause on ({', '.join(d.upper() + ' on' for d in on)})"
            f"{now} while {why}: a PAUSE frame stops every priority of the link, lossy ones too, so one "
            f"slow receiver stalls all traffic instead of only the lossless class{counted}",
            f"ethtool -A {nic.netdev} {'autoneg off ' if autoneg else ''}rx off tx off (NVIDIA's PFC "
            "procedure turns global pause off first; `roce-tune apply` does, and its systemd unit again "
            "after a reboot or driver reload)",
            [*(p[d] for d in on), p["autoneg"] if autoneg else None, *negotiated, *frames.values(), pfc])


def _nic_global_pause(h: HostObs, netdev: str, why: str, out: Out,
                      pfc: Val[tuple[int, ...]] | None = None) -> None:
    """RT428 of ``h``'s ``netdev``, a port with PFC (``why`` says who says so): global pause must be off in
    both directions. Not checked (never "off") when ``ethtool -a`` was not captured, failed, or left RX or
    TX unread (``n/a``) while neither is on."""
    nic = h.nics.get(netdev)
    if nic is None or not nic.pause:
        err = nic.pause_error if nic is not None else None
        said = f" (it said `{err.value}` at {err.ev}: the driver gave no pause parameters)" if err else ""
        out.skip("RT428", h.name, f"ethtool -a {netdev}{said}")
        return
    on = _pause_on(nic)
    if on:
        _pause_finding(h, nic, on, why, out, pfc)
    elif any(d not in nic.pause or nic.pause[d].value != "off" for d in ("rx", "tx")):
        read = ", ".join(f"{d.upper()}: {nic.pause[d].value if d in nic.pause else 'missing'}"
                         for d in ("rx", "tx"))
        out.skip("RT428", h.name, f"ethtool -a {netdev} with RX: and TX: on or off (read {read})")


def _global_pause(data: AuditData, exp: Expect, out: Out) -> None:
    """RT428: global (IEEE 802.3x) pause on a NIC port with PFC — with a plan, every planned NIC with PFC on
    a priority; without one, every NIC whose ``mlnx_qos`` shows PFC on (a NIC with pause on whose PFC was
    not captured is not checked). A PAUSE frame stops the whole link; NVIDIA's PFC setup turns global pause
    off before enabling PFC (NVIDIA "Flow Control", ConnectX-4 and above:
    https://docs.nvidia.com/networking/display/freebsdv371/Flow+Control); ``ethtool -a`` output as ethtool
    prints it (``netlink/pause.c``)."""
    if not exp.from_plan:
        _global_pause_without_plan(data, out)
        return
    for (host, netdev), prios in sorted(exp.nic_pfc.items()):
        if prios and host in data.hosts:
            _nic_global_pause(data.hosts[host], netdev, f"the plan puts PFC on priority {_prios(prios)}", out)


def _global_pause_without_plan(data: AuditData, out: Out) -> None:
    """RT428 without a plan: the NICs whose ``mlnx_qos`` PFC row has a priority on."""
    for h in data.hosts.values():
        for nic in list(h.nics.values()):
            pfc = nic.pfc_enabled
            if pfc is not None and pfc.value:
                _nic_global_pause(h, nic.netdev, f"mlnx_qos shows PFC on priority {_prios(pfc.value)}", out,
                                  pfc)
            elif pfc is None and _pause_on(nic):
                out.skip("RT428", h.name, f"mlnx_qos -i {nic.netdev} (global pause is on: has the port PFC?)")
    read = [n for h in data.hosts.values() for n in h.nics.values()
            if n.pfc_enabled is not None or n.pause or n.pause_error is not None]
    if data.hosts and not read:
        out.skip("RT428", None, "ethtool -a <if> (global pause) and mlnx_qos -i <if> (PFC) on the hosts")


#: PFC rx/tx words that mean on in ``nv show qos roce`` (``enabled``) and per port (``yes``)
_PFC_ON_WORDS = ("enabled", "on", "true", "yes")


def _pfc_switch_roce(sw: SwitchObs, exp: Expect, out: Out) -> None:
    """RT420 from the RoCE profile a switch reports (``nv show qos roce``: pfc-priority, rx/tx enabled; the
    per-port ``nv show interface <swp> qos roce status`` says ``yes`` where the global view says
    ``enabled``, CL 5.14/5.16 RoCE page "Verify RoCE Configuration")."""
    lossless = sorted(exp.lossless_priorities)
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
        if key.endswith(("rx-enabled", "tx-enabled")) and v.value.lower() not in _PFC_ON_WORDS:
            out.add("RT420", E, sw.name, key.split(":")[0] if ":" in key else None,
                    f"{sw.name} PFC {key.rsplit(':', 1)[-1]} is {v.value}", "enable PFC rx and tx for RoCE",
                    [v])


def watchdog_defects(sw: SwitchObs, exp: Expect) -> tuple[list[str], list[str]]:
    """Known PFC-watchdog defects of the switch's platform (its contract's ``known_defects`` with
    ``needs_watchdog``) that a storm/restore flap may be: (matching, possible). Matching = the plan's
    ASIC/OS release is in the defect's scope; possible = no plan to tell (the defect names its scope)."""
    from roce_tune.platforms import platform

    if sw.platform is None:
        return [], []
    try:
        defects = [d for d in platform(sw.platform).capabilities.known_defects if d.needs_watchdog]
    except KeyError:
        return [], []
    plan_sw = exp.switches.get(sw.name)
    match, maybe = [], []
    for d in defects:
        text = f"{d.rule} ({d.source}): {d.title}"
        if plan_sw is None:
            scope = f"ASIC {'/'.join(d.asics)}" if d.asics else "every ASIC"
            maybe.append(f"{text} — affects "
                         f"{scope}{'; releases ' + ', '.join(d.os_releases) if d.os_releases else ''}")
        elif d.affects(plan_sw):
            match.append(f"{text} — {sw.name} is {plan_sw.asic}, {plan_sw.os_version or 'release not given'}")
    return match, maybe


def _watchdog_storm(sw: SwitchObs, port: str, q: int, exp: Expect, out: Out) -> None:
    """RT423: a PFC watchdog storm on a lossless queue; flapping matched with the known-defect table."""
    det = sw.counter(port, f"q{q}_wd_storm_detected")
    if not det or det[0] <= 0:
        return
    cs = sw.ports[port]
    res = sw.counter(port, f"q{q}_wd_storm_restored")
    dropped = sum(d[0] for d in (sw.counter(port, f"q{q}_wd_{x}_drop") for x in ("tx", "rx")) if d)
    flapping = det[0] >= 2 and res is not None and res[0] >= 1
    note, fix = "", ("find the device pausing this port without draining (a stalled NIC or host with PFC "
                     "on); the watchdog only hides it. Compare with the platform's known PFC-watchdog "
                     "defects before raising detection/restoration times")
    if flapping:
        match, maybe = watchdog_defects(sw, exp)
        if match:
            note = "; the flapping matches known defect " + "; ".join(match)
            fix = "see the defect's report for a fixed release; until then " + fix[0].lower() + fix[1:]
        elif maybe:
            note = "; it may be known defect " + "; ".join(maybe) + " (give the inventory to match the ASIC)"
    out.add("RT423", E, sw.name, port,
            f"{sw.name}:{port} queue {q}: PFC watchdog storm detected {det[0]} time(s), restored "
            f"{res[0] if res else '?'}{' — storm/restore flapping' if flapping else ''}; "
            f"{dropped:,} lossless packets dropped by the watchdog{note}", fix,
            [cs.get(f"q{q}_wd_storm_detected")] + [cs.get(f"q{q}_wd_{d}_drop") for d in ("tx", "rx")])


def _lossless_drops(sw: SwitchObs, port: str, q: int, exp: Expect, out: Out) -> None:
    """RT424: drops on a lossless queue while no PFC frame was sent or received."""
    lossless = sorted(exp.lossless_priorities)
    dr = sw.counter(port, f"q{q}_drop_pkts")
    if not dr or dr[0] <= 0:
        return
    cs = sw.ports[port]
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
                [cs.get(f"q{q}_drop_pkts")] + [cs.get(f"pfc_{d}_prio{p}") for d in ("rx",
                                                                                    "tx") for p in lossless])


def _pause_agreement(data: AuditData, exp: Expect, out: Out) -> None:
    """RT422: switch and NIC pause counts over the same interval (needs the plan's cabling, two snapshots)."""
    if data.hosts and data.switches and not exp.nic_switch_port:
        out.skip("RT422", None,
                 "an inventory or plan (which switch port faces which NIC) to compare pause counts")
    for (host, netdev), where in sorted(exp.nic_switch_port.items()):
        h, (swname, _, port) = data.hosts.get(host), where.partition(":")
        sw = data.switches.get(swname)
        if h is None or sw is None or netdev not in h.nics:
            continue
        nic = h.nics[netdev]
        for p in sorted(exp.lossless_priorities):
            rx, tx = nic.delta(f"rx_prio{p}_pause"), sw.counter(port, f"pfc_tx_prio{p}")
            if rx is None or tx is None or not (rx[1] and tx[1]):
                out.skip("RT422", host, f"ethtool -S {netdev} and the switch's PFC counters on {where}, each "
                                        "captured before and after the same interval")
                continue
            if abs(rx[0] - tx[0]) > max(100, 0.1 * max(rx[0], tx[0])):
                out.add("RT422", W, host, netdev,
                        f"{where} sent {tx[0]:,} PFC frames on priority {p} to {host}:{netdev}, which "
                        f"counted {rx[0]:,} received over the same interval: the two counter sources "
                        "disagree",
                        "check the cabling matches the inventory, that both sides count the same priority, "
                        "and that the NIC honours PFC (mlnx_qos --pfc); a NIC that ignores pause loses "
                        "packets",
                        [nic.ethtool[f"rx_prio{p}_pause"], sw.ports[port][f"pfc_tx_prio{p}"]])


def _received_packets(nic: NicObs | None) -> tuple[int, bool] | None:
    """(packets the NIC received, whether that is a difference of two snapshots) or None when not captured."""
    if nic is None:
        return None
    parts = [x for p in range(8) if (x := nic.delta(f"rx_prio{p}_packets"))]
    if parts:
        return sum(x[0] for x in parts), any(x[1] for x in parts)
    return nic.delta("rx_packets_phy")


_LOSS_FIX = ("make PFC cover the RoCE priority end to end (NIC --pfc, switch pfc_enable, DSCP maps) and "
             "check headroom; RoCE on a lossy priority (RT410/RT411) or ECN not marking (RT430) explain loss "
             "too")


def _per_million(n: int, pk: tuple[int, bool] | None, loss_is_delta: bool) -> float | str:
    """``n`` loss events per million of the received packets ``pk`` (count, is a difference), or why there is
    no rate: no count, a count over another interval than the loss counters', no packet."""
    if pk is None:
        return "the packet count was not captured"
    if pk[1] != loss_is_delta:
        return ("the packet count (ethtool -S) is not over the same interval (one was captured before and "
                "after, the other once)")
    return n / pk[0] * 1e6 if pk[0] else "the NIC counted no received packet"


def _device_loss(h: HostObs, d: RdmaObs, out: Out) -> None:
    """RT425 of one RDMA device: its loss-recovery counters per million received packets, when the NIC's
    packet count covers the same interval (both differences, or both totals); else without a rate."""
    loss = {k: x for k in LOSS_COUNTERS if (x := d.delta(k)) is not None and x[0] > 0}
    if not loss:
        return
    n = sum(x[0] for x in loss.values())
    rate = _per_million(n, _received_packets(_nic_of(h, d)), any(x[1] for x in loss.values()))
    detail = ", ".join(f"{k} {x[0]:,}" for k, x in loss.items())
    evs, where = [d.hw[k] for k in loss], d.netdev or d.device
    if isinstance(rate, float):
        if rate > LOSS_PER_MILLION:
            out.add("RT425", E, h.name, where, f"{h.name}:{d.device} recovered from loss {n:,} times "
                    f"({rate:.1f} per million received packets: {detail})", _LOSS_FIX, evs)
        return
    out.add("RT425", E if n >= LOSS_NO_RATE_ERROR else W, h.name, where,
            f"{h.name}:{d.device} recovered from loss {n:,} times ({detail}); {rate}, so no rate per packet",
            _LOSS_FIX + " (capture ethtool -S and the hw_counters together, before and after, for a rate)",
            evs)


def _loss_recovery(data: AuditData, out: Out) -> None:
    """RT425: RoCE loss recovery per million received packets (no rate invented without a packet count over
    the loss counters' interval)."""
    for h in data.hosts.values():
        for d in h.rdma.values():
            _device_loss(h, d, out)

def check_pfc(data: AuditData, exp: Expect, out: Out) -> None:
    """RT420 a hop without PFC on the RoCE priority; RT421 NIC sends pause (cannot drain); RT422 switch and
    NIC pause counts disagree; RT423 watchdog storm flapping (matched with the platform's known defects);
    RT424 discards on a lossless class while PFC is silent; RT425 RoCE loss recovery; RT428 global (802.3x)
    pause on a NIC port with PFC."""
    qos_seen = False
    for h in data.hosts.values():
        for nic in h.nics.values():
            qos_seen = qos_seen or nic.pfc_enabled is not None
            _pfc_nic(h, nic, exp, out)
    if data.hosts and not qos_seen:
        out.skip("RT420", None, "mlnx_qos -i <if> on the hosts (PFC enabled per priority)")
    for sw in data.switches.values():
        _pfc_switch_roce(sw, exp, out)
        for port in sw.ports:
            for q in sorted(exp.lossless_queues):
                _watchdog_storm(sw, port, q, exp, out)
                _lossless_drops(sw, port, q, exp, out)
    _pause_agreement(data, exp, out)
    _loss_recovery(data, out)
    _global_pause(data, exp, out)


# ---------------------------------------------------------------------------------------- ECN / DCQCN
def _pauses(nic: NicObs | None, lossless: list[int]) -> tuple[int, bool, list[Val[int] | None]]:
    """(pause frames on the lossless priorities, whether any pause counter was read, the lines of those
    that fired) of a NIC."""
    if nic is None:
        return 0, False, []
    got = {n: x for di in ("rx", "tx") for p in lossless if (x := nic.delta(n := f"{di}_prio{p}_pause"))}
    return (sum(x[0] for x in got.values()), bool(got),
            [nic.ethtool.get(n) for n, x in got.items() if x[0] > 0])


def _no_ce_marks(h: HostObs, d: RdmaObs, exp: Expect, out: Out) -> None:
    """RT430: no ECN-marked RoCE packet arrived while PFC fired or loss shows congestion."""
    marked = d.delta("np_ecn_marked_roce_packets")
    if marked is None or marked[0] != 0:
        return
    loss = {k: x[0] for k in LOSS_COUNTERS if (x := d.delta(k)) is not None and x[0] > 0}
    paused, read, fired = _pauses(_nic_of(h, d), sorted(exp.lossless_priorities))
    if not (loss or paused):
        return
    why = (f"PFC paused {paused:,} times" if paused else
           "loss recovery (" + ", ".join(f"{k} {v:,}" for k, v in loss.items()) + ")")
    quiet = "" if paused else " while PFC stayed quiet" if read else (" and PFC pause counters were not "
                                                                      "captured")
    out.add("RT430", E if paused else W, h.name, d.netdev or d.device,
            f"{h.name}:{d.device} received no ECN-marked RoCE packet (np_ecn_marked_roce_packets 0) "
            f"under congestion — {why}{quiet}: the switch does not mark the queue RoCE uses",
            f"enable ECN (WRED with ecn) on lossless queue {exp.lossless_queues[0]} with Kmin/Kmax below "
            "the PFC trigger, and check RoCE is sent ECN-capable (ToS with ECT) on the lossless priority",
            [d.hw["np_ecn_marked_roce_packets"], *(d.hw[k] for k in loss), *fired])


def _receiver_shortage(h: HostObs, d: RdmaObs, out: Out) -> None:
    """RT433: out_of_buffer / RNR — the receiver had nothing posted (host side, not fabric loss)."""
    for k in ("out_of_buffer", "rnr_nak_retry_err"):
        x = d.delta(k)
        if x and x[0] > 0:
            out.add("RT433", W, h.name, d.netdev or d.device,
                    f"{h.name}:{d.device} {k} {x[0]:,}: the receiver had no receive buffer posted "
                    "(a host-side shortage), not packets lost in the fabric",
                    "no PFC/ECN change fixes this: check the application posts receives in time (RNR "
                    "retry/timeout, receive queue depth, CPU starvation of the receiving process)", [d.hw[k]])


def _cnps_handled(data: AuditData, exp: Expect, out: Out) -> None:
    """RT432: CNPs sent by receivers but (almost) none handled by the captured senders."""
    sent = [(h.name, x[0], d.hw["np_cnp_sent"]) for h in data.hosts.values() for d in h.rdma.values()
            if (x := d.delta("np_cnp_sent")) is not None and x[0] > 0]
    handled = [(h.name, x[0], d.hw["rp_cnp_handled"]) for h in data.hosts.values() for d in h.rdma.values()
               if (x := d.delta("rp_cnp_handled")) is not None]
    total_sent = sum(n for _, n, _ in sent)
    if total_sent < 100:
        return
    if not handled:
        out.skip("RT432", None, "rp_cnp_handled from the sending hosts' hw_counters "
                                "(grep -H '' /sys/class/infiniband/*/ports/*/hw_counters/*)")
        return
    got = sum(n for _, n, _ in handled)
    if got < 0.01 * total_sent:
        out.add("RT432", E, None, None,
                f"receivers sent {total_sent:,} CNPs but the captured senders "
                f"({', '.join(sorted({h for h, _, _ in handled}))}) handled {got:,}: the reaction point is "
                "not cutting rates",
                f"enable the DCQCN reaction point on priority {exp.roce_priority} "
                f"(/sys/class/net/<if>/ecn/roce_rp/enable/{exp.roce_priority} = 1) and check CNPs travel on "
                f"priority {exp.cnp_priority}", [v for _, _, v in sent + handled])


def _dcqcn_sysfs(data: AuditData, exp: Expect, out: Out) -> None:
    """RT432: the DCQCN reaction/notification point is off on the RoCE priority (sysfs ``ecn/…/enable``)."""
    for h in data.hosts.values():
        for nic in h.nics.values():
            for side in ("roce_rp", "roce_np"):
                v = nic.ecn_sysfs.get(f"{side}/enable/{exp.roce_priority}")
                if v is not None and v.value == 0:
                    out.add("RT432", E, h.name, nic.netdev,
                            f"{h.name}:{nic.netdev} DCQCN "
                            f"{'reaction' if side == 'roce_rp' else 'notification'} point is off on priority "
                            f"{exp.roce_priority} ({side}/enable/{exp.roce_priority} = 0)",
                            f"echo 1 > /sys/class/net/{nic.netdev}/ecn/{side}/enable/{exp.roce_priority}",
                            [v])


def _cnp_marking(data: AuditData, exp: Expect, out: Out) -> None:
    """RT435: the NIC's DCQCN notification point marks its CNPs with another DSCP or 802.1p priority than
    the plan's (or the policy's) ``cnp_dscp`` / ``cnp_priority`` (sysfs ``ecn/roce_np/cnp_dscp``,
    ``ecn/roce_np/cnp_802p_prio``; MLNX_OFED "Explicit Congestion Notification (ECN)",
    https://docs.nvidia.com/networking/display/mlnxofedv24103250lts/explicit+congestion+notification+(ecn)):
    the switches classify CNPs by that marking, so they leave the CNP queue."""
    for h in data.hosts.values():
        for nic in h.nics.values():
            want_dscp, want_prio = exp.nic_cnp.get((h.name, nic.netdev), (exp.cnp_dscp, exp.cnp_priority))
            for knob, what, want in (("cnp_dscp", "DSCP", want_dscp),
                                     ("cnp_802p_prio", "priority", want_prio)):
                v = nic.ecn_sysfs.get(f"roce_np/{knob}")
                if v is None or v.value == want:
                    continue
                out.add("RT435", E, h.name, nic.netdev,
                        f"{h.name}:{nic.netdev} sends CNPs with {what} {v.value} (roce_np/{knob}), not the "
                        f"{exp.source}'s CNP {what} {want}: the switches queue them with other traffic, not "
                        f"as CNPs, so congestion notifications are delayed or dropped",
                        f"echo {want} > /sys/class/net/{nic.netdev}/ecn/roce_np/{knob} (or apply the plan)",
                        [v])


def _switch_roce_ecn(sw: SwitchObs, exp: Expect, out: Out) -> None:
    """RT431 from the RoCE profile a switch reports (``nv show qos roce``: congestion mode, ECN TCs)."""
    mode = sw.roce.get("congestion-mode")
    tcs = sw.roce.get("enabled-tc")
    if mode is not None and "ecn" not in mode.value.lower():
        out.add("RT431", E, sw.name, None, f"{sw.name} congestion-control mode is {mode.value}, not ECN",
                "nv set qos congestion-control default-global … ecn enable", [mode])
    if tcs is None:
        return
    lossless = sorted(exp.lossless_priorities)
    enabled = {int(x) for x in tcs.value.split(",") if x.strip().isdigit()}
    want = {sw.sp_to_tc[p].value if p in sw.sp_to_tc else p for p in lossless}
    missing = sorted(want - enabled)
    if missing:
        out.add("RT431", E, sw.name, None,
                f"{sw.name} marks ECN on traffic-class {tcs.value}, not on lossless TC "
                f"{','.join(map(str, missing))}",
                f"nv set qos congestion-control default-global traffic-class {missing[0]} ecn enable",
                [tcs] + [sw.sp_to_tc.get(p) for p in lossless])


def check_ecn(data: AuditData, exp: Expect, out: Out) -> None:
    """RT430 no CE marks under congestion; RT431 ECN/WRED not on the lossless queue (the switch's RoCE
    profile; the running configuration's is :mod:`.running`); RT432 CNPs sent but not handled, or DCQCN off;
    RT433 RNR / out_of_buffer (receiver shortage, not fabric loss); RT435 CNP DSCP/priority not the plan's."""
    for h in data.hosts.values():
        for d in h.rdma.values():
            _no_ce_marks(h, d, exp, out)
            _receiver_shortage(h, d, out)
    _cnps_handled(data, exp, out)
    _dcqcn_sysfs(data, exp, out)
    _cnp_marking(data, exp, out)
    for sw in data.switches.values():
        _switch_roce_ecn(sw, exp, out)
    if data.switches and not any(s.roce or s.running for s in data.switches.values()):
        out.skip("RT431", None,
                 "the switch QoS configuration: its running configuration (show running-config, "
                                "show runningconfiguration all, show configuration | display set, nv config "
                                "show -o commands) or nv show qos roce")


# ----------------------------------------------------------------------------------------------- MTU
def _active_mtu_below_policy(h: HostObs, d: RdmaObs, exp: Expect, out: Out) -> None:
    """RT440 without the netdev MTU: the RoCE active MTU is below the expected one."""
    if d.active_mtu is not None and d.active_mtu.value < exp.roce_mtu:
        out.add("RT440", E, h.name, d.device,
                f"{h.name}:{d.device} RoCE active MTU {d.active_mtu.value} is below {exp.roce_mtu} "
                f"({exp.source})", f"raise the netdev MTU to {exp.host_mtu} (active MTU follows it)",
                [d.active_mtu])


def _mtu_problems(h: HostObs, nic: NicObs, mtu: int, d: RdmaObs, exp: Expect) -> list[str]:
    """What is wrong with the netdev MTU ``mtu`` of ``nic`` and the active MTU of its RDMA device ``d``."""
    msgs = []
    want_active = roce_active_mtu(mtu)
    if mtu < exp.host_mtu_by_nic.get((h.name, nic.netdev), exp.host_mtu):
        msgs.append(f"netdev MTU {mtu} is below {exp.host_mtu} ({exp.source})")
    if d.active_mtu is not None and want_active is not None and d.active_mtu.value < want_active:
        msgs.append(f"RoCE active MTU {d.active_mtu.value} is below the {want_active} its netdev MTU "
                    f"{mtu} allows (the link partner or port is at a lower MTU)")
    return msgs


def _device_mtu(h: HostObs, d: RdmaObs, exp: Expect, out: Out) -> None:
    """RT440: the netdev MTU, the RoCE active MTU of RDMA device ``d`` and the policy disagree."""
    nic = _nic_of(h, d)
    if nic is None or nic.mtu is None:
        _active_mtu_below_policy(h, d, exp, out)
        return
    msgs = _mtu_problems(h, nic, nic.mtu.value, d, exp)
    if msgs:
        out.add("RT440", E, h.name, nic.netdev, f"{h.name}:{nic.netdev}: " + "; ".join(msgs),
                f"ip link set dev {nic.netdev} mtu {exp.host_mtu}; the switch port MTU must be ≥ it "
                f"({exp.switch_mtu}); RoCE active MTU = largest IB MTU ≤ netdev MTU − 96",
                [nic.mtu, d.active_mtu])


def _roce_netdev_mtus(h: HostObs) -> dict[str, Val[int]]:
    """``host:netdev`` → MTU of the host's netdevs that look RoCE-related (counters, PFC or an RDMA
    device)."""
    return {f"{h.name}:{nic.netdev}": nic.mtu for nic in h.nics.values()
            if nic.mtu is not None and (nic.ethtool or nic.pfc_enabled or any(d.netdev == nic.netdev
                                                                            for d in h.rdma.values()))}


def _mtu_across_nodes(label: str, by_host: dict[str, Val[int]], exp: Expect, out: Out) -> None:
    """RT441: the MTU ``label`` (``host:port`` → value) differs between hosts."""
    if len({v.value for v in by_host.values()}) <= 1 or len({k.split(":")[0] for k in by_host}) <= 1:
        return
    top = max(v.value for v in by_host.values())
    low = {k: v for k, v in by_host.items() if v.value < top}
    out.add("RT441", W, None, None,
            f"{label} differs across nodes: "
            + ", ".join(f"{k}={v.value}" for k, v in sorted(by_host.items()))
            + f"; a connection runs at the smaller end ({', '.join(sorted(low))})",
            f"set the same MTU on every node ({exp.host_mtu} netdev, {exp.roce_mtu} RoCE)", low.values())


def check_mtu(data: AuditData, exp: Expect, out: Out) -> None:
    """RT440 netdev MTU, RoCE active MTU and the policy disagree on a host; RT441 MTUs differ across nodes."""
    actives: dict[str, Val[int]] = {}
    netdevs: dict[str, Val[int]] = {}
    for h in data.hosts.values():
        for d in _eth_devs(h):
            if d.active_mtu is not None:
                actives[f"{h.name}:{d.device}"] = d.active_mtu
            _device_mtu(h, d, exp, out)
        netdevs.update(_roce_netdev_mtus(h))
    for label, vals in (("RoCE active MTU", actives), ("netdev MTU", netdevs)):
        _mtu_across_nodes(label, vals, exp, out)
    if data.hosts and not actives:
        out.skip("RT440", None, "ibv_devinfo -v (active_mtu) and ip -d link (netdev MTU) on the hosts")


# ----------------------------------------------------------------------------------------------- ECE
def _version_tuple(v: str) -> tuple[int, ...]:
    return tuple(int(x) for x in v.split("-")[0].split(".")[:3] if x.isdigit())


def _ucx_ece(h: HostObs) -> Val[str] | None:
    return h.ucx.get("UCX_IB_ECE") or h.ucx.get("UCX_RC_ECE")


def _negotiates_ece(h: HostObs) -> bool:
    """NCCL ≥ 2.22 without ``NCCL_IB_ECE_ENABLE=0``, or UCX with ECE not switched off."""
    ver = h.nccl_info.get("version")
    ece = h.nccl_setting("NCCL_IB_ECE_ENABLE")
    ucx = _ucx_ece(h)
    if ver is not None and _version_tuple(ver.value) >= (2, 22) and (ece is None or ece.value != "0"):
        return True
    return ucx is not None and ucx.value.lower() not in ("0", "n", "no", "off", "false")


def check_ece(data: AuditData, exp: Expect, out: Out) -> None:
    """RT450: NCCL ≥ 2.22 (or UCX RC) negotiates ECE by default; with firmware that differs across hosts the
    negotiated congestion-control options can differ per connection."""
    fws = {h.name: d.fw_ver for h in data.hosts.values() for d in h.rdma.values() if d.fw_ver is not None}
    for h in data.hosts.values():
        if not _negotiates_ece(h):
            continue
        ver = h.nccl_info.get("version")
        if len({v.value for v in fws.values()}) > 1:
            out.add("RT450", W, h.name, None,
                    f"{h.name} negotiates ECE ({'NCCL ' + ver.value if ver else 'UCX'}) while NIC firmware "
                    "differs across hosts (" + ", ".join(f"{k} {v.value}" for k,
                                                         v in sorted(fws.items())) + "): the "
                    "congestion-control options each connection ends up with can differ",
                    "align firmware, or set NCCL_IB_ECE_ENABLE=0 (UCX_IB_ECE=0) so DCQCN behaves alike "
                    "everywhere",
                    [ver, h.nccl_setting("NCCL_IB_ECE_ENABLE"), _ucx_ece(h)] + list(fws.values()))
        elif not fws:
            out.skip("RT450", h.name, "ibv_devinfo -v (fw_ver) on every host, to judge ECE")


# ------------------------------------------------------------------------------ load balance / topology
def _busbw(run: NcclRun) -> float | None:
    row = run.largest_message_row
    return row.busbw_gbps if row is not None else None


def _bond_one_qp(h: HostObs, out: Out) -> None:
    """RT460: RoCE over a bond (or bonded HCA) with one QP per connection."""
    bond_devs = [d for d in h.rdma.values() if "bond" in d.device]
    if not h.bonds and not bond_devs:
        return
    qps = h.nccl_setting("NCCL_IB_QPS_PER_CONNECTION")
    if h.env_read is None and qps is None:
        out.skip("RT460", h.name, "env | grep NCCL (or /etc/nccl.conf) of the job")
    elif qps is None or qps.value.strip() in ("", "1"):
        b0 = next(iter(h.bonds.values()), None)
        out.add("RT460", W, h.name, b0.name if b0 else None,
                f"{h.name} runs RoCE over a bond ({b0.mode.value if b0 else bond_devs[0].device}) with one "
                "QP per connection: each connection hashes onto one member link, so a pair of ranks gets one "
                "link's bandwidth", "set NCCL_IB_QPS_PER_CONNECTION=2 (or more; one per member) so the "
                "flows spread", [b0.mode if b0 else None, qps])


def _adaptive_routing(h: HostObs, exp: Expect, out: Out) -> None:
    """RT461: the fabric does adaptive routing but the job does not set NCCL_IB_ADAPTIVE_ROUTING=1."""
    if not exp.adaptive_routing or (h.env_read is None and h.info_read is None):
        return
    ar = h.nccl_setting("NCCL_IB_ADAPTIVE_ROUTING")
    if ar is None and h.env_read is None:
        out.skip("RT461", h.name, "env | grep NCCL of the job (the NCCL INFO log does not name "
                                  "NCCL_IB_ADAPTIVE_ROUTING)")
    elif ar is None or ar.value.strip() != "1":
        out.add("RT461", W, h.name, None,
                "the fabric does adaptive routing but NCCL_IB_ADAPTIVE_ROUTING is "
                f"{'unset' if ar is None else ar.value}: NCCL does not spray/re-order for it",
                "set NCCL_IB_ADAPTIVE_ROUTING=1 in the job environment", [ar, h.env_read])


def _unused_nics(h: HostObs, out: Out) -> None:
    """RT462: NCCL uses fewer of the host's active RoCE NICs than it has."""
    used = _used_devices(h)
    eth = sorted({d.device for d in _eth_devs(h) if d.state is None or "ACTIVE" in d.state.value.upper()})
    if used is not None and len(eth) > len(used) and len(eth) > 1:
        ev = h.nccl_setting("NCCL_IB_HCA") or (h.nccl_used[0] if h.nccl_used else None)
        out.add("RT462", W, h.name, None,
                f"NCCL uses {len(used)} of {h.name}'s {len(eth)} RoCE NICs ({', '.join(used)} of "
                f"{', '.join(eth)}): the others carry nothing",
                "list every rail NIC in NCCL_IB_HCA (or unset it) so each GPU uses its nearest NIC",
                [ev] + [d.state or d.link_layer for d in _eth_devs(h)][:4])


def _pair_busbw(data: AuditData) -> dict[tuple[str, str], tuple[float, str, int]]:
    """(host, host) → (busbw GB/s of the largest message, file, line) of every two-host nccl-tests run
    that did not fail."""
    pairs: dict[tuple[str, str], tuple[float, str, int]] = {}
    for h in data.hosts.values():
        for run, file in h.runs:
            hosts = sorted(set(run.hosts))
            bw = _busbw(run)
            if len(hosts) == 2 and bw is not None and run.status != "failed":
                pairs[(hosts[0], hosts[1])] = (bw, file, run.line or 1)
    return pairs


def _slow_hosts(data: AuditData, out: Out) -> None:
    """RT463: a host whose pairs' median busbw is an outlier (modified z-score < -OUTLIER_Z, median/MAD)."""
    pairs = _pair_busbw(data)
    names = sorted({x for p in pairs for x in p})
    if len(names) < 3 or len(pairs) < 3:
        return
    per_host = {n: statistics.median(bw for p, (bw, _, _) in pairs.items() if n in p) for n in names}
    med = statistics.median(per_host.values())
    mad = statistics.median(abs(v - med) for v in per_host.values())
    scale = max(1.4826 * mad, 0.01 * med)
    for n, v in sorted(per_host.items()):
        z = (v - med) / scale if scale else 0.0
        if z < -OUTLIER_Z:
            evs = [Ev(f, line) for p, (_, f, line) in pairs.items() if n in p]
            out.add("RT463", E, n, None,
                    f"{n} is slow: the pairs it is in reach a median {v:.1f} GB/s busbw against "
                    f"{med:.1f} GB/s for the fabric (modified z-score {z:.1f}, median/MAD over {len(pairs)} "
                    "pairs)",
                    f"inspect {n}: NIC link speed/FEC and cable, PCIe width, GPU↔NIC affinity, firmware, "
                    "thermal throttling; compare its counters with a good host", evs)


def check_balance(data: AuditData, exp: Expect, out: Out) -> None:
    """RT460 bonded HCA with one QP per connection; RT461 adaptive routing without NCCL_IB_ADAPTIVE_ROUTING=1;
    RT462 NCCL_IB_HCA uses fewer NICs than the host has; RT463 slow host (median/MAD on the pair matrix)."""
    for h in data.hosts.values():
        _bond_one_qp(h, out)
        _adaptive_routing(h, exp, out)
        _unused_nics(h, out)
    if exp.adaptive_routing is None and any(h.env_read or h.info_read for h in data.hosts.values()):
        out.skip("RT461", None, "an inventory (site.adaptive_routing) to know whether the fabric does "
                                "adaptive routing")
    _slow_hosts(data, out)


# -------------------------------------------------------------------------------------------- nccl-tests
def _line_rate_gbps(h: HostObs, exp: Expect) -> float | None:
    """The host's NIC line rate: the inventory's, else the first ``ethtool <if>`` Speed captured."""
    return exp.line_rate_gbps.get(h.name) or next(
        (n.speed_mbps.value / 1000 for n in h.nics.values() if n.speed_mbps), None)


def _low_busbw(h: HostObs, run, ev: Ev, exp: Expect, out: Out) -> None:  # type: ignore[no-untyped-def]
    """RT472: busbw at the largest message (≥ 64 MiB) below the target share of the line rate."""
    bw, row = _busbw(run), run.largest_message_row
    if bw is None or row is None or row.size_bytes < 1 << 26:
        return
    rate = _line_rate_gbps(h, exp)
    if rate is None:
        out.skip("RT472", h.name, "the NIC line rate: an inventory, or `ethtool <if>` (Speed:)")
        return
    frac = bw * 8 / rate
    if frac < exp.target_utilisation:
        out.add("RT472", W, h.name, None,
                f"busbw {bw:g} GB/s at {row.size_bytes:,} B is {frac:.0%} of "
                f"{rate:g} Gb/s (target {exp.target_utilisation:.0%})",
                "see the other findings for the cause; with none, check NIC/GPU placement, PCIe and "
                "NCCL_IB_HCA", [Ev(ev.file, row.line or ev.line) if getattr(row, "line", None) else ev])


def _nccl_run(h: HostObs, run, file: str, exp: Expect, out: Out) -> None:  # type: ignore[no-untyped-def]
    """RT470/RT471/RT472 of one nccl-tests run read from ``file``."""
    ev = Ev(file, run.line or 1)
    if not run.complete and not run.rows and all("no result rows" in p for p in run.problems):
        out.add("RT471", INFO, h.name, None,
                f"nccl-tests {run.collective} log ends before any result row (cut, or still starting)",
                "capture the whole log", [ev])
        return
    if run.status == "failed":
        out.add("RT470", E, h.name, None,
                f"nccl-tests {run.collective} run failed: {'; '.join(run.problems) or 'no result'}",
                "fix the run first (MPI build, wrong results, hung ranks); no bandwidth figure is judged "
                "from a failed run", [ev])
        return
    if not run.complete:
        out.add("RT471", INFO, h.name, None,
                f"nccl-tests {run.collective} log ends before its summary (cut or still running); "
                "figures are from the rows read", "capture the whole log", [ev])
    _low_busbw(h, run, ev, exp, out)


def check_nccl_runs(data: AuditData, exp: Expect, out: Out) -> None:
    """RT470 run failed; RT471 log ends before the summary; RT472 busbw far below line rate."""
    for h in data.hosts.values():
        for run, file in h.runs:
            _nccl_run(h, run, file, exp, out)


def check_plan_env(data: AuditData, exp: Expect, out: Out) -> None:
    """RT464: a host's captured NCCL environment lacks or changes a variable the plan sets."""
    if exp.host_env is None:
        return
    for h in data.hosts.values():
        want = exp.host_env.get(h.name)
        if want is None:
            continue
        if h.env_read is None and h.info_read is None:
            out.skip("RT464", h.name,
                     "env | grep NCCL (or /etc/nccl.conf) of the job, to compare with the plan")
            continue
        for key, value in sorted(want.items()):
            got = h.nccl_setting(key)
            if got is None and h.env_read is None:
                # NCCL INFO names only the variables it logs: absence there is not "unset"
                out.skip("RT464", h.name,
                         f"env | grep NCCL (or /etc/nccl.conf) of the job: {key} is not in the "
                                          "NCCL INFO log")
                continue
            if got is None or got.value.strip() != str(value):
                out.add("RT464", W, h.name, None,
                        f"{key} is {'unset' if got is None else repr(got.value)} in the job on {h.name}; the "
                        f"plan sets {value!r}", f"export {key}={value} (the plan's nccl.env, or "
                        f"hosts/{h.name}.nccl.env where it has one)",
                        [got, h.env_read or h.info_read])


def check_switch_config(data: AuditData, exp: Expect, out: Out) -> None:
    """The switches' running configurations against the plan, or the policy without one
    (:mod:`roce_tune.audit.running`)."""
    from roce_tune.audit.running import check_running

    check_running(data.switches.values(), exp, out)


CHECKS: tuple[tuple[str, Callable[[AuditData, Expect, Out], None]], ...] = (
    ("switch config", check_switch_config), ("GID", check_gid), ("priority", check_priority),
    ("PFC", check_pfc), ("ECN/DCQCN", check_ecn),
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
