"""Findings: the one shape every error, warning and note takes, from loader to lint to tuner.

A :class:`Finding` names where it is (file, line, column, field path, or device/port), a stable rule
ID, a severity and a fix. :class:`RoceTuneError` carries a list of findings so a run reports every
problem at once.
"""

from __future__ import annotations

from collections.abc import Iterable
from enum import Enum

from pydantic import BaseModel, ConfigDict


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
        message: what is wrong, in plain words.
        fix: what to change.
        location: where.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    rule: str
    severity: Severity
    message: str
    fix: str = ""
    location: Location = Location()

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
