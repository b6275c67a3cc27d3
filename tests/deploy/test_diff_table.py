"""Table-driven diff tests in hier_config's style: running config -> desired (rendered) config ->
the remediation roce-tune would push, per diff kind. Each row is a situation an engineer meets on a
live switch; the expected commands are what a careful engineer would type."""

from __future__ import annotations

import pytest

from roce_tune.deploy.diff import DIFF_RULES, hier_diff, json_diff
from roce_tune.deploy.drivers import compute_change

# (id, platform, running, desired, expected commands, expected disruptive reasons (substring) or ())
HIER_CASES = [
    ("eos-nothing-to-do", "eos",
     "interface Ethernet1\n   mtu 9214\n",
     "interface Ethernet1\n   mtu 9214\n",
     [], ()),
    ("eos-adds-pfc-and-flags-it", "eos",
     "interface Ethernet1\n   mtu 9214\n",
     "interface Ethernet1\n   priority-flow-control on\n   priority-flow-control priority 3 no-drop\n",
     ["interface Ethernet1", "   priority-flow-control on", "   priority-flow-control priority 3 no-drop",
      "   exit"],
     ("enabling PFC",)),
    ("eos-keeps-unrelated-lines", "eos",
     "hostname leaf1\ninterface Ethernet1\n   description uplink\n   mtu 9214\n",
     "interface Ethernet1\n   mtu 9214\n",
     [], ()),
    ("eos-owned-section-is-authoritative", "eos",
     "qos profile ROCE_LOSSLESS\n   tx-queue 3\n      random-detect ecn minimum-threshold 100 kbytes "
     "maximum-threshold 1000 kbytes max-mark-probability 5\n   tx-queue 5\n      bandwidth percent 10\n",
     "qos profile ROCE_LOSSLESS\n   tx-queue 3\n      random-detect ecn minimum-threshold 100 kbytes "
     "maximum-threshold 1000 kbytes max-mark-probability 5\n",
     ["qos profile ROCE_LOSSLESS", "   no tx-queue 5", "   exit"], ()),
    ("eos-value-change-replaces-line", "eos",
     "interface Ethernet1\n   mtu 1500\n",
     "interface Ethernet1\n   mtu 9214\n",
     ["interface Ethernet1", "   mtu 9214", "   exit"], ()),
    ("nxos-new-network-qos-mtu-is-disruptive", "nxos",
     "policy-map type network-qos qos_network\n  class type network-qos c-8q-nq3\n    mtu 1500\n",
     "policy-map type network-qos qos_network\n  class type network-qos c-8q-nq3\n    mtu 9216\n",
     ["policy-map type network-qos qos_network", "  class type network-qos c-8q-nq3", "    mtu 9216",
      "    exit",
      "  exit"],
     ("network-qos MTU",)),
    ("nxos-queuing-bandwidth-change-sets-new-value", "nxos",
     "policy-map type queuing QOS_EGRESS_PORT\n  class type queuing c-out-8q-q3\n    bandwidth remaining "
     "percent 40\n",
     "policy-map type queuing QOS_EGRESS_PORT\n  class type queuing c-out-8q-q3\n    bandwidth remaining "
     "percent 50\n",
     ["policy-map type queuing QOS_EGRESS_PORT", "  class type queuing c-out-8q-q3",
      "    bandwidth remaining percent 50", "    exit", "  exit"], ()),
    ("eos-new-ecn-thresholds-replace-in-place", "eos",
     "qos profile ROCE_LOSSLESS\n   tx-queue 3\n      random-detect ecn minimum-threshold 100 kbytes "
     "maximum-threshold 1000 kbytes max-mark-probability 5\n",
     "qos profile ROCE_LOSSLESS\n   tx-queue 3\n      random-detect ecn minimum-threshold 150 kbytes "
     "maximum-threshold 1500 kbytes max-mark-probability 20\n",
     ["qos profile ROCE_LOSSLESS", "   tx-queue 3",
      "      random-detect ecn minimum-threshold 150 kbytes maximum-threshold"
      " 1500 kbytes max-mark-probability 20", "      exit", "   exit"], ()),
]


@pytest.mark.parametrize("case", HIER_CASES, ids=[c[0] for c in HIER_CASES])
def test_hier_remediation(case: tuple) -> None:  # type: ignore[type-arg]
    _, platform, running, desired, want, reasons = case
    change = hier_diff(DIFF_RULES[platform], running, desired)
    assert [c for c in change.commands if c.strip()] == [w for w in want if w.strip()] or (
        not want and change.empty), change.commands
    for r in reasons:
        assert any(r in d for d in change.disruptive), change.disruptive
    if not reasons:
        assert change.disruptive == []


SET_CASES = [
    ("junos-nothing-to-do", "junos",
     "set class-of-service forwarding-classes class ROCE queue-num 3\n",
     "set class-of-service forwarding-classes class ROCE queue-num 3\n",
     [], ()),
    ("junos-stale-owned-line-deleted", "junos",
     "set class-of-service forwarding-classes class ROCE queue-num 3\nset class-of-service schedulers OLD "
     "priority low\n",
     "set class-of-service forwarding-classes class ROCE queue-num 3\n",
     ["delete class-of-service schedulers OLD priority low"], ()),
    ("junos-unowned-line-kept", "junos",
     "set system host-name leaf1\nset interfaces et-0/0/0 mtu 1514\n",
     "set interfaces et-0/0/1 mtu 9216\n",
     ["set interfaces et-0/0/1 mtu 9216"], ()),
    ("junos-same-path-new-value-replaces", "junos",
     "set interfaces et-0/0/0 mtu 1514\n",
     "set interfaces et-0/0/0 mtu 9216\n",
     ["delete interfaces et-0/0/0 mtu 1514", "set interfaces et-0/0/0 mtu 9216"], ()),
    ("junos-cnp-on-interface-is-disruptive", "junos",
     "",
     "set class-of-service interfaces et-0/0/0 congestion-notification-profile ROCE_CNP\n",
     ["set class-of-service interfaces et-0/0/0 congestion-notification-profile ROCE_CNP"],
     ("blocks the whole port",)),
    # Juniper congestion-notification-profile statement page: "Configuring or changing PFC on an interface
    # blocks the entire port until the PFC change is completed"; editing the input stanza (code points, MRU,
    # cable length) of a CNP the ports are bound to changes their PFC without touching the binding line
    ("junos-cnp-input-change-is-disruptive", "junos",
     "set class-of-service congestion-notification-profile RT_PFC_3M input dscp code-point 011010 pfc\n"
     "set class-of-service interfaces et-0/0/0 congestion-notification-profile RT_PFC_3M\n",
     "set class-of-service congestion-notification-profile RT_PFC_3M input dscp code-point 011010 pfc "
     "mru 9216\n"
     "set class-of-service interfaces et-0/0/0 congestion-notification-profile RT_PFC_3M\n",
     ["delete class-of-service congestion-notification-profile RT_PFC_3M input dscp code-point 011010 pfc",
      "set class-of-service congestion-notification-profile RT_PFC_3M input dscp code-point 011010 pfc "
      "mru 9216"],
     ("every port bound to it",)),
    # `show configuration | display set` prints a leaf-list one value per line (Apstra DCQCN configlets
    # taken from it read `interpolate fill-level 10` / `interpolate fill-level 50`); roce-tune writes
    # `[ a b ]`: the same configuration, nothing to push
    ("junos-display-set-leaf-lists-equal-bracket-lists", "junos",
     "set class-of-service drop-profiles RT_ECN_E interpolate fill-level 14\n"
     "set class-of-service drop-profiles RT_ECN_E interpolate fill-level 28\n"
     "set class-of-service drop-profiles RT_ECN_E interpolate drop-probability 0\n"
     "set class-of-service drop-profiles RT_ECN_E interpolate drop-probability 2\n"
     "set class-of-service classifiers dscp RT_DSCP forwarding-class RT_Q6 loss-priority low "
     "code-points 110000\n"
     "set class-of-service classifiers dscp RT_DSCP forwarding-class RT_Q6 loss-priority low "
     "code-points 110001\n",
     "set class-of-service drop-profiles RT_ECN_E interpolate fill-level [ 14 28 ]\n"
     "set class-of-service drop-profiles RT_ECN_E interpolate drop-probability [ 0 2 ]\n"
     "set class-of-service classifiers dscp RT_DSCP forwarding-class RT_Q6 loss-priority low code-points "
     "[ 110000 110001 ]\n",
     [], ()),
    ("junos-leaf-list-value-change-touches-that-value", "junos",
     "set class-of-service drop-profiles RT_ECN_E interpolate fill-level 14\n"
     "set class-of-service drop-profiles RT_ECN_E interpolate fill-level 28\n",
     "set class-of-service drop-profiles RT_ECN_E interpolate fill-level [ 15 28 ]\n",
     ["delete class-of-service drop-profiles RT_ECN_E interpolate fill-level 14",
      "set class-of-service drop-profiles RT_ECN_E interpolate fill-level 15"], ()),
    # Junos OS Evolved 24.4R1 types fill levels decimal64 (Juniper's YANG); whatever form the device
    # echoes one in (trailing zeros, `.0`), it is the same value as the rendered `7.5` / `75`
    ("junos-decimal-fill-levels-compared-by-value", "junos",
     "set class-of-service drop-profiles RT_ECN_E interpolate fill-level 7.500000000\n"
     "set class-of-service drop-profiles RT_ECN_E interpolate fill-level 75.0\n",
     "set class-of-service drop-profiles RT_ECN_E interpolate fill-level [ 7.5 75 ]\n",
     [], ()),
    ("junos-decimal-fill-level-change-touches-that-value", "junos",
     "set class-of-service drop-profiles RT_ECN_E interpolate fill-level 7\n"
     "set class-of-service drop-profiles RT_ECN_E interpolate fill-level 75\n",
     "set class-of-service drop-profiles RT_ECN_E interpolate fill-level [ 7.123456789 75 ]\n",
     ["delete class-of-service drop-profiles RT_ECN_E interpolate fill-level 7",
      "set class-of-service drop-profiles RT_ECN_E interpolate fill-level 7.123456789"], ()),
    ("cumulus-owned-qos-line-unset", "cumulus",
     "nv set qos roce mode lossless\nnv set qos pfc default-global switch-priority 4\n",
     "nv set qos roce mode lossless\n",
     ["nv unset qos pfc default-global switch-priority 4"], ()),
    ("cumulus-pfc-on-is-disruptive", "cumulus",
     "nv set system hostname leaf1\n",
     "nv set qos pfc default-global switch-priority 3\n",
     ["nv set qos pfc default-global switch-priority 3"], ("enabling PFC",)),
    # NVUE binds a port to a qos profile with `nv set interface <swp> qos pfc|congestion-control profile`
    # (CL 5.14 QoS page, Port Groups): a binding to a profile roce-tune no longer writes (the ports now
    # agree and use default-global) is unset with the profile, or the port points at a deleted profile
    ("cumulus-stale-port-profile-binding-unset", "cumulus",
     "nv set qos pfc roce-pfc-3-3m switch-priority 3\nnv set interface swp1 qos pfc profile roce-pfc-3-3m\n"
     "nv set interface swp1 link mtu 9216\nnv set interface swp1 link state up\n",
     "nv set qos pfc default-global switch-priority 3\nnv set interface swp1 link mtu 9216\n",
     ["nv unset qos pfc roce-pfc-3-3m switch-priority 3",
      "nv unset interface swp1 qos pfc profile roce-pfc-3-3m",
      "nv set qos pfc default-global switch-priority 3"], ("enabling PFC",)),
    ("cumulus-watchdog-of-a-port-now-lossy-unset", "cumulus",
     "nv set interface swp5 qos pfc-watchdog state enable\nnv set interface swp5 link mtu 9216\n",
     "nv set interface swp5 link mtu 9216\n",
     ["nv unset interface swp5 qos pfc-watchdog state enable"], ()),
    ("cumulus-comments-ignored", "cumulus",
     "# generated by hand\nnv set qos roce mode lossless\n",
     "# roce-tune plan\nnv set qos roce mode lossless\n",
     [], ()),
]


@pytest.mark.parametrize("case", SET_CASES, ids=[c[0] for c in SET_CASES])
def test_set_remediation(case: tuple) -> None:  # type: ignore[type-arg]
    _, platform, running, desired, want, reasons = case
    change = compute_change(platform, running, desired, set())  # the path push and verify take
    assert change.commands == want
    assert change.empty is (not want)
    for r in reasons:
        assert any(r in d for d in change.disruptive), change.disruptive
    if not reasons:
        assert change.disruptive == []


JSON_CASES = [
    ("sonic-nothing-to-do",
     {"PORT": {"Ethernet0": {"mtu": "9100", "speed": "100000"}}},
     {"PORT": {"Ethernet0": {"mtu": "9100"}}}, {"Ethernet0"},
     [], ()),
    ("sonic-field-merge-touches-only-managed-field",
     {"PORT": {"Ethernet0": {"mtu": "1500", "speed": "100000", "admin_status": "up"}}},
     {"PORT": {"Ethernet0": {"mtu": "9100"}}}, {"Ethernet0"},
     [{"op": "replace", "path": "/PORT/Ethernet0/mtu", "value": "9100"}], ()),
    ("sonic-stale-pg-of-managed-port-removed",
     {"BUFFER_PG": {"Ethernet0|3-4": {"profile": "pg_lossless_100000_5m_profile"},
                    "Ethernet8|3-4": {"profile": "pg_lossless_100000_5m_profile"}}},
     {"BUFFER_PG": {"Ethernet0|3": {"profile": "pg_lossless_100000_3m_profile"}}}, {"Ethernet0"},
     [{"op": "remove", "path": "/BUFFER_PG/Ethernet0|3-4"},
      {"op": "add", "path": "/BUFFER_PG/Ethernet0|3", "value": {"profile": "pg_lossless_100000_3m_profile"}}],
     ("headroom profile swap",)),
    # the SKU's range keys carry the same profile as the plan's narrower keys: jsonpatch would "move" them
    # (the diff named only the new key); the patch removes each overlapping key by name instead
    ("sonic-overlapping-range-with-equal-value-removed-by-name",
     {"BUFFER_PG": {"Ethernet0|0": {"profile": "ingress_lossy_profile"},
                    "Ethernet0|3-4": {"profile": "pg_lossless_100000_5m_profile"},
                    "Ethernet8|3-4": {"profile": "pg_lossless_100000_5m_profile"}},
      "BUFFER_QUEUE": {"Ethernet0|0-2": {"profile": "egress_lossy_profile"},
                       "Ethernet0|3-4": {"profile": "egress_lossless_profile"},
                       "Ethernet0|5-6": {"profile": "egress_lossy_profile"}}},
     {"BUFFER_PG": {"Ethernet0|0": {"profile": "ingress_lossy_profile"},
                    "Ethernet0|3": {"profile": "pg_lossless_100000_5m_profile"}},
      "BUFFER_QUEUE": {"Ethernet0|0-2": {"profile": "egress_lossy_profile"},
                       "Ethernet0|3": {"profile": "egress_lossless_profile"},
                       "Ethernet0|4-7": {"profile": "egress_lossy_profile"}}}, {"Ethernet0"},
     [{"op": "remove", "path": "/BUFFER_PG/Ethernet0|3-4"},
      {"op": "add", "path": "/BUFFER_PG/Ethernet0|3", "value": {"profile": "pg_lossless_100000_5m_profile"}},
      {"op": "remove", "path": "/BUFFER_QUEUE/Ethernet0|3-4"},
      {"op": "add", "path": "/BUFFER_QUEUE/Ethernet0|3", "value": {"profile": "egress_lossless_profile"}},
      {"op": "remove", "path": "/BUFFER_QUEUE/Ethernet0|5-6"},
      {"op": "add", "path": "/BUFFER_QUEUE/Ethernet0|4-7", "value": {"profile": "egress_lossy_profile"}}],
     ("headroom profile swap",)),
    ("sonic-pool-resize-is-disruptive",
     {"BUFFER_POOL": {"ingress_lossless_pool": {"size": "5000000", "type": "ingress", "mode": "dynamic"}}},
     {"BUFFER_POOL": {"ingress_lossless_pool": {"size": "5306864", "type": "ingress", "mode": "dynamic"}}},
     set(),
     [{"op": "replace", "path": "/BUFFER_POOL/ingress_lossless_pool/size", "value": "5306864"}],
     ("buffer pool resize",)),
    ("sonic-missing-table-added-whole",
     {"PORT": {"Ethernet0": {"mtu": "9100"}}},
     {"PORT": {"Ethernet0": {"mtu": "9100"}}, "PFC_WD": {"Ethernet0": {"action": "drop"}}}, {"Ethernet0"},
     [{"op": "add", "path": "/PFC_WD", "value": {"Ethernet0": {"action": "drop"}}}], ()),
]


@pytest.mark.parametrize("case", JSON_CASES, ids=[c[0] for c in JSON_CASES])
def test_json_patch(case: tuple) -> None:  # type: ignore[type-arg]
    _, running, desired, managed, want, reasons = case
    change = json_diff(DIFF_RULES["sonic"], running, desired, managed)
    key = lambda op: (op["path"], op["op"])  # noqa: E731
    assert sorted(change.patch, key=key) == sorted(want, key=key)
    for r in reasons:
        assert any(r in d for d in change.disruptive), change.disruptive
    if not reasons:
        assert change.disruptive == []


def test_sonic_diff_names_each_overlapping_key_it_removes() -> None:
    """dry-run text: every removed range key is named, with the plan key it overlaps; unmanaged ports and
    keys that do not overlap a plan key of their port are not called overlapping."""
    case = next(c for c in JSON_CASES if c[0] == "sonic-overlapping-range-with-equal-value-removed-by-name")
    change = json_diff(DIFF_RULES["sonic"], case[1], case[2], case[3])
    assert "remove /BUFFER_PG/Ethernet0|3-4  (overlaps Ethernet0|3)" in change.diff
    assert "remove /BUFFER_QUEUE/Ethernet0|5-6  (overlaps Ethernet0|4-7)" in change.diff
    assert not any(line.startswith(("move", "copy")) for line in change.diff)
    assert not any("Ethernet8" in line for line in change.diff)


def test_sonic_overlapping_keys_follow_the_yang_key_forms() -> None:
    from roce_tune.platforms.sonic import overlapping_keys

    running = {"BUFFER_PG": {"Ethernet0|3-4": {}, "Ethernet0|0": {}, "Ethernet0|5-7": {},
                             "Ethernet4|3-4": {}},
               "BUFFER_QUEUE": {"Ethernet0|0-15": {}, "Ethernet0|3": {}, "host|asic0|Ethernet0|3-4": {}},
               "QUEUE": {"Ethernet0|3-4": {}}}
    desired = {"BUFFER_PG": {"Ethernet0|3": {}, "Ethernet0|4": {}, "Ethernet4|3": {}},
               "BUFFER_QUEUE": {"Ethernet0|3": {}, "Ethernet0|10": {}}, "QUEUE": {"Ethernet0|3": {}}}
    assert overlapping_keys(running, desired, {"Ethernet0"}) == [
        ("BUFFER_PG", "Ethernet0|3-4", "Ethernet0|3"),      # first plan key it overlaps
        ("BUFFER_QUEUE", "Ethernet0|0-15", "Ethernet0|10"),  # queue ids to 15 (qindex pattern)
    # PG 0 / 5-7 overlap nothing; Ethernet4 unmanaged; identical key; VOQ key form; QUEUE is not a range
    # table
    ]
