"""What each command imports (issue 16): every run of ``roce-tune`` pays for the modules it loads, so a
command loads only what it uses. hier_config (diff), jinja2 (render), numpy (simulator), the platforms'
read-back code with :mod:`roce_tune.qos` (audit, verify) and the plan-directory code (plan, apply) are
imported where they are used. Each test runs the real command in a fresh interpreter and reads its
``sys.modules`` at exit.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]

#: runs ``roce_tune.cli`` with argv[2:] and writes the names in sys.modules to argv[1] at exit
_PROBE = """\
import atexit, runpy, sys
out = sys.argv[1]
def dump():
    with open(out, "w", encoding="utf-8") as fh:
        fh.write("\\n".join(sorted(sys.modules)))
atexit.register(dump)
sys.argv = ["roce-tune", *sys.argv[2:]]
runpy.run_module("roce_tune.cli", run_name="__main__")
"""

#: what no command that neither renders, diffs, reads back, simulates nor writes a plan directory needs
NOT_FOR_LINT_OR_EXPLAIN = ("jinja2", "hier_config", "numpy", "roce_tune.qos", "roce_tune.plandir",
                           "rich.table")


def _run(tmp_path: Path, *args: str) -> tuple[set[str], subprocess.CompletedProcess[str]]:
    out = tmp_path / "modules.txt"
    proc = subprocess.run([sys.executable, "-c", _PROBE, str(out), *args], capture_output=True, text=True,
                          cwd=REPO, timeout=300)
    return set(out.read_text(encoding="utf-8").split("\n")), proc


def _loaded(modules: set[str], names: tuple[str, ...]) -> list[str]:
    return [n for n in names if n in modules]


def test_explain_loads_no_renderer_diff_readback_or_simulator(tmp_path: Path) -> None:
    modules, proc = _run(tmp_path, "explain", "inventories/site.yaml", "leaf1:Ethernet0", "xoff_bytes",
                         "--no-scorecard")
    assert proc.returncode == 0, proc.stderr
    assert "leaf1:Ethernet0 xoff_bytes = " in proc.stdout
    assert _loaded(modules, NOT_FOR_LINT_OR_EXPLAIN) == []
    assert "roce_tune.platforms.sonic" in modules  # the probe sees what the command did load


def test_full_form_explain_imports_neither_ruamel_nor_intent(tmp_path: Path) -> None:
    """A full-form inventory the fast reader takes needs neither ruamel.yaml (the reader of the documents
    the fast one declines) nor the intent expander; an intent inventory, or one the fast reader declines,
    still loads them and gives the same answer as before."""
    modules, proc = _run(tmp_path, "explain", "inventories/site.yaml", "leaf1:Ethernet0", "xoff_bytes",
                         "--no-scorecard")
    assert proc.returncode == 0, proc.stderr
    assert "leaf1:Ethernet0 xoff_bytes = " in proc.stdout
    assert _loaded(modules, ("ruamel.yaml", "roce_tune.inventory.ruamelpos",
                             "roce_tune.inventory.intent")) == []
    modules, proc = _run(tmp_path, "explain", "inventories/intent/site.yaml", "leaf1:Ethernet0", "xoff_bytes",
                         "--no-scorecard")
    assert proc.returncode == 0, proc.stderr
    assert "leaf1:Ethernet0 xoff_bytes = " in proc.stdout
    assert "roce_tune.inventory.intent" in modules
    anchored = tmp_path / "anchored.yaml"  # an alias: the fast reader declines, ruamel.yaml reads it
    text = (REPO / "inventories" / "site.yaml").read_text(encoding="utf-8")
    anchored.write_text(text + "\nx-anchor: &a 1\nx-alias: *a\n", encoding="utf-8")
    modules, _ = _run(tmp_path, "explain", str(anchored), "leaf1:Ethernet0", "xoff_bytes", "--no-scorecard")
    assert "roce_tune.inventory.ruamelpos" in modules


def test_lint_loads_no_renderer_diff_readback_or_simulator(tmp_path: Path) -> None:
    modules, proc = _run(tmp_path, "lint", "inventories/mixed-vendor.yaml", "--format", "json")
    assert proc.returncode in (0, 1), proc.stderr
    assert isinstance(json.loads(proc.stdout), list)
    assert _loaded(modules, NOT_FOR_LINT_OR_EXPLAIN) == []
    # every switch platform of the inventory was consulted (lint and the plan checks read their data)
    assert {"roce_tune.platforms.eos", "roce_tune.platforms.nxos"} <= modules


def test_plan_loads_jinja2_but_no_diff_readback_or_simulator(tmp_path: Path) -> None:
    modules, proc = _run(tmp_path, "plan", "inventories/mixed-vendor.yaml", "--out", str(tmp_path / "out"),
                         "--no-scorecard")
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "out").is_dir()
    assert "jinja2" in modules  # rendered
    assert _loaded(modules, ("hier_config", "numpy", "roce_tune.qos")) == []


def test_audit_from_captures_loads_no_ssh_client(tmp_path: Path) -> None:
    """``audit --from DIR`` reads files: netmiko and paramiko (~0.2 s, the SSH stack) are for ``--live``."""
    captures = tmp_path / "captures"
    captures.mkdir()
    (captures / "gpu01.txt").write_text(
        "root@gpu01:~# ethtool -S ens1f0np0 | grep prio3\n     rx_prio3_pause: 12\n     tx_prio3_pause: 0\n",
        encoding="utf-8")
    modules, proc = _run(tmp_path, "audit", "--from", str(captures), "--format", "json")
    assert proc.returncode in (0, 1), proc.stderr
    assert isinstance(json.loads(proc.stdout), dict)
    assert _loaded(modules, ("netmiko", "paramiko", "roce_tune.deploy.runner")) == []


@pytest.mark.parametrize("name", ["sonic", "cumulus", "eos", "nxos", "junos"])
def test_read_back_names_resolve_to_the_platforms_read_back_module(name: str) -> None:
    """The read-back names a platform module re-exports (imported on first use) are its read-back
    module's; an unknown name is still an AttributeError."""
    import importlib

    from roce_tune.platforms import get_platform
    from roce_tune.platforms.contract import READBACK_NAMES

    mod = get_platform(name)
    impl = importlib.import_module(f"roce_tune.platforms.{name}_readback")
    for attr in READBACK_NAMES:
        assert getattr(mod, attr) is getattr(impl, attr)
    with pytest.raises(AttributeError, match="no_such_name"):
        mod.no_such_name  # noqa: B018
    assert mod.PLATFORM.read_back is not None


def test_hier_platform_names_are_hier_config_platforms() -> None:
    """Each ``hier`` platform's diff data names a member of hier_config's Platform enum (diffing looks the
    member up by that name)."""
    from hier_config import Platform as HierPlatform

    from roce_tune.deploy.diff import DIFF_RULES

    hier = {name: rules.hier_platform for name, rules in DIFF_RULES.items() if rules.kind == "hier"}
    assert hier == {"eos": "ARISTA_EOS", "nxos": "CISCO_NXOS"}
    assert all(isinstance(HierPlatform[member], HierPlatform) for member in hier.values())


@pytest.mark.parametrize("name", ["asics.yaml", "nics.yaml", "switch_models.yaml"])
def test_catalog_reads_the_same_without_libyaml(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The shipped catalog parses to the same data with libyaml (the fast path) and with ruamel.yaml (the
    fallback when PyYAML or its C parser is missing)."""
    from ruamel.yaml import YAML

    from roce_tune.catalog import _parse

    text = (REPO / "roce_tune" / "catalog" / name).read_text(encoding="utf-8")
    fast = _parse.__wrapped__(text)
    monkeypatch.setitem(sys.modules, "yaml", None)  # import yaml -> ImportError
    fallback = _parse.__wrapped__(text)
    assert fast == fallback == YAML(typ="safe").load(text)
