"""Name patterns of everything an inventory names (devices, interfaces, netdevs, RDMA devices, profiles,
environment variables, management hosts, link endpoints).

The inventory schema (:mod:`roce_tune.inventory.models`) validates every name against these, and the
renderers check them again before a name reaches a configuration or script (so rendered output can never
carry injected commands); a module of its own, below both, so that neither imports the other.
"""

from __future__ import annotations

import re

DEVICE_NAME_RE = re.compile(r"^[A-Za-z][A-Za-z0-9._-]{0,62}$")
#: interface names: Ethernet0, Ethernet1/1, swp1s0, et-0/0/0:1, xe-0/0/1.0
INTERFACE_NAME_RE = re.compile(r"^[A-Za-z][A-Za-z0-9/:._-]{0,63}$")
#: interface names or ranges in brackets: Ethernet[0-124/4], swp[1-32], Ethernet1/[1-32]
INTERFACE_PATTERN_RE = re.compile(r"^[A-Za-z][A-Za-z0-9/:._-]*"
                                  r"(\[\d{1,4}-\d{1,4}(/\d{1,3})?\][A-Za-z0-9/:._-]*)?$")
NETDEV_RE = re.compile(r"^[A-Za-z][A-Za-z0-9_.-]{0,14}$")  # IFNAMSIZ 16 incl. NUL
RDMA_DEVICE_RE = re.compile(r"^[A-Za-z][A-Za-z0-9_]{0,63}$")
PROFILE_NAME_RE = re.compile(r"^[A-Za-z][A-Za-z0-9_-]{0,63}$")
ENV_VAR_RE = re.compile(r"^[A-Z_][A-Z0-9_]{0,127}$")
HOSTNAME_RE = re.compile(r"^(?=.{1,253}$)[A-Za-z0-9]([A-Za-z0-9.:-]*[A-Za-z0-9])?$")
ENDPOINT_RE = re.compile(r"^([A-Za-z][A-Za-z0-9._-]{0,62}):([A-Za-z][A-Za-z0-9/:._-]{0,63})$")
