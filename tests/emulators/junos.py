"""Juniper Junos emulator: set-line candidate, commit/confirm/rollback history.

Works with netmiko's ``juniper_junos`` driver: operational prompt ``user@host> ``,
configuration prompt ``[edit]`` + ``user@host# ``; answers the ``set cli`` commands of
session preparation with "Screen width set to", "Disabling complete-on-space" and
"Screen length set to"; ``commit confirmed N`` prints netmiko's marker "commit confirmed
will be automatically rolled back in"; leaving with changes asks "Exit with uncommitted
changes? [yes,no] (yes)".
"""

from __future__ import annotations

import fnmatch
import re
import time
from dataclasses import dataclass, field
from decimal import Decimal

from .core import CliSession, EmulatedDevice
from .junostree import apply_delete, apply_set, build, compare, container_fn, leaf_list_lines, render, tokens

SINGLE_VALUE = tuple(re.compile(p) for p in (
    r"(system host-name) ",
    r"(class-of-service interfaces \S+ (?:unit \S+ )?congestion-notification-profile) ",
    r"(class-of-service interfaces \S+ (?:unit \S+ )?scheduler-map) ",
    r"(class-of-service schedulers \S+ (?:transmit-rate|priority|buffer-size)) ",
    r"(class-of-service forwarding-classes class \S+ queue-num) ",
    r"(class-of-service congestion-notification-profile \S+ input dscp code-point \S+ pfc mru) ",
    r"(class-of-service congestion-notification-profile \S+ pfc-watchdog "
    r"(?:poll-interval|detection|recovery|watchdog-action)) ",
    r"(class-of-service shared-buffer (?:ingress|egress) buffer-partition \S+ percent) ",
    r"(class-of-service scheduler-maps \S+ forwarding-class \S+ scheduler) ",
    r"(interfaces \S+ (?:mtu|description)) ",
))

#: ``drop-profiles`` values checked against the type Juniper's published YANG gives them
#: (github.com/Juniper/yang, ``junos-conf-class-of-service`` / ``junos-qfx-conf-class-of-service``): a fill
#: level is ``decimal64 {fraction-digits 9; range "0 .. 100"}`` from Junos OS Evolved 24.4R1 and ``uint32
#: {range "0 .. 100"}`` before it (23.4R1-EVO, 24.2R1-EVO) and on Junos OS (18.2R3, 21.4R1, 24.4R1); the
#: drop probability is uint32 0..100 everywhere. Group 1 = the value. Anything else is not type-checked.
FILL_LEVEL = re.compile(r"^class-of-service drop-profiles \S+ (?:interpolate )?fill-level (\S+)")
DROP_PROBABILITY = re.compile(r"^class-of-service drop-profiles \S+ "
                              r"(?:interpolate drop-probability|fill-level \S+ drop-probability) (\S+)")
#: first release whose fill level is decimal64 (Junos OS Evolved only)
DECIMAL_FILL_LEVEL_RELEASE = (24, 4, 1)
#: YANG decimal64 lexical form (RFC 7950 §9.3.1, as pyang reads it): sign, digits, optional fraction
_DECIMAL64 = re.compile(r"^[+-]?(\d+)(?:\.(\d+))?$")


def decimal_fill_levels(version: str) -> bool:
    """Whether release ``version`` (``show version``'s ``Junos:``) types fill levels decimal64: Junos OS
    Evolved (``-EVO``) 24.4R1 or later."""
    m = re.match(r"^(\d+)\.(\d+)R(\d+)", version)
    return (m is not None and version.upper().endswith("-EVO")
            and tuple(int(g) for g in m.groups()) >= DECIMAL_FILL_LEVEL_RELEASE)


def value_error(line: str, version: str) -> str | None:
    """Why ``line`` (a ``set`` statement without ``set``, one leaf-list value) carries a value its leaf's
    type refuses on release ``version``, or None (accepted, or a statement not type-checked here)."""
    m = FILL_LEVEL.match(line)
    if m is not None:
        value = m.group(1)
        if decimal_fill_levels(version):
            d = _DECIMAL64.match(value)
            if d is None or len(d.group(2) or "") > 9 or not 0 <= Decimal(value) <= 100:
                return f"fill-level {value!r} is not a decimal64 (fraction-digits 9, range 0 .. 100)"
        elif not value.isdigit() or int(value) > 100:
            return f"fill-level {value!r} is not a uint32 (range 0 .. 100) on {version}"
    m = DROP_PROBABILITY.match(line)
    if m is not None and (not m.group(1).isdigit() or int(m.group(1)) > 100):
        return f"drop-probability {m.group(1)!r} is not a uint32 (range 0 .. 100)"
    return None


FACTORY = """set version 21.4R3-S2.3
set system host-name {name}
set system login user {user} class super-user
set interfaces et-0/0/0 unit 0 family inet
set interfaces et-0/0/1 unit 0 family inet
set interfaces em0 unit 0 family inet address 192.0.2.30/24
"""


@dataclass
class Commit:
    """One entry of ``show system commit`` (index 0 = active configuration)."""

    lines: list[str]
    user: str
    when: float
    method: str = "cli"
    comment: str = ""
    note: str = ""


def _word_matches(pattern: str, word: str) -> bool:
    if pattern.startswith("<") and pattern.endswith(">"):
        return fnmatch.fnmatchcase(word, pattern[1:-1])
    return pattern == word


def _objects_matching(rest: list[str], at: list[str], objects: list[list[str]]) -> list[list[str]]:
    """``rest`` with each ``<pattern>`` word replaced by each configured object it matches there."""
    out: list[list[str]] = [[]]
    for word in rest:
        if not (word.startswith("<") and word.endswith(">")):
            out = [done + [word] for done in out]
            continue
        out = [done + [name] for done in out
               for name in dict.fromkeys(o[len(at) + len(done)] for o in objects
                                         if len(o) > len(at) + len(done) + 1
                                         and o[:len(at) + len(done)] == at + done)
               if _word_matches(word, name)]
    return out


def _norm(line: str) -> str:
    return " ".join(tokens(line))


@dataclass
class _Db:
    lines: list[str] = field(default_factory=list)


class JunosDevice(EmulatedDevice):
    """Juniper QFX (``netmiko`` device_type ``juniper_junos``).

    Options: ``model`` (qfx5120-48y), ``version`` (21.4R3-S2.3),
    ``single_value`` (extra regexes, group 1 = key of a single-valued statement).
    """

    platform = "junos"
    netmiko_device_type = "juniper_junos"

    def __init__(self, spec, workdir):  # type: ignore[no-untyped-def]
        super().__init__(spec, workdir)
        text = spec.initial_config
        if text is None:
            text = FACTORY.format(name=spec.name, user=spec.username)
        lines: list[str] = []
        self.single_value = SINGLE_VALUE + tuple(re.compile(p) for p in spec.options.get("single_value", ()))
        for raw in text.splitlines():
            raw = raw.strip()
            if raw and not raw.startswith("#"):
                for one in leaf_list_lines(_norm(raw.removeprefix("set "))):
                    apply_set(lines, one, self.single_value)
        self.history: list[Commit] = [Commit(lines, "root", time.time(), "other", "factory")]
        self.shared: _Db | None = None
        self.exclusive_owner: JunosSession | None = None
        self.model = spec.options.get("model", "qfx5120-48y")
        self.version = spec.options.get("version", "21.4R3-S2.3")

    @property
    def active(self) -> list[str]:
        return self.history[0].lines

    @property
    def hostname(self) -> str:
        for line in self.active:
            if line.startswith("system host-name "):
                return line.split()[2]
        return "Amnesiac"

    def display_set(self, lines: list[str]) -> str:
        return "".join(f"set {ln}\n" for ln in lines)

    def inherited(self, lines: list[str]) -> list[str]:
        """``lines`` as ``| display inheritance`` shows them: each group named by an ``apply-groups`` is
        inherited below that level (a ``<pattern>`` word matches the objects configured there; the first
        group listed wins; the local statement wins over a group; ``apply-groups-except G`` keeps G out);
        ``groups`` and ``apply-groups`` statements are not shown."""
        groups: dict[str, list[list[str]]] = {}
        applied: list[tuple[list[str], list[str]]] = []
        excepted: list[tuple[list[str], str]] = []
        local: list[str] = []
        for ln in lines:
            w = tokens(ln)
            if w[0] == "groups":
                groups.setdefault(w[1], []).append(w[2:])
            elif "apply-groups" in w or "apply-groups-except" in w:
                i = next(j for j, t in enumerate(w) if t.startswith("apply-groups"))
                if w[i] == "apply-groups":
                    found = next((a for a in applied if a[0] == w[:i]), None)
                    if found is None:
                        applied.append((w[:i], []))
                        found = applied[-1]
                    found[1].extend(x for x in w[i + 1:] if x not in "[]")
                else:
                    excepted.extend((w[:i], x) for x in w[i + 1:] if x not in "[]")
            else:
                local.append(ln)
        objects = [tokens(ln) for ln in local]
        out: list[str] = []
        for at, names in sorted(applied, key=lambda a: len(a[0])):
            for g in reversed(names):
                for stmt in groups.get(g, []):
                    if len(stmt) <= len(at) or not all(_word_matches(p, a) for p, a in zip(stmt, at)):
                        continue
                    for x in _objects_matching(stmt[len(at):], at, objects):
                        if not any((at + x)[:len(e)] == e and eg == g for e, eg in excepted):
                            apply_set(out, " ".join(at + x), self.single_value)
        for ln in local:
            apply_set(out, ln, self.single_value)
        return out

    def running_config(self) -> str:
        """Active configuration as ``show configuration | display set`` prints it."""
        with self.lock:
            return self.display_set(self.active)

    def hierarchical(self, lines: list[str]) -> str:
        trie = build(lines)
        return "\n".join(render(trie, (), container_fn(trie))) + "\n"

    def commit(self, lines: list[str], user: str, comment: str = "", note: str = "") -> None:
        self.history.insert(0, Commit(list(lines), user, time.time(), "cli", comment, note))
        del self.history[50:]

    def new_session(self, username: str, interactive: bool) -> JunosSession:
        return JunosSession(self, username, interactive)


class JunosSession(CliSession):
    device: JunosDevice

    def __init__(self, device: JunosDevice, username: str, interactive: bool) -> None:
        super().__init__(device, username, interactive)
        self.mode = "op"
        self.db_kind = ""
        self.db: _Db | None = None
        self.load_lines: list[str] | None = None
        self.exit_question = False
        #: what ``configure exclusive`` refused to others names: the holder's pid and login time
        self.pid = 4000 + len(device.commands_seen) % 1000
        self.since = time.time()

    def banner(self) -> str:
        return f"--- JUNOS {self.device.version} built 2024-01-01 00:00:00 UTC\n"

    def prompt(self) -> str:
        dev = self.device
        if self.load_lines is not None:
            return ""
        if self.exit_question:
            if self.db_kind == "exclusive":  # Junos discards (rolls back) an exclusive session's changes
                return "Discard uncommitted changes? [yes,no] (yes) "
            return "Exit with uncommitted changes? [yes,no] (yes) "
        if self.mode == "op":
            return f"{self.username}@{dev.hostname}> "
        return f"\n[edit]\n{self.username}@{dev.hostname}# "

    # ------------------------------------------------------------------ input
    def handle_line(self, line: str) -> str:
        self.device.commands_seen.append(line.strip())
        if self.load_lines is not None:
            return self.load_line(line)
        if self.exit_question:
            self.exit_question = False
            if line.strip().lower() in ("", "yes", "y"):
                return self.leave_config()
            return ""
        cmd = " ".join(tokens(line))
        if not cmd:
            return ""
        if self.device.rejects(cmd) and not cmd.startswith(("set ", "delete ")):
            return self.syntax_error(cmd)
        if self.mode == "op":
            return self.op_command(cmd)
        return self.config_command(cmd)

    def handle_ctrl_d(self) -> str:
        if self.load_lines is not None:
            errors = len([ln for ln in self.load_lines if ln.startswith("!")])
            self.load_lines = None
            return "load complete" + (f" ({errors} errors)" if errors else "") + "\n"
        return super().handle_ctrl_d()

    def handle_ctrl_c(self) -> str:
        self.load_lines = None
        self.exit_question = False
        return "\n"

    def syntax_error(self, cmd: str) -> str:
        pad = " " * (len(self.prompt().split("\n")[-1]) + len(cmd.split()[0]) + 1)
        return f"{pad}^\nsyntax error.\n"

    # ------------------------------------------------------------- op mode
    def op_command(self, cmd: str) -> str:
        dev = self.device
        words = cmd.split()
        cmd, _, pipe = cmd.partition(" | ")
        if cmd in ("exit", "quit"):
            self.closed = True
            return ""
        if cmd.startswith("set cli "):
            arg = cmd[len("set cli "):]
            if arg.startswith("screen-width"):
                return f"Screen width set to {arg.split()[-1]}\n"
            if arg.startswith("screen-length"):
                return f"Screen length set to {arg.split()[-1]}\n"
            if arg == "complete-on-space off":
                return "Disabling complete-on-space\n"
            return ""
        if words[0] == "configure":
            return self.configure(words[1:])
        if cmd.startswith("show configuration"):
            rest = cmd[len("show configuration"):].strip()
            base = dev.inherited(dev.active) if "display inheritance" in pipe else dev.active
            lines = [ln for ln in base if not rest or ln == rest or ln.startswith(rest + " ")]
            return self.display(lines, pipe, header=True)
        if cmd == "show system commit":
            return self.show_commits()
        m = re.fullmatch(r"show system rollback (\d+) compare (\d+)", cmd)
        if m:  # differences from rollback config N (the base) to M: "+" = M has it, "-" = only N has it
            n, other = int(m.group(1)), int(m.group(2))
            if max(n, other) >= len(dev.history):
                return "error: rollback file not found\n"
            return compare(dev.history[n].lines, dev.history[other].lines)
        if cmd == "show version":
            return f"Hostname: {dev.hostname}\nModel: {dev.model}\nJunos: {dev.version}\n"
        if cmd.startswith(("show interfaces", "show class-of-service", "show chassis")):
            return ""
        if cmd.startswith("file show "):
            return ""
        return self.unknown(cmd)

    def unknown(self, cmd: str) -> str:
        pad = " " * len(self.prompt().split("\n")[-1])
        self.exit_status = 1
        return f"{pad}^\nunknown command.\n"

    def display(self, lines: list[str], pipe: str, header: bool = False) -> str:
        pipes = [p.strip() for p in pipe.split("|")] if pipe else []
        if "display set" in pipes:
            out = self.device.display_set(lines)
        else:
            out = self.device.hierarchical(lines) if lines else ""
            if header and self.device.history:
                c = self.device.history[0]
                out = f"## Last commit: {_stamp(c.when)} by {c.user}\n" + out
        for p in pipes:
            if p.startswith("match "):
                out = "".join(ln + "\n" for ln in out.splitlines() if re.search(p[6:].strip(), ln))
            elif p.startswith("except "):
                out = "".join(ln + "\n" for ln in out.splitlines() if not re.search(p[7:].strip(), ln))
            elif p == "count":
                out = f"Count: {len(out.splitlines())} lines\n"
        return out

    def show_commits(self) -> str:
        dev = self.device
        lines = []
        for i, c in enumerate(dev.history):
            extra = f" {c.note}" if c.note else ""
            if i == 0 and dev.confirm_pending:
                left = dev.confirm_seconds_left() or 0
                extra = f" commit confirmed, rollback in {max(1, round(left / 60))}mins"
            lines.append(f"{i:<4}{_stamp(c.when)} by {c.user} via {c.method}{extra}")
            if c.comment:
                lines.append(f"    {c.comment}")
        return "\n".join(lines) + "\n"

    def configure(self, args: list[str]) -> str:
        dev = self.device
        kind = args[0] if args else "shared"
        if kind not in ("private", "exclusive", "shared"):
            return self.unknown("configure " + kind)
        owner = dev.exclusive_owner
        if owner is not None and owner is not self:
            return (f"error: configuration database locked by:\n  {owner.username} terminal pts/0 (pid "
                    f"{owner.pid}) on since {_stamp(owner.since)}\n      exclusive [edit]\n")
        out = ""
        modified = dev.shared is not None and dev.shared.lines != dev.active
        if kind == "private":
            if modified:
                return ("error: shared configuration database modified\n"
                        "Users currently editing the configuration:\n  (shared candidate has changes)\n")
            self.db = _Db(list(dev.active))
            out = "warning: uncommitted changes will be discarded on exit\n"
        else:
            if kind == "exclusive" and modified:  # as the NETCONF lock: refused over uncommitted changes
                return "error: configuration database modified\n"
            if dev.shared is None:
                dev.shared = _Db(list(dev.active))
            self.db = dev.shared
            if kind == "exclusive":
                dev.exclusive_owner = self
                out = "warning: uncommitted changes will be discarded on exit\n"
        self.db_kind = kind
        self.mode = "config"
        return out + "Entering configuration mode\n"

    # ------------------------------------------------------------ config mode
    def config_command(self, cmd: str) -> str:
        dev = self.device
        assert self.db is not None
        words = cmd.split()
        if words[0] == "run":
            return self.op_command(cmd[4:])
        if words[0] == "set":
            return self.set_line(cmd[4:])
        if words[0] == "delete":
            return self.delete_line(cmd[7:])
        if cmd in ("load set terminal", "load merge terminal"):
            self.load_lines = []
            return "[Type ^D at a new line to end input]\n"
        if words[0] == "show":
            rest, _, pipe = cmd[4:].strip().partition("|")
            pipe = pipe.strip()
            if pipe.startswith("compare"):
                base = dev.active
                m = re.fullmatch(r"compare rollback (\d+)", pipe)
                if m:
                    n = int(m.group(1))
                    if n >= len(dev.history):
                        return "error: rollback file not found\n"
                    base = dev.history[n].lines
                return compare(base, self.db.lines)
            lines = [ln for ln in self.db.lines if not rest or ln == rest or ln.startswith(rest + " ")]
            return self.display(lines, pipe)
        if words[0] == "commit":
            return self.commit(words[1:], cmd)
        if words[0] == "rollback":
            n = int(words[1]) if len(words) > 1 and words[1].isdigit() else 0
            if n >= len(dev.history):
                return "error: rollback file not found\n"
            self.db.lines[:] = list(dev.history[n].lines)
            return "load complete\n"
        if cmd in ("exit", "quit", "exit configuration-mode", "top", "up"):
            if cmd in ("top", "up"):
                return ""
            if self.db.lines != dev.active:
                self.exit_question = True
                return "The configuration has been changed but not committed\n" + (
                    "warning: Auto rollback on exiting 'configure exclusive'\n" if self.db_kind == "exclusive"
                    else "")
            return self.leave_config()
        if words[0] in ("edit", "status", "annotate"):
            return ""
        return self.unknown(cmd)

    def set_line(self, rest: str) -> str:
        assert self.db is not None
        if not rest:
            return "syntax error, expecting <statement> or <identifier>.\n"
        if self.device.rejects("set " + rest):
            return self.syntax_error("set " + rest)
        bad = [why for one in leaf_list_lines(rest) if (why := value_error(one, self.device.version))]
        if bad:
            self.device.events.append(f"refused value: {bad[0]}")
            return f"error: {bad[0]}\n"
        for one in leaf_list_lines(rest):
            apply_set(self.db.lines, one, self.device.single_value)
        self.device.count_config_line()
        return ""

    def delete_line(self, rest: str) -> str:
        assert self.db is not None
        if self.device.rejects("delete " + rest):
            return self.syntax_error("delete " + rest)
        removed = sum(apply_delete(self.db.lines, one) for one in leaf_list_lines(rest)) if rest else len(
            self.db.lines)
        if not rest:
            self.db.lines.clear()
        self.device.count_config_line()
        return "" if removed else "warning: statement not found\n"

    def load_line(self, line: str) -> str:
        assert self.db is not None and self.load_lines is not None
        text = " ".join(tokens(line))
        n = len(self.load_lines) + 1
        if not text:
            self.load_lines.append("")
            return ""
        word, _, rest = text.partition(" ")
        if word not in ("set", "delete") or self.device.rejects(text):
            self.load_lines.append("!" + text)
            return f"terminal:{n}:(1) syntax error: {word}\n  [edit]\n    '{text}'\n      syntax error\n"
        bad = [why for one in leaf_list_lines(rest) if (why := value_error(one, self.device.version))]
        if word == "set" and bad:
            self.load_lines.append("!" + text)
            self.device.events.append(f"refused value: {bad[0]}")
            return f"terminal:{n}:(1) error: {bad[0]}\n  [edit]\n    '{text}'\n"
        self.load_lines.append(text)
        for one in leaf_list_lines(rest):
            if word == "set":
                apply_set(self.db.lines, one, self.device.single_value)
            else:
                apply_delete(self.db.lines, one)
        self.device.count_config_line()
        return ""

    def commit(self, args: list[str], cmd: str) -> str:
        dev = self.device
        assert self.db is not None
        if dev.rejects(cmd):
            return "error: configuration check-out failed\n"
        and_quit = "and-quit" in args
        m = re.search(r'comment (?:"([^"]*)"|(\S+))', cmd)  # Junos takes one word without quotes
        comment = (m.group(1) if m.group(1) is not None else m.group(2)) if m else ""
        if args[:1] == ["check"]:
            return "configuration check succeeds\n"
        out = ""
        if args[:1] == ["confirmed"] and self.db_kind == "private" and dev.faults.refuse_private_confirm:
            return "error: commit confirmed not supported for private configuration\n"
        if args[:1] == ["confirmed"]:
            minutes = int(args[1]) if len(args) > 1 and args[1].isdigit() else 10
            previous = list(dev.active)
            user = self.username

            def restore() -> None:
                dev.commit(previous, "root", note="(auto-rollback: commit confirmed not confirmed)")
                dev.history[0].method = "other"
                if dev.shared is not None:
                    dev.shared.lines[:] = list(previous)
                _ = user

            dev.commit(self.db.lines, self.username, comment)
            dev.arm_confirm(minutes * 60, restore, "commit confirmed")
            out = (f"commit confirmed will be automatically rolled back in {minutes} minutes unless "
                   f"confirmed\ncommit complete\n\n# commit confirmed will be rolled back in {minutes} "
                   "minutes\n")
        else:
            dev.confirm("commit confirmed")
            dev.commit(self.db.lines, self.username, comment)
            out = "commit complete\n"
        if self.db_kind == "private":
            self.db = _Db(list(dev.active))
        if and_quit:
            out += "Exiting configuration mode\n"
            self.leave_config()
        return out

    def leave_config(self) -> str:
        dev = self.device
        if self.db_kind == "exclusive":
            dev.exclusive_owner = None
            dev.shared = None
        self.mode = "op"
        self.db = None
        self.db_kind = ""
        return ""

    def on_disconnect(self) -> None:
        if self.mode == "config":
            self.leave_config()


def _stamp(t: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(t))
