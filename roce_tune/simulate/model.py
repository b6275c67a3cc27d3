"""Typed inputs and outputs of the RoCEv2 simulator (:func:`roce_tune.simulate.simulate`).

Everything is a frozen dataclass so a scenario can be hashed, compared, sent to a worker process
and written to JSON (:meth:`Metrics.to_json`). Units are in the field names (``_bytes``, ``_us``,
``_gbps``, ``_mbps``, ``_percent``, ``_ms``).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field, fields, replace
from typing import Literal

#: RoCE payload per frame (RoCE MTU 4096) and the headers on the wire around it
#: (Ethernet 14 + FCS 4 + IPv4 20 + UDP 8 + BTH 12 = 58 on a real wire; the HPCC ns-3 artifact, which
#: the calibration data comes from, carries 48 B; DOCS: docs/simulate.md "Frames").
DEFAULT_PAYLOAD_BYTES = 4096
DEFAULT_HEADER_BYTES = 48
#: Size of an ACK/CNP and of a PFC frame on the wire (minimum Ethernet frame + preamble/IFG).
CONTROL_FRAME_BYTES = 64
#: Per-port, per-PG reserved (min) buffer and the PFC resume offset (the HPCC artifact's switch MMU:
#: ``reserve = 4 * 1024``, ``resume_offset = 3 * 1024`` in simulation/src/point-to-point/model/switch-mmu.cc).
PG_RESERVE_BYTES = 4 * 1024
PFC_RESUME_OFFSET_BYTES = 3 * 1024
#: Shared lossless pool of the reference setup: the SN2700 leaf's ``ingress_lossless_pool`` (bytes).
DEFAULT_BUFFER_BYTES = 5_306_864
#: Spectrum ``dynamic_th`` 7: a PG may hold alpha x the free shared buffer, alpha = 2^7.
DEFAULT_PFC_ALPHA = 128.0
#: Incast senders start at t0 + U(0, jitter).
DEFAULT_START_JITTER_US = 5.0
#: most senders onto the one bottleneck (:attr:`Scenario.fan_in`)
MAX_FAN_IN = 1024
#: base RTTs the measured half of a long-lived run spans at least (:attr:`Scenario.min_duration_us`)
MIN_MEASURED_RTTS = 10

Model = Literal["M", "T"]
Topology = Literal["star", "leaf-spine-leaf"]


@dataclass(frozen=True)
class EcnSetting:
    """RED-like ECN marking on the bottleneck egress queue (marked at dequeue).

    ``p(q) = 0`` for ``q <= Kmin``, ``Pmax * (q - Kmin)/(Kmax - Kmin)`` up to Kmax, 1 above Kmax
    (``q`` = instantaneous egress bytes after the packet left).

    Raises:
        ValueError: Kmin >= Kmax, negative values, Pmax outside (0, 100].
    """

    kmin_bytes: int
    kmax_bytes: int
    pmax_percent: float
    label: str = ""

    def __post_init__(self) -> None:
        if self.kmin_bytes < 0 or self.kmax_bytes <= self.kmin_bytes:
            raise ValueError(f"ECN needs 0 <= Kmin < Kmax (got Kmin {self.kmin_bytes} B, Kmax "
                             f"{self.kmax_bytes} B)")
        if not 0 < self.pmax_percent <= 100:
            raise ValueError(f"ECN Pmax {self.pmax_percent} % must be in (0, 100]")


@dataclass(frozen=True)
class DcqcnParams:
    """mlx5 DCQCN reaction-point (RP) and notification-point (NP) knobs, named as in ``mlxreg``/DOCA.

    Defaults are the ConnectX firmware defaults (``roce_tune.tuner.dcqcn.MLX5_FIRMWARE_DEFAULTS``).
    How each one acts in the simulator is described in docs/simulate.md ("Reaction point").
    """

    rpg_time_reset_us: float = 300.0
    rpg_byte_reset_bytes: int = 32767
    rpg_threshold: int = 1
    rpg_ai_rate_mbps: float = 5.0
    rpg_hai_rate_mbps: float = 50.0
    rpg_gd: int = 11
    rpg_min_dec_fac_percent: float = 50.0
    rpg_min_rate_mbps: float = 1.0
    rpg_max_rate_mbps: float = 0.0
    rate_to_set_on_first_cnp_mbps: float = 0.0
    clamp_tgt_rate: int = 0
    dce_tcp_g: int = 1019
    dce_tcp_rtt_us: float = 1.0
    rate_reduce_monitor_period_us: float = 4.0
    initial_alpha_value: int = 1023
    min_time_between_cnps_us: float = 2.0
    label: str = ""

    def __post_init__(self) -> None:
        checks = {
            "rpg_time_reset_us": self.rpg_time_reset_us > 0,
            "rpg_byte_reset_bytes": self.rpg_byte_reset_bytes >= 0,
            "rpg_threshold": self.rpg_threshold >= 0, "rpg_ai_rate_mbps": self.rpg_ai_rate_mbps >= 0,
            "rpg_hai_rate_mbps": self.rpg_hai_rate_mbps >= 0, "rpg_gd": 0 <= self.rpg_gd <= 15,
            "rpg_min_dec_fac_percent": 0 <= self.rpg_min_dec_fac_percent <= 100,
            "rpg_min_rate_mbps": self.rpg_min_rate_mbps > 0, "rpg_max_rate_mbps": self.rpg_max_rate_mbps >= 0,
            "rate_to_set_on_first_cnp_mbps": self.rate_to_set_on_first_cnp_mbps >= 0,
            "clamp_tgt_rate": self.clamp_tgt_rate in (0, 1), "dce_tcp_g": 0 <= self.dce_tcp_g <= 1023,
            "dce_tcp_rtt_us": self.dce_tcp_rtt_us > 0,
            "rate_reduce_monitor_period_us": self.rate_reduce_monitor_period_us >= 0,
            "initial_alpha_value": 0 <= self.initial_alpha_value <= 1023,
            "min_time_between_cnps_us": self.min_time_between_cnps_us >= 0,
        }
        bad = [k for k, ok in checks.items() if not ok]
        if bad:
            raise ValueError("DCQCN parameter(s) out of range: "
                             + ", ".join(f"{k}={getattr(self, k)!r}" for k in bad))

    @classmethod
    def keys(cls) -> tuple[str, ...]:
        """Knob names (everything but ``label``)."""
        return tuple(f.name for f in fields(cls) if f.name != "label")

    @classmethod
    def from_params(cls, params: Mapping[str, int | float], label: str = "") -> DcqcnParams:
        """Build from a ``Dcqcn.params``-style dict; keys the simulator does not model are ignored.

        Raises:
            ValueError: a value out of range.
        """
        known = set(cls.keys())
        return cls(**{k: v for k, v in params.items() if k in known}, label=label)  # type: ignore[arg-type]

    def with_overrides(self, overrides: dict[str, float], label: str | None = None) -> DcqcnParams:
        """A copy with ``overrides`` applied.

        Raises:
            ValueError: unknown key (the message lists the known ones) or a value out of range.
        """
        unknown = sorted(set(overrides) - set(self.keys()))
        if unknown:
            raise ValueError(f"unknown DCQCN parameter(s) {', '.join(unknown)}; known: "
                             f"{', '.join(self.keys())}")
        return replace(self, **overrides,  # type: ignore[arg-type]
                       label=self.label if label is None else label)


#: Scenario validation: (is it wrong?, the message) in the order the problems are reported
_SCENARIO_CHECKS: tuple[tuple[Callable[[Scenario], bool], Callable[[Scenario], str]], ...] = (
    (lambda s: s.kind not in ("incast", "long-lived"), lambda s: f"kind {s.kind!r} (incast or long-lived)"),
    (lambda s: s.speed_gbps <= 0, lambda s: f"speed_gbps {s.speed_gbps} must be > 0"),
    (lambda s: not 1 <= s.fan_in <= MAX_FAN_IN, lambda s: f"fan_in {s.fan_in} must be 1..{MAX_FAN_IN}"),
    (lambda s: s.kind == "incast" and s.message_bytes <= 0, lambda s: f"message_bytes {s.message_bytes} must "
     "be > 0"),
    (lambda s: s.kind == "long-lived" and not s.duration_us > 0, lambda s: f"duration_us {s.duration_us} "
     "must be > 0"),
    (lambda s: s.kind == "long-lived" and 0 < s.duration_us < s.min_duration_us,
     lambda s: f"duration_us {s.duration_us:g} is too short to measure: at least {s.min_duration_us:.1f} us "
     f"(statistics are over the second half of the run, which must start after the first frames have "
     f"filled the path, {s.path_fill_us:.1f} us, and span {MIN_MEASURED_RTTS} base RTTs of "
     f"{s.base_rtt_us:g} us for the rate control to act)"),
    (lambda s: not (s.base_rtt_us > 0 and math.isfinite(s.base_rtt_us)),
     lambda s: f"base_rtt_us {s.base_rtt_us} must be > 0"),
    (lambda s: s.buffer_bytes < s.frame_bytes,
     lambda s: f"buffer_bytes {s.buffer_bytes} must hold one {s.frame_bytes} B frame"),
    (lambda s: not (s.pfc_alpha > 0 and math.isfinite(s.pfc_alpha)),
     lambda s: f"pfc_alpha {s.pfc_alpha} must be a finite number > 0"),
    (lambda s: s.headroom_bytes is not None and s.headroom_bytes < 0,
     lambda s: f"headroom_bytes {s.headroom_bytes} must be >= 0"),
    (lambda s: s.model not in ("M", "T"), lambda s: f"model {s.model!r} (M or T)"),
    (lambda s: s.topology not in ("star", "leaf-spine-leaf"),
     lambda s: f"topology {s.topology!r} (star or leaf-spine-leaf)"),
    (lambda s: s.payload_bytes <= 0 or s.header_bytes < 0 or s.start_jitter_us < 0,
     lambda s: "payload_bytes > 0, header_bytes >= 0 and start_jitter_us >= 0 are required"),
)


@dataclass(frozen=True)
class Scenario:
    """One simulation run.

    Attributes:
        kind: ``incast`` (each of ``fan_in`` senders sends one ``message_bytes`` message) or ``long-lived``
            (``fan_in`` senders send without end for ``duration_us``; statistics over the second half).
        speed_gbps: every link's speed (Gb/s).
        fan_in: senders onto the one bottleneck egress (N of N:1).
        message_bytes: RoCE payload per sender (incast).
        duration_us: run length (long-lived).
        base_rtt_us: propagation round trip without serialisation (µs), as ``tuner.ecn.base_rtt_us``.
        buffer_bytes: shared lossless pool of the bottleneck switch.
        pfc_alpha: dynamic-threshold alpha (XOFF when a PG's shared use >= alpha x free pool).
        headroom_bytes: per-port PFC headroom; None = 3 x line rate x one link's delay.
        ecn, dcqcn: marking ramp and NIC knobs.
        model: ``M`` (byte counter and NP CNP pacing, as the mlx5 documentation describes) or ``T``
            (timer-only, one CNP per marked packet's ACK, as the HPCC artifact).
        seed: start jitter and ECN draws.
        topology: ``star`` (one switch) or ``leaf-spine-leaf`` (senders on one leaf, the leaf's single uplink
            is the bottleneck, receiver behind the spine and the far leaf; the base RTT spans 4 links each
            way).
    """

    kind: Literal["incast", "long-lived"]
    speed_gbps: int
    fan_in: int
    ecn: EcnSetting
    dcqcn: DcqcnParams = field(default_factory=DcqcnParams)
    model: Model = "M"
    message_bytes: int = 1_000_000
    duration_us: float = 40_000.0
    base_rtt_us: float = 6.164
    buffer_bytes: int = DEFAULT_BUFFER_BYTES
    pfc_alpha: float = DEFAULT_PFC_ALPHA
    headroom_bytes: int | None = None
    seed: int = 1
    topology: Topology = "star"
    payload_bytes: int = DEFAULT_PAYLOAD_BYTES
    header_bytes: int = DEFAULT_HEADER_BYTES
    start_jitter_us: float = DEFAULT_START_JITTER_US

    def __post_init__(self) -> None:
        problems = [message(self) for bad, message in _SCENARIO_CHECKS if bad(self)]
        if problems:
            raise ValueError("invalid scenario: " + "; ".join(problems))

    @property
    def frame_bytes(self) -> int:
        """Wire size of one full data frame."""
        return self.payload_bytes + self.header_bytes

    @property
    def link_delay_us(self) -> float:
        """One link's propagation delay: the base RTT spread over the links of the round trip."""
        return self.base_rtt_us / (4 if self.topology == "star" else 8)

    @property
    def path_fill_us(self) -> float:
        """Time (µs) until the bottleneck can send the first frame of a flow started at 0 and its ACK is
        back: one base RTT plus one frame's serialisation on each of the links of the round trip (4 on a
        star, 8 on leaf-spine-leaf)."""
        links = 4 if self.topology == "star" else 8
        return self.base_rtt_us + links * self.frame_bytes * 8 / (self.speed_gbps * 1000.0)

    @property
    def min_duration_us(self) -> float:
        """Shortest long-lived run with a meaningful measurement (µs): 2 x (:attr:`path_fill_us` +
        :data:`MIN_MEASURED_RTTS` base RTTs), so that the measured second half starts after the path is full
        and spans that many RTTs (DCQCN's CNP reaction and the PFC loop act once per RTT). Shorter runs
        measured no frame at the bottleneck (utilisation 0 %)."""
        return 2.0 * (self.path_fill_us + MIN_MEASURED_RTTS * self.base_rtt_us)

    @property
    def headroom_effective_bytes(self) -> int:
        """Per-port headroom used: the given one, or 3 x C x link delay (the reference setup's rule)."""
        if self.headroom_bytes is not None:
            return self.headroom_bytes
        return int(3 * self.speed_gbps * 125.0 * self.link_delay_us)

    def with_seed(self, seed: int) -> Scenario:
        """The same scenario with another seed."""
        return replace(self, seed=seed)


@dataclass(frozen=True)
class Metrics:
    """Result of one run (or the median over seeds, see :func:`roce_tune.simulate.run_seeds`).

    ``efficiency_percent`` (incast) = ideal / actual with ideal = base RTT + all wire bytes / line rate and
    actual = first start -> last completion (the last ACK at its sender). ``slowest_fct_ratio`` = the
    slowest flow's completion time / that ideal. ``pfc_pause_ms`` = sum over paused ingress ports of
    (resume - pause). Queue figures are of the bottleneck egress, time-weighted; ``utilisation_percent`` =
    wire bytes the bottleneck sent / (line rate x measurement window). For long-lived runs the window is
    the second half of the run; for incasts it is first start -> last completion.
    """

    kind: str
    model: str
    seed: int
    efficiency_percent: float | None
    slowest_fct_ratio: float | None
    completion_us: float | None
    ideal_us: float | None
    pfc_pause_ms: float
    paused_senders: tuple[int, ...]
    mean_queue_bytes: float
    queue_std_bytes: float
    peak_queue_bytes: int
    utilisation_percent: float
    window_us: float
    cnps: int
    marked_packets: int
    packets: int
    dropped_packets: int

    def to_json(self) -> dict[str, object]:
        """Plain dict with unit-named keys (tuples become lists)."""
        d = asdict(self)
        d["paused_senders"] = list(self.paused_senders)
        return d


@dataclass(frozen=True)
class SimInputs:
    """What the simulator needs about one lossless egress port: speed (Gb/s), fan-in, base RTT (µs), the
    shared lossless pool (bytes), the PFC dynamic-threshold alpha, the ECN ramp and the senders' DCQCN."""

    speed_gbps: int
    fan_in: int
    base_rtt_us: float
    buffer_bytes: int
    pfc_alpha: float
    ecn: EcnSetting
    dcqcn: DcqcnParams
