"""asyncssh server and fleet runner for the loopback device emulators.

``start_emulators(specs)`` starts one SSH server per :class:`EmulatorSpec` on
127.0.0.1 (port 0 = chosen by the OS) inside one background asyncio loop thread and
returns an :class:`EmulatorFleet` to query ports, device state and to stop everything.

Per connection the server accepts password and public-key authentication, offers an
interactive shell (PTY or not) and exec channels; Linux-like platforms also accept
SFTP/SCP into the device sandbox.  The shell loop does its own echo and line handling
(asyncssh's line editor is off) so prompts, echo and Ctrl-C/Ctrl-D behave like a
device terminal for netmiko, paramiko ``invoke_shell`` and manual ``ssh``.
"""

from __future__ import annotations

import asyncio
import importlib
import shutil
import tempfile
import threading
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, TypeVar

import asyncssh

from .core import LOOPBACK_NETMIKO_TIMING, CliSession, DropConnection, EmulatedDevice, EmulatorSpec

T = TypeVar("T")


_PLATFORM_CLASSES = {
    "eos": ("eos", "EosDevice"),
    "nxos": ("nxos", "NxosDevice"),
    "junos": ("junos", "JunosDevice"),
    "cumulus": ("cumulus", "CumulusDevice"),
    "sonic": ("sonic", "SonicDevice"),
    "host": ("host", "HostDevice"),
}


def device_class(platform: str) -> type[EmulatedDevice]:
    """Return the EmulatedDevice subclass for ``platform``.

    Raises:
        ValueError: unknown platform.
    """
    if platform not in _PLATFORM_CLASSES:
        raise ValueError(f"unknown platform {platform!r}; known: {sorted(_PLATFORM_CLASSES)}")
    module, cls = _PLATFORM_CLASSES[platform]
    mod = importlib.import_module(f"{__package__}.{module}")
    return getattr(mod, cls)  # type: ignore[no-any-return]


def _load_public_keys(entries: Iterable[str]) -> list[bytes]:
    keys: list[bytes] = []
    for entry in entries:
        text = entry
        path = Path(entry)
        if "\n" not in entry and len(entry) < 4096 and path.is_file():
            text = path.read_text()
        for line in text.splitlines():
            line = line.strip()
            if line and not line.startswith("#"):
                keys.append(asyncssh.import_public_key(line).public_data)
    return keys


def _live_connections(device: EmulatedDevice) -> set[asyncssh.SSHServerConnection]:
    conns = getattr(device, "_live_conns", None)
    if conns is None:
        conns = set()
        device._live_conns = conns  # type: ignore[attr-defined]
    return conns


class _SSHServer(asyncssh.SSHServer):
    def __init__(self, device: EmulatedDevice) -> None:
        self.device = device
        self.keys = _load_public_keys(device.spec.authorized_keys)

    def connection_made(self, conn: asyncssh.SSHServerConnection) -> None:
        self.conn = conn
        with self.device.lock:
            self.device.connections += 1
        _live_connections(self.device).add(conn)

    def connection_lost(self, exc: Exception | None) -> None:
        _live_connections(self.device).discard(self.conn)

    def begin_auth(self, username: str) -> bool:
        return True

    def password_auth_supported(self) -> bool:
        return True

    def validate_password(self, username: str, password: str) -> bool:
        spec = self.device.spec
        return username == spec.username and password == spec.password

    def public_key_auth_supported(self) -> bool:
        return bool(self.keys)

    def validate_public_key(self, username: str, key: asyncssh.SSHKey) -> bool:
        return username == self.device.spec.username and key.public_data in self.keys


async def _write(process: asyncssh.SSHServerProcess, text: str, newline: str) -> None:
    if text:
        process.stdout.write(text.replace("\n", newline) if newline != "\n" else text)


async def _interactive(process: asyncssh.SSHServerProcess, device: EmulatedDevice,
                       session: CliSession, newline: str) -> None:
    """Read raw terminal input, echo it, feed complete lines to the session."""
    out = session.banner() + session.prompt()
    await _write(process, out, newline)
    buf = ""
    prev = ""
    while not session.closed:
        try:
            data = await process.stdin.read(65536)
        except (asyncssh.TerminalSizeChanged, asyncssh.BreakReceived, asyncssh.SignalReceived):
            continue
        if not data:
            break
        echo = ""
        for ch in data:
            if ch == "\n" and prev == "\r":
                prev = ch
                continue
            prev = ch
            if ch in "\r\n":
                echo += "\n"
                await _write(process, echo, newline)
                echo = ""
                line, buf = buf, ""
                if session.doomed and line.strip():
                    raise DropConnection()
                delay = device.faults.delay_per_command_s
                if delay:
                    await asyncio.sleep(delay)
                with device.lock:
                    out = session.handle_line(line)
                    pause = device.take_pause(line.strip())
                    if device.take_drop(line.strip()):
                        raise DropConnection()
                if pause:
                    await device.hold()
                if session.closed:
                    await _write(process, out, newline)
                    break
                await _write(process, out + session.prompt(), newline)
            elif ch == "\x03":
                buf = ""
                with device.lock:
                    out = session.handle_ctrl_c()
                await _write(process, echo + out + session.prompt(), newline)
                echo = ""
            elif ch == "\x04":
                if buf:
                    continue
                with device.lock:
                    out = session.handle_ctrl_d()
                await _write(process, echo + out + ("" if session.closed else session.prompt()), newline)
                echo = ""
                if session.closed:
                    break
            elif ch in "\x7f\x08":
                if buf:
                    buf = buf[:-1]
                    if session.echo:
                        echo += "\b \b"
            elif ch in "\x00\x1b":
                continue
            else:
                buf += ch
                if session.echo:
                    echo += ch
        if echo:
            await _write(process, echo, newline)


async def _handle_process(process: asyncssh.SSHServerProcess, device: EmulatedDevice) -> None:
    username = process.get_extra_info("username") or device.spec.username
    pty = process.get_terminal_type() is not None
    newline = "\r\n" if pty else "\n"
    command = process.command
    session = device.new_session(username, interactive=command is None)
    with device.lock:
        session.doomed = device.session_opened()
    status = 0
    try:
        custom = getattr(session, "run_process", None)
        if custom is not None:
            status = await custom(process)
        elif command is not None:
            if session.doomed and command.strip():  # drop_reconnects: ssh exec channels die too
                raise DropConnection()
            delay = device.faults.delay_per_command_s
            if delay:
                await asyncio.sleep(delay)
            with device.lock:
                out, status = session.run_exec(command)
                drop = device.take_drop(command.strip())
            if drop:  # the command took effect; its output and exit status are lost
                raise DropConnection()
            await _write(process, out, newline)
        else:
            await _interactive(process, device, session, newline)
            status = session.exit_status
        process.exit(status)
        try:
            await asyncio.wait_for(process.wait_closed(), 5)
        except (asyncio.TimeoutError, OSError, asyncssh.Error):
            pass
    except DropConnection:
        process.channel.get_connection().abort()
    except (BrokenPipeError, ConnectionError, asyncssh.DisconnectError):
        pass
    finally:
        with device.lock:
            session.on_disconnect()


class EmulatorFleet:
    """Running emulators; returned by :func:`start_emulators`.

    ``fleet["leaf1"]`` is the :class:`EmulatedDevice`; ``fleet.port("leaf1")`` its port;
    ``fleet.netmiko_params("leaf1")`` a ready ``ConnectHandler(**params)`` dict.
    """

    def __init__(self, loop: asyncio.AbstractEventLoop, thread: threading.Thread, workdir: Path,
                 owns_workdir: bool) -> None:
        self.loop = loop
        self.thread = thread
        self.workdir = workdir
        self._owns_workdir = owns_workdir
        self.devices: dict[str, EmulatedDevice] = {}
        self._servers: list[asyncssh.SSHAcceptor] = []
        self.host_key_path = workdir / "ssh_host_ed25519_key"
        self._stopped = False

    def __getitem__(self, name: str) -> EmulatedDevice:
        return self.devices[name]

    def __iter__(self):  # type: ignore[no-untyped-def]
        return iter(self.devices.values())

    def __len__(self) -> int:
        return len(self.devices)

    def __enter__(self) -> EmulatorFleet:  # noqa: PYI034
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def port(self, name: str) -> int:
        return self.devices[name].port

    def netmiko_params(self, name: str, **overrides: Any) -> dict[str, Any]:
        """Connection dict for ``netmiko.ConnectHandler`` (real driver, fast settings)."""
        dev = self.devices[name]
        params: dict[str, Any] = {
            "device_type": dev.netmiko_device_type,
            "host": "127.0.0.1",
            "port": dev.port,
            "username": dev.spec.username,
            "password": dev.spec.password,
            "secret": dev.secret,
            **LOOPBACK_NETMIKO_TIMING,
            "allow_agent": False,
            "use_keys": False,
            "conn_timeout": 10,
        }
        params.update(overrides)
        return params

    def connect(self, name: str, **overrides: Any) -> Any:
        """Open a real netmiko ``ConnectHandler`` to device ``name``."""
        from netmiko import ConnectHandler

        return ConnectHandler(**self.netmiko_params(name, **overrides))

    def call(self, fn: Callable[..., T], *args: Any) -> T:
        """Run ``fn(*args)`` on the emulator loop thread and return its result."""
        async def _run() -> T:
            return fn(*args)
        return asyncio.run_coroutine_threadsafe(_run(), self.loop).result(timeout=30)

    def stop(self) -> None:
        """Close all servers and connections, stop the loop thread, remove the temp dir."""
        if self._stopped:
            return
        self._stopped = True

        async def _shutdown() -> None:
            for dev in self.devices.values():
                dev.close()
            for server in self._servers:
                server.close()
            for server in self._servers:
                try:
                    await asyncio.wait_for(server.wait_closed(), 5)
                except (asyncio.TimeoutError, OSError, asyncssh.Error):
                    pass
            conns = [c for dev in self.devices.values() for c in list(_live_connections(dev))]
            for conn in conns:
                conn.close()
            for conn in conns:
                try:
                    await asyncio.wait_for(conn.wait_closed(), 2)
                except (asyncio.TimeoutError, OSError, asyncssh.Error):
                    pass
            for dev in self.devices.values():
                closer = getattr(dev, "aclose", None)
                if closer is not None:
                    await closer()
            me = asyncio.current_task()
            rest = [t for t in asyncio.all_tasks() if t is not me]
            for task in rest:
                task.cancel()
            if rest:
                await asyncio.wait(rest, timeout=2)

        try:
            asyncio.run_coroutine_threadsafe(_shutdown(), self.loop).result(timeout=15)
        finally:
            self.loop.call_soon_threadsafe(self.loop.stop)
            self.thread.join(timeout=10)
            if self._owns_workdir:
                shutil.rmtree(self.workdir, ignore_errors=True)


async def _start_one(fleet: EmulatorFleet, spec: EmulatorSpec, key: asyncssh.SSHKey) -> None:
    cls = device_class(spec.platform)
    if spec.name in fleet.devices:
        raise ValueError(f"duplicate device name {spec.name!r}")
    device = cls(spec, fleet.workdir)
    device.loop = asyncio.get_running_loop()
    fleet.devices[spec.name] = device
    starter = getattr(device, "astart", None)
    if starter is not None:
        await starter()

    async def handler(process: asyncssh.SSHServerProcess) -> None:
        await _handle_process(process, device)

    sftp_factory = None
    if device.file_transfer:
        root = str(device.sandbox).encode()

        def sftp_factory(chan: asyncssh.SSHServerChannel) -> asyncssh.SFTPServer:
            return asyncssh.SFTPServer(chan, chroot=root)

    server = await asyncssh.create_server(
        lambda: _SSHServer(device), "127.0.0.1", spec.port,
        server_host_keys=[key], process_factory=handler, line_editor=False,
        encoding="utf-8", sftp_factory=sftp_factory, allow_scp=device.file_transfer,
        keepalive_interval=0, login_timeout=30,
    )
    fleet._servers.append(server)
    device.port = server.sockets[0].getsockname()[1]


def start_emulators(specs: Iterable[EmulatorSpec], workdir: str | Path | None = None,
                    timeout_s: float = 60.0) -> EmulatorFleet:
    """Start one loopback SSH emulator per spec in a background asyncio thread.

    Args:
        specs: devices to start; names must be unique.
        workdir: directory for host key and per-device sandboxes; default a new temp
            dir removed on ``stop()``.
        timeout_s: how long to wait for all servers to listen.

    Returns:
        The running :class:`EmulatorFleet` (also a context manager).

    Raises:
        ValueError: unknown platform or duplicate name (servers already started are
            stopped first).
    """
    owns = workdir is None
    wd = Path(tempfile.mkdtemp(prefix="roce-emu-")) if workdir is None else Path(workdir)
    wd.mkdir(parents=True, exist_ok=True)
    loop = asyncio.new_event_loop()
    ready = threading.Event()

    def _run() -> None:
        asyncio.set_event_loop(loop)
        loop.call_soon(ready.set)
        loop.run_forever()
        loop.close()

    thread = threading.Thread(target=_run, name="roce-tune-emulators", daemon=True)
    thread.start()
    ready.wait(10)
    fleet = EmulatorFleet(loop, thread, wd, owns)
    key = asyncssh.generate_private_key("ssh-ed25519")
    key.write_private_key(str(fleet.host_key_path))
    key.write_public_key(str(fleet.host_key_path) + ".pub")

    async def _start_all() -> None:
        for spec in specs:
            await _start_one(fleet, spec, key)

    try:
        asyncio.run_coroutine_threadsafe(_start_all(), loop).result(timeout=timeout_s)
    except BaseException:
        fleet.stop()
        raise
    return fleet
