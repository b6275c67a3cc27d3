"""One switch port is one port whatever spelling a command or an output uses: NX-OS takes
``show queuing interface ethernet1/7`` (or ``e1/7``, ``Eth1/7``) and prints ``Ethernet1/7`` or ``Eth1/7`` in
its tables; the plan says ``Ethernet1/7``. Counters of one port split over two names are never compared
(RT422 found no per-priority PFC for the plan's port, RT424 saw drops without the PFC read elsewhere)."""

from __future__ import annotations

import shutil
from pathlib import Path

from roce_tune.audit import audit_dir

FIXTURES = Path(__file__).resolve().parents[1] / "verify" / "fixtures" / "switch"


def test_nxos_port_spellings_are_one_port(tmp_path: Path) -> None:
    for f in FIXTURES.glob("nxos*.txt"):
        shutil.copy(f, tmp_path / f"spine-n2.{f.name}")
    queuing = tmp_path / "spine-n2.nxos-show-queuing-interface-e1-7.txt"
    queuing.write_text(queuing.read_text().replace("interface ethernet1/7", "interface e1/7"))
    sw = audit_dir(tmp_path).data.switches["spine-n2"]
    assert sorted(sw.ports) == ["Ethernet1/1", "Ethernet1/7", "Ethernet1/8"]
    port = sw.ports["Ethernet1/7"]
    assert {"pfc_tx_prio3", "pfc_rx_all", "q3_wd_storm_detected"} <= set(port)
    assert port["pfc_tx_prio3"].ev.file == queuing.name
