"""``roce-tune audit --from DIR``: read every capture, run the RT4xx checks, format the report.

Exit codes: 0 clean (warnings allowed), 1 error-level findings, 2 usage errors (missing directory,
unreadable file, bad format name — raised as :class:`AuditUsageError`) or nothing understood (no block
parsed into a fact: :attr:`AuditResult.nothing_read`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from roce_tune.audit.checks import AuditFinding, NotChecked, run_checks
from roce_tune.audit.expect import Expect, load_expect
from roce_tune.audit.live import LiveDevice, LiveOptions
from roce_tune.audit.model import AuditData
from roce_tune.audit.readers import BLOCK_READERS, SWITCH_READERS, Ctx, read_block
from roce_tune.captures import Block, device_of, read_capture, split_loop
from roce_tune.findings import Severity
from roce_tune.platforms.captures import running_config_format

__all__ = ["FORMATS", "AuditResult", "AuditUsageError", "audit_dir", "audit_live", "coverage",
           "format_report", "read_blocks", "read_dir"]

FORMATS = ("text", "json", "github", "markdown")


class AuditUsageError(Exception):
    """Bad invocation: missing directory, unreadable capture, unknown format (exit code 2)."""


@dataclass
class AuditResult:
    """Findings, the checks that could not run, what was read and what was not understood."""

    findings: list[AuditFinding]
    not_checked: list[NotChecked]
    data: AuditData
    expect: Expect
    #: the directory the evidence files are in, as the user gave it (``--from``; ``--save-captures``):
    #: GitHub annotations name ``root/file`` so they land on the file in the workspace
    root: Path | None = None

    @property
    def nothing_read(self) -> str | None:
        """Why nothing was audited, or None: no block was parsed into a fact (``AuditData.understood`` is 0:
        every ``--live`` device unreached, only empty capture files, or every block not understood)."""
        if self.data.understood:
            return None
        n = len(self.data.unparsed)
        if n:
            return (f"nothing was understood: all {n} capture block(s) read are listed as not understood, "
                    "so no setting or counter was checked")
        return "nothing was read of any device, so no setting or counter was checked"

    @property
    def exit_code(self) -> int:
        """2 when nothing was read (:attr:`nothing_read`): nothing was audited, which is not clean; else 1
        when any finding is an error, else 0."""
        if self.nothing_read is not None:
            return 2
        return 1 if any(f.severity is Severity.error for f in self.findings) else 0


#: words of a capture's path that make it the earlier / the later snapshot of a device
_BEFORE_WORDS = frozenset({"before", "pre", "start", "begin", "baseline"})
_AFTER_WORDS = frozenset({"after", "post", "end"})


def _order(path: Path, root: Path) -> tuple[str, int, str]:
    """(device, 0 before / 1 neither / 2 after, relative path): a word of :data:`_BEFORE_WORDS` /
    :data:`_AFTER_WORDS` in a directory or in the file name after the device (``before/leaf1.txt``,
    ``run1-after/leaf1.txt``, ``gpu01.pre.txt`` / ``gpu01.post.txt``: alphabetically "post" < "pre" and
    "end" < "start"; a device named ``pre-prod-gpu01`` is no "pre")."""
    rel = path.relative_to(root)
    parts = (*rel.parts[:-1], rel.name.partition(".")[2])
    words = {w for part in parts for w in re.split(r"[._\-\s]", part.lower())}
    return (device_of(path), 0 if words & _BEFORE_WORDS else 2 if words & _AFTER_WORDS else 1, rel.as_posix())


def _litter(rel: Path) -> bool:
    """A file no one captured: a dot file or one under a dot directory (``.git``, editor swap files,
    AppleDouble ``._leaf1.txt``) or under ``__MACOSX`` (an archive unpacked from a Mac)."""
    return any(part.startswith(".") or part == "__MACOSX" for part in rel.parts)


def read_dir(root: Path, exp: Expect, switches: Iterable[str] = (),
             hosts: Iterable[str] = ()) -> AuditData:
    """Read every ``*.txt`` / ``*.log`` capture under ``root`` (recursively; dot files, dot directories and
    ``__MACOSX`` are skipped).

    ``<device>.before.txt`` (or ``before/<device>.txt``) is read before ``<device>.after.txt`` (``after/…``)
    so their counters form a delta.

    ``switches`` names the devices the plan says are switches (their output is never read as a host's),
    ``hosts`` the plan's hosts (counted as hosts even when nothing of theirs was read: :func:`read_blocks`).

    Raises:
        AuditUsageError: ``root`` is not a directory, holds no capture, or a file cannot be read.
    """
    if not root.is_dir():
        raise AuditUsageError(f"{root}: not a directory")
    files = sorted((p for p in root.rglob("*") if p.is_file() and p.suffix in (".txt", ".log")
                    and not _litter(p.relative_to(root))), key=lambda p: _order(p, root))
    if not files:
        raise AuditUsageError(f"{root}: no capture files (<device>[.<anything>].txt)")
    blocks = []
    empty: list[tuple[str, str]] = []
    for path in files:
        try:
            got = read_capture(path, root)
        except OSError as exc:
            raise AuditUsageError(f"{path}: cannot read ({exc.strerror})") from None
        if not any(t.strip() for b in got for _, t in b.lines) and not any(b.command for b in got):
            empty.append((device_of(path), str(path.relative_to(root))))
        blocks.extend(got)
    data = read_blocks(blocks, exp, len(files), switches, hosts)
    data.empty_files = empty
    return data


def coverage(data: AuditData, plan: Any) -> list[NotChecked]:
    """RT492: the devices nothing was read of: with a plan (``plan``), each of its switches and hosts
    without a capture, and each captured device it does not name (a file name that is no device name);
    without one, the devices whose only capture files are empty."""
    # devices something was read of (a plan's switch is known before its captures are read)
    seen = {device_of(Path(f)) for f, _, _ in data.blocks} | {device_of(Path(u.file)) for u in data.unparsed}
    empty: dict[str, list[str]] = {}
    for device, file in data.empty_files:
        empty.setdefault(device, []).append(file)
    out: list[NotChecked] = []
    planned: dict[str, str] = {}
    if plan is not None:
        planned = {**{h.name: "host" for h in plan.hosts}, **{s.name: "switch" for s in plan.switches}}
    for name in sorted(set(planned) | set(empty)):
        if name in seen:
            continue
        why = (f"{', '.join(empty[name])} {'is' if len(empty[name]) == 1 else 'are'} empty" if name in empty
               else f"no <device>[.<anything>].txt file of {name} was read")
        kind = f"{planned[name]} " if name in planned else ""
        out.append(NotChecked("RT492", name, f"a capture of {kind}{name}: {why}"))
    for name in sorted(seen - set(planned) if plan is not None else ()):
        out.append(NotChecked("RT492", name, f"a device named {name} in the plan: {name} is not a device of "
                                             "the plan (is the file name the device's name?), so nothing "
                                             "planned was compared with its captures"))
    return out


def _in_switch_format(b: Block, switch_pats: list[tuple[str, str | None]]) -> bool:
    """Whether block ``b`` is in a switch's format: a switch reader's pattern ``(pattern, command
    pattern or None)`` of ``switch_pats`` matches its text (and its command, when both name one), or its text
    is a running configuration a platform recognises."""
    return any(re.search(p, b.text, re.MULTILINE) and not (c and b.command and not re.search(c, b.command))
               for p, c in switch_pats) or running_config_format(b.text, b.command) is not None


def _mark_switches(blocks: list[Block], ctx: Ctx) -> None:
    """Record in ``ctx.data`` as a switch every device of ``blocks`` with a block in a switch's format
    (:func:`_in_switch_format`); returns nothing."""
    switch_pats = [(p, c) for n, p, c, _ in BLOCK_READERS if n in SWITCH_READERS]
    for b in blocks:
        if _in_switch_format(b, switch_pats):
            ctx.data.switch(b.device)


def _read_each(blocks: list[Block], ctx: Ctx) -> set[str]:
    """Read every block of ``blocks`` into ``ctx``, in order; returns the names of the devices with at least
    one block understood (one that raised ``AuditData.understood``)."""
    read: set[str] = set()
    for b in blocks:
        before = ctx.data.understood
        read_block(b, ctx)
        if ctx.data.understood > before:
            read.add(b.device)
    return read


def _hosts_unread(data: AuditData, read: set[str], known_hosts: set[str]) -> None:
    """Move every host of ``data`` with no block understood (not in ``read``) that the plan does not name a
    host (not in ``known_hosts``) from ``data.hosts`` to ``data.unreadable``, in name order; returns
    nothing."""
    for name in sorted(data.hosts):
        if name not in read and name not in known_hosts:
            del data.hosts[name]
            data.unreadable.append(name)


def read_blocks(blocks: list[Block], exp: Expect, files: int, switches: Iterable[str] = (),
                hosts: Iterable[str] = ()) -> AuditData:
    """Read split capture blocks (from files or from ``--live`` sessions) into :class:`AuditData`;
    ``switches`` and ``hosts`` name devices known to be switches and hosts (from the plan).

    A device whose blocks no reader understood is a switch when the plan names it so or one of its blocks
    is in a switch's format, a host when the plan names it a host, else ``AuditData.unreadable`` (its blocks
    fell through to the host line readers, which makes no device a host)."""
    blocks = [part for b in blocks for part in split_loop(b)]
    ctx = Ctx(data=AuditData(files=files), exp=exp)
    for name in switches:
        ctx.data.switch(name)
    # switch formats first so a switch's unrecognised blocks are not mistaken for host output
    _mark_switches(blocks, ctx)
    read = _read_each(blocks, ctx)
    _hosts_unread(ctx.data, read, set(hosts))
    return ctx.data


def audit_dir(captures: Path, source: Path | None = None, policy_file: Path | None = None) -> AuditResult:
    """Audit the captures in ``captures`` against a plan (``source``: inventory or plan dir) or a policy.

    Raises:
        AuditUsageError: see :func:`read_dir`.
        RoceTuneError: the inventory, plan or policy file is invalid.
    """
    exp, plan = load_expect(source, policy_file)
    data = read_dir(captures, exp, [s.name for s in getattr(plan, "switches", ())],
                    [h.name for h in getattr(plan, "hosts", ())])
    findings, skipped = run_checks(data, exp)
    skipped += coverage(data, plan)
    return AuditResult(findings=findings, not_checked=skipped, data=data, expect=exp, root=captures)


def _save_dir_ready(path: Path | None) -> None:
    """Create ``--save-captures``'s directory (0700) before any session opens.

    Raises:
        AuditUsageError: it cannot be a directory (a file of that name, no permission).
    """
    if path is None:
        return
    from roce_tune.deploy.credentials import private_dir

    try:
        private_dir(path)
    except OSError as exc:
        raise AuditUsageError(f"--save-captures {path}: cannot be a directory ({exc.strerror})") from None


def audit_live(source: Path, opts: LiveOptions, policy_file: Path | None = None,
               on_device: Callable[[LiveDevice], None] | None = None) -> AuditResult:
    """``audit --live``: read every device of the plan over SSH (:mod:`roce_tune.audit.live`) and audit it
    like captures. A device that could not be read is a not-checked finding (RT490); one without a
    management address in the plan is listed as not checked (RT491).

    Raises:
        AuditUsageError: no inventory/plan (``--live`` needs the management addresses); ``--save-captures``
            cannot be created or written.
        RoceTuneError: the inventory, plan or policy file is invalid.
        ValueError: a platform command is not read-only.
    """
    from roce_tune.audit.live import read_live

    if source is None:
        raise AuditUsageError("--live needs an inventory or plan directory (it names each device's "
                              "management address); without one, capture by hand and use --from DIR")
    exp, loaded = load_expect(source, policy_file)
    plan: Any = loaded
    _save_dir_ready(opts.save_dir)
    try:
        blocks, devices, missing = read_live(plan, opts, on_device)
    except OSError as exc:  # writing a capture under --save-captures
        raise AuditUsageError(f"--save-captures {opts.save_dir}: cannot write {exc.filename} "
                              f"({exc.strerror})") from None
    reached = {d.name for d in devices if d.error is None}
    data = read_blocks(blocks, exp, len(reached),
                       switches=[s.name for s in plan.switches if s.name in reached],
                       hosts=[h.name for h in plan.hosts if h.name in reached])
    findings, skipped = run_checks(data, exp)
    for d in devices:
        if d.error is not None:
            findings.append(AuditFinding("RT490", Severity.warning, d.name, None,
                                         f"{d.name} ({d.kind}) was not checked: {d.error}",
                                         "reach it (management address, credentials, known_hosts) and audit "
                                         "again, or capture its output by hand and use --from", (), "live"))
            skipped.append(NotChecked("RT490", d.name, f"an SSH session to {d.name} (not reached)"))
    for name, kind in missing:
        skipped.append(NotChecked("RT491", name, f"a management address for {kind} {name} in the inventory "
                                                 "(mgmt.host), or its captures with --from"))
    findings.sort(key=lambda f: (f.severity is not Severity.error, f.severity is not Severity.warning, f.rule,
                                 f.device or "", f.port or ""))
    return AuditResult(findings=findings, not_checked=skipped, data=data, expect=exp, root=opts.save_dir)


def _json(r: AuditResult) -> str:
    doc = {
        "expectations": r.expect.source,
        "devices": {"hosts": sorted(r.data.hosts), "switches": sorted(r.data.switches),
                    "unreadable": r.data.unreadable},
        "findings": [{"rule": f.rule, "severity": f.severity.value, "family": f.family, "device": f.device,
                      "port": f.port, "message": f.message, "fix": f.fix,
                      "evidence": [str(e) for e in f.evidence]}
                     for f in r.findings],
        "not_checked": [{"rule": s.rule, "device": s.device, "needs": s.needs} for s in r.not_checked],
        "not_understood": [{"file": u.file, "line": u.line, "end_line": u.end_line, "command": u.command,
                            "first_line": u.first} for u in r.data.unparsed],
        "summary": {"errors": sum(f.severity is Severity.error for f in r.findings),
                    "warnings": sum(f.severity is Severity.warning for f in r.findings),
                    "files": r.data.files, "blocks": len(r.data.blocks),
                    "blocks_understood": r.data.understood, "nothing_read": r.nothing_read},
    }
    return json.dumps(doc, indent=2) + "\n"


def _where(f: AuditFinding) -> str:
    return (f.device or "fabric") + (f":{f.port}" if f.port else "")


def _github(r: AuditResult) -> str:
    """GitHub workflow annotations (``::level key=value,…::message``, escaped as the Actions toolkit's
    ``escapeProperty``/``escapeData``): one per finding, not-checked note and block not understood; ``file=``
    is the capture's path under the captures directory as given (GitHub resolves it from the workspace)."""
    from roce_tune.inventory.report import _gh_data, _gh_prop

    def path(file: str) -> str:
        return _gh_prop(str(r.root / file) if r.root is not None else file)

    lines: list[str] = []
    for f in r.findings:
        level = {"error": "error", "warning": "warning"}.get(f.severity.value, "notice")
        loc = [f"file={path(f.evidence[0].file)}", f"line={f.evidence[0].line}"] if f.evidence else []
        props = ",".join([*loc, f"title={_gh_prop(f.rule + ' ' + _where(f))}"])
        lines.append(f"::{level} {props}::{_gh_data(f.message + ' — fix: ' + f.fix)}")
    for s in r.not_checked:
        needs = _gh_data((s.device or "fabric") + ": needs " + s.needs)
        lines.append(f"::notice title={_gh_prop(s.rule + ' not checked')}::{needs}")
    for u in r.data.unparsed:
        where = f"file={path(u.file)},line={u.line}"
        lines.append(f"::warning {where},title=not understood::{_gh_data(str(u))}")
    if r.nothing_read is not None:
        lines.append(f"::error title=nothing audited::{_gh_data(r.nothing_read)}")
    return "\n".join(lines) + ("\n" if lines else "")


def _markdown(r: AuditResult) -> str:
    """A findings table, then the not-checked and not-understood lists (each only when not empty)."""
    lines = [f"# roce-tune audit ({r.expect.source})", "",
             "| rule | severity | device | port | finding | fix | evidence |",
             "|---|---|---|---|---|---|---|"]
    for f in r.findings:
        cells = [f.rule, f.severity.value, f.device or "fabric", f.port or "", f.message, f.fix,
                 ", ".join(map(str, f.evidence))]
        lines.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
    if r.not_checked:
        lines += ["", "## Not checked", ""] + [f"- {s.rule} {s.device or 'fabric'}: needs {s.needs}"
                                               for s in r.not_checked]
    if r.data.unparsed:
        lines += ["", "## Not understood", ""] + [f"- {u}" for u in r.data.unparsed]
    if r.nothing_read is not None:
        lines += ["", f"**Nothing audited:** {r.nothing_read}."]
    return "\n".join(lines) + "\n"


def _text_summary(r: AuditResult) -> str:
    """The closing line: files, devices, expectations and the counts."""
    n_err = sum(f.severity is Severity.error for f in r.findings)
    n_warn = sum(f.severity is Severity.warning for f in r.findings)
    unreadable = (f", {len(r.data.unreadable)} unreadable ({', '.join(r.data.unreadable[:3])}"
                  f"{' …' if len(r.data.unreadable) > 3 else ''})" if r.data.unreadable else "")
    return (f"{r.data.files} file(s), {len(r.data.hosts)} host(s), {len(r.data.switches)} switch(es)"
            f"{unreadable} against {r.expect.source}: {n_err} error(s), {n_warn} warning(s), "
            f"{len(r.not_checked)} not checked, {len(r.data.unparsed)} block(s) not understood")


def _text(r: AuditResult) -> str:
    """Findings with fix and evidence, the not-checked and not-understood lists, a summary line."""
    lines: list[str] = []
    for f in r.findings:
        lines.append(f"{f.severity.value.upper():7} {f.rule} {_where(f)}: {f.message}")
        lines.append(f"        fix: {f.fix}")
        if f.evidence:
            lines.append(f"        evidence: {', '.join(map(str, f.evidence))}")
    if r.not_checked:
        lines += ["", "not checked:"]
        lines += [f"  {s.rule} {s.device or 'fabric'}: needs {s.needs}" for s in r.not_checked]
    if r.data.unparsed:
        lines += ["", "not understood (listed, not read):"] + [f"  {u}" for u in r.data.unparsed]
    lines += ["", _text_summary(r)]
    if r.nothing_read is not None:
        lines.append(f"error: {r.nothing_read}")
    return "\n".join(lines) + "\n"


_FORMATTERS: dict[str, Callable[[AuditResult], str]] = {
    "text": _text, "json": _json, "github": _github, "markdown": _markdown}


def format_report(r: AuditResult, fmt: str) -> str:
    """The report as ``text``, ``json``, ``github`` (workflow annotations) or ``markdown``.

    Raises:
        AuditUsageError: unknown format.
    """
    if fmt not in FORMATS:
        raise AuditUsageError(f"--format must be one of {', '.join(FORMATS)}, not {fmt!r}")
    return _FORMATTERS[fmt](r)
