"""`roce-tune simulate plan` on ports it must refuse, and on a plan.json edited after `roce-tune plan`
(a real plan directory from a shipped inventory; every refusal is a message and exit 2, never a traceback)."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from roce_tune.cli import app

ROOT = Path(__file__).resolve().parents[2]
runner = CliRunner()


@pytest.fixture(scope="module")
def plan_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("plan") / "lab"
    r = runner.invoke(app, ["plan", str(ROOT / "inventories" / "lab-2node.yaml"), "--out", str(out),
                            "--no-scorecard"])
    assert r.exit_code == 0, r.output
    return out


def _edited(plan_dir: Path, tmp_path: Path, edit: Callable[[dict[str, Any]], None]) -> Path:
    copy = tmp_path / "edited"
    shutil.copytree(plan_dir, copy)
    data = json.loads((copy / "plan.json").read_text(encoding="utf-8"))
    edit(data)
    (copy / "plan.json").write_text(json.dumps(data), encoding="utf-8")
    return copy


def _simulate(plan: Path, port: str) -> Any:
    return runner.invoke(app, ["simulate", "plan", str(plan), "--port", port, "--message", "100KB",
                               "--seeds", "1"])


def test_port_made_lossy_after_plan_is_refused(plan_dir: Path, tmp_path: Path) -> None:
    def lossy(d: dict[str, Any]) -> None:
        d["switches"][0]["ports"][0]["lossless"] = False

    edited = _edited(plan_dir, tmp_path, lossy)
    port = f"{json.loads((edited / 'plan.json').read_text())['switches'][0]['name']}:Ethernet0"
    r = _simulate(edited, port)
    assert r.exit_code == 2, r.output
    assert "not a lossless port" in r.output and "lossless false" in r.output


def test_port_naming_an_undefined_ecn_profile_is_refused(plan_dir: Path, tmp_path: Path) -> None:
    def renamed(d: dict[str, Any]) -> None:
        d["switches"][0]["ports"][0]["ecn_profile"] = "ROCE_EDITED"

    edited = _edited(plan_dir, tmp_path, renamed)
    r = _simulate(edited, "lab-leaf1:Ethernet0")
    assert r.exit_code == 2, r.output
    assert r.exception is None or isinstance(r.exception, SystemExit)
    assert "ECN profile 'ROCE_EDITED'" in r.output and "plan.json" in r.output


def test_host_port_names_the_switch_port_to_simulate(plan_dir: Path) -> None:
    plan = json.loads((plan_dir / "plan.json").read_text(encoding="utf-8"))
    host, nic = plan["hosts"][0]["name"], plan["hosts"][0]["nics"][0]
    r = _simulate(plan_dir, f"{host}:{nic['netdev']}")
    assert r.exit_code == 2, r.output
    assert "is a host, not a switch" in r.output and nic["switch_port"] in r.output


def test_truncated_plan_json_is_refused(plan_dir: Path, tmp_path: Path) -> None:
    copy = tmp_path / "cut"
    shutil.copytree(plan_dir, copy)
    text = (copy / "plan.json").read_text(encoding="utf-8")
    (copy / "plan.json").write_text(text[: len(text) // 2], encoding="utf-8")
    r = _simulate(copy, "lab-leaf1:Ethernet0")
    assert r.exit_code == 2 and "not JSON" in r.output, r.output


@pytest.mark.parametrize(("spec", "timer_from"), [("rpg_ai_rate_mbps=20", "plan"),
                                                  ("plan,rpg_ai_rate_mbps=20", "plan"),
                                                  ("firmware,rpg_ai_rate_mbps=20", "firmware")])
def test_dcqcn_override_changes_the_port_own_values(plan_dir: Path, spec: str, timer_from: str) -> None:
    # "what if this port's NICs used AI 20?" replaced the plan's whole DCQCN by firmware's (its 300 us
    # timer instead of the plan's) when the list did not start with a word
    from roce_tune.simulate.settings import plan_port

    own = plan_port(plan_dir, "lab-leaf1:Ethernet0").dcqcn
    r = runner.invoke(app, ["simulate", "plan", str(plan_dir), "--port", "lab-leaf1:Ethernet0", "--message",
                            "100KB", "--seeds", "1", "--dcqcn", spec, "--format", "json"])
    assert r.exit_code == 0, r.output
    dq = json.loads(r.stdout)["scenario"]["dcqcn"]
    assert json.loads(r.stdout)["scenario"]["port"] == "lab-leaf1:Ethernet0"  # was not said: which port?
    assert dq["rpg_ai_rate_mbps"] == 20
    timer = own.rpg_time_reset_us if timer_from == "plan" else 300
    assert own.rpg_time_reset_us != 300 and dq["rpg_time_reset_us"] == timer


def _port0(edit: Callable[[dict[str, Any]], None]) -> Callable[[dict[str, Any]], None]:
    return lambda d: edit(d["switches"][0]["ports"][0])


def _shared(kind: str, field: str, value: object) -> Callable[[dict[str, Any]], None]:
    def edit(d: dict[str, Any]) -> None:
        for section in d["shared"][kind].values():
            if kind == "Buffers":
                section = next(p for p in section["pools"] if p["name"] == "ingress_lossless_pool")
            section[field] = value
    return edit


@pytest.mark.parametrize(("edit", "says"), [
    # was simulated as a 123 Gb/s link
    (_port0(lambda p: p.update(speed_gbps=123)), "lab-leaf1:Ethernet0 speed_gbps: 123 is not a supported"),
    # was "invalid scenario: speed_gbps 0 must be > 0" (no file, no port)
    (_port0(lambda p: p.update(speed_gbps=0)), "lab-leaf1:Ethernet0 speed_gbps: 0 is not a supported port"),
    # was simulated with fan-in 1
    (_port0(lambda p: p.update(fan_in=-5)), "lab-leaf1:Ethernet0 fan_in -5: must be 0..1024"),
    # was "invalid scenario: fan_in 5000 must be 1..1024"
    (_port0(lambda p: p.update(fan_in=5000)), "lab-leaf1:Ethernet0 fan_in 5000: must be 0..1024"),
    # was "invalid scenario: base_rtt_us 0.0 must be > 0"
    (_shared("EcnProfile", "base_rtt_us", 0), "base_rtt_us 0 must be above 0"),
    # was "invalid scenario: buffer_bytes 100 must hold one 4144 B frame"
    (_shared("Buffers", "size_bytes", 100), "ingress lossless pool size_bytes 100 cannot hold one 4144 B"),
])
def test_edited_value_the_simulator_cannot_run_names_file_port_and_field(
        plan_dir: Path, tmp_path: Path, edit: Callable[[dict[str, Any]], None], says: str) -> None:
    edited = _edited(plan_dir, tmp_path, edit)
    r = _simulate(edited, "lab-leaf1:Ethernet0")
    assert r.exit_code == 2, r.output
    assert r.exception is None or isinstance(r.exception, SystemExit), repr(r.exception)
    assert f"{edited / 'plan.json'}: " in r.output and says in r.output, r.output


def test_edited_fan_in_0_is_simulated_as_one_sender(plan_dir: Path, tmp_path: Path) -> None:
    edited = _edited(plan_dir, tmp_path, _port0(lambda p: p.update(fan_in=0)))
    r = runner.invoke(app, ["simulate", "plan", str(edited), "--port", "lab-leaf1:Ethernet0", "--message",
                            "100KB", "--seeds", "1", "--format", "json"])
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["scenario"]["fan_in"] == 1


@pytest.mark.parametrize(("port", "why"), [("Ethernet16", "it is admin down in the inventory"),
                                           ("Ethernet24", "nothing is cabled to it in the inventory")])
def test_lossy_port_of_a_real_plan_says_why(tmp_path: Path, port: str, why: str) -> None:
    # was only "(lossless false, ECN profile none)": the engineer had to work out why from the inventory
    text = (ROOT / "inventories" / "lab-2node.yaml").read_text(encoding="utf-8")
    last = "      - {name: Ethernet8, speed: 400G}\n"
    assert last in text
    inv = tmp_path / "lab-4port.yaml"
    inv.write_text(text.replace(last, last + "      - {name: Ethernet16, speed: 400G, admin_up: false}\n"
                                             "      - {name: Ethernet24, speed: 400G}\n"), encoding="utf-8")
    out = tmp_path / "out"
    r = runner.invoke(app, ["plan", str(inv), "--out", str(out), "--no-scorecard"])
    assert r.exit_code == 0, r.output
    r = _simulate(out, f"lab-leaf1:{port}")
    assert r.exit_code == 2, r.output
    assert "(lossless false, ECN profile none): " + why in r.output, r.output


def test_port_of_a_plan_without_dcqcn_needs_an_explicit_dcqcn(tmp_path: Path) -> None:
    # policy.dcqcn false: the NICs run PFC alone; simulate plan ran the kept values as if DCQCN acted
    text = (ROOT / "inventories" / "lab-2node.yaml").read_text(encoding="utf-8")
    assert "  cnp_priority: 6\n" in text
    inv = tmp_path / "lab-pfc-only.yaml"
    inv.write_text(text.replace("  cnp_priority: 6\n", "  cnp_priority: 6\n  dcqcn: false\n"),
                   encoding="utf-8")
    out = tmp_path / "out"
    r = runner.invoke(app, ["plan", str(inv), "--out", str(out), "--no-scorecard"])
    assert r.exit_code == 0, r.output
    r = _simulate(out, "lab-leaf1:Ethernet0")
    assert r.exit_code == 2, r.output
    assert "lab-leaf1:Ethernet0: DCQCN is off on the NICs behind it" in r.output, r.output
    r = runner.invoke(app, ["simulate", "plan", str(out), "--port", "lab-leaf1:Ethernet0", "--message",
                            "100KB", "--seeds", "1", "--dcqcn", "plan", "--format", "json"])
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["scenario"]["dcqcn"]["rpg_time_reset_us"] == 75


@pytest.mark.parametrize(("kind", "option", "value"), [("long-lived", "--message", "1MB"),
                                                       ("incast", "--duration", "10ms")])
def test_option_of_the_other_kind_is_refused_not_ignored(plan_dir: Path, kind: str, option: str,
                                                         value: str) -> None:
    # was run with the option ignored (a long-lived run has no message size, an incast no duration)
    r = runner.invoke(app, ["simulate", "plan", str(plan_dir), "--port", "lab-leaf1:Ethernet0", "--kind",
                            kind, option, value, "--seeds", "1"])
    assert r.exit_code == 2, r.output
    assert f"{option} does not apply to --kind {kind}" in r.output
