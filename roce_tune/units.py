"""Parsing of the unit spellings an engineer writes in an inventory or on the command line.

Every parser raises ``ValueError`` with a message that says what is accepted; pydantic turns that
into a positioned error in the loader. Examples::

    >>> parse_speed_gbps("400G"), parse_speed_gbps("100000"), parse_speed_gbps(25)
    (400, 100, 25)
    >>> parse_length_m("40m"), parse_length_m("2.5"), parse_length_m(3)
    (40.0, 2.5, 3.0)
    >>> parse_bytes("150KB"), parse_bytes("64KiB"), parse_bytes(1024)
    (150000, 65536, 1024)
"""

from __future__ import annotations

import functools
import math
import re

from roce_tune.findings import short_repr

#: Port speeds roce-tune knows the IEEE 802.3 pause-quanta budget for (Gb/s).
KNOWN_SPEEDS_GBPS = (1, 10, 25, 40, 50, 100, 200, 400, 800, 1600)

#: re.ASCII on every pattern: ``\d`` and ``\s`` are ASCII only, so a no-break space (U+00A0, pasted from a
#: spreadsheet or a PDF datasheet) or a full-width digit (``４００G``) is an error, not a speed.
_SPEED_RE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([GgTtMm])(?:b(?:ps|/s)?|bE)?\s*$", re.ASCII)
_LENGTH_RE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(m|M|meters?|metres?)?\s*$", re.ASCII)
_BYTES_RE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(B|KB|KiB|MB|MiB|GB|GiB|kB|k|K|M)?\s*$", re.ASCII)
_TIME_US_RE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(us|µs|ns|ms)?\s*$", re.ASCII)
_BYTE_MULT = {None: 1, "B": 1, "KB": 1000, "kB": 1000, "k": 1000, "K": 1000, "KiB": 1024,
              "MB": 1_000_000, "M": 1_000_000, "MiB": 1 << 20, "GB": 1_000_000_000, "GiB": 1 << 30}


def parse_speed_gbps(value: object) -> int:
    """Parse a port speed to whole Gb/s.

    Accepts ``"100G"``, ``"400Gbps"``, ``"1.6T"``, ``"100000"`` / ``100000`` (Mb/s, the SONiC and
    ``ethtool`` spelling, recognised when >= 1000) and small integers as Gb/s (``25``). Text is read
    once per spelling (:func:`_speed_text_gbps`, memoised: an inventory repeats ``400G`` on every port).

    Raises:
        ValueError: anything else, e.g. ``"fast"``, or a speed not in :data:`KNOWN_SPEEDS_GBPS`.
    """
    if type(value) is str:
        return _speed_text_gbps(value)
    gbps: float
    if isinstance(value, bool):
        raise ValueError(f"{short_repr(value)} is not a speed: write 100G, 400G or Mb/s like 100000")
    if isinstance(value, (int, float)):
        gbps = value / 1000 if value >= 1000 else float(value)
    elif isinstance(value, str):
        return _speed_text_gbps.__wrapped__(value)
    else:
        raise ValueError(f"{short_repr(value)} is not a speed: write 100G, 400G or Mb/s like 100000")
    return _known_speed(gbps, value, mbps=value >= 1000)


@functools.lru_cache(maxsize=1024)
def _speed_text_gbps(value: str) -> int:
    """:func:`parse_speed_gbps` of a text. Memoised on the text alone, which is all it reads (a pure
    function; errors are raised again on each call, lru_cache keeps only results)."""
    s = value.strip(" \t")
    mbps = False
    if s.isascii() and s.isdigit():
        n = int(s)
        mbps = n >= 1000
        gbps = n / 1000 if mbps else float(n)
    else:
        m = _SPEED_RE.fullmatch(s)
        if not m:
            raise ValueError(f"{short_repr(value)} is not a speed: write 100G, 400G or Mb/s like 100000")
        num, unit = float(m.group(1)), m.group(2).upper()
        gbps = num * {"G": 1, "T": 1000, "M": 0.001}[unit]
    return _known_speed(gbps, value, mbps)


def _known_speed(gbps: float, value: object, mbps: bool = False) -> int:
    """``gbps`` as a whole number if it is one of :data:`KNOWN_SPEEDS_GBPS`; ``mbps``: ``value`` was a bare
    number read as Mb/s (the message then says so: ``1600`` is 1.6 Gb/s, not 1600G).

    Raises:
        ValueError: naming ``value`` as written, and the known speeds.
    """
    if not math.isfinite(gbps) or gbps != int(gbps) or int(gbps) not in KNOWN_SPEEDS_GBPS:
        known = ", ".join(f"{s}G" for s in KNOWN_SPEEDS_GBPS)
        read = (f", read as Mb/s ({gbps:g} Gb/s: a bare number of 1000 or more is Mb/s, as SONiC and ethtool "
                "write it)" if mbps else "")
        raise ValueError(f"{short_repr(value)} is not a supported port speed{read} (known: {known})")
    return int(gbps)


def parse_length_m(value: object) -> float:
    """Parse a cable length to metres: ``"40m"``, ``"40"``, ``40``, ``2.5``. Text is read once per
    spelling (:func:`_length_text_m`, memoised: an inventory repeats ``3m`` on every cable).

    Raises:
        ValueError: non-numeric text, zero, negative or absurd (> 100 km) lengths.
    """
    if type(value) is str:
        return _length_text_m(value)
    if isinstance(value, bool):
        raise ValueError(f"{short_repr(value)} is not a length: write 40m or 40")
    if isinstance(value, (int, float)):
        metres = float(value)
    elif isinstance(value, str):
        return _length_text_m.__wrapped__(value)
    else:
        raise ValueError(f"{short_repr(value)} is not a length: write 40m or 40")
    return _plausible_length(metres)


@functools.lru_cache(maxsize=1024)
def _length_text_m(value: str) -> float:
    """:func:`parse_length_m` of a text. Memoised on the text alone, which is all it reads (a pure
    function; errors are raised again on each call, lru_cache keeps only results)."""
    m = _LENGTH_RE.fullmatch(value)
    if not m:
        raise ValueError(f"{short_repr(value)} is not a length: write metres like 40m or 40")
    return _plausible_length(float(m.group(1)))


def _plausible_length(metres: float) -> float:
    """``metres`` if above 0 and at most 100 km.

    A cable has a length: the shortest DAC is about 0.5 m, and ``0m`` is SONiC's CABLE_LENGTH marker for
    a port without lossless buffers (buffermgrd skips the port's PG profile, sonic-swss
    ``cfgmgr/buffermgr.cpp`` ``doSpeedUpdateTask``), so 0 would not mean "very short" on the switch.

    Raises:
        ValueError: outside that range.
    """
    if not (0 < metres <= 100_000):
        raise ValueError(f"cable length {metres:g} m is outside 0..100000 m (above 0; the shortest DAC is "
                         "about 0.5 m)")
    return metres


def parse_bytes(value: object) -> int:
    """Parse a byte count: ``150000``, ``"150KB"`` (10^3), ``"64KiB"`` (2^10), ``"1.5MB"``.

    Raises:
        ValueError: non-numeric text or a negative value.
    """
    if isinstance(value, bool):
        raise ValueError(f"{short_repr(value)} is not a byte count")
    if isinstance(value, int):
        if value < 0:
            raise ValueError(f"byte count {value} is negative")
        return value
    if isinstance(value, float):
        if not math.isfinite(value) or value < 0 or value != int(value):
            raise ValueError(f"byte count {value} must be a whole non-negative number")
        return int(value)
    if isinstance(value, str):
        m = _BYTES_RE.fullmatch(value)
        if m:
            return int(round(float(m.group(1)) * _BYTE_MULT[m.group(2)]))
    raise ValueError(f"{short_repr(value)} is not a byte count: write 150000, 150KB, 64KiB or 1.5MB")


def parse_time_us(value: object) -> float:
    """Parse a time to microseconds: ``"10us"``, ``"500ns"``, ``"0.2ms"``, ``10``.

    Raises:
        ValueError: anything else or a negative value.
    """
    if isinstance(value, bool):
        raise ValueError(f"{short_repr(value)} is not a time")
    if isinstance(value, (int, float)):
        if value < 0 or not math.isfinite(value):
            raise ValueError(f"time {value} is negative or not finite")
        return float(value)
    if isinstance(value, str):
        m = _TIME_US_RE.fullmatch(value)
        if m:
            return float(m.group(1)) * {None: 1, "us": 1, "µs": 1, "ns": 0.001, "ms": 1000}[m.group(2)]
    raise ValueError(f"{short_repr(value)} is not a time: write 10us, 500ns or 0.2ms")
