"""Unit parsers: the memoised text paths give exactly what the unmemoised parser gives."""

from __future__ import annotations

import pytest

from roce_tune import units

SPEEDS = ["400G", "400G", " 400G ", "100g", "400Gbps", "400Gb/s", "400GbE", "1.6T", "1.6t", "800G", "100000",
          "25", "25000", "400", "0.4T", "400.0G", "400.5G", "fast", "", "7G", "١٠٠G", "٤٠٠", "400 G", "400M",
          "400000M", "1e3G", "Inf", "nan"]
LENGTHS = ["3m", "3m", "40m", "2.5", "40", " 40 m ", "40meters", "1metre", "100000", "100001", "-1", "x", "",
           "3M", "3km", "1e3", "0", "0.0m"]


def _outcome(parse: object, value: object) -> tuple[str, object]:
    try:
        result = parse(value)  # type: ignore[operator]
    except ValueError as exc:
        return "error", str(exc)
    return type(result).__name__, result


@pytest.mark.parametrize(("parse", "memo", "values"), [
    (units.parse_speed_gbps, units._speed_text_gbps, SPEEDS),
    (units.parse_length_m, units._length_text_m, LENGTHS),
])
def test_memoised_text_parsers_equal_the_unmemoised_ones(parse: object, memo: object,
                                                        values: list[str]) -> None:
    """Each spelling, asked twice (the second from the memo), gives the unmemoised result or the same
    error; a str subclass (not memoised) too."""

    class Text(str):
        pass

    raw = memo.__wrapped__  # type: ignore[attr-defined]
    for value in values:
        expected = _outcome(raw, value)
        assert _outcome(parse, value) == expected, value
        assert _outcome(parse, value) == expected, value  # memoised
        assert _outcome(parse, Text(value)) == expected, value
    assert memo.cache_info().hits > 0  # type: ignore[attr-defined]


def test_non_text_speeds_and_lengths_unchanged() -> None:
    assert units.parse_speed_gbps(400000) == 400 and units.parse_speed_gbps(25) == 25
    assert units.parse_length_m(3) == 3.0 and units.parse_length_m(2.5) == 2.5
    for bad in (True, None, [400]):
        with pytest.raises(ValueError):
            units.parse_speed_gbps(bad)
        with pytest.raises(ValueError):
            units.parse_length_m(bad)
