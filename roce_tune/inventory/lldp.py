"""LLDP captures: read a directory of them, render an inventory's, and build an inventory from them.

Captures follow ``roce-tune audit --from``: one file per device, ``<device>[.<anything>].txt``, each
holding one or more commands with their prompts (:mod:`roce_tune.captures` splits them). Every
block must be a format a platform module lists in ``LLDP_FORMATS`` or ``VERSION_FORMATS``
(:func:`formats`: the registry platform -> formats); anything else is an error at ``file:line``.

A device's platform comes from its version block (``show version``, ``nv show system``), else from its
LLDP format when only one platform prints it; a device with only ``lldpctl -f json`` is a host.

Cabling from both ends: when both devices of a cable were captured, each end's port is the name that
device gives its own port; when only one was, the far port is what LLDP advertised
(:func:`roce_tune.platforms.lldp.remote_port_name`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from roce_tune.findings import Finding, Location, RoceTuneError, Severity
from roce_tune.inventory.models import Inventory
from roce_tune.inventory.skeleton import (
    NETDEV_LIKE_RE,
    Cable,
    SkeletonOptions,
    SwitchFacts,
    _port_key,
    build_skeleton,
)
from roce_tune.platforms import ALL_PLATFORMS, HOST_PLATFORM, get_platform
from roce_tune.platforms.lldp import CaptureFormat, DeviceFacts, LldpNeighbor, LldpParseError, RemoteEnd

if TYPE_CHECKING:
    from roce_tune.captures import Block

CAPTURE_RULE = "RT010"
LLDP_PLATFORMS = ALL_PLATFORMS


@lru_cache(maxsize=1)
def formats() -> dict[str, tuple[tuple[CaptureFormat, ...], tuple[CaptureFormat, ...]]]:
    """Platform -> (LLDP formats, version formats), from each platform module."""
    out = {}
    for name in LLDP_PLATFORMS:
        mod = get_platform(name)
        out[name] = (tuple(mod.LLDP_FORMATS), tuple(mod.VERSION_FORMATS))
    return out


@dataclass
class DeviceCapture:
    """What one device's captures say: platform, facts, neighbours with ``(file, line)`` each."""

    name: str
    platform: str | None = None
    facts: DeviceFacts = field(default_factory=DeviceFacts)
    neighbors: list[tuple[LldpNeighbor, str, int]] = field(default_factory=list)
    lldp_platforms: set[str] = field(default_factory=set)
    first: tuple[str, int] = ("", 0)


@dataclass(frozen=True)
class ObservedCable:
    """A cable LLDP shows: ``a`` is the reporting device's end; ``b_port`` None when only a MAC is known."""

    a_device: str
    a_port: str
    b_device: str
    b_port: str | None
    file: str
    line: int
    b_is_nic: bool = False


@dataclass
class LldpView:
    """Every captured device, in name order, and the cables they show (each once); ``unnamed``: the
    neighbours that send no system name (``device:port (file:line)``), which no cable can name; ``errors``:
    the error lines the LLDP commands printed."""

    devices: dict[str, DeviceCapture]
    cables: list[ObservedCable]
    unnamed: list[str] = field(default_factory=list)
    #: ``file:line: text`` of the error lines an LLDP command printed (neighbours of what failed are missing)
    errors: list[str] = field(default_factory=list)

    def spelt_as(self, names: Iterable[str]) -> LldpView:
        """This view with its device names spelt as in ``names`` where they differ only in case (an
        inventory's names: hostnames are not case-sensitive, a capture file may be ``LEAF1.txt``)."""
        index = {n.lower(): n for n in names}

        def name(d: str) -> str:
            return index.get(d.lower(), d)

        devices = {name(k): replace(d, name=name(k)) for k, d in self.devices.items()}
        cables = [replace(c, a_device=name(c.a_device), b_device=name(c.b_device)) for c in self.cables]
        return LldpView(devices, cables, self.unnamed, self.errors)

    def kind(self, device: str) -> str | None:
        """``host``/``switch`` for a captured device, None otherwise."""
        d = self.devices.get(device)
        if d is None:
            return None
        return "host" if d.platform == HOST_PLATFORM else "switch"


def _err(file: str, line: int, message: str, fix: str) -> Finding:
    return Finding(
        rule=CAPTURE_RULE,
        severity=Severity.error,
        message=message,
        fix=fix,
        location=Location(file=file, line=line),
    )


def _known_names() -> str:
    names = []
    for plat, (lf, vf) in formats().items():
        names += [f"{plat}: {f.name}" for f in (*lf, *vf)]
    return "; ".join(dict.fromkeys(names))


def _classify(text: str, command: str | None) -> list[tuple[str, str, CaptureFormat]]:
    """[(platform, 'lldp'|'version', format)] that fit a block (by its command, else by its content)."""
    hits = []
    for plat, (lf, vf) in formats().items():
        for kind, fmts in (("lldp", lf), ("version", vf)):
            for f in fmts:
                if command is not None and not re.search(f.command, command):
                    continue
                if f.detect(text):
                    hits.append((plat, kind, f))
    return hits


def _capture_files(root: Path) -> list[Path]:
    """The ``*.txt``/``*.log`` files under ``root``; RoceTuneError if it is no directory or has none."""
    if not root.is_dir():
        raise RoceTuneError(
            [
                _err(
                    str(root),
                    0,
                    "not a directory of captures",
                    "give the directory that holds <device>[.<anything>].txt files",
                )
            ]
        )
    files = sorted(p for p in root.rglob("*") if p.is_file() and p.suffix in (".txt", ".log"))
    if not files:
        raise RoceTuneError(
            [
                _err(
                    str(root),
                    0,
                    "no capture files (<device>[.<anything>].txt)",
                    "capture each device's LLDP output into <device>.txt",
                )
            ]
        )
    return files


def read_lldp_dir(root: str | Path) -> LldpView:
    """Read every ``*.txt``/``*.log`` capture under ``root``.

    Raises:
        RoceTuneError: RT010 at ``file:line`` for a block no platform reads (unknown platform or command;
            text above the first prompt is the login banner when no format reads it: skipped),
            a block its format cannot parse, devices whose blocks name two platforms, or a directory
            without captures.
    """
    from roce_tune.captures import read_capture

    root = Path(root)
    devices: dict[str, DeviceCapture] = {}
    spelling: dict[str, str] = {}  # a device's name without case -> its first spelling (LEAF1.txt is leaf1)
    problems: list[Finding] = []
    errors: list[str] = []
    for path in _capture_files(root):
        try:
            blocks = read_capture(path, root)
        except OSError as exc:
            raise RoceTuneError(
                [_err(str(path), 0, f"cannot read: {exc.strerror}", "check permissions")]
            ) from None
        file = str(root / path.relative_to(root))
        _one_device(path, file, problems)
        if not any(b.text.strip() for b in blocks):
            problems.append(_err(file, 1, "the capture is empty", "capture the device's LLDP output into it"))
        for i, b in enumerate(blocks):
            if not b.text.strip():
                _no_output(b, file, problems)
                continue
            if i == 0 and b.command is None and len(blocks) > 1 and not _classify(b.text, None):
                continue  # text above the first prompt that nothing reads: the login banner (MOTD)
            name = spelling.setdefault(b.device.lower(), b.device)
            dev = devices.setdefault(name, DeviceCapture(name, first=(file, b.start)))
            if _read_block(b, file, dev, problems):
                errors += _error_lines(b, file)
    for dev in devices.values():
        _settle_platform(dev, problems)
        _drop_management(dev)
        _disagreeing_files(dev, problems)
    if problems:
        raise RoceTuneError(problems)
    return LldpView(dict(sorted(devices.items())), _cables(devices), _unnamed_neighbours(devices), errors)


def _error_lines(b: Block, file: str) -> list[str]:
    """``file:line: text`` of the lines of an LLDP block that say part of the command failed
    (:data:`~roce_tune.platforms.lldp.OUTPUT_ERROR_RE`)."""
    from roce_tune.platforms.lldp import OUTPUT_ERROR_RE

    return [f"{file}:{b.line_of(i)}: {t.strip()}" for i, t in enumerate(b.text.splitlines())
            if OUTPUT_ERROR_RE.search(t)]


def _unnamed_neighbours(devices: dict[str, DeviceCapture]) -> list[str]:
    """``device:port (file:line)`` of every neighbour that sends no system name (no cable can name it)."""
    return [f"{d.name}:{n.local_port} ({file}:{line})" for d in devices.values()
            for n, file, line in d.neighbors if n.remote_system is None]


def _one_device(path: Path, file: str, problems: list[Finding]) -> None:
    """An RT010 problem when the file's prompts show two devices (captures pasted into one file): the
    neighbours of the second would be read as the file's device's."""
    from roce_tune.captures import capture_lines, decode_capture, prompt_command, prompt_host

    first: str | None = None
    text = decode_capture(path.read_bytes()).removeprefix("\ufeff")
    for no, line in enumerate(capture_lines(text), start=1):  # decoded and numbered as the splitter does
        host = prompt_host(line) if prompt_command(line) is not None else None
        if host is None:
            continue
        if first is None:
            first = host
        elif host.lower() != first.lower():
            problems.append(
                _err(
                    file,
                    no,
                    f"the prompt is {host}'s, but the file's earlier prompts are {first}'s: one file "
                    "holds captures of two devices",
                    f"capture each device into its own file ({host}.txt)",
                )
            )
            return


def _no_output(b: Block, file: str, problems: list[Finding]) -> None:
    """An RT010 problem when a command roce-tune reads (an LLDP or version command) printed nothing: the
    capture was cut off (an empty LLDP table still prints its header)."""
    import re

    if not b.command:
        return
    for lf, vf in formats().values():
        if any(re.search(f.command, b.command) for f in (*lf, *vf)):
            problems.append(
                _err(
                    file,
                    b.start,
                    f"{b.device}: {b.command!r} printed nothing (the capture is cut off)",
                    "capture the whole output of the command",
                )
            )
            return


def _read_block(b: Block, file: str, dev: DeviceCapture, problems: list[Finding]) -> bool:
    """One capture block into ``dev``: LLDP neighbours, or version facts. True when it was LLDP output,
    read."""
    hits = _classify(b.text, b.command)
    if not hits:
        what = f"the output of {b.command!r}" if b.command else "output without a command prompt"
        problems.append(
            _err(
                file,
                b.start,
                f"{b.device}: {what} is not a capture roce-tune reads (unknown platform or command)",
                f"capture one of: {_known_names()}",
            )
        )
        return False
    plats = {p for p, _, _ in hits}
    kind, fmt = hits[0][1], hits[0][2]
    try:
        parsed = fmt.parse(b.text)
    except LldpParseError as exc:
        problems.append(
            _err(
                file,
                b.line_of(exc.index),
                f"{b.device}: {fmt.name}: {exc}",
                "capture the whole output of the command, unedited",
            )
        )
        return False
    if kind != "version":
        dev.lldp_platforms = plats if not dev.lldp_platforms else dev.lldp_platforms & plats or plats
        dev.neighbors += [(n, file, b.line_of(n.index)) for n in parsed]
        return True
    plat = next(iter(plats))
    if dev.platform not in (None, plat):
        problems.append(
            _err(
                file,
                b.start,
                f"{b.device}: {fmt.name} is {plat} output, but an earlier block is {dev.platform}",
                "keep one device per capture file",
            )
        )
    dev.platform = plat
    dev.facts = DeviceFacts(
        parsed.model or dev.facts.model,
        parsed.os_version or dev.facts.os_version,
        parsed.hostname or dev.facts.hostname,
    )
    return False


def _settle_platform(dev: DeviceCapture, problems: list[Finding]) -> None:
    """A device's platform from its version output, else from what its LLDP output could be."""
    lp = dev.lldp_platforms
    if dev.platform is not None:
        if lp and dev.platform not in lp:
            problems.append(
                _err(
                    *dev.first,
                    f"{dev.name}: the version output is {dev.platform} but the LLDP output "
                    f"is {', '.join(sorted(lp))}",
                    "keep one device per capture file",
                )
            )
        return
    dev.platform = "host" if "host" in lp or not lp else next(iter(lp)) if len(lp) == 1 else None
    if dev.platform is None:
        problems.append(
            _err(
                *dev.first,
                f"{dev.name}: the LLDP output could be {', '.join(sorted(lp))}",
                "add the device's show version (or nv show system) to its capture",
            )
        )


def _disagreeing_files(dev: DeviceCapture, problems: list[Finding]) -> None:
    """An RT010 problem where two capture files of one device disagree (captures from before and after a
    re-cabling): a local port with another named neighbour port, or a named neighbour port on another local
    port. Neighbours known by a MAC only (a host NIC's, whose descriptions may repeat) are left out."""
    by_local: dict[str, tuple[str, str, str, int]] = {}  # local port -> (neighbour port, its key, file, line)
    by_remote: dict[str, tuple[str, str, int]] = {}  # neighbour port key -> (local port, file, line)
    for n, file, line in dev.neighbors:
        if n.remote_is_nic or n.remote_system is None or n.remote_port is None:
            continue
        shown, key = f"{n.remote_system}:{n.remote_port}", f"{n.remote_system.lower()}:{n.remote_port}"
        e_shown, e_key, l_file, l_line = by_local.setdefault(n.local_port, (shown, key, file, line))
        e_local, r_file, r_line = by_remote.setdefault(key, (n.local_port, file, line))
        if e_key != key and l_file != file:
            what, where = f"{dev.name}:{n.local_port} sees {shown}, not {e_shown}", f"{l_file}:{l_line}"
        elif e_local != n.local_port and r_file != file:
            what, where = f"{shown} is on {dev.name}:{n.local_port}, not on {e_local}", f"{r_file}:{r_line}"
        else:
            continue
        problems.append(_err(file, line, f"{what} as {where} says: two captures of {dev.name} from "
                             "different times", f"keep one capture of {dev.name}, the current one"))


def _drop_management(dev: DeviceCapture) -> None:
    """Forget a switch's neighbours on its out-of-band management ports and its internal ports (its
    platform's ``inventory.mgmt_port`` / ``internal_port``: a multi-ASIC SONiC's backplane): the
    management network and the box's own ASICs are no fabric cabling."""
    from roce_tune.platforms import SWITCH_PLATFORMS, platform

    if dev.platform not in SWITCH_PLATFORMS:
        return
    facts = platform(dev.platform).inventory
    patterns = [p for p in (facts.mgmt_port, facts.internal_port) if p is not None]
    if patterns:
        skip = re.compile("|".join(f"(?:{p})" for p in patterns))
        dev.neighbors = [n for n in dev.neighbors if not skip.fullmatch(n[0].local_port)]


@lru_cache(maxsize=4096)
def _lower_index(names: frozenset[str]) -> dict[str, str]:
    return {n.lower(): n for n in names}


def _canon(name: str | None, known: dict[str, DeviceCapture]) -> str | None:
    """A neighbour's system name as a device name: the captured device it names (compared without case:
    hostnames are not case-sensitive), else an FQDN's first label when that is a captured device."""
    if name is None or name in known:
        return name
    index = _lower_index(frozenset(known))
    for cand in (name, name.split(".", 1)[0]):
        if cand.lower() in index:
            return index[cand.lower()]
    return name


def _toward(dev: DeviceCapture, far: str, devices: dict[str, DeviceCapture]) -> list[LldpNeighbor]:
    """``dev``'s neighbours that are ``far``."""
    return [n for n, _, _ in dev.neighbors if _canon(n.remote_system, devices) == far]


def _unnamed(ours: list[LldpNeighbor], theirs: list[LldpNeighbor]) -> list[LldpNeighbor]:
    """The neighbours in ``ours`` whose advertised port is none of the far side's own port names."""
    their_ports = {m.local_port for m in theirs}
    return [n for n in ours if n.remote_port not in their_ports]


def _by(neighbors: list[LldpNeighbor], local: bool) -> list[LldpNeighbor]:
    """``neighbors`` in the natural order of their local (else their advertised) port names."""
    return sorted(neighbors, key=lambda n: _port_key((n.local_port if local else n.remote_port) or ""))


def _alias_pairs(
    dev: DeviceCapture, far: DeviceCapture, devices: dict[str, DeviceCapture]
) -> dict[str, str]:
    """``dev``'s local port -> ``far``'s local port for the cables between two captured devices that name
    neither end as the device does (SONiC advertises the port's alias as a locally assigned port ID:
    lldpmgrd's ``lldpcli configure ports <port> lldp portidsubtype local <alias>``). The unnamed cables
    pair by elimination: one each way, or as many each way when the order of each side's own ports is the
    order of the aliases the other side sees (aliases number the ports in order); else none."""
    to_far, to_dev = _toward(dev, far.name, devices), _toward(far, dev.name, devices)
    ours, theirs = _unnamed(to_far, to_dev), _unnamed(to_dev, to_far)
    if not ours or len(ours) != len(theirs):
        return {}
    by_port, by_alias = _by(ours, local=True), _by(theirs, local=False)
    if len(ours) > 1 and (_by(theirs, local=True) != by_alias or _by(ours, local=False) != by_port):
        return {}
    return {n.local_port: m.local_port for n, m in zip(by_port, by_alias, strict=True)}


def _cables(devices: dict[str, DeviceCapture]) -> list[ObservedCable]:
    seen: set[frozenset[tuple[str, str | None]]] = set()
    aliases: dict[tuple[str, str], dict[str, str]] = {}
    out = []
    for dev in devices.values():
        for n, file, line in dev.neighbors:
            remote = _canon(n.remote_system, devices)
            if remote is None:
                continue
            rport = n.remote_port
            far = devices.get(remote)
            if far is not None:  # the far device's own name for its port wins
                back = [m for m in _toward(far, dev.name, devices) if m.remote_port == n.local_port]
                if back:
                    rport = back[0].local_port
                elif rport not in {m.local_port for m in _toward(far, dev.name, devices)}:
                    pairs = aliases.setdefault((dev.name, remote), _alias_pairs(dev, far, devices))
                    rport = pairs.get(n.local_port, rport)
            key = frozenset(((dev.name, n.local_port), (remote, rport)))
            if key in seen:
                continue
            seen.add(key)
            out.append(ObservedCable(dev.name, n.local_port, remote, rport, file, line, n.remote_is_nic))
    return out


# --- render: what each device of an inventory would report --------------------------------------------
def render_lldp_view(inventory: Inventory) -> dict[str, str]:
    """``{device: capture text}``: what each switch and host of ``inventory`` would report over LLDP, in
    its platform's real format (switches: their LLDP command and ``show version``; hosts: ``lldpctl -f
    json``), with prompts, ready to be written as ``<device>.txt`` and read by :func:`read_lldp_dir`.

    Switch ports advertise their interface name; host NICs advertise a MAC as port ID and the netdev as
    port description (lldpd's default). Uncabled ports report nothing.
    """
    from roce_tune.inventory.topology import build_topology

    topo = build_topology(inventory)
    host_names = {h.name for h in inventory.hosts}
    ends: dict[str, list[RemoteEnd]] = {}
    for (sw, port), peer in topo.peers.items():
        ends.setdefault(sw, []).append(RemoteEnd(port, peer.device, peer.port, peer.kind == "host"))
    for h in inventory.hosts:
        for nic in h.nics:
            if nic.switch_port:
                sw, port = nic.switch_port.split(":", 1)
                if sw in topo.switches:
                    ends.setdefault(h.name, []).append(RemoteEnd(nic.netdev, sw, port, False))
    out = {}
    for switch in inventory.switches:
        mod = get_platform(switch.platform.value)
        prompt = mod.CAPTURE_PROMPT.format(device=switch.name)
        text = f"{prompt}{getattr(mod, 'VERSION_RENDER_COMMAND', 'show version')}\n"
        text += mod.render_version(switch.name, switch.model, switch.os_version)
        text += (f"{prompt}{mod.LLDP_RENDER_COMMAND}\n"
                 + mod.render_lldp(switch.name, ends.get(switch.name, [])))
        out[switch.name] = text
    host = get_platform("host")
    for h in inventory.hosts:
        if h.name in ends or h.name in host_names:
            prompt = host.CAPTURE_PROMPT.format(device=h.name)
            out[h.name] = f"{prompt}{host.LLDP_RENDER_COMMAND}\n" + host.render_lldp(
                h.name, ends.get(h.name, [])
            )
    return out


def write_lldp_view(inventory: Inventory, directory: str | Path) -> list[Path]:
    """Write :func:`render_lldp_view` as ``<device>.lldp.txt`` files into ``directory`` (created)."""
    d = Path(directory)
    d.mkdir(parents=True, exist_ok=True)
    paths = []
    for dev, text in render_lldp_view(inventory).items():
        p = d / f"{dev}.lldp.txt"
        p.write_text(text, encoding="utf-8")
        paths.append(p)
    return paths


# --- import: an inventory from what the network reports -----------------------------------------------
def _kinds(view: LldpView, opts: SkeletonOptions) -> dict[str, str]:
    """``host``/``switch`` of every device: captured ones by their platform; a neighbour nobody captured
    by ``--hosts``/``--switches``, else a host when every port it is seen on is NIC-like (a MAC port ID, or
    a netdev name such as ``ens1f0np0``: lldpd's ``portidsubtype ifname``), else a switch."""
    kinds = {name: view.kind(name) or "switch" for name in view.devices}
    nic_like: dict[str, bool] = {}
    for c in view.cables:
        if c.b_device not in kinds:
            like = c.b_is_nic or (c.b_port is not None and NETDEV_LIKE_RE.match(c.b_port) is not None)
            nic_like[c.b_device] = nic_like.get(c.b_device, True) and like
    for dev, like in nic_like.items():
        if opts.hosts and re.fullmatch(opts.hosts, dev):
            kinds[dev] = "host"
        elif opts.switches and re.fullmatch(opts.switches, dev):
            kinds[dev] = "switch"
        else:
            kinds[dev] = "host" if like else "switch"
    return kinds


def inventory_from_lldp(
    view: LldpView, opts: SkeletonOptions, left_out: list[str] | None = None
) -> dict[str, Any]:
    """Inventory data (full form) from ``view``: captured switches with their platform, model and OS
    release, every cable LLDP shows, hosts (captured with ``lldpctl`` only, or seen on NIC-like ports
    only: :func:`_kinds`) with NICs on the switch ports that see them. Neighbours that are neither captured
    nor NIC-like stay as links to an external device (lint RT113 says so); when switches were captured, a
    host cable to such a device (the host's management NIC on the out-of-band switch) cannot be declared
    (a NIC's switch_port names a declared switch) and is left out, one line each into ``left_out``.

    Raises:
        RoceTuneError: RT010 at the capture line for a host NIC whose netdev LLDP does not give (a MAC
            port ID without a port description); at the first capture when no capture shows a neighbour.
    """
    if not view.cables and view.devices:
        file, line = min(d.first for d in view.devices.values())
        raise RoceTuneError([_err(file, line, f"no LLDP neighbour in any capture ({len(view.devices)} "
                                  "device(s)): nothing to import", "enable LLDP on the switches and hosts "
                                  "(lldpd on the hosts), wait for the links to come up, and capture again")])
    kinds = _kinds(view, opts)
    facts = {
        name: SwitchFacts(d.platform, d.facts.model, d.facts.os_version)
        for name, d in view.devices.items()
        if d.platform != HOST_PLATFORM
    }
    external = {n for n, k in kinds.items() if k == "switch" and n not in view.devices}
    cables = _importable(view, kinds, external, left_out)
    opts.kinds.update(kinds)
    opts.facts.update(facts)
    data = build_skeleton(cables, opts)
    # devices LLDP names but nobody captured are external (lint RT113), not switches to configure
    data["switches"] = [s for s in data["switches"] if s["name"] not in external]
    return data


def _importable(
    view: LldpView, kinds: dict[str, str], external: set[str], left_out: list[str] | None
) -> list[Cable]:
    """The cables of ``view`` an inventory can declare (:func:`inventory_from_lldp`).

    Raises:
        RoceTuneError: RT010 for a neighbour with a MAC or number port ID and no port description, or with a
            name an inventory cannot hold (``gpu01 (rack 3)``, ``Ethernet 1/1``).
    """
    cables = []
    problems = []
    some_switch = any(view.kind(n) == "switch" for n in view.devices)
    for c in view.cables:
        if some_switch and kinds[c.a_device] == "host" and c.b_device in external:
            if left_out is not None:
                left_out.append(f"{c.a_device}:{c.a_port} - {c.b_device}:{c.b_port} ({c.file}:{c.line})")
            continue
        if c.b_port is None or c.b_port.isdigit():
            what = "a MAC" if c.b_port is None else f"a number ({c.b_port}: an interface index)"
            problems.append(
                _err(
                    c.file,
                    c.line,
                    f"{c.a_device}:{c.a_port}: the neighbour {c.b_device} sends {what} "
                    "as port ID and no port description here",
                    f"capture {c.b_device} too (lldpctl -f json on a host), or {c.a_device}'s LLDP detail "
                    "form, which shows the port description",
                )
            )
            continue
        bad = _unusable_names(c.a_device, c.a_port, c.b_device, c.b_port)
        if bad:
            problems.append(_err(c.file, c.line, f"{c.a_device}:{c.a_port}: {bad}, which an inventory cannot "
                                 "hold", "name the device and its ports with letters, digits, '.', '_' and "
                                 "'-' (its hostname, or the capture)"))
            continue
        cables.append(Cable(c.a_device, c.a_port, c.b_device, c.b_port, where=f"{c.file}:{c.line}"))
    if problems:
        raise RoceTuneError(problems)
    return cables


def _unusable_names(a_device: str, a_port: str, b_device: str, b_port: str) -> str:
    """What of a cable's names is no inventory device or interface name (spaces, shell characters), or ''."""
    from roce_tune.inventory.models import DEVICE_NAME_RE, INTERFACE_NAME_RE

    bad = [f"the device name {d!r}" for d in dict.fromkeys((a_device, b_device))
           if not DEVICE_NAME_RE.fullmatch(d)]
    bad += [f"the port name {p!r}" for p in (a_port, b_port) if not INTERFACE_NAME_RE.fullmatch(p)]
    return " and ".join(bad)


__all__ = [
    "CAPTURE_RULE",
    "DeviceCapture",
    "LldpView",
    "ObservedCable",
    "formats",
    "inventory_from_lldp",
    "read_lldp_dir",
    "render_lldp_view",
    "write_lldp_view",
]
