"""Verification: read what the fabric did (nccl-tests results, counters) and judge it.

nccl-tests: :func:`~roce_tune.verify.nccl.parse_nccl_output` reads every stdout layout and
the ``-J`` JSON file into :class:`~roce_tune.verify.nccl.NcclRun` objects;
:func:`~roce_tune.verify.nccl_report.nccl_report` is the library side of ``roce-tune nccl-report``.
Bandwidth fields named ``*_gbps`` on nccl-tests results are GB/s (bytes), as nccl-tests prints them.

``roce-tune verify`` (:func:`~roce_tune.verify.run.verify_fabric`): :mod:`.launch` builds the
mpirun/srun/ssh command lines, :mod:`.collect` reads counters and NIC facts over netmiko sessions
(:mod:`.counters`, :mod:`.hostfacts` parse them), :mod:`.measure` runs one measurement,
:mod:`.diagnose` / :mod:`.diagnose_hosts` judge it (pure checks RT310–RT322 over :mod:`.signals`, shapes in
:mod:`.observation`), :mod:`.adjust` runs the
closed loop through the tuner and the apply engine, :mod:`.report` writes the report and plot.
"""

from __future__ import annotations

from roce_tune.verify.nccl import (
    LineRateFraction,
    NcclResult,
    NcclRow,
    NcclRun,
    busbw_fraction_of_line_rate,
    parse_nccl_file,
    parse_nccl_output,
)

__all__ = [
    "LineRateFraction",
    "NcclResult",
    "NcclRow",
    "NcclRun",
    "busbw_fraction_of_line_rate",
    "parse_nccl_file",
    "parse_nccl_output",
]
