"""Per-platform push flows over netmiko: read running config, compute the change, push with the
platform's safe mechanism, read back, confirm — or roll back and say why.

Safe mechanism per platform (docs/derivation.md#platform-syntax):

========  ===============================================================================
eos       ``configure session`` → ``commit timer`` → read back → ``configure session X commit``;
          failure: ``abort`` (before commit) / ``configure session X abort`` (reverts the timer commit)
nxos      ``checkpoint`` → config → read back; failure: ``rollback running-config checkpoint X atomic``
junos     ``configure private`` → ``commit check`` → ``commit confirmed N`` → read back → ``commit``;
          failure: discard, or ``rollback 1`` + ``commit`` after the confirmed commit
cumulus   ``nv set``/``nv unset`` → ``nv config apply -y --confirm Ns`` → read back →
          ``nv config apply --confirm-yes``; failure: ``--confirm-no`` / ``nv config detach``
sonic     ``config checkpoint`` → ``config apply-patch`` → read back; failure: ``config rollback``
host      copy the script, run it with ``--save`` (it first writes a restore script with every value
          it is about to change); its own read-back check (exit status) decides;
          failure: run the restore script
========  ===============================================================================

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
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from roce_tune.deploy.diff import DIFF_RULES, ConfigChange, hier_diff, json_diff, set_diff

#: exit status of a host restore point that ran but had values it could not read before the change
RESTORE_INCOMPLETE_RC = "3"
#: how to read the relevant running configuration (platform data)
READ_RUNNING = {
    "eos": "show running-config",
    "nxos": "show running-config",
    "junos": "show configuration | display set",
    "cumulus": "nv config show -o commands",
    "sonic": "show runningconfiguration all",
}
#: errors a platform prints for a rejected command
ERROR_PATTERNS = {
    "eos": r"% ?(Invalid|Incomplete|Ambiguous|Error)",
    "nxos": r"% ?(Invalid|Incomplete|Ambiguous)|ERROR:",
    "junos": r"(syntax error|unknown command|error:)",
    "cumulus": r"(?i)^\s*(error|invalid)",
    "sonic": r"(?i)(^|\n)\s*(error|failed)",
    "host": r"$^",
}
#: after confirming: (command, regex meaning "the commit is still waiting for confirmation")
CONFIRM_CHECK = {
    "eos": ("show configuration sessions detail", r"pendingCommitTimer"),
    "junos": ("show system commit", r"(?m)^0\s.*commit confirmed, rollback in"),
    "cumulus": ("nv config apply --confirm-status", r"(?i)(time left|remaining|pending confirm[^a-z]*\d)"),
}
#: how each platform persists the running configuration: (command, regex its success prints). Junos has
#: no separate save: a commit writes the committed configuration to storage (its "commit complete" is
#: checked); Cumulus NVUE >= 5.9 saves on apply by default, older releases need ``nv config save``, which is
#: harmless on newer ones. Linux-shell platforms are judged by the command's exit status.
SAVE = {
    "eos": ("write memory", r"(?m)^Copy completed successfully\.?\s*$"),
    "nxos": ("copy running-config startup-config", r"(?m)^Copy complete\.\s*$"),
    "cumulus": ("nv config save; echo ROCE_TUNE_RC=$?", r"ROCE_TUNE_RC=0\b"),
    "sonic": ("sudo config save -y; echo ROCE_TUNE_RC=$?", r"ROCE_TUNE_RC=0\b"),
}
#: stages whose commands may run long (commit, save, rollback, the host script); the others are shows
#: and single config lines, which a live device answers at once
LONG_STAGES = frozenset({"commit", "confirm", "save", "rollback", "run", "checkpoint"})
#: stages whose command makes a push final: no stop is honoured after it is sent (the device finishes)
FINAL_STAGES = ("confirm", "save", "cleanup")
NETMIKO_TYPES = {"eos": "arista_eos", "nxos": "cisco_nxos", "junos": "juniper_junos",
                 "cumulus": "cumulus_linux", "sonic": "linux", "host": "linux"}


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
        tag: checkpoint / session / commit-comment name of this run.
    """

    confirm_s: int = 300
    save: bool = True
    read_timeout_s: float = 30.0
    commit_timeout_s: float = 300.0
    keepalive_s: float = 10.0
    rollback_retry_s: float = 120.0
    tag: str = field(default_factory=lambda: time.strftime("roce_tune_%Y%m%d_%H%M%S"))


def _is_marker(line: str) -> bool:
    """A caret line (``      ^``) pointing at the bad token."""
    return bool(line.strip()) and set(line.strip()) <= {"^", "~"}


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
        out = inner()
        if not out:
            chan = getattr(conn, "remote_conn", None)
            transport = getattr(chan, "transport", None)
            if chan is not None and hasattr(chan, "closed") and (
                    chan.closed or chan.eof_received or transport is None or not transport.is_active()):
                raise SessionDropped(f"SSH session to {getattr(conn, 'host', '?')}:{getattr(conn, 'port', '?')} "
                                     "closed by the device or the network")
        return out

    conn.read_channel = read_channel
    conn._roce_tune_watched = True


def left_as_is(platform: str, phase: str, progress: dict[str, Any], opts: PushOptions) -> str:
    """What a device abandoned by an aborted run is left in, and the command that puts it back.

    Args:
        platform: eos, nxos, junos, cumulus, sonic or host.
        phase: the driver's ``phase`` (read, push, rollback, finish, done).
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
    head = "its rollback was cut short" if phase == "rollback" else "stopped mid-push"
    minutes = max(1, round(opts.confirm_s / 60))
    if platform == "eos" and progress.get("committed"):
        what = (f"committed with a commit timer: EOS reverts it by itself within {opts.confirm_s} s; "
                f"to revert now: `configure session {tag} abort`")
    elif platform == "eos":
        what = f"running config unchanged; the uncommitted session {tag} may be left: `no configure session {tag}`"
    elif platform == "nxos" and progress.get("checkpoint"):
        what = (f"may be half-configured (NX-OS has no commit-confirm); to revert: "
                f"`rollback running-config checkpoint {tag} atomic`")
    elif platform == "junos" and progress.get("committed"):
        what = (f"committed with `commit confirmed {minutes}`: Junos reverts it by itself within {minutes} min; "
                "to revert now: `rollback 1` and `commit` in `configure private`")
    elif platform == "junos":
        what = "nothing committed: the private candidate is discarded when the session closes"
    elif platform == "cumulus" and progress.get("applied"):
        what = (f"applied with `--confirm {opts.confirm_s}s`: NVUE reverts it by itself unless confirmed; "
                "to revert now: `nv config apply --confirm-no`")
    elif platform == "cumulus":
        what = ("partial `nv set`s may sit in the pending revision (the next `nv config apply` by anyone applies "
                "them): `nv config detach`")
    elif platform == "sonic" and progress.get("checkpoint"):
        what = f"the patch may be applied (SONiC has no commit-confirm); to revert: `sudo config rollback {tag}`"
    elif platform == "host" and progress.get("restore"):
        what = (f"values may be changed (hosts have no commit-confirm); to revert: "
                f"`bash {shlex.quote(progress['restore'])}` on the host (if it exists, it was written before any change)")
    else:
        what = "nothing changed yet"
    return f"{head}; {what}"


def _strip_nvue(text: str) -> str:
    return "\n".join(ln for ln in text.splitlines() if ln.strip().startswith("nv "))


def compute_change(platform: str, running: str, desired: str, managed_ports: set[str]) -> ConfigChange:
    """Change that takes ``running`` to include ``desired`` (per-platform diff kind).

    Raises:
        ValueError: running/desired JSON (SONiC) does not parse.
    """
    rules = DIFF_RULES[platform]
    if rules.kind == "hier":
        return hier_diff(rules, running, desired)
    if rules.kind == "set":
        if platform == "cumulus":
            return set_diff(rules, _strip_nvue(running), _strip_nvue(desired))
        return set_diff(rules, running, desired)
    return json_diff(rules, _sonic_db(running), json.loads(desired), managed_ports)


def _sonic_db(text: str) -> dict[str, Any]:
    start = text.find("{")
    if start < 0:
        raise ValueError("no CONFIG_DB JSON in the device output")
    return json.loads(text[start:text.rfind("}") + 1])


def _heredoc(path: str, content: str, append: bool = False) -> str:
    marker = "ROCE_TUNE_EOF"
    if marker in content:
        raise PushError("send", "content contains the heredoc marker")
    return f"cat {'>>' if append else '>'} {shlex.quote(path)} <<'{marker}'\n{content.rstrip()}\n{marker}"


class Driver:
    """One device's flow. ``conn`` is a connected netmiko session; ``log`` records steps."""

    def __init__(self, platform: str, conn: Any, opts: PushOptions, log: Callable[[str], None],
                 should_stop: Callable[[], str | None] | None = None,
                 on_restore_point: Callable[[str], None] | None = None):
        """``should_stop()`` returns the name of a requested stop (``SIGINT``) or None; it is asked at each
        command boundary of a push. ``on_restore_point(text)`` receives a host's restore script as soon
        as it is read back (so a local copy exists even if the run is aborted)."""
        self.restore_point = ""  # host: the restore script the last push_host wrote (as found before it)
        self.platform, self.conn, self.opts, self.log = platform, conn, opts, log
        self.should_stop, self.on_restore_point = should_stop, on_restore_point
        self.progress: dict[str, Any] = {}
        watch_session(conn)
        #: read (diff/dry run), push (stoppable), rollback (not stoppable), finish (past the final
        #: command), done
        self.phase = "read"

    def timeout(self, stage: str) -> float:
        """Read timeout (s) for a command of ``stage``: long for commit/save/rollback/host script."""
        return self.opts.commit_timeout_s if stage in LONG_STAGES else self.opts.read_timeout_s

    def _boundary(self, command: str) -> None:
        """Raise :class:`Interrupted` when a stop was requested and the push may still roll back."""
        if self.phase == "push" and self.should_stop is not None:
            signal = self.should_stop()
            if signal:
                raise Interrupted(signal, command)

    # -- reading ---------------------------------------------------------------------------
    def cmd(self, command: str, stage: str = "read", expect_string: str | None = None, boundary: bool = True) -> str:
        """Send one exec-mode command, log its output (redacted by the caller's logger) and return it.
        During a push the command is a stop boundary (unless ``boundary`` is False); a command of a
        :data:`FINAL_STAGES` stage is the last one.

        Raises:
            netmiko.ReadTimeout: no prompt (or ``expect_string``) within :meth:`timeout` of ``stage``.
            SessionDropped: the session closed while waiting.
            Interrupted: a stop was requested before the command was sent.
        """
        if boundary:
            self._boundary(command)
        if stage in FINAL_STAGES and self.phase == "push":
            self.phase = "finish"
        kwargs: dict[str, Any] = {"read_timeout": self.timeout(stage)}
        if expect_string:
            kwargs["expect_string"] = expect_string
        out = self.conn.send_command(command, **kwargs)
        self.log(f"$ {command}\n{out}")
        return out

    def read_running(self) -> str:
        """The relevant running configuration, as the platform prints it."""
        return self.cmd(READ_RUNNING[self.platform])

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
            self._boundary(f"cat >> {path}")
            self.conn.write_channel(_heredoc(path, "\n".join(chunk), append=i > 0) + "\n")
            self.conn.read_until_prompt(read_timeout=self.opts.read_timeout_s)
        self.log(f"$ cat > {path} <<'ROCE_TUNE_EOF' ... ({len(content)} bytes in {len(chunks)} chunk(s))")

    # -- pushing -------------------------------------------------------------------------------
    def push(self, change: ConfigChange, desired: str, managed_ports: set[str]) -> None:
        """Apply ``change`` safely; on any failure roll back and re-raise.

        ``self.progress`` records how far the push got (checkpoint taken, session open, committed),
        so a rollback can also run on a *new* session after the first one died.

        Raises:
            PushError / netmiko errors: the push failed and the rollback on this session succeeded.
            RollbackNeeded: the push failed and this session could not roll back (e.g. dropped).
        """
        self._guarded(lambda: getattr(self, f"_push_{self.platform}")(change, desired, managed_ports))
        if self.opts.save:
            self.save()

    def save(self) -> None:
        """Persist the confirmed running configuration (:data:`SAVE`); Junos has no separate save.

        Raises:
            SaveError: the device refused or did not confirm the save (the change stays live, unsaved).
        """
        if self.platform not in SAVE:
            return
        command, success = SAVE[self.platform]
        out = self.cmd(command, "save", r"#" if self.platform in ("eos", "nxos") else None)
        shown = command.split(";")[0]
        found = rejected_command(self.platform, out, [shown])
        status = re.findall(r"ROCE_TUNE_RC=(\d+)", out)  # the last: the output's, not an echoed command's
        ok = (status[-1] == "0") if "ROCE_TUNE_RC" in command and status else bool(re.search(success, out))
        if found is not None or not ok:
            detail = [ln.strip() for ln in out.splitlines()
                      if ln.strip() and "ROCE_TUNE_RC" not in ln and not ln.rstrip().endswith(shown)]
            raise SaveError(shown, found[1] if found else ("; ".join(detail[-3:]) or "no confirmation printed"))

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
            except RollbackIncomplete as inc:
                raise RollbackIncomplete(exc, inc.detail) from exc
            except Exception as rb_exc:  # noqa: BLE001
                raise RollbackNeeded(exc, dict(self.progress)) from rb_exc
            raise

    def rollback(self, progress: dict[str, Any]) -> None:
        """Undo a partial push described by ``progress`` (works on a fresh session too)."""
        tag = progress.get("tag", self.opts.tag)
        if self.platform == "host":
            self._rollback_host(progress)
            return
        if self.platform != "sonic" and self.conn.check_config_mode():
            if self.platform == "eos" and not progress.get("committed"):
                self.conn.send_command("abort", expect_string=r"#")  # discard the open session
            elif self.platform == "junos" and not progress.get("committed"):
                self.conn.send_command("rollback 0", expect_string=r"#")
                self.conn.exit_config_mode()
            else:
                self.conn.exit_config_mode()
        if self.platform == "eos" and progress.get("session"):
            self.cmd(f"configure session {tag} abort", "rollback", r"#")
        elif self.platform == "nxos" and progress.get("checkpoint"):
            _check("nxos", self.cmd(f"rollback running-config checkpoint {tag} atomic", "rollback"), "rollback")
        elif self.platform == "junos" and progress.get("committed"):
            self.conn.config_mode(config_command="configure private")
            self.conn.send_command("rollback 1", expect_string=r"#")
            _check("junos", self.conn.send_command(f"commit comment {tag}-rollback", expect_string=r"#",
                                                   read_timeout=self.timeout("rollback")), "rollback")
            self.conn.exit_config_mode()
        elif self.platform == "cumulus":
            if progress.get("applied"):
                self.cmd("nv config apply --confirm-no", "rollback")
            self.cmd("nv config detach", "rollback")
        elif self.platform == "sonic" and progress.get("checkpoint"):
            _check("sonic", self.cmd(f"sudo config rollback {tag}", "rollback"), "rollback")

    def _rollback_host(self, progress: dict[str, Any]) -> None:
        """Run the restore point the host script wrote; none means it stopped before changing anything."""
        restore = progress.get("restore")
        if not restore:
            return
        q = shlex.quote(restore)
        # the status is printed as ROCE_TUNE_RC=<n> or =nofile; the command text itself says no''file, so
        # an echoed command line can never be read as an outcome (and the last match is the output's)
        out = self.cmd(f"if [ -f {q} ]; then bash {q}; echo ROCE_TUNE_RC=$?; else echo ROCE_TUNE_RC=no''file; fi",
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

    def _confirmed(self) -> None:
        """Raise if the device still waits for a confirmation (a lost confirm would roll back later)."""
        command, pending = CONFIRM_CHECK[self.platform]
        if re.search(pending, self.cmd(command, "confirm")):
            raise PushError("confirm", "the confirmation did not take; the device still waits for one")

    def _verify(self, desired: str, managed_ports: set[str]) -> None:
        after = compute_change(self.platform, self.read_running(), desired, managed_ports)
        if not after.empty:
            raise PushError("verify", "device does not match the plan after the push:\n" + "\n".join(after.diff[:20]))

    def _config_set(self, lines: list[str], mode_cmd: str) -> str:
        """Enter config mode with ``mode_cmd`` and send ``lines`` one at a time, each waiting for the
        echo and the prompt (netmiko ``cmd_verify``), so that a stop lands between two lines and a
        rejected line stops the push at that line.

        Raises:
            PushError("send"): a line was rejected (the platform's error pattern).
            Interrupted: a stop was requested before a line was sent.
        """
        self._boundary(mode_cmd)
        out = self.conn.config_mode(config_command=mode_cmd)
        for line in lines:
            self._boundary(line)
            got = self.conn.send_config_set([line], enter_config_mode=False, exit_config_mode=False,
                                            read_timeout=self.opts.read_timeout_s, cmd_verify=True)
            out += got
            if re.search(ERROR_PATTERNS[self.platform], got, re.MULTILINE):
                break
        self.log(out)
        return _check(self.platform, out, "send", lines)

    def _commit(self, command: str, stage: str = "commit") -> str:
        """Send a Junos commit (config mode) and require its ``commit complete``: a Junos commit is also
        its save to storage."""
        out = _check("junos", self.cmd(command, "commit" if stage == "check" else stage, r"#"), stage, [command])
        if stage != "check" and not re.search(r"(?m)^commit complete\s*$", out):
            raise PushError(stage, f"`{command}` did not print 'commit complete': "
                                   + "; ".join(ln.strip() for ln in out.splitlines() if ln.strip())[-300:])
        return out

    def _push_eos(self, change: ConfigChange, desired: str, ports: set[str]) -> None:
        session = self.opts.tag
        self.progress["session"] = True
        self._config_set(change.commands, f"configure session {session}")
        self.cmd("show session-config diffs", "diff", r"#")
        hms = time.strftime("%H:%M:%S", time.gmtime(self.opts.confirm_s))
        _check("eos", self.cmd(f"commit timer {hms}", "commit", r"#"), "commit", [f"commit timer {hms}"])
        self.progress["committed"] = True
        self.cmd("end", "commit", r"#")
        self._verify(desired, ports)
        confirm = f"configure session {session} commit"
        _check("eos", self.cmd(confirm, "confirm", r"#"), "confirm", [confirm])
        self._confirmed()

    def _push_nxos(self, change: ConfigChange, desired: str, ports: set[str]) -> None:
        self.cmd("terminal dont-ask", "checkpoint")
        _check("nxos", self.cmd(f"checkpoint {self.opts.tag}", "checkpoint"), "checkpoint",
               [f"checkpoint {self.opts.tag}"])
        self.progress["checkpoint"] = True
        self._config_set(change.commands, "configure terminal")
        self.conn.exit_config_mode()
        self._verify(desired, ports)

    def _push_junos(self, change: ConfigChange, desired: str, ports: set[str]) -> None:
        minutes = max(1, round(self.opts.confirm_s / 60))
        self._config_set(change.commands, "configure private")
        self.cmd("show | compare", "diff", r"#")
        self._commit("commit check", "check")
        self._commit(f"commit confirmed {minutes} comment {self.opts.tag}")
        self.progress["committed"] = True
        self.conn.exit_config_mode()
        self._verify(desired, ports)
        self._boundary("configure private")
        self.conn.config_mode(config_command="configure private")
        self._commit("commit comment confirmed", "confirm")
        self.conn.exit_config_mode()
        self._confirmed()

    def _push_cumulus(self, change: ConfigChange, desired: str, ports: set[str]) -> None:
        for line in change.commands:
            _check("cumulus", self.cmd(line, "send"), "send", [line])
        self.cmd("nv config diff", "diff")
        self.progress["applied"] = True  # set first: a drop during apply may still have applied
        apply = f"nv config apply -y --confirm {self.opts.confirm_s}s"
        _check("cumulus", self.cmd(apply, "commit"), "commit", [apply])
        self._verify(desired, ports)
        _check("cumulus", self.cmd("nv config apply --confirm-yes", "confirm"), "confirm",
               ["nv config apply --confirm-yes"])
        self._confirmed()

    def _push_sonic(self, change: ConfigChange, desired: str, ports: set[str]) -> None:
        path = f"/tmp/{self.opts.tag}-{secrets.token_hex(6)}.patch.json"  # unpredictable name in /tmp
        checkpoint = f"sudo config checkpoint {self.opts.tag}"
        _check("sonic", self.cmd(checkpoint, "checkpoint"), "checkpoint", [checkpoint])
        self.progress["checkpoint"] = True
        self.upload(path, json.dumps(change.patch, indent=1, sort_keys=True))
        _check("sonic", self.cmd(f"sudo config apply-patch {path}", "commit"), "commit",
               [f"sudo config apply-patch {path}"])
        self._verify(desired, ports)

    # -- hosts ---------------------------------------------------------------------------------
    def run_host_script(self, script: str, check_only: bool, save: str | None = None) -> tuple[int, str]:
        """Copy and run the host script (``--check`` = read-back only; ``--save FILE`` = write a restore
        point first); returns (exit status, output)."""
        path = f"/tmp/{self.opts.tag}-{secrets.token_hex(6)}.sh"  # unpredictable name in /tmp
        self.upload(path, script)
        mode = " --check" if check_only else (f" --save {shlex.quote(save)}" if save else "")
        out = self.cmd(f"bash {shlex.quote(path)}{mode}; echo ROCE_TUNE_RC=$?; rm -f {shlex.quote(path)}", "run")
        found = re.findall(r"ROCE_TUNE_RC=(\d+)", out)  # the last: the output's, not an echoed command's
        return (int(found[-1]) if found else 255), out
