"""The verdict of one run: from the facts gathered while reading to a frozen :class:`NcclRun`.

Verdict: ``failed`` on ``Out of bounds values : N`` with N > 0, on a ``#wrong`` > 0 / ``error`` above
nccl-tests' limit / ``*`` when no summary was printed, on ``Avg bus bandwidth … FAILED``, on a failure
line, on no result rows, and when each process ran alone (those runs keep no rows and no bandwidth
figure); ``not-validated`` when every ``#wrong`` is N/A; else ``ok``.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable
from typing import Literal

from roce_tune.verify.nccl.facts import RunFacts, infer_collective
from roce_tune.verify.nccl.model import (
    _REDUCING,
    ERROR_LIMIT,
    INCOMPLETE,
    NO_ROWS,
    RAN_ALONE,
    SINGLE_RANK,
    TYPE_BYTES,
    NcclResult,
    NcclRow,
    NcclRun,
)

_AvgSource = Literal["printed", "computed"] | None


def _ran_alone_evidence(b: RunFacts) -> list[str]:
    """Why the processes look as if each ran alone (nccl-tests built without MPI); empty if not."""
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
    pids_known = all(r[1] is not None for r in b.ranks)  # old nccl-tests printed no pid
    if b.launcher_np and b.launcher_np > 1 and len(procs) == 1 and pids_known:
        evidence.append(f"launcher started {b.launcher_np} processes but one process listed its ranks")
    return evidence


def _ran_alone_failure(evidence: list[str], rows: list[NcclRow]) -> list[str]:
    ignored = f" ({len(rows)} row{'s' if len(rows) > 1 else ''} ignored, no bandwidth figure)" if rows else ""
    return [RAN_ALONE, "; ".join(evidence) + ": rebuild nccl-tests with `make MPI=1`" + ignored]


def _collective(b: RunFacts, rows: list[NcclRow], nranks: int | None,
                notes: list[str]) -> tuple[str | None, str]:
    """(name, how found): the reader's, else inferred from the first row, else the last command line."""
    name, how = b.collective or (None, "none")
    if name is None and rows:
        r0 = next((r for r in rows if r.size_bytes > 0), rows[0])
        name = infer_collective(r0.redop, r0.root, r0.size_bytes, r0.count, r0.type, nranks,
                                in_place_unchecked=_in_place_unchecked(rows))
        how = "inferred" if name else "none"
    if name is None and b.inherited:  # the last command line before this run
        name, how = b.inherited, "command line"
    if name is None and rows:
        notes.append("collective not named in the output and not inferable from the rows")
    return name, how


def _in_place_unchecked(rows: list[NcclRow]) -> bool:
    """Out-of-place results validated, and every in-place one printed ``N/A``."""
    return (any(r.out_of_place is not None and r.out_of_place.validated for r in rows)
            and all(r.in_place is not None and not r.in_place.validated for r in rows))


def _nranks_from_rows(rows: list[NcclRow], name: str | None) -> int | None:
    """Rank count from size = nranks × count × type size (all_gather, reduce_scatter, alltoall)."""
    if not rows or name not in ("all_gather", "reduce_scatter", "alltoall"):
        return None
    rc = next((r for r in rows if r.count > 0), None)
    ts = TYPE_BYTES.get(rc.type.lower()) if rc else None
    if rc and ts and rc.size_bytes % (rc.count * ts) == 0:
        return rc.size_bytes // (rc.count * ts)
    return None


def _error_limit(name: str | None, rows: list[NcclRow]) -> Callable[[str], float]:
    """Old nccl-tests' max relative error per type: reductions only, 0 for everything else."""
    if name in _REDUCING or (name is None and any(r.redop for r in rows)):
        return lambda t: ERROR_LIMIT.get(t.lower(), 0.0)
    return lambda t: 0.0


def _check_placement(b: RunFacts, rows: list[NcclRow], place: str, limit_for: Callable[[str], float],
                     validated: bool, fails: list[str], notes: list[str]) -> None:
    """Validation of one placement (out-of-place or in-place) over every row."""
    res = [(r, x) for r in rows for p, x in r.results() if p == place]
    bad = [(r, x) for r, x in res if _is_bad(x, limit_for(r.type))]
    _report_bad(b, place, bad, len(res), fails, notes)
    na = sum(1 for _, x in res if not x.validated)
    if validated and na:
        notes.append(f"N/A {place} results ({na} of {len(res)} rows not validated)")


def _report_bad(b: RunFacts, place: str, bad: list[tuple[NcclRow, NcclResult]], of_rows: int,
                fails: list[str], notes: list[str]) -> None:
    """Rows with wrong elements or too large an error: a failure when no summary was printed, a note
    when nccl-tests' own summary counted 0 out-of-bounds values."""
    if bad and b.oob is None:
        r, x = bad[0]
        what = f"{x.wrong} wrong elements" if x.wrong else f"max error {x.max_error:.0e}"
        fails.append(f"validation failed: {what} at {r.size_bytes} bytes ({place})"
                     + (f" and {len(bad) - 1} more rows" if len(bad) > 1 else ""))
    elif bad and b.oob == 0:
        x = bad[0][1]
        shown = f"{x.wrong} wrong" if x.wrong else f"error {x.max_error:.0e}"
        notes.append(f"{place} results show {shown} in {len(bad)} of {of_rows} rows, "
                     "but nccl-tests counted 0 out-of-bounds values")


def _is_bad(x: NcclResult, limit: float) -> bool:
    return (x.wrong or 0) > 0 or x.flagged or (x.max_error is not None and x.max_error > limit)


def _bandwidth(b: RunFacts, ran_alone: bool, bws: list[float]) -> tuple[float | None, _AvgSource,
                                                                        float | None]:
    """(average GB/s, where it came from, max GB/s); nothing for a run whose processes ran alone."""
    if ran_alone:
        return None, None, None
    mx = max(bws) if bws else None
    if b.avg is not None:
        return b.avg, "printed", mx
    return (statistics.fmean(bws) if bws else None), ("computed" if bws else None), mx


def _trailing_notes(b: RunFacts, rows: list[NcclRow], validated: bool, nranks: int | None,
                    notes: list[str]) -> None:
    """Notes on what the run does not show: validation off, one rank, no summary, the reader's notes."""
    if rows and not validated:
        notes.insert(0, "not validated: #wrong is N/A in every row"
                     + (" (validation: 0; run with -c 1)" if b.validation == 0 else " (run with -c 1)"))
    if nranks == 1 and rows:
        notes.append(SINGLE_RANK)
    if rows and not b.complete:
        notes.append(INCOMPLETE)
    notes += b.notes


def _oob_failure(b: RunFacts) -> list[str]:
    """``Out of bounds values : N`` with N > 0 printed."""
    return [f"validation failed: Out of bounds values : {b.oob}"] if b.oob is not None and b.oob > 0 else []


def _avg_failure(b: RunFacts) -> list[str]:
    """``Avg bus bandwidth … FAILED`` printed (nccl-tests' ``-G``/minimum check)."""
    if not b.avg_failed:
        return []
    shown = "?" if b.avg is None else f"{b.avg:g}"
    return [f"Avg bus bandwidth {shown} GB/s FAILED the nccl-tests minimum check"]


def _kept_rows(b: RunFacts, evidence: list[str], fails: list[str]) -> list[NcclRow]:
    """The rows the verdict uses: none when the processes ran alone (failed) or none were read."""
    if evidence:
        fails += _ran_alone_failure(evidence, b.rows)
        return []
    if not b.rows and b.complete:  # a summary but no rows: failed; no summary either: incomplete
        fails.append(NO_ROWS)
    return list(b.rows)


def _busbw_figures(rows: list[NcclRow], notes: list[str]) -> list[float]:
    """Every busbw (GB/s) of a row with size > 0; a note when rows of size 0 are left out."""
    positive = [r for r in rows if r.size_bytes > 0]
    if len(positive) < len(rows):
        notes.append(f"{len(rows) - len(positive)} rows with size 0 left out of the bandwidth figures")
    return [x.busbw_gbps for r in positive for _, x in r.results() if x.busbw_gbps is not None]


def _status(b: RunFacts, rows: list[NcclRow], ran_alone: bool, validated: bool, fails: list[str],
            notes: list[str]) -> Literal["ok", "failed", "incomplete", "not-validated"]:
    """The verdict: failed > incomplete (no summary: killed or cut short, never a pass) > not-validated > ok.
    A run with neither rows nor summary gets the no-rows note (not a failure: it is incomplete)."""
    if not rows and not b.complete and not ran_alone:
        notes.insert(0, NO_ROWS)
    if fails:
        return "failed"
    if not b.complete:
        return "incomplete"
    return "not-validated" if rows and not validated else "ok"


def finalize_run(b: RunFacts) -> NcclRun:
    """Turn the facts gathered for one run (text or JSON) into a :class:`NcclRun`."""
    fails: list[str] = list(b.fail_notes)
    notes: list[str] = []
    evidence = _ran_alone_evidence(b)
    rows = _kept_rows(b, evidence, fails)
    ranks = {r[0] for r in b.ranks}
    nranks = len(ranks) if ranks else b.nranks_hint
    name, how = _collective(b, rows, nranks, notes)
    if nranks is None:
        nranks = _nranks_from_rows(rows, name)
    fails += _oob_failure(b)
    limit_for = _error_limit(name, rows)
    validated = any(x.validated for r in rows for _, x in r.results())
    for place in ("out-of-place", "in-place"):
        _check_placement(b, rows, place, limit_for, validated, fails, notes)
    fails += _avg_failure(b)
    bws = _busbw_figures(rows, notes)
    _trailing_notes(b, rows, validated, nranks, notes)
    avg, avg_src, mx = _bandwidth(b, bool(evidence), bws)
    status = _status(b, rows, bool(evidence), validated, fails, notes)
    return NcclRun(
        collective=name or "unknown", collective_source=how, rows=rows, avg_busbw_gbps=avg,
        avg_busbw_source=avg_src, max_busbw_gbps=mx, status=status, problems=fails + notes,
        out_of_bounds=b.oob, nranks=nranks, ndevices=len({(r[2], r[3]) for r in b.ranks}) or None,
        hosts=list(dict.fromkeys(r[2] for r in b.ranks if r[2])),
        nccl_version=b.nccl_version, nccl_tests_version=b.nccl_tests_version,
        complete=b.complete, source=b.source, line=b.line, format=b.format)
