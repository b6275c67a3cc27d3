"""Facts gathered for one run while reading (text or JSON), and how its collective is named."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import PurePath
from typing import Literal

from roce_tune.verify.nccl.model import COLLECTIVES, TYPE_BYTES, NcclRow


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


def _elements_ratio(size: int, count: int, dtype: str) -> int | None:
    """``size / (count × type size)`` when it is a whole number (1: one buffer, N: N ranks' buffers).

    >>> (_elements_ratio(1024, 256, "float"), _elements_ratio(4096, 128, "float"),
    ...  _elements_ratio(10, 3, "int8"))
    (1, 8, None)
    """
    ts = TYPE_BYTES.get(dtype.lower())
    if not ts or count <= 0 or size <= 0 or size % (count * ts):
        return None
    return size // (count * ts)


def infer_collective(redop: str | None, root: int | None, size: int, count: int, dtype: str,
                     nranks: int | None, *, in_place_unchecked: bool = False) -> str | None:
    """Collective from one row's shape (see module docstring), or ``None`` if ambiguous.

    ``size`` is the row's message size in bytes, ``count`` its element count, ``dtype`` the NCCL data type
    name (bytes per element from ``TYPE_BYTES``), ``root`` the root rank or ``None``/negative for none.
    ``in_place_unchecked``: the run validated its out-of-place results but printed ``N/A`` for every
    in-place one, as nccl-tests does for sendrecv (whose rows read ``sum -1`` like all_reduce's) and
    alltoall (``none -1`` like all_gather's); a reduction's and all_gather's in-place results are checked.

    >>> infer_collective("sum", -1, 4096, 1024, "float", 2, in_place_unchecked=True)
    'sendrecv'
    >>> infer_collective("none", -1, 4096, 128, "float", 8, in_place_unchecked=True)
    'alltoall'
    """
    reducing = redop is not None and redop.lower() not in ("", "none")
    rooted = root is not None and root >= 0
    if reducing and rooted:
        return "reduce"
    ratio = _elements_ratio(size, count, dtype)
    if ratio is None or nranks == 1:
        return None
    if rooted:  # redop "none", or no redop column (first layout)
        return "broadcast" if ratio == 1 else None
    return _unrooted(reducing, ratio, in_place_unchecked)


def _unrooted(reducing: bool, ratio: int, in_place_unchecked: bool) -> str | None:
    """A collective without a root from its ``size / (count × type size)`` ratio (see
    :func:`infer_collective`)."""
    if in_place_unchecked:
        return ("sendrecv" if ratio == 1 else None) if reducing else "alltoall"
    if reducing:
        return "all_reduce" if ratio == 1 else "reduce_scatter"
    return None


@dataclass
class RunFacts:
    """Mutable facts gathered for one run while reading; :func:`finalize_run` freezes them."""

    source: str
    line: int
    format: Literal["text", "json"] = "text"
    collective: tuple[str, str] | None = None  # (name, how found)
    rows: list[NcclRow] = field(default_factory=list)
    #: (rank, pid or None when not printed, host or "" when not printed, device)
    ranks: list[tuple[int, int | None, str, int]] = field(default_factory=list)
    headers: int = 0
    oob_lines: int = 0
    avg_lines: int = 0
    structural: bool = False
    oob: int | None = None
    avg: float | None = None
    avg_failed: bool = False
    complete: bool = False
    validation: int | None = None
    nthread_line: str | None = None  # the run's ``nThread … nGpus …`` parameter line, as printed
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
