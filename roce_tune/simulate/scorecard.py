"""Per-port-class scorecards: the plan's ECN/DCQCN values vs vendor and paper defaults, simulated.

A *port class* is what the simulator needs to know about a lossless egress: ASIC, speed, fan-in, base RTT,
shared lossless pool, dynamic-threshold alpha, the plan's ECN ramp and the NIC's DCQCN values. A fabric has
few of them (ports with the same facts share one), so a plan simulates each class once.

For each class the scorecard runs, in both reaction-point models (M: byte counter and CNP pacing; T:
timer only), a short (1 MB) and a long (8 MB) N:1 incast and N long-lived flows, for four settings:
the plan's (``derived``) and NVIDIA, SONiC and DCQCN-paper thresholds with firmware DCQCN. A row *meets
the target* when the plan's incast efficiency is >= the best of the three defaults - 2 points and its summed
PFC pause <= that default's (+10 % and 0.2 ms of seed noise), and its long-lived utilisation >= 99 %.

Results are cached on disk (``$ROCE_TUNE_CACHE`` or ``~/.cache/roce-tune/scorecards``), keyed by every input
and by the simulator itself (:func:`simulator_digest`: the bytes of its code and the default thresholds it
compares against), because the simulator is deterministic for given inputs, code and seeds. A cached entry
is checked row by row and judged again on reading; anything else is recomputed.
"""

from __future__ import annotations

import functools
import hashlib
import json
import math
import os
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from roce_tune.atomic import write_text_atomic
from roce_tune.simulate.model import DcqcnParams, EcnSetting, Scenario, SimInputs
from roce_tune.simulate.runner import run_seeds

if TYPE_CHECKING:
    from roce_tune.plan import Plan

#: the target margins (issue "Done when"): efficiency within 2 points of the best default, utilisation >= 99 %
EFFICIENCY_MARGIN_POINTS = 2.0
UTILISATION_FLOOR_PERCENT = 99.0
#: seed noise allowed on the summed PFC pause comparison
PFC_TOLERANCE_FRACTION = 0.10
PFC_TOLERANCE_MS = 0.2
SHORT_MESSAGE_BYTES = 1_000_000
LONG_MESSAGE_BYTES = 8_000_000
#: long-lived run length in the scorecard (statistics over its second half); the reference uses 40 ms
LONG_LIVED_US = 10_000.0
DEFAULTS = ("nvidia-default", "sonic-default", "dcqcn-paper")
CACHE_VERSION = 3  # 2: PortClass fields reordered (SimInputs first); 3: Kmax bound 2 x C x rpg_time_reset
#: the modules whose code decides a scorecard's numbers (event loop, inputs and defaults, seeds, cases)
_SIMULATOR_MODULES = ("engine.py", "model.py", "runner.py", "scorecard.py")


@functools.lru_cache(maxsize=1)
def simulator_digest() -> str:
    """sha256 of what a cached scorecard depends on besides its port class: the bytes of the simulator's
    modules (:data:`_SIMULATOR_MODULES`; an engine fix invalidates every cached result without anyone
    remembering to bump :data:`CACHE_VERSION`) and the default ECN thresholds it runs beside the plan's
    (:data:`roce_tune.tuner.ecn.NAMED_PROFILES`), and numpy's version (the engine's random draws; NumPy
    does not promise the same ``Generator`` stream across versions). Computed once per process."""
    from importlib import metadata

    from roce_tune.tuner.ecn import NAMED_PROFILES

    h = hashlib.sha256()
    h.update(f"numpy {metadata.version('numpy')}\0".encode())
    here = Path(__file__).resolve().parent
    for name in _SIMULATOR_MODULES:
        try:
            code = (here / name).read_bytes()
        except OSError:  # an install without sources (only .pyc): the package version stands for the code
            from roce_tune import __version__

            code = f"roce-tune {__version__}".encode()
        h.update(name.encode() + b"\0" + code + b"\0")
    h.update(json.dumps({d: NAMED_PROFILES[d][:3] for d in DEFAULTS}, sort_keys=True).encode())
    return h.hexdigest()


@dataclass(frozen=True)
class PortClass(SimInputs):
    """One class of lossless egress ports: the simulator inputs of its scorecard, its ASIC, how many ports
    it covers and one of them as ``example``."""

    asic: str = ""
    ports: int = 1
    example: str = ""

    def key(self) -> str:
        """Stable hash of every simulation input (not ``ports``/``example``) and of the simulator
        (:func:`simulator_digest`)."""
        d = asdict(replace(self, ports=0, example=""))
        d["ecn"].pop("label", None)
        d["dcqcn"].pop("label", None)
        blob = json.dumps([CACHE_VERSION, simulator_digest(), d], sort_keys=True)
        return hashlib.sha256(blob.encode()).hexdigest()[:24]


@dataclass(frozen=True)
class ScoreRow:
    """One scenario in one model: per setting (efficiency or utilisation %, summed PFC pause ms,
    mean queue B)."""

    scenario: str
    model: str
    kind: str
    results: dict[str, tuple[float, float, float]]
    meets: bool
    why: str


@dataclass(frozen=True)
class Scorecard:
    """A port class and its rows; ``seconds`` = simulation time spent (0 when read from the cache)."""

    port_class: PortClass
    rows: tuple[ScoreRow, ...]
    seeds: int
    seconds: float = 0.0

    @property
    def meets(self) -> bool:
        """Every row meets the target."""
        return all(r.meets for r in self.rows)

    def setting_misses(self) -> dict[str, list[str]]:
        """Per setting (``derived`` and each default), the rows it would miss if the plan used it.

        Each setting is judged like the plan's (:func:`judge` with it in the ``derived`` slot against the
        three defaults), so an empty list means that setting alone meets the target on every row of this
        class. Returns ``{setting: ["8 MB x 32 T: PFC pause 58.3 ms > dcqcn-paper 37.3 ms", ...]}``.
        """
        out: dict[str, list[str]] = {}
        for name in ("derived", *DEFAULTS):
            misses = []
            for r in self.rows:
                ok, why = judge(r.kind, {**{d: r.results[d] for d in DEFAULTS}, "derived": r.results[name]})
                if not ok:
                    misses.append(f"{r.scenario} {r.model}: {why}")
            out[name] = misses
        return out


def port_classes(plan: Plan) -> list[PortClass]:
    """The distinct lossless egress classes of ``plan`` (first port of each as ``example``), sorted.

    Two ports share a class only when every simulator input is the same (:func:`_class_key`: ASIC, speed,
    fan-in, ECN ramp, base RTT, pool, alpha and the DCQCN of the NIC behind the port), so a class's
    scorecard is the evidence for each of its ports.

    Raises:
        ValueError: a switch without an ingress lossless pool.
    """
    return sorted(_classes(plan).values(), key=lambda c: (c.asic, c.speed_gbps, c.fan_in, c.example))


def port_class_of(plan: Plan, device: str, port: str) -> PortClass | None:
    """The class (:func:`port_classes`, with its port count and example) of lossless switch port
    ``device:port``; None when there is no such port or it is not lossless with an ECN profile.

    Raises:
        ValueError: the switch has no ingress lossless pool.
    """
    from roce_tune.simulate.settings import port_inputs

    sw = next((s for s in plan.switches if s.name == device), None)
    pp = next((p for p in sw.ports if p.name == port), None) if sw else None
    if sw is None or pp is None or not pp.lossless or pp.ecn_profile not in {e.name for e in sw.ecn_profiles}:
        return None
    return _classes(plan).get(_class_key(sw.asic, port_inputs(plan, sw, pp)))


def _classes(plan: Plan) -> dict[tuple[object, ...], PortClass]:
    """Every lossless port of ``plan`` with an ECN profile its switch defines, grouped by :func:`_class_key`
    (insertion order: the first port of each class is its ``example``)."""
    from roce_tune.simulate.settings import nic_index, port_inputs

    nics = nic_index(plan)
    found: dict[tuple[object, ...], PortClass] = {}
    for sw in plan.switches:
        profiles = {e.name for e in sw.ecn_profiles}
        for pp in sw.ports:
            if not pp.lossless or not pp.ecn_profile or pp.ecn_profile not in profiles:
                continue
            inp = port_inputs(plan, sw, pp, nics=nics)
            k = _class_key(sw.asic, inp)
            if k in found:
                found[k] = replace(found[k], ports=found[k].ports + 1)
                continue
            found[k] = PortClass(speed_gbps=inp.speed_gbps, fan_in=inp.fan_in,
                                 base_rtt_us=round(inp.base_rtt_us, 3),
                                 buffer_bytes=inp.buffer_bytes, pfc_alpha=inp.pfc_alpha,
                                 ecn=replace(inp.ecn, label="derived"),
                                 dcqcn=replace(inp.dcqcn, label="plan"), asic=sw.asic, ports=1,
                                 example=f"{sw.name}:{pp.name}")
    return found


def _class_key(asic: str, inp: SimInputs) -> tuple[object, ...]:
    """Every simulator input of one port (labels aside), and its ASIC: equal keys, equal scorecards."""
    e, dq = inp.ecn, inp.dcqcn
    return (asic, inp.speed_gbps, inp.fan_in, round(inp.base_rtt_us, 3), inp.buffer_bytes, inp.pfc_alpha,
            e.kmin_bytes, e.kmax_bytes, e.pmax_percent, *(getattr(dq, k) for k in dq.keys()))


def _settings(pc: PortClass) -> dict[str, tuple[EcnSetting, DcqcnParams]]:
    from roce_tune.tuner.ecn import NAMED_PROFILES

    out = {"derived": (pc.ecn, pc.dcqcn)}
    for name in DEFAULTS:
        kmin, kmax, pmax, _ = NAMED_PROFILES[name]
        out[name] = (EcnSetting(kmin, kmax, pmax, label=name), DcqcnParams(label="firmware"))
    return out


def judge(kind: str, results: dict[str, tuple[float, float, float]]) -> tuple[bool, str]:
    """Does ``derived`` meet the target on this row? Returns (meets, reason when not)."""
    v, pfc, _ = results["derived"]
    if kind == "long-lived":
        if v >= UTILISATION_FLOOR_PERCENT:
            return True, ""
        best = max(results[d][0] for d in DEFAULTS)
        return False, (f"utilisation {v:.1f} % < {UTILISATION_FLOOR_PERCENT:.0f} %"
                       + (" (no default reaches it either)" if best < UTILISATION_FLOOR_PERCENT else ""))
    best = max(DEFAULTS, key=lambda d: results[d][0])
    bv, bp, _ = results[best]
    why = []
    if v < bv - EFFICIENCY_MARGIN_POINTS:
        why.append(f"efficiency {v:.1f} % < {best} {bv:.1f} % - {EFFICIENCY_MARGIN_POINTS:g}")
    if pfc > bp * (1 + PFC_TOLERANCE_FRACTION) + PFC_TOLERANCE_MS:
        why.append(f"PFC pause {pfc:.1f} ms > {best} {bp:.1f} ms")
    return not why, "; ".join(why)


def _cache_dir() -> Path:
    return Path(os.environ.get("ROCE_TUNE_CACHE") or Path.home() / ".cache" / "roce-tune") / "scorecards"


def _cache_path(pc: PortClass, seeds: int) -> Path:
    return _cache_dir() / f"{pc.key()}-s{seeds}.json"


def cached_scorecard(pc: PortClass, seeds: int = 1) -> Scorecard | None:
    """The scorecard of ``pc`` (``seeds`` per incast) from the on-disk cache, ``$ROCE_TUNE_CACHE`` or
    ``~/.cache/roce-tune``, ``scorecards/<class key>-s<seeds>.json``; rows checked and judged again
    (:func:`_read_cache`); None when it must be simulated. Never raises: an absent, unreadable or damaged
    entry is None (then recomputed, never trusted)."""
    cached = _read_cache(_cache_path(pc, seeds), pc)
    return None if cached is None else Scorecard(pc, cached, seeds, 0.0)


def scorecard(pc: PortClass, seeds: int = 1, use_cache: bool = True) -> Scorecard:
    """Simulate one port class (see the module docstring).

    Args:
        pc: the class.
        seeds: seeds per incast (long-lived runs use one; their window averages over many cycles).
        use_cache: read/write the on-disk cache.

    Raises:
        ValueError: seeds < 1 (from :func:`run_seeds`).
    """
    import time

    path = _cache_path(pc, seeds)
    cached = cached_scorecard(pc, seeds) if use_cache else None
    if cached is not None:
        return cached
    t0 = time.perf_counter()
    rows = [_score_row(pc, model, kind, label, msg, seeds) for model, kind, label, msg in _cases(pc)]
    card = Scorecard(pc, tuple(rows), seeds, time.perf_counter() - t0)
    if use_cache:
        _write_cache(path, card)
    return card


def _cases(pc: PortClass) -> list[tuple[str, str, str, int]]:
    """The scorecard's rows in order: (model, kind, label, message bytes; 0 for long-lived)."""
    n = pc.fan_in
    cases = [("incast", f"{SHORT_MESSAGE_BYTES // 1_000_000} MB x {n}", SHORT_MESSAGE_BYTES),
             ("incast", f"{LONG_MESSAGE_BYTES // 1_000_000} MB x {n}", LONG_MESSAGE_BYTES),
             ("long-lived", f"{n} long-lived flow{'' if n == 1 else 's'}", 0)]
    return [(model, kind, label, msg) for model in ("M", "T") for kind, label, msg in cases]


def _cached_row(r: object, model: str, kind: str, label: str) -> ScoreRow:
    """One cached row, checked against the case it must be and judged again (:func:`judge`).

    Raises:
        ValueError: the row is not that case, or a setting's cell is missing or not three finite numbers.
    """
    if not isinstance(r, dict) or (r.get("scenario"), r.get("model"), r.get("kind")) != (label, model, kind):
        raise ValueError("cached row is not the expected case")
    cells = r.get("results")
    if not isinstance(cells, dict) or set(cells) != {"derived", *DEFAULTS}:
        raise ValueError("cached row lacks a setting")
    results: dict[str, tuple[float, float, float]] = {}
    for name, cell in cells.items():
        if (not isinstance(cell, list) or len(cell) != 3
                or not all(type(x) in (int, float) and math.isfinite(x) for x in cell)):
            raise ValueError(f"cached cell {name} is not three numbers")
        results[name] = (float(cell[0]), float(cell[1]), float(cell[2]))
    ok, why = judge(kind, results)
    return ScoreRow(label, model, kind, results, ok, why)


def _read_cache(path: Path, pc: PortClass) -> tuple[ScoreRow, ...] | None:
    """The rows cached at ``path`` for class ``pc``; None when absent, unreadable, truncated or not exactly
    this class's rows with a complete, numeric cell per setting (such an entry is recomputed, never
    trusted). ``meets``/``why`` are judged again from the numbers rather than read."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        rows = data["rows"]
        cases = _cases(pc)
        if not isinstance(rows, list) or len(rows) != len(cases):
            return None
        return tuple(_cached_row(r, *case[:3]) for r, case in zip(rows, cases))
    except (OSError, ValueError, KeyError, TypeError, UnicodeDecodeError):
        return None


def _score_row(pc: PortClass, model: str, kind: str, label: str, msg: int, seeds: int) -> ScoreRow:
    """One case of the scorecard: every setting simulated (median over ``seeds`` for an incast, one
    long-lived run) and judged (:func:`judge`). Cells: (efficiency or utilisation %, PFC pause ms, mean
    queue bytes)."""
    results: dict[str, tuple[float, float, float]] = {}
    key = "efficiency_percent" if kind == "incast" else "utilisation_percent"
    for name, (ecn, dq) in _settings(pc).items():
        sc = Scenario(kind=kind, speed_gbps=pc.speed_gbps, fan_in=pc.fan_in,  # type: ignore[arg-type]
                      ecn=ecn, dcqcn=dq,
                      model=model, message_bytes=msg or 1, duration_us=LONG_LIVED_US,  # type: ignore[arg-type]
                      base_rtt_us=pc.base_rtt_us, buffer_bytes=pc.buffer_bytes, pfc_alpha=pc.pfc_alpha)
        s = run_seeds(sc, seeds if kind == "incast" else 1)
        results[name] = (round(float(s.median[key] or 0.0), 1),
                         round(float(s.median["pfc_pause_ms"] or 0.0), 2),
                         round(float(s.median["mean_queue_bytes"] or 0.0)))
    ok, why = judge(kind, results)
    return ScoreRow(label, model, kind, results, ok, why)


def _write_cache(path: Path, card: Scorecard) -> None:
    """Write atomically (temp file then rename); a read-only cache directory is not an error."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        write_text_atomic(path, json.dumps({"rows": [asdict(r) for r in card.rows]}))
    except OSError:
        pass


def _scorecard_job(args: tuple[PortClass, int, bool]) -> Scorecard:
    return scorecard(*args)


def plan_scorecards(plan: Plan, seeds: int = 1, use_cache: bool = True,
                    jobs: int | None = None) -> list[Scorecard]:
    """Scorecards of every lossless port class of ``plan`` (see :func:`port_classes`), in class order.

    Classes found in the cache are read here; the others are simulated in up to ``jobs`` worker processes
    (default: the CPU count), none started when at most one class is left; each class is independent and
    deterministic, so the result does not depend on ``jobs``.
    """
    classes = port_classes(plan)
    cards = [cached_scorecard(pc, seeds) if use_cache else None for pc in classes]
    todo = [i for i, card in enumerate(cards) if card is None]
    workers = min(len(todo), jobs or os.cpu_count() or 1)
    if workers <= 1:
        done = [scorecard(classes[i], seeds, use_cache) for i in todo]
    else:
        from concurrent.futures import ProcessPoolExecutor

        with ProcessPoolExecutor(workers) as ex:
            done = list(ex.map(_scorecard_job, [(classes[i], seeds, use_cache) for i in todo]))
    for i, card in zip(todo, done):
        cards[i] = card
    return [card for card in cards if card is not None]


def scorecard_lines(card: Scorecard) -> list[str]:
    """Markdown lines for one scorecard (a heading line, a table, and the rows that miss with why)."""
    pc = card.port_class
    e = pc.ecn
    head = (f"### {pc.asic} {pc.speed_gbps}G fan-in {pc.fan_in} ({pc.ports} "
            f"port{'s' if pc.ports != 1 else ''}, e.g. {pc.example})")
    lines = [head, "",
             f"Plan: Kmin {e.kmin_bytes} B / Kmax {e.kmax_bytes} B / Pmax {e.pmax_percent:g} %, DCQCN "
             f"rpg_time_reset {pc.dcqcn.rpg_time_reset_us:g} us, rpg_ai {pc.dcqcn.rpg_ai_rate_mbps:g} Mb/s; "
             f"pool {pc.buffer_bytes} B, alpha {pc.pfc_alpha:g}, base RTT {pc.base_rtt_us} us; {card.seeds} "
             "seed(s). Cells: efficiency (incast) or utilisation (long-lived) % · summed PFC pause ms · mean "
             "queue KB.", "",
             "| case | model | derived | NVIDIA 150K/1.5M/100% | SONiC 1M/2M/5% | paper 5K/200K/1% "
             "| target |",
             "|---|---|---|---|---|---|---|"]
    for r in card.rows:
        cells = [f"{v:.1f} · {p:.1f} · {q / 1000:.0f}"
                 for v, p, q in (r.results[k] for k in ("derived", *DEFAULTS))]
        lines.append(f"| {r.scenario} | {r.model} | " + " | ".join(cells)
                     + f" | {'met' if r.meets else 'MISSED: ' + r.why} |")
    missed = [r for r in card.rows if not r.meets]
    if missed:
        lines += ["", "Where the target is missed: " + _why_missed(card), "", _verdict(card)]
    return lines + [""]


_LABELS = {"derived": "the plan's values", "nvidia-default": "NVIDIA", "sonic-default": "SONiC",
           "dcqcn-paper": "the DCQCN paper's"}


def _verdict(card: Scorecard) -> str:
    """Does any setting (the plan's or a default) meet every row of this class? Said plainly, with
    each one's miss."""
    misses = card.setting_misses()
    winners = [n for n, m in misses.items() if not m]
    if not winners:
        first = "; ".join(f"{_LABELS[n]}: {m[0]}" + (f" (+{len(m) - 1} more)" if len(m) > 1 else "")
                          for n, m in misses.items())
        return ("**No setting achieves the target on this port class**: neither the plan's values nor the "
                f"NVIDIA, SONiC or DCQCN-paper values meet every row ({first}). The plan keeps its "
                "rule-based values; the reason is the one above, not a tuning error.")
    names = ", ".join(_LABELS[n] for n in winners)
    return (f"{names} would meet every row of this class where the plan's values do not "
            f"({'; '.join(misses['derived'])}); review the rule for this class (docs/tuning-sweeps.md).")


def _why_missed(card: Scorecard) -> str:
    """The physical reason the rows of this class miss (first-RTT burst vs PFC onset, limit cycle, timer)."""
    pc = card.port_class
    bdp = pc.speed_gbps * 125.0 * pc.base_rtt_us
    burst = (pc.fan_in - 1) * bdp
    onset = pc.buffer_bytes
    reasons = []
    if burst >= onset / 2:
        reasons.append(f"the first-RTT burst (N-1) x BDP = {burst / 1e6:.2f} MB reaches half the lossless "
                       f"pool ({onset / 1e6:.2f} MB): every setting is PFC-bound in a flow-start incast, and "
                       "which one finishes first depends on the pause pattern, not on the ramp")
    if any(r.kind == "long-lived" and not r.meets for r in card.rows):
        reasons.append("long-lived flows below 99 %: the DCQCN increase timer/byte counter limit cycle, "
                       "which ECN thresholds cannot fix (docs/derivation.md#pfc-bound-steady-state)")
    if not reasons:
        reasons.append("the 1 MB and 8 MB incasts pull the ramp in opposite directions at this fan-in; the "
                       "plan keeps the physics-based ramp rather than fitting one case "
                       "(docs/tuning-sweeps.md#where-no-setting-wins)")
    return "; ".join(reasons) + "."
