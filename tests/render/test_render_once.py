"""Each distinct switch is rendered once (issue 16): devices whose files differ only in their name share
one render, and the text is byte for byte what a render of that device alone gives."""

from __future__ import annotations

from typing import Any

import pytest

from roce_tune.platforms import get_platform, sonic, templating

from .golden import pipeline_plan


@pytest.fixture()
def counted(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every render made (Jinja: platform/template; SONiC, built as data: its CONFIG_DB tables), with an empty
    render cache."""
    calls: list[str] = []
    real, real_db = templating.render_template, sonic.config_db_tables

    def counting(platform: str, template: str, **context: object) -> str:
        calls.append(f"{platform}/{template}")
        return real(platform, template, **context)

    def counting_db(ctx: dict[str, Any], buffer_model: str | None = None) -> dict[str, Any]:
        calls.append("sonic/config_db")
        return real_db(ctx, buffer_model)

    monkeypatch.setattr(templating, "render_template", counting)
    monkeypatch.setattr(sonic, "config_db_tables", counting_db)
    templating._RENDERS.clear()
    return calls


@pytest.mark.parametrize("platform", ["sonic", "eos", "junos", "nxos", "cumulus"])
def test_a_twin_switch_is_rendered_once_and_named_right(platform: str, counted: list[str]) -> None:
    plan = pipeline_plan("mixed-vendor")
    sw = next(s for s in plan.switches if s.platform == platform)
    twin = sw.model_copy(update={"name": "twin-of-" + sw.name})
    module = get_platform(platform)
    first = module.render(plan, sw)
    renders = len(counted)
    second = module.render(plan, twin)
    assert len(counted) == renders, "the twin was rendered again"
    templating._RENDERS.clear()
    alone = module.render(plan, twin)  # rendered on its own, nothing shared
    assert second == alone
    assert all(text.replace(sw.name, "twin-of-" + sw.name) == second[name.replace(sw.name,
                                                                                  "twin-of-" + sw.name)]
               for name, text in first.items() if sw.name in text)


def test_switches_that_differ_are_not_shared(counted: list[str]) -> None:
    plan = pipeline_plan("mixed-vendor")
    sw = next(s for s in plan.switches if s.platform == "sonic")
    port = sw.ports[0]
    longer = sw.model_copy(update={"name": "other", "ports": [port.model_copy(update={"cable_m": port.cable_m
                                                                                      + 40}),
                                                              *sw.ports[1:]]})
    sonic.render(plan, sw)
    text = sonic.render(plan, longer)["other.json"]
    assert len(counted) == 2
    templating._RENDERS.clear()
    assert sonic.render(plan, longer)["other.json"] == text


def test_the_name_is_filled_in_where_the_template_prints_it() -> None:
    templating._RENDERS.clear()
    out = [templating.render_once("test/kind", name, {"header": {"switch": name, "n": 1}},
                                  ("header", "switch"),
                                  lambda ctx: f"switch {ctx['header']['switch']} n={ctx['header']['n']}\n")
           for name in ("leaf1", "leaf10")]
    assert out == ["switch leaf1 n=1\n", "switch leaf10 n=1\n"]
    assert len([k for k in templating._RENDERS if k[0] == "test/kind"]) == 1


def test_plan_md_lists_shared_dcqcn_values_once_and_each_pin_per_host() -> None:
    from roce_tune.render.review import _non_default

    plan = pipeline_plan("lab-2node")
    h = plan.hosts[0]
    twin = h.model_copy(update={"name": "node2"})  # the same DCQCN objects: listed once
    lines = _non_default(plan.model_copy(update={"hosts": [h, twin]}))
    assert lines == _non_default(plan.model_copy(update={"hosts": [h]})) and any("DCQCN" in ln
                                                                                 for ln in lines)
    dq = h.nics[0].dcqcn
    key = sorted(dq.rationale)[0]
    pinned = dq.model_copy(update={"rationale": {**dq.rationale,
                                                 key: dq.rationale[key].model_copy(
                                                     update={"pinned_by_user": True})}})
    nics = [n.model_copy(update={"dcqcn": pinned}) for n in h.nics]
    hosts = [h.model_copy(update={"name": name, "nics": nics}) for name in ("node1", "node2")]
    lines = _non_default(plan.model_copy(update={"hosts": hosts}))
    assert [ln for ln in lines if f"{key} = " in ln and "pinned by user on node1" in ln]
    assert [ln for ln in lines if f"{key} = " in ln and "pinned by user on node2" in ln]


def _plain(value: object, where: str) -> list[str]:
    """Paths in ``value`` holding something other than plain data (whose ``repr`` may hide a field)."""
    if isinstance(value, dict):
        return [p for k, v in value.items() for p in _plain(k, where) + _plain(v, f"{where}.{k}")]
    if isinstance(value, list | tuple):
        return [p for i, v in enumerate(value) for p in _plain(v, f"{where}[{i}]")]
    return [] if value is None or type(value) in (str, int, float, bool) else [f"{where}: "
                                                                               f"{type(value).__name__}"]


@pytest.mark.parametrize("inventory", ["mixed-vendor", "site", "spectrum-x-su"])
def test_switch_contexts_are_plain_data_so_the_render_key_sees_every_value(inventory: str) -> None:
    # render_once keys a render by repr(context): an object whose repr left out a printed field could make
    # two different switches share one text.
    plan = pipeline_plan(inventory)
    for sw in plan.switches:
        assert _plain(get_platform(sw.platform).build_context(plan, sw), sw.name) == []
