"""Read a plan directory for ``apply`` and ``verify``: one complete plan, or a clear refusal.

``targets_from_files`` acts on the devices whose files it is given; a directory that lost some of them
(an interrupted ``roce-tune plan``, a hand edit) must stop the run instead of quietly shrinking it.
"""

from __future__ import annotations

from pathlib import Path

from roce_tune.deploy.runner import DESIRED_FILE
from roce_tune.plan import Plan, plan_from_json
from roce_tune.platforms import HOST_PLATFORM, get_platform
from roce_tune.render.outputs import PlanDirError, per_host_nccl_env, read_tree

__all__ = ["PlanDirError", "load_plan_dir", "missing_device_files"]


def missing_device_files(plan: Plan, files: dict[str, str]) -> dict[str, list[str]]:
    """Devices of ``plan`` whose rendered files are not in ``files``.

    Every host needs ``hosts/<name>.sh`` (and a host data file the shared ``hosts/roce-tune-host.sh``; a
    self-contained script of an older roce-tune needs none), and ``hosts/<name>.nccl.env`` if its NCCL
    environment is not just the common ``nccl.env``. A switch needs its platform's
    desired-config file, unless no switch of its platform has one (``plan --platform-only`` left that
    platform out; a plan with ``SHA256SUMS`` is checked file by file by :func:`read_tree` as well).

    Returns:
        device name -> missing relative paths (empty when the plan is complete).
    """
    rendered = {sw.platform for sw in plan.switches
                if "switches/" + DESIRED_FILE[sw.platform].format(name=sw.name) in files}
    missing: dict[str, list[str]] = {}
    for sw in plan.switches:
        rel = "switches/" + DESIRED_FILE[sw.platform].format(name=sw.name)
        if sw.platform in rendered and rel not in files:
            missing[sw.name] = [rel]
    host = get_platform(HOST_PLATFORM)
    shared = f"hosts/{host.SHARED_SCRIPT}"
    own_env = set(per_host_nccl_env(plan))
    for h in plan.hosts:
        wanted = [f"hosts/{h.name}.sh"] + ([f"hosts/{h.name}.nccl.env"] if h.name in own_env else [])
        lacking = [rel for rel in wanted if rel not in files]
        data = files.get(f"hosts/{h.name}.sh", "")
        if host.SHARED_MARKER in data and shared not in files:  # a data file without the shared script
            lacking.append(shared)
        if lacking:
            missing[h.name] = lacking
    return missing


def load_plan_dir(source: Path) -> tuple[Plan, dict[str, str]]:
    """The plan in force in the plan directory ``source`` and its files (relative path -> text).

    Raises:
        PlanDirError: the directory does not hold one complete plan: no ``plan.json``, files missing
            (the message names each device and its missing files), or leftovers of an interrupted write.
        OSError: a file cannot be read.
        ValueError: ``plan.json`` is not a plan.
    """
    files = read_tree(source)
    plan = plan_from_json(files["plan.json"])
    missing = missing_device_files(plan, files)
    if missing:
        listed = [f"{name} ({', '.join(rels)})" for name, rels in missing.items()]
        shown = "; ".join(listed[:10]) + (f"; and {len(listed) - 10} more devices" if len(listed) > 10 else "")
        raise PlanDirError(f"incomplete plan: {len(missing)} device(s) lack their files: {shown}; "
                           "nothing was done. Run `roce-tune plan` again")
    return plan, files
