"""push.yml refuses a switch before any write, under --check too, where ``roce-tune apply`` does
(:meth:`roce_tune.platforms.contract.PushMethod.refusal`, through tasks/refuse.yml and the filters
``roce_tune_probe_commands``, ``roce_tune_preflight``), with apply's message:

* Cumulus: a colleague's ``nv set`` pending in NVUE's revision (``nv config apply`` would apply it with
  roce-tune's lines) and a colleague's ``nv config apply --confirm`` still waiting for its confirm
  (roce-tune's ``--confirm-yes`` would make it permanent);
* Junos: a colleague's ``commit confirmed`` still waiting for its confirming commit (roce-tune's ``commit
  check`` and commits confirm it);
* SONiC: a port running at another speed than the plan's, judged from the plan's port speeds (plan.json)
  even where the headroom profile's name carries none; a multi-ASIC switch (its running config printed per
  namespace, or ``show platform summary``'s ``ASIC Count`` above 1), whose ports' CONFIG_DB the push would
  not reach.

Before, only push_sonic.yml ran the refusal (from the rendered file alone), so the playbooks applied,
confirmed or skipped what apply refuses. Each run here is against a loopback emulator over Ansible's own
connection, with every write command rejected and recorded by the emulator: a refusal sends none.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from roce_tune.plandir import read_tree, write_tree
from roce_tune.platforms.sonic import HEADROOM_SPEED_NAME_RE
from tests.ansible.harness import (
    FABRIC_TEMPLATE,
    Lab,
    ansible_missing,
    limit_args,
    prepare_lab,
    refused_before_any_write,
    ssh_keypair,
)
from tests.deploy.conftest import colleague_session
from tests.emulators import EmulatorSpec

from .test_push_nvue_sonic import EXTRA, NAMES, OTHERS, as_declared

pytestmark = [pytest.mark.emulator, pytest.mark.slow,
              pytest.mark.skipif(ansible_missing() is not None, reason=ansible_missing() or "")]

#: a colleague's change on the Cumulus leaf
STAGED = "nv set interface swp20 link mtu 1500"
#: the Cumulus commands that change the switch (the probes' `nv config apply --confirm-status` only reads)
NVUE_WRITES = r"^(nv set|nv unset|nv config apply -y|nv config apply --confirm-(yes|no)|nv config detach)"


def _start(emulator_fleet, tmp_path: Path, name: str) -> tuple[Any, Any, Path]:  # type: ignore[no-untyped-def]
    """The emulator of switch ``name`` (key login; SONiC with the CONFIG_DB its inventory entry declares):
    (fleet, emulator, private key)."""
    key, pub = ssh_keypair(tmp_path)
    platform = NAMES.get(name, "junos")
    fleet = emulator_fleet([EmulatorSpec(platform, name, username="admin", password="not-used",
                                         authorized_keys=[pub], time_scale=0.1)])
    as_declared(fleet[name])
    return fleet, fleet[name], key


def _lab_for(fleet, tmp_path: Path, name: str, hosts: str = "") -> Lab:  # type: ignore[no-untyped-def]
    """The shared test fabric with the SONiC and Cumulus leaves (and ``hosts``, inventory YAML), planned,
    with switch ``name`` at its emulator."""
    template = FABRIC_TEMPLATE.read_text().replace("  - name: nx1\n", EXTRA + "  - name: nx1\n") + hosts
    lab = prepare_lab(tmp_path / "lab", {n: 1 for n in (*OTHERS, *NAMES)} | {name: fleet.port(name)},
                      template=template)
    lab.env.pop("ROCE_TUNE_PASSWORD", None)
    return lab


def _cumulus(emulator_fleet, tmp_path: Path, colleague: list[str]) -> tuple[Any, Lab, list[str]]:  # type: ignore[no-untyped-def]
    """cul1 after a colleague's ``colleague`` commands, then refusing (and recording) every write: (emulator,
    lab, push.yml arguments)."""
    fleet, dev, key = _start(emulator_fleet, tmp_path, "cul1")
    colleague_session(fleet, "cul1", colleague)
    dev.set_fault(reject_pattern=NVUE_WRITES)
    lab = _lab_for(fleet, tmp_path, "cul1")
    return dev, lab, limit_args(lab, "cul1", key)


def test_cumulus_pending_nv_set_is_refused_and_kept(emulator_fleet, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    dev, lab, args = _cumulus(emulator_fleet, tmp_path, [STAGED])
    applied = list(dev.applied)
    for out in refused_before_any_write(dev, lab, "cul1", *args):
        assert re.search(r"fatal: \[cul1\].*cul1: preflight: NVUE's pending revision holds 1 pending line "
                         r"nobody applied \(`nv config diff -o commands` lists them\).*nothing was sent",
                         out), out[-5000:]
        assert "swp20" not in out  # counted, never quoted
    assert dev.applied == applied
    assert dev.pending is not None and "interface swp20 link mtu 1500" in dev.pending  # their work stays


def test_cumulus_apply_waiting_for_its_confirm_is_refused_and_left_to_revert(emulator_fleet,  # type: ignore[no-untyped-def]
                                                                          tmp_path: Path) -> None:
    dev, lab, args = _cumulus(emulator_fleet, tmp_path, [STAGED, "nv config apply -y --confirm 3600s"])
    assert dev.confirm_pending and "interface swp20 link mtu 1500" in dev.applied
    for out in refused_before_any_write(dev, lab, "cul1", *args):
        assert re.search(r"fatal: \[cul1\].*cul1: preflight: an `nv config apply --confirm` is waiting for "
                         r"its confirm \(`nv config apply --confirm-status`: .*nothing was sent", out), \
            out[-5000:]
    assert dev.confirm_pending  # their trial still reverts by itself unless they confirm it


def test_junos_pending_commit_confirmed_is_refused_and_left_to_revert(emulator_fleet,  # type: ignore[no-untyped-def]
                                                                    tmp_path: Path) -> None:
    fleet, qfx, key = _start(emulator_fleet, tmp_path, "qfx1")
    theirs = "set interfaces et-0/0/9 description trial-by-ops"
    colleague_session(fleet, "qfx1", [theirs, "commit confirmed 600"], config_mode=True)
    assert qfx.confirm_pending
    qfx.set_fault(reject_pattern=r"^(configure|load|commit|rollback)")
    lab = _lab_for(fleet, tmp_path, "qfx1")
    history = len(qfx.history)
    for out in refused_before_any_write(qfx, lab, "qfx1", *limit_args(lab, "qfx1", key)):
        assert re.search(r"fatal: \[qfx1\].*qfx1: preflight: a `commit confirmed` is waiting for its "
                         r"confirming commit \(`show system commit`: 0 .*nothing was sent; let it roll back "
                         r"or have admin confirm it", out), out[-5000:]
    assert qfx.confirm_pending and len(qfx.history) == history  # theirs still reverts by itself


def test_sonic_port_speed_is_judged_from_the_plan(emulator_fleet, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """sonic1's lossless Ethernet0 is planned at 400G and runs at 100G. The plan directory's headroom
    profile carries no speed in its name (renamed, the plan directory re-written through roce-tune's own
    writer so that SHA256SUMS still holds): the file alone cannot tell the planned speed, plan.json can. apply
    refuses the switch; the playbook took the name's word (none) and pushed."""
    fleet, dev, key = _start(emulator_fleet, tmp_path, "sonic1")
    dev.config_db["PORT"]["Ethernet0"]["speed"] = "100000"
    dev.set_fault(reject_pattern="sonic-cfggen|sonic-db-cli|config save|config checkpoint roce|cat >")
    lab = _lab_for(fleet, tmp_path, "sonic1", hosts=(
        "  - name: gpu03\n    mgmt: {host: 127.0.0.1, port: 1}\n    nics:\n      - {model: connectx-7, "
        "netdev: ens1f0np0, rdma_device: mlx5_0, speed: 400G, switch_port: \"sonic1:Ethernet0\", "
        "cable_length: 2m}\n"))
    files = read_tree(lab.out_dir)
    rel = "switches/sonic1.json"
    db = json.loads(files[rel])
    names = sorted({n for n, row in db["BUFFER_PROFILE"].items() if "xoff" in row})
    assert names and all(HEADROOM_SPEED_NAME_RE.match(n) for n in names), names
    for i, name in enumerate(names):
        files[rel] = files[rel].replace(f'"{name}"', f'"ROCE_HEADROOM_{i}"')
    assert not [n for n in json.loads(files[rel])["BUFFER_PROFILE"] if HEADROOM_SPEED_NAME_RE.match(n)]
    write_tree(files, lab.out_dir)
    for out in refused_before_any_write(dev, lab, "sonic1", *limit_args(lab, "sonic1", key)):
        assert re.search(r"fatal: \[sonic1\].*sonic1: preflight: Ethernet0 runs at 100000 Mb/s but the "
                         r"plan's headroom is for 400000 Mb/s", out), out[-5000:]
    assert not dev.checkpoints and dev.db_writes_seen == 0


@pytest.mark.parametrize("shape", ["per-namespace", "host-only"])
def test_sonic_multi_asic_is_refused(emulator_fleet, tmp_path: Path, shape: str) -> None:  # type: ignore[no-untyped-def]
    """sonic1 is a 2-ASIC box: its running config printed per namespace (the preflight sees it) or only the
    host's (the ``show platform summary`` probe's ``ASIC Count: 2``). The playbook refuses it with apply's
    message and writes nothing; before, it pushed into the host's CONFIG_DB."""
    from tests.deploy.test_sonic_multi_asic import per_namespace

    fleet, dev, key = _start(emulator_fleet, tmp_path, "sonic1")
    if shape == "per-namespace":
        dev.config_db = per_namespace(dev.config_db)
        seen = "`show runningconfiguration all` prints the namespaces asic0, asic1"
    else:
        seen = "`show platform summary`: ASIC Count: 2"
    dev.asic_count = 2
    dev.set_fault(reject_pattern="sonic-cfggen -j|sonic-db-cli|config save|config checkpoint roce|cat >")
    lab = _lab_for(fleet, tmp_path, "sonic1")
    for out in refused_before_any_write(dev, lab, "sonic1", *limit_args(lab, "sonic1", key)):
        assert re.search(r"fatal: \[sonic1\].*sonic1: preflight: a multi-ASIC SONiC switch with 2 ASICs \("
                         + re.escape(seen) + r"\).*nothing was changed", out), out[-5000:]
    assert not dev.checkpoints and dev.db_writes_seen == 0
