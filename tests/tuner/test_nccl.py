"""NCCL environment: values from VENDORS.md §7c / NVIDIA/nccl connect.cc semantics, shell safety, order."""

from __future__ import annotations

import shlex

import pytest

from roce_tune.inventory.models import Host, Nic, Policy, Site
from roce_tune.tuner.classification import derive_classification
from roce_tune.tuner.nccl import derive_nccl_env

CLS = derive_classification(Policy())


def nic(dev: str, rail: int | None, port: int = 1) -> Nic:
    return Nic(model="connectx-7", netdev=f"ens{dev[-1]}np0", rdma_device=dev, rdma_port=port, speed="400G",
               rail=rail)


def host(nics: list[Nic] | None = None, ifname: str | None = "eno1") -> Host:
    return Host(name="gpu01", socket_ifname=ifname, nics=nics if nics is not None else
                [nic(f"mlx5_{r}", r) for r in range(8)])


def env_of(h: Host | None = None, site: Site | None = None,  # type: ignore[no-untyped-def]
           tiers: int = 2, cls=CLS) -> dict[str, str]:
    return derive_nccl_env(h or host(), cls, site or Site(name="a", nccl_version="2.23.4"), tiers)[0]


def test_hca_exact_match_sorted_by_rail_then_natural_name() -> None:
    h = host([nic("mlx5_1", None), nic("mlx5_10", 1), nic("mlx5_2", 1), nic("mlx5_9", 0, port=2)])
    assert env_of(h)["NCCL_IB_HCA"] == "=mlx5_9:2,mlx5_2:1,mlx5_10:1,mlx5_1:1"


def test_hca_eight_rails() -> None:
    assert env_of()["NCCL_IB_HCA"] == "=" + ",".join(f"mlx5_{r}:1" for r in range(8))


def test_tc_is_roce_tos_and_fifo_stays_lossless() -> None:
    env = env_of()
    assert env["NCCL_IB_TC"] == "106"  # DSCP 26 + ECT(0), the published convention
    assert env["NCCL_IB_FIFO_TC"] == "106"  # not the lossy strict CNP class (192)


def test_fifo_tc_uses_a_second_lossless_class_when_the_policy_has_one() -> None:
    cls = derive_classification(Policy(lossless_priorities=[3, 4], roce_dscp=[26, 34]))
    env = env_of(cls=cls)
    assert env["NCCL_IB_TC"] == "106"
    assert env["NCCL_IB_FIFO_TC"] == str(34 << 2 | 2)
    assert cls.dscp_to_tc[34] in cls.lossless_priorities


@pytest.mark.parametrize(("version", "pinned"), [("2.19.3", True), ("2.20.5-1", True), ("2.21.5", False),
                                                 ("2.23.4-1", False), (None, False)])
def test_gid_index_pinned_only_before_autoselect(version: str | None, pinned: bool) -> None:
    env, why = derive_nccl_env(host(), CLS, Site(name="a", nccl_version=version), 2)
    assert ("NCCL_IB_GID_INDEX" in env) is pinned
    assert ("NCCL_IB_ROCE_VERSION_NUM" in env) is not pinned
    if pinned:
        assert env["NCCL_IB_GID_INDEX"] == "3"
    else:
        assert env["NCCL_IB_ROCE_VERSION_NUM"] == "2"
        assert "drift" in why["NCCL_IB_GID_INDEX"].note
    if version is None:
        assert "2.21" in why["NCCL_IB_GID_INDEX"].note


def test_sl_only_with_pcp_trust() -> None:
    assert "NCCL_IB_SL" not in env_of()
    pcp = derive_classification(Policy(trust="pcp"))
    assert env_of(cls=pcp)["NCCL_IB_SL"] == "3"


def test_socket_ifname() -> None:
    assert env_of()["NCCL_SOCKET_IFNAME"] == "=eno1"
    env, why = derive_nccl_env(host(ifname=None), CLS, Site(name="a"), 2)
    assert "NCCL_SOCKET_IFNAME" not in env and why["NCCL_SOCKET_IFNAME"].formula.startswith("not set")


@pytest.mark.parametrize(("tiers", "ar", "qps"), [(1, False, None), (2, False, "4"), (3, False, "4"),
                                                  (3, True, None)])
def test_qp_scaling_for_ecmp_entropy(tiers: int, ar: bool, qps: str | None) -> None:
    env = env_of(site=Site(name="a", adaptive_routing=ar), tiers=tiers)
    assert env.get("NCCL_IB_QPS_PER_CONNECTION") == qps
    assert env.get("NCCL_IB_SPLIT_DATA_ON_QPS") == ("1" if qps else None)


def test_timeouts_left_at_nccl_defaults_with_reason() -> None:
    env, why = derive_nccl_env(host(), CLS, Site(name="a"), 2)
    assert "NCCL_IB_TIMEOUT" not in env and "NCCL_IB_RETRY_CNT" not in env
    assert "4.3 s" in why["NCCL_IB_TIMEOUT"].formula


def test_values_shell_safe_sorted_explained_deterministic() -> None:
    h = host()
    env, why = derive_nccl_env(h, CLS, Site(name="a", nccl_version="2.19.3"), 3)
    assert list(env) == sorted(env) and list(why) == sorted(why)
    assert all(shlex.quote(v) == v or v.startswith("=") and shlex.quote(v[1:]) == v[1:] for v in env.values())
    assert set(env) <= set(why)
    assert all(r.source for r in why.values())
    shuffled = Host(name="gpu01", socket_ifname="eno1", nics=list(reversed(h.nics)))
    assert derive_nccl_env(shuffled, CLS, Site(name="a", nccl_version="2.19.3"), 3)[0] == env


def test_host_without_nics() -> None:
    env, why = derive_nccl_env(host([]), CLS, Site(name="a"), 2)
    assert "NCCL_IB_HCA" not in env and why["NCCL_IB_HCA"].formula.startswith("not set")


@pytest.mark.parametrize("ar", [True, False])
def test_adaptive_routing_sets_nccl_ar_transfers(ar: bool) -> None:
    """NCCL turns its AR-capable transfers on by itself only on an InfiniBand link layer (default -2), so
    a RoCE fabric whose switches route adaptively needs NCCL_IB_ADAPTIVE_ROUTING=1; without AR it stays
    unset."""
    env, why = derive_nccl_env(host(), CLS, Site(name="a", adaptive_routing=ar), 3)
    assert env.get("NCCL_IB_ADAPTIVE_ROUTING") == ("1" if ar else None)
    assert ("InfiniBand" in why["NCCL_IB_ADAPTIVE_ROUTING"].formula) if ar else \
        why["NCCL_IB_ADAPTIVE_ROUTING"].formula.startswith("not set")


def test_a_host_running_the_plans_nccl_env_passes_the_audit(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """The plan of an adaptive-routing fabric (spectrum-x-su) and audit's RT461 agree: a host whose NCCL
    environment is exactly the plan's nccl.env (and its own hosts/<name>.nccl.env) is not flagged. The plan
    wrote no NCCL_IB_ADAPTIVE_ROUTING, so audit flagged the plan's own environment."""
    from pathlib import Path

    from roce_tune.audit.run import audit_dir
    from roce_tune.pipeline import plan_inventory

    inv = Path(__file__).resolve().parents[2] / "inventories" / "spectrum-x-su.yaml"
    result = plan_inventory(inv, tmp_path / "plan", scorecards=False)
    host_name = result.plan.hosts[0].name
    env_lines = [ln for rel in ("nccl.env", f"hosts/{host_name}.nccl.env") if rel in result.files
                 for ln in result.files[rel].splitlines() if ln.startswith("NCCL_")]
    assert "NCCL_IB_ADAPTIVE_ROUTING=1" in env_lines
    caps = tmp_path / "caps"
    caps.mkdir()
    capture = f"root@{host_name}:~# env | grep NCCL\n" + "\n".join(env_lines) + "\n"
    (caps / f"{host_name}.txt").write_text(capture)
    audit = audit_dir(caps, tmp_path / "plan")
    assert not [f for f in audit.findings if f.rule == "RT461"], audit.findings
