"""``roce-tune verify`` end to end against the loopback emulators: the SONiC model switch and two GPU
hosts of ``inventories/lab-2node.yaml``, with the verify stubs (nccl-tests, mpirun, counters) driven by
the response model in ``tests/emulators/verify_stubs/model.py``.

The numbers asserted come from that model (README there): at 400G and a 5 µs RTT, BDP = 250 kB; the
emulated switch pauses at the egress PFC onset its own buffers give (lossless PG dynamic_th 0 on the
30.1 MB ingress pool: 15.06 MB at fan-in 1, the tuner's onset). The derived plan (Kmax = half that onset,
at most 2 x C x rpg_time_reset = 7.5 MB; Kmin = Kmax/2, Pmax 1 %) sits at q* = Kmax, so busbw at 1 GiB =
0.965 × (1 − 0.45 e^(−Kmax/87.5 kB)) × 50 GB/s × 1024/(1024 + 2) ≈ 48.2 GB/s. The mis-tuned fabric has a
ramp far below one BDP (20/60 kB: u ≈ 0.77) and increase steps a fifth of the firmware's (AI 1 Mb/s:
recovery penalty 0.19): ≈ 60 % of line rate, ≈ 75 % after the DCQCN step, ≈ 96 % after the ECN step.
"""

from __future__ import annotations

import json
import math
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from roce_tune.cli import app
from roce_tune.deploy.drivers import PushOptions
from roce_tune.deploy.runner import ApplyOptions
from roce_tune.inventory.loader import load_inventory
from roce_tune.pipeline import derive_plan
from roce_tune.verify.run import VerifyOptions, verify_fabric
from tests.emulators import LOOPBACK_TIMING
from tests.emulators.verify_stubs import VerifyLab, start_lab
from tests.emulators.verify_stubs.__main__ import MISTUNE

# slow: end-to-end verify against SSH emulators; CI runs them (.ci/run, -m
# slow)
pytestmark = [pytest.mark.emulator, pytest.mark.slow]

REPO = Path(__file__).resolve().parents[2]
USER, PASSWORD = "gpuadmin", "verify-Pa55"
MISTUNED_ECN, MISTUNED_AI = MISTUNE  # the --mistune profile: ramp far below BDP, AI/HAI below the firmware's
DERIVED = derive_plan(load_inventory(REPO / "inventories" / "lab-2node.yaml"))
DERIVED_ECN = DERIVED.switches[0].ecn_profiles[0]
DERIVED_AI = DERIVED.hosts[0].nics[0].dcqcn.params["rpg_ai_rate_mbps"]


@pytest.fixture
def lab(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    monkeypatch.setenv("ROCE_TUNE_USERNAME", USER)
    monkeypatch.setenv("ROCE_TUNE_PASSWORD", PASSWORD)
    labs: list[VerifyLab] = []

    def start(overrides: list[dict] | None = None, **model: float) -> tuple[VerifyLab,
                                                                            Path]:  # type: ignore[type-arg]
        lb = start_lab(REPO / "inventories" / "lab-2node.yaml", tmp_path / f"lab{len(labs)}", model=model,
                       username=USER, password=PASSWORD)
        labs.append(lb)
        inv = lb.write_inventory(tmp_path / f"lab{len(labs)}.yaml", overrides=overrides)
        lb.deploy(derive_plan(load_inventory(inv)))
        return lb, inv

    yield start
    for lb in labs:
        lb.stop()


def _opts(out: Path, **kw) -> VerifyOptions:  # type: ignore[no-untyped-def]
    """Verify options for the emulated lab (loopback netmiko pacing: the emulators answer at once)."""
    return VerifyOptions(max_bytes="1G", out_dir=out, connection=ApplyOptions(
        insecure_skip_host_key_check=True, push=PushOptions(confirm_s=60), timing=LOOPBACK_TIMING), **kw)


def _cli(*args: str) -> tuple[int, str]:
    res = CliRunner().invoke(app, ["verify", *args, "--insecure-skip-host-key-check", "--max-bytes", "1G"])
    return res.exit_code, res.output


def _wred(lb: VerifyLab) -> set[tuple[str, str]]:
    db = json.loads(lb.fleet["lab-leaf1"].running_config())
    used = {q["wred_profile"] for q in db["QUEUE"].values() if "wred_profile" in q}
    return {(db["WRED_PROFILE"][p]["green_min_threshold"], db["WRED_PROFILE"][p]["green_max_threshold"])
            for p in used}


def _ai(lb: VerifyLab, host: str) -> str:
    return (lb.fleet[host].sysroot / "sys/class/net/ens1f0np0/ecn/roce_rp/rpg_ai_rate").read_text().strip()


def test_verify_lab_writes_report_counters_and_plot(lab,
                                                    tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    _, inv = lab()
    code, output = _cli(str(inv), "--out", str(tmp_path / "out"))
    assert code == 0, output
    rep = json.loads((tmp_path / "out" / "verify-report.json").read_text())
    assert rep["status"] == "pass" and rep["line_rate_gbps"] == 400 and rep["target_ratio"] == 0.9
    it = rep["iterations"][0]
    bdp = 400e9 / 8 * 5e-6
    expect = (0.965 * (1 - 0.45 * math.exp(-DERIVED_ECN.kmax_bytes / (0.35 * bdp))) * 50 * (1 << 30)
              / ((1 << 30) + (2 << 20)))
    assert it["largest_busbw_gbytes_per_s"] == pytest.approx(expect, abs=0.01)
    # the command actually run is printed and saved, with the plan's NCCL environment
    mpirun = "node1$ mpirun -np 2 -H node1:1,node2:1"
    assert (mpirun in output and rep["commands"][0].startswith(mpirun)
            and "-x NCCL_IB_TC=106" in rep["commands"][0])
    assert mpirun in (tmp_path / "out" / "commands.txt").read_text()
    # counters are deltas of this run: RoCE on priority 3, every switch ECN mark seen by a receiver
    cs = it["counters"]
    assert cs["hosts"]["node1:ens1f0np0"]["tx_packets_by_priority"]["3"] > 1_000_000
    marks = sum(cs["switches"]["ecn_marked_by_port"].values())
    assert marks > 0 and marks == sum(h["ecn_marked"] for h in cs["hosts"].values())
    assert {c["status"] for c in it["checks"]} <= {"pass", "skip"}
    assert (tmp_path / "out" / "busbw.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "| 0 | baseline |" in (tmp_path / "out" / "verify-report.md").read_text()


@pytest.mark.slow
def test_adjust_takes_a_mistuned_fabric_to_the_target(lab,
                                                      tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    lb, inv = lab([MISTUNED_ECN, MISTUNED_AI])
    t0 = time.monotonic()
    code, output = _cli(str(inv), "--adjust", "--max-iterations", "4", "--out", str(tmp_path / "out"),
                        "--confirm-seconds", "60")
    elapsed = time.monotonic() - t0
    assert code == 0, output
    rep = json.loads((tmp_path / "out" / "verify-report.json").read_text())
    its = rep["iterations"]
    rules = [sorted({d["rule"] for c in it["checks"] for d in c["diagnoses"]}) for it in its]
    # CNPs without recovery, AI pinned low -> AI/HAI to the tuner's values; then CNPs without recovery with a
    # ramp below BDP -> ECN up to the tuner's values
    assert rules == [["RT310", "RT316"], ["RT310", "RT316"], []]
    assert [it["proposal"] for it in its] == [None, {"knob": "dcqcn_recovery", "direction": "up"},
                                              {"knob": "ecn", "direction": "up"}]
    assert its[0]["fraction"] < its[1]["fraction"] < 0.9 <= its[2]["fraction"]
    assert rep["adjust"]["stop_reason"].startswith("target reached")
    assert _wred(lb) == {(str(DERIVED_ECN.kmin_bytes), str(DERIVED_ECN.kmax_bytes))}
    assert _ai(lb, "node1") == _ai(lb, "node2") == str(DERIVED_AI)
    assert {o["set"].get("rpg_ai_rate_mbps") for o in rep["adjust"]["best_overrides"]} >= {DERIVED_AI}
    assert elapsed < 45


def test_adjust_stops_at_the_budget(lab, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    lb, inv = lab([MISTUNED_ECN, MISTUNED_AI])
    res = verify_fabric(inv, _opts(tmp_path / "out", adjust=True, max_iterations=1))
    assert res.exit_code == 1
    assert res.loop is not None and res.loop.stop_reason == "max iterations (1) reached"
    assert [it.kind for it in res.iterations] == ["baseline", "step"]
    assert res.iterations[0].fraction < res.iterations[1].fraction < 0.9
    # best = step 1 (the DCQCN step) stays applied; the ECN ramp is still the mis-tuned one
    assert _ai(lb, "node1") == str(DERIVED_AI) and _wred(lb) == {(str(MISTUNED_ECN["set"]["kmin_bytes"]),
                                                                  str(MISTUNED_ECN["set"]["kmax_bytes"]))}
    # the step's devices were read back after its push: its settings say what runs, not "planned, not read
    # back" (they were the plan's values, unlabelled, and its diagnoses said "planned, not read back")
    step = res.iterations[1]
    assert {k: (v["rpg_ai_rate_mbps"], v["running"]) for k, v in step.settings["dcqcn"].items()} == {
        "node1": (DERIVED_AI, "as planned"), "node2": (DERIVED_AI, "as planned")}
    assert {v["running"] for v in step.settings["ecn"].values()} == {"as planned"}
    assert step.measurement is not None
    said = " ".join(d.message for c in step.measurement.checks for d in c.diagnoses)
    assert "not read back" not in said and "as planned (read back)" in said, said
    assert not [f for f in res.report["findings"] if f["rule"] in ("RT332", "RT333")]


def test_a_push_that_did_not_take_is_a_finding(lab, tmp_path: Path,  # type: ignore[no-untyped-def]
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """After apply pushed (and read back) the DCQCN step, node1 went back to its old AI (as a second manager
    would put it back). Nothing re-read the devices: the step was labelled with the plan's values and
    measured as if they ran. Now the changed devices are read back after each push: node1's AI is a finding
    (RT332, the push did not take), the step's settings and diagnoses carry the value it runs."""
    import roce_tune.verify.run as run_mod

    lb, inv = lab([MISTUNED_ECN, MISTUNED_AI])
    real = run_mod._apply_fn

    def apply_fn(opts, plan0):  # type: ignore[no-untyped-def]
        push = real(opts, plan0)

        def apply(plan):  # type: ignore[no-untyped-def]
            results = push(plan)
            rp = lb.fleet["node1"].sysroot / "sys/class/net/ens1f0np0/ecn/roce_rp"
            for name, value in (("rpg_ai_rate", MISTUNED_AI["set"]["rpg_ai_rate_mbps"]),
                                ("rpg_hai_rate", MISTUNED_AI["set"]["rpg_hai_rate_mbps"])):
                (rp / name).write_text(f"{value}\n")
            return results
        return apply
    monkeypatch.setattr(run_mod, "_apply_fn", apply_fn)
    res = verify_fabric(inv, _opts(tmp_path / "out", adjust=True, max_iterations=1))
    step = res.iterations[1]
    assert [a["state"] for a in step.applied if a["device"] == "node1"] == ["pushed"]
    low = MISTUNED_AI["set"]["rpg_ai_rate_mbps"]
    assert step.settings["dcqcn"]["node1"] == {"rpg_ai_rate_mbps": low, "rpg_hai_rate_mbps":
                                               MISTUNED_AI["set"]["rpg_hai_rate_mbps"],
                                               "running": "differs from the plan"}
    assert step.settings["dcqcn"]["node2"]["running"] == "as planned"
    rt332 = [f for f in res.report["findings"] if f["rule"] == "RT332"]
    assert {f["location"]["device"] for f in rt332} == {"node1"} and len(rt332) == 2  # AI and HAI
    assert all(f["message"].startswith("read back after the --adjust push before run 1: node1 ens1f0np0 ")
               and "the push did not take" in f["message"] for f in rt332)
    assert any(f"rpg_ai_rate: planned {DERIVED_AI}, running {low};" in f["message"] for f in rt332), rt332
    assert step.measurement is not None
    said = " ".join(d.message for c in step.measurement.checks for d in c.diagnoses)
    assert f"node1:ens1f0np0 rpg_ai_rate {low} Mb/s running (planned {DERIVED_AI} Mb/s)" in said, said


def test_adjust_rolls_back_a_step_that_hurts(lab, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    # shallow-buffer fabric (other congested PGs share the pool): PFC starts at 0.72 x BDP = 180 kB, so the
    # tuner's ramp (MBs, for the switch's own onset) is far too high here
    lb, inv = lab([{"set": {"kmin_bytes": 20_000, "kmax_bytes": 100_000}}], pfc_onset_bdp=0.72)
    res = verify_fabric(inv, _opts(tmp_path / "out", adjust=True))
    assert res.loop is not None
    assert [it.kind for it in res.iterations] == ["baseline", "step", "rollback"]
    assert res.loop.stop_reason.startswith("step 1 made busbw worse")
    assert (res.iterations[1].fraction < res.iterations[0].fraction
            == pytest.approx(res.iterations[2].fraction))
    assert _wred(lb) == {("20000", "100000")}  # the baseline thresholds are back on the switch
    md = (tmp_path / "out" / "verify-report.md").read_text()
    assert "| 2 | rollback | re-apply the plan of iteration 0 |" in md


def test_pairwise_matrix_finds_the_slow_host(lab, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    src = (REPO / "inventories" / "lab-2node.yaml").read_text()
    three = src.replace("      - {name: Ethernet8, speed: 400G}\n",
                        "      - {name: Ethernet8, speed: 400G}\n      - {name: Ethernet16, speed: 400G}\n")
    three += ("  - name: node3\n    mgmt: {host: 127.0.0.1, port: 2213}\n    socket_ifname: eno1\n    nics:\n"
              "      - {model: connectx-7, netdev: ens1f0np0, rdma_device: mlx5_0, speed: 400G, "
              "switch_port: \"lab-leaf1:Ethernet16\", cable_length: 2m}\n")
    (tmp_path / "lab-3node.yaml").write_text(three)
    lb = start_lab(tmp_path / "lab-3node.yaml", tmp_path / "lab3", username=USER, password=PASSWORD)
    try:
        inv = lb.write_inventory(tmp_path / "lab3.yaml")
        lb.deploy(derive_plan(load_inventory(inv)))
        # e.g. a NIC at reduced PCIe width: every link touching node3 is
        # slower
        lb.set_host("node3", slow=0.7)
        res = verify_fabric(inv, _opts(tmp_path / "out", pairwise=True))
    finally:
        lb.stop()
    pairs = res.report["pairwise"]
    assert pairs["node1+node2"] >= 0.9 > pairs["node1+node3"] and pairs["node2+node3"] < 0.9
    slow = [d for d in res.report["findings"] if d["rule"] == "RT320"]
    assert [d["location"]["device"] for d in slow] == ["node3"]
    assert res.report["commands"][0].startswith("node1$ mpirun -np 3 -H node1:1,node2:1,node3:1")
    assert len(res.report["pairwise_commands"]) == 3


def test_adjust_sizes_an_unpinned_step_with_the_simulator(lab,
                                                          tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    # the tuner's own ramp on a shallow-buffer fabric (PFC at 0.72 x BDP): the measurement says "ECN down";
    # nothing is pinned, so the step's size comes from the simulator search on the port's class, seed 1
    lb, inv = lab(pfc_onset_bdp=0.72)
    res = verify_fabric(inv, _opts(tmp_path / "out", adjust=True, max_iterations=1))
    assert res.loop is not None and [it.kind for it in res.iterations][:2] == ["baseline", "step"]
    step = res.iterations[1]
    assert step.proposal is not None and step.proposal.direction == "down"
    assert step.changes and all("(simulator, fan-in 1: " in ch for ch in step.changes)
    pins = {(o["port"], tuple(sorted(o["set"].items()))) for o in step.overrides}
    kmin, kmax = {dict(s)["kmin_bytes"] for _, s in pins}, {dict(s)["kmax_bytes"] for _, s in pins}
    assert len(kmin) == len(kmax) == 1 and max(kmax) < DERIVED_ECN.kmax_bytes
    if res.loop.best_index == 1:  # the step stayed applied: the switch carries the simulator's thresholds
        assert _wred(lb) == {(str(min(kmin)), str(min(kmax)))}
    md = (tmp_path / "out" / "verify-report.md").read_text()
    assert "simulator, fan-in 1" in md


def test_a_run_that_outlasts_the_run_timeout_is_reported_not_raised(lab,
                                                                     tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """A hung collective (here: any run, with a 10 ms --run-timeout) made netmiko raise ReadTimeout out of
    verify (a traceback, no report; mid --adjust, no rollback). It is now a measurement without a run:
    RT311 quoting the timeout, the report written, exit 1; the launch is sent once, not retried."""
    _, inv = lab()
    events: list[str] = []
    res = verify_fabric(inv, _opts(tmp_path / "out", run_timeout_s=0.01), on_event=events.append)
    assert res.exit_code == 1 and res.report["status"] == "fail"
    assert "[0] no busbw (no complete run); findings: RT311" in events, events  # was "busbw None GB/s"
    [d] = res.report["findings"]
    assert d["rule"] == "RT311" and "ReadTimeout after --run-timeout 0.01 s" in d["message"]
    assert (tmp_path / "out" / "verify-report.md").exists()
    commands = (tmp_path / "out" / "commands.txt").read_text()
    assert commands.count("node1$ mpirun ") == 1


def test_a_switch_that_cannot_be_read_is_said_not_checked(lab,
                                                          tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """The switch's management port is wrong in the inventory (nothing listens there): the run said
    "findings: none" and PASS, and its report "no PFC watchdog storm: pass" and "watchdog storms 0"; then it
    said "not checked: …" and still PASS, exit 0: now INCOMPLETE, exit 2."""
    from tests.emulators.verify_stubs import close_switch_mgmt

    _, inv = lab()
    close_switch_mgmt(inv)
    code, output = _cli(str(inv), "--out", str(tmp_path / "out"))
    assert ("not checked: no PFC watchdog storm: PFC watchdog storm counters (the switch's show pfcwd "
            "stats) not read on lab-leaf1") in " ".join(output.split())
    rep = json.loads((tmp_path / "out" / "verify-report.json").read_text())
    checks = {c["check"]: c["status"] for c in rep["iterations"][0]["checks"]}
    assert checks["no PFC watchdog storm"] == "skip" and checks["no loss on the lossless class"] == "pass"
    md = (tmp_path / "out" / "verify-report.md").read_text()
    assert "Switches: not read (lab-leaf1)" in md and "watchdog storms 0" not in md
    # nothing failed, but what verify exists to check was not checked: INCOMPLETE, exit 2 (it said PASS, 0)
    assert code == 2 and rep["status"] == "incomplete", output
    assert "INCOMPLETE (not a pass: see not checked)" in output and "* status: **INCOMPLETE**" in md
    assert "running values of lab-leaf1: not read" in rep["not_checked"]


def _mistuned_lab(lab, tmp_path: Path) -> tuple[VerifyLab, Path]:  # type: ignore[no-untyped-def]
    """The --mistune lab (devices run the mis-tuned plan) and the un-mistuned inventory verify is given."""
    lb, _mistuned = lab([MISTUNED_ECN, MISTUNED_AI])
    return lb, lb.write_inventory(tmp_path / "as-planned.yaml")


def test_verify_measures_and_labels_what_the_devices_run(lab,
                                                         tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """The devices run the --mistune values, the inventory plans the tuner's: iteration 0 was labelled with
    the plan's Kmin/Kmax 3750000/7500000 and AI/HAI while the switch ran 20000/60000 and the hosts 1/10, and
    nothing said the devices did not run the plan. Now each difference is a finding (device, value, planned,
    running) and the baseline carries the running values."""
    _, inv = _mistuned_lab(lab, tmp_path)
    code, output = _cli(str(inv), "--out", str(tmp_path / "out"))
    flat = " ".join(output.split())
    assert (f"lab-leaf1 Ethernet0 queue 3 kmin_bytes: planned {DERIVED_ECN.kmin_bytes}, running 20000"
            in flat), output
    assert f"node1 ens1f0np0 ecn/roce_rp/rpg_ai_rate: planned {DERIVED_AI}, running 1" in flat
    rep = json.loads((tmp_path / "out" / "verify-report.json").read_text())
    ecn = rep["iterations"][0]["settings"]["ecn"]
    assert {(v["kmin_bytes"], v["kmax_bytes"], v["running"]) for v in ecn.values()} == {
        (20000, 60000, "differs from the plan")}
    ai = rep["iterations"][0]["settings"]["dcqcn"]
    assert {(v["rpg_ai_rate_mbps"], v["rpg_hai_rate_mbps"]) for v in ai.values()} == {(1, 10)}
    assert {f["rule"] for f in rep["findings"] if f["rule"].startswith("RT33")} == {"RT332"}
    assert "| 0 | baseline | - | 20000/60000 B" in (tmp_path / "out" / "verify-report.md").read_text()
    # a step "toward the tuner's values" is first of all: put the plan's values on the devices
    [rt316] = [f for f in rep["findings"] if f["rule"] == "RT316"]
    [rt316_ev] = [d["evidence"] for c in rep["iterations"][0]["checks"] for d in c["diagnoses"]
                  if d["rule"] == "RT316"]
    assert rt316["fix"].startswith("the plan's values are not on lab-leaf1, node1, node2 (RT332): `roce-tune "
                                   "apply` puts them there")
    # and it reasons from what they run: the ramp and increase step the read-back found, the plan's beside
    # them (it looked at the plan's tuner values and named neither)
    bdp = rt316_ev["kmax_below_bdp"][f"lab-leaf1/{DERIVED_ECN.name}"]["bdp_bytes"]
    assert (f"lab-leaf1/{DERIVED_ECN.name} Kmax 60000 B running (planned {DERIVED_ECN.kmax_bytes} B), below "
            f"one BDP ({bdp} B)") in rt316["message"]
    assert f"node1:ens1f0np0 rpg_ai_rate 1 Mb/s running (planned {DERIVED_AI} Mb/s)" in rt316["message"]
    assert code == 1  # ~60 % of line rate: the measurement of what runs fails the target


def test_adjust_refuses_a_fabric_that_does_not_run_the_plan(lab,
                                                            tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """--adjust on devices that do not run the plan measured the mis-tuned fabric as "iteration 0" of the plan
    and could roll back to the plan, never measured. Now it refuses, exit 2, before any traffic or write,
    naming the devices and values and saying to run roce-tune apply first."""
    lb, inv = _mistuned_lab(lab, tmp_path)
    code, output = _cli(str(inv), "--adjust", "--out", str(tmp_path / "out"))
    flat = " ".join(output.split())
    assert code == 2, output
    assert "--adjust needs every device to run the plan" in flat and "run `roce-tune apply` first" in flat
    assert f"lab-leaf1 Ethernet0 queue 3 kmax_bytes: planned {DERIVED_ECN.kmax_bytes}, running 60000" in flat
    assert "node2 ens1f0np0 ecn/roce_rp/rpg_hai_rate" in flat
    assert lb.runs() == []  # no nccl-tests run
    assert _wred(lb) == {("20000", "60000")} and _ai(lb, "node1") == "1"  # nothing written
    assert not (tmp_path / "out" / "verify-report.json").exists()


def test_a_device_not_read_is_never_as_planned(lab, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """A host whose read-back cannot run (here: mlnx_qos missing, the script stops with exit 2) is "not
    read" (RT333), its values shown as not read; --adjust refuses on it."""
    lb, inv = lab()
    (lb.host("node2").bin / "mlnx_qos").unlink()
    res = verify_fabric(inv, _opts(tmp_path / "out"))
    [d] = [f for f in res.report["findings"] if f["rule"] == "RT333"]
    assert d["location"]["device"] == "node2" and "mlnx_qos" in d["message"]
    dcqcn = res.report["iterations"][0]["settings"]["dcqcn"]
    assert dcqcn["node2"] == {"rpg_ai_rate_mbps": None, "rpg_hai_rate_mbps": None, "running": "not read"}
    assert dcqcn["node1"]["running"] == "as planned"
    with pytest.raises(ValueError, match="node2: not read"):
        verify_fabric(inv, _opts(tmp_path / "out2", adjust=True))


def test_limit_reads_only_the_devices_it_selects(lab, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """verify had no --limit (ansible's --limit was ignored): a run meant for some devices read every one and
    failed on one it could not reach. ``--limit`` (apply's selection) now picks the devices read back and
    whose counters are read; nccl-tests runs on the hosts among them, so a limit without two hosts is refused
    before any traffic, saying so."""
    from tests.emulators.verify_stubs import close_switch_mgmt

    lb, inv = lab()
    close_switch_mgmt(inv)  # lab-leaf1 cannot be reached: a limit to the hosts leaves it alone
    code, output = _cli(str(inv), "--limit", "node*", "--out", str(tmp_path / "out"))
    rep = json.loads((tmp_path / "out" / "verify-report.json").read_text())
    assert rep["switches"] == [] and rep["hosts"] == ["node1", "node2"], output
    assert "lab-leaf1" not in " ".join(rep["not_checked"]) and not [
        f for f in rep["findings"] if f["rule"] == "RT333"], output
    assert rep["iterations"][0]["settings"]["dcqcn"]["node1"]["running"] == "as planned"
    # the switch was not selected: its counters are not read, so the check that needs them could not run
    assert code == 2 and rep["not_checked"] == ["no PFC watchdog storm: no switch counters were collected"]
    # one host in the limit: mpirun on one host says nothing of the fabric; refused, nothing run
    runs = len(lb.runs())
    code, output = _cli(str(inv), "--limit", "node1", "--out", str(tmp_path / "out1"))
    flat = " ".join(output.split())
    assert code == 2 and "nccl-tests runs on the hosts --limit selects" in flat, output
    assert len(lb.runs()) == runs
    code, output = _cli(str(inv), "--limit", "role:nothing", "--out", str(tmp_path / "out2"))
    assert code == 2 and "--limit role:nothing matches no device" in " ".join(output.split()), output
