"""Parse nccl-tests output (text tables of every generation, and the ``-J`` JSON file) into runs.

Units: ``algbw_gbps`` / ``busbw_gbps`` / ``avg_busbw_gbps`` are **GB/s (10^9 bytes/s) exactly as
nccl-tests prints them** (``doc/PERFORMANCE.md``; column header ``(GB/s)``), not Gb/s. The names are
fixed by the ``nccl-report`` JSON contract. :func:`busbw_fraction_of_line_rate` converts them
against a NIC line rate in Gb/s (``busbw × 8 / line rate``). Times are microseconds.

Layouts handled (tokens are located by the header's column names and the shape of each value,
never by fixed positions):

* oldest: header without ``#``, no ``redop``/``root``, ``error`` = max relative error (``1e+00``);
* ``redop`` + ``error`` (2.x); current ``redop`` + ``root`` + ``#wrong`` (count or ``N/A``);
* 2.20+ header lines ``# nccl-tests version …`` / ``# Collective test starting: X``; per-iteration,
  ``#bitdiff`` and ``timestamp`` columns; a row with an empty ``redop`` field (alltoall);
* NCCL INFO/WARN lines, prompts and launcher noise anywhere; ``srun -l`` / ``mpirun --tag-output``
  line prefixes; several tables (collectives) in one file; a file cut after its last full line;
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
size == nranks × count × type size → reduce_scatter; ``redop`` none/empty with root >= 0 and
size == count × type size → broadcast (nccl-tests ``getCollByteCount`` of each collective) →
``command line`` inherited from the last ``*_perf`` command earlier in the file → ``unknown``.

Verdict: ``failed`` on ``Out of bounds values : N`` with N > 0, on a ``#wrong`` > 0 / ``error``
above nccl-tests' limit / ``*`` when no summary was printed, on ``Avg bus bandwidth … FAILED``, on
``Test NCCL/CUDA failure`` and launcher abort lines, on a summary without result rows, and when each process ran
alone (a rank number listed twice, the header or summary printed twice, or a launcher started N > 1
processes but one (host, pid) listed the ranks): those runs keep no rows and no bandwidth figure.
Otherwise ``incomplete`` when the output (or JSON file) ends before the summary: the run was killed or
cut short, so it is never reported as a pass.
"""

from __future__ import annotations

import json
import math
import re
import statistics
from dataclasses import dataclass, field
from pathlib import PurePath
from typing import Literal

from pydantic import BaseModel, ConfigDict

from roce_tune.findings import Finding, Location, RoceTuneError, Severity

RULE_NOT_NCCL = "RT301"
RAN_ALONE = "each process ran alone (nccl-tests built without MPI)"
NO_ROWS = "no result rows (the output stops before the results table)"
INCOMPLETE = "output ends before the summary (no 'Out of bounds values' / 'Avg bus bandwidth' line)"
SINGLE_RANK = "1 rank only: busbw is 0 by definition and no traffic crossed the network"

#: Known collective names (nccl-tests binaries are ``<name>_perf``).
COLLECTIVES = ("all_reduce", "all_gather", "alltoall", "alltoallv", "reduce_scatter", "broadcast",
               "reduce", "sendrecv", "gather", "scatter", "hypercube")
_REDUCING = {"all_reduce", "reduce", "reduce_scatter"}
#: Element size in bytes of nccl-tests ``test_typenames``.
TYPE_BYTES = {"int8": 1, "uint8": 1, "char": 1, "f8e4m3": 1, "f8e5m2": 1, "half": 2, "float16": 2,
              "bfloat16": 2, "int32": 4, "uint32": 4, "int": 4, "float": 4, "float32": 4,
              "int64": 8, "uint64": 8, "double": 8, "float64": 8}
#: Old nccl-tests ``DeltaMaxValue(type)``: a reduction's max relative ``error`` above this failed
#: (the largest value any version used); non-reductions and integer types allowed no error.
ERROR_LIMIT = {"half": 5e-2, "float16": 5e-2, "bfloat16": 1e-2, "float": 1e-5, "float32": 1e-5,
               "double": 1e-12, "float64": 1e-12}


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class NcclResult(_Frozen):
    """One placement (out-of-place or in-place) of one row.

    Attributes:
        time_us: time per iteration, µs (``cputime`` when nccl-tests ran with ``-C 1``).
        algbw_gbps: algorithm bandwidth, GB/s (10^9 bytes/s) as printed.
        busbw_gbps: bus bandwidth, GB/s (10^9 bytes/s) as printed.
        wrong: ``#wrong`` element count; ``None`` when ``N/A`` or the column is the old ``error``.
        max_error: old ``error`` column (max relative error), ``None`` otherwise.
        flagged: the old layout marked the value with ``*`` (error above its limit).
    """

    time_us: float | None = None
    algbw_gbps: float | None = None
    busbw_gbps: float | None = None
    wrong: int | None = None
    max_error: float | None = None
    flagged: bool = False

    @property
    def validated(self) -> bool:
        """True if nccl-tests checked this result (a count or an error value is printed)."""
        return self.wrong is not None or self.max_error is not None


class NcclRow(_Frozen):
    """One message size of a run. ``size_bytes`` and ``count`` (elements) are as printed."""

    size_bytes: int
    count: int
    type: str
    redop: str | None = None
    root: int | None = None
    out_of_place: NcclResult | None = None
    in_place: NcclResult | None = None
    line: int | None = None

    @property
    def oop_busbw_gbps(self) -> float | None:
        """Out-of-place busbw, GB/s."""
        return self.out_of_place.busbw_gbps if self.out_of_place else None

    @property
    def ip_busbw_gbps(self) -> float | None:
        """In-place busbw, GB/s."""
        return self.in_place.busbw_gbps if self.in_place else None

    @property
    def oop_algbw_gbps(self) -> float | None:
        """Out-of-place algbw, GB/s."""
        return self.out_of_place.algbw_gbps if self.out_of_place else None

    @property
    def ip_algbw_gbps(self) -> float | None:
        """In-place algbw, GB/s."""
        return self.in_place.algbw_gbps if self.in_place else None

    @property
    def oop_time_us(self) -> float | None:
        """Out-of-place time, µs."""
        return self.out_of_place.time_us if self.out_of_place else None

    @property
    def ip_time_us(self) -> float | None:
        """In-place time, µs."""
        return self.in_place.time_us if self.in_place else None

    @property
    def oop_wrong(self) -> int | None:
        """Out-of-place ``#wrong`` count."""
        return self.out_of_place.wrong if self.out_of_place else None

    @property
    def ip_wrong(self) -> int | None:
        """In-place ``#wrong`` count."""
        return self.in_place.wrong if self.in_place else None

    @property
    def busbw_gbps(self) -> float | None:
        """Out-of-place busbw, else in-place (GB/s): the figure people quote for a size."""
        return self.oop_busbw_gbps if self.oop_busbw_gbps is not None else self.ip_busbw_gbps

    def results(self) -> list[tuple[str, NcclResult]]:
        """The placements present, as ``[("out-of-place", r), ("in-place", r)]``."""
        return [(n, r) for n, r in (("out-of-place", self.out_of_place), ("in-place", self.in_place)) if r]


class NcclRun(_Frozen):
    """One collective's table (one nccl-tests invocation).

    Attributes:
        collective: ``all_reduce``, ``alltoall`` … or ``unknown``; ``collective_source`` says how
            it was found (``header``, ``label``, ``command line``, ``inferred``, ``none``).
        rows: the result rows (empty when the run failed before or instead of a result).
        avg_busbw_gbps: GB/s; the printed ``Avg bus bandwidth`` (``avg_busbw_source="printed"``),
            else the mean busbw of every out-of-place and in-place result with size > 0
            (``"computed"``; nccl-tests averages both placements, ``common.cu``), else ``None``.
        max_busbw_gbps: GB/s, highest busbw of a row with size > 0.
        status: ``failed`` (validation, a failure line, a summary but no rows, ran alone) >
            ``incomplete`` (the output ends before the summary: a killed or cut-short run, whose rows
            are kept but which is never a pass) > ``not-validated`` (every ``#wrong`` is N/A, or
            ``validation: 0``) > ``ok``.
        problems: plain-words notes; failures first.
        complete: the ``Out of bounds`` / ``Avg bus bandwidth`` summary was printed.
        line: 1-based line where the run starts in ``source``.
    """

    collective: str
    collective_source: str
    rows: list[NcclRow]
    avg_busbw_gbps: float | None
    avg_busbw_source: Literal["printed", "computed"] | None
    max_busbw_gbps: float | None
    status: Literal["ok", "failed", "incomplete", "not-validated"]
    problems: list[str]
    out_of_bounds: int | None = None
    nranks: int | None = None
    ndevices: int | None = None
    hosts: list[str] = []
    nccl_version: str | None = None
    nccl_tests_version: str | None = None
    complete: bool = False
    source: str = "<text>"
    line: int | None = None
    format: Literal["text", "json"] = "text"

    @property
    def largest_message_row(self) -> NcclRow | None:
        """The row with the largest size (> 0) that has a busbw."""
        rows = [r for r in self.rows if r.size_bytes > 0 and r.busbw_gbps is not None]
        return max(rows, key=lambda r: (r.size_bytes, r.busbw_gbps)) if rows else None


class LineRateFraction(_Frozen):
    """busbw as a fraction of the NIC line rate. ``line_rate_gbps`` is Gb/s (bits)."""

    line_rate_gbps: float
    largest_message_size_bytes: int | None
    largest_message: float | None
    average: float | None


def gbytes_per_s_to_line_rate_fraction(busbw_gbps: float, line_rate_gbps: float) -> float:
    """GB/s (nccl-tests, 10^9 bytes/s) → fraction of a line rate in Gb/s: ``busbw × 8 / rate``.

    >>> round(gbytes_per_s_to_line_rate_fraction(50.0, 400), 3)
    1.0
    """
    if line_rate_gbps <= 0:
        raise ValueError(f"line rate {line_rate_gbps} Gb/s must be positive")
    return busbw_gbps * 8.0 / line_rate_gbps


def busbw_fraction_of_line_rate(run: NcclRun, line_rate_gbps: float) -> LineRateFraction:
    """Largest-message and average busbw of ``run`` as fractions of ``line_rate_gbps`` (Gb/s).

    busbw is normalised so that its ideal equals the per-rank link bandwidth for every collective
    (nccl-tests ``doc/PERFORMANCE.md``), so 1.0 means line rate. Fractions are ``None`` when the run
    has no figure, or has one rank (busbw is 0 by definition, nothing crossed the network).

    Raises:
        ValueError: ``line_rate_gbps`` not positive.
    """
    gbytes_per_s_to_line_rate_fraction(0.0, line_rate_gbps)  # validates the rate
    big = run.largest_message_row
    usable = run.nranks != 1
    big_bw = big.busbw_gbps if big else None
    return LineRateFraction(
        line_rate_gbps=line_rate_gbps,
        largest_message_size_bytes=big.size_bytes if big else None,
        largest_message=gbytes_per_s_to_line_rate_fraction(big_bw, line_rate_gbps)
        if usable and big_bw is not None else None,
        average=gbytes_per_s_to_line_rate_fraction(run.avg_busbw_gbps, line_rate_gbps)
        if usable and run.avg_busbw_gbps is not None else None)


# ----------------------------------------------------------------------------------------------
# shared helpers

def not_nccl_error(source: str, text: str, why: str) -> RoceTuneError:
    """The RT301 error for a text that is not (usable) nccl-tests output."""
    first = next((ln.strip() for ln in text.splitlines() if ln.strip()), "")
    shown = (first[:80] + "…") if len(first) > 80 else first
    msg = f"{source} is not nccl-tests output ({why}); first line: {shown!r}" if first else \
        f"{source} is empty: no nccl-tests output"
    return RoceTuneError([Finding(
        rule=RULE_NOT_NCCL, severity=Severity.error, message=msg,
        fix="pass the stdout of an nccl-tests binary (e.g. all_reduce_perf) or its -J JSON file",
        location=Location(file=source, line=1))])


def nccl_version_from_code(code: int) -> str:
    """``NCCL_VERSION_CODE`` → ``"2.18.3"`` (X*10000+Y*100+Z since 2.9, X*1000+Y*100+Z before)."""
    if code >= 10000:
        return f"{code // 10000}.{code % 10000 // 100}.{code % 100}"
    return f"{code // 1000}.{code % 1000 // 100}.{code % 100}"


def collective_from_program(name: str) -> str | None:
    """``/path/all_reduce_perf`` / ``alltoall_perf_mpi`` / ``all_reduce`` → canonical name."""
    base = PurePath(name.strip()).name
    base = re.sub(r"_perf(_mpi)?$", "", base)
    return base if base in COLLECTIVES else None


def infer_collective(redop: str | None, root: int | None, size: int, count: int, dtype: str,
                     nranks: int | None) -> str | None:
    """Collective from one row's shape (see module docstring), or ``None`` if ambiguous."""
    reducing = redop is not None and redop.lower() not in ("", "none")
    if reducing and root is not None and root >= 0:
        return "reduce"
    ts = TYPE_BYTES.get(dtype.lower())
    if not ts or count <= 0 or size <= 0 or size % (count * ts) or nranks == 1:
        return None
    ratio = size // (count * ts)
    if reducing:
        return "all_reduce" if ratio == 1 else "reduce_scatter"
    if redop is not None and root is not None and root >= 0 and ratio == 1:
        return "broadcast"
    return None


def finalize_run(b: RunFacts) -> NcclRun:
    """Turn the facts gathered for one run (text or JSON) into a :class:`NcclRun`."""
    fails: list[str] = list(b.fail_notes)
    notes: list[str] = []
    rows = list(b.rows)
    ranks = [r[0] for r in b.ranks]
    dup_rank = next((r for r in ranks if ranks.count(r) > 1), None)
    procs = {(r[2], r[1]) for r in b.ranks}  # (host, pid): containers reuse pids across hosts
    evidence = []
    if dup_rank is not None:
        evidence.append(f"rank {dup_rank} listed {ranks.count(dup_rank)} times")
    if b.headers > 1:
        evidence.append(f"table header printed {b.headers} times")
    if b.summaries > 1:
        evidence.append(f"summary printed {b.summaries} times")
    if b.launcher_np and b.launcher_np > 1 and len(procs) == 1:
        evidence.append(f"launcher started {b.launcher_np} processes but one process listed its ranks")
    ran_alone = bool(evidence)
    if ran_alone:
        fails += [RAN_ALONE, "; ".join(evidence) + ": rebuild nccl-tests with `make MPI=1`"
                  + (f" ({len(rows)} row{'s' if len(rows) > 1 else ''} ignored, no bandwidth figure)"
                     if rows else "")]
        rows = []
    elif not rows and b.complete:
        fails.append(NO_ROWS)
    hosts = list(dict.fromkeys(r[2] for r in b.ranks))
    nranks = len(set(ranks)) if ranks else b.nranks_hint
    name, how = b.collective or (None, "none")
    if name is None and rows:
        r0 = next((r for r in rows if r.size_bytes > 0), rows[0])
        name = infer_collective(r0.redop, r0.root, r0.size_bytes, r0.count, r0.type, nranks)
        how = "inferred" if name else "none"
    if name is None and b.inherited:  # the last command line before this run
        name, how = b.inherited, "command line"
    if name is None and rows:
        notes.append("collective not named in the output and not inferable from the rows")
    if nranks is None and rows and name in ("all_gather", "reduce_scatter", "alltoall"):
        rc = next((r for r in rows if r.count > 0), None)
        ts = TYPE_BYTES.get(rc.type.lower()) if rc else None
        if rc and ts and rc.size_bytes % (rc.count * ts) == 0:
            nranks = rc.size_bytes // (rc.count * ts)
    if b.oob is not None and b.oob > 0:
        fails.append(f"validation failed: Out of bounds values : {b.oob}")
    limit_for = (lambda t: ERROR_LIMIT.get(t.lower(), 0.0)) if (
        name in _REDUCING or (name is None and any(r.redop for r in rows))) else (lambda t: 0.0)
    validated = any(x.validated for r in rows for _, x in r.results())
    for place in ("out-of-place", "in-place"):
        res = [(r, x) for r in rows for p, x in r.results() if p == place]
        bad = [(r, x) for r, x in res if (x.wrong or 0) > 0 or x.flagged
               or (x.max_error is not None and x.max_error > limit_for(r.type))]
        if bad and b.oob is None:
            r, x = bad[0]
            what = f"{x.wrong} wrong elements" if x.wrong else f"max error {x.max_error:.0e}"
            fails.append(f"validation failed: {what} at {r.size_bytes} bytes ({place})"
                         + (f" and {len(bad) - 1} more rows" if len(bad) > 1 else ""))
        elif bad and b.oob == 0:
            x = bad[0][1]
            shown = f"{x.wrong} wrong" if x.wrong else f"error {x.max_error:.0e}"
            notes.append(f"{place} results show {shown} in {len(bad)} of {len(res)} rows, "
                         "but nccl-tests counted 0 out-of-bounds values")
        na = sum(1 for _, x in res if not x.validated)
        if validated and na:
            notes.append(f"N/A {place} results ({na} of {len(res)} rows not validated)")
    if b.avg_failed:
        shown = "?" if b.avg is None else f"{b.avg:g}"
        fails.append(f"Avg bus bandwidth {shown} GB/s FAILED the nccl-tests minimum check")
    positive = [r for r in rows if r.size_bytes > 0]
    bws = [x.busbw_gbps for r in positive for _, x in r.results() if x.busbw_gbps is not None]
    if len(positive) < len(rows):
        notes.append(f"{len(rows) - len(positive)} rows with size 0 left out of the bandwidth figures")
    if rows and not validated:
        notes.insert(0, "not validated: #wrong is N/A in every row"
                     + (" (validation: 0; run with -c 1)" if b.validation == 0 else " (run with -c 1)"))
    if nranks == 1 and rows:
        notes.append(SINGLE_RANK)
    if rows and not b.complete:
        notes.append(INCOMPLETE)
    notes += b.notes
    avg_src: Literal["printed", "computed"] | None
    if ran_alone:
        avg, avg_src, mx = None, None, None
    elif b.avg is not None:
        avg, avg_src, mx = b.avg, "printed", max(bws) if bws else None
    else:
        avg = statistics.fmean(bws) if bws else None
        avg_src, mx = ("computed" if bws else None), (max(bws) if bws else None)
    if not rows and not b.complete and not ran_alone:
        notes.insert(0, NO_ROWS)
    status: Literal["ok", "failed", "incomplete", "not-validated"] = (
        "failed" if fails else "incomplete" if not b.complete
        else "not-validated" if rows and not validated else "ok")
    return NcclRun(
        collective=name or "unknown", collective_source=how, rows=rows, avg_busbw_gbps=avg,
        avg_busbw_source=avg_src, max_busbw_gbps=mx, status=status, problems=fails + notes,
        out_of_bounds=b.oob, nranks=nranks,
        ndevices=len({(r[2], r[3]) for r in b.ranks}) or None, hosts=hosts,
        nccl_version=b.nccl_version, nccl_tests_version=b.nccl_tests_version,
        complete=b.complete, source=b.source, line=b.line, format=b.format)


@dataclass
class RunFacts:
    """Mutable facts gathered for one run while reading; :func:`finalize_run` freezes them."""

    source: str
    line: int
    format: Literal["text", "json"] = "text"
    collective: tuple[str, str] | None = None  # (name, how found)
    rows: list[NcclRow] = field(default_factory=list)
    ranks: list[tuple[int, int, str, int]] = field(default_factory=list)  # rank, pid, host, device
    headers: int = 0
    oob_lines: int = 0
    avg_lines: int = 0
    structural: bool = False
    oob: int | None = None
    avg: float | None = None
    avg_failed: bool = False
    complete: bool = False
    validation: int | None = None
    launcher_np: int | None = None
    inherited: str | None = None
    nranks_hint: int | None = None
    nccl_version: str | None = None
    nccl_tests_version: str | None = None
    fail_notes: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def summaries(self) -> int:
        """How many summary blocks (``Out of bounds`` / ``Avg bus bandwidth``) were printed."""
        return max(self.oob_lines, self.avg_lines)

    def name(self, collective: str | None, how: str) -> None:
        """Record the collective unless a stronger source already named it."""
        order = ("header", "label", "command line")
        if collective and (self.collective is None
                           or order.index(how) < order.index(self.collective[1])):
            self.collective = (collective, how)


def num(tok: str) -> tuple[float | None, bool]:
    """A printed value → (float or None for N/A/nan/inf, flagged by a trailing ``*``)."""
    flagged = tok.endswith("*")
    tok = tok.rstrip("*")
    if tok.upper() in ("N/A", "NA", "-"):
        return None, flagged
    v = float(tok)  # ValueError for a word: the caller treats the line as not a row
    return (None if math.isnan(v) or math.isinf(v) else v), flagged


# ----------------------------------------------------------------------------------------------
# text tables

_PREFIX = re.compile(r"^(?:\[\d+,\d+\]<std(?:out|err)>:|\d{1,5}: |\d{4}-\d\d-\d\dT[\d:.,]+Z? )")
_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
_NCCL_LOG = re.compile(r"\bNCCL (INFO|WARN|TRACE|ABORT)\b:?\s*(.*)")
_TESTS_VERSION = re.compile(r"nccl-tests version (\S+)(?:.*?nccl-library=(\d+))?")
_STARTING = re.compile(r"Collective test (starting|concluded):\s*(\S+)")
_NTHREAD = re.compile(r"^#?\s*nThread\s+\d+\s+nGpus\s+\d+")
_VALIDATION = re.compile(r"validation:\s*(\d+)")
_RANK = re.compile(r"^#?\s*Rank\s+(\d+)\s+(?:Group\s+\d+\s+)?Pid\s+(\d+)\s+on\s+(\S+)\s+device\s+(\d+)")
_OOB = re.compile(r"Out of bounds values\s*:\s*(\d+)\s*(OK|FAILED)?", re.IGNORECASE)
_AVG = re.compile(r"Avg bus bandwidth\s*:\s*(\S+)\s*(OK|FAILED)?", re.IGNORECASE)
_FAIL = re.compile(r"\bTest (?:NCCL |CUDA )?failure\b")  # nccl-tests NCCLCHECK/CUDACHECK/TESTCHECK
_LAUNCH_FAIL = re.compile(r"non-zero exit code|exited with non-zero status|MPI_ABORT was invoked"
                          r"|srun: error: .*[Ee]xited with exit code [1-9]")
_ERROR = re.compile(r"^#\s*error:\s*(.+)")
_LABEL = re.compile(r"^\s*([a-z_]+)\s+results?\s*:?\s*$")
_BINARY = re.compile(r"(?:^|[\s/=])([a-z_]+_perf(?:_mpi)?)(?=\s|$)")
_LAUNCHER = re.compile(r"\b(?:mpirun|mpiexec|orterun|srun)\b.*?\s(?:-np|-n|--np|--ntasks)[ =]?(\d+)")
_NCCL_VERSION = re.compile(r"NCCL version (\d+\.\d+\.\d+)")
_NRANKS = re.compile(r"\bn[Rr]anks (\d+)")
_ROW = re.compile(r"^\s*\d+\s+\d+\s+[A-Za-z_]\w*(\s|$)")
_DATE, _CLOCK = re.compile(r"^\d{4}-\d\d-\d\d$"), re.compile(r"^\d\d:\d\d:\d\d$")


@dataclass(frozen=True)
class _Header:
    """Column layout of one table: label columns, then one block of value columns per placement."""

    labels: tuple[str, ...]
    blocks: tuple[tuple[str, ...], ...]
    timestamp: bool = False
    time_scale: float = 1.0
    assumed: bool = False


_DEFAULT_HEADER = _Header(("redop", "root"), (("time", "algbw", "busbw", "wrong"),) * 2, assumed=True)


def _parse_header(line: str) -> _Header | None:
    toks = line.lstrip("# \t").split()
    if len(toks) < 5 or toks[:3] != ["size", "count", "type"] or "busbw" not in toks:
        return None
    i, labels = 3, []
    while i < len(toks) and toks[i] in ("redop", "op", "root"):
        labels.append("redop" if toks[i] == "op" else toks[i])
        i += 1
    blocks: list[list[str]] = []
    stamp = False
    for t in toks[i:]:
        t = t.lstrip("#").lower()
        if t == "timestamp":
            stamp = True
            continue
        if t in ("time", "cputime"):
            blocks.append([])
            t = "time"
        if not blocks:
            return None
        blocks[-1].append(t)
    return _Header(tuple(labels), tuple(tuple(b) for b in blocks), stamp) if blocks else None


_COUNT = re.compile(r"^(\d+|\d(\.\d+)?e\+\d\d+)$")  # "%6g" of a count: 12 or 1.23457e+07
_EXP = re.compile(r"^-?\d(\.\d+)?e[+-]\d\d+\*?$")  # "%5.0le" max error, "*" when above the limit
_NA = ("N/A", "NA", "-")


def _result(cols: tuple[str, ...], toks: list[str], scale: float) -> NcclResult:
    """One placement's values; ValueError when a value has the wrong shape for its column."""
    vals = dict(zip(cols, toks))
    t, alg, bus = (num(vals.get(c, "N/A"))[0] for c in ("time", "algbw", "busbw"))
    if any(v is not None and v < 0 for v in (t, alg, bus)):
        raise ValueError("negative time or bandwidth: the row is shifted or cut")
    wrong, err, flagged = None, None, False
    if (tok := vals.get("wrong")) is not None and tok.upper() not in _NA:
        if _COUNT.match(tok):
            wrong = int(float(tok))
        elif _EXP.match(tok) and "e-" in tok:  # an old error value under an assumed header
            err, flagged = num(tok)
        else:
            raise ValueError(f"{tok!r} is not a #wrong count")
    if (tok := vals.get("error")) is not None and tok.upper() not in _NA:
        if not _EXP.match(tok):
            raise ValueError(f"{tok!r} is not an nccl-tests error value")
        err, flagged = num(tok)
        err = err if err is not None and err >= 0 else None  # -1: not checked
    return NcclResult(time_us=None if t is None else t * scale, algbw_gbps=alg, busbw_gbps=bus,
                      wrong=wrong, max_error=err, flagged=flagged)


def _gap_before(spans: list[tuple[str, int]], i: int) -> int:
    """Blank columns between token ``i - 1`` and token ``i`` of a row."""
    prev, start = spans[i - 1], spans[i][1]
    return start - (prev[1] + len(prev[0]))


def _parse_row(line: str, hdr: _Header, lineno: int) -> NcclRow | None:
    spans = [(m.group(), m.start()) for m in re.finditer(r"\S+", line)]
    toks = [t for t, _ in spans]
    try:
        size, count, dtype, rest = int(toks[0]), int(toks[1]), toks[2], toks[3:]
        if hdr.timestamp and len(rest) >= 2 and _DATE.match(rest[-2]) and _CLOCK.match(rest[-1]):
            rest = rest[:-2]
        full = sum(len(b) for b in hdr.blocks)
        if len(rest) >= full:
            middle, perf, blocks = rest[:len(rest) - full], rest[len(rest) - full:], list(hdr.blocks)
            places = ["out_of_place", "in_place"][:len(blocks)]
        elif len(hdr.blocks) == 2 and 0 <= len(rest) - len(hdr.blocks[1]) <= len(hdr.labels) and (
                _gap_before(spans, 3 + len(rest) - len(hdr.blocks[1])) >= 20):
            # out-of-place printed as 32 blanks (trace replay); a row cut short has no such gap
            cut = len(rest) - len(hdr.blocks[1])
            middle, perf, blocks, places = rest[:cut], rest[cut:], [hdr.blocks[1]], ["in_place"]
        else:
            return None
        if len(middle) > len(hdr.labels):
            return None
        labels: dict[str, str] = {}
        if len(middle) == len(hdr.labels):
            labels = dict(zip(hdr.labels, middle))
        elif middle:  # one label column left empty (alltoall's redop): decide by the value's shape
            kind = "root" if re.fullmatch(r"-?\d+", middle[0]) and "root" in hdr.labels else "redop"
            labels = {kind: middle[0]}
        redop = labels.get("redop") or None
        if redop is not None and re.fullmatch(r"-?[\d.eE+]+", redop):
            return None
        root = int(labels["root"]) if "root" in labels else None
        out: dict[str, NcclResult] = {}
        at = 0
        for place, cols in zip(places, blocks):
            out[place] = _result(cols, perf[at:at + len(cols)], hdr.time_scale)
            at += len(cols)
    except (ValueError, IndexError):
        return None
    return NcclRow(size_bytes=size, count=count, type=dtype, redop=redop, root=root, line=lineno, **out)


def _clean(line: str) -> str:
    line = _ANSI.sub("", line).rstrip()
    m = _PREFIX.match(line)
    return line[m.end():] if m else line


def _parse_text(text: str, source: str) -> list[RunFacts]:
    lines = [_clean(ln) for ln in text.splitlines()]
    file_has_header = any(_parse_header(ln) for ln in lines)
    done: list[RunFacts] = []
    cur: RunFacts | None = None
    pending = RunFacts(source=source, line=1)  # log facts seen between runs
    hdr: _Header | None = None
    prev_header = False

    def new(lineno: int) -> RunFacts:
        nonlocal cur
        if cur is not None and cur.structural:
            done.append(cur)
        cur = RunFacts(source=source, line=lineno, nccl_version=pending.nccl_version,
                       nranks_hint=pending.nranks_hint, notes=list(pending.notes),
                       launcher_np=pending.launcher_np,  # a command line covers the runs after it
                       inherited=pending.inherited)
        pending.notes.clear()
        return cur

    def preamble(lineno: int) -> RunFacts:
        if cur is None or cur.rows or cur.summaries or cur.fail_notes:
            return new(lineno)
        return cur

    def current(lineno: int) -> RunFacts:
        return cur if cur is not None else new(lineno)

    for n, line in enumerate(lines, start=1):
        was_header, prev_header = prev_header, False
        if not line.strip():
            continue
        if m := _NCCL_LOG.search(line):
            tgt = cur if cur is not None and not cur.summaries else pending
            if v := _NCCL_VERSION.search(line):
                tgt.nccl_version = tgt.nccl_version or v.group(1)
            if (r := _NRANKS.search(line)) and tgt.nranks_hint is None:
                tgt.nranks_hint = int(r.group(1))
            warn = f"NCCL {m.group(1)}: {m.group(2).strip()}"
            if m.group(1) in ("WARN", "ABORT") and warn not in tgt.notes and len(tgt.notes) < 3:
                tgt.notes.append(warn)
            continue
        if m := _TESTS_VERSION.search(line):
            run = preamble(n)
            run.structural, run.nccl_tests_version = True, m.group(1)
            if m.group(2):
                run.nccl_version = nccl_version_from_code(int(m.group(2)))
        elif m := _STARTING.search(line):
            run = preamble(n) if m.group(1) == "starting" else current(n)
            run.structural = True
            run.name(collective_from_program(m.group(2)), "header")
        elif _NTHREAD.match(line):
            run = preamble(n)
            run.structural = True
            if v := _VALIDATION.search(line):
                run.validation = int(v.group(1))
        elif m := _RANK.match(line):
            run = preamble(n)
            run.structural = True
            run.ranks.append((int(m.group(1)), int(m.group(2)), m.group(3), int(m.group(4))))
        elif m := _OOB.search(line):
            run = current(n)
            run.structural, run.complete = True, True
            run.oob = max(run.oob or 0, int(m.group(1)))
            run.oob_lines += 1
        elif m := _AVG.search(line):
            run = current(n)
            run.structural, run.complete = True, True
            run.avg_lines += 1
            try:
                run.avg = num(m.group(1))[0]
            except ValueError:
                run.notes.append(f"line {n}: Avg bus bandwidth value {m.group(1)!r} not understood")
            run.avg_failed = run.avg_failed or (m.group(2) or "").upper() == "FAILED"
        elif _FAIL.search(line):
            run = current(n)
            run.structural = True
            if len(run.fail_notes) < 3:
                run.fail_notes.append(f"nccl-tests reported a failure: {line.strip()[:160]}")
        elif _LAUNCH_FAIL.search(line):
            if cur is not None and cur.structural and len(cur.fail_notes) < 3:
                cur.fail_notes.append(f"the launcher reported a failure: {line.strip()[:160]}")
        elif m := _ERROR.match(line):
            current(n).notes.append(f"NCCL reported: {m.group(1).strip()[:160]}")
        elif (h := _parse_header(line)) is not None:
            run = current(n) if cur is not None and not (cur.rows or cur.summaries or cur.fail_notes) \
                else new(n)
            run.structural = True
            if run.headers == 0 or hdr is None or len(h.blocks) >= len(hdr.blocks):
                hdr = h if run.headers == 0 or hdr is None else hdr
            run.headers += 1
            prev_header = True
        elif was_header and hdr is not None and "(B)" in line:
            if "(ms)" in line:
                hdr = _Header(hdr.labels, hdr.blocks, hdr.timestamp, 1000.0, hdr.assumed)
        elif (m := _LABEL.match(line)) and collective_from_program(m.group(1)):
            preamble(n).name(collective_from_program(m.group(1)), "label")
        elif _ROW.match(line) and (hdr is not None or not file_has_header):
            layout = hdr or _DEFAULT_HEADER
            row = _parse_row(line, layout, n)
            run = current(n)
            if row is None:
                cut = n == len(lines) and not text.endswith(("\n", "\r"))
                why = "last line cut short" if cut else "row not understood"
                if len(run.notes) < 8:
                    run.notes.append(f"line {n}: {why}, skipped: {line.strip()[:60]!r}")
                continue
            if layout.assumed and not run.rows:
                run.notes.append("no table header found: columns assumed from the current nccl-tests layout")
            run.structural = True
            run.rows.append(row)
        elif m := _BINARY.search(line):
            name = collective_from_program(m.group(1))
            if name:
                run = preamble(n)
                run.name(name, "command line")
                pending.inherited = name
                lm = _LAUNCHER.search(line)
                run.launcher_np = pending.launcher_np = int(lm.group(1)) if lm else None
    if cur is not None and cur.structural:
        done.append(cur)
    file_version = next((f.nccl_version for f in done if f.nccl_version), pending.nccl_version)
    for f in done:
        f.nccl_version = f.nccl_version or file_version
    return done


# ----------------------------------------------------------------------------------------------
# JSON (-J / --output_file x.json)

_LAUNCH_ENV = re.compile(r"^(OMPI_COMM_WORLD_SIZE|PMI_SIZE|PMIX_SIZE|SLURM_STEP_NUM_TASKS)=(\d+)$")


def _jnum(v: object) -> float | None:
    if isinstance(v, bool) or v is None:
        return None
    try:
        f = float(v)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return None
    return None if math.isnan(f) or math.isinf(f) else f


def _jfalse(v: object) -> bool:
    return v is False or (isinstance(v, str) and v.strip().lower() == "false")


def _jresult(d: object) -> NcclResult | None:
    if not isinstance(d, dict):
        return None
    wrong = _jnum(d.get("nwrong"))
    return NcclResult(time_us=_jnum(d.get("time", d.get("cpu_time"))), algbw_gbps=_jnum(d.get("alg_bw")),
                      busbw_gbps=_jnum(d.get("bus_bw")), wrong=None if wrong is None else int(wrong))


def _salvage_json(text: str) -> dict | None:
    """Recover a JSON file cut short (nccl-tests writes it as it goes): head + complete results."""
    m = re.search(r'"results"\s*:\s*\[', text)
    head_txt = (text[:m.start()] if m else text).rstrip().rstrip(",")
    doc: dict = {}
    for closing in ("}", "]}}", "}}", "]}"):
        try:
            doc = json.loads(head_txt + closing)
            break
        except json.JSONDecodeError:
            continue
    if m is None:
        return doc if doc.get("config") or "nccl_version" in doc else None
    dec, pos, results = json.JSONDecoder(), m.end(), []
    while True:
        while pos < len(text) and text[pos] in " \t\r\n,":
            pos += 1
        if pos >= len(text) or text[pos] == "]":
            break
        try:
            obj, pos = dec.raw_decode(text, pos)
        except json.JSONDecodeError:
            break
        results.append(obj)
    doc["results"] = results
    tail = text[pos:]
    if o := re.search(r'"out_of_bounds"\s*:\s*\{\s*"count"\s*:\s*(\d+)', tail):
        doc["out_of_bounds"] = {"count": int(o.group(1))}
    if a := re.search(r'"average_bus_bandwidth"\s*:\s*\{\s*"bandwidth"\s*:\s*"?([^,"}\s]+)"?'
                      r'(?:\s*,\s*"okay"\s*:\s*"?(\w+))?', tail):
        doc["average_bus_bandwidth"] = {"bandwidth": a.group(1), "okay": a.group(2)}
    doc["_truncated"] = True
    return doc


def _json_run(doc: dict, source: str) -> RunFacts:
    b = RunFacts(source=source, line=1, format="json", structural=True, headers=1)
    args = doc.get("args") or []
    if args and isinstance(args[0], str):
        b.name(collective_from_program(args[0]), "header")
    if isinstance(doc.get("nccl_version"), int):
        b.nccl_version = nccl_version_from_code(doc["nccl_version"])
    cfg: dict = doc["config"] if isinstance(doc.get("config"), dict) else {}
    b.validation = cfg.get("validation") if isinstance(cfg.get("validation"), int) else None
    for d in cfg.get("devices") or []:
        if isinstance(d, dict) and isinstance(d.get("rank"), int):
            b.ranks.append((d["rank"], int(d.get("pid") or 0), str(d.get("hostname", "?")),
                            int(d.get("device") or 0)))
    for e in doc.get("env") or []:
        if isinstance(e, str) and (m := _LAUNCH_ENV.match(e)):
            b.launcher_np = int(m.group(2))
    for i, r in enumerate(doc.get("results") or []):
        try:
            root_s = str(r.get("root", "")).strip()
            b.rows.append(NcclRow(
                size_bytes=int(r["size"]), count=int(r["count"]), type=str(r.get("type", "?")),
                redop=str(r.get("redop") or "").strip() or None,
                root=int(root_s) if re.fullmatch(r"-?\d+", root_s) else None,
                out_of_place=_jresult(r.get("out_of_place")), in_place=_jresult(r.get("in_place"))))
        except (KeyError, TypeError, ValueError, AttributeError):
            b.notes.append(f"results[{i}] not understood, skipped")
    if isinstance(oob := doc.get("out_of_bounds"), dict):
        b.oob, b.oob_lines, b.complete = int(oob.get("count") or 0), 1, True
    if isinstance(avg := doc.get("average_bus_bandwidth"), dict):
        b.avg, b.avg_lines, b.complete = _jnum(avg.get("bandwidth")), 1, True
        b.avg_failed = _jfalse(avg.get("okay"))
    for e in doc.get("errors") or []:
        if isinstance(e, str) and e.strip():
            b.notes.append(f"NCCL reported: {e.strip()[:160]}")
    if doc.get("_truncated"):
        b.notes.append("JSON file cut short: kept the complete result objects")
    return b


def _parse_json(text: str, source: str) -> list[RunFacts]:
    dec, pos, docs = json.JSONDecoder(), 0, []
    while pos < len(text):
        while pos < len(text) and text[pos] in " \t\r\n,":
            pos += 1
        if pos >= len(text):
            break
        try:
            obj, pos = dec.raw_decode(text, pos)
        except json.JSONDecodeError:
            if text[pos] != "{":
                break
            obj, pos = _salvage_json(text[pos:]), len(text)
        docs.extend(obj if isinstance(obj, list) else [obj])
    return [_json_run(d, source) for d in docs if isinstance(d, dict) and _is_nccl_json(d)]


def _is_nccl_json(d: dict) -> bool:
    res = d.get("results")
    if "results" in d and not isinstance(res, list):
        return False
    res = res or []
    if "nccl_version" in d or isinstance(d.get("config"), dict):
        return "results" in d or "config" in d
    return bool(res) and all(isinstance(x, dict) and "size" in x and "count" in x for x in res)


def parse_nccl_output(text: str, source: str = "<text>") -> list[NcclRun]:
    """Parse nccl-tests stdout (any layout) or its ``-J`` JSON file into runs, in file order.

    Args:
        text: the whole output; noise (NCCL logs, prompts, launcher lines) may be anywhere.
        source: file name used in findings and kept in ``NcclRun.source``.

    Returns:
        One :class:`NcclRun` per collective table (or per JSON document). Bandwidths are GB/s.

    Raises:
        RoceTuneError: rule RT301 when the text is empty or holds no nccl-tests header, table,
            summary or failure line (the message names ``source`` and the first line).
    """
    body = text.lstrip("\ufeff \t\r\n")
    if not body:
        raise not_nccl_error(source, text, "empty")
    facts = _parse_json(body, source) if body[0] in "{[" else []
    facts = facts or _parse_text(text, source)  # "[user@host ~]$ …" starts with "[" too
    if not facts:
        raise not_nccl_error(source, text, "no nccl-tests header, results table or summary found")
    return [finalize_run(f) for f in facts]


def parse_nccl_file(path: str) -> list[NcclRun]:
    """Read ``path`` (undecodable bytes replaced) and :func:`parse_nccl_output` it.

    Raises:
        RoceTuneError: RT301 when the file cannot be read or is not nccl-tests output.
    """
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            text = fh.read()
    except OSError as exc:
        raise RoceTuneError([Finding(
            rule=RULE_NOT_NCCL, severity=Severity.error,
            message=f"{path}: cannot read nccl-tests output ({exc.strerror or exc})",
            fix="check the path", location=Location(file=path))]) from None
    return parse_nccl_output(text, source=path)
