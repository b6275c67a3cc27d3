"""``roce-tune audit``: what is wrong with the fabric that runs now, from captured command output.

:mod:`roce_tune.captures` splits pasted terminal captures into command blocks (LLDP import uses it too),
:mod:`.readers` detects and reads each block (with the switch parsers the platforms declare and the host
parsers of :mod:`roce_tune.verify`), :mod:`.model` holds what was seen with the capture line of every value
(unknown is never zero), :mod:`.expect` gives the plan or policy to compare with, :mod:`.checks` runs the
RT4xx checks and :mod:`.run` ties it together and formats the report.
"""

from __future__ import annotations

from roce_tune.audit.live import LiveOptions
from roce_tune.audit.run import FORMATS, AuditResult, AuditUsageError, audit_dir, audit_live, format_report

__all__ = ["FORMATS", "AuditResult", "AuditUsageError", "LiveOptions", "audit_dir", "audit_live",
           "format_report"]
