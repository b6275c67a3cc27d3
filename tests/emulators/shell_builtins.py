"""Builtin commands of the minishell (``cat``, ``grep``, ``rm`` …) acting on the device sandbox.

Mixed into :class:`tests.emulators.minishell.LinuxSession`; every method takes
``(args, stdin)`` and returns ``(output, exit_status)``.
"""

from __future__ import annotations

import hashlib
import os
import posixpath
import re
import time
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .minishell import LinuxDevice


class ShellBuiltins:
    """bash-like builtins; the host class provides the session state used here."""

    device: LinuxDevice
    cwd: str
    home: str
    username: str
    root_depth: int
    closed: bool

    @property
    def is_root(self) -> bool:
        return self.root_depth > 0

    def hostname(self) -> str:
        return self.device.name

    def read_file(self, path: str) -> str | None:
        p = self.device.vpath(path, self.cwd)
        return p.read_text() if p.is_file() else None

    def writable(self, path: Path) -> bool:
        rel = path.relative_to(self.device.sandbox).as_posix()
        if self.is_root:
            return True
        return rel.startswith(("tmp", "home/" + self.username, "var/tmp"))

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
                    out += (f"-rw-r--r-- 1 {self.username} {self.username} {p.stat().st_size} Jan  1 00:00 "
                            f"{a}\n")
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
        rx = re.compile(pattern, re.IGNORECASE if "-i" in flags else 0)
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
        return (f"uid=1000({self.username}) gid=1000({self.username}) "
                f"groups=1000({self.username}),27(sudo)\n"), 0

    def cmd_hostname(self, args: list[str], stdin: str | None) -> tuple[str, int]:
        return self.hostname() + "\n", 0

    def cmd_uname(self, args: list[str], stdin: str | None) -> tuple[str, int]:
        return ("Linux\n" if "-a" not in args
                else f"Linux {self.hostname()} 6.1.0-emulated #1 SMP x86_64 GNU/Linux\n"), 0

    def cmd_sleep(self, args: list[str], stdin: str | None) -> tuple[str, int]:
        return "", 0

    def cmd_date(self, args: list[str], stdin: str | None) -> tuple[str, int]:
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
            os.unlink(self.device.vpath(next(a for a in args if not a.startswith("-")), self.cwd))
        return out, status
