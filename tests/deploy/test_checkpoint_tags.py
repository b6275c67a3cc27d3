"""A push's tag (checkpoint / session / commit-comment name) is unique per push, also for two pushes to one
switch within one second.

The tag had one-second resolution (``roce_tune_%Y%m%d_%H%M%S``): two applies started within a second gave
their checkpoints one name. NX-OS refuses the second ("Checkpoint names must be unique. You cannot overwrite
previously saved checkpoints with the same name."), so that push failed; SONiC's ``config checkpoint``
saves over an existing ``/etc/sonic/checkpoints/<name>.cp.json`` without a check (sonic-net/sonic-utilities
``generic_config_updater/generic_updater.py`` ``FileSystemConfigRollbacker.checkpoint``), so the second
push silently replaced the first push's rollback point.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from roce_tune.deploy.apply import load_source
from roce_tune.deploy.drivers import PushOptions
from roce_tune.deploy.runner import ApplyOptions, apply_targets
from roce_tune.platforms.checkpoints import OWN_CHECKPOINT_RE, new_tag, own_checkpoints, to_prune
from tests.emulators import LOOPBACK_TIMING

from .conftest import emulated_inventory

#: NX-OS checkpoint names are at most 32 characters (Cisco Nexus 5500 NX-OS command reference, ``checkpoint``)
NXOS_CHECKPOINT_NAME_MAX = 32


def test_tags_made_in_one_second_differ_and_are_own_names() -> None:
    now = 1_796_112_900.25  # one instant: every tag below is made "at the same time"
    tags = [new_tag(now) for _ in range(200)]
    assert len(set(tags)) == len(tags)
    assert len({PushOptions().tag for _ in range(50)}) == 50
    for tag in tags + [PushOptions().tag]:
        assert OWN_CHECKPOINT_RE.match(tag), tag
        assert len(tag) <= NXOS_CHECKPOINT_NAME_MAX, tag
    assert tags[0].startswith("roce_tune_") and "_250" in tags[0]


def test_sub_second_tags_sort_by_time_and_prune_keeps_the_newest() -> None:
    """Within one second tags order by their milliseconds; the earlier name forms (whole seconds) sort before
    a tag of the same second, and retention still keeps the current one and the newest before it."""
    base = 1_796_112_900.0
    a, b, c = new_tag(base + 0.999), new_tag(base + 1.001), new_tag(base + 1.5)
    legacy = a[:25]  # the same second without the sub-second part
    assert own_checkpoints([c, b, a, legacy, "operator"]) == [legacy, a, b, c]
    assert to_prune([c, b, a, legacy, "operator"], c, 2) == [legacy, a]


@pytest.mark.emulator
def test_two_pushes_in_one_second_keep_both_sonic_checkpoints(tmp_path: Path) -> None:
    """Two applies whose options are made in the same second (the second run started right after the
    first): each takes its own checkpoint, and the first one still holds the CONFIG_DB from before the first
    push (it is not saved over by the second)."""
    fleet, inv, known = emulated_inventory("lab-2node.yaml", tmp_path)
    try:
        dev = fleet["lab-leaf1"]
        factory = json.loads(json.dumps(dev.config_db))
        (target,) = [t for t in load_source(inv)[0] if t.name == "lab-leaf1"]
        first, second = (ApplyOptions(known_hosts=str(known), log_dir=tmp_path / "logs",
                                      timing=LOOPBACK_TIMING, allow_disruptive=True,
                                      push=PushOptions(confirm_s=60, read_timeout_s=20)) for _ in range(2))
        assert first.push.tag != second.push.tag
        (res1,) = apply_targets([target], first)
        assert res1.state == "pushed", res1.error
        drifted = json.loads(json.dumps(dev.config_db))
        drifted["PORT"]["Ethernet0"]["mtu"] = "1500"  # an operator's change, so the second apply pushes
        fleet.call(setattr, dev, "config_db", drifted)
        (res2,) = apply_targets([target], second)
        assert res2.state == "pushed", res2.error
        assert sorted(dev.checkpoints) == sorted([first.push.tag, second.push.tag])
        saved = json.loads((dev.cp_dir / f"{first.push.tag}.cp.json").read_text())
        assert saved["PORT"]["Ethernet0"]["mtu"] == factory["PORT"]["Ethernet0"]["mtu"]
    finally:
        fleet.stop()
