"""Per-platform push flows over netmiko: read running config, compute the change, push with the
platform's safe mechanism, read back, confirm — or roll back and say why.

The safe mechanism of each platform (checkpoint/session/commit-confirm, its rollback, its save, what it
leaves behind) is the platform's :class:`~roce_tune.platforms.contract.PushMethod` (``PUSH`` at the end of
each module under ``roce_tune/platforms/``; docs/derivation.md#platform-syntax). This module is the
generic skeleton: boundaries, stop handling, rollback on any failure, read-back, confirm check and save.

Stopping (SIGINT/SIGTERM, see ``runner.StopRequest``): every command of a push is a boundary at which
the driver asks ``should_stop()``; when it answers, the push raises :class:`Interrupted` before sending
that command and the failure path above rolls the device back (the rollback itself never stops). Config
lines go one at a time, each waiting for the prompt, so a stop lands between two lines. The boundaries end
with the command that makes the change final (the confirm on eos/junos/cumulus, the save on nxos/sonic,
removing the restore point on hosts): a device past it finishes. :func:`left_as_is` says what an
abandoned device is left in and how to undo it.

Drivers only move text; they never decide values.
"""

from __future__ import annotations

import json
import re
import secrets
import shlex
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, NoReturn

from roce_tune.deploy.diff import DIFF_RULES, ConfigChange, hier_diff, json_diff, set_diff
from roce_tune.platforms import ALL_PLATFORMS, platform
from roce_tune.platforms.checkpoints import KEEP_CHECKPOINTS, new_tag
from roce_tune.platforms.contract import CHANGE_SENT, PushMethod

#: exit status of a host restore point that ran but had values it could not read before the change
RESTORE_INCOMPLETE_RC = "3"
#: the push method of every platform (each platform module's ``PUSH``), by platform name
PUSH_METHODS: dict[str, PushMethod] = {name: platform(name).push for name in ALL_PLATFORMS}
#: errors a platform prints for a rejected command
ERROR_PATTERNS = {n: m.error_pattern for n, m in PUSH_METHODS.items()}
#: after confirming: (command, regex meaning "the commit is still waiting for confirmation")
CONFIRM_CHECK = {n: m.confirm_check for n, m in PUSH_METHODS.items() if m.confirm_check is not None}
#: how each platform persists the running configuration: (command, regex its success prints); a platform
#: without an entry has no separate save (a Junos commit writes to storage and is checked as such)
SAVE = {n: m.save for n, m in PUSH_METHODS.items() if m.save is not None}
#: stages whose commands may run long (commit, save, rollback, the host script); the others are shows
#: and single config lines, which a live device answers at once
LONG_STAGES = frozenset({"commit", "confirm", "save", "rollback", "run", "checkpoint"})
#: how many non-empty lines at the start of a running-configuration read are checked for the CLI's error
_READ_ERROR_HEAD_LINES = 3
#: stages whose command makes a push final: no stop is honoured after it is sent (the device finishes)
FINAL_STAGES = ("confirm", "save", "cleanup")
NETMIKO_TYPES = {n: m.netmiko_device_type for n, m in PUSH_METHODS.items()}


class RollbackNeeded(RuntimeError):
    """The push failed and the session died before it could roll back: reconnect and call
    :meth:`Driver.rollback` with ``progress``. ``cause`` is the original failure."""

    def __init__(self, cause: BaseException, progress: dict[str, Any]):
        self.cause, self.progress = cause, progress
        super().__init__(f"{type(cause).__name__}: {cause}".strip())


class PushError(RuntimeError):
    """A push step failed; ``stage`` names it (connect, diff, send, commit, verify, confirm)."""

    def __init__(self, stage: str, message: str):
        self.stage = stage
        super().__init__(f"{stage}: {message}")


class SaveError(PushError):
    """The push was confirmed and read back, but persisting it failed: the running configuration now
    differs from the startup configuration (a reload would bring back the old one). Not rolled back."""

    def __init__(self, command: str, detail: str):
        super().__init__("save", f"`{command}` failed: {detail}. The change is live and verified, but the "
                                 "running configuration now differs from the startup configuration (a reload "
                                 "would lose it): fix the cause and save by hand")


class SessionDropped(ConnectionError):
    """The SSH session to the device closed while a command was waiting for its output."""


class Interrupted(PushError):
    """A stop was requested (``signal`` names it, e.g. ``SIGINT``) while the device was mid-push: raised
    at the next command boundary, before ``command`` was sent, so that the push rolls back."""

    def __init__(self, signal: str, command: str):
        self.signal, self.command = signal, command.strip()
        shown = self.command if len(self.command) <= 60 else self.command[:57] + "..."
        super().__init__("interrupted", f"{signal} received; stopped before sending {shown!r}")


class RollbackIncomplete(PushError):
    """The rollback ran but could not put everything back (a host value that could not be read before
    the change). Retrying cannot help, so it is reported, not retried; ``stage`` is ``rollback``."""

    def __init__(self, cause: BaseException, detail: str):
        self.detail = detail
        super().__init__("rollback", f"{cause}; ROLLBACK INCOMPLETE: {detail}")


class RollbackRefused(RollbackIncomplete):
    """The platform's rollback refused to run: it would have discarded more than roce-tune's change (Junos:
    others committed after roce-tune, and ``rollback N`` would undo their commits too). Nothing was rolled
    back; another attempt would be refused the same way, so it is reported, not retried."""

    def __init__(self, cause: BaseException, detail: str):
        self.detail = detail
        PushError.__init__(self, "rollback", f"{cause}; ROLLBACK REFUSED, the device is left as is: {detail}")


@dataclass
class PushOptions:
    """Knobs of a push.

    Attributes:
        confirm_s: commit-confirm window (the device reverts on its own after it).
        save: persist to the startup configuration after confirming.
        read_timeout_s: longest wait for the output of a show command or a config line (a live device
            answers these at once; a closed session is detected at once regardless).
        commit_timeout_s: longest wait for a commit, confirm, save, checkpoint, rollback or the host script.
        keepalive_s: SSH keepalive interval (0 = off): keeps idle NAT/firewall state during long commits.
        rollback_retry_s: how long to keep reconnecting to roll back a device whose session dropped
            (attempts back off 1, 2, 4 … 10 s).
        tag: checkpoint / session / commit-comment name of this run, unique per run (``new_tag``: local time
            to the millisecond and a counter).
        keep_checkpoints: roce-tune's own checkpoints kept on a device after a successful push, the one
            just taken included (at least 1; the platform deletes older ones of its own, never an
            operator's: :mod:`roce_tune.platforms.checkpoints`).
    """

    confirm_s: int = 300
    save: bool = True
    read_timeout_s: float = 30.0
    commit_timeout_s: float = 300.0
    keepalive_s: float = 10.0
    rollback_retry_s: float = 120.0
    tag: str = field(default_factory=new_tag)
    keep_checkpoints: int = KEEP_CHECKPOINTS


def rejected_command(platform: str, output: str, commands: list[str]) -> tuple[str | None, str] | None:
    """Find the device's error in ``output`` and the command it refers to.

    Args:
        platform: key of :data:`ERROR_PATTERNS`.
        output: what the device printed (a transcript with echoed commands and prompts, or one output).
        commands: the commands sent; the last one echoed before the error line is the rejected one
            (with one command it is that command).

    Returns:
        (command or None, error line with the caret line's context), or None when nothing was rejected.
    """
    lines = output.splitlines()
    rx = re.compile(ERROR_PATTERNS[platform])
    hit = next((i for i, ln in enumerate(lines) if rx.search(ln)), None)
    if hit is None:
        return None
    error = lines[hit].strip()
    sent = [c.strip() for c in commands if c.strip()]
    command = sent[0] if len(sent) == 1 else None
    if len(sent) > 1:
        for ln in reversed(lines[:hit]):
            found = [c for c in sent if ln.rstrip().endswith(c)]
            if found:
                command = max(found, key=len)
                break
    return command, error


def _check(platform: str, output: str, stage: str, commands: list[str] | None = None) -> str:
    """Return ``output``; raise PushError naming the device's error line and the rejected command."""
    found = rejected_command(platform, output, commands or [])
    if found is not None:
        command, error = found
        raise PushError(stage, f"device rejected `{command}`: {error}" if command else error)
    return output


def watch_session(conn: Any) -> None:
    """Make ``conn`` (a netmiko SSH connection) raise :class:`SessionDropped` as soon as its channel is
    closed while a read waits, instead of polling an empty closed channel until the read timeout
    (paramiko stops delivering data on a dropped connection; netmiko only sees "no data yet").

    Idempotent; a no-op for connections without a paramiko channel.
    """
    if getattr(conn, "_roce_tune_watched", False) or not hasattr(conn, "read_channel"):
        return
    inner = conn.read_channel

    def read_channel() -> str:
        out: str = inner()  # netmiko's read_channel (untyped) returns the text read
        if not out:
            chan = getattr(conn, "remote_conn", None)
            transport = getattr(chan, "transport", None)
            if chan is not None and hasattr(chan, "closed") and (
                    chan.closed or chan.eof_received or transport is None or not transport.is_active()):
                raise SessionDropped("SSH session to "
                                     f"{getattr(conn, 'host', '?')}:{getattr(conn, 'port', '?')} closed by "
                                     "the device or the network")
        return out

    conn.read_channel = read_channel
    conn._roce_tune_watched = True


def left_as_is(platform: str, phase: str, progress: dict[str, Any], opts: PushOptions) -> str:
    """What a device abandoned by an aborted run is left in, and the command that puts it back.

    Args:
        platform: a platform name (:data:`roce_tune.platforms.ALL_PLATFORMS`).
        phase: the driver's ``phase`` (read, push, rollback, finish, done), or ``rollback-failed`` for a
            rollback that ran to its end (retries included) without putting the device back.
        progress: the driver's ``progress`` (checkpoint/session taken, committed, applied, restore).
        opts: the push options (tag = checkpoint/session name, commit-confirm window).
    """
    tag = progress.get("tag", opts.tag)
    if phase == "read":
        return "nothing changed (it was still connecting, reading or diffing)"
    if phase == "done":
        return "pushed"
    if phase == "finish":
        return "the change is final (confirmed/verified); saving it to startup may not have run"
    head = {"rollback": "its rollback was cut short",
            "rollback-failed": "its rollback did not complete"}.get(phase, "stopped mid-push")
    describe = PUSH_METHODS[platform].left_as_is
    what = (describe(progress, tag, opts.confirm_s) if describe is not None
            else None) or "nothing changed yet"
    return f"{head}; {what}"


def confirm_window_note(platform: str, confirm_s: int) -> str | None:
    """What ``platform``'s commit-confirm makes of a ``confirm_s`` s window when it cannot take it as given
    (the platform's ``PushMethod.confirm_window``, e.g. Junos's whole minutes), else None.

    Args:
        platform: a platform name (:data:`roce_tune.platforms.ALL_PLATFORMS`).
        confirm_s: the commit-confirm window asked for (``--confirm-seconds``), seconds.

    Raises:
        KeyError: ``platform`` is not a known platform.
    """
    window = PUSH_METHODS[platform].confirm_window
    return window(confirm_s) if window is not None else None


def compute_change(platform: str, running: str, desired: str, managed_ports: set[str]) -> ConfigChange:
    """Change that takes ``running`` to include ``desired`` (the platform's diff kind and rules).

    Raises:
        ValueError: running/desired JSON (``json`` kind) does not parse.
    """
    rules = DIFF_RULES[platform]
    if rules.kind == "hier":
        return hier_diff(rules, running, desired)
    if rules.kind == "set":
        if rules.keep_lines is not None:
            return set_diff(rules, rules.keep_lines(running), rules.keep_lines(desired))
        return set_diff(rules, running, desired)
    assert rules.parse_running is not None, f"{platform}: a json diff needs parse_running"
    return json_diff(rules, rules.parse_running(running), json.loads(desired), managed_ports)


@contextmanager
def named_timeout(command: str, stage: str, seconds: float) -> Iterator[None]:
    """Inside: netmiko's ``ReadTimeout`` (a multi-line hint about ``expect_string`` that names neither the
    command nor how long was waited) is raised again, same type, as one line
    ``<stage>: no reply to `<command>` within <seconds> s``.

    Raises:
        netmiko.ReadTimeout: as described.
    """
    from netmiko.exceptions import ReadTimeout

    try:
        yield
    except ReadTimeout:
        first = command.strip().splitlines()[0] if command.strip() else command
        shown = first if len(first) <= 80 else first[:77] + "..."
        raise ReadTimeout(f"{stage}: no reply to `{shown}` within {seconds:g} s (no prompt seen: the device "
                          "is busy, hung or answered with an unexpected prompt)") from None


def _heredoc(path: str, content: str, append: bool = False) -> str:
    marker = "ROCE_TUNE_EOF"
    if marker in content:
        raise PushError("send", "content contains the heredoc marker")
    # content as given (upload's chunk of lines): a blank line or trailing space at a chunk's end is part of
    # the file (a host script installs itself byte for byte, heredocs included)
    return f"cat {'>>' if append else '>'} {shlex.quote(path)} <<'{marker}'\n{content}\n{marker}"


class Driver:
    """One device's flow. ``conn`` is a connected netmiko session; ``log`` records steps."""

    def __init__(self, platform: str, conn: Any, opts: PushOptions, log: Callable[[str], None],
                 should_stop: Callable[[], str | None] | None = None,
                 on_restore_point: Callable[[str], None] | None = None, device: str = ""):
        """``should_stop()`` returns the name of a requested stop (``SIGINT``) or None; it is asked at each
        command boundary of a push. ``on_restore_point(text)`` receives a host's restore script as soon
        as it is read back (so a local copy exists even if the run is aborted). ``device``: the device's
        name in the plan, for messages."""
        self.device = device
        #: warnings for the apply report (:meth:`warn`): housekeeping that failed after a final change
        self.warnings: list[str] = []
        self.restore_point = ""  # host: the restore script the last push_host wrote (as found before it)
        self.platform, self.conn, self.opts, self.log = platform, conn, opts, log
        self.method = PUSH_METHODS[platform]
        self.should_stop, self.on_restore_point = should_stop, on_restore_point
        self.progress: dict[str, Any] = {}
        #: the running configuration the last :meth:`read_running` returned (the diff's, during a push)
        self.running = ""
        watch_session(conn)
        #: read (diff/dry run), push (stoppable), rollback (not stoppable), finish (past the final
        #: command), done
        self.phase = "read"

    def timeout(self, stage: str) -> float:
        """Read timeout (s) for a command of ``stage``: long for commit/save/rollback/host script."""
        return self.opts.commit_timeout_s if stage in LONG_STAGES else self.opts.read_timeout_s

    def boundary(self, command: str) -> None:
        """Raise :class:`Interrupted` when a stop was requested and the push may still roll back.

        Raises:
            Interrupted: in the push phase, when ``should_stop`` returns a signal name.
        """
        if self.phase == "push" and self.should_stop is not None:
            signal = self.should_stop()
            if signal:
                raise Interrupted(signal, command)

    # -- reading ---------------------------------------------------------------------------
    def cmd(self, command: str, stage: str = "read", expect_string: str | None = None,
            boundary: bool = True) -> str:
        """Send one exec-mode command, log its output (redacted by the caller's logger) and return it.
        During a push the command is a stop boundary (unless ``boundary`` is False); a command of a
        :data:`FINAL_STAGES` stage is the last one.

        Raises:
            netmiko.ReadTimeout: no prompt (or ``expect_string``) within :meth:`timeout` of ``stage``.
            SessionDropped: the session closed while waiting.
            Interrupted: a stop was requested before the command was sent.
        """
        if boundary:
            self.boundary(command)
        if stage in FINAL_STAGES and self.phase == "push":
            self.phase = "finish"
        kwargs: dict[str, Any] = {"read_timeout": self.timeout(stage)}
        if expect_string:
            kwargs["expect_string"] = expect_string
        with named_timeout(command, stage, kwargs["read_timeout"]):
            out: str = self.conn.send_command(command, **kwargs)  # netmiko is untyped: the command's output
        self.log(f"$ {command}\n{out}")
        return out

    def read_running(self) -> str:
        """The relevant running configuration, as the platform prints it.

        Raises:
            KeyError: the platform has no running configuration to read (hosts).
            PushError("read"): the device answered the command with its error line (first lines only, so a
                configuration line that looks like one is not mistaken for it).
            netmiko.ReadTimeout, SessionDropped: as :meth:`cmd`.
        """
        if self.method.read_running is None:
            raise KeyError(f"{self.platform} has no running configuration to read")
        out = self.cmd(self.method.read_running)
        # a CLI error (no privilege, a command this release lacks) comes first and alone; diffing it as an
        # empty configuration would show every line as a change and push against a configuration never read
        head = "\n".join([ln for ln in out.splitlines() if ln.strip()][:_READ_ERROR_HEAD_LINES])
        found = rejected_command(self.platform, head, [self.method.read_running])
        if found is not None:
            raise PushError("read", f"device rejected `{self.method.read_running}`: {found[1]}; its running "
                                    "configuration was not read, so nothing was diffed or changed")
        self.running = out
        return out

    def upload(self, path: str, content: str, chunk_bytes: int = 1500) -> None:
        """Write ``content`` to ``path`` on a Linux-based device with here-documents of at most
        ``chunk_bytes`` each, waiting for the prompt after each (a terminal's input queue holds ~4 KiB;
        larger single writes can be dropped by a PTY)."""
        lines = content.rstrip("\n").split("\n")
        chunks: list[list[str]] = [[]]
        size = 0
        for line in lines:
            if size + len(line) + 1 > chunk_bytes and chunks[-1]:
                chunks.append([])
                size = 0
            chunks[-1].append(line)
            size += len(line) + 1
        for i, chunk in enumerate(chunks):
            self.boundary(f"cat >> {path}")
            self.conn.write_channel(_heredoc(path, "\n".join(chunk), append=i > 0) + "\n")
            with named_timeout(f"cat >> {path}", "send", self.opts.read_timeout_s):
                self.conn.read_until_prompt(read_timeout=self.opts.read_timeout_s)
        self.log(f"$ cat > {path} <<'ROCE_TUNE_EOF' ... ({len(content)} bytes in {len(chunks)} chunk(s))")

    # -- pushing -------------------------------------------------------------------------------
    def push(self, change: ConfigChange, desired: str, managed_ports: set[str]) -> None:
        """Apply ``change`` safely; on any failure roll back and re-raise.

        ``self.progress`` records how far the push got (checkpoint taken, session open, committed),
        so a rollback can also run on a *new* session after the first one died. ``change_sent`` is set by
        each platform's push right before the first command that changes the running configuration (a
        commit, an apply, a configuration line that takes effect at once): a failure without it changed
        nothing (:meth:`change_sent`).

        Raises:
            PushError / netmiko errors: the push failed and the rollback on this session succeeded.
            RollbackNeeded: the push failed and this session could not roll back (e.g. dropped).
        """
        steps = self.method.push
        if steps is None:
            raise PushError("send", f"{self.platform} is pushed as a script (push_host), not as a change")
        note = confirm_window_note(self.platform, self.opts.confirm_s)
        if note:
            self.log(f"# note: {note}")

        def run() -> None:
            # the change, so that a rollback (also on a new session) can tell whether any of it is active
            self.progress.update(commands=list(change.commands), desired=desired, ports=sorted(managed_ports))
            steps(self, change.commands, change.patch, desired, managed_ports)

        self._guarded(run)
        try:
            if self.opts.save:
                self.save()
        finally:
            self.cleanup()

    def warn(self, message: str) -> None:
        """Record ``message`` as a warning of this device (the apply report shows it) and log it."""
        self.warnings.append(message)
        self.log(f"# warning: {message}")

    def cleanup(self) -> None:
        """The platform's housekeeping after a push that succeeded (:attr:`PushMethod.cleanup`), also when
        its save failed. Any failure becomes a warning naming the device: the change is final, so
        housekeeping never fails it nor rolls it back."""
        if self.method.cleanup is None:
            return
        try:
            self.method.cleanup(self, self.progress)
        except Exception as exc:  # noqa: BLE001 — after a final change nothing may undo or fail it
            self.warn(f"{self.device or self.platform}: cleanup after the push did not complete: "
                      f"{type(exc).__name__}: {exc}")

    def save(self) -> None:
        """Persist the confirmed running configuration (:data:`SAVE`); Junos has no separate save.

        Raises:
            SaveError: the device refused or did not confirm the save, did not answer within the commit
                timeout or closed the session (the change stays live, maybe unsaved).
        """
        if self.method.save is None:
            return
        from netmiko.exceptions import ReadTimeout

        command, success = self.method.save
        shown = command.split(";")[0]
        try:
            out = self.cmd(command, "save", self.method.save_expect)
        except (ReadTimeout, SessionDropped) as exc:  # after the confirm: never a rollback, say what is left
            raise SaveError(shown, f"{exc}; whether the save completed is unknown (check the startup "
                                   "configuration)") from None
        found = rejected_command(self.platform, out, [shown])
        status = re.findall(r"ROCE_TUNE_RC=(\d+)", out)  # the last: the output's, not an echoed command's
        ok = (status[-1] == "0") if "ROCE_TUNE_RC" in command and status else bool(re.search(success, out))
        if found is not None or not ok:
            detail = [ln.strip() for ln in out.splitlines()
                      if ln.strip() and "ROCE_TUNE_RC" not in ln and not ln.rstrip().endswith(shown)]
            raise SaveError(shown, found[1] if found else ("; ".join(detail[-3:])
                                                           or "no confirmation printed"))

    def push_host(self, script: str) -> None:
        """Run a host script for real with ``--save``: the host's push. On failure run the restore point.

        The restore point (a bash script that puts back every value as found before the run) is kept
        in ``self.restore_point`` for the caller to store, whether the push succeeded or not.

        Raises (like :meth:`push`): PushError("verify") after the restore point ran successfully;
        RollbackIncomplete when it ran but values unreadable before the change could not be put back;
        RollbackNeeded when it could not run or failed.
        """
        restore = f"/tmp/{self.opts.tag}-{secrets.token_hex(6)}.restore.sh"  # unpredictable name in /tmp

        def run() -> None:
            self.progress["restore"] = restore
            self.progress[CHANGE_SENT] = True  # the script writes each value as it runs
            rc, out = self.run_host_script(script, check_only=False, save=restore)
            # read the restore point even when a stop was requested: a local copy for the operator
            self.restore_point = self.cmd(f"cat {shlex.quote(restore)} 2>/dev/null", "read", boundary=False)
            if self.on_restore_point is not None and self.restore_point.strip():
                self.on_restore_point(self.restore_point)
            if rc != 0:
                tail = [ln for ln in out.splitlines() if "ROCE_TUNE_RC=" not in ln][-10:]
                raise PushError("verify", f"host script exited {rc}:\n" + "\n".join(tail))
            self.cmd(f"rm -f {shlex.quote(restore)}", "cleanup")  # a stop before this restores the host

        self._guarded(run)

    def _guarded(self, push: Callable[[], None]) -> None:
        self.progress = {"tag": self.opts.tag}
        self.phase = "push"
        try:
            push()
            self.phase = "done"
        except Exception as exc:
            self.phase = "rollback"  # no boundary checks from here: a stop never cuts a rollback short
            try:
                self.rollback(self.progress)
            except RollbackIncomplete as inc:  # or RollbackRefused: keep which
                raise type(inc)(exc, inc.detail) from exc
            except Exception as rb_exc:  # noqa: BLE001
                raise RollbackNeeded(exc, dict(self.progress)) from rb_exc
            raise

    def change_sent(self) -> bool:
        """True once the push sent a command that changes the running configuration (``progress``'s
        ``change_sent``); a push that failed before it changed nothing and rolled nothing back."""
        return bool(self.progress.get(CHANGE_SENT))

    def rollback(self, progress: dict[str, Any]) -> None:
        """Undo a partial push described by ``progress`` (works on a fresh session too)."""
        if self.method.restore_point:
            self._rollback_host(progress)
        elif self.method.rollback is not None:
            self.method.rollback(self, progress)

    def _rollback_host(self, progress: dict[str, Any]) -> None:
        """Run the restore point the host script wrote; none means it stopped before changing anything."""
        restore = progress.get("restore")
        if not restore:
            return
        q = shlex.quote(restore)
        # the status is printed as ROCE_TUNE_RC=<n> or =nofile; the command text itself says no''file, so
        # an echoed command line can never be read as an outcome (and the last match is the output's)
        out = self.cmd(f"if [ -f {q} ]; then bash {q}; echo ROCE_TUNE_RC=$?; else echo "
                       "ROCE_TUNE_RC=no''file; fi",
                       "rollback")
        found = re.findall(r"ROCE_TUNE_RC=(\d+|nofile)\b", out)
        status = found[-1] if found else None
        if status == RESTORE_INCOMPLETE_RC:
            lost = [re.sub(r"^(rt_put|rt_do) ", "", ln.split("not restorable: ", 1)[1].strip())
                    for ln in out.splitlines() if "not restorable: " in ln]
            self.cmd(f"rm -f {q}", "cleanup")  # kept locally as <host>.<tag>.before.sh
            raise RollbackIncomplete(RuntimeError("the restore point ran"),
                                     "every other value was put back; not restorable (unreadable before the "
                                     "change, left as the plan set them): " + "; ".join(lost))
        if status not in ("0", "nofile"):
            raise PushError("rollback", "restore script failed:\n" + "\n".join(out.splitlines()[-10:]))
        self.cmd(f"rm -f {q}", "cleanup")

    def check(self, output: str, stage: str, commands: list[str] | None = None) -> str:
        """Return ``output``; raise PushError(stage) naming the device's error line and the rejected
        command."""
        return _check(self.platform, output, stage, commands)

    def fail(self, stage: str, message: str) -> NoReturn:
        """Raise PushError(``stage``, ``message``) (for a platform's push or rollback steps).

        Raises:
            PushError: always.
        """
        raise PushError(stage, message)

    def refuse_rollback(self, message: str) -> NoReturn:
        """Refuse a rollback that would discard more than this push's change (``message`` says what and
        why); the device is left as is and no new session retries it.

        Raises:
            RollbackRefused: always.
        """
        raise RollbackRefused(RuntimeError("roce-tune's rollback was not run"), message)

    def confirmed(self, desired: str | None = None, managed_ports: set[str] | None = None) -> None:
        """Raise if the device still waits for a confirmation (a lost confirm would roll back later) or,
        with ``desired``, if the confirmed change is not active in the running configuration.

        A confirm that reaches the device after its commit-confirm timer ran out finds the change already
        reverted by the device; it then confirms nothing and the device may still answer with success
        (Junos commits the unchanged candidate: "commit complete"; EOS prints no error for a session that
        is no longer pending). Only a read-back after the confirm proves the change is active and final.

        Raises:
            PushError("confirm"): a confirmation is still pending, or lines of ``desired`` are not active
                (the message says, in the platform's words, that the timer ran out and how to lengthen it).
        """
        assert self.method.confirm_check is not None, f"{self.platform} has no commit-confirm"
        command, pending = self.method.confirm_check
        if re.search(pending, self.cmd(command, "confirm")):
            raise PushError("confirm", "the confirmation did not take; the device still waits for one")
        if desired is None:
            return
        missing = self.missing(desired, managed_ports or set())
        if missing:
            raise self._expired(missing)

    def confirm(self, command: str, desired: str, managed_ports: set[str],
                expect_string: str | None = None) -> str:
        """Send the confirm ``command``, then prove the change is active and final (:meth:`confirmed`).
        ``progress["confirmed"]`` is set once the device accepted the confirm.

        When the device rejects the confirm, the running configuration is read first: a change that is no
        longer active means the window ran out before the confirm (NVUE: no apply left to confirm), which
        is reported as that instead of as the device's bare error line. ``progress["confirm_sent"]`` is set
        before the confirm is sent (a lost reply leaves it unknown whether it landed: ``left_as_is`` says so).

        Raises:
            PushError("confirm"): the device rejected the confirm, the window had run out, or a confirmation
                is still pending.
        """
        self.progress["confirm_sent"] = True  # set before the send: its reply may be lost after it landed
        out = self.cmd(command, "confirm", expect_string)
        try:
            self.check(out, "confirm", [command])
        except PushError as exc:
            missing = self.missing(desired, managed_ports)
            if missing:
                raise self._expired(missing, str(exc).removeprefix("confirm: ")) from None
            raise
        self.progress["confirmed"] = True
        self.confirmed(desired, managed_ports)
        return out

    def _expired(self, missing: list[str], reply: str | None = None) -> PushError:
        """The PushError for a change that is not active after the confirm (its window ran out)."""
        window = self.opts.confirm_s
        what = (self.method.expired(self.opts.tag, window) if self.method.expired is not None
                else "the device reverted the change by itself")
        return PushError("confirm", "the change is not active after the confirm: the device's commit-confirm "
                                    f"timer ran out before the confirm arrived; {what} (the late confirm "
                                    "committed nothing" + (f"; {reply}" if reply else "") + "). Lengthen the "
                                    f"window with `roce-tune apply --confirm-seconds N` (now {window} s). "
                                    "Not active: " + "; ".join(missing[:5]))

    def change_active(self, progress: dict[str, Any]) -> bool:
        """Read the running configuration now: True if any command of the change :meth:`push` recorded in
        ``progress`` (``commands``, ``desired``, ``ports``) is active, i.e. it no longer appears among the
        commands the running configuration needs to reach the desired text. A progress without the change
        counts as active (a rollback then runs as before).

        Raises:
            netmiko.ReadTimeout, SessionDropped: as :meth:`cmd`; ValueError: as :func:`compute_change`.
        """
        commands, desired, ports = progress.get("commands"), progress.get("desired"), progress.get("ports")
        if not isinstance(commands, list) or not isinstance(desired, str) or not isinstance(ports, list):
            return True
        return bool(set(commands) - set(self.missing(desired, set(ports))))

    def undo_active(self, progress: dict[str, Any], undo: Callable[[], object], rolled_back: str,
                    not_active: str) -> None:
        """Roll back a committed change only while some of it is active: run ``undo`` (the platform's
        rollback commands) when :meth:`change_active`, else leave the device alone (its commit-confirm
        timer already reverted the change; an undo could load it again). Records which case happened in
        ``progress["rollback_outcome"]`` (``rolled_back`` or ``not_active``, the apply report carries it).
        After ``undo`` the running configuration is read again: a rollback that left the change active
        is no rollback.

        Raises:
            PushError("rollback"): the change is still active after ``undo``; as ``undo`` and
                :meth:`change_active`.
        """
        if not self.change_active(progress):
            progress["rollback_outcome"] = not_active
            return
        undo()
        if all(key in progress for key in ("commands", "desired", "ports")) and self.change_active(progress):
            raise PushError("rollback", f"the change is still active after the rollback ({rolled_back})")
        progress["rollback_outcome"] = rolled_back

    def missing(self, desired: str, managed_ports: set[str]) -> list[str]:
        """Read the running configuration; the change it still needs to include ``desired``: its commands
        (its diff lines on JSON-patch platforms), empty when every line of ``desired`` is active.

        Raises:
            netmiko.ReadTimeout, SessionDropped: as :meth:`cmd`; ValueError: as :func:`compute_change`.
        """
        change = compute_change(self.platform, self.read_running(), desired, managed_ports)
        return change.commands or change.diff

    def verify(self, desired: str, managed_ports: set[str]) -> None:
        """Read the running configuration back and check that it includes ``desired``.

        Raises:
            PushError: stage ``"verify"``, with up to 20 diff lines, when the device differs from the plan;
            netmiko.ReadTimeout, SessionDropped: as :meth:`cmd`; ValueError: as :func:`compute_change`.
        """
        after = compute_change(self.platform, self.read_running(), desired, managed_ports)
        if not after.empty:
            raise PushError("verify", "device does not match the plan after the push:\n"
                            + "\n".join(after.diff[:20]))

    def config_set(self, lines: list[str], mode_cmd: str) -> str:
        """Enter config mode with ``mode_cmd`` and send ``lines`` one at a time, each waiting for the
        echo and the prompt (netmiko ``cmd_verify``), so that a stop lands between two lines and a
        rejected line stops the push at that line.

        Raises:
            PushError("send"): a line was rejected (the platform's error pattern).
            Interrupted: a stop was requested before a line was sent.
        """
        self.boundary(mode_cmd)
        with named_timeout(mode_cmd, "send", self.opts.read_timeout_s):
            out = self.conn.config_mode(config_command=mode_cmd)
        for line in lines:
            self.boundary(line)
            with named_timeout(line, "send", self.opts.read_timeout_s):
                got = self.conn.send_config_set([line], enter_config_mode=False, exit_config_mode=False,
                                                read_timeout=self.opts.read_timeout_s, cmd_verify=True)
            out += got
            if re.search(self.method.error_pattern, got, re.MULTILINE):
                break
        self.log(out)
        return _check(self.platform, out, "send", lines)

    def commit_checked(self, command: str, stage: str = "commit") -> str:
        """Send a commit (config mode) and require the platform's ``commit_success`` (a Junos commit is
        also its save to storage, so its ``commit complete`` is checked).

        Raises:
            PushError: the device rejected the commit or did not print the platform's success line.
        """
        out = self.check(self.cmd(command, "commit" if stage == "check" else stage, r"#"), stage, [command])
        if stage != "check" and self.method.commit_success is not None:
            success, shown = self.method.commit_success
            if re.search(success, out):
                return out
            raise PushError(stage, f"`{command}` did not print '{shown}': "
                                   + "; ".join(ln.strip() for ln in out.splitlines() if ln.strip())[-300:])
        return out

    # -- hosts ---------------------------------------------------------------------------------
    def run_host_script(self, script: str, check_only: bool, save: str | None = None) -> tuple[int, str]:
        """Copy and run the host script (``--check`` = read-back only; ``--save FILE`` = write a restore
        point first); returns (exit status, output)."""
        path = f"/tmp/{self.opts.tag}-{secrets.token_hex(6)}.sh"  # unpredictable name in /tmp
        self.upload(path, script)
        mode = " --check" if check_only else (f" --save {shlex.quote(save)}" if save else "")
        out = self.cmd(f"bash {shlex.quote(path)}{mode}; echo ROCE_TUNE_RC=$?; rm -f {shlex.quote(path)}",
                       "run")
        found = re.findall(r"ROCE_TUNE_RC=(\d+)", out)  # the last: the output's, not an echoed command's
        return (int(found[-1]) if found else 255), out
