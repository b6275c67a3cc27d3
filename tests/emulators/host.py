"""Emulated GPU server: a real ``bash`` per SSH session, confined by convention to a sandbox.

Interactive sessions get ``bash --noprofile --norc -i`` on a real pseudo-terminal (so
echo, line editing, Ctrl-C and prompts come from bash and the tty, exactly what
netmiko's ``linux`` driver and paramiko ``invoke_shell`` clients see on a server); exec
channels run ``bash -c``.  Environment: ``HOME``/``TMPDIR``/cwd in the sandbox, ``PATH``
= extra stub dirs, the sandbox ``bin`` (stub ``mlnx_qos``, ``cma_roce_tos``,
``cma_roce_mode``, ``ip``, ``ethtool``, ``show_gids``, ``ibv_devinfo`` and a ``sudo``
that asks for the password as sudo and Ansible's ``become`` do but never elevates), then the system PATH;
``ROCE_TUNE_SYSROOT`` points at a fake sysfs/configfs tree.

LIMITS: this is *not* isolation.  Commands run as the test runner's user with its
privileges; only relative paths, ``$HOME`` and ``$ROCE_TUNE_SYSROOT`` land in the
sandbox.  Use it only with scripts under test that honour ``ROCE_TUNE_SYSROOT``.
"""

from __future__ import annotations

import asyncio
import codecs
import fcntl
import hashlib
import os
import pty
import re
import signal
import struct
import termios
import time
from pathlib import Path
from typing import Any

import asyncssh

from . import host_stubs
from .core import CliSession, DropConnection, EmulatedDevice

DEFAULT_NICS = [{"netdev": "ens1f0np0", "rdma": "mlx5_0", "pci": "0000:17:00.0", "speed_mbps": 100000,
                 "ipv4": "192.0.2.101"}]
TOOLS = ("mlnx_qos", "cma_roce_tos", "cma_roce_mode", "ip", "ethtool", "show_gids", "ibv_devinfo",
         "systemctl", "udevadm")
RP_DEFAULTS = {"rpg_ai_rate": 5, "rpg_hai_rate": 50, "rpg_min_rate": 1, "rpg_max_rate": 0, "rpg_gd": 11,
               "rpg_time_reset": 300, "rpg_byte_reset": 32767, "rpg_threshold": 1,
               "initial_alpha_value": 1023,
               "rate_reduce_monitor_period": 4, "rate_to_set_on_first_cnp": 0, "dce_tcp_g": 1019,
               "dce_tcp_rtt": 1, "clamp_tgt_rate": 0, "clamp_tgt_rate_after_time_inc": 1,
               "rpg_min_dec_fac": 50}
HW_COUNTERS = ("np_cnp_sent", "np_ecn_marked_roce_packets", "rp_cnp_handled", "rp_cnp_ignored",
               "out_of_sequence", "packet_seq_err", "implied_nak_seq_err", "local_ack_timeout_err",
               "roce_adp_retrans", "out_of_buffer", "duplicate_request", "rx_icrc_encapsulated")

SUDO_STUB = r"""#!/bin/bash
# sudo stub of the roce-tune host emulator: asks for the password as sudo(8) does, never elevates. Options as
# sudo takes them (Ansible's sudo become plugin sends `sudo -H -S [-n] [-p PROMPT] -u root /bin/sh -c '...'`):
# -S/--stdin the prompt on stderr, the password from stdin; -p/--prompt PROMPT (%p, %u: the user); -n anywhere
# among the flags: no prompt, fail; -u/--user USER; -s/-i a shell; combined flags (-HSn); -- ends them.
prompt='[sudo] password for %p: ' stdin=0 nonint=0 user=root shell=0
while [ $# -gt 0 ]; do
  case "$1" in
    --) shift; break ;;
    --prompt=*) prompt="${1#*=}" ;;
    --user=*) user="${1#*=}" ;;
    --stdin) stdin=1 ;;
    --non-interactive) nonint=1 ;;
    --shell|--login) shell=1 ;;
    --prompt|--user|--group|--close-from|--chdir|--host|--role|--type|--command-timeout|--other-user)
      [ $# -ge 2 ] || { echo "sudo: option '$1' requires an argument" >&2; exit 1; }
      case "$1" in --prompt) prompt="$2" ;; --user) user="$2" ;; esac
      shift ;;
    --*) ;;
    -?*)
      flags="${1#-}"
      while [ -n "$flags" ]; do
        f="${flags%"${flags#?}"}" flags="${flags#?}"
        case "$f" in
          p|u|g|C|D|h|r|t|T|U)  # (a value: the rest of this word, else the next word)
            if [ -z "$flags" ]; then
              [ $# -ge 2 ] || { echo "sudo: option requires an argument -- '$f'" >&2; exit 1; }
              flags="$2"; shift
            fi
            case "$f" in p) prompt="$flags" ;; u) user="$flags" ;; esac
            flags="" ;;
          S) stdin=1 ;;
          n) nonint=1 ;;
          s|i) shell=1 ;;
        esac
      done ;;
    *) break ;;
  esac
  shift
done
if [ "$ROCE_TUNE_SUDO_CACHED" != 1 ] && [ "$ROCE_TUNE_SUDO_NOPASSWD" != 1 ]; then
  if [ "$nonint" = 1 ]; then echo "sudo: a password is required" >&2; exit 1; fi
  prompt="${prompt//%p/$USER}" prompt="${prompt//%u/$USER}"
  if [ "$stdin" = 1 ]; then
    printf '%s' "$prompt" >&2; IFS= read -r -s pw; echo >&2
  else
    IFS= read -r -s -p "$prompt" pw; echo
  fi
  if [ "$(printf %s "$pw" | sha256sum | cut -d' ' -f1)" != "$ROCE_TUNE_SUDO_HASH" ]; then
    echo "Sorry, try again."; echo "sudo: 1 incorrect password attempt"; exit 1
  fi
fi
export ROCE_TUNE_SUDO_CACHED=1 USER="$user" LOGNAME="$user"
if [ "$shell" = 1 ] && [ $# -gt 0 ]; then exec bash -c "$*"; fi
if [ $# -eq 0 ] || [ "$1" = "su" ]; then
  export PS1="root@${ROCE_TUNE_EMU_HOST}:\w# "
  exec bash --noprofile --norc -i
fi
exec "$@"
"""


def seed_pause(root: Path, netdev: str) -> None:
    """The stub ``ethtool``'s global pause state of ``netdev`` at its default, written as the stub writes it,
    so that a run that changes it and a restore that puts it back leave the same files."""
    path = host_stubs.state_path(root, "ethtool", netdev)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(host_stubs.state_text(host_stubs.PAUSE_DEFAULT))


def _write(path: Path, value: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"{value}\n")


class HostDevice(EmulatedDevice):
    """GPU host (``netmiko`` device_type ``linux``).

    Options: ``nics`` (list of dicts: netdev, rdma, pci, speed_mbps, ipv4),
    ``stub_dirs`` (extra PATH dirs placed first, e.g. an ``all_reduce_perf`` stub),
    ``sudo_nopasswd`` (False), ``env`` (extra environment variables).
    """

    platform = "host"
    netmiko_device_type = "linux"
    file_transfer = True

    def __init__(self, spec, workdir):  # type: ignore[no-untyped-def]
        super().__init__(spec, workdir)
        self.nics: list[dict[str, Any]] = spec.options.get("nics", DEFAULT_NICS)
        self.home = self.sandbox / "home" / spec.username
        self.sysroot = self.sandbox / "sysroot"
        self.bin = self.sandbox / "bin"
        for d in (self.home, self.sandbox / "tmp", self.bin):
            d.mkdir(parents=True, exist_ok=True)
        (self.home / ".inputrc").write_text("set enable-bracketed-paste off\nset bell-style none\n")
        self._make_stubs()
        self._make_sysroot()

    def _make_stubs(self) -> None:
        for tool in TOOLS:
            path = self.bin / tool
            path.write_text(host_stubs.launcher(tool))
            path.chmod(0o755)
        (self.bin / "sudo").write_text(SUDO_STUB)
        (self.bin / "sudo").chmod(0o755)
        (self.bin / "whoami").write_text('#!/bin/sh\necho "$USER"\n')
        (self.bin / "whoami").chmod(0o755)

    def _make_sysroot(self) -> None:
        root = self.sysroot
        for i, nic in enumerate(self.nics):
            net = root / "sys/class/net" / nic["netdev"]
            _write(net / "mtu", 1500)
            _write(net / "operstate", "up")
            _write(net / "speed", nic.get("speed_mbps", 100000))
            _write(net / "address", f"b8:ce:f6:00:00:{i:02x}")
            _write(net / "device", nic.get("pci", f"0000:{0x17 + i:02x}:00.0"))
            for side in ("roce_np", "roce_rp"):
                for prio in range(8):
                    _write(net / "ecn" / side / "enable" / str(prio), 1)
            _write(net / "ecn/roce_np/cnp_dscp", 48)
            _write(net / "ecn/roce_np/cnp_802p_prio", 6)
            _write(net / "ecn/roce_np/min_time_between_cnps", 4)
            for key, val in RP_DEFAULTS.items():
                _write(net / "ecn/roce_rp" / key, val)
            seed_pause(root, nic["netdev"])
            ib = root / "sys/class/infiniband" / nic["rdma"]
            _write(ib / "node_guid", f"b8ce:f603:0000:00{i:02x}")
            _write(ib / "tc/1/traffic_class", "")
            for name in HW_COUNTERS:
                _write(ib / "ports/1/hw_counters" / name, 0)
            _write(ib / "ports/1/counters/port_xmit_wait", 0)
            ipv4 = nic.get("ipv4", f"192.0.2.{101 + i}")
            v4gid = "0000:0000:0000:0000:0000:ffff:" + "".join(
                f"{int(x):02x}" for x in ipv4.split(".")[:2]) + ":" + "".join(
                f"{int(x):02x}" for x in ipv4.split(".")[2:])
            gids = [
                {"index": 0, "gid": f"fe80:0000:0000:0000:bace:f6ff:fe00:00{i:02x}", "ver": "v1",
                 "netdev": nic["netdev"]},
                {"index": 1, "gid": f"fe80:0000:0000:0000:bace:f6ff:fe00:00{i:02x}", "ver": "v2",
                 "netdev": nic["netdev"]},
                {"index": 2, "gid": v4gid, "ipv4": ipv4, "ver": "v1", "netdev": nic["netdev"]},
                {"index": 3, "gid": v4gid, "ipv4": ipv4, "ver": "v2", "netdev": nic["netdev"]},
            ]
            import json
            (ib / "ports/1/gids.json").write_text(json.dumps(gids, indent=1) + "\n")
            cm = root / "sys/kernel/config/rdma_cm" / nic["rdma"] / "ports/1"
            _write(cm / "default_roce_tos", 0)
            _write(cm / "default_roce_mode", "IB/RoCE v1")

    def env(self) -> dict[str, str]:
        spec = self.spec
        extra = [str(Path(d)) for d in spec.options.get("stub_dirs", [])]
        path = ":".join(extra + [str(self.bin), os.environ.get("PATH", "/usr/bin:/bin")])
        env = {
            "HOME": str(self.home), "USER": spec.username, "LOGNAME": spec.username, "PATH": path,
            "TMPDIR": str(self.sandbox / "tmp"), "ROCE_TUNE_SYSROOT": str(self.sysroot),
            "ROCE_TUNE_EMU_HOST": self.name, "TERM": "vt100", "LANG": "C.UTF-8",
            "INPUTRC": str(self.home / ".inputrc"), "HISTFILE": "/dev/null",
            "PS1": f"{spec.username}@{self.name}:\\w$ ",
            "ROCE_TUNE_SUDO_HASH": hashlib.sha256(self.secret.encode()).hexdigest(),
            "ROCE_TUNE_SUDO_NOPASSWD": "1" if spec.options.get("sudo_nopasswd") else "0",
        }
        if self.faults.pause_pattern:  # the stub tools hold at a matching call (Faults.pause_pattern)
            env.update(ROCE_TUNE_EMU_PAUSE=self.faults.pause_pattern,
                       ROCE_TUNE_EMU_PAUSE_DIR=str(self._pause_dir))
        env.update({k: str(v) for k, v in spec.options.get("env", {}).items()})
        return env

    @property
    def _pause_dir(self) -> Path:
        """Where a stub tool that holds at ``faults.pause_pattern`` writes ``held`` and waits for
        ``resume`` (files: the tools are separate processes); a new one per arming."""
        return self.sandbox / ".emu-pause" / str(getattr(self, "_pause_gen", 0))

    def wait_paused(self, timeout: float) -> bool:
        """Wait until a stub tool holds at ``faults.pause_pattern``; False on timeout."""
        deadline = time.monotonic() + timeout
        while not (self._pause_dir / "held").exists():
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.01)
        return True

    def resume(self) -> None:
        super().resume()
        self._pause_dir.mkdir(parents=True, exist_ok=True)
        (self._pause_dir / "resume").touch()

    def _reset_pause(self) -> None:
        self.resume()  # a tool still held under the previous pattern goes on
        super()._reset_pause()
        self._pause_gen = getattr(self, "_pause_gen", 0) + 1

    def running_config(self) -> str:
        """Every file under the sysroot as ``path = value`` lines, sorted (host "config")."""
        with self.lock:
            lines = []
            for p in sorted(self.sysroot.rglob("*")):
                if p.is_file():
                    rel = p.relative_to(self.sysroot).as_posix()
                    lines.append(f"{rel} = {p.read_text().strip()}")
            return "\n".join(lines) + "\n"

    def new_session(self, username: str, interactive: bool) -> HostSession:
        return HostSession(self, username, interactive)


class HostSession(CliSession):
    device: HostDevice

    def prompt(self) -> str:
        return ""

    async def run_process(self, process: asyncssh.SSHServerProcess) -> int:
        if process.command is not None and process.get_terminal_type() is None:
            return await self._run_pipes(process, process.command)
        return await self._run_pty(process)

    async def _run_pipes(self, process: asyncssh.SSHServerProcess, command: str) -> int:
        dev = self.device
        if dev.faults.delay_per_command_s:
            await asyncio.sleep(dev.faults.delay_per_command_s)
        if dev.rejects(command):
            process.stderr.write(f"Error: command rejected: {command}\n")
            return 1
        with dev.lock:  # as a PTY session records its lines (a script sent whole: each of its lines)
            dev.commands_seen.extend(ln.strip() for ln in command.split("\n") if ln.strip())
        proc = await asyncio.create_subprocess_exec(
            "bash", "--noprofile", "--norc", "-c", command, cwd=str(dev.home), env=dev.env(),
            stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
            start_new_session=True)
        await process.redirect(stdin=proc.stdin, stdout=proc.stdout, stderr=proc.stderr)
        status = await proc.wait()
        await process.stdout.drain()
        await process.stderr.drain()
        return status

    async def _run_pty(self, process: asyncssh.SSHServerProcess) -> int:
        dev = self.device
        master, slave = pty.openpty()
        width, height = (process.get_terminal_size() or (80, 24, 0, 0))[:2]
        fcntl.ioctl(master, termios.TIOCSWINSZ, struct.pack("HHHH", height or 24, width or 80, 0, 0))
        argv = ["bash", "--noprofile", "--norc", "-i"]
        if process.command is not None:
            argv = ["bash", "--noprofile", "--norc", "-c", process.command]

        def _ctty() -> None:
            fcntl.ioctl(0, termios.TIOCSCTTY, 0)

        proc = await asyncio.create_subprocess_exec(
            *argv, stdin=slave, stdout=slave, stderr=slave, cwd=str(dev.home), env=dev.env(),
            start_new_session=True, preexec_fn=_ctty)
        os.close(slave)
        os.set_blocking(master, False)
        loop = asyncio.get_running_loop()
        decoder = codecs.getincrementaldecoder("utf-8")("replace")
        closed = asyncio.Event()

        def on_output() -> None:
            try:
                data = os.read(master, 65536)
            except OSError:
                data = b""
            if not data:
                loop.remove_reader(master)
                closed.set()
                return
            text = decoder.decode(data)
            if text:
                process.stdout.write(text)

        loop.add_reader(master, on_output)

        async def pump_input() -> None:
            line = ""
            while True:
                try:
                    data = await process.stdin.read(65536)
                except (asyncssh.TerminalSizeChanged, asyncssh.BreakReceived, asyncssh.SignalReceived):
                    continue
                if not data:
                    break
                out = ""
                for ch in data:
                    if ch in "\r\n":
                        with dev.lock:
                            rejected = dev.rejects(line.strip()) if line.strip() else False
                        if rejected:
                            out += "\x15" + "echo 'Error: command rejected' >&2; false"
                        if dev.faults.delay_per_command_s:
                            os.write(master, out.encode())
                            out = ""
                            await asyncio.sleep(dev.faults.delay_per_command_s)
                        out += ch
                        if line.strip() and self.doomed:
                            raise DropConnection()
                        if line.strip():
                            with dev.lock:
                                dev.commands_seen.append(line.strip())
                                try:
                                    dev.count_config_line()
                                except DropConnection:
                                    # what came before the line, not the line's own end: the dropped
                                    # line never reaches the shell (it was written with its newline,
                                    # and bash sometimes ran it before the connection closed)
                                    os.write(master, out[:-1].encode())
                                    raise
                        line = ""
                    else:
                        out += ch
                        line = line[:-1] if ch in "\x7f\x08" else (line if ch == "\x03" else line + ch)
                os.write(master, out.encode())

        pump = asyncio.ensure_future(pump_input())
        waiter = asyncio.ensure_future(proc.wait())
        try:
            done, _ = await asyncio.wait({pump, waiter}, return_when=asyncio.FIRST_COMPLETED)
            if pump in done:
                exc = pump.exception()
                if exc is not None:
                    raise exc
                _kill(proc)
            status = await proc.wait()
            try:
                await asyncio.wait_for(closed.wait(), 1)
            except asyncio.TimeoutError:
                pass
            return status
        finally:
            pump.cancel()
            _kill(proc)
            loop.remove_reader(master)
            os.close(master)


def _kill(proc: asyncio.subprocess.Process) -> None:
    if proc.returncode is None:
        for sig in (signal.SIGHUP, signal.SIGKILL):
            try:
                os.killpg(proc.pid, sig)
            except (ProcessLookupError, PermissionError):
                break


def parse_sysfs(text: str) -> dict[str, str]:
    """Inverse of :meth:`HostDevice.running_config` for tests."""
    return dict(m.groups() for m in re.finditer(r"^(\S+) = (.*)$", text, re.MULTILINE))  # type: ignore[misc]
