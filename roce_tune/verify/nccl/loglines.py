"""Lines around the tables that are not nccl-tests' own: NCCL's log lines (``NCCL INFO``/``WARN``), and
the launcher's line prefixes and terminal colours.

``srun -l`` prefixes ``12: `` (padded to the width of the largest task id, `` 3: ``; ``P1 3: `` in a
heterogeneous job: Slurm ``src/common/write_labelled_message.c``), ``mpirun --tag-output``
``[1,0]<stdout>:`` (after a ctime stamp with ``--timestamp-output``; indented when a CI log quotes it),
MPICH/Intel MPI ``mpiexec -l`` ``[0] ``, ``kubectl logs --prefix`` ``[pod/name/container] ``, ``docker
compose logs`` ``worker-1  | ``, log shippers and ``kubectl logs --timestamps`` an ISO-8601 timestamp
(``[…]`` or not, ``T`` or a blank between date and time), moreutils ``ts`` ``Mar 03 13:51:36 ``
(prefixes may stack); NCCL INFO lines give the library version and rank count, WARN/ABORT lines are kept
as notes. ``pdsh``/``clush`` prefix each line with ``host: `` and interleave the hosts (pdsh(1)):
:func:`per_host_views` gives one text per host.
"""

from __future__ import annotations

import re

from roce_tune.verify.nccl.facts import RunFacts

_PREFIX = re.compile(
    r"^(?:\s*\[\d+,\d+\]<std(?:out|err)>:"  # mpirun --tag-output (indented when quoted in a CI log)
    r"|[A-Z][a-z]{2} [A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d \d{4}(?=\[\d+,\d+\]<std)"  # --timestamp-output
    r"|(?:P\d+ )? *\d{1,6}: "  # srun -l
    r"|\[?\d{4}-\d\d-\d\d[T ][\d:.,]+(?:Z|[+-]\d\d:?\d\d)?\]? "  # ISO-8601 (kubectl --timestamps, shippers)
    r"|[A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d "  # moreutils ts
    r"|\[pod/[^\]\s]+\] "  # kubectl logs --prefix
    r"|[A-Za-z][\w.-]*\s*\| "  # docker compose logs
    r"|\[\d{1,6}\] )")  # mpiexec -l / -prepend-rank (MPICH, Intel MPI)
#: prefixes stacked on one line (kubectl's pod prefix before its timestamp) read at most this many times
_MAX_PREFIXES = 3
_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
#: pdsh/clush ``host: `` (a letter first: srun's numeric ``12: `` is a task id of one job, read by _PREFIX)
_HOST_PREFIX = re.compile(r"^([A-Za-z][A-Za-z0-9_.-]*): ")
#: share of the non-blank lines that must carry a host prefix for a text to be read as pdsh/clush output
_HOST_PREFIXED_SHARE = 0.8
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
    for _ in range(_MAX_PREFIXES):
        if (m := _PREFIX.match(line)) is None:
            break
        line = line[m.end():]
    return line


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


def per_host_views(text: str) -> list[str] | None:
    r"""pdsh/clush output (``host: line``, hosts interleaved) → one text per host, in order of appearance:
    that host's lines without the prefix, every other host's line blank (so line numbers stay the file's),
    unprefixed lines (the prompt) kept. None when fewer than 80 % of the non-blank lines carry a host
    prefix (plain nccl-tests output, srun -l, mpirun --tag-output).

    >>> per_host_views("a: x\nb: y\na: z\n")
    ['x\n\nz\n', '\ny\n\n']
    """
    lines = text.split("\n")
    hosts = [m.group(1) if (m := _HOST_PREFIX.match(_ANSI.sub("", ln))) else None for ln in lines]
    named = [h for h in hosts if h]
    if not named or len(named) < _HOST_PREFIXED_SHARE * sum(1 for ln in lines if ln.strip()):
        return None
    return ["\n".join(_ANSI.sub("", ln)[len(host) + 2:] if h == host else ("" if h else ln)
                      for h, ln in zip(hosts, lines)) for host in dict.fromkeys(named)]
