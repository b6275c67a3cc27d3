"""Lines around the tables that are not nccl-tests' own: NCCL's log lines (``NCCL INFO``/``WARN``), and
the launcher's line prefixes and terminal colours.

``srun -l`` prefixes ``12: `` (padded to the width of the largest task id, `` 3: ``; ``P1 3: `` in a
heterogeneous job: Slurm ``src/common/write_labelled_message.c``), ``mpirun --tag-output``
``[1,0]<stdout>:``, log shippers an ISO-8601 timestamp; NCCL INFO lines give the library version and
rank count, WARN/ABORT lines are kept as notes.
"""

from __future__ import annotations

import re

from roce_tune.verify.nccl.facts import RunFacts

_PREFIX = re.compile(r"^(?:\[\d+,\d+\]<std(?:out|err)>:|(?:P\d+ )? *\d{1,6}: |\d{4}-\d\d-\d\dT[\d:.,]+Z? )")
_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
_NCCL_LOG = re.compile(r"\bNCCL (INFO|WARN|TRACE|ABORT)\b:?\s*(.*)")
_NCCL_VERSION = re.compile(r"NCCL version (\d+\.\d+\.\d+)")
_NRANKS = re.compile(r"\bn[Rr]anks (\d+)")
#: WARN/ABORT lines kept as notes per run
_MAX_WARN_NOTES = 3


def clean_line(line: str) -> str:
    """``line`` without ANSI colour codes, trailing blanks and a launcher/log prefix.

    >>> clean_line("[1,0]<stdout>:#  nThread 1 nGpus 1")
    '#  nThread 1 nGpus 1'
    >>> clean_line("12: \\x1b[1m  8  2 float\\x1b[0m  ")
    '  8  2 float'
    """
    line = _ANSI.sub("", line).rstrip()
    m = _PREFIX.match(line)
    return line[m.end():] if m else line


def read_nccl_log_line(line: str, target: RunFacts) -> bool:
    """If ``line`` is an NCCL log line, record what it tells in ``target`` and return True.

    ``NCCL version X.Y.Z`` and ``nRanks N`` fill the version and the rank-count hint (first one wins);
    WARN and ABORT lines become notes (at most three, no repeats).
    """
    m = _NCCL_LOG.search(line)
    if m is None:
        return False
    if v := _NCCL_VERSION.search(line):
        target.nccl_version = target.nccl_version or v.group(1)
    if (r := _NRANKS.search(line)) and target.nranks_hint is None:
        target.nranks_hint = int(r.group(1))
    warn = f"NCCL {m.group(1)}: {m.group(2).strip()}"
    if m.group(1) in ("WARN", "ABORT") and warn not in target.notes and len(target.notes) < _MAX_WARN_NOTES:
        target.notes.append(warn)
    return True
