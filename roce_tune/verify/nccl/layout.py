"""Table layout of nccl-tests text output: the header's columns and one result row read against them.

Tokens are located by the header's column names and by the shape of each value, never by fixed
positions (a row with an empty ``redop``, a trace-replay row with the out-of-place block blank, the
old ``error`` column, ``#bitdiff`` and ``timestamp`` columns).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from roce_tune.verify.nccl.model import NcclResult, NcclRow


def num(tok: str) -> tuple[float | None, bool]:
    """A printed value → (float or None for N/A/nan/inf, flagged by a trailing ``*``)."""
    flagged = tok.endswith("*")
    tok = tok.rstrip("*")
    if tok.upper() in ("N/A", "NA", "-"):
        return None, flagged
    v = float(tok)  # ValueError for a word: the caller treats the line as not a row
    return (None if math.isnan(v) or math.isinf(v) else v), flagged


ROW_START = re.compile(r"^\s*\d+\s+\d+\s+[A-Za-z_]\w*(\s|$)")
_DATE, _CLOCK = re.compile(r"^\d{4}-\d\d-\d\d$"), re.compile(r"^\d\d:\d\d:\d\d$")


@dataclass(frozen=True)
class Header:
    """Column layout of one table: label columns, then one block of value columns per placement."""

    labels: tuple[str, ...]
    blocks: tuple[tuple[str, ...], ...]
    timestamp: bool = False
    time_scale: float = 1.0
    assumed: bool = False


DEFAULT_HEADER = Header(("redop", "root"), (("time", "algbw", "busbw", "wrong"),) * 2, assumed=True)


#: first columns of a table header → time scale to µs: current, and nccl-tests' first layout (2017-2019:
#: ``bytes N type op [root] time algbw busbw res``, no units line, time printed as ``deltaSec * 1.0E3`` = ms,
#: ``res`` = max error)
_FIRST_COLUMNS: dict[tuple[str, ...], float] = {("size", "count", "type"): 1.0,
                                                 ("bytes", "N", "type"): 1000.0}
#: the first layout's names of later columns
_SYNONYMS = {"op": "redop", "res": "error"}


def parse_header(line: str) -> Header | None:
    """The column layout of an nccl-tests table header line (``size count type [redop] [root] time algbw
    busbw #wrong|error …`` or the first ``bytes N type [op] [root] time algbw busbw res …``, with or without
    ``#``), or None when ``line`` is not one."""
    toks = [_SYNONYMS.get(t, t) for t in line.lstrip("# \t").split()]
    scale = _FIRST_COLUMNS.get(tuple(toks[:3]))
    if len(toks) < 5 or scale is None or "busbw" not in toks:
        return None
    i, labels = 3, []
    while i < len(toks) and toks[i] in ("redop", "root"):
        labels.append(toks[i])
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
    return Header(tuple(labels), tuple(tuple(b) for b in blocks), stamp, scale) if blocks else None


_COUNT = re.compile(r"^(\d+|\d(\.\d+)?e\+\d\d+)$")  # "%6g" of a count: 12 or 1.23457e+07
_EXP = re.compile(r"^-?\d(\.\d+)?e[+-]\d\d+\*?$")  # "%5.0le" max error, "*" when above the limit
_NA = ("N/A", "NA", "-")


def _wrong_value(tok: str | None) -> tuple[int | None, float | None, bool]:
    """``#wrong`` column → (count, old max error, flagged); ValueError when it is neither."""
    if tok is None or tok.upper() in _NA:
        return None, None, False
    if _COUNT.match(tok):
        return int(float(tok)), None, False
    if _EXP.match(tok) and "e-" in tok:  # an old error value under an assumed header
        err, flagged = num(tok)
        return None, err, flagged
    raise ValueError(f"{tok!r} is not a #wrong count")


def _error_value(tok: str) -> tuple[float | None, bool]:
    """Old ``error`` column → (max relative error or None when -1 = not checked, flagged)."""
    if not _EXP.match(tok):
        raise ValueError(f"{tok!r} is not an nccl-tests error value")
    err, flagged = num(tok)
    return (err if err is not None and err >= 0 else None), flagged


def _result(cols: tuple[str, ...], toks: list[str], scale: float) -> NcclResult:
    """One placement's values; ValueError when a value has the wrong shape for its column."""
    vals = dict(zip(cols, toks))
    t, alg, bus = (num(vals.get(c, "N/A"))[0] for c in ("time", "algbw", "busbw"))
    if any(v is not None and v < 0 for v in (t, alg, bus)):
        raise ValueError("negative time or bandwidth: the row is shifted or cut")
    wrong, err, flagged = _wrong_value(vals.get("wrong"))
    if (tok := vals.get("error")) is not None and tok.upper() not in _NA:
        err, flagged = _error_value(tok)
    return NcclResult(time_us=None if t is None else t * scale, algbw_gbps=alg, busbw_gbps=bus,
                      wrong=wrong, max_error=err, flagged=flagged)


def _gap_before(spans: list[tuple[str, int]], i: int) -> int:
    """Blank columns between token ``i - 1`` and token ``i`` of a row."""
    prev, start = spans[i - 1], spans[i][1]
    return start - (prev[1] + len(prev[0]))


def _split_blocks(hdr: Header, spans: list[tuple[str, int]], rest: list[str]
                  ) -> tuple[list[str], list[str], list[tuple[str, ...]], list[str]] | None:
    """(label tokens, value tokens, value blocks, placements) of a row's tokens after ``type``."""
    full = sum(len(b) for b in hdr.blocks)
    if len(rest) >= full:
        blocks = list(hdr.blocks)
        places = ["out_of_place", "in_place"][:len(blocks)]
        return rest[:len(rest) - full], rest[len(rest) - full:], blocks, places
    if len(hdr.blocks) == 2 and 0 <= len(rest) - len(hdr.blocks[1]) <= len(hdr.labels) and (
            _gap_before(spans, 3 + len(rest) - len(hdr.blocks[1])) >= 20):
        # out-of-place printed as 32 blanks (trace replay); a row cut short has no such gap
        cut = len(rest) - len(hdr.blocks[1])
        return rest[:cut], rest[cut:], [hdr.blocks[1]], ["in_place"]
    return None


def _labels(hdr: Header, middle: list[str]) -> dict[str, str] | None:
    """The label columns (``redop``, ``root``) of a row; ``None`` when they cannot be labels."""
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
    return labels


def _strip_timestamp(hdr: Header, rest: list[str]) -> list[str]:
    if hdr.timestamp and len(rest) >= 2 and _DATE.match(rest[-2]) and _CLOCK.match(rest[-1]):
        return rest[:-2]
    return rest


def parse_row(line: str, hdr: Header, lineno: int) -> NcclRow | None:
    """One result row read against ``hdr``; ``None`` when the line is not a row of that table."""
    spans = [(m.group(), m.start()) for m in re.finditer(r"\S+", line)]
    toks = [t for t, _ in spans]
    try:
        size, count, dtype = int(toks[0]), int(toks[1]), toks[2]
        split = _split_blocks(hdr, spans, _strip_timestamp(hdr, toks[3:]))
        labels = _labels(hdr, split[0]) if split is not None else None
        if split is None or labels is None:
            return None
        _, perf, blocks, places = split
        out: dict[str, NcclResult] = {}
        at = 0
        for place, cols in zip(places, blocks):
            out[place] = _result(cols, perf[at:at + len(cols)], hdr.time_scale)
            at += len(cols)
        root = int(labels["root"]) if "root" in labels else None
    except (ValueError, IndexError):
        return None
    return NcclRow(size_bytes=size, count=count, type=dtype, redop=labels.get("redop") or None, root=root,
                   line=lineno, **out)
