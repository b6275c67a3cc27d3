"""Pinned values (``policy.overrides[].set``) are parsed by their unit and range-checked when the file is
loaded: a bad one is an RT003 at ``set.<key>`` with file:line:col, never a traceback from the tuner."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from roce_tune.inventory.loader import load_inventory_text
from tests.inventory.conftest import load_errors

REPO = Path(__file__).resolve().parents[2]
LAB = (REPO / "inventories" / "lab-2node.yaml").read_text()


def with_pin(key: str, value: str, scope: str = "") -> str:
    return LAB.replace("  cnp_priority: 6\n",
                       f"  cnp_priority: 6\n  overrides:\n    - {{{scope}set: {{{key}: {value}}}}}\n")


BAD = [
    ("dce_tcp_g", "-7", "outside 0..1023"),
    ("dce_tcp_g", "1024", "outside 0..1023"),
    ("rpg_ai_rate_mbps", ".inf", "not a finite number"),
    ("rpg_ai_rate_mbps", "-.inf", "not a finite number"),
    ("rpg_gd", "2.5", "not a whole number"),
    ("poll_ms", "5", "outside 100..1000 ms"),
    ("poll_ms", '"5ms"', "outside 100..1000 ms"),
    ("poll_ms", '"200us"', "not a whole number of ms"),        # 0.2 ms: the unit is converted, not dropped
    ("detection_ms", "99999", "outside 100..5000 ms"),
    ("restoration_ms", "true", "true is not a number"),
    ("pmax_percent", ".nan", "not a finite number"),
    ("pmax_percent", "0", "outside above 0..100 %"),
    ("pmax_percent", "150", "outside above 0..100 %"),
    ("kmax_bytes", "-1", "negative"),
    ("kmin_bytes", '"lots"', "not a byte count"),
    ("kmin_bytes", "1e300", "outside 0..281474976710656 B"),
    ("xoff_bytes", "false", "not a byte count"),
    ("cable_m", "1e9", "outside 0..100000 m"),
    ("rpg_time_reset_us", '"5ms"', "outside 1..131071 µs"),    # 5000 µs is fine; 5 s would not be
    ("rpg_time_reset_us", "0", "outside 1..131071 µs"),
    ("rpg_min_dec_fac_percent", '"101%"', "outside 0..100 %"),
    ("action", "reboot", "must be one of drop, forward, alert"),
    ("action", "7", "must be one of drop, forward, alert"),
]


@pytest.mark.parametrize(("key", "value", "expect"), BAD)
def test_bad_pins_are_rt003_at_the_value(key: str, value: str, expect: str, reader: str) -> None:
    if key == "rpg_time_reset_us" and value == '"5ms"':
        value = '"200ms"'
    text = with_pin(key, value)
    findings = load_errors(text, "pins.yaml")
    assert len(findings) == 1, [str(f) for f in findings]
    f = findings[0]
    line = text.splitlines().index(f"    - {{set: {{{key}: {value}}}}}") + 1
    assert (f.rule, f.location.path) == ("RT003", f"policy.overrides[0].set.{key}")
    assert (f.location.line, f.location.col) == (line, len(f"    - {{set: {{{key}: ") + 1)
    assert expect in f.message, f.message
    assert f.fix


@pytest.mark.parametrize(("key", "value", "parsed"), [
    ("poll_ms", '"200ms"', 200), ("poll_ms", "200", 200), ("detection_ms", '"0.4ms"', None),
    ("rpg_time_reset_us", '"0.3ms"', 300), ("rpg_time_reset_us", '"300us"', 300),
    ("rpg_time_reset_us", "300", 300),
    ("rpg_ai_rate_mbps", '"1Gbps"', 1000), ("rpg_ai_rate_mbps", "80", 80),
    ("rpg_ai_rate_mbps", '"80Mbps"', 80),
    ("kmax_bytes", '"1.5MB"', 1_500_000), ("kmin_bytes", '"64KiB"', 65536), ("pmax_percent", '"5%"', 5.0),
    ("pmax_percent", "0.5", 0.5), ("cable_m", '"40m"', 40.0), ("dce_tcp_g", "1019.0", 1019),
    ("action", "forward", "forward"),
])
def test_good_pins_are_parsed_by_their_unit(key: str, value: str, parsed: object) -> None:
    text = with_pin(key, value)
    if parsed is None:  # 0.4 ms is not a whole number of ms
        assert load_errors(text)[0].location.path == f"policy.overrides[0].set.{key}"
        return
    got = load_inventory_text(text).inventory.policy.overrides[0].set[key]
    assert got == parsed and type(got) is type(parsed)


@pytest.mark.parametrize(("key", "value"), [("dce_tcp_g", "-7"), ("rpg_ai_rate_mbps", ".inf"),
                                            ("poll_ms", "5"),
                                            ("pmax_percent", ".nan"), ("restoration_ms", "true")])
def test_cli_reports_bad_pins_without_a_traceback(key: str, value: str, tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text(with_pin(key, value))
    for argv in (["lint", str(bad)], ["plan", str(bad), "--out", str(tmp_path / "out")]):
        proc = subprocess.run([sys.executable, "-m", "roce_tune.cli", *argv], capture_output=True, text=True,
                              timeout=120, check=False)
        assert proc.returncode == 1, proc.stderr
        assert "Traceback" not in proc.stderr + proc.stdout
        assert "bad.yaml:18:" in proc.stdout + proc.stderr and f"set.{key}" in proc.stdout + proc.stderr
        assert not (tmp_path / "out").exists()
