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
from collections import deque

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
#: random numbers drawn per block for the ECN marking decisions
_RNG_BLOCK = 1 << 16


def simulate(sc: Scenario) -> Metrics:
    """Run one scenario and return its metrics.

    Time is in microseconds and sizes in bytes throughout. Deterministic for a given ``sc.seed``.

    Raises:
        ValueError: from :class:`Scenario` validation only (the engine itself does not fail on legal input).
    """
    n = sc.fan_in
    cap = sc.speed_gbps * 125.0                      # line rate, bytes per µs
    rng = np.random.default_rng(sc.seed)
    d = sc.link_delay_us
    ctrl_tx = CONTROL_FRAME_BYTES / cap
    hops_out = 1 if sc.topology == "star" else 3     # links from the bottleneck to the receiver
    hops_back = 2 if sc.topology == "star" else 4    # links the ACK/CNP crosses back to the sender
    d_in = d
    out_const = hops_out * d                         # + hops_out x serialisation (per frame)
    ack_const = hops_back * (d + ctrl_tx)
    pfc_delay = d_in + ctrl_tx
    payload, header = sc.payload_bytes, sc.header_bytes
    # --- switch MMU (dynamic threshold) ---
    headroom = sc.headroom_effective_bytes
    reserve = PG_RESERVE_BYTES
    pool = float(sc.buffer_bytes)                   # the shared pool; PG reserve and headroom come on top
    alpha_pfc = sc.pfc_alpha
    kmin, kmax = float(sc.ecn.kmin_bytes), float(sc.ecn.kmax_bytes)
    pmax = sc.ecn.pmax_percent / 100.0
    ramp = kmax - kmin
    # --- DCQCN ---
    p = sc.dcqcn
    model_m = sc.model == "M"
    byte_reset = p.rpg_byte_reset_bytes if model_m else 0
    cnp_gap = p.min_time_between_cnps_us if model_m else 0.0
    line = cap if p.rpg_max_rate_mbps <= 0 else min(cap, p.rpg_max_rate_mbps / 8.0)
    min_rate = min(line, p.rpg_min_rate_mbps / 8.0)
    ai, hai = p.rpg_ai_rate_mbps / 8.0, p.rpg_hai_rate_mbps / 8.0
    thr = p.rpg_threshold
    g = 1.0 - p.dce_tcp_g / 1024.0
    tau_alpha = p.dce_tcp_rtt_us
    dec_period = max(p.rate_reduce_monitor_period_us, 1e-3)
    t_reset = p.rpg_time_reset_us
    cut_scale = 2.0 ** (10 - p.rpg_gd)
    min_factor = 1.0 - p.rpg_min_dec_fac_percent / 100.0
    first_rate = p.rate_to_set_on_first_cnp_mbps / 8.0
    alpha0 = p.initial_alpha_value / 1023.0
    clamp_always = bool(p.clamp_tgt_rate)

    incast = sc.kind == "incast"
    if incast:
        starts = rng.uniform(0.0, sc.start_jitter_us, n).tolist() if sc.start_jitter_us > 0 else [0.0] * n
        rem = [float(sc.message_bytes)] * n
        t_end = INF
    else:
        starts = [0.0] * n
        rem = [INF] * n
        t_end = sc.duration_us
    w0 = min(starts) if incast else sc.duration_us / 2.0

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
    nxt = [0.0] * n              # pacing: earliest next transmission
    paused = [False] * n         # as seen by the sender
    tx_sched = [False] * n
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
    heap: list[tuple[float, int, int, int, int]] = []
    seq = 0
    for i in range(n):
        heapq.heappush(heap, (starts[i], seq, _TX, i, 0))
        tx_sched[i] = True
        nxt[i] = starts[i]
        seq += 1
    deq_t = INF
    # statistics
    q_last_t = 0.0
    q_area = q_area2 = 0.0
    q_peak = 0.0
    sent_wire_window = 0.0
    pause_total = 0.0
    cnps = marks = packets = drops = 0
    n_done = 0
    rand = rng.random(_RNG_BLOCK)
    ri = 0

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

    while True:
        t = deq_t
        src = 3
        if heap and heap[0][0] < t:
            t, src = heap[0][0], 4
        if arr and arr[0][0] <= t:
            t, src = arr[0][0], 2
        if acks and acks[0][0] <= t:
            t, src = acks[0][0], 1
        if pfcq and pfcq[0][0] <= t:
            t, src = pfcq[0][0], 0
        if t > t_end or t == INF:
            break
        if src == 3:                                  # bottleneck link free: send the head of the FIFO
            if not fifo:
                deq_t = INF
                continue
            i, size, last = fifo.popleft()
            h = hdrm[i]
            from_h = min(size, h)
            shared_i = ing[i] - reserve
            rest = size - from_h
            from_s = rest if rest < shared_i else (shared_i if shared_i > 0 else 0.0)
            hdrm[i] = h - from_h
            ing[i] -= rest
            shared_used -= from_s
            if t > q_last_t:
                lo_t = max(w0, q_last_t)
                if t > lo_t:
                    q_area += egress * (t - lo_t)
                    q_area2 += egress * egress * (t - lo_t)
                q_last_t = t
            egress -= size
            mark = False
            if egress > kmin:
                if egress > kmax:
                    mark = True
                else:
                    if ri == _RNG_BLOCK:
                        rand = rng.random(_RNG_BLOCK)
                        ri = 0
                    mark = rand[ri] < pmax * (egress - kmin) / ramp
                    ri += 1
            if sw_paused[i] and hdrm[i] <= 0.0:
                sh = ing[i] - reserve
                free = pool - shared_used
                thresh = alpha_pfc * (free if free > 0 else 0.0)
                if sh <= 0 or sh + PFC_RESUME_OFFSET_BYTES <= thresh:
                    sw_paused[i] = False
                    if t > w0:
                        pause_total += t - (max(w0, pause_start[i]))
                    pfcq.append((t + pfc_delay, i, False))
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
        elif src == 2:                                # frame arrives at the switch
            _, i, size, last = arr.popleft()
            free = pool - shared_used
            thresh = alpha_pfc * (free if free > 0 else 0.0)
            sh = ing[i] - reserve
            if size + hdrm[i] > headroom and size + (sh if sh > 0 else 0.0) > thresh:
                drops += 1                            # would be dropped: counted, kept (lossless by design)
            new_bytes = ing[i] + size
            if new_bytes <= reserve:
                ing[i] = new_bytes
            elif new_bytes - reserve > thresh:
                hdrm[i] += size
            else:
                ing[i] = new_bytes
                over = new_bytes - reserve
                shared_used += min(over, size)
            if t > q_last_t:
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
                sh = ing[i] - reserve
                free = pool - shared_used
                thresh = alpha_pfc * (free if free > 0 else 0.0)
                if hdrm[i] > 0.0 or (sh > 0 and sh >= thresh):
                    sw_paused[i] = True
                    ever_paused[i] = True
                    pause_start[i] = t
                    pfcq.append((t + pfc_delay, i, True))
            if deq_t == INF:
                deq_t = t
        elif src == 4:                                # sender-side timers
            _, _, kind, i, arg = heapq.heappop(heap)
            if kind == _TX:
                if arg != tx_gen[i]:
                    continue
                tx_sched[i] = False
                if paused[i] or rem[i] <= 0:
                    continue
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
                    bcount[i] += size
                    while bcount[i] >= byte_reset:
                        bcount[i] -= byte_reset
                        _increase(i, False, t)
            elif kind == _CUT:
                cut_pending[i] = False
                if dec_flag[i] and done_t[i] == INF:
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
            else:                                     # rate-increase timer
                if arg != timer_gen[i] or done_t[i] < INF:
                    continue
                heapq.heappush(heap, (t + t_reset, seq, _TIMER, i, arg))
                seq += 1
                _increase(i, True, t)
        elif src == 1:                                # ACK / CNP at the sender
            _, i, cnp, last = acks.popleft()
            if last:
                done_t[i] = t
                n_done += 1
                if n_done == n:
                    break
                continue
            cnps += 1
            if act_t[i] == INF:                       # first CNP: RP starts
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
            else:
                _alpha_to(i, t)
                alpha_flag[i] = True
                dec_flag[i] = True
                if not cut_pending[i]:
                    g0 = act_t[i] + 1e-3
                    k = math.floor((t - g0) / dec_period) + 1
                    cut_pending[i] = True
                    heapq.heappush(heap, (g0 + k * dec_period, seq, _CUT, i, 0))
                    seq += 1
        else:                                         # PFC frame reaches the sender
            _, i, pause = pfcq.popleft()
            paused[i] = pause
            if not pause and rem[i] > 0 and not tx_sched[i]:
                heapq.heappush(heap, (max(t, nxt[i]), seq, _TX, i, tx_gen[i]))
                seq += 1
                tx_sched[i] = True

    # ---- metrics ----
    if incast:
        end = max(done_t)
        window = end - w0
        wire = sum(math.ceil(sc.message_bytes / payload) * header + sc.message_bytes for _ in range(n))
        ideal = sc.base_rtt_us + wire / cap
        eff = 100.0 * ideal / window if window > 0 else None
        slowest = max(done_t[i] - starts[i] for i in range(n)) / ideal
    else:
        end = t_end
        window = t_end - w0
        ideal = eff = slowest = None
    if end > q_last_t:
        lo_t = max(w0, q_last_t)
        q_area += egress * (end - lo_t)
        q_area2 += egress * egress * (end - lo_t)
    for i in range(n):
        if sw_paused[i]:
            pause_total += end - (max(w0, pause_start[i]))
    mean_q = q_area / window if window > 0 else 0.0
    var_q = max(0.0, q_area2 / window - mean_q * mean_q) if window > 0 else 0.0
    return Metrics(
        kind=sc.kind, model=sc.model, seed=sc.seed,
        efficiency_percent=eff, slowest_fct_ratio=slowest,
        completion_us=(end - w0) if incast else None, ideal_us=ideal,
        pfc_pause_ms=pause_total / 1000.0,
        paused_senders=tuple(i for i in range(n) if ever_paused[i]),
        mean_queue_bytes=mean_q, queue_std_bytes=math.sqrt(var_q), peak_queue_bytes=int(q_peak),
        utilisation_percent=100.0 * sent_wire_window / (cap * window) if window > 0 else 0.0,
        window_us=window, cnps=cnps, marked_packets=marks, packets=packets, dropped_packets=drops)
