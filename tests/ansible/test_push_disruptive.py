"""push.yml holds a disruptive change back as ``roce-tune apply`` does (:meth:`ConfigChange.held_back`,
through tasks/disruptive.yml and the ``roce_tune_held_back`` filter), against the loopback Cumulus and SONiC
emulators over Ansible's OpenSSH connection:

* under --check the reasons are shown and the dry run succeeds (apply's --dry-run reports them as
  would-change, fails nothing), nothing is written;
* a push without ``-e roce_tune_allow_disruptive=true`` fails each such switch before any write, with apply's
  message naming the reasons (a first push sets the Cumulus traffic pools and the SONiC buffer pools);
* with it, those switches are pushed in push.yml's one-at-a-time play (serial 1): one batch per switch.

Before, the playbooks pushed such changes in the normal batches, and the ``disruptive`` list the
``roce_tune_change`` filter returned was read by no task.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from tests.ansible.harness import FABRIC_TEMPLATE, ansible_missing, prepare_lab, recap, ssh_keypair
from tests.emulators import EmulatorSpec

from .test_push_nvue_sonic import EXTRA, NAMES, OTHERS, as_declared

pytestmark = [pytest.mark.emulator, pytest.mark.slow,
              pytest.mark.skipif(ansible_missing() is not None, reason=ansible_missing() or "")]

#: the play push.yml pushes disruptive changes in, one switch at a time
ONE_AT_A_TIME = "PLAY [Push switch configs with a disruptive change, one switch at a time]"


def one_at_a_time_batches(out: str) -> list[set[str]]:
    """The switches each batch of push.yml's one-at-a-time play ran on (a batch with none, "skipping: no
    hosts matched", left out), in order."""
    batches = [set(re.findall(r"\[(cul1|sonic1)\]", chunk.split("PLAY [")[0]))
               for chunk in out.split(ONE_AT_A_TIME)[1:]]
    return [b for b in batches if b]


def test_disruptive_change_is_held_back_then_pushed_one_at_a_time(emulator_fleet,  # type: ignore[no-untyped-def]
                                                                  tmp_path: Path) -> None:
    key, pub = ssh_keypair(tmp_path)
    fleet = emulator_fleet([EmulatorSpec(platform, name, username="admin", password="not-used",
                                         authorized_keys=[pub], time_scale=0.1)
                            for name, platform in NAMES.items()])
    devs: dict[str, Any] = {name: fleet[name] for name in NAMES}
    for dev in devs.values():
        as_declared(dev)
    template = FABRIC_TEMPLATE.read_text().replace("  - name: nx1\n", EXTRA + "  - name: nx1\n")
    lab = prepare_lab(tmp_path / "lab", {n: 1 for n in OTHERS} | {n: fleet.port(n) for n in NAMES},
                      template=template)
    lab.env.pop("ROCE_TUNE_PASSWORD", None)
    common = ["--limit", "sonic1:cul1", "-e", f"roce_tune_base_dir={lab.workdir}", "-e",
              f"ansible_ssh_private_key_file={key}"]
    before = {n: d.running_config() for n, d in devs.items()}
    reasons = {"cul1": "a traffic-pool resize restarts the buffer configuration (switchd)",
               "sonic1": "a buffer pool resize moves every port's shared buffer"}

    dry = lab.playbook("push.yml", "--check", "--diff", *common, allow_disruptive=False)
    out = dry.stdout + dry.stderr
    assert dry.returncode == 0, out[-5000:]
    for name, reason in reasons.items():
        assert re.search(rf"{name}: would change; disruptive change needs -e "
                         rf"roce_tune_allow_disruptive=true: [^\n]*{re.escape(reason)}", out), out[-5000:]
    assert one_at_a_time_batches(out) == []
    assert {n: d.running_config() for n, d in devs.items()} == before

    # one batch, every failure tolerated: each switch gets as far as it can
    held = lab.playbook("push.yml", *common, "-e", '{"roce_tune_serial": [2]}', "-e",
                        "roce_tune_max_fail_percentage=100", allow_disruptive=False)
    out = held.stdout + held.stderr
    assert held.returncode != 0, out[-5000:]
    for name, reason in reasons.items():
        assert re.search(rf"fatal: \[{name}\].*{name}: disruptive change needs -e "
                         rf"roce_tune_allow_disruptive=true: [^\n]*{re.escape(reason)}[^\n]*"
                         r"nothing was written", out), out[-5000:]
        assert recap(held.stdout)[name]["changed"] == 0, out[-3000:]
    assert {n: d.running_config() for n, d in devs.items()} == before
    assert devs["cul1"].pending is None and not devs["sonic1"].checkpoints

    # allowed, in one batch of two: the first play writes neither, the second pushes each alone
    pushed = lab.playbook("push.yml", *common, "-e", '{"roce_tune_serial": [2]}', "-e",
                          "roce_tune_allow_disruptive=true", allow_disruptive=False)
    out = pushed.stdout + pushed.stderr
    assert pushed.returncode == 0, out[-5000:]
    staged_play = out.split(ONE_AT_A_TIME)[0]
    assert not re.search(r"^changed: \[(cul1|sonic1)\]", staged_play, re.M), staged_play[-5000:]
    # serial 1: one batch (one PLAY header) per switch
    assert sorted(map(sorted, one_at_a_time_batches(out))) == [["cul1"], ["sonic1"]], out[-5000:]
    assert all(d.running_config() != before[n] for n, d in devs.items())

    # nothing left to change: nothing disruptive, nothing held back
    again = lab.playbook("push.yml", *common, allow_disruptive=False)
    assert again.returncode == 0, again.stdout[-5000:] + again.stderr[-2000:]
    assert all(recap(again.stdout)[n]["changed"] == 0 for n in NAMES), again.stdout[-5000:]
