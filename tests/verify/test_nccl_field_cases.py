"""The curated field captures parse to the figures and verdicts a person reads off them.

Expected numbers are read from the captures by eye (the printed ``Avg bus bandwidth`` line, the
busbw column, the ``Out of bounds values`` line), not produced by the parser.
"""

from __future__ import annotations

import statistics

import pytest

from roce_tune.verify.nccl_parser import (
    INCOMPLETE,
    NO_ROWS,
    RAN_ALONE,
    SINGLE_RANK,
    busbw_fraction_of_line_rate,
    parse_nccl_file,
    parse_nccl_output,
)


def test_h100_2node_400g_allreduce(field_case):
    [run] = parse_nccl_file(str(field_case("allreduce-roce-h100-2node-400g.txt")))
    # sum, root -1, size ==
    # 4*count
    assert (run.collective, run.collective_source) == ("all_reduce", "inferred")
    assert run.status == "ok" and run.problems == []
    assert len(run.rows) == 13
    assert run.rows[0].size_bytes == 1073741824 and run.rows[-1].size_bytes == 26843545600
    assert (run.avg_busbw_gbps, run.avg_busbw_source) == (15.0418, "printed")
    assert run.max_busbw_gbps == 15.18
    assert run.out_of_bounds == 0 and run.complete
    assert (run.nranks, run.ndevices, run.hosts) == (2, 2, ["node-a", "node-b"])
    assert run.nccl_version == "2.26.2"
    assert all(r.oop_wrong == 0 and r.ip_wrong == 0 for r in run.rows)
    # far below line rate: 400 Gb/s = 50 GB/s, busbw ~15 GB/s -> ~0.3
    frac = busbw_fraction_of_line_rate(run, 400)
    assert frac.largest_message_size_bytes == 26843545600
    assert frac.largest_message == pytest.approx(14.97 * 8 / 400)  # 0.2994
    assert frac.average == pytest.approx(15.0418 * 8 / 400)  # 0.3008
    assert 0.29 < frac.average < 0.31


def test_h100_computed_average_matches_what_nccl_tests_printed(field_case):
    """Without the Avg line we average both placements of every row, as nccl-tests does."""
    text = field_case("allreduce-roce-h100-2node-400g.txt").read_text()
    [run] = parse_nccl_output(text.replace("# Avg bus bandwidth    : 15.0418", ""), "cut.txt")
    assert run.avg_busbw_source == "computed"
    assert run.avg_busbw_gbps == pytest.approx(15.0418, abs=0.005)  # printed values are rounded to 0.01


def test_allgather_oldest_layout_oob_failed(field_case):
    [run] = parse_nccl_file(str(field_case("allgather-old-layout-oob-failed.txt")))
    assert (run.collective, run.collective_source) == ("all_gather", "command line")
    assert run.status == "failed"
    assert run.problems == ["validation failed: Out of bounds values : 2"]
    assert run.out_of_bounds == 2
    [row] = run.rows
    assert (row.size_bytes, row.count, row.type, row.redop, row.root) == (4294967296, 134217728, "float",
                                                                          None, None)
    assert (row.oop_time_us, row.oop_algbw_gbps, row.oop_busbw_gbps) == (29122.0, 129.05, 129.05)
    assert (row.out_of_place.max_error, row.in_place.max_error) == (1.0, 1.0)
    assert row.oop_wrong is None  # the old column is a max relative error, not a count
    assert (run.avg_busbw_gbps, run.max_busbw_gbps) == (128.942, 129.05)
    assert run.nranks == 8  # all_gather prints count per rank: 4294967296 / (4 B * 134217728)


def test_two_collectives_error_column_empty_redop(field_case):
    runs = parse_nccl_file(str(field_case("allreduce-and-alltoall-8node-error-column.txt")))
    assert [(r.collective, r.collective_source) for r in runs] == [("all_reduce", "label"),
                                                                   ("alltoall", "label")]
    ar, a2a = runs
    assert [r.size_bytes for r in ar.rows] == [268435456, 536870912]
    assert [r.redop for r in ar.rows] == ["sum", "sum"]
    assert ar.rows[0].out_of_place.max_error == 2e-06
    assert (ar.avg_busbw_gbps, ar.max_busbw_gbps, ar.status, ar.problems) == (4.32178, 4.33, "ok", [])
    # alltoall rows have no redop: the row is one token shorter; the values must not shift
    assert [r.redop for r in a2a.rows] == [None, None]
    assert [(r.oop_time_us, r.oop_busbw_gbps, r.ip_time_us) for r in a2a.rows] == [
        (520935.0, 0.51, 519562.0), (1041974.0, 0.51, 1041299.0)]
    assert (a2a.avg_busbw_gbps, a2a.max_busbw_gbps, a2a.status) == (0.507636, 0.51, "ok")
    assert a2a.nranks == 64  # 268435456 / (4 B * 1048576): 8 nodes x 8 GPUs
    assert a2a.problems == [("in-place results show error 1e+00 in 2 of 2 rows, "
                             "but nccl-tests counted 0 out-of-bounds values")]


def test_alltoall_one_gpu_inplace_na_and_prompt_noise(field_case):
    [run] = parse_nccl_file(str(field_case("alltoall-1gpu-inplace-na.txt")))
    assert (run.collective, run.collective_source) == ("alltoall", "command line")
    assert run.status == "ok"
    [row] = run.rows
    assert (row.redop, row.root, row.oop_wrong, row.ip_wrong) == ("none", -1, 0, None)
    assert (row.oop_algbw_gbps, row.ip_algbw_gbps) == (1715.44, 43046.10)
    assert (run.avg_busbw_gbps, run.max_busbw_gbps) == (0.0, 0.0)
    assert run.problems == ["N/A in-place results (1 of 1 rows not validated)", SINGLE_RANK]
    assert (run.nranks, run.hosts) == (1, ["GENOA-01"])
    frac = busbw_fraction_of_line_rate(run, 400)
    assert frac.average is None and frac.largest_message is None  # one rank: nothing crossed a NIC


def test_reducescatter_zero_size_rows(field_case):
    [run] = parse_nccl_file(str(field_case("reducescatter-zero-size-rows-partial.txt")))
    # 128 B = 8 ranks * 4 * 4
    # B
    assert (run.collective, run.collective_source) == ("reduce_scatter", "inferred")
    assert run.nranks == 8
    assert [r.size_bytes for r in run.rows] == [0, 0, 0, 0, 0, 128, 256]
    # the capture ends before the summary: its rows are kept, but it is no pass
    assert run.status == "incomplete" and not run.complete
    assert run.avg_busbw_source == "computed"
    assert run.avg_busbw_gbps == pytest.approx(statistics.fmean([0.00, 0.00, 0.01, 0.01]))
    assert run.max_busbw_gbps == 0.01
    assert run.problems == ["5 rows with size 0 left out of the bandwidth figures", INCOMPLETE]
    assert busbw_fraction_of_line_rate(run, 400).largest_message_size_bytes == 256


def test_header_only_2_20(field_case):
    [run] = parse_nccl_file(str(field_case("header-nccl-tests-2.20-partial.txt")))
    assert (run.collective, run.collective_source) == ("all_reduce", "header")
    assert (run.nccl_tests_version, run.nccl_version) == ("2.20.0", "2.31.2")  # nccl-library=23102
    # killed while printing its preamble: nothing failed, nothing was measured
    assert run.rows == [] and run.status == "incomplete" and run.problems == [NO_ROWS]
    assert run.avg_busbw_gbps is None and run.hosts == ["node-a"]


def test_duplicated_header_without_mpi(field_case):
    [run] = parse_nccl_file(str(field_case("allreduce-duplicated-header-no-mpi-partial.txt")))
    assert run.collective == "all_reduce"
    assert run.status == "failed"
    assert run.problems[0] == RAN_ALONE
    assert "rank 0 listed 2 times" in run.problems[1]
    assert run.avg_busbw_gbps is None and run.max_busbw_gbps is None and run.rows == []
    assert run.hosts == ["node-b", "node-a"]


def test_old_layout_float_error_partial(field_case):
    [run] = parse_nccl_file(str(field_case("allreduce-old-layout-float-error-partial.txt")))
    assert (run.collective, run.collective_source) == ("all_reduce", "inferred")
    assert [r.size_bytes for r in run.rows] == [8, 16, 32]
    assert [(r.out_of_place.max_error, r.in_place.max_error) for r in run.rows] == [
        (1e-07, 0.0), (3e-08, 3e-08), (3e-08, 3e-08)]
    assert [r.oop_time_us for r in run.rows] == [40.17, 32.28, 32.79]
    # all below the 1e-5 float limit of old nccl-tests, but the capture ends before the summary
    assert run.status == "incomplete"
    assert run.problems == [INCOMPLETE]
    assert (run.nranks, run.ndevices, run.hosts) == (4, 4, ["gpu9"])
