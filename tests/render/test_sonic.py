"""SONiC renderer: YANG validity (SONiC's own models via libyang), structural cross-references, values
equal to the plan's, determinism, refusals, and golden files.

Oracles: SONiC's sonic-yang-models (the ``sonic-yang`` set of the references folder, tests/references.py,
validated by libyang), the table semantics of sonic-buildimage ``qos_config.j2`` / ``buffers_config.j2``
(VENDORS.md §1), and the plan itself.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from roce_tune.plan import Plan, SwitchPlan
from roce_tune.platforms import get_platform, sonic
from tests.references import reference

from .golden import assert_golden, pipeline_plan

try:  # tests/render is a package when it has __init__.py, a plain rootdir otherwise
    from . import plans_sonic_cumulus as pb
    from . import yang_helpers as yh
except ImportError:
    import plans_sonic_cumulus as pb  # type: ignore[no-redef]
    import yang_helpers as yh  # type: ignore[no-redef]

#: sonic-buildimage src/sonic-yang-models/yang-models/sonic-cable-length.yang ``length`` pattern [V].
CABLE_RE = re.compile(r"^(?:[0-9]+m|None)$")

PORTS = [pb.P("Ethernet0", 400, 3), pb.P("Ethernet4", 400, 2.5), pb.P("Ethernet8", 800, 30, "switch"),
         pb.P("Ethernet16", 800, 30, "switch"), pb.P("Ethernet24", 400, 3, "none")]


def _hand(asic: str = "spectrum-4", **kw: object) -> tuple[Plan, SwitchPlan]:
    sw = pb.switch("leaf1", "sonic", asic, PORTS, **kw)  # type: ignore[arg-type]
    return pb.plan([sw]), sw


def _db(plan: Plan, sw: SwitchPlan) -> dict[str, dict]:
    files = sonic.render(plan, sw)
    assert list(files) == [f"{sw.name}.json"]
    return json.loads(files[f"{sw.name}.json"])


@pytest.fixture(scope="module")
def yang() -> yh.SonicYang:
    pytest.importorskip("libyang")
    y = yh.load_sonic_yang(reference("sonic-yang"))
    assert y is not None
    return y


def _running(sw: SwitchPlan) -> dict[str, dict]:
    return {"PORT": yh.device_ports([p.name for p in sw.ports], {p.name: p.speed_gbps for p in sw.ports})}


# --- YANG ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("asic,kw", [("spectrum-4", {}), ("tomahawk-3", {}),
                                     ("spectrum-3", {"watchdog": False}),
                                     ("spectrum-4", {"lossless": [3, 4]})])
def test_rendering_validates_against_sonic_yang(yang: yh.SonicYang, asic: str, kw: dict) -> None:
    cls = pb.classification(kw.get("lossless", pb.LOSSLESS))  # type: ignore[arg-type]
    sw = pb.switch("leaf1", "sonic", asic, PORTS, **kw)
    db = _db(pb.plan([sw], cls), sw)
    skipped = yh.validate_config_db(yang, yh.merge_running(_running(sw), db))
    assert skipped == ["CABLE_LENGTH"]  # sonic-cable-length.yang is not in the sonic-yang set: pattern below


@pytest.mark.parametrize("table,key,field,value", [
    ("QUEUE", "Ethernet0|3", "wred_profile", "NO_SUCH_PROFILE"),       # leafref
    ("BUFFER_PG", "Ethernet0|3", "profile", "NO_SUCH_PROFILE"),        # leafref
    ("PFC_WD", "Ethernet0", "detection_time", "50"),                   # range 100..5000
    ("PORT_QOS_MAP", "Ethernet0", "pfc_enable", "3;reboot"),           # pattern
    ("WRED_PROFILE", "ROCE_LOSSLESS_400G_N3", "green_drop_probability", "101"),
    ("SCHEDULER", "CNP_STRICT", "type", "PRIORITY"),                   # enum
])
def test_yang_check_is_not_vacuous(yang: yh.SonicYang, table: str, key: str, field: str, value: str) -> None:
    plan, sw = _hand()
    db = _db(plan, sw)
    db[table][key][field] = value
    with pytest.raises(yh.YangValidationError):
        yh.validate_config_db(yang, yh.merge_running(_running(sw), db))


def test_yang_context_checks_every_must_and_when(caplog: pytest.LogCaptureFixture) -> None:
    """Loaded as one set, no ``must``/``when`` check is skipped for an unimplemented module, and every
    table's schema node still reads as that table after the whole load (libyang recompiles modules
    loaded one by one, which freed the nodes an earlier helper kept and failed CI)."""
    libyang = pytest.importorskip("libyang")
    models = reference("sonic-yang")
    libyang.configure_logging(True, 10)  # route libyang's messages, debug level, to Python logging
    try:
        with caplog.at_level(10, logger="libyang"):
            y = yh.load_sonic_yang(models)
    finally:
        libyang.configure_logging(False)
    assert y is not None
    assert "BUFFER_QUEUE" in y.tables and "PFC_WD" in y.tables
    assert not [r.getMessage() for r in caplog.records if "check skipped" in r.getMessage()]
    for name in y.tables:
        assert y.table(name).name() == name


def test_cable_length_matches_yang_pattern_and_never_shortens() -> None:
    plan, sw = _hand()
    cables = _db(plan, sw)["CABLE_LENGTH"][sonic.CABLE_LENGTH_KEY]
    assert set(cables) == {p.name for p in sw.ports}
    for p in sw.ports:
        assert CABLE_RE.match(cables[p.name])
        assert p.cable_m <= int(cables[p.name][:-1]) < p.cable_m + 1


# --- structure: every reference resolves ----------------------------------------------------------
def check_references(db: dict[str, dict]) -> None:
    """Every profile, pool, map, scheduler and WRED profile a row names exists in its table."""
    for key, row in db["BUFFER_PG"].items():
        assert row["profile"] in db["BUFFER_PROFILE"], key
    for key, row in db["BUFFER_QUEUE"].items():
        assert row["profile"] in db["BUFFER_PROFILE"], key
    for name, row in db["BUFFER_PROFILE"].items():
        assert row["pool"] in db["BUFFER_POOL"], name
    map_tables = {"dscp_to_tc_map": "DSCP_TO_TC_MAP", "tc_to_queue_map": "TC_TO_QUEUE_MAP",
                  "tc_to_pg_map": "TC_TO_PRIORITY_GROUP_MAP", "pfc_to_queue_map": "MAP_PFC_PRIORITY_TO_QUEUE",
                  "pfc_to_pg_map": "PFC_PRIORITY_TO_PRIORITY_GROUP_MAP"}
    for port, row in db["PORT_QOS_MAP"].items():
        for field, table in map_tables.items():
            if field in row:
                assert row[field] in db[table], (port, field)
    for key, row in db["QUEUE"].items():
        if "scheduler" in row:
            assert row["scheduler"] in db["SCHEDULER"], key
        if "wred_profile" in row:
            assert row["wred_profile"] in db["WRED_PROFILE"], key
    for name, row in db["DSCP_TO_TC_MAP"].items():
        assert set(row) == {str(d) for d in range(64)}, name


@pytest.mark.parametrize("asic", ["spectrum-4", "tomahawk-3"])
def test_every_reference_resolves(asic: str) -> None:
    check_references(_db(*_hand(asic)))


def test_pfc_to_pg_map_only_on_mellanox_and_barefoot() -> None:
    # qos_config.j2: pfc_to_pg_map_supported_asics = ['mellanox', 'barefoot']
    mlnx, bcm = _db(*_hand("spectrum-4")), _db(*_hand("tomahawk-3"))
    assert "PFC_PRIORITY_TO_PRIORITY_GROUP_MAP" in mlnx
    assert all("pfc_to_pg_map" in r for k, r in mlnx["PORT_QOS_MAP"].items() if k != "global")
    assert "PFC_PRIORITY_TO_PRIORITY_GROUP_MAP" not in bcm
    assert not any("pfc_to_pg_map" in r for r in bcm["PORT_QOS_MAP"].values())


# --- lossless semantics and values equal to the plan ----------------------------------------------
def check_plan_values(plan: Plan, sw: SwitchPlan, db: dict[str, dict]) -> None:
    """Lossless ports have PFC, the plan's headroom, ECN and watchdog values; lossy ports have none;
    the CNP queue is strict."""
    c = plan.classification
    for p in sw.ports:
        assert db["SCHEDULER"][db["QUEUE"][f"{p.name}|{c.cnp_queue}"]["scheduler"]] == {"type": "STRICT"}
    ecn = {e.name: e for e in sw.ecn_profiles}
    assert db["PFC_WD"]["GLOBAL"] == {"POLL_INTERVAL": str(sw.watchdog.poll_ms)}
    for p in sw.ports:
        qos = db["PORT_QOS_MAP"][p.name]
        assert db["PORT"][p.name] == {"mtu": str(p.mtu)}
        if not p.lossless:
            assert "pfc_enable" not in qos and "pfcwd_sw_enable" not in qos and p.name not in db["PFC_WD"]
            assert not any(k.startswith(p.name + "|") and "wred_profile" in r for k, r in db["QUEUE"].items())
            continue
        prios = sorted(p.pfc_priorities)
        assert qos["pfc_enable"].split(",") == [str(x) for x in prios]
        assert qos["pfcwd_sw_enable"] == qos["pfc_enable"]
        assert db["PFC_WD"][p.name] == {"action": sw.watchdog.action,
                                        "detection_time": str(sw.watchdog.detection_ms),
                                        "restoration_time": str(sw.watchdog.restoration_ms)}
        hdrm = db["BUFFER_PROFILE"][db["BUFFER_PG"][f"{p.name}|{c.pfc_priority_to_pg[prios[0]]}"]["profile"]]
        assert (int(hdrm["xon"]), int(hdrm["xoff"]), int(hdrm["size"])) == (
            p.headroom.xon_bytes, p.headroom.xoff_bytes, p.headroom.size_bytes)
        e = ecn[p.ecn_profile]
        for prio in prios:
            q = db["QUEUE"][f"{p.name}|{c.pfc_priority_to_queue[prio]}"]
            wred = db["WRED_PROFILE"][q["wred_profile"]]
            assert wred["ecn"] == "ecn_all"
            for colour in ("green", "yellow", "red"):
                assert int(wred[f"{colour}_min_threshold"]) == e.kmin_bytes
                assert int(wred[f"{colour}_max_threshold"]) == e.kmax_bytes
                assert float(wred[f"{colour}_drop_probability"]) == e.pmax_percent
                assert wred[f"wred_{colour}_enable"] == "true"


def test_lossless_ports_have_pfc_headroom_ecn_and_watchdog_with_plan_values() -> None:
    plan, sw = _hand()
    check_plan_values(plan, sw, _db(plan, sw))


def test_two_lossless_priorities_use_range_keys() -> None:
    # VENDORS.md §1: pfc_enable "3,4" with BUFFER_PG "Ethernet0|3-4" (buffers_config.j2 uses 3-4)
    cls = pb.classification([3, 4])
    sw = pb.switch("leaf1", "sonic", "spectrum-4", PORTS, lossless=[3, 4])
    db = _db(pb.plan([sw], cls), sw)
    assert db["PORT_QOS_MAP"]["Ethernet0"]["pfc_enable"] == "3,4"
    assert "Ethernet0|3-4" in db["BUFFER_PG"] and "Ethernet0|3-4" in db["BUFFER_QUEUE"]
    assert db["BUFFER_QUEUE"]["Ethernet0|3-4"]["profile"] == "egress_lossless_profile"
    assert {"Ethernet0|0-2", "Ethernet0|5-7"} <= set(db["BUFFER_QUEUE"])


def test_cnp_queue_is_strict_and_dwrr_weights_are_the_plans() -> None:
    plan, sw = _hand()
    db = _db(plan, sw)
    cls = plan.classification
    for p in sw.ports:
        assert db["SCHEDULER"][db["QUEUE"][f"{p.name}|{cls.cnp_queue}"]["scheduler"]] == {"type": "STRICT"}
    for s in cls.schedulers:
        if s.mode == "dwrr":
            assert db["SCHEDULER"][s.name] == {"type": "DWRR", "weight": str(s.weight_percent)}


def test_every_queue_and_pg_of_the_maps_has_a_buffer_profile() -> None:
    plan, sw = _hand()
    db = _db(plan, sw)
    c = plan.classification

    def expand(key: str) -> set[int]:
        lo, _, hi = key.split("|")[1].partition("-")
        return set(range(int(lo), int(hi or lo) + 1))

    for p in sw.ports:
        queues = set().union(*(expand(k) for k in db["BUFFER_QUEUE"] if k.startswith(p.name + "|")))
        # every queue of the port, also those no TC maps to (no SKU range key may remain beside the plan's)
        assert queues == set(range(8)) >= set(c.tc_to_queue.values())
        pgs = set().union(*(expand(k) for k in db["BUFFER_PG"] if k.startswith(p.name + "|")))
        want = set(c.tc_to_pg.values()) if p.lossless else set(c.tc_to_pg.values()) - set(c.lossless_pgs)
        assert pgs == want


def test_releases_before_202111_get_bracketed_references() -> None:
    # sonic-buildimage #7752 (2021): "[DSCP_TO_TC_MAP|AZURE]" -> "AZURE"; VENDORS.md §1
    plan, sw = _hand()
    modern = _db(plan, sw)
    old = _db(plan, sw.model_copy(update={"os_version": "SONiC.202012.72"}))
    assert _db(plan, sw.model_copy(update={"os_version": "202305"})) == modern
    ref = re.compile(r"^\[([A-Z_]+)\|([^]]+)\]$")
    fields = {"profile", "pool", "scheduler", "wred_profile", *sonic.MAP_FIELDS}
    seen = 0
    for table, rows in old.items():
        for key, row in rows.items():
            for field, value in row.items() if isinstance(row, dict) else ():
                if field in fields:
                    m = ref.match(value)
                    assert m and m.group(2) in old[m.group(1)], (table, key, field, value)
                    old[table][key][field] = m.group(2)
                    seen += 1
    assert seen > 0 and old == modern


def test_watchdog_off_renders_pfc_wd_without_port_rows() -> None:
    """Watchdog off: ``PFC_WD`` holds only ``GLOBAL`` (no port is watched), so apply's diff removes the
    switch's ``PFC_WD|<port>`` rows of managed ports (what ``pfcwd stop <port>`` does) instead of leaving
    a running watchdog alone; no ``pfcwd_sw_enable`` either."""
    plan, sw = _hand(watchdog=False)
    db = _db(plan, sw)
    assert db["PFC_WD"] == {"GLOBAL": {"POLL_INTERVAL": str(sw.watchdog.poll_ms)}}
    assert not any("pfcwd_sw_enable" in r for r in db["PORT_QOS_MAP"].values())


def test_output_is_deterministic_sorted_and_newline_terminated() -> None:
    plan, sw = _hand()
    a, b = sonic.render(plan, sw), sonic.render(plan, sw)
    text = a["leaf1.json"]
    assert a == b and text.endswith("}\n")
    assert text == json.dumps(json.loads(text), indent=2, sort_keys=True) + "\n"
    assert all(isinstance(v, str) for t in json.loads(text).values() for row in t.values()
               for v in (row.values() if isinstance(row, dict) else [row]) if not isinstance(v, dict))


def test_registry_and_spec() -> None:
    mod = get_platform("sonic")
    # CONFIG_DB is built as data, one table builder per section, and serialised once: no templates (issue 16)
    assert mod is sonic and mod.SPEC.aggregator == ""
    assert tuple(sonic.SECTION_TABLES) == mod.SPEC.sections
    assert not (Path(__file__).resolve().parents[2] / "templates" / "sonic").exists()


def test_a_key_written_twice_is_refused_not_overwritten() -> None:
    plan, sw = _hand()
    twice = sw.model_copy(update={"ecn_profiles": [*sw.ecn_profiles, sw.ecn_profiles[0]]})
    with pytest.raises(ValueError, match=r"written twice in WRED_PROFILE"):
        sonic.render(plan, twice)


def test_config_db_tables_are_the_serialised_file() -> None:
    plan, sw = _hand(watchdog=False)
    db = sonic.config_db_tables(sonic.build_context(plan, sw), "dynamic")
    assert list(db["PFC_WD"]) == ["GLOBAL"] and "PFC_PRIORITY_TO_PRIORITY_GROUP_MAP" in db  # mellanox
    assert db["DEVICE_METADATA"] == {"localhost": {"buffer_model": "dynamic"}}
    assert sonic.serialise(db) == json.dumps(db, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
    assert json.loads(sonic.render(plan, sw)["leaf1.json"]) == db


# --- refusals -------------------------------------------------------------------------------------
def test_refuses_what_sonic_cannot_express() -> None:
    plan, sw = _hand()
    frac = sw.model_copy(update={"ecn_profiles": [sw.ecn_profiles[0].model_copy(update={"pmax_percent": 0.5})]
                                 + sw.ecn_profiles[1:]})
    with pytest.raises(ValueError, match="integer percent"):
        sonic.render(plan, frac)
    with pytest.raises(ValueError, match="trust dscp"):
        sonic.render(plan.model_copy(update={"classification": pb.classification(trust="pcp")}), sw)
    no_q = sw.model_copy(update={"buffers": sw.buffers.model_copy(update={"profiles": [
        p for p in sw.buffers.profiles if p.name not in ("q_lossy_profile", "egress_lossy_profile")]})})
    with pytest.raises(ValueError, match="egress_lossy"):
        sonic.render(plan, no_q)
    long_name = "ROCE_LOSSLESS_400G_N3_PIN_leaf1_Ethernet0"
    renamed = sw.model_copy(update={
        "ecn_profiles": [e.model_copy(update={"name": long_name}) for e in sw.ecn_profiles[:1]],
        "ports": [p.model_copy(update={"ecn_profile": long_name}) if p.ecn_profile else p for p in sw.ports]})
    with pytest.raises(ValueError, match="WRED_PROFILE"):
        sonic.render(plan, renamed)
    with pytest.raises(ValueError, match="not sonic"):
        sonic.render(plan, sw.model_copy(update={"platform": "cumulus"}))
    # separate non-ECT drop thresholds: WRED_PROFILE has one ramp; refused instead of silently not written
    separate = pb.switch("leaf1", "sonic", "spectrum-4", PORTS, separate_ecn=True)
    with pytest.raises(ValueError, match="cannot express"):
        sonic.render(pb.plan([separate], pb.classification(pb.LOSSLESS)), separate)


@pytest.mark.parametrize("inventory", sorted(p.stem for p in (Path(__file__).resolve().parents[2]
                                                              / "inventories")
                                             .glob("*.yaml")))
def test_plan_md_ecn_numbers_are_the_wred_profile_numbers(inventory: str) -> None:
    """By construction: a SONiC switch's plan has no drop thresholds it cannot render (the tuner asks the
    platform), the WRED_PROFILE ramp is the plan's Kmin/Kmax, and plan.md's drop columns show exactly that
    ramp. Before the fix plan.md said drop 206-412 KB while the file dropped non-ECT on Kmin..Kmax."""
    from roce_tune.render.outputs import render_outputs

    plan = pipeline_plan(inventory)
    sonic_switches = [sw for sw in plan.switches if sw.platform == "sonic"]
    if not sonic_switches:
        pytest.skip(f"{inventory} has no SONiC switch")
    files = render_outputs(plan, include_hosts=False)
    md = files["plan.md"]
    for sw in sonic_switches:
        db = json.loads(files[f"switches/{sw.name}.json"])
        for e in sw.ecn_profiles:
            assert e.drop_min_bytes is None and e.drop_max_bytes is None, (sw.name, e.name)
            wred = db["WRED_PROFILE"][e.name]
            kmin, kmax = int(wred["green_min_threshold"]), int(wred["green_max_threshold"])
            assert (kmin, kmax) == (e.kmin_bytes, e.kmax_bytes)
            row = next(ln for ln in md.splitlines() if ln.startswith(f"| {e.name} |"))
            cells = [c.strip() for c in row.strip("|").split("|")]
            assert cells[3:8] == [str(kmin), str(kmax), str(e.pmax_percent), f"{kmin} (ECN ramp)",
                                  f"{kmax} (ECN ramp)"]


@pytest.mark.parametrize("inventory,switches", [("spectrum-x-su", ["su1-leaf1"]),
                                                ("mixed-vendor", ["leaf5", "leaf6"])])
def test_plan_md_runbook_says_what_a_qos_reload_wipes(inventory: str, switches: list[str]) -> None:
    from roce_tune.render.outputs import render_outputs

    files = render_outputs(pipeline_plan(inventory), include_hosts=False)
    runbook = files["plan.md"].split("## Runbook: SONiC")[1].split("\n## ")[0]
    for name in switches:
        written = sorted(json.loads(files[f"switches/{name}.json"]))
        wiped = [t for t in written if t in sonic.QOS_RELOAD_CLEARED_TABLES]
        assert set(written) - set(wiped) == {"DEVICE_METADATA", "PFC_WD", "PORT"}
        line = next(ln for ln in runbook.splitlines() if name in ln)
        assert f"delete {len(wiped)} of the {len(written)} tables" in line and "config load_minigraph" in line
        assert all(t in line for t in wiped)
    mixed = files["plan.md"] if inventory == "mixed-vendor" else ""
    # Broadcom: no
    # PFC_PRIORITY_TO_PRIORITY_GROUP_MAP
    assert not mixed or "delete 13 of the 16 tables" in mixed


# --- golden files ---------------------------------------------------------------------------------
def test_golden_hand_built() -> None:
    plan, sw = _hand()
    assert_golden("sonic", "hand-built", sonic.render(plan, sw))


INVENTORY_SWITCHES = [("spectrum-x-su", ["su1-leaf1"]), ("mixed-vendor", ["leaf5", "leaf6"])]


@pytest.mark.parametrize("inventory,switches", INVENTORY_SWITCHES)
def test_golden_inventories(inventory: str, switches: list[str]) -> None:
    plan = pipeline_plan(inventory)
    files: dict[str, str] = {}
    for name in switches:
        sw = plan.switch(name)
        assert sw.platform == "sonic"
        files.update(sonic.render(plan, sw))
    assert_golden("sonic", inventory, files)


@pytest.mark.parametrize("inventory,switches", INVENTORY_SWITCHES)
def test_inventory_renderings_resolve_and_carry_plan_values(inventory: str, switches: list[str]) -> None:
    plan = pipeline_plan(inventory)
    for name in switches:
        sw = plan.switch(name)
        db = json.loads(sonic.render(plan, sw)[f"{name}.json"])
        check_references(db)
        check_plan_values(plan, sw, db)


@pytest.mark.parametrize("inventory,switches", INVENTORY_SWITCHES)
def test_inventory_renderings_validate_against_sonic_yang(inventory: str, switches: list[str],
                                                          yang: yh.SonicYang) -> None:
    plan = pipeline_plan(inventory)
    for name in switches:
        sw = plan.switch(name)
        db = json.loads(sonic.render(plan, sw)[f"{name}.json"])
        assert yh.validate_config_db(yang, yh.merge_running(_running(sw), db)) == ["CABLE_LENGTH"]
