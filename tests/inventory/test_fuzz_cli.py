"""Fuzz the CLI the way a hostile user would (issue 10): structure and text mutations of a valid inventory,
random pinned values, and control characters in every name field. Whatever the input:

* no traceback, exit status 0, 1 or 2 only;
* every error names ``file:line:col``;
* ``lint`` and ``plan`` agree (an inventory that lints clean plans; one with errors writes nothing);
* nothing reaches the RT299 safety net (every tuner precondition is a lint rule).

Bounded and seeded (``derandomize``): the same examples every run, a few seconds in-process through
typer's CliRunner, plus a few real subprocess runs of ``python -m roce_tune.cli``.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import get_args

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from roce_tune.cli import app
from roce_tune.inventory.models import OverrideParam
from tests.inventory.test_name_fields import BAD_SUFFIXES, FIELDS, GOOD, render
from tests.inventory.test_property import line_mutations

RUNNER = CliRunner()
BASE = render()
LINES = BASE.split("\n")
OVERRIDE_LINE = next(i for i, ln in enumerate(LINES) if ln.startswith("    - {device:"))
FUZZ = settings(max_examples=60, deadline=None, derandomize=True, database=None,
                suppress_health_check=list(HealthCheck))

JUNK = st.one_of(
    st.text(max_size=8),
    st.sampled_from(["- ", ": ", "{", "}", "[", "]", "&a ", "*a", "<<: *a",
                     "!!python/object:os.system ", "!x ",
                     '"', "'", "#", "\t", "  ", "\n", "---", "|", ">", "? ", "\r", "\x00", "\ufeff", "\u2028",
                     "9" * 400, "1e999", ".inf", "-.nan", "~", "null", "yes", "true", "0", "-1", "65536",
                     "eth0; reboot", "$(reboot)", "a" * 80, "Ethernet0\n", "é✓机"]),
    st.integers(min_value=-(10**20), max_value=10**20).map(str),
)
PIN_VALUES = st.one_of(
    st.integers(min_value=-(10**7), max_value=10**9).map(str),
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.sampled_from([".nan", ".inf", "-.inf", "true", "false", "null", "~", "[]", "{}", '"5ms"', '"5us"',
                     '"500ns"',
                     '"0.3ms"', '"150KB"', '"1.5MB"', '"64KiB"', '"5%"', '"101%"', '"1Gbps"', '"80Mbps"',
                     '"40m"',
                     '"lots"', "drop", "forward", "alert", "reboot", '""', "1e300", "0", "1", "100", "1000",
                     "5000",
                     "65535", "1048576"]),
)
SCOPES = st.sampled_from(["", "role: leaf, ", "role: spine, ", "role: host, ", "device: leaf1, ",
                          "device: gpu01, ", "device: leaf1, port: Ethernet0, ",
                          "device: gpu01, port: ens1f0np0, ",
                          "device: nope, "])


def structure_mutations() -> st.SearchStrategy[str]:
    """Structure and text mutations of the base inventory (shared with tests/inventory/test_property.py)."""
    return line_mutations(LINES, JUNK)


@st.composite
def override_mutations(draw: st.DrawFn) -> str:
    entries = []
    for _ in range(draw(st.integers(1, 3))):
        keys = draw(st.lists(st.sampled_from(get_args(OverrideParam)), min_size=1, max_size=3, unique=True))
        pins = ", ".join(f"{k}: {draw(PIN_VALUES)}" for k in keys)
        entries.append(f"    - {{{draw(SCOPES)}set: {{{pins}}}}}")
    lines = list(LINES)
    lines[OVERRIDE_LINE: OVERRIDE_LINE + 1] = entries
    return "\n".join(lines)


@st.composite
def name_mutations(draw: st.DrawFn) -> tuple[str, str]:
    """(field, inventory) with a character no name may hold inserted anywhere in that field's value."""
    field = draw(st.sampled_from(sorted(FIELDS)))
    good = GOOD[field]
    bad = draw(st.sampled_from(BAD_SUFFIXES + ["\u0085", "\x1b", "\u200b", "\u202e", ";", "`"]))
    where = draw(st.integers(0, len(good)))
    return field, render(**{field: good[:where] + bad + good[where:]})


_POSITION = re.compile(r"^(?P<file>.+?):(?P<line>\d+):(?P<col>\d+)[: ]")


def check_cli(text: str) -> list[dict]:  # type: ignore[type-arg]
    """Run lint and plan on ``text`` in-process, assert the properties in the module docstring and return
    lint's findings."""
    with tempfile.TemporaryDirectory() as tmp:
        inv = Path(tmp) / "inv.yaml"
        inv.write_bytes(text.encode("utf-8", "surrogatepass"))
        lint = RUNNER.invoke(app, ["lint", "--format", "json", str(inv)])
        assert lint.exception is None or isinstance(lint.exception, SystemExit), lint.exception
        assert lint.exit_code in (0, 1), (lint.exit_code, lint.output)
        findings = json.loads(lint.stdout)
        for f in findings:
            assert f["rule"] != "RT299", f  # a tuner precondition no lint rule caught
            if f["severity"] == "error":
                loc = f["location"]
                assert loc["file"] == str(inv) and loc["line"] >= 1 and loc["col"] >= 1, f
            assert "\n" not in f["message"] and "\u2028" not in f["message"]
        assert (lint.exit_code == 1) == any(f["severity"] == "error" for f in findings)
        out = Path(tmp) / "out"
        plan = RUNNER.invoke(app, ["plan", str(inv), "--out", str(out)])
        assert plan.exception is None or isinstance(plan.exception, SystemExit), plan.exception
        assert "Traceback" not in plan.output
        assert plan.exit_code == lint.exit_code, (lint.stdout, plan.output)  # lint clean <=> plan writes
        if plan.exit_code != 0:
            assert not out.exists()
            errors = [ln for ln in plan.stderr.splitlines() if re.search(r" error RT\d{3}: ", ln)]
            assert errors, plan.stderr
            for ln in errors:
                m = _POSITION.match(ln)
                assert m and m["file"] == str(inv), ln
                assert "RT299" not in ln, ln
        else:
            assert (out / "plan.json").is_file()
    return findings  # type: ignore[no-any-return]


def test_the_base_inventory_plans() -> None:
    check_cli(BASE)


@pytest.mark.slow  # end-to-end (subprocesses/emulators), seconds each: .ci/run runs it (-m slow)
@FUZZ
@given(structure_mutations())
def test_structure_and_text_mutations(text: str) -> None:
    check_cli(text)


@FUZZ
@given(override_mutations())
def test_random_pins(text: str) -> None:
    check_cli(text)


@settings(max_examples=40, deadline=None, derandomize=True, database=None,
          suppress_health_check=list(HealthCheck))
@given(name_mutations())
def test_control_characters_in_every_name_field(case: tuple[str, str]) -> None:
    field, text = case
    findings = check_cli(text)
    assert any(f["rule"] == "RT003" and f["location"]["path"] == FIELDS[field] for f in findings), findings


@pytest.mark.slow  # end-to-end (subprocesses/emulators), seconds each: .ci/run runs it (-m slow)
def test_real_subprocesses_on_hostile_inputs(tmp_path: Path) -> None:
    """The same properties through the installed entry point, with a real interpreter and real streams."""
    cases = {
        "name.yaml": render(port="Ethernet0\n"),
        "pin.yaml": "\n".join(LINES[:OVERRIDE_LINE] + ["    - {set: {rpg_ai_rate_mbps: .inf, poll_ms: 5}}"]
                              + LINES[OVERRIDE_LINE + 1:]),
        "policy.yaml": BASE.replace("policy:\n", "policy:\n  cnp_priority: 0\n", 1),
    }
    for name, text in cases.items():
        inv = tmp_path / name
        inv.write_text(text)
        for argv in (["lint", str(inv)], ["plan", str(inv), "--out", str(tmp_path / f"out-{name}")]):
            proc = subprocess.run([sys.executable, "-m", "roce_tune.cli", *argv], capture_output=True,
                                  text=True,
                                  timeout=120, check=False)
            assert proc.returncode == 1, (name, argv[0], proc.stderr)
            assert "Traceback" not in proc.stdout + proc.stderr
            assert re.search(rf"{re.escape(str(inv))}:\d+:\d+",
                             proc.stdout + proc.stderr), proc.stdout + proc.stderr
        assert not (tmp_path / f"out-{name}").exists()
