"""Findings: the one shape every error, warning and note takes, from loader to lint to tuner.

A :class:`Finding` names where it is (file, line, column, field path, or device/port), a stable rule
ID, a severity and a fix. :class:`RoceTuneError` carries a list of findings so a run reports every
problem at once.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from enum import Enum

from pydantic import BaseModel, ConfigDict, field_validator

#: Longest message or fix a finding keeps (the longest the shipped rules write is < 1,000 characters);
#: anything longer is cut with "…" so a hostile value cannot flood a terminal or a CI annotation.
MESSAGE_LIMIT = 2000
#: Characters that would break a finding out of its line or hide text: C0 (incl. \n, \r, \t, ESC), DEL,
#: C1 (incl. NEL U+0085), the Unicode line/paragraph separators U+2028/U+2029, bidi controls and BOM.
_UNSAFE_RE = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\u200e\u200f\u202a-\u202e\u2066-\u2069\ufeff]")
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _escape(match: re.Match[str]) -> str:
    ch = match.group()
    code = ord(ch)
    return _NAMED.get(ch) or (f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}")


def one_line(text: str, limit: int | None = None) -> str:
    """``text`` with every line-breaking or invisible control character escaped (``\\n``, ``\\x1b``,
    ``\\u2028`` …), cut to ``limit`` characters with a final "…" when longer."""
    out = _UNSAFE_RE.sub(_escape, text)
    if limit is not None and len(out) > limit:
        out = out[: limit - 1] + "…"
    return out


def short_repr(value: object, limit: int = 60) -> str:
    """``repr(value)`` on one line, cut to ``limit`` characters: how a message quotes a user's value."""
    return one_line(repr(value), limit)


class Severity(str, Enum):
    """Finding severity. ``error`` fails lint and plan; ``warning`` fails ``lint --strict``."""

    error = "error"
    warning = "warning"
    info = "info"


class Location(BaseModel):
    """Where a finding points: a file position (1-based line and column) and/or a device/port."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    file: str | None = None
    line: int | None = None
    col: int | None = None
    path: str | None = None  # dotted field path, e.g. ``switches[0].ports[3].speed``
    device: str | None = None
    port: str | None = None

    @field_validator("file", "path", "device", "port")
    @classmethod
    def _one_line(cls, value: str | None) -> str | None:
        return None if value is None else one_line(value, MESSAGE_LIMIT)

    def __str__(self) -> str:
        parts = []
        if self.file:
            pos = self.file
            if self.line is not None:
                pos += f":{self.line}"
                if self.col is not None:
                    pos += f":{self.col}"
            parts.append(pos)
        if self.device:
            parts.append(self.device + (f":{self.port}" if self.port else ""))
        if self.path:
            parts.append(self.path)
        return " ".join(parts) if parts else "<inventory>"


class Finding(BaseModel):
    """One problem or observation.

    Attributes:
        rule: stable ID (``RT0xx`` loader/schema, ``RT1xx`` lint, ``RT2xx`` tuner safety checks).
        severity: error / warning / info.
        message: what is wrong, in plain words (always one line: control characters are escaped and
            anything past :data:`MESSAGE_LIMIT` characters is cut).
        fix: what to change (the same).
        location: where.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    rule: str
    severity: Severity
    message: str
    fix: str = ""
    location: Location = Location()

    @field_validator("message", "fix")
    @classmethod
    def _one_line(cls, value: str) -> str:
        return one_line(value, MESSAGE_LIMIT)

    def __str__(self) -> str:
        s = f"{self.location}: {self.severity.value} {self.rule}: {self.message}"
        if self.fix:
            s += f" (fix: {self.fix})"
        return s


class RoceTuneError(Exception):
    """Raised with every finding that stopped a run (never a partial list)."""

    def __init__(self, findings: Iterable[Finding]):
        self.findings = list(findings)
        super().__init__("\n".join(str(f) for f in self.findings))


def has_errors(findings: Iterable[Finding]) -> bool:
    """True if any finding is error-level."""
    return any(f.severity is Severity.error for f in findings)


#: Exceptions a tuner or renderer raises when an input slipped past the inventory rules: reported as RT299
#: (with the inventory's position) instead of a traceback. Every such case is a missing lint rule.
TUNER_FAILURES: tuple[type[BaseException], ...] = (ValueError, ArithmeticError, LookupError)


def internal_finding(exc: BaseException, file: str, stage: str) -> Finding:
    """RT299: ``stage`` ("derive", "render") raised ``exc`` on an inventory lint accepted (a roce-tune
    bug)."""
    return Finding(rule="RT299", severity=Severity.error,
                   message=f"the inventory passed lint but the plan could not {stage}: {type(exc).__name__}: "
                   f"{exc}",
                   fix="check the values this message names; please report it as a roce-tune bug (a lint "
                       "rule should have caught it)", location=Location(file=file, line=1, col=1))
