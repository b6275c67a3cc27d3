"""The Plan model: the contract between tuner, renderers, deploy and verify.

Its JSON codec (``plan.json``, schema 1.3: shared sections, compact) is :mod:`roce_tune.plan.codec`.

A versioned, frozen pydantic model. Every derived number sits in a field whose name carries its
unit (``xoff_bytes``, ``kmin_bytes``, ``detection_ms``) and every section has a ``rationale`` map
from field name to :class:`Rationale` (formula, inputs with units, source). Serialising the same
plan twice gives byte-identical JSON (:func:`plan_to_json`).

Schema history: ``1.0`` first published version. ``1.1``: ``plan.json`` writes each headroom, buffers,
ECN, watchdog and DCQCN section (and a NIC's shared maps) once under ``"shared"`` and refers to it from
every place it applies with ``{"$ref": "#/shared/<Kind>/<name>"}`` (RFC 6901 pointer), instead of
repeating it on every port and NIC (a 4,096-host plan.json: 1,043 MB inline, 193 MB shared). The
model is unchanged: :func:`plan_from_json` resolves the references (1.0 files have none). ``1.2``: a port's
rationale (fan-in, cable) is shared like a NIC's (a 4,096-host fabric has ~5 distinct among 100k ports), and
the file is compact JSON (no indentation): 200 MB -> ~25 MB at 4,096 hosts, read back in a fraction of the
time. The model is unchanged; 1.0 and 1.1 files still load. ``1.3``: a host's NCCL rationale is shared too
(hosts with the same NICs and policy have one; it was 21 of the 81 MB of a 4,096-host plan.json, and loading
it back compared every host's copy); 1.0 to 1.2 files still load.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from typing import Any, Literal, Protocol, TypeVar

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    FieldSerializationInfo,
    SerializationInfo,
    SerializerFunctionWrapHandler,
    field_serializer,
    model_serializer,
)

from roce_tune.findings import Finding

PLAN_SCHEMA_VERSION = "1.3"
#: serialisation context key of the :class:`SectionInterner` (set only by :func:`plan_to_json`)
_INTERN = "roce_tune_interner"
#: top-level key of plan.json holding the sections referred to by ``$ref``
SHARED_KEY = "shared"
_M = TypeVar("_M", bound=BaseModel)


class _Frozen(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


#: the override entry a pinned value's rationale source names (its first: a reason comes after it)
_OVERRIDE_ENTRY_RE = re.compile(r"policy\.overrides\[(\d+)\]")


class Rationale(_Frozen):
    """Why a value is what it is.

    Attributes:
        formula: the expression evaluated, in words or symbols.
        inputs: every input with its unit in the key (``speed_gbps``, ``cable_m``).
        source: standard, paper, vendor document or repository path the formula/default comes from.
        note: anything a reviewer should know (rounding, clamping, why it differs from a vendor default).
        pinned_by_user: the value was set by an inventory override; ``derived_value`` is what the
            tuner would have chosen.
    """

    formula: str
    inputs: dict[str, float | int | str | bool] = Field(default_factory=dict)
    source: str
    note: str = ""
    pinned_by_user: bool = False
    derived_value: float | int | str | None = None

    def pin_path(self, key: str) -> str | None:
        """The inventory field path of the pin behind this value, ``policy.overrides[i].set.<key>`` (``key``:
        the value's field name), read from ``source`` (the tuner names the override entry there first,
        :func:`roce_tune.inventory.overrides.override_label`); None when the value is not pinned or its
        source names no entry."""
        m = _OVERRIDE_ENTRY_RE.search(self.source) if self.pinned_by_user else None
        return f"policy.overrides[{m.group(1)}].set.{key}" if m else None


class Explained(_Frozen):
    """Base for sections whose numeric fields are explained in ``rationale[field_name]``."""

    rationale: dict[str, Rationale] = Field(default_factory=dict)


class SectionInterner(Protocol):
    """What the shared-section serialisers call while :func:`~roce_tune.plan.codec.plan_to_json` dumps a plan
    (implemented by :class:`roce_tune.plan.codec._Interner`)."""

    #: the references already made, by ``id`` of the object (the serialisers' fast path: a section met again)
    refs: dict[int, dict[str, str]]

    def ref(self, kind: str, obj: object, produce: Callable[[], Any], name: str | None) -> dict[str, str]:
        """``{"$ref": "#/shared/<kind>/<name>"}`` for ``obj``; ``produce()`` gives its section on
        first sight."""
        ...


def _shared_map(kind: str, value: Any, handler: SerializerFunctionWrapHandler,
                info: FieldSerializationInfo) -> Any:
    """A map field many ports/NICs hold as one object (a rationale, a DSCP map): a ``$ref`` while
    :func:`~roce_tune.plan.codec.plan_to_json` dumps, the map itself otherwise."""
    ctx = info.context
    interner: SectionInterner | None = ctx.get(_INTERN) if type(ctx) is dict else None
    if interner is None or not value:
        return handler(value)
    # (inlined: ~160k maps at 4,096 hosts, nearly all met before)
    return interner.refs.get(id(value)) or interner.ref(kind, value, lambda: handler(value), None)


class _Shared(Explained):
    """A section that many ports/NICs/switches share: written once by :func:`plan_to_json`."""

    def _shared_name(self) -> str | None:
        return None

    @model_serializer(mode="wrap")
    def _serialise_shared(self, handler: SerializerFunctionWrapHandler, info: SerializationInfo) -> Any:
        ctx = info.context
        interner: SectionInterner | None = ctx.get(_INTERN) if type(ctx) is dict else None
        if interner is None:
            return handler(self)
        # (inlined: ~140k sections at 4,096 hosts, nearly all met before)
        return (interner.refs.get(id(self))
                or interner.ref(type(self).__name__, self, lambda: handler(self), self._shared_name()))


# --- classification ----------------------------------------------------------------------------
class QueueScheduler(_Frozen):
    """Egress scheduling of one queue: ``strict`` or ``dwrr`` with a weight in percent."""

    queue: int = Field(ge=0, le=7)
    mode: Literal["strict", "dwrr"]
    weight_percent: int | None = Field(None, ge=0, le=100)
    name: str = Field(description="scheduler profile name, e.g. ROCE_DWRR / CNP_STRICT")


class Classification(Explained):
    """DSCP/TC/PG/queue maps shared by every switch and NIC of the site.

    ``dscp_to_tc`` covers all 64 DSCP values; ``tc_to_pg``, ``tc_to_queue`` and
    ``pfc_priority_to_queue`` cover TCs/priorities 0..7. ``roce_tos`` is the IP TOS byte hosts put on
    RoCE data (DSCP << 2 | ECT(0)=2), ``cnp_tos`` the one for CNPs (DSCP << 2).
    """

    trust: Literal["dscp", "pcp"]
    map_name: str
    dscp_to_tc: dict[int, int]
    tc_to_pg: dict[int, int]
    tc_to_queue: dict[int, int]
    pfc_priority_to_queue: dict[int, int]
    pfc_priority_to_pg: dict[int, int]
    dscp_to_priority: dict[int, int] = Field(description="NIC-side DSCP -> 802.1p priority map")
    lossless_priorities: list[int]
    lossless_queues: list[int]
    lossless_pgs: list[int]
    roce_dscp: list[int]
    roce_priority: int
    cnp_dscp: int
    cnp_priority: int
    cnp_queue: int
    roce_tos: int
    cnp_tos: int
    schedulers: list[QueueScheduler]


# --- headroom, buffers --------------------------------------------------------------------------
class Headroom(_Shared):
    """PFC headroom of one lossless PG on one port, in bytes (``xon``/``xoff``/``size`` as SONiC
    BUFFER_PROFILE), plus ``cells`` = size in ASIC cells. ``model`` is ``ieee`` or ``sonic-static``."""

    model: str
    profile: str = Field(description="BUFFER_PROFILE name shared by ports with equal headroom")
    xon_bytes: int
    xoff_bytes: int
    size_bytes: int
    size_cells: int
    lanes: int
    static_buffer_bytes: int | None = Field(
        None, description="static (reserved) PG buffer for platforms that take buffer + pause/resume "
                          "thresholds")
    pause_threshold_bytes: int | None = Field(None, description="static-PG occupancy at which XOFF is sent")
    resume_threshold_bytes: int | None = Field(
        None, description="static-PG occupancy at which XON is sent (below pause: hysteresis)")

    def _shared_name(self) -> str | None:
        asic = self.rationale["xoff_bytes"].inputs.get("asic") if "xoff_bytes" in self.rationale else None
        return f"{self.profile}@{asic}" if asic else self.profile


class BufferPool(Explained):
    """A shared buffer pool (SONiC BUFFER_POOL): ``xoff_bytes`` is the shared headroom pool size."""

    name: str
    type: Literal["ingress", "egress"]
    mode: Literal["dynamic", "static"] = "dynamic"
    size_bytes: int
    xoff_bytes: int | None = None


class BufferProfile(Explained):
    """A buffer profile (SONiC BUFFER_PROFILE). Lossless PG profiles carry xon/xoff."""

    name: str
    pool: str
    size_bytes: int
    dynamic_th: int | None = Field(None, ge=-8, le=7)
    static_th_bytes: int | None = None
    xon_bytes: int | None = None
    xoff_bytes: int | None = None


class Buffers(_Shared):
    """All pools and profiles of one switch."""

    pools: list[BufferPool]
    profiles: list[BufferProfile]
    shared_headroom_pool_bytes: int | None = None
    headroom_total_bytes: int


# --- ECN ---------------------------------------------------------------------------------------
class FluidCheck(_Frozen):
    """DCQCN fluid-model fixed point for the largest fan-in ``n_flows`` \
(docs/derivation.md#dcqcn-fluid-model)."""

    n_flows: int
    p_star: float
    q_star_bytes: int
    on_ramp: bool = Field(description="p* <= Pmax: the queue has an operating point on the ramp")
    below_pfc_trigger: bool = Field(description="q* below the egress PFC onset (pfc_onset_bytes)")
    ok: bool
    steady_state: str = Field("ramp", description="ramp | off-ramp | pfc-bound "
                              "(docs/derivation.md#pfc-bound-steady-state)")
    fast_recovery_load: float | None = Field(None, description="load of the fast-recovery limit cycle / C; "
                                             ">= 1 is PFC-bound")


class EcnProfile(_Shared):
    """WRED/ECN thresholds for the lossless queue at one speed/fan-in class.

    ``kmin_bytes``/``kmax_bytes``/``pmax_percent`` are the ECN-marking ramp. Where the ASIC has
    separate ECN and drop thresholds, ``drop_min_bytes``/``drop_max_bytes``/``drop_probability_percent``
    are the WRED drop thresholds (set above marking); otherwise they are None and marking uses the
    WRED thresholds. ``source_profile`` is ``derived`` or a named profile. ``queue_buffer_bytes`` is the
    buffer the lossless queue can occupy at this speed/fan-in: the denominator platforms that take
    thresholds as a percentage of the queue buffer convert against (Junos ``drop-profiles ...
    interpolate fill-level``); None when the tuner did not derive it (those platforms then refuse).
    """

    name: str
    speed_gbps: int
    source_profile: str
    kmin_bytes: int
    kmax_bytes: int
    pmax_percent: float
    drop_min_bytes: int | None = None
    drop_max_bytes: int | None = None
    drop_probability_percent: float | None = None
    base_rtt_us: float
    fan_in: int
    pfc_trigger_bytes: int
    pfc_onset_bytes: int | None = Field(None, description="egress queue at PFC onset: min(fan_in x "
                                        "pfc_trigger_bytes, queue_buffer_bytes)")
    objective: str | None = Field(None,
                                  description="policy.objective the derived ramp serves (None for named/bdp)")
    fluid: FluidCheck
    queue_buffer_bytes: int | None = None

    def _shared_name(self) -> str | None:
        return self.name


# --- watchdog ----------------------------------------------------------------------------------

class Watchdog(_Shared):
    """PFC watchdog of one switch (times in ms; action drop/forward/alert)."""

    enabled: bool
    detection_ms: int
    restoration_ms: int
    poll_ms: int
    action: Literal["drop", "forward", "alert"]
    pfc_ports: int


# --- ports and switches ------------------------------------------------------------------------
class PortPlan(Explained):
    """One switch port. ``peer`` is ``device:port`` or None; ``peer_kind`` host/switch/external/none.

    ``lossless`` ports have PFC on ``pfc_priorities``, a headroom profile and the ECN profile named
    ``ecn_profile`` on each lossless queue.
    """

    name: str
    speed_gbps: int
    lanes: int
    mtu: int
    cable_m: float
    admin_up: bool
    peer: str | None
    peer_kind: Literal["host", "switch", "external", "none"]
    direction: Literal["down", "up", "peer", "edge"]
    lossless: bool
    pfc_priorities: list[int]
    headroom: Headroom | None
    ecn_profile: str | None
    fan_in: int

    @field_serializer("rationale", mode="wrap")
    def _serialise_shared_rationale(self, value: Any, handler: SerializerFunctionWrapHandler,
                                    info: FieldSerializationInfo) -> Any:
        """Ports of one class (direction, fan-in, cable) hold one rationale object: share it."""
        return _shared_map("PortRationale", value, handler, info)


class SwitchPlan(_Frozen):
    """Everything derived for one switch."""

    name: str
    platform: str
    role: str
    model: str
    asic: str
    os_version: str | None
    buffer_model: str | None = Field(
        None, description="buffer-management model (SONiC traditional/dynamic): the inventory's, else the "
                          "platform's default for the ASIC; None where the platform has no such choice")
    mgmt_host: str | None
    mgmt_port: int | None
    credentials: dict[str, str | None] = Field(description="env var *names* only")
    ports: list[PortPlan]
    buffers: Buffers
    ecn_profiles: list[EcnProfile]
    watchdog: Watchdog

    def lossless_ecn_ports(self) -> Iterator[tuple[PortPlan, EcnProfile]]:
        """Every lossless port of the switch that has an ECN profile, with that profile, in port order."""
        profiles = {p.name: p for p in self.ecn_profiles}
        for port in self.ports:
            prof = profiles.get(port.ecn_profile or "")
            if port.lossless and prof is not None:
                yield port, prof


# --- hosts --------------------------------------------------------------------------------------
class Dcqcn(_Shared):
    """DCQCN on one NIC port (mlx5 names with unit suffixes).

    ``params`` maps e.g. ``rpg_ai_rate_mbps`` -> value; ``firmware_defaults`` the same keys with the
    firmware default beside it. ``enabled_priorities`` are the priorities with RP/NP enabled.
    When ``enabled`` is False, ``relies_on`` says what keeps the fabric stable instead.
    """

    enabled: bool
    enabled_priorities: list[int]
    params: dict[str, int]
    firmware_defaults: dict[str, int]
    relies_on: str = ""


class NicPlan(Explained):
    """One NIC port: maps, PFC vector, TOS, MTU, receive-buffer xoff and DCQCN."""

    model: str
    netdev: str
    rdma_device: str
    rdma_port: int
    pci_address: str | None
    speed_gbps: int
    rail: int | None
    switch_port: str | None
    trust: Literal["dscp", "pcp"]
    pfc_vector: list[int] = Field(description="8 entries, 1 = PFC on that priority (mlnx_qos --pfc)")
    dscp_to_priority: dict[int, int]
    cable_m: float
    mtu: int
    roce_mtu: int
    roce_tos: int
    cnp_dscp: int
    cnp_priority: int
    nic_xoff_bytes: int
    dcqcn: Dcqcn

    @field_serializer("rationale", "dscp_to_priority", mode="wrap")
    def _serialise_shared_maps(self, value: Any, handler: SerializerFunctionWrapHandler,
                               info: FieldSerializationInfo) -> Any:
        """The NIC rationale and DSCP map are one object for all NICs with the same policy: share them."""
        return _shared_map("NicRationale" if info.field_name == "rationale" else "NicDscpToPriority", value,
                           handler, info)


class HostPlan(_Frozen):
    """Everything derived for one host, plus its NCCL environment."""

    name: str
    mgmt_host: str | None
    mgmt_port: int | None
    credentials: dict[str, str | None]
    nics: list[NicPlan]
    nccl_env: dict[str, str]
    nccl_rationale: dict[str, Rationale] = Field(default_factory=dict)

    @field_serializer("nccl_rationale", mode="wrap")
    def _serialise_nccl_rationale(self, value: Any, handler: SerializerFunctionWrapHandler,
                                  info: FieldSerializationInfo) -> Any:
        """Hosts with the same RDMA NICs and policy have the same NCCL rationale (~5 KB of JSON each): written
        once under ``shared`` (schema 1.3; 21 of 81 MB of a 4,096-host plan.json before)."""
        return _shared_map("NcclRationale", value, handler, info)


# --- deadlock ------------------------------------------------------------------------------------
class DeadlockCycle(_Frozen):
    """One cyclic buffer dependency: the links (``dev:port -> dev:port``) and priority."""

    priority: int
    links: list[str]
    failed_link: str | None = Field(None, description="the failed link that exposes it; None = normal state")


class DeadlockReport(_Frozen):
    """Result of the buffer-dependency-graph analysis under up-down ECMP routing."""

    nodes: int
    edges: int
    scenarios_checked: int
    cycles: list[DeadlockCycle]
    flagged: list[Finding]
    notes: list[str]

    @property
    def ok(self) -> bool:
        """True when no cycle was found in any scenario."""
        return not self.cycles


# --- plan ----------------------------------------------------------------------------------------
class PlanSummary(_Frozen):
    """Counts a reviewer takes in at a glance."""

    switches: int
    hosts: int
    nics: int
    lossless_ports: int
    tiers: int


class Plan(_Frozen):
    """The full derived plan for one inventory."""

    schema_version: str = PLAN_SCHEMA_VERSION
    generator: str
    site: str
    inventory_file: str
    inventory_sha256: str
    policy: dict[str, object]
    summary: PlanSummary
    classification: Classification
    switches: list[SwitchPlan]
    hosts: list[HostPlan]
    deadlock: DeadlockReport
    findings: list[Finding]
    notes: list[str]

    def switch(self, name: str) -> SwitchPlan:
        """The switch called ``name``. Raises KeyError."""
        for s in self.switches:
            if s.name == name:
                return s
        raise KeyError(name)

    def host(self, name: str) -> HostPlan:
        """The host called ``name``. Raises KeyError."""
        for h in self.hosts:
            if h.name == name:
                return h
        raise KeyError(name)


_FIELD_NAMES: dict[type, tuple[tuple[str, ...], frozenset[str], set[str]]] = {}


def _field_names(cls: type[BaseModel]) -> tuple[tuple[str, ...], frozenset[str], set[str]]:
    """``cls``'s field names in order, as a frozenset, and as the one ``__pydantic_fields_set__`` every
    :func:`construct_trusted` instance of ``cls`` shares (cached: ``model_fields`` is a slow descriptor)."""
    names = _FIELD_NAMES.get(cls)
    if names is None:
        order = tuple(cls.model_fields)
        names = _FIELD_NAMES[cls] = (order, frozenset(order), set(order))
    return names


def construct_trusted(cls: type[_M], **values: object) -> _M:
    """Build a plan model from values the tuner already typed, without validation.

    For the ~100k ports of a large fabric, pydantic's validation (and even ``model_construct``) is the
    largest cost of deriving a plan; the tuner's values are typed by construction. Every field must be
    given; otherwise this falls back to ``model_construct`` (which fills defaults). Tests check that the
    result equals ``model_validate`` of its own dump.
    """
    names, name_set, fields_set = _field_names(cls)
    if tuple(values) != names:  # (callers on hot paths pass the fields in order: their dict is used as is)
        if values.keys() != name_set:
            return cls.model_construct(**values)  # type: ignore[arg-type]  # field values, not _fields_set
        # field order, as validation would give: serialisation follows it (same JSON as a loaded plan)
        values = {k: values[k] for k in names}
    m = cls.__new__(cls)
    object.__setattr__(m, "__dict__", values)
    # every field is set, so all instances share one set (plan models are frozen, and model_copy copies
    # the set before adding to it): 0.7-2 KB less per port and NIC, ~150 MB at 4,096 hosts
    object.__setattr__(m, "__pydantic_fields_set__", fields_set)
    object.__setattr__(m, "__pydantic_extra__", None)
    object.__setattr__(m, "__pydantic_private__", None)
    return m


def copy_each_trusted(models: list[_M], field: str, values: list[Any]) -> list[_M]:
    """Copies of ``models`` (of one class, built by :func:`construct_trusted`: every field set), the k-th with
    ``field`` set to ``values[k]``, without validation: how the tuner repeats the ports of an already derived
    switch shape for another switch (~100k ports at 4,096 hosts).

    Field order stays the model's (each copy starts from its model's field dict), so a copy serialises as an
    instance built with the new value would. ``field`` must be a field of the class and the values of its
    type (the caller's promise, as for :func:`construct_trusted`). Extra values (or models) are ignored.
    """
    if not models:
        return []
    cls = type(models[0])
    fields_set = _field_names(cls)[2]
    new, set_ = cls.__new__, object.__setattr__
    out = []
    for model, value in zip(models, values):
        d = model.__dict__.copy()
        d[field] = value
        m = new(cls)
        set_(m, "__dict__", d)
        set_(m, "__pydantic_fields_set__", fields_set)
        set_(m, "__pydantic_extra__", None)
        set_(m, "__pydantic_private__", None)
        out.append(m)
    return out


def construct_ordered(cls: type[_M], values: dict[str, Any]) -> _M:
    """:func:`construct_trusted` for a dict that already has every field of ``cls`` in field order (e.g. a
    copy of another such instance's ``__dict__`` with values replaced): it becomes the instance's dict as is,
    unchecked (the caller's promise; the tuner's 32k NICs at 4,096 hosts, ~2x cheaper than keywords)."""
    m = cls.__new__(cls)
    object.__setattr__(m, "__dict__", values)
    object.__setattr__(m, "__pydantic_fields_set__", _field_names(cls)[2])
    object.__setattr__(m, "__pydantic_extra__", None)
    object.__setattr__(m, "__pydantic_private__", None)
    return m
