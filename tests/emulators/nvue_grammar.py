"""NVUE ``nv set`` grammar of the QoS and interface commands roce-tune writes, from NVIDIA's own text:
the emulator rejects what a Cumulus Linux switch rejects (a keyword that does not exist, a value out of
its range, the other release's on/off word), so a push or a render test fails the way the switch would.

Sources (CumulusNetworks/docs):

* ``content/nvue-reference/Set-and-Unset-Commands/QoS.md`` and the command lists of the CL 5.x "What's
  New" pages: ``qos mapping <p> trust (l2|l3|port|both)``, ``dscp <id> switch-priority 0-7``,
  ``egress-queue-mapping <p> switch-priority <sp> traffic-class 0-7``, ``pfc <p> cable-length 1-100000``,
  ``tx|rx (enable|disable)``, ``congestion-control <p> traffic-class <tc> probability 0-100``,
  ``ecn|red (enable|disable)``, ``egress-scheduler <p> traffic-class <tc> mode (dwrr|strict)``,
  ``bw-percent 0-100``, ``qos pfc-watchdog polling-interval 100-5000``, ``robustness 1-1000``,
  ``interface <id> qos pfc-watchdog state (enable|disable)``, ``interface <id> link mtu 552-9216``;
* ``content/cumulus-linux-514/.../Quality-of-Service/_index.md`` (Traffic Pools: ``default-lossy``,
  ``default-lossless``, ``mc-lossy``, ``roce-lossy``, ``roce-lossless``; thresholds in bytes) and the RoCE
  page (``qos roce mode lossless|lossy|lossless-single-ipool|lossy-multi-tc``);
* ``content/cumulus-linux-516/.../Quality-of-Service/_index.md``: the interface watchdog state is
  ``enabled|disabled`` in CL 5.16 (``tx``/``rx``/``ecn``/``red`` keep ``enable``/``disable``).

Only these command families are checked (:data:`FAMILIES`); any other ``nv set`` path is accepted as the
emulator always did.
"""

from __future__ import annotations

import re
from collections.abc import Callable

#: ``nv set`` path prefixes whose grammar is modelled (anything else is not checked)
FAMILIES = re.compile(r"^(?:qos (?:roce|mapping|egress-queue-mapping|pfc|traffic-pool|congestion-control|"
                      r"egress-scheduler|pfc-watchdog)\b|interface \S+ (?:qos|link mtu)\b)")
TRAFFIC_POOLS = frozenset({"default-lossy", "default-lossless", "mc-lossy", "roce-lossy", "roce-lossless"})
ROCE_MODES = frozenset({"lossless", "lossy", "lossless-single-ipool", "lossy-multi-tc"})
ON_OFF = frozenset({"enable", "disable"})


def watchdog_words(release: str) -> frozenset[str]:
    """The interface PFC-watchdog ``state`` words of a Cumulus Linux release (``5.9.1`` -> enable|disable;
    5.16 and later enabled|disabled; 5.15, which no public text settles, either)."""
    m = re.match(r"(\d+)\.(\d+)", release)
    major, minor = (int(m.group(1)), int(m.group(2))) if m else (5, 14)
    if (major, minor) <= (5, 14):
        return ON_OFF
    if (major, minor) == (5, 15):
        return ON_OFF | {"enabled", "disabled"}
    return frozenset({"enabled", "disabled"})


def _ids(text: str, lo: int, hi: int) -> bool:
    """``3``, ``0,3``, ``0-25,27-63``: every id (and range end) within lo..hi, ranges ascending."""
    for part in text.split(","):
        m = re.fullmatch(r"(\d+)(?:-(\d+))?", part)
        if not m:
            return False
        a, b = int(m.group(1)), int(m.group(2) or m.group(1))
        if not lo <= a <= b <= hi:
            return False
    return True


def _int(text: str, lo: int, hi: int | None = None) -> bool:
    return text.isdigit() and lo <= int(text) and (hi is None or int(text) <= hi)


_NAME = r"[A-Za-z0-9_.-]+"
Check = Callable[[re.Match[str], str], bool]
#: (full-path pattern, check of its groups and the release)
RULES: tuple[tuple[re.Pattern[str], Check], ...] = tuple((re.compile(p), c) for p, c in (
    (r"qos roce", lambda m, r: True),
    (rf"qos (?:mapping|egress-queue-mapping|pfc|congestion-control|egress-scheduler)(?: {_NAME})?",
     lambda m, r: True),  # the object itself (``nv set qos congestion-control``)
    (r"qos (?:traffic-pool(?: \S+)?|pfc-watchdog)", lambda m, r: True),
    (r"interface \S+ qos", lambda m, r: True),
    (r"qos roce mode (\S+)", lambda m, r: m[1] in ROCE_MODES),
    (rf"qos mapping {_NAME} trust (\S+)", lambda m, r: m[1] in {"l2", "l3", "port", "both"}),
    (rf"qos mapping {_NAME} dscp (\S+) switch-priority (\S+)", lambda m, r: _ids(m[1], 0, 63)
     and _int(m[2], 0, 7)),
    (rf"qos mapping {_NAME} pcp (\S+) switch-priority (\S+)", lambda m, r: _ids(m[1], 0, 7)
     and _int(m[2], 0, 7)),
    (rf"qos egress-queue-mapping {_NAME} switch-priority (\S+) traffic-class (\S+)",
     lambda m, r: _ids(m[1], 0, 7) and _int(m[2], 0, 7)),
    (rf"qos pfc {_NAME} switch-priority (\S+)", lambda m, r: _ids(m[1], 0, 7)),
    (rf"qos pfc {_NAME} (?:tx|rx) (\S+)", lambda m, r: m[1] in ON_OFF),
    (rf"qos pfc {_NAME} cable-length (\S+)", lambda m, r: _int(m[1], 1, 100000)),
    (rf"qos pfc {_NAME} (?:xoff-threshold|xon-threshold|port-buffer) (\S+)", lambda m, r: _int(m[1], 0)),
    (r"qos traffic-pool (\S+) memory-percent (\S+)", lambda m, r: m[1] in TRAFFIC_POOLS
     and _int(m[2], 0, 100)),
    (r"qos traffic-pool (\S+) switch-priority (\S+)", lambda m, r: m[1] in TRAFFIC_POOLS
     and _ids(m[2], 0, 7)),
    (rf"qos congestion-control {_NAME} traffic-class (\S+) (?:ecn|red) (\S+)", lambda m, r: _ids(m[1], 0, 7)
     and m[2] in ON_OFF),
    (rf"qos congestion-control {_NAME} traffic-class (\S+) (?:min|max)-threshold (\S+)",
     lambda m, r: _ids(m[1], 0, 7) and _int(m[2], 1)),
    (rf"qos congestion-control {_NAME} traffic-class (\S+) probability (\S+)",
     lambda m, r: _ids(m[1], 0, 7) and _int(m[2], 0, 100)),
    (rf"qos egress-scheduler {_NAME} traffic-class (\S+) mode (\S+)", lambda m, r: _ids(m[1], 0, 7)
     and m[2] in {"dwrr", "strict"}),
    (rf"qos egress-scheduler {_NAME} traffic-class (\S+) bw-percent (\S+)", lambda m, r: _ids(m[1], 0, 7)
     and _int(m[2], 0, 100)),
    (r"qos pfc-watchdog polling-interval (\S+)", lambda m, r: _int(m[1], 100, 5000)),
    (r"qos pfc-watchdog robustness (\S+)", lambda m, r: _int(m[1], 1, 1000)),
    (r"interface \S+ link mtu (\S+)", lambda m, r: _int(m[1], 552, 9216)),
    (rf"interface \S+ qos (?:pfc|congestion-control|egress-scheduler|mapping|remark|link-pause) profile "
     rf"{_NAME}", lambda m, r: True),
    (r"interface \S+ qos pfc-watchdog", lambda m, r: True),
    (r"interface \S+ qos pfc-watchdog state (\S+)", lambda m, r: m[1] in watchdog_words(r)),
))


def nvue_error(path: str, release: str) -> str | None:
    """Why NVUE rejects ``nv set <path>`` on ``release`` (None: accepted, or a path not modelled).

    >>> nvue_error("qos pfc-watchdog polling-interval 50", "5.14.0")
    'Error: Invalid value 50 for qos pfc-watchdog polling-interval'
    >>> nvue_error("interface swp1 qos pfc-watchdog state enabled", "5.16.0") is None
    True
    """
    path = " ".join(path.split())
    if not FAMILIES.match(path):
        return None
    for pattern, check in RULES:
        m = pattern.fullmatch(path)
        if m:
            if check(m, release):
                return None
            word, _, value = path.rpartition(" ")
            return f"Error: Invalid value {value} for {word}"
    return f"Error: Invalid Command: nv set {path}"
