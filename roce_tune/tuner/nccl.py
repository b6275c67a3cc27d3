"""NCCL environment for one host (pure): which HCAs, which TOS, which GID, how many QPs.

Every value is derived from inventory names that already passed the strict name patterns of
:mod:`roce_tune.inventory.models` and from integers, and is checked once more against
:data:`SHELL_SAFE_RE`, so it can be written unquoted to ``/etc/nccl.conf`` or an ``export`` line.

Parameter semantics and defaults are those of NVIDIA/nccl ``src/transport/net_ib/connect.cc``
(docs/derivation.md#nccl-environment): ``NCCL_IB_TC``/``NCCL_IB_FIFO_TC``/``NCCL_IB_SL``/``NCCL_IB_GID_INDEX``
default -1 (unset), ``NCCL_IB_ROCE_VERSION_NUM`` 2, ``NCCL_IB_QPS_PER_CONNECTION`` 1,
``NCCL_IB_SPLIT_DATA_ON_QPS`` 0, ``NCCL_IB_TIMEOUT`` 20, ``NCCL_IB_RETRY_CNT`` 7.

    >>> from roce_tune.inventory.models import Host, Nic, Policy, Site
    >>> from roce_tune.tuner.classification import derive_classification
    >>> h = Host(name="gpu01", socket_ifname="eno1", nics=[
    ...     Nic(model="connectx-7", netdev="ens2f0np0", rdma_device="mlx5_1", speed="400G", rail=1),
    ...     Nic(model="connectx-7", netdev="ens1f0np0", rdma_device="mlx5_0", speed="400G", rail=0)])
    >>> env, why = derive_nccl_env(h, derive_classification(Policy()),
    ...                            Site(name="a", nccl_version="2.23.4"), 2)
    >>> env["NCCL_IB_HCA"], env["NCCL_IB_TC"], "NCCL_IB_GID_INDEX" in env
    ('=mlx5_0:1,mlx5_1:1', '106', False)
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import lru_cache

from roce_tune.inventory.models import Host, Site
from roce_tune.plan import Classification, Rationale

#: Characters a value may contain (no quoting needed in sh, nccl.conf or systemd Environment=).
SHELL_SAFE_RE = re.compile(r"^[A-Za-z0-9_=:,.^-]*$")
#: NCCL release from which NCCL_IB_GID_INDEX defaults to -1 (auto-select a RoCEv2 GID).
GID_AUTOSELECT_SINCE = (2, 21)
#: GID index of RoCEv2 + IPv4 in the usual mlx5 table (0/1 = v1/v2 link-local, 2/3 = v1/v2 IPv4).
PINNED_GID_INDEX = 3
#: QPs per connection when ECMP needs entropy (Meta SIGCOMM'24 "QP scaling",
#: docs/derivation.md#large-scale-practice).
QPS_PER_CONNECTION = 4

_S_NCCL = ("NVIDIA/nccl src/transport/net_ib/connect.cc (v2.31.2) parameter defaults "
           "(docs/derivation.md#nccl-environment)")
_S_ENV = "NCCL environment-variable docs (env.rst); docs/derivation.md#nccl-environment"
_S_META = ("Meta, 'RDMA over Ethernet for Distributed AI Training at Meta Scale', SIGCOMM'24: E-ECMP + QP "
           "scaling up to +40 % AllReduce (docs/derivation.md#large-scale-practice)")


_DIGITS = re.compile(r"(\d+)")


@lru_cache(maxsize=4096)
def _natural(name: str) -> tuple[object, ...]:
    return tuple(int(p) if p.isdigit() else p for p in _DIGITS.split(name))


def _version(v: str | None) -> tuple[int, int] | None:
    if not v:
        return None
    major, minor = v.split("-")[0].split(".")[:2]
    return int(major), int(minor)


@lru_cache(maxsize=256)
def _omitted(reason: str, source: str, note: str = "") -> Rationale:
    return Rationale(formula=f"not set: {reason}", source=source, note=note)


_NcclVariable = Callable[[dict[str, str], dict[str, Rationale], Host, Classification, Site, int], None]


def _hca(env: dict[str, str], why: dict[str, Rationale], host: Host, classification: Classification,
         site: Site, tiers: int) -> None:
    """NCCL_IB_HCA: every RDMA NIC by exact name, in rail order."""
    nics = sorted({(n.rail if n.rail is not None else 1 << 16, _natural(n.rdma_device), n.rdma_device,
                    n.rdma_port)
                   for n in host.nics})
    if nics:
        env["NCCL_IB_HCA"] = "=" + ",".join(f"{dev}:{port}" for _, _, dev, port in nics)
        why["NCCL_IB_HCA"] = Rationale(
            formula="'=' + ','.join(rdma_device:rdma_port), sorted by rail then name",
            inputs={"nics": len(nics)}, source=_S_ENV,
            note="'=' makes NCCL match names exactly (mlx5_1 would otherwise also match mlx5_10..mlx5_19)")
    else:
        why["NCCL_IB_HCA"] = _omitted("the host has no RDMA NIC in the inventory", _S_ENV)


def _traffic_class(env: dict[str, str], why: dict[str, Rationale], host: Host, classification: Classification,
                   site: Site, tiers: int) -> None:
    """NCCL_IB_TC: the RoCE TOS byte."""
    tos = classification.roce_tos
    env["NCCL_IB_TC"] = str(tos)
    why["NCCL_IB_TC"] = Rationale(
        formula="classification.roce_tos = roce_dscp[0] << 2 | ECT(0)",
        inputs={"roce_dscp": classification.roce_dscp[0], "roce_tos": tos,
                "roce_priority": classification.roce_priority},
        source=f"{_S_NCCL}: traffic_class of the data QPs (full IPv4 TOS byte)",
        note="must equal the switches' DSCP->lossless-TC map and the NIC dscp2prio map (consistency RT23x)")


def _fifo_traffic_class(env: dict[str, str], why: dict[str, Rationale], host: Host,
                        classification: Classification,
                        site: Site, tiers: int) -> None:
    """NCCL_IB_FIFO_TC: a second lossless RoCE class for CTS messages if the policy has one."""
    tos = classification.roce_tos
    fifo_tos, fifo_note = tos, ("same lossless class as the data: no second lossless priority with its own "
                                "RoCE DSCP in the policy")
    second = [d for d in classification.roce_dscp[1:]
              if classification.dscp_to_tc[d] in classification.lossless_priorities
              and classification.dscp_to_tc[d] != classification.roce_priority]
    if second:
        fifo_tos = second[0] << 2 | 0b10
        fifo_note = (f"second lossless class (DSCP {second[0]} -> priority "
                     f"{classification.dscp_to_tc[second[0]]}): CTS messages no longer wait behind bulk data "
                     "in the same queue, and stay lossless")
    env["NCCL_IB_FIFO_TC"] = str(fifo_tos)
    why["NCCL_IB_FIFO_TC"] = Rationale(
        formula="roce_dscp[k] << 2 | ECT(0) for a second lossless RoCE DSCP, else NCCL_IB_TC",
        inputs={"fifo_tos": fifo_tos, "cnp_tos": classification.cnp_tos},
        source=f"{_S_NCCL}: the receiver's QPs use FIFO_TC (ncclIbRtrQp fifoTc=true), NVIDIA/nccl PR #1194",
        note=fifo_note + ". Not the CNP class: that queue is strict and lossy, so a dropped CTS (or an RC "
             "ACK from the receiver QP [R]) costs a QP retransmission timeout (4.096 us x 2^NCCL_IB_TIMEOUT "
             "= 4.3 s at the default 20) and bulk CTS traffic would compete with CNPs")


def _service_level(env: dict[str, str], why: dict[str, Rationale], host: Host, classification: Classification,
                   site: Site, tiers: int) -> None:
    """NCCL_IB_SL: only with PCP trust."""
    if classification.trust == "pcp":
        env["NCCL_IB_SL"] = str(classification.roce_priority)
        why["NCCL_IB_SL"] = Rationale(
            formula="roce_priority (PCP trust: the SL becomes the 802.1p priority of VLAN-tagged RoCE)",
            inputs={"roce_priority": classification.roce_priority}, source=_S_NCCL)
    else:
        why["NCCL_IB_SL"] = _omitted("DSCP trust: switches and NICs classify on the TOS set by "
                                     "NCCL_IB_TC", _S_NCCL,
                                     "set it only with PCP trust or VLAN-tagged RoCE")


def _gid(env: dict[str, str], why: dict[str, Rationale], host: Host, classification: Classification,
         site: Site, tiers: int) -> None:
    """NCCL_IB_GID_INDEX pinned before NCCL 2.21, else NCCL_IB_ROCE_VERSION_NUM=2 for the auto-selection."""
    ver = _version(site.nccl_version)
    if ver is not None and ver < GID_AUTOSELECT_SINCE:
        env["NCCL_IB_GID_INDEX"] = str(PINNED_GID_INDEX)
        why["NCCL_IB_GID_INDEX"] = Rationale(
            formula=f"{PINNED_GID_INDEX} (RoCEv2 + IPv4 in the usual mlx5 GID table)",
            inputs={"nccl_version": site.nccl_version or "", "gid_index": PINNED_GID_INDEX},
            source=f"{_S_NCCL}; docs/derivation.md#nccl-environment (default 0 = RoCEv1 link-local before "
                   "2.21)",
            note="check with show_gids on every host: the index moves when addresses or VLAN interfaces "
                 "change")
        why["NCCL_IB_ROCE_VERSION_NUM"] = _omitted("ignored when NCCL_IB_GID_INDEX is pinned", _S_NCCL)
    else:
        known = f"NCCL {site.nccl_version} auto-selects" if ver else ("NCCL version unknown; 2.21+ "
                                                                      "auto-selects")
        why["NCCL_IB_GID_INDEX"] = _omitted(
            f"{known} a RoCEv2 GID (default -1)", _S_NCCL,
            "a pinned index can drift after interface events (address or VLAN changes renumber the GID "
            "table); "
            + ("" if ver else "set site.nccl_version: releases before 2.21 default to index 0 (RoCEv1)"))
        env["NCCL_IB_ROCE_VERSION_NUM"] = "2"
        why["NCCL_IB_ROCE_VERSION_NUM"] = Rationale(
            formula="2 (RoCEv2: routable UDP 4791, DSCP carried in the IP header)",
            inputs={"roce_version": 2},
            source=_S_NCCL, note="the GID auto-selection filters on this version; 2 is also the default, set "
                                 "for clarity")


def _socket_ifname(env: dict[str, str], why: dict[str, Rationale], host: Host, classification: Classification,
                   site: Site, tiers: int) -> None:
    """NCCL_SOCKET_IFNAME: the bootstrap interface, if the inventory names it."""
    if host.socket_ifname:
        env["NCCL_SOCKET_IFNAME"] = "=" + host.socket_ifname
        why["NCCL_SOCKET_IFNAME"] = Rationale(
            formula="'=' + host.socket_ifname (exact match)", inputs={"socket_ifname": host.socket_ifname},
            source=f"{_S_ENV} (bootstrap/OOB sockets)", note="keeps bootstrap off docker/virtual interfaces")
    else:
        why["NCCL_SOCKET_IFNAME"] = _omitted("host.socket_ifname not given in the inventory", _S_ENV,
                                             "NCCL then picks the first non-loopback interface; name it if "
                                             "hosts have docker/virtual interfaces")


def _qps(env: dict[str, str], why: dict[str, Rationale], host: Host, classification: Classification,
         site: Site, tiers: int) -> None:
    """NCCL_IB_QPS_PER_CONNECTION / NCCL_IB_SPLIT_DATA_ON_QPS: spread connections over ECMP uplinks."""
    if tiers >= 2 and not site.adaptive_routing:
        env["NCCL_IB_QPS_PER_CONNECTION"] = str(QPS_PER_CONNECTION)
        env["NCCL_IB_SPLIT_DATA_ON_QPS"] = "1"
        qp_inputs: dict[str, float | int | str | bool] = {"tiers": tiers, "adaptive_routing": False}
        why["NCCL_IB_QPS_PER_CONNECTION"] = Rationale(
            formula=f"{QPS_PER_CONNECTION} when tiers >= 2 and no adaptive routing (default 1)",
            inputs=qp_inputs,
            source=f"{_S_META}; {_S_NCCL}",
            note="each QP has its own UDP source port, so ECMP can place a connection on several uplinks")
        why["NCCL_IB_SPLIT_DATA_ON_QPS"] = Rationale(
            formula="1: split every message over the QPs (default 0 = round-robin whole messages)",
            inputs=qp_inputs,
            source=f"{_S_META}; {_S_NCCL}",
            note="spreads even a single large message; costs some latency on small messages")
    else:
        reason = "adaptive routing sprays packets in the switches" if site.adaptive_routing else \
            "single switch tier: no ECMP choice between uplinks"
        why["NCCL_IB_QPS_PER_CONNECTION"] = _omitted(reason, _S_NCCL, "NCCL default 1 QP per connection")
        why["NCCL_IB_SPLIT_DATA_ON_QPS"] = _omitted(reason, _S_NCCL)


def _adaptive_routing(env: dict[str, str], why: dict[str, Rationale], host: Host,
                      classification: Classification, site: Site, tiers: int) -> None:
    """NCCL_IB_ADAPTIVE_ROUTING: 1 when the switches route adaptively (``site.adaptive_routing``).

    NCCL's default (-2) turns its AR-capable transfers on for an InfiniBand link layer only, so on RoCE they
    stay off unless set; with packets of one message spread over several paths the data must be written
    before the completion that announces it (messages above ``NCCL_IB_AR_THRESHOLD``, 8192 B). The audit's
    RT461 checks the same variable."""
    if site.adaptive_routing:
        env["NCCL_IB_ADAPTIVE_ROUTING"] = "1"
        why["NCCL_IB_ADAPTIVE_ROUTING"] = Rationale(
            formula="1 when site.adaptive_routing (NCCL default -2: on for an InfiniBand link layer only, "
                    "so off on RoCE)",
            inputs={"adaptive_routing": True},
            source=f"{_S_NCCL}; {_S_ENV}",
            note="the switches spread one connection's packets over several paths: NCCL writes the data "
                 "before the completion that announces it (messages above NCCL_IB_AR_THRESHOLD, 8192 B)")
    else:
        why["NCCL_IB_ADAPTIVE_ROUTING"] = _omitted("no adaptive routing (site.adaptive_routing false)",
                                                   _S_NCCL, "NCCL default: off on RoCE")


#: one function per variable group; each adds its variables to ``env`` and its reasons to ``why``
_NCCL_VARIABLES: tuple[_NcclVariable, ...] = (_hca, _traffic_class, _fifo_traffic_class, _service_level, _gid,
                                              _socket_ifname, _qps, _adaptive_routing)


def derive_nccl_env(host: Host, classification: Classification, site: Site,
                    tiers: int) -> tuple[dict[str, str], dict[str, Rationale]]:
    """NCCL environment variables for ``host`` and the reason for each (also for those left unset).

    Args:
        host: the GPU server (its RDMA NICs, ``socket_ifname``).
        classification: the site classification (``roce_tos``, ``roce_priority``, ``trust``, lossless
            priorities and their DSCPs).
        site: ``nccl_version`` (None = unknown) and ``adaptive_routing``.
        tiers: switch tiers of the fabric (1 = single leaf layer, 2 = leaf/spine, 3 = + superspine).

    Returns:
        ``(env, rationale)``: ``env`` maps variable -> value (string, sorted by name, shell-safe);
        ``rationale`` has one entry per variable considered, including those deliberately not set
        (their formula starts with ``"not set:"``).

    Raises:
        ValueError: a value that would need shell quoting (cannot happen with validated inventories).
    """
    env: dict[str, str] = {}
    why: dict[str, Rationale] = {}
    for add in _NCCL_VARIABLES:
        add(env, why, host, classification, site, tiers)

    why["NCCL_IB_TIMEOUT"] = _omitted("NCCL default 20 (4.096 us x 2^20 = 4.3 s per attempt) kept", _S_NCCL,
                                      "a lossless fabric should not need retransmissions; raise it only for "
                                      "very long failover times")
    why["NCCL_IB_RETRY_CNT"] = _omitted("NCCL default 7 (the RC maximum) kept", _S_NCCL)

    for key, value in env.items():
        if not SHELL_SAFE_RE.fullmatch(value):
            raise ValueError(f"{host.name}: {key}={value!r} is not shell-safe")
    return dict(sorted(env.items())), dict(sorted(why.items()))
