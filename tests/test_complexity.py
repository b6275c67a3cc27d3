"""No function in roce_tune/ above cyclomatic complexity 15 (radon), issue 11.

The whole of roce_tune/ is checked (roce_tune/deploy/ and roce_tune/platforms/ included).

Functions still above the limit are listed in ``complexity_baseline.json`` with the complexity they had
when it was written. The list only shrinks: a function not on it that goes above 15 fails, a listed one
that grows fails, and a listed one that is now at or below 15 (or gone) fails until its entry is removed.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

from radon.complexity import cc_visit
from radon.visitors import Class, Function

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "roce_tune"
LIMIT = 15
BASELINE: dict[str, int] = json.loads((Path(__file__).with_name("complexity_baseline.json")).read_text())


def _blocks(path: Path) -> Iterator[tuple[str, int]]:
    rel = path.relative_to(ROOT).as_posix()
    for block in cc_visit(path.read_text(encoding="utf-8")):
        functions = block.methods if isinstance(block, Class) else [block]
        for f in functions:
            assert isinstance(f, Function)
            yield f"{rel}::{f.fullname}", f.complexity


def _complexities() -> dict[str, int]:
    out: dict[str, int] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        for name, cc in _blocks(path):
            out[name] = max(cc, out.get(name, 0))
    return out


def test_no_function_above_limit() -> None:
    found = _complexities()
    assert len(found) > 500  # the walk saw the package
    new = {n: cc for n, cc in found.items() if cc > LIMIT and n not in BASELINE}
    grown = {n: (BASELINE[n], cc) for n, cc in found.items() if n in BASELINE and cc > BASELINE[n]}
    assert not new, f"functions above cyclomatic complexity {LIMIT}: split them into named steps: {new}"
    assert not grown, f"listed functions grew (baseline, now): {grown}"


def test_baseline_only_shrinks() -> None:
    found = _complexities()
    stale = sorted(n for n in BASELINE if found.get(n, 0) <= LIMIT)
    assert not stale, f"now at or below {LIMIT} (or gone): remove from complexity_baseline.json: {stale}"
