"""SONiC apply's CONFIG_DB writes (:func:`roce_tune.platforms.sonic.db_steps`): the diff's patch becomes
``sonic-cfggen`` writes and ``sonic-db-cli`` deletions in dependency order, and the same function turns the
snapshot back into the rollback's writes.

Order: pools and profiles before the PG rows that name them, an overlapping PG range deleted before the PG
row that replaces it, WRED profiles/maps/schedulers before the QUEUE rows and port bindings, PORT last, a
stale WRED profile deleted only after every write (nothing names it then)."""

from __future__ import annotations

from typing import Any

import pytest

from roce_tune.deploy.diff import json_diff
from roce_tune.platforms import sonic

RUNNING: dict[str, Any] = {
    "PORT": {"Ethernet0": {"mtu": "9100", "speed": "400000", "lanes": "0,1,2,3"}},
    "BUFFER_POOL": {"ingress_lossless_pool": {"mode": "dynamic", "size": "100", "type": "ingress"}},
    "BUFFER_PG": {"Ethernet0|3-4": {"profile": "pg_lossless_400000_5m_profile"}},
    "WRED_PROFILE": {"ROCE_LOSSLESS_400G_N1": {"ecn": "ecn_all", "green_min_threshold": "1"}},
    "QUEUE": {"Ethernet0|3": {"scheduler": "S", "wred_profile": "ROCE_LOSSLESS_400G_N1"}},
    "PORT_QOS_MAP": {"Ethernet0": {"dscp_to_tc_map": "AZURE", "pfc_enable": "3,4", "pfcwd_sw_enable": "3,4"}},
}
DESIRED: dict[str, Any] = {
    "PORT": {"Ethernet0": {"mtu": "9216"}},
    "BUFFER_POOL": {"ingress_lossless_pool": {"mode": "dynamic", "size": "200", "type": "ingress"}},
    "BUFFER_PROFILE": {"ROCE_PG": {"pool": "ingress_lossless_pool", "size": "0", "xoff": "9"}},
    "BUFFER_PG": {"Ethernet0|3": {"profile": "ROCE_PG"}},
    "WRED_PROFILE": {"ROCE_LOSSLESS_400G_N1_V2": {"ecn": "ecn_all", "green_min_threshold": "2"}},
    "QUEUE": {"Ethernet0|3": {"scheduler": "S", "wred_profile": "ROCE_LOSSLESS_400G_N1_V2"}},
    "PORT_QOS_MAP": {"Ethernet0": {"dscp_to_tc_map": "ROCE"}},
}


def _steps() -> tuple[sonic.DbRows, sonic.DbRows, list[sonic.DbStep]]:
    change = json_diff(sonic.DIFF, RUNNING, DESIRED, {"Ethernet0"})
    before, after = sonic.touched_rows(RUNNING, change.patch)
    return before, after, sonic.db_steps(before, after)


def _index(steps: list[sonic.DbStep], kind: str, what: str) -> int:
    return next(i for i, s in enumerate(steps) if s[0] == kind and (what in s[1] if kind == "write"
                                                                      else s[1] == what))


def test_the_patch_becomes_writes_in_dependency_order() -> None:
    before, after, steps = _steps()
    assert before[("BUFFER_PG", "Ethernet0|3-4")] == {"profile": "pg_lossless_400000_5m_profile"}
    assert before[("BUFFER_PROFILE", "ROCE_PG")] is None and after[("BUFFER_PG", "Ethernet0|3-4")] is None
    profiles = _index(steps, "write", "BUFFER_PROFILE")
    overlap = _index(steps, "del", "BUFFER_PG|Ethernet0|3-4")
    pg = _index(steps, "write", "BUFFER_PG")
    wred = _index(steps, "write", "WRED_PROFILE")
    queue = _index(steps, "write", "QUEUE")
    hdel = _index(steps, "hdel", "PORT_QOS_MAP|Ethernet0")
    port = _index(steps, "write", "PORT")
    stale = _index(steps, "del", "WRED_PROFILE|ROCE_LOSSLESS_400G_N1")
    assert profiles < overlap < pg < wred < queue < hdel < port < stale, steps
    assert steps[hdel][2] == ["pfc_enable", "pfcwd_sw_enable"]
    # a merge write carries only the fields that change: PORT keeps its lanes and speed
    assert steps[port][1] == {"PORT": {"Ethernet0": {"mtu": "9216"}}}
    assert steps[profiles][1]["BUFFER_POOL"] == {"ingress_lossless_pool": {"size": "200"}}


def test_the_snapshot_becomes_the_reverse_writes() -> None:
    before, after, _ = _steps()
    back = sonic.db_steps(after, before)
    new_pg = _index(back, "del", "BUFFER_PG|Ethernet0|3")
    old_pg = _index(back, "write", "BUFFER_PG")
    queue = _index(back, "write", "QUEUE")
    new_wred = _index(back, "del", "WRED_PROFILE|ROCE_LOSSLESS_400G_N1_V2")
    new_profile = _index(back, "del", "BUFFER_PROFILE|ROCE_PG")
    old_wred = _index(back, "write", "WRED_PROFILE")
    # the old WRED profile exists again before QUEUE names it; the added profiles go once nothing names them
    assert new_pg < old_pg < new_profile and old_wred < queue < new_wred < new_profile, back
    assert back[old_pg][1] == {"BUFFER_PG": {"Ethernet0|3-4": {"profile": "pg_lossless_400000_5m_profile"}}}
    assert ("write", {"PORT_QOS_MAP": {"Ethernet0": {"dscp_to_tc_map": "AZURE", "pfc_enable": "3,4",
                                                     "pfcwd_sw_enable": "3,4"}}}) in back


def test_a_patch_that_does_not_fit_the_running_config_is_refused_before_any_change() -> None:
    patch: list[dict[str, Any]] = [{"op": "remove", "path": "/BUFFER_PG/Ethernet0|0"}]
    with pytest.raises(ValueError, match="does not apply to the CONFIG_DB read"):
        sonic.touched_rows(RUNNING, patch)
