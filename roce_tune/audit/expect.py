"""What the fabric should look like: from a plan (inventory or plan directory) or from site policy
defaults (the inventory's ``policy:`` section, or ``--policy FILE``, or the built-in defaults of
:class:`roce_tune.inventory.models.Policy`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from roce_tune.findings import Finding, Location, RoceTuneError, Severity
from roce_tune.inventory.models import Policy
from roce_tune.platforms import planned_qos
from roce_tune.qos import SwitchQos

if TYPE_CHECKING:
    from roce_tune.inventory.yamlpos import ParseResult
    from roce_tune.plan import Plan

__all__ = ["Expect", "expect_from_plan", "expect_from_policy", "load_expect"]

#: ECT(0) in the two low bits of the IP ToS byte (RFC 3168): ToS = DSCP << 2 | 0b10, e.g. 26 → 106.
ECT0 = 2


@dataclass(frozen=True)
class Expect:
    """Expected RoCE settings. ``source`` says where they came from (``plan``, ``policy FILE`` …).

    MTUs in bytes. ``host_env`` is per host (None = no plan: NCCL variables are not compared).
    ``adaptive_routing`` None = unknown (needs the inventory).
    """

    source: str
    from_plan: bool
    lossless_priorities: tuple[int, ...]
    lossless_queues: tuple[int, ...]
    roce_dscp: tuple[int, ...]
    roce_tos: int
    cnp_priority: int
    host_mtu: int
    switch_mtu: int
    roce_mtu: int
    target_utilisation: float = 0.9
    trust: str = "dscp"  # what the NICs and switches classify by: "dscp" or "pcp"
    adaptive_routing: bool | None = None
    host_env: dict[str, dict[str, str]] | None = None
    host_mtu_by_nic: dict[tuple[str, str], int] = field(default_factory=dict)
    line_rate_gbps: dict[str, float] = field(default_factory=dict)  # host -> NIC speed
    dscp_to_priority: dict[int, int] = field(default_factory=dict)
    #: the DSCP NICs mark their CNPs with (policy ``cnp_dscp``, default 48)
    cnp_dscp: int = 48
    #: (host, netdev) -> the plan NIC's (cnp_dscp, cnp_priority); a NIC not in it expects the fabric's
    nic_cnp: dict[tuple[str, str], tuple[int, int]] = field(default_factory=dict)
    #: (host, netdev) -> the priorities the plan's NIC has PFC on (its ``pfc_vector``); empty without a plan
    nic_pfc: dict[tuple[str, str], tuple[int, ...]] = field(default_factory=dict)
    # (host, netdev) ->
    # "leaf1:Ethernet0"
    nic_switch_port: dict[tuple[str, str], str] = field(default_factory=dict)
    #: switch name -> the plan's :class:`~roce_tune.plan.SwitchPlan` (platform, ASIC, OS release, watchdog)
    switches: dict[str, Any] = field(default_factory=dict)
    #: switch name -> the plan's QoS as its platform's configuration can state it (compared with the
    #: running configuration read back)
    switch_qos: dict[str, SwitchQos] = field(default_factory=dict)

    @property
    def roce_priority(self) -> int:
        """The (first) lossless priority RoCE should ride."""
        return self.lossless_priorities[0]


def expect_from_policy(policy: Policy, source: str) -> Expect:
    """Expectations from a site policy (no plan: queue = priority, the SONiC and Cumulus default map)."""
    return Expect(source=source, from_plan=False, lossless_priorities=tuple(policy.lossless_priorities),
                  lossless_queues=tuple(policy.lossless_priorities), roce_dscp=tuple(policy.roce_dscp),
                  roce_tos=policy.roce_dscp[0] << 2 | ECT0, cnp_priority=policy.cnp_priority,
                  cnp_dscp=policy.cnp_dscp,
                  host_mtu=policy.host_mtu, switch_mtu=policy.mtu, roce_mtu=policy.roce_mtu,
                  target_utilisation=policy.target_utilisation, trust=policy.trust)


def expect_from_plan(plan: Plan, adaptive_routing: bool | None = None) -> Expect:
    """Expectations from a derived :class:`roce_tune.plan.Plan`."""
    cls = plan.classification
    return Expect(source="plan", from_plan=True, lossless_priorities=tuple(cls.lossless_priorities),
                  lossless_queues=tuple(cls.lossless_queues), roce_dscp=tuple(cls.roce_dscp),
                  roce_tos=cls.roce_tos,
                  cnp_priority=cls.cnp_priority, cnp_dscp=cls.cnp_dscp, adaptive_routing=adaptive_routing,
                  trust=cls.trust,
                  dscp_to_priority=dict(cls.dscp_to_priority),
                  **_mtu_expectations(plan), **_host_expectations(plan), **_switch_expectations(plan))


def _plan_nics(plan) -> dict[tuple[str, str], Any]:  # type: ignore[no-untyped-def]
    """(host, netdev) → the plan's NIC, every host of ``plan``."""
    return {(h.name, n.netdev): n for h in plan.hosts for n in h.nics}


def _mtu_expectations(plan) -> dict[str, Any]:  # type: ignore[no-untyped-def]
    """``host_mtu``, ``roce_mtu`` (the smallest of the plan's NICs; 9000 / 4096 without one) and
    ``switch_mtu`` (the smallest lossless switch port; 9216 without one) of :class:`Expect`, in bytes."""
    nics = _plan_nics(plan).values()
    return {"host_mtu": min((n.mtu for n in nics), default=9000),
            "roce_mtu": min((n.roce_mtu for n in nics), default=4096),
            "switch_mtu": min((p.mtu for s in plan.switches for p in s.ports if p.lossless), default=9216)}


def _host_expectations(plan) -> dict[str, Any]:  # type: ignore[no-untyped-def]
    """``host_env``, ``host_mtu_by_nic``, ``line_rate_gbps`` (the host's fastest NIC, hosts with a known
    speed only), ``nic_switch_port``, ``nic_cnp`` and ``nic_pfc`` of :class:`Expect` for every host of
    ``plan``."""
    nics = _plan_nics(plan)
    speeds = {h.name: float(max(getattr(n, "speed_gbps", 0) or 0 for n in h.nics))
              for h in plan.hosts if h.nics}
    return {"host_env": {h.name: dict(h.nccl_env) for h in plan.hosts},
            "host_mtu_by_nic": {k: n.mtu for k, n in nics.items()},
            "line_rate_gbps": {k: v for k, v in speeds.items() if v},
            "nic_switch_port": {k: n.switch_port for k, n in nics.items() if n.switch_port},
            "nic_cnp": {k: (n.cnp_dscp, n.cnp_priority) for k, n in nics.items()},
            "nic_pfc": {k: tuple(p for p, on in enumerate(n.pfc_vector) if on) for k, n in nics.items()}}


def _switch_expectations(plan) -> dict[str, Any]:  # type: ignore[no-untyped-def]
    """``switches`` and ``switch_qos`` of :class:`Expect` for every switch of ``plan``."""
    return {"switches": {s.name: s for s in plan.switches},
            "switch_qos": {s.name: planned_qos(plan, s) for s in plan.switches}}


def _policy_finding(path: Path, msg: str, line: int | None = None, col: int | None = None,
                    fix: str | None = None, where: str | None = None) -> Finding:
    """An RT400 finding about the ``--policy`` file ``path``."""
    return Finding(rule="RT400", severity=Severity.error, message=msg,
                   fix=fix or "give a YAML file with a `policy:` mapping (inventory policy keys)",
                   location=Location(file=str(path), line=line, col=col, path=where))


def _read_policy_yaml(path: Path) -> ParseResult:
    """``path`` parsed as the inventory loader parses (YAML 1.2, positions). Raises RoceTuneError (RT400)."""
    from roce_tune.inventory.loader import parse_yaml
    from roce_tune.inventory.yamlpos import YamlSyntaxError

    try:
        return parse_yaml(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise RoceTuneError([_policy_finding(path, f"cannot read the policy file: {exc.strerror}")]) from None
    except UnicodeDecodeError as exc:
        raise RoceTuneError([_policy_finding(path, f"not UTF-8 text: {exc.reason}")]) from None
    except YamlSyntaxError as exc:
        raise RoceTuneError([_policy_finding(path, f"not YAML: {exc.issue.message}", exc.issue.line,
                                             exc.issue.col)]) from None


def _policy_file(path: Path) -> Policy:
    """The ``policy:`` section of ``path`` (or the whole file when it is a bare policy mapping), read and
    checked as the inventory loader reads an inventory: YAML 1.2, every invalid value a finding at its
    ``file:line:col`` with the loader's message and fix, all reported at once (rule RT400).

    Raises:
        RoceTuneError: RT400 findings (unreadable file, not YAML, no policy mapping, invalid values).
    """
    from pydantic import ValidationError

    from roce_tune.inventory.positions import PositionIndex
    from roce_tune.inventory.validation import schema_findings

    parsed = _read_policy_yaml(path)
    doc = parsed.data
    wrapped = isinstance(doc, dict) and "policy" in doc
    section = doc.get("policy") if wrapped else doc
    if not isinstance(section, dict):
        raise RoceTuneError([_policy_finding(path, "no `policy:` mapping", parsed.root_line,
                                             parsed.root_col)])
    # validated as the file nests it, so the error paths (policy.<key>) match the position index
    data = {"policy": section} if wrapped else section
    found = [_policy_finding(path, i.message, i.line, i.col, i.fix, i.path or None) for i in parsed.issues]
    model: _PolicyDoc | Policy | None = None
    try:
        model = (_PolicyDoc if wrapped else Policy).model_validate(data)
    except ValidationError as exc:
        index = PositionIndex(parsed.root_line, parsed.root_col, parsed.pos)
        found += [_policy_finding(path, f.message, f.location.line, f.location.col, f.fix, f.location.path)
                  for f in schema_findings(exc, data, index, str(path), parsed.bad_paths)]
    if found or model is None:
        raise RoceTuneError(found or [_policy_finding(path, "the policy could not be validated")])
    return model.policy if isinstance(model, _PolicyDoc) else model


class _PolicyDoc(BaseModel):
    """A file with a ``policy:`` section (other top-level keys, as in a whole inventory, are ignored)."""

    policy: Policy


def load_expect(source: Path | None, policy_file: Path | None) -> tuple[Expect, object | None]:
    """Expectations (and the plan, when ``source`` gives one) for an audit.

    ``source`` is an inventory YAML (planned here) or a plan directory (``plan.json``); without it the
    policy comes from ``policy_file`` or the built-in defaults.

    Raises:
        RoceTuneError: the inventory or policy file is invalid (findings name file and line).
        PlanDirError: a plan directory that does not hold one complete plan (a ValueError).
    """
    if source is not None:
        from roce_tune.pipeline import open_source

        src = open_source(source, files=False, inventory=True)
        ar = None
        if src.loaded is not None:
            ar = bool(getattr(getattr(src.loaded.inventory, "site", None), "adaptive_routing", False))
        return expect_from_plan(src.plan, ar), src.plan
    if policy_file is not None:
        return expect_from_policy(_policy_file(policy_file), f"policy {policy_file}"), None
    return expect_from_policy(Policy(), "policy defaults"), None
