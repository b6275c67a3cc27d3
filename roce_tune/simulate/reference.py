"""Read packet-level reference results (a Markdown file of result tables) for calibrating the simulator.

The file (docs/simulate.md "Calibration") has a **Setup** section, a **Settings compared** table and result
sections. Every row of those kinds is read; anything the reader cannot read is a ``ValueError`` naming the
file, the line number and quoting the line, never a silent default or a skipped row.

Setup section (``## Setup``; the whole text when there is none): each quantity keeps the simulator's
default only when the file does not mention it; a mention whose value cannot be read is an error.

* base RTT: ``propagation RTT ... 6.164 us`` (the first time after the words, in the same sentence;
  ``us``/``µs``/``ns``/``ms``);
* pool: ``pool 5,306,864 B`` (``B``, ``KB``, ``KiB``, ``MB``, ``MiB``, ``GB``; thousands separators);
* PFC alpha: ``alpha = 128``;
* incast start jitter: ``U(0, 5 us)``;
* long-lived duration: ``run 40 ms`` (or ``duration 40 ms``);
* seeds: ``5 for incasts``, ``3 for long-lived`` in a sentence that says ``seeds``.

Settings table (``## Settings compared``; columns found by their header: ``label``, ``Kmin / Kmax / Pmax``,
``DCQCN``), one row per setting labelled ``(a)``, ``(b)``, ...:

* ECN: one triple ``Kmin / Kmax / Pmax %`` for every fan-in, per fan-in ``N=4: triple; N = 8: triple``, or
  ``as (a)``. Kmin and Kmax in bytes with or without a unit and thousands separators (``18,432``,
  ``150 KB``, ``1.5 MB``, ``1 MiB``; :func:`roce_tune.units.parse_bytes`), Pmax a percent.
* DCQCN: ``firmware`` (or ``firmware defaults``: the mlx5 firmware defaults, :class:`DcqcnParams`),
  ``as (a)``, or a list of ``knob value [unit]`` items separated by ``,``, ``;`` or ``and``, optionally
  after ``firmware`` or ``firmware (...)`` (items in the brackets restate or change firmware values:
  ``firmware (ai 5, hai 50 Mb/s)``). A knob is any :class:`DcqcnParams` field, with or without its unit
  suffix (``rpg_time_reset``, ``rpg_byte_reset_bytes``, ``dce_tcp_rtt``, ``rpg_min_dec_fac``), or
  ``rpg_ai``/``rpg_hai``/``ai``/``hai``. A value without a unit is in the field's unit; units: ``ns``/``us``/
  ``µs``/``ms`` for ``_us``, ``Kb/s``/``Mb/s``/``Gb/s`` (``Mbps``, ``Gbps``) for ``_mbps``, bytes as above for
  ``_bytes``, ``%`` for ``_percent``. Values are range-checked as the tuner checks a pinned value
  (:func:`roce_tune.ranges.dcqcn_ranges`; rates against each row's line rate); whole-number knobs
  (``rpg_byte_reset``, ``rpg_threshold``, ``rpg_gd``, ``dce_tcp_g``, ...) take whole numbers.

Result sections: ``## Incast at <speed>`` and ``## Long-lived flows at <speed>`` (any speed
:func:`roce_tune.units.parse_speed_gbps` knows: ``25G``, ``400G``, ``400 G``, ``800G``), each with one table
per DCQCN model, after a line containing ``Model M`` or ``Model T`` (or the model in the section heading). The
header row is ``| case | (a) ... | (b) ... |``. The case cell gives the speed (else the section's; the two
must agree) and, for incasts, ``<size> × <fan-in>`` (``1 MB × 4``, ``512 KB x 8``, ``0.5 MB × 16``,
``2 MiB × 4``; ``x``/``X``/``*`` for ``×``; sizes in B, KB, MB, GB (10^3) or KiB, MiB, GiB (2^10)) or
``N = <fan-in>`` for either kind, among words without digits (``400G long-lived N = 4``). Cells:

* incast ``efficiency % (min–max) · summed PFC pause ms · mean queue KB``;
* long-lived ``utilisation % · mean queue KB (std) · summed PFC pause ms``.

A cell left empty (``–``, ``—``, ``-``, ``n/a`` or nothing) drops that setting from the row (not compared);
an empty pause figure in a cell is kept as NaN (the pause is not judged). Tables in other sections are not
results and are not read; a ``| case | ...`` table in a section of neither kind is an error.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from roce_tune.ranges import dcqcn_ranges
from roce_tune.simulate.model import DEFAULT_BUFFER_BYTES, DEFAULT_PFC_ALPHA, DcqcnParams, EcnSetting
from roce_tune.units import KNOWN_SPEEDS_GBPS, parse_bytes, parse_speed_gbps, parse_time_us

#: a number, with thousands separators (``5,306,864``) and decimals
_NUM = r"\d+(?:,\d{3})*(?:\.\d+)?"
#: a byte count with its unit (units :func:`roce_tune.units.parse_bytes` reads)
_BYTE_UNIT = r"(?:B|KB|kB|KiB|MB|MiB|GB|GiB)"
_SIZE = _NUM + r"\s*" + _BYTE_UNIT + r"\b"
#: a time with its unit (units :func:`roce_tune.units.parse_time_us` reads), not followed by a letter or ``/``
_TIME = r"\d+(?:\.\d+)?\s*(?:us|µs|ns|ms)(?![\w/])"
#: what a reference writes in a cell it leaves empty
EMPTY_CELLS = frozenset({"", "–", "—", "-", "n/a", "N/A", "na"})
#: short names of DCQCN knobs that are neither a :class:`DcqcnParams` field nor one without its unit suffix
DCQCN_ALIASES = {"rpg_ai": "rpg_ai_rate_mbps", "rpg_hai": "rpg_hai_rate_mbps", "ai": "rpg_ai_rate_mbps",
                 "hai": "rpg_hai_rate_mbps"}
_UNIT_SUFFIXES = ("_us", "_bytes", "_mbps", "_percent")
_RATE_MBPS = {None: 1.0, "Kb/s": 0.001, "kb/s": 0.001, "Kbps": 0.001, "Mb/s": 1.0, "Mbps": 1.0,
              "Gb/s": 1000.0, "Gbps": 1000.0}
#: id units, largest first: a size is written in the first that gives at most two decimals
_ID_UNITS = (("GB", 10**9), ("GiB", 1 << 30), ("MB", 10**6), ("MiB", 1 << 20), ("KB", 10**3),
             ("KiB", 1 << 10))
_MODELS = ("M", "T")


def _number(text: str) -> float:
    """A number as the reference writes it (``5,306,864``, ``0.5``)."""
    return float(text.replace(",", ""))


def _bytes(text: str) -> int:
    """A byte count as the reference writes it, thousands separators and all (``5,306,864 B``, ``1.5 MB``).

    Raises:
        ValueError: see :func:`roce_tune.units.parse_bytes`.
    """
    return parse_bytes(re.sub(r"(?<=\d),(?=\d{3})", "", text))


def case_id(kind: str, speed_gbps: int, fan_in: int, message_bytes: int, model: str) -> str:
    """Test id of a reference case: ``incast-100G-1MBx4-M``, ``incast-400G-512KBx8-T``,
    ``long-lived-100G-N4-M``. The message size is written exactly, in the largest unit (GB, GiB, MB, MiB, KB,
    KiB) that needs at most two decimals (``1.5MB``, ``2MiB``), else in bytes, so every size has its own id.
    """
    if kind != "incast":
        return f"{kind}-{speed_gbps}G-N{fan_in}-{model}"
    size = f"{message_bytes}B"
    for unit, mult in _ID_UNITS:
        if message_bytes >= mult and message_bytes * 100 % mult == 0:
            whole, hundredths = divmod(message_bytes * 100 // mult, 100)
            size = f"{whole}" + (f".{hundredths:02d}".rstrip("0") if hundredths else "") + unit
            break
    return f"{kind}-{speed_gbps}G-{size}x{fan_in}-{model}"


def dcqcn_knob(name: str) -> str | None:
    """The :class:`DcqcnParams` field a reference names (``rpg_time_reset`` -> ``rpg_time_reset_us``,
    ``rpg_ai`` -> ``rpg_ai_rate_mbps``; also the mlx5 debugfs ``cc_params`` names ``rp_time_reset``,
    ``rp_dce_tcp_g``, ``np_min_time_between_cnps``), None for a name the simulator does not know."""
    keys = DcqcnParams.keys()
    bare = {k.removesuffix(s): k for k in keys for s in _UNIT_SUFFIXES if k.endswith(s)}
    for n in (name, re.sub(r"^rp_", "rpg_", name), re.sub(r"^[rn]p_", "", name)):
        if n in keys or n in bare or n in DCQCN_ALIASES:
            return n if n in keys else bare.get(n) or DCQCN_ALIASES[n]
    return None


def _knob_value(key: str, text: str) -> float:
    """``text`` (a number with or without a unit) in the unit of knob ``key``.

    Raises:
        ValueError: not a number, or a unit that is not one of this knob's quantity.
    """
    t = re.sub(r"(?<=\d),(?=\d{3}\b)", "", text.strip())
    suffix = next((s for s in _UNIT_SUFFIXES if key.endswith(s)), "")
    if suffix == "_us":
        return parse_time_us(t.replace(" ", ""))
    if suffix == "_bytes":
        return parse_bytes(t)
    m = re.fullmatch(r"(\d+(?:\.\d+)?)\s*(%|[KkMG]b/s|[KMG]bps)?", t)
    unit = m.group(2) if m else None
    if m and suffix == "_mbps" and unit != "%":
        return float(m.group(1)) * _RATE_MBPS[unit]
    if m and (unit is None or (suffix == "_percent" and unit == "%")):
        return float(m.group(1))
    want = {"_mbps": "a rate (Mb/s, Gb/s)", "_percent": "a percent"}.get(suffix, "a number without a unit")
    raise ValueError(f"{text.strip()!r} is not {want}")


def _check_knob(key: str, value: float, speed_gbps: int) -> str:
    """Why ``value`` cannot be knob ``key`` at ``speed_gbps`` (its range, :func:`dcqcn_ranges`; a whole number
    for an integer knob), "" when it can."""
    lo, hi, src = dcqcn_ranges(speed_gbps)[key]
    if isinstance(getattr(DcqcnParams(), key), int) and not float(value).is_integer():
        return f"{key} {value:g} must be a whole number"
    if not lo <= value <= hi:
        return f"{key} {value:g} is outside {lo}..{hi} at {speed_gbps}G ({src})"
    return ""


@dataclass(frozen=True)
class RefSetting:
    """One compared setting: ECN per fan-in (key 0 = any fan-in) and the DCQCN overrides on firmware
    (:class:`DcqcnParams` field -> value in the field's unit); ``line``: its line in the file."""

    label: str
    ecn_by_fan_in: dict[int, tuple[int, int, float]]
    dcqcn_overrides: dict[str, float]
    line: int = field(default=0, compare=False)
    #: why the row cannot be read (lenient reading only; then it gives no values): ``file:line: ...``
    problem: str = field(default="", compare=False)

    def ecn(self, fan_in: int) -> EcnSetting:
        """ECN thresholds for this fan-in.

        Raises:
            KeyError: the setting gives per-fan-in values and not this one.
        """
        kmin, kmax, pmax = self.ecn_by_fan_in.get(fan_in) or self.ecn_by_fan_in[0]
        return EcnSetting(kmin, kmax, pmax, label=self.label)

    def dcqcn(self) -> DcqcnParams:
        """Firmware defaults with this setting's overrides."""
        return DcqcnParams(label=self.label).with_overrides(self.dcqcn_overrides)


@dataclass(frozen=True)
class RefRow:
    """One table row: case, model, and per setting label the reference median (efficiency or utilisation)
    and summed PFC pause (ms; NaN where the reference leaves it empty). A setting whose cell the reference
    leaves empty is in neither. ``line``: the row's line in the file. ``problems`` (lenient reading only):
    the settings of this row that cannot be compared (an unreadable cell or setting), ``file:line: why``;
    they are in neither dict either."""

    kind: str
    speed_gbps: int
    fan_in: int
    message_bytes: int
    model: str
    case: str
    value: dict[str, float] = field(default_factory=dict)
    pfc_ms: dict[str, float] = field(default_factory=dict)
    line: int = field(default=0, compare=False)
    problems: list[str] = field(default_factory=list, compare=False)

    @property
    def id(self) -> str:
        """Test id like ``incast-100G-1MBx4-M`` (:func:`case_id`)."""
        return case_id(self.kind, self.speed_gbps, self.fan_in, self.message_bytes, self.model)


@dataclass(frozen=True)
class Reference:
    """Parsed setup, settings and rows."""

    base_rtt_us: float
    buffer_bytes: int
    pfc_alpha: float
    start_jitter_us: float
    duration_us: float
    incast_seeds: int
    long_lived_seeds: int
    settings: dict[str, RefSetting]
    rows: list[RefRow]
    #: lenient reading: every line that could not be read (``file:line: why: 'the line'``); strict: empty
    problems: list[str] = field(default_factory=list)


class _Unreadable(ValueError):
    """What is wrong with line ``line`` (0: the line being read); :class:`_Parser` adds the file, the line
    number and the line."""

    def __init__(self, message: str, line: int = 0) -> None:
        super().__init__(message)
        self.line = line


# --- setup ---------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class _SetupQuantity:
    """A setup quantity: where the file mentions it, how its value reads (group 1), and its default."""

    name: str
    mention: str
    value: str
    default: float
    convert: Callable[[str], float] = float
    context: str = ""            # the mention counts only in a sentence that also matches this
    hint: str = ""


_RUN = r"\b(?:run|runs|duration)\s+(?:for\s+|of\s+)?"
_SEEDS = r"\b(\d+)\s+(?:seeds?\s+)?(?:for|per)\s+(?:each\s+)?"
_SETUP = (
    _SetupQuantity("base_rtt_us", r"\bpropagation RTT\b", r"\b(" + _TIME + ")", 6.164, parse_time_us,
                   hint="write e.g. 'propagation RTT ... 6.164 us'"),
    _SetupQuantity("buffer_bytes", r"\bpool\b", r"\bpool\s*(?:of|is|=|:)?\s*(" + _SIZE + ")",
                   DEFAULT_BUFFER_BYTES, _bytes,
                   hint="write e.g. 'pool 5,306,864 B'"),
    _SetupQuantity("pfc_alpha", r"\balpha\s*=", r"\balpha\s*=\s*(\d+(?:\.\d+)?)(?![\d.^*/]|\s*[*/^])",
                   DEFAULT_PFC_ALPHA, hint="write e.g. 'alpha = 128'"),
    _SetupQuantity("start_jitter_us", r"\bU\(", r"\bU\(\s*0\s*,\s*(" + _TIME + r")\s*\)", 5.0, parse_time_us,
                   hint="write e.g. 'U(0, 5 us)'"),
    _SetupQuantity("duration_us", _RUN + r"\d", _RUN + "(" + _TIME + ")", 40_000.0, parse_time_us,
                   hint="write e.g. 'run 40 ms'"),
    _SetupQuantity("incast_seeds", r"(?i)\bseeds?\b", _SEEDS + r"incasts?\b", 5, int, context=r"(?i)incast",
                   hint="write e.g. '5 for incasts'"),
    _SetupQuantity("long_lived_seeds", r"(?i)\bseeds?\b", _SEEDS + r"long-lived\b", 3, int,
                   context=r"(?i)long-lived", hint="write e.g. '3 for long-lived'"),
)


def _sentence_end(text: str, pos: int) -> int:
    """End of the sentence (``. `` / blank line / next list item) that ``pos`` is in."""
    m = re.compile(r"\.(?=\s)|\n\s*\n|\n\s*[-*]\s").search(text, pos)
    return m.start() if m else len(text)


def _sentence_start(text: str, pos: int) -> int:
    """Start of the sentence ``pos`` is in."""
    ends = [m.end() for m in re.finditer(r"\.(?=\s)|\n\s*\n|\n\s*[-*]\s", text[:pos])]
    return ends[-1] if ends else 0


def _setup_value(q: _SetupQuantity, text: str, first_line: int) -> tuple[float, int]:
    """Quantity ``q`` from setup ``text`` (which starts at line ``first_line``) and its line (0: not
    mentioned, the default).

    Raises:
        _Unreadable: a mention without a readable value, or two different values (with the line).
    """
    found: list[tuple[float, int]] = []
    for m in re.finditer(q.mention, text):
        start, end = _sentence_start(text, m.start()), _sentence_end(text, m.end())
        if q.context and not re.search(q.context, text[start:end]):
            continue
        line = first_line + text.count("\n", 0, m.start())
        v = re.search(q.value, text[m.start() if not q.context else start:end])
        if not v:
            raise _Unreadable(f"the setup mentions {q.name} ({m.group(0).strip()!r}) but its value cannot be "
                              f"read ({q.hint})", line)
        found.append((float(q.convert(v.group(1))), line))
        at_speed = re.finditer(r"(" + _TIME + r")\s+at\s+" + _SPEED_RE, text[m.start():end])
        per_speed = sorted({float(q.convert(t.group(1))) for t in at_speed})
        if len(per_speed) > 1:
            each = ", ".join(f"{x:g}" for x in per_speed)
            raise _Unreadable(f"the setup gives {q.name} per speed ({each}); the reader takes one value "
                              "for all rows", line)
    if len({v for v, _ in found}) > 1:
        raise _Unreadable(f"the setup gives {q.name} twice: {' and '.join(f'{v:g}' for v, _ in found)}",
                          found[1][1])
    return found[0] if found else (q.default, 0)


# --- settings table ------------------------------------------------------------------------------------

def _label_ref(text: str, settings: dict[str, RefSetting]) -> RefSetting | None:
    """The setting ``as (x)`` refers to, None when ``text`` is not ``as (x)``.

    Raises:
        _Unreadable: ``as (x)`` with a label the table has not given (yet).
    """
    m = re.fullmatch(r"as\s*\((\w+)\)", text.strip())
    if not m:
        return None
    if m.group(1) not in settings:
        raise _Unreadable(f"'as ({m.group(1)})': no setting ({m.group(1)}) above this row")
    return settings[m.group(1)]


def _ecn_triple(text: str) -> tuple[int, int, float]:
    """``Kmin / Kmax / Pmax %`` (bytes with or without a unit, thousands separators).

    Raises:
        _Unreadable: anything else, or thresholds :class:`EcnSetting` rejects.
    """
    m = re.fullmatch(r"\s*(.+?)\s*/\s*(.+?)\s*/\s*(\d+(?:\.\d+)?)\s*%?\s*", text)
    if not m:
        raise _Unreadable(f"cannot read Kmin / Kmax / Pmax % from {text.strip()!r}")
    try:
        kmin, kmax = (_bytes(g) for g in m.group(1, 2))
        EcnSetting(kmin, kmax, float(m.group(3)))
    except ValueError as exc:
        raise _Unreadable(f"ECN {text.strip()!r}: {exc}") from None
    return kmin, kmax, float(m.group(3))


def _ecn_cell(text: str, settings: dict[str, RefSetting]) -> dict[int, tuple[int, int, float]]:
    """The ECN column: one triple (key 0: any fan-in), ``N=4: triple; N = 8: triple``, or ``as (x)``.

    Raises:
        _Unreadable: an item or triple that cannot be read, a fan-in given twice.
    """
    same = _label_ref(text, settings)
    if same is not None:
        return dict(same.ecn_by_fan_in)
    if not re.match(r"\s*N\s*=", text):
        return {0: _ecn_triple(text)}
    out: dict[int, tuple[int, int, float]] = {}
    for item in text.split(";"):
        m = re.fullmatch(r"\s*N\s*=\s*(\d+)\s*:\s*(.+)", item)
        if not m:
            raise _Unreadable(f"cannot read {item.strip()!r} as 'N=<fan-in>: Kmin / Kmax / Pmax %'")
        if int(m.group(1)) in out:
            raise _Unreadable(f"N={m.group(1)} is given twice")
        out[int(m.group(1))] = _ecn_triple(m.group(2))
    return out


#: between DCQCN items: ``;``, or ``,``/``and`` before a knob name (``32,767`` is one number)
_ITEM_SEP = r"\s*;\s*|\s*,\s*(?=[A-Za-z_])|\s+and\s+(?=[A-Za-z_])"


def _dcqcn_items(text: str, over: dict[str, float]) -> None:
    """Add the ``knob value [unit]`` items of ``text`` (separated by ``,`` or ``;``) to ``over``.

    Raises:
        _Unreadable: an unknown knob, a value or unit that cannot be read, a knob given twice, a value
            outside the knob's range at the fastest known speed.
    """
    for item in (i for i in re.split(_ITEM_SEP, text.strip()) if i):
        m = re.fullmatch(r"([A-Za-z_]\w*)\s*(?:=|:)?\s*(.*)", item)
        key = dcqcn_knob(m.group(1)) if m else None
        if not m or key is None:
            raise _Unreadable(f"DCQCN {item!r}: unknown knob {item.split()[0]!r}; known: "
                              f"{', '.join(DcqcnParams.keys())} (with or without the unit suffix), "
                              f"{', '.join(DCQCN_ALIASES)}")
        if not m.group(2):
            raise _Unreadable(f"DCQCN {item!r}: {m.group(1)} has no value")
        if key in over:
            raise _Unreadable(f"DCQCN {m.group(1)} is given twice")
        try:
            over[key] = round(_knob_value(key, m.group(2)), 6)   # 1.005 Gb/s: 1005 Mb/s, not 1004.99999
        except ValueError as exc:
            raise _Unreadable(f"DCQCN {m.group(1)}: {exc}") from None
        why = _check_knob(key, over[key], max(KNOWN_SPEEDS_GBPS))
        if why:
            raise _Unreadable(f"DCQCN {why}")
        if isinstance(getattr(DcqcnParams(), key), int):
            over[key] = int(over[key])


def _dcqcn_cell(text: str, settings: dict[str, RefSetting]) -> dict[str, float]:
    """The DCQCN column: ``firmware``, ``firmware (items)``, ``[firmware[ (items)],] items``, ``as (x)``:
    overrides of the firmware defaults, :class:`DcqcnParams` field -> value in its unit.

    Raises:
        _Unreadable: see :func:`_dcqcn_items`; text after ``firmware (...)`` that is not a list of items.
    """
    same = _label_ref(text, settings)
    if same is not None:
        return dict(same.dcqcn_overrides)
    over: dict[str, float] = {}
    rest = text.strip()
    fw = re.match(r"(?i:(?:mlx5\s+)?firmware(?:\s+defaults?)?)\b\s*(?:\(([^()]*)\))?\s*", rest)
    if fw:
        _dcqcn_items(fw.group(1) or "", over)
        rest = rest[fw.end():]
        if rest and not rest.startswith((",", ";")):
            raise _Unreadable(f"DCQCN: cannot read {rest!r} after {fw.group(0).strip()!r} (write items "
                              "'knob value unit' separated by ',' or ';')")
        rest = rest[1:]
    _dcqcn_items(rest, over)
    return over


# --- result tables -------------------------------------------------------------------------------------

def _speed(text: str) -> int:
    """Gb/s of a speed token (``400G``, ``400 G``, ``400Gb/s``, ``1.6T``).

    Raises:
        _Unreadable: a speed :func:`parse_speed_gbps` does not know.
    """
    try:
        return parse_speed_gbps(re.sub(r"\s+", "", text))
    except ValueError as exc:
        raise _Unreadable(str(exc)) from None


_SPEED_RE = r"(\d+(?:\.\d+)?\s*[GT])(?:b/s|bps|bE)?(?![\w/])"


def _case_speed(text: str, section_speed: int | None) -> tuple[int, str]:
    """(speed Gb/s, the rest of the case) of a case cell: its leading speed, else the section's.

    Raises:
        _Unreadable: no speed here or in the section heading, a speed other than the section's.
    """
    m = re.match(r"\s*" + _SPEED_RE, text)
    speed = _speed(m.group(1)) if m else section_speed
    if speed is None:
        raise _Unreadable("no speed in the case or the section heading")
    if section_speed is not None and speed != section_speed:
        raise _Unreadable(f"speed {speed}G in a section at {section_speed}G")
    return speed, text[m.end():] if m else text


def _case(kind: str, text: str, section_speed: int | None) -> tuple[int, int, int]:
    """(speed Gb/s, fan-in, message bytes; 0 for long-lived) of a case cell.

    Raises:
        _Unreadable: see :func:`_case_speed`; no fan-in, an incast without a message size, a long-lived
            case with one, or digits the reader does not understand.
    """
    speed, rest = _case_speed(text, section_speed)
    size = re.search(r"(" + _NUM + r"\s*" + _BYTE_UNIT + r")(?![A-WYZa-wyz])(?:\s*[×xX*]\s*(\d+)\b)?", rest)
    size = size if kind == "incast" else None
    fan = re.search(r"\bN\s*=\s*(\d+)\b", rest)
    fan_in = size.group(2) if size and size.group(2) else fan.group(1) if fan else None
    if fan_in is None or (kind == "incast" and size is None):
        want = "'<size> × <fan-in>' (e.g. 1 MB × 4)" if kind == "incast" else "'N = <fan-in>'"
        raise _Unreadable(f"cannot read the case {text.strip()!r}: want the speed and {want}")
    left = rest
    for used in (size, fan if not (size and size.group(2)) else None):
        if used is not None:
            left = left.replace(used.group(0), " ", 1)
    if re.search(r"\d", left):
        raise _Unreadable(f"cannot read {left.strip()!r} in the case {text.strip()!r}")
    msg = _bytes(size.group(1)) if size else 0
    return speed, int(fan_in), msg


_PART_UNITS = {"incast": ("%", "ms", "KB"), "long-lived": ("%", "KB", "ms")}


def _part(text: str, unit: str) -> float | None:
    """One ``·`` part of a cell: a number, optionally its ``unit`` and a bracket (range or std); None when
    empty.

    Raises:
        _Unreadable: anything else.
    """
    if text.strip() in EMPTY_CELLS:
        return None
    num = r"\d+(?:,\d{3})*(?:\.\d+)?"
    u = re.escape(unit)
    m = re.fullmatch(rf"\s*({num})\s*(?:{u})?\s*(?:\(\s*{num}\s*(?:[–-]\s*{num}\s*)?(?:{u})?\s*\))?\s*", text)
    if not m:
        raise _Unreadable(f"cannot read {text.strip()!r}")
    return _number(m.group(1))


def _result_cell(kind: str, cell: str) -> tuple[float, float] | None:
    """(value, summed PFC pause ms; NaN when empty) of a results cell, None for an empty cell or value.

    Raises:
        _Unreadable: not three ``·`` parts, or a part that cannot be read.
    """
    if cell.strip() in EMPTY_CELLS:
        return None
    parts = cell.split("·")
    if len(parts) != 3:
        raise _Unreadable(f"cell {cell.strip()!r} has {len(parts)} '·' parts, not 3 ("
                          + ("efficiency % (min–max) · PFC ms · queue KB)" if kind == "incast"
                             else "utilisation % · queue KB (std) · PFC ms)"))
    try:
        nums = [_part(p, u) for p, u in zip(parts, _PART_UNITS[kind])]
    except _Unreadable as exc:
        raise _Unreadable(f"cell {cell.strip()!r}: {exc}") from None
    pfc = nums[1] if kind == "incast" else nums[2]
    return None if nums[0] is None else (nums[0], math.nan if pfc is None else pfc)


def _section_kind(heading: str) -> str:
    """Scenario kind of a results section (``Incast ...``, ``Long-lived ...``), ``""`` for other sections."""
    if heading.lower().startswith("incast"):
        return "incast"
    return "long-lived" if re.match(r"(?i)long[- ]lived", heading) else ""


def _model_of(text_line: str) -> str:
    """The model letter a (non-table) line introduces (``Model M``), else ``""``."""
    m = re.search(r"\bModel ([A-Z])\b", text_line)
    return m.group(1) if m else ""


def _cells(line: str) -> list[str]:
    return [c.strip() for c in line.strip().strip("|").split("|")]


class _Parser:
    """Reads the file line by line (see the module docstring); errors name ``source``, the line number and
    quote the line."""

    def __init__(self, text: str, source: str, strict: bool = True) -> None:
        self.lines = text.splitlines()
        self.source = source
        self.strict = strict
        self.problems: list[str] = []                # lenient: what could not be read, file:line: ...
        self.settings: dict[str, RefSetting] = {}
        self.rows: list[RefRow] = []
        self.section = self.model = ""
        self.section_speed: int | None = None
        self.columns: dict[str, int] = {}            # settings table: column -> index
        self.header: list[str] = []                  # results table: setting label per cell
        self.header_line = 0

    def error(self, exc: ValueError, number: int) -> ValueError:
        """``exc`` as the ValueError the caller sees: file, line number (:class:`_Unreadable`'s own line when
        set, else ``number``), the line."""
        n = getattr(exc, "line", 0) or number
        return ValueError(f"{self.source}:{n}: {exc}: {self.lines[n - 1].strip()!r}")

    def parse(self) -> list[RefRow]:
        """Every settings and result row.

        Raises:
            ValueError: see :func:`parse_reference`.
        """
        for number, line in enumerate(self.lines, 1):
            try:
                self.line(line.strip(), number)
            except ValueError as exc:
                self.problem(exc, number)
        for row in self.rows:
            for label in list(row.value):
                try:
                    self.check_row(row, label)
                except _Unreadable as exc:   # a consequence of the setting's own problem, if any: row only
                    err = self.error(exc, row.line)
                    if self.strict:
                        raise err from None
                    row.problems.append(str(err))
                    del row.value[label], row.pfc_ms[label]
        return self.rows

    def problem(self, exc: ValueError, number: int) -> str:
        """Strict: raise ``exc`` as :meth:`error`. Lenient: record it in :attr:`problems` and return it."""
        err = self.error(exc, number)
        if self.strict:
            raise err from None
        self.problems.append(str(err))
        return str(err)

    def line(self, s: str, number: int) -> None:
        """One line: a heading, a model line, or a table row."""
        if s.startswith("## "):
            self.heading(s[3:].strip())
        elif not s.startswith("|"):
            if _model_of(s):
                self.model, self.header = _model_of(s), []
        elif not set(s) <= set("|-: "):
            cells = _cells(s)
            if self.section.lower().startswith("settings"):
                self.settings_line(cells, number)
            elif _section_kind(self.section):
                self.result_line(cells, number)
            elif cells[0].lower() == "case":
                raise _Unreadable(f"a results table in section {self.section!r}, which is neither "
                                  "'Incast ...' nor 'Long-lived ...'")

    def heading(self, text: str) -> None:
        """A ``## `` heading starts a section: its kind, speed (``at 400G``) and model, if it gives them."""
        self.section, self.header, self.columns, self.model = text, [], {}, _model_of(text)
        m = re.search(r"\bat\s+" + _SPEED_RE, text) if _section_kind(text) else None
        self.section_speed = _speed(m.group(1)) if m else None

    def settings_line(self, cells: list[str], number: int) -> None:
        """The settings table's header (columns by name) or one setting row."""
        if not self.columns:
            names = [c.lower() for c in cells]
            if names[0] != "label":
                raise _Unreadable("the settings table's header must start with 'label'")
            for i, name in enumerate(names[1:], 1):
                col = "ecn" if "kmin" in name else "dcqcn" if "dcqcn" in name else ""
                if not col or col in self.columns:
                    raise _Unreadable(f"settings column {cells[i]!r}: the reader knows 'label', "
                                      "'Kmin / Kmax / Pmax' and 'DCQCN' once each")
                self.columns[col] = i
            if set(self.columns) != {"ecn", "dcqcn"}:
                raise _Unreadable("the settings table needs a 'Kmin / Kmax / Pmax' and a 'DCQCN' column")
            return
        lab = re.match(r"\((\w+)\)", cells[0])
        if not lab or len(cells) != len(self.columns) + 1:
            raise _Unreadable(f"a setting row is '| (x) name | Kmin / Kmax / Pmax | DCQCN |' ({len(cells)} "
                              "cells)")
        if lab.group(1) in self.settings:
            raise _Unreadable(f"setting ({lab.group(1)}) is given twice")
        try:
            self.settings[lab.group(1)] = RefSetting(
                lab.group(1), _ecn_cell(cells[self.columns["ecn"]], self.settings),
                _dcqcn_cell(cells[self.columns["dcqcn"]], self.settings), line=number)
        except _Unreadable as exc:   # lenient: the rows that compare this setting say so (check_row)
            self.settings[lab.group(1)] = RefSetting(lab.group(1), {}, {}, line=number,
                                                     problem=str(self.error(exc, number)))
            raise

    def result_line(self, cells: list[str], number: int) -> None:
        """A results table's header (``| case | (a) ... |``) or one result row."""
        if cells[0].lower() == "case":
            self.result_header(cells, number)
            return
        if not self.header:
            raise _Unreadable("a result row outside a table with a '| case | (a) ... |' header")
        if len(cells) != len(self.header) + 1:
            raise _Unreadable(f"{len(cells)} cells where the header (line {self.header_line}) has "
                              f"{len(self.header) + 1}")
        kind = _section_kind(self.section)
        speed, fan_in, msg = _case(kind, cells[0], self.section_speed)
        row = RefRow(kind, speed, fan_in, msg, self.model, cells[0], line=number)
        for label, cell in zip(self.header, cells[1:]):
            try:
                got = _result_cell(kind, cell)
            except _Unreadable as exc:   # lenient: the other settings of the row are still compared
                row.problems.append(self.problem(_Unreadable(f"setting ({label}): {exc}"), number))
                continue
            if got is not None:
                row.value[label], row.pfc_ms[label] = got
        twin = next((r for r in self.rows if r.id == row.id), None)
        if twin is not None:
            raise _Unreadable(f"case {row.id} is already on line {twin.line}")
        self.rows.append(row)

    def result_header(self, cells: list[str], number: int) -> None:
        """A results table's header: one setting label per cell, after a model line."""
        labels = [re.match(r"\((\w+)\)", c) for c in cells[1:]]
        bad = [c for c, m in zip(cells[1:], labels) if not m]
        if bad:
            raise _Unreadable(f"header cell {bad[0]!r} does not start with a setting label like '(a)'")
        self.header = [m.group(1) for m in labels if m]
        if len(set(self.header)) != len(self.header):
            raise _Unreadable("a setting label is given twice")
        if self.model not in _MODELS:
            raise _Unreadable("a results table needs a line saying 'Model M' or 'Model T' before it "
                              f"(model {self.model or 'not given'})")
        self.header_line = number

    def check_row(self, row: RefRow, label: str) -> None:
        """Setting ``label`` of ``row`` runs: it is in the settings table and was read, has ECN for the row's
        fan-in and DCQCN values the NIC takes at the row's speed.

        Raises:
            _Unreadable: what stops it.
        """
        st = self.settings.get(label)
        if st is None:
            raise _Unreadable(f"setting ({label}) is not in the settings table")
        if st.problem:
            raise _Unreadable(f"setting ({label}) (line {st.line}) cannot be read")
        if row.fan_in not in st.ecn_by_fan_in and 0 not in st.ecn_by_fan_in:
            raise _Unreadable(f"setting ({label}) (line {st.line}) gives no ECN for N={row.fan_in}")
        for key, v in st.dcqcn_overrides.items():
            why = _check_knob(key, v, row.speed_gbps)
            if why:
                raise _Unreadable(f"setting ({label}) (line {st.line}): DCQCN {why}")


def _setup_text(lines: list[str]) -> tuple[str, int]:
    """The ``## Setup`` section's text and its first line number; the whole text when there is none."""
    start = next((i for i, s in enumerate(lines) if s.strip().lower().startswith("## setup")), None)
    if start is None:
        return "\n".join(lines), 1
    end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("## ")), len(lines))
    return "\n".join(lines[start:end]), start + 1


def parse_reference(text: str, source: str = "reference", strict: bool = True) -> Reference:
    """Parse the Markdown text (the forms read: module docstring). ``source`` names it in errors.

    ``strict`` (default): the first line that cannot be read is an error. Lenient (``strict=False``, the
    calibration tests): what cannot be read fails only what depends on it. A settings row that cannot be
    read is a problem of every result row that compares it, an unreadable cell one of its row; both are
    dropped from the row's values (:attr:`RefRow.problems`). Every such line is in
    :attr:`Reference.problems`, with those that give no row at all (a case or table header that cannot be
    read). The setup stays strict: every row runs with it.

    Raises:
        ValueError: ``<source>:<line>: <what>: '<the line>'`` for a setup value (always) or (strict) a
            settings row, table header, case or cell the reader cannot read, a results table without a
            model, a row whose setting is not in the settings table or has no ECN for its fan-in, a case
            given twice.
    """
    p = _Parser(text, source, strict)
    setup, first = _setup_text(p.lines)
    values: dict[str, float] = {}
    for q in _SETUP:
        try:
            values[q.name] = _setup_value(q, setup, first)[0]
        except ValueError as exc:
            raise p.error(exc, first) from None
    rows = p.parse()
    return Reference(values["base_rtt_us"], int(values["buffer_bytes"]), values["pfc_alpha"],
                     values["start_jitter_us"], values["duration_us"], int(values["incast_seeds"]),
                     int(values["long_lived_seeds"]), p.settings, rows, p.problems)


def load_reference(path: Path, strict: bool = True) -> Reference:
    """Read and parse a reference file (``strict``: see :func:`parse_reference`).

    Raises:
        OSError: unreadable file. ValueError: see :func:`parse_reference` (naming ``path``).
    """
    return parse_reference(Path(path).read_text(encoding="utf-8"), str(path), strict)


def simulate_row(ref: Reference, row: RefRow, seeds: int | None = None) -> dict[str, tuple[float, float]]:
    """Simulate every setting of ``row`` with the reference setup; label -> (median efficiency or
    utilisation %, median summed PFC pause ms). ``seeds`` defaults to the reference's own count.

    Raises:
        KeyError: a row names a setting the settings table lacks, or a fan-in it gives no ECN values for.
    """
    from roce_tune.simulate.model import Scenario
    from roce_tune.simulate.runner import run_seeds

    out: dict[str, tuple[float, float]] = {}
    for label in row.value:
        st = ref.settings[label]
        sc = Scenario(kind=row.kind, speed_gbps=row.speed_gbps, fan_in=row.fan_in, ecn=st.ecn(row.fan_in),  # type: ignore[arg-type]
                      dcqcn=st.dcqcn(), model=row.model, message_bytes=row.message_bytes or 1,  # type: ignore[arg-type]
                      duration_us=ref.duration_us, base_rtt_us=ref.base_rtt_us, buffer_bytes=ref.buffer_bytes,
                      pfc_alpha=ref.pfc_alpha, start_jitter_us=ref.start_jitter_us)
        n = seeds or (ref.incast_seeds if row.kind == "incast" else ref.long_lived_seeds)
        s = run_seeds(sc, n)
        key = "efficiency_percent" if row.kind == "incast" else "utilisation_percent"
        out[label] = (float(s.median[key] or 0.0), float(s.median["pfc_pause_ms"] or 0.0))
    return out
