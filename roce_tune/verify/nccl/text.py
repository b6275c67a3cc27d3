"""nccl-tests stdout: tables of every generation with the noise around them, read into one
:class:`~roce_tune.verify.nccl.facts.RunFacts` per run.

A run starts at its preamble (``# nccl-tests version``, ``# Collective test starting``, ``nThread``, the
rank list, a ``*_perf`` command line or a ``<name> result`` label) or at its table header, and ends with
its summary (``Out of bounds values`` / ``Avg bus bandwidth``); several runs may share one file. A run
killed after its table header ends at the next ``*_perf`` command line or nThread line with other
parameters (a no-MPI build repeats the same nThread line, which stays in the run); a run killed after its
rank list or header (hung in NCCL init) ends at the next run's first line (version, starting, nThread or
command line) unless the launcher started more processes than it listed (no-MPI build, see
:meth:`_TextReader._preamble_done`).
"""

from __future__ import annotations

import re
from collections.abc import Callable

from roce_tune.verify.nccl.facts import RunFacts, collective_from_program, nccl_version_from_code
from roce_tune.verify.nccl.layout import DEFAULT_HEADER, ROW_START, Header, num, parse_header, parse_row
from roce_tune.verify.nccl.loglines import clean_line, read_nccl_log_line

_TESTS_VERSION = re.compile(r"nccl-tests version (\S+)(?:.*?nccl-library=(\d+))?")
_STARTING = re.compile(r"Collective test (starting|concluded):\s*(\S+)")
_NTHREAD = re.compile(r"^#?\s*nThread\s+\d+\s+nGpus\s+\d+")
_VALIDATION = re.compile(r"validation:\s*(\d+)")
#: ``Rank 0 Group 0 Pid 12 on host device 0``; before nccl-tests 2.x-2019 ``Rank 0 on host device 0`` (no pid)
#: and ``Rank 0 uses device 0`` (no host either)
_RANK = re.compile(r"^#?\s*Rank\s+(\d+)\s+(?:Group\s+\d+\s+)?(?:Pid\s+(\d+)\s+)?(?:on\s+(\S+)\s+)?"
                   r"(?:uses\s+)?device\s+(\d+)")
_OOB = re.compile(r"Out of bounds values\s*:\s*(\d+)\s*(OK|FAILED)?", re.IGNORECASE)
_AVG = re.compile(r"Avg bus bandwidth\s*:\s*(\S+)\s*(OK|FAILED)?", re.IGNORECASE)
#: nccl-tests NCCLCHECK/CUDACHECK/TESTCHECK: ``host: Test NCCL failure f.cu:1 '…'``, ``.. host pid 1: Test
#: failure f.cu:2``; before 2.13 (no ``Test``, no host) ``NCCL failure f.cu:1 '…'``,
#: ``Cuda failure f.cu:1 '…'``, ``Failed, NCCL error f.cu:1 '…'``, ``Failed: Cuda error f.cu:1 '…'``
#: (NCCL's own log lines are read first); ``-T``: ``host: Test timeout (30s) common.cu:1``
_FAIL = re.compile(r"\bTest (?:NCCL |CUDA )?failure\b|\bTest timeout \(\d+s\)"
                   r"|\b(?:NCCL|CUDA|Cuda) failure \S+:\d+|\bFailed[:,] (?:NCCL|CUDA|Cuda) error \S+:\d+")
#: the launcher, Slurm or the shell saying a process failed, was killed by a signal or the job was cancelled
_LAUNCH_FAIL = re.compile(r"non-zero exit code|exited with non-zero status|MPI_ABORT was invoked"
                          r"|srun: error: .*[Ee]xited with exit code [1-9]"
                          r"|srun: error: \S+: tasks? [\d,\[\]-]+: (?![Ee]xited with exit code)\S"
                          r"|exited on signal \d+|\bCaught signal \d+|\*\*\* Process received signal \*\*\*"
                          r"|BAD TERMINATION OF ONE OF YOUR APPLICATION PROCESSES"
                          r"|\bCANCELLED AT \S+ DUE TO"  # Slurm
                          r"|^command terminated with exit code [1-9]"  # kubectl exec
                          r"|^\s*(?:Bus error|Segmentation fault|Killed|Aborted)(?: \(core dumped\))?\s*$")
_ERROR = re.compile(r"^#\s*error:\s*(.+)")
_LABEL = re.compile(r"^\s*([a-z_]+)\s+results?\s*:?\s*$")
_BINARY = re.compile(r"(?:^|[\s/=])([a-z_]+_perf(?:_mpi)?)(?=\s|$)")
_LAUNCHER = re.compile(r"\b(?:mpirun|mpiexec|orterun|srun)\b.*?\s(?:-np|-n|--np|--ntasks)[ =]?(\d+)")
#: failure lines kept per run; notes about skipped rows kept per run
_MAX_FAIL_NOTES, _MAX_ROW_NOTES = 3, 8


class _TextReader:
    """One pass over the cleaned lines. Each ``_on_*`` handler returns True when the line is its kind
    (first match wins, in the order of :meth:`_handlers`)."""

    def __init__(self, text: str, source: str) -> None:
        self.text, self.source = text, source
        self.lines = [clean_line(ln) for ln in text.splitlines()]
        self.file_has_header = any(parse_header(ln) for ln in self.lines)
        self.done: list[RunFacts] = []
        self.cur: RunFacts | None = None
        self.pending = RunFacts(source=source, line=1)  # log facts seen between runs
        self.hdr: Header | None = None
        self.prev_header = False
        self.was_header = False

    # --- runs ------------------------------------------------------------------------------------
    def new(self, lineno: int) -> RunFacts:
        """Close the current run (if it holds anything) and start one at ``lineno``."""
        if self.cur is not None and self.cur.structural:
            self.done.append(self.cur)
        p = self.pending
        self.cur = RunFacts(source=self.source, line=lineno, nccl_version=p.nccl_version,
                            nranks_hint=p.nranks_hint, notes=list(p.notes),
                            launcher_np=p.launcher_np,  # a command line covers the runs after it
                            inherited=p.inherited)
        p.notes.clear()
        return self.cur

    def preamble(self, lineno: int, fresh: bool = False, opening: bool = False) -> RunFacts:
        """The run a preamble line belongs to: a new one once the current run has results, or once it has
        its table header when the line is ``fresh`` (it cannot be the current run's: another ``*_perf``
        command line, other nThread parameters; a run killed after its header is followed by the next), or
        once it listed its ranks or printed its header when the line is ``opening`` (a run's first lines:
        ``# nccl-tests version``, ``# Collective test starting``, nThread) and no other process's
        preamble is due (see :meth:`_preamble_done`)."""
        cur = self.cur
        if cur is None or cur.rows or cur.summaries or cur.fail_notes or (fresh and cur.headers) \
                or (opening and self._preamble_done(cur)):
            return self.new(lineno)
        return cur

    @staticmethod
    def _preamble_done(run: RunFacts) -> bool:
        """``run`` listed its ranks (or printed its table header), so another run's first lines start a new
        run: a run that hung in NCCL init or at its first size, then the next one (``tee -a``). Not while
        the launcher started more processes than listed ranks: each process of a build without MPI
        prints its own preamble, and they stay in one run to be reported as having run alone."""
        if not (run.ranks or run.headers):
            return False
        procs = {(r[2], r[1]) for r in run.ranks}
        return not (run.launcher_np and run.launcher_np > len(procs))

    def current(self, lineno: int) -> RunFacts:
        return self.cur if self.cur is not None else self.new(lineno)

    # --- the pass --------------------------------------------------------------------------------
    def read(self) -> list[RunFacts]:
        handlers = self._handlers()
        for n, line in enumerate(self.lines, start=1):
            self.was_header, self.prev_header = self.prev_header, False
            if not line.strip():
                continue
            any(handle(n, line) for handle in handlers)
        if self.cur is not None and self.cur.structural:
            self.done.append(self.cur)
        file_version = next((f.nccl_version for f in self.done if f.nccl_version), self.pending.nccl_version)
        for f in self.done:
            f.nccl_version = f.nccl_version or file_version
        return self.done

    def _handlers(self) -> tuple[Callable[[int, str], bool], ...]:
        return (self._on_nccl_log, self._on_tests_version, self._on_starting, self._on_nthread,
                self._on_rank, self._on_oob, self._on_avg, self._on_failure, self._on_launch_failure,
                self._on_error, self._on_header, self._on_units, self._on_label, self._on_row,
                self._on_command_line)

    def _on_nccl_log(self, n: int, line: str) -> bool:
        cur = self.cur
        return read_nccl_log_line(line, cur if cur is not None and not cur.summaries else self.pending)

    def _on_tests_version(self, n: int, line: str) -> bool:
        if not (m := _TESTS_VERSION.search(line)):
            return False
        run = self.preamble(n, opening=True)
        run.structural, run.nccl_tests_version = True, m.group(1)
        if m.group(2):
            run.nccl_version = nccl_version_from_code(int(m.group(2)))
        return True

    def _on_starting(self, n: int, line: str) -> bool:
        if not (m := _STARTING.search(line)):
            return False
        run = self.preamble(n, opening=True) if m.group(1) == "starting" else self.current(n)
        run.structural = True
        run.name(collective_from_program(m.group(2)), "header")
        return True

    def _on_nthread(self, n: int, line: str) -> bool:
        if not _NTHREAD.match(line):
            return False
        cur, params = self.cur, line.strip()
        run = self.preamble(n, fresh=cur is not None and cur.nthread_line not in (None, params), opening=True)
        run.structural = True
        run.nthread_line = run.nthread_line or params
        if v := _VALIDATION.search(line):
            run.validation = int(v.group(1))
        return True

    def _on_rank(self, n: int, line: str) -> bool:
        if not (m := _RANK.match(line)):
            return False
        run = self.preamble(n)
        run.structural = True
        pid = int(m.group(2)) if m.group(2) else None
        run.ranks.append((int(m.group(1)), pid, m.group(3) or "", int(m.group(4))))
        return True

    def _on_oob(self, n: int, line: str) -> bool:
        if not (m := _OOB.search(line)):
            return False
        run = self.current(n)
        run.structural, run.complete = True, True
        run.oob = max(run.oob or 0, int(m.group(1)))
        run.oob_lines += 1
        return True

    def _on_avg(self, n: int, line: str) -> bool:
        if not (m := _AVG.search(line)):
            return False
        run = self.current(n)
        run.structural, run.complete = True, True
        run.avg_lines += 1
        try:
            run.avg = num(m.group(1))[0]
        except ValueError:
            run.notes.append(f"line {n}: Avg bus bandwidth value {m.group(1)!r} not understood")
        run.avg_failed = run.avg_failed or (m.group(2) or "").upper() == "FAILED"
        return True

    def _on_failure(self, n: int, line: str) -> bool:
        if not _FAIL.search(line):
            return False
        run = self.current(n)
        run.structural = True
        if len(run.fail_notes) < _MAX_FAIL_NOTES:
            run.fail_notes.append(f"nccl-tests reported a failure: {line.strip()[:160]}")
        return True

    def _on_launch_failure(self, n: int, line: str) -> bool:
        if not _LAUNCH_FAIL.search(line):
            return False
        cur = self.cur
        if cur is not None and cur.structural and len(cur.fail_notes) < _MAX_FAIL_NOTES:
            cur.fail_notes.append(f"the launcher reported a failure: {line.strip()[:160]}")
        return True

    def _on_error(self, n: int, line: str) -> bool:
        if not (m := _ERROR.match(line)):
            return False
        self.current(n).notes.append(f"NCCL reported: {m.group(1).strip()[:160]}")
        return True

    def _on_header(self, n: int, line: str) -> bool:
        if (h := parse_header(line)) is None:
            return False
        cur = self.cur
        run = self.current(n) if cur is not None and not (cur.rows or cur.summaries or cur.fail_notes) \
            else self.new(n)
        run.structural = True
        if run.headers == 0 or self.hdr is None or len(h.blocks) >= len(self.hdr.blocks):
            self.hdr = h if run.headers == 0 or self.hdr is None else self.hdr
        run.headers += 1
        self.prev_header = True
        return True

    def _on_units(self, n: int, line: str) -> bool:
        """The units line right under a header: ``(ms)`` (old nccl-tests) scales times to µs."""
        hdr = self.hdr
        if not (self.was_header and hdr is not None and "(B)" in line):
            return False
        if "(ms)" in line:
            self.hdr = Header(hdr.labels, hdr.blocks, hdr.timestamp, 1000.0, hdr.assumed)
        return True

    def _on_label(self, n: int, line: str) -> bool:
        if not ((m := _LABEL.match(line)) and collective_from_program(m.group(1))):
            return False
        self.preamble(n).name(collective_from_program(m.group(1)), "label")
        return True

    def _on_row(self, n: int, line: str) -> bool:
        if not (ROW_START.match(line) and (self.hdr is not None or not self.file_has_header)):
            return False
        layout = self.hdr or DEFAULT_HEADER
        row = parse_row(line, layout, n)
        run = self.current(n)
        if row is None:
            cut = n == len(self.lines) and not self.text.endswith(("\n", "\r"))
            why = "last line cut short" if cut else "row not understood"
            if len(run.notes) < _MAX_ROW_NOTES:
                run.notes.append(f"line {n}: {why}, skipped: {line.strip()[:60]!r}")
            return True
        if layout.assumed and not run.rows:
            run.notes.append("no table header found: columns assumed from the current nccl-tests layout")
        run.structural = True
        run.rows.append(row)
        return True

    def _on_command_line(self, n: int, line: str) -> bool:
        if not (m := _BINARY.search(line)):
            return False
        name = collective_from_program(m.group(1))
        if name:
            run = self.preamble(n, fresh=True, opening=True)
            run.name(name, "command line")
            self.pending.inherited = name
            lm = _LAUNCHER.search(line)
            run.launcher_np = self.pending.launcher_np = int(lm.group(1)) if lm else None
        return True


def parse_text(text: str, source: str) -> list[RunFacts]:
    """The runs of nccl-tests stdout ``text`` (any layout, noise anywhere), in file order; empty when
    nothing in it is nccl-tests'."""
    return _TextReader(text, source).read()
