"""Platform registry: names -> implementations of the platform contract.

``get_platform("eos")`` returns the module ``roce_tune.platforms.eos``; :func:`platform` returns its
``PLATFORM`` record, which implements :class:`roce_tune.platforms.contract.Platform` (render, read back,
diff, push, counters, capabilities and known defects). Generic engines (deploy, verify, the tuner, audit)
reach platform knowledge only through this registry, never by naming a platform.

Each platform module provides:

* ``SPEC: PlatformSpec`` — data (extension, sections, netmiko type, commit method, show commands);
* ``render(plan: Plan, switch: SwitchPlan) -> dict[str, str]`` — file name -> text for that switch
  (e.g. ``{"leaf1.json": ...}``; Cumulus also ``{"leaf1.nvue.yaml": ...}``);
* ``SECRET_PATTERNS`` — the platform's forms of passwords, hashes, keys and communities in its running
  configuration, masked in every log and restore point (see :func:`secret_patterns`);
* optionally ``render_findings(plan, switch) -> list[Finding]`` — warnings about what the platform's
  syntax changes in the plan (e.g. Junos whole-percent ECN fill levels before Junos OS Evolved 24.4R1, RT241);
* ``PLATFORM`` — the contract record (at the end of the module), with the platform's counter reader
  (``<platform>_counters.py``: show commands and parsers), its Ansible connection and its inventory facts
  (port names that tell it, vendors whose hardware it runs on).

Platform-neutral helpers live beside them (``contract``, ``counters``, ``lldp``, ``base``, ``templating``);
the hardware catalog (:mod:`roce_tune.catalog`) and the name patterns (:mod:`roce_tune.names`) sit below
this package, so it imports neither the inventory nor any engine.

The host module (``host``) provides ``render_host(plan, host) -> dict[str, str]`` and
``render_nccl_env(plan, host) -> str`` instead.
"""

from __future__ import annotations

import importlib
import re
from types import ModuleType
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from roce_tune.findings import Finding
    from roce_tune.plan import Plan, SwitchPlan
    from roce_tune.platforms.contract import Platform
    from roce_tune.qos import SwitchQos

from roce_tune.platforms.base import SecretPattern

SWITCH_PLATFORMS = ("sonic", "cumulus", "eos", "nxos", "junos")
#: the platform of servers (their NICs and NCCL environment)
HOST_PLATFORM = "host"
ALL_PLATFORMS = (*SWITCH_PLATFORMS, HOST_PLATFORM)
#: the switch platform tools assume when nothing tells (an import's switches, synthetic fabrics): SONiC
#: runs on every catalogued vendor's hardware
DEFAULT_SWITCH_PLATFORM = "sonic"


def get_platform(name: str) -> ModuleType:
    """Return the platform module ``roce_tune.platforms.<name>``.

    Raises:
        KeyError: unknown platform (lists the known ones).
    """
    if name not in ALL_PLATFORMS:
        raise KeyError(f"unknown platform {name!r}; known: {', '.join(SWITCH_PLATFORMS)}, {HOST_PLATFORM}")
    return importlib.import_module(f"roce_tune.platforms.{name}")


def secret_patterns(name: str) -> tuple[SecretPattern, ...]:
    """The platform's secret patterns (``SECRET_PATTERNS`` of its module; none for ``host``, whose
    restore points hold only sysfs/driver values).

    Raises:
        KeyError: unknown platform.
    """
    return tuple(getattr(get_platform(name), "SECRET_PATTERNS", ()))


def platform(name: str) -> Platform:
    """The contract implementation of platform ``name`` (its module's ``PLATFORM``).

    Raises:
        KeyError: unknown platform (lists the known ones).
    """
    impl: Platform = get_platform(name).PLATFORM
    return impl


def platform_findings(plan: Plan, switch: SwitchPlan) -> list[Finding]:
    """What a plan must say about ``switch`` on its platform: the platform's render warnings (RT241) and
    every known defect of its platform/ASIC/OS release that affects it (RT251+)."""
    from roce_tune.platforms.contract import known_defect_findings

    impl = platform(switch.platform)
    return [*impl.render_findings(plan, switch), *known_defect_findings(impl, switch)]


#: what a platform's ``check``/``render`` raises when it cannot express a plan (RT240)
CANNOT_EXPRESS: tuple[type[Exception], ...] = (ValueError, KeyError, LookupError)


def _switch_shape(switch: SwitchPlan, port_shapes: dict[int, tuple[object, ...]]) -> tuple[object, ...]:
    """Everything of ``switch`` a platform's ``check`` can refuse, without its identity (name, management
    address, credentials) and the names of its peers: switches of one shape pass or fail together. Shared
    sections count by identity (the tuner and the plan loader give equal sections one object); unequal
    objects only cost a cache miss. ``port_shapes`` holds the ports' part by ``id`` of the port list, for
    switches that share one (``build_plan(findings_only=True)``); the caller keeps the lists alive."""
    ports = switch.ports
    port_shape = port_shapes.get(id(ports))
    if port_shape is None:
        port_shape = port_shapes[id(ports)] = tuple(
            (p.name, p.speed_gbps, p.lanes, p.mtu, p.cable_m, p.admin_up, p.peer is None, p.peer_kind,
             p.direction, p.lossless, tuple(p.pfc_priorities), id(p.headroom), p.ecn_profile, p.fan_in)
            for p in ports)
    return (switch.platform, switch.role, switch.model, switch.asic, switch.os_version, id(switch.buffers),
            tuple(id(e) for e in switch.ecn_profiles), id(switch.watchdog), port_shape)


def switch_findings(plan: Plan) -> tuple[list[Finding], list[Finding]]:
    """What rendering ``plan`` would report about its switches, without rendering: (problems, warnings).

    ``problems`` are RT240 errors, one per switch whose platform cannot express its plan (the platform's
    ``check``, run once per switch shape, see :func:`_switch_shape`; a platform without ``check`` renders);
    ``warnings`` are :func:`platform_findings` of every switch (RT241, RT25x), in plan order. Same findings,
    same order, as :func:`roce_tune.render.outputs.render_outputs` (which raises the problems and drops the
    warnings when there are any).
    """
    problems: list[Finding] = []
    warnings: list[Finding] = []
    passed: set[tuple[object, ...]] = set()
    port_shapes: dict[int, tuple[object, ...]] = {}  # by id of a port list that ``plan`` holds
    for sw in plan.switches:
        impl = platform(sw.platform)
        check = impl.check or impl.render
        shape = _switch_shape(sw, port_shapes)
        try:
            if shape not in passed:
                check(plan, sw)
                passed.add(shape)
            warnings += platform_findings(plan, sw)
        except CANNOT_EXPRESS as exc:
            problems.append(cannot_render_finding(sw, exc))
    return problems, warnings


def cannot_render_finding(switch: SwitchPlan, exc: BaseException) -> Finding:
    """RT240 (error): the platform of ``switch`` cannot express its plan (``exc`` says why; the fix is a
    :class:`~roce_tune.platforms.base.CannotExpress`'s own, else a generic one). A
    :class:`~roce_tune.platforms.base.CannotExpressValue` of a pinned value names the pin's field path
    (``policy.overrides[i].set.<key>``), where the finding is then positioned."""
    from roce_tune.findings import Finding, Location, Severity
    from roce_tune.platforms.base import CannotExpress, CannotExpressValue

    fix = exc.fix if isinstance(exc, CannotExpress) else (
        "check that the platform runs on this switch model, or pin values the platform can express")
    path = None
    if isinstance(exc, CannotExpressValue) and exc.rationale is not None:
        path = exc.rationale.pin_path(exc.key)  # the finding is positioned there (pipeline.locate_findings)
        if path is not None:
            fix = (f"pin {exc.key} at {path} as {switch.platform} can write it, or scope that override away "
                   f"from {switch.name}")
    return Finding(rule="RT240", severity=Severity.error, location=Location(device=switch.name, path=path),
                   message=f"cannot render {switch.name} for {switch.platform} ({switch.model}, "
                   f"{switch.asic}): {exc}", fix=fix)


def full_port_name(platform_name: str, port: str) -> str:
    """``port`` as switch platform ``platform_name`` names it (its
    :attr:`~roce_tune.platforms.contract.InventoryFacts.full_port_name`: ``Et1/1`` -> ``Ethernet1/1`` on
    EOS and NX-OS); unchanged for a platform without one or an unknown platform."""
    if platform_name not in SWITCH_PLATFORMS:
        return port
    expand = platform(platform_name).inventory.full_port_name
    return expand(port) if expand is not None else port


def port_name_hints() -> tuple[tuple[re.Pattern[str], str], ...]:
    """(compiled port-name hint, platform) of every switch platform that has one
    (:attr:`roce_tune.platforms.contract.InventoryFacts.port_name_hint`; the hints are disjoint)."""
    return tuple((re.compile(hint), name) for name in SWITCH_PLATFORMS
                 if (hint := platform(name).inventory.port_name_hint) is not None)


def planned_qos(plan: Plan, switch: SwitchPlan) -> SwitchQos:
    """The plan's QoS for ``switch`` as its platform can state it: the platform module's ``expressible_qos``
    (reached through the registry), else :func:`roce_tune.qos.expected_qos`; port MTUs the platform's
    rendering leaves to the switch are the plan's (a running configuration that states one is compared with
    it). Units as
    :class:`roce_tune.qos.SwitchQos` (bytes, percent). Shared by ``audit`` and ``verify``'s read-back
    (:mod:`roce_tune.verify.as_found`); source: the plan itself.

    Raises:
        nothing of its own: an unknown platform falls back to :func:`roce_tune.qos.expected_qos`.
    """
    from roce_tune.qos import expected_qos

    try:
        fn = getattr(get_platform(switch.platform), "expressible_qos", None)
    except KeyError:
        fn = None
    want: SwitchQos = fn(plan, switch) if fn is not None else expected_qos(plan.classification, switch)
    mtus = {p.name: p.mtu for p in switch.ports}
    ports = {n: p.model_copy(update={"mtu": mtus.get(n)}) if p.mtu is None else p for n,
             p in want.ports.items()}
    return want.model_copy(update={"ports": ports})

