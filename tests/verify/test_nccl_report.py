"""``nccl_report``: text and JSON output, line-rate fractions, exit codes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from roce_tune.findings import RoceTuneError
from roce_tune.verify.nccl_parser import RAN_ALONE
from roce_tune.verify.nccl_report import nccl_report

FIXTURES = Path(__file__).parent / "fixtures"
OK_FILE = str(FIXTURES / "allreduce-current-4node-200g-info-inside.txt")
FAILED_FILE = str(FIXTURES / "two-runs-srun-second-failed.txt")


def test_json_fields_and_units():
    out, code = nccl_report([OK_FILE], line_rate="200G", fmt="json")
    doc = json.loads(out)
    assert code == 0 and doc["ok"] is True and doc["line_rate_gbps"] == 200
    assert "GB/s" in doc["units"]["busbw_gbytes_per_s"] and "bytes" in doc["units"]["busbw_gbytes_per_s"]
    assert "Gb/s" in doc["units"]["line_rate_gbps"]
    [run] = doc["runs"]
    assert {"collective", "rows", "avg_busbw_gbytes_per_s", "max_busbw_gbytes_per_s", "status", "problems",
            "source", "line_rate_fraction"} <= set(run)
    assert (run["collective"], run["status"], run["avg_busbw_gbytes_per_s"],
            run["max_busbw_gbytes_per_s"]) == ("all_reduce", "ok", 20.048, 21.02)
    assert run["source"] == OK_FILE
    row = run["rows"][0]
    assert set(row) == {"size_bytes", "count", "type", "redop", "root", "out_of_place", "in_place"}
    assert (row["size_bytes"], row["count"], row["type"], row["redop"], row["root"]) == (
        16777216, 8388608, "bfloat16", "sum", -1)
    assert row["out_of_place"] == {"time_us": 1594.79, "algbw_gbytes_per_s": 10.52,
                                   "busbw_gbytes_per_s": 18.41, "wrong": 0, "max_error": None}
    frac = run["line_rate_fraction"]
    assert frac["line_rate_gbps"] == 200 and frac["largest_message_size_bytes"] == 268435456
    assert frac["largest_message"] == pytest.approx(21.02 * 8 / 200, abs=1e-4)
    assert frac["average"] == pytest.approx(20.048 * 8 / 200, abs=1e-4)


def test_json_without_line_rate_has_no_fraction():
    doc = json.loads(nccl_report([OK_FILE], None, "json")[0])
    assert "line_rate_fraction" not in doc["runs"][0] and doc["line_rate_gbps"] is None


def test_text_uses_a_table_and_shows_fraction(field_case):
    out, code = nccl_report([str(field_case("allreduce-roce-h100-2node-400g.txt"))], "400G", "text")
    assert code == 0
    assert "oop busbw GB/s" in out and "26843545600" in out
    assert "avg busbw 15.0418 GB/s" in out
    assert "29.9%" in out and "30.1%" in out  # 14.97 and 15.0418 GB/s of 50 GB/s
    assert "\x1b[" not in out  # no colour codes in captured output


def test_old_layout_error_column_is_labelled_error_not_wrong(field_case):
    # old nccl-tests print the max relative error per placement, not a count of wrong elements
    old, _ = nccl_report([str(field_case("allreduce-old-layout-float-error-partial.txt"))], None, "text")
    assert "oop error" in old and "oop #wrong" not in old
    new, _ = nccl_report([str(field_case("allreduce-roce-h100-2node-400g.txt"))], None, "text")
    assert "oop #wrong" in new and "oop error" not in new


def test_failed_run_gives_exit_1():
    out, code = nccl_report([OK_FILE, FAILED_FILE], None, "text")
    assert code == 1
    assert "validation failed: Out of bounds values : 12" in out
    assert out.rstrip().endswith("3 runs: 2 ok, 1 failed  (exit 1)")


def test_not_validated_only_is_exit_0():
    out, code = nccl_report([str(FIXTURES / "sendrecv-validation-off-c0.txt")], None, "json")
    assert code == 0 and json.loads(out)["runs"][0]["status"] == "not-validated"


@pytest.mark.parametrize("bad", ["not-nccl-iperf3.txt", "empty.txt", "missing.txt"])
def test_unusable_file_gives_exit_1_and_rt301(bad):
    out, code = nccl_report([OK_FILE, str(FIXTURES / bad)], "200G", "json")
    doc = json.loads(out)
    assert code == 1 and doc["ok"] is False
    assert len(doc["runs"]) == 1
    [err] = doc["errors"]
    assert err["rule"] == "RT301" and err["file"].endswith(bad)


def test_ran_alone_has_no_bandwidth_figure():
    out, code = nccl_report([str(FIXTURES / "allreduce-no-mpi-interleaved.txt")], "100G", "json")
    [run] = json.loads(out)["runs"]
    assert code == 1 and run["problems"][0] == RAN_ALONE
    assert run["avg_busbw_gbytes_per_s"] is None and run["max_busbw_gbytes_per_s"] is None
    assert run["rows"] == []
    assert run["line_rate_fraction"]["average"] is None


def test_single_host_note():
    out, _ = nccl_report([str(FIXTURES / "allgather-oldest-layout-tag-output.txt")], "100G", "text")
    assert "all ranks on one host" in out


def test_bad_line_rate_and_format():
    with pytest.raises(RoceTuneError) as exc:
        nccl_report([OK_FILE], "fast", "text")
    assert exc.value.findings[0].rule == "RT300"
    with pytest.raises(ValueError):
        nccl_report([OK_FILE], None, "yaml")  # type: ignore[arg-type]


def test_no_files_is_exit_1():
    out, code = nccl_report([], None, "json")
    assert code == 1 and json.loads(out)["errors"]


def test_a_log_killed_before_its_summary_is_incomplete_not_ok(tmp_path: Path) -> None:
    text = Path(OK_FILE).read_text()
    killed = tmp_path / "killed.txt"
    killed.write_text(text[: text.index("# Out of bounds values")])  # the run was killed after its last row
    out, code = nccl_report([str(killed)], None, "text")
    assert code == 1 and "INCOMPLETE" in out and " OK" not in out.splitlines()[0]
    assert out.rstrip().endswith("1 runs: 1 incomplete  (exit 1)")
    doc = json.loads(nccl_report([str(killed)], "200G", "json")[0])
    assert (doc["ok"], doc["exit_code"], doc["runs"][0]["status"], doc["runs"][0]["complete"]) == (
        False, 1, "incomplete", False)
    assert doc["runs"][0]["rows"]  # what was measured is still shown
    assert nccl_report([OK_FILE], None, "text")[1] == 0
