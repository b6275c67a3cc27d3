"""A small bash-like shell for the Linux-based switch emulators (Cumulus, SONiC).

Nothing is executed on the machine: builtins (cat, echo, rm, ls, grep, head, tail, wc,
md5sum, mkdir, touch, test, cd, pwd, whoami, hostname, sudo, exit …) act on the device's
sandbox directory, which stands for ``/`` (``/tmp/x`` → ``<sandbox>/tmp/x``; ``..`` cannot
leave it).  Supported syntax: ``;``, ``&&``, ``||``, ``|``, ``>``, ``>>``, ``2>&1``,
``2>/dev/null``, ``$?``/``$HOME``/``$USER``, and here-documents (``<<EOF``, ``<<'EOF'``,
``<<-EOF``) with the ``> `` continuation prompt.  Platform commands (``nv``, ``config``,
``show`` …) come from :meth:`LinuxSession.platform_command`.
"""

from __future__ import annotations

import posixpath
import re
import shlex
from pathlib import Path

from .core import CliSession, EmulatedDevice
from .shell_builtins import ShellBuiltins

_SPLIT = re.compile(r"(&&|\|\||;)")
_HEREDOC = re.compile(r"<<(-?)\s*(['\"]?)([A-Za-z_][A-Za-z0-9_]*)\2")


def _split_outside_quotes(line: str, seps: tuple[str, ...]) -> list[str]:
    """Split on separators outside quotes; separators are kept as their own items."""
    out: list[str] = []
    cur = ""
    quote = ""
    i = 0
    while i < len(line):
        ch = line[i]
        if quote:
            cur += ch
            if ch == quote:
                quote = ""
            i += 1
            continue
        if ch in "'\"":
            quote = ch
            cur += ch
            i += 1
            continue
        for sep in seps:
            if line.startswith(sep, i):
                out.append(cur)
                out.append(sep)
                cur = ""
                i += len(sep)
                break
        else:
            cur += ch
            i += 1
    out.append(cur)
    return out


class LinuxDevice(EmulatedDevice):
    """Base for Linux-based switches: sandbox file system plus SFTP/SCP."""

    file_transfer = True
    sudo_nopasswd = False

    def __init__(self, spec, workdir):  # type: ignore[no-untyped-def]
        super().__init__(spec, workdir)
        for d in (f"/home/{spec.username}", "/tmp", "/var/tmp", "/etc"):
            self.vpath(d).mkdir(parents=True, exist_ok=True)

    def vpath(self, path: str, cwd: str = "/") -> Path:
        """Map a device path to the sandbox (never outside it)."""
        absolute = posixpath.normpath(posixpath.join(cwd, path))
        rel = absolute.lstrip("/")
        return self.sandbox / rel if rel else self.sandbox


class LinuxSession(ShellBuiltins, CliSession):
    """bash-like session; subclasses implement :meth:`platform_command` and prompts."""

    device: LinuxDevice

    def __init__(self, device: LinuxDevice, username: str, interactive: bool) -> None:
        super().__init__(device, username, interactive)
        self.home = "/root" if username == "root" else f"/home/{username}"
        self.cwd = self.home
        self.root_depth = 1 if username == "root" else 0
        self.sudo_ok = device.sudo_nopasswd or username == "root"
        self.last_status = 0
        self.heredoc: tuple[str, str, bool, list[str]] | None = None
        self.pending_line: str | None = None
        self.pending_stdin: str | None = None
        self.password_mode = False
        self.confirm_handler = None  # type: ignore[var-annotated]
        self.confirm_prompt = ""
        for d in (self.home, "/tmp", "/etc"):
            device.vpath(d).mkdir(parents=True, exist_ok=True)

    # -------------------------------------------------------------- prompts
    def prompt_host(self) -> str:
        return self.hostname()

    def display_cwd(self) -> str:
        if not self.is_root and (self.cwd == self.home or self.cwd.startswith(self.home + "/")):
            return "~" + self.cwd[len(self.home):]
        return self.cwd

    def prompt(self) -> str:
        if self.password_mode:
            return f"[sudo] password for {self.username}: "
        if self.confirm_handler is not None:
            return self.confirm_prompt
        if self.heredoc is not None:
            return "> "
        user = "root" if self.is_root else self.username
        mark = "#" if self.is_root else "$"
        return f"{user}@{self.prompt_host()}:{self.display_cwd()}{mark} "

    # -------------------------------------------------------------- input
    def handle_line(self, line: str) -> str:
        if self.password_mode:
            return self._password(line)
        if self.confirm_handler is not None:
            handler, self.confirm_handler = self.confirm_handler, None
            return handler(line.strip())
        if self.heredoc is not None:
            return self._heredoc_line(line)
        self.device.commands_seen.append(line.strip())
        m = _HEREDOC.search(line)
        if m:
            self.heredoc = (line, m.group(3), m.group(1) == "-", [])
            return ""
        return self.run_line(line)

    def handle_ctrl_c(self) -> str:
        self.heredoc = None
        self.password_mode = False
        self.confirm_handler = None
        self.last_status = 130
        return "^C\n"

    def handle_ctrl_d(self) -> str:
        if self.heredoc is not None:
            cmd, _, _, body = self.heredoc
            self.heredoc = None
            return self.run_line(cmd, "".join(x + "\n" for x in body))
        if self.root_depth > 0 and self.username != "root":
            self.root_depth -= 1
            return "exit\n"
        self.closed = True
        return "logout\n"

    def _heredoc_line(self, line: str) -> str:
        assert self.heredoc is not None
        cmd, delim, strip_tabs, body = self.heredoc
        text = line.lstrip("\t") if strip_tabs else line
        if text == delim:
            self.heredoc = None
            return self.run_line(_HEREDOC.sub("", cmd, count=1), "".join(x + "\n" for x in body))
        body.append(text)
        self.device.count_config_line()
        return ""

    def _password(self, line: str) -> str:
        self.password_mode = False
        self.echo = True
        pending, self.pending_line = self.pending_line, None
        stdin, self.pending_stdin = self.pending_stdin, None
        if line != self.device.secret:
            self.last_status = 1
            return "Sorry, try again.\nsudo: 1 incorrect password attempt\n"
        self.sudo_ok = True
        return self.run_line(pending or "", stdin)

    # ------------------------------------------------------------ execution
    def run_exec(self, command: str) -> tuple[str, int]:
        self.sudo_ok = True  # non-interactive sudo (``ssh host sudo x``): assume NOPASSWD
        out = ""
        m = _HEREDOC.search(command)
        if m and "\n" in command:
            first, _, rest = command.partition("\n")
            self.device.commands_seen.append(first.strip())  # as typed; the here-document is its stdin
            body: list[str] = []
            for ln in rest.split("\n"):
                if ln == m.group(3):
                    break
                body.append(ln)
            out = self.run_line(_HEREDOC.sub("", first, count=1), "".join(x + "\n" for x in body))
        else:
            for line in command.split("\n"):
                self.device.commands_seen.append(line.strip())
                out += self.run_line(line)
        return out, self.last_status

    def run_line(self, line: str, stdin: str | None = None) -> str:
        """Run a command line (``;``/``&&``/``||`` lists of pipelines)."""
        if (not self.sudo_ok and re.search(r"(^|[;&|]\s*)sudo\b", line)
                and not re.match(r"\s*sudo\s+-n\b", line)):
            self.pending_line = line
            self.pending_stdin = stdin
            self.password_mode = True
            self.echo = False
            return ""
        out = ""
        parts = _split_outside_quotes(line, ("&&", "||", ";"))
        op = ";"
        for i in range(0, len(parts), 2):
            seg = parts[i].strip()
            if seg and not (op == "&&" and self.last_status != 0) and not (op == "||"
                                                                           and self.last_status == 0):
                out += self.run_pipeline(seg, stdin)
                stdin = None
            if i + 1 < len(parts):
                op = parts[i + 1]
            if self.closed or self.confirm_handler is not None:
                break
        return out

    def run_pipeline(self, seg: str, stdin: str | None) -> str:
        stages = [s.strip() for s in _split_outside_quotes(seg, ("|",)) if s.strip() and s != "|"]
        data = stdin
        out = ""
        for n, stage in enumerate(stages):
            out, status = self.run_simple(stage, data)
            self.last_status = status
            if n < len(stages) - 1:
                data = out
                out = ""
        return out

    def expand(self, word: str) -> str:
        word = word.replace("$?", str(self.last_status))
        word = word.replace("${HOME}", self.home).replace("$HOME", self.home)
        word = word.replace("$USER", self.username)
        if word == "~" or word.startswith("~/"):
            word = self.home + word[1:]
        return word

    def run_simple(self, stage: str, stdin: str | None) -> tuple[str, int]:
        redirect: tuple[str, str] | None = None
        stage = stage.replace("2>&1", " ")
        stage = re.sub(r"2>\s*/dev/null", " ", stage)
        m = re.search(r"(>>?)\s*(\S+)\s*$", stage)
        if m and not stage[: m.start()].rstrip().endswith("2"):
            redirect = (m.group(1), m.group(2))
            stage = stage[: m.start()]
        try:
            argv = [self.expand(w) for w in shlex.split(stage)]
        except ValueError as exc:
            return f"-bash: syntax error: {exc}\n", 2
        if not argv:
            return "", 0
        out, status = self.dispatch(argv, stdin)
        if redirect is not None:
            path = self.device.vpath(self.expand(redirect[1]), self.cwd)
            if redirect[1] == "/dev/null":
                return "", status
            if not self.writable(path):
                return f"-bash: {redirect[1]}: Permission denied\n", 1
            path.parent.mkdir(parents=True, exist_ok=True)
            with open(path, "a" if redirect[0] == ">>" else "w") as fh:
                fh.write(out)
            return "", status
        return out, status

    def dispatch(self, argv: list[str], stdin: str | None) -> tuple[str, int]:
        name = argv[0]
        if name == "sudo":
            return self.sudo(argv[1:], stdin)
        result = self.platform_command(argv, stdin)
        if result is not None:
            return result
        builtin = getattr(self, "cmd_" + name.replace("-", "_").replace("[", "test"), None)
        if builtin is not None and name.isascii():
            return builtin(argv[1:], stdin)  # type: ignore[no-any-return]
        return f"-bash: {name}: command not found\n", 127

    def sudo(self, args: list[str], stdin: str | None) -> tuple[str, int]:
        while args and args[0] in ("-n", "-E", "-H"):
            args = args[1:]
        if not args or args[0] in ("-s", "-i", "su", "bash") or args == ["su", "-"]:
            self.root_depth += 1
            return "", 0
        self.root_depth += 1
        try:
            return self.dispatch(args, stdin)
        finally:
            self.root_depth -= 1

    # ------------------------------------------------------- platform hook
    def platform_command(self, argv: list[str], stdin: str | None) -> tuple[str, int] | None:
        return None

    def ask(self, prompt: str, handler) -> None:  # type: ignore[no-untyped-def]
        """Wait for one answer line (``Are you sure? [y/N]``) then call handler(answer)."""
        self.confirm_prompt = prompt
        self.confirm_handler = handler
