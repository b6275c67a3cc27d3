"""plan.json schema 1.2/1.3 (issue 16 item 6): port rationale (1.2) and a host's NCCL rationale (1.3) shared
like the other sections, compact encoding, and the files older roce-tune versions wrote (1.0 inline, 1.1
indented with shared sections, 1.2 with the NCCL rationale on every host) still load."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from roce_tune.inventory.loader import load_inventory
from roce_tune.pipeline import derive_plan
from roce_tune.plan import (
    PLAN_SCHEMA_VERSION,
    Plan,
    PortPlan,
    Rationale,
    plan_from_json,
    plan_to_json,
    resolve_shared,
)

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def plan() -> Plan:
    return derive_plan(load_inventory(REPO / "inventories" / "intent" / "spectrum-x-su.yaml"))


def test_port_rationale_is_written_once_per_class_and_the_file_is_compact(plan: Plan) -> None:
    text = plan_to_json(plan)
    assert "\n" not in text[:-1] and text.endswith("}\n")  # one line: no indentation
    doc = json.loads(text)
    assert doc["schema_version"] == PLAN_SCHEMA_VERSION == "1.3"
    refs = [p["rationale"]["$ref"] for s in doc["switches"] for p in s["ports"]]
    assert refs and all(r.startswith("#/shared/PortRationale/") for r in refs)
    distinct = {json.dumps({k: v.model_dump() for k, v in p.rationale.items()}, sort_keys=True)
                for s in plan.switches for p in s.ports}
    assert len(doc["shared"]["PortRationale"]) == len(distinct) < len(refs) / 10
    back = plan_from_json(text)
    assert back == plan and plan_to_json(back) == text
    whys = [r for s in back.switches for p in s.ports for r in p.rationale.values()]
    per_port = max(len(p.rationale) for s in back.switches for p in s.ports)  # fan_in, cable_m, mtu
    assert len({id(r) for r in whys}) <= per_port * len(distinct)  # validated once per shared section


def _as_1_1(text: str) -> str:
    """The same plan as roce-tune wrote schema 1.1: indented, port rationale inline on every port."""
    doc = json.loads(text)
    shared = doc["shared"].pop("PortRationale")
    for s in doc["switches"]:
        for p in s["ports"]:
            p["rationale"] = shared[p["rationale"]["$ref"].rsplit("/", 1)[1]]
    doc["schema_version"] = "1.1"
    return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"


def _as_1_2(text: str) -> str:
    """The same plan as roce-tune wrote schema 1.2: the NCCL rationale inline on every host."""
    doc = json.loads(text)
    shared = doc["shared"].pop("NcclRationale")
    for h in doc["hosts"]:
        h["nccl_rationale"] = shared[h["nccl_rationale"]["$ref"].rsplit("/", 1)[1]]
    doc["schema_version"] = "1.2"
    return json.dumps(doc, separators=(",", ":")) + "\n"


def test_the_nccl_rationale_is_written_once_per_distinct_map(plan: Plan) -> None:
    # schema 1.3: hosts with the same NICs and policy share one NCCL rationale (5 KB x 4,096 hosts = 21 of the
    # 81 MB of a 4,096-host plan.json in 1.2)
    text = plan_to_json(plan)
    doc = json.loads(text)
    refs = [h["nccl_rationale"]["$ref"] for h in doc["hosts"]]
    assert len(refs) == len(plan.hosts) > 1 and all(r.startswith("#/shared/NcclRationale/") for r in refs)
    distinct = {json.dumps({k: r.model_dump() for k, r in h.nccl_rationale.items()}) for h in plan.hosts}
    assert len(doc["shared"]["NcclRationale"]) == len(distinct) == 1
    section = doc["shared"]["NcclRationale"][refs[0].rsplit("/", 1)[1]]
    assert section == {k: r.model_dump(mode="json") for k, r in plan.hosts[0].nccl_rationale.items()}
    assert len(text) < len(_as_1_2(text)) - (len(plan.hosts) - 1) * len(json.dumps(section)) * 0.9
    # the pydantic serializer (used for a plan holding values of types the fast writer does not take) agrees
    from roce_tune.plan.codec import _Interner
    from roce_tune.plan.model import _INTERN
    interner = _Interner()
    dumped = [h.model_dump(mode="json", context={_INTERN: interner}) for h in plan.hosts]
    assert [h["nccl_rationale"] for h in dumped] == [{"$ref": r} for r in refs]


def test_older_files_load_as_the_same_plan(plan: Plan) -> None:
    text = plan_to_json(plan)
    old = _as_1_1(text)
    assert '"PortRationale"' not in old and '"schema_version": "1.1"' in old
    back = plan_from_json(old)
    assert back == plan and back.schema_version == PLAN_SCHEMA_VERSION
    assert plan_to_json(back) == text  # rewritten in the current encoding
    one_2 = _as_1_2(text)
    assert '"NcclRationale"' not in one_2 and '"schema_version":"1.2"' in one_2
    back = plan_from_json(one_2)
    assert back == plan and plan_to_json(back) == text
    assert len({id(h.nccl_rationale) for h in back.hosts}) == 1  # equal inline maps: one object
    inline = plan.model_copy(update={"schema_version": "1.0"}).model_dump_json(indent=2)
    assert plan_from_json(inline) == plan


def test_a_newer_file_is_a_clear_error(plan: Plan) -> None:
    doc = json.loads(plan_to_json(plan))
    for newer in ("1.4", "2.0"):
        doc["schema_version"] = newer
        with pytest.raises(ValueError,
                           match=rf"schema {newer} was written by a newer roce-tune.*reads schema "
                                             r"1\.0 to 1\.3"):
            plan_from_json(json.dumps(doc))
    with pytest.raises(ValueError, match="plan.json: not JSON"):
        plan_from_json('{"schema_version": "1.2", ')


def test_a_broken_shared_port_rationale_names_its_reference(plan: Plan) -> None:
    doc = json.loads(plan_to_json(plan))
    name = next(iter(doc["shared"]["PortRationale"]))
    doc["shared"]["PortRationale"][name] = {"fan_in": {"formula": 3}}
    with pytest.raises(ValueError, match=f"shared section '#/shared/PortRationale/{name}'"):
        plan_from_json(json.dumps(doc))


def test_shared_maps_load_as_one_object_per_section(plan: Plan) -> None:
    # plan_from_json validates each shared map once and puts that one object in every port/NIC referring to
    # it (as the tuner's plan holds them), instead of a validated copy per port and NIC
    text = plan_to_json(plan)
    doc = json.loads(text)
    back = plan_from_json(text)
    assert back == plan and plan_to_json(back) == text
    for kind, maps in (("PortRationale", [p.rationale for s in back.switches for p in s.ports]),
                       ("NicRationale", [n.rationale for h in back.hosts for n in h.nics]),
                       ("NicDscpToPriority", [n.dscp_to_priority for h in back.hosts for n in h.nics])):
        assert maps and len({id(m) for m in maps}) == len(doc["shared"][kind]), kind
    assert all(type(k) is int for n in back.hosts[0].nics for k in n.dscp_to_priority)


def test_equal_nccl_rationales_load_as_one_object(plan: Plan) -> None:
    # hosts with the same RDMA NICs hold one NCCL rationale map in the tuner's plan; plan_from_json validates
    # each distinct map once and gives every host with that JSON the one object (issue 16: 4,096 hosts)
    text = plan_to_json(plan)
    back = plan_from_json(text)
    assert back == plan and plan_to_json(back) == text
    distinct = {json.dumps({k: r.model_dump() for k, r in h.nccl_rationale.items()}) for h in plan.hosts}
    maps = [h.nccl_rationale for h in back.hosts]
    assert len(maps) > len(distinct) and len({id(m) for m in maps}) == len(distinct)
    assert all(type(r) is Rationale for m in maps for r in m.values())


def test_an_invalid_nccl_rationale_is_reported_where_it_stands(plan: Plan) -> None:
    # the map validated once for many hosts: a broken one (alone, or equal in several hosts) still names the
    # host and key it is in; a broken reference in one still names the reference
    text = plan_to_json(plan)
    doc = json.loads(text)
    name = doc["hosts"][0]["nccl_rationale"]["$ref"].rsplit("/", 1)[1]
    first = next(iter(doc["shared"]["NcclRationale"][name]))
    del doc["shared"]["NcclRationale"][name][first]["source"]  # schema 1.3: the shared section names itself
    with pytest.raises(ValueError, match=rf"shared section '#/shared/NcclRationale/{name}': "
                                         rf"rationale of '{first}'(.|\n)*source"):
        plan_from_json(json.dumps(doc))
    doc = json.loads(_as_1_2(text))  # inline maps (schema 1.2)
    last = len(doc["hosts"]) - 1
    key = next(iter(doc["hosts"][last]["nccl_rationale"]))
    del doc["hosts"][last]["nccl_rationale"][key]["source"]
    with pytest.raises(ValueError, match=rf"hosts\.{last}\.nccl_rationale\.{key}\.source"):
        plan_from_json(json.dumps(doc))
    for host in doc["hosts"]:
        host["nccl_rationale"] = doc["hosts"][last]["nccl_rationale"]
    with pytest.raises(ValueError, match=rf"hosts\.0\.nccl_rationale\.{key}\.source"):
        plan_from_json(json.dumps(doc))
    doc["hosts"][1]["nccl_rationale"] = {key: {"$ref": "#/shared/Nowhere/x"}}
    with pytest.raises(ValueError, match="does not name a section"):
        plan_from_json(json.dumps(doc))
    doc["hosts"][1]["nccl_rationale"] = doc["hosts"][2]["nccl_rationale"]
    deep: object = {"formula": "f", "source": "s"}
    for _ in range(300):  # deeper than orjson writes (its limit is 255): validated where it stands
        deep = [deep]
    doc["hosts"][0]["nccl_rationale"] = {key: deep}
    with pytest.raises(ValueError, match=r"hosts\.0\.nccl_rationale"):
        plan_from_json(json.dumps(doc))


def test_ports_and_nics_of_one_class_load_as_full_validation_gives_them(plan: Plan) -> None:
    # a port (NIC) whose JSON equals an earlier one's but for its own values (name, peer; a NIC's names, port,
    # PCI address, rail, switch port) is a copy of the validated one: the plan must be what validating every
    # port gives, own values of an odd type included (validated: a bool port number becomes 1)
    doc = json.loads(plan_to_json(plan))
    last = len(doc["hosts"]) - 1
    doc["hosts"][last]["nics"][0].update(rdma_port=True, rail=None, pci_address="0000:3b:00.0")
    doc["switches"][-1]["ports"][0].update(peer=None, name="Ethernet999")
    text = json.dumps(doc)
    back = plan_from_json(text)
    resolved = resolve_shared(json.loads(text))
    assert back == Plan.model_validate(resolved)
    nic = back.hosts[last].nics[0]
    assert (nic.rdma_port, type(nic.rdma_port), nic.rail, nic.pci_address) == (1, int, None, "0000:3b:00.0")
    assert back.switches[-1].ports[0].peer is None and back.switches[-1].ports[0].name == "Ethernet999"
    port_classes = {id(p.headroom) for s in back.switches for p in s.ports}
    assert len(port_classes) < len([p for s in back.switches for p in s.ports])


def test_an_own_value_of_a_wrong_type_is_reported_where_it_stands(plan: Plan) -> None:
    # an own value that is neither a str, an int nor None is validated where it stands, not copied
    text = plan_to_json(plan)
    for change, where in ((lambda d: d["switches"][-1]["ports"][-1].update(name=7), r"ports\.\d+\.name"),
                          (lambda d: d["switches"][-1]["ports"][0].update(peer=["x"]), r"ports\.0\.peer"),
                          (lambda d: d["hosts"][-1]["nics"][-1].update(netdev=None), r"nics\.\d+\.netdev"),
                          (lambda d: d["hosts"][-1]["nics"][0].update(rail="zero"), r"nics\.0\.rail"),
                          (lambda d: d["hosts"][-1]["nics"][0].pop("switch_port"), r"nics\.0\.switch_port"),
                          (lambda d: d["switches"][-1]["ports"][0].update(hue=1), r"ports\.0\.hue")):
        doc = json.loads(text)
        change(doc)
        with pytest.raises(ValueError, match=where):
            plan_from_json(json.dumps(doc))


def test_a_shared_map_of_the_wrong_kind_or_content_is_refused(plan: Plan) -> None:
    text = plan_to_json(plan)

    def broken(change) -> str:  # type: ignore[no-untyped-def]
        doc = json.loads(text)
        change(doc)
        return json.dumps(doc)

    def first_nic(doc):  # type: ignore[no-untyped-def]
        return doc["hosts"][0]["nics"][0]

    def dscp_map(doc):  # type: ignore[no-untyped-def]
        return doc["shared"]["NicDscpToPriority"][next(iter(doc["shared"]["NicDscpToPriority"]))]

    headroom = json.loads(text)["switches"][0]["ports"][0]["headroom"]
    cases = {  # what is changed -> what the error says
        "wrong kind": (lambda d: d["switches"][0]["ports"][0].update(rationale=headroom), "rationale"),
        "bad map": (lambda d: dscp_map(d).update({"26": "three"}), "NicDscpToPriority"),
        "no section": (lambda d: first_nic(d).update(
            dscp_to_priority={"$ref": "#/shared/NicDscpToPriority/x"}), "does not name a section"),
    }
    for what, (change, message) in cases.items():
        with pytest.raises(ValueError, match=message):
            plan_from_json(broken(change))
        assert what


SHIPPED = sorted(p.relative_to(REPO).as_posix() for p in (REPO / "inventories").rglob("*.yaml"))


@pytest.mark.parametrize("inventory", SHIPPED)
def test_the_orjson_writer_writes_the_bytes_pydantic_writes(inventory: str) -> None:
    # plan_to_json writes switches and hosts with orjson; pydantic's serializer alone is the reference
    from roce_tune.plan.codec import _plan_to_json_pydantic

    try:
        plan = derive_plan(load_inventory(REPO / inventory))
    except Exception as exc:  # noqa: BLE001 (an inventory that is refused on purpose: nothing to write)
        pytest.skip(f"{inventory} does not plan: {exc}")
    assert plan_to_json(plan) == _plan_to_json_pydantic(plan)
    back = plan_from_json(plan_to_json(plan))
    assert plan_to_json(back) == _plan_to_json_pydantic(back)


def test_values_orjson_would_print_otherwise_are_written_by_pydantic(plan: Plan) -> None:
    # an int in a float field (3 -> 3.0), a bool in an int field or list (True -> 1), keys out of field
    # order, an empty rationale: each such object is left to pydantic, so the bytes stay the same
    from roce_tune.plan.codec import _plan_to_json_pydantic

    sw = plan.switches[0]
    port = sw.ports[0]
    odd_ports = [
        PortPlan.model_construct(**{**port.__dict__, "cable_m": 3}),
        PortPlan.model_construct(**{**port.__dict__, "fan_in": True}),
        PortPlan.model_construct(**{**port.__dict__, "pfc_priorities": [True]}),
        port.model_copy(update={"rationale": {}}),
    ]
    shuffled = port.model_copy()
    object.__setattr__(shuffled, "__dict__", dict(reversed(list(port.__dict__.items()))))
    odd_ports.append(shuffled)
    nic = plan.hosts[0].nics[0]
    odd_nic = nic.model_copy(update={"cable_m": 7, "pfc_vector": [0, 0, 0, True, 0, 0, 0, 0]})
    host = plan.hosts[0].model_copy(update={"nics": [odd_nic, *plan.hosts[0].nics[1:]],
                                            "credentials": {"password_env": 5}})
    odd = plan.model_copy(update={
        "switches": [sw.model_copy(update={"ports": [*odd_ports, *sw.ports[1:]]}), *plan.switches[1:]],
        "hosts": [host, *plan.hosts[1:]]})
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # pydantic warns about the off-type values it is given
        text = plan_to_json(odd)
        assert text == _plan_to_json_pydantic(odd)
    assert '"cable_m":3.0' in text and '"fan_in":1' in text


def _odd_ports(port: PortPlan) -> list[PortPlan]:
    """Copies of ``port`` that orjson would print otherwise than pydantic (or that are not a PortPlan)."""

    class Sub(PortPlan):
        pass

    shuffled = port.model_copy()
    object.__setattr__(shuffled, "__dict__", dict(reversed(list(port.__dict__.items()))))
    return [PortPlan.model_construct(**{**port.__dict__, "cable_m": 3}),
            PortPlan.model_construct(**{**port.__dict__, "fan_in": True}),
            PortPlan.model_construct(**{**port.__dict__, "pfc_priorities": [*port.pfc_priorities, True]}),
            PortPlan.model_construct(**{**port.__dict__, "peer": 7}),
            Sub.model_construct(**port.__dict__), shuffled]


def test_the_plan_wide_check_agrees_with_each_objects_own(plan: Plan) -> None:
    # the writer checks all ports (NICs) of a plan at once (all_fit) and then skips each one's own check:
    # one odd object anywhere among them must fail the whole check, as it fails its own
    from roce_tune.plan.jsonwrite import _NIC, _PORT, NicPlan, _ints

    ports = [p for sw in plan.switches for p in sw.ports]
    port = next(p for p in ports if p.pfc_priorities)
    assert _PORT.all_fit(PortPlan, ports, "pfc_priorities") and _PORT.all_fit(PortPlan, [], "pfc_priorities")
    for odd in _odd_ports(port):
        own = type(odd) is PortPlan and _PORT.fits(odd.__dict__) and _ints(odd.__dict__["pfc_priorities"])
        assert not own and not _PORT.all_fit(PortPlan, [*ports[:3], odd, *ports[3:]], "pfc_priorities")
    nics = [n for h in plan.hosts for n in h.nics]
    nic = nics[0]
    assert _NIC.all_fit(NicPlan, nics, "pfc_vector")
    for update in ({"cable_m": 7}, {"pfc_vector": [*nic.pfc_vector[:-1], True]}, {"rail": "0"}):
        assert not _NIC.all_fit(NicPlan, [*nics, nic.model_copy(update=update)], "pfc_vector")


def test_each_odd_object_alone_is_written_as_pydantic_writes_it(plan: Plan) -> None:
    # one odd port among well-typed ones (the plan-wide check fails, every port is checked on its own)
    from roce_tune.plan.codec import _plan_to_json_pydantic

    sw = plan.switches[-1]
    import warnings

    for odd in _odd_ports(sw.ports[-1]):
        changed = plan.model_copy(update={"switches": [
            *plan.switches[:-1], sw.model_copy(update={"ports": [*sw.ports[:-1], odd]})]})
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # pydantic warns about the off-type values it is given
            assert plan_to_json(changed) == _plan_to_json_pydantic(changed)
    h = plan.hosts[-1]
    for update in ({"credentials": {**h.credentials, "password_env": 5}}, {"mgmt_port": True}):
        changed = plan.model_copy(update={"hosts": [*plan.hosts[:-1], h.model_copy(update=update)]})
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            assert plan_to_json(changed) == _plan_to_json_pydantic(changed)


def test_an_invalid_value_deep_in_the_file_is_reported_with_its_whole_location(plan: Plan) -> None:
    # devices are validated one by one (their JSON freed as they go); the first invalid one is left to the
    # plan's validation, which names it from the top of the document
    doc = json.loads(plan_to_json(plan))
    last = len(doc["switches"]) - 1
    doc["switches"][last]["ports"][0]["mtu"] = "big"
    with pytest.raises(ValueError, match=rf"switches\.{last}\.ports\.0\.mtu"):
        plan_from_json(json.dumps(doc))
    doc = json.loads(plan_to_json(plan))
    doc["hosts"][0]["nics"][0]["roce_tos"] = None
    with pytest.raises(ValueError, match=r"hosts\.0\.nics\.0\.roce_tos"):
        plan_from_json(json.dumps(doc))
