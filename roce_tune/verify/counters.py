"""Parse NIC and switch counter output into flat ``name -> int`` maps, and take deltas.

Pure functions: text in, numbers out. Shapes follow what the tools print (field captures in
``shared/field-cases/counters``):

* ``ethtool -S IF`` — ``     rx_prio3_pause: 12`` lines (mlx5 names, docs/derivation.md#counters); also the
  ``diff -y`` side-by-side capture people take of two ``ethtool -S`` runs (:func:`parse_side_by_side`).
* RDMA hw_counters — ``grep -H "" /sys/class/infiniband/DEV/ports/N/hw_counters/*`` lines
  (``…/hw_counters/np_cnp_sent:1333``), plain ``name value`` / ``name: value`` lines, or
  ``rdma statistic show link DEV/N`` (``link mlx5_0/1 np_cnp_sent 1333 …``).

Switch counters (``SwitchCounters.ports``) are read by each platform's counter reader, with the names
of :mod:`roce_tune.platforms.counters`.
"""

from __future__ import annotations

import re

from pydantic import BaseModel, ConfigDict, Field

from roce_tune.platforms.counters import merge_ports, to_int

__all__ = [
    "CounterSnapshot",
    "HostNicCounters",
    "SwitchCounters",
    "delta_counts",
    "delta_snapshot",
    "merge_ports",
    "parse_ethtool_stats",
    "parse_hw_counters",
    "parse_side_by_side",
    "to_int",
]

_ETHTOOL_RE = re.compile(r"^\s*([A-Za-z0-9_.\-\[\]]+):\s+(-?\d+)\s*$")
_HW_PATH_RE = re.compile(r"hw_counters/([A-Za-z0-9_]+):\s*(-?\d+)\s*$")
_HW_PLAIN_RE = re.compile(r"^\s*([a-z][a-z0-9_]+)\s*:?\s+(-?\d+)\s*$")


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class HostNicCounters(_Frozen):
    """Counters of one NIC port of one host.

    Attributes:
        ethtool: ``ethtool -S`` name → value (packets, bytes, pause frames; ``*_pause_duration`` µs).
        hw: RDMA hw_counters name → value (events/packets).
        errors: what could not be read (command failed, tool missing).
    """

    host: str
    netdev: str
    rdma_device: str
    ethtool: dict[str, int] = Field(default_factory=dict)
    hw: dict[str, int] = Field(default_factory=dict)
    errors: list[str] = Field(default_factory=list)


class SwitchCounters(_Frozen):
    """Counters of one switch: ``ports[port][name]`` (names in the module docstring).

    ``unsupported`` lists counter families the platform (or this tool) could not read.
    """

    switch: str
    platform: str
    ports: dict[str, dict[str, int]] = Field(default_factory=dict)
    unsupported: list[str] = Field(default_factory=list)
    errors: list[str] = Field(default_factory=list)


class CounterSnapshot(_Frozen):
    """Counters of every device at one moment (``taken_at`` Unix s), or a delta between two.

    For a delta, ``is_delta`` is True, ``seconds`` the time between the snapshots, ``resets``
    lists counters that went backwards (cleared or wrapped: their ``after`` value is used) and
    ``unread`` the counters (per device/port) read after the run but not before (unreachable device,
    ``N/A`` value): they have no delta and are left out, never counted from 0.
    """

    taken_at: float
    hosts: list[HostNicCounters] = Field(default_factory=list)
    switches: list[SwitchCounters] = Field(default_factory=list)
    is_delta: bool = False
    seconds: float | None = None
    resets: list[str] = Field(default_factory=list)
    unread: list[str] = Field(default_factory=list)

    def host(self, name: str) -> list[HostNicCounters]:
        """The NIC counters of host ``name`` (empty when not collected)."""
        return [h for h in self.hosts if h.host == name]


# ---------------------------------------------------------------------------------------- hosts
def parse_ethtool_stats(text: str) -> dict[str, int]:
    """``ethtool -S`` output → ``{name: value}``. Lines that are not ``name: integer`` are skipped."""
    out: dict[str, int] = {}
    for line in text.splitlines():
        m = _ETHTOOL_RE.match(line)
        if m:
            out[m.group(1)] = int(m.group(2))
    return out


def parse_side_by_side(text: str) -> tuple[dict[str, int], dict[str, int]]:
    """A ``diff -y`` of two ``ethtool -S`` captures → (before, after).

    Shape (field capture ``mlx5-ethtool-prio-delta-dscp-one-direction.txt``)::

        rx_prio0_packets: 4939696624      |     rx_prio0_packets: 4943711983     DIFF: 4015359

    Anything after the right-hand value (``DIFF: …``, comments) is ignored. A line both runs share has no
    gutter mark in GNU ``diff -y`` (``tx_prio3_pause: 900      tx_prio3_pause: 900``): the counter did not
    move, and is read too.
    """
    before: dict[str, int] = {}
    after: dict[str, int] = {}
    pat = re.compile(r"^\s*([A-Za-z0-9_.\-]+):\s+(\d+)\s+(?:[|<>]\s+)?([A-Za-z0-9_.\-]+):\s+(\d+)")
    for line in text.splitlines():
        m = pat.match(line)
        if m and m.group(1) == m.group(3):
            before[m.group(1)] = int(m.group(2))
            after[m.group(3)] = int(m.group(4))
    return before, after


def _rdma_link_tokens(line: str, in_link: bool) -> tuple[list[str] | None, bool]:
    """Name/value tokens of one ``rdma statistic`` line — a ``link <dev>/<port> …`` record or, inside one
    (``in_link``), an indented continuation (``rdma statistic`` wraps long records) — None for any other
    line; and whether a record is still open after this line."""
    stripped = line.strip()
    cont = in_link and line[:1].isspace() and len(stripped.split()) % 2 == 0 and len(stripped.split()) >= 2
    if cont:
        return stripped.split(), True
    if stripped.startswith("link ") and "/" in stripped.split()[1]:
        return stripped.split()[2:], True
    return None, in_link and bool(stripped)


def parse_hw_counters(text: str) -> dict[str, int]:
    """RDMA hw_counters in any of the three shapes in the module docstring → ``{name: value}``.

    When any line has the sysfs path form, only such lines are read (the capture may also hold
    ``ethtool -S`` lines, which look like plain ``name: value`` lines).
    """
    out: dict[str, int] = {}
    paths_only = any(_HW_PATH_RE.search(line) for line in text.splitlines())
    in_link = False
    for line in text.splitlines():
        m = _HW_PATH_RE.search(line)
        if m:
            out[m.group(1)] = int(m.group(2))
            continue
        if paths_only:
            continue
        toks, in_link = _rdma_link_tokens(line, in_link)
        if toks is not None:
            for name, val in zip(toks[::2], toks[1::2]):
                value = to_int(val)
                if value is not None:
                    out[name] = value
            continue
        m = _HW_PLAIN_RE.match(line)
        if m:
            out[m.group(1)] = int(m.group(2))
    return out


# ---------------------------------------------------------------------------------------- deltas
def delta_counts(before: dict[str, int], after: dict[str, int], where: str,
                 resets: list[str], unread: list[str] | None = None) -> dict[str, int]:
    """``after − before`` for every name read in both snapshots.

    A counter missing before (the device or port was not read, or printed ``N/A``) has no delta: it is
    left out (unknown is not zero; counting it from 0 would take its total since boot for the run's) and
    ``where: N counters …`` is appended to ``unread``. One that went backwards was cleared or wrapped, so
    its ``after`` value is the delta and ``where:name`` is appended to ``resets``.
    """
    out: dict[str, int] = {}
    missing = []
    for name, value in after.items():
        prev = before.get(name)
        if prev is None:
            missing.append(name)
        elif value < prev:
            resets.append(f"{where}:{name}")
            out[name] = value
        else:
            out[name] = value - prev
    if missing and unread is not None:
        shown = ", ".join(missing[:4]) + (", …" if len(missing) > 4 else "")
        unread.append(f"{where}: {len(missing)} counter{'s' if len(missing) > 1 else ''} not read before "
                      f"the run, no delta ({shown})")
    return out


def delta_snapshot(before: CounterSnapshot, after: CounterSnapshot) -> CounterSnapshot:
    """Per-counter deltas between two snapshots of the same devices (see :func:`delta_counts`).

    Devices or ports present only in ``after`` are kept without counters (no delta) and noted in
    ``unread``; the errors of both snapshots are kept.
    """
    resets: list[str] = []
    unread: list[str] = []
    hosts = []
    prev_h = {(h.host, h.netdev): h for h in before.hosts}
    for h in after.hosts:
        b = prev_h.get((h.host, h.netdev)) or HostNicCounters(host=h.host, netdev=h.netdev,
                                                                rdma_device=h.rdma_device)
        hosts.append(h.model_copy(update={
            "ethtool": delta_counts(b.ethtool, h.ethtool, f"{h.host}/{h.netdev}", resets, unread),
            "hw": delta_counts(b.hw, h.hw, f"{h.host}/{h.rdma_device}", resets, unread),
            "errors": sorted(set(b.errors) | set(h.errors))}))
    switches = []
    prev_s = {s.switch: s for s in before.switches}
    for s in after.switches:
        bs = prev_s.get(s.switch) or SwitchCounters(switch=s.switch, platform=s.platform)
        ports = {port: delta_counts(bs.ports.get(port, {}), vals, f"{s.switch}:{port}", resets, unread)
                 for port, vals in s.ports.items()}
        errors = sorted(set(bs.errors) | set(s.errors))
        switches.append(s.model_copy(update={"ports": ports, "errors": errors}))
    return CounterSnapshot(taken_at=after.taken_at, hosts=hosts, switches=switches, is_delta=True,
                           seconds=round(after.taken_at - before.taken_at, 3), resets=resets, unread=unread)
