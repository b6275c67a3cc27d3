"""The JSON codec of the plan (``plan.json``): deterministic serialisation, loading and its JSON Schema.

Since schema 1.1 each shared section (headroom, buffers, ECN, watchdog, DCQCN, a NIC's shared maps; since 1.2
also a port's rationale, since 1.3 a host's NCCL rationale) is written once under ``"shared"`` and referred
to with ``{"$ref": "#/shared/<Kind>/<name>"}`` (RFC 6901 pointer); :func:`plan_from_json` resolves the
references (1.0 files have none). Schema 1.2 and later files are compact JSON (orjson: no indentation,
UTF-8). The model is :mod:`roce_tune.plan.model`.
"""

from __future__ import annotations

import itertools
import operator
import re
from collections.abc import Callable
from typing import Any

import orjson
from jsonpointer import escape  # RFC 6901 reference-token escaping
from pydantic import BaseModel, TypeAdapter

from roce_tune.gcpause import gc_paused
from roce_tune.plan.jsonwrite import JsonWriter
from roce_tune.plan.model import (
    _INTERN,
    PLAN_SCHEMA_VERSION,
    SHARED_KEY,
    Buffers,
    Dcqcn,
    EcnProfile,
    Headroom,
    HostPlan,
    NicPlan,
    Plan,
    PortPlan,
    Rationale,
    SwitchPlan,
    Watchdog,
)

#: entries per (kind, name) compared for equality before a new entry is made (bounds the cost when a
#: kind has many distinct sections under one name, e.g. unnamed ones)
_MAX_EQUALITY_CANDIDATES = 1024


class _Interner:
    """Collects sections written once under ``"shared"`` while :func:`plan_to_json` serialises.

    Keyed by object identity first: the tuner memoises equal sections (one Headroom object for all
    ports with equal headroom), so that costs nothing. An object not seen before is compared with the
    entries of its kind and name (equal copies, e.g. of a loaded plan, share one entry). Objects are
    kept alive until the dump ends so an ``id`` cannot be reused.
    """

    def __init__(self) -> None:
        self.shared: dict[str, dict[str, Any]] = {}
        self.refs: dict[int, dict[str, str]] = {}
        self._by_name: dict[tuple[str, str | None], list[tuple[object, dict[str, str]]]] = {}
        self._keep: list[object] = []

    def ref(self, kind: str, obj: object, produce: Callable[[], Any], name: str | None) -> dict[str, str]:
        """``{"$ref": "#/shared/<kind>/<name>"}`` for ``obj``; ``produce()`` runs on its first sight."""
        done = self.refs.get(id(obj))
        if done is None:
            same_name = self._by_name.setdefault((kind, name), [])
            # equal but not identical (per-switch copies, a loaded plan's one dict per NIC): one entry
            done = next((other_ref for other, other_ref in same_name if other == obj), None)
            if done is None:
                table = self.shared.setdefault(kind, {})
                base = name or f"{kind.lower()}-{len(table) + 1}"
                key, n = base, 2
                while key in table:
                    key, n = f"{base}.{n}", n + 1
                table[key] = None  # reserve the name and its place before nested sections take theirs
                table[key] = produce()
                done = {"$ref": f"#/{SHARED_KEY}/{escape(kind)}/{escape(key)}"}
                if len(same_name) < _MAX_EQUALITY_CANDIDATES:
                    same_name.append((obj, done))
            self.refs[id(obj)] = done
            self._keep.append(obj)
        return done


def plan_to_json(plan: Plan) -> str:
    """Serialise deterministically (schema 1.3): compact JSON (no indentation, UTF-8), fields in model order,
    dict entries in the tuner's (deterministic) insertion order, trailing newline; shared sections once under
    ``"shared"`` (last key) and ``{"$ref": ...}`` wherever they apply. orjson writes the switches and hosts
    (:class:`~roce_tune.plan.jsonwrite.JsonWriter`: the bytes pydantic's serializer gives, without its
    ~300k calls back into Python at 4,096 hosts), pydantic the rest. A plan read from an older file is
    written as the current schema (the model is the same). Read it back with :func:`plan_from_json`."""
    return plan_to_json_bytes(plan).decode("utf-8")


def plan_to_json_bytes(plan: Plan) -> bytes:
    """:func:`plan_to_json` as its UTF-8 bytes, made without the text."""
    return b"".join(plan_json_pieces(plan))  # one copy of the (80 MB at 4,096 hosts) document


def plan_json_pieces(plan: Plan) -> list[bytes]:
    """:func:`plan_to_json_bytes` in pieces (a switch or host each), neither joined nor decoded: what the plan
    directory's writer writes as they are (``roce-tune plan`` holds no 80 MB text or copy of a 4,096-host
    plan.json, issue 16)."""
    if plan.schema_version != PLAN_SCHEMA_VERSION:
        plan = plan.model_copy(update={"schema_version": PLAN_SCHEMA_VERSION})
    if type(plan) is not Plan:
        return [_plan_to_json_pydantic(plan).encode("utf-8")]
    interner = _Interner()
    writer = JsonWriter(interner)
    context = {_INTERN: interner}
    parts: list[bytes] = []
    for name in _PLAN_FIELDS:  # in field order, each once: the shared sections are met in pydantic's order
        parts.append(b'%s"%s":' % (b"," if parts else b"{", name.encode()))
        if name == "switches":
            writer.switches(parts, plan.switches)
        elif name == "hosts":
            writer.hosts(parts, plan.hosts)
        else:
            data = plan.__pydantic_serializer__.to_python(plan, mode="json", include={name}, context=context)
            parts.append(orjson.dumps(data[name]))
    if interner.shared:
        parts += [b',"%s":' % SHARED_KEY.encode(), orjson.dumps(interner.shared)]
    parts.append(b"}\n")
    return parts


#: :class:`Plan`'s fields in order (the top level of plan.json)
_PLAN_FIELDS = tuple(Plan.model_fields)


def _plan_to_json_pydantic(plan: Plan) -> str:
    """:func:`plan_to_json` by pydantic's serializer alone (what the orjson writer must equal byte for byte:
    the tests compare the two)."""
    if plan.schema_version != PLAN_SCHEMA_VERSION:
        plan = plan.model_copy(update={"schema_version": PLAN_SCHEMA_VERSION})
    interner = _Interner()
    # bytes from the Rust serializer, joined through a memoryview: one copy of the (80 MB at 4,096 hosts)
    # document at a time, not three (str body, its slice, the f-string): the peak of `roce-tune plan`
    # (issue 16)
    body = plan.__pydantic_serializer__.to_json(plan, context={_INTERN: interner})
    tail = b',"%s":%s}\n' % (SHARED_KEY.encode(), orjson.dumps(interner.shared)) if interner.shared else b"\n"
    whole = b"".join((memoryview(body)[:-1] if interner.shared else body, tail))
    del body
    return whole.decode("utf-8")


def resolve_shared(data: dict[str, Any], as_models: bool = False) -> dict[str, Any]:
    """Replace every ``{"$ref": "#/shared/<kind>/<name>"}`` in a plan.json document by its section
    (in place; returns ``data`` without the ``shared`` key). Documents without references pass through.
    The result is plain JSON data; ``as_models`` puts one validated plan model per shared section
    instead (each section is validated once, and shared).

    Raises:
        ValueError: ``shared`` is not an object; a reference that does not name a section under it (or
            a document with references and no ``shared``); a reference cycle; a shared section that is
            not a valid section of its kind.
    """
    resolved_doc: dict[str, Any] = _Resolver(data, as_models).walk(data)
    return resolved_doc


class _Resolver:
    """Resolves the references of one plan.json document (its ``shared`` object is popped from it)."""

    def __init__(self, data: dict[str, Any], as_models: bool) -> None:
        shared = data.pop(SHARED_KEY, None)
        if shared is None:
            shared = {}
        elif not isinstance(shared, dict) or not all(isinstance(v, dict) for v in shared.values()):
            raise ValueError(f"plan.json: '{SHARED_KEY}' must be an object of objects (kind -> name -> "
                             "section)")
        self.shared: dict[str, dict[str, Any]] = shared
        self.as_models = as_models
        self.resolved: dict[str, Any] = {}
        self.sections: dict[str, tuple[str, Any]] = {}

    _PREFIX = f"#/{SHARED_KEY}/"
    _RESOLVING = object()  # marks a section whose own references are being resolved

    def tokens(self, ref: str) -> list[str]:
        """(kind, name) of ``ref``; ValueError if it names no section under ``shared``."""
        parts = ref[len(self._PREFIX):].split("/") if ref.startswith(self._PREFIX) else []
        tokens = [t.replace("~1", "/").replace("~0", "~") for t in parts]
        if len(tokens) != 2 or tokens[1] not in self.shared.get(tokens[0], {}):
            where = f"under '{SHARED_KEY}'" if self.shared else f"(the file has no '{SHARED_KEY}' object)"
            raise ValueError(f"plan.json: reference {ref!r} does not name a section {where}")
        return tokens

    def section(self, ref: str) -> tuple[str, Any]:
        """(kind, :meth:`lookup`) of ``ref``, kept per reference (the ~10^5 ports of a fabric name a few)."""
        done = self.sections.get(ref)
        if done is None:
            done = self.sections[ref] = (self.tokens(ref)[0], self.lookup(ref))
        return done

    def lookup(self, ref: str) -> Any:
        """The section ``ref`` names, its own references resolved (once per reference)."""
        done = self.resolved.get(ref)
        if done is self._RESOLVING:
            raise ValueError(f"plan.json: reference cycle through {ref!r}")
        if ref in self.resolved:
            return done
        kind, name = self.tokens(ref)
        self.resolved[ref] = self._RESOLVING
        section = self.walk(self.shared[kind][name])
        if self.as_models:
            section = _as_model(kind, section, ref)
        self.resolved[ref] = section
        return section

    def walk(self, node: Any) -> Any:
        """``node`` with every reference in it resolved (in place)."""
        if isinstance(node, dict):
            ref = _ref(node)
            if ref is not None:
                return self.lookup(ref)
            for k, v in node.items():
                if isinstance(v, (dict, list)):
                    node[k] = self.walk(v)
        elif isinstance(node, list):
            for i, v in enumerate(node):
                if isinstance(v, (dict, list)):
                    node[i] = self.walk(v)
        return node


def _ref(node: dict[str, Any]) -> str | None:
    """The pointer of a ``{"$ref": pointer}`` object, else None."""
    if len(node) != 1:
        return None
    ref = node.get("$ref")
    return ref if type(ref) is str else None


#: shared kinds that are plan models (validated once on load; the plan then holds one instance)
_SHARED_MODELS: dict[str, type[BaseModel]] = {
    m.__name__: m for m in (Headroom, Buffers, EcnProfile, Watchdog, Dcqcn)
}
#: shared kinds that are rationale maps (field name -> Rationale), validated once on load likewise
_RATIONALE_MAPS = ("PortRationale", "NicRationale", "NcclRationale")
#: a NIC's DSCP -> priority map as the model types it (validated once per shared map)
_DSCP_MAP: TypeAdapter[dict[int, int]] = TypeAdapter(dict[int, int])


def _as_model(kind: str, section: Any, ref: str) -> Any:
    """``section`` of ``kind`` validated once (a model, or a map of :class:`Rationale`); other kinds
    as they are.

    Raises:
        ValueError: the section is not a valid section of its kind (names the reference).
    """
    model = _SHARED_MODELS.get(kind)
    try:  # one validated instance for every place it applies, as the tuner's plan shares it
        if model is not None:
            return model.model_validate(section)
        if kind == "NicDscpToPriority":
            return _DSCP_MAP.validate_python(section)
        if kind in _RATIONALE_MAPS:
            if not isinstance(section, dict):
                raise ValueError("a rationale map must be an object")  # noqa: TRY004 (bad file content)
            return {k: _rationale(k, v) for k, v in section.items()}
    except ValueError as exc:
        raise ValueError(f"plan.json: shared section {ref!r}: {exc}") from None
    return section


def _rationale(key: str, value: Any) -> Rationale:
    """``value`` validated as the rationale of ``key`` in a shared rationale map.

    Raises:
        ValueError: not a valid rationale (the message names ``key``).
    """
    try:
        return Rationale.model_validate(value)
    except ValueError as exc:
        raise ValueError(f"rationale of {key!r}: {exc}") from None


_VERSION_RE = re.compile(r"(\d+)\.(\d+)")


def _check_version(data: dict[str, Any]) -> None:
    """Refuse a plan.json written by a newer roce-tune (a schema this codec does not know) with a clear error;
    1.0 to 1.3 files load (a missing version is left to validation).

    Raises:
        ValueError: ``schema_version`` is newer than :data:`PLAN_SCHEMA_VERSION`.
    """
    version = data.get("schema_version")
    m = _VERSION_RE.fullmatch(version) if isinstance(version, str) else None
    ours = _VERSION_RE.fullmatch(PLAN_SCHEMA_VERSION)
    if m and ours and (int(m[1]), int(m[2])) > (int(ours[1]), int(ours[2])):
        raise ValueError(f"plan.json: schema {version} was written by a newer roce-tune; this one reads "
                         f"schema 1.0 to {PLAN_SCHEMA_VERSION}: upgrade roce-tune or re-plan with "
                         "this version")


def plan_from_json(text: str | bytes) -> Plan:
    """Load a plan.json (schema 1.0 to 1.3): resolve shared sections, then validate. Each shared section
    is validated once and shared by every place it applies; so is each distinct host NCCL rationale, and a
    port (NIC) whose JSON equals that of one validated before but for its own name, peer, ... is that one's
    copy with its own values (:class:`_Items`): the plan equals validating every part of the document, at a
    fraction of the cost on a large fabric (issue 16: 4,096 hosts, ~130k ports and NICs of a few dozen
    classes).

    Raises:
        ValueError: not JSON, nested too deeply, written by a newer roce-tune (:func:`_check_version`), or a
            broken reference (:func:`resolve_shared`).
        pydantic.ValidationError (a ValueError): not a valid plan.
    """
    with gc_paused():  # ~10^6 new objects without cycles: the cyclic GC would triple the time (gcpause)
        return _plan_from_json(text)


def _plan_from_json(text: str | bytes) -> Plan:
    try:
        data = orjson.loads(text)
    except orjson.JSONDecodeError as exc:
        # orjson's wording changed ("recursion limit" in older releases, "depth limit exceeded" in newer ones)
        if any(w in str(exc).lower() for w in ("recursion", "depth limit")):
            raise ValueError("plan.json: nested too deeply to be a plan") from None
        raise ValueError(f"plan.json: not JSON: {exc}") from None
    if not isinstance(data, dict):
        raise ValueError("plan.json: the document must be an object")  # noqa: TRY004 (bad file content)
    _check_version(data)
    try:
        _resolve_and_validate(data, _Resolver(data, as_models=True))
        plan = Plan.model_validate(data)
    except RecursionError:
        raise ValueError("plan.json: nested too deeply to be a plan") from None
    if plan.schema_version != PLAN_SCHEMA_VERSION:  # an older file: the model is the current one
        plan = plan.model_copy(update={"schema_version": PLAN_SCHEMA_VERSION})
    return plan


#: map fields of a port / a NIC that refer to a shared section, with that section's kind: the map is validated
#: once (:func:`_as_model`) and every port or NIC holds that one object, as in the tuner's plan
_PORT_MAPS = (("rationale", "PortRationale"),)
_NIC_MAPS = (("rationale", "NicRationale"), ("dscp_to_priority", "NicDscpToPriority"))
#: per list of devices: its model, the key of its ports / NICs, their model, map fields, shared-model fields
#: and own fields (:class:`_Items`)
_DEVICES: dict[str, tuple[type[BaseModel], str, type[BaseModel], tuple[tuple[str, str], ...], tuple[str, ...],
                          tuple[tuple[str, tuple[type, ...]], ...]]] = {
    "switches": (SwitchPlan, "ports", PortPlan, _PORT_MAPS, ("headroom",),
                 (("name", (str,)), ("peer", (str, type(None))))),
    "hosts": (HostPlan, "nics", NicPlan, _NIC_MAPS, ("dcqcn",),
              (("netdev", (str,)), ("rdma_device", (str,)), ("rdma_port", (int,)),
               ("pci_address", (str, type(None))), ("rail", (int, type(None))),
               ("switch_port", (str, type(None))))),
}
#: (index of the port or NIC in its device, field, the validated shared map) put in after validation
_MapPatch = tuple[int, str, Any]
#: a host's NCCL rationale as the model types it: validated once per distinct map (hosts with the same RDMA
#: NICs hold one map in the tuner's plan; ~4 KB of JSON and 10 rationales on each of 4,096 hosts)
_NCCL_RATIONALE: TypeAdapter[dict[str, Rationale]] = TypeAdapter(dict[str, Rationale])
_NCCL_FIELD = "nccl_rationale"
_UNSEEN = object()


def _resolve_and_validate(data: dict[str, Any], resolver: _Resolver) -> None:
    """Resolve the references of a plan.json document for :class:`Plan` validation (in place) and validate
    its switches and hosts one by one (:func:`_load_devices`), faster than :func:`resolve_shared` on the
    ~10^5 ports and NICs of a large fabric. Everything but the devices is resolved as :func:`resolve_shared`
    does.

    Raises:
        ValueError: see :func:`resolve_shared`.
    """
    for key, value in data.items():
        if key in _DEVICES and isinstance(value, list):
            _load_devices(value, key, resolver)
        elif isinstance(value, (dict, list)):
            data[key] = resolver.walk(value)


def _load_devices(devices: list[Any], key: str, resolver: _Resolver) -> None:
    """Resolve the references of each switch (``key`` ``"switches"``) or host in ``devices`` and replace it by
    its validated model, so the JSON of the devices validated is freed while the rest loads (a smaller peak).
    A port's or NIC's fields are looked at only where a shared section may stand (headroom, rationale, DSCP
    map, DCQCN; the other fields are scalars or lists of scalars, and anything else there fails validation).
    A reference to a shared map of the field's kind leaves an empty map to validate, and the one validated map
    is put in after (as in the tuner's plan); so is a host's NCCL rationale equal to one validated before
    (:func:`_shared_nccl_rationale`). A port or NIC equal to one validated before but for its own values is
    that one's copy (:class:`_Items`). From the first device that is not valid on, devices are only resolved
    (left as JSON): :class:`Plan` validation then reports it with its whole location
    (``switches.3.ports.7.mtu``).

    Raises:
        ValueError: see :func:`resolve_shared` (a broken reference in any device).
    """
    model, inner, item_model, maps, models, own_fields = _DEVICES[key]
    kind = _Items(item_model, maps, models, own_fields, resolver)
    shares = key == "hosts"  # (a host's NCCL rationale)
    seen: dict[bytes, Any] = {}
    valid = True
    for i, device in enumerate(devices):
        if type(device) is not dict:
            valid = False  # validation says what is wrong
            continue
        own: list[tuple[str, Any]] = []
        for k, v in device.items():
            if k != inner and isinstance(v, (dict, list)):
                shared = _shared_nccl_rationale(v, resolver, seen) if shares and k == _NCCL_FIELD else None
                if shared is None:
                    device[k] = resolver.walk(v)
                else:
                    own.append((k, shared))
                    device[k] = {}
        items = device.get(inner)
        patches: list[_MapPatch] = []
        fresh: list[tuple[int, bytes]] = []
        if type(items) is list:
            kind.resolve(items, patches, fresh)
        if valid:
            try:
                devices[i] = _validated(model, device, inner, own, patches)
            except ValueError:  # (pydantic.ValidationError)
                valid = False
            else:
                kind.learn(getattr(devices[i], inner), fresh)


def _validated(model: type[BaseModel], device: dict[str, Any], inner: str, own: list[tuple[str, Any]],
               patches: list[_MapPatch]) -> BaseModel:
    """``model`` validated from ``device`` (resolved JSON), with the validated shared maps taken out of it
    put back: ``own`` its own (field, map), ``patches`` those of its ports or NICs.

    Raises:
        pydantic.ValidationError: ``device`` is not valid.
    """
    validated = model.model_validate(device)
    fields = validated.__dict__
    for field, value in own:
        fields[field] = value
    items = fields[inner]
    for j, field, value in patches:  # the one validated map, in every port or NIC that refers to it
        items[j].__dict__[field] = value
    return validated


def _shared_nccl_rationale(value: Any, resolver: _Resolver, seen: dict[bytes, Any]) -> Any:
    """A host's ``nccl_rationale`` (JSON ``value``) validated, one object for every host whose map has the
    same JSON (``seen``: by its bytes); None if it is not a valid map (it is then resolved and validated
    where it stands, so the error names its whole location), is empty, or is nested too deeply to compare."""
    if type(value) is not dict or not value:
        return None
    try:
        key = orjson.dumps(value)
    except orjson.JSONEncodeError:  # (nested deeper than orjson writes: not a rationale map)
        return None
    done = seen.get(key, _UNSEEN)
    if done is _UNSEEN:
        resolved = resolver.walk(value)  # (a broken reference raises here, as everywhere else)
        try:
            done = _NCCL_RATIONALE.validate_python(resolved)
        except ValueError:  # (pydantic.ValidationError)
            done = None
        seen[key] = done
    return done


class _Items:
    """The ports (or NICs) of one list of devices, for :func:`_load_devices`.

    :meth:`resolve` resolves each one's references: each field in ``models`` and ``maps`` that is a
    ``{"$ref": ...}`` object is looked up (once per reference), any other object walked; a map of the field's
    kind is left empty, and put in the device's patches. A port whose JSON equals, but for its own fields
    (``own``: name and peer; a NIC's names, port, PCI address, rail and switch port), that of a port validated
    before (:meth:`learn`) is that port's copy with its own values instead: validating them gives the values
    themselves (a ``str``, an ``int`` or None: other types are validated) and the rest is the same JSON (the
    ~100k ports of a 4,096-host fabric are a few dozen classes, as the tuner makes them).
    """

    def __init__(self, model: type[BaseModel], maps: tuple[tuple[str, str], ...], models: tuple[str, ...],
                 own: tuple[tuple[str, tuple[type, ...]], ...], resolver: _Resolver) -> None:
        self.model, self.maps, self.models, self.resolver = model, maps, models, resolver
        self.own = tuple(field for field, _ in own)
        self.values = operator.itemgetter(*self.own)  # (two or more fields: a tuple)
        #: the types the own values may have, as a tuple of types per item
        self.types = frozenset(itertools.product(*(types for _, types in own)))
        self.all_fields = frozenset(model.model_fields)
        self.rest = operator.itemgetter(*(f for f in model.model_fields if f not in self.own))
        self.fields_set = set(self.all_fields)  # (every copy has every field: one set, as the tuner's)
        self.templates: dict[bytes, Any] = {}  # JSON of the other values -> the validated item

    def key(self, item: dict[str, Any]) -> tuple[bytes, tuple[Any, ...]] | None:
        """The JSON of the values of ``item``'s other fields (in field order), and its own values; None if a
        field is missing, one more is there, an own value is of another type, or the JSON nests too deeply."""
        try:
            values, rest = self.values(item), self.rest(item)
        except KeyError:
            return None
        if len(item) != len(self.all_fields) or tuple(map(type, values)) not in self.types:
            return None
        try:
            return orjson.dumps(rest), values
        except orjson.JSONEncodeError:
            return None

    def resolve(self, items: list[Any], patches: list[_MapPatch], fresh: list[tuple[int, bytes]]) -> None:
        """Resolve ``items`` (in place); one equal but for its own values to an item learnt before becomes its
        validated copy; ``fresh`` gets (index, key) of the others that may be learnt."""
        templates, own, cls = self.templates, self.own, self.model
        new, set_, fields_set = cls.__new__, object.__setattr__, self.fields_set
        for j, item in enumerate(items):
            if type(item) is not dict:
                continue
            found = self.key(item)
            if found is not None:
                template = templates.get(found[0])
                if template is not None:  # (construct_ordered inlined: ~130k ports and NICs at 4,096 hosts)
                    values = template.__dict__.copy()
                    values.update(zip(own, found[1]))
                    copy = items[j] = new(cls)
                    set_(copy, "__dict__", values)
                    set_(copy, "__pydantic_fields_set__", fields_set)
                    set_(copy, "__pydantic_extra__", None)
                    set_(copy, "__pydantic_private__", None)
                    continue
                fresh.append((j, found[0]))
            self.resolve_item(item, j, patches)

    def resolve_item(self, item: dict[str, Any], j: int, patches: list[_MapPatch]) -> None:
        """The references of port (or NIC) number ``j``."""
        sections, resolver = self.resolver.sections, self.resolver
        for field in self.models:
            v = item.get(field)
            if type(v) is dict:  # (the inlined _ref and section)
                ref = v.get("$ref") if len(v) == 1 else None
                item[field] = (resolver.walk(v) if type(ref) is not str
                               else (sections.get(ref) or resolver.section(ref))[1])
        for field, kind in self.maps:
            v = item.get(field)
            if type(v) is not dict:
                continue
            ref = v.get("$ref") if len(v) == 1 else None
            if type(ref) is not str:
                item[field] = resolver.walk(v)
                continue
            ref_kind, section = sections.get(ref) or resolver.section(ref)
            if ref_kind == kind:
                patches.append((j, field, section))
                item[field] = {}
            else:
                item[field] = section

    def learn(self, validated: list[Any], fresh: list[tuple[int, bytes]]) -> None:
        """Keep the validated items of ``fresh`` (index, key) that have every field set (their copies are
        built with every field set, as the tuner builds them)."""
        for j, key in fresh:
            item = validated[j]
            if key not in self.templates and item.__pydantic_fields_set__ == self.all_fields:
                self.templates[key] = item


def plan_json_schema() -> dict[str, object]:
    """JSON Schema of ``plan.json`` as written (published with ``roce-tune schema --plan``).

    It is :class:`Plan`'s schema, plus what schemas 1.1 to 1.3 write: a ``shared`` object (kind -> name ->
    section) and, wherever a shared section may stand, ``{"$ref": "#/shared/<kind>/<name>"}``. A document
    with the references resolved (:func:`resolve_shared`) validates as well.
    """
    schema: dict[str, Any] = Plan.model_json_schema()
    defs: dict[str, Any] = schema["$defs"]
    ref_def = "SharedRef"
    ref_schema = {"$ref": f"#/$defs/{ref_def}"}
    model_kinds = {name: {"$ref": f"#/$defs/{name}"} for name in _SHARED_MODELS}

    def allow_ref(node: Any) -> Any:
        if isinstance(node, dict):
            if node.get("$ref") in [m["$ref"] for m in model_kinds.values()] and len(node) == 1:
                return {"anyOf": [node, ref_schema]}
            return {k: allow_ref(v) for k, v in node.items()}
        if isinstance(node, list):
            return [allow_ref(v) for v in node]
        return node

    schema = allow_ref(schema)
    defs = schema["$defs"]
    nic = defs["NicPlan"]["properties"]
    port = defs["PortPlan"]["properties"]
    host = defs["HostPlan"]["properties"]
    map_kinds = {"NicRationale": nic["rationale"], "NicDscpToPriority": nic["dscp_to_priority"],
                 "PortRationale": port["rationale"], "NcclRationale": host["nccl_rationale"]}
    nic["rationale"] = {"anyOf": [map_kinds["NicRationale"], ref_schema]}
    nic["dscp_to_priority"] = {"anyOf": [map_kinds["NicDscpToPriority"], ref_schema]}
    port["rationale"] = {"anyOf": [map_kinds["PortRationale"], ref_schema]}
    host["nccl_rationale"] = {"anyOf": [map_kinds["NcclRationale"], ref_schema]}
    defs[ref_def] = {
        "type": "object", "additionalProperties": False, "required": ["$ref"],
        "description": "a section written once under 'shared' (RFC 6901 pointer)",
        "properties": {"$ref": {"type": "string", "pattern": f"^#/{SHARED_KEY}/[^/]+/.+$"}},
    }
    schema["properties"][SHARED_KEY] = {
        "type": "object", "additionalProperties": False,
        "description": "sections written once and referred to with {'$ref': '#/shared/<kind>/<name>'}",
        "properties": {kind: {"type": "object", "additionalProperties": sec}
                       for kind, sec in {**model_kinds, **map_kinds}.items()},
    }
    schema["$id"] = f"https://roce-tune.invalid/schema/plan-{PLAN_SCHEMA_VERSION}.json"
    return schema
