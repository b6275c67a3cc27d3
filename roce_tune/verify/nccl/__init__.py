"""nccl-tests output (text tables of every generation, and the ``-J`` JSON file) into runs.

Units: ``algbw_gbps`` / ``busbw_gbps`` / ``avg_busbw_gbps`` are **GB/s (10^9 bytes/s) exactly as
nccl-tests prints them** (``doc/PERFORMANCE.md``; column header ``(GB/s)``), not Gb/s, whatever the
attribute suffix says; the ``nccl-report`` and ``verify`` JSON documents (schema /2) name them
``*_gbytes_per_s``, keeping ``_gbps`` for line rates in Gb/s. :func:`busbw_fraction_of_line_rate`
converts them against a NIC line rate in Gb/s (``busbw × 8 / line rate``). Times are microseconds.

Layouts handled (tokens are located by the header's column names and the shape of each value,
never by fixed positions):

* first (2017-2019): ``# bytes N type [op] [root] time algbw busbw res``, no units line, time in ms,
  ``res`` = max relative error; rank lines ``Rank 0 on host device 0`` / ``Rank 0 uses device 0`` (no pid);
* oldest of the ``size`` layouts: header without ``#``, no ``redop``/``root``, ``error`` = max relative
  error (``1e+00``);
* ``redop`` + ``error`` (2.x); current ``redop`` + ``root`` + ``#wrong`` (count or ``N/A``);
* 2.20+ header lines ``# nccl-tests version …`` / ``# Collective test starting: X``; per-iteration,
  ``#bitdiff`` and ``timestamp`` columns; a row with an empty ``redop`` field (alltoall);
* NCCL INFO/WARN lines, prompts and launcher noise anywhere; ``srun -l`` / ``mpirun --tag-output`` /
  ``mpiexec -l`` / ``kubectl logs --prefix`` / timestamp line prefixes; UTF-16 files (PowerShell);
  several tables (collectives) in one file; a file cut after its last full line;
* JSON written by ``-J/--output_file x.json`` (nccl-tests ``src/util.cu``, JSON_FILE_VERSION 1-3):
  ``{"version", "args", "nccl_version", "config": {…, "devices": [...]}, "results": [{"size",
  "count", "type", "redop", "root", "out_of_place": {"time"|"cpu_time", "alg_bw", "bus_bw",
  "nwrong"}, "in_place": {…}}], "out_of_bounds": {"count", "okay"}, "average_bus_bandwidth":
  {"bandwidth", "okay"}, "errors": [...]}``; a truncated file keeps every complete result object.

Collective name, first match wins (``NcclRun.collective_source`` says which):
``header`` (``# Collective test starting: all_reduce_perf`` or ``… concluded``; JSON ``args[0]``) →
``label`` (a ``<name> result`` line a wrapper printed before the table) → ``command line`` (a
``*_perf`` binary on a line right before the run) → ``inferred`` from the first row with size > 0:
a reduction ``redop`` with ``root >= 0`` → reduce; size == count × type size → all_reduce;
size == nranks × count × type size → reduce_scatter; ``redop`` none/absent with root >= 0 and
size == count × type size → broadcast; out-of-place validated and every in-place ``N/A`` (nccl-tests checks
no in-place sendrecv/alltoall): a reduction with size == count × type size → sendrecv, ``none`` → alltoall
(nccl-tests ``getCollByteCount`` of each collective) →
``command line`` inherited from the last ``*_perf`` command earlier in the file → ``unknown``.

Verdict: ``failed`` on ``Out of bounds values : N`` with N > 0, on a ``#wrong`` > 0 / ``error``
above nccl-tests' limit / ``*`` when no summary was printed, on ``Avg bus bandwidth … FAILED``, on
``Test NCCL/CUDA failure`` / ``Test timeout`` (and the pre-2.13 ``NCCL failure f.cu:N``), launcher abort
lines and a process killed by a signal or a cancelled job, on no result rows, and when each process ran
alone (a rank number listed twice, the header or summary printed twice, or a launcher started N > 1
processes but one (host, pid) listed the ranks): those runs keep no rows and no bandwidth figure.

Modules: :mod:`.model` (the run, its rows and results, verdict constants), :mod:`.facts` (what is gathered
while reading; naming the collective), :mod:`.layout` (table header and row), :mod:`.loglines` (NCCL log
lines, launcher prefixes), :mod:`.text` (stdout), :mod:`.jsonfile` (``-J``), :mod:`.summary` (the verdict),
:mod:`.parse` (the entry points).
"""

from __future__ import annotations

from roce_tune.verify.nccl.facts import (
    RunFacts,
    collective_from_program,
    infer_collective,
    nccl_version_from_code,
)
from roce_tune.verify.nccl.layout import num
from roce_tune.verify.nccl.model import (
    COLLECTIVES,
    ERROR_LIMIT,
    INCOMPLETE,
    NO_ROWS,
    RAN_ALONE,
    RULE_NOT_NCCL,
    SINGLE_RANK,
    TYPE_BYTES,
    LineRateFraction,
    NcclResult,
    NcclRow,
    NcclRun,
    busbw_fraction_of_line_rate,
    gbytes_per_s_to_line_rate_fraction,
    not_nccl_error,
)
from roce_tune.verify.nccl.parse import parse_nccl_file, parse_nccl_output
from roce_tune.verify.nccl.summary import finalize_run

__all__ = [
    "COLLECTIVES",
    "ERROR_LIMIT",
    "INCOMPLETE",
    "NO_ROWS",
    "RAN_ALONE",
    "RULE_NOT_NCCL",
    "SINGLE_RANK",
    "TYPE_BYTES",
    "LineRateFraction",
    "NcclResult",
    "NcclRow",
    "NcclRun",
    "RunFacts",
    "busbw_fraction_of_line_rate",
    "collective_from_program",
    "finalize_run",
    "gbytes_per_s_to_line_rate_fraction",
    "infer_collective",
    "nccl_version_from_code",
    "not_nccl_error",
    "num",
    "parse_nccl_file",
    "parse_nccl_output",
]
