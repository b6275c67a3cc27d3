"""`roce-tune simulate` with the arguments a network engineer mistypes: each is refused with the option it
came from and exit 2 (never a traceback, never run as something else); spellings of the same value agree."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest
from typer.testing import CliRunner

from roce_tune.cli import app
from roce_tune.inventory.loader import load_inventory
from roce_tune.simulate.model import EcnSetting, Scenario
from roce_tune.simulate.scorecard import _cases, port_classes
from roce_tune.tuner.compose import build_plan

runner = CliRunner()


def _incast(*args: str) -> tuple[int, str, BaseException | None]:
    r = runner.invoke(app, ["simulate", "incast", "--fan-in", "2", "--message", "100KB", "--seeds", "1",
                            "--format", "json", *args])
    return r.exit_code, r.output, r.exception


@pytest.mark.parametrize(("args", "says"), [
    (["--pfc-alpha", "inf"], "--pfc-alpha inf"),         # was an OverflowError traceback
    (["--pfc-alpha", "0"], "--pfc-alpha 0"),             # was "math domain error"
    (["--pfc-alpha", "-1"], "--pfc-alpha -1"),
    (["--pfc-alpha", "nan"], "--pfc-alpha nan"),         # was "cannot convert float NaN to integer"
    (["--buffer", "0"], "--buffer 0 B"),                 # was an ECN Kmin/Kmax error
    (["--buffer", "100"], "--buffer 100 B"),             # was run: a pool smaller than one frame
    (["--base-rtt", "0ns"], "--base-rtt 0 us"),          # was "derive_ecn: need ..."
    (["--dcqcn", "rpg_gd=11.5"], "whole number"),        # was run as rpg_gd=11
    (["--dcqcn", "rpg_ai_rate_mbps=1e12"], "outside 1..100000 at 100G"),  # was run above line rate
    (["--dcqcn", "firmware,rpg_threshold=0"], "rpg_threshold=0 is outside 1..31"),
    (["--dcqcn", "cnp_dscp=26"], "unknown DCQCN parameter(s) cnp_dscp"),
    # dynamic_th -8 is alpha 0 to the tuner: was "ECN needs 0 <= Kmin < Kmax (got Kmin 0 B, Kmax 0 B)"
    (["--pfc-alpha", "0.00390625"], "PFC alpha 0.00390625 is dynamic_th -8"),
    (["--pfc-alpha", "0.001", "--profile", "bdp"], "--profile bdp: PFC alpha 0.001 is dynamic_th -8"),
    # was run with the last value, silently
    (["--dcqcn", "rpg_ai_rate_mbps=20, rpg_ai_rate_mbps=30"], "--dcqcn rpg_ai_rate_mbps is given twice"),
    # three options take bytes and two take a time: the message names the one that was wrong
    (["--message", "1e9"], "--message: '1e9' is not a byte count"),
    (["--buffer", "8mb"], "--buffer: '8mb' is not a byte count"),
    (["--base-rtt", "6us RTT"], "--base-rtt: '6us RTT' is not a time"),
    (["--speed", "100GE"], "--speed: '100GE' is not a speed"),
    (["--speed", "123G"], "--speed: '123G' is not a supported port speed"),
    # was "could not convert string to float: 'x'"
    (["--ecn", "150KB,1500KB,x"], "--ecn '150KB,1500KB,x': PMAX 'x' is not a number"),
])
def test_bad_link_or_nic_value_is_named_and_exits_2(args: list[str], says: str) -> None:
    code, output, exc = _incast(*args)
    assert code == 2, output
    assert exc is None or isinstance(exc, SystemExit), repr(exc)
    assert says in output


def test_a_bad_duration_names_the_option() -> None:
    r = runner.invoke(app, ["simulate", "long-lived", "--fan-in", "2", "--duration", "1s", "--seeds", "1"])
    assert r.exit_code == 2, r.output
    assert "--duration: '1s' is not a time" in r.output


def test_an_alpha_of_dynamic_th_minus_8_runs_with_given_ecn_values() -> None:
    code, output, _ = _incast("--pfc-alpha", "0.00390625", "--ecn", "5KB,200KB,1")
    assert code == 0, output
    assert json.loads(output)["scenario"]["pfc_alpha"] == 0.00390625


def test_in_range_dcqcn_override_runs() -> None:
    code, output, _ = _incast("--dcqcn", "firmware,rpg_time_reset_us=55,rpg_ai_rate_mbps=20")
    assert code == 0, output
    dq = json.loads(output)["scenario"]["dcqcn"]
    assert (dq["rpg_time_reset_us"], dq["rpg_ai_rate_mbps"]) == (55, 20)


def test_a_bare_dcqcn_list_changes_the_default_derived_values() -> None:
    # at 400G the derived timer is not firmware's: a bare list started from firmware and moved it to 300 us
    default = json.loads(_incast("--speed", "400G")[1])["scenario"]["dcqcn"]
    code, output, _ = _incast("--speed", "400G", "--dcqcn", "rpg_ai_rate_mbps=20")
    assert code == 0, output
    data = json.loads(output)["scenario"]
    assert default["rpg_time_reset_us"] != 300
    assert data["dcqcn"] == {**default, "rpg_ai_rate_mbps": 20}
    assert data["dcqcn_label"] == "derived,rpg_ai_rate_mbps=20"


def test_unit_spellings_agree_and_a_seed_reproduces() -> None:
    a = json.loads(_incast("--base-rtt", "6.164us", "--message", "1MiB")[1])
    b = json.loads(_incast("--base-rtt", "6164ns", "--message", "1048576")[1])
    assert a["scenario"]["message_bytes"] == 1_048_576 and a["scenario"]["base_rtt_us"] == 6.164
    assert a == b


@pytest.mark.parametrize("speed", ["1600G", "1.6T"])
def test_a_1600g_link_is_simulated_and_its_ecn_derived(speed: str) -> None:
    # the tuner was handed 1600 (Gb/s) as a bare number and read it as 1600 Mb/s: "not a supported speed"
    code, output, _ = _incast("--speed", speed)
    assert code == 0, output
    assert json.loads(output)["scenario"]["speed_gbps"] == 1600
    r = runner.invoke(app, ["calc", "ecn", "--speed", speed, "--format", "json"])
    assert r.exit_code == 0, r.output


def test_bench_prints_no_efficiency_for_a_long_lived_run(capsys: pytest.CaptureFixture[str]) -> None:
    # benchmarks/bench_simulate.py printed "efficiency 0.0 %" for the long-lived run, which has none
    import importlib.util
    from pathlib import Path

    from roce_tune.simulate import EcnSetting, Scenario

    path = Path(__file__).resolve().parents[2] / "benchmarks" / "bench_simulate.py"
    spec = importlib.util.spec_from_file_location("bench_simulate", path)
    assert spec is not None and spec.loader is not None
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    ecn = EcnSetting(1_048_576, 2_097_152, 5.0)
    bench._time("ll", Scenario(kind="long-lived", speed_gbps=100, fan_in=2, duration_us=200.0, ecn=ecn), 1.0)
    bench._time("in", Scenario(kind="incast", speed_gbps=100, fan_in=2, message_bytes=50_000, ecn=ecn), 1.0)
    ll, inc = capsys.readouterr().out.splitlines()
    assert "efficiency" not in ll and "utilisation" in ll
    assert "efficiency " in inc and "efficiency 0.0" not in inc


@pytest.mark.parametrize(("duration", "topology"), [("1us", "star"), ("10ns", "star"),
                                                    ("100us", "leaf-spine-leaf")])
def test_a_long_lived_run_too_short_to_measure_is_refused_with_the_minimum(duration: str,
                                                                           topology: str) -> None:
    # was run: the measured second half ended before a frame reached the bottleneck, "utilisation 0.0 %"
    r = runner.invoke(app, ["simulate", "long-lived", "--duration", duration, "--topology", topology,
                            "--seeds", "1", "--format", "json"])
    assert r.exit_code == 2, r.output
    assert r.exception is None or isinstance(r.exception, SystemExit), repr(r.exception)
    assert "too short to measure: at least " in r.output and "second half" in r.output
    assert "base RTTs" in r.output and "filled the path" in r.output


def test_the_shortest_accepted_long_lived_run_measures_the_link() -> None:
    ecn = EcnSetting(150_000, 1_500_000, 10)
    shortest_us = Scenario(kind="long-lived", speed_gbps=100, fan_in=4, ecn=ecn).min_duration_us
    assert 100.0 < shortest_us < 200.0  # 2 x (6.164 us RTT + 4 frames at 100G + 10 RTTs)
    with pytest.raises(ValueError, match="too short to measure"):
        Scenario(kind="long-lived", speed_gbps=100, fan_in=4, ecn=ecn, duration_us=shortest_us - 1.0)
    r = runner.invoke(app, ["simulate", "long-lived", "--fan-in", "4", "--ecn", "150KB,1500KB,10",
                            "--duration", f"{shortest_us + 1.0}us", "--seeds", "1", "--format", "json"])
    assert r.exit_code == 0, r.output
    assert json.loads(r.output)["utilisation_percent"] > 90.0


def test_scorecard_row_of_one_long_lived_flow_is_singular() -> None:
    inv = load_inventory(Path(__file__).resolve().parents[2] / "inventories" / "lab-2node.yaml").inventory
    pc = port_classes(build_plan(inv))[0]
    assert pc.fan_in == 1  # was "1 long-lived flows"
    assert [label for _, kind, label, _ in _cases(pc) if kind == "long-lived"] == ["1 long-lived flow"] * 2
    assert _cases(replace(pc, fan_in=16))[2][2] == "16 long-lived flows"
