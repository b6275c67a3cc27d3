"""``roce-tune audit --from DIR``: read every capture, run the RT4xx checks, format the report.

Exit codes: 0 clean (warnings allowed), 1 error-level findings, 2 usage errors (missing directory,
unreadable file, bad format name — raised as :class:`AuditUsageError`).
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
from roce_tune.captures import Block, read_capture
from roce_tune.findings import Severity
from roce_tune.platforms.captures import running_config_format

__all__ = ["FORMATS", "AuditResult", "AuditUsageError", "audit_dir", "audit_live", "format_report",
           "read_blocks", "read_dir"]

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
    def exit_code(self) -> int:
        """1 when any finding is an error, else 0."""
        return 1 if any(f.severity is Severity.error for f in self.findings) else 0


def _order(path: Path) -> tuple[str, int, str]:
    words = set(path.name.lower().split("."))
    return (path.name.split(".", 1)[0], 0 if "before" in words else 2 if "after" in words else 1, path.name)


def read_dir(root: Path, exp: Expect) -> AuditData:
    """Read every ``*.txt`` / ``*.log`` capture under ``root`` (recursively).

    ``<device>.before.txt`` is read before ``<device>.after.txt`` so their counters form a delta.

    Raises:
        AuditUsageError: ``root`` is not a directory, holds no capture, or a file cannot be read.
    """
    if not root.is_dir():
        raise AuditUsageError(f"{root}: not a directory")
    files = sorted((p for p in root.rglob("*") if p.is_file() and p.suffix in (".txt", ".log")), key=_order)
    if not files:
        raise AuditUsageError(f"{root}: no capture files (<device>[.<anything>].txt)")
    blocks = []
    for path in files:
        try:
            blocks.extend(read_capture(path, root))
        except OSError as exc:
            raise AuditUsageError(f"{path}: cannot read ({exc.strerror})") from None
    return read_blocks(blocks, exp, len(files))


def read_blocks(blocks: list[Block], exp: Expect, files: int, switches: Iterable[str] = ()) -> AuditData:
    """Read split capture blocks (from files or from ``--live`` sessions) into :class:`AuditData`;
    ``switches`` names devices known to be switches (``--live``: from the plan)."""
    ctx = Ctx(data=AuditData(files=files), exp=exp)
    for name in switches:
        ctx.data.switch(name)
    # switch formats first so a switch's unrecognised blocks are not mistaken for host output
    switch_pats = [(p, c) for n, p, c, _ in BLOCK_READERS if n in SWITCH_READERS]
    for b in blocks:
        if any(re.search(p, b.text, re.MULTILINE) and not (c and b.command and not re.search(c, b.command))
               for p, c in switch_pats) or running_config_format(b.text, b.command) is not None:
            ctx.data.switch(b.device)
    for b in blocks:
        read_block(b, ctx)
    return ctx.data


def audit_dir(captures: Path, source: Path | None = None, policy_file: Path | None = None) -> AuditResult:
    """Audit the captures in ``captures`` against a plan (``source``: inventory or plan dir) or a policy.

    Raises:
        AuditUsageError: see :func:`read_dir`.
        RoceTuneError: the inventory, plan or policy file is invalid.
    """
    exp, _plan = load_expect(source, policy_file)
    data = read_dir(captures, exp)
    findings, skipped = run_checks(data, exp)
    return AuditResult(findings=findings, not_checked=skipped, data=data, expect=exp, root=captures)


def audit_live(source: Path, opts: LiveOptions, policy_file: Path | None = None,
               on_device: Callable[[LiveDevice], None] | None = None) -> AuditResult:
    """``audit --live``: read every device of the plan over SSH (:mod:`roce_tune.audit.live`) and audit it
    like captures. A device that could not be read is a not-checked finding (RT490); one without a
    management address in the plan is listed as not checked (RT491).

    Raises:
        AuditUsageError: no inventory/plan (``--live`` needs the management addresses).
        RoceTuneError: the inventory, plan or policy file is invalid.
        ValueError: a platform command is not read-only.
    """
    from roce_tune.audit.live import read_live

    if source is None:
        raise AuditUsageError("--live needs an inventory or plan directory (it names each device's "
                              "management address); without one, capture by hand and use --from DIR")
    exp, loaded = load_expect(source, policy_file)
    plan: Any = loaded
    blocks, devices, missing = read_live(plan, opts, on_device)
    reached = {d.name for d in devices if d.error is None}
    data = read_blocks(blocks, exp, len(reached), switches=[s.name for s in plan.switches
                                                            if s.name in reached])
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
        "devices": {"hosts": sorted(r.data.hosts), "switches": sorted(r.data.switches)},
        "findings": [{"rule": f.rule, "severity": f.severity.value, "family": f.family, "device": f.device,
                      "port": f.port, "message": f.message, "fix": f.fix,
                      "evidence": [str(e) for e in f.evidence]}
                     for f in r.findings],
        "not_checked": [{"rule": s.rule, "device": s.device, "needs": s.needs} for s in r.not_checked],
        "not_understood": [{"file": u.file, "line": u.line, "end_line": u.end_line, "command": u.command,
                            "first_line": u.first} for u in r.data.unparsed],
        "summary": {"errors": sum(f.severity is Severity.error for f in r.findings),
                    "warnings": sum(f.severity is Severity.warning for f in r.findings),
                    "files": r.data.files, "blocks": len(r.data.blocks)},
    }
    return json.dumps(doc, indent=2) + "\n"


def _where(f: AuditFinding) -> str:
    return (f.device or "fabric") + (f":{f.port}" if f.port else "")


def _esc(s: str) -> str:
    return s.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _github(r: AuditResult) -> str:
    """GitHub workflow annotations: one per finding, not-checked note and block not understood; ``file=``
    is the capture's path under the captures directory as given (GitHub resolves it from the workspace)."""
    def path(file: str) -> str:
        return str(r.root / file) if r.root is not None else file

    lines: list[str] = []
    for f in r.findings:
        level = {"error": "error", "warning": "warning"}.get(f.severity.value, "notice")
        loc = f" file={path(f.evidence[0].file)},line={f.evidence[0].line}" if f.evidence else ""
        lines.append(f"::{level}{loc},title={f.rule} {_where(f)}::{_esc(f.message + ' — fix: ' + f.fix)}")
    for s in r.not_checked:
        needs = _esc((s.device or "fabric") + ": needs " + s.needs)
        lines.append(f"::notice title={s.rule} not checked::{needs}")
    for u in r.data.unparsed:
        lines.append(f"::warning file={path(u.file)},line={u.line},title=not understood::{_esc(str(u))}")
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
    return "\n".join(lines) + "\n"


def _text_summary(r: AuditResult) -> str:
    """The closing line: files, devices, expectations and the counts."""
    n_err = sum(f.severity is Severity.error for f in r.findings)
    n_warn = sum(f.severity is Severity.warning for f in r.findings)
    return (f"{r.data.files} file(s), {len(r.data.hosts)} host(s), {len(r.data.switches)} switch(es) against "
            f"{r.expect.source}: {n_err} error(s), {n_warn} warning(s), {len(r.not_checked)} not checked, "
            f"{len(r.data.unparsed)} block(s) not understood")


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
