"""The ``roce_tune_preflight`` filter as tasks/refuse.yml calls it, without a device: the probe results of
the three probe tasks (``raw``, ``cli_command``, ``junos_command``: two of them skipped on any one device)
and the plan directory the port speeds come from. It must give apply's own verdict
(:meth:`roce_tune.platforms.contract.PushMethod.refusal`) whatever module ran the probe."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from roce_tune.platforms.junos import probe_pending_confirm
from tests.ansible.harness import REPO, load_filters

#: entry 0 of `show system commit` while someone's `commit confirmed` waits for its confirm (Junos CLI text,
#: also what junos_command returns over NETCONF with display text)
PENDING = ("0   2026-12-02 03:10:00 UTC by bob via cli commit confirmed, rollback in 9mins\n"
           "1   2026-12-02 02:00:00 UTC by root via cli\n")

#: `show platform summary` of a SONiC switch (sonic-utilities show/platform.py)
SUMMARY = ("Platform: x86_64-mlnx_msn4700-r0\nHwSKU: ACS-MSN4700\nASIC: mellanox\nASIC Count: {count}\n"
           "Serial Number: MT2231X09876\nModel Number: MSN4700-WS2FO\nHardware Revision: A1\n")
GCU_OK = "Usage: config checkpoint [OPTIONS] CHECKPOINT_NAME\nROCE_TUNE_RC=0\n"


def _filters() -> ModuleType:
    return load_filters("roce_tune_filters")


def _skipped(command: str) -> dict[str, Any]:
    """A loop item Ansible registers for a probe task whose ``when`` is false on this device."""
    return {"item": command, "skipped": True, "changed": False,
            "false_condition": "roce_tune_probe_via == 'raw'"}


@pytest.mark.parametrize("answered", [
    {"item": "show system commit", "stdout": PENDING, "changed": False},                  # cli_command
    {"item": "show system commit", "stdout": [PENDING.strip()], "stdout_lines": [[]]},    # junos_command
])
def test_junos_verdict_whatever_module_probed(answered: dict[str, Any]) -> None:
    """The skipped items of the other probe tasks come after the answered one in refuse.yml's list and
    must not overwrite its output with none (which would pass the switch)."""
    f = _filters()
    probed = [_skipped("show system commit"), answered, _skipped("show system commit")]
    verdict = f.roce_tune_preflight("", "junos", "", probed)
    assert verdict == probe_pending_confirm(lambda _: PENDING), verdict
    assert verdict.startswith("a `commit confirmed` is waiting") and "have bob confirm it" in verdict
    assert f.roce_tune_preflight("", "junos", "", [_skipped("show system commit")]) == ""


def test_plan_port_speeds_come_from_the_checked_plan_directory(tmp_path: Path) -> None:
    """SONiC's preflight gets the plan's port speeds of the device from plan.json; a device the plan does not
    have, or a plan directory that is not intact, is an error naming it, never a check skipped."""
    inventory = tmp_path / "lab-2node.yaml"
    inventory.write_text((REPO / "inventories/lab-2node.yaml").read_text())
    out = tmp_path / "out"
    env = {"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin", "ROCE_TUNE_USERNAME": "u",
           "ROCE_TUNE_PASSWORD": "p"}
    subprocess.run([sys.executable, "-m", "roce_tune.cli", "plan", str(inventory), "--out", str(out)],
                   check=True, capture_output=True, env=env)
    f = _filters()
    desired = (out / "switches/lab-leaf1.json").read_text()
    running = {"DEVICE_METADATA": {"localhost": {"buffer_model": "dynamic"}},
               "PORT": {p: {"speed": "400000"} for p in json.loads(desired)["PORT"]}}
    running["PORT"]["Ethernet8"]["speed"] = "800000"
    renamed = desired
    headroom = sorted(n for n, row in json.loads(desired)["BUFFER_PROFILE"].items() if "xoff" in row)
    assert headroom
    for i, name in enumerate(headroom):
        renamed = renamed.replace(f'"{name}"', f'"ROCE_HEADROOM_{i}"')
    gcu = [{"item": "show platform summary", "stdout": SUMMARY.format(count=1)},
           {"item": "sudo config checkpoint --help; echo ROCE_TUNE_RC=$?",
            "stdout": GCU_OK}]
    assert f.roce_tune_preflight(json.dumps(running), "sonic", renamed, gcu) == ""  # the file alone: no speed
    verdict = f.roce_tune_preflight(json.dumps(running), "sonic", renamed, gcu, str(out), "lab-leaf1")
    assert "Ethernet8 runs at 800000 Mb/s but the plan's headroom is for 400000 Mb/s" in verdict, verdict
    with pytest.raises(ValueError, match=r"has no switch 'leaf9'"):
        f.roce_tune_preflight(json.dumps(running), "sonic", renamed, gcu, str(out), "leaf9")
    (out / "plan.json").write_text("{}")  # edited after the plan
    with pytest.raises(ValueError, match="plan.json"):
        f.roce_tune_preflight(json.dumps(running), "sonic", renamed, gcu, str(out), "lab-leaf1")


def test_sonic_multi_asic_verdict() -> None:
    """SONiC's probe commands are the ASIC count and the GCU probe, in that order; a count above 1, an
    unreadable one, or a running config printed per namespace refuses the switch (the filter gives apply's
    verdict, :func:`roce_tune.platforms.sonic.probe`), a count of 1 passes."""
    from roce_tune.platforms.sonic import probe

    f = _filters()
    commands = f.roce_tune_probe_commands("sonic")
    assert commands == ["show platform summary", "sudo config checkpoint --help; echo ROCE_TUNE_RC=$?"]
    running = json.dumps({"DEVICE_METADATA": {"localhost": {"hostname": "sonic1"}}})
    desired = json.dumps({"PORT": {"Ethernet0": {"mtu": "9100"}}})
    for count, refused in (("1", False), ("2", True), ("N/A", True)):
        answers = {commands[0]: SUMMARY.format(count=count), commands[1]: GCU_OK}
        probed = [{"item": c, "stdout": answers[c]} for c in commands]
        verdict = f.roce_tune_preflight(running, "sonic", desired, probed)
        assert verdict == (probe(answers.__getitem__) or ""), verdict
        assert bool(verdict) is refused, (count, verdict)
    two = f.roce_tune_preflight(running, "sonic", desired,
                                [{"item": commands[0], "stdout": SUMMARY.format(count=2)}])
    assert "multi-ASIC SONiC switch with 2 ASICs (`show platform summary`: ASIC Count: 2)" in two, two
    assert "no `ASIC Count:` line" in f.roce_tune_preflight(running, "sonic", desired, [])
    per_ns = json.dumps({"localhost": json.loads(running), "asic0": {"PORT": {}}, "asic1": {"PORT": {}},
                         "asic2": {"PORT": {}}})
    probed = [{"item": commands[0], "stdout": SUMMARY.format(count=1)},
              {"item": commands[1], "stdout": GCU_OK}]
    verdict = f.roce_tune_preflight(per_ns, "sonic", desired, probed)
    assert verdict.startswith("a multi-ASIC SONiC switch with 3 ASICs (`show runningconfiguration all` "
                              "prints the namespaces asic0, asic1, asic2)"), verdict
