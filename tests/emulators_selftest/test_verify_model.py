"""The verify stubs' response model (tests/emulators/verify_stubs/model.py): the PFC onset follows the
buffer configuration of the emulated switch (the same dynamic-threshold rule as the tuner's onset),
overrides replace it, and the penalties are monotone the way the adjust loop relies on."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from roce_tune.inventory.loader import load_inventory
from roce_tune.pipeline import derive_plan
from roce_tune.render.outputs import render_outputs
from roce_tune.tuner.buffers import pg_shared_limit_bytes
from tests.emulators.verify_stubs import fleet
from tests.emulators.verify_stubs import model as m

REPO = Path(__file__).resolve().parents[2]
PLAN = derive_plan(load_inventory(REPO / "inventories" / "lab-2node.yaml"))
ECN = PLAN.switches[0].ecn_profiles[0]


def lab_db() -> dict:  # type: ignore[type-arg]
    import json

    files = render_outputs(PLAN)
    return json.loads(next(text for path, text in files.items() if str(path).endswith("lab-leaf1.json")))


def lab_link(**kw: object) -> m.LinkSettings:
    port = m.switch_state_from_db(lab_db())["ports"]["Ethernet0"]
    onset = m.pfc_onset_bytes(port["pg_buffers"][str(port["tc_to_pg"][3])], port["queue_buffers"]["3"], 1)
    base = m.LinkSettings(speed_gbps=400, prio_tx=3, prio_rx=3, lossless=True, ecn_on=True, ect=True,
                          kmin=ECN.kmin_bytes, kmax=ECN.kmax_bytes, pmax_percent=ECN.pmax_percent,
                          rp_enabled=True,
                          np_enabled=True, ai_mbps=PLAN.hosts[0].nics[0].dcqcn.params["rpg_ai_rate_mbps"],
                          mtu=4096,
                          pfc_onset_bytes=onset)
    return replace(base, **kw)  # type: ignore[arg-type]


def test_onset_follows_the_switch_buffers_like_the_tuner() -> None:
    port = m.switch_state_from_db(lab_db())["ports"]["Ethernet0"]
    pg, queue = port["pg_buffers"]["3"], port["queue_buffers"]["3"]
    assert pg["dynamic_th"] == 0 and queue["dynamic_th"] == 7  # the rendered lossless PG and queue profiles
    assert m.pfc_onset_bytes(pg, queue, 1) == pytest.approx(ECN.pfc_onset_bytes, abs=1)
    # fan-in n: n PGs congested at once, each at alpha*pool/(1 + n*alpha): the tuner's trigger x n
    for n in (2, 8):
        assert m.pfc_onset_bytes(pg, None, n) == pytest.approx(n * pg_shared_limit_bytes(pg["pool_bytes"], 0,
                                                                                         n), abs=n)
    # the egress queue's own limit caps it; a static_th profile is a fixed limit; no profile -> unknown
    assert m.pfc_onset_bytes(pg, {"pool_bytes": 4_000_000, "dynamic_th": 0}, 1) == 2_000_000
    assert m.pfc_onset_bytes({"static_bytes": 300_000}, None, 2) == 600_000
    assert m.pfc_onset_bytes(None, queue, 1) is None


def test_a_smaller_pool_or_dynamic_th_moves_the_onset() -> None:
    db = lab_db()
    db["BUFFER_POOL"]["ingress_lossless_pool"]["size"] = "4000000"
    db["BUFFER_PROFILE"][db["BUFFER_PG"]["Ethernet0|3"]["profile"]]["dynamic_th"] = "-2"
    port = m.switch_state_from_db(db)["ports"]["Ethernet0"]
    assert m.pfc_onset_bytes(port["pg_buffers"]["3"], port["queue_buffers"]["3"], 1) == pytest.approx(800_000)
    # the derived ramp (MBs) now starts above the onset: no ECN reaction, PFC pauses, no marks
    out = m.link_outcome(lab_link(pfc_onset_bytes=800_000.0), {})
    assert out.pause_share > 0.2 and out.mark_prob == 0 and out.pfc_onset_bytes == 800_000


def test_derived_plan_is_on_the_ramp_below_the_onset() -> None:
    out = m.link_outcome(lab_link(), {})
    assert out.q_star == ECN.kmax_bytes < 0.8 * out.pfc_onset_bytes
    assert out.pause_share == 0 and out.mark_prob == pytest.approx(ECN.pmax_percent / 100)
    assert out.efficiency == pytest.approx(0.965, abs=0.001)


def test_override_parameters_replace_the_switch_onset() -> None:
    bdp = 400e9 / 8 * 5e-6
    assert m.link_outcome(lab_link(), {"pfc_onset_bdp": 0.72}).pfc_onset_bytes == pytest.approx(0.72 * bdp)
    assert m.link_outcome(lab_link(), {"pfc_onset_bytes": 1e6, "pfc_onset_bdp": 0.72}).pfc_onset_bytes == 1e6
    out = m.link_outcome(lab_link(pfc_onset_bytes=None), {})
    assert out.pfc_onset_bytes == pytest.approx(m.UNCONFIGURED_ONSET_BDP
                                                * bdp) and "no buffer profile" in out.notes[0]
    with pytest.raises(ValueError, match="pfc_onset_bpd"):
        fleet._check_model({"pfc_onset_bpd": 0.7})


def test_penalties_are_monotone_toward_the_tuners_values() -> None:
    eff = [m.link_outcome(lab_link(kmin=k // 3, kmax=k), {}).efficiency
           for k in (60_000, 250_000, 1_000_000, ECN.kmax_bytes)]
    assert eff == sorted(eff) and eff[0] < 0.8  # a ramp far below BDP starves the link
    over = [m.link_outcome(lab_link(kmin=k, kmax=k + 1_000_000), {}) for k in (14_500_000, 13_000_000,
                                                                               11_000_000)]
    # lowering a ramp that crosses
    # T
    assert [o.efficiency for o in over] == sorted(o.efficiency for o in over)
    ai = [m.link_outcome(lab_link(ai_mbps=a), {}).efficiency for a in (1, 2, 5)]
    assert ai == sorted(ai) and ai[0] < 0.85 * ai[-1]
    above = [m.link_outcome(lab_link(ai_mbps=a), {}).efficiency for a in (80, 20, 5)]
    assert above == sorted(above) and above[0] > 0.97 * above[-1]  # steps above the firmware's cost a little
