"""Split pasted terminal captures into command blocks (read by ``roce-tune audit`` and by the LLDP import of
:mod:`roce_tune.inventory.lldp`).

A capture file is named ``<device>[.<anything>].txt`` and holds the output of one or more commands as
pasted from a terminal. Prompt lines separate the blocks and give each block its command::

    admin@leaf1:~$ show pfc counters           user@host:/path# cmd, user@host> cmd (Junos)
    root@h:/p (main)# cmd                      a git branch after the path (bash __git_ps1)
    root@gpu01:~# ethtool -S ens1f0np0         [root@gpu01 ~]# cmd
    bash-4.2# grep "" /sys/class/...           bash-N.N# / sh-N.N$ cmd
    $ ethtool -S ens1f0np0                     bare "$ " or "# " before a known command
    leaf1# show queuing interface eth1/1       NX-OS / EOS "name#" or "name>" before show/nv/…

A prompt with no command (the end of a paste), the Junos ``{master:0}`` line above a prompt and the lines a
terminal logger writes around a session (``script``'s ``Script started on …``/``Script done on …``, PuTTY's
``=~=~=… PuTTY log …`` header) end a block and are no output. A bare ``#``/``$`` or ``name#`` prompt counts
only before a command a RoCE engineer runs (``show``, ``ethtool``, ``grep`` …) so nccl-tests header lines
(``# nThread 1 …``) and comments are not taken for prompts. Lines are kept with their 1-based numbers for
evidence, counted at ``\n`` as an editor and ``grep -n`` count them (a ``script``/PuTTY log's ``\r\r\n`` is
one line end).

Terminal artefacts are removed before anything reads a line: ANSI/VT100 escape sequences (ECMA-48 CSI, OSC
and two-character escapes: colour prompts, ``ls``/``grep`` colour, erase-line), carriage returns and
backspaces applied as the terminal applied them (a pager prompt overwritten by the next row), a pager prompt
left at the start of a line (NX-OS/EOS ``--More--``, Junos ``---(more 52%)---``), and a UTF-8 BOM; a file
with a UTF-16 BOM (PowerShell 5 redirection) is decoded as UTF-16.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["Block", "capture_lines", "decode_capture", "device_of", "prompt_host", "read_capture",
           "split_blocks", "split_loop"]

KNOWN_COMMANDS = (
    "show", "sh", "nv", "net", "ethtool", "grep", "egrep", "cat", "for", "mlnx_qos", "ip", "ibv_devinfo",
    "show_gids",
    "rdma", "env", "printenv", "sudo", "diff", "cma_roce_tos", "cma_roce_mode", "lspci", "mpirun", "srun",
    "nvidia-smi", "ucx_info", "sysctl", "sonic-db-cli", "pfcstat", "ecnconfig", "head", "tail", "awk",
    "watch",
    "dcb", "lldptool", "lldpctl", "lldpcli", "ibdev2netdev", "mst", "mlxconfig", "tc", "vtysh", "cli", "set",
    "run")
_CMD_WORD = r"(?:" + "|".join(re.escape(c) for c in KNOWN_COMMANDS) + r")\b|\S*_perf\b|\./\S+"
#: ``user@host:path (branch)$``: a git branch after the working directory, as bash's ``__git_ps1 " (%s)"``
#: (git contrib/completion/git-prompt.sh) shows it: `` (main)``, `` (feature/y *+$%)``,
#: `` (main|REBASE 1/2)``, detached `` ((a1b2c3d...))``. Only after a ``:path`` and before a shell's
#: ``$``/``#``/``%`` (no Junos ``>``), so ``user@example.com (name) > …`` output is no prompt.
_GIT_PS1_HEAD = (r"^(?:\([\w.\-]+\)\s*)?[\w.\-]+@(?P<host>[\w.\-]+)(?::[^\s$#>]*)+"
                 r"\s\((?:\([^()]*\)|[^()]){1,100}\)\s*[$#%]")
#: the start of a ``user@host`` prompt, up to its ``$``/``#``/``>``/``%``: ``[root@gpu01 ~]#``,
#: ``(venv) admin@leaf1:~$``, ``user@host:path (branch)$``; read by :data:`_PROMPTS` (with the command
#: after), :data:`_NOT_OUTPUT` (with nothing after) and :func:`prompt_host`
_USER_AT_HOST = (
    r"^\[[\w.\-]+@(?P<host>[\w.\-]+)[^\]]*\]\s*[$#]",
    r"^(?:\([\w.\-]+\)\s*)?[\w.\-]+@(?P<host>[\w.\-]+)(?::[^\s$#>]*)*\s*[$#>%]",
    _GIT_PS1_HEAD,
)
_PROMPTS = (
    *(re.compile(head + r"\s*(?P<cmd>\S.*)$") for head in _USER_AT_HOST),
    re.compile(r"^(?:bash|sh|zsh)-[\d.]+[$#]\s*(?P<cmd>\S.*)$"),
    re.compile(r"^[$#]\s+(?P<cmd>(?:" + _CMD_WORD + r").*)$"),
    re.compile(r"^[\w.\-]+(?:\([\w\-]+\))?\s?[#>]\s*(?P<cmd>(?:" + _CMD_WORD + r").*)$"),
)


#: a prompt with no command (where a paste ends, or Enter pressed alone) and the Junos routing-engine line
#: above each prompt (``{master:0}``, ``{backup}``, ``{primary:node0}``): neither is command output
_NOT_OUTPUT = (
    *(re.compile(head + r"\s*$") for head in _USER_AT_HOST),
    re.compile(r"^\{(?:master|backup|linecard|primary|secondary)(?::[\w.\-]+)?\}$"),
    re.compile(r"^[A-Za-z][\w.\-]*(?:\([\w\-]+\))?\s?[#>]$"),  # EOS / NX-OS ``leaf1#``, ``leaf1(config)#``
    re.compile(r"^(?:bash|sh|zsh)-[\d.]+[$#]$"),  # ``bash-4.2#``
    # the lines a terminal logger writes around a session: util-linux script(1) ("Script started on DATE
    # [TERM=...]", "Script done on DATE [COMMAND_EXIT_CODE=...]") and PuTTY's session log header
    re.compile(r"^Script (?:started|done) on \S.*$"),
    re.compile(r"^=~=~=~=~=~=~=~=~=~=~=~= PuTTY log \S.* =~=~=~=~=~=~=~=~=~=~=~=$"),
)

#: ECMA-48 control sequences: CSI ``ESC [ params intermediates final``, OSC ``ESC ] … BEL|ST``, and the
#: two-character escapes ``ESC @``…``ESC _``.
_ANSI = re.compile(r"\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)|[@-Z\\-_])")
#: a pager's prompt left at the start of a line: NX-OS/EOS `` --More-- ``, Junos ``---(more)---`` /
#: ``---(more 52%)---``
_PAGER = re.compile(r"^\s*(?:--More--|---\(more(?:\s+\d+%)?\)---)\s?", re.IGNORECASE)


def _terminal_line(raw: str) -> str:
    """A line as the terminal showed it: escape sequences removed, ``\r`` back to column 0 and ``\b`` one
    column left (the next characters overwrite), a leading pager prompt removed."""
    line = _ANSI.sub("", raw)
    if "\r" in line or "\b" in line:
        cells: list[str] = []
        col = 0
        for ch in line:
            if ch == "\r":
                col = 0
            elif ch == "\b":
                col = max(0, col - 1)
            else:
                cells[col:col + 1] = [ch]
                col += 1
        line = "".join(cells).rstrip()
    return _PAGER.sub("", line)


def capture_lines(text: str) -> list[str]:
    """``text`` split at ``\n`` (at ``\r`` only when it has no ``\n``: an old Mac file), each line cleaned
    of terminal artefacts (see the module docstring)."""
    lines = text.split("\n") if "\n" in text or "\r" not in text else text.split("\r")
    if lines and lines[-1] == "":
        lines.pop()
    return [_terminal_line(x) for x in lines]


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


_PROMPT_HOSTS = (
    *(re.compile(head) for head in _USER_AT_HOST),
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
    for no, line in enumerate(capture_lines(text.removeprefix("\ufeff")), start=1):
        if any(p.match(line.strip()) for p in _NOT_OUTPUT):  # ends the block, is not in it
            if cur.lines or cur.command is not None:
                blocks.append(cur)
            cur = Block(file=file, device=device, command=None, prompt_line=None)
            continue
        cmd = prompt_command(line)
        if cmd is not None:
            if cur.lines or cur.command is not None:
                blocks.append(cur)
            cur = Block(file=file, device=device, command=cmd, prompt_line=no)
            continue
        cur.lines.append((no, line))
    if cur.lines or cur.command is not None:
        blocks.append(cur)
    return blocks


def read_capture(path: Path, root: Path) -> list[Block]:
    """Read and split one capture file (UTF-8, or UTF-16 with its BOM; undecodable bytes replaced).

    Raises:
        OSError: the file cannot be read.
    """
    return split_blocks(decode_capture(path.read_bytes()), str(path.relative_to(root)), device_of(path))


def decode_capture(raw: bytes) -> str:
    """A capture file's bytes as text: UTF-16 when they start with its BOM, else UTF-8 (undecodable bytes
    replaced); a UTF-8 BOM is kept (:func:`split_blocks` drops it)."""
    utf16 = raw[:2] in (b"\xff\xfe", b"\xfe\xff")
    return raw.decode("utf-16" if utf16 else "utf-8", errors="replace")


_LOOP = re.compile(r"^for\s+(?P<var>\w+)\s+in\s+(?P<words>[^;]+?)\s*;\s*do\s+(?P<body>.+?)\s*;?\s*done\s*$")


def _line_key(text: str) -> str:
    """What a report line names: the text before its ``:``, else its first word."""
    s = text.strip()
    return s.split(":", 1)[0].strip() if ":" in s else (s.split() or [""])[0]


def split_loop(b: Block) -> list[Block]:
    """A block whose command is a shell loop (``for i in A B; do mlnx_qos -i $i; done``) as one block per
    loop word, with the loop body's command for that word (``mlnx_qos -i A``; the body as it is when it
    does not use the variable: ``for i in 1 2; do ethtool -S IF; sleep 60; done`` is two snapshots), when
    the output holds one report per word: a report starts at each line naming what the first output line
    names (``DCBX mode``, ``NIC statistics``, ``rx_prio3_pause`` of a grep). Anything else is returned as
    it is."""
    m = _LOOP.match(b.command or "")
    if m is None:
        return [b]
    words, var = m.group("words").split(), m.group("var")
    ref = re.compile(r"\$(?:\{" + var + r"\}|" + var + r"\b)")
    body = [(no, t) for no, t in b.lines if t.strip()]
    if len(words) < 2 or not body:
        return [b]
    body_cmd = m.group("body")
    starts, skip = _echo_headings(b, words, body_cmd, ref), 1
    if starts is not None:  # the echoed heading is not the report's command
        body_cmd = re.sub(r"^\s*echo\b[^;]*;\s*|;\s*echo\b[^;]*(?=;|$)", "", body_cmd)
    else:
        first = _line_key(body[0][1])
        starts = [i for i, (_, t) in enumerate(b.lines) if t.strip() and _line_key(t) == first]
        skip = 0
    if len(starts) != len(words):
        return [b]
    out = []
    for k, (word, start) in enumerate(zip(words, starts)):
        end = starts[k + 1] if k + 1 < len(starts) else len(b.lines)
        command = re.split(r"\s*;\s*sleep\b", ref.sub(word, body_cmd))[0]
        out.append(Block(file=b.file, device=b.device, command=command,
                         prompt_line=b.prompt_line, lines=b.lines[start + skip:end]))
    return out


def _echo_headings(b: Block, words: list[str], body: str, ref: re.Pattern[str]) -> list[int] | None:
    """Indexes (in ``b.lines``) of the lines a loop body's ``echo $i`` printed before each word's report
    (``ens1f0np0``, ``== ens1f0np0 ==``: the word alone among punctuation), one per word in the loop's
    order; None when the body echoes no loop word or the output does not hold exactly those lines, and for a
    loop over files (``for f in /sys/…; do echo $f; cat $f; done``: the echoed path names the value below)."""
    if any(w.startswith("/") for w in words) or not re.search(r"(?:^|;)\s*echo\b[^;]*" + ref.pattern, body):
        return None
    heads = [(i, word) for i, (_, t) in enumerate(b.lines) for word in words
             if re.fullmatch(r"[\W_]*" + re.escape(word) + r"[\W_]*", t.strip())]
    if [word for _, word in heads] != words:
        return None
    return [i for i, _ in heads]
