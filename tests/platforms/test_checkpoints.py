"""Checkpoint retention's choices (roce_tune.platforms.checkpoints) and the two listings it reads: NX-OS
``show checkpoint summary`` (user and system parts, as the device prints them) and SONiC
``config list-checkpoints`` (a JSON list, sonic-utilities ``config/main.py``)."""

from __future__ import annotations

import pytest

from roce_tune.platforms.checkpoints import (
    OWN_CHECKPOINT_RE,
    own_checkpoints,
    prune,
    to_free,
    to_prune,
)
from roce_tune.platforms.nxos import CHECKPOINTS as NXOS
from roce_tune.platforms.nxos import user_checkpoints
from roce_tune.platforms.sonic import CHECKPOINTS as SONIC
from roce_tune.platforms.sonic import checkpoint_names

#: the layout of ``show checkpoint summary`` on a Nexus (learnduty.com, "Cisco Nexus Checkpoint & Rollback"):
#: numbered user entries, then NX-OS's own system checkpoints
NXOS_SUMMARY = """User Checkpoint Summary
--------------------------------------------------------------------------------
1) before_upgrade:
Created by admin
Created at Thu, 08:10:29 22 May 2025
Size is 15,568 bytes
Description: *** before the upgrade ***

2) roce_tune_20261201_101500:
Created by netops
Created at Tue, 10:15:00 01 Dec 2026
Size is 16,001 bytes
Description: None

System Checkpoint Summary
--------------------------------------------------------------------------------
3) system-fm-vrrp:
Created by admin
Created at Thu, 08:12:10 22 May 2025
Size is 15,568 bytes
Description: Created by Feature Manager.
"""


def test_nxos_summary_lists_user_checkpoints_only() -> None:
    assert user_checkpoints(NXOS_SUMMARY) == ["before_upgrade", "roce_tune_20261201_101500"]
    assert NXOS.parse is user_checkpoints and NXOS.limit == 10
    assert user_checkpoints("User Checkpoint Summary\n" + "-" * 80 + "\n") == []


def test_sonic_listing() -> None:
    out = '[\n    "before-upgrade",\n    "roce_tune_20261201_101500"\n]\n'
    assert checkpoint_names(out) == ["before-upgrade", "roce_tune_20261201_101500"]
    assert checkpoint_names("[]\n") == []
    assert SONIC.parse is checkpoint_names and SONIC.limit is None
    with pytest.raises(ValueError, match="list-checkpoints"):
        checkpoint_names("Error: [Errno 13] Permission denied: '/etc/sonic/checkpoints'")
    with pytest.raises(ValueError):
        checkpoint_names('[{"name": "x"}]')


def test_own_names_and_their_order() -> None:
    """The CLI's form and the two earlier playbook forms are roce-tune's; ordered by their timestamp, not by
    the form; anything else (a prefix, a suffix, another separator) is the operator's."""
    names = ["roce_tune_20261201_101500", "roce-tune-20250102120000", "roce_tune_20250101120000",
             "roce_tune", "roce_tune_20261201_101500_manual", "pre_roce_tune_20261201_101500",
             "Roce_tune_20261201_101500", "roce_tune_2026120_1101500", "user-checkpoint-1"]
    assert own_checkpoints(names) == ["roce_tune_20250101120000", "roce-tune-20250102120000",
                                      "roce_tune_20261201_101500"]
    assert not OWN_CHECKPOINT_RE.match("roce_tune_20261201_101500\n")


def test_to_prune_keeps_the_current_and_the_newest() -> None:
    own = [f"roce_tune_20261201_1{i}0000" for i in range(5)]
    operator = ["stable", "user-checkpoint-1"]
    assert to_prune(operator + own, own[-1], 2) == own[:3]
    assert to_prune(operator + own, own[-1], 1) == own[:4]
    assert to_prune(operator + own, own[-1], 10) == []
    # the current one stays even when older names sort after it (a clock set back)
    assert to_prune(own, own[0], 2) == own[1:4]
    assert to_prune(own, None, 2) == own[:3]
    assert to_prune(operator, None, 1) == []
    with pytest.raises(ValueError, match="at least"):
        to_prune(own, own[-1], 0)


def test_to_free_at_the_limit() -> None:
    own = [f"roce_tune_20261201_1{i}0000" for i in range(3)]
    operator = [f"maint_{i}" for i in range(7)]
    assert to_free(operator + own[:2], 10) == []  # nine: one more fits
    assert to_free(operator + own, 10) == own[:1]
    assert to_free(operator + own + ["x"], 10) == own[:2]
    assert to_free(operator + ["a", "b", "c"], 10) is None  # the operator's fill it
    assert to_free(operator + own, None) == []


def test_prune_goes_on_after_a_refused_delete() -> None:
    own = [f"roce_tune_20261201_1{i}0000" for i in range(4)]
    warnings: list[str] = []
    done = prune(own, own[-1], 1, lambda n: "refused" if n == own[0] else None, warnings.append)
    assert done == own[1:3] and warnings == ["refused"]
