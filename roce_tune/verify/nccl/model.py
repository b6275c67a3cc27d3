"""The shapes of a parsed nccl-tests run, its verdict constants and the line-rate conversion.

Bandwidths ``*_gbps`` are GB/s (10^9 bytes/s) exactly as nccl-tests prints them; times are µs.
"""

from __future__ import annotations

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
            are kept but which is never a pass) > ``not-validated``
            (every ``#wrong`` is N/A, or ``validation: 0``) > ``ok``.
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

    Raises:
        ValueError: a line rate that is not positive.
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
