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


def test_a_truncated_queue_row_is_skipped_not_fatal(captures) -> None:  # type: ignore[no-untyped-def]
    """A capture cut inside a ``show queue counters`` row (``Ethernet196    UC``) crashed the whole audit
    with 'error: None: invalid literal for int()'."""
    text = ("admin@leaf1:~$ show queue counters Ethernet196\n"
            "       Port    TxQ    Counter/pkts    Counter/bytes    Drop/pkts     Drop/bytes\n"
            "-----------  -----  --------------  ---------------  -----------  -------------\n"
            "Ethernet196    UC0              34             9419            0              0\n"
            "Ethernet196    UC")
    sw = captures({"leaf1.txt": text}).data.switches["leaf1"]
    assert sw.ports["Ethernet196"]["q0_tx_pkts"].value == 34


def test_a_reader_failing_on_one_block_lists_it_and_audits_the_rest(captures, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Whatever a parser raises on a mangled block, the block is listed as not understood with its file,
    line and the reason, and the other blocks are still audited."""
    from roce_tune.audit import readers

    def broken(b, ctx):  # type: ignore[no-untyped-def]
        raise ValueError("mangled table")

    monkeypatch.setattr(readers, "BLOCK_READERS", tuple(
        (n, p, c, broken if n == "mlnx_qos" else r) for n, p, c, r in readers.BLOCK_READERS))
    text = ("root@gpu01:~# mlnx_qos -i ens1f0np0\nPFC configuration:\n        enabled 0 0 0 0 0 0 0 0\n"
            "root@gpu01:~# ethtool -S ens1f0np0\n     tx_prio3_pause: 7\n")
    r = captures({"gpu01.txt": text})
    got = [(u.file, u.line, u.command) for u in r.data.unparsed]
    assert got == [("gpu01.txt", 1, "mlnx_qos -i ens1f0np0")]
    assert "mangled table" in r.data.unparsed[0].first
    assert r.data.hosts["gpu01"].nics["ens1f0np0"].ethtool["tx_prio3_pause"].value == 7


def test_a_running_config_read_back_cannot_take_is_listed_not_fatal(captures) -> None:  # type: ignore[no-untyped-def]
    """A hand-edited config_db.json whose row is not an object made the SONiC read-back raise
    AttributeError through the whole audit."""
    db = {"DEVICE_METADATA": {"localhost": 5}, "PORT_QOS_MAP": {"Ethernet0": {"pfc_enable": "3"}}}
    import json

    running = "admin@leaf5:~$ show runningconfiguration all\n" + json.dumps(db, indent=2) + "\n"
    r = captures({"leaf5.txt": running,
                  "gpu01.txt": "root@gpu01:~# ethtool -S ens1f0np0\n     tx_prio3_pause: 7\n"})
    assert [(u.file, u.line) for u in r.data.unparsed] == [("leaf5.txt", 1)]
    # the read-back names the JSON path of the row it cannot take (it was an AttributeError's text)
    assert "/DEVICE_METADATA/localhost is a JSON number" in r.data.unparsed[0].first, r.data.unparsed[0].first
    assert r.data.hosts["gpu01"].nics["ens1f0np0"].ethtool["tx_prio3_pause"].value == 7
