"""The "Done when" of the tuning rules: derived settings vs the vendor/paper defaults, simulated.

For every reference row's scenario (speed, fan-in, message size, DCQCN model, read from the packet-level
reference file like test_calibration.py) and the same scenario at 200G, 400G and 800G (the speeds of GPU
fabrics; 400G is the issue's own, 200G and 800G check that the per-speed rules hold between and beyond), the
tuner's derived values
(``resolve_ecn("derived")`` with the PFC trigger of the reference pool and alpha,
``resolve_dcqcn("derived")``) are simulated beside NVIDIA, SONiC and DCQCN-paper thresholds with firmware
DCQCN. Target (roce_tune.simulate.scorecard.judge): incast efficiency >= the best default - 2 points and
summed PFC pause <= that default's (+10 % + 0.2 ms for seed noise); long-lived utilisation >= 99 %.

Cases the rules miss are listed in KNOWN_MISSES with the physical reason, marked xfail(strict=True) so a
change that fixes one is reported; the plan's scorecard says the same for the engineer (plan.md). Rule
variants tried against all 44 cases (docs/derivation.md#kmax-first-rtt-burst, "what was tried"): Kmax 0.4 or
0.45 x onset, Kmin = Kmax/4 or /8, Pmax fixed at 2 or 5 % or capped at 10 %, AI/HAI x4 or x8 at 400G: each
leaves 9 to 13 misses and moves them between cases (a Kmin change of 0.05 % flips 8 MB x 8 M by 1.4 points),
so the rules are not fitted to these cases. The byte-counter rule (rpg_byte_reset 0 above 100G,
docs/derivation.md#dcqcn-byte-counter) fixed 400G 8 MB x 16 M, the 400G long-lived N = 4 M limit cycle and,
through the Pmax it feeds (fluid fixed point without the counter), 400G 8 MB x 32 in both models: 39 of 44 on
two seeds, 38 of 44 on the reference's five. Disabling the counter at 100G too (and the lower Pmax that gives)
then met 40 of 44 on five seeds (docs/derivation.md#dcqcn-byte-counter). At 200G and 800G 41 of 44 are met;
below 100G (25G, 50G) the rules miss more: docs/tuning-sweeps.md#other-link-speeds.

Seeds: the reference's own count per incast (5: its "Seeds" line), one 20 ms long-lived run (the reference:
3 x 40 ms), to keep the CI time. PFC-bound incasts are bimodal (docs/simulate.md#calibration), so a verdict
can turn on the seeds: before the 100G byte-counter change the rules missed 9 of the 88 cases on
seeds 1-5, 6 on seeds 1-2 and 13 on seeds 3-4; now 7 on seeds 1-5.
"""

from __future__ import annotations

import pytest

from roce_tune.simulate.model import DcqcnParams, Scenario
from roce_tune.simulate.reference import case_id
from roce_tune.simulate.runner import run_seeds
from roce_tune.simulate.scorecard import DEFAULTS, judge
from roce_tune.simulate.settings import resolve_dcqcn, resolve_ecn
from tests import references

pytestmark = pytest.mark.slow  # packet-level simulations, minutes of CPU; CI runs them (.ci/run, -m slow)

REF_PATH = references.simulation_reference()
#: None when absent (tests skip) or unreadable (test_reference_file_parsed fails with REF_PROBLEM)
REF, REF_PROBLEM = references.load_simulation_reference()
#: why the tests that need the reference skip without it
SKIP_WHY = REF_PROBLEM if REF_PATH is None else "reference unreadable: see test_reference_file_parsed"
#: incast seeds: the reference's own count (5 in SIMULATION-REFERENCE.md)
SEEDS = REF.incast_seeds if REF else 5
LONG_LIVED_US = 20_000.0
#: speeds every reference scenario is also judged at, besides the row's own
OTHER_SPEEDS_GBPS = (200, 400, 800)

#: case id -> why the derived rule misses it (docs/tuning-sweeps.md#where-no-setting-wins)
KNOWN_MISSES: dict[str, str] = {
    "incast-100G-8MBx16-M": "92.1 % with 2.8 ms of pause against SONiC's 95.5 % with 38.7 ms: with the "
                            "byte counter off the long incast recovers on the 300 us timer alone (counter "
                            "on: 97.9 % with 38.7 ms; docs/tuning-sweeps.md#dcqcn-byte-counter)",
    "incast-100G-8MBx16-T": "efficiency 93.9 vs 93.6 % (SONiC) but 2.7 vs 1.9 ms of pause: the ramp lets the "
                            "long incast reach the onset briefly",
    "incast-100G-8MBx32-T": "no setting wins both 1 MB and 8 MB x 32 (docs/tuning-sweeps.md#where-no-setting-"
                            "wins): the long incast favours the paper's 200 KB Kmax (89.9 % and 37 ms of "
                            "pause against 82.1 % and 46 ms derived), the short one a ramp near the onset",
    "incast-200G-8MBx32-M": "the 8 MB x 32 class of 100G, every setting PFC-bound: derived 82.1 % with 40 ms "
                            "of pause, NVIDIA 84.2 % with 67 ms",
    "incast-200G-8MBx32-T": "the 8 MB x 32 class of 100G: the paper's 200 KB Kmax cuts the long incast "
                            "early (83.8 % and 14.3 ms against 82.5 % and 31.7 ms derived)",
    "incast-800G-8MBx32-M": "every setting PFC-bound: derived 69.1 % with 9.8 ms of pause, NVIDIA 71.6 % "
                            "with 55 ms (the derived ramp pauses a fifth as long)",
    "long-lived-100G-N4-T": "98.7 % against the 99 % bar (defaults 99.0-100 %) with the 1 % Pmax the fluid "
                            "fixed point gives without the byte counter (with the counter's 5 %: 100.0 %, "
                            "but 6 instead of 4 misses at 100G)",
}


def _cases() -> list[tuple[str, int, int, int, str]]:
    if REF is None:
        return []
    out: list[tuple[str, int, int, int, str]] = []
    for row in REF.rows:
        for speed in sorted({row.speed_gbps, *OTHER_SPEEDS_GBPS}):
            c = (row.kind, speed, row.fan_in, row.message_bytes, row.model)
            if c not in out:
                out.append(c)
    return out


def _id(c: tuple[str, int, int, int, str]) -> str:
    kind, speed, n, msg, model = c
    return case_id(kind, speed, n, msg, model)


def _params() -> list[object]:
    if REF is None:
        return [pytest.param(None, marks=pytest.mark.skip(reason=SKIP_WHY))]
    out = []
    for c in _cases():
        marks = [pytest.mark.xfail(strict=True,
                                   reason=KNOWN_MISSES[_id(c)])] if _id(c) in KNOWN_MISSES else []
        out.append(pytest.param(c, id=_id(c), marks=marks))
    return out


def _simulate(c: tuple[str, int, int, int, str], ecn_name: str, dq: DcqcnParams) -> tuple[float, float,
                                                                                          float]:
    assert REF is not None
    kind, speed, n, msg, model = c
    ecn = resolve_ecn(ecn_name, None, speed, n, REF.base_rtt_us, REF.buffer_bytes, REF.pfc_alpha)
    sc = Scenario(kind=kind, speed_gbps=speed, fan_in=n, ecn=ecn, dcqcn=dq,
                  model=model,  # type: ignore[arg-type]
                  message_bytes=msg or 1, duration_us=LONG_LIVED_US, base_rtt_us=REF.base_rtt_us,
                  buffer_bytes=REF.buffer_bytes, pfc_alpha=REF.pfc_alpha, start_jitter_us=REF.start_jitter_us)
    s = run_seeds(sc, SEEDS if kind == "incast" else 1)
    key = "efficiency_percent" if kind == "incast" else "utilisation_percent"
    return float(s.median[key] or 0.0), float(s.median["pfc_pause_ms"]
                                              or 0.0), float(s.median["mean_queue_bytes"])


@pytest.mark.parametrize("case", _params())
def test_derived_meets_target(case: tuple[str, int, int, int, str]) -> None:
    speed = case[1]
    results = {"derived": _simulate(case, "derived", resolve_dcqcn("derived", speed))}
    fw = resolve_dcqcn("firmware", speed)
    for name in DEFAULTS:
        results[name] = _simulate(case, name, fw)
    ok, why = judge(case[0], results)
    table = "; ".join(f"{k} {v[0]:.1f} % {v[1]:.1f} ms" for k, v in results.items())
    assert ok, f"{_id(case)}: {why} ({table})"


def test_reference_file_parsed() -> None:
    if REF_PATH is None:
        pytest.skip(references.simulation_reference_skip())
    assert REF is not None, REF_PROBLEM
    assert REF.rows, "no result rows found"


def test_known_misses_name_real_cases() -> None:
    if REF is None:
        pytest.skip(SKIP_WHY)
    ids = {_id(c) for c in _cases()}
    assert set(KNOWN_MISSES) <= ids, sorted(set(KNOWN_MISSES) - ids)
