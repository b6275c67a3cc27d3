"""Synthetic rail-optimised fabrics for benchmarks and scale tests.

:func:`rail_optimised_fabric` builds the inventory *data* (a plain dict, as if loaded from YAML) of
N hosts x 8 NICs at 400G on NVIDIA SN5600 (Spectrum-4) switches, the Spectrum-X style layout of
``inventories/spectrum-x-su.yaml`` repeated:

* scalable unit (SU) = 32 hosts; its 8 leaves serve one rail each (32 x 400G down, 16 x 800G up);
* up to 128 hosts (4 SUs, 32 leaves) the 16 spines of one pod connect every leaf (two tiers);
* beyond that, pods of 4 SUs with 16 spines each (32 x 800G down, 32 x 800G up) and superspine
  planes: spine i of every pod connects to the 16 superspines of plane i, 2 links each (three tiers).
"""

from __future__ import annotations

HOSTS_PER_SU = 32
RAILS = 8
SU_PER_POD = 4
SPINES_PER_POD = 16


def rail_optimised_fabric(n_hosts: int, site: str = "synthetic") -> dict[str, object]:
    """Inventory data for ``n_hosts`` (a multiple of 32) hosts x 8 NICs.

    Raises:
        ValueError: ``n_hosts`` not a positive multiple of 32.
    """
    if n_hosts <= 0 or n_hosts % HOSTS_PER_SU:
        raise ValueError(f"n_hosts must be a positive multiple of {HOSTS_PER_SU}, got {n_hosts}")
    n_su = n_hosts // HOSTS_PER_SU
    n_pods = -(-n_su // SU_PER_POD)
    three_tier = n_pods > 1
    switches: list[dict[str, object]] = []
    links: list[dict[str, object]] = []
    hosts: list[dict[str, object]] = []
    mgmt = iter(range(1, 1 << 24))

    def addr() -> str:
        n = next(mgmt)
        return f"10.{(n >> 16) & 255}.{(n >> 8) & 255}.{n & 255}"

    spine_ports_up = 32 if three_tier else 0
    leaves_per_pod = SU_PER_POD * RAILS
    for p in range(n_pods):
        for s in range(SPINES_PER_POD):
            ports = [{"name": "Ethernet[0-248/8]", "speed": "800G"}]  # 32 down
            if three_tier:
                ports.append({"name": "Ethernet[256-504/8]", "speed": "800G"})  # 32 up
            switches.append({"name": f"p{p}-spine{s}", "platform": "sonic", "model": "SN5600", "role": "spine",
                             "mgmt": {"host": addr()}, "ports": ports})
    for su in range(n_su):
        pod, su_in_pod = divmod(su, SU_PER_POD)
        for r in range(RAILS):
            leaf = f"su{su}-leaf{r}"
            switches.append({"name": leaf, "platform": "sonic", "model": "SN5600", "role": "leaf", "rail": r,
                             "mgmt": {"host": addr()},
                             "ports": [{"name": "Ethernet[0-124/4]", "speed": "400G", "breakout": "2x400G"},
                                       {"name": "Ethernet[128-248/8]", "speed": "800G"}]})
            leaf_in_pod = su_in_pod * RAILS + r
            for k in range(16):  # one uplink to each pod spine
                links.append({"a": f"{leaf}:Ethernet{128 + 8 * k}",
                              "b": f"p{pod}-spine{k}:Ethernet{8 * leaf_in_pod}",
                              "cable_length": "30m", "media": "optic"})
    if three_tier:
        planes = SPINES_PER_POD
        per_plane = n_pods * spine_ports_up // 64  # superspines with 64 ports each
        per_plane = max(1, per_plane)
        for plane in range(planes):
            for j in range(per_plane):
                switches.append({"name": f"ss{plane}-{j}", "platform": "sonic", "model": "SN5600",
                                 "role": "superspine", "mgmt": {"host": addr()},
                                 "ports": [{"name": "Ethernet[0-504/8]", "speed": "800G"}]})
        for p in range(n_pods):
            for s in range(SPINES_PER_POD):
                for u in range(spine_ports_up):
                    j = u % per_plane
                    slot = p * (spine_ports_up // per_plane) + u // per_plane
                    links.append({"a": f"p{p}-spine{s}:Ethernet{256 + 8 * u}", "b": f"ss{s}-{j}:Ethernet{8 * slot}",
                                  "cable_length": "100m", "media": "optic"})
    for h in range(n_hosts):
        su, idx = divmod(h, HOSTS_PER_SU)
        hosts.append({"name": f"gpu{h:05d}", "mgmt": {"host": addr()}, "socket_ifname": "eno1",
                      "nics": [{"model": "connectx-7", "netdev": f"ens{r + 1}f0np0", "rdma_device": f"mlx5_{r}",
                                "speed": "400G", "rail": r, "switch_port": f"su{su}-leaf{r}:Ethernet{4 * idx}",
                                "cable_length": "3m"} for r in range(RAILS)]})
    del leaves_per_pod
    return {"site": {"name": site, "rail_optimised": True, "nccl_version": "2.23.4"},
            "switches": switches, "links": links, "hosts": hosts}
