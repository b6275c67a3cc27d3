"""A secret pasted into a ``credentials`` field (``password_env: Hunter2-Pa55`` instead of a variable name)
is never echoed by lint/plan: the finding keeps its file:line:column and says what is wrong, the value is
not shown (CI logs keep what lint prints)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from ruamel.yaml import YAML

REPO = Path(__file__).resolve().parents[2]
SECRET = "Hunter2-Pa55!x"


@pytest.mark.parametrize("field, value", [("password_env", SECRET), ("password_env", 87654321),
                                          ("password_env", [SECRET]), ("username_env", SECRET),
                                          ("key_file_env", SECRET)])
def test_full_form_finding_hides_the_value(tmp_path: Path, field: str, value: object) -> None:
    yaml = YAML()
    data = yaml.load((REPO / "inventories" / "lab-2node.yaml").read_text())
    data["switches"][0]["credentials"] = {field: value}
    inv = tmp_path / "inv.yaml"
    with open(inv, "w") as fh:
        yaml.dump(data, fh)
    for fmt in ("text", "json"):
        proc = subprocess.run([sys.executable, "-m", "roce_tune.cli", "lint", str(inv), "--format", fmt],
                              capture_output=True, text=True, cwd=REPO, timeout=120)
        out = proc.stdout + proc.stderr
        assert proc.returncode != 0, out
        assert str(value if not isinstance(value, list) else value[0]) not in out, out
        assert f"switches[0].credentials.{field}" in out and "RT003" in out, out
        assert "not shown: a credentials field may hold a pasted secret" in out, out


def test_intent_form_finding_hides_the_value(tmp_path: Path) -> None:
    text = (REPO / "inventories" / "intent" / "lab-2node.yaml").read_text()
    inv = tmp_path / "intent.yaml"
    pasted = f"    count_up: port\n    credentials: {{password_env: {SECRET}}}\n    host_ports:"
    inv.write_text(text.replace("    count_up: port\n    host_ports:", pasted, 1))
    proc = subprocess.run([sys.executable, "-m", "roce_tune.cli", "lint", str(inv)], capture_output=True,
                          text=True, cwd=REPO, timeout=120)
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0 and SECRET not in out, out
    assert f"{inv}:37:33 fabric.leaf.credentials.password_env: error RT003" in out, out
