"""The switches and hosts of ``plan.json`` written with orjson: the same bytes as pydantic's serializer, about
three times faster at 4,096 hosts (issue 16).

pydantic's Rust serializer calls back into Python for every shared section and map (the ``$ref`` of each
port's headroom and rationale, each NIC's DCQCN, rationale and DSCP map: ~300k calls at 4,096 hosts), and
those calls were most of the cost of writing ``plan.json``. Here a port, NIC, switch or host is its field
dict (``__dict__``, in field order) with the references put in, and orjson writes it.

Byte-identical output is kept by writing an object this way only when orjson prints each of its values as
pydantic does: keys in field order, and every value of a type its field declares exactly (an ``int`` in a
``float`` field is ``3`` to orjson and ``3.0`` to pydantic; a ``bool`` in an ``int`` field ``true`` and
``1``); :func:`_types_of` derives the accepted types from the model's annotations. Any other object (a
plan built without validation that holds such a value) is serialised by pydantic, with the same shared
sections.
orjson and pydantic-core print floats (shortest round-trip) and escape strings alike; tests compare both
writers on every shipped inventory.
"""

from __future__ import annotations

import types
from collections.abc import Iterable, Sequence
from itertools import chain, repeat
from operator import attrgetter, itemgetter
from typing import Any, Literal, Union, get_args, get_origin

import orjson
from pydantic import BaseModel, TypeAdapter

from roce_tune.plan.model import (
    _INTERN,
    Buffers,
    Dcqcn,
    EcnProfile,
    Headroom,
    HostPlan,
    NicPlan,
    PortPlan,
    Rationale,
    SectionInterner,
    SwitchPlan,
    Watchdog,
)

_NONE = type(None)
#: a model's field dict
_FIELDS = attrgetter("__dict__")
_SCALARS = (str, int, float, bool)


def _types_of(annotation: Any) -> frozenset[type] | None:
    """The Python types a value of a field annotated ``annotation`` may have for orjson to print it as
    pydantic does: the scalar itself (``int`` is not ``float``, ``bool`` is not ``int``), a literal's value
    types, None for an optional field, ``list``/``dict`` for a container and a model class itself (its
    contents are checked by the writer); None where the annotation is none of these."""
    if annotation in _SCALARS or (isinstance(annotation, type) and issubclass(annotation, BaseModel)):
        return frozenset({annotation})
    if annotation is None or annotation is _NONE:
        return frozenset({_NONE})
    origin = get_origin(annotation)
    if origin is Literal:
        return frozenset(type(a) for a in get_args(annotation))
    if origin in (list, dict):
        return frozenset({origin})
    if origin in (Union, types.UnionType):
        members = [_types_of(a) for a in get_args(annotation)]
        return None if any(m is None for m in members) else frozenset().union(*members)  # type: ignore[arg-type]
    return None


class _Shape:
    """A model's field names in order and the types each field accepts (:func:`_types_of`), with the
    signatures (value types in field order) already found exact."""

    def __init__(self, cls: type[BaseModel]) -> None:
        self.names = tuple(cls.model_fields)
        accepted = [_types_of(f.annotation) for f in cls.model_fields.values()]
        self.usable = all(a is not None for a in accepted)
        self.accepted: tuple[frozenset[type], ...] = tuple(a or frozenset() for a in accepted)
        self.exact: set[tuple[type, ...]] = set()

    def fits(self, values: dict[str, Any]) -> bool:
        """The field dict ``values`` is in field order and each value of an accepted type."""
        sig = tuple(map(type, values.values()))
        if sig in self.exact:
            return tuple(values) == self.names
        return self.usable and tuple(values) == self.names and self._exact(sig)

    def _exact(self, sig: tuple[type, ...]) -> bool:
        """Each type of the signature ``sig`` (value types in field order) is one its field accepts."""
        if sig in self.exact:
            return True
        if len(sig) == len(self.accepted) and all(t in ok for t, ok in zip(sig, self.accepted)):
            self.exact.add(sig)
            return True
        return False

    def all_fit(self, cls: type[BaseModel], models: Sequence[Any], int_list: str) -> bool:
        """Every one of ``models`` is a ``cls`` (exactly) whose field dict :meth:`fits` and whose list field
        ``int_list`` holds only ``int`` (:func:`_ints`): the per-object checks of the writer, made once for
        all the ports (or NICs) of a plan, at C speed (their key tuples and type signatures are a few distinct
        ones). Equivalent to ``all(type(m) is cls and fits(m.__dict__) and _ints(m.__dict__[int_list]))``."""
        if not self.usable or not set(map(type, models)) <= {cls}:
            return False
        dicts = list(map(_FIELDS, models))
        if not set(map(tuple, dicts)) <= {self.names}:  # keys in field order (all of them)
            return False
        sigs = set(map(tuple, map(map, repeat(type), map(dict.values, dicts))))
        if not all(map(self._exact, sigs)):
            return False
        lists = list(map(itemgetter(int_list), dicts))  # (lists: the signatures say so)
        distinct = dict(zip(map(id, lists), lists)).values()  # objects of one class share their list
        return set(map(type, chain.from_iterable(distinct))) <= _INT


_PORT, _NIC, _SWITCH, _HOST = (_Shape(c) for c in (PortPlan, NicPlan, SwitchPlan, HostPlan))
_SECTIONS = frozenset({Headroom, Buffers, EcnProfile, Watchdog, Dcqcn})
#: what the map fields that are shared serialise as (the handler pydantic gives their field serializer)
_RATIONALE_MAP: TypeAdapter[dict[str, Rationale]] = TypeAdapter(dict[str, Rationale])
_DSCP_MAP: TypeAdapter[dict[int, int]] = TypeAdapter(dict[int, int])


_INT: frozenset[type] = frozenset({int})
_STR: frozenset[type] = frozenset({str})
_STR_OR_NONE: frozenset[type] = frozenset({str, _NONE})


def _ints(values: list[Any]) -> bool:
    """Every item is an ``int`` (not a ``bool``)."""
    return set(map(type, values)) <= _INT


def _items(owners: list[Any], cls: type[BaseModel], field: str) -> list[Any]:
    """The items of the list field ``field`` of every one of ``owners`` that is a ``cls`` holding a list there
    (the ports of the switches, the NICs of the hosts): those the writer may write itself."""
    lists = [o.__dict__.get(field) for o in owners if type(o) is cls]
    return list(chain.from_iterable(v for v in lists if type(v) is list))


def _texts(values: dict[Any, Any]) -> bool:
    """Every key is a ``str`` and every value a ``str`` or None."""
    return set(map(type, values)) <= _STR and set(map(type, values.values())) <= _STR_OR_NONE


class JsonWriter:
    """Writes switches and hosts of one plan as JSON bytes, their shared sections and maps through
    ``interner`` in the order pydantic's serializer meets them (port: rationale, headroom; switch: ports,
    buffers, ECN profiles, watchdog; NIC: rationale, DSCP map, DCQCN; host: its NICs, then its NCCL
    rationale), so the ``shared`` object is the same.
    """

    def __init__(self, interner: SectionInterner) -> None:
        self.interner = interner
        self.context = {_INTERN: interner}
        self.rationales: dict[int, tuple[Rationale, Any]] = {}
        self.nccl_rationales: dict[tuple[tuple[str, ...], tuple[int, ...]], dict[str, str]] = {}
        #: every port (NIC) of the switches (hosts) being written passed :meth:`_Shape.all_fit`: each one's
        #: own check is skipped
        self.ports_fit = self.nics_fit = False

    def switches(self, out: list[bytes], switches: Iterable[SwitchPlan]) -> None:
        """Append ``[switch, …]`` as JSON to ``out`` (pieces: the document is joined once)."""
        switches = list(switches)
        self.ports_fit = _PORT.all_fit(PortPlan, _items(switches, SwitchPlan, "ports"), "pfc_priorities")
        self._array(out, map(self._switch, switches))
        self.ports_fit = False

    def hosts(self, out: list[bytes], hosts: Iterable[HostPlan]) -> None:
        """Append ``[host, …]`` as JSON to ``out``."""
        hosts = list(hosts)
        self.nics_fit = _NIC.all_fit(NicPlan, _items(hosts, HostPlan, "nics"), "pfc_vector")
        self._array(out, map(self._host, hosts))
        self.nics_fit = False

    @staticmethod
    def _array(out: list[bytes], items: Iterable[Any]) -> None:
        out.append(b"[")
        for i, item in enumerate(items):
            if i:
                out.append(b",")
            out.append(orjson.dumps(item))
        out.append(b"]")

    def _pydantic(self, obj: BaseModel) -> Any:
        """``obj`` as pydantic serialises it in ``plan_to_json`` (shared sections through the interner)."""
        return obj.__pydantic_serializer__.to_python(obj, mode="json", context=self.context)

    def _section(self, obj: Any) -> Any:
        """The ``$ref`` of a shared section (pydantic's ``_serialise_shared``)."""
        done = self.interner.refs.get(id(obj))
        if done is not None:
            return done
        if type(obj) not in _SECTIONS:
            return self._pydantic(obj)
        return self.interner.ref(type(obj).__name__, obj,
                                 lambda: obj.__pydantic_serializer__.to_python(obj, mode="json"),
                                 obj._shared_name())

    def _map(self, kind: str, value: dict[Any, Any], adapter: TypeAdapter[Any]) -> Any:
        """The ``$ref`` of a shared map (pydantic's ``_shared_map``); an empty map is written as it is."""
        if not value:
            return {}
        return (self.interner.refs.get(id(value))
                or self.interner.ref(kind, value, lambda: adapter.dump_python(value, mode="json"), None))

    def _port(self, p: PortPlan) -> Any:
        d = p.__dict__
        if type(p) is not PortPlan or not _PORT.fits(d) or not _ints(d["pfc_priorities"]):
            return self._pydantic(p)
        out = dict(d)
        refs = self.interner.refs  # (inlined fast path of _map and _section: a section met before)
        why, head = d["rationale"], d["headroom"]
        out["rationale"] = refs.get(id(why)) or self._map("PortRationale", why, _RATIONALE_MAP)
        if head is not None:
            out["headroom"] = refs.get(id(head)) or self._section(head)
        return out

    def _checked_ports(self, ports: list[PortPlan]) -> list[Any]:
        """:meth:`_port` of each of ``ports``, all known to fit (:meth:`_Shape.all_fit`), with the same
        shared sections in the same order (rationale, then headroom, port by port)."""
        refs = self.interner.refs
        return [{**d, "rationale": refs.get(id(d["rationale"])) or self._map("PortRationale", d["rationale"],
                                                                             _RATIONALE_MAP),
                 "headroom": refs.get(id(d["headroom"])) or self._optional_section(d["headroom"])}
                for d in map(_FIELDS, ports)]

    def _optional_section(self, obj: Any) -> Any:
        """:meth:`_section` of ``obj``; None stays None."""
        return None if obj is None else self._section(obj)

    def _switch(self, s: SwitchPlan) -> Any:
        d = s.__dict__
        if type(s) is not SwitchPlan or not _SWITCH.fits(d) or not _texts(d["credentials"]):
            return self._pydantic(s)
        out = dict(d)
        ports = d["ports"]
        out["ports"] = self._checked_ports(ports) if self.ports_fit else [self._port(p) for p in ports]
        out["buffers"] = self._section(d["buffers"])
        out["ecn_profiles"] = [self._section(e) for e in d["ecn_profiles"]]
        out["watchdog"] = self._section(d["watchdog"])
        return out

    def _nic(self, n: NicPlan) -> Any:
        d = n.__dict__
        if type(n) is not NicPlan or not _NIC.fits(d) or not _ints(d["pfc_vector"]):
            return self._pydantic(n)
        out = dict(d)
        refs = self.interner.refs
        why, dscp, dcqcn = d["rationale"], d["dscp_to_priority"], d["dcqcn"]
        out["rationale"] = refs.get(id(why)) or self._map("NicRationale", why, _RATIONALE_MAP)
        out["dscp_to_priority"] = refs.get(id(dscp)) or self._map("NicDscpToPriority", dscp, _DSCP_MAP)
        out["dcqcn"] = refs.get(id(dcqcn)) or self._section(dcqcn)
        return out

    def _checked_nics(self, nics: list[NicPlan]) -> list[Any]:
        """:meth:`_nic` of each of ``nics``, all known to fit (:meth:`_Shape.all_fit`), with the same shared
        sections in the same order (rationale, DSCP map, DCQCN, NIC by NIC)."""
        refs = self.interner.refs
        return [{**d,
                 "rationale": refs.get(id(d["rationale"])) or self._map("NicRationale", d["rationale"],
                                                                        _RATIONALE_MAP),
                 "dscp_to_priority": refs.get(id(d["dscp_to_priority"])) or self._map(
                     "NicDscpToPriority", d["dscp_to_priority"], _DSCP_MAP),
                 "dcqcn": refs.get(id(d["dcqcn"])) or self._section(d["dcqcn"])}
                for d in map(_FIELDS, nics)]

    def _host(self, h: HostPlan) -> Any:
        d = h.__dict__
        if (type(h) is not HostPlan or not _HOST.fits(d) or not _texts(d["credentials"])
                or not _texts(d["nccl_env"])):
            return self._pydantic(h)
        out = dict(d)
        out["nics"] = self._checked_nics(d["nics"]) if self.nics_fit else [self._nic(n) for n in d["nics"]]
        why = d["nccl_rationale"]
        if not why:  # (an empty map is written as it is, as pydantic's _shared_map does)
            out["nccl_rationale"] = {}
            return out
        # hosts hold their own map of the same rationale objects: one shared section per (keys, objects); the
        # plan holds the objects while this writer runs, so their ids name them
        key = (tuple(why), tuple(map(id, why.values())))
        done = self.nccl_rationales.get(key)
        if done is None:
            done = self.nccl_rationales[key] = self.interner.refs.get(id(why)) or self.interner.ref(
                "NcclRationale", why, lambda: {k: self._rationale(r) for k, r in why.items()}, None)
        out["nccl_rationale"] = done
        return out

    def _rationale(self, r: Rationale) -> Any:
        """A rationale as pydantic writes it, once per object (hosts share their NCCL rationale)."""
        kept = self.rationales.get(id(r))
        if kept is None or kept[0] is not r:
            kept = self.rationales[id(r)] = (r, r.__pydantic_serializer__.to_python(r, mode="json"))
        return kept[1]

