"""Issue 16 memos and fast paths never change a byte: single edits a network engineer makes, planned two ways.

For a seeded random edit of a shipped inventory (full or intent form) or of a small synthetic fabric:

(a) planning the edited inventory into the output directory of the previous plan gives exactly the files,
    version and top-level entries of planning it into a fresh directory (plandir links unchanged files from
    the version in force, so a wrong link would show here);
(b) the plan equals the one made with every memo and fast path turned off: ruamel.yaml instead of the fast
    reader, each switch derived on its own (``compose.REUSE_SHAPES``), no tuner memo, no NIC-class copies,
    no shared SONiC/host renders, and plan.json written by pydantic (``codec._plan_to_json_pydantic``) and
    read back to the same bytes (``codec.plan_from_json``).

An edit that makes the plan fail must fail the same way both ways and leave the previous plan in force.
The default suite runs a few seeds per inventory; ``-m slow`` runs a wider sweep.
"""

from __future__ import annotations

import contextlib
import copy
import itertools
import os
import random
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from roce_tune.inventory import loader
from roce_tune.inventory.models import expand_interface_pattern
from roce_tune.inventory.synthetic import rail_optimised_fabric, rail_optimised_intent
from roce_tune.pipeline import PlanResult, StageError, plan_inventory
from roce_tune.plan import codec
from roce_tune.plandir import read_tree
from roce_tune.platforms import host as host_platform
from roce_tune.platforms import templating
from roce_tune.tuner import compose

REPO = Path(__file__).resolve().parents[1]
Data = dict[str, Any]
Edit = Callable[[Data, random.Random], str]


# --------------------------------------------------------------------------------------------- reference


class _NoCache(dict[Any, Any]):
    """A dict that never holds anything (a memo turned off)."""

    def __setitem__(self, key: Any, value: Any) -> None:
        pass

    def get(self, key: Any, default: Any = None) -> Any:
        return default


@contextlib.contextmanager
def memos_off(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Every issue-16 memo and fast path turned off, for one plan."""
    with monkeypatch.context() as m:
        m.setattr(loader, "fast_parse", lambda text: None)
        m.setattr(compose, "REUSE_SHAPES", False)
        m.setattr(compose._Memo, "get", lambda self, key, make: make())
        real_init = compose._Memo.__init__

        def init(self: Any, *args: Any, **kwargs: Any) -> None:
            real_init(self, *args, **kwargs)
            self.nic_classes = _NoCache()

        m.setattr(compose._Memo, "__init__", init)
        m.setattr(templating, "_RENDERS", type(templating._RENDERS)())
        m.setattr(templating, "_keep", lambda key, text: text.split(templating.NAME_SLOT))  # nothing kept
        unique = itertools.count()
        m.setattr(host_platform, "_host_shape", lambda h: (next(unique),))
        yield


def _tree(out: Path) -> dict[str, Any]:
    """Everything a reader sees of a plan directory: the managed files, the version in force, the
    top-level entries and the files of the version directory (its manifest's file list without the
    stat fields, which differ between two writes)."""
    version = os.readlink(out / ".current")
    vdir = out / version
    listing = sorted(p.relative_to(vdir).as_posix() for p in vdir.rglob("*") if p.is_file())
    return {"files": read_tree(out), "version": version, "top": sorted(os.listdir(out)), "listing": listing}


def _plan(path: Path, out: Path | None) -> PlanResult | StageError:
    try:
        return plan_inventory(path, out, scorecards=False)
    except StageError as exc:
        return exc


def _failure(exc: StageError) -> tuple[str, list[str]]:
    return exc.stage, [f"{f.rule} {f.location} {f.message}" for f in exc.findings]


def _dump(data: Data) -> str:
    # leaf mappings and lists as one-line flow collections: the shape the fast reader's split path takes
    return yaml.safe_dump(data, sort_keys=False, default_flow_style=None, width=1 << 20)


def check_edit(inv: Path, previous_out: Path, tmp: Path, text: str, monkeypatch: pytest.MonkeyPatch) -> str:
    """Write ``text`` to ``inv`` (planned before into ``previous_out``), plan it both ways, compare; returns
    "ok" or "fails <stage>"."""
    before = _tree(previous_out)
    inv.write_text(text)
    fresh_out = tmp / f"fresh-{len(os.listdir(tmp))}"
    same = _plan(inv, previous_out)
    fresh = _plan(inv, fresh_out)
    with memos_off(monkeypatch):
        ref = _plan(inv, None)
    if isinstance(same, StageError):
        assert isinstance(fresh, StageError) and isinstance(ref, StageError)
        assert _failure(same) == _failure(fresh) == _failure(ref)
        assert _tree(previous_out) == before  # nothing half-written: the previous plan stays in force
        assert not fresh_out.exists()
        return f"fails {same.stage}"
    assert isinstance(fresh, PlanResult) and isinstance(ref, PlanResult), (fresh, ref)
    assert _tree(previous_out) == _tree(fresh_out)
    assert same.files == fresh.files
    diff = sorted(k for k in set(ref.files) | set(same.files) if ref.files.get(k) != same.files.get(k))
    assert not diff, f"memoised plan differs from the plan without memos in {diff[:10]}"
    assert same.files["plan.json"] == codec._plan_to_json_pydantic(same.plan)
    assert codec.plan_to_json(codec.plan_from_json(same.files["plan.json"])) == same.files["plan.json"]
    assert [f.rule for f in same.plan.findings] == [f.rule for f in ref.plan.findings]
    return "ok"


# ------------------------------------------------------------------------------------------------- edits


def _explode_ports(sw: Data) -> None:
    """Write ``sw``'s port ranges (``Ethernet[0-124/4]``) one port per entry, so one port can be edited."""
    ports = []
    for p in sw.get("ports", []):
        for name in expand_interface_pattern(p["name"]):
            ports.append({**p, "name": name})
    sw["ports"] = ports


def _some_port(data: Data, rng: random.Random) -> tuple[Data, Data]:
    sw = rng.choice([s for s in data["switches"] if s.get("ports")])
    _explode_ports(sw)
    return sw, rng.choice(sw["ports"])


def _cable(data: Data, rng: random.Random) -> str:
    things = [lk for lk in data.get("links", [])] + [n for h in data.get("hosts", []) for n in h["nics"]]
    obj = rng.choice(things)
    obj["cable_length"] = rng.choice(["1m", "2m", "3.5m", "7m", "30m", "50m", "100m", "300m"])
    return f"cable {obj.get('a') or obj.get('switch_port')} -> {obj['cable_length']}"


def _speed(data: Data, rng: random.Random) -> str:
    sw, port = _some_port(data, rng)
    port["speed"] = rng.choice(["100G", "200G", "400G", "800G"])
    port.pop("breakout", None) if rng.random() < 0.5 else None
    return f"speed {sw['name']}:{port['name']} -> {port['speed']}"


def _mtu(data: Data, rng: random.Random) -> str:
    sw, port = _some_port(data, rng)
    port["mtu"] = rng.choice([1500, 4200, 9000, 9100, 9216])
    return f"mtu {sw['name']}:{port['name']} -> {port['mtu']}"


def _admin(data: Data, rng: random.Random) -> str:
    sw, port = _some_port(data, rng)
    port["admin_up"] = not port.get("admin_up", True)
    return f"admin {sw['name']}:{port['name']} -> {port['admin_up']}"


def _move_nic(data: Data, rng: random.Random) -> str:
    nics = [n for h in data.get("hosts", []) for n in h["nics"] if n.get("switch_port")]
    if len(nics) < 2:
        return _cable(data, rng)
    a, b = rng.sample(nics, 2)
    a["switch_port"], b["switch_port"] = b["switch_port"], a["switch_port"]
    return f"swap NIC ports {a['switch_port']} <-> {b['switch_port']}"


def _remove_host(data: Data, rng: random.Random) -> str:
    if len(data.get("hosts", [])) < 2:
        return _cable(data, rng)
    h = data["hosts"].pop(rng.randrange(len(data["hosts"])))
    return f"remove host {h['name']}"


_PINS: list[tuple[str, object]] = [("kmin_bytes", 400000), ("kmax_bytes", 1500000), ("pmax_percent", 20),
                                   ("detection_ms", 300), ("cable_m", 40), ("xoff_bytes", 200000)]


def _override(data: Data, rng: random.Random) -> str:
    key, value = rng.choice(_PINS)
    scope: Data
    choice = rng.randrange(4)
    if choice == 0:
        sw, port = _some_port(data, rng)
        scope = {"device": sw["name"], "port": port["name"]}
    elif choice == 1:
        scope = {"device": rng.choice(data["switches"])["name"]}
    elif choice == 2:
        scope = {"role": rng.choice(sorted({s.get("role", "leaf") for s in data["switches"]}))}
    else:
        scope, key, value = {"role": "host"}, "rpg_time_reset_us", 600
    data.setdefault("policy", {}).setdefault("overrides", []).append({**scope, "set": {key: value}})
    return f"override {scope} {key}={value}"


_POLICY: list[tuple[str, list[object]]] = [
    ("mtu", [9100, 9216, 4200]), ("host_mtu", [4200, 9000]), ("roce_mtu", [1024, 4096]),
    ("pfc_watchdog", [True, False]), ("watchdog_action", ["drop", "forward", "alert"]),
    ("shared_headroom_pool", [True, False, None]), ("shp_oversubscription", [2, 8, 16]),
    ("target_utilisation", [0.8, 0.9]), ("objective", ["throughput", "latency", "balanced"]),
    ("nic_latency_us", ["1us", 3.0]), ("roce_dscp", [[26], [24]]), ("lossless_priorities", [[3], [3, 4]]),
]


def _policy(data: Data, rng: random.Random) -> str:
    key, values = rng.choice(_POLICY)
    value = rng.choice(values)
    data.setdefault("policy", {})[key] = value
    return f"policy {key} -> {value}"


def _rename(data: Data, rng: random.Random) -> str:
    if rng.random() < 0.5 and data.get("hosts"):
        h = rng.choice(data["hosts"])
        old, h["name"] = h["name"], h["name"] + "x"
        return f"rename host {old}"
    sw = rng.choice(data["switches"])
    old = sw["name"]
    new = sw["name"] = old + "-b"

    def moved(end: str) -> str:
        dev, sep, port = end.partition(":")
        return f"{new}:{port}" if sep and dev == old else end

    for lk in data.get("links", []):
        lk["a"], lk["b"] = moved(lk["a"]), moved(lk["b"])
    for h in data.get("hosts", []):
        for n in h["nics"]:
            if n.get("switch_port"):
                n["switch_port"] = moved(n["switch_port"])
    for o in data.get("policy", {}).get("overrides", []):
        if o.get("device") == old:
            o["device"] = new
    return f"rename switch {old} -> {new}"


FULL_EDITS: dict[str, Edit] = {
    "cable": _cable, "speed": _speed, "mtu": _mtu, "admin": _admin, "move-nic": _move_nic,
    "remove-host": _remove_host, "override": _override, "policy": _policy, "rename": _rename,
}


def _intent_edit(data: Data, rng: random.Random) -> str:
    """An edit of an intent-form inventory: the intent's own knobs, the policy or an override."""
    fabric = data["fabric"]
    kind = rng.randrange(5)
    if kind == 0 and fabric.get("hosts", 0) > 1:
        fabric["hosts"] -= 1
        return f"hosts -> {fabric['hosts']}"
    if kind == 1 and isinstance(fabric.get("host", {}).get("nic"), dict):
        fabric["host"]["nic"]["cable_length"] = rng.choice(["1m", "5m", "12m"])
        return f"host NIC cable -> {fabric['host']['nic']['cable_length']}"
    if kind == 2:
        role = rng.choice([r for r in ("leaf", "spine") if isinstance(fabric.get(r), dict)])
        fabric[role]["name"] = fabric[role]["name"] + "-b" if "{" in fabric[role]["name"] else "renamed-b"
        return f"rename {role}s"
    if kind == 3:
        key, value = rng.choice(_PINS)
        pins = data.setdefault("policy", {}).setdefault("overrides", [])
        pins.append({"role": "leaf", "set": {key: value}})
        return f"override leaf {key}={value}"
    return _policy(data, rng)


# ------------------------------------------------------------------------------------------------ driver


def _sources() -> dict[str, tuple[Data, bool]]:
    out: dict[str, tuple[Data, bool]] = {}
    for p in sorted((REPO / "inventories").glob("*.yaml")):
        out[p.stem] = (yaml.safe_load(p.read_text()), False)
    for p in sorted((REPO / "inventories" / "intent").glob("*.yaml")):
        if p.stem != "rail-500":  # 500 hosts: the slow sweep only
            out[f"intent-{p.stem}"] = (yaml.safe_load(p.read_text()), True)
    out["synthetic-32"] = (rail_optimised_fabric(32), False)
    out["synthetic-intent-64"] = (rail_optimised_intent(64), True)
    return out


SOURCES = _sources()


def run_edits(name: str, seed: int, n_edits: int, tmp: Path, monkeypatch: pytest.MonkeyPatch,
              data: Data | None = None, intent: bool | None = None) -> list[str]:
    """Plan ``name``'s inventory, then ``n_edits`` successive random edits of it (each planned both ways)."""
    if data is None:
        data, intent = SOURCES[name]
    rng = random.Random(f"{name}/{seed}")
    data = copy.deepcopy(data)
    inv, out = tmp / "fabric.yaml", tmp / "out"
    inv.write_text(_dump(data))
    first = _plan(inv, out)
    assert isinstance(first, PlanResult), _failure(first) if isinstance(first, StageError) else first
    log = []
    for _ in range(n_edits):
        edited = copy.deepcopy(data)
        if intent:
            what = _intent_edit(edited, rng)
        else:
            what = FULL_EDITS[rng.choice(sorted(FULL_EDITS))](edited, rng)
        result = check_edit(inv, out, tmp, _dump(edited), monkeypatch)
        log.append(f"{what}: {result}")
        if result == "ok":
            data = edited  # the next edit starts from the plan now in force
    return log


@pytest.mark.slow  # end-to-end (subprocesses/emulators), seconds each: .ci/run runs it (-m slow)
@pytest.mark.parametrize("name", sorted(SOURCES))
def test_single_edits_replan_like_a_fresh_plan_and_like_the_unmemoised_plan(
        name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    log = run_edits(name, 0, 3, tmp_path, monkeypatch)
    assert len(log) == 3


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(1, 9))
@pytest.mark.parametrize("name", sorted(SOURCES))
def test_single_edits_sweep(name: str, seed: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    log = run_edits(name, seed, 8, tmp_path, monkeypatch)
    assert sum(x.endswith(": ok") for x in log) >= 1, log


@pytest.mark.slow
def test_single_edits_of_the_500_host_intent(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    data = yaml.safe_load((REPO / "inventories" / "intent" / "rail-500.yaml").read_text())
    run_edits("rail-500", 0, 4, tmp_path, monkeypatch, data=data, intent=True)
