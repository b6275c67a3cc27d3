"""``roce-tune apply``: select devices, diff, and push concurrently with canaries and maintenance order.

Results are objects (Nornir style), never prints: :class:`DeviceResult` per device with ``state``,
``changed``, ``diff``, ``disruptive`` reasons, ``error`` and ``rolled_back``. One device's failure
never stops or corrupts another's push (each runs in its own session and thread).
"""

from __future__ import annotations

import fnmatch
import json
import queue
import threading
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Callable

from roce_tune.deploy.credentials import (
    CredentialError,
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
    Driver,
    PushError,
    PushOptions,
    RollbackIncomplete,
    RollbackNeeded,
    compute_change,
)
from roce_tune.plan import Plan

#: desired-config file of each platform inside ``switches/`` (platform data)
DESIRED_FILE = {"eos": "{name}.cfg", "nxos": "{name}.cfg", "junos": "{name}.set", "cumulus": "{name}.nvue.sh",
                "sonic": "{name}.json"}


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


@dataclass
class DeviceResult:
    """Outcome for one device.

    ``state``: ``no-change``, ``would-change`` (dry run), ``pushed``, ``failed`` (rolled back),
    ``blocked-disruptive`` (needs ``--allow-disruptive``), ``skipped`` (canary failed / not selected).
    With a log directory, each switch's running configuration as found is kept in
    ``<log dir>/<name>.<run tag>.before.txt`` (one per run: a manual restore point) and its session log in ``<name>.log``.
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

    @property
    def failed(self) -> bool:
        """True for states that make the run exit non-zero."""
        return self.state in ("failed", "blocked-disruptive")


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


def targets_from_files(plan: Plan, files: dict[str, str]) -> list[Target]:
    """Build targets from a plan and its rendered files (``switches/…``, ``hosts/…``).

    Raises:
        KeyError: a switch's desired file is missing from ``files``.
    """
    out = []
    for sw in plan.switches:
        rel = "switches/" + DESIRED_FILE[sw.platform].format(name=sw.name)
        if rel not in files:
            continue  # not rendered (--platform-only)
        out.append(Target(sw.name, "switch", sw.platform, sw.role, sw.mgmt_host, sw.mgmt_port, sw.credentials,
                          files[rel], {p.name for p in sw.ports}))
    for h in plan.hosts:
        rel = f"hosts/{h.name}.sh"
        if rel in files:
            out.append(Target(h.name, "host", "host", "host", h.mgmt_host, h.mgmt_port, h.credentials, files[rel]))
    return out


def select(targets: list[Target], limit: list[str]) -> list[Target]:
    """Keep targets matching any ``--limit`` term: a name or glob, ``role:ROLE`` or ``platform:NAME``."""
    if not limit:
        return targets

    def match(t: Target, term: str) -> bool:
        if term.startswith("role:"):
            return t.role == term[5:]
        if term.startswith("platform:"):
            return t.platform == term[9:]
        return fnmatch.fnmatchcase(t.name, term)

    return [t for t in targets if any(match(t, term) for term in limit)]


def _connect(t: Target, opts: ApplyOptions, log_path: Path | None):  # type: ignore[no-untyped-def]
    from netmiko import ConnectHandler

    creds = resolve_credentials(t.name, t.credentials, secrets_file=opts.secrets_file)
    params = dict(device_type=NETMIKO_TYPES[t.platform], host=t.host, port=t.port or 22, username=creds.username,
                  password=creds.password or "", conn_timeout=opts.conn_timeout_s, fast_cli=False,
                  ssh_strict=not opts.insecure_skip_host_key_check, system_host_keys=True)
    if creds.key_file:
        params.update(use_keys=True, key_file=creds.key_file)
    else:
        params.update(use_keys=False, allow_agent=not creds.password)
    if opts.known_hosts:
        params.update(alt_host_keys=True, alt_key_file=opts.known_hosts)
    if t.platform == "sonic":
        params["secret"] = creds.password or ""
    redact = Redactor(creds.secrets(), t.platform)
    if log_path is not None:  # 0600, masked with the platform's secret patterns before it is written
        params["session_log"] = RedactingSessionLog(str(log_path), redact)
    return ConnectHandler(**params), redact


class _Reported(Exception):
    """Internal: the failure is already recorded in the result."""


def _close(conn) -> None:  # type: ignore[no-untyped-def]
    """Disconnect a netmiko session if there is one; a dead session cannot fail the run."""
    if conn is not None:
        try:
            conn.disconnect()
        except Exception:  # noqa: BLE001
            pass


def _recover(t: Target, opts: ApplyOptions, log_path: Path | None, rb: RollbackNeeded, notes: list[str],
             redact: Callable[[str], str]) -> bool:
    """Reconnect and roll back a push whose session died. Returns True when the rollback ran."""
    for _ in range(3):
        conn = None
        try:
            conn, _ = _connect(t, opts, log_path)
            Driver(t.platform, conn, opts.push, lambda s: notes.append(redact(s))).rollback(rb.progress)
            return True
        except RollbackIncomplete:
            raise  # it ran; another attempt cannot read what was not readable before the change
        except Exception as exc:  # noqa: BLE001
            notes.append(redact(f"# rollback attempt failed: {type(exc).__name__}: {exc}"))
            time.sleep(1.0)
        finally:
            _close(conn)
    return False


def _push_or_recover(push: Callable[[], None], t: Target, opts: ApplyOptions, log_path: Path | None,
                     notes: list[str], redact: Callable[[str], str], res: DeviceResult) -> None:
    """Run ``push``. When it failed and its own rollback did not complete (session died, restore
    failed), retry the rollback on new sessions, record the outcome in ``res`` and raise _Reported."""
    try:
        push()
    except RollbackNeeded as rb:
        res.error = redact(f"{rb} (the rollback on that session did not complete)")
        try:
            res.rolled_back = _recover(t, opts, log_path, rb, notes, redact)
        except RollbackIncomplete as inc:
            res.error = redact(f"{rb}; on a new session: {inc}")
            raise _Reported() from None
        res.error += " (rolled back on a new session)" if res.rolled_back else \
            f" — ROLLBACK FAILED: check the {t.kind} by hand"
        raise _Reported() from None


def run_one(t: Target, opts: ApplyOptions, allow_push: bool, allow_disruptive: bool = False) -> DeviceResult:
    """Diff (and unless dry run / blocked, push) one device. Never raises.

    A disruptive change is pushed only when ``allow_disruptive`` (the caller runs those one at a time).
    """
    t0 = time.monotonic()
    res = DeviceResult(t.name, t.platform, "failed")
    log_path = None
    if opts.log_dir is not None:
        private_dir(opts.log_dir)  # 0700: session logs and restore points hold device configurations
        log_path = opts.log_dir / f"{t.name}.log"
        res.log_file = str(log_path)
    notes: list[str] = []
    conn = None
    redact: Callable[[str], str] = lambda s: s  # noqa: E731
    try:
        if not t.host:
            raise PushError("connect", "no management address in the inventory")
        conn, redact = _connect(t, opts, log_path)
        drv = Driver(t.platform, conn, opts.push, lambda s: notes.append(redact(s)))
        if t.kind == "host":
            rc, out = drv.run_host_script(t.desired, check_only=True)
            res.diff = [ln for ln in out.splitlines() if "MISMATCH" in ln or ln.startswith(("-", "+"))]
            res.changed = rc != 0
            if not res.changed:
                res.state = "no-change"
            elif opts.dry_run or not allow_push:
                res.state = "would-change"
            else:
                try:
                    _push_or_recover(lambda: drv.push_host(t.desired), t, opts, log_path, notes, redact, res)
                finally:  # a manual restore point, like the switches' <name>.<tag>.before.txt
                    if opts.log_dir is not None and drv.restore_point.strip():
                        write_private(opts.log_dir / f"{t.name}.{opts.push.tag}.before.sh",
                                      redact(drv.restore_point).rstrip("\n") + "\n")
                res.state = "pushed"
        else:
            running = drv.read_running()
            if opts.log_dir is not None:  # a manual restore point: the config as found, before any change
                write_private(opts.log_dir / f"{t.name}.{opts.push.tag}.before.txt", redact(running))
            change = compute_change(t.platform, running, t.desired, t.managed_ports)
            res.diff, res.disruptive, res.changed = change.diff, change.disruptive, not change.empty
            if change.empty:
                res.state = "no-change"
            elif opts.dry_run or not allow_push:
                res.state = "would-change"
            elif change.disruptive and not allow_disruptive:
                res.state = "blocked-disruptive"
                res.error = "disruptive change needs --allow-disruptive: " + "; ".join(change.disruptive)
            else:
                _push_or_recover(lambda: drv.push(change, t.desired, t.managed_ports), t, opts, log_path, notes,
                                 redact, res)
                res.state = "pushed"
    except _Reported:
        pass
    except PushError as exc:
        res.error = redact(str(exc))
        res.rolled_back = exc.stage not in ("connect", "read", "checkpoint", "rollback")
    except CredentialError as exc:
        res.error = f"connect: {exc}"
    except Exception as exc:  # noqa: BLE001 — one device's failure must not stop the others
        res.error = redact(f"{type(exc).__name__}: {exc}".strip())
        res.rolled_back = conn is not None and not opts.dry_run and res.changed
    finally:
        _close(conn)
        if log_path is not None:
            with open_private(log_path) as fh:
                fh.write("\n".join(notes) + "\n")
                fh.write(f"# result: {res.state}" + (f" — {res.error}" if res.error else "") + "\n")
    if res.state == "failed" and res.rolled_back and "rolled back" not in (res.error or ""):
        res.error = (res.error or "") + " (rolled back)"
    res.seconds = round(time.monotonic() - t0, 3)
    return res


def _timeout_message(t: Target, opts: ApplyOptions) -> str:
    """What a device that exceeded ``opts.device_timeout_s`` is left in, per platform."""
    head = f"timed out after {opts.device_timeout_s:.0f} s"
    if t.platform in CONFIRM_CHECK:
        return f"{head}; an unconfirmed commit reverts on the device's own commit-confirm timer"
    restore = f"{t.name}.{opts.push.tag}.before.{'sh' if t.kind == 'host' else 'txt'}"
    where = f" in {opts.log_dir}" if opts.log_dir is not None else ""
    return (f"{head}; {t.platform} has no commit-confirm, so nothing reverts by itself: the push may have "
            f"completed or stopped half-way. Check the {t.kind}; its restore point is {restore}{where}")


def apply_targets(targets: list[Target], opts: ApplyOptions,
                  on_result: Callable[[DeviceResult], None] | None = None) -> list[DeviceResult]:
    """Run the selected targets: canaries first, then the rest concurrently, then disruptive ones
    one at a time (maintenance order). Returns results in target order."""
    results: dict[str, DeviceResult] = {}

    def batch(group: list[Target], workers: int, allow_disruptive: bool = False) -> None:
        """Run ``group`` with at most ``workers`` devices at once; a device that exceeds
        ``opts.device_timeout_s`` is reported as failed and left to its own commit-confirm timer
        (its daemon thread cannot block the run or the process exit)."""
        done_q: queue.Queue[DeviceResult] = queue.Queue()
        slots = threading.Semaphore(max(1, workers))
        started: dict[str, float] = {}
        timed_out: set[str] = set()

        def work(t: Target) -> None:
            try:
                done_q.put(run_one(t, opts, True, allow_disruptive))
            finally:
                if t.name not in timed_out:
                    slots.release()

        pending = list(group)
        waiting = {t.name: t for t in group}
        while waiting:
            while pending and slots.acquire(blocking=False):
                t = pending.pop(0)
                started[t.name] = time.monotonic()
                threading.Thread(target=work, args=(t,), daemon=True, name=f"roce-tune-{t.name}").start()
            try:
                r = done_q.get(timeout=0.2)
            except queue.Empty:
                now = time.monotonic()
                for name in [n for n in waiting if n in started and now - started[n] > opts.device_timeout_s]:
                    t = waiting[name]
                    r = DeviceResult(t.name, t.platform, "failed", error=_timeout_message(t, opts),
                                     seconds=round(now - started[name], 3))
                    done_q.put(r)
                    started.pop(name)
                    timed_out.add(name)
                    slots.release()  # the stuck thread keeps its slot no longer
                continue
            if r.name not in waiting:
                if r.name in timed_out and r.name in results:  # finished after its timeout: its real outcome
                    r.error = f"finished after the {opts.device_timeout_s:.0f} s device timeout" + (
                        f": {r.error}" if r.error else "")
                    results[r.name] = r
                    if on_result:
                        on_result(r)
                continue
            waiting.pop(r.name)
            results[r.name] = r
            if on_result:
                on_result(r)

    chosen = select(targets, opts.limit)
    canary, rest = chosen[: opts.canary], chosen[opts.canary:]
    if canary:
        # canaries go one at a time when disruptive changes are allowed (maintenance order)
        batch(canary, 1 if opts.allow_disruptive else opts.concurrency, allow_disruptive=opts.allow_disruptive)
        if any(results[t.name].failed for t in canary):
            for t in rest:
                results[t.name] = DeviceResult(t.name, t.platform, "skipped", error="canary failed; not attempted")
                if on_result:
                    on_result(results[t.name])
            return [results[t.name] for t in chosen]
    batch(rest, opts.concurrency)
    if opts.allow_disruptive and not opts.dry_run:
        # maintenance order: disruptive changes one device at a time (use --canary to stop early)
        for t in [t for t in chosen if results[t.name].state == "blocked-disruptive"]:
            batch([t], 1, allow_disruptive=True)
    return [results[t.name] for t in chosen]


def results_json(results: list[DeviceResult], dry_run: bool) -> str:
    """Machine-readable results (``--format json``)."""
    return json.dumps({"dry_run": dry_run, "devices": [asdict(r) for r in results]}, indent=2, sort_keys=True) + "\n"
