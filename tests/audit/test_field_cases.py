"""Every field capture in ../shared/field-cases is read by `audit --from` with the right values and findings.

Each capture is copied into a temp dir under a device file name (``<device>.txt``) and audited alone, against
the policy defaults (lossless priority 3, queue 3). Skips when the field cases are absent (path overridable
with ``ROCE_TUNE_REFERENCES``).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from roce_tune.audit import audit_dir
from tests.audit.conftest import ev, field_cases_dir, rules


def _audit(tmp_path: Path, kind: str, name: str, device: str):  # type: ignore[no-untyped-def]
    src = field_cases_dir() / kind / name
    if not src.is_file():
        pytest.skip(f"field case {src} not present (set ROCE_TUNE_REFERENCES to the shared/ folder)")
    shutil.copy(src, tmp_path / f"{device}.txt")
    return audit_dir(tmp_path)


def test_ethtool_prio_and_hw_counters_2to1_roce_on_priority_0(tmp_path: Path) -> None:
    r = _audit(tmp_path, "counters", "mlx5-ethtool-prio-and-hw-counters-2to1.txt", "gpu01")
    nic = r.data.hosts["gpu01"].nics["-"]
    assert (nic.ethtool["rx_prio0_packets"].value == 420006709813
            and nic.ethtool["tx_prio3_packets"].value == 0)
    hw = r.data.hosts["gpu01"].rdma["mlx5_0"].hw
    assert hw["local_ack_timeout_err"].value == 2705 and hw["np_cnp_sent"].value == 1333
    found = rules(r)
    assert set(found) == {"RT410", "RT430"}
    assert found["RT410"][0].severity.value == "error" and "gpu01.txt:5" in ev(found["RT410"][0])
    # no ECN mark under loss; PFC counters were not captured, so this stays a warning
    assert found["RT430"][0].severity.value == "warning" and "gpu01.txt:39" in ev(found["RT430"][0])
    assert "RT425" not in found  # 2,705 timeouts in 420 G packets is far below 1 per million
    assert "RT432" in {s.rule for s in r.not_checked}  # CNPs sent, senders not captured: not "0 handled"
    assert not r.data.unparsed


def test_ethtool_delta_one_direction(tmp_path: Path) -> None:
    r = _audit(tmp_path, "counters", "mlx5-ethtool-prio-delta-dscp-one-direction.txt", "gpu02")
    nic = r.data.hosts["gpu02"].nics["ens8np0"]
    assert nic.delta("tx_prio3_packets") == (3964146, True) and nic.delta("rx_prio0_packets") == (4015359,
                                                                                                  True)
    found = rules(r)
    assert set(found) == {"RT411"}
    f = found["RT411"][0]
    assert (f.device, f.port) == ("gpu02", "ens8np0") and ev(f) == ["gpu02.txt:3", "gpu02.txt:5"]
    assert not r.data.unparsed


def test_hw_counters_nccl_hang(tmp_path: Path) -> None:
    r = _audit(tmp_path, "counters", "mlx5-hw-counters-nccl-hang-high-out-of-sequence.txt", "gpu03")
    hw = r.data.hosts["gpu03"].rdma["mlx5_0"].hw
    assert hw["out_of_sequence"].value == 6140236 and hw["np_ecn_marked_roce_packets"].value == 11293938
    found = rules(r)
    assert set(found) == {"RT425"}
    f = found["RT425"][0]
    assert f.severity.value == "error" and "per million" not in f.message and "no rate" in f.message
    assert ev(f) == ["gpu03.txt:6", "gpu03.txt:10", "gpu03.txt:11"]
    skipped = {s.rule for s in r.not_checked}
    assert {"RT432", "RT401"} <= skipped  # rp_cnp_handled and the GID table were not captured


def test_cumulus_nv_show_qos_roce_is_clean(tmp_path: Path) -> None:
    r = _audit(tmp_path, "counters", "cumulus-nv-show-qos-roce.txt", "leaf2")
    sw = r.data.switches["leaf2"]
    assert sw.platform == "cumulus"
    assert sw.roce["pfc-priority"].value == "3" and sw.roce["enabled-tc"].value == "0,3"
    assert sw.roce["min-threshold"].value == "146.48 KB" and sw.roce["congestion-mode"].value == "ECN"
    assert sw.sp_to_tc[3].value == 3 and sw.sp_to_tc[6].value == 6
    assert r.findings == [] and not r.data.unparsed


def test_sonic_pfcwd_flapping_and_pfc_tx(tmp_path: Path) -> None:
    r = _audit(tmp_path, "counters", "sonic-show-pfcwd-stats-and-pfc-tx-counters.txt", "leaf1")
    sw = r.data.switches["leaf1"]
    assert sw.ports["Ethernet6"]["pfc_tx_prio3"].value == 15437
    assert str(sw.ports["Ethernet6"]["pfc_tx_prio3"].ev) == "leaf1.txt:13"
    assert sw.ports["Ethernet4"]["q3_wd_rx_drop"].value == 371184
    found = rules(r)
    assert set(found) == {"RT423"}
    assert [(f.port, ev(f)) for f in found["RT423"]] == [("Ethernet4", ["leaf1.txt:5"]),
                                                         ("Ethernet6", ["leaf1.txt:6"])]
    assert "flapping" in found["RT423"][0].message


def test_sonic_queue_counters_lossy_queue_dropping(tmp_path: Path) -> None:
    r = _audit(tmp_path, "counters", "sonic-show-queue-counters-ethernet196.txt", "spine1")
    sw = r.data.switches["spine1"]
    assert sw.ports["Ethernet196"]["q1_drop_pkts"].value == 6841131615
    assert "q8_tx_pkts" not in sw.ports["Ethernet196"]  # multicast rows are not unicast queues
    found = rules(r)
    assert set(found) == {"RT412"}
    assert [(f.port, ev(f)) for f in found["RT412"]] == [("Ethernet196", ["spine1.txt:6"])]
    assert "queue 1" in found["RT412"][0].message  # queue 4 carries traffic but drops nothing: no finding


NCCL = {
    "allreduce-roce-h100-2node-400g.txt": (set(), "ok"),
    "allgather-old-layout-oob-failed.txt": ({"RT470"}, "failed"),
    "allreduce-and-alltoall-8node-error-column.txt": (set(), "ok"),
    "alltoall-1gpu-inplace-na.txt": (set(), None),
    "reducescatter-zero-size-rows-partial.txt": ({"RT471"}, None),
    "header-nccl-tests-2.20-partial.txt": ({"RT471"}, None),
    "allreduce-duplicated-header-no-mpi-partial.txt": ({"RT470"}, "failed"),
    "allreduce-old-layout-float-error-partial.txt": ({"RT471"}, None),
}


@pytest.mark.parametrize("name", sorted(NCCL))
def test_nccl_logs(tmp_path: Path, name: str) -> None:
    want, status = NCCL[name]
    r = _audit(tmp_path, "nccl", name, "node-a")
    runs = r.data.hosts["node-a"].runs
    assert runs
    if status:
        assert runs[0][0].status == status
    assert set(rules(r)) == want
    assert not r.data.unparsed


def test_nccl_info_lines_read(tmp_path: Path) -> None:
    r = _audit(tmp_path, "nccl", "allreduce-roce-h100-2node-400g.txt", "node-a")
    h = r.data.hosts["node-a"]
    assert h.nccl_info["version"].value == "2.26.2"
    assert h.nccl_setting("NCCL_IB_HCA").value == "mlx5_5"  # type: ignore[union-attr]
    assert h.nccl_setting("NCCL_IB_GID_INDEX").value == "3"  # type: ignore[union-attr]
    assert [v.value for v in h.nccl_used] == ["mlx5_5:1/RoCE"]
    assert str(h.nccl_info["version"].ev) == "node-a.txt:10"
    # no line rate known: not a fixed guess
    assert "RT472" in {s.rule for s in r.not_checked}
