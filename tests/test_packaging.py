"""Packaging: a wheel built from the repo, installed into a fresh venv outside the checkout, carries
its templates and catalogs and runs ``roce-tune plan`` on a shipped inventory; ``--version``, the
console script and typer's shell completion work.

The venv uses ``--system-site-packages`` so the dependencies come from the current environment (no
network) and the wheel is installed with ``--no-deps``; the test proves the wheel's own
``roce_tune`` (inside the venv) is the one that ran, not the checkout. When the tests themselves run in a
virtual environment (as README recommends), ``--system-site-packages`` reaches only the *base*
interpreter's site-packages, not this venv's where the dependencies are; a ``.pth`` file then appends
this venv's site-packages after the new venv's own.
"""

from __future__ import annotations

import importlib.util
import os
import shlex
import site
import subprocess
import sys
from pathlib import Path

import pytest

import roce_tune

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def venv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("wheel")
    # offline when hatchling is already installed; otherwise pip fetches it into an isolated build env
    isolation = ["--no-build-isolation"] if importlib.util.find_spec("hatchling") else []
    subprocess.run([sys.executable, "-m", "pip", "wheel", str(REPO), "--no-deps", *isolation, "-q",
                    "-w", str(tmp / "dist")], check=True, capture_output=True, cwd=tmp)
    wheels = list((tmp / "dist").glob("roce_tune-*.whl"))
    assert len(wheels) == 1
    env_dir = tmp / "venv"
    # no pip inside the new venv (ensurepip is most of a venv's cost): this pip installs into it with
    # --python (pip >= 22.3); an older pip gets the venv its own pip as before
    pip_python = _pip_version() >= (22, 3)
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages",
                    *(["--without-pip"] if pip_python else []), str(env_dir)], check=True)
    if sys.prefix != sys.base_prefix:  # running in a venv: its packages are not the base's "system" ones
        purelib = subprocess.run([str(env_dir / "bin" / "python"), "-c",
                                  "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                                 check=True, capture_output=True, text=True).stdout.strip()
        Path(purelib, "_outer_venv.pth").write_text("".join(f"{p}\n" for p in site.getsitepackages()))
    # --ignore-installed: a roce_tune the outer venv holds (seen through the .pth) must not stop the install
    pip = ([sys.executable, "-m", "pip", "--python", str(env_dir / "bin" / "python")] if pip_python
           else [str(env_dir / "bin" / "python"), "-m", "pip"])
    subprocess.run([*pip, "install", "-q", "--no-deps", "--no-index", "--ignore-installed", str(wheels[0])],
                   check=True, capture_output=True, cwd=tmp)
    return env_dir


def _pip_version() -> tuple[int, ...]:
    from importlib.metadata import version

    return tuple(int(part) for part in version("pip").split(".")[:2] if part.isdigit())


def _clean_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env["PYTHONSAFEPATH"] = "1"  # the cwd is never on sys.path
    return env


@pytest.mark.slow
def test_wheel_plans_outside_the_checkout(venv: Path, tmp_path: Path) -> None:
    work = tmp_path / "elsewhere"
    work.mkdir()
    (work / "site.yaml").write_text((REPO / "inventories" / "lab-2node.yaml").read_text())
    py = str(venv / "bin" / "python")
    probe = ("import roce_tune, roce_tune.render.engine as e, roce_tune.catalog as c;"
             "print(roce_tune.__file__); print(e.templates_dir()); print(len(c.load_catalog().asics))")
    where = subprocess.run([py, "-c", probe],
                           cwd=work, env=_clean_env(), capture_output=True, text=True,
                           check=True).stdout.split("\n")
    assert where[0].startswith(str(venv)), where        # the wheel's package, not the checkout
    assert where[1].startswith(str(venv)), where        # templates found inside the installed package
    assert int(where[2]) > 0                            # catalogs shipped as package data
    res = subprocess.run([str(venv / "bin" / "roce-tune"), "plan", "site.yaml"], cwd=work, env=_clean_env(),
                         capture_output=True, text=True, check=False, timeout=120)
    assert res.returncode == 0, res.stdout + res.stderr
    out = work / "out" / "site"
    assert (out / "plan.json").is_file() and (out / "switches" / "lab-leaf1.json").is_file()
    assert (out / "hosts" / "node1.sh").read_text().startswith("#!/usr/bin/env bash")


@pytest.mark.slow  # the wheel build and venv (module fixture) are ~20 s of CPU: CI runs it in the slow step
def test_version_and_completion(venv: Path) -> None:
    exe = str(venv / "bin" / "roce-tune")
    res = subprocess.run([exe, "--version"], capture_output=True, text=True, check=True, env=_clean_env())
    assert res.stdout.strip() == f"roce-tune {roce_tune.__version__}"
    help_text = subprocess.run([exe, "--help"], capture_output=True, text=True, check=True, env=_clean_env(),
                               ).stdout
    assert "--install-completion" in help_text and "--show-completion" in help_text
    # typer finds the shell from the process tree (shellingham), as when a user types it in bash: run it from
    # a bash that stays its parent (a pytest orphaned from its shell would otherwise have no shell ancestor)
    comp = subprocess.run(["bash", "-c", f"{shlex.quote(exe)} --show-completion; exit $?"],
                          capture_output=True,
                          text=True, check=True, env=dict(_clean_env(), SHELL="/bin/bash")).stdout
    assert "_ROCE_TUNE_COMPLETE" in comp and "complete" in comp
    # the completion protocol itself: bash asks for the words after "roce-tune pl"
    words = subprocess.run([exe], capture_output=True, text=True, check=False,
                           env=dict(_clean_env(), _ROCE_TUNE_COMPLETE="complete_bash",
                                    COMP_WORDS="roce-tune pl",
                                    COMP_CWORD="1")).stdout.split()
    assert "plan" in words


def test_pyproject_declares_what_the_issue_needs() -> None:
    tomllib = pytest.importorskip("tomllib", reason="tomllib is Python 3.11+ (README: Python >= 3.10)")
    meta = tomllib.loads((REPO / "pyproject.toml").read_text())
    project = meta["project"]
    assert project["scripts"]["roce-tune"] == "roce_tune.cli:main"
    assert all(">=" in d or "==" in d for d in project["dependencies"]), "every dependency has a lower bound"
    extras = project["optional-dependencies"]
    assert {"test", "ansible"} <= set(extras)
    assert any(d.startswith("ansible>=") for d in extras["ansible"])  # the package with the collections
    wheel = meta["tool"]["hatch"]["build"]["targets"]["wheel"]
    assert wheel["force-include"]["templates"] == "roce_tune/templates"
