"""Several seeds of one scenario, summarised as median (min-max) per metric."""

from __future__ import annotations

import statistics
from dataclasses import dataclass

from roce_tune.simulate.engine import simulate
from roce_tune.simulate.model import Metrics, Scenario

#: metrics summarised over seeds (all numeric fields of :class:`Metrics` that are not counters of the run)
SUMMARY_KEYS = ("efficiency_percent", "slowest_fct_ratio", "completion_us", "pfc_pause_ms",
                "mean_queue_bytes",
                "queue_std_bytes", "peak_queue_bytes", "utilisation_percent")


@dataclass(frozen=True)
class SeedSummary:
    """Median, min and max over seeds for each key in :data:`SUMMARY_KEYS` (None where not defined,
    e.g. efficiency of a long-lived run), plus the per-seed runs and the union of paused senders."""

    scenario: Scenario
    runs: tuple[Metrics, ...]
    median: dict[str, float | None]
    minimum: dict[str, float | None]
    maximum: dict[str, float | None]
    paused_senders: tuple[int, ...]

    def to_json(self) -> dict[str, object]:
        """Unit-named keys: the medians at top level, ``<key>_min``/``<key>_max`` beside them, seeds
        listed."""
        out: dict[str, object] = {}
        for k in SUMMARY_KEYS:
            out[k] = self.median[k]
            out[k + "_min"] = self.minimum[k]
            out[k + "_max"] = self.maximum[k]
        out["paused_senders"] = list(self.paused_senders)
        out["seeds"] = [r.seed for r in self.runs]
        out["runs"] = [r.to_json() for r in self.runs]
        return out


def run_seeds(scenario: Scenario, seeds: int = 5, first_seed: int = 1) -> SeedSummary:
    """Run ``scenario`` with seeds ``first_seed .. first_seed + seeds - 1``.

    Raises:
        ValueError: seeds < 1.
    """
    if seeds < 1:
        raise ValueError(f"seeds must be >= 1, got {seeds}")
    runs = tuple(simulate(scenario.with_seed(first_seed + k)) for k in range(seeds))
    med: dict[str, float | None] = {}
    lo: dict[str, float | None] = {}
    hi: dict[str, float | None] = {}
    for k in SUMMARY_KEYS:
        vals = [getattr(r, k) for r in runs if getattr(r, k) is not None]
        med[k] = statistics.median(vals) if vals else None
        lo[k] = min(vals) if vals else None
        hi[k] = max(vals) if vals else None
    paused = tuple(sorted({i for r in runs for i in r.paused_senders}))
    return SeedSummary(scenario, runs, med, lo, hi, paused)
