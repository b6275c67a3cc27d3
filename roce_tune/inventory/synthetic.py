"""Synthetic rail-optimised fabrics for benchmarks and scale tests, of any host count.

:func:`rail_optimised_intent` writes the compact ``fabric:`` intent (:mod:`roce_tune.inventory.intent`)
of N hosts x 8 NICs at 400G on NVIDIA SN5600 (Spectrum-4) switches — the Spectrum-X layout of
``inventories/spectrum-x-su.yaml`` repeated — and :func:`rail_optimised_fabric` expands it into the
full form (a plain dict, as if a hand-written file had been loaded):

* a group (scalable unit, SU) is 32 hosts; its 8 leaves serve one rail each (32 x 400G down as 2 x 400G
  breakouts, 16 x 800G up); the last SU may be partial (500 hosts = 15 SUs + 20 hosts);
* a pod is 4 SUs (32 leaves) under 16 spines (32 x 800G down, one link from every leaf);
* more than one pod adds superspine planes: spine ``s`` of every pod connects to the superspines of
  plane ``s`` (64 x 800G), 32 uplinks spread over them.
"""

from __future__ import annotations

from typing import Any

from roce_tune.inventory.intent import expand_fabric
from roce_tune.inventory.models import FabricIntent
from roce_tune.platforms import DEFAULT_SWITCH_PLATFORM

HOSTS_PER_SU = 32
RAILS = 8
SU_PER_POD = 4
SPINES_PER_POD = 16


def rail_optimised_intent(n_hosts: int, site: str = "synthetic") -> dict[str, Any]:
    """Inventory data in intent form (``site`` + ``fabric``) for ``n_hosts`` hosts x 8 NICs.

    Raises:
        ValueError: ``n_hosts`` < 1.
    """
    if n_hosts < 1:
        raise ValueError(f"n_hosts must be at least 1, got {n_hosts}")
    nos = DEFAULT_SWITCH_PLATFORM  # SN5600: the registry's default runs on it
    return {
        "site": {"name": site, "rail_optimised": True, "nccl_version": "2.23.4"},
        "fabric": {
            "hosts": n_hosts, "rails": RAILS, "hosts_per_group": HOSTS_PER_SU, "groups_per_pod": SU_PER_POD,
            "host": {"name": "gpu{h:05d}", "mgmt": "10.1.0.1", "socket_ifname": "eno1",
                     "nic": {"model": "connectx-7", "speed": "400G", "netdev": "ens{r+1}f0np0",
                             "rdma_device": "mlx5_{r}", "cable_length": "3m"}},
            "leaf": {"name": "su{g}-leaf{l}", "platform": nos, "model": "SN5600", "mgmt": "10.0.64.1",
                     "host_ports": {"name": "Ethernet{4*p}", "speed": "400G", "breakout": "2x400G"},
                     "uplinks": {"count": SPINES_PER_POD, "name": "Ethernet{128+8*u}", "speed": "800G",
                                 "cable_length": "30m", "media": "optic"}},
            "spine": {"name": "p{pod}-spine{s}", "platform": nos, "model": "SN5600", "mgmt": "10.0.0.1",
                      "ports": {"count": 32, "name": "Ethernet{8*q}", "speed": "800G"},
                      "uplinks": {"count": 32, "name": "Ethernet{256+8*u}", "speed": "800G",
                                  "cable_length": "100m", "media": "optic"}},
            "superspine": {"name": "ss{plane}-{j}", "platform": nos, "model": "SN5600", "mgmt": "10.0.128.1",
                           "ports": {"count": 64, "name": "Ethernet{8*q}", "speed": "800G"}},
        },
    }


def rail_optimised_fabric(n_hosts: int, site: str = "synthetic") -> dict[str, Any]:
    """Inventory data in full form (``site``, ``switches``, ``links``, ``hosts``) for ``n_hosts`` hosts.

    Raises:
        ValueError: ``n_hosts`` < 1.
    """
    data = rail_optimised_intent(n_hosts, site)
    expansion = expand_fabric(FabricIntent.model_validate(data["fabric"]))
    return {"site": data["site"], "switches": expansion.switches, "links": expansion.links,
            "hosts": expansion.hosts}
