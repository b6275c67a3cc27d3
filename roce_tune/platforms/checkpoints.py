"""Retention of roce-tune's own configuration checkpoints on a switch (NX-OS ``checkpoint``, SONiC
``config checkpoint``).

Each push takes a uniquely named checkpoint (:func:`new_tag`) before it changes anything. Left alone
they pile up: NX-OS refuses a new user checkpoint once a switch has ten ("You can create up to ten checkpoints
of your configuration per switch", Cisco Nexus 3548 NX-OS System Management Configuration Guide,
"Configuring Rollback", https://www.easymanua.ls/cisco/nexus-3548/manual/683163?p=126) and SONiC keeps every
``/etc/sonic/checkpoints/<name>.cp.json`` on the switch's disk. After a push that succeeded and was read
back, a platform deletes roce-tune's own older checkpoints and keeps the newest :data:`KEEP_CHECKPOINTS`: the
one just taken (the state before this change, for a manual rollback) and the one before it.

Only names roce-tune gives (:data:`OWN_CHECKPOINT_RE`) are ever deleted, never an operator's checkpoint. The
per-platform commands (list, delete, their success) stay in the platform modules; this module holds the
naming and the choice of what to delete.
"""

from __future__ import annotations

import itertools
import re
import secrets
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from roce_tune.platforms.contract import PushSession

#: ``time.strftime`` format of the first part of a push's tag (:func:`new_tag`): date and time to the second.
TAG_FORMAT = "roce_tune_%Y%m%d_%H%M%S"
#: Names roce-tune gives its checkpoints: :func:`new_tag`'s, :data:`TAG_FORMAT` alone (the CLI's form before
#: the sub-second part) and the forms earlier playbooks used (``roce_tune_YYYYmmddHHMMSS`` on NX-OS,
#: ``roce-tune-YYYYmmddHHMMSS`` on SONiC). Groups: date, time, milliseconds (None in the older forms).
OWN_CHECKPOINT_RE = re.compile(r"^roce[_-]tune[_-](\d{8})_?(\d{6})(?:_(\d{3})[0-9a-f]{2})?\Z")
#: the last two hex digits of :func:`new_tag`: a counter starting at a random value per process
_TAG_SUFFIX = itertools.count(secrets.randbelow(256))


def new_tag(now: float | None = None) -> str:
    """A push's tag (checkpoint / configuration-session / commit-comment name), unique per push:
    ``roce_tune_YYYYmmdd_HHMMSS_mmmXX`` in local time, ``mmm`` the milliseconds, ``XX`` two hex digits of a
    per-process counter that starts at a random value. Tags one process makes differ (256 in a row within
    one millisecond); two processes collide only when they start in the same millisecond and draw the same
    counter (1 in 256). 31 characters, within NX-OS's 32-character checkpoint name.

    Whole seconds were not enough: NX-OS refuses a second checkpoint of the same name ("Checkpoint names must
    be unique"), and SONiC's ``config checkpoint`` saves over it without a check (sonic-net/sonic-utilities
    ``generic_config_updater/generic_updater.py`` ``FileSystemConfigRollbacker.checkpoint``), so a second push
    within one second replaced the first push's rollback point.

    Args:
        now: seconds since the epoch (default: now).
    """
    t = time.time() if now is None else now
    second = time.strftime(TAG_FORMAT, time.localtime(t))
    return f"{second}_{int(t * 1000) % 1000:03d}{next(_TAG_SUFFIX) % 256:02x}"


#: roce-tune's own checkpoints kept on a switch after a successful push: the one it just took (the state
#: before the change, for a manual rollback) and the previous one (the state before the push before).
KEEP_CHECKPOINTS = 2


@dataclass(frozen=True)
class CheckpointCommands:
    """How a platform lists and deletes checkpoints (its ``PushMethod.checkpoints``; the Ansible playbooks'
    ``roce_tune_checkpoints`` filter reads it too).

    Attributes:
        list_command: prints every user checkpoint.
        parse: ``list_command``'s output -> the checkpoint names (raises ValueError when it cannot tell).
        delete_command: deletes one; ``{name}`` is the checkpoint's name.
        limit: user checkpoints the device keeps at most (a new one is refused beyond it); None: no limit.
    """

    list_command: str
    parse: Callable[[str], list[str]]
    delete_command: str
    limit: int | None = None


def own_checkpoints(names: Iterable[str]) -> list[str]:
    """roce-tune's own checkpoint names among ``names`` (:data:`OWN_CHECKPOINT_RE`), oldest first (by the
    timestamp in the name, milliseconds included, so old and new name forms sort together; a form without
    milliseconds before a tag of the same second; ties by name)."""
    own = [(m.group(1) + m.group(2), m.group(3) or "", n) for n in names if (m := OWN_CHECKPOINT_RE.match(n))]
    return [n for *_, n in sorted(own)]


def to_prune(names: Iterable[str], current: str | None, keep: int) -> list[str]:
    """roce-tune's own checkpoints to delete so that at most ``keep`` of them remain, ``current`` (the one
    this push took) always among them; oldest first. Operator checkpoints are never returned.

    Args:
        names: every checkpoint name on the device.
        current: this push's checkpoint (kept whatever ``keep`` says), or None.
        keep: own checkpoints to keep, at least 1.

    Raises:
        ValueError: ``keep`` below 1 (the checkpoint just taken is the rollback point).
    """
    if keep < 1:
        raise ValueError(f"keep {keep}: at least the checkpoint just taken must stay (its rollback point)")
    own = own_checkpoints(names)
    others = [n for n in own if n != current]
    room = keep - (1 if current in own else 0)
    return others[:max(0, len(others) - room)]


def prune(names: Iterable[str], current: str | None, keep: int, delete: Callable[[str], str | None],
          warn: Callable[[str], None]) -> list[str]:
    """Delete :func:`to_prune`'s checkpoints one by one with ``delete(name)`` (None on success, else the
    failure in a sentence naming the command); a failure is passed to ``warn`` and the next one is tried.

    Returns:
        The names deleted, oldest first.
    """
    done = []
    for name in to_prune(names, current, keep):
        failure = delete(name)
        if failure is None:
            done.append(name)
        else:
            warn(failure)
    return done


def to_free(names: list[str], limit: int | None) -> list[str] | None:
    """roce-tune's own checkpoints to delete, oldest first, so that one more fits under ``limit``: ``[]``
    when it fits already (or there is no limit), None when too few of ``names`` are roce-tune's (the
    operator's own fill the device: nothing of theirs is ever deleted)."""
    excess = 0 if limit is None else len(names) - (limit - 1)
    if excess <= 0:
        return []
    own = own_checkpoints(names)
    return own[:excess] if len(own) >= excess else None


def limit_error(device: str, names: list[str], limit: int, platform: str, cmds: CheckpointCommands) -> str:
    """The failure for a device whose checkpoints, mostly the operator's, fill ``limit`` (:func:`to_free`
    returned None): names the device, the count and the commands that list and free one."""
    return (f"{device} has {len(names)} user checkpoints, {platform}'s limit of {limit}, and "
            f"{len(own_checkpoints(names))} of them are roce-tune's: this push cannot take its checkpoint, "
            f"so nothing was changed. Free one with `{cmds.delete_command.format(name='<name>')}` (list "
            f"them with `{cmds.list_command}`)")


def prune_after_push(s: PushSession, cmds: CheckpointCommands, progress: dict[str, object]) -> None:
    """A platform's cleanup step after a push that succeeded: list the device's checkpoints
    (``cmds.list_command``), delete roce-tune's own beyond the newest ``s.opts.keep_checkpoints``
    (:func:`prune`; the one this push took, ``progress["tag"]``, always stays) and add the deleted names to
    ``progress["pruned"]`` for the apply report. Nothing happens when the push took no checkpoint.

    A refused delete becomes a warning (``s.warn``) naming the device and the command; the push stands.

    Raises:
        PushError: the listing itself was refused (the driver's cleanup turns it into a warning too).
    """
    if not progress.get("checkpoint"):
        return
    listing = s.check(s.cmd(cmds.list_command, "cleanup"), "cleanup", [cmds.list_command])

    def delete(name: str) -> str | None:
        command = cmds.delete_command.format(name=name)
        try:
            s.check(s.cmd(command, "cleanup"), "cleanup", [command])
        except Exception as exc:  # noqa: BLE001 — housekeeping: reported as a warning, the push stands
            return f"{s.device or 'the switch'}: `{command}` failed ({exc}); delete it by hand"
        return None

    pruned = prune(cmds.parse(listing), str(progress.get("tag", s.opts.tag)), s.opts.keep_checkpoints, delete,
                   s.warn)
    progress["pruned"] = [*progress.get("pruned", []), *pruned]  # type: ignore[misc]
