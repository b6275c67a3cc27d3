"""The ``roce_tune_held_back`` filter (tasks/disruptive.yml) gives ``roce-tune apply``'s hold-back verdict
(:meth:`roce_tune.deploy.diff.ConfigChange.held_back`) on the change the ``roce_tune_change`` filter computes,
for every platform. EOS and NX-OS push with modules that diff on the device, yet their changes can be
disruptive (PFC turned on a port, a network-qos MTU, a pause buffer-size): apply tells so from the running
config it reads, and so must the playbooks."""

from __future__ import annotations

from types import ModuleType

import pytest

from roce_tune.deploy.diff import ConfigChange
from roce_tune.platforms.contract import PFC_ON
from tests.ansible.harness import load_filters

ALLOW = "-e roce_tune_allow_disruptive=true"


def _filters() -> ModuleType:
    return load_filters("roce_tune_filters_disruptive")


EOS_RUNNING = "hostname eos1\n!\ninterface Ethernet1/1\n   description gpu01\n   mtu 9214\n!\nend\n"
EOS_DESIRED = ("interface Ethernet1/1\n   priority-flow-control on\n"
               "   priority-flow-control priority 3 no-drop\n")
NXOS_RUNNING = "hostname nx1\n!\ninterface Ethernet1/1\n  description gpu01\n"
NXOS_DESIRED = ("policy-map type network-qos RT_NQ\n  class type network-qos c-8q-nq3\n    pause pfc-cos 3\n"
                "    mtu 9216\n")


@pytest.mark.parametrize(("platform", "running", "desired", "reason"), [
    ("eos", EOS_RUNNING, EOS_DESIRED, PFC_ON),
    ("nxos", NXOS_RUNNING, NXOS_DESIRED,
     "a network-qos MTU change re-carves the buffers (all ports pause briefly)"),
])
def test_eos_and_nxos_changes_can_be_disruptive(platform: str, running: str, desired: str,
                                                reason: str) -> None:
    f = _filters()
    change = f.roce_tune_change(running, platform, desired)
    assert reason in change["disruptive"], change
    held = f.roce_tune_held_back(change, False)
    assert held.startswith(f"disruptive change needs {ALLOW}: ") and reason in held
    for allowed in (True, "true", "yes", "1", "True"):
        assert f.roce_tune_held_back(change, allowed) == ""
    # once applied, nothing is left to hold back
    assert f.roce_tune_held_back(f.roce_tune_change(running + desired, platform, desired), False) == ""


def test_a_hitless_change_is_never_held_back() -> None:
    f = _filters()
    change = f.roce_tune_change(EOS_RUNNING, "eos", "interface Ethernet1/1\n   description gpu01 rail 0\n")
    assert change["commands"] and change["disruptive"] == []
    assert f.roce_tune_held_back(change, "false") == ""


@pytest.mark.parametrize("typo", ["ture", "maybe", "allow"])
def test_a_typo_in_the_variable_never_allows(typo: str) -> None:
    f = _filters()
    change = f.roce_tune_change(EOS_RUNNING, "eos", EOS_DESIRED)
    with pytest.raises(ValueError, match=rf"roce_tune_allow_disruptive='{typo}': give true or false"):
        f.roce_tune_held_back(change, typo)


def test_apply_message_is_unchanged() -> None:
    """The same function words apply's hold-back (runner._update_switch): its flag, the reasons joined."""
    assert ConfigChange(commands=["x"], disruptive=["a", "b"]).held_back(False) == \
        "disruptive change needs --allow-disruptive: a; b"
    assert ConfigChange(commands=["x"], disruptive=["a"]).held_back(True) is None
