"""Inventory models (pydantic v2, strict, frozen): the single source of truth an engineer writes.

Shapes (YAML):

```yaml
site: {name: site-a, nccl_version: "2.21.5", adaptive_routing: false}
policy: {lossless_priorities: [3], roce_dscp: [26], cnp_dscp: 48, cnp_priority: 6, mtu: 9216}
defaults: {cable_length: 3m, media: dac}
switches:
  - {name: leaf1, platform: sonic, model: SN4700, role: leaf, mgmt: {host: 127.0.0.1},
     ports: [{name: "Ethernet[0-124/4]", speed: 400G}]}
links: [{a: leaf1:Ethernet120, b: spine1:Ethernet0, cable_length: 40m, media: optic}]
hosts:
  - {name: gpu01, nics: [{model: connectx-7, netdev: ens1f0np0, rdma_device: mlx5_0,
                          speed: 400G, rail: 0, switch_port: leaf1:Ethernet0}]}
```

Every name that later reaches a device CLI or a shell script is checked against a strict pattern
for its kind (:data:`DEVICE_NAME_RE` …), so rendered output can never carry injected commands.
Defaults follow the industry convention (NVIDIA/Cumulus RoCE mode, SONiC ``qos_config.j2``):
RoCE DSCP 26 -> priority 3 lossless, CNP DSCP 48 -> priority 6 strict, trust DSCP.
"""

from __future__ import annotations

import ipaddress
import math
import re
from enum import Enum
from typing import TYPE_CHECKING, Annotated, Any, Literal, get_args

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    Strict,
    StrictBool,
    StrictFloat,
    StrictInt,
    ValidationError,
    ValidationInfo,
    WithJsonSchema,
    field_validator,
    model_validator,
)

from roce_tune.findings import short_repr

# the name patterns, shared with the renderers (roce_tune/names.py), re-exported for the inventory's users
from roce_tune.names import DEVICE_NAME_RE as DEVICE_NAME_RE
from roce_tune.names import ENDPOINT_RE as ENDPOINT_RE
from roce_tune.names import ENV_VAR_RE as ENV_VAR_RE
from roce_tune.names import HOSTNAME_RE as HOSTNAME_RE
from roce_tune.names import INTERFACE_NAME_RE as INTERFACE_NAME_RE
from roce_tune.names import INTERFACE_PATTERN_RE as INTERFACE_PATTERN_RE
from roce_tune.names import NETDEV_RE as NETDEV_RE
from roce_tune.names import PROFILE_NAME_RE as PROFILE_NAME_RE
from roce_tune.names import RDMA_DEVICE_RE as RDMA_DEVICE_RE
from roce_tune.platforms import SWITCH_PLATFORMS
from roce_tune.ranges import PORT_MTU_RANGE_BYTES, WATCHDOG_ACTIONS, WATCHDOG_RANGES_MS, dcqcn_param_range
from roce_tune.units import KNOWN_SPEEDS_GBPS, parse_bytes, parse_length_m, parse_speed_gbps, parse_time_us

_RANGE_RE = re.compile(r"\[(\d+)-(\d+)(?:/(\d+))?\]")

_MTU_MIN, _MTU_MAX = PORT_MTU_RANGE_BYTES


def name_error(value: object, pattern: str, kind: str, example: str) -> str:
    """The message of a name that does not match its pattern (the same for every name type)."""
    return (f"{short_repr(value)} is not a valid {kind} (allowed: {pattern}, e.g. {example}); "
            "shell/CLI metacharacters, spaces, quotes and newlines are rejected")


def _pattern(regex: re.Pattern[str], kind: str, example: str) -> Any:
    def check(v: str) -> str:
        if not regex.fullmatch(v):  # match() would let a final newline through '$'
            raise ValueError(name_error(v, regex.pattern, kind, example))
        return v

    return AfterValidator(check)


#: pattern -> (kind, example) of the name types pydantic-core matches itself (:func:`_native_pattern`);
#: :mod:`roce_tune.inventory.validation` words their errors as :func:`name_error`.
NATIVE_NAME_PATTERNS: dict[str, tuple[str, str]] = {}


def _native_name(regex: re.Pattern[str], kind: str, example: str) -> WithJsonSchema:
    """For a name type matched by pydantic-core itself, ``Annotated[str, Field(pattern=regex.pattern),
    _native_name(regex, kind, example)]``, instead of :func:`_pattern` (a Python call per value: 100k
    endpoints, netdevs and RDMA devices at 4,096 hosts). Same acceptance: the Rust regex anchors
    ``^``/``$`` at the ends of the text, as ``fullmatch`` does (no final newline slips through), and
    the patterns use no lookaround. Registers the pattern in :data:`NATIVE_NAME_PATTERNS` (its errors,
    ``string_pattern_mismatch`` and ``string_unicode`` for a lone surrogate, are worded as
    :func:`name_error` by the loader); returns the JSON Schema :func:`_pattern` gives."""
    NATIVE_NAME_PATTERNS[regex.pattern] = (kind, example)
    return WithJsonSchema({
        "type": "string", "pattern": regex.pattern,
        "description": f"{kind[0].upper()}{kind[1:]}, e.g. {example}; shell/CLI metacharacters, spaces, "
                       "quotes and newlines are rejected."})


DeviceName = Annotated[str, _pattern(DEVICE_NAME_RE, "device name", "leaf1")]
InterfaceName = Annotated[str, _pattern(INTERFACE_NAME_RE, "interface name", "Ethernet0")]
InterfacePattern = Annotated[str, _pattern(INTERFACE_PATTERN_RE, "interface name or range",
                                           "Ethernet[0-124/4]")]
Netdev = Annotated[str, Field(pattern=NETDEV_RE.pattern), _native_name(NETDEV_RE, "netdev name", "ens1f0np0")]
RdmaDevice = Annotated[str, Field(pattern=RDMA_DEVICE_RE.pattern),
                       _native_name(RDMA_DEVICE_RE, "RDMA device name", "mlx5_0")]
ProfileName = Annotated[str, _pattern(PROFILE_NAME_RE, "profile name", "ROCE_LOSSLESS")]
EnvVar = Annotated[str, _pattern(ENV_VAR_RE, "environment variable name", "ROCE_TUNE_PASSWORD")]


def _host_address(v: str) -> str:
    """A management host that fits :data:`HOSTNAME_RE` and is what SSH can reach: with a ``:`` only an IPv6
    address (``10.0.0.1:2201`` is a host with its port), of digits and dots only an IPv4 address of four
    numbers 0-255 (``10.0.0.256`` and ``10.0.0`` are typos; a DNS name is not all-numeric, RFC 3696 2).

    Raises:
        ValueError: neither of those.
    """
    if ":" in v:
        try:
            ipaddress.IPv6Address(v)
        except ValueError:
            raise ValueError(f"{short_repr(v)} is not an IPv6 address, and a host name or IPv4 address has "
                             "no ':' (the SSH port goes in the port field)") from None
    elif re.fullmatch(r"[0-9.]+", v):
        try:
            ipaddress.IPv4Address(v)
        except ValueError:
            raise ValueError(f"{short_repr(v)} is not an IPv4 address (four numbers 0-255 with dots between; "
                             "a host name is not all digits)") from None
    return v


Hostname = Annotated[str, _pattern(HOSTNAME_RE, "host name or address", "10.0.0.1"),
                     AfterValidator(_host_address)]
Endpoint = Annotated[str, Field(pattern=ENDPOINT_RE.pattern),
                     _native_name(ENDPOINT_RE, "link endpoint device:port", "leaf1:Ethernet0")]
SpeedGbps = Annotated[int, BeforeValidator(parse_speed_gbps)]
LengthM = Annotated[float, BeforeValidator(parse_length_m)]
Bytes = Annotated[int, BeforeValidator(parse_bytes)]
TimeUs = Annotated[float, BeforeValidator(parse_time_us)]
Priority = Annotated[int, Strict(), Field(ge=0, le=7)]
Dscp = Annotated[int, Strict(), Field(ge=0, le=63)]


def expand_interface_pattern(pattern: str) -> list[str]:
    """Expand ``Ethernet[0-12/4]`` to ``[Ethernet0, Ethernet4, Ethernet8, Ethernet12]``.

    A name without brackets expands to itself. Raises ``ValueError`` on an empty or reversed range.
    """
    m = _RANGE_RE.search(pattern)
    if not m:
        return [pattern]
    start, stop, step = int(m.group(1)), int(m.group(2)), int(m.group(3) or 1)
    if stop < start or step < 1:
        raise ValueError(f"interface range {pattern!r} is empty (start > stop or step < 1)")
    head, tail = pattern[: m.start()], pattern[m.end():]
    return [f"{head}{i}{tail}" for i in range(start, stop + 1, step)]


def _breakout_matches_speed(breakout: str | None, info: ValidationInfo) -> str | None:
    """``breakout`` (``"4x100G"``: four 100G ports from one cage) if its ports have the entry's ``speed``.

    Raises:
        ValueError: the breakout's port speed differs from ``speed`` (``speed: 100G, breakout: 4x200G``
            says two different things about the same ports).
    """
    speed = info.data.get("speed")
    if breakout is None or speed is None:
        return breakout
    lane = breakout[:-1].split("x")[1]
    if int(lane) != speed:
        raise ValueError(f"breakout {breakout} makes {lane}G ports but this entry's speed is {speed}G")
    return breakout


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, str_strip_whitespace=False)


_PLATFORM_DOC = "Switch network OS; each has a renderer under ``templates/<platform>/``."
if TYPE_CHECKING:
    class Platform(str, Enum):
        """(members at run time: the registry's switch platforms)"""
else:
    #: the registry's switch platforms, in its order (members named as their values)
    Platform = Enum("Platform", [(name, name) for name in SWITCH_PLATFORMS], type=str, module=__name__)
    Platform.__doc__ = _PLATFORM_DOC


class Role(str, Enum):
    """Clos tier. Up-down routing in the deadlock analysis follows leaf < spine < superspine."""

    leaf = "leaf"
    spine = "spine"
    superspine = "superspine"


TIER = {Role.leaf: 0, Role.spine: 1, Role.superspine: 2}


class Media(str, Enum):
    """Cable media; only used for reporting and the default cable length warning."""

    dac = "dac"
    aoc = "aoc"
    optic = "optic"


class HeadroomModel(str, Enum):
    """PFC headroom model: ``ieee`` (true cable bytes, 802.3 pause quanta) or ``sonic-static``
    (reproduces SONiC's Mellanox ``pg_profile_lookup.ini`` tables)."""

    ieee = "ieee"
    sonic_static = "sonic-static"


class EcnProfileName(str, Enum):
    """ECN threshold source: ``derived`` from BDP/fan-in, or a named vendor/paper profile \
(docs/derivation.md#ecn)."""

    derived = "derived"
    bdp = "bdp"
    nvidia_default = "nvidia-default"
    sonic_default = "sonic-default"
    dcqcn_paper = "dcqcn-paper"


class Credentials(_Strict):
    """Credential *references* only: names of environment variables, never the secrets."""

    username_env: EnvVar = "ROCE_TUNE_USERNAME"
    password_env: EnvVar | None = "ROCE_TUNE_PASSWORD"
    key_file_env: EnvVar | None = None


class Mgmt(_Strict):
    """Management address and SSH port."""

    host: Hostname
    port: StrictInt = Field(22, ge=1, le=65535)


class SwitchPort(_Strict):
    """A front-panel port or a range of them. ``breakout`` like ``"4x100G"`` splits the cage;
    the resulting sub-ports are then listed as their own entries (their names are platform-specific)."""

    name: InterfacePattern
    speed: SpeedGbps
    lanes: StrictInt | None = Field(None, ge=1, le=8,
                                    description="SerDes lanes; default speed / ASIC SerDes rate")
    breakout: str | None = Field(None, pattern=r"^[1-8]x\d{2,3}G$")
    mtu: StrictInt | None = Field(None, ge=_MTU_MIN, le=_MTU_MAX)
    admin_up: StrictBool = True

    _breakout = field_validator("breakout")(_breakout_matches_speed)

    def names(self) -> list[str]:
        """The concrete port names this entry stands for."""
        return expand_interface_pattern(self.name)


class Switch(_Strict):
    """A switch: platform, hardware model (looked up in the catalog for its ASIC), role and ports."""

    name: DeviceName
    platform: Platform
    model: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]{0,40}$")
    asic: str | None = Field(None, pattern=r"^[a-z0-9-]{2,40}$",
                             description="catalog ASIC id; default from model")
    role: Role
    mgmt: Mgmt | None = None
    credentials: Credentials = Credentials()
    os_version: str | None = Field(
        None, pattern=r"^[A-Za-z0-9._-]{1,40}$",
        description="network OS release (e.g. 5.14.0); selects the syntax where it differs by release "
                    "(README lists the supported releases per platform); unknown releases get lint RT136")
    buffer_model: Literal["traditional", "dynamic"] | None = Field(
        None, description="buffer-management model the switch runs, where its platform has a choice (SONiC "
                          "DEVICE_METADATA|localhost.buffer_model); default: the platform's default for the "
                          "ASIC")
    ports: list[SwitchPort] = Field(default_factory=list)
    rail: StrictInt | None = Field(None, ge=0, le=63,
                                   description="rail this leaf serves in a rail-optimised fabric")
    rails: list[Annotated[int, Field(ge=0, le=63, strict=True)]] | None = Field(
        None, min_length=1, max_length=64,
        description="rails this leaf serves when it carries more than one (e.g. [0, 1]); instead of rail")
    plane: StrictInt | None = Field(None, ge=0, le=7, description="plane in a dual-plane / dual-ToR design")

    @model_validator(mode="after")
    def _one_way_to_give_rails(self) -> Switch:
        if self.rail is not None and self.rails is not None:
            raise ValueError("give either 'rail' (one rail) or 'rails' (several), not both")
        if self.rails is not None and len(set(self.rails)) != len(self.rails):
            raise ValueError(f"'rails' lists a rail twice: {self.rails}")
        return self

    @property
    def served_rails(self) -> frozenset[int] | None:
        """The rails this leaf serves (``rail`` or ``rails``); None when it declares none."""
        if self.rails is not None:
            return frozenset(self.rails)
        return None if self.rail is None else frozenset((self.rail,))


class Link(_Strict):
    """A cable between two ``device:port`` endpoints (switch-switch; host cabling is on the NIC).

    ``lossless: false`` keeps both ends out of the lossless domain (no PFC, headroom or ECN profile on
    those ports; the deadlock analysis leaves the link out): for same-tier/peer links and links to
    devices roce-tune does not configure (RT113, RT220-RT222).
    """

    a: Endpoint
    b: Endpoint
    cable_length: LengthM | None = None
    media: Media | None = None
    lossless: bool = Field(True, strict=True,
                           description="carry the lossless priorities on this link (PFC, headroom, ECN); "
                                             "false keeps both ends lossy")


class Nic(_Strict):
    """One ConnectX/BlueField port as the host sees it, and the switch port it is cabled to."""

    model: str = Field(pattern=r"^[a-z0-9-]{2,40}$")
    netdev: Netdev
    rdma_device: RdmaDevice
    rdma_port: StrictInt = Field(1, ge=1, le=2)
    speed: SpeedGbps
    rail: StrictInt | None = Field(None, ge=0, le=63)
    switch_port: Endpoint | None = None
    cable_length: LengthM | None = None
    media: Media | None = None
    mtu: StrictInt | None = Field(None, ge=_MTU_MIN, le=_MTU_MAX)
    pci_address: str | None = Field(None, pattern=r"^[0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7]$")


class Host(_Strict):
    """A GPU server with its RDMA NICs."""

    name: DeviceName
    mgmt: Mgmt | None = None
    credentials: Credentials = Credentials()
    gpus: StrictInt = Field(8, ge=0, le=64)
    socket_ifname: Netdev | None = Field(None, description="NCCL bootstrap interface (NCCL_SOCKET_IFNAME)")
    mtu: StrictInt | None = Field(None, ge=_MTU_MIN, le=_MTU_MAX)
    nics: list[Nic] = Field(default_factory=list)


OverrideParam = Literal[
    "xoff_bytes", "xon_bytes", "size_bytes", "cable_m",
    "kmin_bytes", "kmax_bytes", "pmax_percent",
    "detection_ms", "restoration_ms", "poll_ms", "action",
    "rpg_time_reset_us", "rpg_byte_reset_bytes", "rpg_threshold", "rpg_ai_rate_mbps",
    "rpg_hai_rate_mbps", "rpg_gd", "rpg_min_dec_fac_percent", "rpg_min_rate_mbps",
    "rate_to_set_on_first_cnp_mbps", "dce_tcp_g", "dce_tcp_rtt_us", "rate_reduce_monitor_period_us",
    "initial_alpha_value", "min_time_between_cnps_us",
]
_PIN_KEYS = frozenset(get_args(OverrideParam))


#: Pinned byte counts above this are a unit typo, not a buffer (2^48 B = 256 TiB, far above any switch
#: ASIC's packet buffer; also keeps every value exact in JSON's 2^53 and in float arithmetic). The real
#: per-ASIC limits are checked on the plan (RT201/RT202 headroom admission, RT210 Kmax vs the PFC trigger).
PIN_BYTES_MAX = 1 << 48
_RATE_RE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([MmGg])?(?:b(?:ps|/s)?)?\s*$", re.ASCII)
_PERCENT_RE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*%?\s*$", re.ASCII)


def _number(value: object, what: str) -> float:
    """A finite number from a YAML int/float (never a bool: ``true`` is not 1)."""
    if isinstance(value, bool):
        raise ValueError(f"{str(value).lower()} is not a number ({what})")
    if not isinstance(value, (int, float)):
        raise ValueError(f"{short_repr(value)} is not {what}")
    if not math.isfinite(value):
        raise ValueError(f"{short_repr(value)} is not a finite number ({what})")
    return float(value)


def _whole(x: float, value: object, unit: str) -> int:
    if x != int(x):
        raise ValueError(f"{short_repr(value)} is not a whole number of {unit}")
    return int(x)


def _in_range(key: str, x: float, lo: float, hi: float, unit: str, source: str, *,
              lo_open: bool = False) -> None:
    if (x <= lo if lo_open else x < lo) or x > hi:
        u = f" {unit}" if unit else ""
        low = f"above {_num(lo)}" if lo_open else _num(lo)
        raise ValueError(f"{key} = {_num(x)}{u} is outside {low}..{_num(hi)}{u} ({source})")


def _num(x: float) -> str:
    return str(int(x)) if x == int(x) and abs(x) < 1e18 else f"{x:g}"


def _pin_time(key: str, value: object, unit: str) -> float:
    """``300``, ``"300us"``, ``"0.3ms"``, ``"500ns"`` in ``unit`` (``us`` or ``ms``): the unit the key names
    is assumed for a bare number, a written unit is converted (``poll_ms: 5us`` is 0.005 ms, not 5 ms)."""
    if isinstance(value, str):
        bare = value.strip(" ").replace(".", "", 1)
        us = parse_time_us(value) if not (bare.isascii() and bare.isdigit()) else (
            float(value) * (1000 if unit == "ms" else 1))
        return us / 1000 if unit == "ms" else us
    return _number(value, f"a time in {unit}")


def _pin_rate_mbps(value: object) -> float:
    if isinstance(value, str):
        m = _RATE_RE.fullmatch(value)
        if not m:
            raise ValueError(f"{short_repr(value)} is not a rate: write Mb/s like 80, 80Mbps or 1Gbps")
        return float(m.group(1)) * (1000 if (m.group(2) or "M").upper() == "G" else 1)
    return _number(value, "a rate in Mb/s")


def _pin_percent(value: object) -> float:
    if isinstance(value, str):
        m = _PERCENT_RE.fullmatch(value)
        if not m:
            raise ValueError(f"{short_repr(value)} is not a percentage: write 5 or 5%")
        return float(m.group(1))
    return _number(value, "a percentage")


def parse_pin(key: str, value: object) -> int | float | str:
    """Parse and range-check one pinned value (``policy.overrides[].set``) by its parameter's unit.

    Units follow the name's suffix: ``_bytes`` (``150KB``, ``64KiB``), ``_m`` (``40m``), ``_ms`` / ``_us``
    (a bare number is in the named unit; ``"0.3ms"``, ``"500ns"`` are converted and must come out whole),
    ``_mbps`` (``80``, ``80Mbps``, ``1Gbps``), ``_percent`` (``5``, ``"5%"``); DCQCN counters are plain
    whole numbers. ``true``/``false``, NaN and infinities are never numbers.

    Ranges: PFC watchdog times from sonic-pfcwd.yang (:data:`roce_tune.ranges.WATCHDOG_RANGES_MS`); DCQCN
    from the NVIDIA DOCA ranges (:func:`roce_tune.ranges.dcqcn_param_range`) with rates bounded by the
    fastest known port speed here (lint checks each NIC's own line rate, RT127); ``pmax_percent`` in
    (0, 100]; byte counts up to :data:`PIN_BYTES_MAX`; cable lengths as
    :func:`~roce_tune.units.parse_length_m`.

    Raises:
        ValueError: a value of the wrong unit, not finite, not whole where the device takes integers, or
            outside the range (the message names the key, the range and its source).
    """
    if key == "action":
        if value not in WATCHDOG_ACTIONS:
            raise ValueError(f"action must be one of {', '.join(WATCHDOG_ACTIONS)}, not {short_repr(value)}")
        return str(value)
    if key.endswith("_bytes"):
        n = parse_bytes(value)
        if key == "rpg_byte_reset_bytes":
            lo, hi, src = dcqcn_param_range(key, max(KNOWN_SPEEDS_GBPS))
            _in_range(key, n, lo, hi, "B", src)
        else:
            _in_range(key, n, 0, PIN_BYTES_MAX, "B", "sanity bound: larger than any switch buffer")
        return n
    if key.endswith("_m"):
        return parse_length_m(value)
    if key in WATCHDOG_RANGES_MS:
        ms = _whole(_pin_time(key, value, "ms"), value, "ms")
        lo, hi = WATCHDOG_RANGES_MS[key]
        _in_range(key, ms, lo, hi, "ms", "sonic-pfcwd.yang")
        return ms
    if key == "pmax_percent":
        pct = _pin_percent(value)
        _in_range(key, pct, 0, 100, "%", "a marking probability", lo_open=True)
        return pct
    if key.endswith("_us"):
        x = _pin_time(key, value, "us")
        unit = "µs"
    elif key.endswith("_mbps"):
        x, unit = _pin_rate_mbps(value), "Mb/s"
    elif key.endswith("_percent"):
        x, unit = _pin_percent(value), "%"
    else:
        x, unit = _number(value, "a whole number"), ""
    n = _whole(x, value, unit or "units")
    lo, hi, src = dcqcn_param_range(key, max(KNOWN_SPEEDS_GBPS))
    _in_range(key, n, lo, hi, unit, src + (" at the fastest known line rate" if unit == "Mb/s" else ""))
    return n


def _parse_pins(value: Any) -> Any:
    """``set`` of an override with every known key parsed by :func:`parse_pin`; each bad value is its own
    error at ``set.<key>`` (so the finding points at that value). Unknown keys and non-mappings are left
    for the schema (``Literal`` keys) to report."""
    if not isinstance(value, dict):
        return value
    out: dict[Any, Any] = {}
    errors: list[Any] = []
    for key, v in value.items():
        if key not in _PIN_KEYS:
            out[key] = v
            continue
        try:
            out[key] = parse_pin(key, v)
        except ValueError as exc:
            errors.append({"type": "value_error", "loc": (key,), "input": v, "ctx": {"error": exc}})
    if errors:
        raise ValidationError.from_exception_data("set", errors)
    return out


class Override(_Strict):
    """A user-pinned value. Scope by ``role``, ``device`` or ``device`` + ``port`` (no scope = site).

    The plan shows the value as "pinned by user" with the derived value beside it, and its source names
    this entry (``policy.overrides[i]``) and its ``reason``; the tuner's safety checks still run on it (e.g.
    Kmax above the PFC trigger is an error).
    """

    role: Role | Literal["host"] | None = None
    device: DeviceName | None = None
    port: InterfaceName | None = None
    set: Annotated[dict[OverrideParam, int | float | str], BeforeValidator(_parse_pins)]
    reason: str | None = Field(
        None, max_length=500, description="why the value is pinned (e.g. vendor TAC advice): the pinned "
                                          "value's rationale source in plan.md, plan.json and explain")

    @model_validator(mode="after")
    def _port_needs_device(self) -> Override:
        if self.port and not self.device:
            raise ValueError("an override with 'port' also needs 'device'")
        if self.role and self.device:
            raise ValueError("give either 'role' or 'device', not both")
        return self


class Policy(_Strict):
    """Site RoCE policy. Defaults: NVIDIA/Cumulus RoCE lossless mode and SONiC ``qos_config.j2``."""

    lossless_priorities: list[Priority] = Field(default_factory=lambda: [3], min_length=1)
    roce_dscp: list[Dscp] = Field(default_factory=lambda: [26], min_length=1)
    cnp_dscp: Dscp = 48
    cnp_priority: Priority = 6
    trust: Literal["dscp", "pcp"] = "dscp"
    mtu: StrictInt = Field(9216, ge=_MTU_MIN, le=_MTU_MAX, description="switch port MTU (bytes)")
    host_mtu: StrictInt = Field(9000, ge=_MTU_MIN, le=_MTU_MAX, description="host netdev MTU (bytes)")
    roce_mtu: Literal[256, 512, 1024, 2048, 4096] = 4096
    target_utilisation: StrictFloat = Field(0.9, gt=0, le=1)
    pfc_watchdog: StrictBool = True
    watchdog_action: Literal["drop", "forward", "alert"] = "drop"
    dcqcn: StrictBool = True
    headroom_model: HeadroomModel | None = Field(
        None, description="None = sonic-static where the catalog has SONiC's vendor-validated static tables "
                          "for the ASIC (sonic_static_tables), ieee elsewhere")
    ecn_profile: EcnProfileName = EcnProfileName.derived
    objective: Literal["throughput", "latency", "balanced"] = Field(
        "throughput", description="what the derived ECN ramp optimises (docs/derivation.md#objective): "
        "throughput (incast completion, utilisation, least PFC), latency (bounded standing queue) or "
        "balanced")
    shared_headroom_pool: StrictBool | None = Field(
        None, description="None = use it where the ASIC supports it")
    shp_oversubscription: StrictInt = Field(8, ge=1, le=64)
    nic_latency_us: TimeUs = Field(2.0, description="one NIC's processing latency for base RTT")
    overrides: list[Override] = Field(default_factory=list)


class Defaults(_Strict):
    """Values used where a link or NIC leaves them out (a lint warning says so)."""

    cable_length: LengthM = 5.0
    media: Media = Media.dac


class Site(_Strict):
    """Site identity and fabric-wide facts that NCCL and routing depend on."""

    name: DeviceName
    description: str | None = Field(None, max_length=2000)
    nccl_version: str | None = Field(None, pattern=r"^\d+\.\d+(\.\d+)?(-\d+)?$")
    adaptive_routing: StrictBool = False
    rail_optimised: StrictBool = False
    dual_tor: StrictBool = False


class Inventory(_Strict):
    """The whole inventory file."""

    site: Site
    policy: Policy = Policy()
    defaults: Defaults = Defaults()
    switches: list[Switch] = Field(default_factory=list)
    links: list[Link] = Field(default_factory=list)
    hosts: list[Host] = Field(default_factory=list)
    fabric: FabricIntent | None = Field(
        None, description="compact fabric intent, expanded into switches/links/hosts at load time "
                          "(docs/intent.md)")


# --- compact fabric intent (expanded by roce_tune.inventory.intent) --------------------------------
#: A name pattern: text with ``{expr}`` or ``{expr:format}`` fields, expr over the section's index
#: variables with + - * // % and parentheses (``"su{g+1}-leaf{l+1}"``, ``"Ethernet{128+8*u}"``).
NAME_TEMPLATE_RE = re.compile(r"^[A-Za-z0-9{][A-Za-z0-9{}()+*/%:._ -]{0,127}$")
NameTemplate = Annotated[str, _pattern(NAME_TEMPLATE_RE, "name pattern", "su{g+1}-leaf{l+1}")]


class IntentPorts(_Strict):
    """A set of ports named by a pattern; links built from them take ``cable_length``/``media``."""

    count: StrictInt | None = Field(None, ge=1, le=4096,
                                    description="how many; host ports default to what the hosts need")
    name: NameTemplate
    speed: SpeedGbps
    lanes: StrictInt | None = Field(None, ge=1, le=8)
    breakout: str | None = Field(None, pattern=r"^[1-8]x\d{2,3}G$")
    mtu: StrictInt | None = Field(None, ge=_MTU_MIN, le=_MTU_MAX)
    cable_length: LengthM | None = None
    media: Media | None = None

    _breakout = field_validator("breakout")(_breakout_matches_speed)


class IntentNic(_Strict):
    """Every host's NIC on rail ``r``: names are patterns over ``r`` and the host's variables."""

    model: str = Field(pattern=r"^[a-z0-9-]{2,40}$")
    speed: SpeedGbps
    netdev: NameTemplate
    rdma_device: NameTemplate
    rdma_port: StrictInt = Field(1, ge=1, le=2)
    cable_length: LengthM | None = None
    media: Media | None = None
    mtu: StrictInt | None = Field(None, ge=_MTU_MIN, le=_MTU_MAX)


class IntentHost(_Strict):
    """The GPU servers: a name pattern, the first management address (the next hosts count up)."""

    name: NameTemplate
    mgmt: Hostname | None = Field(None, description="first host's management address; each next host gets "
                                  "the next one")
    mgmt_port: StrictInt = Field(22, ge=1, le=65535)
    count_up: Literal["address", "port"] = Field("address",
                                                 description="what the next host's management takes: "
                                                 "the next address (default) or the next SSH port "
                                                 "(emulators)")
    credentials: Credentials = Credentials()
    gpus: StrictInt | None = Field(None, ge=0, le=64)
    socket_ifname: Netdev | None = None
    mtu: StrictInt | None = Field(None, ge=_MTU_MIN, le=_MTU_MAX)
    nic: IntentNic


class _IntentSwitch(_Strict):
    name: NameTemplate
    platform: Platform
    model: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]{0,40}$")
    asic: str | None = Field(None, pattern=r"^[a-z0-9-]{2,40}$")
    os_version: str | None = Field(None, pattern=r"^[A-Za-z0-9._-]{1,40}$")
    mgmt: Hostname | None = Field(None,
                                  description="first switch's management address; the next ones count up")
    mgmt_port: StrictInt = Field(22, ge=1, le=65535)
    count_up: Literal["address", "port"] = Field("address",
                                                 description="what the next switch's management takes: "
                                                 "the next address (default) or the next SSH port "
                                                 "(emulators)")
    credentials: Credentials = Credentials()


class IntentLeafVariant(_Strict):
    """What differs for the leaves of some groups (another vendor, model or port naming)."""

    platform: Platform | None = None
    model: str | None = Field(None, pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]{0,40}$")
    asic: str | None = Field(None, pattern=r"^[a-z0-9-]{2,40}$")
    os_version: str | None = Field(None, pattern=r"^[A-Za-z0-9._-]{1,40}$")
    host_ports: IntentPorts | None = None
    uplinks: IntentPorts | None = None


class IntentLeaf(_IntentSwitch):
    """Rail leaves: ``rails / rails_per_leaf`` per group of hosts. ``groups``: group ``g`` takes the
    fields of ``groups[g % len(groups)]`` over these (a multi-vendor fabric, one vendor per group)."""

    host_ports: IntentPorts
    uplinks: IntentPorts | None = Field(None, description="to the spines; none for a single-switch fabric")
    groups: list[IntentLeafVariant] | None = Field(None, min_length=1, max_length=64)


class IntentSpine(_IntentSwitch):
    """Spines of a pod; every leaf of the pod reaches every spine with ``uplinks / count`` links."""

    count: StrictInt | None = Field(None, ge=1, le=1024,
                                    description="spines per pod; default one per leaf uplink")
    ports: IntentPorts
    uplinks: IntentPorts | None = Field(None, description="to the superspines (three tiers only)")


class IntentSuperspine(_IntentSwitch):
    """Superspine planes: spine ``s`` of every pod connects to the superspines of plane ``s``."""

    count_per_plane: StrictInt | None = Field(None, ge=1, le=1024)
    ports: IntentPorts


class FabricIntent(_Strict):
    """A rail-optimised Clos described by its shape; expanded at load time into switches, links and hosts.

    Groups (scalable units) of ``hosts_per_group`` hosts share a set of rail leaves; ``groups_per_pod``
    groups share a pod's spines; several pods need a ``superspine`` tier.
    """

    hosts: StrictInt = Field(ge=1, le=65536)
    rails: StrictInt = Field(8, ge=1, le=64, description="NICs per host, one per rail")
    hosts_per_group: StrictInt = Field(ge=1, le=4096)
    rails_per_leaf: StrictInt = Field(1, ge=1, le=64)
    groups_per_pod: StrictInt | None = Field(None, ge=1, le=4096, description="default: one pod (two tiers)")
    label_rails: bool = Field(True, strict=True,
                              description="write rail/rails on leaves and NICs (rail-optimised); "
                              "false for dual-homed hosts whose NICs are not rails")
    host: IntentHost
    leaf: IntentLeaf
    spine: IntentSpine | None = Field(None, description="none for a single group on one set of leaves")
    superspine: IntentSuperspine | None = None
Inventory.model_rebuild()
