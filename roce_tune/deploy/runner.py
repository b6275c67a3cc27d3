"""``roce-tune apply``: select devices, diff, and push concurrently with canaries and maintenance order.

Results are objects (Nornir style), never prints: :class:`DeviceResult` per device with ``state``,
``changed``, ``diff``, ``disruptive`` reasons, ``error`` and ``rolled_back``. One device's failure
never stops or corrupts another's push (each runs in its own session and thread).

Stopping: a :class:`StopRequest` (set by SIGINT/SIGTERM inside :func:`stop_on_signals`) starts no new
device; a device mid-push stops at its next command boundary and rolls back (see ``drivers``), one past
its final command finishes; every device gets a result (``not-started``, ``rolled-back``, ``unknown``
…) and :func:`stop_summary` says which. A second signal aborts at once, after :meth:`StopRequest.abort_report`
said what each device still in flight is left in and how to put it back.
"""

from __future__ import annotations

import fnmatch
import itertools
import json
import os
import queue
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from roce_tune.deploy.connect import describe_connect_error
from roce_tune.deploy.credentials import (
    CredentialError,
    Credentials,
    RedactingSessionLog,
    Redactor,
    open_private,
    private_dir,
    resolve_credentials,
    write_private,
)
from roce_tune.deploy.drivers import (
    CONFIRM_CHECK,
    NETMIKO_TYPES,
    PUSH_METHODS,
    Driver,
    Interrupted,
    PushError,
    PushOptions,
    RollbackIncomplete,
    RollbackNeeded,
    compute_change,
    confirm_window_note,
    left_as_is,
)
from roce_tune.plan import HostPlan, Plan, SwitchPlan
from roce_tune.platforms import HOST_PLATFORM, get_platform
from roce_tune.platforms.contract import CHANGE_SENT

#: desired-config file of each platform inside ``switches/`` (each platform's ``PUSH.desired_file``)
DESIRED_FILE = {name: m.desired_file for name, m in PUSH_METHODS.items() if m.desired_file is not None}


@dataclass
class Target:
    """One device to act on: identity, where to connect, what it should look like."""

    name: str
    kind: str  # switch | host
    platform: str
    role: str
    host: str | None
    port: int | None
    credentials: dict[str, str | None]
    desired: str
    managed_ports: set[str] = field(default_factory=set)
    #: the plan's speed of each switch port (Mb/s), for the platform's preflight: the rendered file need
    #: not state it (a headroom profile's name may carry none)
    port_speeds_mbps: dict[str, int] = field(default_factory=dict)

    @classmethod
    def of_switch(cls, sw: SwitchPlan, desired: str = "", managed_ports: set[str] | None = None) -> Target:
        """The target of a plan's switch (``desired``: its rendered config; empty to read only)."""
        return cls(sw.name, "switch", sw.platform, sw.role, sw.mgmt_host, sw.mgmt_port, sw.credentials,
                   desired, managed_ports or set(), {p.name: p.speed_gbps * 1000 for p in sw.ports})

    @classmethod
    def of_host(cls, h: HostPlan, desired: str = "") -> Target:
        """The target of a plan's host (``desired``: its host script; empty to read only)."""
        return cls(h.name, "host", HOST_PLATFORM, "host", h.mgmt_host, h.mgmt_port, h.credentials, desired)


@dataclass
class DeviceResult:
    """Outcome for one device.

    ``state``: ``no-change``, ``would-change`` (dry run), ``pushed``, ``failed`` (rolled back),
    ``blocked-disruptive`` (needs ``--allow-disruptive``), ``skipped`` (canary failed / not selected);
    after a stop request (SIGINT/SIGTERM): ``not-started`` (nothing changed on it: not started, or stopped
    mid-push before the push sent any change), ``rolled-back``
    (stopped mid-push and put back), ``unknown`` (stopped mid-push and its rollback did not complete:
    ``error`` says what it is left in and where its restore point is).
    With a log directory, each switch's running configuration as found is kept in
    ``<log dir>/<name>.<run tag>.before.txt`` (one per run: a manual restore point) and its session log in
    ``<name>.log``.
    ``rollback_point``: the checkpoint the push took on the device and the command that returns the device to
    it (None where the platform takes none, or before it was taken); ``pruned``: roce-tune's older
    checkpoints the push deleted (it keeps ``PushOptions.keep_checkpoints`` of its own, never an operator's);
    ``warnings``: housekeeping that failed after the change was final (a checkpoint or file not deleted),
    each naming the device and the command: they never make the push fail.
    """

    name: str
    platform: str
    state: str
    changed: bool = False
    diff: list[str] = field(default_factory=list)
    disruptive: list[str] = field(default_factory=list)
    error: str | None = None
    rolled_back: bool = False
    seconds: float = 0.0
    log_file: str | None = None
    rollback_point: str | None = None
    pruned: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    @property
    def failed(self) -> bool:
        """True for states that make the run exit non-zero."""
        return self.state in ("failed", "blocked-disruptive", "not-started", "rolled-back", "unknown")


@dataclass(frozen=True)
class SessionTiming:
    """netmiko's pacing of one SSH session: ``fast_cli`` and ``global_delay_factor``.

    netmiko pauses for fixed times while it prepares a session, finds the prompt and clears the buffer,
    each pause × ``global_delay_factor``; ``fast_cli=True`` takes the smaller of a call's own delay factor
    and the global one (source: netmiko ``BaseConnection.__init__`` and ``select_delay_factor``,
    https://github.com/ktbyers/netmiko/blob/develop/netmiko/base_connection.py).

    The default is netmiko's conservative pacing (``fast_cli=False``, factor 1.0): a switch's control
    plane can take hundreds of milliseconds to echo a prompt while busy, and a push that reads too early
    misreads the device's answer. ``SessionTiming(fast_cli=True, global_delay_factor=0.1)`` (netmiko's
    "fast" preset) suits devices that answer at once, such as the test suite's loopback emulators. Read
    and connect timeouts (``PushOptions.read_timeout_s``, ``ApplyOptions.conn_timeout_s``) are separate.
    """

    fast_cli: bool = False
    global_delay_factor: float = 1.0

    def netmiko_kwargs(self) -> dict[str, Any]:
        """The ``ConnectHandler`` keyword arguments: ``{"fast_cli": ..., "global_delay_factor": ...}``."""
        return {"fast_cli": self.fast_cli, "global_delay_factor": self.global_delay_factor}


@dataclass
class ApplyOptions:
    """Options of one apply run (see ``roce-tune apply --help``)."""

    dry_run: bool = False
    limit: list[str] = field(default_factory=list)
    concurrency: int = 8
    canary: int = 0
    allow_disruptive: bool = False
    insecure_skip_host_key_check: bool = False
    known_hosts: str | None = None
    log_dir: Path | None = None
    secrets_file: str | None = None
    push: PushOptions = field(default_factory=PushOptions)
    conn_timeout_s: float = 15.0
    device_timeout_s: float = 900.0
    timing: SessionTiming = field(default_factory=SessionTiming)


def _restore_point(t: Target, opts: ApplyOptions) -> str:
    """The local restore point of ``t`` for this run (running config as found, or a host's restore script)."""
    name = f"{t.name}.{opts.push.tag}.before.{'sh' if t.kind == 'host' else 'txt'}"
    return str(opts.log_dir / name) if opts.log_dir is not None else f"{name} (no log directory: not kept)"


@dataclass
class _InFlight:
    target: Target
    opts: ApplyOptions
    driver: Driver | None = None


class StopRequest:
    """A request to stop an apply run (normally from :func:`stop_on_signals`); thread-safe.

    After :meth:`request`: no new device starts; a device mid-push stops at its next command boundary and
    rolls back (the rollback is never cut short); one past its final command finishes. ``signal`` is the
    first request's name (``SIGINT``), ``exit_status`` 128 + its number. Running devices are tracked
    (:meth:`track`) so that :meth:`abort_report` can say what each is left in.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.signal: str | None = None
        self.signum: int | None = None
        self.count = 0
        self._in_flight: dict[str, _InFlight] = {}

    def request(self, signum: int) -> int:
        """Record a stop request by signal ``signum``; returns how many requests there were so far."""
        with self._lock:
            self.count += 1
            if self.signal is None:
                self.signum, self.signal = signum, signal.Signals(signum).name
            return self.count

    def __call__(self) -> str | None:
        """The requested stop's name, or None (a driver's ``should_stop``)."""
        return self.signal

    @property
    def exit_status(self) -> int:
        """128 + the first signal's number (130 for SIGINT, 143 for SIGTERM); 0 without a request."""
        return 128 + self.signum if self.signum is not None else 0

    def track(self, t: Target, opts: ApplyOptions, driver: Driver | None = None) -> None:
        """Note that ``t`` runs (with ``driver`` once connected)."""
        with self._lock:
            self._in_flight[t.name] = _InFlight(t, opts, driver)

    def untrack(self, name: str) -> None:
        """Forget device ``name`` (it finished); unknown names are ignored."""
        with self._lock:
            self._in_flight.pop(name, None)

    def in_flight(self) -> list[str]:
        """Names of the devices running now."""
        with self._lock:
            return sorted(self._in_flight)

    def abort_report(self) -> list[str]:
        """One line per device still running: what it is left in, how to put it back, its restore point."""
        with self._lock:
            entries = sorted(self._in_flight.values(), key=lambda e: e.target.name)
        lines = []
        for e in entries:
            t, drv = e.target, e.driver
            state = left_as_is(t.platform, drv.phase, drv.progress, e.opts.push) if drv is not None else \
                "nothing changed (it was still connecting)"
            lines.append(f"{t.name} ({t.platform}, {t.host}:{t.port or 22}): {state}; restore point: "
                         f"{_restore_point(t, e.opts)}")
        return lines


def _write_fd2(text: str) -> None:
    """Write to stderr from a signal handler: a raw write, no Python buffer lock to re-enter."""
    data = text.encode("utf-8", "replace")
    while data:
        try:
            data = data[os.write(2, data):]
        except OSError:
            return


@contextmanager
def stop_on_signals(stop: StopRequest, write: Callable[[str], None] = _write_fd2) -> Iterator[StopRequest]:
    """Inside: the first SIGINT/SIGTERM requests a stop of ``stop`` (and says so); a second one writes what
    each device still running is left in (:meth:`StopRequest.abort_report`) and exits the process at once
    with ``stop.exit_status``. The previous handlers are restored on leaving. Main thread only."""

    def handler(signum: int, _frame: object) -> None:
        n = stop.request(signum)
        name = signal.Signals(signum).name
        running = stop.in_flight()
        if n == 1:
            write(f"\n{name} received: stopping. No new device starts; "
                  + (f"{len(running)} device(s) in flight ({', '.join(running)}) finish or roll back. "
                     if running else "") + f"Send {name} again to abort at once (devices are left as they "
                  "are).\n")
            return
        report = stop.abort_report()
        write(f"\n{name} received again: aborting now. "
              + ("Left as they are:\n" + "".join(f"  {line}\n" for line in report) if report
                 else "No device was in flight.\n"))
        os._exit(stop.exit_status)

    previous = {s: signal.signal(s, handler) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield stop
    finally:
        for s, h in previous.items():
            signal.signal(s, h)


def stop_summary(results: list[DeviceResult], stop: StopRequest) -> list[str]:
    """After a stopped run: which devices were pushed, rolled back, not started, left unknown (lines)."""
    if stop.signal is None:
        return []
    labels = [("pushed", "pushed"), ("rolled-back", "rolled back"), ("not-started", "nothing changed"),
              ("unknown", "UNKNOWN STATE (check by hand)"), ("failed", "failed"), ("no-change", "no change"),
              ("would-change", "would change"), ("blocked-disruptive", "blocked (disruptive)"),
              ("skipped", "skipped")]
    lines = [(f"interrupted by {stop.signal}: no device was started after it; devices in flight finished or "
              "were rolled back")]
    for state, label in labels:
        names = [r.name for r in results if r.state == state]
        if names:
            lines.append(f"  {label}: {', '.join(names)}")
    lines += [f"    {r.name}: {r.error}" for r in results if r.state == "unknown"]
    return lines


def targets_from_files(plan: Plan, files: Mapping[str, str]) -> list[Target]:
    """Build targets from a plan and its rendered files (``switches/…``, ``hosts/…``).

    Raises:
        KeyError: a switch's desired file is missing from ``files``.
    """
    out = []
    for sw in plan.switches:
        rel = "switches/" + DESIRED_FILE[sw.platform].format(name=sw.name)
        if rel not in files:
            continue  # not rendered (--platform-only)
        out.append(Target.of_switch(sw, files[rel], {p.name for p in sw.ports}))
    host_script = get_platform(HOST_PLATFORM).host_script
    for h in plan.hosts:
        script = host_script(files, h.name)  # its data file and the shared host script, as one script
        if script is not None:
            out.append(Target.of_host(h, script))
    return out


def confirm_window_notes(targets: list[Target], opts: ApplyOptions) -> list[str]:
    """One line per platform among the selected ``targets`` (``opts.limit``) whose commit-confirm cannot take
    ``opts.push.confirm_s`` (seconds) as given: what it gets instead (e.g. Junos's whole minutes), from each
    platform's ``PushMethod.confirm_window`` (:func:`confirm_window_note`), in target order; [] if none.

    Raises:
        KeyError: a target names an unknown platform.
    """
    notes: list[str] = []
    for t in select(targets, opts.limit):
        note = confirm_window_note(t.platform, opts.push.confirm_s)
        if note and note not in notes:
            notes.append(note)
    return notes


def _matches(t: Target, term: str) -> bool:
    """``t`` is selected by one ``--limit`` term: a name or glob, ``role:ROLE`` or ``platform:NAME``."""
    if term.startswith("role:"):
        return t.role == term[5:]
    if term.startswith("platform:"):
        return t.platform == term[9:]
    return fnmatch.fnmatchcase(t.name, term)


def select(targets: list[Target], limit: list[str]) -> list[Target]:
    """Keep targets matching any ``--limit`` term: a name or glob, ``role:ROLE`` or ``platform:NAME``."""
    if not limit:
        return targets
    return [t for t in targets if any(_matches(t, term) for term in limit)]


def unmatched_limits(targets: list[Target], limit: list[str]) -> list[str]:
    """The ``--limit`` terms that select no device of ``targets``, in the order given: a mistyped name
    among several would otherwise leave its device out of the run without a word."""
    return [term for term in limit if not any(_matches(t, term) for t in targets)]


def connect(t: Target, opts: ApplyOptions, log_path: Path | None,
            on_log_error: Callable[[str], None] | None = None) -> tuple[Any, Redactor]:
    """Open an SSH session to ``t`` (netmiko, ``opts.timing`` pacing, host keys per ``opts.known_hosts``,
    session log at ``log_path`` with secrets masked). Used by apply, verify and ``audit --live``.
    ``on_log_error("<file>: <OS error>")``: the session log could not be written (it stops; the session
    goes on, see :class:`~roce_tune.deploy.credentials.RedactingSessionLog`).

    Returns:
        (netmiko connection, its secret redactor); netmiko is untyped, so the connection is Any.

    Raises:
        PushError: stage ``connect``, with :func:`describe_connect_error`'s message (unknown or mismatched
            host key, authentication, TCP, DNS); or a credential that cannot be resolved.
    """
    from netmiko import ConnectHandler

    creds = resolve_credentials(t.name, t.credentials, secrets_file=opts.secrets_file)
    redact = Redactor(creds.secrets(), t.platform)
    try:
        conn = ConnectHandler(**netmiko_params(t, opts, creds, log_path, redact, on_log_error))
    except PushError:
        raise
    except Exception as exc:  # noqa: BLE001 — every connect failure is reported the same way
        raise PushError("connect", describe_connect_error(t.name, t.host, t.port or 22, exc,
                                                          opts.known_hosts)) from None
    return conn, redact


def netmiko_params(t: Target, opts: ApplyOptions, creds: Credentials, log_path: Path | None = None,
                   redact: Redactor | None = None,
                   on_log_error: Callable[[str], None] | None = None) -> dict[str, Any]:
    """The ``netmiko.ConnectHandler`` arguments for ``t``: address, credentials (``creds``, resolved by
    :func:`~roce_tune.deploy.credentials.resolve_credentials`), host-key policy, ``opts.timing`` and a
    session log at ``log_path`` that never records the password.

    Raises:
        PushError: ``opts.known_hosts`` names a file that does not exist (netmiko would skip it silently).
    """

    params: dict[str, Any] = dict(
        device_type=NETMIKO_TYPES[t.platform], host=t.host, port=t.port or 22, username=creds.username,
        password=creds.password or "", conn_timeout=opts.conn_timeout_s, **opts.timing.netmiko_kwargs(),
        ssh_strict=not opts.insecure_skip_host_key_check, system_host_keys=True,
        keepalive=opts.push.keepalive_s)
    if creds.key_file:
        params.update(use_keys=True, key_file=creds.key_file)
    else:
        params.update(use_keys=False, allow_agent=not creds.password)
    if opts.known_hosts:
        if not Path(opts.known_hosts).expanduser().is_file():  # netmiko would silently skip a missing file
            raise PushError("connect", f"{t.name}: known_hosts file {opts.known_hosts} does not exist")
        params.update(alt_host_keys=True, alt_key_file=opts.known_hosts)
    if PUSH_METHODS[t.platform].enable_secret:
        params["secret"] = creds.password or ""
    if log_path is not None:  # 0600, masked with the platform's secret patterns before it is written
        params["session_log"] = RedactingSessionLog(
            str(log_path), redact or Redactor(creds.secrets(), t.platform), on_log_error)
    return params


class _Reported(Exception):
    """Internal: the failure is already recorded in the result."""


def close(conn: Any) -> None:
    """Disconnect a netmiko session if there is one; a dead session cannot fail the run."""
    if conn is not None:
        try:
            conn.disconnect()
        except Exception:  # noqa: BLE001
            pass


def _recover(t: Target, opts: ApplyOptions, log_path: Path | None, rb: RollbackNeeded, notes: list[str],
             redact: Callable[[str], str], log_errors: list[str]) -> bool:
    """Reconnect and roll back a push whose session died, again and again (backing off 1, 2, 4 … 10 s)
    while sessions keep dropping, for ``opts.push.rollback_retry_s`` (at least 3 attempts).
    Returns True when the rollback ran."""
    deadline = time.monotonic() + opts.push.rollback_retry_s
    for attempt in itertools.count():
        conn = None
        try:
            conn, _ = connect(t, opts, log_path, log_errors.append)
            Driver(t.platform, conn, opts.push, lambda s: notes.append(redact(s))).rollback(rb.progress)
            return True
        except RollbackIncomplete:
            raise  # it ran; another attempt cannot read what was not readable before the change
        except Exception as exc:  # noqa: BLE001
            notes.append(redact(f"# rollback attempt {attempt + 1} failed: {type(exc).__name__}: {exc}"))
        finally:
            close(conn)
        pause = min(10.0, 2.0 ** attempt)
        if attempt >= 2 and time.monotonic() + pause > deadline:
            return False
        time.sleep(pause)
    return False


#: what a failed device's error ends with when its push failed before it sent any change
_NOTHING_SENT = " (nothing changed: the push failed before it sent any change)"


def _push_or_recover(push: Callable[[], None], t: Target, opts: ApplyOptions, log_path: Path | None,
                     notes: list[str], redact: Callable[[str], str], res: DeviceResult,
                     log_errors: list[str]) -> None:
    """Run ``push``. When it failed and its own rollback did not complete (session died, restore
    failed), retry the rollback on new sessions, record the outcome in ``res`` and raise _Reported."""
    try:
        push()
    except RollbackNeeded as rb:
        res.error = redact(f"{rb} (the rollback on that session did not complete)")
        try:
            recovered = _recover(t, opts, log_path, rb, notes, redact, log_errors)
        except RollbackIncomplete as inc:
            res.error = redact(f"{rb}; on a new session: {inc}")
            raise _Reported() from None
        outcome = rb.progress.get("rollback_outcome")
        # a push that failed before it sent any change changed nothing: the new session only cleaned up
        res.rolled_back = recovered and bool(rb.progress.get(CHANGE_SENT))
        if recovered and not res.rolled_back:
            res.error += _NOTHING_SENT
        elif recovered:
            res.error += f" (on a new session: {outcome})" if outcome else " (rolled back on a new session)"
        else:
            res.error += (f" — ROLLBACK FAILED: check the {t.kind} by hand; "
                          f"{left_as_is(t.platform, 'rollback-failed', rb.progress, opts.push)}")
        if isinstance(rb.cause, Interrupted):
            res.state = "unknown" if not recovered else "rolled-back" if res.rolled_back else "not-started"
            if not recovered:
                res.error += (f"; left: {left_as_is(t.platform, 'push', rb.progress, opts.push)}; restore "
                              f"point: {_restore_point(t, opts)}")
        raise _Reported() from None


def _not_started(t: Target, stop: StopRequest, before: str = "before it started") -> DeviceResult:
    return DeviceResult(t.name, t.platform, "not-started",
                        error=f"{stop.signal} received {before}; nothing changed")


def _keep_restore_point(t: Target, opts: ApplyOptions, text: str, redact: Callable[[str], str]) -> None:
    """Write a host's restore script locally as ``<log dir>/<host>.<tag>.before.sh`` (a manual restore point,
    like the switches' ``.before.txt``)."""
    if opts.log_dir is not None and text.strip():
        write_private(opts.log_dir / f"{t.name}.{opts.push.tag}.before.sh", redact(text).rstrip("\n") + "\n")


def run_one(t: Target, opts: ApplyOptions, allow_push: bool, allow_disruptive: bool = False,
            stop: StopRequest | None = None) -> DeviceResult:
    """Diff (and unless dry run / blocked, push) one device. Never raises.

    A disruptive change is pushed only when ``allow_disruptive`` (the caller runs those one at a time).
    With ``stop`` requested before the push begins, nothing is pushed (``not-started``); requested
    during the push, the push stops at its next command and rolls back (``rolled-back``, or ``unknown``
    when the rollback did not complete).
    """
    stop = stop if stop is not None else StopRequest()
    stop.track(t, opts)
    try:
        return _run_one(t, opts, allow_push, allow_disruptive, stop)
    finally:
        stop.untrack(t.name)


def _held_back(t: Target, res: DeviceResult, opts: ApplyOptions, allow_push: bool, stop: StopRequest,
               blocked: str | None = None) -> bool:
    """Set ``res.state`` when the device's change is not pushed — nothing to change, a dry run or a pass that
    does not push, ``blocked`` (why a disruptive change waits for --allow-disruptive), a stop requested —
    and return True; False when it is to be pushed."""
    if not res.changed:
        res.state = "no-change"
    elif opts.dry_run or not allow_push:
        res.state = "would-change"
    elif blocked:
        res.state, res.error = "blocked-disruptive", blocked
    elif stop.signal:
        res.state, res.error = "not-started", _not_started(t, stop, "before its push").error
    else:
        return False
    return True


_Push = Callable[[Callable[[], None]], None]


def _update_host(t: Target, drv: Driver, res: DeviceResult, opts: ApplyOptions, allow_push: bool,
                 stop: StopRequest, push: _Push) -> None:
    """A host: its script's check mode says what differs; then the script runs (through ``push``).

    Raises:
        PushError: ``--check`` exited other than 0 (as planned) or 1 (MISMATCH lines): it could not read
            the host (a NIC tool missing, another run holding the lock, data and shared script of different
            versions); stage ``read``, nothing was changed. As ``tasks/push_host.yml`` fails such a host.
    """
    rc, out = drv.run_host_script(t.desired, check_only=True)
    if rc not in (0, 1):
        tail = [ln.strip() for ln in out.splitlines() if ln.strip() and "ROCE_TUNE_RC=" not in ln][-3:]
        raise PushError("read", f"host script --check exited {rc}: " + " | ".join(tail))
    res.diff = [ln for ln in out.splitlines() if "MISMATCH" in ln or ln.startswith(("-", "+"))]
    res.changed = rc != 0
    if not _held_back(t, res, opts, allow_push, stop):
        push(lambda: drv.push_host(t.desired))
        res.state = "pushed"


def _update_switch(t: Target, drv: Driver, res: DeviceResult, opts: ApplyOptions, allow_push: bool,
                   allow_disruptive: bool, stop: StopRequest, redact: Callable[[str], str],
                   push: _Push) -> None:
    """A switch: read the running config (kept as a restore point), preflight, diff; then push the change."""
    running = drv.read_running()
    if opts.log_dir is not None:  # a manual restore point: the config as found, before any change
        point = opts.log_dir / f"{t.name}.{opts.push.tag}.before.txt"
        try:
            write_private(point, redact(running))
        except OSError as exc:  # no push without its restore point
            raise PushError("read", f"cannot keep the restore point {point}: {exc.strerror or exc}; "
                            "nothing changed") from None
    refused = drv.method.refusal(running, t.desired, drv.cmd, t.port_speeds_mbps)
    if refused:  # a contradiction the device would only resolve at boot: change nothing, dry run too
        raise PushError("preflight", refused)
    change = compute_change(t.platform, running, t.desired, t.managed_ports)
    res.diff, res.disruptive, res.changed = change.diff, change.disruptive, not change.empty
    if not _held_back(t, res, opts, allow_push, stop, change.held_back(allow_disruptive)):
        push(lambda: drv.push(change, t.desired, t.managed_ports))
        res.state = "pushed"


def _session_log(t: Target, opts: ApplyOptions, res: DeviceResult) -> Path | None:
    """``<log dir>/<device>.log`` (the directory made private: logs and restore points hold device
    configurations), recorded in ``res``; None without a log directory."""
    if opts.log_dir is None:
        return None
    private_dir(opts.log_dir)  # 0700: session logs and restore points hold device configurations
    log_path = opts.log_dir / f"{t.name}.log"
    res.log_file = str(log_path)
    return log_path


def _write_session_log(log_path: Path | None, notes: list[str], res: DeviceResult,
                       log_errors: list[str]) -> None:
    """The session's notes and the device's result line; a log that could not be written (here or by a
    session, ``log_errors``) is a warning in ``res``, never a failure: the device's outcome stands."""
    if log_path is not None and not log_errors:
        try:
            with open_private(log_path) as fh:
                fh.write("\n".join(notes) + "\n")
                fh.write(f"# result: {res.state}" + (f" — {res.error}" if res.error else "") + "\n")
        except OSError as exc:
            log_errors.append(f"{log_path}: {exc.strerror or exc}")
    if log_errors:
        res.warnings.append(f"session log incomplete: writing {log_errors[0]}; the result above is what the "
                            "device did (it was not left mid-change by the log)")


def _outcome(drv: Driver | None, default: str | None = None) -> str | None:
    """What the platform's rollback recorded it did (``progress["rollback_outcome"]``, e.g. "already reverted
    by the device"), else ``default``."""
    outcome = drv.progress.get("rollback_outcome") if drv is not None else None
    return str(outcome) if outcome else default


def _pushed_nothing(drv: Driver | None) -> bool:
    """The push ran and failed before it sent any change (:meth:`Driver.change_sent`): the device is as it
    was and nothing was rolled back (a refused ``configure private``, a session lost after a checkpoint)."""
    return drv is not None and drv.phase == "rollback" and not drv.change_sent()


def _say_rolled_back(res: DeviceResult, drv: Driver | None) -> None:
    """A failed device: append what happened to it — what the rollback did (or "rolled back") when it was
    put back, "nothing changed" when the push failed before it sent any change."""
    if res.state != "failed":
        return
    if not res.rolled_back:
        if _pushed_nothing(drv) and "nothing changed" not in (res.error or ""):
            res.error = (res.error or "") + _NOTHING_SENT
        return
    outcome = _outcome(drv)
    if outcome:
        res.error = (res.error or "") + f" ({outcome})"
    elif "rolled back" not in (res.error or ""):
        res.error = (res.error or "") + " (rolled back)"


def _say_interrupted(res: DeviceResult, drv: Driver | None, stopped: str) -> None:
    """A device stopped mid-push by a signal whose rollback completed: ``rolled-back`` once the push had sent
    a change (:meth:`Driver.change_sent`), else ``not-started`` with "nothing changed" (as a failed push
    that sent no change says), so that the stop summary lists it with the devices nothing changed on."""
    if _pushed_nothing(drv):
        res.state, res.rolled_back = "not-started", False
        outcome = _outcome(drv)
        res.error = f"{stopped}; nothing changed: the push was stopped before it sent any change" + (
            f" ({outcome})" if outcome else "")
    else:
        res.state, res.rolled_back = "rolled-back", True
        res.error = f"{stopped}; {_outcome(drv, 'rolled back')}"


def _housekeeping(res: DeviceResult, drv: Driver | None, redact: Callable[[str], str]) -> None:
    """Copy the push's rollback point, pruned checkpoints and warnings into ``res``; a rollback point only
    for a device the push left changed (after a rollback, the checkpoint is the state it is in now)."""
    if drv is None:
        return
    point = drv.progress.get("rollback_point")
    res.rollback_point = redact(str(point)) if point and res.state == "pushed" else None
    res.pruned = [str(n) for n in drv.progress.get("pruned", [])]
    res.warnings = [redact(w) for w in drv.warnings]


def _run_one(t: Target, opts: ApplyOptions, allow_push: bool, allow_disruptive: bool,
             stop: StopRequest) -> DeviceResult:
    t0 = time.monotonic()
    res = DeviceResult(t.name, t.platform, "failed")
    try:
        log_path = _session_log(t, opts, res)
    except OSError as exc:
        res.error = (f"log directory {opts.log_dir}: {exc.strerror or exc}; nothing changed: the device was "
                     "not contacted")
        return res
    notes: list[str] = []
    log_errors: list[str] = []
    conn = None
    redact: Callable[[str], str] = lambda s: s  # noqa: E731
    drv: Driver | None = None  # its progress holds the rollback_outcome, when the rollback recorded one
    try:
        if not t.host:
            raise PushError("connect", "no management address in the inventory")
        conn, redact = connect(t, opts, log_path, log_errors.append)
        drv = Driver(t.platform, conn, opts.push, lambda s: notes.append(redact(s)), should_stop=stop,
                     on_restore_point=lambda text: _keep_restore_point(t, opts, text, redact), device=t.name)
        stop.track(t, opts, drv)

        def push(fn: Callable[[], None]) -> None:
            _push_or_recover(fn, t, opts, log_path, notes, redact, res, log_errors)
        if t.kind == "host":
            _update_host(t, drv, res, opts, allow_push, stop, push)
        else:
            _update_switch(t, drv, res, opts, allow_push, allow_disruptive, stop, redact, push)
    except _Reported:
        pass
    except Interrupted as exc:  # stopped mid-push; the push's own rollback completed
        _say_interrupted(res, drv, redact(str(exc)))
    except PushError as exc:
        res.error = redact(str(exc))
        res.rolled_back = not _pushed_nothing(drv) and exc.stage not in ("connect", "read", "preflight",
                                                                         "checkpoint", "rollback", "save")
    except CredentialError as exc:
        res.error = f"connect: {exc}"
    except Exception as exc:  # noqa: BLE001 — one device's failure must not stop the others
        res.error = redact(f"{type(exc).__name__}: {exc}".strip())
        # rolled back only when the push failed and its own rollback ran (Driver._guarded re-raises then);
        # a failure before the push changed nothing, one after it (the save) leaves the change in place
        res.rolled_back = drv is not None and drv.phase == "rollback" and not _pushed_nothing(drv)
    finally:
        close(conn)
        _housekeeping(res, drv, redact)
        _write_session_log(log_path, notes, res, log_errors)
    _say_rolled_back(res, drv)
    res.seconds = round(time.monotonic() - t0, 3)
    return res


def _timeout_message(t: Target, opts: ApplyOptions) -> str:
    """What a device past ``opts.device_timeout_s`` is left in, per platform (a dry run: as it was)."""
    head = f"timed out after {opts.device_timeout_s:.0f} s"
    if opts.dry_run:  # a dry run only reads: no commit to revert, no half-way push
        return f"{head} in a dry run (reading it); nothing was changed on it"
    if t.platform in CONFIRM_CHECK:
        return f"{head}; an unconfirmed commit reverts on the device's own commit-confirm timer"
    restore = f"{t.name}.{opts.push.tag}.before.{'sh' if t.kind == 'host' else 'txt'}"
    where = f" in {opts.log_dir}" if opts.log_dir is not None else ""
    return (f"{head}; {t.platform} has no commit-confirm, so nothing reverts by itself: the push may have "
            f"completed or stopped half-way. Check the {t.kind}; its restore point is {restore}{where}")


def _reporter(on_result: Callable[[DeviceResult], None] | None,
              opts: ApplyOptions) -> Callable[[DeviceResult], None] | None:
    """``on_result`` made safe for the fan-out: a reporting error never stops other devices (it is
    written to stderr), and with ``--allow-disruptive`` a device's interim ``blocked-disruptive`` is not
    reported (it is pushed in the maintenance pass and reported once, then)."""
    if on_result is None:
        return None
    cb = on_result

    def report(r: DeviceResult) -> None:
        if r.state == "blocked-disruptive" and opts.allow_disruptive and not opts.dry_run:
            return
        try:
            cb(r)
        except Exception as exc:  # noqa: BLE001
            sys.stderr.write(f"roce-tune: could not report {r.name} ({r.state}): {type(exc).__name__}: "
                             f"{exc}\n")

    return report


class _Fanout:
    """The passes of :func:`apply_targets` over one selection, with every device's result so far."""

    def __init__(self, opts: ApplyOptions, stop: StopRequest,
                 on_result: Callable[[DeviceResult], None] | None) -> None:
        self.opts, self.stop, self.on_result = opts, stop, on_result
        self.results: dict[str, DeviceResult] = {}

    def report(self, r: DeviceResult) -> None:
        """Record ``r`` (replacing an earlier result of the device) and report it."""
        self.results[r.name] = r
        if self.on_result:
            self.on_result(r)

    def not_started(self, group: list[Target]) -> None:
        """``not-started`` for every device of ``group`` (a stop was requested)."""
        for t in group:
            prev = self.results.get(t.name)  # blocked-disruptive in the first pass: keep its diff
            r = _not_started(t, self.stop, "before its push" if prev else "before it started")
            if prev is not None:
                r.diff, r.disruptive, r.changed = prev.diff, prev.disruptive, prev.changed
            self.report(r)

    def batch(self, group: list[Target], workers: int, allow_disruptive: bool = False) -> None:
        """Run ``group`` with at most ``workers`` devices at once (:class:`_Batch`)."""
        _Batch(self, group, workers, allow_disruptive).run()

    def canaries(self, canary: list[Target], rest: list[Target]) -> bool:
        """Run the canaries (one at a time when disruptive changes are allowed: maintenance order); False,
        with ``rest`` reported not-started or skipped, when a stop came or a canary failed."""
        opts = self.opts
        workers = 1 if opts.allow_disruptive else opts.concurrency
        self.batch(canary, workers, allow_disruptive=opts.allow_disruptive)
        if self.stop.signal:
            self.not_started(rest)
            return False
        if any(self.results[t.name].failed for t in canary):
            for t in rest:
                self.report(DeviceResult(t.name, t.platform, "skipped", error="canary failed; not attempted"))
            return False
        return True

    def maintenance(self, chosen: list[Target]) -> None:
        """Disruptive changes one device at a time (use --canary to stop early); none once a stop came."""
        for t in [t for t in chosen if self.results[t.name].state == "blocked-disruptive"]:
            if self.stop.signal:  # never pushed: nothing changed on it
                self.not_started([t])
            else:
                self.batch([t], 1, allow_disruptive=True)


class _Batch:
    """One group run with at most ``workers`` devices at once; a device that exceeds
    ``opts.device_timeout_s`` is reported as failed and left to its own commit-confirm timer (its daemon
    thread cannot block the run or the process exit)."""

    def __init__(self, fan: _Fanout, group: list[Target], workers: int, allow_disruptive: bool) -> None:
        self.fan, self.opts, self.stop, self.allow_disruptive = fan, fan.opts, fan.stop, allow_disruptive
        self.done_q: queue.Queue[DeviceResult] = queue.Queue()
        self.slots = threading.Semaphore(max(1, workers))
        self.started: dict[str, float] = {}
        self.timed_out: set[str] = set()
        self.pending = list(group)
        self.waiting = {t.name: t for t in group}

    def run(self) -> None:
        """Until every device of the group has a result."""
        while self.waiting:
            if self.stop.signal and self.pending:
                self._cancel_pending()
                continue
            self._start_ready()
            try:
                r = self.done_q.get(timeout=0.2)
            except queue.Empty:
                self._expire(time.monotonic())
                continue
            self._finish(r)

    def _work(self, t: Target) -> None:
        try:
            self.done_q.put(run_one(t, self.opts, True, self.allow_disruptive, self.stop))
        except Exception as exc:  # noqa: BLE001 — a result for each device, never a wait on a dead thread
            why = f"roce-tune failed on this device ({type(exc).__name__}); check it by hand; restore point"
            self.done_q.put(DeviceResult(t.name, t.platform, "unknown",
                                         error=f"{why}: {_restore_point(t, self.opts)}"))
        finally:
            if t.name not in self.timed_out:
                self.slots.release()

    def _cancel_pending(self) -> None:
        for t in self.pending:
            self.waiting.pop(t.name)
        self.fan.not_started(self.pending)
        self.pending.clear()

    def _start_ready(self) -> None:
        """Start pending devices while a slot is free (and no stop came)."""
        while self.pending and not self.stop.signal and self.slots.acquire(blocking=False):
            t = self.pending.pop(0)
            self.started[t.name] = time.monotonic()
            threading.Thread(target=self._work, args=(t,), daemon=True, name=f"roce-tune-{t.name}").start()

    def _expire(self, now: float) -> None:
        """A failed result for every running device past the device timeout; its slot is freed."""
        limit_s = self.opts.device_timeout_s
        for name in [n for n in self.waiting if n in self.started and now - self.started[n] > limit_s]:
            t = self.waiting[name]
            r = DeviceResult(t.name, t.platform, "failed", error=_timeout_message(t, self.opts),
                             seconds=round(now - self.started[name], 3))
            self.done_q.put(r)
            self.started.pop(name)
            self.timed_out.add(name)
            self.slots.release()  # the stuck thread keeps its slot no longer

    def _finish(self, r: DeviceResult) -> None:
        """Report a device's result; one that finished after its timeout replaces the timeout result."""
        if r.name not in self.waiting:
            # finished after its timeout: its real outcome
            if r.name in self.timed_out and r.name in self.fan.results:
                r.error = f"finished after the {self.opts.device_timeout_s:.0f} s device timeout" + (
                    f": {r.error}" if r.error else "")
                self.fan.report(r)
            return
        self.waiting.pop(r.name)
        self.fan.report(r)


def apply_targets(targets: list[Target], opts: ApplyOptions,
                  on_result: Callable[[DeviceResult], None] | None = None,
                  stop: StopRequest | None = None) -> list[DeviceResult]:
    """Run the selected targets: canaries first, then the rest concurrently, then disruptive ones
    one at a time (maintenance order). Returns results in target order.

    Once ``stop`` is requested no device starts (each gets ``not-started``); running ones finish or
    roll back (see :func:`run_one`) and are waited for.
    """
    stop = stop if stop is not None else StopRequest()
    fan = _Fanout(opts, stop, _reporter(on_result, opts))
    chosen = select(targets, opts.limit)
    canary, rest = chosen[: opts.canary], chosen[opts.canary:]
    if canary and not fan.canaries(canary, rest):
        return [fan.results[t.name] for t in chosen]
    fan.batch(rest, opts.concurrency)
    if opts.allow_disruptive and not opts.dry_run:
        fan.maintenance(chosen)
    return [fan.results[t.name] for t in chosen]


def results_json(results: list[DeviceResult], dry_run: bool, interrupted: str | None = None) -> str:
    """Machine-readable results (``--format json``); ``interrupted`` names the signal that stopped the run."""
    return json.dumps({"dry_run": dry_run, "interrupted": interrupted,
                       "devices": [asdict(r) for r in results]},
                      indent=2, sort_keys=True) + "\n"
