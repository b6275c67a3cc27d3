"""``show pfcwd config`` against the plan (RT427) when no running configuration was captured: the table
lists only the ports with a watchdog entry (sonic-utilities ``pfcwd/main.py`` ``collect_config`` skips the
others), so a planned lossless port missing from an all-ports table is a watchdog that is off — while a
table for named ports says nothing about the rest."""

from __future__ import annotations

from pathlib import Path

from roce_tune.audit import audit_dir
from tests.audit.conftest import ev, rules
from tests.audit.test_cli import REPO

LAB = REPO / "inventories" / "lab-2node.yaml"
HEADER = ["     PORT    ACTION    DETECTION TIME    RESTORATION TIME",
          "---------  --------  ----------------  ------------------"]


def _audit(tmp_path: Path, command: str, rows: list[str], running: bool = False):  # type: ignore[no-untyped-def]
    lines = [f"admin@lab-leaf1:~$ {command}", "Changed polling interval to 200ms", *HEADER, *rows]
    (tmp_path / "lab-leaf1.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return audit_dir(tmp_path, LAB)


def test_watchdog_off_and_different_timers_against_the_plan(tmp_path: Path) -> None:
    r = _audit(tmp_path, "show pfcwd config", ["Ethernet8   forward               400                 200"])
    found = {(f.port, f.message): ev(f) for f in rules(r).get("RT427", [])}
    assert len(found) == 2, found
    off = next((m, e) for (p, m), e in found.items() if p == "Ethernet0")
    assert "PFC watchdog is off on lab-leaf1 Ethernet0" in off[0] and off[1] == ["lab-leaf1.txt:1"]
    diff = next((m, e) for (p, m), e in found.items() if p == "Ethernet8")
    assert "action: plan drop, running forward" in diff[0]
    assert "detection (ms): plan 200, running 400" in diff[0]
    assert "restoration" not in diff[0] and diff[1] == ["lab-leaf1.txt:5"]


def test_watchdog_as_planned_is_clean(tmp_path: Path) -> None:
    r = _audit(tmp_path, "show pfcwd config", ["Ethernet0      drop               200                 200",
                                               "Ethernet8      drop               200                 200"])
    assert "RT427" not in rules(r)


def test_a_table_of_named_ports_says_nothing_of_the_others(tmp_path: Path) -> None:
    row = "Ethernet8      drop               200                 200"
    r = _audit(tmp_path, "show pfcwd config Ethernet8", [row])
    assert "RT427" not in rules(r)
    # no entry at all for the port the command names: off
    r = _audit(tmp_path, "show pfcwd config Ethernet8", [])
    assert [f.port for f in rules(r)["RT427"]] == ["Ethernet8"]


def test_a_filtered_table_says_nothing_of_the_ports_it_left_out(tmp_path: Path) -> None:
    r = _audit(tmp_path, 'show pfcwd config | grep -E "PORT|---|Ethernet8"',
               ["Ethernet8      drop               200                 200"])
    assert "RT427" not in rules(r)
