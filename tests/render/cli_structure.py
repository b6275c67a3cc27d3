"""Independent readers of rendered CLI text, for structural checks (they never use the renderers' code).

Each ``parse_<platform>(text)`` rebuilds, from the configuration text alone, what a switch would do per
port: PFC on/off and its no-drop priorities, the queues with ECN marking, the strict-priority queues,
and the DSCP -> egress queue map. :func:`check_lossless_structure` then asserts the RoCE invariants
against the plan's facts, :func:`host_tos` reads the TOS a host script sets, and :func:`assert_golden`
compares files with ``tests/golden/<platform>/<scenario>/``.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field
from pathlib import Path

from roce_tune.plan import Plan, SwitchPlan

GOLDEN = Path(__file__).resolve().parents[1] / "golden"


@dataclass
class PortView:
    """What the configuration text makes of one port."""

    mtu: int | None = None
    pfc_on: bool = False
    pfc_priorities: set[int] = field(default_factory=set)
    ecn_queues: set[int] = field(default_factory=set)
    strict_queues: set[int] = field(default_factory=set)


@dataclass
class SwitchView:
    """Ports by name and the DSCP -> egress queue map of the whole switch."""

    ports: dict[str, PortView]
    dscp_to_queue: dict[int, int]


def _ints(text: str) -> set[int]:
    out: set[int] = set()
    for part in re.split(r"[,\s]+", text.strip()):
        if "-" in part:
            lo, hi = part.split("-")
            out |= set(range(int(lo), int(hi) + 1))
        elif part:
            out.add(int(part))
    return out


# --- EOS ----------------------------------------------------------------------------------------
def parse_eos(text: str) -> SwitchView:
    """Read qos maps, qos profiles (merged across re-entries) and interfaces from EOS CLI."""
    dscp_tc: dict[int, int] = {}
    tc_q = {tc: tc for tc in range(8)}
    prof: dict[str, PortView] = {}
    iface: dict[str, tuple[int | None, str | None]] = {}
    cur_prof = cur_if = None
    cur_q: int | None = None
    for raw in text.splitlines():
        line = raw.rstrip()
        stripped = line.strip()
        if not stripped or stripped.startswith("!"):
            continue
        if not line.startswith(" "):
            cur_prof = cur_if = None
            cur_q = None
            if m := re.match(r"qos map dscp (.+) to traffic-class (\d)$", line):
                for d in _ints(m.group(1)):
                    dscp_tc[d] = int(m.group(2))
            elif m := re.match(r"qos map traffic-class (\d) to tx-queue (\d)$", line):
                tc_q[int(m.group(1))] = int(m.group(2))
            elif m := re.match(r"qos profile (\S+)$", line):
                cur_prof = m.group(1)
                prof.setdefault(cur_prof, PortView())
            elif m := re.match(r"interface (\S+)$", line):
                cur_if = m.group(1)
                iface[cur_if] = (None, None)
            continue
        if cur_prof is not None:
            view = prof[cur_prof]
            if m := re.match(r" {3}(?:uc-)?tx-queue (\d)$", line):
                cur_q = int(m.group(1))
            elif stripped == "priority-flow-control on":
                view.pfc_on = True
            elif m := re.match(r"priority-flow-control priority (\d) no-drop$", stripped):
                view.pfc_priorities.add(int(m.group(1)))
            elif line.startswith("      ") and cur_q is not None:
                if stripped.startswith("random-detect ecn minimum-threshold"):
                    view.ecn_queues.add(cur_q)
                elif stripped == "priority strict":
                    view.strict_queues.add(cur_q)
        elif cur_if is not None:
            mtu, sp = iface[cur_if]
            if m := re.match(r"mtu (\d+)$", stripped):
                mtu = int(m.group(1))
            elif m := re.match(r"service-profile (\S+)$", stripped):
                sp = m.group(1)
            iface[cur_if] = (mtu, sp)
    ports = {}
    for name, (mtu, sp) in iface.items():
        base = prof.get(sp, PortView()) if sp else PortView()
        ports[name] = PortView(mtu, base.pfc_on, set(base.pfc_priorities), set(base.ecn_queues),
                               set(base.strict_queues))
    return SwitchView(ports, {d: tc_q[tc] for d, tc in dscp_tc.items()})


# --- NX-OS --------------------------------------------------------------------------------------
def _nxos_queue(cls: str) -> int:
    m = re.search(r"q(\d|-default)$", cls)
    assert m, cls
    return 0 if m.group(1) == "-default" else int(m.group(1))


def parse_nxos(text: str) -> SwitchView:
    """Read class maps, qos/network-qos/queuing policies (merged across re-entries) and interfaces."""
    class_dscp: dict[str, set[int]] = {}
    qos_set: dict[str, dict[str, int]] = {}
    nq_pause: dict[int, set[int]] = {}
    q_ecn: dict[str, set[int]] = {}
    q_strict: dict[str, set[int]] = {}
    iface: dict[str, dict[str, object]] = {}
    ctx: tuple[str, str] | None = None
    cls: str | None = None
    for raw in text.splitlines():
        line = raw.rstrip()
        s = line.strip()
        if not s or s.startswith("!"):
            continue
        if not line.startswith(" "):
            cls = None
            if m := re.match(r"class-map type qos match-any (\S+)$", line):
                ctx = ("classmap", m.group(1))
            elif m := re.match(r"policy-map type (qos|network-qos|queuing) (\S+)$", line):
                ctx = (m.group(1), m.group(2))
            elif m := re.match(r"interface (\S+)$", line):
                ctx = ("interface", m.group(1))
                iface[m.group(1)] = {"pfc": False, "out": None, "mtu": None}
            else:
                ctx = None
            continue
        if ctx is None:
            continue
        kind, name = ctx
        if kind == "classmap" and (m := re.match(r"match dscp (.+)$", s)):
            class_dscp.setdefault(name, set()).update(_ints(m.group(1)))
        elif kind in ("qos", "network-qos", "queuing") and (m := re.match(r"class (?:type \S+ )?(\S+)$", s)):
            cls = m.group(1)
        elif kind == "qos" and cls and (m := re.match(r"set qos-group (\d)$", s)):
            qos_set.setdefault(name, {})[cls] = int(m.group(1))
        elif kind == "network-qos" and cls and (m := re.match(r"pause pfc-cos (.+)$", s)):
            nq_pause.setdefault(_nxos_queue(cls), set()).update(_ints(m.group(1)))
        elif kind == "queuing" and cls and cls.startswith("c-out-"):
            if s.startswith("random-detect ") and s.endswith(" ecn"):
                q_ecn.setdefault(name, set()).add(_nxos_queue(cls))
            elif s.startswith("priority level"):
                q_strict.setdefault(name, set()).add(_nxos_queue(cls))
        elif kind == "interface":
            if s == "priority-flow-control mode on":
                iface[name]["pfc"] = True
            elif m := re.match(r"service-policy type queuing output (\S+)$", s):
                iface[name]["out"] = m.group(1)
            elif m := re.match(r"mtu (\d+)$", s):
                iface[name]["mtu"] = int(m.group(1))
    dscp_to_queue = {d: 0 for d in range(64)}  # class-default without a set line -> qos-group 0
    for policy in qos_set.values():
        default = policy.get("class-default", 0)
        dscp_to_queue = {d: default for d in range(64)}
        for c, q in policy.items():
            for d in class_dscp.get(c, ()):
                dscp_to_queue[d] = q
    no_drop = {p for ps in nq_pause.values() for p in ps}
    ports = {}
    for n, v in iface.items():
        out = v["out"]
        ports[n] = PortView(v["mtu"], bool(v["pfc"]), set(no_drop) if v["pfc"]
                            else set(),  # type: ignore[arg-type]
                            set(q_ecn.get(out, set())), set(q_strict.get(out,
                                                                         set())))  # type: ignore[arg-type]
    return SwitchView(ports, dscp_to_queue)


# --- Junos --------------------------------------------------------------------------------------
def parse_junos(text: str) -> SwitchView:
    """Read ``set class-of-service`` / ``set interfaces`` lines."""
    fc_queue: dict[str, int] = {}
    fc_prio: dict[str, int] = {}
    no_loss: set[str] = set()
    classifier: dict[int, str] = {}
    cnp_pfc: dict[str, set[int]] = {}
    sched_ecn: set[str] = set()
    sched_drop: set[str] = set()
    sched_strict: set[str] = set()
    smap: dict[str, dict[str, str]] = {}
    if_cnp: dict[str, str] = {}
    if_map: dict[str, str] = {}
    if_mtu: dict[str, int] = {}
    for line in text.splitlines():
        if not line.startswith("set "):
            continue
        if m := re.match(r"set interfaces (\S+) mtu (\d+)$", line):
            if_mtu[m.group(1)] = int(m.group(2))
            continue
        if not line.startswith("set class-of-service "):
            continue
        rest = line[len("set class-of-service "):]
        if m := re.match(r"forwarding-classes class (\S+) queue-num (\d)$", rest):
            fc_queue[m.group(1)] = int(m.group(2))
        elif m := re.match(r"forwarding-classes class (\S+) no-loss$", rest):
            no_loss.add(m.group(1))
        elif m := re.match(r"forwarding-classes class (\S+) pfc-priority (\d)$", rest):
            fc_prio[m.group(1)] = int(m.group(2))
        elif m := re.match(r"classifiers dscp \S+ forwarding-class (\S+) loss-priority \S+ code-points \[ "
                           r"(.+) \]$", rest):
            for cp in m.group(2).split():
                classifier[int(cp, 2)] = m.group(1)
        elif m := re.match(r"congestion-notification-profile (\S+) input dscp code-point ([01]{6}) pfc"
                           r"(?: mru \d+)?$", rest):
            cnp_pfc.setdefault(m.group(1), set()).add(int(m.group(2), 2))
        elif m := re.match(r"schedulers (\S+) explicit-congestion-notification$", rest):
            sched_ecn.add(m.group(1))
        elif m := re.match(r"schedulers (\S+) drop-profile-map .* drop-profile \S+$", rest):
            sched_drop.add(m.group(1))
        elif m := re.match(r"schedulers (\S+) priority strict-high$", rest):
            sched_strict.add(m.group(1))
        elif m := re.match(r"scheduler-maps (\S+) forwarding-class (\S+) scheduler (\S+)$", rest):
            smap.setdefault(m.group(1), {})[m.group(2)] = m.group(3)
        elif m := re.match(r"interfaces (\S+) congestion-notification-profile (\S+)$", rest):
            if_cnp[m.group(1)] = m.group(2)
        elif m := re.match(r"interfaces (\S+) scheduler-map (\S+)$", rest):
            if_map[m.group(1)] = m.group(2)
    dscp_to_queue = {d: fc_queue[fc] for d, fc in classifier.items()}
    ports = {}
    for name in sorted(set(if_mtu) | set(if_cnp) | set(if_map)):
        pfc_dscps = cnp_pfc.get(if_cnp.get(name, ""), set())
        prios = {fc_prio[classifier[d]] for d in pfc_dscps if classifier.get(d) in no_loss
                 and classifier[d] in fc_prio}
        sm = smap.get(if_map.get(name, ""), {})
        ecn = {fc_queue[fc] for fc, s in sm.items() if s in sched_ecn and s in sched_drop}
        strict = {fc_queue[fc] for fc, s in sm.items() if s in sched_strict}
        ports[name] = PortView(if_mtu.get(name), bool(pfc_dscps), prios, ecn, strict)
    return SwitchView(ports, dscp_to_queue)


PARSERS = {"eos": parse_eos, "nxos": parse_nxos, "junos": parse_junos}


# --- invariants ---------------------------------------------------------------------------------
def check_lossless_structure(plan: Plan, sw: SwitchPlan, view: SwitchView) -> None:
    """Every lossless port: PFC on exactly the lossless priorities, ECN and not strict on every lossless
    queue, strict CNP queue; every lossy port: no PFC; RoCE/CNP DSCPs reach the lossless/CNP queues."""
    cls = plan.classification
    lossless_q, lossless_p = set(cls.lossless_queues), set(cls.lossless_priorities)
    for port in sw.ports:
        assert port.name in view.ports, f"{sw.name}:{port.name} missing from the rendered config"
        pv = view.ports[port.name]
        where = f"{sw.platform} {sw.name}:{port.name}"
        assert pv.mtu is not None, f"{where}: no MTU"
        if port.lossless:
            assert pv.pfc_on, f"{where}: lossless port without PFC"
            assert pv.pfc_priorities == lossless_p, f"{where}: PFC on {pv.pfc_priorities}, plan {lossless_p}"
            assert lossless_q <= pv.ecn_queues, (f"{where}: ECN on {pv.ecn_queues}, lossless queues "
                                                 f"{lossless_q}")
            assert cls.cnp_queue in pv.strict_queues, f"{where}: CNP queue {cls.cnp_queue} not strict"
            assert not lossless_q & pv.strict_queues, f"{where}: a lossless queue is strict priority"
        else:
            assert not pv.pfc_on and not pv.pfc_priorities, f"{where}: lossy port has PFC"
        assert pv.pfc_priorities <= lossless_p, (f"{where}: PFC on a lossy priority "
                                                 f"{pv.pfc_priorities - lossless_p}")
    for d in cls.roce_dscp:
        assert view.dscp_to_queue.get(d) in lossless_q, (f"{sw.name}: RoCE DSCP {d} -> queue "
                                                         f"{view.dscp_to_queue.get(d)}")
    assert view.dscp_to_queue.get(cls.cnp_dscp) == cls.cnp_queue, (f"{sw.name}: CNP DSCP {cls.cnp_dscp} "
                                                                   "misrouted")


def host_array(script: str, name: str) -> list[list[str]]:
    """The entries of bash array ``name`` in a host script's data (``NAME=(`` … ``)``; a line may hold
    several), each split into its fields as the shell splits them."""
    m = re.search(rf"^{name}=\(\n(.*?)^\)$", script, re.MULTILINE | re.DOTALL)
    assert m, f"no {name} array in the host script"
    return [shlex.split(word) for ln in m.group(1).splitlines() if not ln.strip().startswith("#")
            for word in shlex.split(ln)]


def host_tos(script: str) -> set[int]:
    """Every TOS a host script gives ``cma_roce_tos -t`` and writes to ``traffic_class`` (the TOS field of
    each ``RT_NICS`` entry, which the shared script's tos section uses for both; ``traffic_class`` is unset
    instead on a host whose data file says ``RT_TCLASS_GLOBAL=0``)."""
    tos = {int(nic[7]) for nic in host_array(script, "RT_NICS")}
    assert tos, "no NIC in the host script"
    assert re.search(r'^\s*(rt_run )?cma_roce_tos -d "\$nic_rdma" -p "\$nic_port" -t "\$nic_tos"', script,
                     re.MULTILINE)
    # the mlx5 global traffic class: the same TOS, or unset where the data file says RT_TCLASS_GLOBAL=0
    assert re.search(r'^\s*tclass="\$nic_tos"\n\s*\(\( RT_TCLASS_GLOBAL \)\) \|\| tclass=-1\n\s*rt_write '
                     r'"\$\{SYSROOT\}/sys/class/infiniband/\$nic_rdma/tc/\$nic_port/traffic_class" '
                     r'"\$tclass"$', script, re.MULTILINE)
    return tos


def lossless_dscps(view: SwitchView, lossless_queues: set[int]) -> set[int]:
    """DSCPs the switch config sends to a lossless queue."""
    return {d for d, q in view.dscp_to_queue.items() if q in lossless_queues}


# --- golden files and the real pipeline: tests/render/golden.py ---------------------------------
from .golden import assert_golden, pipeline_plan, render_platform  # noqa: E402,F401  (re-exported)
