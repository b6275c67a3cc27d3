"""Aggregate counter deltas into the few signals the diagnosis reads (pure).

Every figure is a count over one run (a delta) unless the name says otherwise; ``*_share`` are
fractions in [0, 1]; ``pause_us`` is pause time in µs (mlx5 ``rx_prioN_pause_duration``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from roce_tune.verify.counters import CounterSnapshot, HostNicCounters

__all__ = ["FabricSignals", "HostSignals", "fabric_signals", "host_signals", "prio_count", "unread_ports"]

#: RDMA hw_counters that count loss-recovery events at the requester/responder (docs/derivation.md#counters).
LOSS_COUNTERS = ("out_of_sequence", "packet_seq_err", "local_ack_timeout_err", "implied_nak_seq_err")
#: ethtool counters of frames the NIC dropped on receive (PHY-level buffer exhaustion).
DISCARD_COUNTERS = ("rx_discards_phy",)


def prio_count(stats: dict[str, int], direction: str, prio: int, what: str = "packets") -> int:
    """``{direction}_prio{prio}_{what}`` from an ethtool map (0 when absent)."""
    return stats.get(f"{direction}_prio{prio}_{what}", 0)


@dataclass(frozen=True)
class HostSignals:
    """What one host NIC did during the run.

    Attributes:
        tx_by_prio / rx_by_prio: packets per 802.1p priority (ethtool ``tx_prioN_packets``).
        tx_lossless / rx_lossless: packets on the plan's lossless priorities.
        pause_rx_frames: PFC frames received on lossless priorities (the switch paused this NIC).
        pause_us: µs this NIC was paused on lossless priorities (``rx_prioN_pause_duration``), or None.
        pause_tx_frames: PFC frames this NIC sent (its own receive buffer filled).
        ecn_marked / cnp_sent / cnp_handled / cnp_ignored: RDMA hw_counters
            (``np_ecn_marked_roce_packets``, ``np_cnp_sent``, ``rp_cnp_handled``, ``rp_cnp_ignored``).
        loss_events: sum of :data:`LOSS_COUNTERS`; discards: sum of :data:`DISCARD_COUNTERS`.
    """

    host: str
    netdev: str
    tx_by_prio: dict[int, int]
    rx_by_prio: dict[int, int]
    tx_lossless: int
    rx_lossless: int
    pause_rx_frames: int
    pause_us: int | None
    pause_tx_frames: int
    ecn_marked: int
    cnp_sent: int
    cnp_handled: int
    cnp_ignored: int
    loss_events: int
    loss_detail: dict[str, int]
    discards: int
    #: which inputs were read (unknown is not zero): per-priority packet counters, ECN-marked, CNP handled,
    #: any of the loss-recovery counters (:data:`LOSS_COUNTERS`), the received-pause counter of a lossless
    #: priority (mlx5 prints ``rx_prioN_pause`` only for the priorities with PFC on at the NIC)
    prio_counted: bool = True
    ecn_counted: bool = True
    cnp_handled_counted: bool = True
    loss_counted: bool = True
    pause_counted: bool = True

    @property
    def tx_total(self) -> int:
        """Packets sent on all priorities."""
        return sum(self.tx_by_prio.values())

    @property
    def rx_total(self) -> int:
        """Packets received on all priorities."""
        return sum(self.rx_by_prio.values())


def _read(counters: dict[str, int], names: tuple[str, ...]) -> dict[str, int]:
    """The counters of ``names`` that were read (absent ones left out, never 0)."""
    return {k: counters[k] for k in names if k in counters}


def _read_flags(e: dict[str, int], hw: dict[str, int], lossless: list[int]) -> dict[str, bool]:
    """The ``*_counted`` fields of :class:`HostSignals`: which inputs the NIC's counters hold."""
    return {"prio_counted": any(f"{d}_prio{p}_packets" in e for d in ("rx", "tx") for p in range(8)),
            "ecn_counted": "np_ecn_marked_roce_packets" in hw, "cnp_handled_counted": "rp_cnp_handled" in hw,
            "loss_counted": any(k in hw for k in LOSS_COUNTERS),
            "pause_counted": any(f"rx_prio{p}_pause" in e for p in lossless)}


def host_signals(c: HostNicCounters, lossless: list[int]) -> HostSignals:
    """Signals of one NIC from its counter delta; ``lossless`` = the plan's lossless priorities."""
    e, hw = c.ethtool, c.hw
    tx = {p: prio_count(e, "tx", p) for p in range(8)}
    rx = {p: prio_count(e, "rx", p) for p in range(8)}
    durations = [e[f"rx_prio{p}_pause_duration"] for p in lossless if f"rx_prio{p}_pause_duration" in e]
    loss_read = _read(hw, LOSS_COUNTERS)
    loss = {k: v for k, v in loss_read.items() if v}
    return HostSignals(
        host=c.host, netdev=c.netdev, tx_by_prio=tx, rx_by_prio=rx,
        tx_lossless=sum(tx[p] for p in lossless), rx_lossless=sum(rx[p] for p in lossless),
        pause_rx_frames=sum(prio_count(e, "rx", p, "pause") for p in lossless),
        pause_us=sum(durations) if durations else None,
        pause_tx_frames=sum(prio_count(e, "tx", p, "pause") for p in lossless),
        ecn_marked=hw.get("np_ecn_marked_roce_packets", 0), cnp_sent=hw.get("np_cnp_sent", 0),
        cnp_handled=hw.get("rp_cnp_handled", 0), cnp_ignored=hw.get("rp_cnp_ignored", 0),
        loss_events=sum(loss.values()), loss_detail=loss,
        discards=sum(e.get(k, 0) for k in DISCARD_COUNTERS), **_read_flags(e, hw, lossless))


@dataclass(frozen=True)
class FabricSignals:
    """Switch-side sums over every port, on the lossless priorities / queues.

    ``*_by_port`` keep the per-port figures for evidence (only non-zero entries); ``ecn_unread_ports``
    lists the ports (``switch:port``) where no lossless queue's ECN-marked counter was read;
    ``wd_unread`` / ``drops_unread`` the ports where no lossless queue's PFC-watchdog storm / drop counter
    was read, ``pfc_unread`` those where no PFC frame counter of a lossless priority (or the port's total)
    was, and the switches of which no port was read at all (unreachable, unsupported: by name alone).
    """

    pfc_tx_frames: int = 0
    pfc_rx_frames: int = 0
    ecn_marked: int = 0
    ecn_counted: bool = False
    lossless_drops: int = 0
    wd_storms: int = 0
    pfc_tx_by_port: dict[str, int] = field(default_factory=dict)
    ecn_by_port: dict[str, int] = field(default_factory=dict)
    drops_by_port: dict[str, int] = field(default_factory=dict)
    storms_by_port: dict[str, int] = field(default_factory=dict)
    wd_drops_by_port: dict[str, int] = field(default_factory=dict)
    ecn_unread_ports: list[str] = field(default_factory=list)
    wd_unread: list[str] = field(default_factory=list)
    drops_unread: list[str] = field(default_factory=list)
    pfc_unread: list[str] = field(default_factory=list)


def unread_ports(delta: CounterSnapshot, queues: list[int], suffixes: tuple[str, ...],
                 names: tuple[str, ...] = ()) -> list[str]:
    """``switch:port`` of every port where no ``q{queue}{suffix}`` counter of the ``queues`` (nor any of
    ``names``) was read, and the name of every switch of which no port was read (unknown is not zero: these
    cannot count as quiet)."""
    out: list[str] = []
    for sw in delta.switches:
        if not sw.ports:
            out.append(sw.switch)
        out += [f"{sw.switch}:{port}" for port, c in sw.ports.items()
                if not any(f"q{q}{sfx}" in c for q in queues for sfx in suffixes)
                and not any(n in c for n in names)]
    return out


def fabric_signals(delta: CounterSnapshot, lossless_prios: list[int],
                   lossless_queues: list[int]) -> FabricSignals:
    """Sum PFC frames, ECN marks, lossless-queue drops and watchdog storms over every switch port.

    ``pfc_tx_all``/``pfc_rx_all`` (platforms without per-priority PFC counters) are counted as
    lossless: the lossless priorities are the only ones with PFC enabled.
    """
    pfc_tx: dict[str, int] = {}
    pfc_rx: dict[str, int] = {}
    ecn: dict[str, int] = {}
    drops: dict[str, int] = {}
    storms: dict[str, int] = {}
    wd_drops: dict[str, int] = {}
    counted = False
    ecn_unread: list[str] = []
    for sw in delta.switches:
        for port, c in sw.ports.items():
            key = f"{sw.switch}:{port}"
            tx = sum(c.get(f"pfc_tx_prio{p}", 0) for p in lossless_prios) + c.get("pfc_tx_all", 0)
            rx = sum(c.get(f"pfc_rx_prio{p}", 0) for p in lossless_prios) + c.get("pfc_rx_all", 0)
            marks = sum(c.get(f"q{q}_ecn_marked_pkts", 0) for q in lossless_queues)
            port_counted = any(f"q{q}_ecn_marked_pkts" in c for q in lossless_queues)
            counted = counted or port_counted
            if not port_counted:
                ecn_unread.append(key)
            dr = sum(c.get(f"q{q}_drop_pkts", 0) + c.get(f"q{q}_wred_drop_pkts", 0) for q in lossless_queues)
            st = sum(c.get(f"q{q}_wd_storm_detected", 0) for q in lossless_queues)
            wdd = sum(c.get(f"q{q}_wd_tx_drop", 0) + c.get(f"q{q}_wd_rx_drop", 0) for q in lossless_queues)
            for bucket, value in ((pfc_tx, tx), (pfc_rx, rx), (ecn, marks), (drops, dr), (storms, st),
                                  (wd_drops, wdd)):
                if value:
                    bucket[key] = value
    return FabricSignals(
        pfc_tx_frames=sum(pfc_tx.values()), pfc_rx_frames=sum(pfc_rx.values()), ecn_marked=sum(ecn.values()),
        ecn_counted=counted, lossless_drops=sum(drops.values()), wd_storms=sum(storms.values()),
        pfc_tx_by_port=pfc_tx, ecn_by_port=ecn, drops_by_port=drops, storms_by_port=storms,
        wd_drops_by_port=wd_drops, ecn_unread_ports=ecn_unread,
        wd_unread=unread_ports(delta, lossless_queues, ("_wd_storm_detected",)),
        drops_unread=unread_ports(delta, lossless_queues, ("_drop_pkts", "_wred_drop_pkts")),
        pfc_unread=unread_ports(delta, [], (), _pfc_names(lossless_prios)))


def _pfc_names(prios: list[int]) -> tuple[str, ...]:
    """The PFC frame counters of ``prios`` and the per-port totals (:mod:`roce_tune.platforms.counters`)."""
    return tuple(f"pfc_{d}_{w}" for d in ("rx", "tx") for w in [f"prio{p}" for p in prios] + ["all"])
