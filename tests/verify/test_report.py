"""The verify report's counter section: what was not read shows as not read (None / "not read"), never 0."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

from roce_tune.findings import Severity
from roce_tune.verify.adjust import Iteration
from roce_tune.verify.counters import CounterSnapshot, HostNicCounters, SwitchCounters, delta_snapshot
from roce_tune.verify.measure import Measurement
from roce_tune.verify.nccl import parse_nccl_output
from roce_tune.verify.observation import CheckResult, Diagnosis
from roce_tune.verify.report import STATUS_EXIT, report_dict, report_markdown

NIC = {"netdev": "ens1f0np0", "rdma_device": "mlx5_0"}
ETH = {"tx_prio3_packets": 1_000, "rx_prio3_packets": 1_000, "rx_prio3_pause": 10, "rx_discards_phy": 0}
HW = {"np_ecn_marked_roce_packets": 5, "np_cnp_sent": 5, "rp_cnp_handled": 4, "out_of_sequence": 0}


def _snap(t: float, scale: int, node2_up: bool) -> CounterSnapshot:
    node2 = (HostNicCounters(host="node2", **NIC, ethtool={k: v * scale for k, v in ETH.items()},
                             hw={k: v * scale for k, v in HW.items()}) if node2_up else
             HostNicCounters(host="node2", **NIC, errors=["NetmikoTimeoutException: node2 unreachable"]))
    return CounterSnapshot(taken_at=t, hosts=[
        HostNicCounters(host="node1", **NIC, ethtool={k: v * scale for k, v in ETH.items()},
                        hw={k: v * scale for k, v in HW.items()}), node2],
        switches=[SwitchCounters(switch="lab-leaf1", platform="sonic",
                                 ports={"Ethernet0": {"pfc_tx_prio3": 3 * scale}} if scale == 1 or node2_up
                                 else {"Ethernet0": {"pfc_tx_prio3": 2, "q3_ecn_marked_pkts": 9}})])


def test_a_nic_unreachable_after_the_run_is_not_read_not_zero() -> None:
    delta = delta_snapshot(_snap(10.0, 1, True), _snap(40.0, 3, False))
    m = Measurement(command="node1$ mpirun …", launcher="mpirun", outputs={}, run=None, delta=delta,
                    traffic_time_s=None, busbw_by_size=[], fraction=None, checks=[], wall_s=1.0)
    rep = report_dict(meta={"site": "lab", "source": "lab.yaml", "collective": "all_reduce",
                            "launcher": "mpirun", "hosts": ["node1", "node2"], "line_rate_gbps": 400,
                            "target_ratio": 0.9},
                      iterations=[Iteration(index=0, kind="baseline", measurement=m)], loop=None, facts=[],
                      pairwise=None, lossless=[3], queues=[3], plot=None)
    hosts = rep["iterations"][0]["counters"]["hosts"]
    assert hosts["node1:ens1f0np0"] == {
        "tx_packets_by_priority": {3: 2_000}, "rx_packets_by_priority": {3: 2_000}, "pfc_pause_rx_frames": 20,
        "pause_us": None, "ecn_marked": 10, "cnp_sent": 10, "cnp_handled": 8, "loss_events": 0,
        "discards": 0, "errors": []}
    node2 = hosts["node2:ens1f0np0"]
    assert {k: v for k, v in node2.items() if k != "errors"} == dict.fromkeys(node2.keys() - {"errors"})
    assert node2["errors"] == ["NetmikoTimeoutException: node2 unreachable"]
    md = report_markdown(rep)
    assert ("| node2:ens1f0np0 | not read | not read | not read | not read | not read/not read | not read |"
            in md)
    assert "* node2:ens1f0np0: error: NetmikoTimeoutException: node2 unreachable" in md
    assert "* no delta: lab-leaf1:Ethernet0: 1 counter not read before the run, no delta " \
           "(q3_ecn_marked_pkts)" in md
    assert "went backwards (cleared or wrapped; the value after the run is counted): " \
           "lab-leaf1:Ethernet0:pfc_tx_prio3" in md


def _table_rows(md: str, header_start: str) -> list[list[str]]:
    """The cells of the markdown table whose header row starts with ``header_start`` (GitHub rules: a ``\\|``
    is a pipe inside a cell, every other ``|`` separates cells)."""
    lines = md.splitlines()
    start = next(i for i, ln in enumerate(lines) if ln.startswith(header_start))
    rows = []
    for ln in lines[start:]:
        if not ln.startswith("|"):
            break
        cells = ln.replace("\\|", "\0").strip().strip("|").split("|")
        rows.append([c.strip().replace("\0", "|") for c in cells])
    return rows


def test_iteration_table_rows_have_as_many_cells_as_its_header() -> None:
    """The settings cell holds ECN and AI/HAI; an unescaped ``|`` between them made 8 cells under a 7-column
    header, so a markdown viewer dropped the findings column and shifted busbw under "of line rate"."""
    m = Measurement(command="node1$ mpirun …", launcher="mpirun", outputs={}, run=None, delta=None,
                    traffic_time_s=None, busbw_by_size=[(1 << 30, 30.09)], fraction=0.6018,
                    checks=[], wall_s=1.0)
    settings = {"ecn": {"lab-leaf1:Ethernet0": {"kmin_bytes": 3750000, "kmax_bytes": 7500000,
                                                "pmax_percent": 1.0}},
                "dcqcn": {"node1:ens1f0np0": {"rpg_ai_rate_mbps": 5, "rpg_hai_rate_mbps": 50}}}
    rep = report_dict(meta={"site": "lab", "source": "lab.yaml", "collective": "all_reduce",
                            "launcher": "mpirun", "hosts": ["node1", "node2"], "line_rate_gbps": 400,
                            "target_ratio": 0.9},
                      iterations=[Iteration(index=0, kind="baseline", measurement=m, settings=settings)],
                      loop=None, facts=[], pairwise=None, lossless=[3], queues=[3], plot=None)
    header, rule, row = _table_rows(report_markdown(rep), "| # | kind |")
    assert len(header) == len(rule) == len(row) == 7
    assert row[3] == "3750000/7500000 B @1.0% | 5/50"
    assert row[4:] == ["30.09", "60.2%", "-"]


def test_a_switch_not_read_is_named_not_summed_as_zero() -> None:
    """Switch unreachable for the counter reads: the report said "PFC tx frames 0; … watchdog storms 0"."""
    def snap(t: float) -> CounterSnapshot:
        return CounterSnapshot(taken_at=t, hosts=[HostNicCounters(host="node1", **NIC, ethtool=ETH, hw=HW)],
                               switches=[SwitchCounters(switch="lab-leaf1", platform="sonic", errors=[
                                   "PushError: connect: lab-leaf1 (127.0.0.1:2201): Connection refused"])])
    m = Measurement(command="node1$ mpirun …", launcher="mpirun", outputs={}, run=None,
                    delta=delta_snapshot(snap(1.0), snap(2.0)), traffic_time_s=None, busbw_by_size=[],
                    fraction=None, checks=[], wall_s=1.0)
    rep = report_dict(meta={"site": "lab", "source": "lab.yaml", "collective": "all_reduce",
                            "launcher": "mpirun", "hosts": ["node1"], "line_rate_gbps": 400,
                            "target_ratio": 0.9},
                      iterations=[Iteration(index=0, kind="baseline", measurement=m)], loop=None, facts=[],
                      pairwise=None, lossless=[3], queues=[3], plot=None)
    md = report_markdown(rep)
    assert "Switches: not read (lab-leaf1): no PFC, ECN, drop or watchdog figure." in md
    assert "watchdog storms 0" not in md and "PFC tx frames 0" not in md
    assert "* lab-leaf1: error: PushError: connect: lab-leaf1 (127.0.0.1:2201): Connection refused" in md
    assert rep["iterations"][0]["counters"]["switches"]["not_read"] == ["lab-leaf1"]


def test_a_report_that_cannot_be_written_whole_leaves_the_previous_one(tmp_path: Path) -> None:
    """Disk full while writing (here: RLIMIT_FSIZE in a real child process, EFBIG at 4 KiB): the previous
    verify-report.json/.md were truncated and left half-written; now each file is replaced whole or not at
    all."""
    out = tmp_path / "verify"
    out.mkdir()
    old = {"verify-report.json": '{"status": "pass"}\n', "verify-report.md": "# old report\n"}
    for name, text in old.items():
        (out / name).write_text(text)
    child = textwrap.dedent(f"""
        import resource, signal, sys
        from pathlib import Path
        from roce_tune.verify.report import write_report
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (4096, 4096))
        rep = {{"site": "lab", "findings": [], "iterations": [], "blob": "x" * 20000}}
        try:
            write_report(Path({str(out)!r}), rep, outputs={{}}, commands_log=[])
        except OSError as exc:
            print("OSError", exc.errno)
            sys.exit(0)
        sys.exit(3)
        """)
    res = subprocess.run([sys.executable, "-c", child], capture_output=True, text=True, timeout=60,
                         env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])})
    assert res.returncode == 0 and res.stdout.startswith("OSError"), res.stderr
    assert {name: (out / name).read_text() for name in old} == old
    assert sorted(p.name for p in out.iterdir()) == sorted(old)  # no temporary file left behind


def _final_with(checks: list[CheckResult]) -> dict:  # type: ignore[type-arg]
    """A report whose one run completed at 96 % of line rate (target 90 %) with ``checks``."""
    from tests.verify.test_diagnose import nccl

    run = parse_nccl_output(nccl(48.0))[0]
    m = Measurement(command="node1$ mpirun …", launcher="mpirun", outputs={}, run=run, delta=None,
                    traffic_time_s=2.0, busbw_by_size=[(1 << 30, 48.0)], fraction=0.96, checks=checks,
                    wall_s=1.0)
    return report_dict(meta={"site": "lab", "source": "lab.yaml", "collective": "all_reduce",
                             "launcher": "mpirun", "hosts": ["node1", "node2"], "line_rate_gbps": 400,
                             "target_ratio": 0.9},
                       iterations=[Iteration(index=0, kind="baseline", measurement=m)], loop=None, facts=[],
                       pairwise=None, lossless=[3], queues=[3], plot=None)


def test_a_run_with_checks_not_run_for_want_of_counters_is_incomplete_not_pass() -> None:
    """busbw on target, nothing failed, but the watchdog check had no switch counters: status was "pass"
    (exit 0). It is "incomplete" (exit 2), the unchecked listed in the JSON and on top of the markdown."""
    skipped = CheckResult(check="no PFC watchdog storm", status="skip",
                          note="not checked: PFC watchdog storm counters not read on lab-leaf1")
    rep = _final_with([CheckResult(check="busbw reaches the target", status="pass"), skipped])
    assert rep["status"] == "incomplete" and STATUS_EXIT[rep["status"]] == 2
    assert rep["not_checked"] == ["no PFC watchdog storm: PFC watchdog storm counters not read on lab-leaf1"]
    md = report_markdown(rep)
    assert "* status: **INCOMPLETE**" in md and "* not checked (so not a pass):" in md
    # a skip that is not for want of input (e.g. nothing to judge) keeps the pass; a failure is a fail
    assert _final_with([CheckResult(check="x", status="skip", note="no CNPs")])["status"] == "pass"
    failed = CheckResult(check="y", status="fail", diagnoses=[Diagnosis(
        rule="RT317", name="CNPs not handled", severity=Severity.error, message="m", fix="f")])
    assert _final_with([failed, skipped])["status"] == "fail"


def _keys(doc: object) -> set[str]:
    """Every mapping key at any depth of a JSON document."""
    if isinstance(doc, dict):
        return set(doc) | {k for v in doc.values() for k in _keys(v)}
    if isinstance(doc, list):
        return {k for v in doc for k in _keys(v)}
    return set()


def test_json_reports_name_gigabytes_and_gigabits_apart() -> None:
    """nccl-report and verify JSON held busbw (GB/s, bytes) under ``*_gbps`` next to ``line_rate_gbps``
    (Gb/s, bits): one suffix for two units 8x apart. ``_gbps`` now means Gb/s only; busbw/algbw are
    ``*_gbytes_per_s`` (the diagnoses' evidence key), and each document's units map says so."""
    import json

    from roce_tune.verify.nccl_report import nccl_report

    fixture = Path(__file__).parent / "fixtures" / "allreduce-current-4node-200g-info-inside.txt"
    nccl = json.loads(nccl_report([str(fixture)], line_rate="200G", fmt="json")[0])
    verify = _final_with([CheckResult(check="busbw reaches the target", status="pass")])
    for doc, schema in ((nccl, "roce-tune.nccl-report/2"), (verify, "roce-tune.verify-report/2")):
        keys = _keys(doc)
        assert doc["schema"] == schema
        assert {k for k in keys if k.endswith("_gbps")} <= {"line_rate_gbps"}, sorted(keys)
        assert all("bytes" in doc["units"][k] and "GB/s" in doc["units"][k]
                   for k in doc["units"] if k.endswith("_gbytes_per_s"))
        assert "Gb/s" in doc["units"]["line_rate_gbps"]
    [run] = nccl["runs"]
    assert (run["avg_busbw_gbytes_per_s"], run["max_busbw_gbytes_per_s"]) == (20.048, 21.02)
    assert run["rows"][0]["out_of_place"]["busbw_gbytes_per_s"] == 18.41
    it = verify["iterations"][0]
    assert it["largest_busbw_gbytes_per_s"] == 48.0
    assert it["busbw_by_size"] == [{"size_bytes": 1 << 30, "busbw_gbytes_per_s": 48.0}]
    assert "| 48.0 |" in report_markdown(verify)
