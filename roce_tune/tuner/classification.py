"""DSCP / TC / PG / queue maps, PFC priorities, schedulers and TOS bytes (pure).

One :class:`~roce_tune.plan.Classification` is shared by every switch and NIC of the site. The
numbering convention is the one NVIDIA/Cumulus "RoCE mode" and SONiC ``qos_config.j2`` use: a traffic
class (TC), an 802.1p/PFC priority, a switch egress queue and (for lossless TCs) an ingress priority
group (PG) all carry the same number, so "priority 3" is TC 3, queue 3 and PG 3 everywhere.

Maps (docs/derivation.md#classification):

* DSCP -> TC, all 64 code points: ``roce_dscp[i]`` -> ``lossless_priorities[i]`` (extra RoCE DSCPs
  fall back to the first lossless priority; extra lossless priorities carry no DSCP and stay reserved,
  e.g. for a Tagger-style bounce remap, docs/derivation.md#pfc-deadlock, and lint warns about each with
  RT137, because it still gets PFC and headroom); the CNP DSCP -> CNP priority;
  everything else -> TC 0 (best effort, lossy).
* TC -> PG: each lossless TC to its own PG (PG = TC), every other TC to PG 0 (the shared lossy PG).
  SONiC's AZURE map also sends TC 7 to PG 7 for its control plane; nothing is classified to TC 7 here.
* TC -> queue: identity for the TCs the scheduler serves (TC 0, the lossless TCs, the CNP TC); every other
  TC -> queue 0, the lossy queue, as NVIDIA RoCE mode maps "other switch priority to traffic class 0". A
  TC whose queue had no scheduler entry would get no bandwidth share under load (SONiC's default reaches
  the same goal the other way, by giving every queue 0-6 a scheduler), so no priority or DSCP ends in an
  unscheduled queue (checked plan-wide by RT239, docs/derivation.md#classification).
* PFC priority -> queue: identity (a pause frame for priority p pauses queue p; only the lossless
  priorities have PFC on, so the other entries never act).
* PFC priority -> PG: lossless priorities only, as ``qos_config.j2`` writes
  ``PFC_PRIORITY_TO_PRIORITY_GROUP_MAP`` (``{"3": "3", "4": "4"}``).
* NIC DSCP -> priority: the same map as DSCP -> TC (TC = priority numbering), written explicitly
  because the mlx5 default (``dscp >> 3``) would put DSCP 26 on priority 3 only by coincidence.
* Schedulers: the CNP queue strict priority; queue 0 (lossy) and the lossless queues DWRR, by default
  50 % / 50 % as NVIDIA RoCE mode prints (``nv show qos roce``: DWRR-50% / DWRR-50% / strict).
* TOS: ``roce_tos = roce_dscp[0] << 2 | 0b10`` (ECT(0), RFC 3168 §5) so switches can ECN-mark RoCE
  data; ``cnp_tos = cnp_dscp << 2`` (CNPs are not ECN-capable).

    >>> from roce_tune.inventory.models import Policy
    >>> c = derive_classification(Policy())
    >>> (c.dscp_to_tc[26], c.dscp_to_tc[48], c.dscp_to_tc[0], c.roce_tos, c.cnp_tos)
    (3, 6, 0, 106, 192)
    >>> c.tc_to_queue
    {0: 0, 1: 0, 2: 0, 3: 3, 4: 0, 5: 0, 6: 6, 7: 0}
"""

from __future__ import annotations

from roce_tune.inventory.models import Policy
from roce_tune.plan import Classification, QueueScheduler, Rationale
from roce_tune.ranges import LOSSY_TC

MAP_NAME = "ROCE"
#: DWRR share of the lossless queue(s) in percent; the rest goes to the lossy queue 0.
DEFAULT_LOSSLESS_WEIGHT_PERCENT = 50
ECT0 = 0b10  # RFC 3168 §5: ECN field 10 = ECT(0)

_S_SONIC = ("sonic-net/sonic-buildimage:files/build_templates/qos_config.j2 (AZURE maps, "
            "docs/derivation.md#classification)")
_S_NVIDIA = "NVIDIA Cumulus/Onyx RoCE mode (docs/derivation.md#classification)"
_S_RFC3168 = ("RFC 3168 §5 (ECN field: 10 = ECT(0)); docs/derivation.md#classification (106 = DSCP 26 + "
              "ECT(0))")


def _check_policy(policy: Policy) -> None:
    """Raise ValueError if the policy cannot give one consistent set of maps."""
    problems = []
    if len(set(policy.lossless_priorities)) != len(policy.lossless_priorities):
        problems.append(f"lossless_priorities {policy.lossless_priorities} has duplicates")
    if len(set(policy.roce_dscp)) != len(policy.roce_dscp):
        problems.append(f"roce_dscp {policy.roce_dscp} has duplicates")
    if policy.cnp_priority in policy.lossless_priorities:
        problems.append(f"cnp_priority {policy.cnp_priority} is also lossless: CNPs must never be paused "
                        "(they are what slows the senders down)")
    if policy.cnp_dscp in policy.roce_dscp:
        problems.append(f"cnp_dscp {policy.cnp_dscp} collides with roce_dscp {policy.roce_dscp}")
    if LOSSY_TC in policy.lossless_priorities:
        problems.append("priority 0 cannot be lossless: every unclassified DSCP maps to TC 0")
    if policy.cnp_priority == LOSSY_TC:
        problems.append("cnp_priority 0 would share the best-effort queue; CNPs need their own strict queue")
    if problems:
        raise ValueError("impossible RoCE policy: " + "; ".join(problems))


def _schedulers(lossless: list[int], cnp_queue: int, lossless_weight: int) -> tuple[list[QueueScheduler], int,
                                                                                    int]:
    """CNP strict, lossless queues share ``lossless_weight`` equally, queue 0 gets the rest."""
    per_queue = lossless_weight // len(lossless)
    lossy_weight = 100 - per_queue * len(lossless)
    out = [QueueScheduler(queue=LOSSY_TC, mode="dwrr", weight_percent=lossy_weight, name="LOSSY_DWRR")]
    out += [QueueScheduler(queue=q, mode="dwrr", weight_percent=per_queue,
                           name="ROCE_DWRR") for q in lossless]
    out.append(QueueScheduler(queue=cnp_queue, mode="strict", weight_percent=None, name="CNP_STRICT"))
    return sorted(out, key=lambda s: s.queue), per_queue, lossy_weight


def _tc_to_queue(lossless: list[int], cnp_priority: int) -> tuple[dict[int, int], set[int]]:
    """TC -> queue over 0..7: the TCs the scheduler serves (TC 0, lossless, CNP) keep their number, every
    other TC goes to the lossy queue 0 (NVIDIA RoCE mode). Returns the map and the served TCs."""
    served = {LOSSY_TC, cnp_priority, *lossless}
    return {tc: (tc if tc in served else LOSSY_TC) for tc in range(8)}, served


def derive_classification(policy: Policy, *,
                          lossless_weight_percent: int = DEFAULT_LOSSLESS_WEIGHT_PERCENT) -> Classification:
    """Derive the site's classification maps from the RoCE policy.

    Args:
        policy: the inventory policy (``lossless_priorities``, ``roce_dscp``, ``cnp_dscp``,
            ``cnp_priority``, ``trust``).
        lossless_weight_percent: DWRR share (percent, 1..99) of the lossless queues together; split
            equally between them (integer division, remainder to the lossy queue). Default 50 =
            NVIDIA RoCE mode.

    Returns:
        Classification with ``dscp_to_tc`` over all 64 DSCPs, TC/priority maps over 0..7,
        ``roce_tos``/``cnp_tos`` (IP TOS bytes) and one Rationale per field.

    Raises:
        ValueError: the CNP priority is lossless, the CNP DSCP is also a RoCE DSCP, duplicate
            priorities/DSCPs, priority 0 lossless or used for CNPs, or a weight outside 1..99.
            Lint reports these too; the tuner refuses rather than emit contradictory maps.
    """
    _check_policy(policy)
    if not 1 <= lossless_weight_percent <= 99 or lossless_weight_percent < len(policy.lossless_priorities):
        raise ValueError(f"lossless_weight_percent {lossless_weight_percent} must be 1..99 and at least one "
                         "percent per lossless queue")
    lossless = sorted(policy.lossless_priorities)
    roce_priority = policy.lossless_priorities[0]
    dscp_to_tc = {d: LOSSY_TC for d in range(64)}
    for i, dscp in enumerate(policy.roce_dscp):
        dscp_to_tc[dscp] = (policy.lossless_priorities[i] if i < len(policy.lossless_priorities)
                            else roce_priority)
    dscp_to_tc[policy.cnp_dscp] = policy.cnp_priority
    tc_to_pg = {tc: (tc if tc in lossless else LOSSY_TC) for tc in range(8)}
    identity = {i: i for i in range(8)}
    tc_to_queue, served = _tc_to_queue(lossless, policy.cnp_priority)
    unserved = sorted(set(range(8)) - served)
    pfc_to_pg = {p: tc_to_pg[p] for p in lossless}
    roce_tos = policy.roce_dscp[0] << 2 | ECT0
    cnp_tos = policy.cnp_dscp << 2
    schedulers, per_queue, lossy_weight = _schedulers(lossless, policy.cnp_priority, lossless_weight_percent)

    roce_pairs = ", ".join(f"{d}->{dscp_to_tc[d]}" for d in policy.roce_dscp)
    why = {
        "trust": Rationale(formula="policy.trust", inputs={"trust": policy.trust}, source=_S_NVIDIA,
                           note="DSCP trust scales over L3 without VLAN tags (Microsoft SIGCOMM'16, "
                           "docs/derivation.md#large-scale-practice)"
                           if policy.trust == "dscp" else "PCP trust: RoCE must be VLAN-tagged with priority "
                           f"{roce_priority}; the DSCP maps are still written for L3 hops"),
        "map_name": Rationale(formula="constant", inputs={"map_name": MAP_NAME}, source=_S_SONIC,
                              note="one map name shared by every table (SONiC uses AZURE for its default)"),
        "dscp_to_tc": Rationale(
            formula="roce_dscp[i] -> lossless_priorities[i] (extra DSCPs -> first lossless priority); "
                    "cnp_dscp -> cnp_priority; all other DSCPs -> TC 0",
            inputs={"roce_dscp": roce_pairs, "cnp_dscp": policy.cnp_dscp,
                    "cnp_priority": policy.cnp_priority},
            source=f"{_S_NVIDIA}; {_S_SONIC}",
            note="unlike SONiC's AZURE map (unlisted DSCPs -> TC 1) every unknown DSCP lands in the lossy TC "
                 "0, so nothing unexpected can enter a lossless queue"),
        "tc_to_pg": Rationale(formula="lossless TC -> PG of the same number; other TCs -> PG 0",
                              inputs={"lossless_priorities": ",".join(map(str, lossless))}, source=_S_SONIC,
                              note="SONiC AZURE also maps TC 7 -> PG 7; no DSCP is classified to TC 7 here"),
        "tc_to_queue": Rationale(
            formula="TC -> queue of the same number if the scheduler serves it (TC 0, lossless TCs, CNP TC); "
                    "every other TC -> queue 0",
            inputs={"served_tcs": ",".join(map(str, sorted(served))),
                    "to_queue_0": ",".join(map(str, unserved))},
            source=f"{_S_NVIDIA} (other switch priorities -> traffic class 0); {_S_SONIC} (every queue a "
                   "TC reaches has a SCHEDULER entry)",
            note="a queue without a scheduler entry gets no bandwidth share under load; nothing is "
                 "classified to these TCs, but PCP-trusted or switch-generated frames may be"),
        "pfc_priority_to_queue": Rationale(formula="identity (queue = priority)", source=_S_SONIC,
                                           note="MAP_PFC_PRIORITY_TO_QUEUE AZURE is the identity; PFC is on "
                                                "only for the lossless priorities, so other entries never "
                                                "pause a queue"),
        "pfc_priority_to_pg": Rationale(formula="lossless priority -> PG of the same number",
                                        inputs={"lossless_priorities": ",".join(map(str, lossless))},
                                        source=f"{_S_SONIC} (PFC_PRIORITY_TO_PRIORITY_GROUP_MAP lists "
                                        "lossless only)"),
        "dscp_to_priority": Rationale(
            formula="same map as dscp_to_tc (TC = priority numbering)", source=f"{_S_NVIDIA}; "
            "docs/derivation.md#host-and-nic (mlnx_qos --trust dscp --dscp2prio)", note="written explicitly: "
                                                                                        "the mlx5 default "
                                                                                        "map is dscp >> 3"),
        "lossless_priorities": Rationale(formula="sorted(policy.lossless_priorities)",
                                         inputs={"lossless_priorities": ",".join(map(str, lossless))},
                                         source=_S_NVIDIA, note="PFC enabled on exactly these priorities"),
        "lossless_queues": Rationale(formula="tc_to_queue[p] for p in lossless_priorities", source=_S_SONIC),
        "lossless_pgs": Rationale(formula="tc_to_pg[p] for p in lossless_priorities", source=_S_SONIC),
        "roce_dscp": Rationale(formula="policy.roce_dscp", inputs={"roce_dscp": ",".join(map(str,
                                                                                             policy.roce_dscp))},
                               source=_S_NVIDIA),
        "roce_priority": Rationale(formula="lossless_priorities[0] (the priority roce_dscp[0] maps to)",
                                   inputs={"roce_priority": roce_priority}, source=_S_NVIDIA),
        "cnp_dscp": Rationale(formula="policy.cnp_dscp", inputs={"cnp_dscp": policy.cnp_dscp},
                              source="mlx5 firmware default CNP_DSCP 48 "
                              "(docs/derivation.md#dcqcn-parameters)"),
        "cnp_priority": Rationale(formula="policy.cnp_priority", inputs={"cnp_priority": policy.cnp_priority},
                                  source="mlx5 firmware default CNP_802P_PRIO 6 "
                                  "(docs/derivation.md#dcqcn-parameters)",
                                  note="never lossless: a paused CNP cannot slow the sender"),
        "cnp_queue": Rationale(formula="tc_to_queue[cnp_priority]", inputs={"cnp_queue": policy.cnp_priority},
                               source=_S_NVIDIA,
                               note="strict priority: CNPs overtake the data they regulate"),
        "roce_tos": Rationale(formula="roce_dscp[0] << 2 | 2 (ECT(0))",
                              inputs={"roce_dscp": policy.roce_dscp[0], "ecn_bits": ECT0,
                                      "roce_tos": roce_tos},
                              source=_S_RFC3168, note="NCCL_IB_TC and cma_roce_tos take this whole TOS byte"),
        "cnp_tos": Rationale(formula="cnp_dscp << 2 (Not-ECT)",
                             inputs={"cnp_dscp": policy.cnp_dscp, "cnp_tos": cnp_tos},
                             source=_S_RFC3168),
        "schedulers": Rationale(
            formula="CNP queue strict; lossless queues DWRR lossless_weight/len(lossless) each; queue 0 DWRR "
                    "rest",
            inputs={"lossless_weight_percent": lossless_weight_percent,
                    "per_lossless_queue_percent": per_queue,
                    "lossy_weight_percent": lossy_weight, "cnp_queue": policy.cnp_priority},
            source=f"{_S_NVIDIA} (TC0 DWRR-50%, TC3 DWRR-50%, TC6 strict)"),
    }
    return Classification(
        trust=policy.trust, map_name=MAP_NAME, dscp_to_tc=dscp_to_tc, tc_to_pg=tc_to_pg,
        tc_to_queue=tc_to_queue,
        pfc_priority_to_queue=dict(identity), pfc_priority_to_pg=pfc_to_pg, dscp_to_priority=dict(dscp_to_tc),
        lossless_priorities=lossless, lossless_queues=[identity[p] for p in lossless],
        lossless_pgs=[tc_to_pg[p] for p in lossless], roce_dscp=list(policy.roce_dscp),
        roce_priority=roce_priority,
        cnp_dscp=policy.cnp_dscp, cnp_priority=policy.cnp_priority, cnp_queue=identity[policy.cnp_priority],
        roce_tos=roce_tos, cnp_tos=cnp_tos, schedulers=schedulers, rationale=why)
