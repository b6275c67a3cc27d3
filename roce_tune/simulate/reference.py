"""Read packet-level reference results (a Markdown file of result tables) for calibrating the simulator.

The file has a "Settings compared" table (label, Kmin / Kmax / Pmax per fan-in or fixed, DCQCN) and
result sections headed ``## Incast at <speed>`` / ``## Long-lived flows at <speed>``, each with one
table per DCQCN model (a line containing ``Model M`` or ``Model T`` before it). Incast cells read
``efficiency % (min-max) · PFC ms · queue KB``; long-lived cells ``utilisation % · queue KB (std) · PFC ms``.
Every row is parsed; nothing is hard-coded, so more rows of the same kind are checked the same way.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from roce_tune.simulate.model import DEFAULT_BUFFER_BYTES, DEFAULT_PFC_ALPHA, DcqcnParams, EcnSetting

_NUM = r"(\d+(?:\.\d+)?)"


@dataclass(frozen=True)
class RefSetting:
    """One compared setting: ECN per fan-in (key 0 = any fan-in) and the DCQCN overrides on firmware."""

    label: str
    ecn_by_fan_in: dict[int, tuple[int, int, float]]
    dcqcn_overrides: dict[str, float]

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
    and summed PFC pause (ms)."""

    kind: str
    speed_gbps: int
    fan_in: int
    message_bytes: int
    model: str
    case: str
    value: dict[str, float] = field(default_factory=dict)
    pfc_ms: dict[str, float] = field(default_factory=dict)

    @property
    def id(self) -> str:
        """Test id like ``incast-100G-1MBx4-M``."""
        size = f"{self.message_bytes // 1_000_000}MBx" if self.kind == "incast" else "N"
        return f"{self.kind}-{self.speed_gbps}G-{size}{self.fan_in}-{self.model}"


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


def _search(pattern: str, text: str, default: float) -> float:
    m = re.search(pattern, text)
    return float(m.group(1).replace(",", "")) if m else default


def _ecn_triple(text: str) -> tuple[int, int, float]:
    m = re.search(r"(\d+)\s*/\s*(\d+)\s*/\s*" + _NUM + r"\s*%", text)
    if not m:
        raise ValueError(f"cannot read Kmin/Kmax/Pmax from {text!r}")
    return int(m.group(1)), int(m.group(2)), float(m.group(3))


def _cells(line: str) -> list[str]:
    return [c.strip() for c in line.strip().strip("|").split("|")]


def _model_of(text_line: str) -> str:
    """``M`` or ``T`` when a (non-table) line introduces that model's results, else ``""``."""
    if "Model M" in text_line:
        return "M"
    return "T" if "Model T" in text_line else ""


def _section_kind(section: str) -> str:
    """Scenario kind of a results section, ``""`` for other sections."""
    if section.startswith("Incast"):
        return "incast"
    return "long-lived" if section.startswith("Long-lived") else ""


def _settings_row(label: str, cells: list[str], settings: dict[str, RefSetting]) -> RefSetting:
    """A settings-table row: ECN (one triple, per fan-in ``N=..``, or ``as (x)``) and DCQCN rate overrides."""
    ecn_text, dq_text = cells[1], cells[2]
    if ecn_text.startswith("as ("):
        ecn = settings[ecn_text[4]].ecn_by_fan_in
    elif "N=" in ecn_text:
        ecn = {int(k): _ecn_triple(v) for k, v in re.findall(r"N=(\d+):\s*([^;]+)", ecn_text)}
    else:
        ecn = {0: _ecn_triple(ecn_text)}
    over: dict[str, float] = {}
    for key, val in re.findall(r"(rpg_\w+)\s+" + _NUM + r"\s*Mb/s", dq_text):
        over[{"rpg_ai": "rpg_ai_rate_mbps", "rpg_hai": "rpg_hai_rate_mbps"}.get(key, key)] = float(val)
    return RefSetting(label, ecn, over)


def _result_row(kind: str, model: str, header: list[str], cells: list[str], row_text: str) -> RefRow:
    """A results row: the case (speed, message x fan-in or N=fan-in) and one cell per setting label."""
    m = re.match(r"(\d+)G\s+(?:(\d+)\s*MB\s*[×x]\s*(\d+)|N=(\d+))", cells[0])
    if not m:
        raise ValueError(f"cannot read the case of row {row_text!r}")
    speed = int(m.group(1))
    msg = int(m.group(2)) * 1_000_000 if m.group(2) else 0
    fan_in = int(m.group(3) or m.group(4))
    row = RefRow(kind, speed, fan_in, msg, model, cells[0])
    for label, cell in zip(header, cells[1:]):
        row.value[label], row.pfc_ms[label] = _result_cell(kind, cell, row_text)
    return row


def _result_cell(kind: str, cell: str, row_text: str) -> tuple[float, float]:
    """``value · incast pause · long-lived pause``: the value and the pause figure of this kind."""
    parts = [p.strip() for p in cell.split("·")]
    nums = [float(m.group(1)) for p in parts if (m := re.match(_NUM, p))]
    if len(parts) != 3 or len(nums) != 3:
        raise ValueError(f"cannot read cell {cell!r} of row {row_text!r}")
    return nums[0], nums[1] if kind == "incast" else nums[2]


def parse_reference(text: str) -> Reference:
    """Parse the Markdown text.

    Raises:
        ValueError: a settings or result row that cannot be read (the message quotes it).
    """
    rtt = _search(r"propagation RTT[^.]*?" + _NUM + r"\s*us", text, 6.164)
    buf = int(_search(r"pool\s+([\d,]+)\s*B", text, DEFAULT_BUFFER_BYTES))
    alpha = _search(r"alpha\s*=\s*" + _NUM, text, DEFAULT_PFC_ALPHA)
    jitter = _search(r"U\(0,\s*" + _NUM + r"\s*us\)", text, 5.0)
    duration = _search(r"run\s+" + _NUM + r"\s*ms", text, 40.0) * 1000.0
    seeds_i = int(_search(r"Seeds\.\*\*\s*(\d+)\s+for incasts", text, 5))
    seeds_l = int(_search(r"(\d+)\s+for long-lived", text, 3))
    settings: dict[str, RefSetting] = {}
    rows: list[RefRow] = []
    section = model = ""
    header: list[str] = []                      # setting labels of the current results table
    for line in text.splitlines():
        s = line.strip()
        if s.startswith("## "):
            section, header = s[3:], []
            continue
        if not s.startswith("|"):
            if _model_of(s):
                model, header = _model_of(s), []
            continue
        if set(s) <= set("|-: "):
            continue
        cells = _cells(s)
        lab = re.match(r"\((\w)\)", cells[0])
        if section.startswith("Settings") and lab:
            settings[lab.group(1)] = _settings_row(lab.group(1), cells, settings)
        elif cells[0] == "case":
            header = [m.group(1) for c in cells[1:] if (m := re.match(r"\((\w)\)", c))]
        elif _section_kind(section) and header:
            rows.append(_result_row(_section_kind(section), model, header, cells, s))
    return Reference(rtt, buf, alpha, jitter, duration, seeds_i, seeds_l, settings, rows)


def load_reference(path: Path) -> Reference:
    """Read and parse a reference file.

    Raises:
        OSError: unreadable file. ValueError: see :func:`parse_reference`.
    """
    return parse_reference(Path(path).read_text(encoding="utf-8"))


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
