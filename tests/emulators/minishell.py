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

import hashlib
import os
import posixpath
import re
import shlex
from pathlib import Path

from .core import CliSession, EmulatedDevice

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


class LinuxSession(CliSession):
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
    @property
    def is_root(self) -> bool:
        return self.root_depth > 0

    def hostname(self) -> str:
        return self.device.name

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
            body: list[str] = []
            for ln in rest.split("\n"):
                if ln == m.group(3):
                    break
                body.append(ln)
            out = self.run_line(_HEREDOC.sub("", first, count=1), "".join(x + "\n" for x in body))
        else:
            for line in command.split("\n"):
                out += self.run_line(line)
        return out, self.last_status

    def run_line(self, line: str, stdin: str | None = None) -> str:
        """Run a command line (``;``/``&&``/``||`` lists of pipelines)."""
        if not self.sudo_ok and re.search(r"(^|[;&|]\s*)sudo\b", line):
            if not re.match(r"\s*sudo\s+-n\b", line):
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
            if seg and not (op == "&&" and self.last_status != 0) and not (op == "||" and self.last_status == 0):
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

    def writable(self, path: Path) -> bool:
        rel = path.relative_to(self.device.sandbox).as_posix()
        if self.is_root:
            return True
        return rel.startswith(("tmp", "home/" + self.username, "var/tmp"))

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

    def read_file(self, path: str) -> str | None:
        p = self.device.vpath(path, self.cwd)
        return p.read_text() if p.is_file() else None

    # ------------------------------------------------------------ builtins
    def cmd_exit(self, args: list[str], stdin: str | None) -> tuple[str, int]:
        if self.root_depth > 0 and self.username != "root":
            self.root_depth -= 1
            return "", 0
        self.closed = True
        return "logout\n", int(args[0]) if args and args[0].isdigit() else 0

    cmd_logout = cmd_exit

    def cmd_true(self, args: list[str], stdin: str | None) -> tuple[str, int]:
        return "", 0

    def cmd_false(self, args: list[str], stdin: str | None) -> tuple[str, int]:
        return "", 1

    def cmd_echo(self, args: list[str], stdin: str | None) -> tuple[str, int]:
        if args[:1] == ["-n"]:
            return " ".join(args[1:]), 0
        return " ".join(args) + "\n", 0

    def cmd_cat(self, args: list[str], stdin: str | None) -> tuple[str, int]:
        if not args or args == ["-"]:
            return stdin or "", 0
        out = ""
        for a in args:
            text = self.read_file(a)
            if text is None:
                return out + f"cat: {a}: No such file or directory\n", 1
            out += text
        return out, 0

    def cmd_tee(self, args: list[str], stdin: str | None) -> tuple[str, int]:
        append = "-a" in args
        for a in [x for x in args if not x.startswith("-")]:
            p = self.device.vpath(a, self.cwd)
            if not self.writable(p):
                return f"tee: {a}: Permission denied\n", 1
            p.parent.mkdir(parents=True, exist_ok=True)
            with open(p, "a" if append else "w") as fh:
                fh.write(stdin or "")
        return stdin or "", 0

    def cmd_rm(self, args: list[str], stdin: str | None) -> tuple[str, int]:
        force = any(a.startswith("-") and "f" in a for a in args)
        for a in [x for x in args if not x.startswith("-")]:
            p = self.device.vpath(a, self.cwd)
            if p.is_file():
                if not self.writable(p):
                    return f"rm: cannot remove '{a}': Permission denied\n", 1
                p.unlink()
            elif not force:
                return f"rm: cannot remove '{a}': No such file or directory\n", 1
        return "", 0

    def cmd_mkdir(self, args: list[str], stdin: str | None) -> tuple[str, int]:
        for a in [x for x in args if not x.startswith("-")]:
            self.device.vpath(a, self.cwd).mkdir(parents=True, exist_ok=True)
        return "", 0

    def cmd_touch(self, args: list[str], stdin: str | None) -> tuple[str, int]:
        for a in args:
            p = self.device.vpath(a, self.cwd)
            p.parent.mkdir(parents=True, exist_ok=True)
            p.touch()
        return "", 0

    def cmd_ls(self, args: list[str], stdin: str | None) -> tuple[str, int]:
        paths = [x for x in args if not x.startswith("-")] or [self.cwd]
        out = ""
        for a in paths:
            p = self.device.vpath(a, self.cwd)
            if p.is_dir():
                out += "".join(f"{c.name}\n" for c in sorted(p.iterdir()))
            elif p.is_file():
                if "-l" in args:
                    out += f"-rw-r--r-- 1 {self.username} {self.username} {p.stat().st_size} Jan  1 00:00 {a}\n"
                else:
                    out += a + "\n"
            else:
                return out + f"ls: cannot access '{a}': No such file or directory\n", 2
        return out, 0

    def cmd_md5sum(self, args: list[str], stdin: str | None) -> tuple[str, int]:
        out = ""
        for a in args:
            p = self.device.vpath(a, self.cwd)
            if not p.is_file():
                return out + f"md5sum: {a}: No such file or directory\n", 1
            out += f"{hashlib.md5(p.read_bytes()).hexdigest()}  {a}\n"
        return out, 0

    def cmd_grep(self, args: list[str], stdin: str | None) -> tuple[str, int]:
        flags = [a for a in args if a.startswith("-")]
        rest = [a for a in args if not a.startswith("-")]
        if not rest:
            return "Usage: grep PATTERN [FILE]\n", 2
        pattern, files = rest[0], rest[1:]
        text = stdin or ""
        if files:
            text = "".join(self.read_file(f) or "" for f in files)
        rx = re.compile(pattern, re.I if "-i" in flags else 0)
        invert = "-v" in flags
        lines = [ln for ln in text.splitlines() if bool(rx.search(ln)) != invert]
        if "-c" in flags:
            return f"{len(lines)}\n", 0 if lines else 1
        return "".join(ln + "\n" for ln in lines), 0 if lines else 1

    def _n(self, args: list[str]) -> tuple[int, list[str]]:
        n = 10
        rest = []
        it = iter(args)
        for a in it:
            if a == "-n":
                n = int(next(it, "10"))
            elif re.fullmatch(r"-\d+", a):
                n = int(a[1:])
            else:
                rest.append(a)
        return n, rest

    def cmd_head(self, args: list[str], stdin: str | None) -> tuple[str, int]:
        n, files = self._n(args)
        text = "".join(self.read_file(f) or "" for f in files) if files else stdin or ""
        return "".join(ln + "\n" for ln in text.splitlines()[:n]), 0

    def cmd_tail(self, args: list[str], stdin: str | None) -> tuple[str, int]:
        n, files = self._n(args)
        text = "".join(self.read_file(f) or "" for f in files) if files else stdin or ""
        return "".join(ln + "\n" for ln in text.splitlines()[-n:] if n), 0

    def cmd_wc(self, args: list[str], stdin: str | None) -> tuple[str, int]:
        files = [a for a in args if not a.startswith("-")]
        text = "".join(self.read_file(f) or "" for f in files) if files else stdin or ""
        if "-l" in args:
            return f"{text.count(chr(10))}\n", 0
        return f"{text.count(chr(10))} {len(text.split())} {len(text)}\n", 0

    def cmd_test(self, args: list[str], stdin: str | None) -> tuple[str, int]:
        args = [a for a in args if a != "]"]
        if len(args) == 2 and args[0] in ("-f", "-e", "-d", "-s"):
            p = self.device.vpath(args[1], self.cwd)
            ok = {"-f": p.is_file(), "-e": p.exists(), "-d": p.is_dir(),
                  "-s": p.is_file() and p.stat().st_size > 0}[args[0]]
            return "", 0 if ok else 1
        if len(args) == 3 and args[1] in ("=", "==", "!="):
            return "", 0 if (args[0] == args[2]) == (args[1] != "!=") else 1
        return "", 1

    def cmd_cd(self, args: list[str], stdin: str | None) -> tuple[str, int]:
        target = posixpath.normpath(posixpath.join(self.cwd, args[0] if args else self.home))
        if not self.device.vpath(target).is_dir():
            return f"-bash: cd: {args[0]}: No such file or directory\n", 1
        self.cwd = target
        return "", 0

    def cmd_pwd(self, args: list[str], stdin: str | None) -> tuple[str, int]:
        return self.cwd + "\n", 0

    def cmd_whoami(self, args: list[str], stdin: str | None) -> tuple[str, int]:
        return ("root" if self.is_root else self.username) + "\n", 0

    def cmd_id(self, args: list[str], stdin: str | None) -> tuple[str, int]:
        if self.is_root:
            return "uid=0(root) gid=0(root) groups=0(root)\n", 0
        return f"uid=1000({self.username}) gid=1000({self.username}) groups=1000({self.username}),27(sudo)\n", 0

    def cmd_hostname(self, args: list[str], stdin: str | None) -> tuple[str, int]:
        return self.hostname() + "\n", 0

    def cmd_uname(self, args: list[str], stdin: str | None) -> tuple[str, int]:
        return ("Linux\n" if "-a" not in args
                else f"Linux {self.hostname()} 6.1.0-emulated #1 SMP x86_64 GNU/Linux\n"), 0

    def cmd_sleep(self, args: list[str], stdin: str | None) -> tuple[str, int]:
        return "", 0

    def cmd_date(self, args: list[str], stdin: str | None) -> tuple[str, int]:
        import time
        return time.strftime("%a %b %d %H:%M:%S UTC %Y", time.gmtime()) + "\n", 0

    def cmd_cp(self, args: list[str], stdin: str | None) -> tuple[str, int]:
        files = [a for a in args if not a.startswith("-")]
        if len(files) != 2:
            return "cp: missing file operand\n", 1
        src = self.device.vpath(files[0], self.cwd)
        dst = self.device.vpath(files[1], self.cwd)
        if not src.is_file():
            return f"cp: cannot stat '{files[0]}': No such file or directory\n", 1
        if dst.is_dir():
            dst = dst / src.name
        dst.write_bytes(src.read_bytes())
        return "", 0

    def cmd_mv(self, args: list[str], stdin: str | None) -> tuple[str, int]:
        out, status = self.cmd_cp(args, stdin)
        if status == 0:
            os.unlink(self.device.vpath([a for a in args if not a.startswith("-")][0], self.cwd))
        return out, status
