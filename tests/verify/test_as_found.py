"""verify's as-found read (roce_tune.verify.as_found) on real plan data: what the baseline's settings say for
devices that run the plan, differ per port, or were not read; the host script's MISMATCH lines."""

from __future__ import annotations

from pathlib import Path

from roce_tune.inventory.loader import load_inventory
from roce_tune.pipeline import derive_plan
from roce_tune.platforms import HOST_PLATFORM, get_platform
from roce_tune.verify.adjust import plan_settings
from roce_tune.verify.as_found import AsFound, Difference, _Device
from roce_tune.verify.observation import ecn_member

REPO = Path(__file__).resolve().parents[2]
PLAN = derive_plan(load_inventory(REPO / "inventories" / "lab-2node.yaml"))


def test_a_profile_whose_ports_run_different_values_is_split_per_port() -> None:
    sw = PLAN.switches[0]
    [(p0, prof), (p1, _)] = list(sw.lossless_ecn_ports())[:2]
    leaf = _Device(sw.name, values={ecn_member(p0.name, 3): {"kmin_bytes": 20000, "kmax_bytes": 60000,
                                                             "pmax_percent": 1.0},
                                    ecn_member(p1.name, 3): {"kmin_bytes": prof.kmin_bytes,
                                                             "kmax_bytes": prof.kmax_bytes,
                                                             "pmax_percent": prof.pmax_percent}},
                   differences=[Difference(sw.name, f"{p0.name} queue 3 kmin_bytes", "x", "20000")])
    found = AsFound({sw.name: leaf, "node1": _Device("node1"), "node2": _Device("node2", error="timeout")})
    s = found.settings(PLAN, plan_settings(PLAN))
    assert s["ecn"][f"{sw.name}/{p0.name}"]["running"] == "differs from the plan"
    assert s["ecn"][f"{sw.name}/{p0.name}"]["kmax_bytes"] == 60000
    assert s["ecn"][f"{sw.name}/{p1.name}"]["running"] == "as planned"
    assert s["dcqcn"]["node1"]["running"] == "as planned"
    assert s["dcqcn"]["node2"] == {"rpg_ai_rate_mbps": None, "rpg_hai_rate_mbps": None, "running": "not read"}
    assert found.refusal() is not None and "node2: not read (timeout)" in found.refusal()  # type: ignore[operator]


def test_host_check_mismatch_lines_name_the_dcqcn_key() -> None:
    out = ("roce-tune: node1: 3 value(s) did not read back as set:\n"
           "  MISMATCH ens1f0np0 ecn/roce_rp/rpg_ai_rate: expected '400', read '1'\n"
           "  MISMATCH ens1f0np0 pfc: expected '0,0,0,1,0,0,0,0', read '0,0,0,0,0,0,0,0'\n"
           "  MISMATCH node1 systemd unit /etc/systemd/system/roce-tune-host.service: expected 'as planned', "
           "read 'missing'\nROCE_TUNE_RC=1\n")
    got = get_platform(HOST_PLATFORM).check_mismatches(out)
    assert [(m.device, m.what, m.planned, m.running, m.dcqcn_key) for m in got] == [
        ("ens1f0np0", "ecn/roce_rp/rpg_ai_rate", "400", "1", "rpg_ai_rate_mbps"),
        ("ens1f0np0", "pfc", "0,0,0,1,0,0,0,0", "0,0,0,0,0,0,0,0", None),
        ("node1", "systemd unit /etc/systemd/system/roce-tune-host.service", "as planned", "missing", None)]


def test_a_switch_differing_outside_ecn_is_named_value_by_value() -> None:
    """Drift that is not ECN (here PFC on one port, MTU on another) was one RT332 quoting dry-run lines; it is
    now one difference per value, found by audit's comparison (qos.differences of platforms.planned_qos)."""
    from roce_tune.platforms import planned_qos
    from roce_tune.verify.as_found import _qos_differences

    plan = derive_plan(load_inventory(REPO / "inventories" / "site.yaml"))
    sw = plan.switches[0]
    want = planned_qos(plan, sw)
    (first, p1), (second, p2) = [(n, p) for n, p in want.ports.items() if p.pfc_priorities and p.mtu][:2]
    edited = {first: p1.model_copy(update={"pfc_priorities": []}),
              second: p2.model_copy(update={"mtu": 1500})}
    seen = want.model_copy(update={"ports": {**want.ports, **edited}})
    found = {(d.device, d.value, d.planned, d.running) for d in _qos_differences(sw.name, want, seen)}
    assert found == {(sw.name, f"ports[{first}].pfc_priorities", repr(p1.pfc_priorities), "[]"),
                     (sw.name, f"ports[{second}].mtu", repr(p2.mtu), "1500")}
    assert _qos_differences(sw.name, want, want) == []


def _switch_running(edit) -> _Device:  # type: ignore[no-untyped-def]
    """lab-leaf1 read back (``_read_switch``) from its rendered CONFIG_DB after ``edit(db)``, as a session
    reading the running configuration would return it."""
    import json

    from roce_tune.deploy.runner import targets_from_files
    from roce_tune.pipeline import render
    from roce_tune.verify.as_found import _read_switch

    [t] = [t for t in targets_from_files(PLAN, render(PLAN)[1]) if t.name == "lab-leaf1"]
    db = json.loads(t.desired)
    edit(db)

    class Pool:
        def with_driver(self, name, what, fn):  # type: ignore[no-untyped-def]
            assert name == "lab-leaf1"
            return json.dumps(db, indent=2)

    return _read_switch(Pool(), PLAN, t)  # type: ignore[arg-type]


def _lossless_profile(db: dict) -> dict:  # type: ignore[type-arg]
    return db["BUFFER_PROFILE"][db["BUFFER_PG"]["Ethernet0|3"]["profile"]]


def test_a_switch_running_another_ramp_and_other_headroom_names_both() -> None:
    """A switch running another ECN ramp and another lossless xoff: only the ramp was named (the other values
    were compared only when ECN matched), so a loss diagnosis could not say the xoff it runs. Now both are
    differences, and the headroom is what a loss diagnosis names (buffer_words)."""
    def edit(db: dict) -> None:  # type: ignore[type-arg]
        _lossless_profile(db)["xoff"] = "4096"
        for wred in db["WRED_PROFILE"].values():
            wred.update({f"{c}_min_threshold": "20000" for c in ("green", "yellow", "red")})

    dev = _switch_running(edit)
    got = {(d.value, d.planned, d.running) for d in dev.differences}
    prof = PLAN.switches[0].ecn_profiles[0]
    planned_xoff = next(p.headroom.xoff_bytes for p in PLAN.switches[0].ports if p.lossless and p.headroom)
    assert ("Ethernet0 queue 3 kmin_bytes", str(prof.kmin_bytes), "20000") in got
    assert ("ports[Ethernet0].headroom.xoff_bytes", str(planned_xoff), "4096") in got
    assert not [v for v, _, _ in got if ".ecn[" in v]  # the ramp is named once, as its own difference
    words = AsFound({"lab-leaf1": dev}).buffer_words(["lab-leaf1"])
    assert words.startswith(f"lab-leaf1 ports[Ethernet0].headroom.xoff_bytes: planned {planned_xoff}, "
                            "running 4096")
    assert "as planned" not in words


def test_buffer_words_say_as_planned_only_where_read_back() -> None:
    """A switch whose dry-run diff is empty runs the plan's headroom; one differing only in its ramp had its
    headroom read back equal; one not read has the plan's, unconfirmed."""
    def ramp_only(db: dict) -> None:  # type: ignore[type-arg]
        for wred in db["WRED_PROFILE"].values():
            wred["green_min_threshold"] = "20000"

    assert AsFound({"lab-leaf1": _Device("lab-leaf1")}).buffer_words(["lab-leaf1"]) == \
        "as planned on lab-leaf1 (read back)"
    assert AsFound({"lab-leaf1": _switch_running(ramp_only)}).buffer_words(["lab-leaf1"]) == \
        "as planned on lab-leaf1 (read back)"
    assert AsFound({"lab-leaf1": _Device("lab-leaf1", error="timeout")}).buffer_words(["lab-leaf1"]) == \
        "on lab-leaf1 the plan's values (planned, not read back)"


def test_a_host_wide_difference_names_the_host_once_and_what_was_planned() -> None:
    """The host script's device-scoped MISMATCH (its boot script) read "node1 node1 boot script …: planned as
    planned, running stale" in RT332; it names the host once and the planned value as the rendered one."""
    from roce_tune.verify.as_found import _read_host

    out = ("  MISMATCH ens1f0np0 ecn/roce_rp/rpg_ai_rate: expected '5', read '1'\n"
           "  MISMATCH node1 boot script /usr/local/lib/roce-tune/host.sh: expected 'as planned', "
           "read 'stale (differs from the plan)'\nROCE_TUNE_RC=1\n")

    class Driver:
        def run_host_script(self, desired: str, check_only: bool) -> tuple[int, str]:
            assert check_only
            return 1, out

    class Pool:
        def with_driver(self, name, what, fn):  # type: ignore[no-untyped-def]
            return fn(Driver())

    class Target:
        name, desired = "node1", "#!/bin/sh\n"

    dev = _read_host(Pool(), Target())  # type: ignore[arg-type]
    ai, boot = [f"{d.device} {d.value}: planned {d.planned}, running {d.running}" for d in dev.differences]
    assert ai == "node1 ens1f0np0 ecn/roce_rp/rpg_ai_rate: planned 5, running 1"
    assert boot == ("node1 boot script /usr/local/lib/roce-tune/host.sh: planned the rendered one, running "
                    "stale (differs from the plan)")
    assert dev.values == {"ens1f0np0": {"rpg_ai_rate_mbps": 1}}


def test_values_the_read_back_cannot_state_are_not_read_back_not_different() -> None:
    """A switch that differs from the plan but whose read-back states no ECN value (its text could not be
    read into values: all None) was labelled "differs from the plan" with "?" values; its values are "not
    read back"; one value stated and different still "differs"."""
    sw = PLAN.switches[0]
    ports = [ecn_member(p.name, 3) for p, _ in sw.lossless_ecn_ports()]
    unknown = {f: None for f in ("kmin_bytes", "kmax_bytes", "pmax_percent")}
    diff = [Difference(sw.name, "running configuration", "the rendered configuration", "3 diff line(s)")]
    found = AsFound({sw.name: _Device(sw.name, values={p: dict(unknown) for p in ports}, differences=diff)})
    [entry] = found.settings(PLAN, plan_settings(PLAN))["ecn"].values()
    assert entry["running"] == "not read back"
    found.devices[sw.name].values = {p: {**unknown, "kmax_bytes": 60_000} for p in ports}
    [entry] = found.settings(PLAN, plan_settings(PLAN))["ecn"].values()
    assert entry["running"] == "differs from the plan"
