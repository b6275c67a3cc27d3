"""Split pasted terminal captures into command blocks (read by ``roce-tune audit`` and by the LLDP import of
:mod:`roce_tune.inventory.lldp`).

A capture file is named ``<device>[.<anything>].txt`` and holds the output of one or more commands as
pasted from a terminal. Prompt lines separate the blocks and give each block its command::

    admin@leaf1:~$ show pfc counters           user@host:/path# cmd, user@host> cmd (Junos)
    root@gpu01:~# ethtool -S ens1f0np0         [root@gpu01 ~]# cmd
    bash-4.2# grep "" /sys/class/...           bash-N.N# / sh-N.N$ cmd
    $ ethtool -S ens1f0np0                     bare "$ " or "# " before a known command
    leaf1# show queuing interface eth1/1       NX-OS / EOS "name#" or "name>" before show/nv/…

A bare ``#``/``$`` or ``name#`` prompt counts only before a command a RoCE engineer runs (``show``,
``ethtool``, ``grep`` …) so nccl-tests header lines (``# nThread 1 …``) and comments are not taken for
prompts. A prompt with nothing typed after it (the one a paste ends with) ends the block before it. Lines
are kept with their 1-based numbers for evidence.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["Block", "device_of", "prompt_host", "read_capture", "split_blocks"]

KNOWN_COMMANDS = (
    "show", "nv", "net", "ethtool", "grep", "egrep", "cat", "for", "mlnx_qos", "ip", "ibv_devinfo",
    "show_gids",
    "rdma", "env", "printenv", "sudo", "diff", "cma_roce_tos", "cma_roce_mode", "lspci", "mpirun", "srun",
    "nvidia-smi", "ucx_info", "sysctl", "sonic-db-cli", "pfcstat", "ecnconfig", "head", "tail", "awk",
    "watch",
    "dcb", "lldptool", "lldpctl", "lldpcli", "ibdev2netdev", "mst", "mlxconfig", "tc", "vtysh", "cli", "set",
    "run")
_CMD_WORD = r"(?:" + "|".join(re.escape(c) for c in KNOWN_COMMANDS) + r")\b|\S*_perf\b|\./\S+"
_PROMPTS = (
    re.compile(r"^\[[\w.\-]+@[\w.\-]+[^\]]*\]\s*[$#]\s*(?P<cmd>\S.*)$"),
    re.compile(r"^(?:\([\w.\-]+\)\s*)?[\w.\-]+@[\w.\-]+(?::[^\s$#>]*)*\s*[$#>%]\s*(?P<cmd>\S.*)$"),
    re.compile(r"^(?:bash|sh|zsh)-[\d.]+[$#]\s*(?P<cmd>\S.*)$"),
    re.compile(r"^[$#]\s+(?P<cmd>(?:" + _CMD_WORD + r").*)$"),
    re.compile(r"^[\w.\-]+(?:\([\w\-]+\))?\s?[#>]\s*(?P<cmd>(?:" + _CMD_WORD + r").*)$"),
)


#: A prompt with nothing typed after it (the prompt a paste ends with): it ends the block before it.
_BARE_PROMPTS = (
    re.compile(r"^\[[\w.\-]+@[\w.\-]+[^\]]*\]\s*[$#]$"),
    re.compile(r"^(?:\([\w.\-]+\)\s*)?[\w.\-]+@[\w.\-]+(?::[^\s$#>]*)*\s*[$#>%]$"),
    re.compile(r"^(?:bash|sh|zsh)-[\d.]+[$#]$"),
)


@dataclass
class Block:
    """One command's output: ``lines`` are ``(line_no, text)`` (1-based), ``command`` the prompt's
    command (None when the block has no prompt), ``prompt_line`` its line number."""

    file: str
    device: str
    command: str | None
    prompt_line: int | None
    lines: list[tuple[int, str]] = field(default_factory=list)

    @property
    def text(self) -> str:
        """The block's output as one string."""
        return "\n".join(t for _, t in self.lines)

    @property
    def start(self) -> int:
        """Line of the prompt, or of the first output line."""
        if self.prompt_line is not None:
            return self.prompt_line
        return self.lines[0][0] if self.lines else 1

    def line_of(self, index: int) -> int:
        """Capture line number of the ``index``-th output line (0-based)."""
        return self.lines[min(index, len(self.lines) - 1)][0] if self.lines else self.start


def prompt_command(line: str) -> str | None:
    """The command of a prompt line, or None when ``line`` is not a prompt."""
    s = line.rstrip()
    for pat in _PROMPTS:
        m = pat.match(s)
        if m:
            return m.group("cmd").strip()
    return None


def is_bare_prompt(line: str, device: str) -> bool:
    """Whether ``line`` is a prompt with no command (``admin@leaf1:~$``, ``[root@gpu01 ~]#``, or the
    device's own ``leaf1#`` / ``leaf1>``): what a paste ends with after the last command's output."""
    s = line.strip()
    if any(p.match(s) for p in _BARE_PROMPTS):
        return True
    return bool(device) and re.fullmatch(re.escape(device) + r"(?:\([\w\-]+\))?\s?[#>]", s) is not None


_PROMPT_HOSTS = (
    re.compile(r"^\[[\w.\-]+@(?P<host>[\w.\-]+)[^\]]*\]\s*[$#]"),
    re.compile(r"^(?:\([\w.\-]+\)\s*)?[\w.\-]+@(?P<host>[\w.\-]+)(?::[^\s$#>]*)*\s*[$#>%]"),
    re.compile(r"^(?P<host>[\w.\-]+)(?:\([\w\-]+\))?\s?[#>]"),
)


def prompt_host(line: str) -> str | None:
    """The device name a prompt line shows (``admin@leaf1:~$`` -> ``leaf1``, ``leaf1#`` -> ``leaf1``,
    ``[root@gpu01 ~]#`` -> ``gpu01``; the first label of an FQDN), or None (``bash-4.2#``, ``$ cmd``)."""
    s = line.strip()
    if re.match(r"^(?:bash|sh|zsh)-[\d.]+[$#]", s):
        return None
    for pat in _PROMPT_HOSTS:
        m = pat.match(s)
        if m:
            return m.group("host").split(".", 1)[0]
    return None


def device_of(path: Path) -> str:
    """``leaf1.pfc.txt`` → ``leaf1`` (everything before the first dot)."""
    return path.name.split(".", 1)[0]


def split_blocks(text: str, file: str, device: str) -> list[Block]:
    """Split one capture into blocks at prompt lines (see the module docstring)."""
    blocks: list[Block] = []
    cur = Block(file=file, device=device, command=None, prompt_line=None)
    for no, raw in enumerate(text.splitlines(), start=1):
        line = raw.replace("\r", "")
        cmd = prompt_command(line)
        if cmd is None and is_bare_prompt(line, device):
            cmd = ""
        if cmd is not None:
            if cur.lines or cur.command:
                blocks.append(cur)
            cur = Block(file=file, device=device, command=cmd or None, prompt_line=no if cmd else None)
            continue
        cur.lines.append((no, line))
    if cur.lines or cur.command:
        blocks.append(cur)
    return blocks


def read_capture(path: Path, root: Path) -> list[Block]:
    """Read and split one capture file (UTF-8, undecodable bytes replaced).

    Raises:
        OSError: the file cannot be read.
    """
    text = path.read_bytes().decode("utf-8", errors="replace")
    return split_blocks(text, str(path.relative_to(root)), device_of(path))
