"""Compact fabric intent: it expands into exactly what hand-written inventories hold, errors point at
the intent line that caused them, and any host count works."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from roce_tune.findings import RoceTuneError
from roce_tune.inventory.intent import Template, full_form_yaml
from roce_tune.inventory.loader import LoadedInventory, full_form_data, load_inventory, load_inventory_text
from roce_tune.inventory.models import Inventory
from roce_tune.inventory.synthetic import rail_optimised_fabric, rail_optimised_intent
from roce_tune.pipeline import derive_plan
from roce_tune.plan import plan_to_json
from roce_tune.render.outputs import render_outputs
from roce_tune.render.values import plan_values

REPO = Path(__file__).resolve().parents[2]
INTENT = REPO / "inventories" / "intent"
SHIPPED = ["lab-2node", "site", "spectrum-x-su", "mixed-vendor"]


def _identity_free(plan_text: str) -> dict:  # type: ignore[type-arg]
    doc = json.loads(plan_text)
    doc.pop("inventory_file"), doc.pop("inventory_sha256")

    def drop(obj: object) -> object:  # where a finding points differs by construction (other file, lines)
        if isinstance(obj, dict):
            return {k: drop(v) for k, v in obj.items() if k != "location"}
        return [drop(v) for v in obj] if isinstance(obj, list) else obj

    out = drop(doc)
    out["findings"] = sorted(out["findings"],  # type: ignore[index]
                             key=lambda f: json.dumps(f, sort_keys=True))
    return out  # type: ignore[return-value]


def _normalised(files: dict[str, str], inventory: str, sha: str) -> dict[str, str]:
    return {name: text.replace(inventory, "<inventory>").replace(sha, "<sha>").replace(sha[:16], "<sha>")
            for name, text in files.items()}


@pytest.mark.parametrize("design", SHIPPED)
def test_intent_plans_exactly_like_the_full_form(design: str) -> None:
    """Every shipped design has an intent-form twin that derives the same plan and renders the same files
    (apart from the line naming the inventory file and its hash)."""
    intent = derive_plan(load_inventory(INTENT / f"{design}.yaml"))
    full = derive_plan(load_inventory(REPO / "inventories" / f"{design}.yaml"))
    assert plan_values(intent) == plan_values(full)
    assert _identity_free(plan_to_json(intent)) == _identity_free(plan_to_json(full))
    a = _normalised(render_outputs(intent), intent.inventory_file, intent.inventory_sha256)
    b = _normalised(render_outputs(full), full.inventory_file, full.inventory_sha256)
    assert sorted(a) == sorted(b) and len(a) > 2
    for name in set(a) - {"plan.json"}:  # plan.json: compared above without finding positions
        pos = re.compile(r"<inventory>:\d+(:\d+)?|\bline \d+")
        x, y = pos.sub("<pos>", a[name]), pos.sub("<pos>", b[name])
        if name == "plan.md":  # findings are listed in file order, which differs between the two files
            x, y = "\n".join(sorted(x.splitlines())), "\n".join(sorted(y.splitlines()))
        assert x == y, name


@pytest.mark.parametrize("design", SHIPPED + ["rail-500"])
def test_expand_output_plans_identically(design: str, tmp_path: Path) -> None:
    """``roce-tune expand`` prints a full-form file that loads and plans to the same values."""
    out = subprocess.run([sys.executable, "-m", "roce_tune.cli", "expand", str(INTENT / f"{design}.yaml")],
                         capture_output=True, text=True, check=True, cwd=REPO)
    assert "fabric:" not in out.stdout
    full = tmp_path / "full.yaml"
    full.write_text(out.stdout)
    expected = plan_values(derive_plan(load_inventory(INTENT / f"{design}.yaml")))
    assert plan_values(derive_plan(load_inventory(full))) == expected


@pytest.mark.slow
def test_500_host_intent_is_short_and_plans(tmp_path: Path) -> None:
    path = INTENT / "rail-500.yaml"
    assert len(path.read_text().splitlines()) <= 60
    inv = load_inventory(path).inventory
    assert len(inv.hosts) == 500 and all(len(h.nics) == 8 for h in inv.hosts)
    assert len([s for s in inv.switches if s.role.value == "leaf"]) == 16 * 8
    assert len(inv.links) == 128 * 32
    res = subprocess.run([sys.executable, "-m", "roce_tune.cli", "lint", str(path)], capture_output=True,
                         text=True,
                         cwd=REPO)
    assert res.returncode == 0, res.stdout + res.stderr
    res = subprocess.run([sys.executable, "-m", "roce_tune.cli", "plan", str(path), "--out",
                          str(tmp_path / "out")],
                         capture_output=True, text=True, cwd=REPO)
    assert res.returncode == 0, res.stdout + res.stderr
    from roce_tune.platforms import HOST_PLATFORM, get_platform

    scripts = {p.name for p in (tmp_path / "out" / "hosts").glob("*.sh")}
    shared = get_platform(HOST_PLATFORM).SHARED_SCRIPT  # the logic every host's data file sources
    assert shared in scripts and len(scripts - {shared}) == 500


_BASE = (INTENT / "site.yaml").read_text()


def _errors(text: str) -> list:  # type: ignore[type-arg]
    with pytest.raises(RoceTuneError) as exc:
        load_inventory_text(text, "intent.yaml")
    return exc.value.findings


def _line_of(text: str, needle: str) -> int:
    return next(i for i, line in enumerate(text.splitlines(), 1) if needle in line)


@pytest.mark.parametrize(("old", "new", "rule", "needle", "words"), [
    ('name: "leaf{l+1}"', 'name: "leaf{k+1}"', "RT007", 'name: "leaf{k+1}"', "unknown variable 'k'"),
    ('host_ports: {name: "Ethernet{4*p}", speed: 100G}',
     'host_ports: {count: 12, name: "Ethernet{4*p}", speed: 100G}',
     "RT007", "count: 12", "need 16"),
    ('ports: {name: "Ethernet{4*q}", speed: 100G}', 'ports: {count: 20, name: "Ethernet{4*q}", speed: 100G}',
     "RT007", "count: 20", "need 32"),
    ("  count: 2\n", "  count: 3\n", "RT007", "count: 3", "do not divide over 3 spines"),
    ('netdev: "ens{r+1}f0np0"', 'netdev: "ens{r+1}f0np0-too-long-name"', "RT003", "too-long-name", "netdev"),
    ("  hosts_per_group: 8\n", "  hosts_per_gruop: 8\n", "RT003", "hosts_per_gruop", "hosts_per_group"),
    ('name: "gpu{n:02d}"', 'name: "gpu01"', "RT007", 'name: "gpu01"', "two hosts the name 'gpu01'"),
])
def test_intent_errors_point_at_the_intent_line(old: str, new: str, rule: str, needle: str,
                                                words: str) -> None:
    assert old in _BASE
    text = _BASE.replace(old, new, 1)
    findings = _errors(text)
    hit = [f for f in findings if f.rule == rule]
    assert hit, findings
    f = hit[0]
    assert f.location.line == _line_of(text, needle), (f, _line_of(text, needle))
    assert f.location.col and f.location.col >= 1
    assert words in f.message + " " + f.fix, f


def test_cli_error_exits_1_and_writes_nothing(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text(_BASE.replace('host_ports: {name: "Ethernet{4*p}", speed: 100G}',
                                'host_ports: {count: 12, name: "Ethernet{4*p}", speed: 100G}'))
    out = tmp_path / "out"
    res = subprocess.run([sys.executable, "-m", "roce_tune.cli", "plan", str(bad), "--out", str(out)],
                         capture_output=True, text=True, cwd=REPO)
    assert res.returncode == 1
    assert re.search(rf"{re.escape(str(bad))}:\d+:\d+", res.stderr), res.stderr
    assert "RT007" in res.stderr and not out.exists()


def test_explicit_entries_override_and_add() -> None:
    text = _BASE + """
switches:
  - name: spine2
    platform: sonic
    model: SN2700
    role: spine
    os_version: "202311"
    ports:
      - {name: "Ethernet[0-124/4]", speed: 100G}
links:
  - {a: "leaf1:Ethernet64", b: "spine1:Ethernet0", cable_length: 40m, media: optic}
hosts:
  - name: login1
    nics: []
"""
    inv = load_inventory_text(text, "x.yaml").inventory
    spine2 = next(s for s in inv.switches if s.name == "spine2")
    assert spine2.os_version == "202311" and spine2.mgmt is not None and spine2.mgmt.host == "10.10.0.22"
    leaf1_up = [lk for lk in inv.links if lk.a == "leaf1:Ethernet64"]
    assert len(leaf1_up) == 1 and leaf1_up[0].cable_length == 40.0
    assert len(inv.links) == 64 and [h.name for h in inv.hosts][-1] == "login1"


def test_a_field_of_an_explicit_one_line_entry_points_at_that_entry() -> None:
    """An explicit ``- {name: ..., mtu: ...}`` (its positions worked out on demand) that overrides an
    expanded host: a bad value it sets is reported at its own line and column, not the intent's."""
    text = _BASE + "hosts:\n  - {name: gpu01, mtu: 1400}\n"
    mtu = [f for f in _errors(text) if f.rule == "RT003" and (f.location.path or "").endswith(".mtu")]
    line = _line_of(text, "{name: gpu01, mtu: 1400}")
    assert len(mtu) == 1
    col = text.splitlines()[line - 1].index("1400") + 1
    assert (mtu[0].location.line, mtu[0].location.col) == (line, col)


@pytest.mark.parametrize("n_hosts", [1, 33, 500, 1000])
def test_any_host_count(n_hosts: int) -> None:
    data = rail_optimised_fabric(n_hosts)
    inv = Inventory.model_validate(data)
    assert len(inv.hosts) == n_hosts
    used = {n.switch_port for h in inv.hosts for n in h.nics}
    assert len(used) == n_hosts * 8  # every NIC on its own leaf port
    leaves = {s.name for s in inv.switches if s.role.value == "leaf"}
    assert len(leaves) == -(-n_hosts // 32) * 8


def test_template_arithmetic_and_format() -> None:
    t = Template.compile("su{g+1}-leaf{l+1:02d}", "fabric.leaf.name")
    assert t.render({"g": 0, "l": 7, "L": 7, "pod": 0, "rail": 7}) == "su1-leaf08"
    assert Template.compile("Ethernet{128+8*u}", "fabric.leaf.uplinks.name").render({"u": 3}) == "Ethernet152"
    assert Template.compile("et-0/0/{(p // 4) % 2}",
                            "fabric.leaf.host_ports.name").render({"p": 5}) == "et-0/0/1"


def test_full_form_yaml_round_trips(tmp_path: Path) -> None:
    data = full_form_data(INTENT / "lab-2node.yaml")
    text = full_form_yaml(data)
    p = tmp_path / "lab.yaml"
    p.write_text(text)
    assert load_inventory(p).inventory.model_dump(exclude={"fabric"}) == load_inventory(
        INTENT / "lab-2node.yaml").inventory.model_dump(exclude={"fabric"})


def test_expand_out_writes_the_full_form_atomically(tmp_path: Path) -> None:
    """`expand --out FILE` writes what `expand` prints; on an intent error it exits 1 and leaves
    FILE alone."""
    src = INTENT / "lab-2node.yaml"
    printed = subprocess.run([sys.executable, "-m", "roce_tune.cli", "expand", str(src)],
                             capture_output=True, text=True, check=True, cwd=REPO).stdout
    out = tmp_path / "full.yaml"
    res = subprocess.run([sys.executable, "-m", "roce_tune.cli", "expand", str(src), "--out", str(out)],
                         capture_output=True, text=True, cwd=REPO)
    assert res.returncode == 0 and f"wrote {out}" in res.stderr and out.read_text() == printed
    bad = tmp_path / "bad.yaml"
    bad.write_text(_BASE.replace('name: "leaf{l+1}"', 'name: "leaf{k+1}"', 1))
    res = subprocess.run([sys.executable, "-m", "roce_tune.cli", "expand", str(bad), "--out", str(out)],
                         capture_output=True, text=True, cwd=REPO)
    assert res.returncode == 1 and "RT007" in res.stderr and out.read_text() == printed
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []  # no temporary left behind


def _port_entry_line(loaded: LoadedInventory, switch: str, port: str) -> int:
    """Line the position index gives the ``ports:`` entry of ``switch`` that declares ``port``."""
    si = next(i for i, s in enumerate(loaded.inventory.switches) if s.name == switch)
    pi = next(i for i, p in enumerate(loaded.inventory.switches[si].ports) if port in p.names())
    return loaded.locate(f"switches[{si}].ports[{pi}].speed").line or 0


@pytest.mark.parametrize(("design", "switch", "port", "needle"), [
    ("site.yaml", "leaf1", "Ethernet64", 'uplinks: {count: 16, name: "Ethernet{64+4*u}"'),
    ("site.yaml", "leaf1", "Ethernet0", 'host_ports: {name: "Ethernet{4*p}"'),
    ("mixed-vendor.yaml", "leaf1", "Ethernet5/1", 'uplinks: {count: 4, name: "Ethernet{5+u}/1"'),
    ("mixed-vendor.yaml", "leaf3", "et-0/0/4", 'uplinks: {name: "et-0/0/{4+u}"'),
    ("mixed-vendor.yaml", "leaf5", "Ethernet32", 'uplinks: {name: "Ethernet{32+8*u}"'),
])
def test_expanded_uplink_ports_point_at_the_uplinks_line(design: str, switch: str, port: str,
                                                         needle: str) -> None:
    """An expanded leaf's uplink port entry (and its speed, which lint rules point at) is positioned at the
    intent's ``uplinks:`` line (the group's own where a group overrides it), not at ``host_ports:``."""
    loaded = load_inventory(INTENT / design)
    assert _port_entry_line(loaded, switch, port) == _line_of((INTENT / design).read_text(), needle)


def test_expanded_spine_uplinks_point_at_the_spine_uplinks_line() -> None:
    """Multi-pod intent: a spine's uplink (to a superspine) is at ``spine.uplinks``, its down ports at
    ``spine.ports``."""
    import yaml

    text = yaml.safe_dump(rail_optimised_intent(1024), sort_keys=False, default_flow_style=None, width=200)
    loaded = load_inventory_text(text, "synthetic.yaml")
    fabric = loaded.inventory  # spine p0-spine0: first the down ports, then the uplinks
    spine = next(s for s in fabric.switches if s.name == "p0-spine0")
    assert len(spine.ports) >= 2
    down, up = spine.ports[0].names()[0], spine.ports[-1].names()[0]
    lines = text.splitlines()
    spine_at = next(i for i, x in enumerate(lines, 1) if x.strip() == "spine:")
    up_at = next(i for i, x in enumerate(lines, 1) if i > spine_at and x.strip().startswith("uplinks:"))
    ports_at = next(i for i, x in enumerate(lines, 1) if i > spine_at and x.strip().startswith("ports:"))
    assert _port_entry_line(loaded, "p0-spine0", up) == up_at
    assert _port_entry_line(loaded, "p0-spine0", down) == ports_at
