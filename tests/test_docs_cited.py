"""Every ``docs/<name>.md`` a docstring or comment under roce_tune/ cites is a file that ships in docs/."""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def test_every_cited_docs_page_exists() -> None:
    cited: dict[str, list[str]] = {}
    for py in sorted((REPO / "roce_tune").rglob("*.py")):
        for n, line in enumerate(py.read_text(encoding="utf-8").splitlines(), start=1):
            for page in re.findall(r"\bdocs/([\w.-]+\.md)\b", line):
                cited.setdefault(page, []).append(f"{py.relative_to(REPO)}:{n}")
    assert cited  # the pattern still finds the citations
    missing = {page: where for page, where in cited.items() if not (REPO / "docs" / page).is_file()}
    assert missing == {}
