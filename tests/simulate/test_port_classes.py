"""Port classes group only ports whose every simulator input is equal, so a class's scorecard (plan.md,
`roce-tune explain ... kmax_bytes`) is the evidence for each port it covers (real inventories, derived)."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from roce_tune.cli import app
from roce_tune.inventory.loader import load_inventory_text
from roce_tune.pipeline import derive_plan
from roce_tune.plan import Plan
from roce_tune.simulate.scorecard import port_class_of, port_classes
from roce_tune.simulate.settings import port_inputs

ROOT = Path(__file__).resolve().parents[2]
LAB = (ROOT / "inventories" / "lab-2node.yaml").read_text(encoding="utf-8")


def _plan(text: str) -> Plan:
    return derive_plan(load_inventory_text(text, "inv.yaml"))


def _assert_each_port_simulated_with_its_own_inputs(plan: Plan) -> None:
    for sw in plan.switches:
        for pp in sw.ports:
            if not pp.lossless:
                continue
            pc = port_class_of(plan, sw.name, pp.name)
            inp = port_inputs(plan, sw, pp)
            assert pc is not None
            assert (pc.buffer_bytes, pc.pfc_alpha, pc.ecn.kmax_bytes) == (inp.buffer_bytes, inp.pfc_alpha,
                                                                           inp.ecn.kmax_bytes)
            assert pc.dcqcn.rpg_time_reset_us == inp.dcqcn.rpg_time_reset_us, f"{sw.name}:{pp.name}"


def test_a_nic_with_other_dcqcn_values_gets_its_own_class() -> None:
    # node2's NIC pinned to a 55 us increase timer: lab-leaf1:Ethernet8 must not be shown node1's scorecard
    plan = _plan(LAB.replace("cnp_priority: 6", "cnp_priority: 6\n  overrides: "
                             "[{device: node2, set: {rpg_time_reset_us: 55}}]", 1))
    classes = port_classes(plan)
    assert len(classes) == 2 and sum(c.ports for c in classes) == 2
    pc = port_class_of(plan, "lab-leaf1", "Ethernet8")
    assert pc is not None and pc.dcqcn.rpg_time_reset_us == 55 and pc.example == "lab-leaf1:Ethernet8"
    _assert_each_port_simulated_with_its_own_inputs(plan)


def test_a_switch_with_another_pool_gets_its_own_class() -> None:
    # a second SN4700 with one lossless port reserves less, so its lossless pool is larger than lab-leaf1's
    two = LAB.replace("hosts:\n", "  - name: lab-leaf2\n    platform: sonic\n    model: SN4700\n"
                      "    role: leaf\n    mgmt: {host: 127.0.0.1, port: 2202}\n    ports:\n"
                      "      - {name: Ethernet0, speed: 400G}\n\nhosts:\n", 1)
    two += ("  - name: node3\n    mgmt: {host: 127.0.0.1, port: 2213}\n    socket_ifname: eno1\n    nics:\n"
            "      - {model: connectx-7, netdev: ens1f0np0, rdma_device: mlx5_0, speed: 400G, "
            "switch_port: \"lab-leaf2:Ethernet0\", cable_length: 2m}\n")
    plan = _plan(two)
    pools = {sw.name: port_inputs(plan, sw, sw.ports[0]).buffer_bytes for sw in plan.switches}
    assert pools["lab-leaf1"] != pools["lab-leaf2"]
    classes = port_classes(plan)
    assert sorted(c.ports for c in classes) == [1, 2]
    _assert_each_port_simulated_with_its_own_inputs(plan)


def test_not_a_lossless_switch_port_has_no_class() -> None:
    plan = _plan(LAB)
    assert port_class_of(plan, "node1", "ens1f0np0") is None
    assert port_class_of(plan, "lab-leaf1", "Ethernet4") is None
    assert port_class_of(plan, "lab-leaf1", "Ethernet0") == port_classes(plan)[0]


@pytest.mark.slow  # end-to-end (subprocesses/emulators), seconds each: .ci/run runs it (-m slow)
def test_explain_shows_the_scorecard_plan_md_shows_for_that_port(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    # explain derived the switch alone (no hosts), so every port got the speed's derived DCQCN: node2's
    # pinned 55 us timer was not in the scorecard explain printed for lab-leaf1:Ethernet8, plan.md's was
    monkeypatch.setenv("ROCE_TUNE_CACHE", str(tmp_path / "cache"))
    inv = tmp_path / "inv.yaml"
    inv.write_text(LAB.replace("cnp_priority: 6", "cnp_priority: 6\n  overrides: "
                               "[{device: node2, set: {rpg_time_reset_us: 55}}]", 1), encoding="utf-8")
    r = CliRunner().invoke(app, ["explain", str(inv), "lab-leaf1:Ethernet8", "kmax_bytes"])
    assert r.exit_code == 0, r.output
    assert "rpg_time_reset 55 us" in r.output
    assert "(1 port, e.g. lab-leaf1:Ethernet8)" in r.output
