"""Input size is bounded: a file the full YAML parser would chew on for minutes, or a file larger than any
inventory, is one RT001 at 1:1 instead of a hang (the figures behind the limits are in loader.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from roce_tune.findings import RoceTuneError
from roce_tune.inventory import loader

REPO = Path(__file__).resolve().parents[2]


def _flow_hosts(n: int, anchors: bool) -> str:
    extra = ", x: &a{i} 1" if anchors else ""
    return "site: {name: lab}\nhosts: [" + ", ".join((f"{{name: h{i}") + extra.format(i=i) + "}"
                                                     for i in range(n)) + "]\n"


def test_a_megabyte_outside_the_fast_reader_is_refused_with_rt001() -> None:
    text = _flow_hosts(40_000, anchors=True)  # anchors send it to ruamel.yaml; ~1.2 MB took 18-38 s there
    assert len(text) > loader.MAX_FULL_YAML_BYTES
    with pytest.raises(RoceTuneError) as exc:
        loader.load_inventory_text(text, "big.yaml")
    [f] = exc.value.findings
    assert (f.rule, f.location.file, f.location.line, f.location.col) == ("RT001", "big.yaml", 1, 1)
    assert "524,288 bytes" in f.message and "anchors" in f.message and f.fix


def test_the_full_yaml_limit_counts_utf8_bytes_not_characters() -> None:
    """A file with non-ASCII comments (names in a site's language, typographic dashes) is more bytes than
    characters: the 512 KiB limit and the size RT001 names are in bytes."""
    text = "# Übersicht – Rechenzentrum\n" + "# " + "é" * 200_000 + "\n" + _flow_hosts(8_000, anchors=True)
    size = len(text.encode("utf-8"))
    assert len(text) < loader.MAX_FULL_YAML_BYTES < size
    with pytest.raises(RoceTuneError) as exc:
        loader.load_inventory_text(text, "big.yaml")
    [f] = exc.value.findings
    assert (f.rule, f.location.line, f.location.col) == ("RT001", 1, 1) and f"is {size:,} bytes" in f.message


def test_the_same_size_in_plain_flow_style_still_loads() -> None:
    text = _flow_hosts(60_000, anchors=False)
    assert len(text) > loader.MAX_FULL_YAML_BYTES
    with pytest.raises(RoceTuneError) as exc:  # one bad name: read and validated, so exactly that finding
        loader.load_inventory_text(text.replace("hosts: [", "hosts: [{name: 'bad name'}, "), "big.yaml")
    assert [(f.rule, f.location.path) for f in exc.value.findings] == [("RT003", "hosts[0].name")]


def test_a_file_above_the_overall_cap_is_not_read_whole(tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(loader, "MAX_INVENTORY_BYTES", 1000)
    path = tmp_path / "huge.yaml"
    path.write_text("site: {name: lab}\n# " + "x" * 5000 + "\n")
    with pytest.raises(RoceTuneError) as exc:
        loader.load_inventory(path)
    [f] = exc.value.findings
    assert (f.rule, f.location.line, f.location.col) == ("RT001", 1, 1) and ("larger than the 1,000 "
                                                                             "bytes") in f.message
    with pytest.raises(RoceTuneError) as exc:
        loader.load_inventory_text(path.read_text(), "huge.yaml")
    assert exc.value.findings[0].rule == "RT001"


@pytest.mark.parametrize("name", ["lab-2node", "mixed-vendor", "site", "spectrum-x-su"])
def test_shipped_inventories_are_far_below_the_caps(name: str) -> None:
    path = REPO / "inventories" / f"{name}.yaml"
    assert path.stat().st_size < loader.MAX_FULL_YAML_BYTES
    assert loader.load_inventory(path).inventory.site.name
