"""Response model of the emulated fabric: bandwidth and counters as a function of the settings
currently applied to the emulated switch and hosts. Pure functions plus small state-file helpers
(stdlib only: the stubs run it as a script). README.md in this directory explains the model.

Per directed host link s→r (ring order of the job's hosts):

* ``B = R × rtt_us`` (BDP, bytes). ``T`` — the egress queue at which the emulated switch pauses the
  senders (:func:`pfc_onset_bytes`) — follows the switch's own buffer configuration, as the ASIC's
  dynamic threshold does: the lossless PG of the ingress port (CONFIG_DB ``BUFFER_PG`` → its
  ``BUFFER_PROFILE`` ``dynamic_th`` → the ``BUFFER_POOL`` size) admits ``L(n) = α pool / (1 + n α)``,
  ``α = 2^dynamic_th``, with the ``n`` ingress PGs that feed this egress queue in the job congested
  at once (the job's fan-in on that port); the egress queue reaches ``n × L(n)`` when they all send
  XOFF, capped by what the egress queue itself may hold (its ``BUFFER_QUEUE`` profile, ``α_e pool_e /
  (1 + α_e)``). ``dynamic_th`` 7 is α = ∞ (the PGs split the pool) as in the Mellanox SAI. Model
  parameters ``pfc_onset_bytes`` or ``pfc_onset_bdp`` (× B) override it, e.g. for a shallow-buffer
  fabric where other congested PGs share the pool.
* DCQCN active (ECN on the egress queue, ECT in the TOS, RP on at s, NP on at r, Kmin < T):
  the queue settles at ``q* = Kmin + ρ (Kmax − Kmin)`` with ``ρ = min(1, 1.5 / Pmax%)``; otherwise
  nothing slows the sender and the queue runs into T (``q* = ∞``).
* utilisation ``u = 1 − 0.45 e^{−min(q*, T)/(0.35 B)}`` (a short queue drains between rate cuts);
* PFC: q* ≥ T on a lossless path → pause share ``φ = 0.2 + 0.2 (1 − T/q*)`` and efficiency × (1 − φ);
  0.8 T ≤ q* < T → bursts ``φ = 0.05 (q* − 0.8T)/(0.2T)``; on a lossy path the same queue drops packets
  (``loss = lossy_loss_rate``) and go-back-N costs 45 %;
* recovery: ``ai_norm = rpg_ai_rate / ai_reference_mbps`` (5 Mb/s, the firmware step: with the byte
  counter the time to regain a share is ``byte_reset / AI`` at any speed, docs/derivation.md
  "DCQCN increase steps"); penalty ``0.3 (1 − ai_norm)²`` when ai_norm < 1, and
  ``0.005 log2(ai_norm)`` above it (larger steps overshoot: long-lived utilisation drops, as in
  docs/tuning-sweeps.md "DCQCN knobs");
* marks: ``p(q*) = Pmax (q* − Kmin)/(Kmax − Kmin)`` on the ramp (q* capped at T), CNPs = 0.8 × marks;
* efficiency ``e = base × u × (1 − φ) × (1 − recovery) × mtu_factor × slow_s × slow_r``, capped at
  ``ceiling``; the job's peak busbw is ``min_links(e) × R/8`` GB/s and ``busbw(size) = peak × size /
  (size + s_half_bytes)``.

Every penalty is monotone in its input on each side of the tuner's value, so "lower Kmax below the
onset", "raise a starved ramp (Kmax below a BDP) toward the tuner's" or "raise AI toward the
tuner's value" always helps until the next penalty starts — the property the adjust tests rely on.
"""

from __future__ import annotations

import fcntl
import json
import math
import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

DEFAULTS: dict[str, float] = {
    "rtt_us": 5.0, "base_efficiency": 0.965, "ceiling": 1.0, "ai_reference_mbps": 5.0,
    "s_half_bytes": float(2 << 20), "lossy_loss_rate": 2e-4, "nvlink_gbytes": 150.0,
}
#: Parameters with no default: when given they replace the onset the switch's buffers give
#: (``pfc_onset_bytes`` in bytes, or ``pfc_onset_bdp`` in BDPs; bytes win when both are given).
ONSET_OVERRIDES = ("pfc_onset_bytes", "pfc_onset_bdp")
#: Onset (in BDPs) when the switch state has no buffer configuration for the PG (then noted in runs.log).
UNCONFIGURED_ONSET_BDP = 8.0
#: SAI dynamic_th at or above this is alpha = infinity (Mellanox SAI ``SAI_BUFFER_ALPHA_INFINITY``).
ALPHA_INFINITY_TH = 7
MTU_FACTOR = {4096: 1.0, 2048: 0.97, 1024: 0.92, 512: 0.85, 256: 0.75}
BUSBW_FACTOR = {"all_reduce": lambda n: 2 * (n - 1) / n, "all_gather": lambda n: (n - 1) / n,
                "alltoall": lambda n: (n - 1) / n, "sendrecv": lambda n: 1.0}
WIRE_OVERHEAD_BYTES = 58  # Eth 14 + IPv4 20 + UDP 8 + BTH 12 + ICRC 4


@dataclass(frozen=True)
class LinkSettings:
    """Everything the model reads for one direction s→r."""

    speed_gbps: float
    prio_tx: int
    prio_rx: int
    lossless: bool
    ecn_on: bool
    ect: bool
    kmin: float
    kmax: float
    pmax_percent: float
    rp_enabled: bool
    np_enabled: bool
    ai_mbps: float
    mtu: int
    slow: float = 1.0
    #: egress queue at PFC onset from the switch's buffers and the job's fan-in (None: not configured)
    pfc_onset_bytes: float | None = None


@dataclass(frozen=True)
class LinkOutcome:
    efficiency: float
    q_star: float
    pause_share: float
    mark_prob: float
    loss_rate: float
    notes: list[str] = field(default_factory=list)
    pfc_onset_bytes: float = 0.0


def dynamic_threshold_bytes(pool_bytes: float, dynamic_th: int, n_congested: int) -> float:
    """Shared-buffer bytes one of ``n_congested`` PGs (or queues) admits under the dynamic threshold.

    Each may hold ``α × free``, ``α = 2^dynamic_th``; with n congested at once they settle at
    ``α pool / (1 + n α)`` (SAI ``SAI_BUFFER_PROFILE_ATTR_SHARED_DYNAMIC_TH``; mlx5 ``port_buffer.c``).
    ``dynamic_th >= 7`` is α = ∞ (pool / n), ``<= -8`` is α = 0.
    """
    n = max(1, n_congested)
    if dynamic_th >= ALPHA_INFINITY_TH:
        return pool_bytes / n
    if dynamic_th <= -8:
        return 0.0
    alpha = 2.0 ** dynamic_th
    return alpha * pool_bytes / (1 + n * alpha)


def pfc_onset_bytes(pg: dict[str, Any] | None, queue: dict[str, Any] | None, fan_in: int) -> float | None:
    """Egress queue at which the ``fan_in`` ingress PGs feeding it all send XOFF, capped by the queue's own
    limit: ``min(n × L_pg(n), L_queue(1))``. ``pg``/``queue``: ``{"pool_bytes", "dynamic_th"}`` from
    :func:`switch_state_from_db` (``queue`` None = no egress limit). None when the PG has no buffer
    profile."""
    if not pg:
        return None
    n = max(1, fan_in)
    onset = n * _limit(pg, n)
    if queue:
        onset = min(onset, _limit(queue, 1))
    return onset


def _limit(buf: dict[str, Any], n: int) -> float:
    if "static_bytes" in buf:  # static_th profile: a fixed limit per PG/queue
        return float(buf["static_bytes"])
    return dynamic_threshold_bytes(float(buf["pool_bytes"]), int(buf["dynamic_th"]), n)


def link_onset(s: LinkSettings, params: dict[str, float]) -> tuple[float, str]:
    """T for one link and where it came from: an override parameter, the switch's buffers, or the fallback."""
    bdp = s.speed_gbps * 1e9 / 8 * {**DEFAULTS, **params}["rtt_us"] * 1e-6
    if "pfc_onset_bytes" in params:
        return float(params["pfc_onset_bytes"]), "model parameter pfc_onset_bytes"
    if "pfc_onset_bdp" in params:
        return float(params["pfc_onset_bdp"]) * bdp, ("model parameter pfc_onset_bdp = "
                                                      f"{params['pfc_onset_bdp']:g}")
    if s.pfc_onset_bytes is not None:
        return s.pfc_onset_bytes, "switch buffers (dynamic threshold x fan-in)"
    return UNCONFIGURED_ONSET_BDP * bdp, ("no buffer profile for the PG on the switch: "
                                          f"{UNCONFIGURED_ONSET_BDP:g} x BDP")


def link_outcome(s: LinkSettings, params: dict[str, float]) -> LinkOutcome:
    """The model equations of the module docstring for one directed link."""
    p = {**DEFAULTS, **params}
    bdp = s.speed_gbps * 1e9 / 8 * p["rtt_us"] * 1e-6
    onset, onset_from = link_onset(s, params)
    cc = s.ecn_on and s.ect and s.rp_enabled and s.np_enabled and s.kmin < onset
    notes = [f"PFC onset {round(onset)} B from {onset_from}"]
    if cc:
        rho = min(1.0, 1.5 / max(s.pmax_percent, 1e-6))
        q = s.kmin + rho * max(0.0, s.kmax - s.kmin)
    else:
        q = math.inf
        notes.append("no ECN reaction before the PFC onset")
    util = 1 - 0.45 * math.exp(-min(q, onset) / (0.35 * bdp))
    pause = loss = 0.0
    penalty = 0.0
    if q >= onset:
        if s.lossless:
            pause = 0.2 + 0.2 * (1 - onset / q)
            penalty = pause
        else:
            loss, penalty = p["lossy_loss_rate"], 0.45
    elif q >= 0.8 * onset:
        if s.lossless:
            pause = 0.05 * (q - 0.8 * onset) / (0.2 * onset)
            penalty = pause
        else:
            loss, penalty = p["lossy_loss_rate"] / 10, 0.1
    elif not s.lossless:
        loss, penalty = p["lossy_loss_rate"] / 100, 0.02
    ai_norm = s.ai_mbps / p["ai_reference_mbps"]
    recovery = 0.0
    if cc and ai_norm < 1:
        recovery = 0.3 * (1 - ai_norm) ** 2
    elif cc and ai_norm > 1:
        recovery = 0.005 * math.log2(ai_norm)
    qm = min(q, onset)
    mark = 0.0
    if cc and qm > s.kmin:
        span = max(1.0, s.kmax - s.kmin)
        mark = s.pmax_percent / 100 * min(1.0, (qm - s.kmin) / span)
    eff = p["base_efficiency"] * util * (1 - penalty) * (1 - recovery) * MTU_FACTOR.get(s.mtu, 0.7) * s.slow
    return LinkOutcome(efficiency=min(eff, p["ceiling"]), q_star=q, pause_share=pause, mark_prob=mark,
                       loss_rate=loss, notes=notes, pfc_onset_bytes=onset)


def message_sizes(lo: int, hi: int, factor: int) -> list[int]:
    """nccl-tests size sweep: lo, lo×f, … ≤ hi."""
    out, size = [], max(1, lo)
    while size <= hi:
        out.append(size)
        size *= max(2, factor)
    return out


def busbw_curve(peak_gbytes: float, sizes: list[int], params: dict[str, float]) -> list[float]:
    """busbw (GB/s) per message size: ``peak × size / (size + s_half)``."""
    half = {**DEFAULTS, **params}["s_half_bytes"]
    return [peak_gbytes * s / (s + half) for s in sizes]


# ------------------------------------------------------------------------------ state files
@contextmanager
def locked(fabric_dir: Path) -> Iterator[None]:
    """Serialise every counter update of the fabric (several stubs may run at once)."""
    fabric_dir.mkdir(parents=True, exist_ok=True)
    with open(fabric_dir / ".lock", "w") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def read_json(path: Path, default: Any) -> Any:
    """JSON file content, or ``default`` when it does not exist."""
    return json.loads(path.read_text()) if path.is_file() else default


def write_json(path: Path, data: Any) -> None:
    """Write atomically (temp file + rename)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}")
    tmp.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n")
    os.replace(tmp, path)


#: RDMA hw_counters the stubs count; mlx5 exposes these sysfs files (at 0) from the moment the port is up
HW_COUNTERS = ("np_ecn_marked_roce_packets", "np_cnp_sent", "rp_cnp_handled", "rp_cnp_ignored",
               "out_of_sequence", "packet_seq_err", "local_ack_timeout_err", "implied_nak_seq_err")


def zero_nic_counters(root: Path, netdev: str, rdma: str) -> None:
    """Give a host NIC the counters a real mlx5 port shows before any traffic: every per-priority
    ``ethtool -S`` counter and :data:`HW_COUNTERS` at 0 (kept when already counting)."""
    path = root / "var/lib/roce-emu/ethtool_stats" / f"{netdev}.json"
    stats = read_json(path, {})
    for p in range(8):
        for d in ("rx", "tx"):
            for what in ("packets", "bytes", "pause", "pause_duration"):
                stats.setdefault(f"{d}_prio{p}_{what}", 0)
    stats.setdefault("rx_discards_phy", 0)
    write_json(path, stats)
    hwdir = root / "sys/class/infiniband" / rdma / "ports/1/hw_counters"
    hwdir.mkdir(parents=True, exist_ok=True)
    for name in HW_COUNTERS:
        if not (hwdir / name).exists():
            (hwdir / name).write_text("0\n")


def add_counts(target: dict[str, int], incr: dict[str, float]) -> None:
    """``target[k] += round(incr[k])`` (counters are integers)."""
    for k, v in incr.items():
        target[k] = int(target.get(k, 0)) + round(v)


def _buffers(db: dict[str, Any], table: str, port: str) -> dict[str, dict[str, Any]]:
    """Per PG (``BUFFER_PG``) or queue (``BUFFER_QUEUE``) of ``port``: the shared-buffer limit of its
    profile, ``{"pool_bytes", "dynamic_th", "profile"}`` or ``{"static_bytes", "profile"}``."""
    profiles, pools = db.get("BUFFER_PROFILE", {}), db.get("BUFFER_POOL", {})
    out: dict[str, dict[str, Any]] = {}
    for key, entry in db.get(table, {}).items():
        bport, _, ids = key.partition("|")
        prof = profiles.get(str(entry.get("profile", "")).strip("[]").split("|")[-1])
        if bport != port or prof is None:
            continue
        if "static_th" in prof:
            limit: dict[str, Any] = {"static_bytes": int(prof["static_th"])}
        elif "dynamic_th" in prof and prof.get("pool") in pools:
            limit = {"pool_bytes": int(pools[prof["pool"]]["size"]), "dynamic_th": int(prof["dynamic_th"])}
        else:
            continue
        for one in _expand(ids):
            out[str(one)] = {**limit, "profile": entry["profile"]}
    return out


#: ``WRED_PROFILE.ecn`` modes that mark green packets (sonic-wred-profile.yang leaf ``ecn``; default
#: ``ecn_none``): RoCE traffic is unpoliced, so green
ECN_MARKS_GREEN = frozenset({"ecn_green", "ecn_green_yellow", "ecn_green_red", "ecn_all"})


def switch_state_from_db(db: dict[str, Any]) -> dict[str, Any]:
    """What the model needs from a SONiC CONFIG_DB: per port PFC priorities, DSCP→TC and TC→PG maps,
    the WRED/ECN profile of each queue (bytes, percent) and the shared-buffer limit of each PG and
    queue (:func:`_buffers`; what :func:`pfc_onset_bytes` reads)."""
    maps = db.get("DSCP_TO_TC_MAP", {})
    pg_maps = db.get("TC_TO_PRIORITY_GROUP_MAP", {})
    qos = db.get("PORT_QOS_MAP", {})
    wred = db.get("WRED_PROFILE", {})
    ports: dict[str, Any] = {}
    for port in db.get("PORT", {}):
        pq = qos.get(port, {})
        mname = pq.get("dscp_to_tc_map") or qos.get("global", {}).get("dscp_to_tc_map")
        queues = {}
        for key, q in db.get("QUEUE", {}).items():
            qport, _, qid = key.partition("|")
            if qport != port or not q.get("wred_profile") or q["wred_profile"] not in wred:
                continue
            prof = wred[q["wred_profile"]]
            for one in _expand(qid):
                queues[str(one)] = {
                    "ecn": prof.get("ecn", "ecn_none") in ECN_MARKS_GREEN,  # RoCE traffic is green
                    "kmin": float(prof.get("green_min_threshold", 0)),
                    "kmax": float(prof.get("green_max_threshold", 0)),
                    "pmax": float(prof.get("green_drop_probability", 0)), "profile": q["wred_profile"]}
        pgname = pq.get("tc_to_pg_map") or qos.get("global", {}).get("tc_to_pg_map")
        ports[port] = {"pfc_enable": [int(x) for x in str(pq.get("pfc_enable", "")).split(",") if x.strip()],
                       "dscp_to_tc": {int(k): int(v) for k, v in maps.get(mname,
                                                                          {}).items()} if mname else {},
                       "tc_to_pg": {int(k): int(v) for k, v in pg_maps.get(pgname,
                                                                           {}).items()} if pgname else {},
                       "queues": queues, "pg_buffers": _buffers(db, "BUFFER_PG", port),
                       "queue_buffers": _buffers(db, "BUFFER_QUEUE", port)}
    return {"ports": ports}


def _expand(qid: str) -> list[int]:
    if "-" in qid:
        a, b = qid.split("-", 1)
        return list(range(int(a), int(b) + 1))
    return [int(x) for x in qid.split(",") if x.strip().isdigit()]
