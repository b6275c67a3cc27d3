"""The switch outputs audit reads are declared by the platforms (``CAPTURE_FORMATS``), each with its parser:
audit reaches every switch parser through the registry, never by importing a platform's module."""

from __future__ import annotations

import pytest

from roce_tune.audit.expect import expect_from_policy
from roce_tune.audit.model import AuditData
from roce_tune.audit.readers import SWITCH_KINDS, Ctx
from roce_tune.captures import Block
from roce_tune.inventory.models import Policy
from roce_tune.platforms.captures import CaptureFormat, capture_formats


def test_every_switch_format_has_a_reader_and_its_platforms_parser() -> None:
    formats = [(p, f) for p, f in capture_formats() if f.kind != "running_config"]
    assert formats
    missing = [f"{p} {f.name}: kind {f.kind}" for p, f in formats if f.kind not in SWITCH_KINDS]
    assert not missing, "capture formats without an audit reader: " + "; ".join(missing)
    unparsed = [f"{p} {f.name}" for p, f in formats if f.parse is None]
    assert not unparsed, "capture formats without the platform's parser: " + "; ".join(unparsed)
    # every kind audit knows is printed by some platform (no reader left over)
    assert set(SWITCH_KINDS) == {f.kind for _, f in formats}


def test_a_format_declared_without_its_parser_is_named() -> None:
    fmt = CaptureFormat(name="show pfc counters", pattern=r"^\s*Port\s+Rx", kind="pfc_rx_tx_tables")
    block = Block(file="leaf1.txt", device="leaf1", command="show pfc counters", prompt_line=1,
                  lines=[(2, "  Port Rx  PFC0  PFC3"), (3, "-------  ----  ----"), (4, "Ethernet0  0  5")])
    ctx = Ctx(AuditData(), expect_from_policy(Policy(), "policy defaults"))
    with pytest.raises(ValueError,
                       match=r"capture format 'show pfc counters' \(kind pfc_rx_tx_tables\) declares no"):
        SWITCH_KINDS[fmt.kind](block, ctx, "any", fmt)


def test_junos_counters_point_at_their_own_lines(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """Junos ``show interfaces IF extensive`` / ``show interfaces queue IF`` hold a port's counters many lines
    below its ``Physical interface: et-0/0/12,`` line (the port written with a comma): each value's evidence
    was the prompt line, not the ``Priority :  3`` or ``Total-dropped packets:`` line it was read from."""
    from pathlib import Path

    from roce_tune.audit import audit_dir

    fixtures = Path(__file__).resolve().parents[1] / "verify" / "fixtures" / "switch"
    text = "".join((fixtures / f"junos-show-interfaces-{n}.txt").read_text()
                   for n in ("et-0-0-12-extensive", "queue-et-0-0-12"))
    (tmp_path / "qfx-leaf4.txt").write_text(text)
    lines = text.splitlines()
    port = audit_dir(tmp_path).data.switches["qfx-leaf4"].ports["et-0/0/12"]
    at = {name: lines[v.ev.line - 1].split(":")[0].strip() for name, v in port.items()}
    assert at["pfc_rx_prio3"] == at["pfc_tx_prio3"] == "Priority" and "61377" in lines[
        port["pfc_tx_prio3"].ev.line - 1]
    q3 = [no for no, t in enumerate(lines, start=1) if t.startswith("Queue: 3")][0]
    assert port["q3_tx_pkts"].ev.line > q3 + 2 and at["q3_tx_pkts"] == "Packets"
    assert (at["q3_drop_pkts"], at["q3_ecn_marked_pkts"]) == ("Total-dropped packets", "ECN-CE packets")
    assert at["q0_drop_pkts"] == "Total-dropped packets" and port["q0_drop_pkts"].ev.line < q3


def test_nxos_queuing_counters_point_at_their_own_rows(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """NX-OS ``show queuing interface``: each queue counter's evidence is its row in the ``QOS GROUP n`` box
    and each PFC counter its ``PFC_COS`` row (the evidence was the prompt line for all of them)."""
    from pathlib import Path

    from roce_tune.audit import audit_dir

    fixture = Path(__file__).resolve().parents[1] / "verify" / "fixtures" / "switch"
    text = (fixture / "nxos-show-queuing-interface-e1-7.txt").read_text()
    (tmp_path / "spine-n2.txt").write_text(text)
    lines = text.splitlines()
    port = audit_dir(tmp_path).data.switches["spine-n2"].ports["Ethernet1/7"]
    row = {name: lines[v.ev.line - 1] for name, v in port.items()}
    assert "614220981" in row["q3_tx_pkts"] and "ECN Marked" in row["q3_ecn_marked_pkts"]
    assert "WRED/AFD & Tail Drop Pkts" in row["q3_drop_pkts"] and "WD & Tail" in row["q3_wd_tx_drop"]
    assert port["q3_tx_pkts"].ev.line > port["q0_tx_pkts"].ev.line
    assert row["pfc_tx_prio3"].split()[:2] == ["3", "3"] and "52904" in row["pfc_tx_prio3"]


def test_cumulus_counters_qos_point_at_their_own_rows(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """NVUE ``nv show interface swpN counters qos``: each counter's evidence is its row of the ``PFC
    Statistics`` / ``Egress Queue Statistics`` / ``Qos Port Statistics`` table (it was the prompt line)."""
    from pathlib import Path

    from roce_tune.audit import audit_dir

    fixture = Path(__file__).resolve().parents[1] / "verify" / "fixtures" / "switch"
    text = (fixture / "cumulus-nv-show-interface-swp3-counters-qos.txt").read_text()
    (tmp_path / "leaf-b2.txt").write_text(text)
    lines = text.splitlines()
    port = audit_dir(tmp_path).data.switches["leaf-b2"].ports["swp3"]
    row = {name: lines[v.ev.line - 1].split() for name, v in port.items()}
    assert row["pfc_tx_prio3"][:5] == ["3", "17", "2210", "48213", "6170880"]
    assert row["q3_tx_pkts"][:2] == ["3", "90412733"] and row["q6_tx_pkts"][:2] == ["6", "1203384"]
    assert row["q3_ecn_marked_pkts"][0] == "ecn-marked-packets"
