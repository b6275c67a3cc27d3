"""The dry run shows the QoS binding a push replaces, not only the new one.

A port takes one queuing policy per direction on NX-OS ("The device allows only one queuing policy per
interface", Cisco Nexus 9000 Series NX-OS Quality of Service Configuration Guide, "Attaching and Detaching a
QoS Policy Action") and one ``service-profile`` on EOS, so the new line replaces the old one on the switch.
The dry run used to list only ``+ service-policy type queuing input RT_…100…`` (after a cable-length change)
or ``+ service-profile ROCE_…`` (over an operator's ``service-profile OTHER``): the reviewer could not see
that the old binding goes. The commands stay the same single line (the device replaces it).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from roce_tune.deploy.drivers import compute_change

GOLDEN = Path(__file__).resolve().parents[1] / "golden"


def _replace_first(text: str, old: str, new: str) -> str:
    assert old in text, old
    return text.replace(old, new, 1)


@pytest.mark.parametrize(("platform", "parent", "binding", "theirs"), [
    ("nxos", "interface Ethernet1/1", "service-policy type queuing input ",
     "RT_INGRESS_pg_lossless_400000_20m_old"),
    ("nxos", "interface Ethernet1/1", "service-policy type queuing output ", "THEIR_EGRESS"),
    ("nxos", "interface Ethernet1/1", "service-policy type qos input ", "THEIR_CLASSIFY"),
    ("nxos", "interface Ethernet1/1", "priority-flow-control mode ", "auto"),
    ("nxos", "interface Ethernet1/1", "priority-flow-control watch-dog-interval ", "off"),
    ("nxos", "system qos", "service-policy type network-qos ", "THEIR_NQ"),
    ("eos", "interface Ethernet5/1", "service-profile ", "OTHER"),
])
def test_a_replaced_binding_is_shown_removed(platform: str, parent: str, binding: str, theirs: str) -> None:
    name = "spine1" if platform == "nxos" else "leaf1"
    port = parent.split()[-1]
    desired = (GOLDEN / platform / "mixed-vendor" / f"{name}.cfg").read_text()
    section = desired[desired.index(f"\n{parent}\n") + 1:]
    ours = next(ln.strip() for ln in section.splitlines()[1:] if ln.strip().startswith(binding))
    running = _replace_first(desired, section[:section.index(ours) + len(ours)],
                             section[:section.index(ours)] + binding + theirs)
    change = compute_change(platform, running, desired, {port})
    diff = [ln.strip() for ln in change.diff]
    assert f"- {binding}{theirs}" in diff and f"+ {ours}" in diff, change.diff
    assert [c.strip() for c in change.commands if binding in c] == [ours], change.commands
    assert compute_change(platform, desired, desired, {port}).empty  # re-applied: no change
