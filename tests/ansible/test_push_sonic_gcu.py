"""push.yml on a SONiC switch whose GCU refuses roce-tune's change (the emulator's model of
sonic-utilities ``generic_config_updater`` field-operation validators,
:func:`tests.emulators.sonic.gcu_field_operation_errors`, switched on in every test here): the playbook
writes CONFIG_DB as ``roce-tune apply`` does (``sonic-cfggen --write-to-db``, ``sonic-db-cli DEL/HDEL``),
restores its own snapshot when a write fails, and under --check sends nothing. Before, every push ran
``config apply-patch``, which such a switch refuses."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from tests.ansible.harness import ansible_missing, limit_args, recap, refused_before_any_write
from tests.emulators.sonic import gcu_field_operation_errors

from .test_push_nvue_sonic import _lab

pytestmark = [pytest.mark.emulator,
              pytest.mark.skipif(ansible_missing() is not None, reason=ansible_missing() or "")]


#: commands the playbook must never send: GCU's (refused on this switch)
GCU_COMMANDS = r"apply-patch|config rollback|config replace"


def _gcu_lab(emulator_fleet, tmp_path: Path, reject: str = GCU_COMMANDS,  # type: ignore[no-untyped-def]
             ) -> tuple[Any, Any, list[str]]:
    """The SONiC emulator with GCU's validators on (Broadcom TH3, 202311) that also rejects (and records in
    its events) every command matching ``reject``, its lab and the push arguments."""
    dev, lab, key = _lab(emulator_fleet, tmp_path, "sonic1", reject)
    dev.validate = lambda target: gcu_field_operation_errors(dev.config_db, target, "th3", "20231100")
    return dev, lab, ["--limit", "sonic1", "-e", f"roce_tune_base_dir={lab.workdir}", "-e",
                      f"ansible_ssh_private_key_file={key}"]


def _desired(lab: Any) -> dict[str, Any]:
    """The rendered CONFIG_DB of sonic1 (the plan's file)."""
    desired: dict[str, Any] = json.loads(next(lab.out_dir.rglob("sonic1.json")).read_text())
    return desired


@pytest.mark.slow
def test_push_succeeds_although_gcu_refuses_the_change(emulator_fleet, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    dev, lab, args = _gcu_lab(emulator_fleet, tmp_path)
    desired = _desired(lab)
    merged = json.loads(dev.running_config())
    for table, rows in desired.items():
        for key, row in rows.items():
            merged.setdefault(table, {}).setdefault(key, {}).update(row)
    assert gcu_field_operation_errors(dev.config_db, merged, "th3", "20231100"), "GCU refuses this change"
    res = lab.playbook("push.yml", *args)
    out = res.stdout + res.stderr
    assert res.returncode == 0, out[-5000:]
    assert [f"{t}|{k}.{f}" for t, rows in desired.items() for k, row in rows.items() for f, v in row.items()
            if dev.config_db.get(t, {}).get(k, {}).get(f) != v] == []
    assert not [e for e in dev.events if e.startswith("fault: rejected")], dev.events
    assert [n for n in dev.checkpoints if n.startswith("roce_tune_")], list(dev.checkpoints)
    assert re.search(r"changed: \[sonic1\] => \(item=sudo sonic-cfggen -j /tmp/roce_tune_\d{8}_\d{6}_"
                     r"\d{3}[0-9a-f]{2}-[0-9a-f]{12}\.write\d+\.json --write-to-db\)", out), \
        out[-5000:]
    assert json.loads((dev.sandbox / "etc/sonic/config_db.json").read_text()) == dev.config_db
    assert not list((dev.sandbox / "tmp").glob("*.json")), "the uploaded files are removed"
    again = lab.playbook("push.yml", *args)
    assert again.returncode == 0 and recap(again.stdout)["sonic1"]["changed"] == 0, again.stdout[-5000:]


@pytest.mark.slow
def test_a_write_that_fails_mid_push_rolls_back_to_the_exact_config_db(emulator_fleet,  # type: ignore[no-untyped-def]
                                                                       tmp_path: Path) -> None:
    """The first CONFIG_DB write lands, the second fails as a lost redis connection does: the playbook stops
    there, writes roce-tune's snapshot back, reads it back and says so; the whole CONFIG_DB is as before."""
    dev, lab, args = _gcu_lab(emulator_fleet, tmp_path)
    before = dev.running_config()
    dev.set_fault(fail_db_write=2)
    res = lab.playbook("push.yml", *args)
    out = res.stdout + res.stderr
    assert res.returncode != 0, out[-5000:]
    assert "fault: CONFIG_DB write 2 failed" in dev.events, dev.events
    writes = re.findall(r"^(changed|failed): \[sonic1\] (?:=> )?\(item=sudo sonic-cfggen -j "
                        r"\S+\.write\d+\.json",
                        out, re.MULTILINE)
    assert writes == ["changed", "failed"], "no write after the one that failed"
    assert re.search(r"fatal: \[sonic1\].*push failed and was rolled back: the \d+ CONFIG_DB key\(s\) the "
                     r"push touched were restored from roce-tune's snapshot and read back", out), out[-5000:]
    assert "redis.exceptions.ConnectionError" in out, out[-5000:]
    assert dev.running_config() == before
    assert not [e for e in dev.events if e.startswith("fault: rejected")], dev.events
    assert not list((dev.sandbox / "tmp").glob("*.json")), "the uploaded files are removed"


@pytest.mark.slow
def test_check_shows_the_diff_and_sends_nothing(emulator_fleet, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    # every write is refused and recorded; the read-only probe `sudo config checkpoint --help` runs
    dev, lab, args = _gcu_lab(emulator_fleet, tmp_path, reject=GCU_COMMANDS + "|sonic-cfggen|sonic-db-cli|"
                              "config checkpoint roce|config save|cat >")
    before = dev.running_config()
    res = lab.playbook("push.yml", "--check", "--diff", *args)
    out = res.stdout + res.stderr
    assert res.returncode == 0, out[-5000:]
    assert recap(res.stdout)["sonic1"]["changed"] >= 1, out[-3000:]
    assert re.search(r"\"(add|replace) /(BUFFER_PROFILE|WRED_PROFILE)", out), out[-5000:]
    assert dev.running_config() == before
    assert not dev.checkpoints, list(dev.checkpoints)
    assert not [e for e in dev.events if e.startswith("fault: rejected")], dev.events
    assert dev.db_writes_seen == 0 and not list((dev.sandbox / "tmp").glob("*"))


@pytest.mark.slow
def test_an_image_without_config_checkpoint_is_refused_before_any_write(emulator_fleet,  # type: ignore[no-untyped-def]
                                                                        tmp_path: Path) -> None:
    """A 202012 image has no Generic Config Updater: no ``config checkpoint``, the rollback point every push
    takes first. The playbook probes for it as ``roce-tune apply`` does (``sudo config checkpoint --help``,
    read-only, under --check too) and fails the switch naming it and the command, before anything is
    written. Before, --check said it would change and a push stopped at its checkpoint task on click's
    ``No such command``."""
    dev, lab, key = _lab(emulator_fleet, tmp_path, "sonic1", reject=_WRITES)
    dev.release, dev.has_gcu = "202012.83", False
    for out in _refused_before_any_write(dev, lab, key):
        assert re.search(r"ok: \[sonic1\] => \(item=sudo config checkpoint --help; echo ROCE_TUNE_RC=\$\?\)",
                         out), out[-5000:]
        fatal = re.search(r"fatal: \[sonic1\].*", out)
        assert fatal is not None, out[-5000:]
        assert "sonic1: preflight: `sudo config checkpoint --help` failed (exit status 2" in fatal.group(), \
            fatal.group()
        assert "config rollback" in fatal.group() and "nothing was changed" in fatal.group(), fatal.group()


@pytest.mark.slow
def test_a_pool_mode_the_plan_contradicts_is_refused_before_any_write(emulator_fleet,  # type: ignore[no-untyped-def]
                                                                      tmp_path: Path) -> None:
    """roce-tune apply's preflight in the playbook: the switch's egress lossless pool is dynamic, the plan's
    static, and bufferorch sets a pool's mode only when it creates the pool. The run fails the switch naming
    it, the pool and the fix, under --check too, and writes nothing. Before, --check showed a diff and a push
    wrote a mode the switch would not take until a reload."""
    dev, lab, key = _lab(emulator_fleet, tmp_path, "sonic1", reject=_WRITES)
    dev.config_db["BUFFER_POOL"]["egress_lossless_pool"]["mode"] = "dynamic"
    for out in _refused_before_any_write(dev, lab, key):
        assert re.search(r"fatal: \[sonic1\].*sonic1: preflight: BUFFER_POOL\|egress_lossless_pool mode is "
                         r"dynamic on the switch, static in the plan; .*config reload", out), out[-5000:]


#: the commands that write to a switch: rejected and recorded by the emulator (a refusal must send none)
_WRITES = "sonic-cfggen|sonic-db-cli|config save|config checkpoint roce|config apply-patch|cat >"


def _refused_before_any_write(dev, lab, key) -> list[str]:  # type: ignore[no-untyped-def]
    """:func:`~tests.ansible.harness.refused_before_any_write` on sonic1; also no checkpoint was taken, no
    CONFIG_DB write made and no file uploaded. The outputs (stdout + stderr) of the two runs."""
    outs = refused_before_any_write(dev, lab, "sonic1", *limit_args(lab, "sonic1", key))
    assert not dev.checkpoints and dev.db_writes_seen == 0 and not list((dev.sandbox / "tmp").glob("*"))
    return outs
