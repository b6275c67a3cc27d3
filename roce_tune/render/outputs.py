"""Render a whole plan into the output tree (in memory), and write it atomically.

Layout of the tree (relative paths)::

    plan.json                 full plan with rationale (schema version inside)
    plan.md                   review document
    switches/<name>.<ext>     one or more files per switch (platform renderer decides)
    hosts/roce-tune-host.sh   the shared host script: check, restore point, apply, read back (versioned)
    hosts/<name>.sh           the host's values; sources the shared script (a push sends both as one script)
    hosts/<name>.nccl.env     the host's NCCL environment, only where it is not just nccl.env
    nccl.env                  NCCL variables common to every host (per-host differences listed)
    SHA256SUMS                every file above with its sha256 (``sha256sum -c SHA256SUMS``)

On disk the tree is written and read back by :mod:`roce_tune.plandir` (atomic versions, only changed
files rewritten, checksums verified on read); :func:`write_tree` and :func:`read_tree` are re-exported here.
"""

from __future__ import annotations

import shlex
from typing import TYPE_CHECKING

from roce_tune.findings import Finding, RoceTuneError
from roce_tune.plan import Plan
from roce_tune.plandir import CURRENT, MANAGED, SUMS, OutputDirError, PlanDirError, read_tree, write_tree
from roce_tune.platforms import (
    CANNOT_EXPRESS,
    HOST_PLATFORM,
    cannot_render_finding,
    get_platform,
    platform_findings,
)
from roce_tune.render.review import render_review

if TYPE_CHECKING:
    from roce_tune.plandir import TextFiles
    from roce_tune.simulate.scorecard import Scorecard


def render_outputs(plan: Plan, platforms: list[str] | None = None, include_hosts: bool = True,
                   findings: list[Finding] | None = None,
                   scorecards: list[Scorecard] | None = None) -> TextFiles:
    """Render every file of the plan.

    Args:
        plan: a derived plan.
        platforms: only render switches of these platforms (``--platform-only``); None = all.
        include_hosts: render host scripts and NCCL env files.
        findings: if given, receives the platforms' render warnings (RT241). They are also added to the
            findings in ``plan.json`` and ``plan.md``, so the reviewer sees them.
        scorecards: simulator scorecards per lossless port class for plan.md (None = section left out).

    Returns:
        relative path -> file text (deterministic for the same plan), in path order; plan.json is held as
        its UTF-8 bytes in pieces (:class:`~roce_tune.plandir.TextFiles`: text when read, the pieces when
        written).

    Raises:
        RoceTuneError: RT240 for every switch whose platform cannot express its plan (all listed).
        jinja2.UndefinedError: a template bug (never swallowed).
    """
    from roce_tune.plan.codec import plan_json_pieces
    from roce_tune.plandir import Content, TextFiles

    switch_files, warnings = _switch_files(plan, platforms)
    if findings is not None:
        findings.extend(warnings)
    reviewed = plan.model_copy(update={"findings": [*plan.findings, *warnings]}) if warnings else plan
    files: dict[str, Content] = {f"switches/{name}": text for name, text in switch_files.items()}
    files["plan.json"] = plan_json_pieces(reviewed)
    files["plan.md"] = render_review(reviewed, switch_files, scorecards)
    if include_hosts and plan.hosts:
        files.update(_host_files(plan))
    return TextFiles(sorted(files.items()))


def _switch_files(plan: Plan, platforms: list[str] | None) -> tuple[dict[str, str], list[Finding]]:
    """The files of the switches of ``plan`` (of ``platforms`` only, when given) by file name, and the
    platforms' render warnings.

    Raises:
        RoceTuneError: RT240 for every switch whose platform cannot express its plan (all listed).
    """
    files: dict[str, str] = {}
    problems: list[Finding] = []
    warnings: list[Finding] = []
    for sw in plan.switches:
        if platforms and sw.platform not in platforms:
            continue
        module = get_platform(sw.platform)
        try:
            rendered = module.render(plan, sw)
            warnings += platform_findings(plan, sw)
        except CANNOT_EXPRESS as exc:  # the platform cannot express this plan
            problems.append(cannot_render_finding(sw, exc))
            continue
        files.update(rendered)
    if problems:
        raise RoceTuneError(problems)
    return files, warnings


def _host_files(plan: Plan) -> dict[str, str]:
    """The host scripts and NCCL environment files of ``plan`` (relative paths)."""
    host_mod = get_platform(HOST_PLATFORM)
    files = {f"hosts/{name}": text for name, text in host_mod.render_hosts(plan, plan.hosts).items()}
    common = common_nccl_env(plan)
    for h in plan.hosts:
        if h.nccl_env != common:  # a host whose variables are all in nccl.env needs no file of its own
            files[f"hosts/{h.name}.nccl.env"] = host_mod.render_nccl_env(plan, h)
    files["nccl.env"] = _common_env(plan, common)
    return files


def common_nccl_env(plan: Plan) -> dict[str, str]:
    """NCCL variables set to the same value on every host of ``plan`` (what ``nccl.env`` sets).

    A host whose environment is exactly this has no ``hosts/<name>.nccl.env``; the others have one with
    all their variables (:func:`per_host_nccl_env`).
    """
    envs = [h.nccl_env for h in plan.hosts]
    if not envs:
        return {}
    return {k: v for k, v in sorted(envs[0].items()) if all(e.get(k) == v for e in envs[1:])}


def per_host_nccl_env(plan: Plan) -> list[str]:
    """Hosts of ``plan`` with a ``hosts/<name>.nccl.env``: those whose NCCL environment is not just
    ``nccl.env``."""
    common = common_nccl_env(plan)
    return [h.name for h in plan.hosts if h.nccl_env != common]


def _common_env(plan: Plan, common: dict[str, str]) -> str:
    """NCCL variables identical on every host; the others are named with a pointer to hosts/."""
    keys = sorted({k for h in plan.hosts for k in h.nccl_env})
    lines = [f"# NCCL environment for site {plan.site} (generated by {plan.generator}; do not edit)",
             "# Variables that differ per host are in hosts/<name>.nccl.env."]
    lines += [f"{k}={shlex.quote(v)}" for k, v in common.items()]
    differing = [k for k in keys if k not in common]
    if differing:
        lines.append("# per-host: " + " ".join(differing))
    return "\n".join(lines) + "\n"


__all__ = ["CURRENT", "MANAGED", "SUMS", "OutputDirError", "PlanDirError", "read_tree", "render_outputs",
           "write_tree"]
