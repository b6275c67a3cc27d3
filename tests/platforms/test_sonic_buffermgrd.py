"""The plan's headroom survives SONiC's buffermgrd on the traditional buffer model.

A small Python model of buffermgrd's documented behaviour, re-implemented from its source
(https://github.com/sonic-net/sonic-swss/blob/master/cfgmgr/buffermgr.cpp ``readPgProfileLookupFile``,
``doSpeedUpdateTask``, ``doTask``; PG ranges as ``Orch::generateIdListFromMap`` in
https://github.com/sonic-net/sonic-swss/blob/master/orchagent/orch.cpp):

* a trigger (PORT speed/MTU/admin change, ``pfc_enable`` change, boot) runs ``doSpeedUpdateTask`` for the
  port;
* no cable length: retry; cable ``0m``: nothing; no ``pfc_enable``: nothing;
* admin down on a Mellanox ASIC: delete the lossless PG rows that point at the lookup name;
* ``(speed, cable)`` not in the SKU's ``pg_profile_lookup.ini``: log an error, change nothing;
* ``BUFFER_PROFILE|pg_lossless_<speed>_<cable>_profile`` absent: create it from the table; present: reuse it;
* every contiguous run of the ``pfc_enable`` priorities: ``BUFFER_PG|<port>|<run>`` -> that profile.

The switch starts from its SKU's state (buffermgrd already ran at boot with the SKU's 40 m cable length and
created its profiles from the table), the rendered file is merged in (what ``config apply-patch`` of the
diff leaves), then buffermgrd is triggered for every port (roce-tune's own ``PORT|mtu`` write) and once
more as at boot; every lossless PG must end on a profile with the plan's xon/xoff/size.
"""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path

import pytest

from roce_tune.pipeline import derive_plan
from roce_tune.plan import Plan, SwitchPlan
from roce_tune.platforms import sonic
from roce_tune.platforms.sonic_readback import ids
from tests.render.golden import REPO, pipeline_plan

DATA = Path(__file__).resolve().parents[1] / "data" / "sonic_pg_profile"
#: switch model -> its SKU's pg_profile_lookup.ini (tests/data/sonic_pg_profile, sources in each file)
LOOKUP_BY_MODEL = {"DellEMC-Z9332f": "DellEMC-Z9332f-O32.ini", "SN2700": "ACS-MSN2700.ini",
                   "SN4700": "ACS-MSN4700.ini", "SN5600": "ACS-SN5600.ini"}
SKU_CABLE = "40m"


def read_pg_profile_lookup(text: str) -> dict[str, dict[str, dict[str, str]]]:
    """speed -> cable -> profile fields, as ``readPgProfileLookupFile`` reads the file (lines starting with
    ``#`` skipped; whitespace-separated speed, cable, size, xon, xoff, threshold, optional xon_offset)."""
    out: dict[str, dict[str, dict[str, str]]] = {}
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        f = line.split()
        row = dict(zip(("size", "xon", "xoff", "threshold", "xon_offset"), f[2:], strict=False))
        out.setdefault(f[0], {})[f[1]] = row
    return out


def id_runs(ids: set[int]) -> list[str]:
    """``generateIdListFromMap``: contiguous runs ``3-4`` / ``3``."""
    out, run = [], []
    for i in sorted(ids):
        if run and i != run[-1] + 1:
            out.append(f"{run[0]}-{run[-1]}" if len(run) > 1 else str(run[0]))
            run = []
        run.append(i)
    if run:
        out.append(f"{run[0]}-{run[-1]}" if len(run) > 1 else str(run[0]))
    return out


class Buffermgrd:
    """buffermgrd (traditional model) acting on a CONFIG_DB dict; ``log`` keeps what it would log."""

    def __init__(self, db: dict, lookup: dict[str, dict[str, dict[str, str]]],
                 asic_vendor: str) -> None:  # type: ignore[type-arg]
        self.db, self.lookup, self.vendor = db, lookup, asic_vendor
        self.log: list[str] = []

    def speed_update(self, port: str) -> None:
        db = self.db
        cable = next((row[port] for row in (db.get("CABLE_LENGTH") or {}).values() if port in row), None)
        prow = (db.get("PORT") or {}).get(port, {})
        if cable is None or "admin_status" not in prow:
            self.log.append(f"retry {port}")
            return
        pfc = ((db.get("PORT_QOS_MAP") or {}).get(port) or {}).get("pfc_enable")
        if cable == "0m" or pfc is None:
            return
        name = f"pg_lossless_{prow['speed']}_{cable}_profile"
        runs = id_runs({int(x) for x in pfc.split(",") if x.strip().isdigit()})
        pgs = db.setdefault("BUFFER_PG", {})
        if prow["admin_status"] == "down" and self.vendor == "mellanox":
            for r in runs:
                if pgs.get(f"{port}|{r}", {}).get("profile") == name:
                    del pgs[f"{port}|{r}"]
            return
        row = self.lookup.get(prow["speed"], {}).get(cable)
        if row is None:
            self.log.append(f"ERROR No PG profile configured for speed {prow['speed']} and cable length "
                            f"{cable}")
            return
        profiles = db.setdefault("BUFFER_PROFILE", {})
        if name not in profiles:
            mode = db["BUFFER_POOL"]["ingress_lossless_pool"]["mode"]
            profiles[name] = {"pool": "ingress_lossless_pool", "xon": row["xon"], "xoff": row["xoff"],
                              "size": row["size"], f"{mode}_th": row["threshold"],
                              **({"xon_offset": row["xon_offset"]} if row.get("xon_offset") else {})}
        for r in runs:
            pgs[f"{port}|{r}"] = {"profile": name}

    def boot(self) -> None:
        for port in sorted(self.db.get("PORT") or {}):
            self.speed_update(port)


def _sku_db(switch: SwitchPlan) -> dict:  # type: ignore[type-arg]
    """The switch as its SKU defaults leave it after boot (buffermgrd ran with the SKU's cable length)."""
    prios = sorted({p for port in switch.ports for p in port.pfc_priorities}) or [3, 4]
    db = {
        "DEVICE_METADATA": {"localhost": {"buffer_model": "traditional"}},
        "PORT": {p.name: {"speed": str(p.speed_gbps * 1000), "mtu": "9100", "admin_status": "up"}
                 for p in switch.ports},
        "CABLE_LENGTH": {"AZURE": {p.name: SKU_CABLE for p in switch.ports}},
        "PORT_QOS_MAP": {p.name: {"pfc_enable": ",".join(map(str, prios))} for p in switch.ports},
        "BUFFER_POOL": {"ingress_lossless_pool": {"mode": "dynamic", "type": "ingress", "size": "1"}},
    }
    return db


def _merge(db: dict, rendered: str) -> dict:  # type: ignore[type-arg]
    """The running CONFIG_DB after the rendered rows and fields are applied (GCU patch of the diff)."""
    out = copy.deepcopy(db)
    for table, rows in json.loads(rendered).items():
        for key, fields in rows.items():
            if isinstance(fields, dict):
                out.setdefault(table, {}).setdefault(key, {}).update(fields)
            else:
                out.setdefault(table, {})[key] = fields
    return out


def _lossless_pg_values(db: dict, switch: SwitchPlan, plan: Plan) -> dict[str, tuple[int, int,
                                                                                     int]]:  # type: ignore[type-arg]
    out = {}
    for p in switch.ports:
        if not p.lossless:
            continue
        for pg in {plan.classification.pfc_priority_to_pg[x] for x in p.pfc_priorities}:
            row = next(r for k, r in db["BUFFER_PG"].items() if k.split("|")[0] == p.name
                       and pg in ids(k.split("|")[1]))
            prof = db["BUFFER_PROFILE"][row["profile"]]
            out[f"{p.name}|{pg}"] = (int(prof["xon"]), int(prof["xoff"]), int(prof["size"]))
    return out


def _run(plan: Plan, switch: SwitchPlan) -> tuple[dict, Buffermgrd]:  # type: ignore[type-arg]
    lookup = read_pg_profile_lookup((DATA / LOOKUP_BY_MODEL[switch.model]).read_text())
    daemon = Buffermgrd(_sku_db(switch), lookup, sonic.asic_type(switch))
    daemon.boot()  # the SKU's state: PGs on the table's profiles for the SKU cable length
    (text,) = sonic.render(plan, switch).values()
    daemon.db = _merge(daemon.db, text)
    for port in sorted(daemon.db["PORT"]):  # roce-tune's PORT|mtu write triggers every port
        daemon.speed_update(port)
    daemon.boot()  # and the next boot
    return daemon.db, daemon


def _variant(host_m: int, uplink_m: int, buffer_model: str | None = None) -> Plan:
    """mixed-vendor.yaml with every host cable ``host_m`` and every switch-switch cable ``uplink_m``."""
    text = (REPO / "inventories" / "mixed-vendor.yaml").read_text()
    text = re.sub(r"(switch_port: \"[^\"]+\", cable_length: )\d+m", rf"\g<1>{host_m}m", text)
    text = re.sub(r"(b: \"[^\"]+\", cable_length: )\d+m", rf"\g<1>{uplink_m}m", text)
    if buffer_model:
        text = text.replace("model: DellEMC-Z9332f\n",
                            f"model: DellEMC-Z9332f\n    buffer_model: {buffer_model}\n")
    return derive_plan(load_inventory_text(text))


def load_inventory_text(text: str):  # type: ignore[no-untyped-def]
    from roce_tune.inventory.loader import load_inventory_text as load

    return load(text, "mixed-vendor.yaml")


def _assert_plan_survives(plan: Plan, switch: SwitchPlan) -> Buffermgrd:
    db, daemon = _run(plan, switch)
    got = _lossless_pg_values(db, switch, plan)
    planned = {f"{p.name}|{plan.classification.pfc_priority_to_pg[x]}":
               (p.headroom.xon_bytes, p.headroom.xoff_bytes, p.headroom.size_bytes)
               for p in switch.ports if p.lossless and p.headroom is not None for x in p.pfc_priorities}
    assert got.keys() == planned.keys()
    for k, (xon, xoff, size) in planned.items():  # equal, or a longer cable's rounding-up (RT241)
        assert got[k][0] == xon and got[k][1] >= xoff and got[k][2] >= size, (k, got[k], planned[k])
    assert sum(got[k] == planned[k] for k in planned) >= len(planned) // 2
    return daemon


@pytest.mark.parametrize("host_m,uplink_m", [(3, 20), (5, 40), (3, 40), (5, 20)])
def test_dell_z9332f_headroom_survives_buffermgrd(host_m: int, uplink_m: int) -> None:
    plan = _variant(host_m, uplink_m)
    for sw in (s for s in plan.switches if s.model == "DellEMC-Z9332f"):
        assert sw.buffer_model == "traditional"  # SONiC's default outside Mellanox
        daemon = _assert_plan_survives(plan, sw)
        missing = {f"{m}m" for m in (host_m, uplink_m)} - {"5m", "40m"}  # the SKU table has 5 m and 40 m rows
        assert bool(any("No PG profile" in ln for ln in daemon.log)) == bool(missing)


@pytest.mark.parametrize("inventory", ["lab-2node", "mixed-vendor", "site", "spectrum-x-su"])
def test_shipped_inventories_survive_buffermgrd_on_the_traditional_model(inventory: str) -> None:
    plan = pipeline_plan(inventory)
    for sw in plan.switches:
        if sw.platform != "sonic":
            continue
        if sw.buffer_model != "traditional":  # a Spectrum switch moved to the traditional model
            sw = sw.model_copy(update={"buffer_model": "traditional"})
        _assert_plan_survives(plan, sw)


def test_the_plans_own_profile_names_would_be_overwritten(monkeypatch: pytest.MonkeyPatch) -> None:
    """Before roce-tune wrote buffermgrd's names: PGs pointed at the plan's names and buffermgrd re-pointed
    them at the SKU table's profile (5 m / 40 m rows exist on the Z9332f) at the first trigger."""
    from roce_tune.platforms.contract import BufferModels

    monkeypatch.setattr(sonic, "BUFFER_MODELS", BufferModels((("*", ("traditional", "dynamic")),), "test"))
    plan = _variant(5, 40)
    sw = next(s for s in plan.switches if s.model == "DellEMC-Z9332f")
    dyn = sw.model_copy(update={"buffer_model": "dynamic"})  # renders the plan's own names
    lookup = read_pg_profile_lookup((DATA / LOOKUP_BY_MODEL[sw.model]).read_text())
    daemon = Buffermgrd(_sku_db(sw), lookup, "broadcom")
    daemon.boot()
    (text,) = sonic.render(plan, dyn).values()
    daemon.db = _merge(daemon.db, text)
    daemon.boot()
    got = _lossless_pg_values(daemon.db, sw, plan)
    table = lookup["400000"]["5m"]
    assert (int(table["xon"]), int(table["xoff"]), int(table["size"])) in got.values()


def test_spectrum_defaults_to_the_dynamic_model_and_renders_it() -> None:
    plan = pipeline_plan("lab-2node")
    sw = next(s for s in plan.switches if s.platform == "sonic")
    assert sw.buffer_model == "dynamic"
    db = json.loads(next(iter(sonic.render(plan, sw).values())))
    assert db["DEVICE_METADATA"] == {"localhost": {"buffer_model": "dynamic"}}
    assert not any(sonic.BUFFERMGRD_NAME_RE.match(n) for n in db["BUFFER_PROFILE"])


def test_dynamic_model_on_a_broadcom_switch_is_refused_with_a_finding() -> None:
    from roce_tune.findings import RoceTuneError
    from roce_tune.render.outputs import render_outputs

    plan = _variant(3, 20, buffer_model="dynamic")
    with pytest.raises(RoceTuneError) as exc:
        render_outputs(plan, include_hosts=False)
    msgs = [f.message for f in exc.value.findings if f.rule == "RT240"]
    assert any("leaf5" in m and "no dynamic buffer model on tomahawk-3" in m for m in msgs), msgs
