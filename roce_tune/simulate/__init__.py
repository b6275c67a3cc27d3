"""``roce-tune simulate``: a packet-level RoCEv2 simulator (PFC, ECN, DCQCN) for choosing settings.

Public API (pure functions over frozen dataclasses)::

    >>> from roce_tune.simulate import Scenario, EcnSetting, simulate
    >>> m = simulate(Scenario(kind="incast", speed_gbps=100, fan_in=4, message_bytes=200_000,
    ...                       ecn=EcnSetting(1_048_576, 2_097_152, 5.0), model="T"))
    >>> 0 < m.efficiency_percent <= 100
    True

:func:`simulate` runs one seed; :func:`run_seeds` runs several and gives the per-metric median with
min/max. The model, its assumptions and its calibration are in docs/simulate.md.
"""

from __future__ import annotations

from roce_tune.simulate.engine import simulate
from roce_tune.simulate.model import DcqcnParams, EcnSetting, Metrics, Scenario
from roce_tune.simulate.runner import SeedSummary, run_seeds

__all__ = ["DcqcnParams", "EcnSetting", "Metrics", "Scenario", "SeedSummary", "run_seeds", "simulate"]
