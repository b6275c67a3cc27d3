"""Helpers shared by the cabling-import and LLDP tests: the real CLI and an inventory's cabling as a set."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from roce_tune.inventory.models import Inventory

REPO = Path(__file__).resolve().parents[2]
SHIPPED = sorted((REPO / "inventories").glob("*.yaml"))


def run(*args: str) -> subprocess.CompletedProcess[str]:
    """``roce-tune ARGS`` as a subprocess from the repository root."""
    return subprocess.run([sys.executable, "-m", "roce_tune.cli", *args], capture_output=True, text=True,
                          cwd=REPO)


def cabling(inv: Inventory) -> set[frozenset[str]]:
    """Every cable of ``inv``: switch links and host NIC -> switch port, each as an unordered pair of ends."""
    out = {frozenset((link.a, link.b)) for link in inv.links}
    out |= {frozenset((f"{h.name}:{n.netdev}", n.switch_port)) for h in inv.hosts for n in h.nics
            if n.switch_port}
    return out
