"""``audit --live`` against the loopback SSH emulators: read-only (every running config byte-identical
afterwards, only read-only commands seen), the same findings as captures, unreachable devices reported as
not checked (never as zeros), hosts read over SSH."""

from __future__ import annotations

import json
import socket
from pathlib import Path

import pytest
from ruamel.yaml import YAML
from typer.testing import CliRunner

from roce_tune.audit import LiveOptions, audit_live
from roce_tune.audit.live import READ_ONLY, capture_commands, check_read_only
from roce_tune.cli import app
from roce_tune.deploy.runner import ApplyOptions, SessionTiming
from tests.deploy.conftest import emulated_inventory
from tests.render.golden import REPO

pytestmark = pytest.mark.emulator

FAST = SessionTiming(fast_cli=True, global_delay_factor=0.1)


@pytest.fixture(autouse=True)
def _credentials(monkeypatch: pytest.MonkeyPatch) -> None:
    from tests.deploy.conftest import PASSWORD, USER

    monkeypatch.setenv("ROCE_TUNE_USERNAME", USER)
    monkeypatch.setenv("ROCE_TUNE_PASSWORD", PASSWORD)


def _opts(known: Path, tmp: Path | None = None, **kw: object) -> LiveOptions:
    return LiveOptions(apply=ApplyOptions(known_hosts=str(known), timing=FAST), save_dir=tmp,
                       **kw)  # type: ignore[arg-type]


def test_live_reads_every_platform_read_only_and_finds_pfc_off(tmp_path: Path) -> None:
    fleet, inv, known = emulated_inventory("mixed-vendor.yaml", tmp_path)
    with fleet:
        before = {d.spec.name: d.running_config() for d in fleet}
        r = audit_live(inv, _opts(known, tmp_path / "caps", concurrency=4))
        after = {d.spec.name: d.running_config() for d in fleet}
        seen = {d.spec.name: list(d.commands_seen) for d in fleet}
    assert after == before  # byte-identical running configurations
    for name, cmds in seen.items():
        sent = [c for c in cmds if c.strip() and not c.startswith(("terminal", "set cli", "sudo", "exit",
                                                                   "screen"))]
        assert sent, name
        assert all(READ_ONLY.match(c) or c in ("show version", "show hostname") or c.startswith("show ")
                   for c in sent), (name, sent)
        assert not [c for c in sent if c.startswith(("config", "nv set", "nv config apply", "set ", "delete",
                                                     "commit", "configure"))], (name, sent)
    assert not [f for f in r.findings if f.rule == "RT490"], [f.message for f in r.findings
                                                              if f.rule == "RT490"]
    switches = {d for d, _ in ((s.name, s) for s in r.data.switches.values()) if r.data.switches[d].running}
    assert switches == set(before)  # every switch's running config was read back
    # factory configs differ from the plan on every switch (ports missing or without PFC); SONiC's factory
    # PORT table has the plan's uplinks, so "priority 3 is not lossless" shows there
    assert {f.device for f in r.findings if f.rule in ("RT420", "RT480")} == set(before)
    assert {f.device for f in r.findings if f.rule == "RT420"} >= {"leaf5", "leaf6"}
    f = next(f for f in r.findings if f.rule == "RT420" and f.port)
    assert f.evidence and f.evidence[0].file == f"{f.device}.live.txt"
    saved = (tmp_path / "caps" / f.evidence[0].file).read_text().splitlines()
    assert saved[0].startswith(f"roce-tune@{f.device}:~$ ")
    assert oct((tmp_path / "caps" / f.evidence[0].file).stat().st_mode & 0o777) == "0o600"


def _closed_port() -> int:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def test_an_unreachable_device_is_not_checked_never_zero(tmp_path: Path) -> None:
    fleet, inv, known = emulated_inventory("lab-2node.yaml", tmp_path, hosts=True)
    data = YAML(typ="safe").load(inv.read_text())
    data["hosts"][1]["mgmt"]["port"] = _closed_port()  # node2: nothing listens
    del data["hosts"][0]["mgmt"]  # node1: no management address
    with open(inv, "w") as fh:
        YAML().dump(data, fh)
    with fleet:
        before = {d.spec.name: d.running_config() for d in fleet}
        r = audit_live(inv, _opts(known, device_timeout_s=20.0))
        after = {d.spec.name: d.running_config() for d in fleet}
    assert after == before
    down = [f for f in r.findings if f.rule == "RT490"]
    assert [(f.device, f.severity.value) for f in down] == [("node2", "warning")]
    assert "TCP connection failed" in down[0].message and "not checked" in down[0].message
    assert {(s.rule, s.device) for s in r.not_checked} >= {("RT490", "node2"), ("RT491", "node1")}
    assert "node2" not in r.data.hosts and "node1" not in r.data.hosts  # absent, not zeros
    assert not [f for f in r.findings if f.device in ("node1", "node2") and f.rule != "RT490"]


def test_hosts_are_read_over_ssh(tmp_path: Path) -> None:
    fleet, inv, known = emulated_inventory("lab-2node.yaml", tmp_path, hosts=True)
    with fleet:
        r = audit_live(inv, _opts(known, tmp_path / "caps"))
    assert not [f for f in r.findings if f.rule == "RT490"], [f.message for f in r.findings]
    h = r.data.hosts["node1"]
    assert h.nics and any(n.mtu is not None for n in h.nics.values())
    assert any(d.active_mtu is not None for d in h.rdma.values())
    # every host block is understood (the emulated SONiC lacks `show interfaces counters`: its usage error
    # is listed as not understood, as on a switch whose CLI lacks a command)
    assert not [u for u in r.data.unparsed if u.file.startswith("node")], r.data.unparsed[:3]
    assert [u.command for u in r.data.unparsed] == ["show interfaces counters"]


def test_hosts_global_pause_is_read_live(tmp_path: Path) -> None:
    """``ethtool -a`` per planned NIC (read-only): node1 at the ConnectX default (RX/TX on) is RT428; node2,
    whose pause was turned off, is not; the running state is unchanged."""
    from tests.emulators import host_stubs

    fleet, inv, known = emulated_inventory("lab-2node.yaml", tmp_path, hosts=True)
    with fleet:
        node2 = next(d for d in fleet if d.spec.name == "node2")
        state = host_stubs.state_path(node2.sysroot, "ethtool", "ens1f0np0")
        state.write_text(host_stubs.state_text({"autoneg": "off", "rx": "off", "tx": "off"}))
        node1 = next(d for d in fleet if d.spec.name == "node1")
        before = host_stubs.state_path(node1.sysroot, "ethtool", "ens1f0np0").read_text()
        r = audit_live(inv, _opts(known, tmp_path / "caps"))
        after = host_stubs.state_path(node1.sysroot, "ethtool", "ens1f0np0").read_text()
        seen = {d.spec.name: list(d.commands_seen) for d in fleet}
    assert after == before
    assert "ethtool -a ens1f0np0" in seen["node1"] and "ethtool -a ens1f0np0" in seen["node2"]
    found = [f for f in r.findings if f.rule == "RT428"]
    assert [(f.device, f.port, f.severity.value) for f in found] == [("node1", "ens1f0np0", "error")]
    lines = (tmp_path / "caps" / "node1.live.txt").read_text().splitlines()
    assert [lines[e.line - 1] for e in found[0].evidence] == ["RX:\t\ton", "TX:\t\ton"]
    assert not [s for s in r.not_checked if s.rule == "RT428"]


def test_commands_are_read_only_by_construction() -> None:
    for bad in ("config load x", "show run; reboot", "nv set qos roce mode lossless",
                "mlnx_qos -i eth0 --pfc 0,0,0,1", "ethtool -A eth0 rx off tx off", "ethtool -a eth0 rx off",
                "show running-config | write file", "ethtool -s eth0 speed 100000", "sudo config reload -y"):
        with pytest.raises(ValueError, match="read-only"):
            check_read_only(bad)
    from tests.render.golden import pipeline_plan

    plan = pipeline_plan("mixed-vendor")
    for d in [*plan.switches, *plan.hosts]:
        assert capture_commands(plan, d.name)


def test_sonic_live_reads_every_watchdog_queue() -> None:
    """pfcwd prints a queue whose counters are all 0/0 only with --empty (sonic-utilities pfcwd/main.py
    show_stats): without it a quiet queue has no counters, so two live reads could not take a delta."""
    from tests.render.golden import pipeline_plan

    plan = pipeline_plan("mixed-vendor")
    sonic = next(s for s in plan.switches if s.platform == "sonic")
    assert "show pfcwd stats --empty" in capture_commands(plan, sonic.name)


def test_cli_live_needs_an_inventory_and_not_both_sources(tmp_path: Path) -> None:
    runner = CliRunner()
    r = runner.invoke(app, ["audit", "--live"])
    assert r.exit_code == 2 and "needs an inventory" in r.output + (r.stderr if r.stderr_bytes else "")
    r = runner.invoke(app, ["audit", "--live", "--from", str(tmp_path)])
    assert r.exit_code == 2


@pytest.mark.slow  # end-to-end (subprocesses/emulators), seconds each: .ci/run runs it (-m slow)
def test_cli_live_json(tmp_path: Path) -> None:
    fleet, inv, known = emulated_inventory("lab-2node.yaml", tmp_path, hosts=True)
    with fleet:
        r = CliRunner().invoke(app, ["audit", str(inv), "--live", "--format", "json", "--known-hosts",
                                     str(known),
                                     "--concurrency", "2", "--device-timeout", "60"])
    doc = json.loads(r.stdout)
    assert r.exit_code == 1, r.output  # the factory switch has no PFC on priority 3
    assert any(f["rule"] == "RT420" and f["device"] == "lab-leaf1" for f in doc["findings"])
    assert all(f["evidence"] for f in doc["findings"] if f["rule"] == "RT420")


@pytest.mark.slow  # end-to-end (subprocesses/emulators), seconds each: .ci/run runs it (-m slow)
def test_a_device_slower_than_the_device_timeout_is_not_checked(tmp_path: Path) -> None:
    fleet, inv, known = emulated_inventory("lab-2node.yaml", tmp_path, hosts=True,
                                           faults={"lab-leaf1": {"delay_per_command_s": 2.0}})
    with fleet:
        t0 = __import__("time").monotonic()
        r = audit_live(inv, _opts(known, device_timeout_s=3.0))
        took = __import__("time").monotonic() - t0
    down = [f for f in r.findings if f.rule == "RT490"]
    assert [f.device for f in down] == ["lab-leaf1"], [f.message for f in r.findings]
    assert "no answer within the device timeout (3 s" in down[0].message
    assert "lab-leaf1" not in r.data.switches  # nothing read is nothing judged
    assert not [f for f in r.findings if f.device == "lab-leaf1" and f.rule != "RT490"]
    assert {"node1", "node2"} <= set(r.data.hosts)  # the others were read
    assert took < 60


def test_wrong_credentials_everywhere_is_not_a_clean_audit(tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """Every device refuses the login: each RT490 says so on one line (no netmiko help text), the password
    appears nowhere, and the audit that read nothing exits 2 (a clean 0 would keep a nightly CI green
    after the credentials expired)."""
    from tests.deploy.conftest import PASSWORD

    monkeypatch.setenv("ROCE_TUNE_PASSWORD", "wrong-" + PASSWORD)
    fleet, inv, known = emulated_inventory("lab-2node.yaml", tmp_path, hosts=True)
    outs = {}
    with fleet:
        for fmt in ("json", "markdown"):
            outs[fmt] = CliRunner().invoke(app, ["audit", str(inv), "--live", "--format", fmt,
                                                 "--known-hosts", str(known), "--concurrency", "3",
                                                 "--device-timeout", "60"])
    r = outs["json"]
    assert r.exit_code == 2, r.output
    doc = json.loads(r.stdout)
    down = [f for f in doc["findings"] if f["rule"] == "RT490"]
    assert sorted(f["device"] for f in down) == ["lab-leaf1", "node1", "node2"]
    for f in down:
        assert "authentication failed" in f["message"] and "\n" not in f["message"], f["message"]
    md = outs["markdown"].stdout
    assert outs["markdown"].exit_code == 2
    assert len([ln for ln in md.splitlines() if ln.startswith("| RT490 |")]) == 3, md
    assert PASSWORD not in r.output + md


def test_a_save_captures_path_that_cannot_be_a_directory_fails_before_any_session(tmp_path: Path) -> None:
    """``--save-captures`` naming a file (or an unwritable place) is a usage error naming that option and
    path, raised before any SSH session (it was a traceback after every device had been read, exit 1)."""
    afile = tmp_path / "captures"
    afile.write_text("not a directory")
    inv = REPO / "inventories" / "lab-2node.yaml"
    r = CliRunner().invoke(app, ["audit", str(inv), "--live", "--save-captures", str(afile),
                                 "--device-timeout", "5"])
    assert r.exit_code == 2, r.output
    assert f"--save-captures {afile}" in r.output and "Traceback" not in r.output
    assert "lab-2node.yaml" not in r.output
