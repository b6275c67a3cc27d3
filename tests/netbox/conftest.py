"""A real NetBox for the tests in this folder (marker ``netbox``; not in the default run).

The session fixture starts one NetBox with ``netbox_server.sh`` (PostgreSQL + Redis from Debian, NetBox from
PyPI in a Debian 13 chroot) and stops it at the end. To reuse a NetBox already started by hand, set
``ROCE_TUNE_NETBOX_ENV`` to its ``netbox.env`` (``netbox_server.sh start DIR`` writes ``DIR/netbox.env``).
Needs root (debootstrap, chroot, runuser); a missing prerequisite fails the run, it does not skip it.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
STATE_ROOT = Path("/var/tmp/roce-tune-netbox")  # the postgres user must reach it (pytest's tmp is 0700)


@dataclass(frozen=True)
class NetboxServer:
    url: str
    token: str
    start_seconds: float | None


def _read_env(path: Path) -> dict[str, str]:
    return dict(line.split("=", 1) for line in path.read_text().splitlines() if "=" in line)


@pytest.fixture(scope="session")
def netbox() -> Iterator[NetboxServer]:
    given = os.environ.get("ROCE_TUNE_NETBOX_ENV")
    if given:
        env = _read_env(Path(given))
        yield NetboxServer(env["NETBOX_URL"], env["NETBOX_TOKEN"], None)
        return
    STATE_ROOT.mkdir(parents=True, exist_ok=True)
    state = Path(tempfile.mkdtemp(prefix="run-", dir=STATE_ROOT))
    state.chmod(0o755)
    script = HERE / "netbox_server.sh"
    proc = subprocess.run(["bash", str(script), "start", str(state)], capture_output=True, text=True,
                          timeout=1800)
    try:
        if proc.returncode != 0:
            logs = "".join(f"\n--- {p.name}\n{p.read_text(errors='replace')[-3000:]}"
                           for p in sorted(state.glob("*.log")))
            pytest.fail(f"NetBox did not start:\n{proc.stderr[-3000:]}{logs}", pytrace=False)
        env = _read_env(state / "netbox.env")
        server = NetboxServer(env["NETBOX_URL"], env["NETBOX_TOKEN"], float(env["NETBOX_START_SECONDS"]))
        sys.stderr.write(f"\nNetBox {env['NETBOX_VERSION']} started in {server.start_seconds:.0f} s "
                         f"at {server.url}\n")
        yield server
    finally:
        subprocess.run(["bash", str(script), "stop", str(state)], capture_output=True, timeout=120)
        subprocess.run(["rm", "-rf", str(state)], timeout=120)
