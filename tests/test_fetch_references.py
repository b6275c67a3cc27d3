"""scripts/fetch-references against a local mirror laid out like raw.githubusercontent.com (no network
here): every pinned file lands where the tests read it, templates are rendered as sonic-yang-models'
setup.py renders them, a failed download names its URL and leaves no half-written file."""

from __future__ import annotations

import importlib.machinery
import importlib.util
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

from tests import references

REPO = Path(__file__).resolve().parents[1]
SCRIPT = REPO / "scripts" / "fetch-references"
TEMPLATE = 'module {{ "t" }} {\n{% if yang_model_type == "cvl" %}\n  cvl-only;\n{% endif %}\n  both;\n}\n'


def _script() -> ModuleType:
    loader = importlib.machinery.SourceFileLoader("fetch_references", str(SCRIPT))
    spec = importlib.util.spec_from_loader("fetch_references", loader)
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


def _mirror(tmp_path: Path, fr: ModuleType) -> Path:
    """Our own stand-in content at every pinned URL path (``<owner>/<repo>/<commit>/<path>``)."""
    mirror = tmp_path / "mirror"
    for entries in fr.FILES.values():
        for source, path, _ in entries:
            dest = Path(fr.url_of(source, path, str(mirror)))
            dest.parent.mkdir(parents=True, exist_ok=True)
            dest.write_text(TEMPLATE if path.endswith(".j2") else f"stand-in for {path}\n")
    return mirror


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True, timeout=120,
                          check=False)


def test_every_pinned_file_lands_where_the_tests_read_it(tmp_path: Path) -> None:
    fr = _script()
    mirror = _mirror(tmp_path, fr)
    out = tmp_path / "refs"
    res = _run(str(out), "--base-url", mirror.as_uri())
    assert res.returncode == 0, res.stderr
    assert set(fr.FILES) | set(fr.NOT_FETCHABLE) == set(references.SETS)
    for name, entries in fr.FILES.items():
        for _, path, rel in entries:
            text = (out / name / rel).read_text()
            # rendered like setup.py: cvl-only parts dropped, block lines trimmed, no trailing newline kept
            assert text == ("module t {\n  both;\n}" if path.endswith(".j2") else f"stand-in for {path}\n")
        assert "github.com/" in (out / name / "SOURCE.txt").read_text()
    assert "field-cases: not fetched, absent" in res.stdout
    assert not list(out.rglob(".*.*"))  # no temporary files left behind


def test_a_failed_download_names_the_url_and_writes_nothing(tmp_path: Path) -> None:
    fr = _script()
    mirror = _mirror(tmp_path, fr)
    source, path, rel = fr.FILES["sonic-sku"][0]
    Path(fr.url_of(source, path, str(mirror))).unlink()
    res = _run(str(tmp_path / "refs"), "--only", "sonic-sku", "--base-url", mirror.as_uri())
    assert res.returncode == 1
    assert path in res.stderr and "sonic-sku: failed" in res.stdout
    assert not (tmp_path / "refs" / "sonic-sku" / rel).exists()
    assert not (tmp_path / "refs" / "sonic-sku" / "SOURCE.txt").exists()


def test_pinned_file_list_matches_the_references_folder() -> None:
    """The pins cover exactly the files of the references folder in use (when it is present)."""
    fr = _script()
    for name, entries in fr.FILES.items():
        folder = references.reference(name)
        present = {p.relative_to(folder).as_posix() for p in folder.rglob("*")
                   if p.is_file() and p.suffix in (".yang", ".ini")}
        assert present == {rel for _, _, rel in entries}, name
    with pytest.raises(SystemExit) as exc:
        fr.main(["--only", "no-such-set"])
    assert exc.value.code == 2
