"""A SONiC CONFIG_DB diff comes out in the same order on every run.

``jsonpatch.make_patch`` walks a dict's removed and added keys as Python sets, so with the interpreter's
string-hash seed (different in every process unless PYTHONHASHSEED is set) the same change was listed in a
different order from one dry run to the next. The diff is now in one canonical order: removes, replaces,
then adds, each by path (``roce_tune.deploy.diff._canonical_order``).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from roce_tune.deploy.diff import json_diff
from roce_tune.platforms import sonic

ROOT = Path(__file__).resolve().parents[2]

_SCRIPT = """
import json
from roce_tune.deploy.diff import json_diff
from roce_tune.platforms import sonic
row = {"action": "drop", "detection_time": "200", "restoration_time": "200"}
ports = [f"Ethernet{i}" for i in range(0, 64, 4)]
running = {"PFC_WD": {"GLOBAL": {"POLL_INTERVAL": "200"}, **{p: dict(row) for p in ports}},
           "PORT_QOS_MAP": {f"Ethernet{i}": {"pfc_enable": "3"} for i in range(0, 64, 4)}}
desired = {"PFC_WD": {"GLOBAL": {"POLL_INTERVAL": "100"}},
           "PORT_QOS_MAP": {f"Ethernet{i}": {"pfc_enable": "3,4"} for i in range(0, 64, 4)},
           "WRED_PROFILE": {"AZURE_LOSSLESS": {"ecn": "ecn_all", "green_min_threshold": "1000"}}}
change = json_diff(sonic.DIFF, running, desired, {f"Ethernet{i}" for i in range(0, 64, 4)})
print(json.dumps({"diff": change.diff, "patch": change.patch}))
"""


def _diff_with_seed(seed: int) -> dict[str, list[object]]:
    env = {**os.environ, "PYTHONHASHSEED": str(seed), "PYTHONPATH": str(ROOT)}
    out = subprocess.run([sys.executable, "-c", _SCRIPT], env=env, capture_output=True, text=True,
                         check=True, timeout=120)
    result: dict[str, list[object]] = json.loads(out.stdout)
    return result


def test_same_diff_order_whatever_the_hash_seed() -> None:
    runs = [_diff_with_seed(seed) for seed in (1, 2, 3, 4)]
    assert all(r == runs[0] for r in runs[1:])
    diff = [str(line) for line in runs[0]["diff"]]
    ops = [line.split(" ", 1)[0] for line in diff]
    assert ops == sorted(ops, key=["remove", "replace", "add"].index)
    removes = [line for line in diff if line.startswith("remove ")]
    assert len(removes) == 16 and removes == sorted(removes)
    assert "replace /PFC_WD/GLOBAL/POLL_INTERVAL = \"100\"" in diff
    assert diff[-1].startswith("add /WRED_PROFILE")


def test_patch_with_a_list_keeps_jsonpatch_order() -> None:
    """A list value makes paths ambiguous (``/T/k/0`` may be an index): no reordering then, and the patch
    still takes the running config to the desired one."""
    import jsonpatch

    running = {"T": {"k": {"members": ["a", "b", "c"]}, "old": {"f": "1"}}}
    desired = {"T": {"k": {"members": ["c", "a"]}, "new": {"f": "2"}}}
    change = json_diff(sonic.DIFF, running, desired, set())
    scope = {"T": {"k": running["T"]["k"]}}
    assert jsonpatch.JsonPatch(change.patch).apply(scope) == {"T": {"k": {"members": ["c", "a"]},
                                                                    "new": {"f": "2"}}}
