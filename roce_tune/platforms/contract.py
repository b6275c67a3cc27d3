"""The platform contract: what every platform module under ``roce_tune/platforms/`` provides.

One :class:`Platform` per platform (Nornir plugin style: a ``typing.Protocol``, implemented by the frozen
:class:`PlatformImpl` each module builds at its end as ``PLATFORM``). Everything a generic engine needs to
know about a platform is here, as data or a small function, so that no module outside
``roce_tune/platforms/`` names a platform (tests/test_architecture.py):

* render: plan -> files (``render``), platform warnings about the plan (``render_findings``), and whether
  the platform can express a switch's plan at all without rendering text (``check``: lint's RT240);
* read back: running configuration text -> :class:`roce_tune.qos.SwitchQos` (``read_back``);
* diff: :class:`DiffRules` for the generic hier/set/json engines in :mod:`roce_tune.deploy.diff`;
* push: :class:`PushMethod` (netmiko device type, read-running command, error pattern, the safe-commit steps
  and their rollback, the save command and its success pattern, what reverts on timeout);
* counters: :class:`CounterReader` (show commands and their parser);
* Ansible: :class:`AnsibleConnection` (connection plugin, network OS, become, extra files);
* inventory: :class:`InventoryFacts` (port names that tell the platform, vendors whose hardware it runs on);
* capabilities: :class:`Capabilities` (knobs it can express, OS releases it knows, known defects).

Platform quirks are frozen data (hier_config style), not ``if platform == …`` branches. This module
imports nothing from deploy, verify, render or the tuner (no package cycle).
"""

from __future__ import annotations

import fnmatch
import importlib
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, NoReturn, Protocol

from roce_tune.findings import Finding, Location, Severity
from roce_tune.platforms.base import PlatformSpec
from roce_tune.platforms.checkpoints import CheckpointCommands

if TYPE_CHECKING:
    from roce_tune.plan import Plan, SwitchPlan
    from roce_tune.platforms.counters import CounterReading
    from roce_tune.qos import SwitchQos

#: Names of the ECN profiles roce-tune creates (``ROCE_LOSSLESS_<speed>G_N<ports>`` plus ``_V<n>`` when
#: values differ and ``_PIN`` for pinned values); deploy removes stale ones only when they match this.
OWN_NAME_RE = r"ROCE_LOSSLESS_\d+G_N\d+(?:_V\d+|_PIN)*"
#: disruptive-change reason shared by every platform that turns PFC on per port
PFC_ON = "enabling PFC on a port briefly stops traffic on it while the ASIC reprograms"


class HierPlatformName:
    """Names of the ``hier_config.Platform`` members platforms diff with (:attr:`DiffRules.hier_platform`).

    Names, not the enum: importing hier_config costs ~0.08 s, and every command that reads a platform's
    data (lint, explain, plan) would pay it; only the diff (:mod:`roce_tune.deploy.diff`) loads it and
    turns the name into the member (``hier_config.Platform[name]``).
    """

    ARISTA_EOS = "ARISTA_EOS"
    CISCO_NXOS = "CISCO_NXOS"


@dataclass(frozen=True)
class DiffRules:
    """Platform data for diffing (consumed by :mod:`roce_tune.deploy.diff`).

    Attributes:
        kind: ``hier`` / ``set`` / ``json``.
        hier_platform: name of the ``hier_config.Platform`` member for ``hier`` (:class:`HierPlatformName`).
        owned_sections: regexes of top-level sections whose children roce-tune owns entirely.
        owned_roots: line prefixes (``set`` kind) under which desired lines are authoritative.
        owned_lines: ``set`` only: regexes (matched at the line start) of further lines that are
            authoritative like ``owned_roots``, for owned statements below a varying name (NVUE
            ``nv set interface <swp> qos …``).
        negate: how a ``set`` line is removed: (prefix to strip, replacement), e.g. ("set ", "delete ").
        disruptive: (regex on an added/removed diff line or patch path, reason).
        idempotent: ``hier`` only: command paths (one line prefix per level, outermost first) where the
            device replaces the old value when a new one is entered, so the remediation sets the new
            value instead of negating the old one first (hier-config's idempotent-command rules; a
            ``no mtu 1500`` before ``mtu 9216`` would drop jumbo frames on a live class in between).
        keyed: ``hier`` only: regexes of top-level lines that set one value per key, with named groups
            ``keys`` (ids: spaces, commas or ranges) and ``value`` (e.g. EOS ``qos map dscp 24 26 to
            traffic-class 3``): the device holds one value per key, so a desired line replaces that key on
            every running line of the same regex, and the diff compares key by key (``- old`` line, ``+`` the
            old line's other keys, ``+`` new line) instead of line by line.
        stale: objects roce-tune created under its own names and removes once the desired config no longer
            has them (an ECN profile of old values): ``hier``: regexes of whole top-level sections;
            ``json``: (table, regex of the row key). ``set`` platforms need none (their owned roots are
            authoritative). Never a pattern that matches a name roce-tune did not give.
        keep_lines: ``set`` only: running and desired texts are reduced to the lines this returns before
            diffing (e.g. only ``nv …`` lines of an NVUE script); None keeps every line.
        parse_running: ``json`` only: running-config output -> the database dict to diff against.
        overlaps: ``json`` only: (running database, desired database, managed ports) -> (table, running key,
            desired key) for every running row of a managed port that names some of the same ids as a
            desired row (a PG or queue range) without being the same key; each such row is removed and the
            diff says which desired key it overlaps. None: no such key form.
        owned_fields: ``json`` only: (table, fields) roce-tune owns in every row of ``table`` it writes: a
            live row's field that the desired row leaves out is removed (e.g. a SKU's ``pfc_enable`` on a
            port the plan makes lossy); other fields the desired row leaves out are not compared.
        port_rows: ``json`` only: tables whose row key is a bare port name (SONiC ``PFC_WD|Ethernet0``): a
            managed port's row that the desired table lacks is removed, as a per-port key (``Ethernet0|3``)
            of a managed port is. Compared only when the desired file has the table (e.g. a ``GLOBAL`` row).
    """

    kind: str
    hier_platform: str | None = None
    indent: int = 2
    owned_sections: tuple[str, ...] = ()
    owned_roots: tuple[str, ...] = ()
    owned_lines: tuple[str, ...] = ()
    negate: tuple[str, str] = ("", "")
    disruptive: tuple[tuple[str, str], ...] = ()
    idempotent: tuple[tuple[str, ...], ...] = ()
    keyed: tuple[str, ...] = ()
    stale: tuple = ()  # type: ignore[type-arg]  # tuple[str, ...] (hier) or tuple[tuple[str, str], ...] (json)
    keep_lines: Callable[[str], str] | None = None
    parse_running: Callable[[str], dict[str, Any]] | None = None
    overlaps: Callable[[dict[str, Any], dict[str, Any], set[str]], list[tuple[str, str, str]]] | None = None
    owned_fields: tuple[tuple[str, tuple[str, ...]], ...] = ()
    port_rows: tuple[str, ...] = ()


class PushKnobs(Protocol):
    """The push options a platform's steps read (:class:`roce_tune.deploy.drivers.PushOptions`)."""

    confirm_s: int
    tag: str
    keep_checkpoints: int


#: the ``progress`` key a platform's push sets to True just before the first command that changes the device
#: (a checkpoint, an upload or an uncommitted candidate change nothing): a failed push without it changed
#: nothing and has nothing to roll back (:meth:`roce_tune.deploy.drivers.Driver.change_sent`)
CHANGE_SENT = "change_sent"


class PushSession(Protocol):
    """What a platform's push/rollback steps may do on a device (implemented by
    :class:`roce_tune.deploy.drivers.Driver`): every call is a stop boundary unless it says otherwise, and
    every failure raises the driver's ``PushError`` (so the driver's generic path rolls back)."""

    conn: Any
    #: the device's name in the plan (for messages; empty when the session does not know it)
    device: str
    #: the running configuration the session's last read returned (during a push: the one the change was
    #: computed from; empty before the first read)
    running: str

    @property
    def opts(self) -> PushKnobs:  # read-only here, so Driver's PushOptions satisfies it
        """The push knobs (timeouts in seconds, confirm window) this session runs with."""
        ...
    progress: dict[str, Any]

    def cmd(self, command: str, stage: str = "read", expect_string: str | None = None,
            boundary: bool = True) -> str:
        """Send one exec-mode command and return its output; a stop boundary unless ``boundary`` is False.

        Raises:
            netmiko.ReadTimeout: no prompt within the stage's read timeout; SessionDropped: session closed;
            Interrupted: a stop was requested before the command was sent.
        """
        ...

    def check(self, output: str, stage: str, commands: list[str] | None = None) -> str:
        """Return ``output``; raise PushError(stage) naming the device's error line and the rejected
        command."""
        ...

    def fail(self, stage: str, message: str) -> NoReturn:
        """Raise the driver's PushError(``stage``) with ``message`` (a step that found the device in a state
        it must not act on)."""
        ...

    def refuse_rollback(self, message: str) -> NoReturn:
        """Refuse a rollback that would discard more than the push's change (``message``: what and why); the
        device is left as is, the report says so and no new session retries it."""
        ...

    def config_set(self, lines: list[str], mode_cmd: str) -> str:
        """Enter config mode with ``mode_cmd``, send ``lines`` one at a time and return the output.

        Raises:
            PushError: the device rejected a line; Interrupted: a stop was requested between two lines.
        """
        ...

    def commit_checked(self, command: str, stage: str = "commit") -> str:
        """Send a commit that must print the platform's :attr:`PushMethod.commit_success`."""
        ...

    def verify(self, desired: str, managed_ports: set[str]) -> None:
        """Read the running configuration back.

        Raises:
            PushError: stage ``"verify"`` unless it includes ``desired`` on ``managed_ports``.
        """
        ...

    def confirmed(self, desired: str | None = None, managed_ports: set[str] | None = None) -> None:
        """Raise PushError("confirm") if a confirmation is still pending or, with ``desired``, if lines of
        ``desired`` are not active after the confirm (the device's timer ran out before it)."""
        ...

    def missing(self, desired: str, managed_ports: set[str]) -> list[str]:
        """Read the running configuration: the change commands it still needs to include ``desired``."""
        ...

    def confirm(self, command: str, desired: str, managed_ports: set[str],
                expect_string: str | None = None) -> str:
        """Send the confirm ``command`` and prove the change is active and final (:meth:`confirmed`); a
        confirm the device rejects because its window ran out is reported as that."""
        ...

    def change_active(self, progress: dict[str, Any]) -> bool:
        """Read the running configuration: True if any command of the change the push recorded in
        ``progress`` is active (a rollback undoes only what is active)."""
        ...

    def undo_active(self, progress: dict[str, Any], undo: Callable[[], object], rolled_back: str,
                    not_active: str) -> None:
        """Run ``undo`` only while some of the recorded change is active; ``progress["rollback_outcome"]``
        says which (``rolled_back`` / ``not_active``); PushError("rollback") if still active after it."""
        ...

    def boundary(self, command: str) -> None:
        """Stop point before ``command``.

        Raises:
            Interrupted: a stop was requested while the push may still roll back.
        """
        ...

    def timeout(self, stage: str) -> float:
        """Read timeout in seconds for a command of ``stage`` (longer for commit/save/rollback)."""
        ...

    def warn(self, message: str) -> None:
        """Record a warning for the apply report (a housekeeping step that failed after the change was
        final: it never fails the push nor rolls it back). ``message`` names the command and what failed."""
        ...

    def upload(self, path: str, content: str) -> None:
        """Write ``content`` (text) to ``path`` on a Linux-based device, in chunks of bounded bytes.

        Raises:
            Interrupted: a stop was requested before a chunk was sent; netmiko.ReadTimeout, SessionDropped:
            as :meth:`cmd`.
        """
        ...


#: a platform's push steps: (session, change commands, change JSON patch, desired text, managed ports)
PushSteps = Callable[[PushSession, list[str], list[dict[str, Any]], str, set[str]], None]
#: a platform's rollback: (session, progress recorded by the push)
RollbackSteps = Callable[[PushSession, dict[str, Any]], None]
#: housekeeping after a push that succeeded (read back, saved or not): (session, progress); the driver turns
#: any exception into a warning, so it never fails the push
CleanupSteps = Callable[[PushSession, dict[str, Any]], None]
#: what an abandoned device is left in: (progress, tag, confirm window s) -> text, None = nothing changed
LeftAsIs = Callable[[dict[str, Any], str, int], "str | None"]
#: what the device did when its confirm window ran out, in its terms: (tag, confirm window s) -> text
Expired = Callable[[str, int], str]


@dataclass(frozen=True)
class PushMethod:
    """How deploy moves a desired configuration onto a device of this platform.

    Attributes:
        netmiko_device_type: netmiko driver name.
        read_running: command that prints the relevant running configuration (None: hosts, judged by script).
        error_pattern: regex of a line the platform prints for a rejected command.
        push: the safe-commit steps (None: the host-script mechanism in the driver).
        rollback: undo a partial push from its progress (works on a fresh session too).
        left_as_is: what an abandoned device is left in and the command that puts it back.
        confirm_check: after confirming: (command, regex meaning "still waiting for confirmation");
            None: the platform has no commit-confirm, so nothing reverts by itself on a timeout.
        expired: what the device did by itself when its confirm window ran out before the confirm, in the
            platform's words, naming the command that set the window (``PushSession.confirmed`` reports it
            when the change is not active after the confirm).
        save: (command, regex its success prints); None: no separate save (a Junos commit saves).
        save_expect: prompt regex the save command waits for (None: netmiko's prompt detection).
        commit_success: (regex, text shown when missing) a checked commit must print
            (:meth:`PushSession.commit_checked`).
        desired_file: the rendered file deploy pushes, inside ``switches/`` (``{name}`` = switch name).
        enable_secret: netmiko needs the login password as the enable/sudo secret.
        linux_shell: the CLI is a Linux shell (several commands can share one line).
        restore_point: the push is a script that writes its own restore point first (hosts).
        preflight: (running-config text, desired text, the plan's speed of each port in Mb/s or None when
            the caller has only the files) -> why this device must not be changed at all (e.g. a setting
            the device only takes at boot contradicts the plan, or a port runs at another speed than its
            planned headroom is for), or None. Deploy calls it after reading the running configuration and
            before any diff or push, dry runs included.
        probe: (run: read-only command -> its output) -> why this device cannot be changed by this push
            method at all (a command every push needs that the image lacks), or None. Deploy calls it after
            ``preflight`` passed, before any diff or push, dry runs included; ``run`` logs each command.
        confirm_window: (``--confirm-seconds`` value, s) -> what the platform's commit-confirm gets
            instead when it cannot take that window as given (Junos counts whole minutes), or None when it
            takes it as is; apply shows it before any device is touched and logs it with each push.
        checkpoints: how the platform lists and deletes its checkpoints and how many it keeps
            (:class:`roce_tune.platforms.checkpoints.CheckpointCommands`), for retention; None: it takes none.
        cleanup: housekeeping the driver runs after a push that succeeded and after its save (deleting
            roce-tune's older checkpoints, an uploaded file); its failures are warnings
            (:meth:`PushSession.warn`), never a failed push or a rollback. None: nothing to clean.

    A push records in ``progress`` what the apply report shows: ``rollback_point`` (the checkpoint this
    push took and the command that returns the device to it) and ``pruned`` (checkpoints it deleted).
    """

    netmiko_device_type: str
    error_pattern: str
    read_running: str | None = None
    push: PushSteps | None = None
    rollback: RollbackSteps | None = None
    left_as_is: LeftAsIs | None = None
    confirm_check: tuple[str, str] | None = None
    expired: Expired | None = None
    save: tuple[str, str] | None = None
    save_expect: str | None = None
    commit_success: tuple[str, str] | None = None
    desired_file: str | None = None
    enable_secret: bool = False
    linux_shell: bool = False
    restore_point: bool = False
    preflight: Callable[[str, str, Mapping[str, int] | None], str | None] | None = None
    probe: Callable[[Callable[[str], str]], str | None] | None = None
    confirm_window: Callable[[int], str | None] | None = None
    cleanup: CleanupSteps | None = None
    checkpoints: CheckpointCommands | None = None

    def refusal(self, running: str, desired: str, run: Callable[[str], str],
                port_speeds_mbps: Mapping[str, int] | None = None) -> str | None:
        """Why this device must not be changed at all, or None: :attr:`preflight` of ``running`` (the
        running-config text) against ``desired`` (the rendered file) and ``port_speeds_mbps`` (the plan's
        speed of each port, Mb/s; None: only the files are known), then, if that passed, :attr:`probe`
        with ``run`` (one read-only command -> its output). ``roce-tune apply`` and the Ansible playbooks
        (filter ``roce_tune_preflight``) both ask this, before any diff or write, dry runs included.

        Raises whatever ``preflight`` raises for an unreadable config (ValueError) and ``run`` for a failed
        command."""
        refused = (self.preflight(running, desired, port_speeds_mbps) if self.preflight is not None
                   else None)
        if not refused and self.probe is not None:
            refused = self.probe(run)
        return refused


@dataclass(frozen=True)
class KnownDefect:
    """One published defect of a platform release/ASIC that changes what a plan can rely on.

    Attributes:
        rule: finding ID (``RT251`` …).
        title: one line, what goes wrong.
        asics: catalog ASIC ids (``tomahawk-5``) affected; empty = any ASIC.
        os_releases: globs on the switch's ``os_version`` known to be affected; empty = every release
            (the source names no fixed release).
        needs_watchdog: only relevant where the plan enables the PFC watchdog.
        fix: what the operator should do or watch.
        source: public URL of the report.
        severity: of the finding a plan carries for an affected switch.
    """

    rule: str
    title: str
    fix: str
    source: str
    asics: tuple[str, ...] = ()
    os_releases: tuple[str, ...] = ()
    needs_watchdog: bool = False
    severity: Severity = Severity.warning

    def affects(self, switch: SwitchPlan) -> bool:
        """Whether ``switch`` (ASIC, OS release, watchdog) is in the defect's scope."""
        if self.asics and switch.asic not in self.asics:
            return False
        if self.os_releases and switch.os_version is not None and not any(
                fnmatch.fnmatchcase(switch.os_version, g) for g in self.os_releases):
            return False
        return switch.watchdog.enabled or not self.needs_watchdog

    def finding(self, switch: SwitchPlan) -> Finding:
        """The finding a plan carries for an affected ``switch``."""
        return Finding(rule=self.rule, severity=self.severity, location=Location(device=switch.name),
                       message=f"{switch.name} ({switch.asic}, {switch.os_version or 'release not given'}): "
                               f"{self.title} ({self.source})", fix=self.fix)


@dataclass(frozen=True)
class BufferModels:
    """Which buffer-management models a platform runs per ASIC family (SONiC ``DEVICE_METADATA|localhost.
    buffer_model``), and which one a switch gets when the inventory does not say.

    Attributes:
        by_family: (ASIC family glob, models the platform supports there, first = its default), first
            matching row wins.
        source: public source of the defaults and of the support matrix.
    """

    by_family: tuple[tuple[str, tuple[str, ...]], ...]
    source: str

    def supported(self, family: str) -> tuple[str, ...]:
        """Models supported on ASIC ``family`` (first = default); ``()`` when no row matches."""
        return next((models for glob, models in self.by_family if fnmatch.fnmatchcase(family, glob)), ())

    def resolve(self, family: str, requested: str | None) -> tuple[str | None, str]:
        """``(model, why)``: ``requested`` (the inventory's ``buffer_model``) when given, else the default
        for ``family``; ``(None, why)`` when the family has no row.

        >>> BufferModels((("spectrum", ("dynamic", "traditional")), ("*", ("traditional",))), "src").resolve(
        ...     "tomahawk", None)
        ('traditional', 'default for tomahawk ASICs (src)')
        """
        if requested is not None:
            return requested, "inventory buffer_model"
        models = self.supported(family)
        return (models[0], f"default for {family} ASICs ({self.source})") if models else (None, "")


@dataclass(frozen=True)
class Capabilities:
    """What a platform can express and what is known to be broken.

    Attributes:
        knobs: plan sections the platform's syntax carries (``pfc``, ``ecn``, ``headroom`` …).
        os_releases: OS releases the syntax was checked against (globs).
        known_defects: :class:`KnownDefect` rows (platform/ASIC/OS release -> finding, public source).
        watchdog_note: how the platform expresses the PFC watchdog (note on the tuner's rationale).
        watchdog_fixed_ms: vendor default timers (``poll_ms``, ``detection_ms``, ``restoration_ms``) the
            tuner uses instead of the SONiC scaling; empty = the scaling.
        watchdog_fixed_source: public source of :attr:`watchdog_fixed_ms`.
        watchdog_fixed_formula: the rationale's formula for :attr:`watchdog_fixed_ms`.
        watchdog_poll_half: (source suffix, note) when the polling interval must be at most half the
            shorter of detection and restoration (the platform substitutes its own otherwise); None: no
            such rule.
        buffer_models: the platform's buffer-management models (:class:`BufferModels`); None: the
            platform has no such choice (an inventory ``buffer_model`` on it is a lint error).
    """

    knobs: tuple[str, ...] = ()
    os_releases: tuple[str, ...] = ()
    known_defects: tuple[KnownDefect, ...] = ()
    watchdog_note: str = ""
    watchdog_fixed_ms: tuple[tuple[str, int], ...] = ()
    watchdog_fixed_source: str = ""
    watchdog_fixed_formula: str = "vendor default"
    watchdog_poll_half: tuple[str, str] | None = None
    buffer_models: BufferModels | None = None


@dataclass(frozen=True)
class CounterReader:
    """Which show commands give a switch's counters and how to parse them (one ``<platform>_counters``
    module per platform; names of the counters in :mod:`roce_tune.platforms.counters`).

    Attributes:
        commands: switch plan -> commands to run, in order (empty = nothing to read on this switch).
        parse: (switch plan, {command: output}) -> :class:`~roce_tune.platforms.counters.CounterReading`
            (per-port counters, families the output did not carry, parse errors).
        one_shell_line: the CLI is a Linux shell that runs every command in one round trip (each output
            preceded by a marker line the reader splits on).
    """

    commands: Callable[[SwitchPlan], list[str]]
    parse: Callable[[SwitchPlan, dict[str, str]], CounterReading]
    one_shell_line: bool = False


@dataclass(frozen=True)
class AnsibleConnection:
    """How the Ansible playbooks reach a device of this platform (``roce-tune ansible-inventory``).

    Attributes:
        group_vars: variables of the platform's group: connection plugin, network OS (FQCN, as the
            community collections want it), become/enable.
        extra_files: (host variable, file inside ``switches/``; ``{name}`` = device name) of rendered files
            the playbooks read besides the pushed one (e.g. the NVUE YAML next to the NVUE script).
        alternatives: connection choice -> group variables it overrides (e.g. ``netconf`` for the Junos
            ``junos_config`` path); a choice the platform does not list leaves its group variables as they
            are.
        source: collection documentation the choices were checked against.
    """

    group_vars: dict[str, Any]
    extra_files: tuple[tuple[str, str], ...] = ()
    alternatives: dict[str, dict[str, Any]] = field(default_factory=dict)
    source: str = ""


#: the connection plugin of CLI network devices (ansible.netcommon)
NETWORK_CLI = "ansible.netcommon.network_cli"
#: a plain SSH connection (Linux-based network OS, GPU hosts)
PLAIN_SSH = "ansible.builtin.ssh"


@dataclass(frozen=True)
class InventoryFacts:
    """What the inventory tools (import, lint) know of a switch platform.

    Attributes:
        port_name_hint: regex (``re.match``) of front-panel port names only this platform uses; an import
            that is not told a switch's platform guesses it from them. Hints of different platforms are
            disjoint (tests/platforms). None: the names tell nothing.
        vendors: switch vendors (catalog ``vendor``) whose hardware the OS runs on; None: any catalogued
            model (lint RT125).
        mgmt_port: regex (``re.fullmatch``) of the out-of-band management ports; LLDP neighbours seen on
            them are the management network, not fabric cabling (import lldp and lint --lldp skip them).
            None: no such names.
        full_port_name: a front-panel port name as the platform's configuration spells it, from the CLI
            abbreviations people write in cabling plans (EOS/NX-OS ``Et1/1``, ``Eth1/1``, ``eth1/1`` ->
            ``Ethernet1/1``); other names unchanged. None: names are used as written.
        physical_port: regex (``re.fullmatch``, on the name after ``full_port_name``) of every name a
            physical front-panel port (breakouts included) has on the platform; a name outside it (a logical
            unit or subinterface ``et-0/0/0.0``/``swp1.100``, a LAG, a management port) would get port-level
            settings (MTU, PFC, buffers, ECN) written where they do not belong (lint RT139). None: not
            checked.
        physical_port_examples: physical port names of the platform's shapes, for the lint fix hint.
        internal_port: regex (``re.fullmatch``) of ports inside the switch (a multi-ASIC SONiC box's backplane
            and inband ports): LLDP neighbours seen on them are the box's own ASICs or linecards, not fabric
            cabling (import lldp and lint --lldp skip them). None: no such names.
    """

    port_name_hint: str | None = None
    vendors: frozenset[str] | None = None
    mgmt_port: str | None = None
    full_port_name: Callable[[str], str] | None = None
    physical_port: str | None = None
    physical_port_examples: tuple[str, ...] = ()
    internal_port: str | None = None


class Platform(Protocol):
    """The contract every platform implements (one module each under ``roce_tune/platforms/``)."""

    @property
    def name(self) -> str:
        """The platform's inventory name (``switches[].platform`` / host platform value)."""
        ...

    @property
    def spec(self) -> PlatformSpec:
        """The platform's static facts (:class:`PlatformSpec`)."""
        ...

    @property
    def render(self) -> Callable[[Plan, Any], dict[str, str]]:
        """(plan, switch or host plan) -> file name -> text."""
        ...

    @property
    def render_findings(self) -> Callable[[Plan, Any], list[Finding]]:
        """(plan, switch or host plan) -> findings about what rendering will drop or approximate."""
        ...

    @property
    def check(self) -> Callable[[Plan, Any], object] | None:
        """(plan, switch plan) -> anything; raises what ``render`` raises when the platform cannot express the
        switch's plan (ValueError, KeyError, LookupError), without producing text. None: only rendering
        tells."""
        ...

    @property
    def read_back(self) -> Callable[[str], SwitchQos]:
        """Running configuration text -> the typed per-switch QoS the plan projects to."""
        ...

    @property
    def diff(self) -> DiffRules | None:
        """How to diff running against desired configuration (None: the platform is not diffed)."""
        ...

    @property
    def push(self) -> PushMethod:
        """How a change is pushed, committed, confirmed and rolled back on the device."""
        ...

    @property
    def counters(self) -> CounterReader | None:
        """How PFC/ECN/drop counters are read for verify and audit (None: no counter reader)."""
        ...

    @property
    def capabilities(self) -> Capabilities:
        """What the platform can express and what is known to be broken (incl. known OS releases)."""
        ...

    @property
    def ansible(self) -> AnsibleConnection | None:
        """How Ansible reaches the platform's devices (None: not reachable from the playbooks)."""
        ...

    @property
    def inventory(self) -> InventoryFacts:
        """Port-name hint and hardware vendors of the platform (import, lint)."""
        ...

    @property
    def runbook(self) -> Callable[[list[tuple[str, str]]], list[str]] | None:
        """(switch name, rendered file) of every switch of this platform -> plan.md runbook lines."""
        ...


def _no_findings(_plan: Plan, _device: Any) -> list[Finding]:
    return []


@dataclass(frozen=True)
class PlatformImpl:
    """The frozen record each platform module builds as ``PLATFORM`` (satisfies :class:`Platform`)."""

    name: str
    spec: PlatformSpec
    render: Callable[[Plan, Any], dict[str, str]]
    read_back: Callable[[str], SwitchQos]
    push: PushMethod
    capabilities: Capabilities
    diff: DiffRules | None = None
    counters: CounterReader | None = None
    render_findings: Callable[[Plan, Any], list[Finding]] = field(default=_no_findings)
    check: Callable[[Plan, Any], object] | None = None
    runbook: Callable[[list[tuple[str, str]]], list[str]] | None = None
    ansible: AnsibleConnection | None = None
    inventory: InventoryFacts = field(default_factory=InventoryFacts)


def module_read_back(module: str, platform: str) -> Callable[[str], SwitchQos]:
    """The ``read_back`` function of ``module`` looked up when called (so a module that defines it
    anywhere, before or after its ``PLATFORM``, provides it).

    Raises (when called):
        NotImplementedError: the module has no ``read_back`` yet (names the platform).
    """

    def read_back(text: str) -> SwitchQos:
        impl = getattr(sys.modules[module], "read_back", None)
        if impl is None:
            raise NotImplementedError(f"{platform}: reading a running configuration back is not implemented "
                                      "yet")
        return impl(text)  # type: ignore[no-any-return]

    return read_back


#: what a platform module re-exports from its ``<platform>_readback`` module (reached through the registry:
#: ``get_platform(name).read_back``, ``.READBACK_FIELDS`` …); see :func:`lazy_attributes`
READBACK_NAMES = frozenset({"READBACK_BY_DESIGN", "READBACK_FIELDS", "UNMAPPED_DSCP_TC", "expressible_qos",
                            "read_back"})


def lazy_attributes(owner: str, module: str, names: frozenset[str]) -> Callable[[str], Any]:
    """A module ``__getattr__`` (PEP 562) for ``owner`` that imports ``module`` on the first look-up of one
    of ``names`` and returns that attribute of it: a platform's read-back code (and the models of
    :mod:`roce_tune.qos`) loads only for a command that reads a running configuration back, not for lint,
    explain or plan (issue 16). The module's own functions must not use these names as globals.

    Raises (when called):
        AttributeError: a name outside ``names`` (``owner`` has no such attribute).
    """

    def __getattr__(name: str) -> Any:
        if name in names:
            return getattr(importlib.import_module(module), name)
        raise AttributeError(f"module {owner!r} has no attribute {name!r}")

    return __getattr__


def known_defect_findings(platform: Platform, switch: SwitchPlan) -> list[Finding]:
    """Findings of every known defect of ``platform`` that affects ``switch`` (RT25x)."""
    return [d.finding(switch) for d in platform.capabilities.known_defects if d.affects(switch)]
