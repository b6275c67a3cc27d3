"""NVIDIA Cumulus Linux (NVUE) emulator on the minishell.

Prompt ``cumulus@leaf1:mgmt:~$ `` (root: ``root@leaf1:mgmt:/home/cumulus# `` after
``sudo -s`` and the ``[sudo] password for …:`` prompt, as netmiko's ``cumulus_linux`` /
``linux`` drivers expect).  The NVUE configuration is kept as ``nv set`` paths; the
pending revision, applied revision, startup copy, revision history and the
``--confirm`` timer are device state.  ``nv config diff`` prints **commands**
(``nv set …`` / ``nv unset …``), the documented choice of this emulator.
"""

from __future__ import annotations

import re
import shlex
import time
from typing import Any

import yaml

from .junostree import apply_delete, apply_set
from .minishell import LinuxDevice, LinuxSession
from .nvue_grammar import nvue_error

SINGLE_VALUE = tuple(re.compile(p) for p in (
    r"(qos roce mode) ", r"(qos mapping \S+ trust) ", r"(qos mapping \S+ (?:dscp|pcp) \S+ switch-priority) ",
    r"(qos egress-queue-mapping \S+ switch-priority \S+ traffic-class) ",
    r"(qos pfc \S+ (?:tx|rx|cable-length|xoff-threshold|xon-threshold|port-buffer)) ",
    r"(qos congestion-control \S+ traffic-class \S+ (?:ecn|red|min-threshold|max-threshold|probability)) ",
    r"(qos egress-scheduler \S+ traffic-class \S+ (?:mode|bw-percent)) ",
    r"(qos traffic-pool \S+ memory-percent) ", r"(qos pfc-watchdog (?:polling-interval|robustness)) ",
    r"(interface \S+ (?:link mtu|link speed|description)) ",
    r"(interface \S+ qos (?:mapping|pfc|congestion-control|egress-scheduler) profile) ",
    r"(system hostname) ",
))

FACTORY = """nv set system hostname {name}
nv set interface eth0 ip vrf mgmt
nv set interface swp1-4 link state up
"""


def flatten(tree: Any, path: tuple[str, ...] = ()) -> list[str]:
    """YAML tree → ``nv set`` paths (``{}``/``None`` leaves are presence statements)."""
    out: list[str] = []
    if isinstance(tree, dict):
        if not tree and path:
            out.append(" ".join(path))
        for key, val in tree.items():
            out.extend(flatten(val, path + (str(key),)))
    elif tree is None:
        out.append(" ".join(path))
    else:
        if isinstance(tree, bool):
            tree = "on" if tree else "off"
        out.append(" ".join(path + (str(tree),)))
    return out


def unflatten(lines: list[str]) -> dict[str, Any]:
    root: dict[str, Any] = {}
    for line in lines:
        words = line.split()
        cur = root
        for w in words[:-1]:
            nxt = cur.get(w)
            if not isinstance(nxt, dict):
                nxt = {}
                cur[w] = nxt
            cur = nxt
        cur.setdefault(words[-1], {})
    return _collapse(root)


def _collapse(tree: dict[str, Any]) -> Any:
    out: dict[str, Any] = {}
    for k, v in tree.items():
        if len(v) == 1 and not next(iter(v.values())):
            out[k] = next(iter(v))
        else:
            out[k] = _collapse(v) if v else {}
    return out


class CumulusDevice(LinuxDevice):
    """Cumulus Linux 5.x switch (``netmiko`` device_type ``cumulus_linux``).

    Options: ``vrf`` (prompt VRF, default ``mgmt``), ``sudo_nopasswd`` (False),
    ``version`` (5.9.1).
    """

    platform = "cumulus"
    netmiko_device_type = "cumulus_linux"

    def __init__(self, spec, workdir):  # type: ignore[no-untyped-def]
        super().__init__(spec, workdir)
        self.sudo_nopasswd = bool(spec.options.get("sudo_nopasswd", False))
        text = spec.initial_config
        if text is None:
            text = FACTORY.format(name=spec.name, user=spec.username)
        lines: list[str] = []
        for raw in text.splitlines():
            raw = " ".join(raw.split())
            if raw.startswith("nv set "):
                apply_set(lines, raw[7:], SINGLE_VALUE)
        self.applied = lines
        self.startup = list(lines)
        self.pending: list[str] | None = None
        self.rev = 1
        self.history: list[dict[str, Any]] = [
            {"rev": 1, "state": "applied", "lines": list(lines), "user": "root", "when": time.time(),
             "message": "factory"}]
        self.version = spec.options.get("version", "5.9.1")
        self.vrf = spec.options.get("vrf", "mgmt")

    @property
    def hostname(self) -> str:
        for line in self.applied:
            if line.startswith("system hostname "):
                return line.split()[2]
        return self.name

    def running_config(self) -> str:
        """Applied configuration as ``nv config show -o commands`` prints it."""
        with self.lock:
            return "".join(f"nv set {ln}\n" for ln in self.applied)

    def new_session(self, username: str, interactive: bool) -> CumulusSession:
        return CumulusSession(self, username, interactive)


class CumulusSession(LinuxSession):
    device: CumulusDevice

    def banner(self) -> str:
        return (f"Linux {self.device.hostname} 6.1.0-cl-1-amd64 x86_64\n\n"
                "Welcome to NVIDIA Cumulus (R) Linux (R)\n\n")

    def prompt_host(self) -> str:
        return f"{self.device.hostname}:{self.device.vrf}"

    def hostname(self) -> str:
        return self.device.hostname

    def platform_command(self, argv: list[str], stdin: str | None) -> tuple[str, int] | None:
        if argv[0] != "nv":
            return None
        dev = self.device
        cmd = "nv " + " ".join(shlex.quote(a) if " " in a else a for a in argv[1:])
        if dev.rejects(cmd):
            return f"Error: Invalid Command: {cmd}\n", 1
        args = argv[1:]
        if args[:1] == ["set"] or args[:1] == ["unset"]:
            if len(args) < 2:
                return f"Error: Incomplete Command: {cmd}\n", 1
            path = " ".join(args[1:])
            error = nvue_error(path, dev.version) if args[0] == "set" else None
            if error:  # NVUE checks the value against its schema at `nv set` time
                return error + "\n", 1
            if dev.pending is None:
                dev.pending = list(dev.applied)
            if args[0] == "set":
                apply_set(dev.pending, path, SINGLE_VALUE)
            else:
                apply_delete(dev.pending, path)
            dev.count_config_line()
            return "", 0
        if args[:1] == ["config"]:
            return self.config(args[1:])
        if args[:1] == ["show"]:
            return self.show(args[1:])
        if args[:1] == ["action"]:
            return "Action succeeded\n", 0
        return f"Error: Invalid Command: {cmd}\n", 1

    # ---------------------------------------------------------- nv config
    def _rev_lines(self, name: str) -> list[str] | None:
        dev = self.device
        if name == "applied":
            return dev.applied
        if name == "startup":
            return dev.startup
        if name == "empty":
            return []
        if name == "pending":
            return dev.pending if dev.pending is not None else dev.applied
        if name.isdigit():
            for h in dev.history:
                if h["rev"] == int(name):
                    return h["lines"]  # type: ignore[no-any-return]
        return None

    def config(self, args: list[str]) -> tuple[str, int]:
        dev = self.device
        sub = args[0] if args else ""
        rest = [a for a in args[1:] if a not in ("-o", "commands", "--output")]
        if sub == "diff":
            names = [a for a in rest if not a.startswith("-")]
            base = self._rev_lines(names[0]) if len(names) >= 1 else dev.applied
            target = self._rev_lines(names[1]) if len(names) >= 2 else self._rev_lines("pending")
            if base is None or target is None:
                return "Error: Unknown revision\n", 1
            out = [f"nv unset {ln}" for ln in base if ln not in target]
            out += [f"nv set {ln}" for ln in target if ln not in base]
            return "".join(x + "\n" for x in out), 0
        if sub == "show":
            if "yaml" in args or "-o" not in args:
                return yaml.safe_dump([{"set": unflatten(dev.applied)}], sort_keys=False), 0
            return "".join(f"nv set {ln}\n" for ln in dev.applied), 0
        if sub == "detach":
            dev.pending = None
            return "", 0
        if sub in ("patch", "replace"):
            if not rest:
                return f"Error: nv config {sub} requires a file\n", 1
            text = self.read_file(rest[0])
            if text is None:
                return f"Error: [Errno 2] No such file or directory: '{rest[0]}'\n", 1
            try:
                doc = yaml.safe_load(text)
            except yaml.YAMLError as exc:
                return f"Error: Invalid YAML: {exc}\n", 1
            items = doc if isinstance(doc, list) else [{"set": doc or {}}]
            pending = [] if sub == "replace" else list(dev.pending if dev.pending is not None
                                                       else dev.applied)
            for item in items:
                if not isinstance(item, dict):
                    return "Error: Invalid config format\n", 1
                for op, tree in item.items():
                    for line in flatten(tree):
                        if dev.rejects(f"nv {op} {line}") or op == "set" and nvue_error(line, dev.version):
                            return f"Error: Invalid config: nv {op} {line}\n", 1
                        (apply_set if op == "set" else apply_delete)(pending, line, *(
                            (SINGLE_VALUE,) if op == "set" else ()))
            dev.pending = pending
            return "", 0
        if sub == "apply":
            return self.apply(args[1:])
        if sub in ("history", "revision"):
            lines = ["Rev ID  State     Apply Date            User   Message", "-" * 60]
            for h in reversed(dev.history):
                lines.append(f"{h['rev']:<8}{h['state']:<10}{_stamp(h['when'])}  "
                             f"{h['user']:<7}{h['message']}")
            if dev.pending is not None:
                lines.append(f"{dev.rev + 1:<8}pending")
            return "\n".join(lines) + "\n", 0
        if sub == "save":
            if dev.faults.fail_save:
                return ("Error: failed to save the startup configuration: [Errno 28] No space left on "
                        "device\n"), 1
            dev.startup = list(dev.applied)
            return "saved\n", 0
        return f"Error: Invalid Command: nv config {' '.join(args)}\n", 1

    def apply(self, args: list[str]) -> tuple[str, int]:
        dev = self.device
        if "--confirm-yes" in args:
            if dev.confirm("nv config apply --confirm"):
                return f"Confirmed [rev_id: {dev.rev}]\n", 0
            return "Error: No apply to confirm\n", 1
        if "--confirm-no" in args:
            if dev.revert_pending("nv config apply --confirm"):
                return f"Reverted [rev_id: {dev.rev}]\n", 0
            return "Error: No apply to revert\n", 1
        if "--confirm-status" in args:
            left = dev.confirm_seconds_left()
            return (f"Confirm time left: {int(left)}s\n" if left is not None else "No pending confirm\n"), 0
        confirm_s: float | None = None
        message = ""
        positional: list[str] = []
        it = iter(args)
        for a in it:
            if a == "--confirm":
                confirm_s = _duration(next(it, "600s"))
            elif a.startswith("--confirm="):
                confirm_s = _duration(a.split("=", 1)[1])
            elif a in ("-m", "--message"):
                message = next(it, "")
            elif not a.startswith("-"):
                positional.append(a)
        if confirm_s is None and "--confirm" in " ".join(args):
            confirm_s = 600.0
        target = self._rev_lines(positional[0]) if positional else dev.pending
        if positional and target is None:
            return f"Error: Unknown revision {positional[0]}\n", 1
        if target is None:
            return "Warning: No pending changes to apply.\n", 0
        bad = [ln for ln in target if dev.rejects(f"nv set {ln}")]
        if bad:
            return f"Error: Invalid config [rev_id: {dev.rev + 1}]\n  nv set {bad[0]}\n", 1

        def do_apply(answer: str = "y") -> str:
            if answer.lower() not in ("y", "yes"):
                return "Aborted by user\n"
            previous, prev_startup = list(dev.applied), list(dev.startup)
            dev.applied = list(target)
            if not dev.faults.fail_save:  # the auto-save (CL >= 5.9) fails like nv config save
                dev.startup = list(target)
            dev.pending = None
            dev.rev += 1
            entry = {"rev": dev.rev, "state": "applied", "lines": list(target), "user": self.username,
                     "when": time.time(), "message": message}
            dev.history.append(entry)
            if confirm_s is not None:
                def restore() -> None:
                    dev.applied = previous
                    dev.startup = prev_startup
                    entry["state"] = "confirm_failed"
                    dev.rev += 1
                    dev.history.append({"rev": dev.rev, "state": "applied", "lines": list(previous),
                                        "user": "root", "when": time.time(), "message": "confirm timeout "
                                        "revert"})
                dev.arm_confirm(confirm_s, restore, "nv config apply --confirm")
            return f"applied [rev_id: {dev.rev}]\n"

        if "-y" in args or "--assume-yes" in args or not self.interactive:
            return do_apply(), 0
        self.ask("Are you sure? [y/N] ", lambda ans: do_apply(ans))
        return "", 0

    # ---------------------------------------------------------- nv show
    def show(self, args: list[str]) -> tuple[str, int]:
        dev = self.device
        text = " ".join(args)
        if text.startswith("qos roce"):
            mode = "disabled"
            for ln in dev.applied:
                if ln == "qos roce" or ln.startswith("qos roce "):
                    mode = ln.split()[3] if ln.startswith("qos roce mode ") else "lossless"
            enabled = "on" if mode != "disabled" else "off"
            rows = [("enable", enabled), ("mode", mode), ("pfc", ""),
                    ("  pfc-priority", "3" if enabled == "on"
                    else ""), ("congestion-control", ""), ("  congestion-mode",
                                                           "ECN" if enabled == "on" else ""),
                    ("  enabled-tc", "0,3" if enabled == "on" else ""), ("trust", ""),
                    ("  trust-mode", "pcp,dscp" if enabled == "on" else "")]
            out = ["                    operational  applied", "------------------  -----------  -------"]
            out += [f"{k:<20}{v:<13}{v}" for k, v in rows]
            return "\n".join(out) + "\n", 0
        if text.startswith("system"):
            return f"hostname   {dev.hostname}\nbuild      Cumulus Linux {dev.version}\n", 0
        return "", 0


def _duration(text: str) -> float:
    m = re.fullmatch(r"(\d+(?:\.\d+)?)([smh]?)", text)
    if not m:
        return 600.0
    return float(m.group(1)) * {"": 1, "s": 1, "m": 60, "h": 3600}[m.group(2)]


def _stamp(t: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(t))
