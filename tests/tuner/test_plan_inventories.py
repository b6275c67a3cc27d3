"""Properties of the real plans of every shipped inventory (the main job, through the real pipeline)."""

from __future__ import annotations

from pathlib import Path

import jsonschema
import pytest

from roce_tune.findings import Severity
from roce_tune.inventory.loader import load_inventory, load_inventory_text
from roce_tune.pipeline import derive_plan
from roce_tune.plan import plan_from_json, plan_json_schema, plan_to_json, resolve_shared

REPO = Path(__file__).resolve().parents[2]
INVENTORIES = sorted((REPO / "inventories").glob("*.yaml"))


@pytest.fixture(scope="module", params=INVENTORIES, ids=lambda p: p.stem)
def plan(request):  # type: ignore[no-untyped-def]
    return derive_plan(load_inventory(request.param))


def test_no_error_findings(plan) -> None:  # type: ignore[no-untyped-def]
    assert not [f for f in plan.findings if f.severity is Severity.error], plan.findings


def test_every_lossless_queue_has_ecn_below_the_pfc_trigger(plan) -> None:  # type: ignore[no-untyped-def]
    c = plan.classification
    assert c.cnp_priority not in c.lossless_priorities
    for sw in plan.switches:
        profiles = {e.name: e for e in sw.ecn_profiles}
        for p in sw.ports:
            if not p.lossless:
                assert p.pfc_priorities == [] and p.headroom is None
                continue
            assert p.pfc_priorities == c.lossless_priorities
            assert p.headroom is not None and p.headroom.xoff_bytes > 0 and p.headroom.size_bytes > 0
            e = profiles[p.ecn_profile]
            # like with like: the egress ramp below the egress PFC onset (fan-in x one PG's trigger)
            assert e.pfc_onset_bytes == min(max(1, e.fan_in) * e.pfc_trigger_bytes,
                                            e.queue_buffer_bytes or 1 << 62)
            assert 0 < e.kmin_bytes < e.kmax_bytes <= e.pfc_onset_bytes, (sw.name, p.name, e)
            # ok only for a steady state on the ramp; PFC-bound is reported, never "ok"
            assert e.fluid.ok == (e.fluid.steady_state == "ramp"), (sw.name, p.name, e.fluid)


def test_switch_nic_and_nccl_agree(plan) -> None:  # type: ignore[no-untyped-def]
    c = plan.classification
    for dscp in c.roce_dscp:
        assert c.dscp_to_tc[dscp] in c.lossless_priorities
    assert c.dscp_to_tc[c.cnp_dscp] == c.cnp_priority
    for h in plan.hosts:
        assert h.nccl_env["NCCL_IB_TC"] == str(c.roce_tos)
        for n in h.nics:
            assert n.dscp_to_priority == c.dscp_to_priority
            assert [p for p, on in enumerate(n.pfc_vector) if on] == c.lossless_priorities
            assert n.roce_tos >> 2 in c.roce_dscp and n.roce_tos & 3 == 2  # ECT(0)
            assert (n.cnp_dscp, n.cnp_priority) == (c.cnp_dscp, c.cnp_priority)


def test_deterministic_and_schema_valid(plan) -> None:  # type: ignore[no-untyped-def]
    again = derive_plan(load_inventory(REPO / plan.inventory_file))
    assert plan_to_json(plan) == plan_to_json(again)
    import json

    schema = plan_json_schema()
    jsonschema.validate(json.loads(plan_to_json(plan)), schema)  # the file as written (schema 1.2)
    # and with references resolved
    jsonschema.validate(resolve_shared(json.loads(plan_to_json(plan))), schema)
    broken = json.loads(plan_to_json(plan))
    # a section that is itself a reference
    broken["shared"]["Headroom"] = {"x": {"$ref": "#/shared/Headroom/y"}}
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(broken, schema)


def test_plan_json_shares_sections_and_reads_back(plan) -> None:  # type: ignore[no-untyped-def]
    """Schema 1.1: each headroom/buffers/ECN/watchdog/DCQCN section once under "shared", a $ref
    wherever it applies; reading it back gives the same plan, holding one instance per section."""
    import json

    text = plan_to_json(plan)
    doc = json.loads(text)
    assert doc["schema_version"] == "1.3" and list(doc)[-1] == "shared"
    refs = [p["headroom"]["$ref"] for s in doc["switches"] for p in s["ports"] if p["headroom"]]
    assert refs and all(r.startswith("#/shared/Headroom/") for r in refs)
    names = {f"{p.headroom.profile}@{s.asic}" for s in plan.switches for p in s.ports if p.headroom}
    assert set(doc["shared"]["Headroom"]) == names  # keyed by the BUFFER_PROFILE name and the ASIC
    assert all(set(n["dcqcn"]) == {"$ref"} for h in doc["hosts"] for n in h["nics"])
    inline = len(plan.model_dump_json(indent=2))
    ports = sum(len(s.ports) for s in plan.switches) + sum(len(h.nics) for h in plan.hosts)
    assert len(text) < (inline / 2 if ports >= 128 else inline), (len(text), inline, ports)
    back = plan_from_json(text)
    assert back == plan
    assert plan_to_json(back) == text  # a loaded plan writes the same file
    heads = [p.headroom for s in back.switches for p in s.ports if p.headroom]
    assert len({id(h) for h in heads}) == len(names)


def test_plan_json_1_0_and_broken_references(plan) -> None:  # type: ignore[no-untyped-def]
    import json

    inline = plan.model_dump_json()
    assert plan_from_json(inline) == plan  # a 1.0 file: everything inline
    assert plan_to_json(plan_from_json(inline)) == plan_to_json(plan)  # equal copies share one entry
    text = plan_to_json(plan)

    def broken(change) -> str:  # type: ignore[no-untyped-def]
        doc = json.loads(text)
        change(doc)
        return json.dumps(doc)

    def first_port(doc):  # type: ignore[no-untyped-def]
        return next(p for s in doc["switches"] for p in s["ports"] if p["headroom"])

    def cycle(doc):  # type: ignore[no-untyped-def]
        name = next(iter(doc["shared"]["EcnProfile"]))
        doc["shared"]["EcnProfile"][name]["fluid"] = {"$ref": f"#/shared/EcnProfile/{name}"}

    cases = {
        "no_such_profile": lambda d: first_port(d).update(
            headroom={"$ref": "#/shared/Headroom/no_such_profile"}),
        "reference cycle": cycle,
        "must be an object": lambda d: d.update(shared=[]),
        "has no 'shared' object": lambda d: d.pop("shared"),
    }
    for expected, change in cases.items():
        with pytest.raises(ValueError, match=expected):
            plan_from_json(broken(change))
    with pytest.raises(ValueError, match="nested too deeply"):
        plan_from_json('{"notes": ' + "[" * 100_000 + "]" * 100_000 + "}")


def test_broken_plan_directory_is_a_clear_cli_error(tmp_path: Path) -> None:
    import json
    import subprocess
    import sys

    out = tmp_path / "plan"
    subprocess.run([sys.executable, "-m", "roce_tune.cli", "plan",
                    str(REPO / "inventories" / "lab-2node.yaml"),
                    "--out", str(out)], check=True, capture_output=True, cwd=tmp_path, timeout=120)
    doc = json.loads((out / "plan.json").read_text())
    doc["shared"] = []
    (out / "plan.json").write_text(json.dumps(doc))
    # a plan.json that passes its checksum (else the reader stops at "edited after plan") but not the codec
    import hashlib
    digest = hashlib.sha256((out / "plan.json").read_bytes()).hexdigest()
    sums = (out / "SHA256SUMS").read_text().splitlines()
    (out / "SHA256SUMS").write_text("".join(
        (f"{digest}  plan.json" if ln.endswith(" plan.json") else ln) + "\n" for ln in sums))
    for cmd in (["apply", str(out), "--dry-run"], ["verify", str(out)]):
        res = subprocess.run([sys.executable, "-m", "roce_tune.cli", *cmd], capture_output=True, text=True,
                             cwd=tmp_path, timeout=120)
        assert res.returncode == 2, (cmd, res.stdout, res.stderr)
        assert "Traceback" not in res.stderr and "'shared' must be an object" in res.stderr, res.stderr
        assert str(out) in res.stderr

def test_every_number_explained(plan) -> None:  # type: ignore[no-untyped-def]
    for sw in plan.switches:
        for p in sw.ports:
            if p.headroom:
                assert {"xon_bytes", "xoff_bytes", "size_bytes"} <= set(p.headroom.rationale)
        for e in sw.ecn_profiles:
            assert {"kmin_bytes", "kmax_bytes", "pmax_percent"} <= set(e.rationale)
            assert all(r.source for r in e.rationale.values())
        assert {"detection_ms", "restoration_ms", "poll_ms"} <= set(sw.watchdog.rationale)
    for h in plan.hosts:
        for n in h.nics:
            assert set(n.dcqcn.params) <= set(n.dcqcn.rationale) | {"cnp_dscp", "cnp_802p_prio"}


LAB = (REPO / "inventories" / "lab-2node.yaml").read_text()


def _with_overrides(block: str) -> str:
    return LAB.replace("  cnp_priority: 6\n", "  cnp_priority: 6\n  overrides:\n" + block, 1)


def test_pinned_value_shows_derived_value_beside_it() -> None:
    text = _with_overrides("    - {device: lab-leaf1, port: Ethernet0, set: {xoff_bytes: 200KB}}\n")
    plan = derive_plan(load_inventory_text(text, "pinned.yaml"))
    port = next(p for p in plan.switch("lab-leaf1").ports if p.name == "Ethernet0")
    other = next(p for p in plan.switch("lab-leaf1").ports if p.name == "Ethernet8")
    assert port.headroom.xoff_bytes == 200000
    why = port.headroom.rationale["xoff_bytes"]
    assert why.pinned_by_user and why.derived_value == other.headroom.xoff_bytes
    assert port.headroom.profile != other.headroom.profile


def test_override_that_breaks_a_safety_rule_is_an_error() -> None:
    text = _with_overrides("    - {device: lab-leaf1, set: {kmax_bytes: 900MB}}\n")
    plan = derive_plan(load_inventory_text(text, "bad.yaml"))
    errors = [f for f in plan.findings if f.severity is Severity.error]
    assert errors and {f.rule for f in errors} & {"RT210", "RT237"}
    assert all(f.location.device == "lab-leaf1" for f in errors if f.rule == "RT210")


def test_trusted_construction_equals_validation(plan) -> None:  # type: ignore[no-untyped-def]
    """Ports/NICs/switches are built without re-validation for speed: they must still validate to
    exactly themselves."""
    from roce_tune.plan import HostPlan, SwitchPlan

    for sw in plan.switches[:3]:
        assert SwitchPlan.model_validate(sw.model_dump()) == sw
    for h in plan.hosts[:3]:
        assert HostPlan.model_validate(h.model_dump()) == h
