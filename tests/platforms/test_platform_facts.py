"""Platform facts the generic engines read through the registry (issue 11 item 1): counter readers,
Ansible connections and the inventory facts (port-name hints, hardware vendors)."""

from __future__ import annotations

import re

import pytest

from roce_tune.inventory.skeleton import guess_platform
from roce_tune.platforms import HOST_PLATFORM, SWITCH_PLATFORMS, platform, port_name_hints
from roce_tune.platforms.counters import CounterReading
from tests.render.golden import pipeline_plan

#: front-panel names each platform's CLI uses (the shapes of the shipped inventories and the vendors' docs)
PORT_NAMES = {"sonic": ["Ethernet0", "Ethernet128"], "cumulus": ["swp1", "swp32s3"],
              "eos": ["Ethernet1/1/1", "Ethernet27/3/1"], "nxos": ["Ethernet1/1", "Ethernet1/54"],
              "junos": ["et-0/0/0", "xe-0/0/12:1", "ae-1/0/0"]}


@pytest.mark.parametrize("name", SWITCH_PLATFORMS)
def test_port_name_hints_are_disjoint_and_tell_each_platform(name: str) -> None:
    hints = port_name_hints()
    for port in PORT_NAMES[name]:
        assert [p for pat, p in hints if pat.match(port)] == [name], port
    assert guess_platform(PORT_NAMES[name], default="none") == name


def test_names_of_two_platforms_or_of_none_fall_back_to_the_default() -> None:
    assert guess_platform(["swp1", "Ethernet0"], default="d") == "d"
    assert guess_platform(["mgmt0"], default="d") == "d"


@pytest.mark.parametrize("name", SWITCH_PLATFORMS)
def test_every_switch_platform_reads_counters_and_says_how_ansible_reaches_it(name: str) -> None:
    impl = platform(name)
    assert impl.counters is not None and impl.ansible is not None
    assert impl.push.desired_file and "ansible_connection" in impl.ansible.group_vars
    assert all(re.fullmatch(r"roce_tune_\w+", var) and "{name}" in f for var, f in impl.ansible.extra_files)


def test_the_host_platform_has_ansible_facts_and_no_switch_facts() -> None:
    impl = platform(HOST_PLATFORM)
    assert impl.ansible is not None and impl.ansible.group_vars["ansible_become"] is True
    assert impl.counters is None and impl.inventory.port_name_hint is None


@pytest.mark.parametrize("name", SWITCH_PLATFORMS)
def test_counter_commands_cover_the_lossless_ports_and_empty_outputs_parse_to_nothing(name: str) -> None:
    plan = pipeline_plan("mixed-vendor")
    switches = [s for s in plan.switches if s.platform == name]
    if not switches:
        pytest.skip(f"mixed-vendor.yaml has no {name} switch")
    sw = switches[0]
    reader = platform(name).counters
    assert reader is not None
    cmds = reader.commands(sw)
    assert cmds and len(cmds) == len(set(cmds))
    if name != "sonic":  # SONiC's four commands cover every port; the others read per lossless port
        for p in (p for p in sw.ports if p.lossless):
            spellings = {p.name, p.name.lower(), p.name.removeprefix("Ethernet")}
            assert any(spellings & set(c.split()) for c in cmds), p.name
    got = reader.parse(sw, {})
    assert isinstance(got, CounterReading) and got.ports == {}
