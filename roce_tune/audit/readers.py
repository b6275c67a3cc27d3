"""Detect what each capture block is and read it into :class:`~roce_tune.audit.model.AuditData`.

Block readers recognise a whole command's output by its content (headers, key lines), helped by the
prompt's command where it names a port or interface. Line readers then take what is left line by line
(``ethtool -S`` lines, ``diff -y`` pairs, sysfs ``path:value`` lines, ``NCCL_*=`` variables, ``NCCL
INFO`` lines). Lines nobody understood are reported (:class:`~roce_tune.audit.model.Unparsed`), never
dropped.

Host parsers reused from :mod:`roce_tune.verify` (counters, hostfacts, nccl); ``ip link`` goes through
ntc-templates (``linux_ip_link_show``). Our own here, because no maintained template exists (ntc-templates
has no ``ethtool`` one): ``mlnx_qos``, ``ethtool -a`` (global pause), ``ibv_devinfo`` (multi-device and
fw_ver), GID sysfs, DCQCN sysfs, ``/proc/net/bonding``, NCCL env / INFO lines. Which switch outputs exist,
how to recognise them and the platforms' own parsers (counter tables, watchdog configuration rows, interface
counter columns, the RoCE status of a switch) are in the platform modules (``CAPTURE_FORMATS``, each format
with its ``parse``; :mod:`roce_tune.platforms.captures`); this module only stores what they read.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from roce_tune.audit.expect import Expect
from roce_tune.audit.model import AuditData, BondObs, Counters, Ev, HostObs, RdmaObs, SwitchObs, Unparsed, Val
from roce_tune.captures import Block
from roce_tune.platforms.base import SecretPattern, mask_secrets
from roce_tune.platforms.captures import CaptureFormat, capture_formats
from roce_tune.platforms.counters import PortCounters, to_int
from roce_tune.verify.counters import parse_side_by_side
from roce_tune.verify.hostfacts import GidEntry, parse_ibv_devinfo, parse_show_gids

__all__ = ["read_block"]


@dataclass
class Ctx:
    """Reading state shared by every block of one audit."""

    data: AuditData
    exp: Expect
    block_no: int = 0
    owner: dict[tuple[str, str, str], int] = field(default_factory=dict)  # (switch, port, counter) -> block


# ------------------------------------------------------------------------------------------ helpers
def _ev(b: Block, line: int) -> Ev:
    return Ev(b.file, line)


def _find_line(b: Block, pred: Callable[[list[str]], bool], after: int = 0) -> int:
    """Line number of the first output line (at or after capture line ``after``) whose tokens satisfy
    ``pred``."""
    for no, text in b.lines:
        if no >= after and pred(text.split()):
            return no
    return b.start


def _store_ports(sw: SwitchObs, family: str, parsed: dict[str, dict[str, int]], b: Block,
                 line_of: Callable[[str, str], int], ctx: Ctx,
                 port_name: Callable[[str], str] | None = None) -> None:
    """Store per-port counters (under ``port_name(port)``, the platform's one spelling of the port, when
    given; ``line_of`` gets the port as written); a later capture of the same counter becomes the later
    snapshot, the first capture stays the earlier one (three captures: judged first to last)."""
    sw.families.setdefault(family, Ev(b.file, b.start))
    for written, vals in parsed.items():
        port = port_name(written) if port_name else written
        cur = sw.ports.setdefault(port, {})
        for name, v in vals.items():
            old = cur.get(name)
            if old is not None and ctx.owner.get((sw.name, port, name)) != ctx.block_no:
                if sw.ports_before is None:
                    sw.ports_before = {}
                sw.ports_before.setdefault(port, {}).setdefault(name, old)
            cur[name] = Val(v, Ev(b.file, line_of(written, name)))
            ctx.owner[(sw.name, port, name)] = ctx.block_no


def _cmd_arg(b: Block, pattern: str) -> str | None:
    if not b.command:
        return None
    m = re.search(pattern, b.command)
    return m.group(1) if m else None


# ------------------------------------------------------------------------------------- switch readers
# One reader per kind of switch output; which platform prints which kind, how to recognise it and its parser
# are the platforms' CAPTURE_FORMATS (roce_tune.platforms.captures). A reader gets (block, ctx, platform,
# format) and calls the format's parser (CaptureFormat.parse) the way its kind says.
SwitchReader = Callable[[Block, Ctx, str, CaptureFormat], bool]


def _parser(f: CaptureFormat) -> Callable[..., Any]:
    """The platform's parser of format ``f``.

    Raises:
        ValueError: the platform declared the format without one (names the format and its kind).
    """
    if f.parse is None:
        raise ValueError(f"capture format {f.name!r} (kind {f.kind}) declares no parser")
    return f.parse


def _switch(b: Block, ctx: Ctx, platform: str) -> SwitchObs:
    sw = ctx.data.switch(b.device)
    sw.platform = sw.platform or platform
    return sw


def _pfc_rx_tx_tables(b: Block, ctx: Ctx, platform: str, f: CaptureFormat) -> bool:
    """``Port Rx PFC0 …`` / ``Port Tx PFC0 …`` tables, each separately so evidence points at the right row."""
    sw = _switch(b, ctx, platform)
    parse = _parser(f)
    headers = [no for no, t in b.lines if re.match(r"^\s*Port\s+(Rx|Tx)\b", t)]
    for i, start in enumerate(headers):
        end = headers[i + 1] if i + 1 < len(headers) else 10**9
        part = [(no, t) for no, t in b.lines if start <= no < end]
        parsed = parse("\n".join(t for _, t in part))
        rows = {t.split()[0]: no for no, t in part if t.split()}
        _store_ports(sw, "pfc", parsed, b, lambda port, _n: rows.get(port, start), ctx)
    return True


def _queue_table(b: Block, ctx: Ctx, platform: str, f: CaptureFormat) -> bool:
    """``Port TxQ Counter/pkts …`` (queue counters) or its WRED/ECN variant, as a table or as ``-j`` JSON: the
    platform's parser says which family (``queue`` or ``wred``) the output holds."""
    sw = _switch(b, ctx, platform)
    family, parsed = _parser(f)(b.text)
    wred = family == "wred"

    def line_of(port: str, name: str) -> int:  # the platform's answer (the queue's row), else the command's
        i = f.evidence(b.text, port, name) if f.evidence is not None else None
        return b.start if i is None else b.line_of(i)

    _store_ports(sw, family, parsed, b, line_of, ctx)
    # a column the platform cannot count (N/A) is not zero: mark the family read only where numbers were
    if wred and not any(k.endswith("ecn_marked_pkts") for v in parsed.values() for k in v):
        sw.families.pop("wred", None)
    return True


def _pfcwd_stats_table(b: Block, ctx: Ctx, platform: str, f: CaptureFormat) -> bool:
    """``QUEUE STATUS STORM DETECTED/RESTORED …`` rows (``port:queue``)."""
    sw = _switch(b, ctx, platform)
    parsed = _parser(f)(b.text)
    rows = {t.split()[0]: no for no, t in b.lines if t.split()}

    def line_of(port: str, name: str) -> int:
        q = re.match(r"q(\d+)_", name)
        return rows.get(f"{port}:{q.group(1) if q else ''}", b.start)

    _store_ports(sw, "pfcwd", parsed, b, line_of, ctx)
    return True


def _pfcwd_config(b: Block, ctx: Ctx, platform: str, f: CaptureFormat) -> bool:
    """Watchdog configuration rows: the platform's parser gives port -> (line, "action detect restore")."""
    sw = _switch(b, ctx, platform)
    named = _cmd_arg(b, r"config\s+(?!\|)(\S+)")
    filtered = "|" in (b.command or "")  # a grep may have left rows out: only the rows shown are known
    rows = _parser(f)(b.lines)
    if named is None and not filtered:
        sw.pfcwd_scope = None
    elif sw.pfcwd_scope is not None:
        sw.pfcwd_scope.update(named.split(",") if named and not filtered else rows)
    for port, (no, value) in rows.items():
        sw.pfcwd_config[port] = Val(value, _ev(b, no))
    sw.families.setdefault("pfcwd_config", Ev(b.file, b.start))
    return True


def _interface_counters(b: Block, ctx: Ctx, platform: str, f: CaptureFormat) -> bool:
    """Per-interface totals (rx_ok … tx_drp): the platform's parser gives port -> (line, counters)."""
    sw = _switch(b, ctx, platform)
    found = _parser(f)(b.lines)
    rows = {p: no for p, (no, _) in found.items()}
    _store_ports(sw, "interface", {p: v for p, (_, v) in found.items()}, b, lambda p,
                 _n: rows.get(p, b.start), ctx)
    return True


def _roce_status(b: Block, ctx: Ctx, platform: str, f: CaptureFormat) -> bool:
    """The RoCE QoS profile the switch reports (global, or one port's when the command names it) and its
    SP→TC table: the platform's parser gives ``{"roce": {key: (line, value)}, "sp_to_tc": …}``."""
    sw = ctx.data.switch(b.device)
    sw.platform = platform
    port = _cmd_arg(b, r"interface\s+(\S+)\s+qos\s+roce")
    prefix = f"{port}:" if port else ""
    got = _parser(f)(b.lines)
    for key, (no, value) in got["roce"].items():
        sw.roce[prefix + key] = Val(value, _ev(b, no))
    for sp, (no, tc) in got["sp_to_tc"].items():
        sw.sp_to_tc[sp] = Val(tc, _ev(b, no))
    sw.families.setdefault("roce_config", Ev(b.file, b.start))
    return True


def _roce_counters(b: Block, ctx: Ctx, platform: str, f: CaptureFormat) -> bool:
    sw = ctx.data.switch(b.device)
    sw.platform = platform
    port = _cmd_arg(b, r"interface\s+(\S+)\s+qos") or "-"
    prio = ctx.exp.roce_priority
    queue = ctx.exp.lossless_queues[0]
    parsed = _parser(f)(b.text, port, queue, prio)
    keys = {f"q{queue}_ecn_marked_pkts": ("tx-ecn-stats", "ecn-marked-packets"),
            f"pfc_rx_prio{prio}": ("rx-pfc-stats", "pause-packets"),
            f"pfc_tx_prio{prio}": ("tx-pfc-stats", "pause-packets"),
            f"q{queue}_drop_pkts": ("tx-roce-stats", "unicast-no-buffer-discard"),
            "roce_rx_no_buffer_discard": ("rx-roce-stats", "no-buffer-discard")}

    def line_of(_p: str, n: str) -> int:
        parent, key = keys.get(n, ("", n))
        after = _find_line(b, lambda tk: tk[:1] == [parent]) if parent else 0
        return _find_line(b, lambda tk: tk[:1] == [key], after=after)

    _store_ports(sw, "roce_counters", parsed, b, line_of, ctx)
    for fam in ("pfc", "wred"):
        sw.families.setdefault(fam, Ev(b.file, b.start))
    return True


def _whole(family: str, port_re: str | None = None) -> SwitchReader:
    """A reader of a whole-output parser (text -> port -> counters); ``port_re`` takes the port from the
    command."""
    def read(b: Block, ctx: Ctx, platform: str, f: CaptureFormat) -> bool:
        sw = _switch(b, ctx, platform)
        parsed: PortCounters = _parser(f)(b.text)
        if port_re is not None:
            port = _cmd_arg(b, port_re) or "-"
            parsed = {port if p == "-" else p: v for p, v in parsed.items()}
        def line_of(p: str, n: str) -> int:  # the platform's answer, else the port as a word or a JSON key
            if f.evidence is not None and (i := f.evidence(b.text, p, n)) is not None:
                return b.line_of(i)
            return _find_line(b, lambda tk: p in tk or f'"{p}":' in tk)

        _store_ports(sw, family, parsed, b, line_of, ctx, f.port_name)
        return True
    return read


def _per_port(port_re: str, family: str, one_port: bool = False, **kw: object) -> SwitchReader:
    """A reader of a one-port parser ``parse(text, port, **kw)`` (the port from the command; a callable in
    ``kw`` is called with the context). ``one_port``: the parser returns that port's counters only."""
    def read(b: Block, ctx: Ctx, platform: str, f: CaptureFormat) -> bool:
        port = _cmd_arg(b, port_re) or "-"
        sw = _switch(b, ctx, platform)
        extra = {k: (v(ctx) if callable(v) else v) for k, v in kw.items()}
        got = _parser(f)(b.text, port, **extra)
        parsed: PortCounters = {port: got} if one_port else got

        def line_of(p: str, n: str) -> int:  # the platform's answer, else the command's line
            i = f.evidence(b.text, p, n) if f.evidence is not None else None
            return b.start if i is None else b.line_of(i)

        _store_ports(sw, family, parsed, b, line_of, ctx, f.port_name)
        return True
    return read


_PORT = r"(?:interface|interfaces|ethernet)\s+(\S+)"
#: kind (a platform's ``CaptureFormat.kind``) -> reader
SWITCH_KINDS: dict[str, SwitchReader] = {
    "pfc_rx_tx_tables": _pfc_rx_tx_tables,
    "queue_table": _queue_table,
    "pfcwd_stats_table": _pfcwd_stats_table,
    "pfcwd_config": _pfcwd_config,
    "interface_counters": _interface_counters,
    "roce_status": _roce_status,
    "roce_counters": _roce_counters,
    "pfc_queue_detail": _whole("pfcwd"),
    "queuing_interface": _per_port(_PORT, "queue"),
    "counters_qos": _per_port(r"interface\s+(\S+)", "pfc", ecn_queue=lambda c: c.exp.lossless_queues[0]),
    "pfc_watchdog_port": _per_port(r"interface\s+(\S+)", "pfcwd"),
    "pfc_counters_json": _whole("pfc"),
    "ecn_counters_queue": _per_port(_PORT, "wred", one_port=True),
    "pfc_interfaces": _whole("pfc"),
    "extensive_pfc": _whole("pfc"),
    "interfaces_queue": _whole("queue"),
}


# --------------------------------------------------------------------------------------- host readers
def _mlnx_qos(b: Block, ctx: Ctx) -> bool:
    """``mlnx_qos -i IF``: trust state, dscp2prio lines, the PFC ``enabled`` row."""
    netdev = _cmd_arg(b, r"-i\s+(\S+)") or "-"
    nic = ctx.data.host(b.device).nic(netdev)
    in_pfc = False
    for no, t in b.lines:
        s = t.strip()
        m = re.match(r"Priority trust (?:state|mode):\s*(\S+)", s)
        if m:
            nic.trust = Val(m.group(1), _ev(b, no))
        m = re.match(r"prio:\s*(\d)\s+dscp:\s*([\d,\s]+)", s)
        if m:
            for d in m.group(2).replace(" ", "").strip(",").split(","):
                if d.isdigit():
                    nic.dscp_to_prio[int(d)] = Val(int(m.group(1)), _ev(b, no))
        if s.startswith("PFC configuration"):
            in_pfc = True
            continue
        if in_pfc and s.startswith("enabled"):
            flags = [int(x) for x in s.split()[1:9] if x in "01"]
            nic.pfc_enabled = Val(tuple(p for p, f in enumerate(flags) if f), _ev(b, no))
            in_pfc = False
    return True


def _ibv_devinfo(b: Block, ctx: Ctx) -> bool:
    host = ctx.data.host(b.device)
    starts = [(i, no, t) for i, (no, t) in enumerate(b.lines) if re.match(r"^\s*hca_id:\s*\S+", t)]
    for k, (i, no, t) in enumerate(starts):
        dev = t.split(":", 1)[1].strip()
        chunk = b.lines[i:starts[k + 1][0] if k + 1 < len(starts) else len(b.lines)]
        text = "\n".join(x for _, x in chunk)
        for port, facts in parse_ibv_devinfo(text).items():
            d = host.dev(dev, port)
            pline = _find_line(b, lambda tk: tk[:2] == ["port:", str(port)], after=no)
            for key, attr in (("active_mtu", "active_mtu"), ("max_mtu", "max_mtu"),
                              ("link_layer", "link_layer"),
                              ("state", "state")):
                if key in facts:
                    ln = _find_line(b, lambda tk: bool(tk) and tk[0] == key + ":", after=pline)
                    setattr(d, attr, Val(facts[key], _ev(b, ln)))
        for lno, x in chunk:
            m = re.match(r"^\s*fw_ver:\s*(\S+)", x)
            if m:
                for d in host.rdma.values():
                    if d.device == dev:
                        d.fw_ver = Val(m.group(1), _ev(b, lno))
                host.dev(dev).fw_ver = Val(m.group(1), _ev(b, lno))
    return True


def _show_gids(b: Block, ctx: Ctx) -> bool:
    host = ctx.data.host(b.device)
    seen: set[str] = set()
    for no, t in b.lines:
        for g in parse_show_gids(t):
            d = host.dev(g.device, g.port)
            if d.gid_table is None or d.device not in seen:
                d.gids = [x for x in d.gids if False]
                d.gid_table = _ev(b, b.start)
                seen.add(d.device)
            d.gids.append((g, _ev(b, no)))
            if g.netdev and g.ver.lower() == "v2":
                d.netdev = d.netdev or g.netdev
    # show_gids DEV with an empty table still says the table was read
    dev = _cmd_arg(b, r"show_gids\s+(\S+)")
    if dev and not seen:
        host.dev(dev).gid_table = _ev(b, b.start)
    return True


#: an ``ibdev2netdev [-v]`` row (mlnx-tools): ``mlx5_0 port 1 ==> ens1f0np0 (Up)``, with ``-v`` the PCI
#: address first and the HCA, firmware and port state between
_IBDEV2NETDEV = re.compile(r"^(?:[0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.\d+\s+)?(?P<dev>\S+)\s.*?"
                           r"\bport\s+(?P<port>\d+)\b.*?==>\s*(?P<netdev>\S+)\s+\(\w+\)\s*$")


def _ibdev2netdev(b: Block, ctx: Ctx) -> bool:
    """``ibdev2netdev``: which netdev each RDMA device port is (ties ``ethtool -S`` to its hw_counters)."""
    host = ctx.data.host(b.device)
    rows = [(no, t, _IBDEV2NETDEV.match(t.strip())) for no, t in b.lines if t.strip()]
    for _, _, m in rows:
        if m is not None:
            host.dev(m.group("dev"), int(m.group("port"))).netdev = m.group("netdev")
    _report_bad(b, ctx, [(no, t) for no, t, m in rows if m is None])
    return any(m is not None for _, _, m in rows)


def _rdma_statistic(b: Block, ctx: Ctx) -> bool:
    """``rdma statistic [show] [link DEV/N]``: ``link DEV/N name value …`` records; indented continuation
    lines (the tool wraps long records) belong to the record above."""
    host = ctx.data.host(b.device)
    cur = None
    batch: dict[str, dict[str, Val[int]]] = {}
    for no, t in b.lines:
        toks = t.split()
        if toks[:1] == ["link"] and len(toks) > 1 and "/" in toks[1]:
            dev, _, port = toks[1].partition("/")
            cur = (dev, int(port) if port.isdigit() else 1)
            toks = toks[2:]
        elif not (t[:1].isspace() and cur):
            continue
        for name, val in zip(toks[::2], toks[1::2]):
            v = to_int(val)
            if v is not None and cur:
                batch.setdefault(f"{cur[0]}/{cur[1]}", {})[name] = Val(v, _ev(b, no))
    for key, vals in batch.items():
        dev, _, port = key.partition("/")
        _set_hw(host, dev, int(port), vals, ctx)
    return True


def _earliest(before: Counters | None, now: Counters) -> Counters:
    """The earlier snapshot once ``now`` (the counters read so far) is superseded by a later capture: each
    counter's first capture (``before``'s value where it has one), so three captures are judged from the
    first to the last, never over the last two only."""
    return {**now, **(before or {})}


def _set_hw(host: HostObs, dev: str, port: int, vals: Counters, ctx: Ctx) -> None:
    d = host.dev(dev, port)
    if d.hw and getattr(d, "_block", None) != ctx.block_no:
        d.hw_before = _earliest(d.hw_before, d.hw)
    d.hw.update(vals)
    d._block = ctx.block_no  # type: ignore[attr-defined]


def _set_ethtool(host: HostObs, netdev: str, vals: Counters, ctx: Ctx,
                 before: Counters | None = None) -> None:
    nic = host.nic(netdev)
    if before is not None:
        nic.ethtool_before = before
    elif nic.ethtool and getattr(nic, "_block", None) != ctx.block_no:
        nic.ethtool_before = _earliest(nic.ethtool_before, nic.ethtool)
    nic.ethtool.update(vals)
    nic._block = ctx.block_no  # type: ignore[attr-defined]


def _ip_link(b: Block, ctx: Ctx) -> bool:
    """``ip [-d] link [show]`` through ntc-templates ``linux_ip_link_show`` (MTU, master)."""
    import textfsm
    from ntc_templates.parse import _get_template_dir

    host = ctx.data.host(b.device)
    heads = [(no, t) for no, t in b.lines if re.match(r"^\d+:\s+\S+:\s+<", t)]
    # the template knows `ip link`; `ip -d link` adds detail after the link/ line's addresses: cut it there
    keep = []
    for _, t in b.lines:
        if re.match(r"^\d+:\s", t):
            keep.append(t)
        elif (m := re.match(r"^(\s+link/\S+(?:\s+\S+\s+brd\s+\S+)?(?:\s+permaddr\s+\S+)?)", t)):
            keep.append(m.group(1))
    text = "\n".join(keep) + "\n"
    try:
        with open(f"{_get_template_dir()}/linux_ip_link_show.textfsm", encoding="utf-8") as fh:
            rows = textfsm.TextFSM(fh).ParseTextToDicts(text)
    except (textfsm.TextFSMError, OSError):
        return False
    for row in rows:
        name = row["INTERFACE"].split("@")[0]
        ln = next((no for no, t in heads if re.match(rf"^\d+:\s+{re.escape(row['INTERFACE'])}:", t)), b.start)
        nic = host.nic(name)
        nic.mtu = Val(int(row["MTU"]), _ev(b, ln))
        if row.get("MASTER"):
            nic.master = row["MASTER"]
    return bool(rows)


def _bonding(b: Block, ctx: Ctx) -> bool:
    host = ctx.data.host(b.device)
    name = _cmd_arg(b, r"/proc/net/bonding/(\S+)") or "bond"
    bond: BondObs | None = None
    for no, t in b.lines:
        m = re.match(r"^(?:/proc/net/bonding/(\S+?):)?\s*Bonding Mode:\s*(.+?)\s*$", t)
        if m:
            name = m.group(1) or name
            bond = host.bonds.setdefault(name, BondObs(name=name, mode=Val(m.group(2), _ev(b, no))))
            continue
        m = re.match(r"^(?:/proc/net/bonding/\S+?:)?\s*Transmit Hash Policy:\s*(.+?)\s*$", t)
        if m and bond:
            bond.hash_policy = Val(m.group(1), _ev(b, no))
        m = re.match(r"^(?:/proc/net/bonding/\S+?:)?\s*Slave Interface:\s*(\S+)", t)
        if m and bond:
            bond.slaves.append(m.group(1))
    return bond is not None


def _ethtool_settings(b: Block, ctx: Ctx) -> bool:
    netdev = _cmd_arg(b, r"ethtool\s+(\S+)\s*$") or next(
        (m.group(1) for _, t in b.lines if (m := re.match(r"^Settings for (\S+?):", t))), "-")
    for no, t in b.lines:
        m = re.match(r"^\s*Speed:\s*(\d+)Mb/s", t)
        if m:
            ctx.data.host(b.device).nic(netdev).speed_mbps = Val(int(m.group(1)), _ev(b, no))
    return True


#: ``ethtool -a`` (ethtool ``netlink/pause.c`` and the ioctl path's ``dump_pause``): a ``Pause parameters
#: for IF:`` header, ``Autonegotiate:``/``RX:``/``TX:`` on|off (``n/a`` when the driver gives none),
#: ``RX negotiated:``/``TX negotiated:`` after autonegotiation, ``Statistics:`` with ``-I``
_PAUSE_HEAD = re.compile(r"^Pause parameters for (\S+?):$")
_PAUSE_LINE = re.compile(r"^(Autonegotiate|RX|TX|RX negotiated|TX negotiated)\s*:\s*(on|off|n/a)$", re.I)
_PAUSE_STAT = re.compile(r"^([rt]x_pause_frames):\s*(\d+)$")
#: a driver without pause parameters (ioctl path: ``Cannot get device pause settings: Operation not
#: supported``; netlink: ``netlink error: Operation not supported``), or a netdev that does not exist
_PAUSE_ERROR = re.compile(r"^(?:Cannot get device (?:pause )?settings|netlink error):\s*(.+)$")
_PAUSE_CMD = r"\bethtool\s+(?:-a|--show-pause)\s+([\w.@:-]+)(?:\s|;|$)"


def _pause_line(host: HostObs, netdev: str, s: str, ev: Ev) -> bool:
    """One line of an ``ethtool -a`` report of ``host``'s ``netdev``, stored on it; False when not one."""
    if (m := _PAUSE_LINE.match(s)):
        key = m.group(1).lower().replace("autonegotiate", "autoneg").replace(" ", "_")
        host.nic(netdev).pause[key] = Val(m.group(2).lower(), ev)
    elif (m := _PAUSE_STAT.match(s)):
        host.nic(netdev).pause_frames[m.group(1)] = Val(int(m.group(2)), ev)
    elif (m := _PAUSE_ERROR.match(s)) and netdev != "-" and not (
            (seen := host.nics.get(netdev)) and seen.pause):  # a loop's next NIC failing has no header
        host.nic(netdev).pause_error = Val(m.group(1), ev)
    else:
        return s == "Statistics:"
    return True


def _pause(b: Block, ctx: Ctx) -> bool:
    """``ethtool -a IF`` (``--show-pause``; also a loop over NICs, one ``Pause parameters for IF:`` report
    each): global (802.3x) pause per netdev, the error when the driver gives none; other lines are listed as
    not understood. False (nothing stored) for an error line outside an ``ethtool -a`` report, or a report
    without one line read."""
    netdev = _cmd_arg(b, _PAUSE_CMD)
    if netdev is None and not any(_PAUSE_HEAD.match(t.strip()) for _, t in b.lines):
        return False
    host = ctx.data.host(b.device)
    bad: list[tuple[int, str]] = []
    for no, t in b.lines:
        s = t.strip()
        if (m := _PAUSE_HEAD.match(s)):
            netdev = m.group(1)
        elif s and not _pause_line(host, netdev or "-", s, _ev(b, no)):
            bad.append((no, t))
    if len(bad) == sum(1 for _, t in b.lines if t.strip() and not _PAUSE_HEAD.match(t.strip())):
        return False  # no line read: the line readers list the block
    _report_bad(b, ctx, bad)
    return True


def _nccl_tests(b: Block, ctx: Ctx) -> bool:
    from roce_tune.verify.nccl import parse_nccl_output

    host = ctx.data.host(b.device)
    # keep line numbers: pad with the lines before the block so run.line is the capture line
    pad = "\n" * (b.lines[0][0] - 1) if b.lines else ""
    text = pad + b.text
    if b.command:
        text = pad[:-1] + b.command + "\n" + b.text if pad else b.command + "\n" + b.text
    try:
        runs = parse_nccl_output(text, source=b.file)
    except Exception:  # noqa: BLE001 - not an nccl-tests table after all: the line readers take it
        return False
    for run in runs:
        host.runs.append((run, b.file))
    for no, t in b.lines:
        _nccl_line(host, b, no, t)
    return bool(runs)


# ------------------------------------------------------------------------------------------ line readers
_SYS_LINE = re.compile(r"^(?P<path>(?:/sys|/proc|/etc)?[\w./\-:]*?"
                       r"(?:hw_counters|counters|gids|gid_attrs/types|"
                       r"gid_attrs/ndevs|ecn/roce_[rn]p(?:/enable)?|tc/\d+|rdma_cm/\S+?/ports/\d+|net/\S+?)/"
                       r"[\w.\-]+):(?P<val>.*)$")
_ETHTOOL_LINE = re.compile(r"^\s+([A-Za-z0-9_.\-\[\]]+):\s+(-?\d+)\s*$")
_ENV_LINE = re.compile(r"^\s*(?:export\s+)?((?:NCCL|UCX)_[A-Z0-9_]+)=(.*?)\s*$")


def _nccl_line(host: HostObs, b: Block, no: int, t: str) -> bool:
    if "NCCL INFO" not in t and "NCCL WARN" not in t:
        return False
    ev = _ev(b, no)
    host.info_read = host.info_read or ev
    m = re.search(r"NCCL version (\S+?)(?:\+|\s|$)", t)
    if m:
        host.nccl_info["version"] = Val(m.group(1), ev)
    m = re.search(r"\b((?:NCCL|UCX)_[A-Z0-9_]+) set (?:by environment )?to (.*?)\.?\s*$", t)
    if m:
        host.nccl_info["env:" + m.group(1)] = Val(m.group(2), ev)
    m = re.search(r"NET/IB\s*:\s*Using\s+(.*?)(?:;\s*OOB|$)", t)
    if m:
        for dev in re.findall(r"\[\d+\](\S+)", m.group(1)):
            host.nccl_used.append(Val(dev, ev))
    return True


HwCounters = dict[tuple[str, int], Counters]  # (RDMA device, port) -> hw_counters
#: a sysfs value reader: (host, block, its path match, the value, where, hw counters collected) -> understood
SysReader = Callable[[HostObs, Block, re.Match[str], str, Ev, HwCounters], bool]


def _sys_hw_counter(host: HostObs, b: Block, m: re.Match[str], val: str, ev: Ev, hw: HwCounters) -> bool:
    """``…/ports/N/hw_counters/NAME`` (or ``counters``): collected per (device, port); a bare
    ``hw_counters/NAME`` takes the device from the command (``-`` when it names none) and port 1."""
    v = to_int(val)
    if v is None:
        return False
    dev = m.group(1) or _cmd_arg(b, r"infiniband/([^/\s]+)/") or "-"
    hw.setdefault((dev, int(m.group(2) or 1)), {})[m.group(4)] = Val(v, ev)
    return True


def _sys_gid(host: HostObs, b: Block, m: re.Match[str], val: str, ev: Ev, hw: HwCounters) -> bool:
    """``…/ports/N/gids/I``, ``gid_attrs/types/I``, ``gid_attrs/ndevs/I``: kept until the block ends
    (:func:`_finish_sysgids` joins them into GID entries)."""
    d = host.dev(m.group(1), int(m.group(2)))
    d.gid_table = d.gid_table or ev
    pending = d.__dict__.setdefault("_sysgid", {})
    pending.setdefault(int(m.group(4)), {})[m.group(3)] = (val, ev)
    return True


def _sys_traffic_class(host: HostObs, b: Block, m: re.Match[str], val: str, ev: Ev, hw: HwCounters) -> bool:
    """``infiniband/DEV/tc/N/traffic_class`` (``Global tclass=106``) or rdma_cm's ``default_roce_tos``."""
    num = re.findall(r"\d+", val)
    if num:
        host.dev(m.group(1)).traffic_class = Val(int(num[-1]), ev)
    return True


def _sys_understood(host: HostObs, b: Block, m: re.Match[str], val: str, ev: Ev, hw: HwCounters) -> bool:
    """A value read and not needed by any check (rdma_cm ``default_roce_mode``)."""
    return True


def _sys_ecn(host: HostObs, b: Block, m: re.Match[str], val: str, ev: Ev, hw: HwCounters) -> bool:
    """DCQCN sysfs: ``net/IF/ecn/roce_rp|roce_np/enable/P`` or a parameter."""
    v = to_int(val)
    if v is None:
        return False
    host.nic(m.group(1)).ecn_sysfs[m.group(2)] = Val(v, ev)
    return True


def _sys_mtu(host: HostObs, b: Block, m: re.Match[str], val: str, ev: Ev, hw: HwCounters) -> bool:
    """``class/net/IF/mtu``."""
    if not val.isdigit():
        return False
    host.nic(m.group(1)).mtu = Val(int(val), ev)
    return True


#: (path pattern, reader); the first pattern found in the path decides (its reader's answer is final).
_SYS_READERS: tuple[tuple[re.Pattern[str], SysReader], ...] = (
    (re.compile(r"infiniband/([^/]+)/ports/(\d+)/(hw_counters|counters)/([\w]+)$"), _sys_hw_counter),
    (re.compile(r"()()(hw_counters)/([\w]+)$"), _sys_hw_counter),
    (re.compile(r"infiniband/([^/]+)/ports/(\d+)/(gids|gid_attrs/types|gid_attrs/ndevs)/(\d+)$"), _sys_gid),
    (re.compile(r"infiniband/([^/]+)/tc/\d+/traffic_class$"), _sys_traffic_class),
    (re.compile(r"rdma_cm/([^/]+)/ports/\d+/default_roce_tos$"), _sys_traffic_class),
    (re.compile(r"rdma_cm/[^/]+/ports/\d+/default_roce_mode$"), _sys_understood),
    (re.compile(r"net/([^/]+)/ecn/(roce_[rn]p/(?:enable/\d+|[\w]+))$"), _sys_ecn),
    (re.compile(r"class/net/([^/]+)/mtu$"), _sys_mtu),
)


def _sys_value(host: HostObs, b: Block, no: int, path: str, raw: str, ctx: Ctx,
               hw: dict[tuple[str, int], Counters], eth: Counters) -> bool:
    """Read the sysfs/procfs ``path``'s value ``raw`` (capture line ``no``); False when not understood."""
    for pattern, reader in _SYS_READERS:
        m = pattern.search(path)
        if m:
            return reader(host, b, m, raw.strip(), _ev(b, no), hw)
    return False


def _gid_ipv4(gid: str) -> str | None:
    """The IPv4 address of an IPv4-mapped GID (``::ffff:a.b.c.d`` in 8 groups), else None."""
    words = gid.split(":")
    if len(words) == 8 and words[:5] == ["0000"] * 5 and words[5].lower() == "ffff":
        a, c = int(words[6], 16), int(words[7], 16)
        return f"{a >> 8}.{a & 255}.{c >> 8}.{c & 255}"
    return None


def _sysgid_entry(d: RdmaObs, idx: int, parts: dict[str, tuple[str, Ev]]) -> tuple[GidEntry, Ev] | None:
    """GID ``idx`` of ``d`` from its sysfs ``gids`` / ``gid_attrs/types`` / ``gid_attrs/ndevs`` values;
    None when the GID was not read or is all zeros (an empty slot)."""
    gid, ev = parts.get("gids", ("", None))
    if not gid or ev is None or set(gid.replace(":", "")) <= {"0"}:
        return None
    typ = parts.get("gid_attrs/types", ("", None))[0]
    ndev = parts.get("gid_attrs/ndevs", ("", None))[0] or None
    ver = "v2" if "v2" in typ.lower() else "v1" if typ else "?"
    return GidEntry(device=d.device, port=d.port, index=idx, gid=gid, ipv4=_gid_ipv4(gid), ver=ver,
                    netdev=ndev), ev


def _finish_sysgids(host: HostObs) -> None:
    """Turn the sysfs GID values kept by :func:`_sys_gid` into GID entries; a RoCE v2 GID's netdev names
    the device's netdev when nothing else did."""
    for d in host.rdma.values():
        pending = d.__dict__.pop("_sysgid", None)
        for idx, parts in sorted((pending or {}).items()):
            entry = _sysgid_entry(d, idx, parts)
            if entry is None:
                continue
            d.gids.append(entry)
            if entry[0].netdev and entry[0].ver == "v2":
                d.netdev = d.netdev or entry[0].netdev


@dataclass
class _LineRead:
    """What the line readers collected from one host block; ``pending_path`` is a bare sysfs path whose
    value may follow on the next line (``grep -r`` / ``ls`` then ``cat`` output)."""

    host: HostObs
    b: Block
    ctx: Ctx
    eth: Counters = field(default_factory=dict)
    eth_earlier: Counters | None = None  # the previous ``ethtool -S`` run when a counter repeats in the block
    before: Counters = field(default_factory=dict)
    after: Counters = field(default_factory=dict)
    hw: HwCounters = field(default_factory=dict)
    bad: list[tuple[int, str]] = field(default_factory=list)
    pending_path: tuple[int, str] | None = None


def _line_heading(st: _LineRead, no: int, t: str, s: str) -> bool:
    return s == "NIC statistics:"


def _line_nccl(st: _LineRead, no: int, t: str, s: str) -> bool:
    return _nccl_line(st.host, st.b, no, t)


def _line_env(st: _LineRead, no: int, t: str, s: str) -> bool:
    """``NCCL_*=`` / ``UCX_*=`` (``export``, quotes stripped)."""
    m = _ENV_LINE.match(t)
    if not m:
        return False
    val = m.group(2).strip()
    if len(val) >= 2 and val[0] == val[-1] and val[0] in "'\"":
        val = val[1:-1]
    ev = _ev(st.b, no)
    (st.host.ucx if m.group(1).startswith("UCX_") else st.host.env)[m.group(1)] = Val(val, ev)
    st.host.env_read = st.host.env_read or ev
    return True


def _line_side_by_side(st: _LineRead, no: int, t: str, s: str) -> bool:
    """A ``diff -y`` line: the counters before and after."""
    bb, aa = parse_side_by_side(t)
    if not aa:
        return False
    for k, v in bb.items():
        st.before[k] = Val(v, _ev(st.b, no))
    for k, v in aa.items():
        st.after[k] = Val(v, _ev(st.b, no))
    return True


def _line_sys(st: _LineRead, no: int, t: str, s: str) -> bool:
    """``/sys/…/path:value`` (``grep -H ''``)."""
    m = _SYS_LINE.match(s)
    return bool(m and _sys_value(st.host, st.b, no, m.group("path"), m.group("val"), st.ctx, st.hw, st.eth))


def _line_bare_path(st: _LineRead, no: int, t: str, s: str) -> bool:
    """A sysfs/procfs path alone: its value may be the next line."""
    if not re.match(r"^/(sys|proc)/\S+$", s):
        return False
    st.pending_path = (no, s)
    return True


def _line_read_error(st: _LineRead, no: int, t: str, s: str) -> bool:
    """``grep``/``cat``/``ls`` failing on a sysfs file the kernel does not offer: nothing to read."""
    return bool(re.match(r"^(grep|cat|ls): /(sys|proc)/\S+: (Invalid argument|No such file or directory)$",
                         s))


def _line_ethtool(st: _LineRead, no: int, t: str, s: str) -> bool:
    """An ``ethtool -S`` counter line."""
    m = _ETHTOOL_LINE.match(t)
    if not m:
        return False
    if m.group(1) in st.eth:  # the counter again: a second run of the command in this block, a snapshot
        st.eth_earlier, st.eth = st.eth, {}
    st.eth[m.group(1)] = Val(int(m.group(2)), _ev(st.b, no))
    return True


#: Line readers in the order they are tried on each host line (the first that understands it takes it).
_LINE_READERS: tuple[Callable[[_LineRead, int, str, str], bool], ...] = (
    _line_heading, _line_nccl, _line_env, _line_side_by_side, _line_sys, _line_bare_path, _line_read_error,
    _line_ethtool)


def _read_host_line(st: _LineRead, no: int, t: str, s: str) -> None:
    """One non-empty, non-comment host line (``s`` stripped); a pending bare path takes it as its value
    first."""
    if st.pending_path is not None:
        (pno, path), st.pending_path = st.pending_path, None
        if not s.startswith("/") and _sys_value(st.host, st.b, pno, path, s, st.ctx, st.hw, st.eth):
            return
        st.bad.append((pno, path))
    if not any(reader(st, no, t, s) for reader in _LINE_READERS):
        st.bad.append((no, t))


def _store_lines(st: _LineRead, netdev: str) -> None:
    """Store the counters the line readers collected on the host (``netdev``: the ``ethtool -S`` one)."""
    if st.after:
        _set_ethtool(st.host, netdev, st.after, st.ctx, before=st.before)
    if st.eth:
        _set_ethtool(st.host, netdev, st.eth, st.ctx, before=st.eth_earlier)
    for (dev, port), vals in st.hw.items():
        _set_hw(st.host, dev, port, vals, st.ctx)
    _finish_sysgids(st.host)


def read_lines(b: Block, ctx: Ctx, skip: set[int]) -> bool:
    """Line readers over the block lines not in ``skip``; what nobody reads becomes :class:`Unparsed`.
    True when a line reader took at least one line as a fact (a ``NIC statistics:`` heading is none)."""
    lines = [(no, t, s) for no, t in b.lines if no not in skip and (s := t.strip()) and not s.startswith("#")]
    if _is_switch(b, ctx):
        _report_bad(b, ctx, [(no, t) for no, t, _ in lines])
        return False
    st = _LineRead(ctx.data.host(b.device), b, ctx)
    one_file = _cmd_arg(b, r"^(?:sudo\s+)?cat\s+(/(?:sys|proc)/[^\s*?\[]+)\s*$")
    if one_file and lines:  # `cat /sys/…/file`: the output is that file's value
        st.pending_path = (lines[0][0], one_file)
    for no, t, s in lines:
        _read_host_line(st, no, t, s)
    if st.pending_path is not None:
        st.bad.append(st.pending_path)
    _store_lines(st, _cmd_arg(b, r"ethtool\s+(?:-S|--statistics)\s+(\S+)") or "-")
    _report_bad(b, ctx, st.bad)
    bad = {no for no, _ in st.bad}
    return any(no not in bad and s != "NIC statistics:" for no, _, s in lines)


#: secrets a line not understood may hold besides the switch platforms' forms (``SECRET_PATTERNS``): the value
#: of an environment variable whose name says secret, token, password or key (a whole ``env`` pasted instead
#: of ``env | grep NCCL``), the password of a URL's ``user:password@``
_LINE_SECRETS = (
    re.compile(r"(?i)^\s*(?:export\s+)?[\w.]*(?:secret|token|passw|passphrase|api_?key|access_?key|"
               r"private_?key|credential|auth)[\w.]*=(?P<secret>.+)$", re.MULTILINE),
    re.compile(r"://[^/\s:@]+:(?P<secret>[^@\s/]+)@"),
)


@cache
def _secret_forms() -> tuple[SecretPattern, ...]:
    from roce_tune.platforms import SWITCH_PLATFORMS, secret_patterns

    return (*_LINE_SECRETS, *(p for name in SWITCH_PLATFORMS for p in secret_patterns(name)))


def _shown(text: str) -> str:
    """``text`` (a capture line or command) as a report may show it: every secret form masked."""
    return mask_secrets(text, _secret_forms())


def _unparsed(b: Block, line: int, end_line: int, first: str) -> Unparsed:
    """A run of ``b`` not understood, its first line and command with secrets masked."""
    return Unparsed(file=b.file, line=line, end_line=end_line,
                    command=_shown(b.command) if b.command else b.command, first=_shown(first))


def _report_bad(b: Block, ctx: Ctx, bad: list[tuple[int, str]]) -> None:
    span: list[tuple[int, str]] = []
    for no, t in bad + [(10**9, "")]:
        if span and no != span[-1][0] + 1:
            # a run that starts at the block's first line is "the block"; name the prompt's command
            ctx.data.unparsed.append(_unparsed(b, span[0][0], span[-1][0], span[0][1].strip()))
            span = []
        span.append((no, t))


def _is_switch(b: Block, ctx: Ctx) -> bool:
    return b.device in ctx.data.switches and b.device not in ctx.data.hosts


# ------------------------------------------------------------------------------------------ dispatch
Reader = Callable[[Block, Ctx], bool]


def _switch_reader(platform: str, f: CaptureFormat) -> Reader:
    reader = SWITCH_KINDS[f.kind]

    def read(b: Block, ctx: Ctx) -> bool:
        return reader(b, ctx, platform, f)
    return read


#: (name, content pattern, command pattern or None, reader); the first whose pattern matches reads the block.
#: nccl-tests first, then every switch output the platforms declare (CAPTURE_FORMATS), then host outputs.
BLOCK_READERS: tuple[tuple[str, str, str | None, Reader], ...] = (
    ("nccl-tests", (r"^#?\s*(nThread\s+\d|nccl-tests version|Collective test "
                    r"starting)|\bsize\s+count\s+type\b|Avg bus bandwidth|Out of bounds values"), None,
     _nccl_tests),
    # fallback formats (content other vendors' output shares) go last, so an output captured without a
    # prompt is taken by the format whose content alone is distinctive
    *((f"{p} {f.name}", f.pattern, f.command, _switch_reader(p, f))
      for p, f in sorted(capture_formats(), key=lambda pf: pf[1].fallback) if f.kind != "running_config"),
    ("mlnx_qos", r"PFC configuration:|Priority trust (state|mode):", None, _mlnx_qos),
    ("ibv_devinfo", r"^\s*hca_id:\s*\S+", None, _ibv_devinfo),
    ("show_gids", r"^\s*DEV\s+PORT\s+INDEX\s+GID", None, _show_gids),
    ("ibdev2netdev", r"\bport\s+\d+\b.*==>\s*\S+\s+\(\w+\)\s*$", None, _ibdev2netdev),
    ("rdma statistic", r"^link\s+\S+/\d+\s+\w+\s+\d+", None, _rdma_statistic),
    ("ip link", r"^\d+:\s+\S+:\s+<[A-Z_,\-]*>\s+mtu\s+\d+", None, _ip_link),
    ("/proc/net/bonding", r"Bonding Mode:", None, _bonding),
    ("ethtool -a", r"^Pause parameters for \S+:|^Cannot get device pause settings:|^netlink error:", None,
     _pause),
    ("ethtool", r"^Settings for \S+:|^\s*Speed:\s*\d+Mb/s", None, _ethtool_settings),
)

#: Formats that make a device a switch (every platform-declared one).
SWITCH_READERS = {f"{p} {f.name}" for p, f in capture_formats() if f.kind != "running_config"}


def _not_read(b: Block, ctx: Ctx, why: str) -> None:
    """List the whole block as not understood, its first line followed by ``why``."""
    first = b.lines[0][1].strip() if b.lines else ""
    end = b.lines[-1][0] if b.lines else b.start
    ctx.data.unparsed.append(_unparsed(b, b.start, end, f"{first} ({why})"))


def _running_config(b: Block, ctx: Ctx) -> str | None:
    """A switch's running configuration (any platform's ``CAPTURE_FORMATS``): read back, or listed as not
    understood with the read-back's reason when the platform cannot read it."""
    from roce_tune.audit.running import read_running
    from roce_tune.platforms.captures import running_config_format

    found = running_config_format(b.text, b.command)
    if found is None:
        return None
    name, fmt = found
    try:
        text = fmt.to_read_back(b.text) if fmt.to_read_back else b.text
        read_running(ctx.data.switch(b.device), name, text, b.lines, _ev(b, b.start))
    except (ValueError, NotImplementedError) as exc:
        _not_read(b, ctx, f"{name} {fmt.name}: {exc}")
    except Exception as exc:  # noqa: BLE001 - a text read_back cannot take (hand-edited JSON) loses no audit
        _not_read(b, ctx, f"{name} {fmt.name}: {type(exc).__name__}: {exc}")
    else:
        ctx.data.understood += 1
    ctx.data.blocks.append((b.file, b.start, f"{name} {fmt.name}"))
    return fmt.name


def _block_reader(b: Block, ctx: Ctx) -> str | None:
    """Run the first block reader that recognises ``b`` and reads it: its name; ``failed`` when it raised
    (the block is listed as not understood with the reason); None when none took the block."""
    for name, pattern, cmd_pattern, reader in BLOCK_READERS:
        if not re.search(pattern, b.text, re.MULTILINE):
            continue
        if cmd_pattern and b.command and not re.search(cmd_pattern, b.command):
            continue
        try:
            understood = reader(b, ctx)
        except Exception as exc:  # noqa: BLE001 - one mangled block never loses the audit of the others
            _not_read(b, ctx, f"{name}: {type(exc).__name__}: {exc}")
            return "failed"
        if understood:
            ctx.data.understood += 1
            ctx.data.blocks.append((b.file, b.start, name))
            return name
    return None


def read_block(b: Block, ctx: Ctx) -> str:
    """Read one block; returns the format name (``lines`` when only line readers took it)."""
    ctx.block_no += 1
    running = _running_config(b, ctx)
    if running is not None:
        return running
    name = _block_reader(b, ctx)
    if name is not None:
        return name
    if not any(t.strip() and not t.strip().startswith("#") for _, t in b.lines):
        return "comment"
    if b.device not in ctx.data.switches:
        ctx.data.host(b.device)
    if read_lines(b, ctx, set()):
        ctx.data.understood += 1
    ctx.data.blocks.append((b.file, b.start, "lines"))
    return "lines"
