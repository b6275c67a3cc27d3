"""Per-NIC facts a run depends on: netdev MTU, RoCE active MTU, port state and RoCE v2 GIDs.

Pure parsers of rdma-core ``ibv_devinfo -d DEV`` and Mellanox ``show_gids`` output, plus the RoCE
MTU rule the checks use as an oracle.
"""

from __future__ import annotations

import re

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["IB_MTUS", "GidEntry", "NicFacts", "parse_ibv_devinfo", "parse_show_gids", "roce_active_mtu"]

#: IB MTU enum values (bytes) a RoCE port can run (IBTA; ``ibv_devinfo`` prints ``4096 (5)``).
IB_MTUS = (256, 512, 1024, 2048, 4096)
#: Bytes the kernel subtracts from the netdev MTU before picking the RoCE MTU: GRH 40 + UDP 8 + BTH 12
#: + XRC ext 4 + AtomicETH 28 + ICRC 4 (torvalds/linux include/rdma/ib_addr.h ``iboe_get_mtu``).
ROCE_HEADER_BYTES = 96


def roce_active_mtu(netdev_mtu: int) -> int | None:
    """Largest IB MTU that fits in ``netdev_mtu − 96`` (the kernel's ``iboe_get_mtu``).

    >>> roce_active_mtu(9000), roce_active_mtu(4200), roce_active_mtu(1500)
    (4096, 4096, 1024)
    """
    room = netdev_mtu - ROCE_HEADER_BYTES
    fits = [m for m in IB_MTUS if m <= room]
    return fits[-1] if fits else None


class GidEntry(BaseModel):
    """One GID table row (``show_gids``): ``ver`` is ``v1`` (RoCE v1) or ``v2`` (RoCE v2)."""

    model_config = ConfigDict(frozen=True)

    device: str
    port: int
    index: int
    gid: str
    ipv4: str | None
    ver: str
    netdev: str | None


class NicFacts(BaseModel):
    """What one host's NIC port looks like right now (MTUs in bytes)."""

    model_config = ConfigDict(frozen=True)

    host: str
    netdev: str
    rdma_device: str
    netdev_mtu: int | None = None
    active_mtu: int | None = None
    max_mtu: int | None = None
    port_state: str | None = None
    link_layer: str | None = None
    gids: list[GidEntry] = Field(default_factory=list)
    errors: list[str] = Field(default_factory=list)
    #: whether a GID table was read (False: show_gids missing or failed); None = not said, known when ``gids``
    gid_table_read: bool | None = None

    @property
    def gids_known(self) -> bool:
        """True when the GID table was read (an empty table then means "no GID", not "not captured")."""
        return self.gid_table_read if self.gid_table_read is not None else bool(self.gids)

    @property
    def roce_v2_ipv4_gid_indexes(self) -> list[int]:
        """GID indexes of RoCE v2 entries with an IPv4 address (what ``NCCL_IB_GID_INDEX`` usually names)."""
        return sorted(g.index for g in self.gids if g.ver.lower() == "v2" and g.ipv4)


def parse_ibv_devinfo(text: str) -> dict[int, dict[str, str | int]]:
    """``ibv_devinfo [-d DEV]`` → ``{port: {"state", "active_mtu", "max_mtu", "link_layer"}}`` (MTUs in
    bytes)."""
    ports: dict[int, dict[str, str | int]] = {}
    cur: dict[str, str | int] | None = None
    for line in text.splitlines():
        m = re.match(r"^\s*port:\s*(\d+)\s*$", line)
        if m:
            cur = ports.setdefault(int(m.group(1)), {})
            continue
        if cur is None:
            continue
        m = re.match(r"^\s*(state|active_mtu|max_mtu|link_layer):\s*(.+?)\s*$", line)
        if m:
            key, val = m.group(1), m.group(2)
            if key.endswith("mtu"):
                num = re.match(r"(\d+)", val)
                if num:
                    cur[key] = int(num.group(1))
            else:
                cur[key] = val.split()[0]
    return ports


_IPV4 = re.compile(r"^\d{1,3}(\.\d{1,3}){3}$")


def parse_show_gids(text: str) -> list[GidEntry]:
    """``show_gids [DEV]`` rows → :class:`GidEntry` list (the IPv4 column may be empty)."""
    out: list[GidEntry] = []
    for line in text.splitlines():
        toks = line.split()
        if len(toks) < 5 or not toks[1].isdigit() or not toks[2].isdigit() or ":" not in toks[3]:
            continue
        rest = toks[4:]
        ipv4 = rest.pop(0) if rest and _IPV4.match(rest[0]) else None
        if not rest:
            continue
        out.append(GidEntry(device=toks[0], port=int(toks[1]), index=int(toks[2]), gid=toks[3], ipv4=ipv4,
                            ver=rest[0], netdev=rest[1] if len(rest) > 1 else None))
    return out
