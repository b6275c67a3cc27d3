"""plan.md's headroom and ECN tables say which of their numbers the inventory pinned.

A reviewer reads these tables first; a pinned Kmin or xoff sat in a row whose ``source``/``model`` column said
``derived``/``sonic-static``, i.e. as if the formula had given it, with the pin only in a later section."""

from __future__ import annotations

from pathlib import Path

from roce_tune.pipeline import plan_inventory

REPO = Path(__file__).resolve().parents[2]
LAB = REPO / "inventories" / "lab-2node.yaml"
PINS = """  overrides:
    - {role: leaf, set: {kmin_bytes: 200KB}, reason: "vendor TAC advice"}
    - {device: lab-leaf1, port: Ethernet8, set: {xoff_bytes: 200000}, reason: "long cable"}
"""


def _rows(md: str, section: str) -> list[list[str]]:
    body = md.split(f"## {section}", 1)[1].split("\n## ", 1)[0]
    return [[c.strip() for c in ln.strip("|").split("|")] for ln in body.splitlines()
            if ln.startswith("| ") and not ln.startswith("|---")][1:]


def test_pinned_headroom_and_ecn_values_are_marked_in_their_tables(tmp_path: Path) -> None:
    inv = tmp_path / "lab.yaml"
    inv.write_text(LAB.read_text().replace("  cnp_priority: 6\n", "  cnp_priority: 6\n" + PINS))
    md = plan_inventory(inv, None, scorecards=False).files["plan.md"]
    headroom = {r[6]: r[4] for r in _rows(md, "PFC headroom")}  # xoff B -> model column
    assert headroom == {"200000": "sonic-static (pinned: xoff_bytes)", "34816": "sonic-static"}, headroom
    (ecn,) = _rows(md, "ECN on the lossless queue")
    assert (ecn[2], ecn[3]) == ("derived (pinned: kmin_bytes)", "200000"), ecn


def test_an_unpinned_plan_keeps_its_tables() -> None:
    md = plan_inventory(LAB, None, scorecards=False).files["plan.md"]
    assert "pinned:" not in md
    assert [r[4] for r in _rows(md, "PFC headroom")] == ["sonic-static"]
    assert [r[2] for r in _rows(md, "ECN on the lossless queue")] == ["derived"]
