"""``roce-tune audit --live``: the same reads as ``--from``, over SSH, read-only.

Each switch of the plan with a management address gets its platform's ``CAPTURE_COMMANDS`` (running
configuration and counters; :mod:`roce_tune.platforms.captures`), each host its NICs' commands (the host
platform's ``CAPTURE_COMMANDS``), through the apply engine's connection code (netmiko, credentials from
the environment variables the inventory names or a secrets file, host-key policy, the platform's secret
patterns masking every output). Outputs become capture text (``<device>.live.txt``: a prompt line per
command), split and read exactly as ``--from`` reads files; with ``save_dir`` the texts are written
there (0600) so evidence ``leaf1.live.txt:12`` can be opened.

Read-only by construction: every command must match :data:`READ_ONLY` (``show …``, ``nv show …``, ``nv
config show``, ``ethtool [-S|-a] IF``, ``mlnx_qos -i IF`` without a setting, ``ibv_devinfo``, ``show_gids``,
``ip -d link show``, ``grep -H`` of sysfs); anything else raises before a session opens.

Bounded: at most ``concurrency`` sessions at once (a thread pool), each device within ``device_timeout_s``
(connect timeout and every command's read timeout are cut to the time left). A device that cannot be
reached, refuses the login or runs out of time is reported as not checked (RT490), never as zeros: its
data is absent, so no check reads it.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from roce_tune.captures import Block, split_blocks

__all__ = ["READ_ONLY", "LiveDevice", "LiveOptions", "capture_commands", "check_read_only", "read_live"]

#: the only commands ``--live`` sends (anchored; ``|`` only into :data:`_PIPES`)
READ_ONLY = re.compile(
    r"^(?:show [\w ./:|-]+|nv (?:config )?show(?: [\w ./:-]+)?|ethtool (?:-[Sa] )?[\w.@-]+|"
    r"mlnx_qos -i [\w.@-]+|"
    r"ibv_devinfo(?: -v)?(?: -d [\w.-]+)?|show_gids(?: [\w.-]+)?|ip -d link show [\w.@-]+|"
    r"grep -H '' (?:\$\{ROCE_TUNE_SYSROOT:-\})?/sys/[\w./*-]+)$")
#: the pipes a read may go through, every one of them (a Junos ``| save FILE`` writes on the device)
_PIPES = frozenset({"json", "display set", "display inheritance", "display inheritance no-comments"})


def check_read_only(command: str) -> str:
    """``command`` if it only reads (:data:`READ_ONLY`; every pipe one of :data:`_PIPES`: ``json``, Junos
    ``display set`` / ``display inheritance``).

    Raises:
        ValueError: the command could change the device.
    """
    pipes = [" ".join(p.split()) for p in command.split("|")[1:]]
    if not READ_ONLY.match(command) or any(p not in _PIPES for p in pipes) or ";" in command:
        raise ValueError(f"audit --live sends only read-only commands; refusing {command!r}")
    return command


@dataclass
class LiveOptions:
    """Options of ``audit --live``.

    Attributes:
        concurrency: sessions at once (default 10).
        device_timeout_s: the most one device may take, connect included (s).
        apply: connection options shared with ``apply`` (secrets file, known_hosts, host-key policy,
            netmiko timing); its connect timeout is cut to ``device_timeout_s``.
        save_dir: where to write each device's capture (``<device>.live.txt``, 0600); None: kept in memory.
    """

    concurrency: int = 10
    device_timeout_s: float = 120.0
    apply: Any = None  # roce_tune.deploy.runner.ApplyOptions
    save_dir: Path | None = None


@dataclass
class LiveDevice:
    """One device's session: its capture text, or why it was not checked, and how long it took (s)."""

    name: str
    kind: str
    text: str = ""
    error: str | None = None
    seconds: float = 0.0
    commands: list[str] = field(default_factory=list)


def capture_commands(plan: Any, name: str) -> list[str]:
    """The read-only commands for plan device ``name`` (switch: its platform's ``CAPTURE_COMMANDS``,
    ``{port}`` once per lossless port; host: the host platform's per NIC).

    Raises:
        KeyError: ``name`` is not in the plan.
        ValueError: a command is not read-only (:func:`check_read_only`).
    """
    from roce_tune.platforms import HOST_PLATFORM, get_platform

    for sw in plan.switches:
        if sw.name == name:
            out: list[str] = []
            for c in getattr(get_platform(sw.platform), "CAPTURE_COMMANDS", ()):
                out += [c.format(port=p.name) for p in sw.ports if p.lossless] if "{port}" in c else [c]
            return [check_read_only(c) for c in out]
    for h in plan.hosts:
        if h.name == name:
            cmds = getattr(get_platform(HOST_PLATFORM), "CAPTURE_COMMANDS", ())
            return [check_read_only(c.format(netdev=n.netdev, rdma_device=n.rdma_device,
                                             rdma_port=n.rdma_port))
                    for n in h.nics for c in cmds]
    raise KeyError(name)


def _session(target: Any, commands: list[str], opts: LiveOptions) -> LiveDevice:
    """Open one session, run ``commands``, close; errors become ``LiveDevice.error`` (never raised)."""
    from roce_tune.deploy.drivers import Driver, PushError, PushOptions
    from roce_tune.deploy.runner import close, connect

    start = time.monotonic()
    dev = LiveDevice(target.name, target.kind, commands=commands)
    conn = None
    try:
        aopts = replace(opts.apply, conn_timeout_s=min(opts.apply.conn_timeout_s, opts.device_timeout_s))
        conn, redact = connect(target, aopts, None)
        drv = Driver(target.platform, conn, PushOptions(read_timeout_s=opts.device_timeout_s, save=False),
                     lambda _s: None)
        parts = []
        for command in commands:
            left = opts.device_timeout_s - (time.monotonic() - start)
            if left <= 0:
                raise TimeoutError(f"timed out after {opts.device_timeout_s:g} s (device timeout)")
            drv.opts.read_timeout_s = left
            out = drv.cmd(command)
            parts.append(f"roce-tune@{target.name}:~$ {command}\n{redact(out).rstrip()}\n")
        dev.text = "".join(parts)
    except PushError as exc:
        dev.error = str(exc).split(": ", 1)[-1] if str(exc).startswith("connect") else str(exc)
    except Exception as exc:  # noqa: BLE001 — every failure of one device is reported, the others go on
        dev.error = _why(target, exc, conn is None, time.monotonic() - start, opts.device_timeout_s)
    finally:
        close(conn)
    dev.seconds = time.monotonic() - start
    return dev


def _why(target: Any, exc: BaseException, connecting: bool, elapsed_s: float, limit_s: float) -> str:
    """One line saying why a device was not read (never the exception's whole multi-line text)."""
    from roce_tune.deploy.connect import describe_connect_error

    first = next((ln.strip() for ln in str(exc).splitlines() if ln.strip()), type(exc).__name__)
    if type(exc).__name__ in ("ReadTimeout", "TimeoutError") or elapsed_s >= 0.95 * limit_s:
        return (f"{target.name}: no answer within the device timeout ({limit_s:g} s, --device-timeout): "
                f"{first}")
    if connecting:
        return describe_connect_error(target.name, target.host, target.port or 22, exc, None)
    return f"{target.name}: {type(exc).__name__}: {first}"


def _targets(plan: Any) -> tuple[list[Any], list[tuple[str, str]]]:
    """(targets with a management address, (name, kind) of the devices without one)."""
    from roce_tune.deploy.runner import Target

    every = [Target.of_switch(sw) for sw in plan.switches] + [Target.of_host(h) for h in plan.hosts]
    return [t for t in every if t.host], [(t.name, t.kind) for t in every if not t.host]


def read_live(plan: Any, opts: LiveOptions,
              on_device: Callable[[LiveDevice], None] | None = None) -> tuple[list[Block], list[LiveDevice],
                                                                              list[tuple[str, str]]]:
    """Run every device's commands (``opts.concurrency`` at once) and split the outputs into blocks.

    Returns:
        (blocks of the devices read, every device's :class:`LiveDevice`, (name, kind) of devices without a
        management address in the plan).

    Raises:
        ValueError: a platform's command is not read-only (before any session opens).
    """
    from roce_tune.deploy.credentials import private_dir, write_private

    targets, missing = _targets(plan)
    jobs = [(t, capture_commands(plan, t.name)) for t in targets]
    with ThreadPoolExecutor(max_workers=max(1, opts.concurrency)) as pool:
        futures = [pool.submit(_session, t, cmds, opts) for t, cmds in jobs]
        devices = []
        for f in futures:
            d = f.result()
            devices.append(d)
            if on_device is not None:
                on_device(d)
    blocks: list[Block] = []
    for d in devices:
        if d.error is not None:
            continue
        file = f"{d.name}.live.txt"
        if opts.save_dir is not None:
            private_dir(opts.save_dir)
            write_private(opts.save_dir / file, d.text)
        blocks += split_blocks(d.text, file, d.name)
    return blocks, devices, missing
