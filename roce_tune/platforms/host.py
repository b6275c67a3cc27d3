"""Host renderer: an idempotent bash script per host (``<name>.sh``) and its NCCL environment.
The script sets, per NIC port, global (802.3x) pause off where the port has PFC, DSCP trust, the PFC vector
and cable length, the plan's whole DSCP->priority map (all 64 DSCPs), the netdev MTU, the RoCE TOS (RDMA-CM
default and the mlx5 global traffic class), RoCE v2 for RDMA-CM, DCQCN enable per priority and its parameters,
and the CNP DSCP/priority; then it reads every value back and exits 1 naming each mismatch. With ``--save
FILE`` it first writes FILE, a restore point: every value it is about to change, read as found and written as
the commands that put it back (apply runs it when a host push fails). Before changing anything it checks that
each NIC's netdev answers ``mlnx_qos`` and its RDMA device port gives a ToS (``cma_roce_tos``); that, any NIC
tool failing later or a sysfs write the driver refuses, stops it with exit 2 naming the command (or file and
value) and the tool's own message (these tools print errors on stdout). ``--boot`` (the systemd unit's run,
where no rollback follows) names a NIC that fails that check, or whose step fails later (each NIC is then
configured on its own, in a subshell: :data:`NIC_SECTIONS`), and leaves it out, configures and reads back the
others and ends with exit 4 naming every NIC it left out: one dead NIC must not leave the healthy ones lossy.
``--check`` changes nothing and only reads back. All of it is runtime state the driver forgets at reboot and
driver reload, so a run that sets the values also installs the host's whole script, the systemd unit
``hosts/roce-tune-host.service`` (enabled, not started) and a udev rule that re-runs the unit when an mlx5
netdev or RDMA device appears (:data:`PERSIST_SCRIPT`, :data:`UNIT_PATH`, :data:`UDEV_RULE_PATH`); the restore
point puts them back as found and ``--check`` reports them missing, stale or disabled. Every device name and
value goes through ``shell_quote``; every sysfs path is prefixed with ``${ROCE_TUNE_SYSROOT:-}`` so tests can
run the real script against a fake tree.

Checked against:

* Mellanox/mlnx-tools ``python/mlnx_qos`` [V]: ``--trust pcp|dscp``, ``--pfc`` (8 comma-separated 0/1),
  ``--dscp2prio set,D,P``, ``--cable_len`` (metres; the tool takes 0..65535, the mlx5 driver keeps only
  1..999, see :data:`CABLE_LEN_RANGE`). ``--pfc`` and ``--cable_len`` both go to
  one ``set_ieee_pfc(pfc_en, delay)`` call and each defaults the other to 0, so they are given together;
  ``--trust`` and ``--dscp2prio`` are refused in one call, so they are two calls. Read-back parses its
  report: ``Priority trust state: <t>``, ``Cable len: <n>``, ``PFC configuration:`` / ``enabled 0 0 0 1 ...``,
  ``dscp2prio mapping:`` / ``prio:<p> dscp:<dd>,<dd>,``.
* Global pause [V]: ``ethtool -a`` prints ``RX:``/``TX:`` on|off (ethtool ``netlink/pause.c``); ``ethtool -A
  IF rx off tx off``, sent only when it differs: ethtool's ioctl path exits 78 on a request that changes
  nothing (``ethtool.c`` ``do_spause``); mlx5 refuses pause autonegotiation (-EINVAL) and a function that
  does not manage the port (-EOPNOTSUPP; ``en_ethtool.c`` ``mlx5e_ethtool_set_pauseparam``). ConnectX ports
  start with it on and NVIDIA's PFC setup turns it off first (NVIDIA "Flow Control", ConnectX-4 and above:
  https://docs.nvidia.com/networking/display/freebsdv371/Flow+Control).
* Default DSCP->priority with DSCP trust is ``dscp >> 3`` (docs/derivation.md#dcqcn-parameters, ``mlnx_qos``
  output [V]), which puts CS3/AF3x (24-31) on priority 3, and a map someone changed keeps its entries: so
  the plan's whole map (all 64 DSCPs) is written. ``--dscp2prio`` is an optparse ``append`` option and
  mlnx_qos sends one dcbnl ``set_ieee_app`` per value in the same run (mlnx-tools ``python/mlnx_qos`` [V]),
  so every entry where the NIC's map differs goes in one call (64 calls would start Python 64 times); the
  map is read from the report's ``prio:<p> dscp:<dd>,...`` lines, which ``printAppSelector`` wraps at 8
  DSCPs a line and leaves out for a priority without one (``python/dcbnetlink.py`` [V]). Over dcbnl,
  mlnx_qos ``--trust dscp`` sets all 64 DSCP entries to
  that default and ``--trust pcp`` deletes every one (mlnx-tools ``python/dcbnetlink.py``
  ``setDefaultAppEntry``/``delAppEntry`` [V]): the restore point saves only entries found under DSCP trust
  that the run changes (one ``mlnx_qos`` call), and a NIC found on PCP trust gets its map out of use again
  from its trust; a NIC found on DSCP trust that the plan puts on PCP trust gets its whole found map saved
  (one ``mlnx_qos`` call), since the trust change drops it. A DSCP the report leaves out while it lists
  others had its app entry deleted (``--dscp2prio del,D,P``): mlx5 ``mlx5e_dcbnl_ieee_delapp``
  (drivers/net/ethernet/mellanox/mlx5/core/en_dcbnl.c) [V] then maps it to priority 0, which the read-back
  names as its running priority (``0 (no dscp2prio entry)``); the restore point deletes the entry the run
  sets for it again (``del,D,P``, which the driver takes only while the entry holds P).
* Mellanox/mlnx-tools ``sbin/cma_roce_tos`` / ``cma_roce_mode`` [V]: ``-d <dev> -p <port> -t <tos>``,
  ``-m 2`` writes ``RoCE v2``; without ``-t``/``-m`` they print the current value (used for read-back;
  they manage configfs themselves, so the script never touches ``/sys/kernel/config``).
* MLNX_OFED mlx5 ``tc/<port>/traffic_class`` [V, driver source]: reads back as ``Global tclass=<n>``; the
  global value overrides every QP's traffic class, so it is unset where NCCL asks for another ToS
  (:func:`forces_global_tclass`).
* MLNX_OFED ECN sysfs [S]: ``/sys/class/net/<if>/ecn/roce_{rp,np}/enable/<prio>`` and parameters directly
  under ``roce_rp/`` / ``roce_np/`` (``rpg_ai_rate``, ``cnp_dscp``, ``cnp_802p_prio`` …;
  docs/derivation.md#host-and-nic; docs/derivation.md#dcqcn-parameters writes ``.../params/<attr>`` — the
  MLNX_OFED layout is used). The names mirror the NVIDIA DOCA "DCQCN CC Parameters" names [V].
* Alternatives printed as comments: debugfs ``/sys/kernel/debug/mlx5/<pci>/cc_params/`` names from
  ``drivers/infiniband/hw/mlx5/cong.c`` [V]; ``mlxconfig`` keys from mstflint's parameter table [V].
"""

from __future__ import annotations

import math
import operator
import re
from functools import lru_cache
from typing import NamedTuple

from roce_tune.names import DEVICE_NAME_RE, ENDPOINT_RE, ENV_VAR_RE, NETDEV_RE, RDMA_DEVICE_RE
from roce_tune.plan import HostPlan, NicPlan, Plan
from roce_tune.platforms.base import PlatformSpec
from roce_tune.platforms.templating import NAME_SLOT, comment_safe, render_template
from roce_tune.ranges import id_runs

#: bash condition each section runs under: sections that only read or comment run always (None); the
#: restore point runs only with ``--save FILE``; all others write and are skipped by ``--check``.
WRITE_GUARD = "(( RT_CHECK == 0 ))"
SECTION_GUARDS: dict[str, str | None] = {"snapshot": '[[ -n "$RT_SAVE" ]]', "alternatives": None,
                                         "readback": None}
#: the sections that configure the NICs one section at a time over every NIC (in :attr:`SPEC` ``sections``
#: order, next to each other): a ``--boot`` run takes each NIC through all of them on its own, so that a
#: step that fails on one NIC leaves it out and does not stop the others.
NIC_SECTIONS = ("pause", "qos", "mtu", "tos", "dcqcn")

SPEC = PlatformSpec(
    name="host",
    extension="sh",
    aggregator="script.j2",
    sections=("snapshot", "pause", "qos", "mtu", "tos", "dcqcn", "persist", "alternatives", "readback"),
    netmiko_device_type="linux",
    commit="host-script",
    negate_prefix=None,
    comment_prefix="#",
    indent=0,
    source="Mellanox/mlnx-tools mlnx_qos, cma_roce_tos, cma_roce_mode; MLNX_OFED ECN sysfs; mlx5 cong.c; "
           "mstflint",
    show_commands={
        "qos": "mlnx_qos -i {netdev}",
        "link": "ip -o link show dev {netdev}",
        "counters": "ethtool -S {netdev}",
        "rdma_counters": "rdma statistic show link {rdma_device}/{rdma_port}",
    },
)


class Knob(NamedTuple):
    """Where one DCQCN value lives: MLNX_OFED sysfs side and file, debugfs cc_params name, mlxconfig stem."""

    side: str
    sysfs: str
    debugfs: str
    mlxconfig: str


#: Plan DCQCN key (unit-suffixed) -> where it is written. Names: docs/derivation.md#dcqcn-parameters.
DCQCN_KNOBS: dict[str, Knob] = {
    "rpg_time_reset_us": Knob("roce_rp", "rpg_time_reset", "rp_time_reset", "RPG_TIME_RESET"),
    "rpg_byte_reset_bytes": Knob("roce_rp", "rpg_byte_reset", "rp_byte_reset", "RPG_BYTE_RESET"),
    "rpg_threshold": Knob("roce_rp", "rpg_threshold", "rp_threshold", "RPG_THRESHOLD"),
    "rpg_max_rate_mbps": Knob("roce_rp", "rpg_max_rate", "rp_max_rate", "RPG_MAX_RATE"),
    "rpg_ai_rate_mbps": Knob("roce_rp", "rpg_ai_rate", "rp_ai_rate", "RPG_AI_RATE"),
    "rpg_hai_rate_mbps": Knob("roce_rp", "rpg_hai_rate", "rp_hai_rate", "RPG_HAI_RATE"),
    "rpg_gd": Knob("roce_rp", "rpg_gd", "rp_gd", "RPG_GD"),
    "rpg_min_dec_fac_percent": Knob("roce_rp", "rpg_min_dec_fac", "rp_min_dec_fac", "RPG_MIN_DEC_FAC"),
    "rpg_min_rate_mbps": Knob("roce_rp", "rpg_min_rate", "rp_min_rate", "RPG_MIN_RATE"),
    "rate_to_set_on_first_cnp_mbps": Knob("roce_rp", "rate_to_set_on_first_cnp",
                                          "rp_rate_to_set_on_first_cnp",
                                          "RATE_TO_SET_ON_FIRST_CNP"),
    "dce_tcp_g": Knob("roce_rp", "dce_tcp_g", "rp_dce_tcp_g", "DCE_TCP_G"),
    "dce_tcp_rtt_us": Knob("roce_rp", "dce_tcp_rtt", "rp_dce_tcp_rtt", "DCE_TCP_RTT"),
    "rate_reduce_monitor_period_us": Knob("roce_rp", "rate_reduce_monitor_period",
                                          "rp_rate_reduce_monitor_period",
                                          "RATE_REDUCE_MONITOR_PERIOD"),
    "initial_alpha_value": Knob("roce_rp", "initial_alpha_value", "rp_initial_alpha_value",
                                "INITIAL_ALPHA_VALUE"),
    "clamp_tgt_rate": Knob("roce_rp", "clamp_tgt_rate", "rp_clamp_tgt_rate", "CLAMP_TGT_RATE"),
    "clamp_tgt_rate_after_time_inc": Knob("roce_rp", "clamp_tgt_rate_after_time_inc", "rp_clamp_tgt_rate_ati",
                                          "CLAMP_TGT_RATE_AFTER_TIME_INC"),
    "min_time_between_cnps_us": Knob("roce_np", "min_time_between_cnps", "np_min_time_between_cnps",
                                     "MIN_TIME_BETWEEN_CNPS"),
    "cnp_dscp": Knob("roce_np", "cnp_dscp", "np_cnp_dscp", "CNP_DSCP"),
    "cnp_802p_prio": Knob("roce_np", "cnp_802p_prio", "np_cnp_prio", "CNP_802P_PRIO"),
}
#: The CNP marking a NIC plan names in ``cnp_dscp``/``cnp_priority`` (also accepted among the DCQCN params).
CNP_DSCP_KNOB = DCQCN_KNOBS["cnp_dscp"]
CNP_PRIO_KNOB = DCQCN_KNOBS["cnp_802p_prio"]
#: DCQCN per-priority enable files (notification point, reaction point) and the mlxconfig mask stem.
ECN_SIDES = ("roce_np", "roce_rp")
PRIO_MASK_STEM = "ROCE_CC_PRIO_MASK"
#: ``cma_roce_mode -m`` value for RoCE v2 and what it prints back [V].
ROCE_MODE, ROCE_MODE_TEXT = 2, "RoCE v2"
#: What ``cma_roce_mode`` prints -> its ``-m`` value (mlnx-tools ``cma_roce_mode`` [V]); used to restore.
ROCE_MODES = (("IB/RoCE v1", 1), (ROCE_MODE_TEXT, ROCE_MODE))
#: Written to ``tc/<port>/traffic_class`` to unset the global traffic class: the mlx5 driver starts with
#: ``tcd->val = -1`` and shows nothing while it is negative (MLNX_OFED mlx5_ib ``init_tc_sysfs`` /
#: ``traffic_class_show`` [V, driver source]).
TCLASS_UNSET = -1
#: NCCL variables whose value is the TOS byte of the RoCE QPs NCCL creates: ``NCCL_IB_TC`` the data QPs,
#: ``NCCL_IB_FIFO_TC`` the receiver's CTS (FIFO) QPs (NVIDIA/nccl src/transport/net_ib/connect.cc [V]).
NCCL_TOS_VARS = ("NCCL_IB_TC", "NCCL_IB_FIFO_TC")
#: ``mlnx_qos --cable_len`` range (metres) the NIC keeps [V]: mlnx_qos itself takes 0..65535, but the mlx5
#: driver's ``mlx5e_dcbnl_ieee_setpfc`` (drivers/net/ethernet/mellanox/mlx5/core/en_dcbnl.c) stores the
#: PFC ``delay`` as the cable length only when ``0 < delay < MLX5E_MAX_CABLE_LENGTH`` (1000) and ignores
#: anything else without an error.
CABLE_LEN_RANGE = (1, 999)
#: ECN codepoint the RoCE TOS must carry: ECT(0) = 0b10 (docs/derivation.md#dcqcn-parameters).
ECT0 = 0b10
#: Commands the script needs on PATH (checked before anything is read or changed; every missing one is named
#: with what provides it: the Debian/Ubuntu package, or NVIDIA's driver bundles that ship mlnx-tools).
_MLNX_TOOLS = "mlnx-tools: MLNX_OFED or DOCA-Host"
REQUIRED_TOOLS: dict[str, str] = {
    "mlnx_qos": _MLNX_TOOLS, "cma_roce_tos": _MLNX_TOOLS, "cma_roce_mode": _MLNX_TOOLS, "ethtool": "ethtool",
    "ip": "iproute2", "awk": "gawk or mawk", "sed": "sed", "tail": "coreutils", "sha256sum": "coreutils",
    "systemctl": "systemd", "udevadm": "udev", "flock": "util-linux",
}
#: The lock every run of a host's script holds from before its first read until it exits (util-linux
#: ``flock -n`` on an fd the script opens, flock(1)): a manual apply and the boot unit (or two applies) would
#: interleave their writes and read each other's half-set values into their restore points, so a run that
#: finds it held stops at once with exit 2. ``/run/lock`` is the FHS 3.0 place for lock files (§3.15.7).
LOCK_PATH = "/run/lock/roce-tune-host.lock"
_PCI_RE = re.compile(r"^[0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7]$")


def _check(regex: re.Pattern[str], value: str, what: str) -> str:
    """Defence in depth behind the inventory loader: names must match the inventory patterns."""
    if not regex.fullmatch(value):
        raise ValueError(f"{what} {value!r} does not match {regex.pattern}; refusing to render a host script")
    return value


def cable_len_m(cable_m: float) -> int:
    """Cable metres -> ``mlnx_qos --cable_len`` whole metres (rounded up). Raises ValueError out of range."""
    m = math.ceil(cable_m)
    if not CABLE_LEN_RANGE[0] <= m <= CABLE_LEN_RANGE[1]:
        raise ValueError(f"cable length {cable_m} m is outside mlnx_qos --cable_len {CABLE_LEN_RANGE}")
    return m


def nccl_tos_values(host: HostPlan) -> list[int]:
    """Every TOS byte NCCL on ``host`` puts on its QPs (:data:`NCCL_TOS_VARS` of its NCCL environment that
    hold a number), sorted; empty when it pins none."""
    return sorted({int(v) for k, v in host.nccl_env.items() if k in NCCL_TOS_VARS and v.strip().isdigit()})


def forces_global_tclass(host: HostPlan) -> bool:
    """Whether the script sets each NIC's mlx5 global traffic class (``tc/<port>/traffic_class``) to the NIC's
    RoCE TOS (True) or unsets it (False, :data:`TCLASS_UNSET`).

    A global value goes on every RoCE QP of the port, over the traffic class the application asked for:
    MLNX_OFED mlx5_ib ``tclass_get_tclass_locked`` takes ``tcd->val`` whenever it is >= 0, and a write
    re-marks the QPs already in RTS (``tclass_update_qps``) [V, driver source]. That is what makes tools
    without a TOS option use the RoCE class, and it is right while NCCL asks for nothing else. A host whose
    NCCL environment asks for another TOS (``NCCL_IB_FIFO_TC`` of a second lossless class, a pinned
    ``NCCL_IB_TC``) would have it silently replaced, so there the global class is unset and read back unset;
    RDMA-CM still gets the RoCE TOS from ``cma_roce_tos``.
    """
    asked = set(nccl_tos_values(host))
    return all(asked <= {n.roce_tos} for n in host.nics)


def _knob(key: str) -> Knob:
    try:
        return DCQCN_KNOBS[key]
    except KeyError:
        raise KeyError(f"DCQCN parameter {key!r} has no known sysfs/debugfs/mlxconfig name; "
                       f"known: {', '.join(sorted(DCQCN_KNOBS))}") from None


def _knob_values(nic: NicPlan) -> list[tuple[Knob, int]]:
    """Every DCQCN/CNP value to write, in plan-key order, CNP marking last; each knob once.

    Raises:
        KeyError: an unknown DCQCN key. ValueError: the params contradict the NIC's CNP DSCP/priority.
    """
    values = {_knob(k): v for k, v in sorted(nic.dcqcn.params.items()) if _knob(k) not in (CNP_DSCP_KNOB,
                                                                                           CNP_PRIO_KNOB)}
    for knob, want in ((CNP_DSCP_KNOB, nic.cnp_dscp), (CNP_PRIO_KNOB, nic.cnp_priority)):
        key = next(k for k, kn in DCQCN_KNOBS.items() if kn == knob)
        if key in nic.dcqcn.params and nic.dcqcn.params[key] != want:
            raise ValueError(f"{nic.netdev}: DCQCN {key}={nic.dcqcn.params[key]} contradicts the NIC's "
                             f"{want}")
        values[knob] = want
    return list(values.items())


def _dscp2prio(plan: Plan, nic: NicPlan) -> tuple[list[int], list[dict[str, int]]]:
    """The RoCE and CNP DSCPs, and (DSCP trust only: with PCP trust the map is not used) the
    DSCP->priority entry of every DSCP the NIC plan maps, ``[{"dscp": 0, "prio": 0}, ...]`` in DSCP order:
    the tuner maps all 64 (every DSCP that is not RoCE or CNP to priority 0), and the ConnectX default
    ``dscp >> 3`` would leave CS3/AF3x (24-31) on a lossless priority 3. Entries equal to that default are
    listed too, since a map someone changed earlier keeps its entries; the script sets, in one ``mlnx_qos``
    call, the entries where the NIC's differ and reads every one back.

    Raises:
        ValueError: a RoCE or CNP DSCP without a priority in ``dscp_to_priority``; a DSCP outside 0..63 or a
        priority outside 0..7 (``mlnx_qos --dscp2prio`` refuses them).
    """
    dscps = sorted({*plan.classification.roce_dscp, nic.cnp_dscp})
    entries = []
    if nic.trust == "dscp":
        for d in dscps:
            if d not in nic.dscp_to_priority:
                raise ValueError(f"{nic.netdev}: dscp_to_priority has no entry for DSCP {d}")
        for d, p in sorted(nic.dscp_to_priority.items()):
            if not (0 <= d <= 63 and 0 <= p <= 7):
                raise ValueError(f"{nic.netdev}: dscp_to_priority {d} -> {p} is outside DSCP 0..63 / "
                                 "priority 0..7")
            entries.append({"dscp": d, "prio": p})
    return dscps, entries


def _dscp_ranges(dscps: list[int]) -> str:
    """Sorted DSCPs as ``a-b`` runs joined by ``,``: ``[8, 9, 10, 26]`` -> ``"8-10,26"``."""
    return id_runs(dscps)


def _dscp2prio_note(dscps: list[int], entries: list[dict[str, int]]) -> str:
    """The data file's comment on a NIC's DSCP->priority entries (:func:`_dscp2prio`): the DSCPs of each
    priority as runs (``24-31->3``), the map's most common priority last as a count
    (``the other 62 DSCPs->0``)."""
    if not entries:
        return f"PCP trust: DSCP {dscps} not mapped (no --dscp2prio)"
    prios = [e["prio"] for e in entries]
    bulk = max(sorted(set(prios)), key=prios.count)
    by_prio: dict[int, list[int]] = {}
    for e in entries:
        if e["prio"] != bulk:
            by_prio.setdefault(e["prio"], []).append(e["dscp"])
    parts = [f"{_dscp_ranges(ds)}->{p}" for p, ds in sorted(by_prio.items(), key=lambda kv: kv[1][0])]
    rest = f"the other {prios.count(bulk)}" if parts else f"all {len(entries)}"
    parts.append(f"{rest} DSCPs->{bulk}")
    return (f"DSCP->priority {', '.join(parts)} ({len(entries)} entries: set where the NIC differs, "
            "all read back)")


def _nic_values(plan: Plan, nic: NicPlan) -> dict[str, object]:
    """The part of a NIC's context that follows from its policy (DSCP map, PFC vector, DCQCN, CNP marking,
    RDMA port), the same for every NIC with that policy: DSCP->priority entries, DCQCN sysfs writes,
    mlxconfig keys and their comments; ``set_key`` tells value sets apart (:func:`_value_sets`).

    Raises:
        ValueError: a DSCP without a priority; DCQCN params that contradict the CNP marking.
        KeyError: a DCQCN parameter without a known sysfs name.
    """
    dscps, dscp2prio = _dscp2prio(plan, nic)
    lossless = [p for p, on in enumerate(nic.pfc_vector) if on]
    dc = nic.dcqcn
    enable_prios = sorted(dc.enabled_priorities) if dc.enabled else sorted(set(lossless)
                                                                           | set(dc.enabled_priorities))
    enable_value = 1 if dc.enabled else 0
    knobs = _knob_values(nic)
    writes = [{"side": side, "file": f"enable/{p}", "value": enable_value} for p in enable_prios
              for side in ECN_SIDES]
    writes += [{"side": k.side, "file": k.sysfs, "value": v} for k, v in knobs]
    if dc.enabled:
        dcqcn_note = f"DCQCN on priorities {enable_prios} (notification and reaction point)"
    else:
        dcqcn_note = (f"DCQCN off on priorities {enable_prios}; relies on: "
                      f"{comment_safe(dc.relies_on) or 'n/a'}")
    port = nic.rdma_port
    mask = sum(1 << p for p in enable_prios) if dc.enabled else 0
    mlxconfig = [f"{PRIO_MASK_STEM}_P{port}={mask}"] + [f"{k.mlxconfig}_P{port}={v}" for k, v in knobs]
    return {
        "dscp2prio": dscp2prio, "writes": writes, "set_key": repr((dscp2prio, writes)),
        "dscp2prio_note": _dscp2prio_note(dscps, dscp2prio),
        "dcqcn_note": dcqcn_note, "mlxconfig": " ".join(mlxconfig),
    }


#: memo of :func:`_nic_values` for one rendering pass: NICs of one policy share their plan objects
#: (``dcqcn``, ``dscp_to_priority``), so their ids and the scalar inputs name the policy while the plan lives
NicMemo = dict[tuple[object, ...], dict[str, object]]


def _nic(plan: Plan, nic: NicPlan, memo: NicMemo | None = None) -> dict[str, object]:
    if len(nic.pfc_vector) != 8 or any(v not in (0, 1) for v in nic.pfc_vector):
        raise ValueError(f"{nic.netdev}: pfc_vector must be 8 entries of 0/1, got {nic.pfc_vector}")
    if nic.roce_tos & 0b11 != ECT0:
        raise ValueError(f"{nic.netdev}: RoCE TOS {nic.roce_tos} does not carry ECT(0); DCQCN needs "
                         "ECN-capable data")
    if memo is None:
        values = _nic_values(plan, nic)
    else:
        key = (id(nic.dcqcn), id(nic.dscp_to_priority), tuple(nic.pfc_vector), nic.trust, nic.cnp_dscp,
               nic.cnp_priority, nic.rdma_port)
        values = memo.get(key) or memo.setdefault(key, _nic_values(plan, nic))
    pci = nic.pci_address if nic.pci_address and _PCI_RE.fullmatch(nic.pci_address) else None
    return {
        **values,
        "netdev": _check(NETDEV_RE, nic.netdev, "netdev"), "rdma": _check(RDMA_DEVICE_RE, nic.rdma_device,
                                                                          "RDMA device"),
        "port": nic.rdma_port, "model": comment_safe(nic.model), "speed_gbps": nic.speed_gbps,
        "switch_port": _check(ENDPOINT_RE, nic.switch_port, "switch port") if nic.switch_port else "none",
        "trust": nic.trust, "pfc": ",".join(str(v) for v in nic.pfc_vector), "cable_m": nic.cable_m,
        "cable_len": cable_len_m(nic.cable_m), "xoff_bytes": nic.nic_xoff_bytes,
        "mtu": nic.mtu, "roce_mtu": nic.roce_mtu, "tos": nic.roce_tos, "tos_dscp": nic.roce_tos >> 2,
        "pci": pci or "<pci-address>",
    }


#: File name of the shared host script in ``hosts/`` (the logic, the same for every host) and its version:
#: a host's data file names the version it was written for, and the shared script refuses another.
SHARED_SCRIPT = "roce-tune-host.sh"
HOST_SCRIPT_VERSION = "3"
#: The arguments the host script takes (the shared script's argument check prints them) and the usage block
#: both its header and every host's data file print (one text: the file an operator runs names all of them).
USAGE_ARGS = "[--check | --save FILE | --boot]"
USAGE_LINES = (
    f"Usage: bash SCRIPT {USAGE_ARGS}",
    "  --check      change nothing, only read back and list mismatches",
    "  --save FILE  first write FILE, a script that puts back every value this one changes (restore point)",
    "  --boot       as without arguments, but a planned NIC that is missing or fails does not stop the"
    " others",
)
#: The line of a host's data file after which it sources the shared script (from its own directory; a
#: missing one stops it with exit 2): :func:`bundle` replaces everything after it with the shared script.
SHARED_MARKER = f"{SPEC.comment_prefix} ----- the shared host script -----"


#: Boot persistence (the values are runtime state the driver forgets at reboot and driver reload): where a
#: host's run installs its whole script (:func:`bundle`, what apply pushes) and the unit that runs it at boot.
PERSIST_SCRIPT = "/usr/local/lib/roce-tune/host.sh"
#: The systemd unit (``hosts/<UNIT_NAME>`` in a plan, the same for every host): Type=oneshot,
#: RemainAfterExit=yes (systemd.service(5)), after MLNX_OFED's ``openibd.service`` (loads the driver stack).
UNIT_NAME = "roce-tune-host.service"
UNIT_PATH = f"/etc/systemd/system/{UNIT_NAME}"
#: Seconds the unit's run may take (systemd ``TimeoutStartSec``): each NIC tool call is a Python program
#: (mlnx_qos) or a configfs round trip, ~12 calls per NIC; 8 NICs take well under a minute.
UNIT_TIMEOUT_S = 180
#: The udev rule (``hosts/<UDEV_RULE_FILE>`` in a plan) that re-runs the unit when an mlx5 netdev or RDMA
#: device appears: from MLNX_OFED 23.04, driver reload, reset and recovery destroy and re-create the netdev,
#: its settings lost, and NVIDIA names udev rules as the way to re-apply them ("Netdev Interface
#: Configuration is not Preserved During Reload/Reset/Recovery",
#: https://docs.nvidia.com/networking/display/MLNXOFEDv23040533/Changes+and+New+Features). Before 23.04 and
#: in the upstream driver the netdev is only suspended and resumed there (no event), but the RDMA device is
#: removed and added again (``mlx5_detach_device`` in ``drivers/net/ethernet/mellanox/mlx5/core/dev.c``
#: deletes an auxiliary device whose driver has no ``suspend``, and mlx5_ib's has none): its
#: ``infiniband`` "add" catches those.
UDEV_RULE_FILE = "roce-tune-host.rules"
UDEV_RULE_PATH = f"/etc/udev/rules.d/90-{UDEV_RULE_FILE}"


#: Seconds a restore point waits for :data:`LOCK_PATH` before it gives up (exit 2, nothing put back): a run
#: of the boot unit that holds it ends within its own time limit.
RESTORE_LOCK_WAIT_S = UNIT_TIMEOUT_S


def _persist_context(generator: str) -> dict[str, object]:
    return {"c": SPEC.comment_prefix, "generator": comment_safe(generator), "persist_script": PERSIST_SCRIPT,
            "unit_name": UNIT_NAME, "unit_path": UNIT_PATH, "udev_rule_path": UDEV_RULE_PATH,
            "timeout_s": UNIT_TIMEOUT_S}


@lru_cache(maxsize=4)
def render_persist_files(generator: str) -> dict[str, str]:
    """The boot persistence files of plans made by ``generator``, the same for every host:
    ``{UNIT_NAME: systemd unit, UDEV_RULE_FILE: udev rule}`` (file names in ``hosts/``). The shared host
    script carries both and installs them (:data:`UNIT_PATH`, :data:`UDEV_RULE_PATH`).

    Raises:
        jinja2.UndefinedError: a template bug.
    """
    ctx = _persist_context(generator)
    return {UNIT_NAME: render_template(SPEC.name, "unit.service.j2", **ctx),
            UDEV_RULE_FILE: render_template(SPEC.name, "udev.rules.j2", **ctx)}


def _value_sets(nics: list[dict[str, object]]) -> tuple[list[str], list[str], list[str]]:
    """Give each NIC context a value set (1, 2 …) and its ``fields`` (the ``RT_NICS`` entry): NICs with
    the same DSCP->priority entries and DCQCN sysfs writes share one, so the data file lists those values
    once. Returns the ``RT_DSCP2PRIO``, ``RT_DSCP_RUNS`` and ``RT_ECN`` entries (``"SET DSCP PRIO"``, ``"SET
    PRIO DSCP-RUNS"`` per priority in ascending order with :func:`roce_tune.ranges.id_runs`, e.g. ``"1 0
    0-25,27-47"``, and ``"SET FILE VALUE"``)."""
    sets: dict[str, int] = {}
    dscp2prio: list[str] = []
    dscp_runs: list[str] = []
    ecn: list[str] = []
    for n in nics:
        key = str(n["set_key"])
        set_id = sets.get(key)
        if set_id is None:
            set_id = sets[key] = len(sets) + 1
            entries: list[dict[str, int]] = n["dscp2prio"]  # type: ignore[assignment]
            dscp2prio += [f"{set_id} {e['dscp']} {e['prio']}" for e in entries]
            by_prio: dict[int, list[int]] = {}
            for e in entries:
                by_prio.setdefault(e["prio"], []).append(e["dscp"])
            dscp_runs += [f"{set_id} {prio} {id_runs(by_prio[prio])}" for prio in sorted(by_prio)]
            ecn += [f"{set_id} {w['side']}/{w['file']} {w['value']}"
                    for w in n["writes"]]  # type: ignore[attr-defined]
        values = [n[k] for k in ("netdev", "rdma", "port", "trust", "pfc", "cable_len", "mtu", "tos")]
        n["fields"] = " ".join(str(v) for v in (*values, set_id))
    return dscp2prio, dscp_runs, ecn


def build_context(plan: Plan, host: HostPlan, memo: NicMemo | None = None) -> dict[str, object]:
    """Everything a host's data file (``data.j2``) prints (values raw: the template shell-quotes each).

    Returns:
        dict with ``host`` (name), ``plan`` (header fields, comment-safe), ``nics`` (per NIC: names,
        ``fields`` of its ``RT_NICS`` entry, comment facts), ``dscp2prio``, ``dscp_runs`` and ``ecn``
        (``RT_DSCP2PRIO``, ``RT_DSCP_RUNS`` and ``RT_ECN`` entries), ``version``, ``shared`` (shared script
        file name), ``c``.

    Raises:
        ValueError: a NIC the script cannot configure safely (bad PFC vector, TOS without ECT(0)).
        KeyError: a DCQCN parameter without a known sysfs name.
    """
    nics = [_nic(plan, n, memo) for n in host.nics]
    dscp2prio, dscp_runs, ecn = _value_sets(nics)
    return {
        "c": SPEC.comment_prefix,
        "version": HOST_SCRIPT_VERSION,
        "usage": USAGE_LINES,
        "shared": SHARED_SCRIPT,
        "host": {"name": _check(DEVICE_NAME_RE, host.name, "host name")},
        "tclass_global": forces_global_tclass(host),
        "nccl_tos": nccl_tos_values(host),
        "tclass_unset": TCLASS_UNSET,
        "plan": {k: comment_safe(v) for k, v in (("site", plan.site), ("generator", plan.generator),
                                                 ("schema", plan.schema_version))},
        "dscp2prio": dscp2prio,
        "dscp_runs": dscp_runs,
        "ecn": ecn,
        "nics": nics,
    }


def shared_context(generator: str) -> dict[str, object]:
    """Everything the shared host script (``script.j2`` and its sections) prints: constants only, no host."""
    return {
        "c": SPEC.comment_prefix,
        "version": HOST_SCRIPT_VERSION,
        "usage": USAGE_LINES,
        "usage_args": USAGE_ARGS,
        "generator": comment_safe(generator),
        "sections": SPEC.sections,
        "section_guards": SECTION_GUARDS,
        "nic_sections": NIC_SECTIONS,
        "write_guard": WRITE_GUARD,
        "roce_modes": ROCE_MODES,
        "roce_mode": ROCE_MODE,
        "roce_mode_text": ROCE_MODE_TEXT,
        "tclass_unset": TCLASS_UNSET,
        "tools": list(REQUIRED_TOOLS.items()),
        "lock_path": LOCK_PATH,
        "restore_lock_wait_s": RESTORE_LOCK_WAIT_S,
        "knobs": list(dict.fromkeys(DCQCN_KNOBS.values())),
        "prio_mask_stem": PRIO_MASK_STEM,
        **_persist_context(generator),
        "unit_text": render_persist_files(generator)[UNIT_NAME],
        "udev_text": render_persist_files(generator)[UDEV_RULE_FILE],
        "shared_marker": SHARED_MARKER,
    }


@lru_cache(maxsize=4)
def render_shared_script(generator: str) -> str:
    """The shared host script ``hosts/roce-tune-host.sh`` of plans made by ``generator``: the logic
    (argument check, restore point, apply, read back) for the values a host's data file sets.

    Raises:
        jinja2.UndefinedError: a template bug.
    """
    return render_template(SPEC.name, SPEC.aggregator, **shared_context(generator))


def render_host_data(plan: Plan, host: HostPlan, memo: NicMemo | None = None) -> str:
    """The host's data file ``hosts/<name>.sh``: its values, then ``source`` of the shared script.
    ``memo`` (one dict for all hosts of one plan) computes each NIC policy's values once.

    Raises:
        ValueError / KeyError: see :func:`build_context`; jinja2.UndefinedError on a template bug.
    """
    return render_template(SPEC.name, "data.j2", **build_context(plan, host, memo))


def bundle(data: str, shared: str) -> str:
    """One self-contained script from a host's data file and the shared host script: the data file up to
    :data:`SHARED_MARKER`, then the shared script without its ``#!`` line. This is what runs on the host
    (``roce-tune apply``, ``playbooks/push.yml``). A data file without the marker (a self-contained
    script an older roce-tune wrote) is returned as it is.
    """
    head, marker, _source = data.partition(SHARED_MARKER + "\n")
    if not marker:
        return data
    return head + marker + shared.partition("\n")[2]


def host_script(files: dict[str, str], name: str) -> str | None:
    """The self-contained script of host ``name`` from a plan's files (``hosts/<name>.sh`` bundled with
    ``hosts/roce-tune-host.sh``); None if the host has no file."""
    data = files.get(f"hosts/{name}.{SPEC.extension}")
    if data is None:
        return None
    return bundle(data, files.get(f"hosts/{SHARED_SCRIPT}", ""))


def render_hosts(plan: Plan, hosts: list[HostPlan]) -> dict[str, str]:
    """The host files of an output tree (relative to ``hosts/``): the shared script, the systemd unit and the
    udev rule once, and a data file per host: ``{"roce-tune-host.sh": …, "roce-tune-host.service": …,
    "roce-tune-host.rules": …, "<name>.sh": …}``.

    Raises:
        ValueError / KeyError: see :func:`build_context`; jinja2.UndefinedError on a template bug.
    """
    files = {SHARED_SCRIPT: render_shared_script(plan.generator), **render_persist_files(plan.generator)}
    memo: NicMemo = {}
    shapes: dict[tuple[object, ...], _Filler] = {}
    for h in hosts:
        key = _host_shape(h)
        fill = shapes.get(key)
        if fill is None:
            fill = shapes[key] = _Filler(_slotted_host_data(plan, h, memo))
        nics = h.nics
        _check_all(ENDPOINT_RE, [n.switch_port for n in nics if n.switch_port], "switch port")
        files[f"{h.name}.{SPEC.extension}"] = fill(
            [*(n.switch_port or "none" for n in nics), _check(DEVICE_NAME_RE, h.name, "host name")])
    return files


class _Filler:
    """The data file of a host of one shape from its slot values (its NICs' switch ports in NIC order, then
    its name), given the shape's text and slot pieces (:func:`_slotted_host_data`): texts and values picked
    in the order of the pieces and joined, in C."""

    def __init__(self, pieces: list[str | int]) -> None:
        self.texts = [p for p in pieces if type(p) is str]
        self.order: list[int] = []
        seen = 0
        for p in pieces:  # a text: its place among the texts; a slot: its value's, after the texts
            if type(p) is str:
                self.order.append(seen)
                seen += 1
            else:  # (the name is the last value)
                self.order.append(-1 if p == _NAME_PIECE else len(self.texts) + int(p))
        self.pick = operator.itemgetter(*self.order)

    def __call__(self, values: list[str]) -> str:
        if len(self.order) == 1:
            return (self.texts + values)[self.order[0]]
        return "".join(self.pick(self.texts + values))


def _check_all(regex: re.Pattern[str], values: list[str], what: str) -> None:
    """:func:`_check` of each of ``values`` (matched in C; each checked on its own only to name the first one
    that fails)."""
    if not all(map(regex.fullmatch, values)):
        for value in values:
            _check(regex, value, what)


#: A NIC's facts that its lines of the data file print or follow from (:func:`_host_shape`).
_NIC_FACTS = operator.attrgetter("model", "netdev", "rdma_device", "rdma_port", "pci_address", "speed_gbps",
                                 "trust", "cable_m", "mtu", "roce_mtu", "roce_tos", "cnp_dscp",
                                 "cnp_priority", "nic_xoff_bytes")
#: Stands in for the switch port of NIC ``{}`` (its index) while a host shape is rendered; the ``-`` ends
#: the index (slot 1 is no prefix of slot 10). Like :data:`NAME_SLOT`, no inventory holds it.
PORT_SLOT = "roce-tune.switch-port.slot-5f3a9c-{}-"
_SLOT_RE = re.compile(f"{re.escape(NAME_SLOT)}|{re.escape(PORT_SLOT).replace(re.escape('{}'), '([0-9]+)')}")
#: the piece of a slotted data file where the host's name goes (other slot pieces are NIC indices)
_NAME_PIECE = -1


def _host_shape(host: HostPlan) -> tuple[object, ...]:
    """What a host's data file prints, but its name and its NICs' switch ports (the slots), for one
    :func:`render_hosts` pass: the TOS values its NCCL environment asks for (:func:`forces_global_tclass`),
    per NIC every scalar :func:`_nic` reads (:data:`_NIC_FACTS`), its PFC vector,
    whether it has a switch port, and the identity of its DCQCN section and DSCP map (the plan holds them
    while the pass runs, and NICs of one policy share them; :func:`_nic_values` is keyed the same way). The
    rest of the file comes from the plan (site, generator, schema, RoCE DSCPs), the same for every host of
    the pass. Hosts of one shape differ only in the slots."""
    nics = ((_NIC_FACTS(n), tuple(n.pfc_vector), id(n.dcqcn), id(n.dscp_to_priority), n.switch_port is None)
            for n in host.nics)
    return (tuple(nccl_tos_values(host)), *nics)


def _slotted_host_data(plan: Plan, host: HostPlan, memo: NicMemo) -> list[str | int]:
    """``host``'s data file (:func:`build_context`, its checks included) with its name and its NICs' switch
    ports as slots, cut into text pieces and slot pieces (:data:`_NAME_PIECE` or the NIC index).

    Raises:
        ValueError / KeyError: see :func:`build_context`; jinja2.UndefinedError on a template bug.
    """
    ctx = build_context(plan, host, memo)
    ctx["host"] = {"name": NAME_SLOT}
    nics: list[dict[str, object]] = ctx["nics"]  # type: ignore[assignment]
    for i, n in enumerate(nics):
        if host.nics[i].switch_port:
            n["switch_port"] = PORT_SLOT.format(i)
    text = render_template(SPEC.name, "data.j2", **ctx)
    cut = _SLOT_RE.split(text)  # text, slot, text, slot ... (a slot: None = the name, else the NIC index)
    return [piece if i % 2 == 0 else _NAME_PIECE if piece is None else int(piece)
            for i, piece in enumerate(cut)]


def render_host(plan: Plan, host: HostPlan) -> dict[str, str]:
    """Render the host's self-contained script: ``{"<name>.sh": script}`` (:func:`bundle` of its data
    file and the shared script: what is pushed to the host).

    Raises:
        ValueError / KeyError: see :func:`build_context`; jinja2.UndefinedError on a template bug.
    """
    text = bundle(render_host_data(plan, host), render_shared_script(plan.generator))
    return {f"{host.name}.{SPEC.extension}": text}


def render_nccl_env(plan: Plan, host: HostPlan) -> str:
    """The host's NCCL environment: ``KEY=value`` lines sorted by key, values shell-quoted where needed.

    Raises:
        ValueError: a key that is not an environment variable name.
    """
    for key in host.nccl_env:
        if not ENV_VAR_RE.fullmatch(key):
            raise ValueError(f"{host.name}: NCCL environment key {key!r} is not a valid variable name")
    return render_template(SPEC.name, "nccl_env.j2", env=sorted(host.nccl_env.items()))


# --- LLDP (roce-tune import lldp / lint --lldp) --------------------------------------------------------
from roce_tune.platforms import lldp as _lldp  # noqa: E402

#: A host reports its NICs' switch neighbours with lldpd (``lldpctl -f json``); lldpd must run on the host
#: (``apt install lldpd``; NVIDIA's RoCE guides enable it to see the switch port of each NIC).
LLDP_FORMATS = (_lldp.LLDPCTL_JSON, _lldp.LLDPCTL_KEYVALUE, _lldp.LLDPCTL_TEXT)
VERSION_FORMATS: tuple[_lldp.CaptureFormat, ...] = ()
LLDP_RENDER_COMMAND = "lldpctl -f json"


def render_lldp(device: str, ends: list[_lldp.RemoteEnd]) -> str:
    """``lldpctl -f json`` on the host for ``ends`` (its NICs and the switch ports they face)."""
    return _lldp.render_lldpctl_json(device, ends)
#: Prompt of a rendered capture (the capture splitter reads it: roce_tune.captures).
CAPTURE_PROMPT = "root@{device}:~# "


# --- platform contract (roce_tune/platforms/contract.py): push, capabilities ---------------------------
import shlex  # noqa: E402

from roce_tune.platforms import contract as _c  # noqa: E402


def _left_as_is(progress: dict[str, object], _tag: str, _confirm_s: int) -> str | None:
    restore = progress.get("restore")
    if restore:
        return (f"values may be changed (hosts have no commit-confirm); to revert: "
                f"`bash {shlex.quote(str(restore))}` on the host (if it exists, it was written before any "
                "change)")
    return None


#: one value of the host script's read-back (``--check``, ``templates/host/readback.j2``): ``MISMATCH
#: <netdev|rdma device|host> <what>: expected '<planned>', read '<running>'``
CHECK_MISMATCH_RE = re.compile(r"^\s*MISMATCH (?P<device>\S+) (?P<what>.+?): expected '(?P<planned>.*)', "
                               r"read '(?P<running>.*)'\s*$")


class CheckMismatch(NamedTuple):
    """One value the host runs that differs from its script (``--check``): the netdev, RDMA device or host
    it is on, what it is (``ecn/roce_rp/rpg_ai_rate``, ``pfc``, ``systemd unit …``), planned and running
    text, and the plan's DCQCN key when it is one (``rpg_ai_rate_mbps``; None otherwise)."""

    device: str
    what: str
    planned: str
    running: str
    dcqcn_key: str | None


def check_mismatches(output: str) -> list[CheckMismatch]:
    """The ``MISMATCH`` lines of the host script's ``--check`` output (what ``roce-tune apply --dry-run``
    lists as a host's diff), in order; ``[]`` when none. Raises nothing."""
    by_file = {f"ecn/{k.side}/{k.sysfs}": key for key, k in DCQCN_KNOBS.items()}
    out = []
    for line in output.splitlines():
        m = CHECK_MISMATCH_RE.match(line)
        if m is not None:
            out.append(CheckMismatch(m["device"], m["what"], m["planned"], m["running"],
                                     by_file.get(m["what"])))
    return out


#: hosts: copy the script, run it with ``--save`` (it writes a restore script with every value it is about
#: to change first); its own read-back check (exit status) decides; failure: run the restore script
PUSH = _c.PushMethod(netmiko_device_type="linux", error_pattern=r"$^", left_as_is=_left_as_is,
                     linux_shell=True, restore_point=True)

CAPABILITIES = _c.Capabilities(knobs=("dscp_map", "pfc", "dcqcn", "tos", "mtu", "nccl_env"))

# ---------------------------------------------------------------------------------------- ANSIBLE
# how the Ansible playbooks reach the platform's devices (roce_tune.ansible_inventory)
ANSIBLE = _c.AnsibleConnection(
    group_vars={"ansible_connection": _c.PLAIN_SSH, "ansible_become": True,
                "ansible_become_method": "ansible.builtin.sudo"})

PLATFORM = _c.PlatformImpl(
    name=SPEC.name, spec=SPEC, render=render_host,
    read_back=_c.module_read_back(__name__, SPEC.name), push=PUSH, capabilities=CAPABILITIES,
    ansible=ANSIBLE,
)


# ------------------------------------------------------------------------------------- audit captures
#: read-only commands ``audit --live`` runs on a host, per plan NIC (``{netdev}``, ``{rdma_device}``,
#: ``{rdma_port}``); sysfs paths under ``${ROCE_TUNE_SYSROOT:-}`` like the rendered host scripts. The
#: outputs are what the README asks users to capture by hand.
CAPTURE_COMMANDS: tuple[str, ...] = (
    "ip -d link show {netdev}",
    "ethtool {netdev}",
    "ethtool -S {netdev}",
    "mlnx_qos -i {netdev}",
    "ethtool -a {netdev}",
    "ibv_devinfo -v -d {rdma_device}",
    "show_gids {rdma_device}",
    "grep -H '' ${{ROCE_TUNE_SYSROOT:-}}/sys/class/infiniband/{rdma_device}/ports/{rdma_port}/hw_counters/*",
)
