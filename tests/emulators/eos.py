"""Arista EOS emulator: CLI config tree (3-space indent), config sessions, commit timer.

Works with netmiko's ``arista_eos`` driver (``AristaSSH``): answers ``terminal width``
with "Width set to" and ``terminal length 0`` with "Pagination disabled", prompts
``host#`` / ``host(config)#`` / ``host(config-s-<first 6 chars>)#`` and sub-mode prompts
such as ``host(config-s-roce_t-if-Et1)#``.
"""

from __future__ import annotations

import difflib
import json
import re
from dataclasses import dataclass

from .ciscolike import CiscoLikeDevice, CiscoLikeSession
from .clitree import Dialect, ModeRule, Node, parse_config, render, rx

_IF_ABBREV = {
    "Ethernet": "Et", "Port-Channel": "Po", "Loopback": "Lo", "Management": "Ma", "Vlan": "Vl",
    "Vxlan": "Vx", "Tunnel": "Tu",
}


def _if_prompt(m: re.Match[str]) -> str:
    name = m.group(1)
    for full, short in _IF_ABBREV.items():
        if name.startswith(full):
            return "if-" + short + name[len(full):]
    return "if-" + name


def _txq_prompt(m: re.Match[str]) -> str:
    return f"{m.group(1) or ''}txq-{m.group(2)}"


_ANY = frozenset({"root"})
DIALECT = Dialect(
    indent_unit=3,
    modes=(
        ModeRule(re.compile(r"interface (\S+)$"), "if", _ANY, _if_prompt),
        ModeRule(re.compile(r"qos profile (\S+)$"), "qos-profile", _ANY, "qos-profile-{0}"),
        ModeRule(re.compile(r"(uc-|mc-)?tx-queue (\d+)$"), "txq", frozenset({"if", "qos-profile"}),
                 _txq_prompt,
                 rx(r"(no |default )?(priority|bandwidth|random-detect|shape|schedule|guaranteed)\b")),
        ModeRule(re.compile(r"policy-map (?:type \S+ )?(\S+)$"), "pmap", _ANY, "pmap-{0}"),
        ModeRule(re.compile(r"class-map (?:type \S+ )?(?:match-\S+ )?(\S+)$"), "cmap", _ANY, "cmap-{0}"),
        ModeRule(re.compile(r"class (\S+)$"), "pmap-c", frozenset({"pmap"}), "c-{0}"),
        ModeRule(re.compile(r"router (\S+)(?: \S+)?$"), "router", _ANY, "router-{0}"),
        ModeRule(re.compile(r"vlan (\S+)$"), "vlan", _ANY, "vlan-{0}"),
        ModeRule(re.compile(r"vrf instance (\S+)$"), "vrf", _ANY, "vrf-{0}"),
        ModeRule(re.compile(r"management (\S+)(?: \S+)*$"), "mgmt", _ANY, "mgmt-{0}"),
        ModeRule(re.compile(r"ip access-list (\S+)$"), "acl", _ANY, "acl-{0}"),
    ),
    root_only=rx(
        r"hostname ", r"qos map ", r"qos random-detect ", r"priority-flow-control pause watchdog "
        r"(default|action|override|hardware)", r"(ip routing|ipv6 unicast-routing|spanning-tree|username|"
        r"aaa|ntp|logging|snmp-server|ip name-server|dns|clock|transceiver|service(?!-)|platform|hardware|"
        r"queue-monitor|lldp|errdisable|ip domain|dcbx application)\b",
    ),
    single_value=rx(
        r"(hostname) ", r"(mtu) ", r"(description) ", r"(bandwidth percent) ",
        r"(random-detect ecn minimum-threshold) ", r"(priority) ", r"(qos trust) ", r"(service-profile) ",
        r"(priority-flow-control pause watchdog default (?:timeout|recovery-time|polling-interval)) ",
        r"(priority-flow-control pause watchdog action) ", r"(priority-flow-control pause watchdog port "
                                                           r"action) ",
        r"(priority-flow-control pause watchdog port timer) ",
        r"(priority-flow-control) (?:on|off)$", r"(priority-flow-control priority \d+) ",
        r"(qos map dscp [\d ]+ to) traffic-class ", r"(qos map traffic-class \d+ to tx-queue) ",
        r"(qos map traffic-class \d+ to dscp) ", r"(speed) ", r"(shape rate) ", r"(ip address) ",
        r"(switchport mode) ", r"(switchport access vlan) ",
    ),
    stored_negations=rx(r"no priority$", r"no shutdown$", r"no switchport$"),
    invalid_format="% Invalid input",
    nested_prompt=True,
)

#: global maps that hold one value per DSCP / CoS / TC: (source, target) of ``qos map <source> <ids> to
#: <target> <value>``
_KEYED_MAPS = (("dscp", "traffic-class"), ("cos", "traffic-class"), ("traffic-class", "tx-queue"),
               ("traffic-class", "dscp"))


def regroup_maps(root: Node) -> None:
    """Hold each global map as EOS does: one value per id, a later line taking its ids off any older line (a
    line left with no id goes). Lines otherwise stay as entered: whether EOS also regroups the ids of one
    value onto one line in its running-config is not established (no primary source at hand), and
    roce-tune's keyed diff (``DiffRules.keyed``) reads either form."""
    for src, dst in _KEYED_MAPS:
        line_rx = re.compile(rf"qos map {src} ([\d ]+) to {dst} (\d+)$")
        owner: dict[int, int] = {}  # id -> index of the line that holds it last
        for i, child in enumerate(root.children):
            m = line_rx.fullmatch(child.text)
            if m:
                owner.update(dict.fromkeys((int(k) for k in m[1].split()), i))
        kept: list[Node] = []
        for i, child in enumerate(root.children):
            m = line_rx.fullmatch(child.text)
            if not m:
                kept.append(child)
                continue
            ids = [int(x) for x in m[1].split()]
            keys = [k for k in ids if owner[k] == i]
            if keys == ids:
                kept.append(child)
            elif keys:
                kept.append(Node(f"qos map {src} {' '.join(map(str, keys))} to {dst} {m[2]}"))
        root.children = kept


FACTORY = """hostname {name}
username {user} privilege 15 role network-admin nopassword
interface Ethernet1
interface Ethernet2
interface Ethernet3
interface Ethernet4
interface Management1
   ip address 192.0.2.10/24
"""


@dataclass
class EosConfigSession:
    """A named EOS configuration session (``show configuration sessions``)."""

    name: str
    tree: Node
    user: str
    state: str = "pending"  # pending | pendingCommitTimer | completed | aborted


def _abbrev(word: str, full: str, minimum: int = 4) -> bool:
    return len(word) >= min(minimum, len(full)) and full.startswith(word)


def _parse_hms(text: str) -> int | None:
    m = re.fullmatch(r"(\d{1,2}):(\d{2}):(\d{2})", text)
    if not m:
        return None
    h, mnt, s = (int(x) for x in m.groups())
    return h * 3600 + mnt * 60 + s


class EosDevice(CiscoLikeDevice):
    """Arista EOS switch (``netmiko`` device_type ``arista_eos``).

    Options: ``model`` (default DCS-7050CX3-32S), ``version`` (4.30.1F),
    ``start_mode`` (``enable`` | ``exec``).
    """

    platform = "eos"
    netmiko_device_type = "arista_eos"
    dialect = DIALECT
    factory_config = FACTORY

    def __init__(self, spec, workdir):  # type: ignore[no-untyped-def]
        super().__init__(spec, workdir)
        self.sessions: dict[str, EosConfigSession] = {}
        self.model = spec.options.get("model", "DCS-7050CX3-32S")
        self.version = spec.options.get("version", "4.30.1F")
        self.counters: dict[str, dict[str, int]] = {}
        self.ecn_counters: dict[tuple[str, int], int] = {}
        self._session_seq = 0

    def _is_section(self, node: Node) -> bool:
        return any(r.pattern.match(node.text) for r in self.dialect.modes)

    def body_lines(self, tree: Node | None = None) -> list[str]:
        tree = self.running if tree is None else tree
        return render(tree, 3, "!", self._is_section)

    def show_running(self, tree: Node | None = None) -> str:
        tree = self.running if tree is None else tree
        head = [
            "! Command: show running-config",
            f"! device: {self.hostname} ({self.model}, EOS-{self.version})",
            "!",
            f"! boot system flash:/EOS-{self.version}.swi",
            "!",
        ]
        return "\n".join(head + self.body_lines(tree) + ["!", "end"]) + "\n"

    def running_config(self) -> str:
        """Exactly what ``show running-config`` prints (EOS has no volatile header)."""
        with self.lock:
            return self.show_running()

    def replace_running(self, tree: Node) -> None:
        self.running.children = tree.copy().children

    def factory_tree(self) -> Node:
        return parse_config(FACTORY.format(name=self.name, user=self.spec.username), self.dialect)

    def new_session(self, username: str, interactive: bool) -> EosSession:
        return EosSession(self, username, interactive)


class EosSession(CiscoLikeSession):
    device: EosDevice

    def __init__(self, device: EosDevice, username: str, interactive: bool) -> None:
        super().__init__(device, username, interactive)
        self.cfg_session: EosConfigSession | None = None
        if device.spec.options.get("start_mode", "enable") == "exec":
            self.mode = "exec"

    def config_applied(self, line: str) -> None:
        if line.startswith("qos map "):
            regroup_maps(self.tree)

    def config_prefix(self) -> str:
        if self.cfg_session is not None:
            return "config-s-" + self.cfg_session.name[:6]
        return "config"

    def invalid(self, line: str) -> str:
        token = line.split()[0] if line.split() else ""
        return f"% Invalid input (at token 0: '{token}')\n"

    def terminal_command(self, cmd: str) -> str:
        super().terminal_command(cmd)
        words = cmd.split()
        if words[1:2] == ["width"] and len(words) == 3:
            return f"Width set to {words[2]} columns.\n"
        if words[1:2] == ["length"] and len(words) == 3:
            return "Pagination disabled.\n" if words[2] == "0" else f"Pagination set to {words[2]} lines.\n"
        return ""

    # --------------------------------------------------------------- exec
    def exec_command(self, cmd: str, pipes: list[str]) -> str | None:
        dev = self.device
        words = cmd.split()
        if words and _abbrev(words[0], "configure", 4):
            return self.configure(words[1:])
        if words[:2] == ["no", "configure"] and len(words) == 4 and words[2] == "session":
            sess = dev.sessions.get(words[3])
            if sess is None or sess.state != "pending":
                return f"% Session {words[3]} not found or not pending\n"
            del dev.sessions[words[3]]
            return ""
        if cmd in ("write memory", "write", "copy running-config startup-config", "wr mem"):
            if dev.faults.fail_save:
                return ("% Error copying system:/running-config to flash:/startup-config (No space left on "
                        "device)\n")
            dev.startup = dev.running.copy()
            return "Copy completed successfully.\n"
        if not words or words[0] != "show":
            return None
        return self.show(words[1:], pipes)

    def show(self, args: list[str], pipes: list[str]) -> str | None:
        dev = self.device
        text = " ".join(args)
        json_out = "json" in pipes
        if text in ("running-config", "run", "running-config all"):
            return dev.show_running(dev.running)
        if text == "startup-config":
            return dev.show_running(dev.startup)
        if text in ("session-config diffs", "session-config"):
            if self.cfg_session is None:
                return "% Not in a configuration session\n"
            return self.session_output(self.cfg_session, diffs=text.endswith("diffs"))
        m = re.fullmatch(r"session-config named (\S+)( diffs)?", text)
        if m:
            sess = dev.sessions.get(m.group(1))
            if sess is None:
                return f"% Session {m.group(1)} not found\n"
            return self.session_output(sess, diffs=bool(m.group(2)))
        if text in ("configuration sessions", "configuration sessions detail"):
            return self.show_sessions(detail=text.endswith("detail"))
        if text == "version":
            if json_out:
                return json.dumps({"modelName": dev.model, "version": dev.version,
                                   "serialNumber": f"EMU{dev.port}", "hostname": dev.hostname},
                                  indent=2) + "\n"
            return (f"Arista {dev.model}\nHardware version: 11.00\nSerial number: EMU{dev.port}\n"
                    f"System MAC address: 001c.7300.0001\n\nSoftware image version: {dev.version}\n"
                    "Architecture: x86_64\nInternal build version: emulated\n")
        if text == "hostname":
            if json_out:
                return json.dumps({"hostname": dev.hostname, "fqdn": dev.hostname}) + "\n"
            return f"Hostname: {dev.hostname}\nFQDN:     {dev.hostname}\n"
        if text.startswith("priority-flow-control counters"):
            return self.pfc_counters(json_out)
        m = re.fullmatch(r"qos interfaces (?:ethernet|Ethernet|et|Et)\s*(\S+) ecn counters queue", text)
        if m:
            intf = f"Ethernet{m.group(1)}"
            rows = [f"   {q:<9} {dev.ecn_counters.get((intf, q), 0)}" for q in range(8)]
            return f"{intf}:\n   Tx-Queue  ECN Marked Packets\n   --------  ------------------\n" + \
                "\n".join(rows) + "\n"
        if text.startswith(("interfaces", "priority-flow-control")):
            return ""
        return None

    def interfaces(self) -> list[str]:
        return [c.text.split()[1] for c in self.device.running.children
                if c.text.startswith("interface Ethernet")]

    def pfc_counters(self, json_out: bool) -> str:
        dev = self.device
        data = {i: dev.counters.get(i, {"rx": 0, "tx": 0}) for i in self.interfaces()}
        if json_out:
            return json.dumps({"interfaceCounters": {
                i: {"rxFrames": c.get("rx", 0), "txFrames": c.get("tx", 0)} for i, c in data.items()}},
                indent=2) + "\n"
        lines = ["Port        RxPfc       TxPfc"]
        for intf, c in data.items():
            short = intf.replace("Ethernet", "Et")
            lines.append(f"{short:<12}{c.get('rx', 0):<12}{c.get('tx', 0)}")
        return "\n".join(lines) + "\n"

    def session_output(self, sess: EosConfigSession, diffs: bool) -> str:
        dev = self.device
        if not diffs:
            return dev.show_running(sess.tree)
        old = dev.show_running(dev.running).splitlines()
        new = dev.show_running(sess.tree).splitlines()
        diff = list(difflib.unified_diff(old, new, "system:/running-config",
                                         f"session:/{sess.name}-session-config", lineterm="", n=3))
        return "\n".join(diff) + "\n" if diff else ""

    def show_sessions(self, detail: bool) -> str:
        lines = ["Maximum number of completed sessions: 1", "Maximum number of pending sessions: 5", "",
                 "  Name            State                  User     Terminal",
                 "  --------------- ---------------------- -------- --------"]
        for sess in self.device.sessions.values():
            if sess.state in ("aborted",):
                continue
            mark = "*" if sess is self.cfg_session else " "
            lines.append(f"{mark} {sess.name:<15} {sess.state:<22} {sess.user:<8} vty")
        if detail and self.device.confirm_pending:
            left = self.device.confirm_seconds_left() or 0
            lines.append(f"\nCommit timer expires in {int(left)} seconds")
        return "\n".join(lines) + "\n"

    # --------------------------------------------------------------- configure
    def configure(self, args: list[str]) -> str:
        dev = self.device
        if not args or _abbrev(args[0], "terminal", 1):
            self.enter_config()
            self.cfg_session = None
            return ""
        if args[0] != "session":
            return self.invalid("configure " + " ".join(args))
        if len(args) == 1:
            dev._session_seq += 1
            args = ["session", f"sess-{dev._session_seq}"]
        name = args[1]
        if len(args) == 3 and args[2] in ("commit", "abort"):
            return self.session_action(name, args[2])
        sess = dev.sessions.get(name)
        if sess is not None and sess.state != "pending":
            return f"% Cannot enter session {name} (session is already {sess.state})\n"
        if sess is None:
            pending = [s for s in dev.sessions.values() if s.state == "pending"]
            if len(pending) >= 5:
                return "% Maximum number of pending sessions has been reached\n"
            sess = EosConfigSession(name, dev.running.copy(), self.username)
            dev.sessions[name] = sess
        self.mode = "config"
        self.cfg_session = sess
        self.ctx.stack.clear()
        self.tree = sess.tree
        return ""

    def session_action(self, name: str, action: str) -> str:
        dev = self.device
        sess = dev.sessions.get(name)
        if sess is None:
            return f"% Session {name} not found\n"
        if action == "commit":
            if sess.state == "pendingCommitTimer":
                dev.confirm("commit timer")
                if not dev.faults.lose_confirm:
                    sess.state = "completed"
                return ""
            if sess.state == "pending":
                return self.commit(sess)
            return f"% Session {name} is {sess.state}\n"
        if sess.state == "pendingCommitTimer":
            dev.revert_pending("commit timer")
            return ""
        if sess.state == "pending":
            sess.state = "aborted"
            return ""
        return f"% Session {name} is {sess.state}\n"

    def config_special(self, line: str) -> str | None:
        sess = self.cfg_session
        words = line.split()
        if words and words[0] == "configure":
            return self.configure(words[1:])
        if sess is None:
            return None
        if line == "commit":
            return self.commit(sess)
        if words[:2] == ["commit", "timer"]:
            secs = _parse_hms(words[2]) if len(words) == 3 else None
            if secs is None:
                return "% Invalid input (at token 2)\n"
            return self.commit(sess, timer_s=secs)
        if line == "abort":
            sess.state = "aborted"
            self.cfg_session = None
            return self.leave_config()
        if line == "rollback clean-config":
            sess.tree.children = self.device.factory_tree().children
            self.ctx.stack.clear()
            return ""
        return None

    def commit(self, sess: EosConfigSession, timer_s: int | None = None) -> str:
        dev = self.device
        if dev.rejects("commit"):
            return "% Commit failed\n"
        if timer_s is not None:
            before = dev.running.copy()

            def restore() -> None:
                dev.replace_running(before)
                sess.state = "aborted"

            dev.replace_running(sess.tree)
            sess.state = "pendingCommitTimer"
            dev.arm_confirm(timer_s, restore, f"commit timer {sess.name}")
        else:
            dev.replace_running(sess.tree)
            sess.state = "completed"
        if self.cfg_session is sess:
            self.cfg_session = None
            if self.mode == "config":
                self.leave_config()
        return ""

    def leave_config(self) -> str:
        self.cfg_session = None
        return super().leave_config()
