"""Suite-wide options and reports.

Running the suite
    README's command, ``python3 -m pytest -q -n auto --dist loadgroup``, spreads tests over one
    pytest-xdist worker per CPU; ``.ci/run`` runs exactly that, so every test below runs in CI. Tests
    must therefore be parallel-safe: ports from the OS (``EmulatorSpec`` port 0, the default), files
    under ``tmp_path``, environment changes through ``monkeypatch``, no fixed names in the machine's
    ``/tmp`` (add a random suffix), no state left in module globals between tests.

Markers (registered in pyproject.toml; ``--strict-markers`` rejects a misspelt one)
    ``emulator``: the test talks SSH to the loopback emulators (``tests/emulators``). Put
    ``pytestmark = pytest.mark.emulator`` at the top of such a module, and give roce-tune's own sessions
    the emulators' pacing: ``ApplyOptions(timing=tests.emulators.LOOPBACK_TIMING)``.
    ``slow``: one end-to-end test that takes more than ~10 s on 2 cores; decorate it ``@pytest.mark.slow``
    (or ``pytestmark`` for a whole module). pyproject's addopts leave slow (and netbox) tests out of
    README's command; ``.ci/run`` runs them as their own step (``-m slow``), so nothing is skipped in CI.
    ``-m "not emulator and not slow and not netbox"`` leaves out every test that talks to the emulators (a
    command-line ``-m`` replaces the one in ``addopts``). Tests that must share one
    xdist worker (e.g. an expensive module-scoped fixture) take ``@pytest.mark.xdist_group("name")``.

Reference data
    Third-party reference data comes from one folder outside the repository (``tests/references.py``:
    ``--references DIR``, ``ROCE_TUNE_REFERENCES``, default ``<repo>/../shared``). Tests skipped for
    want of it are counted once in the terminal summary, with what is missing and how to get it.
"""

from __future__ import annotations

import functools
from pathlib import Path

import pytest
import typer.main
import typer.testing

from tests import references

# typer's CliRunner.invoke rebuilds the click command of the app on every call (typing.get_type_hints of each
# command's parameters: ~17 ms for roce-tune's app, ~500 invokes in the suite, most in the CLI fuzz tests).
# A click command is reusable (every invoke makes its own Context), so build it once per app.
typer.testing._get_command = functools.cache(typer.main.get_command)


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--references", metavar="DIR", default=None,
                     help=f"folder with third-party reference data (default: ${references.ENV_VAR} or "
                          "<repo>/../shared); scripts/fetch-references fills one")


def pytest_configure(config: pytest.Config) -> None:
    option = config.getoption("--references")
    references.set_root(Path(option).expanduser().resolve() if option else None)


def _reference_set(report: pytest.TestReport) -> str | None:
    """The reference set a skipped test lacked, from its skip reason (``SKIP_PREFIX: <set> (...)``)."""
    longrepr = report.longrepr
    reason = str(longrepr[2]) if isinstance(longrepr, (tuple, list)) and len(longrepr) == 3 else str(longrepr)
    marker = f"{references.SKIP_PREFIX}: "
    if marker not in reason:
        return None
    return reason.split(marker, 1)[1].split(" ", 1)[0]


def pytest_terminal_summary(terminalreporter, exitstatus: int, config: pytest.Config) -> None:  # type: ignore[no-untyped-def]
    """One section, once, naming the reference sets whose absence skipped tests and how to get them."""
    counts: dict[str, int] = {}
    for report in terminalreporter.stats.get("skipped", []):
        name = _reference_set(report)
        if name is not None:
            counts[name] = counts.get(name, 0) + 1
    lines = references.summary_lines(counts)
    if lines:
        terminalreporter.write_sep("=", "reference data", yellow=True)
        for line in lines:
            terminalreporter.write_line(line)
