"""Cisco NX-OS emulator: CLI config tree (2-space indent), checkpoints, rollback.

Works with netmiko's ``cisco_nxos`` driver: prompts ``host# `` / ``host(config)# `` /
``host(config-pmap-c-que)# `` (trailing space as on NX-OS), ``terminal width 511`` and
``terminal length 0`` are accepted silently (netmiko waits for their echo).
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass

from .ciscolike import CiscoLikeDevice, CiscoLikeSession
from .clitree import Dialect, ModeRule, Node, render, rollback_patch, rx

_R = frozenset({"root"})
DIALECT = Dialect(
    indent_unit=2,
    modes=(
        ModeRule(re.compile(r"interface (\S+)$"), "if", _R, "if"),
        ModeRule(re.compile(r"class-map type qos (?:match-\S+ )?(\S+)$"), "cmap-qos", _R, "cmap-qos",
                 rx(r"(no )?match ")),
        ModeRule(re.compile(r"class-map type queuing (?:match-\S+ )?(\S+)$"), "cmap-que", _R, "cmap-que",
                 rx(r"(no )?match ")),
        ModeRule(re.compile(r"class-map type network-qos (?:match-\S+ )?(\S+)$"), "cmap-nqos", _R,
                 "cmap-nqos", rx(r"(no )?match ")),
        ModeRule(re.compile(r"policy-map type qos (\S+)$"), "pmap-qos", _R, "pmap-qos"),
        ModeRule(re.compile(r"policy-map type queuing (\S+)$"), "pmap-que", _R, "pmap-que"),
        ModeRule(re.compile(r"policy-map type network-qos (\S+)$"), "pmap-nqos", _R, "pmap-nqos"),
        ModeRule(re.compile(r"class type queuing (\S+)$"), "pmap-c-que", frozenset({"pmap-que"}),
                 "pmap-c-que",
                 rx(r"(no )?(bandwidth|random-detect|priority(?!-)|shape|pause|queue-limit)\b")),
        ModeRule(re.compile(r"class type network-qos (\S+)$"), "pmap-nqos-c", frozenset({"pmap-nqos"}),
                 "pmap-nqos-c", rx(r"(no )?(mtu|pause|congestion-control|set|queue-limit)\b")),
        ModeRule(re.compile(r"class (\S+)$"), "pmap-c-qos", frozenset({"pmap-qos"}), "pmap-c-qos",
                 rx(r"(no )?set ")),
        ModeRule(re.compile(r"system qos$"), "sys-qos", _R, "sys-qos", rx(r"(no )?service-policy ")),
        ModeRule(re.compile(r"vlan (\S+)$"), "vlan", _R, "vlan"),
        ModeRule(re.compile(r"vrf context (\S+)$"), "vrf", _R, "vrf"),
        ModeRule(re.compile(r"router (\S+)(?: \S+)?$"), "router", _R, "router"),
        ModeRule(re.compile(r"line (\S+)$"), "line", _R, "line"),
    ),
    root_only=rx(
        r"(hostname|feature|username|ip domain-lookup|ip route|ntp|logging|snmp-server|spanning-tree|"
        r"copp|boot|cli |ssh |rmon|hardware access-list|qos copp)\b",
    ),
    single_value=rx(
        r"(hostname) ", r"(mtu) ", r"(description) ", r"(set qos-group) ", r"(pause pfc-cos) ",
        r"(bandwidth remaining percent) ", r"(bandwidth percent) ", r"(random-detect) ", r"(priority level) ",
        r"(priority-flow-control mode) ", r"(service-policy type (?:qos|queuing) (?:input|output)) ",
        r"(service-policy type network-qos) ", r"(switchport mode) ", r"(speed) ", r"(ip address) ",
        r"(priority-flow-control watch-dog-interval) ",
    ),
    stored_negations=rx(r"no shutdown$", r"no switchport$"),
    invalid_format="% Invalid command at '^' marker.",
)

#: Argument grammar of the commands whose syntax a Cisco-published text gives, checked before a line
#: reaches the tree (which, like the real parser for well-formed input, takes any other leaf): a line
#: that ``starts`` one of these commands must match its ``full`` form or NX-OS answers ``% Invalid
#: command at '^' marker.``
#:
#: * ``priority-flow-control watch-dog-interval {on | off}``, globally and under ``interface``: ``on``
#:   from the Cisco Nexus 9000 NX-OS QoS Configuration Guide 7.x, "Configuring a Priority Flow Control
#:   Watchdog Interval", and the Azure Local TOR reference [V]; its LLFC twin ``link-level-flow-control
#:   watch-dog-interval on`` in Cisco's NX-API REST SDK guide 9.3(x); ``off`` as the read-back takes it
#:   (nxos_readback.py) [S]. The watchdog timer commands (interval, shutdown / auto-restore /
#:   fixed-restore multipliers) have no Cisco-published keyword order and ranges in the sources read
#:   (roce_tune/platforms/nxos.py), so they are not modelled: the emulator neither accepts nor refuses
#:   them on a source's authority, and roce-tune does not render them.
#: * ``priority-flow-control mode {auto | on | off}`` under ``interface``: Cisco Nexus 3000 and 9000 Series
#:   NX-API REST SDK User Guide and API Reference 9.3(x), "Configuring Priority Flow Control" (the three
#:   modes: auto = DCBX-negotiated, on = regardless of the peer, off) and "Configuring Priority Flow Control
#:   on an Ethernet Interface" (``priority-flow-control mode auto``),
#:   https://developer.cisco.com/docs/cisco-nexus-3000-and-9000-series-nx-api-rest-sdk-user-guide-and-api-reference-release-9-3x/configuring-priority-flow-control
#:   [V]; the ``no`` form takes the same argument, as the watchdog's does.
ARGUMENT_GRAMMAR: tuple[tuple[re.Pattern[str], re.Pattern[str]], ...] = (
    (re.compile(r"(?:no )?priority-flow-control watch-dog-interval\b"),
     re.compile(r"(?:no )?priority-flow-control watch-dog-interval (?:on|off)")),
    (re.compile(r"(?:no )?priority-flow-control mode\b"),
     re.compile(r"(?:no )?priority-flow-control mode (?:auto|on|off)")),
)


def argument_error(line: str) -> bool:
    """True when ``line`` (normalised, no indent) starts a command of :data:`ARGUMENT_GRAMMAR` but does not
    match its full form (``priority-flow-control watch-dog-interval 200``, ``priority-flow-control mode
    enable``)."""
    return any(start.match(line) and not full.fullmatch(line) for start, full in ARGUMENT_GRAMMAR)


FACTORY = """hostname {name}
feature lldp
username {user} role network-admin
interface Ethernet1/1
interface Ethernet1/2
interface Ethernet1/3
interface Ethernet1/4
interface mgmt0
  vrf member management
  ip address 192.0.2.20/24
"""


#: User checkpoints NX-OS keeps per switch: "You can create up to ten checkpoints of your configuration per
#: switch" (Cisco Nexus 3548 NX-OS System Management Configuration Guide, "Configuring Rollback", Creating a
#: Checkpoint; https://www.easymanua.ls/cisco/nexus-3548/manual/683163?p=126). The refusal text below is the
#: emulator's own wording (no capture of the real message was found); it starts with ``ERROR:`` as NX-OS's
#: checkpoint errors do.
MAX_USER_CHECKPOINTS = 10
LIMIT_ERROR = "ERROR: Maximum number of checkpoints ({n}) reached; delete one with 'no checkpoint <name>'\n"
#: "Checkpoint names must be unique. You cannot overwrite previously saved checkpoints with the same name."
#: (same guide, Guidelines and Limitations); message as the emulator had it before.
DUPLICATE_ERROR = "ERROR: Checkpoint name is already in use\n"


def _stamp(t: float) -> str:
    return time.strftime("%a %b %d %H:%M:%S %Y", time.gmtime(t))


@dataclass
class Checkpoint:
    """A named NX-OS checkpoint (``show checkpoint summary``)."""

    name: str
    tree: Node
    user: str
    created: float
    description: str = "None"


class NxosDevice(CiscoLikeDevice):
    """Cisco Nexus 9000 (``netmiko`` device_type ``cisco_nxos``).

    Options: ``model`` (default C93180YC-FX), ``version`` (10.2(5)).
    """

    platform = "nxos"
    netmiko_device_type = "cisco_nxos"
    dialect = DIALECT
    factory_config = FACTORY

    def __init__(self, spec, workdir):  # type: ignore[no-untyped-def]
        super().__init__(spec, workdir)
        self.model = spec.options.get("model", "C93180YC-FX")
        self.version = spec.options.get("version", "10.2(5)")
        self.last_change = time.time()
        self.checkpoints: dict[str, Checkpoint] = {}  # type: ignore[assignment]
        self.pfc_counters: dict[str, dict[str, int]] = {}
        self._auto_cp = 0

    def body_lines(self, tree: Node | None = None) -> list[str]:
        tree = self.running if tree is None else tree
        return [f"version {self.version} Bios:version 05.47"] + render(
            tree, 2, "", lambda n: any(r.pattern.match(n.text) for r in self.dialect.modes))

    def show_running(self, tree: Node | None = None) -> str:
        head = ["", "!Command: show running-config",
                f"!Running configuration last done at: {_stamp(self.last_change)}",
                f"!Time: {_stamp(time.time())}", ""]
        return "\n".join(head + self.body_lines(tree)) + "\n"

    def replace_running(self, tree: Node) -> None:
        self.running.children = tree.copy().children
        self.last_change = time.time()

    def new_session(self, username: str, interactive: bool) -> NxosSession:
        return NxosSession(self, username, interactive)


class NxosSession(CiscoLikeSession):
    device: NxosDevice
    prompt_space = " "

    def banner(self) -> str:
        """The login banner NX-OS prints before the first prompt (so the prompt starts a line, as Ansible's
        ``cisco.nxos`` terminal plugin expects: its prompt regex needs a line break before it)."""
        return ("Cisco Nexus Operating System (NX-OS) Software\nTAC support: http://www.cisco.com/tac\n"
                "Copyright (C) 2002-2023, Cisco and/or its affiliates.\nAll rights reserved.\n")

    def invalid(self, line: str) -> str:
        return " " * len(self.prompt()) + "^\n% Invalid command at '^' marker.\n"

    def config_applied(self, line: str) -> None:
        self.device.last_change = time.time()

    def config_special(self, line: str) -> str | None:
        """Refuse a watchdog or PFC-mode line whose arguments are outside the sourced grammar
        (:data:`ARGUMENT_GRAMMAR`)."""
        return self.invalid(line) if argument_error(line) else None

    def exec_command(self, cmd: str, pipes: list[str]) -> str | None:
        dev = self.device
        words = cmd.split()
        if cmd in ("configure terminal", "configure", "conf t", "config t", "configure t"):
            return self.enter_config()
        if cmd in ("copy running-config startup-config", "copy run start"):
            if dev.faults.fail_save:
                return ("[########################################] 100%\n"
                        "Copy complete, now saving to disk (please wait)...\n"
                        "ERROR: Configuration save failed: bootflash: No space left on device\n")
            dev.startup = dev.running.copy()
            return ("[########################################] 100%\n"
                    "Copy complete, now saving to disk (please wait)...\nCopy complete.\n")
        if words[0] == "checkpoint":
            return self.checkpoint(words[1:])
        if words[:2] == ["no", "checkpoint"] and len(words) == 3:
            if dev.checkpoints.pop(words[2], None) is None:
                return "ERROR: No checkpoint with this name exists\n"
            return "Done\n"
        if cmd == "clear checkpoint database":
            dev.checkpoints.clear()
            return "Done\n"
        if words[:2] == ["rollback", "running-config"]:
            return self.rollback(words[2:])
        if words[0] == "show":
            return self.show(" ".join(words[1:]))
        return None

    def checkpoint(self, args: list[str]) -> str:
        dev = self.device
        if args and args[0] == "file":
            return "Done\n"
        if not args:
            dev._auto_cp += 1
            args = [f"user-checkpoint-{dev._auto_cp}"]
        name = args[0]
        if name in dev.checkpoints:
            return DUPLICATE_ERROR
        if len(dev.checkpoints) >= MAX_USER_CHECKPOINTS:
            return LIMIT_ERROR.format(n=MAX_USER_CHECKPOINTS)
        desc = " ".join(args[2:]) if len(args) > 2 and args[1] == "description" else "None"
        dev.checkpoints[name] = Checkpoint(name, dev.running.copy(), self.username, time.time(), desc)
        return "...........Done\n"

    def _resolve(self, words: list[str]) -> tuple[Node | None, list[str]]:
        dev = self.device
        if words[:1] == ["running-config"]:
            return dev.running, words[1:]
        if words[:1] == ["startup-config"]:
            return dev.startup, words[1:]
        if words[:1] == ["checkpoint"] and len(words) >= 2:
            cp = dev.checkpoints.get(words[1])
            return (cp.tree if cp else None), words[2:]
        return None, words

    def rollback(self, args: list[str]) -> str:
        dev = self.device
        target, rest = self._resolve(args)
        if target is None:
            return "ERROR: No checkpoint with this name exists\n"
        if rest and rest[0] not in ("atomic", "best-effort", "stop-at-first-failure", "verbose"):
            return self.invalid(" ".join(rest))
        dev.replace_running(target)
        return ("Note: Applying config parallelly may fail Rollback verification\n"
                "Collecting Running-Config\n#Generating Rollback Patch\nExecuting Rollback Patch\n"
                "Generating Running-config for verification\nGenerating Patch for verification\n"
                "Verification is Successful.\n\nRollback completed successfully.\n")

    def show(self, text: str) -> str | None:
        dev = self.device
        if text in ("running-config", "run", "running-config all"):
            return dev.show_running(dev.running)
        if text == "startup-config":
            return dev.show_running(dev.startup)
        if text == "checkpoint summary":
            lines = ["User Checkpoint Summary", "-" * 80]
            for i, cp in enumerate(dev.checkpoints.values(), 1):
                size = len("\n".join(dev.body_lines(cp.tree)))
                lines += [f"{i}) {cp.name}:", f"Created by {cp.user}",
                          f"Created at {time.strftime('%a, %H:%M:%S %d %b %Y', time.gmtime(cp.created))}",
                          f"Size is {size:,} bytes", f"Description: {cp.description}", ""]
            return "\n".join(lines) + "\n"
        m = re.fullmatch(r"checkpoint (\S+)", text)
        if m and m.group(1) in dev.checkpoints:
            return dev.show_running(dev.checkpoints[m.group(1)].tree)
        if text.startswith("diff rollback-patch "):
            source, rest = self._resolve(text.split()[2:])
            target, rest = self._resolve(rest)
            if source is None or target is None or rest:
                return "ERROR: No checkpoint with this name exists\n"
            patch = rollback_patch(source, target, 2)
            head = "Collecting Running-Config\n#Generating Rollback Patch\n"
            if not patch:
                return head + "Rollback Patch is Empty\n"
            return head + "!!\n" + "\n".join(patch) + "\n"
        if text == "version":
            return ("Cisco Nexus Operating System (NX-OS) Software\nTAC support: http://www.cisco.com/tac\n\n"
                    f"Software\n  NXOS: version {dev.version}\n\nHardware\n"
                    f"  cisco Nexus9000 {dev.model} Chassis\n\n  Device name: {dev.hostname}\n")
        if text == "hostname":
            return dev.hostname + "\n"
        if text == "inventory":  # Ansible's cisco.nxos cliconf reads it for the device info
            return (f'NAME: "Chassis",  DESCR: "Nexus9000 {dev.model} Chassis"\n'
                    f"PID: N9K-{dev.model:<16},  VID: V02 ,  SN: FDO00000001\n\n")
        if text in ("interface priority-flow-control", "interface priority-flow-control detail"):
            lines = ["=" * 60, "Port               Mode Oper(VL bmap)  RxPPP      TxPPP", "=" * 60, ""]
            for c in dev.running.children:
                if c.text.startswith("interface Ethernet"):
                    intf = c.text.split()[1]
                    mode = "On " if c.find("priority-flow-control mode on") else "Auto"
                    cnt = dev.pfc_counters.get(intf, {})
                    lines.append(f"{intf:<19}{mode:<5}{'On  (8)':<15}"
                                 f"{cnt.get('rx', 0):<11}{cnt.get('tx', 0)}")
            return "\n".join(lines) + "\n"
        if text.startswith(("queuing interface", "policy-map")):
            return ""
        return None
