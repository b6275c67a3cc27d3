"""README stays true: the two set-up commands, the CI hook-up, and every lint rule documented."""

from __future__ import annotations

import re
from pathlib import Path

from roce_tune.inventory.lint import rules_markdown

REPO = Path(__file__).resolve().parents[1]
README = (REPO / "README.md").read_text(encoding="utf-8")
MAIN_CMD = "python3 -m pip install . && roce-tune plan inventories/site.yaml"
PYTEST_CMD = "python3 -m pytest -q -n auto --dist loadgroup"
TEST_CMD = f"python3 -m pip install -e '.[test]' && {PYTEST_CMD}"


def test_two_commands_present_and_ci_runs_the_test_command() -> None:
    assert MAIN_CMD in README
    assert TEST_CMD in README
    ci = (REPO / ".ci" / "run").read_text()
    assert "python3 -m pip install -q -e '.[test]'" in ci
    assert [ln.strip() for ln in ci.splitlines() if "-m pytest" in ln] == [PYTEST_CMD]  # no filter, no -m


def _sections(text: str, level: str) -> dict[str, str]:
    return {m.group(1): m.group(2).strip() for m in re.finditer(
        rf"^{level} (RT\d{{3}})\n(.*?)(?=^#{{2,4}} |\Z)", text, re.M | re.S)}


def test_every_rule_documented_with_bad_and_fixed_examples() -> None:
    generated = _sections(rules_markdown(), "###")
    in_readme = _sections(README, "####")
    assert len(generated) >= 25
    assert set(in_readme) == set(generated)
    for rid, body in generated.items():
        assert in_readme[rid] == body, f"README's section for {rid} is out of date (regenerate)"
        if rid.startswith("RT1"):
            assert "Bad:" in body and "Fixed:" in body, f"{rid} lacks a bad or a fixed example"


def test_readme_rules_match_the_generated_docs() -> None:
    generated = rules_markdown()
    for block in re.findall(r"```yaml\n(.*?)```", generated, re.S):
        assert block in README, "README's lint rule examples are out of date: regenerate from rules_markdown()"
