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

On disk (:func:`write_tree`) the output directory is a real directory (it also holds apply's
``logs/``, verify's ``verify/`` and anything a reviewer keeps there), and each plan is a complete
version directory ``.plan-<content hash>/`` inside it. The names above are fixed relative symlinks
``NAME -> .current/NAME`` and ``.current`` is a symlink to the version in force, so a new plan is
published by a single ``rename(2)`` of ``.current``: a reader (or a crash at any point) sees the old
complete plan or the new complete plan, never a mix. Paths such as ``out/site/switches/leaf1.cfg``
work as before (use ``find -L`` / ``cp -rL`` to walk or copy the tree). :func:`read_tree` reads one
version as a consistent snapshot and refuses a directory an interrupted write left incomplete.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import re
import shlex
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from roce_tune.findings import Finding, Location, RoceTuneError, Severity
from roce_tune.plan import Plan, plan_to_json
from roce_tune.platforms import HOST_PLATFORM, get_platform, platform_findings
from roce_tune.render.review import render_review

if TYPE_CHECKING:
    from roce_tune.simulate.scorecard import Scorecard


def render_outputs(plan: Plan, platforms: list[str] | None = None, include_hosts: bool = True,
                   findings: list[Finding] | None = None, scorecards: list[Scorecard] | None = None) -> dict[str, str]:
    """Render every file of the plan.

    Args:
        plan: a derived plan.
        platforms: only render switches of these platforms (``--platform-only``); None = all.
        include_hosts: render host scripts and NCCL env files.
        findings: if given, receives the platforms' render warnings (RT241). They are also added to the
            findings in ``plan.json`` and ``plan.md``, so the reviewer sees them.
        scorecards: simulator scorecards per lossless port class for plan.md (None = section left out).

    Returns:
        relative path -> file text (deterministic for the same plan).

    Raises:
        RoceTuneError: RT240 for every switch whose platform cannot express its plan (all listed).
        jinja2.UndefinedError: a template bug (never swallowed).
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
        except (ValueError, KeyError, LookupError) as exc:  # the platform cannot express this plan
            problems.append(Finding(
                rule="RT240", severity=Severity.error, location=Location(device=sw.name),
                message=f"cannot render {sw.name} for {sw.platform} ({sw.model}, {sw.asic}): {exc}",
                fix="check that the platform runs on this switch model, or pin values the platform can express"))
            continue
        for name, text in rendered.items():
            files[f"switches/{name}"] = text
    if problems:
        raise RoceTuneError(problems)
    if findings is not None:
        findings.extend(warnings)
    reviewed = plan.model_copy(update={"findings": [*plan.findings, *warnings]}) if warnings else plan
    switch_files = {name.removeprefix("switches/"): text for name, text in files.items()}
    files["plan.json"] = plan_to_json(reviewed)
    files["plan.md"] = render_review(reviewed, switch_files, scorecards)
    if include_hosts and plan.hosts:
        host_mod = get_platform(HOST_PLATFORM)
        files.update({f"hosts/{name}": text for name, text in host_mod.render_hosts(plan, plan.hosts).items()})
        common = common_nccl_env(plan)
        for h in plan.hosts:
            if h.nccl_env != common:  # a host whose variables are all in nccl.env needs no file of its own
                files[f"hosts/{h.name}.nccl.env"] = host_mod.render_nccl_env(plan, h)
        files["nccl.env"] = _common_env(plan, common)
    return dict(sorted(files.items()))


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
    """Hosts of ``plan`` with a ``hosts/<name>.nccl.env``: those whose NCCL environment is not just ``nccl.env``."""
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


#: checksum list written with every plan version (``sha256sum -c SHA256SUMS`` format); a reader uses it to
#: tell a complete version from one with files missing
SUMS = "SHA256SUMS"

#: top-level entries of an output tree that ``plan`` owns: symlinks ``NAME -> .current/NAME``. Anything
#: else (``logs/`` of apply runs, ``verify/``, a reviewer's notes) is left where it is.
MANAGED = ("plan.json", "plan.md", "nccl.env", "switches", "hosts", SUMS)

#: symlink to the version directory in force; replacing it is the one step that publishes a plan
CURRENT = ".current"

#: what :func:`write_tree` creates inside an output directory besides :data:`MANAGED`: version directories
#: (named by a hash of their content), the next ``.current`` link, and real (pre-symlink layout) entries
#: moved aside while the directory is converted
_OURS_INSIDE = re.compile(r"\.plan-[0-9a-f]{16}|\.current\.new|\.retired-[a-z0-9_]{8}")


class OutputDirError(OSError):
    """The output path cannot take a plan (a file, or a non-empty directory that is not a plan)."""


class PlanDirError(ValueError):
    """A plan directory does not hold one complete plan; the message names what is missing and what to do."""


def _sibling_leftovers(out: Path) -> list[Path]:
    """``.<name>.tmp-*`` / ``.<name>.old-*`` siblings of ``out`` left by an interrupted write: this
    version's first write of a new directory, or an older roce-tune's entry-by-entry swap."""
    pattern = re.compile(rf"\.{re.escape(out.name)}\.(tmp|old)-[a-z0-9_]{{8}}")
    if not out.parent.is_dir():
        return []
    return sorted(p for p in out.parent.iterdir() if pattern.fullmatch(p.name))


def _inside_leftovers(out: Path, keep: str | None = None) -> list[Path]:
    """Entries :func:`write_tree` made inside ``out`` that are not the version ``keep``."""
    if not out.is_dir():
        return []
    return sorted(p for p in out.iterdir() if _OURS_INSIDE.fullmatch(p.name) and p.name != keep)


@contextlib.contextmanager
def _locked(directory: Path) -> Iterator[None]:
    """Hold an exclusive ``flock`` on ``directory`` (concurrent ``plan`` runs into the same parent wait,
    instead of cleaning up each other's unfinished work)."""
    fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _remove(path: Path) -> None:
    if path.is_symlink() or not path.is_dir():
        path.unlink(missing_ok=True)
    else:
        shutil.rmtree(path, ignore_errors=True)


def _version_name(files: dict[str, str]) -> str:
    """``.plan-<16 hex>``: a hash of every path and text, so an unchanged plan maps to the version in force."""
    digest = hashlib.sha256()
    for rel, text in sorted(files.items()):
        digest.update(rel.encode() + b"\0" + text.encode() + b"\0")
    return ".plan-" + digest.hexdigest()[:16]


def _sums(files: dict[str, str]) -> str:
    return "".join(f"{hashlib.sha256(text.encode()).hexdigest()}  {rel}\n" for rel, text in sorted(files.items()))


def _write_version(dest: Path, files: dict[str, str]) -> None:
    """Write ``files`` and their SHA256SUMS into the new directory ``dest``, everything flushed to disk
    before it can be published (host scripts ``*.sh`` 0755, other files 0644, directories 0755)."""
    dest.mkdir()
    dirs = {dest}
    for rel, text in {**files, SUMS: _sums(files)}.items():
        path = dest / rel
        if path.parent not in dirs:
            path.parent.mkdir(parents=True, exist_ok=True)
            dirs.update(p for p in path.parents if dest in p.parents)
        with open(path, "w", encoding="utf-8", newline="\n") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        path.chmod(0o755 if rel.endswith(".sh") else 0o644)
    for d in sorted(dirs, key=lambda p: len(p.parts), reverse=True):
        d.chmod(0o755)
        _fsync_dir(d)


def _is_link_to_current(path: Path, name: str) -> bool:
    return path.is_symlink() and os.readlink(path) == f"{CURRENT}/{name}"


def _check_ours(out: Path, siblings: list[Path]) -> None:
    """Refuse a non-empty directory that shows no sign of being a plan directory (it is never emptied)."""
    if os.path.lexists(out / "plan.json") or os.path.lexists(out / CURRENT) or siblings or _inside_leftovers(out):
        return
    raise OutputDirError(f"{out} is not empty and is not a roce-tune plan directory (no plan.json); "
                         "choose an empty or new --out")


def _write_fresh(out: Path, files: dict[str, str]) -> None:
    """Build the whole directory as a temporary sibling and rename it onto ``out`` (absent or empty)."""
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.tmp-", dir=out.parent))
    try:
        tmp.chmod(0o755)
        version = _version_name(files)
        _write_version(tmp / version, files)
        os.symlink(version, tmp / CURRENT)
        for name in MANAGED:
            if os.path.lexists(tmp / version / name):
                os.symlink(f"{CURRENT}/{name}", tmp / name)
        _fsync_dir(tmp)
        os.rename(tmp, out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def _publish(out: Path, files: dict[str, str]) -> None:
    """Make ``files`` the plan in force in the existing plan directory ``out`` (module docstring).

    Steps, each safe to be killed after: write the version directory; move aside real entries of the
    pre-symlink layout (``plan.json`` first, so until the switch a reader finds no plan rather than part
    of one); add links for names the new version has (a link to a name the version in force lacks reads
    as absent); switch ``.current`` with one ``rename(2)``; then tidy up.
    """
    version = _version_name(files)
    in_force = os.readlink(out / CURRENT) if (out / CURRENT).is_symlink() else None
    if in_force != version or not (out / version).is_dir():
        if os.path.lexists(out / version):
            _remove(out / version)  # an unpublished version an interrupted write left
        _write_version(out / version, files)
    retired: Path | None = None
    for name in MANAGED:
        entry = out / name
        if os.path.lexists(entry) and not _is_link_to_current(entry, name):
            retired = retired or Path(tempfile.mkdtemp(prefix=".retired-", dir=out))
            os.rename(entry, retired / name)
    for name in MANAGED:
        if os.path.lexists(out / version / name) and not os.path.lexists(out / name):
            os.symlink(f"{CURRENT}/{name}", out / name)
    if in_force != version:
        staged = out / ".current.new"
        _remove(staged)
        os.symlink(version, staged)
        _fsync_dir(out)
        os.replace(staged, out / CURRENT)  # the switch
        _fsync_dir(out)
    for name in MANAGED:
        if _is_link_to_current(out / name, name) and not os.path.lexists(out / version / name):
            (out / name).unlink()
    for leftover in _inside_leftovers(out, keep=version):
        _remove(leftover)


def write_tree(files: dict[str, str], out_dir: str | Path) -> Path:
    """Write ``files`` as the plan in force in ``out_dir``, in one atomic step (module docstring).

    A new or empty ``out_dir`` is built as a temporary sibling and renamed into place. An existing plan
    directory gets a new version directory and its ``.current`` link is replaced by ``rename(2)``; a
    directory in the layout of older roce-tune versions (real ``plan.json``, ``switches/`` …) is
    converted. Either way a crash at any point leaves the old complete plan or the new complete plan
    (while an old-layout directory is converted: no plan, which every reader refuses). Leftovers of
    earlier interrupted writes (``.<name>.tmp-*``, ``.<name>.old-*`` siblings; unpublished versions)
    are removed once the new plan is in force. Entries ``plan`` does not own (``logs/``, ``verify/``,
    notes) are never touched. Rewriting an unchanged plan changes nothing on disk.

    Raises:
        OutputDirError: ``out_dir`` is a file, or a non-empty directory that is not a plan directory
            (it is never emptied to make room).
        OSError: the directory cannot be written (the plan in force stays as it was).
    """
    out = Path(out_dir).absolute()
    if os.path.lexists(out) and not out.is_dir():
        raise OutputDirError(f"{out} exists and is not a directory; choose another --out")
    out.parent.mkdir(parents=True, exist_ok=True)
    with _locked(out.parent):
        siblings = _sibling_leftovers(out)
        if not out.is_dir() or not any(out.iterdir()):
            _write_fresh(out, files)
        else:
            _check_ours(out, siblings)
            _publish(out, files)
        for leftover in siblings:
            _remove(leftover)
        _fsync_dir(out.parent)
    return out


def _few(items: list[str], limit: int = 8) -> str:
    return ", ".join(items[:limit]) + (f" and {len(items) - limit} more" if len(items) > limit else "")


def _interrupted(out: Path) -> str:
    """A sentence naming the leftovers of an interrupted write next to or inside ``out`` ('' if none)."""
    in_force = os.readlink(out / CURRENT) if (out / CURRENT).is_symlink() else None
    left = [p.name for p in _sibling_leftovers(out) + _inside_leftovers(out, keep=in_force)]
    if not left:
        return ""
    return (f"; an interrupted `roce-tune plan` left {_few(left)}, so this directory may hold part of one plan "
            "and part of another: run `roce-tune plan` again")


def read_tree(out_dir: str | Path) -> dict[str, str]:
    """Read the plan in force in ``out_dir`` as one consistent snapshot (every file from the same version).

    Returns:
        relative path -> text for ``plan.json``, ``plan.md``, ``nccl.env``, ``switches/…`` and ``hosts/…``
        (not ``SHA256SUMS``, ``logs/`` or anything else in the directory).

    Raises:
        PlanDirError: no ``plan.json``; a file listed in ``SHA256SUMS`` is missing; or a directory without
            ``SHA256SUMS`` (written by an older roce-tune) has the leftovers of an interrupted write next to
            it (it may be half-swapped). The message names the directory, the missing files and the fix.
        OSError: a file cannot be read.
    """
    out = Path(out_dir)
    root = out / os.readlink(out / CURRENT) if (out / CURRENT).is_symlink() else out
    if not (root / "plan.json").is_file():
        raise PlanDirError(f"no plan.json{_interrupted(out) or '; run `roce-tune plan` to write one'}")
    files = {name: (root / name).read_text(encoding="utf-8") for name in ("plan.json", "plan.md", "nccl.env")
             if (root / name).is_file()}
    for sub in ("switches", "hosts"):
        files.update({p.relative_to(root).as_posix(): p.read_text(encoding="utf-8")
                      for p in sorted((root / sub).rglob("*")) if p.is_file()})
    if (root / SUMS).is_file():
        listed = [line.split("  ", 1)[1] for line in (root / SUMS).read_text(encoding="utf-8").splitlines()
                  if "  " in line]
        missing = [rel for rel in listed if rel not in files]
        if missing:
            raise PlanDirError(f"incomplete plan: {_few(missing)} listed in {SUMS} "
                               f"{'is' if len(missing) == 1 else 'are'} missing{_interrupted(out)}; "
                               "run `roce-tune plan` again")
    elif _sibling_leftovers(out):
        raise PlanDirError(f"written by an older roce-tune{_interrupted(out)}")
    return dict(sorted(files.items()))
