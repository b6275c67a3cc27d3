"""The packet-level reference reader (roce_tune.simulate.reference) on small Markdown files of the reference's
shape, written here with our own numbers: every form of a row "of the same kind" is read, and anything the
reader cannot read is a ValueError quoting the line and its number (never a silent default)."""

from __future__ import annotations

import pytest

from roce_tune.simulate.model import DcqcnParams
from roce_tune.simulate.reference import case_id, load_reference, parse_reference
from tests import references

SETUP = """# Test reference

## Setup

- **Propagation.** Link delay = RTT/4, so the propagation RTT equals our base RTT for `x/site.yaml`:
  7.5 us at 100G (2 hops). With one frame the base RTT is 8.1 us.
- **Buffer and PFC.** Shared lossless pool 4,000,000 B (the `ingress_lossless_pool`). XOFF at
  alpha * free with alpha = 64 (dynamic_th 6).
- **Traffic.** Incast: N senders each send one message, starting at t0 + U(0, 3 us).
  Long-lived: N senders start together and run 30 ms; statistics over the second half.
- **Seeds.** 4 for incasts (start jitter and ECN draws), 2 for long-lived.
"""

SETTINGS_HEAD = """
## Settings compared

| label | Kmin / Kmax / Pmax | DCQCN |
|---|---|---|
"""

INCAST_HEAD = """
## Incast at {speed}

**Model {model}** (words):

| case | (a) one | (b) two |
|---|---|---|
"""

LONG_HEAD = """
## Long-lived flows at {speed}

**Model {model}:**

| case | (a) one | (b) two |
|---|---|---|
"""

SETTINGS = ("| (a) ours | N=4: 10000/100000/2 %; N=8: 10000/120000/5 % | rpg_ai 20 Mb/s, rpg_hai 200 Mb/s |\n"
            "| (b) theirs | 150000 / 1500000 / 100 % | firmware (ai 5, hai 50 Mb/s) |\n")


INCAST = "| 100G 1 MB × 4 | 36 · 0.0 · 278 | 55 (54–56) · 0.0 · 363 |\n"
#: a result row's cells after the case
CELLS = " | 1 · 0.0 · 1 | 2 · 0.0 · 2 |\n"


def _doc(settings: str = SETTINGS, incast: str = INCAST,
         long_lived: str = "", setup: str = SETUP, speed: str = "100G", model: str = "M") -> str:
    text = setup + SETTINGS_HEAD + settings
    if incast:
        text += INCAST_HEAD.format(speed=speed, model=model) + incast
    if long_lived:
        text += LONG_HEAD.format(speed=speed, model=model) + long_lived
    return text


def _error(text: str) -> str:
    with pytest.raises(ValueError) as exc:
        parse_reference(text)
    return str(exc.value)


def _line_of(text: str, needle: str) -> int:
    return next(i for i, line in enumerate(text.splitlines(), 1) if needle in line)


def _assert_quoted(text: str, needle: str) -> None:
    """Strict reading of ``text`` fails with the number of the line holding ``needle``, quoting it."""
    msg = _error(text)
    assert f":{_line_of(text, needle)}:" in msg and needle in msg


# --- 1. DCQCN column -------------------------------------------------------------------------------------

def test_dcqcn_every_knob_the_simulator_knows_with_units() -> None:
    dq = ("rpg_time_reset 75 us, rpg_byte_reset 0, rpg_threshold 2, rpg_gd 9, rpg_min_rate 2 Mb/s, "
          "clamp_tgt_rate 1, dce_tcp_g 1000, dce_tcp_rtt_us 3, rate_reduce_monitor_period 0.01 ms, "
          "min_time_between_cnps 4 us, rate_to_set_on_first_cnp 1 Gb/s, initial_alpha_value 512, "
          "rpg_min_dec_fac 40 %, rpg_max_rate_mbps 90000, rpg_ai_rate 10 Mb/s, rpg_hai 0.1 Gb/s")
    ref = parse_reference(_doc(settings=f"| (a) x | 10000/100000/2 % | {dq} |\n"
                                        "| (b) y | as (a) | firmware |\n"))
    assert ref.settings["a"].dcqcn() == DcqcnParams(
        rpg_time_reset_us=75, rpg_byte_reset_bytes=0, rpg_threshold=2, rpg_gd=9, rpg_min_rate_mbps=2,
        clamp_tgt_rate=1, dce_tcp_g=1000, dce_tcp_rtt_us=3, rate_reduce_monitor_period_us=10,
        min_time_between_cnps_us=4, rate_to_set_on_first_cnp_mbps=1000, initial_alpha_value=512,
        rpg_min_dec_fac_percent=40, rpg_max_rate_mbps=90000, rpg_ai_rate_mbps=10, rpg_hai_rate_mbps=100,
        label="a")
    assert all(type(getattr(ref.settings["a"].dcqcn(), k)) is type(getattr(DcqcnParams(), k))
               for k in DcqcnParams.keys())   # whole-number knobs stay int
    assert ref.settings["b"].dcqcn() == DcqcnParams(label="b")
    assert ref.settings["b"].ecn_by_fan_in == ref.settings["a"].ecn_by_fan_in == {0: (10000, 100000, 2.0)}


def test_dcqcn_list_spellings() -> None:
    dq = "Firmware defaults, rpg_ai 20 Mb/s and rpg_hai = 0.2 Gb/s; rpg_byte_reset 32,767"
    ref = parse_reference(_doc(settings=f"| (a) x | 1/2/3 % | {dq} |\n"
                                        "| (b) y | 1/2/3 % | firmware defaults |\n"))
    assert ref.settings["a"].dcqcn_overrides == {"rpg_ai_rate_mbps": 20, "rpg_hai_rate_mbps": 200,
                                                 "rpg_byte_reset_bytes": 32767}
    assert ref.settings["b"].dcqcn_overrides == {}


def test_dcqcn_mlx5_debugfs_names() -> None:
    ref = parse_reference(_doc(settings="| (a) x | 1/2/3 % | rp_time_reset 50, rp_dce_tcp_g 900, "
                                        "np_min_time_between_cnps 0 us |\n| (b) y | 1/2/3 % | firmware |\n"))
    assert ref.settings["a"].dcqcn_overrides == {"rpg_time_reset_us": 50, "dce_tcp_g": 900,
                                                 "min_time_between_cnps_us": 0}


def test_dcqcn_byte_counter_in_bytes_units() -> None:
    ref = parse_reference(_doc(settings="| (a) x | 1/2/3 % | rpg_byte_reset 16 KB, rpg_time_reset 0.3 ms, "
                                        "rpg_ai 1.005 Gb/s |\n"
                                        "| (b) y | 1/2/3 % | rpg_byte_reset_bytes 1 KiB |\n"))
    assert ref.settings["a"].dcqcn_overrides == {"rpg_byte_reset_bytes": 16000, "rpg_time_reset_us": 300,
                                                 "rpg_ai_rate_mbps": 1005}
    assert ref.settings["b"].dcqcn().rpg_byte_reset_bytes == 1024


def test_dcqcn_firmware_forms_are_the_firmware_defaults() -> None:
    ref = parse_reference(_doc())
    assert ref.settings["b"].dcqcn() == DcqcnParams(label="b")
    assert ref.settings["a"].dcqcn_overrides == {"rpg_ai_rate_mbps": 20, "rpg_hai_rate_mbps": 200}


@pytest.mark.parametrize(("cell", "words"), [
    ("rpg_warp 5 us", "rpg_warp"),                       # a knob nobody knows
    ("rpg_time_reset 75 parsecs", "parsecs"),              # a unit that does not convert
    ("rpg_time_reset 75 Mb/s", "Mb/s"),                    # a unit of another quantity
    ("rpg_ai 20 Mb/s; rpg_hai", "rpg_hai"),                # a knob without a value
    ("rpg_gd 3.5", "rpg_gd"),                              # a whole-number knob given a fraction
    ("rpg_threshold 99", "rpg_threshold"),                 # outside its range (1..31)
    ("firmware (ai 5, hai 50 Mb/s) and more", "and more"),
    ("rpg_ai 20 Mb/s, rpg_ai 30 Mb/s", "twice"),
])
def test_dcqcn_unreadable_is_an_error_naming_it(cell: str, words: str) -> None:
    text = _doc(settings=f"| (a) x | 1/2/3 % | {cell} |\n| (b) y | 1/2/3 % | firmware |\n")
    msg = _error(text)
    assert words in msg and f":{_line_of(text, cell)}:" in msg and cell in msg


def test_dcqcn_firmware_parenthesis_differing_from_firmware_is_read() -> None:
    ref = parse_reference(_doc(settings="| (a) x | 1/2/3 % | firmware (ai 10, hai 50 Mb/s) |\n"
                                        "| (b) y | 1/2/3 % | firmware |\n"))
    assert ref.settings["a"].dcqcn_overrides == {"rpg_ai_rate_mbps": 10, "rpg_hai_rate_mbps": 50}


# --- 2. message sizes and ids ----------------------------------------------------------------------------

def test_message_sizes_in_every_unit() -> None:
    rows = "".join(f"| 100G {case}{CELLS}" for case in ("1 MB × 4", "512 KB × 4", "0.5 MB × 4", "2 MiB × 4",
                                                          "1.5 MB x 8", "1 GB × 4", "512 KiB × 4"))
    ref = parse_reference(_doc(incast=rows))
    assert [r.message_bytes for r in ref.rows] == [1_000_000, 512_000, 500_000, 2 << 20, 1_500_000,
                                                   1_000_000_000, 512 << 10]
    assert [r.id for r in ref.rows] == [f"incast-100G-{s}-M" for s in (
        "1MBx4", "512KBx4", "500KBx4", "2MiBx4", "1.5MBx8", "1GBx4", "512KiBx4")]


def test_case_id_keeps_todays_ids_and_is_shared() -> None:
    assert case_id("incast", 100, 8, 1_000_000, "M") == "incast-100G-1MBx8-M"
    assert case_id("incast", 400, 32, 8_000_000, "T") == "incast-400G-8MBx32-T"
    assert case_id("long-lived", 100, 4, 0, "M") == "long-lived-100G-N4-M"
    assert case_id("incast", 100, 4, 1234567, "M") == "incast-100G-1234567Bx4-M"


def test_incast_fan_in_as_n() -> None:
    ref = parse_reference(_doc(incast=f"| 100G incast of 1MB, N = 8{CELLS}| 100G 1MBx4{CELLS}"))
    assert [(r.message_bytes, r.fan_in) for r in ref.rows] == [(1_000_000, 8), (1_000_000, 4)]


def test_a_case_twice_in_one_model_is_an_error() -> None:
    text = _doc(incast=f"| 100G 1 MB × 4{CELLS}| 100G 1000 KB × 4{CELLS}")
    msg = _error(text)
    assert "incast-100G-1MBx4-M" in msg and f":{_line_of(text, '1000 KB')}:" in msg


# --- 3. fan-in spellings and ECN triples -----------------------------------------------------------------

def test_long_lived_fan_in_spellings() -> None:
    rows = ("| 100G N = 4 | 100.2 · 168 (11) · 0.0 | 97.8 · 91 (113) · 0.0 |\n"
            "| 100G long-lived, N=8 | 99.0 · 1,348 (674) · 1.5 | 100.0 · 12 (1) · 0.0 |\n")
    ref = parse_reference(_doc(incast="", long_lived=rows))
    assert [(r.kind, r.fan_in, r.value["a"], r.pfc_ms["a"]) for r in ref.rows] == [
        ("long-lived", 4, 100.2, 0.0), ("long-lived", 8, 99.0, 1.5)]
    assert "cannot read" in _error(_doc(incast="", long_lived=f"| 100G 1 MB, N=4{CELLS}"))
    assert [r.id for r in ref.rows] == ["long-lived-100G-N4-M", "long-lived-100G-N8-M"]


def test_ecn_per_fan_in_with_spaces_separators_and_units() -> None:
    settings = ("| (a) x | N = 4: 18,432 / 180,000 / 2 %; N = 8: 150 KB / 1.5 MB / 100 % | firmware |\n"
                "| (b) y | 1 MiB / 2 MiB / 5 % | firmware |\n")
    ref = parse_reference(_doc(settings=settings))
    a, b = ref.settings["a"], ref.settings["b"]
    assert (a.ecn(4).kmin_bytes, a.ecn(4).kmax_bytes, a.ecn(4).pmax_percent) == (18432, 180000, 2.0)
    assert (a.ecn(8).kmin_bytes, a.ecn(8).kmax_bytes, a.ecn(8).pmax_percent) == (150000, 1500000, 100.0)
    assert (b.ecn(64).kmin_bytes, b.ecn(64).kmax_bytes) == (1 << 20, 2 << 20)


@pytest.mark.parametrize("ecn", ["N=4: 1/2/3 %; N=8 1/2/3 %", "10000 / 100000", "10 kB-ish / 20 / 3 %",
                                 "N=4: 1/2/3 %; 5/6/7 %"])
def test_unreadable_ecn_is_an_error_quoting_the_line(ecn: str) -> None:
    _assert_quoted(_doc(settings=f"| (a) x | {ecn} | firmware |\n| (b) y | 1/2/3 % | firmware |\n"), ecn)


def test_a_row_whose_fan_in_a_setting_lacks_is_an_error() -> None:
    text = _doc(incast="| 100G 1 MB × 16 | 1 · 0.0 · 1 | 2 · 0.0 · 2 |\n")   # (a) gives N=4 and N=8 only
    msg = _error(text)
    assert "(a)" in msg and "16" in msg and f":{_line_of(text, '1 MB × 16')}:" in msg


# --- 4. speeds -------------------------------------------------------------------------------------------

@pytest.mark.parametrize(("label", "speed"), [("25G", 25), ("200G", 200), ("400G", 400), ("800G", 800),
                                              ("400 G", 400)])
def test_speeds_and_per_speed_sections(label: str, speed: int) -> None:
    ref = parse_reference(_doc(speed=label, incast=f"| {label} 1 MB × 4 | 1 · 0.0 · 1 | 2 · 0.0 · 2 |\n",
                               long_lived=f"| {label} N=4 | 99.0 · 1 (1) · 0.0 | 98 · 2 (2) · 0.0 |\n"))
    assert [(r.kind, r.speed_gbps) for r in ref.rows] == [("incast", speed), ("long-lived", speed)]
    assert ref.rows[0].id == f"incast-{speed}G-1MBx4-M"


def test_two_speed_sections_and_models() -> None:
    text = _doc() + INCAST_HEAD.format(speed="400G", model="T") + f"| 400G 8 MB × 8{CELLS}"
    ref = parse_reference(text)
    assert [r.id for r in ref.rows] == ["incast-100G-1MBx4-M", "incast-400G-8MBx8-T"]


@pytest.mark.parametrize("case", ["123G 1 MB × 4", "400G 1 MB", "1 MB × 4 at 100G fast",
                                  "400G 1 furlong × 4", "400G 1 Bytes × 4", "400G 1 MB × 4 N=8"])
def test_unreadable_case_is_an_error(case: str) -> None:
    _assert_quoted(_doc(speed="400G", incast=f"| {case} | 1 · 0.0 · 1 | 2 · 0.0 · 2 |\n"), case)


def test_row_speed_against_its_section_speed() -> None:
    text = _doc(speed="400G", incast="| 100G 1 MB × 4 | 1 · 0.0 · 1 | 2 · 0.0 · 2 |\n")
    assert "400G" in _error(text)


# --- 5. empty cells, table shape -------------------------------------------------------------------------

@pytest.mark.parametrize("empty", ["–", "—", "n/a", "", "-"])
def test_an_empty_cell_is_not_compared(empty: str) -> None:
    ref = parse_reference(_doc(incast=f"| 100G 1 MB × 4 | {empty} | 55 (54–56) · 0.0 · 363 |\n"))
    assert ref.rows[0].value == {"b": 55.0} and ref.rows[0].pfc_ms == {"b": 0.0}


@pytest.mark.parametrize("cell", ["36 · 0.0", "fast · 0.0 · 1", "36 · 0.0 · 278 · 9",
                                  "36 % (30 – ) · 0.0 · 2"])
def test_an_unreadable_cell_is_an_error(cell: str) -> None:
    _assert_quoted(_doc(incast=f"| 100G 1 MB × 4 | {cell} | 55 · 0.0 · 363 |\n"), cell)


def test_table_shape_errors() -> None:
    assert "cells" in _error(_doc(incast="| 100G 1 MB × 4 | 36 · 0.0 · 278 |\n"))
    text = _doc().replace("| case | (a) one | (b) two |", "| case | (a) one | two |")
    assert "two" in _error(text)
    text = _doc().replace("| (b) two |", "| (c) two |")
    assert "(c)" in _error(text)
    text = _doc().replace("**Model M** (words):", "Results:")
    assert "Model" in _error(text)


def test_results_table_in_an_unknown_section_is_an_error() -> None:
    text = _doc(incast="", long_lived="| 100G N=4 | 99 · 1 (1) · 0.0 | 98 · 2 (2) · 0.0 |\n")
    assert parse_reference(text.replace("## Long-lived flows at", "## Long lived flows at")).rows
    msg = _error(text.replace("## Long-lived flows at", "## Steady flows at"))
    assert "Steady flows" in msg and f":{_line_of(text, '| case |')}:" in msg


@pytest.mark.parametrize("label", ["400Gb/s", "400GbE"])
def test_speed_suffixes(label: str) -> None:
    ref = parse_reference(_doc(speed="400G", incast=f"| {label} 1 MB × 4{CELLS}"))
    assert ref.rows[0].speed_gbps == 400


def test_settings_row_without_a_label_is_an_error() -> None:
    text = _doc(settings=SETTINGS + "| f) other | 1/2/3 % | firmware |\n")
    assert f":{_line_of(text, 'f) other')}:" in _error(text)


def test_load_reference_names_the_file(tmp_path: pytest.TempPathFactory) -> None:
    path = tmp_path / "ref.md"  # type: ignore[operator]
    path.write_text(_doc(incast="| 100G 1 MB × 4 | huh | 55 · 0.0 · 363 |\n"), encoding="utf-8")
    with pytest.raises(ValueError, match=r"ref\.md:\d+:"):
        load_reference(path)


# --- 6. setup paragraph ----------------------------------------------------------------------------------

def test_setup_values_are_read() -> None:
    ref = parse_reference(_doc())
    assert (ref.base_rtt_us, ref.buffer_bytes, ref.pfc_alpha, ref.start_jitter_us, ref.duration_us,
            ref.incast_seeds, ref.long_lived_seeds) == (7.5, 4_000_000, 64.0, 3.0, 30_000.0, 4, 2)


def test_setup_not_mentioned_keeps_the_defaults() -> None:
    ref = parse_reference(_doc(setup="# Test reference\n"))
    assert (ref.base_rtt_us, ref.buffer_bytes, ref.pfc_alpha, ref.start_jitter_us, ref.duration_us,
            ref.incast_seeds, ref.long_lived_seeds) == (6.164, 5_306_864, 128.0, 5.0, 40_000.0, 5, 3)


@pytest.mark.parametrize(("old", "new", "what"), [
    ("7.5 us at 100G", "seven and a half microseconds", "propagation RTT"),
    ("pool 4,000,000 B", "pool of four megabytes", "pool"),
    ("alpha = 64", "alpha = 2^6", "alpha"),
    ("U(0, 3 us)", "U(0, 3) us", "U(0"),
    ("run 30 ms", "run 30", "run"),
    ("4 for incasts", "four for incasts", "incast"),
    ("2 for long-lived", "two for long-lived", "long-lived"),
    ("7.5 us at 100G", "7.5 us at 100G and 7.2 us at 400G", "propagation RTT"),   # one value for all rows
    ("run 30 ms", "run 30 ms (the 400G runs 20 ms)", "run"),
])
def test_setup_mentioned_but_unreadable_is_an_error(old: str, new: str, what: str) -> None:
    text = _doc(setup=SETUP.replace(old, new))
    msg = _error(text)
    assert what in msg and f":{_line_of(text, what)}:" in msg


# --- the real file ---------------------------------------------------------------------------------------

def test_real_reference_file_every_row_resolves() -> None:
    path = references.simulation_reference()
    if path is None:
        pytest.skip(references.simulation_reference_skip())
    ref = load_reference(path)
    assert ref.rows
    for row in ref.rows:
        for label in row.value:
            setting = ref.settings[label]
            assert setting.ecn(row.fan_in).kmax_bytes > 0
            assert setting.dcqcn().label == label
    a = ref.settings["a"].dcqcn()
    assert (a.rpg_ai_rate_mbps, a.rpg_hai_rate_mbps) == (20, 200)
    assert ref.settings["b"].dcqcn() == DcqcnParams(label="b")
    assert (ref.base_rtt_us, ref.buffer_bytes, ref.pfc_alpha, ref.start_jitter_us, ref.duration_us,
            ref.incast_seeds, ref.long_lived_seeds) == (6.164, 5_306_864, 128.0, 5.0, 40_000.0, 5, 3)
    assert len({row.id for row in ref.rows}) == len(ref.rows)


def test_calibration_modules_get_the_error_not_a_collection_error(tmp_path: pytest.TempPathFactory,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """A setup the reader cannot read: no reference, and why (the test modules fail test_reference_file_parsed
    with it). A cell it cannot read: the reference, read leniently, with the cell as its row's problem."""
    folder = tmp_path  # type: ignore[assignment]
    path = folder / references.SIMULATION_REFERENCE  # type: ignore[operator]
    monkeypatch.setattr(references, "_root_override", folder)
    path.write_text(_doc(setup=SETUP.replace("alpha = 64", "alpha = many")), encoding="utf-8")
    ref, problem = references.load_simulation_reference()
    assert ref is None and "alpha" in problem and references.SIMULATION_REFERENCE in problem
    path.write_text(_doc(incast="| 100G 1 MB × 4 | huh | 55 · 0.0 · 363 |\n"), encoding="utf-8")
    ref, problem = references.load_simulation_reference()
    assert ref is not None and problem == ""
    assert ref.rows[0].value == {"b": 55.0} and "huh" in ref.rows[0].problems[0] and ref.problems


# --- 7. lenient reading: what cannot be read fails its own rows, not the whole file -------------------

def test_lenient_unreadable_setting_fails_only_its_rows() -> None:
    settings = SETTINGS + "| (c) new | 1/2/3 % | rpg_time_reset 75 us (400G), 300 us (100G) |\n"
    text = _doc(settings=settings,
                incast="| 100G 1 MB × 4 | 36 · 0.0 · 278 | 55 · 0.0 · 363 | 60 · 0.0 · 400 |\n"
                       "| 100G 8 MB × 4 | 40 · 0.0 · 278 | 50 · 0.0 · 363 | – |\n").replace(
        "| case | (a) one | (b) two |\n|---|---|---|",
        "| case | (a) one | (b) two | (c) new |\n|---|---|---|---|")
    with pytest.raises(ValueError):
        parse_reference(text)                       # strict (the default) still refuses the file
    ref = parse_reference(text, strict=False)
    line = _line_of(text, "| (c) new")
    assert len(ref.problems) == 1 and f"reference:{line}:" in ref.problems[0], ref.problems
    one, eight = ref.rows
    assert set(one.value) == {"a", "b"} and set(one.pfc_ms) == {"a", "b"}
    assert len(one.problems) == 1 and "(c)" in one.problems[0] and f"line {line}" in one.problems[0]
    assert set(eight.value) == {"a", "b"} and eight.problems == []   # (c) left empty there: nothing to fail


def test_lenient_unreadable_cell_and_case() -> None:
    text = _doc(incast="| 100G 1 MB × 4 | 36 · 0.0 · 278 | 55 ~ 0.0 ~ 363 |\n"
                       "| 100G one MB × 4 | 36 · 0.0 · 278 | 55 · 0.0 · 363 |\n"
                       "| 100G 8 MB × 4 | 36 · 0.0 · 278 | 55 · 0.0 · 363 |\n")
    ref = parse_reference(text, strict=False)
    assert [r.id for r in ref.rows] == ["incast-100G-1MBx4-M", "incast-100G-8MBx4-M"]
    first = ref.rows[0]
    assert set(first.value) == {"a"} and len(first.problems) == 1 and "55 ~ 0.0 ~ 363" in first.problems[0]
    assert len(ref.problems) == 2                    # the cell, and the case no row could be made of
    assert any(f"reference:{_line_of(text, 'one MB')}:" in p for p in ref.problems)
    assert ref.rows[1].problems == []


def test_lenient_setup_error_still_refuses_the_file() -> None:
    """Every row runs with the setup: a setup value that cannot be read leaves nothing to compare."""
    with pytest.raises(ValueError, match="alpha"):
        parse_reference(_doc(setup=SETUP.replace("alpha = 64", "alpha = sixty-four")), strict=False)
