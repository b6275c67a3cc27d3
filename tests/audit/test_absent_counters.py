"""A counter an output does not carry is absent, never 0 (EOS ``show priority-flow-control counters |
json`` with a key missing), and an output that merely shares a key name is not read as that command
(``show interfaces | json`` has ``interfaceCounters`` in every interface)."""

from __future__ import annotations

from tests.audit.conftest import rules


def test_eos_pfc_json_missing_key_is_absent(captures) -> None:  # type: ignore[no-untyped-def]
    text = ('leaf3#show priority-flow-control counters | json\n'
            '{"interfaceCounters": {"Ethernet1": {"rxFrames": 12}, "Ethernet2": {"rxFrames": 3, '
            '"txFrames": 9}}}\n')
    sw = captures({"leaf3.txt": text}).data.switches["leaf3"]
    assert "pfc_tx_all" not in sw.ports["Ethernet1"] and sw.ports["Ethernet1"]["pfc_rx_all"].value == 12
    assert sw.ports["Ethernet2"]["pfc_tx_all"].value == 9


def test_show_interfaces_json_is_not_the_pfc_counters(captures) -> None:  # type: ignore[no-untyped-def]
    text = ('leaf3#show interfaces | json\n'
            '{"interfaces": {"Ethernet1": {"mtu": 9214, "interfaceCounters": {"inDiscards": 0}}}}\n')
    r = captures({"leaf3.txt": text})
    assert [k for _, _, k in r.data.blocks if k.startswith("eos")] == []
    assert [u.command for u in r.data.unparsed] == ["show interfaces | json"]
    assert not rules(r)


def test_eos_pfc_json_evidence_is_the_port_line(captures) -> None:  # type: ignore[no-untyped-def]
    text = ('leaf3#show priority-flow-control counters | json\n{\n    "interfaceCounters": {\n'
            '        "Ethernet1": {\n            "rxFrames": 12,\n            "txFrames": 4\n'
            '        }\n    }\n}\n')
    sw = captures({"leaf3.txt": text}).data.switches["leaf3"]
    assert str(sw.ports["Ethernet1"]["pfc_rx_all"].ev) == "leaf3.txt:4"
