"""`roce-tune simulate` CLI and model behaviour (short real runs, no mocks)."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from roce_tune.cli import app
from roce_tune.simulate import DcqcnParams, EcnSetting, Scenario, run_seeds, simulate
from roce_tune.simulate.settings import resolve_dcqcn, resolve_ecn

runner = CliRunner()
SONIC = EcnSetting(1_048_576, 2_097_152, 5.0)


def test_incast_json_has_unit_named_keys() -> None:
    r = runner.invoke(app, ["simulate", "incast", "--fan-in", "4", "--message", "200KB", "--profile",
                            "sonic-default", "--seeds", "2", "--model", "T", "--format", "json"])
    assert r.exit_code == 0, r.output
    data = json.loads(r.stdout)
    for key in ("efficiency_percent", "pfc_pause_ms", "mean_queue_bytes", "peak_queue_bytes",
                "utilisation_percent", "slowest_fct_ratio", "paused_senders"):
        assert key in data
    assert 0 < data["efficiency_percent"] <= 100
    assert data["scenario"]["ecn"]["kmax_bytes"] == 2_097_152
    assert data["seeds"] == [1, 2]
    assert data["scenario"]["port"] is None


@pytest.mark.parametrize("args", [
    ["--speed", "7G"], ["--fan-in", "0"], ["--message", "lots"], ["--profile", "nope"],
    ["--ecn", "1KB,2KB"], ["--ecn", "2KB,1KB,5"], ["--profile", "sonic-default", "--ecn", "1,2,3"],
    ["--dcqcn", "foo=1"], ["--dcqcn", "rpg_gd=99"], ["--base-rtt", "soon"], ["--seeds", "0"],
])
def test_bad_arguments_exit_2(args: list[str]) -> None:
    r = runner.invoke(app, ["simulate", "incast", "--message", "100KB", "--seeds", "1", *args])
    assert r.exit_code == 2, r.output
    assert "error" in r.output.lower() or "invalid" in r.output.lower()


def test_plan_bad_port_exits_2(tmp_path) -> None:  # type: ignore[no-untyped-def]
    r = runner.invoke(app, ["simulate", "plan", str(tmp_path), "--port", "leaf1:Ethernet0"])
    assert r.exit_code == 2
    assert "plan.json" in r.output


def test_plan_port_simulates_the_pfc_threshold_the_plan_derived_ecn_against() -> None:
    """The port's lossless PG profile carries the dynamic threshold SAI applies to its PG (SONiC Spectrum:
    pg_lossless_*_profile dynamic_th 0, alpha 1), and the tuner's pfc_trigger_bytes uses it; the pool's
    ingress_lossless_profile (dynamic_th 7) is not the threshold the PG pauses on."""
    from pathlib import Path

    from roce_tune.pipeline import derive_plan, load
    from roce_tune.simulate.settings import port_inputs
    from roce_tune.tuner.buffers import pg_shared_limit_bytes

    plan = derive_plan(load(Path(__file__).resolve().parents[2] / "inventories" / "site.yaml"))
    sw = next(s for s in plan.switches if s.name == "leaf1")
    pp = next(p for p in sw.ports if p.name == "Ethernet0")
    assert pp.headroom is not None
    pg = next(b for b in sw.buffers.profiles if b.name == pp.headroom.profile)
    assert pg.dynamic_th == 0  # SONiC's default_dynamic_th for lossless PGs
    inp = port_inputs(plan, sw, pp)
    assert inp.pfc_alpha == 2.0 ** pg.dynamic_th
    ecn = next(e for e in sw.ecn_profiles if e.name == pp.ecn_profile)
    trigger = ecn.rationale["kmax_bytes"].inputs["pfc_trigger_bytes"]
    assert pg_shared_limit_bytes(inp.buffer_bytes, pg.dynamic_th, inp.fan_in) == trigger


def test_derived_uses_the_tuner() -> None:
    from roce_tune.tuner.dcqcn import calc_dcqcn

    assert resolve_dcqcn("derived", 100).rpg_ai_rate_mbps == calc_dcqcn(100).params["rpg_ai_rate_mbps"]
    assert resolve_dcqcn("firmware,rpg_ai_rate_mbps=20", 100).rpg_ai_rate_mbps == 20
    e = resolve_ecn("derived", None, 100, 16, 6.164)
    assert e.kmin_bytes < e.kmax_bytes


def test_lossless_and_conserving() -> None:
    m = simulate(Scenario(kind="incast", speed_gbps=100, fan_in=16, message_bytes=1_000_000, ecn=SONIC))
    assert m.dropped_packets == 0
    assert m.packets == 16 * 245                       # ceil(1e6 / 4096) frames per sender
    assert m.pfc_pause_ms > 0 and m.paused_senders     # 16 MB into a 5.3 MB pool must pause
    assert m.slowest_fct_ratio >= 1.0


def test_model_t_one_cnp_per_mark_model_m_paced() -> None:
    kw = dict(kind="incast", speed_gbps=100, fan_in=8, message_bytes=1_000_000,
              ecn=EcnSetting(5000, 200_000, 1.0))
    m = simulate(Scenario(model="M", **kw))  # type: ignore[arg-type]
    t = simulate(Scenario(model="T", **kw))  # type: ignore[arg-type]
    # T: a CNP per marked packet (not the last
    # ACKs)
    assert t.marked_packets - 8 <= t.cnps <= t.marked_packets
    assert 0 < m.cnps < m.marked_packets                           # M: NP pacing drops marks within 2 us


def test_faster_increase_timer_recovers_sooner() -> None:
    base = Scenario(kind="incast", speed_gbps=100, fan_in=4, message_bytes=1_000_000,
                    ecn=EcnSetting(18432, 180_000, 2.0), model="T")
    slow = run_seeds(base, 2).median["efficiency_percent"]
    fast = run_seeds(Scenario(**{**base.__dict__, "dcqcn": DcqcnParams(rpg_time_reset_us=30.0)}), 2)
    assert fast.median["efficiency_percent"] > slow  # type: ignore[operator]


def test_leaf_spine_leaf_runs() -> None:
    m = simulate(Scenario(kind="incast", speed_gbps=100, fan_in=8, message_bytes=500_000, ecn=SONIC,
                          topology="leaf-spine-leaf"))
    assert 0 < m.efficiency_percent <= 100  # type: ignore[operator]
