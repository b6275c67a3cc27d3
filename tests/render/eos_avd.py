"""Arista's own renderer as the oracle for roce-tune's EOS output: pyavd (PyPI, ``eos_cli_config_gen``).

From a plan's switch this module builds AVD *structured config* straight from the plan's numbers (it does
not read roce-tune's template context), validates it with ``pyavd.validate_structured_config`` (AVD's
schema: value types, ranges, enumerations, patterns) and renders it with ``pyavd.get_device_config``.
Both texts are then reduced to sets of *paths*: each configuration line with the mode lines above it,
``("qos profile P", "uc-tx-queue 3", "random-detect ecn count")``. Comments (``!``, ``!!``), blank lines,
order and the number of times a mode is entered do not matter (EOS merges a re-entered mode; roce-tune
enters each ``qos profile`` once per section, AVD once).

:func:`check_against_avd` requires both directions:

* every path roce-tune writes is a path AVD renders for the same data, unless it matches
  :data:`OUTSIDE_AVD` (each entry says why AVD cannot produce it);
* every path AVD renders (except :data:`AVD_ONLY`: its own file header) is one roce-tune writes, so a
  missing companion line (``priority-flow-control on`` without which ``no-drop`` does nothing) fails too.

Mapping of plan -> AVD keys (AVD docs ``eos_cli_config_gen`` tables ``qos``, ``qos-profiles``,
``priority-flow-control``, ``ethernet-interfaces``; https://avd.arista.com/):

* ``qos.map.dscp`` ``"<dscps> to traffic-class <tc>"``, ``qos.map.traffic_class`` ``"<tc> to tx-queue <q>"``
  (AVD keeps the text after ``qos map dscp`` / ``qos map traffic-class`` free-form: only the prefix is AVD's);
* ``qos_profiles[]``: ``trust``, ``priority_flow_control`` (``enabled``, ``priorities[].no_drop``,
  ``watchdog.enabled`` / ``action`` drop|notify-only), ``uc_tx_queues[]`` or ``tx_queues[]`` with
  ``priority`` (``no priority`` / ``priority strict``), ``bandwidth_percent``, ``random_detect.ecn``
  (``count``, ``threshold`` units/min/max/max_probability/weight) and ``random_detect.drop``;
* ``priority_flow_control.watchdog`` timeout / recovery_time / polling_interval (seconds, AVD patterns
  ``\\d+(\\.\\d{1,2})?`` and ``\\d+(\\.\\d{1,3})?``);
* ``ethernet_interfaces[]`` ``mtu`` and ``service_profile``.

What the oracle decides for itself (not AVD's business, so taken from the plan the same way an engineer
would): the MTU clamp to 9214 (EOS L3 maximum), ``uc-tx-queue`` vs ``tx-queue`` by ASIC family (AVD
accepts both; the choice is checked in test_eos.py), TC 7 left out of the TC->queue map (fixed on EOS).
"""

from __future__ import annotations

import re
from decimal import Decimal
from functools import cache
from typing import Any

from roce_tune.plan import EcnProfile, Plan, SwitchPlan
from roce_tune.platforms import eos

#: Lines roce-tune writes that AVD cannot render, with the reason. Empty is the goal; each entry is a
#: regex over the path joined with `` / ``.
OUTSIDE_AVD: dict[str, str] = {}

#: AVD's own file furniture (not QoS): ignored in the AVD -> roce-tune direction.
AVD_ONLY = re.compile(r"^(hostname \S+|end)$")

#: EOS L3 interface MTU maximum (every Arista RoCE example: ``mtu 9214``).
EOS_MAX_MTU = 9214
#: plan watchdog action -> AVD ``qos_profiles[].priority_flow_control.watchdog.action`` (drop | notify-only);
#: plan ``forward`` has no EOS action: roce-tune renders drop and says so (RT241), so the oracle does too.
AVD_WATCHDOG_ACTION = {"drop": "drop", "alert": "notify-only", "forward": "drop"}


class AvdMismatch(AssertionError):
    """roce-tune's EOS text and AVD's rendering (or AVD's schema) disagree; the message lists every line."""


@cache
def _pyavd() -> Any:
    import pyavd

    return pyavd


def _seconds(ms: int) -> str:
    return format((Decimal(ms) / 1000).normalize(), "f")


def _ecn_threshold(ecn: EcnProfile) -> dict[str, Any]:
    return {"units": "bytes", "min": ecn.kmin_bytes, "max": ecn.kmax_bytes,
            "max_probability": max(1, min(100, round(ecn.pmax_percent))), "weight": 0}


def _drop_threshold(ecn: EcnProfile) -> dict[str, Any] | None:
    if ecn.drop_min_bytes is None or ecn.drop_max_bytes is None or ecn.drop_probability_percent is None:
        return None
    return {"units": "bytes", "min": ecn.drop_min_bytes, "max": ecn.drop_max_bytes,
            "drop_probability": max(1, min(100, round(ecn.drop_probability_percent)))}


def _queues(plan: Plan, ecn: EcnProfile, with_ecn: bool) -> list[dict[str, Any]]:
    """One profile's queues: scheduler of every plan queue, ECN (or, ``with_ecn`` False, WRED drop) on the
    lossless ones. AVD's template renders ``random-detect ecn`` *or* ``random-detect drop`` per queue."""
    cls = plan.classification
    queues: dict[int, dict[str, Any]] = {}
    for s in cls.schedulers:
        q = queues.setdefault(s.queue, {"id": s.queue})
        if s.mode == "strict":
            q["priority"] = "priority strict"
        else:
            q["priority"] = "no priority"
            q["bandwidth_percent"] = s.weight_percent
    drop = _drop_threshold(ecn)
    for lq in cls.lossless_queues:
        q = queues.setdefault(lq, {"id": lq})
        rd: dict[str, Any] = {"ecn": {"count": True}}
        if with_ecn:
            rd["ecn"]["threshold"] = _ecn_threshold(ecn)
        elif drop is not None:
            rd["drop"] = {"threshold": drop}
        q["random_detect"] = rd
    return [queues[k] for k in sorted(queues)]


def _qos_profiles(plan: Plan, switch: SwitchPlan, with_ecn: bool) -> list[dict[str, Any]]:
    by_name = {e.name: e for e in switch.ecn_profiles}
    queue_key = eos.queue_keyword(switch).replace("-", "_") + "s"  # uc_tx_queues | tx_queues
    wd = switch.watchdog
    out = []
    for name in sorted({p.ecn_profile for p in switch.ports if p.lossless and p.ecn_profile}):
        ports = [p for p in switch.ports if p.lossless and p.ecn_profile == name]
        prios = sorted({pr for p in ports for pr in p.pfc_priorities})
        pfc: dict[str, Any] = {"enabled": True,
                               "priorities": [{"priority": pr, "no_drop": True} for pr in prios]}
        if wd.enabled:
            pfc["watchdog"] = {"enabled": True, "action": AVD_WATCHDOG_ACTION[wd.action]}
        out.append({"name": name, "trust": {"dscp": "dscp", "pcp": "cos"}[plan.classification.trust],
                    "priority_flow_control": pfc, queue_key: _queues(plan, by_name[name], with_ecn)})
    return out


def structured_config(plan: Plan, switch: SwitchPlan, with_ecn: bool = True) -> dict[str, Any]:
    """AVD ``eos_cli_config_gen`` structured config for ``switch``'s QoS, built from the plan's values."""
    cls = plan.classification
    by_tc: dict[int, list[int]] = {}
    for dscp, tc in sorted(cls.dscp_to_tc.items()):
        by_tc.setdefault(tc, []).append(dscp)
    sc: dict[str, Any] = {
        "hostname": switch.name,
        "qos": {"map": {
            "dscp": [f"{' '.join(map(str, by_tc[tc]))} to traffic-class {tc}" for tc in sorted(by_tc)],
            "traffic_class": [f"{tc} to tx-queue {q}"
                              for tc, q in sorted(cls.tc_to_queue.items()) if tc != 7],
        }},
        "qos_profiles": _qos_profiles(plan, switch, with_ecn),
        "ethernet_interfaces": [
            {"name": p.name, "mtu": min(p.mtu, EOS_MAX_MTU),
             **({"service_profile": p.ecn_profile} if p.lossless else {})}
            for p in switch.ports],
    }
    wd = switch.watchdog
    if wd.enabled:
        sc["priority_flow_control"] = {"watchdog": {
            "timeout": _seconds(wd.detection_ms), "recovery_time": _seconds(wd.restoration_ms),
            "polling_interval": _seconds(wd.poll_ms)}}
    return sc


def validate(sc: dict[str, Any]) -> None:
    """AVD's schema check. Raises AvdMismatch listing each violation (path and AVD's message)."""
    result = _pyavd().validate_structured_config(sc).validation_result
    problems = [f"{'.'.join(map(str, v.path))}: {v.message}" for v in result.violations]
    problems += [f"deprecated {d}" for d in result.deprecations]
    if problems:
        raise AvdMismatch("AVD schema rejects the structured config:\n  " + "\n  ".join(problems))


def config_paths(text: str) -> set[tuple[str, ...]]:
    """EOS CLI text -> set of (mode line, ..., line). Indentation gives the mode (any width); comments
    (``!``-lines, ``!!`` queue comments) and blank lines are dropped; inner whitespace is collapsed."""
    paths: set[tuple[str, ...]] = set()
    stack: list[tuple[int, str]] = []
    for raw in text.splitlines():
        stripped = raw.strip()
        if not stripped or stripped.startswith("!"):
            continue
        indent = len(raw) - len(raw.lstrip(" "))
        while stack and stack[-1][0] >= indent:
            stack.pop()
        line = " ".join(stripped.split())
        paths.add((*(s for _, s in stack), line))
        stack.append((indent, line))
    return paths


def _leaf_paths(paths: set[tuple[str, ...]]) -> set[tuple[str, ...]]:
    """Drop paths that are only a prefix of another (a mode line is checked through its children)."""
    prefixes = {p[:i] for p in paths for i in range(1, len(p))}
    return {p for p in paths if p not in prefixes}


def avd_paths(plan: Plan, switch: SwitchPlan) -> set[tuple[str, ...]]:
    """Paths AVD renders for the switch (ECN variant, plus the WRED-drop variant when the plan has drop
    thresholds: AVD renders one of the two per queue). Raises AvdMismatch on a schema violation."""
    out: set[tuple[str, ...]] = set()
    variants = [True] + ([False] if any(_drop_threshold(e) for e in switch.ecn_profiles) else [])
    for with_ecn in variants:
        sc = structured_config(plan, switch, with_ecn)
        validate(sc)
        out |= config_paths(_pyavd().get_device_config(sc))
    return out


def check_against_avd(plan: Plan, switch: SwitchPlan, text: str) -> int:
    """Compare roce-tune's EOS ``text`` for ``switch`` with AVD's rendering of the same plan.

    Returns the number of roce-tune configuration lines (paths) checked. Raises AvdMismatch naming every
    line roce-tune writes that AVD does not (and is not in OUTSIDE_AVD) and every line AVD renders that
    roce-tune omits.
    """
    ours = _leaf_paths(config_paths(text))
    theirs = avd_paths(plan, switch)
    theirs_leaves = _leaf_paths(theirs)
    outside = [re.compile(rx) for rx in OUTSIDE_AVD]
    extra = sorted(p for p in ours - theirs if not any(rx.search(" / ".join(p)) for rx in outside))
    missing = sorted(p for p in theirs_leaves - ours if not AVD_ONLY.match(p[-1]) and p not in ours)
    if extra or missing:
        lines = [f"{switch.name}: roce-tune and pyavd disagree"]
        lines += [f"  only roce-tune: {' / '.join(p)}" for p in extra]
        lines += [f"  only pyavd:     {' / '.join(p)}" for p in missing]
        raise AvdMismatch("\n".join(lines))
    return len(ours)
