"""``roce-tune explain`` derives only what the asked device's values depend on (issue 16 item 5), and every
value and rationale it prints equals the full plan's."""

from __future__ import annotations

from pathlib import Path

import pytest

from roce_tune.explain import explain
from roce_tune.findings import RoceTuneError
from roce_tune.inventory.loader import load_inventory, load_inventory_text
from roce_tune.pipeline import derive_device, derive_plan
from roce_tune.tuner import compose

REPO = Path(__file__).resolve().parents[2]
SHIPPED = [REPO / "inventories" / n for n in ("mixed-vendor.yaml", "site.yaml", "spectrum-x-su.yaml")]


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: p.name)
def test_every_device_explains_as_in_the_full_plan(path: Path) -> None:
    loaded = load_inventory(path)
    full = derive_plan(loaded)
    devices = [s.name for s in full.switches] + [h.name for h in full.hosts[:3]]
    for device in devices:
        part = derive_device(loaded, device)
        assert explain(part, device) == explain(full, device)
        param = explain(full, device)[-1].param
        assert explain(part, device, param) == explain(full, device, param)  # with the site-wide entries
        if device in {s.name for s in full.switches}:
            sw = full.switch(device)
            assert part.switches[-1] == sw
            assert [s.name for s in part.switches] == [s.name for s in full.switches][:len(part.switches)]
            assert not part.hosts
            for p in sw.ports[:4]:
                assert explain(part, f"{device}:{p.name}") == explain(full, f"{device}:{p.name}")
        else:
            assert part.hosts == [full.host(device)] and not part.switches


def test_a_host_derives_no_switch_and_no_deadlock_analysis(monkeypatch: pytest.MonkeyPatch) -> None:
    loaded = load_inventory(REPO / "inventories" / "site.yaml")
    host = loaded.inventory.hosts[0].name

    def refuse(*_a: object, **_k: object) -> None:
        raise AssertionError("derived more than the host needs")

    monkeypatch.setattr(compose, "_derive_switch", refuse)
    monkeypatch.setattr(compose.deadlock, "analyze_fabric", refuse)  # compose's one call into the analysis
    part = derive_device(loaded, host)
    assert [h.name for h in part.hosts] == [host] and "partial plan" in part.notes[0]


def test_lint_errors_still_stop_explain() -> None:
    text = (REPO / "inventories" / "lab-2node.yaml").read_text(encoding="utf-8")
    broken = text.replace('switch_port: "lab-leaf1:Ethernet0"', 'switch_port: "nosuch:Ethernet0"', 1)
    assert broken != text
    bad = load_inventory_text(broken, "bad.yaml")
    with pytest.raises(RoceTuneError):
        derive_device(bad, "lab-leaf1")


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: p.name)
def test_without_preceding_switches_the_device_and_findings_equal_the_full_derivation(path: Path) -> None:
    """``preceding=False`` (explain without a scorecard) builds no port objects for the switches before
    the device, yet its ECN profile names (``…_V2`` depend on those switches), values and findings are the
    same."""
    loaded = load_inventory(path)
    full = derive_plan(loaded)
    for sw in full.switches:
        light = derive_device(loaded, sw.name, preceding=False)
        whole = derive_device(loaded, sw.name)
        assert light.switches == [sw] == whole.switches[-1:]
        assert light.findings == whole.findings
        assert explain(light, sw.name) == explain(full, sw.name)
        for p in sw.ports[:4]:
            assert explain(light, f"{sw.name}:{p.name}") == explain(full, f"{sw.name}:{p.name}")


@pytest.mark.parametrize(("old", "new", "rule"), [
    # another host's NIC cabled to an undeclared port: a lint error (RT101) on a port explain does not read
    ('switch_port: "lab-leaf1:Ethernet8"', 'switch_port: "lab-leaf1:Ethernet99"', "RT101"),
    # another host's cable length unreadable: a schema error (RT003) on a value explain does not read
    ('switch_port: "lab-leaf1:Ethernet8", cable_length: 2m', 'switch_port: "lab-leaf1:Ethernet8", '
     'cable_length: 2furlongs', "RT003"),
], ids=["lint-RT101", "schema-RT003"])
def test_an_error_elsewhere_fails_explain_with_lints_findings(old: str, new: str, rule: str) -> None:
    """explain of lab-leaf1:Ethernet0 reads nothing of node2's NIC (on Ethernet8), yet an error there stops it
    with exactly the error findings ``lint`` reports (issue 16: a lighter load or lint for explain must not
    skip the rest of the inventory)."""
    from roce_tune.inventory.catalog import load_catalog
    from roce_tune.pipeline import StageError, lint_loaded

    text = (REPO / "inventories" / "lab-2node.yaml").read_text(encoding="utf-8")
    broken = text.replace(old, new, 1)
    assert broken != text
    try:
        bad = load_inventory_text(broken, "bad.yaml")
    except RoceTuneError as exc:  # the schema error: load already refuses, for explain as for lint
        assert [f.rule for f in exc.findings] == [rule] and exc.findings[0].location.line == 42
        return
    with pytest.raises(StageError) as got:
        derive_device(bad, "lab-leaf1", lint_warnings=False, preceding=False)  # as the CLI's explain
    with pytest.raises(StageError) as linted:
        lint_loaded(bad, load_catalog())
    assert got.value.findings == linted.value.findings
    assert [f.rule for f in got.value.findings] == [rule] and got.value.findings[0].location.line == 42
