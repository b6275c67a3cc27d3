"""The on-disk scorecard cache: keyed by the simulator's code and defaults, never trusting a damaged entry
(real simulations, real files, a real second interpreter for a changed engine)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from roce_tune.simulate.model import DcqcnParams, EcnSetting
from roce_tune.simulate.scorecard import PortClass, ScoreRow, _read_cache, scorecard, simulator_digest

# one xdist worker runs this module, so the simulated cache entry (module fixture ``cached``) is made once
pytestmark = pytest.mark.xdist_group("scorecard-cache")

ROOT = Path(__file__).resolve().parents[2]
#: a 2:1 class at 100G keeps the 24 runs of a real scorecard around a second
PC = PortClass(speed_gbps=100, fan_in=2, base_rtt_us=6.164, buffer_bytes=5_306_864, pfc_alpha=128.0,
               ecn=EcnSetting(100_000, 400_000, 10.0, label="derived"), dcqcn=DcqcnParams(label="plan"),
               asic="spectrum-3", example="leaf1:Ethernet0")
_KEY = ("from roce_tune.simulate.model import DcqcnParams, EcnSetting;"
        "from roce_tune.simulate.scorecard import PortClass;"
        "print(PortClass(speed_gbps=100, fan_in=2, base_rtt_us=6.164, buffer_bytes=5306864, pfc_alpha=128.0,"
        " ecn=EcnSetting(100000, 400000, 10.0), dcqcn=DcqcnParams()).key())")


def _key_in(tree: Path) -> str:
    r = subprocess.run([sys.executable, "-c", _KEY], cwd=tree, env={"PYTHONPATH": str(tree), "PATH": ""},
                       capture_output=True, text=True, check=True)
    return r.stdout.strip()


def test_cache_key_changes_with_the_simulator_code(tmp_path: Path) -> None:
    # the same class, an engine with one changed line: a cached result of the old engine must not be used
    copy = tmp_path / "tree"
    shutil.copytree(ROOT / "roce_tune", copy / "roce_tune", ignore=shutil.ignore_patterns("__pycache__"))
    assert _key_in(copy) == _key_in(ROOT)
    engine = copy / "roce_tune" / "simulate" / "engine.py"
    engine.write_text(engine.read_text(encoding="utf-8").replace("def simulate(", "def simulate(  ", 1),
                      encoding="utf-8")
    assert _key_in(copy) != _key_in(ROOT)


def test_cache_key_without_simulator_sources(tmp_path: Path) -> None:
    # an install that ships only bytecode (sources stripped): plan must still key its scorecards, not crash
    import compileall

    copy = tmp_path / "tree"
    shutil.copytree(ROOT / "roce_tune", copy / "roce_tune", ignore=shutil.ignore_patterns("__pycache__"))
    sim = copy / "roce_tune" / "simulate"
    assert compileall.compile_dir(str(sim), legacy=True, quiet=1)
    (sim / "engine.py").unlink()
    assert len(_key_in(copy)) == 24


def _assert_key_changed_then_restored(before: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """With ``monkeypatch`` already applied, :data:`PC`'s key differs from ``before``; undone, it is back."""
    simulator_digest.cache_clear()
    try:
        assert PC.key() != before
    finally:
        monkeypatch.undo()
        simulator_digest.cache_clear()
    assert PC.key() == before


def test_cache_key_changes_with_the_default_thresholds(monkeypatch: pytest.MonkeyPatch) -> None:
    from roce_tune.tuner import ecn

    before = PC.key()
    monkeypatch.setitem(ecn.NAMED_PROFILES, "sonic-default", (2_000_000, 3_000_000, 5.0, "x"))
    _assert_key_changed_then_restored(before, monkeypatch)


@pytest.fixture(scope="module")
def cached(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, tuple[ScoreRow, ...]]:
    """A real cache entry of :data:`PC` (simulated once for the module) and its rows."""
    cache = tmp_path_factory.mktemp("cache")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("ROCE_TUNE_CACHE", str(cache))
        first = scorecard(PC)
    (path,) = (cache / "scorecards").glob("*.json")
    return path, first.rows


def _damage(text: str, damage: str) -> str:
    data = json.loads(text)
    rows = data["rows"]
    if damage == "truncated":
        return text[: len(text) // 2]
    if damage == "no rows":
        rows.clear()
    elif damage == "row missing":
        rows.pop()
    elif damage == "setting missing":
        del rows[0]["results"]["sonic-default"]
    elif damage == "text cell":
        rows[1]["results"]["derived"] = ["fast", 0, 0]
    elif damage == "nan cell":
        rows[1]["results"]["derived"] = [float("nan"), 0, 0]
    elif damage == "other class":
        for r in rows:
            r["scenario"] = r["scenario"].replace("x 2", "x 32")
    elif damage == "not an object":
        data = [1, 2, 3]
    return json.dumps(data)


@pytest.mark.parametrize("damage", ["truncated", "no rows", "row missing", "setting missing", "text cell",
                                    "nan cell", "other class", "not an object"])
def test_damaged_cache_entry_is_not_trusted(tmp_path: Path, cached: tuple[Path, tuple[ScoreRow, ...]],
                                            damage: str) -> None:
    path = tmp_path / cached[0].name
    path.write_text(_damage(cached[0].read_text(encoding="utf-8"), damage), encoding="utf-8")
    assert _read_cache(path, PC) is None
    path.write_bytes(b"\xff\xfe\x00garbage")
    assert _read_cache(path, PC) is None
    assert _read_cache(cached[0], PC) == cached[1]


def test_damaged_cache_entry_is_recomputed_and_rewritten(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                         cached: tuple[Path, tuple[ScoreRow, ...]]) -> None:
    monkeypatch.setenv("ROCE_TUNE_CACHE", str(tmp_path))
    path = tmp_path / "scorecards" / cached[0].name
    path.parent.mkdir()
    path.write_text(_damage(cached[0].read_text(encoding="utf-8"), "no rows"), encoding="utf-8")
    again = scorecard(PC)
    assert again.seconds > 0 and again.rows == cached[1]  # simulated again, not trusted
    assert _read_cache(path, PC) == cached[1]  # and the entry rewritten whole


def test_cached_verdict_is_judged_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                        cached: tuple[Path, tuple[ScoreRow, ...]]) -> None:
    # a cache entry saying "met" for a row whose numbers miss (an older judge, or an edited file) must not
    # show as met in plan.md
    monkeypatch.setenv("ROCE_TUNE_CACHE", str(tmp_path))
    assert any(not r.meets for r in cached[1]), "the class must miss somewhere for this test to mean anything"
    path = tmp_path / "scorecards" / cached[0].name
    path.parent.mkdir()
    data = json.loads(cached[0].read_text(encoding="utf-8"))
    for r in data["rows"]:
        r["meets"], r["why"] = True, ""
    path.write_text(json.dumps(data), encoding="utf-8")
    again = scorecard(PC)
    assert again.seconds == 0.0  # the numbers are intact: read from the cache
    assert again.rows == cached[1] and not again.meets


def test_unwritable_cache_directory_still_gives_the_scorecard(tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("x", encoding="utf-8")  # the cache "directory" is a file: nothing can be written
    monkeypatch.setenv("ROCE_TUNE_CACHE", str(blocker))
    card = scorecard(PC)
    assert len(card.rows) == 6 and card.seconds > 0
    assert blocker.read_text(encoding="utf-8") == "x"


def test_cache_key_changes_with_numpy(monkeypatch: pytest.MonkeyPatch) -> None:
    # the engine draws start jitter and ECN marks from numpy's Generator, whose stream numpy promises only
    # on the same build (numpy.org/doc/stable/reference/random/compatibility.html)
    from importlib import metadata

    before = PC.key()
    real = metadata.version
    monkeypatch.setattr(metadata, "version", lambda name: "0.0-other" if name == "numpy" else real(name))
    _assert_key_changed_then_restored(before, monkeypatch)
