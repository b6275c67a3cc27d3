"""Read-back equals plan: every switch of every shipped inventory (and variants) is rendered, each file is
read back with its platform's ``read_back`` and compared with the plan (issue 12, item 1).

Per switch:

* ``differences(expressible_qos(plan, sw), read_back(text)) == []`` — the file says what the plan says,
  in the platform's units (``expressible_qos`` is the plan projected onto what the syntax can carry);
* every field the platform expresses (``READBACK_FIELDS``) is read back wherever the plan has it;
* every place where the platform's syntax changes or drops a plan value
  (``differences(expected_qos, expressible_qos, lost=True)``) is announced by an RT240/RT241 finding of
  ``render_findings`` that names it — never a silent difference.

Planted errors (wrong Kmax, PFC on the wrong priority, a missing DSCP map entry, a different MTU) in the
rendered text must make the comparison fail.
"""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

import pytest

from roce_tune.inventory.loader import load_inventory
from roce_tune.pipeline import derive_plan
from roce_tune.plan import Plan, SwitchPlan
from roce_tune.platforms import SWITCH_PLATFORMS, get_platform
from roce_tune.qos import differences, expected_qos, missing_fields
from tests.render.golden import REPO, pipeline_plan

SHIPPED = sorted(
    [p.stem for p in (REPO / "inventories").glob("*.yaml")]
    + [f"intent/{p.stem}" for p in (REPO / "inventories" / "intent").glob("*.yaml")]
)

#: field of a changed path -> words an RT240/RT241 finding about it must contain (any of them)
FINDING_WORDS: dict[str, tuple[str, ...]] = {
    "mtu": ("MTU",),
    "cable_m": ("cable",),
    "pfc_priorities": ("PFC",),
    "kmin_bytes": ("Kmin", "ECN"),
    "kmax_bytes": ("Kmax", "ECN"),
    "pmax_percent": ("Pmax",),
    "kmin_percent": ("Kmin", "fill"),
    "kmax_percent": ("Kmax", "fill"),
    "drop_min_bytes": ("drop",),
    "drop_max_bytes": ("drop",),
    "drop_probability_percent": ("drop",),
    "detection_ms": ("detection",),
    "restoration_ms": ("restoration", "recovery"),
    "poll_ms": ("poll",),
    "action": ("action",),
    "watchdog": ("watchdog",),
    "headroom": ("headroom",),
    "xon_bytes": ("headroom", "xon"),
    "xoff_bytes": ("headroom", "xoff"),
    "size_bytes": ("headroom",),
    "static_buffer_bytes": ("headroom",),
    "pause_threshold_bytes": ("headroom", "pause"),
    "resume_threshold_bytes": ("headroom", "resume"),
    "schedulers": ("scheduler",),
    "weight_percent": ("scheduler", "weight"),
    "ecn": ("ECN",),
    "port-missing": ("not named",),
    "dscp_to_tc": ("DSCP",),
    "tc_to_queue": ("traffic class", "queue"),
    "tc_to_pg": ("PG", "priority group"),
}


def _field_of(diff_line: str) -> str:
    path = diff_line.split(":", 1)[0]
    if re.fullmatch(r"ports\[[^]]+\]", path) and diff_line.endswith(": missing"):
        return "port-missing"
    words = [w for w in re.split(r"[.\[\]]", path) if w and not w.lstrip("-").isdigit()]
    named = [w for w in words if w in FINDING_WORDS]
    return named[-1] if named else path


def _text_for_readback(platform: str, files: dict[str, str]) -> str:
    """The file a platform's read_back takes (Cumulus: the ``nv set`` script, not the YAML patch)."""
    if platform == "cumulus":
        return next(t for n, t in files.items() if n.endswith(".nvue.sh"))
    assert len(files) == 1, sorted(files)
    return next(iter(files.values()))


def check_switch(plan: Plan, sw: SwitchPlan) -> list[str]:
    """Every failure of the read-back contract for one switch (empty = passes)."""
    mod = get_platform(sw.platform)
    text = _text_for_readback(sw.platform, mod.render(plan, sw))
    seen = mod.read_back(text)
    want = mod.expressible_qos(plan, sw)
    out = [f"{sw.name}: read-back differs: {d}" for d in differences(want, seen)]
    out += [
        f"{sw.name}: expressed field not read back: {m}"
        for m in missing_fields(seen, want, mod.READBACK_FIELDS)
    ]
    findings = [
        f
        for f in (getattr(mod, "render_findings", lambda p, s: [])(plan, sw))
        if f.rule in ("RT240", "RT241")
    ]
    by_design: dict[str, str] = mod.READBACK_BY_DESIGN
    for d in differences(expected_qos(plan.classification, sw), want, lost=True):
        field = _field_of(d)
        top = re.split(r"[.\[:]", d, maxsplit=1)[0]
        if (top in by_design or field in by_design) and d.endswith("!= None"):
            continue  # a field the platform has no statement for (reason in READBACK_BY_DESIGN)
        words = FINDING_WORDS.get(field, (field,))
        if not any(any(w.lower() in f.message.lower() for w in words) for f in findings):
            out.append(f"{sw.name}: plan value changed by {sw.platform} without an RT240/RT241 finding: {d}")
    return out


def _unique_failures(fails: list[str], limit: int = 40) -> str:
    return "\n".join(fails[:limit]) + (f"\n... {len(fails) - limit} more" if len(fails) > limit else "")


@pytest.mark.parametrize("inventory", SHIPPED)
def test_readback_equals_plan_for_every_shipped_switch(inventory: str) -> None:
    plan = pipeline_plan(inventory)
    fails = [f for sw in plan.switches for f in check_switch(plan, sw)]
    assert not fails, _unique_failures(fails)


# --- variants: cable lengths, watchdog, SONiC ASICs ---------------------------------------------------
def _derive(text: str, tmp: Path, name: str) -> Plan:
    path = tmp / f"{name}.yaml"
    path.write_text(text, encoding="utf-8")
    return derive_plan(load_inventory(str(path)))


def _policy(text: str, lines: str) -> str:
    """Insert ``lines`` (already indented two spaces) right after ``policy:``."""
    assert "\npolicy:\n" in text
    return text.replace("\npolicy:\n", f"\npolicy:\n{lines}", 1)


MIXED = (REPO / "inventories" / "mixed-vendor.yaml").read_text(encoding="utf-8")


@cache
def _variant_texts() -> dict[str, str]:
    cables = MIXED.replace("cable_length: 20m", "cable_length: 40m").replace(
        "cable_length: 3m", "cable_length: 5m"
    )
    out = {
        "cables-5m-40m": cables,
        "cables-fractional": MIXED.replace("cable_length: 20m", "cable_length: 12.5m"),
    }
    for action in ("drop", "forward", "alert"):
        out[f"watchdog-{action}"] = _policy(
            MIXED,
            f"  watchdog_action: {action}\n  overrides:\n"
            "    - set: {detection_ms: 400, restoration_ms: 600, poll_ms: 200}\n",
        )
    out["sonic-mellanox-sn4700"] = MIXED.replace("model: DellEMC-Z9332f", "model: SN4700")
    return out


#: (platform, variant) pairs the platform refuses at render (RT240 in render_outputs), with the reason
REFUSED = {
    ("cumulus", "watchdog-forward"): "Cumulus PFC watchdog can only drop",
    ("cumulus", "watchdog-alert"): "Cumulus PFC watchdog can only drop",
}


@pytest.mark.parametrize(
    "variant",
    [
        "cables-5m-40m",
        "cables-fractional",
        "watchdog-drop",
        "watchdog-forward",
        "watchdog-alert",
        "sonic-mellanox-sn4700",
    ],
)
def test_readback_equals_plan_for_variants(variant: str, tmp_path: Path) -> None:
    text = _variant_texts()[variant]
    assert text != MIXED
    plan = _derive(text, tmp_path, variant)
    fails = []
    for sw in plan.switches:
        reason = REFUSED.get((sw.platform, variant))
        if reason is not None:
            with pytest.raises(ValueError, match=reason):
                get_platform(sw.platform).render(plan, sw)
            continue
        fails += check_switch(plan, sw)
    assert not fails, _unique_failures(fails)
    if variant == "cables-5m-40m":
        assert {p.cable_m for sw in plan.switches for p in sw.ports} == {5.0, 40.0}
    if variant == "cables-fractional":
        assert 12.5 in {p.cable_m for sw in plan.switches for p in sw.ports}
    if variant.startswith("watchdog-"):
        assert {
            (sw.watchdog.action, sw.watchdog.detection_ms, sw.watchdog.restoration_ms, sw.watchdog.poll_ms)
            for sw in plan.switches
        } == {(variant.split("-")[1], 400, 600, 200)}
    if variant == "sonic-mellanox-sn4700":
        assert {sw.asic for sw in plan.switches if sw.platform == "sonic"} == {"spectrum-3"}


def test_variant_sonic_broadcom_is_the_shipped_mixed_vendor() -> None:
    """The Broadcom SONiC case (DellEMC-Z9332f, Tomahawk-3) is in the shipped mixed-vendor inventory."""
    plan = pipeline_plan("mixed-vendor")
    assert {sw.model for sw in plan.switches if sw.platform == "sonic"} == {"DellEMC-Z9332f"}
    assert not [f for sw in plan.switches if sw.platform == "sonic" for f in check_switch(plan, sw)]


def test_every_switch_platform_has_a_read_back() -> None:
    for name in SWITCH_PLATFORMS:
        mod = get_platform(name)
        assert callable(mod.read_back) and callable(mod.expressible_qos), name
        assert mod.READBACK_FIELDS and isinstance(mod.READBACK_FIELDS, frozenset), name
        assert all(why for why in mod.READBACK_BY_DESIGN.values()), name
        assert not set(mod.READBACK_BY_DESIGN) & set(mod.READBACK_FIELDS), name
