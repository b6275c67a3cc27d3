"""nccl-tests parser on our own fixtures (same shapes as the field, other numbers) and edge cases.

Oracles: the busbw values written in each fixture (the printed ``Avg bus bandwidth`` must equal
their mean over both placements, as nccl-tests computes it), nccl-tests' ``getCollByteCount``
(size/count ratio per collective) and ``NCCL_VERSION_CODE`` encoding.
"""

from __future__ import annotations

import re
import statistics
from pathlib import Path

import pytest
from pydantic import ValidationError

from roce_tune.findings import RoceTuneError
from roce_tune.verify.nccl_parser import (
    INCOMPLETE,
    NO_ROWS,
    RAN_ALONE,
    busbw_fraction_of_line_rate,
    gbytes_per_s_to_line_rate_fraction,
    infer_collective,
    nccl_version_from_code,
    parse_nccl_file,
    parse_nccl_output,
)

FIXTURES = Path(__file__).parent / "fixtures"


def runs_of(name: str):
    return parse_nccl_file(str(FIXTURES / name))


def busbws(run):
    return [x.busbw_gbps for r in run.rows if r.size_bytes > 0 for _,
            x in r.results() if x.busbw_gbps is not None]


def test_current_layout_info_and_warn_lines_inside_table():
    [run] = runs_of("allreduce-current-4node-200g-info-inside.txt")
    assert (run.collective, run.collective_source) == ("all_reduce", "header")
    assert [r.size_bytes for r in run.rows] == [16777216 * 2 ** i for i in range(5)]
    assert {r.type for r in run.rows} == {"bfloat16"} and all(r.count * 2 == r.size_bytes for r in run.rows)
    oop = [18.41, 19.62, 20.35, 20.88, 21.02]
    ip = [18.39, 19.60, 20.31, 20.90, 21.00]
    assert [r.oop_busbw_gbps for r in run.rows] == oop and [r.ip_busbw_gbps for r in run.rows] == ip
    assert run.avg_busbw_gbps == 20.048 == pytest.approx(statistics.fmean(oop + ip))
    assert run.max_busbw_gbps == 21.02
    assert run.status == "ok"
    assert run.problems == ["NCCL WARN: NET/IB : mlx5_3:1 async event: GID table change"]
    assert (run.nranks, run.ndevices) == (8, 8)
    assert run.hosts == ["gpu-r1-01", "gpu-r1-02", "gpu-r2-01", "gpu-r2-02"]
    assert (run.nccl_tests_version, run.nccl_version) == ("2.17.1", "2.27.3")
    frac = busbw_fraction_of_line_rate(run, 200)  # 200 Gb/s = 25 GB/s
    assert frac.largest_message == pytest.approx(21.02 / 25)
    assert frac.average == pytest.approx(20.048 / 25)


def test_oldest_layout_with_mpirun_tag_output_prefix():
    [run] = runs_of("allgather-oldest-layout-tag-output.txt")
    assert (run.collective, run.collective_source) == ("all_gather", "command line")
    assert [r.size_bytes for r in run.rows] == [1048576, 2097152, 4194304, 8388608]
    assert all(r.size_bytes == r.count * 4 * 4 for r in run.rows)  # all_gather: count per rank, 4 ranks
    assert all(r.redop is None and r.root is None for r in run.rows)
    assert all(x.max_error == 0.0 and x.wrong is None for r in run.rows for _, x in r.results())
    assert run.avg_busbw_gbps == 39.0888 == pytest.approx(statistics.fmean(busbws(run)), abs=1e-4)  # %g
    assert (run.max_busbw_gbps, run.status, run.problems) == (42.7, "ok", [])
    assert (run.nranks, run.hosts) == (4, ["dgx-b07"])


def test_flagged_error_without_summary_fails_and_cut_row_is_skipped():
    [run] = runs_of("reduce-error-flagged-cut-midrow.txt")
    assert (run.collective, run.collective_source) == ("reduce", "inferred")  # sum with root 0
    assert [r.size_bytes for r in run.rows] == [1048576, 2097152, 4194304]
    assert run.rows[2].out_of_place.flagged and run.rows[2].out_of_place.max_error == 4e-03
    assert run.status == "failed"
    assert run.problems[0] == "validation failed: max error 4e-03 at 4194304 bytes (out-of-place)"
    assert INCOMPLETE in run.problems
    assert run.problems[-1].startswith("line 19: last line cut short, skipped")
    assert run.avg_busbw_gbps == pytest.approx(statistics.fmean([17.18, 17.25, 21.31, 21.38, 24.49, 24.54]))


def test_validation_off_is_not_validated():
    [run] = runs_of("sendrecv-validation-off-c0.txt")
    assert (run.collective, run.collective_source) == ("sendrecv", "header")
    assert run.status == "not-validated"
    assert run.problems == ["not validated: #wrong is N/A in every row (validation: 0; run with -c 1)"]
    assert all(r.oop_wrong is None and r.ip_wrong is None for r in run.rows)
    assert run.avg_busbw_gbps == 11.735 == pytest.approx(statistics.fmean(busbws(run)))


def test_two_runs_in_one_file_second_failed():
    ar, rs = runs_of("two-runs-srun-second-failed.txt")
    assert (ar.collective, rs.collective) == ("all_reduce", "reduce_scatter")
    assert (ar.status, ar.problems, len(ar.rows)) == ("ok", [], 3)
    assert ar.avg_busbw_gbps == 9.98667 == pytest.approx(statistics.fmean(busbws(ar)), abs=5e-6)
    assert rs.status == "failed" and rs.out_of_bounds == 12
    assert rs.problems == ["validation failed: Out of bounds values : 12",
                           "Avg bus bandwidth 8.885 GB/s FAILED the nccl-tests minimum check"]
    assert rs.rows[1].oop_wrong == 12
    assert all(r.size_bytes == r.count * 4 * 8 for r in rs.rows)  # reduce_scatter over 8 ranks
    assert (ar.line, rs.line) == (1, 25)
    assert ar.hosts == rs.hosts == ["l40s-n07", "l40s-n11"]


def test_alltoall_empty_redop_with_root_printed():
    [run] = runs_of("alltoall-empty-redop-root-printed.txt")
    assert run.collective == "alltoall"
    assert [(r.redop, r.root) for r in run.rows] == [(None, -1)] * 4
    assert [r.oop_busbw_gbps for r in run.rows] == [5.52, 5.71, 5.80, 5.86]
    assert [r.ip_time_us for r in run.rows] == [1144.42, 2210.44, 4318.46, 8603.70]
    assert run.avg_busbw_gbps == 5.72 == pytest.approx(statistics.fmean(busbws(run)))
    assert run.status == "ok" and run.nranks == 4


def test_crash_with_ib_completion_error():
    [run] = runs_of("allreduce-crash-ib-completion-error.txt")
    assert (run.collective, run.nranks, len(run.hosts)) == ("all_reduce", 16, 2)
    assert [r.oop_busbw_gbps for r in run.rows] == [68.79, 70.42]
    assert run.status == "failed" and not run.complete
    assert run.problems[0].startswith("nccl-tests reported a failure: trn-p-01: Test NCCL failure "
                                      "common.cu:1005")
    assert run.problems[1] == "nccl-tests reported a failure: .. trn-p-01 pid 35: Test failure common.cu:1112"
    assert run.problems[2].startswith("the launcher reported a failure: a non-zero exit code")
    assert any(p.startswith("NCCL WARN: NET/IB : Got completion from peer") for p in run.problems)
    assert RAN_ALONE not in run.problems  # pid 31..38 on both hosts: containers reuse pids
    assert run.avg_busbw_gbps == pytest.approx(statistics.fmean([68.79, 68.94, 70.42, 70.37]))


@pytest.mark.parametrize("name", ["allreduce-no-mpi-interleaved.txt", "allreduce-no-mpi-sequential.txt",
                                  "allreduce-json-no-mpi.json"])
def test_no_mpi_build_is_reported_as_ran_alone(name):
    runs = runs_of(name)
    assert runs
    for run in runs:
        assert run.status == "failed" and run.problems[0] == RAN_ALONE
        assert run.collective == "all_reduce"
        assert run.rows == [] and run.avg_busbw_gbps is None and run.max_busbw_gbps is None


def test_cputime_and_timestamp_columns_with_log_timestamps():
    [run] = runs_of("allreduce-cputime-timestamps-k8s-prefix.txt")
    assert [r.oop_busbw_gbps for r in run.rows] == [361.52, 398.11, 421.37]
    assert [r.ip_wrong for r in run.rows] == [0, 0, 0]
    assert run.avg_busbw_gbps == 393.79 == pytest.approx(statistics.fmean(busbws(run)))
    assert (run.nccl_version, run.status, run.hosts) == ("2.27.2", "ok", ["nccl-worker-0"])


def test_per_iteration_columns_with_srun_labels():
    [run] = runs_of("allreduce-per-iteration-columns-srun-label.txt")
    assert [(r.oop_time_us, r.oop_busbw_gbps, r.ip_busbw_gbps) for r in run.rows] == [
        (760.53, 44.12, 44.30), (1457.30, 46.05, 45.98), (2842.99, 47.21, 47.30)]
    assert run.avg_busbw_gbps == 45.8267 == pytest.approx(statistics.fmean(busbws(run)), abs=5e-5)
    assert (run.status, run.nranks) == ("ok", 2)


@pytest.mark.parametrize("label", [" 0: ", "  0: ", "P0 0: ", "P1  3: "])
def test_srun_labels_padded_to_the_task_id_width(label):
    """Slurm ``write_labelled_message.c`` builds the ``srun -l`` label as ``"%*d: "`` with the width of
    the largest task id (`` 0: `` from 10 tasks on) and ``"P%u %*d: "`` for a heterogeneous job."""
    text = (FIXTURES / "allreduce-per-iteration-columns-srun-label.txt").read_text()
    [run] = parse_nccl_output(re.sub(r"(?m)^0: ", label, text), "padded.txt")
    assert [r.oop_busbw_gbps for r in run.rows] == [44.12, 46.05, 47.21]
    assert (run.status, run.nranks, run.avg_busbw_gbps) == ("ok", 2, 45.8267)


@pytest.mark.parametrize("command_line", [True, False])
def test_a_run_killed_after_its_header_then_a_rerun_are_two_runs(command_line):
    """``tee -a`` of a run that hung at its first size (killed after the table header) and the next run: the
    rerun's command line, or its own nThread line with other sizes, starts a new run. Merged, the two
    headers and two rank 0 lines read as a build without MPI and the good run's rows were thrown away."""
    text = (FIXTURES / "allreduce-hung-after-header-then-sendrecv.txt").read_text()
    if not command_line:
        text = re.sub(r"(?m)^\$ mpirun .*sendrecv_perf.*\n", "", text)
    hung, rerun = parse_nccl_output(text, "hung-then-rerun.txt")
    assert (hung.collective, hung.status, hung.rows) == ("all_reduce", "incomplete", [])
    assert rerun.collective == ("sendrecv" if command_line else "all_reduce")
    assert (rerun.status, rerun.nranks, rerun.avg_busbw_gbps) == ("ok", 2, 45.515)
    assert [r.oop_busbw_gbps for r in rerun.rows] == [44.74, 46.28]
    assert not any(RAN_ALONE in p for p in hung.problems + rerun.problems)


def test_json_v2_complete():
    [run] = runs_of("allreduce-json-v2-2node.json")
    assert (run.format, run.collective, run.collective_source) == ("json", "all_reduce", "header")
    assert [r.size_bytes for r in run.rows] == [1073741824 * 2 ** i for i in range(4)]
    assert [r.root for r in run.rows] == [-1] * 4  # nccl-tests writes root as "%6i" text
    oop = [42.113, 44.870, 46.015, 46.802]
    ip = [42.207, 44.902, 45.990, 46.779]
    assert [r.oop_busbw_gbps for r in run.rows] == oop and [r.ip_busbw_gbps for r in run.rows] == ip
    assert run.avg_busbw_gbps == pytest.approx(statistics.fmean(oop + ip))
    assert (run.status, run.problems, run.complete, run.out_of_bounds) == ("ok", [], True, 0)
    assert (run.nranks, run.hosts, run.nccl_version) == (8, ["hx-17", "hx-18"], "2.27.3")
    assert busbw_fraction_of_line_rate(run, 400).largest_message == pytest.approx(46.802 * 8 / 400)


def test_json_truncated_keeps_complete_results():
    [run] = runs_of("alltoall-json-truncated.json")
    assert run.collective == "alltoall" and [r.size_bytes for r in run.rows] == [16777216, 33554432]
    assert (run.avg_busbw_source, run.complete) == ("computed", False)
    assert run.avg_busbw_gbps == pytest.approx(statistics.fmean([20.5, 20.4, 21.5, 21.4]))
    assert run.status == "incomplete" and INCOMPLETE in run.problems


def test_json_v3_validation_off_nan_and_missing_out_of_place():
    [run] = runs_of("broadcast-json-v3-validation-off-nan.json")
    assert (run.collective, run.status) == ("broadcast", "not-validated")
    assert run.rows[0].out_of_place is None and run.rows[0].ip_busbw_gbps == 47.45
    assert run.rows[1].oop_busbw_gbps is None  # "nan"
    assert (run.avg_busbw_gbps, run.max_busbw_gbps) == (49.775, 52.10)


@pytest.mark.parametrize("name,first", [
    ("not-nccl-iperf3.txt", "Connecting to host 192.0.2.40, port 5201"),
    ("not-nccl-json.json", '{"benchmark": "ib_write_bw"'),
    ("nccl-log-only.txt", "node-x:1:1 [0] NCCL INFO Bootstrap"),
    ("empty.txt", None),
])
def test_not_nccl_output_is_rt301_naming_file_and_first_line(name, first):
    with pytest.raises(RoceTuneError) as exc:
        runs_of(name)
    [f] = exc.value.findings
    assert f.rule == "RT301" and f.severity.value == "error"
    assert f.location.file.endswith(name) and name in f.message
    if first is None:
        assert "empty" in f.message
    else:
        assert first in f.message


def test_missing_file_is_rt301():
    with pytest.raises(RoceTuneError) as exc:
        parse_nccl_file(str(FIXTURES / "no-such-file.txt"))
    assert exc.value.findings[0].rule == "RT301"


def test_whitespace_only_text():
    with pytest.raises(RoceTuneError, match="empty"):
        parse_nccl_output(" \n\n\t\n", "blank.log")


ROW_RE = re.compile(r"^\s+\d+\s+\d+\s+bfloat16\s")


def test_text_truncated_at_every_point_keeps_complete_rows():
    """Cut anywhere: a clean error before any nccl-tests line, else exactly the whole rows so far."""
    text = (FIXTURES / "allreduce-current-4node-200g-info-inside.txt").read_text()
    ends, pos = [], 0
    for line in text.splitlines(keepends=True):
        if ROW_RE.match(line):
            ends.append(pos + len(line.rstrip("\n")))
        pos += len(line)
    for cut in range(0, len(text) + 1, 7):
        try:
            [run] = parse_nccl_output(text[:cut], "cut.txt")
        except RoceTuneError as exc:
            assert exc.findings[0].rule == "RT301"
            assert cut < text.index("# nccl-tests version") + 40
            continue
        assert len(run.rows) == sum(1 for e in ends if e <= cut), cut
        # a cut before the summary is never a pass: the run reads incomplete (and exits 1 in nccl-report)
        assert run.status == ("ok" if run.complete else "incomplete"), cut
        assert run.complete or "# Avg bus bandwidth" not in text[:cut], cut
        assert not run.complete or "# Out of bounds values" in text[:cut], cut
        if not run.rows:
            assert NO_ROWS in run.problems


def test_json_truncated_at_every_point():
    text = (FIXTURES / "allreduce-json-v2-2node.json").read_text()
    for cut in range(1, len(text) + 1, 11):
        try:
            runs = parse_nccl_output(text[:cut], "cut.json")
        except RoceTuneError as exc:
            assert exc.findings[0].rule == "RT301"
            assert '"results"' not in text[:cut]
            continue
        complete = text[:cut].count('"experiment_name":""}')
        assert [len(r.rows) for r in runs] == [complete], cut


@pytest.mark.parametrize("redop,root,size,count,dtype,nranks,expected", [
    ("sum", -1, 4096, 1024, "float", None, "all_reduce"),
    ("avg", None, 4096, 512, "double", 8, "all_reduce"),
    ("sum", -1, 4096, 128, "float", None, "reduce_scatter"),
    ("max", 0, 4096, 1024, "float", None, "reduce"),
    ("none", 0, 4096, 2048, "half", None, "broadcast"),
    ("none", -1, 4096, 128, "float", None, None),  # all_gather or alltoall: not decidable
    ("sum", -1, 4096, 1024, "float", 1, None),  # one rank: every ratio is 1
    ("sum", -1, 4096, 1024, "mystery", None, None),
])
def test_infer_collective(redop, root, size, count, dtype, nranks, expected):
    assert infer_collective(redop, root, size, count, dtype, nranks) == expected


@pytest.mark.parametrize("code,version", [(22703, "2.27.3"), (21805, "2.18.5"), (2708, "2.7.8"),
                                          (2406, "2.4.6")])
def test_nccl_version_code(code, version):
    assert nccl_version_from_code(code) == version


def test_line_rate_conversion_is_bytes_to_bits():
    assert gbytes_per_s_to_line_rate_fraction(50.0, 400) == pytest.approx(1.0)
    assert gbytes_per_s_to_line_rate_fraction(12.5, 100) == pytest.approx(1.0)
    with pytest.raises(ValueError):
        gbytes_per_s_to_line_rate_fraction(1.0, 0)


HEADER = ("#       size         count      type   redop    root     time   algbw   busbw #wrong"
          "     time   algbw   busbw #wrong\n")


def test_header_beats_command_line_for_the_name():
    text = ("$ ./build/alltoall_perf -b 8 -e 8\n# Collective test starting: all_gather_perf\n" + HEADER
            + "        1024           64     float    none      -1    10.00    0.10    0.09      0    "
            "10.00    0.10    0.09      0\n")
    [run] = parse_nccl_output(text)
    assert (run.collective, run.collective_source) == ("all_gather", "header")


def test_in_place_only_row_and_all_types_in_one_table():
    text = (HEADER
            + "        4096         1024     float     sum      -1                                     "
            "9.00    0.46    0.80      0\n"
            + "        4096         2048      half     sum      -1     9.10    0.45    0.79      0     "
            "9.20    0.45    0.78      0\n"
            + "# Out of bounds values : 0 OK\n# Avg bus bandwidth    : 0.79 \n")
    [run] = parse_nccl_output(text)
    assert run.rows[0].out_of_place is None and run.rows[0].ip_busbw_gbps == 0.80
    assert [r.type for r in run.rows] == ["float", "half"] and run.status == "ok"


def test_rows_without_any_header_use_the_current_layout():
    text = ("   1073741824     268435456     float     sum      -1    71024   15.12   15.12      0    "
            "70967   15.13   15.13      0\n")
    [run] = parse_nccl_output(text)
    assert run.rows[0].ip_busbw_gbps == 15.13 and run.collective == "all_reduce"
    assert any("no table header found" in p for p in run.problems)


def test_old_time_in_milliseconds_is_converted():
    text = ("#  size  count  type  redop  time  algbw  busbw  error  time  algbw  busbw  error\n"
            "#   (B)  (elements)  (ms)  (GB/s)  (GB/s)  (ms)  (GB/s)  (GB/s)\n"
            "  1048576  262144  float  sum  0.215  4.88  9.14  1e-07  0.216  4.85  9.10  1e-07\n")
    [run] = parse_nccl_output(text)
    assert run.rows[0].oop_time_us == pytest.approx(215.0)


def test_models_are_frozen():
    [run] = runs_of("alltoall-empty-redop-root-printed.txt")
    with pytest.raises(ValidationError):
        run.status = "ok"  # type: ignore[misc]
    with pytest.raises(ValidationError):
        run.rows[0].size_bytes = 1  # type: ignore[misc]


def _single_node_table(host: str, busbw: float) -> list[str]:
    """``all_reduce_perf -g 2`` on ``host`` alone (current layout), both sizes at ``busbw`` GB/s."""
    return ["# nThread 1 nGpus 2 minBytes 1048576 maxBytes 2097152 step: 2(factor) warmup iters: 5 iters: 20 "
            "agg iters: 1 validation: 1 graph: 0",
            "#",
            "# Using devices",
            f"#  Rank  0 Group  0 Pid   4242 on {host:>10} device  0 [0x18] NVIDIA H100 80GB HBM3",
            f"#  Rank  1 Group  0 Pid   4242 on {host:>10} device  1 [0x2a] NVIDIA H100 80GB HBM3",
            "#",
            "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   "
            "algbw   busbw #wrong",
            "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  "
            "(GB/s)  (GB/s)",
            f"     1048576        262144     float     sum      -1    20.00   52.43   {busbw:.2f}      0    "
            f"20.00   52.43   {busbw:.2f}      0",
            f"     2097152        524288     float     sum      -1    40.00   52.43   {busbw:.2f}      0    "
            f"40.00   52.43   {busbw:.2f}      0",
            "# Out of bounds values : 0 OK",
            f"# Avg bus bandwidth    : {busbw:.2f}",
            "#"]


def test_pdsh_output_of_two_hosts_is_read_per_host() -> None:
    """``pdsh -w gpu01,gpu02 all_reduce_perf -g 2`` prefixes every line with ``host: `` and interleaves the
    hosts' lines: it read as one FAILED run of unknown collective with "no result rows" (pdsh(1): "output
    from each remote command is prefixed with the hostname"; clush prints the same ``host: `` prefix)."""
    a, b = _single_node_table("gpu01", 26.21), _single_node_table("gpu02", 13.10)
    lines = ["user@head:~$ pdsh -w gpu01,gpu02 /opt/nccl-tests/build/all_reduce_perf -b 1M -e 2M -g 2"]
    for la, lb in zip(a, b):  # the hosts' lines interleave as they arrive
        lines += [f"gpu01: {la}", f"gpu02: {lb}"]
    runs = parse_nccl_output("\n".join(lines) + "\n", source="pdsh.log")
    assert [(r.hosts, r.status, r.collective, len(r.rows), r.avg_busbw_gbps) for r in runs] == [
        (["gpu01"], "ok", "all_reduce", 2, 26.21), (["gpu02"], "ok", "all_reduce", 2, 13.10)]
    # both runs start at the pdsh command line; without it, at each host's first line of the file
    assert [r.line for r in runs] == [1, 1]
    runs = parse_nccl_output("\n".join(lines[1:]) + "\n", source="pdsh.log")
    assert [(r.hosts, r.line) for r in runs] == [(["gpu01"], 1), (["gpu02"], 2)]


def test_one_host_pdsh_output_is_read_as_its_run() -> None:
    text = "\n".join(f"gpu07: {ln}" for ln in _single_node_table("gpu07", 40.5)) + "\n"
    [run] = parse_nccl_output(text, source="pdsh.log")
    assert (run.status, run.hosts, run.avg_busbw_gbps, len(run.rows)) == ("ok", ["gpu07"], 40.5, 2)


# --- the first nccl-tests layout (2017-2019): "bytes N type op [root] ... res", time in ms -----------------


def test_bytes_n_layout_time_in_ms_and_ranks_without_pid():
    """nccl-tests before the ``size count type redop`` header printed ``# bytes N type op time algbw busbw
    res`` with no units line, the time as ``deltaSec * 1.0E3`` (ms), ``res`` = max error, and rank lines
    ``Rank  0 on host device  0`` without a pid. The header was not recognised: the columns were assumed
    from the current layout, the ``res`` error read as a ``#wrong`` count and no rank counted."""
    [run] = runs_of("allreduce-bytes-n-layout-ms-rank-no-pid.txt")
    assert (run.collective, run.status, run.problems) == ("all_reduce", "ok", [])
    assert [r.size_bytes for r in run.rows] == [1048576, 2097152, 4194304]
    assert [r.redop for r in run.rows] == ["sum"] * 3 and {r.root for r in run.rows} == {None}
    assert [r.oop_time_us for r in run.rows] == pytest.approx([420.0, 640.0, 1071.0])
    assert [r.ip_busbw_gbps for r in run.rows] == [3.76, 4.95, 5.88]
    assert all(x.max_error == 2e-07 and x.wrong is None for r in run.rows for _, x in r.results())
    assert run.avg_busbw_gbps == 4.855 == pytest.approx(statistics.fmean(busbws(run)))
    assert (run.nranks, run.ndevices, run.hosts) == (4, 4, ["node-a", "node-b"])


def test_bytes_n_layout_out_of_place_only_then_old_cuda_failure():
    """Old broadcast/reduce tables have one (out-of-place) block and a ``root`` column; the old CUDACHECK
    printed ``Cuda failure file:line 'msg'`` (no ``Test`` prefix): the run stopped there and read as merely
    incomplete."""
    [run] = runs_of("broadcast-bytes-n-layout-oop-only-cuda-failure.txt")
    assert (run.collective, run.status) == ("broadcast", "failed")
    assert run.problems[0] == ("nccl-tests reported a failure: Cuda failure common.cu:412 "
                               "'an illegal memory access was encountered'")
    assert [(r.root, r.oop_busbw_gbps, r.in_place) for r in run.rows] == [(0, 6.04, None), (0, 6.19, None)]
    assert [r.oop_time_us for r in run.rows] == pytest.approx([1390.0, 2710.0])
    assert (run.nranks, run.hosts) == (4, [])  # "Rank 0 uses device 0": no host printed


@pytest.mark.parametrize("line", [
    "NCCL failure all_reduce.cu:95 'unhandled cuda error'",
    "Failed, NCCL error common.cu:721 'unhandled system error'",
    "Failed: Cuda error common.cu:530 'out of memory'",
    "node-a: Test timeout (60s) common.cu:314",  # -T 60: the collective did not complete in time
])
def test_old_check_macro_failure_lines_fail_the_run(line):
    """NCCLCHECK/CUDACHECK of nccl-tests before 2.13 printed these without ``Test`` and the host name;
    ``-T`` prints ``Test timeout`` when a collective does not complete in time."""
    text = (FIXTURES / "allreduce-bytes-n-layout-ms-rank-no-pid.txt").read_text()
    text = text[:text.index(" Out of bounds")] + line + "\n"
    [run] = parse_nccl_output(text, "old-failure.txt")
    assert run.status == "failed" and run.problems[0] == f"nccl-tests reported a failure: {line}"
    assert len(run.rows) == 3


def test_rank_lines_without_pid_are_not_one_process():
    """No pid printed: the launcher's -np cannot be compared with the processes listed (no "ran alone")."""
    text = (FIXTURES / "allreduce-bytes-n-layout-ms-rank-no-pid.txt").read_text().replace("node-b", "node-a")
    [run] = parse_nccl_output(text, "one-host.txt")
    assert (run.status, run.problems, run.hosts, run.nranks) == ("ok", [], ["node-a"], 4)


# --- line prefixes of launchers and log collectors ------------------------------------------------------


@pytest.mark.parametrize("prefix", [
    "[pod/nccl-launcher-x7k2p/mpi-launcher] ",  # kubectl logs --prefix
    "[pod/nccl-launcher-x7k2p/mpi-launcher] 2025-03-01T10:00:00.123456789Z ",  # --prefix --timestamps
    "        [1,0]<stdout>:",  # mpirun --tag-output quoted indented in a CI log
    "Mon Mar  3 13:51:36 2025[1,0]<stdout>:",  # mpirun --timestamp-output --tag-output
    "[0] ",  # mpiexec (MPICH/Intel MPI) -l / -prepend-rank
    "nccl-worker-0  | ",  # docker compose logs
    "[2025-03-01 10:00:00.123] ",  # a logging wrapper's timestamp
    "2025-03-01 10:00:00,123 ",
    "Mar 01 10:00:00 ",  # moreutils ts
])
def test_launcher_and_log_collector_prefixes(prefix):
    """Every line prefixed: the header and rows were not recognised and the run read as FAILED with "no
    result rows" (only the summary lines, found anywhere in a line, were read)."""
    text = (FIXTURES / "allreduce-current-4node-200g-info-inside.txt").read_text()
    [plain] = parse_nccl_output(text, "plain.txt")
    [run] = parse_nccl_output("".join(prefix + ln for ln in text.splitlines(keepends=True)), "prefixed.txt")
    assert (run.status, run.collective, run.nranks, run.hosts) == ("ok", "all_reduce", 8, plain.hosts)
    assert run.rows == plain.rows and run.avg_busbw_gbps == plain.avg_busbw_gbps == 20.048
    assert run.problems == plain.problems


# --- a process killed by a signal, a job cancelled --------------------------------------------------------


@pytest.mark.parametrize("line", [
    "mpirun noticed that process rank 1 with PID 0 on node gpu-r1-02 exited on signal 7 (Bus error).",
    "srun: error: gpu-r1-02: task 3: Bus error (core dumped)",
    "srun: error: gpu-r1-02: task 3: Segmentation fault",
    "[gpu-r1-02:40103:0:40103] Caught signal 11 (Segmentation fault: address not mapped to object at 0x8)",
    "slurmstepd: error: *** STEP 4242.0 ON gpu-r1-01 CANCELLED AT 2025-03-01T10:30:00 DUE TO TIME LIMIT ***",
    "Bus error (core dumped)",
    "command terminated with exit code 137",  # kubectl exec: the container's process was killed (OOM)
])
def test_a_process_killed_by_a_signal_or_a_cancelled_job_fails_the_run(line):
    """The table stops and the launcher or shell says why: the run read as merely incomplete (a cut log)."""
    text = (FIXTURES / "allreduce-current-4node-200g-info-inside.txt").read_text()
    text = text[:text.index("    134217728")] + line + "\n"
    [run] = parse_nccl_output(text, "killed.txt")
    assert run.status == "failed" and len(run.rows) == 3
    assert run.problems[0] == f"the launcher reported a failure: {line}"


def test_utf16_capture_from_windows_powershell(tmp_path):
    """``kubectl logs launcher > out.txt`` in Windows PowerShell writes UTF-16LE with a byte order mark and
    CRLF: read as UTF-8 it was "not nccl-tests output" (every other byte NUL)."""
    text = (FIXTURES / "allreduce-current-4node-200g-info-inside.txt").read_text()
    path = tmp_path / "out.txt"
    path.write_bytes(text.replace("\n", "\r\n").encode("utf-16"))
    [run] = parse_nccl_file(str(path))
    [plain] = runs_of("allreduce-current-4node-200g-info-inside.txt")
    assert (run.status, run.rows, run.avg_busbw_gbps) == ("ok", plain.rows, 20.048)


@pytest.mark.parametrize("first_line,command", [("# nccl-tests version", False),
                                                ("# Collective test starting", False), ("# nThread", False),
                                                ("# nThread", True)])
def test_a_run_hung_in_nccl_init_then_a_rerun_are_two_runs(first_line, command):
    """``tee -a``: a run that hung in ncclCommInitRank (killed after its rank list) and the rerun. A run's
    first lines after a rank list open the next run; merged, the two rank lists read as a build without MPI
    (rank 0 listed twice) and the good rerun was FAILED with its rows thrown away. Also when the rerun's
    output starts at a later line (nccl-tests before 2.20 prints no version line) or with a command line."""
    text = (FIXTURES / "allreduce-hung-in-init-then-rerun.txt").read_text()
    lines = text.splitlines(keepends=True)
    rerun = next(i for i, ln in enumerate(lines) if i > 3 and ln.startswith(first_line))
    first = next(i for i, ln in enumerate(lines) if ln.startswith(first_line))
    cmd = ["$ mpirun -np 2 -H gpu-07,gpu-08 ./build/all_reduce_perf -b 256M -e 1G -f 2\n"] if command else []
    text = "".join(lines[first:10] + cmd + lines[rerun:])  # both runs start at first_line
    hung, good = parse_nccl_output(text, "tee.log")
    assert (hung.status, hung.rows, hung.nranks) == ("incomplete", [], 2)
    assert (good.status, good.problems, good.nranks, good.avg_busbw_gbps) == ("ok", [], 2, 46.68)
    assert [r.oop_busbw_gbps for r in good.rows] == [46.24, 46.82, 46.97]
    assert good.avg_busbw_gbps == pytest.approx(statistics.fmean(busbws(good)), abs=5e-3)


def _table(rows: list[str]) -> str:
    """A current-layout run of 4 ranks (one process, -g 4) with ``rows``, no command line and no name."""
    ranks = "".join(f"#  Rank  {i} Group  0 Pid   7070 on     dgx-03 device  {i} [0x1{i}] NVIDIA H100\n"
                    for i in range(4))
    return ("# nThread 1 nGpus 4 minBytes 1048576 maxBytes 2097152 step: 2(factor) warmup iters: 5 iters: 20 "
            "agg iters: 1 validation: 1 graph: 0\n#\n# Using devices\n" + ranks + "#\n" + HEADER
            + "".join(r + "\n" for r in rows)
            + "# Out of bounds values : 0 OK\n# Avg bus bandwidth    : 1.5 \n")


@pytest.mark.parametrize("redop,ratio,expected", [("sum", 1, "sendrecv"), ("none", 4, "alltoall")])
def test_in_place_not_checked_names_sendrecv_and_alltoall(redop, ratio, expected):
    """nccl-tests checks no in-place sendrecv or alltoall result (``N/A``) while it checks out-of-place:
    sendrecv rows (``sum -1``, size = count × 4) were named all_reduce, alltoall rows (``none -1``, size =
    nranks × count × 4) were left unknown."""
    rows = [f"     {size:>7}       {size // 4 // ratio:>6}     float    {redop:>4}      -1    20.00    1.00"
            "    1.00      0    20.00    1.00    1.00    N/A" for size in (1048576, 2097152)]
    [run] = parse_nccl_output(_table(rows), "unnamed.txt")
    assert (run.collective, run.collective_source, run.status) == (expected, "inferred", "ok")
    # with the in-place result checked, the same rows are all_reduce / undecidable (all_gather or alltoall)
    [run] = parse_nccl_output(_table([r[:-3] + "  0" for r in rows]), "unnamed.txt")
    assert run.collective == ("all_reduce" if redop == "sum" else "unknown")
