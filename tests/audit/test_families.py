"""One small, realistic capture set per finding family: the finding, its rule, its evidence line, and no
unrelated findings. Captures are written in the shapes the tools print (show_gids, sysfs grep -H, ethtool -S,
mlnx_qos, ibv_devinfo, ip -d link, /proc/net/bonding, NCCL INFO, SONiC and Cumulus show output)."""

from __future__ import annotations

from tests.audit.conftest import ev, rules

GIDS = """root@{h}:~# show_gids mlx5_0
DEV     PORT    INDEX   GID                                     IPv4            VER     DEV
---     ----    -----   ---                                     ------------    ---     ---
mlx5_0  1       0       fe80:0000:0000:0000:0ac0:ebff:fe3a:1b2c                 v1      ens1f0np0
mlx5_0  1       1       fe80:0000:0000:0000:0ac0:ebff:fe3a:1b2c                 v2      ens1f0np0
{extra}n_gids_found={n}
"""
V4 = ("mlx5_0  1       {i}       0000:0000:0000:0000:0000:ffff:c000:02{o:02x} 192.0.2.{o}      v1      "
      "ens1f0np0\nmlx5_0  1       {j}       0000:0000:0000:0000:0000:ffff:c000:02{o:02x} 192.0.2.{o}      "
      "v2      ens1f0np0\n")


def gids(host: str, first_v4: int | None, octet: int = 11) -> str:
    extra = V4.format(i=first_v4, j=first_v4 + 1, o=octet) if first_v4 is not None else ""
    return GIDS.format(h=host, extra=extra, n=2 + (2 if extra else 0))


# ------------------------------------------------------------------------------------------------ GID
def test_gid_link_local_only_rt401(captures) -> None:
    r = captures({"gpu01.txt": gids("gpu01", None)})
    found = rules(r)
    assert set(found) == {"RT401"}
    f = found["RT401"][0]
    assert (f.device, f.port) == ("gpu01", "ens1f0np0") and "gpu01.txt:4" in ev(f)
    assert "link-local RoCE v1" in f.message


def test_gid_pinned_to_v1_index_rt402(captures) -> None:
    env = "root@gpu01:~# env | grep NCCL\nNCCL_IB_HCA=mlx5_0\nNCCL_IB_GID_INDEX=2\n"
    r = captures({"gpu01.txt": gids("gpu01", 2) + env})
    found = rules(r)
    assert set(found) == {"RT402"}
    assert "GID 2 is RoCE v1" in found["RT402"][0].message and "index 3" not in found["RT402"][0].message
    assert ev(found["RT402"][0]) == ["gpu01.txt:6", "gpu01.txt:11"]


def test_gid_empty_env_value_means_index_0_rt404(captures) -> None:
    r = captures({"gpu01.txt": gids("gpu01", 2) + "$ cat /etc/nccl.conf\nNCCL_IB_GID_INDEX=\"\"\n"})
    found = rules(r)
    assert set(found) == {"RT404"}
    assert ev(found["RT404"][0]) == ["gpu01.txt:4",
                                     "gpu01.txt:10"] and "reads \"\" as 0" in found["RT404"][0].message


def test_gid_empty_env_value_without_a_gid_table_rt404(captures) -> None:
    """An empty pin is wrong whatever the GID table says: reported from the env line alone (RT401 is then
    not checked, for want of show_gids)."""
    r = captures({"gpu01.txt": "root@gpu01:~# env | grep -E '^(NCCL|UCX)_'\nNCCL_IB_TC=106\n"
                               "NCCL_IB_GID_INDEX=\n"})
    found = rules(r)
    assert set(found) == {"RT404"}
    f = found["RT404"][0]
    assert f.device == "gpu01" and ev(f) == ["gpu01.txt:3"] and "reads \"\" as 0" in f.message
    assert "RT401" in {n.rule for n in r.not_checked}


def test_gid_index_differs_between_hosts_rt403(captures) -> None:
    pin = "$ env | grep NCCL\nNCCL_IB_GID_INDEX=3\n"
    r = captures({"gpu01.txt": gids("gpu01", 2, 11) + pin, "gpu02.txt": gids("gpu02", 4, 12) + pin})
    found = rules(r)
    # gpu02 has v1 at 3 and v2 at 5: the pinned 3 is wrong there, and the indexes differ
    assert set(found) == {"RT402", "RT403"}
    assert [f.device for f in found["RT402"]] == ["gpu02"]
    assert "gpu01:mlx5_0=3, gpu02:mlx5_0=5" in found["RT403"][0].message


def test_gid_sysfs_fallback(captures) -> None:
    base = "/sys/class/infiniband/mlx5_0/ports/1"
    text = ("root@gpu01:~# grep -H '' /sys/class/infiniband/mlx5_0/ports/1/gids/[0-3] "
            "/sys/class/infiniband/mlx5_0/ports/1/gid_attrs/types/[0-3] /sys/class/infiniband/mlx5_0/ports/1/"
            "gid_attrs/ndevs/[0-3]\n"
            f"{base}/gids/0:fe80:0000:0000:0000:0ac0:ebff:fe3a:1b2c\n"
            f"{base}/gids/1:fe80:0000:0000:0000:0ac0:ebff:fe3a:1b2c\n"
            f"{base}/gids/2:0000:0000:0000:0000:0000:ffff:c000:020b\n"
            f"{base}/gids/3:0000:0000:0000:0000:0000:ffff:c000:020b\n"
            f"{base}/gid_attrs/types/0:IB/RoCE v1\n{base}/gid_attrs/types/1:RoCE v2\n"
            f"{base}/gid_attrs/types/2:IB/RoCE v1\n{base}/gid_attrs/types/3:RoCE v2\n"
            f"{base}/gid_attrs/ndevs/0:ens1f0np0\n{base}/gid_attrs/ndevs/1:ens1f0np0\n"
            f"{base}/gid_attrs/ndevs/2:ens1f0np0\n{base}/gid_attrs/ndevs/3:ens1f0np0\n"
            "root@gpu01:~# for f in /sys/class/infiniband/mlx5_0/ports/1/gids/4; do echo $f; cat $f; done\n"
            f"{base}/gids/4\n0000:0000:0000:0000:0000:0000:0000:0000\n"
            "$ env | grep NCCL\nNCCL_IB_GID_INDEX=1\n")
    r = captures({"gpu01.txt": text})
    d = r.data.hosts["gpu01"].rdma["mlx5_0"]
    got = sorted((g.index, g.ver, g.ipv4, g.netdev) for g, _ in d.gids)
    assert got == [(0, "v1", None, "ens1f0np0"), (1, "v2", None, "ens1f0np0"),
                   (2, "v1", "192.0.2.11", "ens1f0np0"),
                   (3, "v2", "192.0.2.11", "ens1f0np0")]
    found = rules(r)
    assert set(found) == {"RT402"} and "link-local" in found["RT402"][0].message
    assert not r.data.unparsed


# ----------------------------------------------------------------------------------------- priority
ETHTOOL = """root@{h}:~# ethtool -S ens1f0np0 | grep prio
     rx_prio0_packets: {rx0}
     tx_prio0_packets: {tx0}
     rx_prio3_packets: {rx3}
     tx_prio3_packets: {tx3}
"""
HW = "root@{h}:~# grep -H '' /sys/class/infiniband/mlx5_0/ports/1/hw_counters/*\n" + "".join(
    f"/sys/class/infiniband/mlx5_0/ports/1/hw_counters/{k}:{{{k}}}\n" for k in
    ("np_cnp_sent", "np_ecn_marked_roce_packets", "out_of_sequence", "rp_cnp_handled"))


def eth(h: str, rx0: int = 5_000, tx0: int = 5_000, rx3: int = 0, tx3: int = 0) -> str:
    return ETHTOOL.format(h=h, rx0=rx0, tx0=tx0, rx3=rx3, tx3=tx3)


def hw(h: str, **kw: int) -> str:
    vals = {"np_cnp_sent": 0, "np_ecn_marked_roce_packets": 0, "out_of_sequence": 0, "rp_cnp_handled": 0,
            **kw}
    return HW.format(h=h, **vals)


def test_roce_on_priority_0_before_after_rt410(captures) -> None:
    r = captures({"gpu01.before.txt": eth("gpu01", 1_000_000, 1_000_000) + hw("gpu01"),
                  "gpu01.after.txt": eth("gpu01", 9_000_000, 9_000_000) + hw("gpu01", np_cnp_sent=40)})
    found = rules(r)
    assert set(found) == {"RT410"}
    f = found["RT410"][0]
    assert "8,000,000 packets during the capture" in f.message and "gpu01.after.txt:3" in ev(f)


def test_tos_maps_to_priority_0_rt410_and_nodes_differ_rt411(captures) -> None:
    r = captures({"gpu01.txt": "$ env | grep NCCL\nNCCL_IB_TC=106\n", "gpu02.txt": "$ env | grep "
                  "NCCL\nNCCL_IB_TC=0\n"})
    found = rules(r)
    assert set(found) == {"RT410", "RT411"}
    assert [f.device for f in found["RT410"]] == ["gpu02"] and ev(found["RT410"][0]) == ["gpu02.txt:2"]
    assert "differs between nodes" in found["RT411"][0].message


def test_switch_queue_other_than_lossless(captures) -> None:
    text = ("admin@leaf1:~$ show queue counters Ethernet0\n"
            "     Port    TxQ    Counter/pkts    Counter/bytes    Drop/pkts    Drop/bytes\n"
            "---------  -----  --------------  ---------------  -----------  ------------\n"
            "Ethernet0    UC0          90,000       90,000,000       20,000    20,000,000\n"
            "Ethernet0    UC3          10,000       10,000,000            0             0\n")
    found = rules(captures({"leaf1.txt": text}))
    assert set(found) == {"RT412"} and ev(found["RT412"][0]) == ["leaf1.txt:4"]


def test_switch_queue_other_than_lossless_all_type_queues(captures) -> None:
    """queuestat names SAI_QUEUE_TYPE_ALL queues ALL<n> (one queue for unicast and multicast); newer releases
    print a "For namespace" line above each port's table."""
    text = ("admin@leaf1:~$ show queue counters Ethernet0\n"
            "For namespace :\n"
            "     Port    TxQ    Counter/pkts    Counter/bytes    Drop/pkts    Drop/bytes\n"
            "---------  -----  --------------  ---------------  -----------  ------------\n"
            "Ethernet0   ALL0          90,000       90,000,000       20,000           N/A\n"
            "Ethernet0   ALL3          10,000       10,000,000            0           N/A\n")
    found = rules(captures({"leaf1.txt": text}))
    assert set(found) == {"RT412"} and ev(found["RT412"][0]) == ["leaf1.txt:5"]


def test_switch_queue_counters_json(captures) -> None:
    """``show queue counters -j`` (queuestat build_json): read like the table, evidence on the queue's key."""
    text = ("admin@leaf1:~$ show queue counters Ethernet0 -j\n"
            "{\n"
            '    "Ethernet0": {\n'
            '        "time": "2025-01-08T18:31:12.675517",\n'
            '        "UC0": {\n'
            '            "totalpacket": "90,000",\n'
            '            "totalbytes": "90000000",\n'
            '            "droppacket": "20000",\n'
            '            "dropbytes": "N/A"\n'
            "        },\n"
            '        "UC3": {\n'
            '            "totalpacket": "10000",\n'
            '            "totalbytes": "10000000",\n'
            '            "droppacket": "0",\n'
            '            "dropbytes": "N/A"\n'
            "        }\n"
            "    }\n"
            "}\n")
    r = captures({"leaf1.txt": text})
    found = rules(r)
    assert not r.data.unparsed
    assert set(found) == {"RT412"} and ev(found["RT412"][0]) == ["leaf1.txt:5"]
    assert "q0_drop_bytes" not in r.data.switches["leaf1"].ports["Ethernet0"]  # N/A is not 0


# ----------------------------------------------------------------------------------------------- PFC
MLNX_QOS = """root@gpu01:~# mlnx_qos -i ens1f0np0
DCBX mode: OS controlled
Priority trust state: dscp
dscp2prio mapping:
        prio:0 dscp:07,06,05,04,03,02,01,00,
        prio:3 dscp:31,30,29,28,27,26,25,24,
Receive buffer size (bytes): 130944,130944,0,0,0,0,0,0,
Cable len: 7
PFC configuration:
        priority    0   1   2   3   4   5   6   7
        enabled     {pfc}
        buffer      0   0   0   1   0   0   0   0
"""


def test_nic_without_pfc_on_roce_priority_rt420(captures) -> None:
    r = captures({"gpu01.txt": MLNX_QOS.format(pfc="1   0   0   0   0   0   0   0")})
    found = rules(r)
    assert set(found) == {"RT420"} and ev(found["RT420"][0]) == ["gpu01.txt:11"]
    assert "--pfc 0,0,0,1,0,0,0,0" in found["RT420"][0].fix
    assert r.data.hosts["gpu01"].nics["ens1f0np0"].dscp_to_prio[26].value == 3
    assert not rules(captures({"gpu01.txt": MLNX_QOS.format(pfc="0   0   0   1   0   0   0   0")}))


def test_nic_sends_pause_rt421(captures) -> None:
    snap = ("root@gpu01:~# ethtool -S ens1f0np0 | grep prio3\n     tx_prio3_pause: {n}\n     rx_prio3_pause: "
            "0\n")
    r = captures({"gpu01.txt": snap.format(n=100) + snap.format(n=5_100)})
    found = rules(r)
    assert set(found) == {"RT421"}
    f = found["RT421"][0]
    assert ("5,000 PFC pause frames" in f.message and "during the capture" in f.message
            and ev(f) == ["gpu01.txt:5"])
    assert "PCIe" in f.fix


def test_lossless_drops_without_pfc_rt424(captures) -> None:
    text = ("admin@leaf1:~$ show pfc counters\n"
            "  Port Rx    PFC0    PFC1    PFC2    PFC3    PFC4    PFC5    PFC6    PFC7\n"
            "---------  ------  ------  ------  ------  ------  ------  ------  ------\n"
            "Ethernet0       0       0       0       0       0       0       0       0\n\n"
            "  Port Tx    PFC0    PFC1    PFC2    PFC3    PFC4    PFC5    PFC6    PFC7\n"
            "---------  ------  ------  ------  ------  ------  ------  ------  ------\n"
            "Ethernet0       0       0       0       0       0       0       0       0\n"
            "admin@leaf1:~$ show queue counters Ethernet0\n"
            "     Port    TxQ    Counter/pkts    Counter/bytes    Drop/pkts    Drop/bytes\n"
            "---------  -----  --------------  ---------------  -----------  ------------\n"
            "Ethernet0    UC3         900,000      900,000,000        4,000     4,000,000\n")
    found = rules(captures({"leaf1.txt": text}))
    assert set(found) == {"RT424"}
    assert ev(found["RT424"][0]) == ["leaf1.txt:4", "leaf1.txt:8", "leaf1.txt:12"]


def test_watchdog_single_storm_is_reported_without_flapping(captures) -> None:
    text = ("admin@leaf1:~$ show pfcwd stats\n"
            "      QUEUE       STATUS    STORM DETECTED/RESTORED    TX OK/DROP    RX OK/DROP    TX LAST "
            "OK/DROP    RX LAST OK/DROP\n"
            "-----------  -----------  -------------------------  ------------  ------------  "
            "-----------------  -----------------\n"
            "Ethernet8:3  operational                        1/0         0/120           0/0                "
            "0/0                0/0\n")
    found = rules(captures({"leaf1.txt": text}))
    assert set(found) == {"RT423"} and "flapping" not in found["RT423"][0].message


# ---------------------------------------------------------------------------------------- ECN / DCQCN
def test_pfc_fires_but_no_ecn_marks_rt430(captures) -> None:
    snap = ("root@gpu01:~# ethtool -S ens1f0np0 | grep prio3\n     rx_prio3_pause: {p}\n     tx_prio3_pause: "
            "0\n     rx_prio3_packets: {k}\n     tx_prio3_packets: {k}\n")
    r = captures({"gpu01.before.txt": snap.format(p=0, k=1_000_000) + hw("gpu01"),
                  "gpu01.after.txt": snap.format(p=9_000, k=9_000_000) + hw("gpu01")})
    found = rules(r)
    assert set(found) == {"RT430"}
    f = found["RT430"][0]
    assert f.severity.value == "error" and "PFC paused 9,000 times" in f.message
    assert ev(f) == ["gpu01.after.txt:2", "gpu01.after.txt:8"]


def test_cnps_sent_not_handled_rt432(captures) -> None:
    r = captures({"gpu01.txt": hw("gpu01", np_cnp_sent=50_000, np_ecn_marked_roce_packets=60_000),
                  "gpu02.txt": hw("gpu02", rp_cnp_handled=0)})
    found = rules(r)
    assert set(found) == {"RT432"}
    assert ev(found["RT432"][0]) == ["gpu01.txt:2", "gpu01.txt:5", "gpu02.txt:5"]


def test_reaction_point_off_in_sysfs_rt432(captures) -> None:
    text = ("root@gpu01:~# grep -H '' /sys/class/net/ens1f0np0/ecn/roce_rp/enable/*\n" +
            "".join(f"/sys/class/net/ens1f0np0/ecn/roce_rp/enable/{p}:{1 if p != 3 else 0}\n"
                    for p in range(8)))
    found = rules(captures({"gpu01.txt": text}))
    assert set(found) == {"RT432"} and ev(found["RT432"][0]) == ["gpu01.txt:5"]


def test_out_of_buffer_is_receiver_shortage_rt433(captures) -> None:
    text = ("root@gpu01:~# rdma statistic show link mlx5_0/1\n"
            "link mlx5_0/1 rx_write_requests 10 rx_read_requests 0 rx_atomic_requests 0 out_of_buffer 812\n"
            "    out_of_sequence 0 duplicate_request 0 rnr_nak_retry_err 0 packet_seq_err 0\n")
    r = captures({"gpu01.txt": text})
    found = rules(r)
    assert set(found) == {"RT433"} and ev(found["RT433"][0]) == ["gpu01.txt:2"]
    assert "not packets lost in the fabric" in found["RT433"][0].message
    assert r.data.hosts["gpu01"].rdma["mlx5_0"].hw["packet_seq_err"].value == 0



def test_ibdev2netdev_ties_each_rdma_device_to_its_netdev(captures) -> None:  # type: ignore[no-untyped-def]
    """On a host with several NICs only ``ibdev2netdev`` (the README has users run it to list the RoCE NICs)
    says which netdev's ``ethtool -S`` belongs to which RDMA device's hw_counters. It was listed as not
    understood, so each device's loss read "the packet count was not captured" (a warning) and RT430 "PFC
    pause counters were not captured", though both were: 2,000 in 50,000,000 packets is 40 per million."""
    text = ("root@gpu01:~# ibdev2netdev -v\n"
            "0000:17:00.0 mlx5_0 (MT4129 - MCX75310AAS-NEAT) ConnectX-7 fw 28.39.1002 port 1 (ACTIVE) ==> "
            "ens1f0np0 (Up)\n"
            "mlx5_1 port 1 ==> ens2f0np0 (Up)\n")
    for n, netdev in enumerate(("ens1f0np0", "ens2f0np0")):
        hw_dir = f"/sys/class/infiniband/mlx5_{n}/ports/1/hw_counters"
        text += (f"root@gpu01:~# ethtool -S {netdev} | grep prio3\n     rx_prio3_packets: 50000000\n"
                 f"     tx_prio3_packets: 50000000\n     rx_prio3_pause: 0\n     tx_prio3_pause: 0\n"
                 f"root@gpu01:~# grep -H '' {hw_dir}/*\n{hw_dir}/out_of_sequence:2000\n"
                 f"{hw_dir}/np_ecn_marked_roce_packets:0\n")
    r = captures({"gpu01.txt": text})
    assert not r.data.unparsed
    assert {d.device: d.netdev for d in r.data.hosts["gpu01"].rdma.values()} == {"mlx5_0": "ens1f0np0",
                                                                                 "mlx5_1": "ens2f0np0"}
    found = rules(r)["RT425"]
    assert [(f.severity.value, f.port) for f in found] == [("error", "ens1f0np0"), ("error", "ens2f0np0")]
    assert all("40.0 per million" in f.message for f in found)
    assert all("not captured" not in f.message for f in rules(r).get("RT430", []))


def test_loss_rate_needs_both_counts_over_one_interval(captures) -> None:  # type: ignore[no-untyped-def]
    """``ethtool -S`` captured before and after a job but the hw_counters only once: 5,000 out_of_sequence
    since boot were divided by the 1,000,000 packets of the job ("5000 per million", an error). Totals and
    a difference are not one interval: no rate is made of them."""
    eth_snap = ("root@gpu01:~# ethtool -S ens1f0np0 | grep rx_prio\n     rx_prio0_packets: 0\n"
                "     rx_prio3_packets: {n}\n")
    hw_once = ("root@gpu01:~# grep -H '' /sys/class/infiniband/mlx5_0/ports/1/hw_counters/out_of_sequence\n"
               "/sys/class/infiniband/mlx5_0/ports/1/hw_counters/out_of_sequence:5000\n")
    r = captures({"gpu01.before.txt": eth_snap.format(n=9_000_000_000),
                  "gpu01.after.txt": eth_snap.format(n=9_001_000_000) + hw_once})
    found = rules(r)["RT425"]
    assert len(found) == 1 and "per million" not in found[0].message and found[0].severity.value == "warning"
    assert "not over the same interval" in found[0].message

def test_switch_ecn_not_on_lossless_tc_rt431(captures) -> None:
    text = ("cumulus@leaf2:mgmt:~$ nv show qos roce\n"
            "                    operational            applied\n"
            "------------------  ---------------------  ---------------------\n"
            "enable                                     on\n"
            "pfc\n  pfc-priority      3\n"
            "congestion-control\n  congestion-mode   ECN\n  enabled-tc        0\n")
    found = rules(captures({"leaf2.txt": text}))
    assert set(found) == {"RT431"} and ev(found["RT431"][0]) == ["leaf2.txt:9"]


# ----------------------------------------------------------------------------------------------- MTU
IBV = """root@{h}:~# ibv_devinfo -v
hca_id:	mlx5_0
	transport:			InfiniBand (0)
	fw_ver:				{fw}
	node_guid:			0ac0:eb03:003a:1b2c
	phys_port_cnt:			1
		port:	1
			state:			PORT_ACTIVE (4)
			max_mtu:		4096 (5)
			active_mtu:		{mtu} ({code})
			sm_lid:			0
			port_lid:		0
			link_layer:		Ethernet
"""
IPLINK = """root@{h}:~# ip -d link show ens1f0np0
4: ens1f0np0: <BROADCAST,MULTICAST,UP,LOWER_UP> mtu {mtu} qdisc mq state UP mode DEFAULT group default qlen \
1000
    link/ether 08:c0:eb:3a:1b:2c brd ff:ff:ff:ff:ff:ff promiscuity 0 minmtu 68 maxmtu 9978
    altname enp65s0f0np0 numtxqueues 252 numrxqueues 63 gso_max_size 65536 gso_max_segs 65535
"""


def mtu_host(h: str, netdev: int, active: int, fw: str = "28.39.1002") -> str:
    return (IBV.format(h=h, fw=fw, mtu=active, code={1024: 3, 4096: 5}[active]) + IPLINK.format(h=h,
                                                                                                mtu=netdev) +
            gids(h, 2))


def test_mtu_mismatch_on_one_node(captures) -> None:
    r = captures({"gpu01.txt": mtu_host("gpu01", 9000, 4096), "gpu02.txt": mtu_host("gpu02", 1500, 1024)})
    found = rules(r)
    assert set(found) == {"RT440", "RT441"}
    assert [f.device for f in found["RT440"]] == ["gpu02"]
    assert ev(found["RT440"][0]) == ["gpu02.txt:10", "gpu02.txt:15"]
    assert r.data.hosts["gpu01"].rdma["mlx5_0"].fw_ver.value == "28.39.1002"  # type: ignore[union-attr]
    assert not r.data.unparsed
    assert not rules(captures({"gpu02.txt": mtu_host("gpu02", 9000, 4096)}))


# ----------------------------------------------------------------------------------------------- ECE
def test_ece_with_mixed_firmware_rt450(captures) -> None:
    info = "gpu01:1:1 [0] NCCL INFO NCCL version 2.23.4+cuda12.6\n"
    r = captures({"gpu01.txt": mtu_host("gpu01", 9000, 4096, "28.39.1002") + "$ cat nccl.log\n" + info,
                  "gpu02.txt": mtu_host("gpu02", 9000, 4096, "28.41.1000")})
    found = rules(r)
    assert set(found) == {"RT450"} and "gpu01.txt:27" in ev(found["RT450"][0])
    same = captures({"gpu02.txt": mtu_host("gpu02", 9000, 4096, "28.39.1002")})
    assert "RT450" not in rules(same)


# ------------------------------------------------------------------------------ load balance / topology
BOND = """root@gpu01:~# cat /proc/net/bonding/bond0
Ethernet Channel Bonding Driver: v5.15.0

Bonding Mode: IEEE 802.3ad Dynamic link aggregation
Transmit Hash Policy: layer3+4 (1)
MII Status: up

Slave Interface: ens1f0np0
MII Status: up

Slave Interface: ens1f1np1
MII Status: up
root@gpu01:~# env | grep NCCL
NCCL_IB_HCA=mlx5_bond_0
"""


def test_bonded_hca_one_qp_rt460(captures) -> None:
    r = captures({"gpu01.txt": BOND})
    found = rules(r)
    assert set(found) == {"RT460"} and ev(found["RT460"][0]) == ["gpu01.txt:4"]
    ok = captures({"gpu01.txt": BOND + "NCCL_IB_QPS_PER_CONNECTION=2\n"})
    assert "RT460" not in rules(ok)


def test_nccl_hca_uses_fewer_nics_rt462(captures) -> None:
    two = IBV.format(h="gpu01", fw="28.39.1002", mtu=4096, code=5) + IBV.format(
        h="gpu01", fw="28.39.1002", mtu=4096, code=5).replace("mlx5_0", "mlx5_1")
    r = captures({"gpu01.txt": two + "$ env | grep NCCL\nNCCL_IB_HCA=mlx5_0\n"})
    found = rules(r)
    assert set(found) == {"RT462"} and "gpu01.txt:28" in ev(found["RT462"][0])


def _pair_log(a: str, b: str, busbw: float) -> str:
    return ("# nThread 1 nGpus 1 minBytes 1073741824 maxBytes 1073741824 step: 1048576(bytes) warmup iters: "
            "5 iters: 20 agg iters: 1 validation: 1 graph: 0\n#\n# Using devices\n"
            f"#  Rank  0 Group  0 Pid   1001 on {a:>10} device  0 [0000:06:00] NVIDIA H100 80GB HBM3\n"
            f"#  Rank  1 Group  0 Pid   1002 on {b:>10} device  0 [0000:06:00] NVIDIA H100 80GB HBM3\n#\n"
            "#                                                              "
            "out-of-place                       in-place\n#       size         count      type   redop    "
            "root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n#        (B)    "
            "(elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  "
            f"(GB/s)\n  1073741824     268435456     float     sum      -1    21000   {busbw:5.2f}   "
            f"{busbw:5.2f}      0    21000   {busbw:5.2f}   {busbw:5.2f}      0\n# Out of bounds values : 0 "
            f"OK\n# Avg bus bandwidth    : {busbw}\n#\n")


def test_slow_node_on_pair_matrix_rt463(captures) -> None:
    hosts = ["gpu01", "gpu02", "gpu03", "gpu04", "gpu05"]
    files = {}
    for i, a in enumerate(hosts):
        for b in hosts[i + 1:]:
            bw = 30.0 if "gpu04" in (a, b) else 48.0 + (hash(a + b) % 3) * 0.1
            files[f"{a}.pair-{b}.txt"] = _pair_log(a, b, bw)
    found = rules(captures(files))
    assert set(found) == {"RT463"}
    assert [f.device for f in found["RT463"]] == ["gpu04"]
    assert "gpu01.pair-gpu04.txt:1" in ev(found["RT463"][0])


def test_even_matrix_has_no_slow_node(captures) -> None:
    hosts = ["gpu01", "gpu02", "gpu03", "gpu04"]
    files = {f"{a}.pair-{b}.txt": _pair_log(a, b, 44.0 + i * 0.5)
             for i, (a, b) in enumerate((a, b) for n, a in enumerate(hosts) for b in hosts[n + 1:])}
    assert not rules(captures(files))


# ------------------------------------------------------------------------------------------ not understood
def test_unknown_block_listed_with_file_and_line(captures) -> None:
    text = ("# pasted from gpu01\n"
            "root@gpu01:~# show_gids\n"
            "bash: show_gids: command not found\n"
            "root@gpu01:~# ethtool -S ens1f0np0 | grep prio3\n"
            "     rx_prio3_pause: 0\n")
    r = captures({"gpu01.txt": text})
    assert [(u.file, u.line, u.command) for u in r.data.unparsed] == [("gpu01.txt", 3, "show_gids")]
    assert r.data.hosts["gpu01"].nics["ens1f0np0"].ethtool["rx_prio3_pause"].value == 0


def test_switch_and_nic_pause_counts_disagree_rt422(captures) -> None:
    """lab-2node.yaml cables node1 ens1f0np0 to lab-leaf1 Ethernet0: the leaf sent 50,000 PFC frames in the
    interval, the NIC counted 20."""
    from pathlib import Path

    inv = Path(__file__).resolve().parents[2] / "inventories" / "lab-2node.yaml"
    nic = ("root@node1:~# ethtool -S ens1f0np0 | grep prio3_pause\n     rx_prio3_pause: {n}\n     "
           "tx_prio3_pause: 0\n")
    sw = ("admin@lab-leaf1:~$ show pfc counters\n"
          "  Port Tx    PFC0    PFC1    PFC2    PFC3    PFC4    PFC5    PFC6    PFC7\n"
          "---------  ------  ------  ------  ------  ------  ------  ------  ------\n"
          "Ethernet0       0       0       0  {n:>6}       0       0       0       0\n")
    r = captures({"node1.before.txt": nic.format(n=1000), "node1.after.txt": nic.format(n=1020),
                  "lab-leaf1.before.txt": sw.format(n=10), "lab-leaf1.after.txt": sw.format(n=50010)},
                 source=inv)
    found = rules(r)
    assert "RT422" in found and [f.device for f in found["RT422"]] == ["node1"]
    assert ev(found["RT422"][0]) == ["lab-leaf1.after.txt:4", "node1.after.txt:2"]
    assert "50,000 PFC frames" in found["RT422"][0].message


def test_vendor_switch_outputs_detected(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """The verify fixtures of Cumulus, NX-OS and Junos counter commands are each read by their own reader."""
    import shutil
    from pathlib import Path

    from roce_tune.audit import audit_dir

    src = Path(__file__).resolve().parents[1] / "verify" / "fixtures" / "switch"
    for f in src.glob("*.txt"):
        shutil.copy(f, tmp_path / f"{f.name.split('-')[0]}.{f.name}")
    r = audit_dir(tmp_path)
    kinds = {file.split(".", 1)[1]: kind for file, _, kind in r.data.blocks}
    assert kinds["nxos-show-queuing-interface-e1-7.txt"] == "nxos show queuing interface"
    assert kinds["nxos-show-queuing-pfc-queue-e1-7-detail.txt"] == "nxos show queuing pfc-queue detail"
    assert kinds["junos-show-interfaces-queue-et-0-0-12.txt"] == "junos show interfaces queue"
    assert kinds["cumulus-nv-show-interface-swp3-qos-roce-counters.txt"] == ("cumulus nv show qos roce "
                                                                             "counters")
    assert not r.data.unparsed
    assert r.data.switches["junos"].ports["et-0/0/12"]["pfc_tx_prio3"].value == 61377
    assert [(f.rule, f.device, f.port) for f in r.findings] == [("RT423", "nxos", "Ethernet1/7")]


def test_sonic_config_and_port_counter_readers(captures) -> None:
    text = ("admin@leaf1:~$ show pfcwd config\n"
            "Changed polling interval to 200ms\n"
            "     PORT    ACTION    DETECTION TIME    RESTORATION TIME\n"
            "---------  --------  ----------------  ------------------\n"
            "Ethernet0      drop               200                 200\n"
            "admin@leaf1:~$ show interfaces counters\n"
            "      IFACE    STATE    RX_OK     RX_BPS    RX_UTIL    RX_ERR    RX_DRP    RX_OVR    TX_OK     "
            "TX_BPS    TX_UTIL    TX_ERR    TX_DRP    TX_OVR\n"
            "-----------  -------  -------  ---------  ---------  --------  --------  --------  -------  "
            "---------  ---------  --------  --------  --------\n"
            "  Ethernet0        U  1,204,551  3.11 MB/s      0.01%         0        17         0  988,100  "
            "2.02 MB/s      0.00%         0         0         0\n"
            "admin@leaf1:~$ show queue wredcounters Ethernet0\n"
            "     Port    TxQ    WredDrp/pkts    WredDrp/bytes    EcnMarked/pkts    EcnMarked/bytes\n"
            "---------  -----  --------------  ---------------  ----------------  -----------------\n"
            "Ethernet0    UC3               0                0            41,002         42,000,000\n"
            "admin@leaf1:~$ show priority-flow-control counters | json\n"
            '{"interfaceCounters": {"Ethernet1": {"rxFrames": 12, "txFrames": 7}}}\n')
    r = captures({"leaf1.txt": text})
    sw = r.data.switches["leaf1"]
    assert sw.pfcwd_config["Ethernet0"].value == "drop 200 200"
    assert (sw.ports["Ethernet0"]["rx_drp"].value == 17
            and str(sw.ports["Ethernet0"]["rx_drp"].ev) == "leaf1.txt:9")
    assert sw.ports["Ethernet0"]["q3_ecn_marked_pkts"].value == 41002
    assert sw.ports["Ethernet1"]["pfc_tx_all"].value == 7
    assert [k for _, _, k in r.data.blocks] == ["sonic show pfcwd config", "sonic show interfaces counters",
                                              "sonic show queue counters",
                                              "eos show priority-flow-control counters | json"]
    assert not r.findings
    # "Changed polling interval" is part of the command's output, read with its block
    assert not r.data.unparsed
