"""Format findings for people (text), programs (json) and GitHub Actions annotations (github).

    >>> from roce_tune.findings import Finding, Location, Severity
    >>> f = Finding(rule="RT104", severity=Severity.error, message="NIC is 200G but port is 400G",
    ...             fix="set speed: 400G", location=Location(file="inv.yaml", line=15, col=16))
    >>> print(format_findings([f], "github"))
    ::error file=inv.yaml,line=15,col=16,title=RT104::NIC is 200G but port is 400G (fix: set speed: 400G)
"""

from __future__ import annotations

import json
from collections.abc import Iterable

from roce_tune.findings import Finding, Severity

FORMATS = ("text", "json", "github")
_GH_LEVEL = {Severity.error: "error", Severity.warning: "warning", Severity.info: "notice"}


def _gh_data(text: str) -> str:
    """Escape a workflow-command message (GitHub Actions toolkit ``escapeData``)."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _gh_prop(text: str) -> str:
    """Escape a workflow-command property value (toolkit ``escapeProperty``)."""
    return _gh_data(text).replace(":", "%3A").replace(",", "%2C")


def _github_line(f: Finding) -> str:
    """One ``::error file=F,line=L,col=C,title=RULE::message`` workflow command."""
    loc = f.location
    props = []
    if loc.file:
        props.append(f"file={_gh_prop(loc.file)}")
        if loc.line is not None:
            props.append(f"line={loc.line}")
            if loc.col is not None:
                props.append(f"col={loc.col}")
    props.append(f"title={_gh_prop(f.rule)}")
    where = " ".join(p for p in (loc.device and (loc.device + (f":{loc.port}" if loc.port else "")),
                                 None if loc.file else loc.path) if p)
    message = (f"{where}: " if where else "") + f.message + (f" (fix: {f.fix})" if f.fix else "")
    return f"::{_GH_LEVEL[f.severity]} {','.join(props)}::{_gh_data(message)}"


def format_findings(findings: Iterable[Finding], fmt: str = "text") -> str:
    """Render ``findings`` in ``fmt``.

    Args:
        findings: findings in the order to print (lint returns them sorted by file position).
        fmt: ``text`` (one ``file:line:col device path: severity RULE: message (fix: ...)`` line each;
            the caller prints any summary), ``json`` (an array of finding objects: rule, severity, message,
            fix, location{file,line,col,path,device,port}) or ``github`` (``::error file=F,line=L,col=C,
            title=RT101::message`` workflow commands; warning -> ``::warning``, info -> ``::notice``).

    Returns:
        The rendered text, ending without a newline (text/github) or as a JSON document.

    Raises:
        ValueError: unknown ``fmt``.
    """
    items = list(findings)
    if fmt == "text":
        return "\n".join(str(f) for f in items)
    if fmt == "json":
        return json.dumps([f.model_dump(mode="json") for f in items], indent=2, ensure_ascii=False)
    if fmt == "github":
        return "\n".join(_github_line(f) for f in items)
    raise ValueError(f"unknown format {fmt!r}; use one of {', '.join(FORMATS)}")
