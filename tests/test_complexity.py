"""No function in roce_tune/ above cyclomatic complexity 15 (radon), issue 11.

The whole of roce_tune/ is checked (roce_tune/deploy/ and roce_tune/platforms/ included), with no
exceptions: a function that goes above 15 fails and is split into named steps.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from radon.complexity import cc_visit
from radon.visitors import Class, Function

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "roce_tune"
LIMIT = 15


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
    above = {n: cc for n, cc in sorted(found.items()) if cc > LIMIT}
    assert not above, f"functions above cyclomatic complexity {LIMIT}: split them into named steps: {above}"
