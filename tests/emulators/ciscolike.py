"""Cisco-style CLI session shared by the EOS and NX-OS emulators.

Modes: ``exec`` (``host>``), ``enable`` (``host#``) and ``config`` (``host(config…)#``).
Platform modules subclass :class:`CiscoLikeSession` and fill in ``exec_command`` /
``config_special`` plus the prompt details; the tree mechanics live in ``clitree``.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from .clitree import ConfigError, Context, Dialect, Node, apply_line, parse_config, render
from .core import CliSession, EmulatedDevice, apply_pipes


class CiscoLikeDevice(EmulatedDevice):
    """Device with a running/startup configuration tree."""

    dialect: Dialect
    factory_config: str = ""

    def __init__(self, spec, workdir):  # type: ignore[no-untyped-def]
        super().__init__(spec, workdir)
        text = spec.initial_config
        if text is None:
            text = self.factory_config.format(name=spec.name, user=spec.username)
        self.running = parse_config(text, self.dialect)
        if self.running.find(f"hostname {spec.name}") is None and not any(
            c.text.startswith("hostname ") for c in self.running.children
        ):
            self.running.children.insert(0, Node(f"hostname {spec.name}"))
        self.startup = self.running.copy()

    @property
    def hostname(self) -> str:
        for child in self.running.children:
            if child.text.startswith("hostname "):
                return child.text.split(" ", 1)[1]
        return "localhost"

    def body_lines(self, tree: Node | None = None) -> list[str]:
        raise NotImplementedError

    def running_config(self) -> str:
        with self.lock:
            return "\n".join(self.body_lines(self.running)) + "\n"


class CiscoLikeSession(CliSession):
    """Exec/enable/config state machine with pipes, ``do``, ``no`` and sub-modes."""

    device: CiscoLikeDevice
    prompt_space = ""

    def __init__(self, device: CiscoLikeDevice, username: str, interactive: bool) -> None:
        super().__init__(device, username, interactive)
        self.mode = "enable"
        self.ctx = Context()
        self.tree: Node = device.running
        self.pending: Callable[[str], str] | None = None
        self.terminal: dict[str, str] = {}

    # ---------------------------------------------------------------- prompts
    def config_prefix(self) -> str:
        return "config"

    def prompt(self) -> str:
        host = self.device.hostname
        if self.pending is not None:
            return self.pending_prompt
        if self.mode == "exec":
            return f"{host}>{self.prompt_space}"
        if self.mode == "enable":
            return f"{host}#{self.prompt_space}"
        suffix = self.ctx.prompt_suffix()
        inner = self.config_prefix() + (f"-{suffix}" if suffix else "")
        return f"{host}({inner})#{self.prompt_space}"

    pending_prompt = ""

    # ---------------------------------------------------------------- errors
    def invalid(self, line: str) -> str:
        return self.device.dialect.invalid_format + "\n"

    # ---------------------------------------------------------------- dispatch
    def handle_line(self, line: str) -> str:
        if self.pending is not None:
            handler, self.pending = self.pending, None
            self.echo = True
            return handler(line)
        stripped = line.strip()
        self.device.commands_seen.append(stripped)
        if not stripped:
            return ""
        if self.mode == "config":
            return self.config_line(line)
        return self.exec_line(stripped)

    def exec_line(self, cmd: str) -> str:
        cmd = " ".join(cmd.split())
        if self.device.rejects(cmd):
            return self.invalid(cmd)
        pipes: list[str] = []
        if "|" in cmd:
            parts = cmd.split("|")
            cmd, pipes = parts[0].strip(), [p.strip() for p in parts[1:]]
        if cmd in ("exit", "quit", "logout"):
            self.closed = True
            return ""
        if cmd.startswith("terminal "):
            return self.terminal_command(cmd)
        if cmd == "enable":
            return self.enable()
        if cmd == "disable":
            self.mode = "exec"
            return ""
        if self.mode == "exec" and not cmd.startswith("show "):
            return self.invalid(cmd)
        result = self.exec_command(cmd, pipes)
        if result is None:
            self.exit_status = 1
            return self.invalid(cmd)
        json_out = any(p.strip() == "json" for p in pipes)
        if pipes and not json_out:
            result = apply_pipes(result.rstrip("\n"), pipes)
            result = result + "\n" if result else ""
        return result

    def enable(self) -> str:
        if self.mode != "exec":
            return ""
        self.pending_prompt = "Password: "
        self.echo = False

        def check(pw: str) -> str:
            if pw == self.device.secret:
                self.mode = "enable"
                return ""
            return "% Access denied\n"

        self.pending = check
        return ""

    def terminal_command(self, cmd: str) -> str:
        words = cmd.split()
        if len(words) >= 2:
            self.terminal[words[1]] = " ".join(words[2:])
        return ""

    def config_line(self, raw: str) -> str:
        line = " ".join(raw.split())
        if line.startswith("do "):
            return self.exec_line(line[3:])
        if line.startswith("show ") or line == "show":
            return self.exec_line(line)
        if line == "end":
            return self.leave_config()
        if line == "exit":
            if self.ctx.stack:
                self.ctx.stack.pop()
                return ""
            return self.leave_config()
        special = self.config_special(line)
        if special is not None:
            return special
        if self.device.rejects(line):
            return self.invalid(line)
        try:
            apply_line(self.tree, self.ctx, raw, self.device.dialect)
        except ConfigError as exc:
            return str(exc) + "\n"
        finally:
            self.config_applied(line)
        if not line.startswith(self.device.dialect.comment):
            self.device.count_config_line()
        return ""

    def leave_config(self) -> str:
        self.mode = "enable"
        self.ctx = Context()
        self.tree = self.device.running
        return ""

    # ------------------------------------------------------------ subclass API
    def exec_command(self, cmd: str, pipes: list[str]) -> str | None:
        """Return output for an exec command, or None for ``% Invalid input``."""
        return None

    def config_special(self, line: str) -> str | None:
        """Handle non-configuration commands in config mode (commit, abort ...)."""
        return None

    def config_applied(self, line: str) -> None:
        """Hook after a config line touched ``self.tree``."""

    def show_running(self, tree: Node) -> str:
        return "\n".join(self.device.body_lines(tree)) + "\n"

    def enter_config(self) -> str:
        self.mode = "config"
        self.ctx = Context()
        self.tree = self.device.running
        return ""


def tree_lines(tree: Node, unit: int, separator: str | None) -> list[str]:
    return render(tree, unit, separator)


def strip_comments(text: str) -> str:
    return "\n".join(ln for ln in text.splitlines() if not re.match(r"^\s*!", ln))
