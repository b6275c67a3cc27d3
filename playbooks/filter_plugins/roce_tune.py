"""Ansible filters that reuse roce-tune's own diff engine on the controller (no second diff logic).

``running | roce_tune_change(platform, desired)`` returns ``{"commands": [...], "patch": [...],
"diff": [...], "disruptive": [...]}`` exactly as ``roce-tune apply`` computes it
(:func:`roce_tune.deploy.drivers.compute_change`): Junos ``set``/``delete`` lines, NVUE ``nv set``/``nv
unset`` lines, or a SONiC RFC 6902 patch restricted to what roce-tune renders. Needs ``roce-tune``
importable by the Python that runs ansible-playbook (it is: the controller ran ``roce-tune plan``).

``out_dir | roce_tune_plan_error`` is why the plan directory must not be pushed (edited after the plan, a
file missing or not listed in ``SHA256SUMS``), or ``""``: the check ``roce-tune apply`` makes.
``out_dir | roce_tune_inventory_error(inventory, base_dir)`` is why it must not be pushed for that inventory file (its
plan.json was planned from another inventory, or from this one before an edit), or ``""``.

``listing | roce_tune_checkpoints(platform, device, current, keep)`` reads the output of the platform's
checkpoint listing (NX-OS ``show checkpoint summary``, SONiC ``config list-checkpoints``) and returns
``{"names": [...], "free": [...], "error": "", "prune": [...]}``: roce-tune's oldest own checkpoints to delete
before a new one fits under the device's limit (``error`` when the operator's own fill it), and those to
delete after a successful push so that ``keep`` of roce-tune's remain, ``current`` among them: the retention
``roce-tune apply`` applies (:mod:`roce_tune.platforms.checkpoints`). Never an operator's checkpoint.

``now() | roce_tune_new_tag`` is the name of this push's checkpoint, ``roce_tune_YYYYmmdd_HHMMSS_mmmXX`` (the
time given, its milliseconds and a per-process counter): the tag ``roce-tune apply`` gives its pushes
(:func:`roce_tune.platforms.checkpoints.new_tag`), unique per push, so two runs within a second keep two
checkpoints. Set it once per run (``set_fact``): each templating makes a new one.

``retry_s | roce_tune_backoff`` is the pause in seconds before each attempt to reconnect and roll back a
device whose connection was lost mid-push: ``roce-tune apply``'s schedule (``rollback_retry_s``).

``running | roce_tune_sonic_writes(patch, tag)`` (SONiC) turns the change into the CONFIG_DB writes
``roce-tune apply`` makes instead of ``config apply-patch`` (which GCU's field-operation validators refuse):
``{"snapshot": [[table, key, row], ...], "files": [{"path": ..., "content": ...}], "commands": [...]}``,
the snapshot of every key the patch touches (what a rollback restores), the JSON files to upload
(unpredictable names in /tmp) and the ``sonic-cfggen -j FILE --write-to-db`` / ``sonic-db-cli CONFIG_DB
DEL|HDEL`` commands in order (:func:`roce_tune.platforms.sonic.touched_rows`,
:func:`~roce_tune.platforms.sonic.db_steps`).
``running | roce_tune_sonic_restore(snapshot, tag)`` is the same for the writes back to the snapshot from the
CONFIG_DB read now, and ``running | roce_tune_sonic_unrestored(snapshot)`` lists the keys still differing
from it (``[]``: restored).

``platform | roce_tune_probe_commands`` lists the read-only commands ``roce-tune apply`` runs on a device of
``platform`` before any change to tell whether its push method works there at all (SONiC: whether the image
has ``config checkpoint``), each as sent (with its exit status echoed); ``[]`` for a platform without such a
probe. ``running | roce_tune_preflight(platform, desired, probed, out_dir, device)`` is why apply refuses
the device before any write, dry runs included, or ``""``: the platform's preflight (the running config
against the rendered file and the plan's port speeds, e.g. SONiC's buffer model and port speeds; the speeds
of ``device`` are read from ``plan.json`` of the plan directory ``out_dir`` after its ``SHA256SUMS`` check,
only for a platform with a preflight) and then its probe, read from ``probed`` (the results of running those
commands: ``[{"item": command, "stdout": output}, ...]``, as a ``raw``, ``cli_command`` or ``junos_command``
loop registers them).

``change | roce_tune_held_back(allow)`` is why ``roce-tune apply`` holds a switch's change back (its platform
marks it disruptive: a SONiC buffer-pool resize, a Junos congestion-notification-profile bind, PFC turned on
a port...) unless allowed (``-e roce_tune_allow_disruptive=true``, apply's ``--allow-disruptive``), or ``""``.

``data | roce_tune_host_bundle(shared)`` joins a host's data file and the shared host script into the one
script that runs on the host (as ``roce-tune apply`` does).
"""

from __future__ import annotations

import json
from typing import Any


def _managed_ports(desired: str) -> set[str]:
    """SONiC: ports named by the desired CONFIG_DB (PORT keys and the ``Ethernet0|3`` key prefixes)."""
    db = json.loads(desired)
    ports = set(db.get("PORT", {}))
    for rows in db.values():
        if isinstance(rows, dict):
            ports.update(k.split("|", 1)[0] for k in rows if "|" in k)
    return ports


def roce_tune_change(running: str, platform: str, desired: str) -> dict[str, Any]:
    """The change that takes ``running`` (device output) to include ``desired`` (rendered file text)."""
    from roce_tune.deploy.drivers import compute_change

    ports = _managed_ports(desired) if platform == "sonic" else set()
    change = compute_change(platform, running, desired, ports)
    return {"commands": list(change.commands), "patch": list(change.patch), "diff": list(change.diff),
            "disruptive": list(change.disruptive)}


#: how a playbook run allows a disruptive change (``roce-tune apply --allow-disruptive``)
ALLOW_DISRUPTIVE = "-e roce_tune_allow_disruptive=true"


def roce_tune_held_back(change: dict[str, Any], allow_disruptive: bool | str = False) -> str:
    """Why the change ``change`` (:func:`roce_tune_change`'s result) is held back, as ``roce-tune apply``
    holds it back (:meth:`roce_tune.deploy.diff.ConfigChange.held_back`): ``disruptive change needs -e
    roce_tune_allow_disruptive=true: <reasons>``, or ``""`` when it is hitless or ``allow_disruptive`` (then
    push.yml pushes the switch in its one-at-a-time play). ``allow_disruptive``: a bool or Ansible's
    ``true``/``yes``/``1``/``false``/``no``/``0`` (anything else raises ValueError: a typo never allows)."""
    from roce_tune.deploy.diff import ConfigChange

    allowed = _truth(allow_disruptive, "roce_tune_allow_disruptive")
    held = ConfigChange(commands=list(change.get("commands", [])), patch=list(change.get("patch", [])),
                        disruptive=list(change.get("disruptive", []))).held_back(allowed, ALLOW_DISRUPTIVE)
    return held or ""


def _truth(value: bool | str, name: str) -> bool:
    """``value`` as a bool: a bool, or (any case) true/yes/on/1, false/no/off/0; ValueError otherwise."""
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in ("true", "yes", "on", "1"):
        return True
    if text in ("false", "no", "off", "0", ""):
        return False
    raise ValueError(f"{name}={value!r}: give true or false")


def _sonic_writes(steps: list[Any], snapshot: list[list[Any]], tag: str, what: str) -> dict[str, Any]:
    import secrets

    from roce_tune.platforms.sonic import shell_steps

    run = shell_steps(steps, f"/tmp/{tag}-{secrets.token_hex(6)}", what)
    return {"snapshot": snapshot, "commands": [c for c, _, _ in run],
            "files": [{"path": p, "content": t} for _, p, t in run if p is not None]}


def roce_tune_sonic_writes(running: str, patch: list[dict[str, Any]], tag: str) -> dict[str, Any]:
    """SONiC: the snapshot, files and commands that apply ``patch`` (computed from ``running``, the output
    of ``show runningconfiguration all``) as ``roce-tune apply`` does. Raises ValueError when the patch does
    not apply to ``running``."""
    from roce_tune.platforms.sonic import config_db, db_steps, touched_rows

    before, after = touched_rows(config_db(running), patch)
    return _sonic_writes(db_steps(before, after), [[t, k, row] for (t, k), row in before.items()], tag,
                         "write")


def roce_tune_sonic_restore(running: str, snapshot: list[list[Any]], tag: str) -> dict[str, Any]:
    """SONiC: the files and commands that take the CONFIG_DB read now (``running``) back to ``snapshot``
    (from :func:`roce_tune_sonic_writes`), as ``roce-tune apply``'s rollback does."""
    from roce_tune.platforms.sonic import config_db, db_steps, snapshot_rows

    rows, now = snapshot_rows(snapshot), config_db(running)
    current = {(t, k): now.get(t, {}).get(k) for t, k in rows}
    return _sonic_writes(db_steps(current, rows), snapshot, tag, "restore")


def roce_tune_sonic_unrestored(running: str, snapshot: list[list[Any]]) -> list[str]:
    """SONiC: ``TABLE|key`` of every snapshot row the CONFIG_DB read back (``running``) does not hold."""
    from roce_tune.platforms.sonic import config_db, snapshot_differences, snapshot_rows

    return snapshot_differences(config_db(running), snapshot_rows(snapshot))


def roce_tune_checkpoints(listing: str, platform: str, device: str, current: str = "",
                          keep: int | str | None = None) -> dict[str, Any]:
    """What to delete around a push (see the module docstring). ``keep`` defaults to roce-tune's
    ``KEEP_CHECKPOINTS`` (2); ``current`` is empty before the push's checkpoint is taken."""
    from roce_tune.platforms import platform as get_platform
    from roce_tune.platforms.checkpoints import KEEP_CHECKPOINTS, limit_error, to_free, to_prune

    cmds = get_platform(platform).push.checkpoints
    if cmds is None:
        raise ValueError(f"{platform} takes no checkpoints")
    names = cmds.parse(listing)
    free = to_free(names, cmds.limit)
    error = "" if free is not None or cmds.limit is None else limit_error(device, names, cmds.limit, platform,
                                                                         cmds)
    return {"names": names, "free": free or [], "error": error,
            "prune": to_prune(names, current or None, int(keep if keep is not None else KEEP_CHECKPOINTS))}


def roce_tune_new_tag(now: Any = None) -> str:
    """A push's checkpoint name, unique per push (:func:`roce_tune.platforms.checkpoints.new_tag`). ``now``:
    Ansible's ``now()`` (a local ``datetime``) or seconds since the epoch; None: the current time. Raises
    ValueError for anything else."""
    from datetime import datetime

    from roce_tune.platforms.checkpoints import new_tag

    if now is None or isinstance(now, (int, float)):
        return new_tag(now)
    if isinstance(now, datetime):
        return new_tag(now.timestamp())
    raise ValueError(f"roce_tune_new_tag: {now!r} is no time: give now() or seconds since the epoch")


def roce_tune_probe_commands(platform: str) -> list[str]:
    """The read-only commands ``platform``'s probe runs (``PushMethod.probe``), in order, exactly as apply
    sends them; ``[]`` when the platform has no probe. Found by running the probe with a recorder that answers
    every command with no output (a probe's commands do not depend on the answers)."""
    from roce_tune.platforms import platform as get_platform

    probe = get_platform(platform).push.probe
    sent: list[str] = []

    def record(command: str) -> str:
        sent.append(command)
        return ""

    if probe is not None:
        probe(record)
    return sent


def _probe_output(result: dict[str, Any]) -> str:
    """The text one probe command printed, from its registered loop result: ``raw``'s ``stdout`` (and
    ``stderr``, which a session without a pty keeps apart; apply's terminal shows both), ``cli_command``'s
    ``stdout`` or ``junos_command``'s one-element ``stdout`` list; ``""`` for a skipped item."""
    out = result.get("stdout", "")
    text = "\n".join(str(o) for o in out) if isinstance(out, list) else str(out)
    err = str(result.get("stderr") or "")
    return f"{text}\n{err}" if err.strip() else text


def roce_tune_preflight(running: str, platform: str, desired: str,
                        probed: list[dict[str, Any]] | None = None, out_dir: str | None = None,
                        device: str | None = None) -> str:
    """Why ``roce-tune apply`` would refuse this device before any write (dry runs too), or ``""``: the
    platform's preflight of ``running`` (the device's running config) against ``desired`` (the rendered
    file) and the plan's port speeds of switch ``device`` (:func:`_plan_port_speeds` of ``out_dir``, read
    only when the platform has a preflight; without ``out_dir``/``device`` only the files are judged), then
    its probe answered from ``probed`` (loop results over :func:`roce_tune_probe_commands`: ``item`` the
    command, ``stdout`` its output, :func:`_probe_output`; skipped items are ignored and a command without
    a result reads as no output): :meth:`roce_tune.platforms.contract.PushMethod.refusal`, as apply asks it.
    Raises ValueError when ``running`` or ``desired`` cannot be read, or the plan directory holds no intact
    plan with switch ``device``."""
    from roce_tune.platforms import platform as get_platform

    outputs = {str(r.get("item")): _probe_output(r) for r in probed or [] if not r.get("skipped")}
    method = get_platform(platform).push
    speeds = (_plan_port_speeds(out_dir, device)
              if method.preflight is not None and out_dir and device else None)
    return method.refusal(running, desired, lambda command: outputs.get(command, ""), speeds) or ""


def _plan_port_speeds(out_dir: str, device: str) -> dict[str, int]:
    """The plan's speed of each port of switch ``device`` in Mb/s (``{"Ethernet0": 400000, ...}``), read from
    ``plan.json`` of the plan directory ``out_dir`` once its files match ``SHA256SUMS``
    (:func:`roce_tune.pipeline.read_plan_dir`): what ``roce-tune apply`` hands the preflight
    (:attr:`roce_tune.deploy.runner.Target.port_speeds_mbps`), since a rendered file need not state them.
    Raises ValueError naming the directory when it holds no intact plan, or the plan has no switch
    ``device``."""
    from pathlib import Path

    from roce_tune.deploy.runner import Target
    from roce_tune.pipeline import read_plan_dir
    from roce_tune.plandir import PlanDirError

    try:
        plan = read_plan_dir(Path(out_dir), require_device_files=False).plan
    except (PlanDirError, OSError) as exc:
        raise ValueError(f"roce_tune_preflight: {exc}") from None
    switch = next((sw for sw in plan.switches if sw.name == device), None)
    if switch is None:
        raise ValueError(f"roce_tune_preflight: the plan in {out_dir} has no switch {device!r}: run "
                         "`roce-tune plan` and `roce-tune ansible-inventory` again from the same inventory")
    return Target.of_switch(switch).port_speeds_mbps


def roce_tune_host_bundle(data: str, shared: str) -> str:
    """One self-contained host script from a host's data file and the shared host script, exactly as
    ``roce-tune apply`` sends it (:func:`roce_tune.platforms.host.bundle`)."""
    from roce_tune.platforms import HOST_PLATFORM, get_platform

    return str(get_platform(HOST_PLATFORM).bundle(data, shared))


def roce_tune_plan_error(out_dir: str) -> str:
    """Why the plan directory ``out_dir`` must not be pushed, or ``""`` when it is intact: the check
    ``roce-tune apply`` makes (:func:`roce_tune.plandir.read_version`), i.e. no ``plan.json``, or a file
    missing, edited after ``roce-tune plan`` (sha256 differs from ``SHA256SUMS``) or not listed there.
    The message names the directory or file and the fix."""
    from roce_tune.plandir import PlanDirError, read_version

    try:
        read_version(out_dir)
    except (PlanDirError, OSError) as exc:
        return str(exc)
    return ""


def roce_tune_inventory_error(out_dir: str, inventory: str, base_dir: str = ".") -> str:
    """Why the plan directory ``out_dir`` must not be pushed for the roce-tune inventory file ``inventory``
    (the ones ``hosts.yml`` names, ``roce_tune_out_dir`` and ``roce_tune_inventory``; relative paths are read
    against ``base_dir``, the playbooks' ``roce_tune_root``, and named in the message as given), or ``""``: its ``plan.json`` was planned from
    another file's bytes (``inventory_sha256``, the sha256 of the inventory file ``roce-tune plan`` read:
    :attr:`roce_tune.inventory.loader.LoadedInventory.sha256`), i.e. from another inventory or from this one
    before an edit. Its ``SHA256SUMS`` may still be intact, so :func:`roce_tune_plan_error` passes it, and the
    devices ``hosts.yml`` names (its management addresses) would get another fabric's configs, or a plan
    older than the inventory. ``roce-tune apply INVENTORY`` plans the inventory itself, so it never meets
    this. ``""`` too when ``plan.json`` cannot be read (:func:`roce_tune_plan_error` names that) or the
    inventory file is not there (a plan directory pushed without its inventory: nothing to compare)."""
    import hashlib
    from pathlib import Path

    try:
        plan = json.loads((Path(base_dir) / out_dir / "plan.json").read_bytes())
        digest = hashlib.sha256((Path(base_dir) / inventory).read_bytes()).hexdigest()
    except (OSError, ValueError):
        return ""
    planned = plan.get("inventory_sha256") if isinstance(plan, dict) else None
    if not isinstance(planned, str) or planned == digest:
        return ""
    return (f"{out_dir} was not planned from {inventory} as it is now: its plan.json was planned from "
            f"{plan.get('inventory_file') or 'an unnamed inventory'} (inventory sha256 {planned[:12]}, "
            f"{inventory} is {digest[:12]}), another inventory or this one before an edit. Run `roce-tune "
            f"plan {inventory} --out {out_dir}` (or playbooks/plan.yml), review it with --check --diff, then "
            "push (nothing was pushed)")


def roce_tune_backoff(retry_s: float | int | str) -> list[int]:
    """Pauses in seconds before each reconnect-and-rollback attempt within ``retry_s`` seconds: 0 (the
    first attempt at once), then 1, 2, 4, 8, 10, 10 … (doubling, at most 10 s), at least 3 attempts, no
    pause that would end after ``retry_s`` once 3 attempts were made; the back-off ``roce-tune apply``
    uses (``rollback_retry_s``, :func:`roce_tune.deploy.runner._recover`). Each attempt's own connect time
    comes on top. Raises ValueError for a negative or non-numeric ``retry_s``."""
    total_s = float(retry_s)
    if total_s < 0:
        raise ValueError(f"roce_tune_rollback_retry_s={retry_s!r}: give seconds >= 0")
    pauses, waited_s = [0], 0.0
    while True:
        pause = min(10, 2 ** (len(pauses) - 1))
        if len(pauses) >= 3 and waited_s + pause > total_s:
            return pauses
        pauses.append(pause)
        waited_s += pause


class FilterModule:
    """Ansible filter plugin entry point."""

    def filters(self) -> dict[str, Any]:
        return {"roce_tune_change": roce_tune_change, "roce_tune_host_bundle": roce_tune_host_bundle,
                "roce_tune_plan_error": roce_tune_plan_error,
                "roce_tune_inventory_error": roce_tune_inventory_error, "roce_tune_checkpoints": roce_tune_checkpoints,
                "roce_tune_backoff": roce_tune_backoff, "roce_tune_sonic_writes": roce_tune_sonic_writes,
                "roce_tune_sonic_restore": roce_tune_sonic_restore,
                "roce_tune_sonic_unrestored": roce_tune_sonic_unrestored,
                "roce_tune_new_tag": roce_tune_new_tag, "roce_tune_probe_commands": roce_tune_probe_commands,
                "roce_tune_preflight": roce_tune_preflight, "roce_tune_held_back": roce_tune_held_back}
