"""Common core of the loopback device emulators: device state, faults, timers, CLI sessions.

An :class:`EmulatedDevice` owns everything that outlives one SSH connection (running
configuration, candidates, checkpoints, the pending commit-confirm timer, fault knobs,
counters).  A :class:`CliSession` is created per SSH channel and owns what a real CLI
session owns (mode, prompt, sub-mode context, multi-line input state).

Threading model: all device code runs on the fleet's asyncio loop thread.  Tests read
state from another thread, so every mutation and every public accessor holds
``device.lock`` (an ``RLock``).  Timers use ``loop.call_later`` scaled by
``spec.time_scale`` so a 5-minute commit-confirm can expire in 300 ms in a test.
"""

from __future__ import annotations

import asyncio
import copy
import dataclasses
import os
import re
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

#: netmiko pacing for the emulators, which answer at once: netmiko's "fast" preset (its fixed pauses × 0.1).
#: ``fleet.netmiko_params()`` uses it; roce-tune's own sessions get it as
#: ``ApplyOptions(timing=tests.emulators.LOOPBACK_TIMING)`` (the product's default stays conservative).
LOOPBACK_NETMIKO_TIMING: dict[str, Any] = {"fast_cli": True, "global_delay_factor": 0.1}


class DropConnection(Exception):
    """Raised by a session to make the server abort the TCP connection (fault injection)."""


@dataclass
class Faults:
    """Fault-injection knobs of one device; settable at start or at runtime.

    Attributes:
        drop_after_config_lines: abort the SSH connection right after the N-th
            configuration line has been processed (its output and prompt are never sent).
            What counts as a configuration line is platform-specific (README, "Faults").
        drop_once: clear ``drop_after_config_lines`` after it fired once, so a
            reconnect (e.g. to roll back) works.
        reject_pattern: regex (``re.search``) of commands the device rejects with its
            real-looking error ("% Invalid input", "syntax error", "Error: ...").
        lose_confirm: the commit confirmation is accepted with normal output but lost,
            so the commit-confirm timer expires and the device rolls back.
        delay_per_command_s: sleep before answering each command line (slow device).
        fail_save: saving the running configuration to startup fails with the platform's error
            (EOS ``write memory``, NX-OS ``copy running-config startup-config``, SONiC ``config save``,
            Cumulus ``nv config save`` and the auto-save of ``nv config apply``); startup is unchanged.
        drop_reconnects: after ``drop_after_config_lines`` or ``drop_after_pattern`` fired, the next N
            connections are dropped
            as soon as their first non-empty input line arrives (a flapping link: reconnects die too).
        pause_pattern: regex (``re.search``) of the command at which the device pauses, once:
            the first matching command line is processed, then its output and prompt are held
            until :meth:`EmulatedDevice.resume` (:meth:`EmulatedDevice.wait_paused` returns when
            it holds).  The host matches each call of a stub tool (``TOOL ARGS…``) instead and
            holds before the tool acts, so the pause lands inside a running script.  Lets a test
            act "mid-push" (e.g. signal the pushing process) without sleeps.
        drop_after_pattern: regex (``re.search``) of the command after which the connection is aborted,
            once: the first matching command line is processed (it takes effect on the device) and its
            output is never sent, e.g. a commit confirmation whose reply is lost.
        refuse_private_confirm: Junos: ``commit confirmed`` in ``configure private`` is refused with the
            device's ``error: commit confirmed not supported for private configuration`` and commits
            nothing, as some Junos releases/platforms do (Juniper/py-junos-eznc pull request #954);
            ``configure exclusive`` still accepts it.
        fail_db_write: SONiC: the N-th CONFIG_DB write counted from when the knob was set (a
            ``sonic-cfggen … --write-to-db`` or a ``sonic-db-cli CONFIG_DB DEL/HDEL``) fails as a lost redis
            connection does: nothing of it is written, exit status 1.
        fail_db_write_count: how many consecutive writes fail from the N-th on (a redis that stays down).
    """

    drop_after_config_lines: int | None = None
    drop_once: bool = True
    reject_pattern: str | None = None
    lose_confirm: bool = False
    delay_per_command_s: float = 0.0
    fail_save: bool = False
    drop_reconnects: int = 0
    pause_pattern: str | None = None
    drop_after_pattern: str | None = None
    refuse_private_confirm: bool = False
    fail_db_write: int | None = None
    fail_db_write_count: int = 1


def _default_username() -> str:
    return os.environ.get("ROCE_TUNE_USERNAME", "admin")


def _default_password() -> str:
    return os.environ.get("ROCE_TUNE_PASSWORD", "admin")


@dataclass
class EmulatorSpec:
    """What to start: one emulated device.

    Attributes:
        platform: one of ``eos``, ``nxos``, ``junos``, ``cumulus``, ``sonic``, ``host``.
        name: hostname shown in the prompt; also the fleet key.
        port: TCP port on 127.0.0.1; 0 lets the OS choose (read it back from the fleet).
        username/password: login credentials (defaults: env ROCE_TUNE_USERNAME /
            ROCE_TUNE_PASSWORD, else ``admin``/``admin``).
        authorized_keys: OpenSSH public-key lines (or paths to .pub files) accepted for
            public-key authentication of ``username``.
        secret: enable / sudo password; defaults to ``password``.
        time_scale: multiplies every device timer (commit confirm, commit timer).
        faults: initial fault knobs.
        initial_config: platform-specific starting configuration (CLI text for
            eos/nxos, ``set`` lines for junos, ``nv set`` lines for cumulus, a CONFIG_DB
            dict or JSON text for sonic); ``None`` gives the platform's factory config.
        options: platform-specific extras (README lists them per platform).
    """

    platform: str
    name: str
    port: int = 0
    username: str = field(default_factory=_default_username)
    password: str = field(default_factory=_default_password)
    authorized_keys: list[str] = field(default_factory=list)
    secret: str | None = None
    time_scale: float = 1.0
    faults: Faults = field(default_factory=Faults)
    initial_config: Any = None
    options: dict[str, Any] = field(default_factory=dict)


class EmulatedDevice:
    """State of one emulated device; subclassed per platform.

    Subclasses set ``platform``, ``netmiko_device_type`` and implement
    :meth:`new_session` and :meth:`running_config`.
    """

    platform: ClassVar[str] = ""
    netmiko_device_type: ClassVar[str] = ""
    #: Platforms whose SSH server also offers SFTP/SCP into the device sandbox.
    file_transfer: ClassVar[bool] = False

    def __init__(self, spec: EmulatorSpec, workdir: Path) -> None:
        self.spec = spec
        self.name = spec.name
        self.workdir = workdir
        self.sandbox = workdir / spec.name
        self.sandbox.mkdir(parents=True, exist_ok=True)
        self.lock = threading.RLock()
        self.faults = dataclasses.replace(spec.faults)
        self.loop: asyncio.AbstractEventLoop | None = None
        self.port: int = 0
        self.config_lines_seen = 0
        self.db_writes_seen = 0
        self.reconnects_to_drop = 0
        self.commands_seen: list[str] = []
        self.events: list[str] = []
        self.connections = 0
        self.checkpoints: dict[str, Any] = {}
        self._confirm_handle: asyncio.TimerHandle | None = None
        self._confirm_deadline: float | None = None
        self._confirm_restore: Callable[[], None] | None = None
        self._sessions: list[CliSession] = []
        self._pause_fired = False
        self._held = threading.Event()
        self._resume = threading.Event()

    # ----------------------------------------------------------------- public API
    @property
    def secret(self) -> str:
        return self.spec.secret if self.spec.secret is not None else self.spec.password

    def running_config(self) -> str:
        """Canonical running configuration text (no volatile headers); thread-safe."""
        raise NotImplementedError

    def set_fault(self, **knobs: Any) -> None:
        """Change fault knobs at runtime, e.g. ``set_fault(drop_after_config_lines=3)``."""
        with self.lock:
            for key, value in knobs.items():
                if not hasattr(self.faults, key):
                    raise AttributeError(f"unknown fault knob {key!r}")
                setattr(self.faults, key, value)
            if "drop_after_config_lines" in knobs:
                self.config_lines_seen = 0
            if "fail_db_write" in knobs:
                self.db_writes_seen = 0
            if "pause_pattern" in knobs:
                self._reset_pause()

    def clear_faults(self) -> None:
        """Reset all fault knobs to their defaults."""
        with self.lock:
            self.faults = Faults()
            self.config_lines_seen = 0
            self.db_writes_seen = 0
            self.resume()

    @property
    def confirm_pending(self) -> bool:
        """True while a commit-confirm / commit-timer is armed."""
        with self.lock:
            return self._confirm_handle is not None

    def new_session(self, username: str, interactive: bool) -> CliSession:
        raise NotImplementedError

    # ------------------------------------------------------------ fault helpers
    def count_config_line(self) -> None:
        """Count one configuration line; raise DropConnection when the fault fires."""
        self.config_lines_seen += 1
        limit = self.faults.drop_after_config_lines
        if limit is not None and self.config_lines_seen >= limit:
            if self.faults.drop_once:
                self.faults.drop_after_config_lines = None
            self.events.append(f"fault: connection dropped after {self.config_lines_seen} config lines")
            self.config_lines_seen = 0
            self.reconnects_to_drop = self.faults.drop_reconnects
            raise DropConnection()

    def session_opened(self) -> bool:
        """Count a new session; True when it is to be dropped at its first line (``drop_reconnects``)."""
        if self.reconnects_to_drop > 0:
            self.reconnects_to_drop -= 1
            self.events.append("fault: reconnect will be dropped at its first line")
            return True
        return False

    def take_pause(self, command: str) -> bool:
        """True (once) when ``command`` matches ``faults.pause_pattern``: the caller then awaits
        :meth:`hold` before sending the command's output. Called with ``lock`` held."""
        pattern = self.faults.pause_pattern
        if pattern and not self._pause_fired and re.search(pattern, command):
            self._pause_fired = True
            self.events.append(f"fault: paused after {command!r}")
            return True
        return False

    def take_drop(self, command: str) -> bool:
        """True (once) when ``command`` matches ``faults.drop_after_pattern``: the caller then aborts the
        connection instead of answering. Called with ``lock`` held."""
        pattern = self.faults.drop_after_pattern
        if pattern and re.search(pattern, command):
            self.faults.drop_after_pattern = None
            self.events.append(f"fault: connection dropped after {command!r}")
            self.reconnects_to_drop = self.faults.drop_reconnects
            return True
        return False

    async def hold(self) -> None:
        """Hold (on the loop, other sessions keep running) until :meth:`resume`."""
        held, resume = self._held, self._resume  # a later set_fault(pause_pattern=…) makes new ones
        held.set()
        while not resume.is_set():
            await asyncio.sleep(0.01)

    def wait_paused(self, timeout: float) -> bool:
        """Wait until the device holds at ``faults.pause_pattern``; False on timeout."""
        return self._held.wait(timeout)

    def wait_held(self, done: Future[Any], what: str, timeout_s: float = 180,
                  describe: Callable[[Any], str] = repr) -> None:
        """Wait until the device holds at its pause pattern while the run ``done`` (a future of the push)
        goes on; raise AssertionError at once if the run ended instead (its result through ``describe``)
        or after ``timeout_s`` seconds. ``what`` names the step held at in the message."""
        deadline = time.monotonic() + timeout_s
        while not self.wait_paused(0.05):
            if done.done() or time.monotonic() >= deadline:
                raise AssertionError(f"never held at {what}: "
                                     + (describe(done.result()) if done.done() else "timeout"))

    def wait_reverted_by_timer(self, timeout_s: float = 60) -> None:
        """Wait until the device's own commit-confirm timer ran out and it reverted the change; raise
        AssertionError (with the device's events) after ``timeout_s`` seconds or if it did not say so."""
        deadline = time.monotonic() + timeout_s
        while self.confirm_pending:
            if time.monotonic() >= deadline:
                raise AssertionError(self.events)
            time.sleep(0.05)
        if not any("not confirmed, rolled back" in e for e in self.events):
            raise AssertionError(self.events)

    def resume(self) -> None:
        """Release a pause (and any later one of the same pattern: it fires once)."""
        self._resume.set()

    def _reset_pause(self) -> None:
        self._resume.set()  # a session still held under the previous pattern goes on
        self._pause_fired = False
        self._held = threading.Event()
        self._resume = threading.Event()

    def rejects(self, command: str) -> bool:
        pattern = self.faults.reject_pattern
        if pattern and re.search(pattern, command):
            self.events.append(f"fault: rejected {command!r}")
            return True
        return False

    # ------------------------------------------------------------------ timers
    def scaled(self, seconds: float) -> float:
        return max(0.0, seconds * self.spec.time_scale)

    def arm_confirm(self, seconds: float, restore: Callable[[], None], label: str) -> None:
        """Arm the commit-confirm timer: after ``seconds × time_scale`` call ``restore``.

        Re-arming replaces the previous timer but keeps its restore point, as a second
        ``commit confirmed`` does on Junos.
        """
        assert self.loop is not None, "device not started"
        if self._confirm_handle is not None:
            self._confirm_handle.cancel()
            restore = self._confirm_restore or restore
        delay = self.scaled(seconds)
        self._confirm_restore = restore
        self._confirm_deadline = time.monotonic() + delay
        self._confirm_handle = self.loop.call_later(delay, self._confirm_expired, label)
        self.events.append(f"{label}: armed {seconds:g}s (scaled {delay:.3f}s)")

    def confirm(self, label: str) -> bool:
        """Confirm the pending commit. Returns False if nothing was pending.

        With the ``lose_confirm`` fault the confirmation is dropped silently and the timer
        keeps running (True is still returned so the session prints normal output).
        """
        if self._confirm_handle is None:
            return False
        if self.faults.lose_confirm:
            self.events.append(f"fault: {label} confirmation lost")
            return True
        self._confirm_handle.cancel()
        self._confirm_handle = None
        self._confirm_restore = None
        self._confirm_deadline = None
        self.events.append(f"{label}: confirmed")
        return True

    def revert_pending(self, label: str) -> bool:
        """Revert a pending confirm immediately (abort / --confirm-no)."""
        if self._confirm_handle is None:
            return False
        self._confirm_handle.cancel()
        self._confirm_expired(label)
        return True

    def confirm_seconds_left(self) -> float | None:
        if self._confirm_deadline is None:
            return None
        return max(0.0, (self._confirm_deadline - time.monotonic()) / max(self.spec.time_scale, 1e-9))

    def _confirm_expired(self, label: str) -> None:
        with self.lock:
            restore = self._confirm_restore
            self._confirm_handle = None
            self._confirm_restore = None
            self._confirm_deadline = None
            if restore is not None:
                restore()
            self.events.append(f"{label}: not confirmed, rolled back")

    def close(self) -> None:
        with self.lock:
            if self._confirm_handle is not None:
                self._confirm_handle.cancel()
                self._confirm_handle = None

    # ------------------------------------------------------------------ misc
    @staticmethod
    def clone(obj: Any) -> Any:
        return copy.deepcopy(obj)


class CliSession:
    """One interactive (or exec) CLI session on a device.

    The server feeds complete input lines to :meth:`handle_line` and writes back the
    returned text followed by :meth:`prompt`.  Output uses ``\\n``; the server converts
    to ``\\r\\n`` on PTY sessions.
    """

    def __init__(self, device: EmulatedDevice, username: str, interactive: bool) -> None:
        self.device = device
        self.username = username
        self.interactive = interactive
        self.echo = True
        self.closed = False
        self.exit_status = 0
        self.doomed = False  # drop the connection at the first non-empty line (Faults.drop_reconnects)

    def banner(self) -> str:
        return ""

    def prompt(self) -> str:
        raise NotImplementedError

    def handle_line(self, line: str) -> str:
        """Process one input line (called with ``device.lock`` held); may raise
        :class:`DropConnection`."""
        raise NotImplementedError

    def handle_ctrl_c(self) -> str:
        return "^C\n"

    def handle_ctrl_d(self) -> str:
        """Ctrl-D on an empty line: default is to log out."""
        self.closed = True
        return ""

    def on_disconnect(self) -> None:
        """Called when the SSH channel closes (normally or by a dropped connection)."""

    def run_exec(self, command: str) -> tuple[str, int]:
        """Run one non-interactive command (``ssh host cmd``)."""
        out = ""
        for line in command.split("\n"):
            out += self.handle_line(line)
        return out, self.exit_status


def apply_pipes(output: str, pipes: list[str]) -> str:
    """Apply Cisco/Arista-style output filters (include/exclude/begin/section/count).

    Args:
        output: command output, ``\\n`` separated.
        pipes: filter strings after ``|`` e.g. ``["include mtu"]``.
    """
    lines = output.split("\n")
    for pipe in pipes:
        word, _, arg = pipe.strip().partition(" ")
        arg = arg.strip()
        if word in ("include", "i", "inc", "grep"):
            lines = [ln for ln in lines if re.search(arg, ln)]
        elif word in ("exclude", "e", "ex"):
            lines = [ln for ln in lines if not re.search(arg, ln)]
        elif word in ("begin", "b"):
            for i, ln in enumerate(lines):
                if re.search(arg, ln):
                    lines = lines[i:]
                    break
            else:
                lines = []
        elif word in ("section", "sec"):
            keep: list[str] = []
            in_sec = False
            for ln in lines:
                top = not ln.startswith(" ")
                if top:
                    in_sec = bool(re.search(arg, ln))
                if in_sec:
                    keep.append(ln)
            lines = keep
        elif word == "count":
            lines = [f"Count: {len([ln for ln in lines if ln.strip()])} lines"]
        elif word in ("no-more", "json", "display", "last"):
            continue
    text = "\n".join(lines)
    return text
