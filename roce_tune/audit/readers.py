"""Detect what each capture block is and read it into :class:`~roce_tune.audit.model.AuditData`.

Block readers recognise a whole command's output by its content (headers, key lines), helped by the
prompt's command where it names a port or interface. Line readers then take what is left line by line
(``ethtool -S`` lines, ``diff -y`` pairs, sysfs ``path:value`` lines, ``NCCL_*=`` variables, ``NCCL
INFO`` lines). Lines nobody understood are reported (:class:`~roce_tune.audit.model.Unparsed`), never
dropped.

Parsers reused from :mod:`roce_tune.verify` (counters, vendor_counters, hostfacts, nccl);
``ip link`` goes through ntc-templates (``linux_ip_link_show``). Our own here, because no maintained
template exists: ``mlnx_qos``, ``ibv_devinfo`` (multi-device and fw_ver), GID sysfs, DCQCN sysfs,
``/proc/net/bonding``, NCCL env / INFO lines, SONiC ``show pfcwd config`` and ``show interface
counters``, Cumulus ``nv show qos roce`` / ``… qos roce status``.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

from roce_tune.audit.capture import Block
from roce_tune.audit.expect import Expect
from roce_tune.audit.model import AuditData, BondObs, Counters, Ev, HostObs, SwitchObs, Unparsed, Val
from roce_tune.verify import counters as vc
from roce_tune.verify import vendor_counters as vv
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
    """Line number of the first output line (at or after capture line ``after``) whose tokens satisfy ``pred``."""
    for no, text in b.lines:
        if no >= after and pred(text.split()):
            return no
    return b.start


def _store_ports(sw: SwitchObs, family: str, parsed: dict[str, dict[str, int]], b: Block,
                 line_of: Callable[[str, str], int], ctx: Ctx) -> None:
    """Store per-port counters; a second capture of the same counter becomes the later snapshot."""
    sw.families.setdefault(family, Ev(b.file, b.start))
    for port, vals in parsed.items():
        cur = sw.ports.setdefault(port, {})
        for name, v in vals.items():
            old = cur.get(name)
            if old is not None and ctx.owner.get((sw.name, port, name)) != ctx.block_no:
                if sw.ports_before is None:
                    sw.ports_before = {}
                sw.ports_before.setdefault(port, {})[name] = old
            cur[name] = Val(v, Ev(b.file, line_of(port, name)))
            ctx.owner[(sw.name, port, name)] = ctx.block_no


def _cmd_arg(b: Block, pattern: str) -> str | None:
    if not b.command:
        return None
    m = re.search(pattern, b.command)
    return m.group(1) if m else None


# ------------------------------------------------------------------------------------- switch readers
def _sonic_pfc(b: Block, ctx: Ctx) -> bool:
    sw = ctx.data.switch(b.device)
    sw.platform = sw.platform or "sonic"
    # each table (Port Rx / Port Tx) separately, so evidence points at the right row
    headers = [no for no, t in b.lines if re.match(r"^\s*Port\s+(Rx|Tx)\b", t)]
    for i, start in enumerate(headers):
        end = headers[i + 1] if i + 1 < len(headers) else 10**9
        part = [(no, t) for no, t in b.lines if start <= no < end]
        parsed = vc.parse_sonic_pfc_counters("\n".join(t for _, t in part))
        rows = {t.split()[0]: no for no, t in part if t.split()}
        _store_ports(sw, "pfc", parsed, b, lambda port, _n: rows.get(port, start), ctx)
    return True


def _sonic_queue(b: Block, ctx: Ctx) -> bool:
    sw = ctx.data.switch(b.device)
    sw.platform = sw.platform or "sonic"
    wred = re.search(r"WredDrp|EcnMarked", b.text, re.IGNORECASE) is not None
    parsed = (vc.parse_sonic_wred_counters if wred else vc.parse_sonic_queue_counters)(b.text)
    rows = {(t.split()[0], t.split()[1].upper()): no for no, t in b.lines if len(t.split()) > 2}

    def line_of(port: str, name: str) -> int:
        q = re.match(r"q(\d+)_", name)
        return rows.get((port, f"UC{q.group(1)}" if q else ""), b.start)

    _store_ports(sw, "wred" if wred else "queue", parsed, b, line_of, ctx)
    # a column the platform cannot count (N/A) is not zero: mark the family read only where numbers were
    if wred and not any(k.endswith("ecn_marked_pkts") for v in parsed.values() for k in v):
        sw.families.pop("wred", None)
    return True


def _sonic_pfcwd_stats(b: Block, ctx: Ctx) -> bool:
    sw = ctx.data.switch(b.device)
    sw.platform = sw.platform or "sonic"
    parsed = vc.parse_sonic_pfcwd_stats(b.text)
    rows = {t.split()[0]: no for no, t in b.lines if t.split()}

    def line_of(port: str, name: str) -> int:
        q = re.match(r"q(\d+)_", name)
        return rows.get(f"{port}:{q.group(1) if q else ''}", b.start)

    _store_ports(sw, "pfcwd", parsed, b, line_of, ctx)
    return True


def _sonic_pfcwd_config(b: Block, ctx: Ctx) -> bool:
    """``show pfcwd config``: ``PORT  ACTION  DETECTION TIME  RESTORATION TIME`` rows (times in ms)."""
    sw = ctx.data.switch(b.device)
    sw.platform = sw.platform or "sonic"
    for no, t in b.lines:
        toks = t.split()
        if len(toks) >= 4 and re.match(r"^(Ethernet|Eth|swp|PortChannel)\S*$", toks[0]):
            sw.pfcwd_config[toks[0]] = Val(" ".join(toks[1:4]), _ev(b, no))
    sw.families.setdefault("pfcwd_config", Ev(b.file, b.start))
    return True


_IFCOUNTER_COLS = {"rx_ok": "rx_ok", "rx_err": "rx_err", "rx_drp": "rx_drp", "rx_ovr": "rx_ovr",
                   "tx_ok": "tx_ok", "tx_err": "tx_err", "tx_drp": "tx_drp", "tx_ovr": "tx_ovr"}


def _sonic_if_counters(b: Block, ctx: Ctx) -> bool:
    """``show interfaces counters``: columns found by name (IFACE STATE RX_OK … TX_DRP TX_OVR)."""
    sw = ctx.data.switch(b.device)
    sw.platform = sw.platform or "sonic"
    header: list[str] | None = None
    parsed: dict[str, dict[str, int]] = {}
    rows: dict[str, int] = {}
    for no, t in b.lines:
        toks: list[str] = []
        for tok in t.split():  # "3.11 MB/s": a rate and its unit are one cell
            if toks and re.fullmatch(r"[KMGT]?B/s", tok):
                toks[-1] += " " + tok
            else:
                toks.append(tok)
        if toks and toks[0].upper() == "IFACE":
            header = [h.lower() for h in toks]
            continue
        if header is None or len(toks) != len(header) or set(t.strip()) <= {"-", " "}:
            continue
        for i, h in enumerate(header):
            if h in _IFCOUNTER_COLS and (v := vc.to_int(toks[i])) is not None:
                parsed.setdefault(toks[0], {})[_IFCOUNTER_COLS[h]] = v
        rows[toks[0]] = no
    _store_ports(sw, "interface", parsed, b, lambda p, _n: rows.get(p, b.start), ctx)
    return True


def _cumulus_roce(b: Block, ctx: Ctx) -> bool:
    """``nv show qos roce`` / ``nv show interface swpN qos roce status``: ``key  [operational]  applied``
    lines (the last column wins: applied, else operational), and the SP→TC table."""
    sw = ctx.data.switch(b.device)
    sw.platform = "cumulus"
    port = _cmd_arg(b, r"interface\s+(\S+)\s+qos\s+roce")
    prefix = f"{port}:" if port else ""
    table = ""
    for no, t in b.lines:
        s = t.strip()
        if not s or set(s) <= {"-", " ", "="}:
            continue
        if "SP->TC" in s:
            table = "sp_tc"
            continue
        if s.startswith(("RoCE ", "Exception List")):
            table = "other"
            continue
        toks = s.split()
        if table == "sp_tc":
            if len(toks) >= 3 and toks[0].isdigit() and toks[1].isdigit() and toks[2].isdigit():
                sw.sp_to_tc[int(toks[1])] = Val(int(toks[2]), _ev(b, no))
            continue
        if table:
            continue
        if len(toks) >= 2 and toks[0] != "operational":
            cols = re.split(r"\s{2,}", s)  # key, [operational], applied: the last column wins
            sw.roce[prefix + toks[0]] = Val(cols[-1] if len(cols) > 1 else " ".join(toks[1:]), _ev(b, no))
    sw.families.setdefault("roce_config", Ev(b.file, b.start))
    return True


def _cumulus_roce_counters(b: Block, ctx: Ctx) -> bool:
    sw = ctx.data.switch(b.device)
    sw.platform = "cumulus"
    port = _cmd_arg(b, r"interface\s+(\S+)\s+qos") or "-"
    prio = ctx.exp.roce_priority
    queue = ctx.exp.lossless_queues[0]
    parsed = vv.parse_cumulus_roce_counters(b.text, port, queue, prio)
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


def _vendor(parse: Callable[[str], dict[str, dict[str, int]]], platform: str, family: str,
            port_re: str | None = None) -> Callable[[Block, Ctx], bool]:
    def read(b: Block, ctx: Ctx) -> bool:
        sw = ctx.data.switch(b.device)
        sw.platform = sw.platform or platform
        parsed = parse(b.text)
        if port_re is not None:
            port = _cmd_arg(b, port_re) or "-"
            parsed = {port if p == "-" else p: v for p, v in parsed.items()}
        _store_ports(sw, family, parsed, b, lambda p, _n: _find_line(b, lambda tk: p in tk), ctx)
        return True
    return read


def _port_parser(fn: Callable[..., dict[str, dict[str, int]]], port_re: str, platform: str, family: str,
                 **kw: object) -> Callable[[Block, Ctx], bool]:
    def read(b: Block, ctx: Ctx) -> bool:
        port = _cmd_arg(b, port_re) or "-"
        sw = ctx.data.switch(b.device)
        sw.platform = sw.platform or platform
        extra = {k: (v(ctx) if callable(v) else v) for k, v in kw.items()}
        parsed = fn(b.text, port, **extra)
        _store_ports(sw, family, parsed, b, lambda _p, _n: b.start, ctx)
        return True
    return read


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
            for key, attr in (("active_mtu", "active_mtu"), ("max_mtu", "max_mtu"), ("link_layer", "link_layer"),
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
            v = vc.to_int(val)
            if v is not None and cur:
                batch.setdefault(f"{cur[0]}/{cur[1]}", {})[name] = Val(v, _ev(b, no))
    for key, vals in batch.items():
        dev, _, port = key.partition("/")
        _set_hw(host, dev, int(port), vals, ctx)
    return True


def _set_hw(host: HostObs, dev: str, port: int, vals: Counters, ctx: Ctx) -> None:
    d = host.dev(dev, port)
    if d.hw and getattr(d, "_block", None) != ctx.block_no:
        d.hw_before = dict(d.hw)
    d.hw.update(vals)
    d._block = ctx.block_no  # type: ignore[attr-defined]


def _set_ethtool(host: HostObs, netdev: str, vals: Counters, ctx: Ctx, before: Counters | None = None) -> None:
    nic = host.nic(netdev)
    if before is not None:
        nic.ethtool_before = before
    elif nic.ethtool and getattr(nic, "_block", None) != ctx.block_no:
        nic.ethtool_before = dict(nic.ethtool)
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
_SYS_LINE = re.compile(r"^(?P<path>(?:/sys|/proc|/etc)?[\w./\-:]*?(?:hw_counters|counters|gids|gid_attrs/types|"
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


def _sys_value(host: HostObs, b: Block, no: int, path: str, raw: str, ctx: Ctx,
               hw: dict[tuple[str, int], Counters], eth: Counters) -> bool:
    val = raw.strip()
    ev = _ev(b, no)
    m = re.search(r"infiniband/([^/]+)/ports/(\d+)/(hw_counters|counters)/([\w]+)$", path) or \
        re.search(r"()()(hw_counters)/([\w]+)$", path)
    if m:
        v = vc.to_int(val)
        if v is None:
            return False
        dev = m.group(1) or _cmd_arg(b, r"infiniband/([^/\s]+)/") or "-"
        hw.setdefault((dev, int(m.group(2) or 1)), {})[m.group(4)] = Val(v, ev)
        return True
    m = re.search(r"infiniband/([^/]+)/ports/(\d+)/(gids|gid_attrs/types|gid_attrs/ndevs)/(\d+)$", path)
    if m:
        d = host.dev(m.group(1), int(m.group(2)))
        d.gid_table = d.gid_table or ev
        pending = d.__dict__.setdefault("_sysgid", {})
        pending.setdefault(int(m.group(4)), {})[m.group(3)] = (val, ev)
        return True
    m = re.search(r"infiniband/([^/]+)/tc/\d+/traffic_class$", path) or \
        re.search(r"rdma_cm/([^/]+)/ports/\d+/default_roce_tos$", path)
    if m:
        num = re.findall(r"\d+", val)
        if num:
            host.dev(m.group(1)).traffic_class = Val(int(num[-1]), ev)
        return True
    if re.search(r"rdma_cm/[^/]+/ports/\d+/default_roce_mode$", path):
        return True
    m = re.search(r"net/([^/]+)/ecn/(roce_[rn]p/(?:enable/\d+|[\w]+))$", path)
    if m:
        v = vc.to_int(val)
        if v is not None:
            host.nic(m.group(1)).ecn_sysfs[m.group(2)] = Val(v, ev)
            return True
        return False
    m = re.search(r"class/net/([^/]+)/mtu$", path)
    if m and val.isdigit():
        host.nic(m.group(1)).mtu = Val(int(val), ev)
        return True
    return False


def _finish_sysgids(host: HostObs) -> None:
    for d in host.rdma.values():
        pending = d.__dict__.pop("_sysgid", None)
        if not pending:
            continue
        for idx, parts in sorted(pending.items()):
            gid, ev = parts.get("gids", ("", None))
            if not gid or ev is None or set(gid.replace(":", "")) <= {"0"}:
                continue
            typ = parts.get("gid_attrs/types", ("", None))[0]
            ndev = parts.get("gid_attrs/ndevs", ("", None))[0] or None
            words = gid.split(":")
            ipv4 = None
            if len(words) == 8 and words[:5] == ["0000"] * 5 and words[5].lower() == "ffff":
                a, c = int(words[6], 16), int(words[7], 16)
                ipv4 = f"{a >> 8}.{a & 255}.{c >> 8}.{c & 255}"
            ver = "v2" if "v2" in typ.lower() else "v1" if typ else "?"
            d.gids.append((GidEntry(device=d.device, port=d.port, index=idx, gid=gid, ipv4=ipv4, ver=ver,
                                    netdev=ndev), ev))
            if ndev and ver == "v2":
                d.netdev = d.netdev or ndev


def read_lines(b: Block, ctx: Ctx, skip: set[int]) -> None:
    """Line readers over the block lines not in ``skip``; what nobody reads becomes :class:`Unparsed`."""
    host = ctx.data.host(b.device) if not _is_switch(b, ctx) else None
    eth: Counters = {}
    before: Counters = {}
    after: Counters = {}
    hw: dict[tuple[str, int], Counters] = {}
    netdev = _cmd_arg(b, r"ethtool\s+-S\s+(\S+)") or "-"
    pending_path: tuple[int, str] | None = None
    bad: list[tuple[int, str]] = []
    for no, t in b.lines:
        if no in skip:
            continue
        s = t.strip()
        if not s or s.startswith("#"):
            continue
        if host is None:
            bad.append((no, t))
            continue
        if pending_path is not None:
            pno, path = pending_path
            pending_path = None
            if not s.startswith("/") and _sys_value(host, b, pno, path, s, ctx, hw, eth):
                continue
            bad.append((pno, path))
        if s == "NIC statistics:":
            continue
        if _nccl_line(host, b, no, t):
            continue
        m = _ENV_LINE.match(t)
        if m:
            val = m.group(2).strip()
            if len(val) >= 2 and val[0] == val[-1] and val[0] in "'\"":
                val = val[1:-1]
            (host.ucx if m.group(1).startswith("UCX_") else host.env)[m.group(1)] = Val(val, _ev(b, no))
            host.env_read = host.env_read or _ev(b, no)
            continue
        bb, aa = vc.parse_side_by_side(t)
        if aa:
            for k, v in bb.items():
                before[k] = Val(v, _ev(b, no))
            for k, v in aa.items():
                after[k] = Val(v, _ev(b, no))
            continue
        m = _SYS_LINE.match(s)
        if m and _sys_value(host, b, no, m.group("path"), m.group("val"), ctx, hw, eth):
            continue
        if re.match(r"^/(sys|proc)/\S+$", s):
            pending_path = (no, s)
            continue
        if re.match(r"^(grep|cat|ls): /(sys|proc)/\S+: (Invalid argument|No such file or directory)$", s):
            continue
        m = _ETHTOOL_LINE.match(t)
        if m:
            eth[m.group(1)] = Val(int(m.group(2)), _ev(b, no))
            continue
        bad.append((no, t))
    if pending_path is not None:
        bad.append(pending_path)
    if host is not None:
        if after:
            nd = netdev if netdev != "-" else (_cmd_arg(b, r"ethtool\s+-S\s+(\S+)") or "-")
            _set_ethtool(host, nd, after, ctx, before=before)
        if eth:
            _set_ethtool(host, netdev, eth, ctx)
        for (dev, port), vals in hw.items():
            _set_hw(host, dev, port, vals, ctx)
        _finish_sysgids(host)
    _report_bad(b, ctx, bad)


def _report_bad(b: Block, ctx: Ctx, bad: list[tuple[int, str]]) -> None:
    span: list[tuple[int, str]] = []
    for no, t in bad + [(10**9, "")]:
        if span and no != span[-1][0] + 1:
            # a run that starts at the block's first line is "the block"; name the prompt's command
            ctx.data.unparsed.append(Unparsed(file=b.file, line=span[0][0], end_line=span[-1][0], command=b.command,
                                              first=span[0][1].strip()))
            span = []
        span.append((no, t))


def _is_switch(b: Block, ctx: Ctx) -> bool:
    return b.device in ctx.data.switches and b.device not in ctx.data.hosts


# ------------------------------------------------------------------------------------------ dispatch
Reader = Callable[[Block, Ctx], bool]
_PORT = r"(?:interface|interfaces|ethernet)\s+(\S+)"
#: (name, content pattern, command pattern or None, reader); the first whose pattern matches reads the block
BLOCK_READERS: tuple[tuple[str, str, str | None, Reader], ...] = (
    ("nccl-tests", (r"^#?\s*(nThread\s+\d|nccl-tests version|Collective test starting)|\bsize\s+count\s+type\b|"
                    r"Avg bus bandwidth|Out of bounds values"), None, _nccl_tests),
    ("sonic show pfc counters", r"^\s*Port\s+(Rx|Tx)\s+PFC0", None, _sonic_pfc),
    ("sonic show queue counters", r"^\s*Port\s+TxQ\s+", None, _sonic_queue),
    ("sonic show pfcwd stats", r"STORM\s+DETECTED/RESTORED", None, _sonic_pfcwd_stats),
    ("sonic show pfcwd config", r"^\s*PORT\s+ACTION\s+DETECTION\s+TIME", None, _sonic_pfcwd_config),
    ("sonic show interfaces counters", r"^\s*IFACE\s+STATE\s+RX_OK", None, _sonic_if_counters),
    ("cumulus nv show qos roce counters", r"^\s*(rx|tx)-pfc-stats\b|^\s*tx-ecn-stats\b", None, _cumulus_roce_counters),
    ("cumulus nv show qos roce", r"^\s*pfc-priority\s|^\s*congestion-mode\s", None, _cumulus_roce),
    ("nxos show queuing pfc-queue detail", r"(?i)Total (?:Ingress )?pkts dropped", r"pfc-queue",
     _vendor(vv.parse_nxos_pfc_queue_detail, "nxos", "pfcwd")),
    ("nxos show queuing interface", r"QOS GROUP \d", None,
     _port_parser(vv.parse_nxos_queuing_interface, _PORT, "nxos", "queue")),
    ("cumulus nv show interface counters qos", r"PFC Statistics|Egress Queue Statistics", None,
     _port_parser(vv.parse_cumulus_counters_qos, r"interface\s+(\S+)", "cumulus", "pfc",
                  ecn_queue=lambda c: c.exp.lossless_queues[0])),
    ("cumulus nv show interface qos pfc-watchdog", r"deadlock-count", None,
     _port_parser(vv.parse_cumulus_pfc_watchdog, r"interface\s+(\S+)", "cumulus", "pfcwd")),
    ("eos show priority-flow-control counters | json", r'"interfaceCounters"', None,
     _vendor(vc.parse_eos_pfc_counters_json, "eos", "pfc")),
    ("eos show qos interfaces ecn counters queue", r"Tx-Queue\s+ECN Marked", None,
     _port_parser(lambda text, port: {port: vc.parse_eos_ecn_counters(text, port)}, _PORT, "eos", "wred")),
    ("nxos show interface priority-flow-control", r"RxPPP\s+TxPPP", None,
     _vendor(vv.parse_nxos_pfc_interfaces, "nxos", "pfc")),
    ("junos show interfaces extensive", r"MAC Priority Flow Control Statistics", None,
     _vendor(vv.parse_junos_extensive_pfc, "junos", "pfc")),
    ("junos show interfaces queue", r"^\s*Queue:\s*\d+", None,
     _vendor(vv.parse_junos_interfaces_queue, "junos", "queue")),
    ("mlnx_qos", r"PFC configuration:|Priority trust (state|mode):", None, _mlnx_qos),
    ("ibv_devinfo", r"^\s*hca_id:\s*\S+", None, _ibv_devinfo),
    ("show_gids", r"^\s*DEV\s+PORT\s+INDEX\s+GID", None, _show_gids),
    ("rdma statistic", r"^link\s+\S+/\d+\s+\w+\s+\d+", None, _rdma_statistic),
    ("ip link", r"^\d+:\s+\S+:\s+<[A-Z_,\-]*>\s+mtu\s+\d+", None, _ip_link),
    ("/proc/net/bonding", r"Bonding Mode:", None, _bonding),
    ("ethtool", r"^Settings for \S+:|^\s*Speed:\s*\d+Mb/s", None, _ethtool_settings),
)

#: Families that make a device a switch.
SWITCH_READERS = {n for n, *_ in BLOCK_READERS if n.split()[0] in ("sonic", "cumulus", "eos", "nxos", "junos")}


def read_block(b: Block, ctx: Ctx) -> str:
    """Read one block; returns the format name (``lines`` when only line readers took it)."""
    ctx.block_no += 1
    text = b.text
    for name, pattern, cmd_pattern, reader in BLOCK_READERS:
        if not re.search(pattern, text, re.MULTILINE):
            continue
        if cmd_pattern and b.command and not re.search(cmd_pattern, b.command):
            continue
        if reader(b, ctx):
            ctx.data.blocks.append((b.file, b.start, name))
            if name == "nccl-tests":
                return name
            if name in ("ip link", "ibv_devinfo", "show_gids", "mlnx_qos", "/proc/net/bonding", "rdma statistic",
                        "ethtool") or name in SWITCH_READERS:
                return name
    if not any(t.strip() and not t.strip().startswith("#") for _, t in b.lines):
        return "comment"
    if b.device not in ctx.data.switches:
        ctx.data.host(b.device)
    read_lines(b, ctx, set())
    ctx.data.blocks.append((b.file, b.start, "lines"))
    return "lines"
