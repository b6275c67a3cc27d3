"""Packet-level discrete-event engine: N senders, one bottleneck egress, PFC, ECN, DCQCN.

One packet = one RoCE frame (``Scenario.frame_bytes``); the engine follows each frame from the
sender NIC to the bottleneck switch, through the shared-buffer admission and the egress FIFO, to the
receiver, and the ACK/CNP back. Only the bottleneck egress can queue (every link runs at the same
speed, so the other hops forward at line rate); ACK, CNP and PFC frames travel on a strict-priority
class that is never paused, so their delay is fixed.

Event sources, all ordered by time:

* sender transmissions (a heap, with DCQCN rate-decrease checks and rate-increase timers);
* arrivals at the switch, ACK/CNP arrivals at senders, PFC frames at senders (FIFOs: their delay is
  constant, so they arrive in the order they were created);
* the bottleneck link finishing a frame (one scalar).

The switch MMU follows the dynamic-threshold shared-buffer model (PG reserve, shared pool, per-port
headroom, XOFF at ``alpha x free`` checked on enqueue, XON on dequeue) and the reaction point follows
the mlx5 DCQCN state machine; docs/simulate.md gives the rules and their sources.
"""

from __future__ import annotations

import heapq
import math
import sys
from collections import deque
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from roce_tune.simulate.model import (
    CONTROL_FRAME_BYTES,
    PFC_RESUME_OFFSET_BYTES,
    PG_RESERVE_BYTES,
    Metrics,
    Scenario,
)

INF = math.inf
_TX, _CUT, _TIMER = 0, 1, 2
#: random numbers drawn per block for the ECN marking decisions (drawn when first needed; the uniform
#: stream is the same whatever the block size, so the size only trades memory against calls)
_RNG_BLOCK = 1 << 12


class _Workload(NamedTuple):
    """Who sends what and when: start times (µs), bytes left per flow, run end, statistics window start."""

    starts_us: list[float]
    remaining_bytes: list[float]
    t_end_us: float
    window_start_us: float


class _Link(NamedTuple):
    """Line rate (bytes/µs) and the fixed delays around the bottleneck egress (µs)."""

    cap: float
    d_in: float               # sender -> switch propagation
    hops_out: int             # links from the bottleneck to the receiver
    out_const: float          # + hops_out x serialisation (per frame)
    ack_const: float          # ACK/CNP: receiver back to the sender
    pfc_delay: float          # PFC frame: switch to the sender


class _Mmu(NamedTuple):
    """Switch MMU (dynamic threshold) and the ECN ramp of the bottleneck egress (bytes)."""

    headroom: float
    reserve: float
    pool: float               # the shared pool; PG reserve and headroom come on top
    alpha_pfc: float
    kmin: float
    kmax: float
    pmax: float               # probability at Kmax (0..1)
    ramp: float


class _Reaction(NamedTuple):
    """DCQCN reaction point constants: rates in bytes/µs, times in µs."""

    byte_reset: float
    cnp_gap: float
    line: float
    min_rate: float
    ai: float
    hai: float
    thr: int
    g: float
    tau_alpha: float
    dec_period: float
    t_reset: float
    cut_scale: float
    min_factor: float
    first_rate: float
    alpha0: float
    clamp_always: bool


@dataclass(slots=True)
class _Totals:
    """What the event loop leaves behind for :func:`_metrics` (per-flow lists have one entry per sender)."""

    done_t: list[float]
    sw_paused: list[bool]
    pause_start: list[float]
    ever_paused: list[bool]
    pause_total: float
    egress: float
    q_last_t: float
    q_area: float
    q_area2: float
    q_peak: float
    sent_wire_window: float
    cnps: int
    marks: int
    packets: int
    drops: int


def simulate(sc: Scenario) -> Metrics:
    """Run one scenario and return its metrics.

    Time is in microseconds and sizes in bytes throughout. Deterministic for a given ``sc.seed``.

    Raises:
        ValueError: from :class:`Scenario` validation only (the engine itself does not fail on legal input).
    """
    rng = np.random.default_rng(sc.seed)
    work = _workload(sc, rng)
    totals = _event_loop(sc, work, rng)
    return _metrics(sc, work, totals)


def _workload(sc: Scenario, rng: np.random.Generator) -> _Workload:
    """Incast: one message per sender, starts jittered by U(0, start_jitter_us), window from the first start;
    long-lived: endless flows from t=0, window = the second half of the run."""
    n = sc.fan_in
    if sc.kind == "incast":
        starts = rng.uniform(0.0, sc.start_jitter_us, n).tolist() if sc.start_jitter_us > 0 else [0.0] * n
        return _Workload(starts, [float(sc.message_bytes)] * n, INF, min(starts))
    return _Workload([0.0] * n, [INF] * n, sc.duration_us, sc.duration_us / 2.0)


def _link(sc: Scenario) -> _Link:
    cap = sc.speed_gbps * 125.0                      # line rate, bytes per µs
    d = sc.link_delay_us
    ctrl_tx = CONTROL_FRAME_BYTES / cap
    star = sc.topology == "star"
    hops_out = 1 if star else 3
    hops_back = 2 if star else 4                     # links the ACK/CNP crosses back to the sender
    return _Link(cap=cap, d_in=d, hops_out=hops_out, out_const=hops_out * d,
                 ack_const=hops_back * (d + ctrl_tx), pfc_delay=d + ctrl_tx)


def _mmu(sc: Scenario) -> _Mmu:
    kmin, kmax = float(sc.ecn.kmin_bytes), float(sc.ecn.kmax_bytes)
    return _Mmu(headroom=sc.headroom_effective_bytes, reserve=PG_RESERVE_BYTES, pool=float(sc.buffer_bytes),
                alpha_pfc=sc.pfc_alpha, kmin=kmin, kmax=kmax, pmax=sc.ecn.pmax_percent / 100.0,
                ramp=kmax - kmin)


def _reaction(sc: Scenario, cap: float) -> _Reaction:
    """mlx5 DCQCN RP constants; model T has no byte counter and no NP CNP pacing."""
    p = sc.dcqcn
    model_m = sc.model == "M"
    line = cap if p.rpg_max_rate_mbps <= 0 else min(cap, p.rpg_max_rate_mbps / 8.0)
    return _Reaction(
        byte_reset=p.rpg_byte_reset_bytes if model_m else 0,
        cnp_gap=p.min_time_between_cnps_us if model_m else 0.0,
        line=line, min_rate=min(line, p.rpg_min_rate_mbps / 8.0),
        ai=p.rpg_ai_rate_mbps / 8.0, hai=p.rpg_hai_rate_mbps / 8.0, thr=p.rpg_threshold,
        g=1.0 - p.dce_tcp_g / 1024.0, tau_alpha=p.dce_tcp_rtt_us,
        dec_period=max(p.rate_reduce_monitor_period_us, 1e-3), t_reset=p.rpg_time_reset_us,
        cut_scale=2.0 ** (10 - p.rpg_gd), min_factor=1.0 - p.rpg_min_dec_fac_percent / 100.0,
        first_rate=p.rate_to_set_on_first_cnp_mbps / 8.0, alpha0=p.initial_alpha_value / 1023.0,
        clamp_always=bool(p.clamp_tgt_rate))


def _event_loop(sc: Scenario, work: _Workload, rng: np.random.Generator) -> _Totals:
    """Run the discrete-event loop until the last incast flow completes or the long-lived run ends.

    The state lives in local lists and scalars shared by the per-event handlers below (closures, so the
    hot path reads locals rather than attributes); the loop picks the earliest event source and calls its
    handler.
    """
    n = sc.fan_in
    payload, header = sc.payload_bytes, sc.header_bytes
    cap, d_in, hops_out, out_const, ack_const, pfc_delay = _link(sc)
    headroom, reserve, pool, alpha_pfc, kmin, kmax, pmax, ramp = _mmu(sc)
    (byte_reset, cnp_gap, line, min_rate, ai, hai, thr, g, tau_alpha, dec_period, t_reset, cut_scale,
     min_factor, first_rate, alpha0, clamp_always) = _reaction(sc, cap)
    starts, rem, t_end, w0 = work.starts_us, list(work.remaining_bytes), work.t_end_us, work.window_start_us

    # per-flow sender / RP state
    rate = [line] * n
    target = [line] * n
    alpha = [0.0] * n
    alpha_k = [0] * n            # alpha-update grid points applied since activation
    alpha_flag = [False] * n
    act_t = [INF] * n            # time of the first CNP (RP active after it)
    dec_flag = [False] * n
    cut_pending = [False] * n
    tst = [0] * n                # timer stage (increase events by timer since the last cut)
    bst = [0] * n                # byte-counter stage
    bcount = [0.0] * n
    timer_gen = [0] * n
    nxt = list(starts)           # pacing: earliest next transmission
    paused = [False] * n         # as seen by the sender
    tx_sched = [True] * n
    tx_gen = [0] * n             # invalidates a scheduled transmission when the rate changes
    last_send = [0.0] * n
    last_size = [0.0] * n
    done_t = [INF] * n
    last_cnp = [-INF] * n
    # switch state per ingress port
    ing = [0.0] * n
    hdrm = [0.0] * n
    sw_paused = [False] * n
    pause_start = [0.0] * n
    ever_paused = [False] * n
    shared_used = 0.0
    egress = 0.0
    fifo: deque[tuple[int, float, bool]] = deque()
    arr: deque[tuple[float, int, float, bool]] = deque()
    acks: deque[tuple[float, int, bool, bool]] = deque()
    pfcq: deque[tuple[float, int, bool]] = deque()
    heap: list[tuple[float, int, int, int, int]] = [(starts[i], i, _TX, i, 0) for i in range(n)]
    heapq.heapify(heap)
    seq = n
    deq_t = INF
    t_last = min(t_end, sys.float_info.max)     # -INF once the last incast flow completes
    # statistics
    q_last_t = 0.0
    q_area = q_area2 = 0.0
    q_peak = 0.0
    sent_wire_window = 0.0
    pause_total = 0.0
    cnps = marks = packets = drops = 0
    n_done = 0
    rand: list[float] = []
    ri = _RNG_BLOCK

    # ---- helpers shared by the handlers ----
    # (sender-side events go on the heap as (time, seq, kind, flow, generation); seq breaks ties FIFO.
    # Pushes, the queue integral and buffer accounting are written out in the handlers: they run per
    # frame, and a call each would cost the hot loop several percent.)
    def _xoff_threshold() -> float:
        """Dynamic threshold: a PG may hold alpha x the free shared pool."""
        free = pool - shared_used
        return alpha_pfc * (free if free > 0 else 0.0)

    def _ecn_mark() -> bool:
        """Marking on dequeue for a queue above Kmin: always above Kmax, else Pmax x (q-Kmin)/(Kmax-Kmin)."""
        nonlocal rand, ri
        if egress > kmax:
            return True
        if ri == _RNG_BLOCK:
            rand = rng.random(_RNG_BLOCK).tolist()
            ri = 0
        mark = rand[ri] < pmax * (egress - kmin) / ramp
        ri += 1
        return mark

    def _maybe_xon(i: int, t: float) -> None:
        """Resume ingress i once its headroom is drained and its shared use is below XOFF - resume offset."""
        nonlocal pause_total
        sh = ing[i] - reserve
        if sh <= 0 or sh + PFC_RESUME_OFFSET_BYTES <= _xoff_threshold():
            sw_paused[i] = False
            if t > w0:
                pause_total += t - (max(w0, pause_start[i]))
            pfcq.append((t + pfc_delay, i, False))

    def _maybe_xoff(i: int, t: float) -> None:
        """Pause ingress i when it spills into headroom or its shared use reaches the threshold."""
        sh = ing[i] - reserve
        thresh = _xoff_threshold()
        if hdrm[i] > 0.0 or (sh > 0 and sh >= thresh):
            sw_paused[i] = True
            ever_paused[i] = True
            pause_start[i] = t
            pfcq.append((t + pfc_delay, i, True))

    def _alpha_to(i: int, t: float) -> None:
        """Apply the alpha updates (every dce_tcp_rtt since the first CNP) due by time t."""
        k = int((t - act_t[i]) / tau_alpha + 1e-9)
        m = k - alpha_k[i]
        if m > 0:
            a = alpha[i]
            if alpha_flag[i]:
                a = (1.0 - g) * a + g
                alpha_flag[i] = False
                m -= 1
            alpha[i] = a * (1.0 - g) ** m
            alpha_k[i] = k

    def _repace(i: int, t: float) -> None:
        """The NIC rate limiter applies a new rate at once: move the pending transmission."""
        nonlocal seq
        if tx_sched[i] and nxt[i] > t:
            gap = last_size[i] / rate[i]
            tx = last_size[i] / cap
            new = last_send[i] + (max(tx, gap))
            new = max(new, t)
            nxt[i] = new
            tx_gen[i] += 1
            heapq.heappush(heap, (new, seq, _TX, i, tx_gen[i]))
            seq += 1

    def _increase(i: int, by_timer: bool, t: float) -> None:
        """One rate-increase event (timer or byte counter): fast recovery, additive or hyper increase."""
        ts, bs = tst[i], bst[i]
        if byte_reset > 0:
            hi, lo = (max(bs, ts)), (min(ts, bs))
        else:
            hi = lo = ts
        if hi < thr:                                  # fast recovery
            pass
        elif lo > thr:                                # hyper increase
            target[i] = min(line, target[i] + hai)
        else:                                         # additive increase
            target[i] = min(line, target[i] + ai)
        rate[i] = (rate[i] + target[i]) / 2.0
        _repace(i, t)
        if by_timer:
            tst[i] = ts + 1
        else:
            bst[i] = bs + 1

    # ---- sender-side events (the heap) ----
    def _rate_cut(i: int, t: float) -> None:
        """Rate-reduce monitor period elapsed: cut by alpha/2 (scaled by rpg_gd) if a CNP came in it."""
        nonlocal seq
        cut_pending[i] = False
        if not dec_flag[i] or done_t[i] != INF:
            return
        _alpha_to(i, t)
        if clamp_always or tst[i] or bst[i]:
            target[i] = rate[i]
        f = 1.0 - alpha[i] * cut_scale
        f = max(f, min_factor)
        r = rate[i] * f
        rate[i] = max(min_rate, r)
        _repace(i, t)
        tst[i] = bst[i] = 0
        bcount[i] = 0.0
        dec_flag[i] = False
        timer_gen[i] += 1
        heapq.heappush(heap, (t + t_reset, seq, _TIMER, i, timer_gen[i]))
        seq += 1

    def _increase_timer(i: int, t: float, gen: int) -> None:
        """rpg_time_reset elapsed without a cut: re-arm and increase."""
        nonlocal seq
        if gen != timer_gen[i] or done_t[i] < INF:
            return
        heapq.heappush(heap, (t + t_reset, seq, _TIMER, i, gen))
        seq += 1
        _increase(i, True, t)

    def _on_sender_event(t: float) -> None:
        """The earliest sender-side event: a transmission (inline, the hot path), a rate cut or a timer.

        A transmission sends one frame of flow i (unless paused, done or superseded by a re-pace) and
        schedules the next at the paced rate.
        """
        nonlocal seq
        _, _, kind, i, arg = heapq.heappop(heap)
        if kind == _CUT:
            _rate_cut(i, t)
            return
        if kind == _TIMER:
            _increase_timer(i, t, arg)
            return
        if arg != tx_gen[i]:
            return
        tx_sched[i] = False
        if paused[i] or rem[i] <= 0:
            return
        pay = min(rem[i], payload)
        rem[i] -= pay
        size = pay + header
        tx = size / cap
        a_t = t + tx + d_in
        if arr and a_t < arr[-1][0]:
            a_t = arr[-1][0]
        arr.append((a_t, i, size, rem[i] <= 0))
        gap = size / rate[i]
        nxt[i] = t + (max(tx, gap))
        last_send[i] = t
        last_size[i] = size
        if rem[i] > 0:
            heapq.heappush(heap, (nxt[i], seq, _TX, i, tx_gen[i]))
            seq += 1
            tx_sched[i] = True
        if byte_reset > 0 and act_t[i] < INF:
            _count_bytes(i, size, t)

    def _count_bytes(i: int, size: float, t: float) -> None:
        """Byte counter: one increase event per rpg_byte_reset bytes sent since the last cut."""
        bcount[i] += size
        while bcount[i] >= byte_reset:
            bcount[i] -= byte_reset
            _increase(i, False, t)

    # ---- switch events ----
    def _on_arrival(t: float) -> None:
        """A frame reaches the switch: buffer admission (reserve, shared, headroom), enqueue, XOFF check."""
        nonlocal shared_used, egress, q_peak, drops, deq_t, q_area, q_area2, q_last_t
        _, i, size, last = arr.popleft()
        free = pool - shared_used
        thresh = alpha_pfc * (free if free > 0 else 0.0)
        sh = ing[i] - reserve
        if size + hdrm[i] > headroom and size + (sh if sh > 0 else 0.0) > thresh:
            drops += 1                                # would be dropped: counted, kept (lossless by design)
        new_bytes = ing[i] + size
        if new_bytes <= reserve:
            ing[i] = new_bytes
        elif new_bytes - reserve > thresh:
            hdrm[i] += size
        else:
            ing[i] = new_bytes
            over = new_bytes - reserve
            shared_used += min(over, size)
        if t > q_last_t:                              # queue integral over the window, up to t
            lo_t = max(w0, q_last_t)
            if t > lo_t:
                q_area += egress * (t - lo_t)
                q_area2 += egress * egress * (t - lo_t)
            q_last_t = t
        egress += size
        if egress > q_peak and t >= w0:
            q_peak = egress
        fifo.append((i, size, last))
        if not sw_paused[i]:
            _maybe_xoff(i, t)
        if deq_t == INF:
            deq_t = t

    def _on_link_free(t: float) -> None:
        """The bottleneck link is free: send the head of the FIFO, release its buffer, mark, XON check."""
        nonlocal deq_t, shared_used, egress, sent_wire_window, packets, marks, q_area, q_area2, q_last_t
        if not fifo:
            deq_t = INF
            return
        i, size, last = fifo.popleft()
        h = hdrm[i]
        from_h = min(size, h)
        shared_i = ing[i] - reserve
        rest = size - from_h
        from_s = rest if rest < shared_i else (shared_i if shared_i > 0 else 0.0)
        hdrm[i] = h - from_h
        ing[i] -= rest
        shared_used -= from_s
        if t > q_last_t:                              # queue integral over the window, up to t
            lo_t = max(w0, q_last_t)
            if t > lo_t:
                q_area += egress * (t - lo_t)
                q_area2 += egress * egress * (t - lo_t)
            q_last_t = t
        egress -= size
        mark = egress > kmin and _ecn_mark()
        if sw_paused[i] and hdrm[i] <= 0.0:
            _maybe_xon(i, t)
        tx = size / cap
        deq_t = t + tx
        if t >= w0:
            sent_wire_window += size
        packets += 1
        t_rx = t + hops_out * tx + out_const
        cnp = False
        if mark:
            marks += 1
            if t_rx - last_cnp[i] >= cnp_gap:
                cnp = True
                last_cnp[i] = t_rx
        if cnp or last:
            acks.append((t_rx + ack_const, i, cnp, last))

    # ---- events at the senders (fixed delay FIFOs) ----
    def _first_cnp(i: int, t: float) -> None:
        """First CNP: the reaction point starts (alpha, optional first-CNP rate, a cut at the next period)."""
        nonlocal seq
        act_t[i] = t
        alpha[i] = alpha0
        alpha_k[i] = 0
        alpha_flag[i] = False
        if first_rate > 0 and first_rate < rate[i]:
            rate[i] = first_rate
            _repace(i, t)
        target[i] = rate[i]
        dec_flag[i] = True
        cut_pending[i] = True
        heapq.heappush(heap, (t + dec_period + 1e-3, seq, _CUT, i, 0))
        seq += 1

    def _next_cnp(i: int, t: float) -> None:
        """Later CNP: alpha update and a cut at the next rate-reduce monitor grid point."""
        nonlocal seq
        _alpha_to(i, t)
        alpha_flag[i] = True
        dec_flag[i] = True
        if not cut_pending[i]:
            g0 = act_t[i] + 1e-3
            k = math.floor((t - g0) / dec_period) + 1
            cut_pending[i] = True
            heapq.heappush(heap, (g0 + k * dec_period, seq, _CUT, i, 0))
            seq += 1

    def _on_ack(t: float) -> None:
        """ACK (flow done: the run stops after the last one) or CNP at its sender."""
        nonlocal n_done, cnps, t_last
        _, i, cnp, last = acks.popleft()
        if last:
            done_t[i] = t
            n_done += 1
            if n_done == n:
                t_last = -INF
            return
        cnps += 1
        if act_t[i] == INF:
            _first_cnp(i, t)
        else:
            _next_cnp(i, t)

    def _on_pfc_frame(t: float) -> None:
        """PAUSE/resume reaches the sender; a resumed flow with data left is rescheduled."""
        nonlocal seq
        _, i, pause = pfcq.popleft()
        paused[i] = pause
        if not pause and rem[i] > 0 and not tx_sched[i]:
            heapq.heappush(heap, (max(t, nxt[i]), seq, _TX, i, tx_gen[i]))
            seq += 1
            tx_sched[i] = True

    # Event sources in order of precedence on equal times: PFC frames, ACK/CNP, arrivals at the switch,
    # the bottleneck link, sender-side timers. The heap holds a sentinel at INF and the loop stops after
    # t_last (the run end, or for an incast the largest float), so an exhausted event list also ends the
    # run. Each handler has its own call site (one target per site keeps CPython's call specialisation).
    heapq.heappush(heap, (INF, -1, _TX, 0, -1))
    while True:
        t, src = deq_t, 3
        if heap[0][0] < t:
            t, src = heap[0][0], 4
        if arr and arr[0][0] <= t:
            t, src = arr[0][0], 2
        if acks and acks[0][0] <= t:
            t, src = acks[0][0], 1
        if pfcq and pfcq[0][0] <= t:
            t, src = pfcq[0][0], 0
        if t > t_last:
            break
        if src == 4:
            _on_sender_event(t)
        elif src == 2:
            _on_arrival(t)
        elif src == 3:
            _on_link_free(t)
        elif src == 0:
            _on_pfc_frame(t)
        else:
            _on_ack(t)
    return _Totals(done_t=done_t, sw_paused=sw_paused, pause_start=pause_start, ever_paused=ever_paused,
                   pause_total=pause_total, egress=egress, q_last_t=q_last_t, q_area=q_area, q_area2=q_area2,
                   q_peak=q_peak, sent_wire_window=sent_wire_window, cnps=cnps, marks=marks, packets=packets,
                   drops=drops)


def _incast_figures(sc: Scenario, work: _Workload,
                    done_t: list[float]) -> tuple[float, float, float | None, float]:
    """End of the incast (last completion), ideal completion (µs), efficiency (%) and slowest FCT / ideal."""
    n, payload, header = sc.fan_in, sc.payload_bytes, sc.header_bytes
    end = max(done_t)
    window = end - work.window_start_us
    wire = sum(math.ceil(sc.message_bytes / payload) * header + sc.message_bytes for _ in range(n))
    ideal = sc.base_rtt_us + wire / (sc.speed_gbps * 125.0)
    eff = 100.0 * ideal / window if window > 0 else None
    slowest = max(done_t[i] - work.starts_us[i] for i in range(n)) / ideal
    return end, ideal, eff, slowest


def _metrics(sc: Scenario, work: _Workload, s: _Totals) -> Metrics:
    """Close the statistics window (queue integral, open pauses) and build :class:`Metrics`."""
    n, w0 = sc.fan_in, work.window_start_us
    incast = sc.kind == "incast"
    ideal = eff = slowest = None
    if incast:
        end, ideal, eff, slowest = _incast_figures(sc, work, s.done_t)
    else:
        end = work.t_end_us
    window = end - w0
    q_area, q_area2, pause_total = s.q_area, s.q_area2, s.pause_total
    if end > s.q_last_t:
        lo_t = max(w0, s.q_last_t)
        q_area += s.egress * (end - lo_t)
        q_area2 += s.egress * s.egress * (end - lo_t)
    for i in range(n):
        if s.sw_paused[i]:
            pause_total += end - (max(w0, s.pause_start[i]))
    mean_q = q_area / window if window > 0 else 0.0
    var_q = max(0.0, q_area2 / window - mean_q * mean_q) if window > 0 else 0.0
    cap = sc.speed_gbps * 125.0
    return Metrics(
        kind=sc.kind, model=sc.model, seed=sc.seed,
        efficiency_percent=eff, slowest_fct_ratio=slowest,
        completion_us=(end - w0) if incast else None, ideal_us=ideal,
        pfc_pause_ms=pause_total / 1000.0,
        paused_senders=tuple(i for i in range(n) if s.ever_paused[i]),
        mean_queue_bytes=mean_q, queue_std_bytes=math.sqrt(var_q), peak_queue_bytes=int(s.q_peak),
        utilisation_percent=100.0 * s.sent_wire_window / (cap * window) if window > 0 else 0.0,
        window_us=window, cnps=s.cnps, marked_packets=s.marks, packets=s.packets, dropped_packets=s.drops)
