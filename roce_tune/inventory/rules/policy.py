"""Policy rules: priority and DSCP collisions, priority 0, lossless class count, overrides that name nothing
or do not fit the devices they land on."""

from __future__ import annotations

from collections.abc import Iterator

from roce_tune.findings import Finding, Severity
from roce_tune.inventory.models import Override, Role
from roce_tune.inventory.overrides import (
    DCQCN_PARAMS,
    ECN_PARAMS,
    HEADROOM_PARAMS,
    WATCHDOG_PARAMS,
    resolve_override_sources,
)
from roce_tune.inventory.rules.base import LintContext, rule
from roce_tune.ranges import LOSSY_TC, dcqcn_param_range


@rule("RT108", "priority-collision", Severity.error,
      "A lossless priority is the CNP priority, or is listed twice",
      """CNPs (congestion notification packets) must travel in their own strict-priority, lossy class
      (priority 6 by convention) so they are never paused behind the traffic they regulate. A lossless
      priority equal to `cnp_priority` puts CNPs behind PFC; a priority listed twice is a typo.""",
      """\
site: {name: lab}
policy:
  lossless_priorities: [3, 6]
  cnp_priority: 6
""",
      """\
site: {name: lab}
policy:
  lossless_priorities: [3]
  cnp_priority: 6
""")
def priority_collision(ctx: LintContext) -> Iterator[Finding]:
    pol = ctx.inv.policy
    seen: set[int] = set()
    for i, prio in enumerate(pol.lossless_priorities):
        path = f"policy.lossless_priorities[{i}]"
        if prio == pol.cnp_priority:
            yield ctx.finding(f"lossless priority {prio} is also the CNP priority: CNPs would be paused by "
                              "PFC",
                              "use another lossless priority (3 is usual) or move CNPs (cnp_priority: "
                              "6)", path)
        elif prio in seen:
            yield ctx.finding(f"lossless priority {prio} is listed twice", "remove the duplicate", path)
        seen.add(prio)


@rule("RT109", "dscp-collision", Severity.error,
      "The CNP DSCP is also a RoCE DSCP, or a RoCE DSCP is listed twice",
      """Switches classify by DSCP. If `cnp_dscp` is in `roce_dscp`, CNPs land in the lossless queue
      (paused, delayed) instead of the strict-priority CNP queue; duplicates are typos.""",
      """\
site: {name: lab}
policy:
  roce_dscp: [26, 48]
  cnp_dscp: 48
""",
      """\
site: {name: lab}
policy:
  roce_dscp: [26]
  cnp_dscp: 48
""")
def dscp_collision(ctx: LintContext) -> Iterator[Finding]:
    pol = ctx.inv.policy
    seen: set[int] = set()
    for i, dscp in enumerate(pol.roce_dscp):
        path = f"policy.roce_dscp[{i}]"
        if dscp == pol.cnp_dscp:
            yield ctx.finding(f"DSCP {dscp} is both a RoCE DSCP and the CNP DSCP",
                              "use DSCP 26 for RoCE and 48 "
                              "for CNP (the NVIDIA/SONiC defaults), or pick any two different values", path)
        elif dscp in seen:
            yield ctx.finding(f"RoCE DSCP {dscp} is listed twice", "remove the duplicate", path)
        seen.add(dscp)


@rule("RT110", "too-many-lossless-priorities", Severity.warning,
      "More than two lossless priorities",
      """Every lossless priority needs its own PFC headroom on every port (roughly xoff + xon per
      priority per port), taken from the shared buffer. Two are the practical limit on common ASICs
      (e.g. SONiC's default lossless queues 3 and 4); more shrink the shared pool and raise the risk of
      PFC storms and deadlock.""",
      """\
site: {name: lab}
policy:
  lossless_priorities: [2, 3, 4]
""",
      """\
site: {name: lab}
policy:
  lossless_priorities: [3, 4]
  roce_dscp: [26, 28]
""")
def too_many_lossless(ctx: LintContext) -> Iterator[Finding]:
    prios = sorted(set(ctx.inv.policy.lossless_priorities))
    if len(prios) > 2:
        yield ctx.finding(f"{len(prios)} lossless priorities ({', '.join(map(str, prios))}): each needs its "
                          "own PFC headroom on every port",
                          "keep one lossless priority for RoCE (3), two at most",
                          "policy.lossless_priorities")


#: DSCPs suggested for extra lossless priorities, in order (AF32, AF33, CS3, CS4, AF41): near RoCE's 26
_SPARE_ROCE_DSCP = (28, 30, 24, 32, 34)


@rule("RT137", "lossless-priority-without-dscp", Severity.warning,
      "A lossless priority that no RoCE DSCP maps to",
      """`roce_dscp[i]` is classified to `lossless_priorities[i]`, so a lossless priority past the last
      RoCE DSCP carries no traffic under DSCP trust (docs/derivation.md#classification), yet it gets PFC
      and its own headroom (xoff + xon, `ports[].headroom` of the plan) on every lossless port, taken from
      the shared buffer for nothing. That is right only when something outside roce-tune re-marks traffic
      into it (a Tagger-style remap of bounced traffic, docs/derivation.md#pfc-deadlock); otherwise map a
      RoCE DSCP to it or drop it. Under PCP trust the hosts tag the priority themselves and the rule does
      not apply. A warning fails only `roce-tune lint --strict`: keeping a reserved priority on purpose
      means accepting the warning.""",
      """\
site: {name: lab}
policy:
  lossless_priorities: [3, 4]
  roce_dscp: [26]
""",
      """\
site: {name: lab}
policy:
  lossless_priorities: [3, 4]
  roce_dscp: [26, 28]
""")
def lossless_priority_without_dscp(ctx: LintContext) -> Iterator[Finding]:
    pol = ctx.inv.policy
    if pol.trust != "dscp":
        return
    n = len(pol.roce_dscp)
    mapped = set(pol.lossless_priorities[:n])
    missing = [(i, p) for i, p in enumerate(pol.lossless_priorities)
               if i >= n and p not in mapped and p != pol.cnp_priority]  # twice / CNP: RT108
    if not missing:
        return
    spare = [d for d in _SPARE_ROCE_DSCP if d not in pol.roce_dscp and d != pol.cnp_dscp]
    wanted = [*pol.roce_dscp, *spare[:len(pol.lossless_priorities) - n]]
    for i, prio in missing:
        yield ctx.finding(
            f"lossless priority {prio} has no RoCE DSCP (roce_dscp {pol.roce_dscp} maps to priority "
            f"{', '.join(map(str, pol.lossless_priorities[:n]))}): it still gets PFC and its own PFC "
            "headroom (xoff + xon) on every lossless port, buffer reserved for traffic no DSCP classifies to "
            "it",
            f"map a DSCP to it (roce_dscp[i] goes to lossless_priorities[i]: e.g. roce_dscp: "
            f"[{', '.join(map(str, wanted))}]), or remove {prio} from policy.lossless_priorities; keep it "
            "only if a remap outside roce-tune (Tagger-style, for bounced traffic) sends traffic to it, and "
            "accept this warning", f"policy.lossless_priorities[{i}]")


_OVERRIDE_HEAD = """\
site: {name: lab}
switches:
  - name: leaf1
    platform: sonic
    model: SN4700
    role: leaf
    ports:
      - {name: Ethernet0, speed: 400G}
"""


@rule("RT121", "override-unknown-target", Severity.error,
      "An override names a device or port that is not in the inventory, or pins what its target lacks",
      """An override scoped to `device` (and `port`) must name a declared switch or host (and one of that
      switch's ports or that host's NIC netdevs); otherwise the pinned value silently applies nowhere. For
      the same reason a scoped override may only pin what its target has: a host (`role: host` or a host
      device) only the NIC's DCQCN parameters, a switch or switch role only headroom, ECN and PFC watchdog
      values, and a switch port only headroom and ECN (the watchdog is one per switch). A site-wide
      override (no scope) may pin anything.""",
      _OVERRIDE_HEAD + """\
policy:
  overrides:
    - device: leaf1
      port: Ethernet4
      set: {cable_m: 100}
""",
      _OVERRIDE_HEAD + """\
policy:
  overrides:
    - device: leaf1
      port: Ethernet0
      set: {cable_m: 100}
""")
def override_unknown_target(ctx: LintContext) -> Iterator[Finding]:
    hosts = {h.name: h for h in ctx.inv.hosts}
    for i, ov in enumerate(ctx.inv.policy.overrides):
        path = f"policy.overrides[{i}]"
        yield from _pins_not_taken(ctx, ov, path, ov.device in hosts)
        if ov.device is None:
            continue
        if ov.device not in ctx.topo.switches and ov.device not in hosts:
            yield ctx.finding(f"override names device {ov.device!r}, which is not in the inventory",
                              "name a declared switch or host, or remove the override", f"{path}.device",
                              device=ov.device)
            continue
        if ov.port is None:
            continue
        if ov.device in ctx.topo.switches:
            ok = ctx.topo.port(ov.device, ov.port) is not None
        else:
            ok = any(n.netdev == ov.port for n in hosts[ov.device].nics)
        if not ok:
            yield ctx.finding(f"override names port {ov.port!r}, which {ov.device} does not declare",
                              f"name a declared port of {ov.device}, or remove 'port' to scope the override "
                              "to the whole device", f"{path}.port", device=ov.device, port=ov.port)


#: What each kind of override target takes (the tuner resolves pins for these and nothing else).
_TAKES: dict[str, tuple[str, ...]] = {
    "host": DCQCN_PARAMS,
    "switch": HEADROOM_PARAMS + ECN_PARAMS + WATCHDOG_PARAMS,
    "switch port": HEADROOM_PARAMS + ECN_PARAMS,
}


def _pins_not_taken(ctx: LintContext, ov: Override, path: str, on_host: bool) -> Iterator[Finding]:
    """RT121 for each pinned key of ``ov`` that its target (a host or host role, a switch or switch role,
    a switch port) does not take; nothing for a site-wide override or an unknown device."""
    if ov.role is None and ov.device is None:
        return
    if ov.device is not None and not on_host and ov.device not in ctx.topo.switches:
        return  # unknown device: reported once, by the caller
    kind = "host" if on_host or ov.role == "host" else "switch port" if ov.port else "switch"
    role = ov.role.value if isinstance(ov.role, Role) else ov.role
    where = f"{ov.device} {ov.port}" if ov.port else ov.device if ov.device is not None else f"role {role}"
    for key in ov.set:
        if key not in _TAKES[kind]:
            yield ctx.finding(f"override pins {key} on {where}, which does not take it (a {kind} takes "
                              f"{_takes_words(kind)}): the value would apply nowhere",
                              "move the key to an override scoped to the devices that take it (NIC DCQCN "
                              "keys: hosts; headroom and ECN: switches or their ports; watchdog: switches)",
                              f"{path}.set.{key}", device=ov.device, port=ov.port)


def _takes_words(kind: str) -> str:
    return {"host": "the NIC's DCQCN parameters", "switch": "headroom, ECN and PFC watchdog values",
            "switch port": "headroom and ECN values; the PFC watchdog is one per switch"}[kind]


@rule("RT122", "override-empty-role", Severity.warning,
      "An override is scoped to a role that no device has",
      """An override with `role: spine` in an inventory without spines (or `role: host` without hosts)
      applies to nothing; usually the role is mistyped or the override is left over.""",
      _OVERRIDE_HEAD + """\
policy:
  overrides:
    - role: spine
      set: {kmin_bytes: 150000}
""",
      _OVERRIDE_HEAD + """\
policy:
  overrides:
    - role: leaf
      set: {kmin_bytes: 150000}
""")
def override_empty_role(ctx: LintContext) -> Iterator[Finding]:
    for i, ov in enumerate(ctx.inv.policy.overrides):
        if ov.role is None:
            continue
        if ov.role == "host":
            count = len(ctx.inv.hosts)
            role = "host"
        else:
            role = Role(ov.role).value
            count = sum(1 for s in ctx.inv.switches if s.role.value == role)
        if count == 0:
            yield ctx.finding(f"override is scoped to role {role!r} but no device has that role",
                              "fix the role or remove the override", f"policy.overrides[{i}].role")


@rule("RT126", "priority-zero", Severity.error,
      "Priority 0 is lossless or carries CNPs",
      """Priority (TC) 0 is the best-effort class: every DSCP the policy does not name lands there. Made
      lossless, any unclassified traffic would be paused by PFC; used for CNPs, congestion notifications
      would queue behind bulk traffic instead of going out strict priority.""",
      """\
site: {name: lab}
policy:
  lossless_priorities: [3]
  cnp_priority: 0
""",
      """\
site: {name: lab}
policy:
  lossless_priorities: [3]
  cnp_priority: 6
""")
def priority_zero(ctx: LintContext) -> Iterator[Finding]:
    """Yield a finding for priority 0 (``LOSSY_TC``) among ``lossless_priorities`` or as ``cnp_priority``."""
    pol = ctx.inv.policy
    for i, prio in enumerate(pol.lossless_priorities):
        if prio == LOSSY_TC:
            yield ctx.finding("priority 0 cannot be lossless: every unclassified DSCP maps to TC 0",
                              "use priority 3 (the usual RoCE class) or another of 1-7",
                              f"policy.lossless_priorities[{i}]")
    if pol.cnp_priority == LOSSY_TC:
        yield ctx.finding("cnp_priority 0 would put CNPs in the best-effort queue; they need their own "
                          "strict queue",
                          "use cnp_priority: 6 (the usual CNP class) or another priority that is not "
                          "lossless",
                          "policy.cnp_priority")


@rule("RT127", "override-out-of-range", Severity.error,
      "A pinned value is outside what the device it applies to accepts",
      """The loader checks each pinned value against the widest range of its parameter; this rule checks
      it against each device it lands on. DCQCN rates cannot exceed the NIC's line rate (a 150000 Mb/s
      step on a 100G NIC), and pinned PFC watchdog detection or restoration times cannot be shorter than a
      pinned polling interval (sonic-pfcwd.yang: times must be >= POLL_INTERVAL).""",
      """\
site: {name: lab}
policy:
  overrides:
    - role: host
      set: {rpg_ai_rate_mbps: 150000}
hosts:
  - name: gpu01
    nics:
      - {model: connectx-7, netdev: ens1f0np0, rdma_device: mlx5_0, speed: 100G}
""",
      """\
site: {name: lab}
policy:
  overrides:
    - role: host
      set: {rpg_ai_rate_mbps: 80}
hosts:
  - name: gpu01
    nics:
      - {model: connectx-7, netdev: ens1f0np0, rdma_device: mlx5_0, speed: 100G}
""")
def override_out_of_range(ctx: LintContext) -> Iterator[Finding]:
    """Yield a finding per pinned DCQCN value outside :func:`dcqcn_param_range` for a NIC speed it lands
    on, and per pinned PFC watchdog time shorter than a pinned ``poll_ms`` (sonic-pfcwd.yang)."""
    pol = ctx.inv.policy
    if not pol.overrides:
        return
    seen: set[tuple[int, str, int]] = set()
    for host in ctx.inv.hosts:
        for nic in host.nics:  # a NIC-scoped override (port: netdev) lands on that NIC only
            pins = resolve_override_sources(pol, role="host", device=host.name, port=nic.netdev,
                                            params=DCQCN_PARAMS)
            for key, (value, idx) in pins.items():
                lo, hi, src = dcqcn_param_range(key, nic.speed)
                if lo <= value <= hi or (idx, key, nic.speed) in seen:  # type: ignore[operator]
                    continue
                seen.add((idx, key, nic.speed))
                yield ctx.finding(f"{key} = {value} is outside {lo}..{hi} for {host.name} {nic.netdev} at "
                                  f"{nic.speed}G ({src})",
                                  f"pin {key} within {lo}..{hi} for {nic.speed}G NICs, "
                                  "or scope the override to the devices it fits",
                                  f"policy.overrides[{idx}].set.{key}",
                                  device=host.name, port=nic.netdev)
    for sw in ctx.inv.switches:
        pins = resolve_override_sources(pol, role=sw.role.value, device=sw.name, params=WATCHDOG_PARAMS)
        if "poll_ms" not in pins:
            continue
        poll, _ = pins["poll_ms"]
        for key in ("detection_ms", "restoration_ms"):
            if (key in pins and pins[key][0] < poll  # type: ignore[operator]
                    and (pins[key][1], key, 0) not in seen):
                seen.add((pins[key][1], key, 0))
                yield ctx.finding(f"{key} = {pins[key][0]} ms is below the pinned poll_ms = {poll} ms on "
                                  f"{sw.name} (sonic-pfcwd.yang: times must be >= POLL_INTERVAL)",
                                  f"pin {key} at least {poll} ms, or a shorter poll_ms",
                                  f"policy.overrides[{pins[key][1]}].set.{key}", device=sw.name)
