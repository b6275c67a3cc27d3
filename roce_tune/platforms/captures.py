"""Command output a platform prints that ``roce-tune audit`` reads from captures (and ``audit --live``
runs): how to recognise each block by its content, and which read-only commands print it.

Each switch platform module may define ``CAPTURE_FORMATS: tuple[CaptureFormat, ...]`` (in its own
"audit captures" section); :func:`capture_formats` collects them through the registry, so the audit
engine recognises a SONiC ``show runningconfiguration all`` or a Junos ``show configuration | display
set`` without naming a platform.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from typing import Any

__all__ = ["CaptureFormat", "capture_formats", "running_config_format"]


@dataclass(frozen=True)
class CaptureFormat:
    """One command output of a platform that audit understands.

    Attributes:
        name: what the block is, in the vendor's words (``show runningconfiguration all``).
        pattern: regex (multi-line mode) that a block's content matches; chosen so that no other
            platform's output and no other command of the same platform matches it.
        kind: what the block holds: ``running_config`` (read with the platform's ``read_back``), else the
            name of the audit reader that stores it (``pfc_rx_tx_tables``, ``queue_table`` …, see
            ``roce_tune.audit.readers.SWITCH_KINDS``).
        command: regex on the prompt's command, when one was captured; a block whose prompt names another
            command is not this format (None: content alone decides).
        to_read_back: block text -> the text ``read_back`` takes (e.g. NVUE YAML -> ``nv set`` lines);
            None: the text as it is.
        fallback: the content is shared with other platforms' output: tried after every other format (with a
            ``command`` pattern, a prompt naming another command rules it out).
        port_name: the platform's own spelling of a port as the command or the output writes it -> the
            name the plan and the other outputs use (NX-OS ``ethernet1/7``, ``e1/7``, ``Eth1/7`` ->
            ``Ethernet1/7``); None: names are kept as written.
        evidence: (output text, port, counter name) -> the 0-based index of the output line the counter was
            read from, for outputs that state a port's counters many lines below its name (Junos ``show
            interfaces``); None (or a None answer): the reader's own search for the port's line.
        parse: the platform's own parser of this output, called the way the kind's audit reader calls it
            (``roce_tune.audit.readers.SWITCH_KINDS``): configuration and status kinds (``pfcwd_config``,
            ``interface_counters``, ``roce_status``) take the block's (line number, text) pairs and return
            what the reader stores with each value's line; counter kinds take the output text (per-port
            kinds also the port the prompt's command names, and what the reader passes by keyword) and
            return ``{port: {counter: value}}`` (names of :mod:`roce_tune.platforms.counters`; a one-port
            kind, ``ecn_counters_queue``, returns that port's ``{counter: value}``); ``queue_table``
            returns (counter family ``"queue"`` or ``"wred"``, per-port counters). None only for
            ``running_config``, which the platform's ``read_back`` reads.
    """

    name: str
    pattern: str
    kind: str
    command: str | None = None
    to_read_back: Callable[[str], str] | None = None
    parse: Callable[..., Any] | None = None
    fallback: bool = False
    port_name: Callable[[str], str] | None = None
    evidence: Callable[[str, str, str], int | None] | None = None

    def matches(self, text: str, command: str | None) -> bool:
        """Whether a block with output ``text`` (and prompt ``command``, if any) is this format."""
        if self.command is not None and command and not re.search(self.command, command):
            return False
        return re.search(self.pattern, text, re.MULTILINE) is not None


@cache
def capture_formats() -> tuple[tuple[str, CaptureFormat], ...]:
    """(platform name, format) of every switch platform's ``CAPTURE_FORMATS``, in registry order."""
    from roce_tune.platforms import SWITCH_PLATFORMS, get_platform

    return tuple((name, f) for name in SWITCH_PLATFORMS for f in getattr(get_platform(name),
                                                                         "CAPTURE_FORMATS", ()))


def running_config_format(text: str, command: str | None = None) -> tuple[str, CaptureFormat] | None:
    """The (platform, format) whose running-configuration pattern ``text`` matches, else None."""
    for name, f in capture_formats():
        if f.kind == "running_config" and f.matches(text, command):
            return name, f
    return None
