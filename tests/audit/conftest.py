"""Shared helpers for the audit tests: write captures into a temp dir and audit them."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from roce_tune.audit import audit_dir
from roce_tune.audit.run import AuditResult


def field_cases_dir() -> Path:
    """``../shared/field-cases`` beside the repository, or ``$ROCE_TUNE_REFERENCES/field-cases``."""
    env = os.environ.get("ROCE_TUNE_REFERENCES")
    if env:
        return Path(env) / "field-cases"
    return Path(__file__).resolve().parents[2].parent / "shared" / "field-cases"


@pytest.fixture
def captures(tmp_path: Path):
    """``captures({"gpu01.txt": text, …})`` → the AuditResult of ``audit --from`` over those files."""

    def run(files: dict[str, str], **kw: object) -> AuditResult:
        for name, text in files.items():
            (tmp_path / name).write_text(text, encoding="utf-8")
        return audit_dir(tmp_path, **kw)  # type: ignore[arg-type]

    return run


def rules(result: AuditResult) -> dict[str, list]:
    """Findings by rule."""
    out: dict[str, list] = {}
    for f in result.findings:
        out.setdefault(f.rule, []).append(f)
    return out


def ev(finding) -> list[str]:  # type: ignore[no-untyped-def]
    """Evidence of a finding as ``file:line`` strings."""
    return [str(e) for e in finding.evidence]
