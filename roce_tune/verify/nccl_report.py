"""``roce-tune nccl-report``: summarise nccl-tests output files, optionally against a NIC line rate.

Library side of the CLI command (the CLI only parses arguments and prints what this returns).
Bandwidths named ``*_gbps`` on nccl-tests figures are **GB/s (10^9 bytes/s)** as nccl-tests prints
them; ``line_rate_gbps`` is the NIC line rate in **Gb/s** (bits). The JSON says so in ``units``.
"""

from __future__ import annotations

import io
import json
from typing import Literal

from rich import box
from rich.console import Console
from rich.table import Table
from rich.text import Text

from roce_tune.findings import Finding, Location, RoceTuneError, Severity
from roce_tune.units import parse_speed_gbps
from roce_tune.verify.nccl import (
    NcclResult,
    NcclRow,
    NcclRun,
    busbw_fraction_of_line_rate,
    parse_nccl_file,
)

#: /2: busbw and algbw keys end in ``_gbytes_per_s`` (GB/s); /1 named them ``*_gbps``, the suffix of
#: ``line_rate_gbps`` (Gb/s): one suffix for two units 8x apart
REPORT_SCHEMA = "roce-tune.nccl-report/2"
RULE_BAD_LINE_RATE = "RT300"
UNITS = {
    "algbw_gbytes_per_s": "GB/s (10^9 bytes/s), as printed by nccl-tests",
    "busbw_gbytes_per_s": "GB/s (10^9 bytes/s), as printed by nccl-tests",
    "avg_busbw_gbytes_per_s": "GB/s (10^9 bytes/s), as printed by nccl-tests",
    "max_busbw_gbytes_per_s": "GB/s (10^9 bytes/s)",
    "largest_message_busbw_gbytes_per_s": "GB/s (10^9 bytes/s)",
    "line_rate_gbps": "Gb/s (10^9 bits/s), NIC line rate",
    "line_rate_fraction": "busbw_gbytes_per_s x 8 / line_rate_gbps (1.0 = line rate)",
    "time_us": "microseconds",
}


def _result_dict(r: NcclResult | None) -> dict[str, object] | None:
    if r is None:
        return None
    return {"time_us": r.time_us, "algbw_gbytes_per_s": r.algbw_gbps, "busbw_gbytes_per_s": r.busbw_gbps,
            "wrong": r.wrong, "max_error": r.max_error}


def run_to_dict(run: NcclRun, line_rate_gbps: int | None = None) -> dict[str, object]:
    """One run as the ``nccl-report`` JSON object (``line_rate_fraction`` only with a rate)."""
    big = run.largest_message_row
    d: dict[str, object] = {
        "source": run.source, "line": run.line, "format": run.format,
        "collective": run.collective, "collective_source": run.collective_source,
        "status": run.status, "problems": list(run.problems),
        "avg_busbw_gbytes_per_s": run.avg_busbw_gbps, "avg_busbw_source": run.avg_busbw_source,
        "max_busbw_gbytes_per_s": run.max_busbw_gbps,
        "largest_message_size_bytes": big.size_bytes if big else None,
        "largest_message_busbw_gbytes_per_s": big.busbw_gbps if big else None,
        "out_of_bounds": run.out_of_bounds, "complete": run.complete,
        "nranks": run.nranks, "ndevices": run.ndevices, "hosts": list(run.hosts),
        "nccl_version": run.nccl_version, "nccl_tests_version": run.nccl_tests_version,
        "rows": [{"size_bytes": r.size_bytes, "count": r.count, "type": r.type, "redop": r.redop,
                  "root": r.root, "out_of_place": _result_dict(r.out_of_place),
                  "in_place": _result_dict(r.in_place)} for r in run.rows],
    }
    if line_rate_gbps is not None:
        f = busbw_fraction_of_line_rate(run, line_rate_gbps)
        d["line_rate_fraction"] = {
            "line_rate_gbps": line_rate_gbps,
            "largest_message_size_bytes": f.largest_message_size_bytes,
            "largest_message": None if f.largest_message is None else round(f.largest_message, 4),
            "average": None if f.average is None else round(f.average, 4),
            "notes": line_rate_notes(run, line_rate_gbps)}
    return d


def line_rate_notes(run: NcclRun, line_rate_gbps: int) -> list[str]:
    """Plain-words caveats on comparing ``run``'s busbw with a NIC line rate."""
    f = busbw_fraction_of_line_rate(run, line_rate_gbps)
    notes = []
    if len(run.hosts) == 1 and (run.nranks or 0) > 1:
        notes.append("all ranks on one host: traffic used NVLink/PCIe, the NIC line rate does not bound it")
    elif max(f.largest_message or 0.0, f.average or 0.0) > 1.0:
        notes.append("busbw above the line rate: the traffic did not (only) cross this NIC "
                     "(intra-node run, or several NICs per rank)")
    return notes


def _fmt(v: float | None, digits: int = 2) -> str:
    return "-" if v is None else f"{v:.{digits}f}"


def _wrong(r: NcclResult | None) -> str:
    if r is None:
        return "-"
    if r.wrong is not None:
        return str(r.wrong)
    if r.max_error is not None:
        return f"{r.max_error:.0e}" + ("*" if r.flagged else "")
    return "N/A"


def _plural(n: int, word: str) -> str:
    """``"1 rank"``, ``"2 ranks"``."""
    return f"{n} {word}{'s' if n != 1 else ''}"


def _run_title(run: NcclRun) -> Text:
    """Collective, where it came from, and the run status (coloured by status)."""
    style = {"ok": "green", "failed": "bold red", "incomplete": "bold red",
             "not-validated": "yellow"}[run.status]
    title = Text(f"{run.collective} ", style="bold")
    title.append(f"({run.collective_source}) ", style="dim")
    title.append(f"{run.source}" + (f":{run.line}" if run.line else "") + "  ")
    title.append(run.status.upper(), style=style)
    return title


def _run_who(run: NcclRun) -> list[str]:
    """Ranks, hosts (at most 8 named) and NCCL version, for those the output printed."""
    who = []
    if run.nranks is not None:
        who.append(_plural(run.nranks, "rank"))
    if run.hosts:
        who.append(f"on {_plural(len(run.hosts), 'host')} "
                   f"({', '.join(run.hosts[:8])}" + (", …)" if len(run.hosts) > 8 else ")"))
    if run.nccl_version:
        who.append(f"NCCL {run.nccl_version}")
    return who


def _row_cells(r: NcclRow) -> list[str]:
    """One table row: size, count, type, redop, root, then time/algbw/busbw/check out of place and in
    place."""
    cells = [str(r.size_bytes), str(r.count), r.type, r.redop or "", "" if r.root is None else str(r.root)]
    for res in (r.out_of_place, r.in_place):
        cells += [_fmt(res.time_us if res else None), _fmt(res.algbw_gbps if res else None),
                  _fmt(res.busbw_gbps if res else None), _wrong(res)]
    return cells


def _rows_table(run: NcclRun) -> Table:
    """The run's rows as a table; the check column is the max relative error for the old nccl-tests layout,
    else the count of wrong elements."""
    t = Table(box=box.SIMPLE, show_edge=False, pad_edge=False)
    for col in ("size (B)", "count", "type", "redop", "root"):
        t.add_column(col, justify="left" if col in ("type", "redop") else "right")
    check = "error" if any(res is not None and res.max_error is not None
                           for r in run.rows for res in (r.out_of_place, r.in_place)) else "#wrong"
    for place in ("oop", "ip"):
        for col in ("time us", "algbw GB/s", "busbw GB/s", check):
            t.add_column(f"{place} {col}", justify="right")
    for r in run.rows:
        t.add_row(*_row_cells(r))
    return t


def _line_rate_lines(run: NcclRun, rate: int) -> list[str]:
    """busbw as a fraction of the ``rate`` Gb/s line rate (largest message, average) and its notes."""
    f = busbw_fraction_of_line_rate(run, rate)
    if f.largest_message is None and f.average is None:
        return [f"  busbw vs {rate}G line rate: not applicable (no multi-rank figure)"]
    parts = []
    if f.largest_message is not None:
        parts.append(f"largest message ({f.largest_message_size_bytes} B) {f.largest_message:.1%}")
    if f.average is not None:
        parts.append(f"average {f.average:.1%}")
    return ([f"  busbw vs {rate}G line rate ({rate / 8:g} GB/s): " + "; ".join(parts)]
            + [f"  note: {note}" for note in line_rate_notes(run, rate)])


def _run_text(console: Console, run: NcclRun, rate: int | None) -> None:
    console.print(_run_title(run))
    who = _run_who(run)
    if who:
        console.print(Text("  " + ", ".join(who)))
    if run.rows:
        console.print(_rows_table(run))
    if run.avg_busbw_gbps is not None:
        how = "printed by nccl-tests" if run.avg_busbw_source == "printed" else "mean of rows with size > 0"
        console.print(Text(f"  avg busbw {run.avg_busbw_gbps:g} GB/s ({how}); "
                           f"max busbw {_fmt(run.max_busbw_gbps)} GB/s"))
    for line in (_line_rate_lines(run, rate) if rate is not None else []):
        console.print(Text(line))
    for p in run.problems:
        console.print(Text(f"  - {p}"))
    console.print()


def _parse_line_rate(line_rate: str | None) -> int | None:
    """``--line-rate`` in Gb/s (None when not given); RoceTuneError RT300 when it is not a speed."""
    if line_rate is None:
        return None
    try:
        return parse_speed_gbps(line_rate)
    except ValueError as exc:
        raise RoceTuneError([Finding(rule=RULE_BAD_LINE_RATE, severity=Severity.error,
                                     message=f"--line-rate: {exc}", fix="write e.g. 400G",
                                     location=Location(path="--line-rate"))]) from None


def _read_runs(paths: list[str]) -> tuple[list[NcclRun], list[Finding]]:
    """Every run of every file, and RT301 findings for files that could not be read (or none given)."""
    runs: list[NcclRun] = []
    errors: list[Finding] = []
    for p in paths:
        try:
            runs += parse_nccl_file(p)
        except RoceTuneError as exc:
            errors += exc.findings
    if not paths:
        errors.append(Finding(rule="RT301", severity=Severity.error,
                              message="no nccl-tests output file given",
                              fix="pass one or more files"))
    return runs, errors


def _report_json(runs: list[NcclRun], errors: list[Finding], rate: int | None, code: int) -> str:
    """The ``roce-tune.nccl-report/2`` JSON document."""
    doc = {"schema": REPORT_SCHEMA, "units": UNITS, "line_rate_gbps": rate, "ok": code == 0,
           "exit_code": code, "runs": [run_to_dict(r, rate) for r in runs],
           "errors": [{"rule": f.rule, "message": f.message, "fix": f.fix, "file": f.location.file}
                      for f in errors]}
    return json.dumps(doc, indent=2) + "\n"


def _report_text(runs: list[NcclRun], errors: list[Finding], rate: int | None, code: int) -> str:
    """Each run (title, hosts, rows, busbw vs line rate, problems), the unusable files and a summary line."""
    buf = io.StringIO()
    console = Console(file=buf, width=200, color_system=None, force_terminal=False, highlight=False,
                      emoji=False, markup=False, soft_wrap=True)
    for r in runs:
        _run_text(console, r, rate)
    for f in errors:
        console.print(Text(str(f)))
    counts = {s: sum(1 for r in runs if r.status == s) for s in ("ok", "not-validated", "incomplete",
                                                                 "failed")}
    summary = f"{len(runs)} runs: " + ", ".join(f"{n} {s}" for s,
                                                n in counts.items() if n) if runs else "0 runs"
    if errors:
        summary += f"; {len(errors)} file(s) not usable"
    console.print(Text(summary + ("" if code == 0 else "  (exit 1)")))
    return buf.getvalue()


def nccl_report(paths: list[str], line_rate: str | None = None,
                fmt: Literal["text", "json"] = "text") -> tuple[str, int]:
    """Summarise nccl-tests output files.

    Args:
        paths: nccl-tests stdout captures or ``-J`` JSON files; each may hold several runs.
        line_rate: NIC line rate (``"400G"``, parsed by :func:`roce_tune.units.parse_speed_gbps`);
            when given, each run gets the largest-message and average busbw as a fraction of it
            (``busbw GB/s × 8 / line rate Gb/s``).
        fmt: ``"text"`` (rich tables, no colour codes) or ``"json"`` (``schema``
            ``roce-tune.nccl-report/2``: ``units``, ``line_rate_gbps``, ``ok``, ``exit_code``,
            ``runs`` [see :func:`run_to_dict`], ``errors`` [RT301 findings per unusable file]).

    Returns:
        ``(output, exit_code)``: 0 when every run is ``ok`` or ``not-validated``, 1 when any run
        failed or is ``incomplete`` (its output ends before the summary: killed or cut short), any
        file could not be read or parsed, or no file was given.

    Raises:
        RoceTuneError: RT300 when ``line_rate`` is not a speed. ValueError: unknown ``fmt``.
    """
    if fmt not in ("text", "json"):
        raise ValueError(f"format {fmt!r} is not one of: text, json")
    rate = _parse_line_rate(line_rate)
    runs, errors = _read_runs(paths)
    code = 1 if errors or any(r.status in ("failed", "incomplete") for r in runs) else 0
    render = _report_json if fmt == "json" else _report_text
    return render(runs, errors, rate, code), code
