"""Stub NIC tools for the emulated GPU host: ``python host_stubs.py TOOL ARGS...``.

Each stub reads and writes state under ``$ROCE_TUNE_SYSROOT`` only (the fake sysfs /
configfs tree that ``host.py`` lays out), so a rendered host script that prefixes its
paths with ``${ROCE_TUNE_SYSROOT}`` can be run and checked end to end.  Output formats
follow the real tools closely enough for parsers (mlnx-tools ``mlnx_qos``, rdma-core
``ibv_devinfo``, ``show_gids``, iproute2 ``ip``, ``ethtool``); stdlib only.

Start-up cost matters: a rendered script calls these tools dozens of times per run, and the host-script
tests run hundreds of scripts.  So the module imports only ``os`` and ``sys`` at the top, works on string
paths (``os.path``; ``pathlib`` pulls in ``re``, ``enum`` and ``urllib``), parses options by hand
(:func:`_options`, not ``argparse``), reads JSON state with the C scanner behind ``json.loads``
(:func:`_json_loads`) and imports ``json`` only to write it.
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False  # (typing costs an import; mypy honours any name TYPE_CHECKING)
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any

ROOT = os.environ.get("ROCE_TUNE_SYSROOT", "/nonexistent")
DEFAULT_DSCP2PRIO = [d // 8 for d in range(64)]


def _net(ifname: str, *leaf: str) -> str:
    return os.path.join(ROOT, "sys/class/net", ifname, *leaf)


def _read(path: str) -> str:
    with open(path, encoding="utf-8") as f:
        return f.read()


def _write(path: str, text: str) -> None:
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)


def state_path(root: Path, kind: str, ifname: str) -> Path:
    """Where a stub keeps its ``kind`` state of ``ifname`` under sysroot ``root``."""
    return root / "var/lib/roce-emu" / kind / f"{ifname}.json"


def state_text(data: dict[str, Any]) -> str:
    """A stub's state file text."""
    import json

    return json.dumps(data, indent=1, sort_keys=True) + "\n"


def _state(kind: str, ifname: str) -> str:
    return os.path.join(ROOT, "var/lib/roce-emu", kind, f"{ifname}.json")


class _JsonOptions:
    """The context CPython's C JSON scanner reads (the attributes of ``json.JSONDecoder()``): strict JSON,
    plain dicts, ``float``/``int`` numbers, NaN/Infinity as floats."""

    strict = True
    object_hook = None
    object_pairs_hook = None
    parse_float = float
    parse_int = int
    parse_constant = float


def _json_loads(text: str) -> Any:
    """``json.loads(text)`` through the C scanner ``json.loads`` itself uses (``_json.make_scanner``):
    importing ``json`` costs ``re`` and ``enum`` (~9 ms of a stub call's CPU), and most calls only read a
    state file. Text the scanner does not take whole (an error, trailing data) and a Python without
    ``_json`` go to ``json.loads``, for its result or its error."""
    body = text.strip(" \t\n\r")
    try:
        from _json import make_scanner

        value, end = make_scanner(_JsonOptions())(body, 0)  # type: ignore[arg-type]  # (typeshed: a scanner)
        if end == len(body):
            return value
    except Exception:  # noqa: BLE001 - json.loads below decides, and names the error
        pass
    import json

    return json.loads(text)


def _load(kind: str, ifname: str, default: dict[str, Any]) -> dict[str, Any]:
    p = _state(kind, ifname)
    if os.path.isfile(p):
        loaded: dict[str, Any] = _json_loads(_read(p))
        return loaded
    return default


def _save(kind: str, ifname: str, data: dict[str, Any]) -> None:
    p = _state(kind, ifname)
    os.makedirs(os.path.dirname(p), exist_ok=True)
    _write(p, state_text(data))


def _need_if(ifname: str) -> None:
    if not os.path.isdir(_net(ifname)):
        print(f"Cannot find device \"{ifname}\"", file=sys.stderr)
        sys.exit(1)


def _usage_error(prog: str, message: str) -> None:
    """Refuse a command line as an option parser does: ``PROG: error: MESSAGE`` on stderr, exit 2."""
    print(f"Usage: {prog} [options]\n\n{prog}: error: {message}", file=sys.stderr)
    sys.exit(2)


def _options(prog: str, argv: list[str], names: dict[str, str],
             repeat: tuple[str, ...] = ()) -> dict[str, Any]:
    """``argv`` parsed as optparse/getopt parse the real tools' options: ``names`` maps each spelling
    (``-i``, ``--interface``) to its key; every option takes a value, given as the next word, as
    ``--name=VALUE`` or as ``-xVALUE``; the last of a repeated option wins, except the keys in ``repeat``,
    which collect a list.  Returns {key: value or list}; an unknown option, a missing value or a stray
    argument exits 2 (:func:`_usage_error`)."""
    found: dict[str, Any] = {key: [] for key in repeat}
    i = 0
    while i < len(argv):
        word, value = argv[i], None
        if word.startswith("--") and "=" in word:
            word, _, value = word.partition("=")
        elif not word.startswith("--") and len(word) > 2 and word[:2] in names:
            word, value = word[:2], word[2:]
        if word not in names:
            _usage_error(prog, f"no such option: {word}" if word.startswith("-") else f"unexpected {word}")
        if value is None:
            if i + 1 >= len(argv):
                _usage_error(prog, f"{word} option requires an argument")
            i += 1
            value = argv[i]
        key = names[word]
        if key in repeat:
            found[key].append(value)
        else:
            found[key] = value
        i += 1
    return found


def _choice(prog: str, option: str, value: str | None, choices: tuple[str, ...]) -> None:
    if value is not None and value not in choices:
        _usage_error(prog, f"option {option}: invalid choice: {value!r} (choose from "
                           + ", ".join(repr(c) for c in choices) + ")")


MLNX_QOS_OPTIONS = {"-i": "interface", "--interface": "interface", "-f": "pfc", "--pfc": "pfc",
                    "--trust": "trust", "--dscp2prio": "dscp2prio", "--cable_len": "cable_len",
                    "-p": "prio_tc", "--prio_tc": "prio_tc", "-s": "tsa", "--tsa": "tsa",
                    "-t": "tcbw", "--tcbw": "tcbw", "--prio2buffer": "prio2buffer",
                    "--buffer_size": "buffer_size"}


def mlnx_qos(argv: list[str]) -> int:
    a = _options("mlnx_qos", argv, MLNX_QOS_OPTIONS, repeat=("dscp2prio",))
    if "interface" not in a:
        _usage_error("mlnx_qos", "the following arguments are required: -i/--interface")
    _choice("mlnx_qos", "--trust", a.get("trust"), ("pcp", "dscp"))
    if "cable_len" in a and not a["cable_len"].lstrip("-").isdigit():
        _usage_error("mlnx_qos", f"option --cable_len: invalid integer value: {a['cable_len']!r}")
    _need_if(a["interface"])
    st = _load("mlnx_qos", a["interface"], {
        "trust": "pcp", "pfc": [0] * 8, "dscp2prio": DEFAULT_DSCP2PRIO, "cable_len": 7,
        "prio2buffer": [0] * 8, "buffer_size": [130944, 130944, 0, 0, 0, 0, 0, 0],
        "prio_tc": list(range(8)), "tsa": ["vendor"] * 8, "tcbw": [0] * 8})
    if a.get("trust") and a["trust"] != st["trust"]:
        # mlnx_qos over dcbnl (mlnx-tools dcbnetlink.py): --trust dscp sets all 64 DSCP app entries to the
        # default dscp >> 3 (setDefaultAppEntry), --trust pcp deletes every DSCP entry (delAppEntry): a trust
        # change leaves no entry set before it
        st["trust"] = a["trust"]
        st["dscp2prio"] = list(DEFAULT_DSCP2PRIO)
        st["dscp_unlisted"] = []
    if a.get("pfc"):
        vals = [int(x) for x in a["pfc"].split(",")]
        if len(vals) != 8 or any(v not in (0, 1) for v in vals):
            print("Error: --pfc needs 8 comma-separated 0/1 values", file=sys.stderr)
            return 1
        st["pfc"] = vals
        st["prio2buffer"] = [1 if v else 0 for v in vals]
    if a["dscp2prio"] and a.get("trust"):  # (mlnx_qos has sent --pfc/--cable_len by then: kept)
        _save("mlnx_qos", a["interface"], st)
        print("trust and dscp2prio commands cannot be used at the same time.")
        return 1
    entries = _dscp2prio_entries(a["dscp2prio"])
    if entries is None:  # mlnx_qos checks every value before it sends any
        _save("mlnx_qos", a["interface"], st)
        print("Invalid dscp2prio command. Refer to the help.")
        return 1
    unlisted: list[int] = st.setdefault("dscp_unlisted", [])
    for op, dscp, prio in entries:  # one dcbnl set_ieee_app / del_ieee_app per value, in order
        if op == "set":
            st["dscp2prio"][dscp] = prio
            st["trust"] = "dscp"  # (dcbnl: a DSCP app entry makes the trust dscp: mlx5e_dcbnl_ieee_setapp)
            if dscp in unlisted:
                unlisted.remove(dscp)
        elif op == "del":
            # mlx5e_dcbnl_ieee_delapp (en_dcbnl.c): only an app entry that exists with that priority (else
            # -ENOENT: dcbnetlink.py check_err raises "Netlink error: Bad value. see dmesg."); the DSCP leaves
            # the app table (the report no longer lists it) and the NIC maps it to priority 0; deleting the
            # last DSCP entry sets the trust to pcp
            if st["trust"] != "dscp" or dscp in unlisted or st["dscp2prio"][dscp] != prio:
                _save("mlnx_qos", a["interface"], st)
                print("Netlink error: Bad value. see dmesg.")
                return 1
            st["dscp2prio"][dscp] = 0
            unlisted.append(dscp)
            if len(unlisted) == len(DEFAULT_DSCP2PRIO):
                st.update(trust="pcp", dscp2prio=list(DEFAULT_DSCP2PRIO), dscp_unlisted=[])
                unlisted = st["dscp_unlisted"]
        else:
            st["dscp2prio"] = list(DEFAULT_DSCP2PRIO)
            unlisted.clear()
    if "cable_len" in a:
        st["cable_len"] = int(a["cable_len"])
    for key in ("prio_tc", "prio2buffer"):
        if a.get(key):
            st[key] = [int(x) for x in a[key].split(",")]
    if a.get("tsa"):
        st["tsa"] = a["tsa"].split(",")
    if a.get("tcbw"):
        st["tcbw"] = [int(x) for x in a["tcbw"].split(",")]
    if a.get("buffer_size"):
        st["buffer_size"] = [int(x) for x in a["buffer_size"].split(",")]
    _save("mlnx_qos", a["interface"], st)
    _print_qos(st)
    return 0


def _dscp2prio_entries(specs: list[str]) -> list[tuple[str, int, int]] | None:
    """``--dscp2prio`` values as mlnx_qos checks them: ``flush``, or ``set|del,DSCP,PRIO`` with DSCP <= 63 and
    PRIO <= 7; None when one is not (mlnx_qos then prints "Invalid dscp2prio command" and sends none)."""
    out: list[tuple[str, int, int]] = []
    for spec in specs:
        if spec == "flush":
            out.append((spec, 0, 0))
            continue
        parts = spec.split(",")
        if len(parts) != 3 or parts[0] not in ("set", "del") or not all(x.isdigit() for x in parts[1:]):
            return None
        dscp, prio = int(parts[1]), int(parts[2])
        if dscp > 63 or prio > 7:
            return None
        out.append((parts[0], dscp, prio))
    return out


def _print_qos(st: dict[str, Any]) -> None:
    """The ``mlnx_qos -i IF`` report of state ``st`` (mlnx-tools ``pretty_print``)."""
    print("DCBX mode: OS controlled")
    print(f"Priority trust state: {st['trust']}")
    if st["trust"] == "dscp":
        # dcbnetlink.py printAppSelector: per priority its DSCPs as "NN," (newest app entry first: the kernel
        # list_adds each; here highest DSCP first, as after --trust dscp), 8 a line, each line with the
        # "prio:P dscp:" prefix; a priority without a DSCP prints no line
        print("dscp2prio mapping:")
        for prio in range(8):
            unlisted = st.get("dscp_unlisted", [])  # (deleted app entries: not in the table mlnx_qos reads)
            dscps = [f"{d:02d}," for d in range(63, -1, -1)
                     if st["dscp2prio"][d] == prio and d not in unlisted]
            for i in range(0, len(dscps), 8):
                print(f"\tprio:{prio} dscp:{''.join(dscps[i:i + 8])}")
    print("default priority:")  # (then one "\tprio:P" line per --defltprio set; the stub has none)
    print("Receive buffer size (bytes): " + ",".join(str(x) for x in st["buffer_size"]) + ",")
    print(f"Cable len: {st['cable_len']}")
    print("PFC configuration:")
    print("\tpriority    " + "".join(f"{p:<4}" for p in range(8)))
    print("\tenabled     " + "".join(f"{v:<4}" for v in st["pfc"]))
    print("\tbuffer      " + "".join(f"{v:<4}" for v in st["prio2buffer"]))
    for tc in range(8):
        prios = [str(p) for p in range(8) if st["prio_tc"][p] == tc]
        print(f"tc: {tc} ratelimit: unlimited, tsa: {st['tsa'][tc]}" + (f", bw: {st['tcbw'][tc]}%"
                                                                       if st["tsa"][tc] == "ets" else ""))
        for p in prios:
            print(f"\t priority:  {p}")


def _configfs(dev: str, port: str, leaf: str) -> str:
    return os.path.join(ROOT, "sys/kernel/config/rdma_cm", dev, "ports", port, leaf)


CMA_OPTIONS = {"-d": "device", "--device": "device", "-p": "port", "--port": "port"}


def cma_roce_tos(argv: list[str]) -> int:
    a = {"device": "mlx5_0", "port": "1",
         **_options("cma_roce_tos", argv, {**CMA_OPTIONS, "-t": "tos", "--tos": "tos"})}
    path = _configfs(a["device"], a["port"], "default_roce_tos")
    if not os.path.isdir(os.path.dirname(path)):
        print(f"Failed to find device {a['device']}", file=sys.stderr)
        return 1
    if a.get("tos") is not None:
        if not a["tos"].isdigit() or not 0 <= int(a["tos"]) <= 255:
            print("TOS must be 0..255", file=sys.stderr)
            return 1
        _write(path, a["tos"] + "\n")
    print(_read(path).strip())
    return 0


def cma_roce_mode(argv: list[str]) -> int:
    a = {"device": "mlx5_0", "port": "1",
         **_options("cma_roce_mode", argv, {**CMA_OPTIONS, "-m": "mode", "--mode": "mode"})}
    _choice("cma_roce_mode", "-m/--mode", a.get("mode"), ("1", "2"))
    path = _configfs(a["device"], a["port"], "default_roce_mode")
    if not os.path.isdir(os.path.dirname(path)):
        print(f"Failed to find device {a['device']}", file=sys.stderr)
        return 1
    if a.get("mode"):
        _write(path, ("IB/RoCE v1" if a["mode"] == "1" else "RoCE v2") + "\n")
    print(_read(path).strip())
    return 0


def _ifaces() -> list[str]:
    base = os.path.join(ROOT, "sys/class/net")
    return sorted(os.listdir(base)) if os.path.isdir(base) else []


def ip(argv: list[str]) -> int:
    as_json = "-j" in argv or "-json" in argv
    oneline = "-o" in argv or "-oneline" in argv
    argv = [a for a in argv if a not in ("-j", "-json", "-d", "-details", "-s", "-o", "-oneline")]
    if argv[:2] == ["link", "set"]:
        rest = argv[2:]
        if rest[:1] == ["dev"]:
            rest = rest[1:]
        ifname = rest[0]
        _need_if(ifname)
        for key, val in zip(rest[1::2], rest[2::2]):
            if key == "mtu":
                _write(_net(ifname, "mtu"), val + "\n")
        for word in rest[1:]:
            if word in ("up", "down"):
                _write(_net(ifname, "operstate"), word + "\n")
        return 0
    if argv[:1] in (["link"], ["l"], ["addr"], ["a"]):
        names = [a for a in argv[1:] if a not in ("dev", "show", "list", "ls")] or _ifaces()
        rows = []
        for i, name in enumerate(names, 2):
            _need_if(name)
            mtu = int(_read(_net(name, "mtu")))
            state = _read(_net(name, "operstate")).strip().upper()
            rows.append({"ifindex": i, "ifname": name, "mtu": mtu, "operstate": state,
                         "address": _read(_net(name, "address")).strip()})
        if as_json:
            import json

            print(json.dumps(rows))
        else:
            for r in rows:
                head = (f"{r['ifindex']}: {r['ifname']}: <BROADCAST,MULTICAST,UP,LOWER_UP> mtu {r['mtu']} "
                        f"qdisc mq state {r['operstate']} mode DEFAULT group default qlen 1000")
                tail = f"    link/ether {r['address']} brd ff:ff:ff:ff:ff:ff"
                print(head + "\\" + tail if oneline else head + "\n" + tail)
        return 0
    print(f"ip stub: unsupported: {' '.join(argv)}", file=sys.stderr)
    return 1


#: Global (802.3x) pause of a ConnectX port as the driver reports it: on in both directions by default
#: (NVIDIA "Flow Control" for ConnectX-4 and above); mlx5 never reports pause autonegotiation.
PAUSE_DEFAULT = {"autoneg": "off", "rx": "on", "tx": "on"}


def _set_pause(ifname: str, pause: dict[str, str], args: list[str]) -> int:
    """``ethtool -A IF [autoneg|rx|tx on|off]...`` as ethtool's ioctl path and mlx5 answer it: a request that
    changes nothing is refused (exit 78, ethtool.c do_spause), pause autonegotiation is refused by
    mlx5e_ethtool_set_pauseparam (-EINVAL, exit 79). ``STUB_IGNORE=pause`` accepts the request silently."""
    wanted = dict(zip(args[::2], args[1::2]))
    bad = [k for k, v in wanted.items() if k not in pause or v not in ("on", "off")]
    if len(args) % 2 or not wanted or bad:
        print(f"ethtool: bad pause arguments: {' '.join(args)}", file=sys.stderr)
        return 1
    changed = {k: v for k, v in wanted.items() if pause[k] != v}
    if not changed:
        print("no pause parameters changed, aborting", file=sys.stderr)
        return 78
    if changed.get("autoneg") == "on":
        print("Cannot set device pause parameters: Invalid argument", file=sys.stderr)
        return 79
    if "pause" not in os.environ.get("STUB_IGNORE", ""):
        _save("ethtool", ifname, {**pause, **changed})
    return 0


def ethtool(argv: list[str]) -> int:
    if not argv:
        return 1
    opt = argv[0] if argv[0].startswith("-") else ""
    ifname = argv[1] if opt else argv[0]
    _need_if(ifname)
    pause = _load("ethtool", ifname, dict(PAUSE_DEFAULT))
    if opt in ("-A", "--pause"):
        return _set_pause(ifname, pause, argv[2:])
    if opt in ("-a", "--show-pause"):
        print(f"Pause parameters for {ifname}:\nAutonegotiate:\t{pause['autoneg']}\nRX:\t\t{pause['rx']}\n"
              f"TX:\t\t{pause['tx']}")
        return 0
    if opt in ("-S", "--statistics"):
        stats = _load("ethtool_stats", ifname, {})
        print("NIC statistics:")
        for key in sorted(stats):
            print(f"     {key}: {stats[key]}")
        return 0
    if opt in ("-i", "--driver"):
        print("driver: mlx5_core\nversion: 24.04-0.6.6\nfirmware-version: 22.41.1000 (MT_0000000359)\n"
              f"bus-info: {_read(_net(ifname, 'device')).strip()}")
        return 0
    speed = _read(_net(ifname, "speed")).strip()
    print(f"Settings for {ifname}:\n\tSpeed: {speed}Mb/s\n\tDuplex: Full\n\tLink detected: yes")
    return 0


def _rdma_devs() -> list[str]:
    base = os.path.join(ROOT, "sys/class/infiniband")
    return sorted(os.listdir(base)) if os.path.isdir(base) else []


def show_gids(argv: list[str]) -> int:
    print("DEV\tPORT\tINDEX\tGID\t\t\t\t\tIPv4  \t\tVER\tDEV")
    print("---\t----\t-----\t---\t\t\t\t\t------------  \t---\t---")
    n = 0
    for dev in _rdma_devs():
        if argv and dev not in argv:
            continue
        gids = os.path.join(ROOT, "sys/class/infiniband", dev, "ports/1/gids.json")
        rows = []
        if os.path.isfile(gids):
            rows = _json_loads(_read(gids))
        for row in rows:
            print(f"{dev}\t1\t{row['index']}\t{row['gid']}\t{row.get('ipv4', '')}  "
                  f"\t{row['ver']}\t{row['netdev']}")
            n += 1
    print(f"n_gids_found={n}")
    return 0


def ibv_devinfo(argv: list[str]) -> int:
    devs = _rdma_devs()
    if "-d" in argv:
        devs = [argv[argv.index("-d") + 1]]
    for dev in devs:
        base = os.path.join(ROOT, "sys/class/infiniband", dev)
        if not os.path.isdir(base):
            print(f"IB device '{dev}' wasn't found", file=sys.stderr)
            return 255
        print(f"hca_id:\t{dev}\n\ttransport:\t\t\tInfiniBand (0)\n\tfw_ver:\t\t\t\t22.41.1000\n"
              f"\tnode_guid:\t\t\t{_read(os.path.join(base, 'node_guid')).strip()}"
              "\n\tvendor_id:\t\t\t0x02c9\n"
              "\tphys_port_cnt:\t\t\t1\n\t\tport:\t1\n\t\t\tstate:\t\t\tPORT_ACTIVE (4)\n"
              "\t\t\tmax_mtu:\t\t4096 (5)\n\t\t\tactive_mtu:\t\t4096 (5)\n\t\t\tlink_layer:\t\tEthernet\n")
    return 0


def _unit_dir(*leaf: str) -> str:
    return os.path.join(ROOT, "etc/systemd/system", *leaf)


def _mirror(src: str, dst: str, suffix: str) -> None:
    """Make ``dst`` hold a copy of each ``*suffix`` file of ``src`` (what a reload makes the daemon see)."""
    os.makedirs(dst, exist_ok=True)
    for old in os.listdir(dst):
        os.unlink(os.path.join(dst, old))
    for name in sorted(os.listdir(src)) if os.path.isdir(src) else []:
        if name.endswith(suffix) and os.path.isfile(os.path.join(src, name)):
            with open(os.path.join(src, name), "rb") as f_in, open(os.path.join(dst, name), "wb") as f_out:
                f_out.write(f_in.read())


def _wanted_by(unit: str) -> list[str]:
    """``WantedBy=`` targets of a unit file's ``[Install]`` section (systemd.unit(5))."""
    section, targets = "", []
    for line in _read(unit).splitlines():
        line = line.strip()
        if line.startswith("[") and line.endswith("]"):
            section = line[1:-1]
        elif section == "Install" and line.startswith("WantedBy="):
            targets += line.partition("=")[2].split()
    return targets


def systemctl(argv: list[str]) -> int:
    """``systemctl daemon-reload | enable U | disable U | is-enabled U`` on the unit files under
    ``$ROCE_TUNE_SYSROOT/etc/systemd/system``: enable/disable make or remove the ``<target>.wants/`` links
    from ``WantedBy=``; a unit file that is a link to /dev/null is masked (is-enabled ``masked``, enable
    refused, disable a no-op); daemon-reload copies the unit files to ``run/systemd-emu/loaded/`` (what the
    daemon has read). Messages as systemd prints them."""
    verb, units = (argv[0] if argv else ""), argv[1:]
    if verb == "daemon-reload":
        _mirror(_unit_dir(), os.path.join(ROOT, "run/systemd-emu/loaded"), ".service")
        return 0
    if verb not in ("enable", "disable", "is-enabled") or len(units) != 1:
        print(f"stub systemctl: unsupported {' '.join(argv)}", file=sys.stderr)
        return 1
    unit = _unit_dir(units[0])
    if os.path.islink(unit) and os.readlink(unit) == "/dev/null":  # masked (systemctl mask)
        if verb == "enable":
            print(f"Failed to enable unit: Unit file /etc/systemd/system/{units[0]} is masked.",
                  file=sys.stderr)
            return 1
        if verb == "is-enabled":
            print("masked")
            return 1
        return 0  # (disable: nothing to remove, the mask stays)
    if not os.path.isfile(unit):
        what = {"is-enabled": "Failed to get unit file state for",
                "enable": "Failed to enable unit: Unit file",
                "disable": "Failed to disable unit: Unit file"}[verb]
        tail = ": No such file or directory" if verb == "is-enabled" else " does not exist."
        print(f"{what} {units[0]}{tail}", file=sys.stderr)
        return 1
    links = [_unit_dir(f"{t}.wants", units[0]) for t in _wanted_by(unit)]
    if verb == "is-enabled":
        on = bool(links) and all(os.path.lexists(k) for k in links)
        print("enabled" if on else "disabled")
        return 0 if on else 1
    for link in links:
        if verb == "enable" and not os.path.lexists(link):
            os.makedirs(os.path.dirname(link), exist_ok=True)
            os.symlink(f"/etc/systemd/system/{units[0]}", link)
            print(f"Created symlink {link} \u2192 /etc/systemd/system/{units[0]}.", file=sys.stderr)
        elif verb == "disable" and os.path.lexists(link):
            os.unlink(link)
            print(f"Removed \"{link}\".", file=sys.stderr)
    return 0


def udevadm(argv: list[str]) -> int:
    """``udevadm control --reload``: copies the rule files to ``run/udev-emu/loaded/`` (what udevd read)."""
    if argv != ["control", "--reload"]:
        print(f"stub udevadm: unsupported {' '.join(argv)}", file=sys.stderr)
        return 1
    _mirror(os.path.join(ROOT, "etc/udev/rules.d"), os.path.join(ROOT, "run/udev-emu/loaded"), ".rules")
    return 0


TOOLS = {"mlnx_qos": mlnx_qos, "systemctl": systemctl, "udevadm": udevadm,
         "cma_roce_tos": cma_roce_tos, "cma_roce_mode": cma_roce_mode, "ip": ip,
         "ethtool": ethtool, "show_gids": show_gids, "ibv_devinfo": ibv_devinfo}


def _maybe_pause(tool: str, argv: list[str]) -> None:
    """Hold before acting when ``TOOL ARGS…`` matches the emulator's pause pattern (once per device:
    the first tool to create ``held`` holds until the test creates ``resume``)."""
    pattern, where = os.environ.get("ROCE_TUNE_EMU_PAUSE"), os.environ.get("ROCE_TUNE_EMU_PAUSE_DIR")
    if not pattern or not where:
        return
    import re
    import time

    if not re.search(pattern, " ".join([tool, *argv])):
        return
    os.makedirs(where, exist_ok=True)
    try:
        open(os.path.join(where, "held"), "x").close()
    except FileExistsError:
        return  # fired already
    deadline = time.monotonic() + 300
    while not os.path.exists(os.path.join(where, "resume")) and time.monotonic() < deadline:
        time.sleep(0.01)


def main(argv: list[str]) -> int:
    """Run ``TOOL ARGS...`` (``argv``); the tool's exit status."""
    _maybe_pause(argv[0], argv[1:])
    return TOOLS[argv[0]](argv[1:])


def launcher(tool: str) -> str:
    """A ``/bin/sh`` script that runs stub ``tool`` with its arguments. It imports this module rather than
    running it as a script, so that Python reads the compiled module from ``__pycache__`` (when bytecode is
    written) instead of compiling ~500 lines on every call; ``-S``: the stubs need only the standard
    library, and skipping ``site`` halves each call's start-up."""
    here = os.path.dirname(os.path.abspath(__file__))
    code = ("import sys; sys.path[0] = sys.argv.pop(1); import host_stubs; "
            "sys.exit(host_stubs.main(sys.argv[1:]))")
    return f'#!/bin/sh\nexec "{sys.executable}" -S -c \'{code}\' "{here}" {tool} "$@"\n'


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
