"""The roce-tune command line, run as a real subprocess on real files."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
LAB = REPO / "inventories" / "lab-2node.yaml"


def run(*args: str, cwd: Path = REPO) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "roce_tune.cli", *args], capture_output=True, text=True,
                          cwd=cwd, timeout=300)


def _tree(root: Path) -> dict[str, bytes]:
    """Every file a reader sees under ``root`` (through the plan's symlinks; not the hidden versions)."""
    found = {}
    for top, dirs, names in os.walk(root, followlinks=True):
        dirs[:] = [d for d in dirs if not d.startswith(".")]
        found.update({str((Path(top) / n).relative_to(root)): (Path(top) / n).read_bytes() for n in names
                      if not n.startswith(".")})
    return dict(sorted(found.items()))


def test_plan_writes_the_tree_and_is_byte_identical_on_rerun(tmp_path: Path) -> None:
    out = tmp_path / "out"
    first = run("plan", str(LAB), "--out", str(out))
    assert first.returncode == 0, first.stderr
    assert "wrote" in first.stdout and str(out) in first.stdout
    tree = _tree(out)
    assert {"plan.json", "plan.md", "nccl.env", "switches/lab-leaf1.json", "hosts/node1.sh",
            "hosts/roce-tune-host.sh"} <= set(tree)
    assert "hosts/node1.nccl.env" not in tree  # its NCCL variables are all in nccl.env
    assert (out / "hosts" / "node1.sh").stat().st_mode & 0o111
    second = run("plan", str(LAB), "--out", str(out))
    assert second.returncode == 0
    assert _tree(out) == tree
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".out.")], "temp dirs left behind"


def test_plan_prints_tuner_warnings_at_their_inventory_line_as_lint_does(tmp_path: Path) -> None:
    """A tuner warning (RT211 on a port) printed by ``plan`` carries the port entry's file:line:col, the
    position ``lint`` gives the same finding, in a first plan and in a re-plan that reuses the plan in
    force. site.yaml at 50G: the byte counter stays on below 100G (docs/derivation.md#dcqcn-byte-counter),
    and its fast-recovery limit cycle makes the leaf downlinks PFC-bound (RT211)."""
    inv, out = tmp_path / "site.yaml", tmp_path / "out"
    inv.write_text((REPO / "inventories" / "site.yaml").read_text().replace("100G", "50G"))
    lint = run("lint", str(inv), "--format", "json")
    want = {(f["rule"], f["location"]["device"], f["location"]["port"]): (f["location"]["line"],
                                                                         f["location"]["col"])
            for f in json.loads(lint.stdout) if f["rule"] == "RT211"}
    assert want, "site.yaml no longer has an RT211 warning to position"
    for attempt in ("first", "reused"):
        done = run("plan", str(inv), "--out", str(out), "--no-scorecard")
        assert done.returncode == 0, done.stderr
        shown = [line for line in done.stderr.splitlines() if "warning RT211" in line]
        assert len(shown) == len(want), (attempt, done.stderr)
        for (rule, device, port), (line, col) in want.items():
            assert any(s.startswith(f"{inv}:{line}:{col} {device}:{port} ") for s in shown), (attempt, shown)


def test_replan_names_the_files_a_cable_change_changed(tmp_path: Path) -> None:
    """After one cable edit the engineer is told which device files changed (what to review and apply)."""
    inv, out = tmp_path / "lab.yaml", tmp_path / "out"
    inv.write_text(LAB.read_text())
    first = run("plan", str(inv), "--out", str(out), "--no-scorecard")
    assert first.returncode == 0, first.stderr
    assert "changed since" not in first.stdout  # a first plan: nothing to compare with
    nic = 'switch_port: "lab-leaf1:Ethernet0", cable_length: 2m'
    inv.write_text(inv.read_text().replace(nic, nic.replace("2m", "90m")))
    second = run("plan", str(inv), "--out", str(out), "--no-scorecard")
    assert second.returncode == 0, second.stderr
    assert ("changed since the plan in force: hosts/node1.sh, switches/lab-leaf1.json, plan.json, plan.md"
            in second.stdout)
    assert "wrote 4 of 9 files to" in second.stdout
    third = run("plan", str(inv), "--out", str(out), "--no-scorecard", "--format", "json", "--force")
    doc = json.loads(third.stdout)
    assert "changes" not in doc  # nothing changed
    assert (doc["changed"], doc["changed_files"], doc["removed_files"]) == (False, [], [])


def test_plan_json_says_what_the_write_changed(tmp_path: Path) -> None:
    """``--format json`` gives a program (Ansible's changed_when, a CI job) what the run wrote: every file
    on a first plan, the changed and removed ones on a re-plan, nothing on an unchanged one; the text form
    says the same in words."""
    inv, out = tmp_path / "lab.yaml", tmp_path / "out"
    inv.write_text(LAB.read_text())

    def plan(*extra: str) -> dict[str, object]:
        proc = run("plan", str(inv), "--out", str(out), "--no-scorecard", "--format", "json", *extra)
        assert proc.returncode == 0, proc.stderr
        return dict(json.loads(proc.stdout))

    first = plan()
    assert first["changed"] is True and first["changed_files"] == first["files"]  # both sorted
    assert first["removed_files"] == [] and "changes" not in first
    text = run("plan", str(inv), "--out", str(out), "--no-scorecard")
    assert "plan in force unchanged: 9 files in" in text.stdout and "nothing written" in text.stdout
    assert plan()["changed"] is False
    lab = inv.read_text()
    inv.write_text(lab[:lab.index("  - name: node2")])  # node2 is the last host: it leaves the inventory
    gone = plan()
    assert gone["changed"] is True and gone["removed_files"] == ["hosts/node2.sh"], gone
    assert "hosts/node2.sh" not in str(gone["changed_files"])
    (out / "hosts" / "node1.sh").unlink()  # a file of the plan in force removed by hand: put back
    restored = plan()
    assert (restored["changed"], restored["restored_files"], restored["changed_files"]) == (True, 1, [])
    # the top-level link out/nccl.env removed by hand: put back, and said so (it said "nothing written")
    (out / "nccl.env").unlink()
    relinked = plan()
    assert (relinked["changed"], relinked["restored_files"]) == (True, 1), relinked
    assert (out / "nccl.env").read_text().startswith("# NCCL environment")
    (out / "nccl.env").unlink()
    text = run("plan", str(inv), "--out", str(out), "--no-scorecard")
    assert "restored 1 edited or missing file(s)" in text.stdout, text.stdout
    assert plan()["changed"] is False


def test_plan_json_summary_and_platform_only(tmp_path: Path) -> None:
    inv = REPO / "inventories" / "mixed-vendor.yaml"
    proc = run("plan", str(inv), "--out", str(tmp_path / "o"), "--format", "json", "--platform-only", "eos")
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert data["switches_per_platform"]["eos"] == 2 and data["errors"] == 0
    switch_files = [f for f in data["files"] if f.startswith("switches/")]
    assert switch_files == ["switches/leaf1.cfg", "switches/leaf2.cfg"]
    assert "400" in data["ecn_by_speed_gbps"]


def test_plan_with_an_error_writes_nothing_and_keeps_the_old_tree(tmp_path: Path) -> None:
    out = tmp_path / "out"
    assert run("plan", str(LAB), "--out", str(out)).returncode == 0
    before = _tree(out)
    bad = tmp_path / "bad.yaml"
    bad.write_text(LAB.read_text().replace(
        "  cnp_priority: 6\n", "  cnp_priority: 6\n  overrides:\n    - {device: lab-leaf1, set: {kmax_bytes: "
                               "900MB}}\n"))
    proc = run("plan", str(bad), "--out", str(out))
    assert proc.returncode == 1
    assert "RT210" in proc.stderr or "RT237" in proc.stderr
    assert _tree(out) == before
    fresh = tmp_path / "fresh"
    assert run("plan", str(bad), "--out", str(fresh)).returncode == 1 and not fresh.exists()


def test_hostile_names_are_rejected_before_rendering(tmp_path: Path) -> None:
    for hostile in ("ens1f0np0; rm -rf /", "$(reboot)", "eth0\\nreboot", "eth0'"):
        bad = tmp_path / "hostile.yaml"
        bad.write_text(LAB.read_text().replace("netdev: ens1f0np0", f'netdev: "{hostile}"', 1))
        proc = run("plan", str(bad), "--out", str(tmp_path / "o"))
        assert proc.returncode == 1, hostile
        assert "RT003" in proc.stderr and "hostile.yaml:" in proc.stderr
        assert not (tmp_path / "o").exists()


def test_explain_and_calc() -> None:
    proc = run("explain", str(LAB), "lab-leaf1:Ethernet0", "xoff_bytes")
    assert proc.returncode == 0, proc.stderr
    # lab-2node's Spectrum-3 gets the vendor-validated sonic-static model (the SONiC static tables' constants)
    assert "xoff_bytes =" in proc.stdout and "source:" in proc.stdout and "model sonic-static" in proc.stdout
    assert "peer_response" in proc.stdout and "docs/derivation.md#headroom-models" in proc.stdout
    assert run("explain", str(LAB), "nope:Ethernet0").returncode == 2
    typo = run("explain", str(LAB), "lab-leaf1:Ethernet0", "xof_bytes")
    assert typo.returncode == 2 and "did you mean xoff_bytes" in typo.stderr and "kmin_bytes" in typo.stderr
    calc = run("calc", "headroom", "--asic", "spectrum-3", "--speed", "400G", "--cable", "40m",
               "--model", "sonic-static", "--format", "json")
    data = json.loads(calc.stdout)
    # SN4700 table
    # row
    assert (data["xon_bytes"], data["xoff_bytes"], data["size_bytes"]) == (37888, 77824, 124928)
    ecn = json.loads(run("calc", "ecn", "--speed", "400G", "--rtt", "10us", "--fan-in", "8", "--format",
                         "json").stdout)
    assert ecn["kmin_bytes"] < ecn["kmax_bytes"] and "rationale" in ecn
    assert run("calc", "headroom", "--asic", "nope", "--speed", "400G", "--cable", "1").returncode == 2


def test_explain_gives_the_mtu_of_a_switch_port_as_of_a_host_nic(tmp_path: Path) -> None:
    """Every value in plan.json is explained: a switch port's MTU (the frame size the headroom counts) was
    not ('no parameter 'mtu' at lab-leaf1:Ethernet0') though a host NIC's was. A port MTU written in the
    inventory is its own; the others follow policy.mtu."""
    inv = tmp_path / "lab.yaml"
    port = "{name: Ethernet8, speed: 400G"
    inv.write_text(LAB.read_text().replace(port + "}", port + ", mtu: 9100}"))
    policy = run("explain", str(inv), "lab-leaf1:Ethernet0", "mtu")
    assert policy.returncode == 0, policy.stderr
    assert policy.stdout.startswith("lab-leaf1:Ethernet0 mtu = 9216\n")
    assert "formula: switch port mtu, else policy.mtu" in policy.stdout and "mtu_bytes=9216" in policy.stdout
    assert "docs/derivation.md#headroom" in policy.stdout
    own = run("explain", str(inv), "lab-leaf1:Ethernet8", "mtu")
    assert own.returncode == 0 and own.stdout.startswith("lab-leaf1:Ethernet8 mtu = 9100\n"), own.stderr
    host = run("explain", str(inv), "node1:ens1f0np0", "mtu")
    assert host.returncode == 0 and host.stdout.startswith("node1:ens1f0np0 mtu = 9000\n"), host.stderr


@pytest.mark.parametrize("how", ["same-path", "symlink"])
def test_expand_refuses_to_write_over_the_inventory_it_expands(tmp_path: Path, how: str) -> None:
    """``expand fabric.yaml --out fabric.yaml`` (a slip of the shell history) replaced the intent, comments
    and all, by the full form of hundreds of lines; it must refuse, exit 2 and leave the file as it was."""
    intent = tmp_path / "fabric.yaml"
    text = (REPO / "inventories" / "intent" / "lab-2node.yaml").read_text()
    intent.write_text(text)
    dest = intent
    if how == "symlink":
        dest = tmp_path / "full.yaml"
        dest.symlink_to(intent)
    proc = run("expand", str(intent), "--out", str(dest))
    assert proc.returncode == 2, proc.stderr
    assert str(dest) in proc.stderr and "the inventory it expands" in proc.stderr
    assert intent.read_text() == text
    other = tmp_path / "fabric.full.yaml"
    assert run("expand", str(intent), "--out", str(other)).returncode == 0
    assert run("lint", str(other)).returncode == 0


def test_platform_only_that_no_switch_runs_says_so(tmp_path: Path) -> None:
    """``--platform-only eos`` on an all-SONiC fabric (a wrong inventory, or a loop over every platform)
    wrote a plan without one switch config and said nothing; now stderr names the platform, the platforms
    the inventory has, and that no switch config was written for it (exit 0: the host side is planned)."""
    out = tmp_path / "out"
    proc = run("plan", str(LAB), "--out", str(out), "--no-scorecard", "--platform-only", "eos",
               "--platform-only", "sonic")
    assert proc.returncode == 0, proc.stderr
    assert "--platform-only eos: no switch of" in proc.stderr
    assert "runs it (platforms here: sonic)" in proc.stderr and "sonic:" not in proc.stderr
    only = run("plan", str(LAB), "--out", str(out), "--no-scorecard", "--platform-only", "eos",
               "--format", "json")
    assert only.returncode == 0 and "--platform-only eos: no switch of" in only.stderr, only.stderr
    assert not [f for f in json.loads(only.stdout)["files"] if f.startswith("switches/")]
    full = run("plan", str(LAB), "--out", str(out), "--no-scorecard", "--platform-only", "sonic")
    assert full.returncode == 0 and "--platform-only" not in full.stderr, full.stderr


def test_explain_says_why_a_lossy_port_has_no_headroom_or_ecn(tmp_path: Path) -> None:
    """``explain INV leaf:Ethernet16 xoff_bytes`` on a port that is not lossless said only "no parameter
    'xoff_bytes' at ..." with a list of what there is, as if the name were wrong; it must say the port is
    lossy and why (no cable, or its link is lossless: false). Exit stays 2."""
    inv = tmp_path / "lab.yaml"
    port = "      - {name: Ethernet8, speed: 400G}\n"
    inv.write_text(LAB.read_text().replace(port, port + "      - {name: Ethernet16, speed: 400G}\n"))
    for param in ("xoff_bytes", "kmax_bytes"):
        proc = run("explain", str(inv), "lab-leaf1:Ethernet16", param)
        assert proc.returncode == 2
        assert (f"lab-leaf1:Ethernet16 is not a lossless port (no cable to it in the inventory), so it has "
                f"no {param}") in proc.stderr, proc.stderr
    assert run("explain", str(inv), "lab-leaf1:Ethernet16", "mtu").returncode == 0
    # its cable length is the default no value uses, not a defaulted cable named by a lint warning
    cable = run("explain", str(inv), "lab-leaf1:Ethernet16", "cable_m")
    assert "no cable to this port in the inventory" in cable.stdout and "lint warning" not in cable.stdout
    assert run("lint", str(inv)).returncode == 0 and "RT107" not in run("lint", str(inv)).stdout
    typo = run("explain", str(inv), "lab-leaf1:Ethernet16", "xof_bytes")
    assert typo.returncode == 2 and "no parameter 'xof_bytes'" in typo.stderr
    from roce_tune.explain import _LOSSLESS_ONLY, explain
    from roce_tune.pipeline import plan_inventory

    plan = plan_inventory(LAB, None, scorecards=False).plan
    assert _LOSSLESS_ONLY <= {e.param for e in explain(plan, "lab-leaf1:Ethernet0")}  # each one real


def test_calc_headroom_defaults_to_the_model_plan_uses_for_the_asic(tmp_path: Path) -> None:
    """``calc headroom`` is the what-if of plan's headroom: without ``--model`` it used ieee on every ASIC, so
    for lab-2node's Spectrum-3 400G 2 m port it said xoff 156,672 B where plan (sonic-static, the ASIC's
    default) writes 34,816 B. Now it picks the model as plan does and names the other model's numbers."""
    from roce_tune.plan import plan_from_json

    out = tmp_path / "out"
    assert run("plan", str(LAB), "--out", str(out), "--no-scorecard").returncode == 0
    port = plan_from_json((out / "plan.json").read_text()).switches[0].ports[0]
    assert port.headroom is not None and port.headroom.model == "sonic-static"
    calc = run("calc", "headroom", "--asic", "spectrum-3", "--speed", "400G", "--cable", "2m",
               "--format", "json")
    assert calc.returncode == 0, calc.stderr
    data = json.loads(calc.stdout)
    assert (data["model"], data["xoff_bytes"], data["xon_bytes"]) == (
        "sonic-static", port.headroom.xoff_bytes, port.headroom.xon_bytes)
    assert data["rationale"]["model"]["inputs"]["other_model"] == "ieee"
    assert data["rationale"]["model"]["inputs"]["ieee_xoff_bytes"] > data["xoff_bytes"]
    # no SONiC static table for Tomahawk-3: ieee, as in a plan; an explicit --model still wins
    th3 = json.loads(run("calc", "headroom", "--asic", "tomahawk-3", "--speed", "400G", "--cable", "2m",
                         "--format", "json").stdout)
    assert th3["model"] == "ieee"
    forced = json.loads(run("calc", "headroom", "--asic", "spectrum-3", "--speed", "400G", "--cable", "2m",
                            "--model", "ieee", "--format", "json").stdout)
    assert forced["model"] == "ieee" and forced["xoff_bytes"] == data["rationale"]["model"]["inputs"][
        "ieee_xoff_bytes"]


def test_calc_headroom_warns_when_the_headroom_does_not_fit_the_asic() -> None:
    """``calc headroom --cable 100000m`` on a Spectrum-3 printed 113 MB of headroom (more than the ASIC's
    whole buffer) without a word, where plan refuses the same port (RT201/RT202). Now it warns on stderr
    naming the per-port maximum and the catalog's buffer, keeps exit 0 (a what-if), and the JSON lists the
    warnings; a 2 m cable has none."""
    from roce_tune.inventory.catalog import load_catalog

    sp3 = load_catalog().asic("spectrum-3")
    long = run("calc", "headroom", "--asic", "spectrum-3", "--speed", "400G", "--cable", "100000m",
               "--format", "json")
    assert long.returncode == 0, long.stderr
    data = json.loads(long.stdout)
    assert data["size_bytes"] > sp3.buffer_bytes
    assert [w["rule"] for w in data["warnings"]] == ["RT201", "RT202"]
    assert all(w["severity"] == "warning" for w in data["warnings"])
    stderr = " ".join(long.stderr.split())
    assert f"{sp3.buffer_bytes} B buffer of spectrum-3" in stderr
    assert f"{sp3.port_max_headroom_bytes} B per-port maximum of spectrum-3" in stderr
    text = run("calc", "headroom", "--asic", "spectrum-3", "--speed", "400G", "--cable", "100000m")
    assert text.returncode == 0 and "warning RT202" in text.stderr
    short = run("calc", "headroom", "--asic", "spectrum-3", "--speed", "400G", "--cable", "2m",
                "--format", "json")
    assert short.returncode == 0 and "warnings" not in json.loads(short.stdout)
    assert "warning" not in short.stderr


def test_lint_exit_codes_and_github_format(tmp_path: Path) -> None:
    assert run("lint", *[str(p) for p in sorted((REPO / "inventories").glob("*.yaml"))]).returncode == 0
    bad = tmp_path / "bad.yaml"
    bad.write_text(LAB.read_text().replace("speed: 400G", "speed: fast", 1))
    proc = run("lint", str(bad), "--format", "github")
    assert proc.returncode == 1
    assert proc.stdout.startswith(f"::error file={bad},line=")
    assert run("lint", str(tmp_path / "missing.yaml")).returncode == 1  # RT005 (test below)
    assert run("schema").stdout == (REPO / "schema" / "inventory.schema.json").read_text()
    assert run("--version").stdout.startswith("roce-tune ")


def test_lint_reports_a_path_it_cannot_read_as_rt005_and_lints_the_others(tmp_path: Path) -> None:
    """A missing file or a directory was typer's usage error (exit 2, a box on stderr): RT005 never came
    out, ``--format json|github`` printed nothing for CI and the other files were not linted."""
    missing, folder = tmp_path / "missing.yaml", tmp_path / "inventories"
    folder.mkdir()
    bad = tmp_path / "bad.yaml"
    bad.write_text(LAB.read_text().replace("speed: 400G", "speed: fast", 1))
    proc = run("lint", str(missing), str(LAB), str(folder), str(bad), "--format", "json")
    assert proc.returncode == 1, proc.stderr
    found = json.loads(proc.stdout)
    assert [(f["rule"], f["location"]["file"]) for f in found if f["rule"] == "RT005"] == [
        ("RT005", str(missing)), ("RT005", str(folder))]
    assert any(f["location"]["file"] == str(bad) and f["severity"] == "error" and f["rule"] != "RT005"
               for f in found)  # the files after the unreadable ones were linted
    assert any(f["location"]["file"] == str(LAB) for f in found)
    gh = run("lint", str(missing), "--format", "github")
    assert gh.returncode == 1 and gh.stdout.startswith(f"::error file={missing},title=RT005::cannot read"), gh
    text = run("lint", str(missing), str(LAB))
    assert text.returncode == 1 and f"{missing}: error RT005: cannot read the inventory" in text.stdout
    assert "2 inventory file(s): 1 error(s)" in text.stderr
    # usage errors stay exit 2
    assert run("lint", str(LAB), "--format", "xml").returncode == 2
    assert run("lint", str(LAB), "--no-such-option").returncode == 2
    assert run("lint").returncode == 2
    # plan and explain keep their clear usage error for a missing inventory
    for cmd in (("plan", str(missing)), ("explain", str(missing), "leaf1")):
        p = run(*cmd)
        assert p.returncode == 2 and "does not exist" in p.stderr and "Traceback" not in p.stderr, p.stderr


def test_explain_leaves_its_inventory_and_plan_to_the_process_exit(monkeypatch: pytest.MonkeyPatch) -> None:
    """``_leave_to_exit`` (explain's last step) keeps the objects alive through reference counting and a
    full collection when the process ends with the command (the console script), and does nothing for a
    caller that runs the app in its own process (CliRunner)."""
    import gc
    import weakref

    from roce_tune import cli

    class Big:
        pass

    obj = Big()
    ref = weakref.ref(obj)
    cli._leave_to_exit(obj)  # not the console script: freed as usual
    del obj
    gc.collect()
    assert ref() is None
    monkeypatch.setattr(cli, "_PROCESS_ENDS_WITH_COMMAND", True)
    obj = Big()
    ref = weakref.ref(obj)
    cli._leave_to_exit(obj)
    try:
        del obj
        gc.collect()
        assert ref() is not None
    finally:
        gc.unfreeze()


@pytest.mark.parametrize(("args", "flag"), [
    (("headroom", "--asic", "spectrum-3", "--speed", "400G", "--cable", "-5m"), "--cable"),
    (("headroom", "--asic", "spectrum-3", "--speed", "400G", "--cable", "0"), "--cable"),
    (("headroom", "--asic", "spectrum-3", "--speed", "-400G", "--cable", "3m"), "--speed"),
    (("headroom", "--asic", "spectrum-3", "--speed", "400G", "--cable", "3m", "--mtu", "0"), "--mtu"),
    (("ecn", "--speed", "400G", "--rtt", "0"), "--rtt"),
    (("ecn", "--speed", "400G", "--rtt", "-5us"), "--rtt"),
    (("ecn", "--speed", "400G", "--pfc-trigger", "-4MB"), "--pfc-trigger"),
    (("ecn", "--speed", "400G", "--pfc-trigger", "0"), "--pfc-trigger"),
    (("ecn", "--speed", "0"), "--speed"),
    (("dcqcn", "--speed", "1600"), "--speed"),
])
def test_calc_errors_name_the_option(args: tuple[str, ...], flag: str) -> None:
    """A bad calc input is refused (exit 2) by a message that starts with the option it came from. Before,
    `--rtt 0` said 'derive_ecn: need speed_gbps > 0, base_rtt_us > 0, ... (got 400, 0.0, 8,
    4611686018427387904)' (an internal stand-in shown as the PFC trigger), `--pfc-trigger 0` gave
    Kmin = Kmax = 0 B with exit 0 (a queue that pauses at its first byte leaves ECN no room), and '-5m is
    not a length' did not say which option held it."""
    proc = run("calc", *args)
    assert proc.returncode == 2, proc.stdout[-2000:] + proc.stderr
    assert proc.stderr.startswith(f"error: {flag}: "), proc.stderr
    assert "4611686018427387904" not in proc.stderr and "derive_ecn" not in proc.stderr, proc.stderr
