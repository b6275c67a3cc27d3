"""Lint rule registry and the context every rule function receives.

A rule is a small function ``check(ctx) -> Iterable[Finding]`` registered with :func:`rule`: a
stable ID (``RT1xx``), a kebab-case name, a default severity, a one-line title, a paragraph on what
it checks and why, and a *bad* and a *fixed* example inventory. The examples generate
``docs/lint-rules.md`` and are the rule's test fixtures (the bad one must raise the rule at a known
line:col, the fixed one must not raise it).
"""

from __future__ import annotations

import textwrap
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from functools import cached_property

from roce_tune.findings import Finding, Severity
from roce_tune.inventory.catalog import Catalog, CatalogError, SwitchModelSpec
from roce_tune.inventory.loader import LoadedInventory
from roce_tune.inventory.models import Host, Inventory, Nic, Switch
from roce_tune.inventory.topology import PortInfo, Topology

#: L2 bytes a switch port MTU must allow above the host (L3) MTU: Ethernet II header 14 B + FCS 4 B
#: (IEEE 802.3 clause 3.1.1) + one 802.1Q tag 4 B (IEEE 802.1Q clause 9). Vendors differ in whether
#: their "mtu" counts the header; 22 B covers the strictest reading (L2 frame incl. FCS and a tag).
MTU_OVERHEAD_BYTES = 22

#: Smallest host netdev MTU for each RoCE (IB) path MTU. The kernel's ``iboe_get_mtu()``
#: (include/rdma/ib_addr.h) subtracts 96 B of RoCEv2 headers (GRH/IP 40 + UDP 8 + BTH 12 + ext
#: headers 32 + ICRC 4) from the netdev MTU and picks the largest IB MTU that fits, so 4096 needs
#: >= 4192; NVIDIA's guidance rounds this to 4200 for RoCE MTU 4096, which we use (+104 B).
ROCE_MTU_MIN_NETDEV = {256: 360, 512: 616, 1024: 1128, 2048: 2152, 4096: 4200}


@dataclass(frozen=True)
class Rule:
    """A registered lint rule (see module docstring)."""

    id: str
    name: str
    severity: Severity
    title: str
    description: str
    bad: str
    fixed: str
    check: Callable[[LintContext], Iterable[Finding]] = field(repr=False, compare=False)
    needs_catalog: bool = False
    #: the most severe finding the rule may report (None: ``severity``); :meth:`LintContext.finding` refuses
    #: anything above it, so ``lint(min_severity=...)`` can skip rules that cannot reach that severity
    max_severity: Severity | None = None

    @property
    def ceiling(self) -> Severity:
        """The most severe finding this rule can report (``max_severity``, else ``severity``)."""
        return self.max_severity or self.severity


#: severity order (a finding of a higher rank is more severe)
SEVERITY_RANK = {Severity.info: 0, Severity.warning: 1, Severity.error: 2}

RULES: dict[str, Rule] = {}


def rule(rule_id: str, name: str, severity: Severity, title: str, description: str, bad: str, fixed: str,
         needs_catalog: bool = False, max_severity: Severity | None = None
         ) -> Callable[[Callable[[LintContext], Iterable[Finding]]],
                       Callable[[LintContext], Iterable[Finding]]]:
    """Register ``check`` as rule ``rule_id``; examples are dedented so they can be indented in code.
    ``max_severity``: the most severe finding ``check`` reports when it overrides ``severity`` upwards
    (``LintContext.finding(severity=...)``); None = never above ``severity``."""

    def deco(check: Callable[[LintContext], Iterable[Finding]]) -> Callable[[LintContext], Iterable[Finding]]:
        if rule_id in RULES:
            raise ValueError(f"lint rule {rule_id} registered twice")
        RULES[rule_id] = Rule(rule_id, name, severity, title, " ".join(description.split()),
                              textwrap.dedent(bad).lstrip("\n"), textwrap.dedent(fixed).lstrip("\n"),
                              check, needs_catalog, max_severity)
        return check

    return deco


class LintContext:
    """What a rule sees: the loaded file, the model, the resolved topology and the catalog.

    ``finding()`` builds a :class:`Finding` located at a field path (value, or key with ``key=True``).
    """

    def __init__(self, loaded: LoadedInventory, topo: Topology, catalog: Catalog | None):
        self.loaded = loaded
        self.inv: Inventory = loaded.inventory
        self.topo = topo
        self.catalog = catalog
        self.rule_id = ""

    def finding(self, message: str, fix: str, path: str, *, key: bool = False, device: str | None = None,
                port: str | None = None, severity: Severity | None = None) -> Finding:
        """A finding of the running rule at ``path`` (nearest recorded ancestor if ``path`` is absent).

        Raises:
            ValueError: ``severity`` is above the rule's declared ceiling (:attr:`Rule.ceiling`).
        """
        r = RULES[self.rule_id]
        if severity is not None and SEVERITY_RANK[severity] > SEVERITY_RANK[r.ceiling]:
            raise ValueError(f"lint rule {r.id} reports {severity.value}, above its declared maximum "
                             f"{r.ceiling.value} (give the rule max_severity)")
        return Finding(rule=self.rule_id, severity=severity or r.severity, message=message,
                       fix=fix, location=self.loaded.locate(path, key=key, device=device, port=port))

    def line_of(self, path: str) -> int:
        """Line of ``path`` (for messages like "first declared at line 12")."""
        return self.loaded.locate(path).line or 0

    def explicit(self, path: str) -> bool:
        """True if ``path`` was written in the file (not a default)."""
        return path in self.loaded.positions

    # --- shared indexes (built once per lint run) ------------------------------------------------
    @cached_property
    def switch_path(self) -> dict[str, str]:
        """Switch name -> ``switches[i]`` of its first declaration."""
        out: dict[str, str] = {}
        for i, sw in enumerate(self.inv.switches):
            out.setdefault(sw.name, f"switches[{i}]")
        return out

    @cached_property
    def host_names(self) -> set[str]:
        """Names of the inventory's hosts."""
        return self.topo.host_names

    @cached_property
    def ports_by_switch(self) -> dict[str, int]:
        """Switch -> number of declared (expanded) ports."""
        return {sw: len(infos) for sw, infos in self.topo.ports_by_switch.items()}

    def nics(self) -> Iterator[tuple[str, Host, Nic]]:
        """(``hosts[i].nics[j]``, host, nic) for every NIC (the topology's list, built once: several rules
        walk the 32k NICs of a 4,096-host fabric)."""
        return iter(self.topo.nics)

    def nic_ports(self) -> Iterator[tuple[tuple[str, Host, Nic], PortInfo | None]]:
        """((``hosts[i].nics[j]``, host, nic), the declared switch port its ``switch_port`` names or None)
        for every NIC, in file order."""
        return zip(self.topo.nics, self.topo.nic_ports)

    @cached_property
    def switch_specs(self) -> dict[str, SwitchModelSpec | None]:
        """Switch model (as written) -> its catalog entry, None when the catalog does not know it or there is
        no catalog; one lookup per distinct model."""
        out: dict[str, SwitchModelSpec | None] = {}
        for sw in self.inv.switches:
            if sw.model not in out:
                try:
                    out[sw.model] = self.catalog.switch_model(sw.model) if self.catalog else None
                except CatalogError:
                    out[sw.model] = None
        return out

    def switches(self) -> Iterator[tuple[str, Switch]]:
        """(``switches[i]``, switch) for every switch."""
        for si, sw in enumerate(self.inv.switches):
            yield f"switches[{si}]", sw

    def host_mtu(self, host: Host, nic: Nic) -> int:
        """Effective netdev MTU: nic.mtu, else host.mtu, else policy.host_mtu."""
        return nic.mtu or host.mtu or self.inv.policy.host_mtu

    def port_mtu(self, switch: str, port: str) -> int:
        """Effective switch port MTU: the port's mtu, else policy.mtu."""
        info = self.topo.port(switch, port)
        return (info.mtu if info and info.mtu else None) or self.inv.policy.mtu
