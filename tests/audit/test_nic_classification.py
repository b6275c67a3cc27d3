"""The NIC's own classification (``mlnx_qos``): trust state and the DSCP→priority map of the RoCE DSCP,
checked even when no ToS setting (NCCL_IB_TC, traffic_class) was captured."""

from __future__ import annotations

from pathlib import Path

from tests.audit.conftest import ev, rules
from tests.audit.test_families import MLNX_QOS

PFC3 = "0   0   0   1   0   0   0   0"


def test_nic_trusting_pcp_is_roce_on_priority_0_rt410(captures) -> None:  # type: ignore[no-untyped-def]
    text = MLNX_QOS.format(pfc=PFC3).replace("trust state: dscp", "trust state: pcp")
    found = rules(captures({"gpu01.txt": text}))
    assert set(found) == {"RT410"}, found
    f = found["RT410"][0]
    assert ev(f) == ["gpu01.txt:3"] and "trusts pcp" in f.message and "--trust dscp" in f.fix


def test_trust_pcp_is_right_for_a_pcp_policy(captures, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    pol = tmp_path.parent / f"{tmp_path.name}-policy.yaml"
    pol.write_text("policy:\n  trust: pcp\n")
    text = MLNX_QOS.format(pfc=PFC3).replace("trust state: dscp", "trust state: pcp")
    assert not rules(captures({"gpu01.txt": text}, policy_file=pol))


def test_nic_maps_the_roce_dscp_to_a_lossy_priority_rt413(captures) -> None:  # type: ignore[no-untyped-def]
    text = MLNX_QOS.format(pfc=PFC3).replace("prio:3 dscp:31,30,29,28,27,26,25,24,",
                                             "prio:3 dscp:31,30,29,28,27,25,24,\n        prio:5 dscp:26,")
    found = rules(captures({"gpu01.txt": text}))
    assert set(found) == {"RT413"}, found
    f = found["RT413"][0]
    assert ev(f) == ["gpu01.txt:7"] and "DSCP 26" in f.message and "priority 5" in f.message
    assert "--dscp2prio set,26,3" in f.fix


def test_a_cat_of_one_sysfs_file_is_read_from_the_command(captures) -> None:  # type: ignore[no-untyped-def]
    text = ("root@gpu01:~# cat /sys/class/net/ens1f0np0/ecn/roce_np/enable/3\n0\n"
            "root@gpu01:~# cat /sys/class/net/ens1f0np0/mtu\n9000\n")
    r = captures({"gpu01.txt": text})
    nic = r.data.hosts["gpu01"].nics["ens1f0np0"]
    assert nic.ecn_sysfs["roce_np/enable/3"].value == 0 and str(nic.ecn_sysfs["roce_np/enable/3"].ev) == \
        "gpu01.txt:2"
    assert nic.mtu is not None and nic.mtu.value == 9000
    assert not r.data.unparsed
    found = rules(r)
    assert set(found) == {"RT432"} and ev(found["RT432"][0]) == ["gpu01.txt:2"]


def test_cnp_dscp_and_priority_read_from_sysfs_are_checked_rt435(captures, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """The NIC's CNP marking (``roce_np/cnp_dscp``, ``roce_np/cnp_802p_prio``) is compared with the plan's
    (per NIC) or the policy's CNP DSCP/priority (both were read and never checked): each that differs is an
    RT435 naming its line and the sysfs write that fixes it; matching values are clean."""
    grep = ("root@{h}:~# grep -H '' /sys/class/net/ens1f0np0/ecn/roce_np/cnp_*\n"
            "/sys/class/net/ens1f0np0/ecn/roce_np/cnp_802p_prio:{prio}\n"
            "/sys/class/net/ens1f0np0/ecn/roce_np/cnp_dscp:{dscp}\n")
    found = rules(captures({"gpu01.txt": grep.format(h="gpu01", prio=6, dscp=46)}))
    assert set(found) == {"RT435"}, found
    f = found["RT435"][0]
    assert ev(f) == ["gpu01.txt:3"] and "DSCP 46" in f.message and "CNP DSCP 48" in f.message
    assert f.fix.startswith("echo 48 > /sys/class/net/ens1f0np0/ecn/roce_np/cnp_dscp")
    assert f.port == "ens1f0np0"
    inv = Path(__file__).resolve().parents[2] / "inventories" / "lab-2node.yaml"
    r = captures({"gpu01.txt": "", "node1.txt": grep.format(h="node1", prio=3, dscp=48),
                  "node2.txt": grep.format(h="node2", prio=6, dscp=48)}, source=inv)
    cnp = [f for f in r.findings if f.rule == "RT435"]
    assert [(f.device, ev(f)) for f in cnp] == [("node1", ["node1.txt:2"])], cnp
    assert "priority 3" in cnp[0].message and "echo 6 > " in cnp[0].fix
