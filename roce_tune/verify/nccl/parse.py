"""Entry points: nccl-tests stdout or ``-J`` JSON (a string or a file) → :class:`NcclRun` objects."""

from __future__ import annotations

from roce_tune.captures import decode_capture
from roce_tune.findings import Finding, Location, RoceTuneError, Severity
from roce_tune.verify.nccl.jsonfile import parse_json
from roce_tune.verify.nccl.loglines import per_host_views
from roce_tune.verify.nccl.model import RULE_NOT_NCCL, NcclRun, not_nccl_error
from roce_tune.verify.nccl.summary import finalize_run
from roce_tune.verify.nccl.text import parse_text


def parse_nccl_output(text: str, source: str = "<text>") -> list[NcclRun]:
    """Parse nccl-tests stdout (any layout) or its ``-J`` JSON file into runs, in file order.

    Args:
        text: the whole output; noise (NCCL logs, prompts, launcher lines) may be anywhere.
        source: file name used in findings and kept in ``NcclRun.source``.

    Returns:
        One :class:`NcclRun` per collective table (or per JSON document). Bandwidths are GB/s.

    Raises:
        RoceTuneError: rule RT301 when the text is empty or holds no nccl-tests header, table,
            summary or failure line (the message names ``source`` and the first line).
    """
    body = text.lstrip("\ufeff \t\r\n")
    if not body:
        raise not_nccl_error(source, text, "empty")
    facts = parse_json(body, source) if body[0] in "{[" else []
    # "[user@host ~]$ …" starts with "[" too; pdsh/clush output holds one run per host
    facts = facts or sorted((f for view in per_host_views(text) or [text] for f in parse_text(view, source)),
                            key=lambda f: f.line)
    if not facts:
        raise not_nccl_error(source, text, "no nccl-tests header, results table or summary found")
    return [finalize_run(f) for f in facts]


def parse_nccl_file(path: str) -> list[NcclRun]:
    """Read ``path`` (UTF-8, or UTF-16 with its byte order mark as Windows PowerShell redirects write it;
    undecodable bytes replaced: :func:`roce_tune.captures.decode_capture`) and :func:`parse_nccl_output` it.

    Raises:
        RoceTuneError: RT301 when the file cannot be read or is not nccl-tests output.
    """
    try:
        with open(path, "rb") as fh:
            text = decode_capture(fh.read())
    except OSError as exc:
        raise RoceTuneError([Finding(
            rule=RULE_NOT_NCCL, severity=Severity.error,
            message=f"{path}: cannot read nccl-tests output ({exc.strerror or exc})",
            fix="check the path", location=Location(file=path))]) from None
    return parse_nccl_output(text, source=path)
