"""The references folder: one place for third-party reference data, chosen by --references, then
ROCE_TUNE_REFERENCES, then <repo>/../shared; when it is missing, the terminal summary says so once,
naming what is missing and how to get it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests import references

REPO = Path(__file__).resolve().parents[1]
NCCL_CASES = "tests/verify/test_nccl_field_cases.py"


def _pytest(*args: str, env_root: Path | None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != references.ENV_VAR}
    if env_root is not None:
        env[references.ENV_VAR] = str(env_root)
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *args], cwd=REPO,
                          env=env, capture_output=True, text=True, timeout=300, check=False)


def test_missing_folder_is_said_once_with_what_and_how(tmp_path: Path) -> None:
    # the field cases and test_sonic.py's YANG tests (every test there that needs reference data, and one
    # that does not): test_sonic.py's other tests need no reference data and only add run time
    res = _pytest(NCCL_CASES, "tests/render/test_sonic.py", "-k", "yang or field_cases",
                  env_root=tmp_path / "none")
    assert res.returncode == 0, res.stdout[-3000:]
    out = res.stdout
    assert out.count("reference data not found") == 1, out[-3000:]
    line = next(ln for ln in out.splitlines() if "reference data not found" in ln)
    assert str(tmp_path / "none") in line and "field-cases (" in line and "sonic-yang (" in line
    assert "scripts/fetch-references" in out and references.ENV_VAR in out
    skipped = int(out.rsplit(" skipped", 1)[0].rsplit(" ", 1)[-1])
    assert line.startswith(f"{skipped} test(s) skipped")  # every skip of these files is for reference data


def test_option_wins_over_environment_and_nothing_skips_when_present(tmp_path: Path) -> None:
    root = references.reference("field-cases").parent  # this session's folder (skips when absent)
    res = _pytest(NCCL_CASES, "--references", str(root), env_root=tmp_path / "none")
    assert res.returncode == 0, res.stdout[-3000:]
    assert "skipped" not in res.stdout and "reference data" not in res.stdout, res.stdout[-3000:]


def test_reference_names_the_set_and_rejects_unknown_sets(monkeypatch: pytest.MonkeyPatch,
                                                          tmp_path: Path) -> None:
    monkeypatch.setattr(references, "_root_override", None)
    monkeypatch.setenv(references.ENV_VAR, str(tmp_path))
    assert references.references_root() == tmp_path
    assert references.reference_path("sonic-sku", "x.ini") == tmp_path / "sonic-sku" / "x.ini"
    assert set(references.missing_sets()) == set(references.SETS)
    with pytest.raises(pytest.skip.Exception, match=r"^reference data missing: junos-yang \("):
        references.reference("junos-yang", "24.4R1-EVO")
    with pytest.raises(KeyError, match="unknown reference set 'yang'"):
        references.reference_path("yang")
    monkeypatch.delenv(references.ENV_VAR)
    assert references.references_root() == REPO.parent / "shared"
    assert references.summary_lines({}) == []


SIM_TESTS = ("tests/simulate/test_calibration.py::test_reference_file_parsed",
             "tests/simulate/test_tuning_target.py::test_known_misses_name_real_cases")


def test_simulation_reference_comes_from_the_references_folder(tmp_path: Path) -> None:
    # the simulator's calibration and tuning-target tests read SIMULATION-REFERENCE.md from the same
    # folder as every other reference test (they once took $ROCE_TUNE_REFERENCES as the file itself and
    # skipped, unannounced, when it named the folder, as README and .ci/run set it)
    src = references.references_root() / "SIMULATION-REFERENCE.md"
    if not src.is_file():
        pytest.skip(f"{references.SKIP_PREFIX}: SIMULATION-REFERENCE.md ({src} not found)")
    folder = tmp_path / "refs"
    folder.mkdir()
    (folder / "SIMULATION-REFERENCE.md").write_text(src.read_text(encoding="utf-8"), encoding="utf-8")
    res = _pytest(*SIM_TESTS, "-m", "slow", env_root=folder)
    out = res.stdout
    assert res.returncode == 0 and "2 passed" in out and "skipped" not in out, out[-3000:]
    missing = _pytest(*SIM_TESTS, "-m", "slow", env_root=tmp_path / "none")
    assert missing.returncode == 0, missing.stdout[-3000:]
    line = next(ln for ln in missing.stdout.splitlines() if "reference data not found" in ln)
    assert line.startswith("2 test(s) skipped") and "SIMULATION-REFERENCE.md (2)" in line, line
