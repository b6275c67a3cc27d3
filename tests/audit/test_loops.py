"""A shell loop over the NICs (``for i in A B; do mlnx_qos -i $i; done``) prints one report per NIC under one
prompt: each report is that NIC's, never the last one's for all (a NIC without PFC hidden by the next one,
or two NICs' ``ethtool -S`` taken for a before/after of one)."""

from __future__ import annotations

import pytest

from tests.audit.conftest import ev, rules
from tests.audit.test_families import MLNX_QOS

PFC3 = "0   0   0   1   0   0   0   0"
NO_PFC = "0   0   0   0   0   0   0   0"


def _report(pfc: str) -> str:
    return MLNX_QOS.format(pfc=pfc).split("\n", 1)[1]  # without its prompt line


def test_a_loop_of_mlnx_qos_is_one_report_per_nic(captures) -> None:  # type: ignore[no-untyped-def]
    text = ("root@gpu01:~# for i in ens1f0np0 ens2f0np0; do mlnx_qos -i $i; done\n"
            + _report(NO_PFC) + _report(PFC3))
    r = captures({"gpu01.txt": text})
    nics = r.data.hosts["gpu01"].nics
    assert nics["ens1f0np0"].pfc_enabled.value == () and nics["ens2f0np0"].pfc_enabled.value == (3,)
    found = rules(r)["RT420"]
    assert [(f.port, ev(f)) for f in found] == [("ens1f0np0", ["gpu01.txt:11"])]


def test_a_loop_of_ethtool_is_not_a_before_and_after(captures) -> None:  # type: ignore[no-untyped-def]
    text = ("root@gpu01:~# for n in ens1f0np0 ens2f0np0; do ethtool -S ${n} | grep prio3; done\n"
            "     rx_prio3_pause: 5\n     tx_prio3_pause: 900\n"
            "     rx_prio3_pause: 7\n     tx_prio3_pause: 0\n")
    r = captures({"gpu01.txt": text})
    nics = r.data.hosts["gpu01"].nics
    assert nics["ens1f0np0"].ethtool["tx_prio3_pause"].value == 900
    assert nics["ens2f0np0"].ethtool["tx_prio3_pause"].value == 0
    assert nics["ens1f0np0"].ethtool_before is None and nics["ens2f0np0"].ethtool_before is None
    assert [(f.port, ev(f)) for f in rules(r)["RT421"]] == [("ens1f0np0", ["gpu01.txt:3"])]


def test_a_loop_sampling_one_nic_twice_is_a_before_and_after(captures) -> None:  # type: ignore[no-untyped-def]
    """``for i in 1 2; do ethtool -S ens1f0np0 | grep prio3; sleep 60; done``: two snapshots of one NIC, so
    the counters are judged over the interval (the second overwrote the first: totals, not a delta)."""
    text = ("root@gpu01:~# for i in 1 2; do ethtool -S ens1f0np0 | grep prio3_pause; sleep 60; done\n"
            "     rx_prio3_pause: 5\n     tx_prio3_pause: 900\n"
            "     rx_prio3_pause: 5\n     tx_prio3_pause: 900\n")
    r = captures({"gpu01.txt": text})
    nic = r.data.hosts["gpu01"].nics["ens1f0np0"]
    assert nic.delta("tx_prio3_pause") == (0, True)
    assert "RT421" not in rules(r)  # no pause during the minute: the 900 are old


def test_two_snapshots_under_one_prompt_are_a_before_and_after(captures) -> None:  # type: ignore[no-untyped-def]
    """``ethtool -S IF | grep pause; sleep 60; ethtool -S IF | grep pause`` on one prompt line: the counters
    repeat, the first run is the earlier snapshot."""
    text = ("root@gpu01:~# ethtool -S ens1f0np0 | grep pause; sleep 60; ethtool -S ens1f0np0 | grep pause\n"
            "     rx_prio3_pause: 5\n     tx_prio3_pause: 900\n"
            "     rx_prio3_pause: 5\n     tx_prio3_pause: 1400\n")
    r = captures({"gpu01.txt": text})
    nic = r.data.hosts["gpu01"].nics["ens1f0np0"]
    assert nic.delta("tx_prio3_pause") == (500, True)
    assert str(nic.ethtool["tx_prio3_pause"].ev) == "gpu01.txt:5"
    assert "during the capture" in rules(r)["RT421"][0].message


def test_diff_y_reads_unchanged_counters_too(captures) -> None:  # type: ignore[no-untyped-def]
    """GNU ``diff -y`` prints a line both runs share without a ``|`` gutter mark: that counter did not move
    (delta 0); it was listed as not understood and left unknown."""
    text = ("root@gpu01:~# diff -y before.txt after.txt\n"
            "     rx_prio3_packets: 4939696624       |       rx_prio3_packets: 4943711983\n"
            "     tx_prio3_pause: 900                        tx_prio3_pause: 900\n")
    r = captures({"gpu01.txt": text})
    nic = next(iter(r.data.hosts["gpu01"].nics.values()))
    assert nic.delta("tx_prio3_pause") == (0, True) and nic.delta("rx_prio3_packets") == (4015359, True)
    assert not r.data.unparsed


@pytest.mark.parametrize("echo, heading", [("echo $i", "{nic}"), ('echo "== $i =="', "== {nic} ==")])
def test_a_loop_that_echoes_each_nic_is_one_report_per_nic(captures, echo: str,  # type: ignore[no-untyped-def]
                                                           heading: str) -> None:
    """``for i in A B; do echo $i; ethtool -S $i | grep …; done``: the echoed name heads each NIC's report.
    The two NICs' counters were taken for a before/after of one NIC named ``$i`` (NIC B's 5,000 pauses minus
    NIC A's 10 "during the capture"), and the name lines listed as not understood."""
    rows = "     rx_prio3_packets: {rx}\n     tx_prio3_packets: {tx}\n     tx_prio3_pause: {pause}\n"
    text = (f"root@gpu01:~# for i in ens1f0np0 ens1f1np1; do {echo}; ethtool -S $i | grep prio3; done\n"
            + heading.format(nic="ens1f0np0") + "\n" + rows.format(rx=900000000, tx=950000000, pause=10)
            + heading.format(nic="ens1f1np1") + "\n" + rows.format(rx=1900000000, tx=1950000000, pause=5000))
    r = captures({"gpu01.txt": text})
    nics = r.data.hosts["gpu01"].nics
    assert sorted(nics) == ["ens1f0np0", "ens1f1np1"]
    assert nics["ens1f0np0"].delta("tx_prio3_pause") == (10, False)
    assert nics["ens1f1np1"].delta("tx_prio3_pause") == (5000, False)
    assert not r.data.unparsed
    found = rules(r)["RT421"]
    assert [(f.port, ev(f)) for f in found] == [("ens1f0np0", ["gpu01.txt:5"]),
                                                ("ens1f1np1", ["gpu01.txt:9"])]
    assert all("since the counters were cleared" in f.message for f in found)


def test_a_loop_echoing_sysfs_paths_reads_each_value(captures) -> None:  # type: ignore[no-untyped-def]
    """``for f in PATH1 PATH2; do echo $f; cat $f; done``: each echoed path names the value below."""
    hw = "/sys/class/infiniband/mlx5_0/ports/1/hw_counters/"
    text = (f"root@gpu01:~# for f in {hw}np_cnp_sent {hw}rp_cnp_handled; do echo $f; cat $f; done\n"
            f"{hw}np_cnp_sent\n120000\n{hw}rp_cnp_handled\n5\n")
    r = captures({"gpu01.txt": text})
    hw_read = r.data.hosts["gpu01"].rdma["mlx5_0"].hw
    assert (hw_read["np_cnp_sent"].value, hw_read["rp_cnp_handled"].value) == (120000, 5)
    assert not r.data.unparsed


def test_ethtool_statistics_long_option_names_the_nic(captures) -> None:  # type: ignore[no-untyped-def]
    """``ethtool --statistics IF`` is ``ethtool -S IF`` (ethtool(8)): two NICs read with it were one unnamed
    NIC ``-`` whose second read was taken for the later snapshot of the first (5,000 - 10 pauses "during the
    capture")."""
    text = "".join(f"root@gpu01:~# ethtool --statistics {nic} | grep prio3_pause\n"
                   f"     rx_prio3_pause: 0\n     tx_prio3_pause: {pause}\n"
                   for nic, pause in (("ens1f0np0", 10), ("ens1f1np1", 5000)))
    nics = captures({"gpu01.txt": text}).data.hosts["gpu01"].nics
    assert sorted(nics) == ["ens1f0np0", "ens1f1np1"]
    assert nics["ens1f1np1"].delta("tx_prio3_pause") == (5000, False)


def test_a_switch_loop_that_echoes_each_port_reads_each_output(captures) -> None:  # type: ignore[no-untyped-def]
    """``for p in swp1 swp2; do echo $p; nv show interface $p counters qos; done``: each report is read as
    the command it is (``nv show interface swp1 counters qos``), not as ``echo swp1; nv show …``, which no
    NVUE format accepts."""
    table = ("PFC Statistics\n=================\n"
             "    switch-priority  rx-pause-frames  rx-pause-duration  tx-pause-frames  tx-pause-duration\n"
             "    ---------------  ---------------  -----------------  ---------------  -----------------\n"
             "    3                {rx}                0                  0                0\n")
    text = ("cumulus@leaf1:mgmt:~$ for p in swp1 swp2; do echo $p; nv show interface $p counters qos; done\n"
            "swp1\n" + table.format(rx=17) + "swp2\n" + table.format(rx=5))
    r = captures({"leaf1.txt": text})
    assert not r.data.unparsed
    ports = r.data.switches["leaf1"].ports
    assert (ports["swp1"]["pfc_rx_prio3"].value, ports["swp2"]["pfc_rx_prio3"].value) == (17, 5)
