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


def _variants(sw: Any) -> dict[str, Any]:
    """Copies of a SONiC switch, each differing from it (under another name) in one fact the render key
    holds."""
    port = next(p for p in sw.ports if p.lossless and p.headroom is not None)
    i = sw.ports.index(port)

    def with_port(**update: object) -> Any:
        ports = [*sw.ports[:i], port.model_copy(update=update), *sw.ports[i + 1:]]
        return sw.model_copy(update={"ports": ports})

    hr = port.headroom
    # the key lists each distinct headroom once and each port's position in that list: ports that take
    # another port's headroom (one, or two swapping theirs) make another switch
    lossless = [k for k, p in enumerate(sw.ports) if p.lossless and p.headroom is not None]
    j = next((k for k in lossless if sw.ports[k].headroom != hr), None)

    def with_headrooms(moves: dict[int, int]) -> Any:
        return sw.model_copy(update={"ports": [
            p.model_copy(update={"headroom": sw.ports[moves[k]].headroom}) if k in moves else p
            for k, p in enumerate(sw.ports)]})

    moved = {} if j is None else {
        "headroom of another port": with_headrooms({i: j}),
        "headroom of another port, elsewhere": with_headrooms({lossless[1]: j}),
        "headrooms swapped": with_headrooms({i: j, j: i})}
    return {
        **moved,
        "twin": sw,
        "mtu": with_port(mtu=port.mtu - 100),
        "cable": with_port(cable_m=port.cable_m + 40),
        "lossy": with_port(lossless=False),
        "port name": with_port(name=port.name + "0"),
        "headroom": with_port(headroom=hr.model_copy(update={"xoff_bytes": hr.xoff_bytes + 1024})),
        "os_version": sw.model_copy(update={"os_version": "SONiC.202012.1"}),
        "buffer_model": sw.model_copy(update={
            "buffer_model": "dynamic" if sonic.buffer_model(sw) == "traditional" else "traditional"}),
        "watchdog": sw.model_copy(update={"watchdog": sw.watchdog.model_copy(
            update={"detection_ms": sw.watchdog.detection_ms + 100})}),
        "ecn": sw.model_copy(update={"ecn_profiles": [e.model_copy(update={"kmax_bytes": e.kmax_bytes + 1})
                                                      for e in sw.ecn_profiles]}),
    }


@pytest.mark.parametrize("inventory", ["mixed-vendor", "site"])
def test_sonic_render_keyed_on_facts_equals_the_render_of_its_own_context(inventory: str) -> None:
    # the SONiC renderer looks a switch up by render_facts before building its context: a switch differing
    # in any keyed fact gets its own text, the one a render from its own context gives
    plan = pipeline_plan(inventory)
    sw = next(s for s in plan.switches if s.platform == "sonic")
    templating._RENDERS.clear()
    sonic.render(plan, sw)
    texts = {}
    for what, variant in _variants(sw).items():
        other = variant.model_copy(update={"name": "other"})
        try:
            keyed = sonic.render(plan, other)["other.json"]
        except ValueError:
            continue  # a variant SONiC cannot express (e.g. a release without the chosen buffer model)
        model = sonic.buffer_model(other)
        release = sonic.sonic_release(other.os_version)
        meta = model if release is None or release >= sonic.BUFFER_MODEL_SINCE else None
        alone = sonic.serialise(sonic.config_db_tables(sonic.build_context(plan, other), meta))
        assert keyed == alone, what
        texts[what] = keyed
    assert "twin" in texts and len(texts) >= 8
    changed = [w for w, t in texts.items() if w != "twin" and t == texts["twin"]]
    assert changed == [], f"variants rendered like the original: {changed}"
    if inventory == "site":  # (its leaves: 3 m and 15 m ports, dynamic model: BUFFER_PG names the headroom)
        moved = {t for w, t in texts.items() if w.startswith("headroom of") or w.startswith("headrooms")}
        assert len(moved) == 3


def _host_variants(h: Any) -> list[Any]:
    """Copies of a host under other names, each differing from it in one fact of its data file's shape, or
    only in the slots (name, switch ports)."""
    nic = h.nics[0]

    def with_nic(name: str, **update: object) -> Any:
        return h.model_copy(update={"name": f"{h.name}-{name}",
                                    "nics": [nic.model_copy(update=update), *h.nics[1:]]})

    dq = nic.dcqcn
    key = sorted(dq.params)[0]
    return [
        h,
        with_nic("twin", switch_port="other-leaf:Ethernet99"),
        with_nic("mtu", mtu=nic.mtu - 100),
        with_nic("cable", cable_m=nic.cable_m + 7.5),
        with_nic("pfc", pfc_vector=[1 - v if i == 5 else v for i, v in enumerate(nic.pfc_vector)]),
        with_nic("netdev", netdev="ens99np0"),
        with_nic("pci", pci_address="0000:3b:00.1"),
        with_nic("unplugged", switch_port=None),
        with_nic("dcqcn", dcqcn=dq.model_copy(update={"params": {**dq.params, key: dq.params[key] + 1}})),
        with_nic("dscp", dscp_to_priority={**nic.dscp_to_priority, 26: 5}),
    ]


@pytest.mark.parametrize("inventory", ["mixed-vendor", "lab-2node"])
def test_host_files_rendered_per_shape_equal_each_hosts_own_render(inventory: str) -> None:
    # render_hosts renders one data file per host shape with the name and switch ports as slots: each
    # host's file is the one rendered from its own context, for hosts that differ in any fact of the shape
    from roce_tune.platforms import host as host_platform

    plan = pipeline_plan(inventory)
    hosts = [v for h in plan.hosts for v in _host_variants(h)]
    files = host_platform.render_hosts(plan, hosts)
    texts = [files[f"{h.name}.sh"] for h in hosts]
    assert texts == [host_platform.render_host_data(plan, h) for h in hosts]
    firsts = texts[:len(_host_variants(plan.hosts[0]))]
    assert len(set(firsts)) == len(firsts)
    first = plan.hosts[0]
    bad = first.model_copy(update={"name": "bad", "nics": [
        first.nics[0].model_copy(update={"switch_port": "leaf 1:Ethernet0"}), *first.nics[1:]]})
    with pytest.raises(ValueError, match="switch port"):
        host_platform.render_hosts(plan, [plan.hosts[0], bad])


def test_plan_md_lists_a_pinned_headroom_on_every_port_that_has_it() -> None:
    # _non_default looks at each distinct headroom object of a switch once; a pinned one is still listed
    # for every port that holds it, in port order, and an unpinned twin of it is not
    from roce_tune.render.review import _non_default

    plan = pipeline_plan("mixed-vendor")
    sw = next(s for s in plan.switches if any(p.headroom for p in s.ports))
    hr = next(p.headroom for p in sw.ports if p.headroom)
    assert hr is not None
    key = sorted(hr.rationale)[0]
    pinned = hr.model_copy(update={"rationale": {**hr.rationale, key: hr.rationale[key].model_copy(
        update={"pinned_by_user": True})}})
    holders = [p.name for p in sw.ports if p.headroom is hr][:2]
    ports = [p.model_copy(update={"headroom": pinned}) if p.name in holders else p for p in sw.ports]
    changed = plan.model_copy(update={"switches": [sw.model_copy(update={"ports": ports})]})
    lines = [ln for ln in _non_default(changed) if ln.startswith(f"- `{sw.name}:")]
    assert [ln.split("`")[1] for ln in lines] == [f"{sw.name}:{n}" for n in holders]
    assert all(f" {key} = " in ln for ln in lines)
    assert not [ln for ln in _non_default(plan) if ln.startswith(f"- `{sw.name}:")]


@pytest.mark.parametrize("inventory", ["mixed-vendor", "site"])
def test_plan_md_lists_the_same_values_whether_switches_share_their_sections_or_not(inventory: str) -> None:
    # _non_default makes the lines of an ECN profile or watchdog object once (a repeat adds only keys already
    # listed): switches holding equal copies instead, or one watchdog under other platforms, list the same
    from roce_tune.render.review import _non_default, render_review

    plan = pipeline_plan(inventory)
    copies = plan.model_copy(update={"switches": [
        sw.model_copy(update={"ecn_profiles": [e.model_copy() for e in sw.ecn_profiles],
                              "watchdog": sw.watchdog.model_copy(update={"poll_ms": 150})})
        for sw in plan.switches]})
    shared_wd = copies.switches[0].watchdog
    shared = copies.model_copy(update={"switches": [
        sw.model_copy(update={"watchdog": shared_wd, "ecn_profiles": copies.switches[0].ecn_profiles})
        for sw in copies.switches]})
    alone = copies.model_copy(update={"switches": [
        sw.model_copy(update={"watchdog": shared_wd.model_copy(), "ecn_profiles": [
            e.model_copy() for e in copies.switches[0].ecn_profiles]}) for sw in copies.switches]})
    for a, b in ((plan, plan.model_copy(update={"switches": [s.model_copy() for s in plan.switches]})),
                 (shared, alone)):
        assert _non_default(a) == _non_default(b) and render_review(a) == render_review(b)
    platforms = {sw.platform for sw in plan.switches}
    listed = [ln for ln in _non_default(shared) if ln.startswith("- watchdog (")]
    assert {ln.split("(")[1].split(",")[0] for ln in listed} == platforms
