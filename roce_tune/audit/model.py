"""What ``roce-tune audit`` saw: every value carries the capture line it was read from.

Unknown is not zero: a counter, table or setting that no capture held is simply absent from these
maps, and a check that needs it reports "not checked: needs <command>" instead of reading 0.

Shapes: counters are ``name -> Val[int]`` with the names of :mod:`roce_tune.verify.counters`
(``rx_prio3_pause`` for ``ethtool -S``, ``np_cnp_sent`` for RDMA hw_counters, ``pfc_tx_prio3`` /
``q3_drop_pkts`` … per switch port). ``before`` maps hold the earlier snapshot when the capture had two
(``ethtool -S`` twice, or a ``diff -y`` of two runs); then checks read deltas, else totals since the
counters were last cleared.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Generic, TypeVar

from roce_tune.qos import SwitchQos
from roce_tune.verify.hostfacts import GidEntry
from roce_tune.verify.nccl import NcclRun

T = TypeVar("T")

__all__ = ["AuditData", "Counters", "Ev", "HostObs", "NicObs", "RdmaObs", "SwitchObs", "Unparsed", "Val"]


@dataclass(frozen=True, order=True)
class Ev:
    """A capture position: file name (relative to ``--from``) and 1-based line."""

    file: str
    line: int

    def __str__(self) -> str:
        return f"{self.file}:{self.line}"


@dataclass(frozen=True)
class Val(Generic[T]):
    """A value and the capture line it came from."""

    value: T
    ev: Ev


Counters = dict[str, Val[int]]


@dataclass
class NicObs:
    """One host netdev: ``ethtool -S`` counters (latest, and ``before`` when two snapshots were
    captured), netdev MTU (bytes), ``mlnx_qos`` state, DCQCN sysfs (``ecn/roce_rp|roce_np``) and global
    (802.3x) pause (``ethtool -a``)."""

    netdev: str
    ethtool: Counters = field(default_factory=dict)
    ethtool_before: Counters | None = None
    mtu: Val[int] | None = None
    speed_mbps: Val[int] | None = None
    trust: Val[str] | None = None
    pfc_enabled: Val[tuple[int, ...]] | None = None
    dscp_to_prio: dict[int, Val[int]] = field(default_factory=dict)
    ecn_sysfs: dict[str, Val[int]] = field(default_factory=dict)  # "roce_rp/enable/3" -> 1
    master: str | None = None
    #: ``ethtool -a``: "autoneg", "rx", "tx", "rx_negotiated", "tx_negotiated" -> "on" | "off" | "n/a"
    pause: dict[str, Val[str]] = field(default_factory=dict)
    #: ``ethtool -a -I`` statistics: "tx_pause_frames" / "rx_pause_frames" -> count
    pause_frames: dict[str, Val[int]] = field(default_factory=dict)
    #: why ``ethtool -a`` gave no pause parameters (``Operation not supported``), where it said so
    pause_error: Val[str] | None = None

    def delta(self, name: str) -> tuple[int, bool] | None:
        """(value, is_delta) of an ethtool counter: after − before when two snapshots exist."""
        v = self.ethtool.get(name)
        if v is None:
            return None
        if self.ethtool_before is not None and name in self.ethtool_before:
            b = self.ethtool_before[name].value
            return (v.value - b if v.value >= b else v.value), True
        return v.value, False


@dataclass
class RdmaObs:
    """One RDMA device port: hw_counters, ``ibv_devinfo`` facts, the GID table, RoCE ToS."""

    device: str
    port: int = 1
    hw: Counters = field(default_factory=dict)
    hw_before: Counters | None = None
    active_mtu: Val[int] | None = None
    max_mtu: Val[int] | None = None
    link_layer: Val[str] | None = None
    state: Val[str] | None = None
    fw_ver: Val[str] | None = None
    gids: list[tuple[GidEntry, Ev]] = field(default_factory=list)
    gid_table: Ev | None = None  # where a GID table (show_gids or sysfs) was read; None = not captured
    traffic_class: Val[int] | None = None
    netdev: str | None = None

    def delta(self, name: str) -> tuple[int, bool] | None:
        """(value, is_delta) of a hw counter (see :meth:`NicObs.delta`)."""
        v = self.hw.get(name)
        if v is None:
            return None
        if self.hw_before is not None and name in self.hw_before:
            b = self.hw_before[name].value
            return (v.value - b if v.value >= b else v.value), True
        return v.value, False


@dataclass
class BondObs:
    """``/proc/net/bonding/<bond>``: mode, hash policy and slave netdevs."""

    name: str
    mode: Val[str]
    hash_policy: Val[str] | None = None
    slaves: list[str] = field(default_factory=list)


@dataclass
class HostObs:
    """Everything captured from one host."""

    name: str
    nics: dict[str, NicObs] = field(default_factory=dict)
    rdma: dict[str, RdmaObs] = field(default_factory=dict)
    env: dict[str, Val[str]] = field(default_factory=dict)
    env_read: Ev | None = None  # where the job's NCCL environment (env | grep NCCL, nccl.conf) was read
    info_read: Ev | None = None  # where NCCL INFO lines were read (they name only some variables)
    nccl_info: dict[str, Val[str]] = field(default_factory=dict)  # version, hca, gid_index, tc …
    nccl_used: list[Val[str]] = field(default_factory=list)  # "mlx5_5:1/RoCE" from NET/IB : Using
    runs: list[tuple[NcclRun, str]] = field(default_factory=list)  # (run, capture file)
    bonds: dict[str, BondObs] = field(default_factory=dict)
    ucx: dict[str, Val[str]] = field(default_factory=dict)

    def nic(self, netdev: str) -> NicObs:
        """The netdev's record (created on first use)."""
        return self.nics.setdefault(netdev, NicObs(netdev=netdev))

    def dev(self, device: str, port: int = 1) -> RdmaObs:
        """The RDMA device's record (created on first use)."""
        key = device if port == 1 else f"{device}/{port}"
        return self.rdma.setdefault(key, RdmaObs(device=device, port=port))

    def nccl_setting(self, name: str) -> Val[str] | None:
        """An NCCL variable from the environment/nccl.conf, else as the NCCL INFO log reported it."""
        return self.env.get(name) or self.nccl_info.get("env:" + name)


@dataclass
class SwitchObs:
    """Everything captured from one switch: per-port counters (names of :mod:`roce_tune.verify.counters`
    plus ``rx_drp``/``tx_drp``/``rx_err``/``tx_err`` from ``show interface counters``), the RoCE QoS
    profile the switch reports (``nv show qos roce``), the PFC watchdog configuration and port MTUs, and
    the running configuration read back through the platform's ``read_back`` (``running``)."""

    name: str
    platform: str | None = None
    ports: dict[str, Counters] = field(default_factory=dict)
    ports_before: dict[str, Counters] | None = None
    families: dict[str, Ev] = field(default_factory=dict)  # counter family -> where read ("pfc", "queue", …)
    roce: dict[str, Val[str]] = field(default_factory=dict)  # "pfc-priority" -> "3", "enabled-tc" -> "0,3" …
    sp_to_tc: dict[int, Val[int]] = field(default_factory=dict)
    pfcwd_config: dict[str, Val[str]] = field(default_factory=dict)  # port -> "drop 200 200"
    #: ports the watchdog tables covered: None = every port (a table without a port argument lists every
    #: port with a watchdog, so a port missing from it has none), else the ports the commands named
    pfcwd_scope: set[str] | None = field(default_factory=set)
    port_mtu: dict[str, Val[int]] = field(default_factory=dict)
    running: Val[SwitchQos] | None = None  # the running configuration read back (ev: the block's first line)
    running_lines: list[tuple[int, str]] = field(default_factory=list)  # its capture lines, for evidence

    def counter(self, port: str, name: str) -> tuple[int, bool] | None:
        """(value, is_delta) of one port counter."""
        v = self.ports.get(port, {}).get(name)
        if v is None:
            return None
        before = (self.ports_before or {}).get(port, {}).get(name)
        if before is not None:
            return (v.value - before.value if v.value >= before.value else v.value), True
        return v.value, False


@dataclass(frozen=True)
class Unparsed:
    """A block (or the lines of one) that no reader understood."""

    file: str
    line: int
    end_line: int
    command: str | None
    first: str

    def __str__(self) -> str:
        """``file:line[-end]: `command`: first line`` (the first line carries the reason a reader gave)."""
        span = f"{self.file}:{self.line}" + (f"-{self.end_line}" if self.end_line != self.line else "")
        first = self.first if len(self.first) <= 200 else self.first[:199] + "…"
        what = f"`{self.command}`" + (f": {first}" if first else "") if self.command else repr(first)
        return f"{span}: {what}"


@dataclass
class AuditData:
    """All devices read from a capture directory, plus what was not understood."""

    hosts: dict[str, HostObs] = field(default_factory=dict)
    switches: dict[str, SwitchObs] = field(default_factory=dict)
    unparsed: list[Unparsed] = field(default_factory=list)
    blocks: list[tuple[str, int, str]] = field(default_factory=list)  # (file, line, format) per block read
    files: int = 0
    empty_files: list[tuple[str, str]] = field(default_factory=list)  # (device, file) with no text
    #: blocks parsed into at least one fact: a block reader accepted it, a running configuration was read
    #: back without error, or a line reader took one of its lines (a bare ``NIC statistics:`` heading is
    #: no fact). 0 means the audit checked nothing, however many blocks were listed as not understood.
    understood: int = 0
    #: devices with capture blocks of which no block was understood and whose kind nothing states (neither
    #: the plan nor a block in a switch's format): not counted as hosts or switches (sorted names)
    unreadable: list[str] = field(default_factory=list)

    def host(self, name: str) -> HostObs:
        """The host's record (created on first use)."""
        return self.hosts.setdefault(name, HostObs(name=name))

    def switch(self, name: str) -> SwitchObs:
        """The switch's record (created on first use)."""
        return self.switches.setdefault(name, SwitchObs(name=name))
