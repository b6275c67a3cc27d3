"""Turn CLI spellings and plan.json ports into simulator inputs (:class:`EcnSetting`, :class:`DcqcnParams`).

``derived`` always means what the current tuner derives (:func:`roce_tune.tuner.ecn.derive_ecn`,
:func:`roce_tune.tuner.dcqcn.calc_dcqcn`); the simulator never re-implements a tuner rule.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from roce_tune.simulate.model import (
    DEFAULT_BUFFER_BYTES,
    DEFAULT_HEADER_BYTES,
    DEFAULT_PAYLOAD_BYTES,
    DEFAULT_PFC_ALPHA,
    MAX_FAN_IN,
    DcqcnParams,
    EcnSetting,
    SimInputs,
)
from roce_tune.units import parse_bytes

if TYPE_CHECKING:
    from roce_tune.plan import NicPlan, Plan, PortPlan, SwitchPlan

    #: (NIC by the switch port it is cabled to, first NIC of each speed): :func:`nic_index`
    NicIndex = tuple[dict[str, NicPlan], dict[int, NicPlan]]

ECN_PROFILES = ("derived", "bdp", "nvidia-default", "sonic-default", "dcqcn-paper")


def _dynamic_th(pfc_alpha: float) -> int:
    """SAI dynamic_th exponent for an alpha (alpha = 2^dynamic_th), clamped to -8..7."""
    return max(-8, min(7, round(math.log2(pfc_alpha))))


def resolve_ecn(profile: str | None, ecn: str | None, speed_gbps: int, fan_in: int, base_rtt_us: float,
                buffer_bytes: int = DEFAULT_BUFFER_BYTES, pfc_alpha: float = DEFAULT_PFC_ALPHA) -> EcnSetting:
    """ECN thresholds from ``--profile`` or ``--ecn KMIN,KMAX,PMAX`` (one of them; default ``derived``).

    ``derived`` calls the tuner with the PFC trigger it would use for this fan-in on this pool
    (:func:`roce_tune.tuner.buffers.pg_shared_limit_bytes` with dynamic_th = log2(alpha)) and the
    tuner's DCQCN values for the speed.

    Raises:
        ValueError: both given, unknown profile, a malformed ``--ecn`` value, or ``derived``/``bdp`` with an
            alpha the tuner reads as dynamic_th -8 (alpha 0: no PFC threshold to derive a ramp below).
    """
    if profile and ecn:
        raise ValueError("give either --profile or --ecn, not both")
    if ecn:
        parts = [p.strip() for p in ecn.split(",")]
        if len(parts) != 3:
            raise ValueError(f"--ecn {ecn!r}: write KMIN,KMAX,PMAX, e.g. 150KB,1500KB,100")
        try:
            kmin, kmax = parse_bytes(parts[0]), parse_bytes(parts[1])
        except ValueError as exc:
            raise ValueError(f"--ecn {ecn!r}: {exc}") from None
        try:
            pmax = float(parts[2].rstrip("%").strip())
        except ValueError:
            raise ValueError(f"--ecn {ecn!r}: PMAX {parts[2]!r} is not a number (a percent, e.g. 5 or 5%)"
                             ) from None
        return EcnSetting(kmin, kmax, pmax, label=f"{kmin}/{kmax}/{pmax:g}%")
    prof = profile or "derived"
    from roce_tune.tuner.ecn import NAMED_PROFILES, calc_dcqcn, derive_ecn

    if prof in NAMED_PROFILES:
        kmin, kmax, pmax, _ = NAMED_PROFILES[prof]
        return EcnSetting(kmin, kmax, pmax, label=prof)
    if prof not in ("derived", "bdp"):
        raise ValueError(f"unknown ECN profile {prof!r}; known: {', '.join(ECN_PROFILES)}")
    from roce_tune.tuner.buffers import pg_shared_limit_bytes

    trigger = pg_shared_limit_bytes(buffer_bytes, _dynamic_th(pfc_alpha), fan_in)
    if trigger <= 0:
        # Mellanox/SAI-Implementation mlnx_sai_buffer.c: SAI_BUFFER_ALPHA_0 = -8, "interpreted as 0"
        raise ValueError(f"--profile {prof}: PFC alpha {pfc_alpha:g} is dynamic_th -8 to the tuner, which "
                         "the Mellanox SAI reads as alpha 0 (a PG gets no shared buffer: XOFF at once), so "
                         "there is no queue to put an ECN ramp below; give --ecn KMIN,KMAX,PMAX or a named "
                         f"--profile, or an alpha of at least {2.0 ** -7:g} (dynamic_th -7)")
    e = derive_ecn(speed_gbps, base_rtt_us, fan_in, trigger, calc_dcqcn(f"{speed_gbps}G").params, False,
                   prof)
    return EcnSetting(e.kmin_bytes, e.kmax_bytes, e.pmax_percent, label=prof)


def _number(key: str, text: str) -> float:
    try:
        v = float(text)
    except ValueError:
        raise ValueError(f"--dcqcn {key}={text!r}: not a number") from None
    if not math.isfinite(v):
        raise ValueError(f"--dcqcn {key}={text!r}: not a finite number")
    return v


def resolve_dcqcn(spec: str | None, speed_gbps: int, plan: DcqcnParams | None = None) -> DcqcnParams:
    """DCQCN knobs from ``--dcqcn``: ``derived`` (default; the tuner's values for the speed), ``firmware``
    (mlx5 firmware defaults), or ``KEY=VALUE,...`` applied on top of ``derived`` or ``firmware`` when the
    list starts with one of those words (``firmware,rpg_ai_rate_mbps=20``), else on top of ``derived``, the
    values the command runs without ``--dcqcn`` (so ``rpg_ai_rate_mbps=20`` changes that knob alone; it
    started from firmware, which at 400G also moved rpg_time_reset from the derived 75 us to 300 us).
    With ``plan`` (``simulate plan``: the DCQCN of the NIC behind the port) the word ``plan`` names those
    values, and a list without a leading word applies on top of them.

    Raises:
        ValueError: unknown key, malformed item, a fraction or a value outside the NIC's range at
            ``speed_gbps`` (:func:`_nic_values`).
    """
    items = [s.strip() for s in (spec or "derived").split(",") if s.strip()]
    base_name = "derived" if plan is None else "plan"
    if items and "=" not in items[0]:
        base_name = items.pop(0)
    base = _dcqcn_base(base_name, speed_gbps, plan)
    if base is None:
        words = ("plan, " if plan is not None else "") + "derived, firmware"
        raise ValueError(f"--dcqcn {spec!r}: start with {words} or KEY=VALUE")
    over = _overrides(items)
    if not over:
        return base
    label = base.label + "," + ",".join(f"{k}={v:g}" for k, v in over.items())
    return base.with_overrides(_nic_values(over, speed_gbps), label=label)


def _overrides(items: list[str]) -> dict[str, float]:
    """The ``KEY=VALUE`` items of a ``--dcqcn`` list as key -> number.

    Raises:
        ValueError: an item without ``=`` or key, a value that is not a finite number, or a key given twice
            (``rpg_ai_rate_mbps=20,rpg_ai_rate_mbps=30`` would otherwise run with 30 and say nothing).
    """
    over: dict[str, float] = {}
    for item in items:
        key, sep, val = (part.strip() for part in item.partition("="))
        if not sep or not key:
            raise ValueError(f"--dcqcn item {item!r}: write KEY=VALUE (e.g. rpg_ai_rate_mbps=20)")
        if key in over:
            raise ValueError(f"--dcqcn {key} is given twice ({key}={over[key]:g} and {item}): give it once")
        over[key] = _number(key, val)
    return over


def _dcqcn_base(name: str, speed_gbps: int, plan: DcqcnParams | None) -> DcqcnParams | None:
    """The values a ``--dcqcn`` list starts from: ``derived``, ``firmware`` or (given) ``plan``; None for
    another word."""
    if name == "derived":
        from roce_tune.tuner.ecn import calc_dcqcn

        return DcqcnParams.from_params(calc_dcqcn(f"{speed_gbps}G").params, label="derived")
    if name == "firmware":
        from roce_tune.tuner.dcqcn import MLX5_FIRMWARE_DEFAULTS

        return DcqcnParams.from_params(MLX5_FIRMWARE_DEFAULTS, label="firmware")
    return plan if name == "plan" else None


def _nic_values(over: dict[str, float], speed_gbps: int) -> dict[str, float]:
    """``--dcqcn`` overrides as the NIC takes them: every mlx5 DCQCN knob is a whole number within its range
    at the link speed (:func:`roce_tune.ranges.dcqcn_ranges`, the same check the tuner applies to a pinned
    value), so the simulator never runs a value no ConnectX would accept.

    Raises:
        ValueError: a key the simulator does not model (listing the known ones), a fraction, or a value
            outside its range (naming the range and its source).
    """
    from roce_tune.tuner.dcqcn import check_dcqcn_value

    unknown = sorted(set(over) - set(DcqcnParams.keys()))
    if unknown:
        raise ValueError(f"unknown DCQCN parameter(s) {', '.join(unknown)}; known: "
                         f"{', '.join(DcqcnParams.keys())}")
    out: dict[str, float] = {}
    for key, v in over.items():
        if not v.is_integer():
            raise ValueError(f"--dcqcn {key}={v:g}: the NIC takes a whole number")
        check_dcqcn_value(key, int(v), speed_gbps)
        out[key] = int(v)
    return out


@dataclass(frozen=True)
class PlanPort(SimInputs):
    """:class:`SimInputs` of one switch port of a plan (all from plan.json), with its device and port, and
    whether the NIC whose DCQCN values it carries runs DCQCN (False under ``policy.dcqcn: false``: the plan
    keeps the values for re-enabling, and the simulator has no PFC-only sender)."""

    device: str = ""
    port: str = ""
    dcqcn_enabled: bool = True


def plan_port(plan_dir: Path, ref: str) -> PlanPort:
    """Read ``PLAN_DIR/plan.json`` and return port ``DEVICE:PORT``'s speed, fan-in, ECN profile, the switch's
    ingress lossless pool and its dynamic_th (alpha = 2^dynamic_th), the ECN profile's base RTT, and the DCQCN
    values of the NIC cabled to that port (or, for a port without a NIC, of any NIC at that speed).

    Raises:
        ValueError: missing/invalid plan.json, unknown device or port, a host's port, a port that is not
            lossless or has no (or an undefined) ECN profile.
    """
    device, sep, port = ref.partition(":")
    if not sep or not device or not port:
        raise ValueError(f"--port {ref!r}: write DEVICE:PORT, e.g. leaf1:Ethernet0")
    path = Path(plan_dir) / "plan.json"
    plan = _read_plan(path)
    sw = next((s for s in plan.switches if s.name == device), None)
    if sw is None:
        raise ValueError(f"{path}: {_not_a_switch(plan, device, port)}")
    pp = next((q for q in sw.ports if q.name == port), None)
    if pp is None:
        raise ValueError(f"{path}: switch {device} has no port {port!r}")
    if not pp.lossless or not pp.ecn_profile:
        state = f"lossless {str(pp.lossless).lower()}, ECN profile {pp.ecn_profile or 'none'}"
        raise ValueError(f"{path}: {device}:{port} is not a lossless port with an ECN profile ({state})"
                         f"{_why_lossy(pp)}")
    try:
        _check_port_values(pp, ref)
        inputs = port_inputs(plan, sw, pp, ref)
        _check_switch_values(inputs, ref)
    except ValueError as exc:
        raise ValueError(f"{path}: {exc}") from None
    return inputs


def _check_port_values(pp: PortPlan, ref: str) -> None:
    """Port ``pp``'s own plan.json values, checked as ``--speed`` and ``--fan-in`` are on the command line:
    ``simulate plan`` reads a plan.json as it is, hand edits included, and a speed no port has (``123``) was
    simulated as a 123 Gb/s link, a negative fan-in as 1.

    Raises:
        ValueError: ``speed_gbps`` not a supported port speed or ``fan_in`` outside 0..:data:`MAX_FAN_IN` (0:
            no sender known, simulated as 1 as the tuner models it), naming the port and the field.
    """
    from roce_tune.units import parse_speed_gbps

    try:
        parse_speed_gbps(pp.speed_gbps)
    except ValueError as exc:
        raise ValueError(f"{ref} speed_gbps: {exc}") from None
    if not 0 <= pp.fan_in <= MAX_FAN_IN:
        raise ValueError(f"{ref} fan_in {pp.fan_in}: must be 0..{MAX_FAN_IN} (senders onto this port)")


def _check_switch_values(inputs: PlanPort, ref: str) -> None:
    """The base RTT (of the port's ECN profile) and the pool (the switch's) a port is simulated with,
    checked as ``--base-rtt`` and ``--buffer`` are: an edited 0 failed as an "invalid scenario" that named
    neither the file nor the port.

    Raises:
        ValueError: ``base_rtt_us`` not above 0 or a pool smaller than one data frame, naming port and field.
    """
    if not (inputs.base_rtt_us > 0 and math.isfinite(inputs.base_rtt_us)):
        raise ValueError(f"{ref}: ECN profile {inputs.ecn.label} base_rtt_us {inputs.base_rtt_us:g} must be "
                         "above 0")
    frame = DEFAULT_PAYLOAD_BYTES + DEFAULT_HEADER_BYTES
    if inputs.buffer_bytes < frame:
        raise ValueError(f"{ref}: switch {inputs.device}'s ingress lossless pool size_bytes "
                         f"{inputs.buffer_bytes} cannot hold one {frame} B data frame")


def _why_lossy(pp: PortPlan) -> str:
    """Why the tuner left port ``pp`` lossy, as a suffix for the refusal (the tuner makes a port lossless
    when it is admin up and cabled over a lossless link): admin down, nothing cabled, or a link declared
    lossy; "" for a port that is lossless (an edited plan without its ECN profile)."""
    if pp.lossless:
        return ""
    if not pp.admin_up:
        return ": it is admin down in the inventory"
    if pp.peer is None:
        return ": nothing is cabled to it in the inventory"
    return f": it is admin up and cabled to {pp.peer}; is that link `lossless: false` in the inventory?"


def _read_plan(path: Path) -> Plan:
    """The plan in ``path`` (a plan.json).

    Raises:
        ValueError: unreadable or not a valid plan, naming ``path``.
    """
    from roce_tune.plan import plan_from_json

    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ValueError(f"{path}: cannot read ({exc.strerror or exc})") from None
    try:
        return plan_from_json(text)
    except ValueError as exc:
        raise ValueError(f"{path}: {exc}") from None


def _not_a_switch(plan: Plan, device: str, port: str) -> str:
    """Why ``device`` cannot be simulated: it is a host (naming the switch port its NIC ``port`` is cabled
    to, when known) or no device of the plan (listing the switches)."""
    host = next((h for h in plan.hosts if h.name == device), None)
    if host is None:
        return f"no switch {device!r}; switches: {', '.join(s.name for s in plan.switches)}"
    peer = next((n.switch_port for n in host.nics if n.netdev == port and n.switch_port), None)
    return (f"{device!r} is a host, not a switch: simulate the switch port its NIC is cabled to"
            + (f" ({peer})" if peer else ""))


def nic_index(plan: Plan) -> NicIndex:
    """The plan's NICs by the switch port they are cabled to, and the first NIC of each speed (what
    :func:`port_inputs` looks a port's DCQCN up in; build it once to look up many ports)."""
    by_port: dict[str, NicPlan] = {}
    by_speed: dict[int, NicPlan] = {}
    for n in (n for h in plan.hosts for n in h.nics):
        if n.switch_port:
            by_port.setdefault(n.switch_port, n)
        by_speed.setdefault(n.speed_gbps, n)
    return by_port, by_speed


def port_inputs(plan: Plan, sw: SwitchPlan, pp: PortPlan, ref: str | None = None,
                nics: NicIndex | None = None) -> PlanPort:
    """:class:`PlanPort` for lossless port ``pp`` of switch ``sw`` in ``plan`` (see :func:`plan_port`);
    ``nics``: :func:`nic_index` of ``plan`` when the caller looks up many ports.

    Raises:
        ValueError: the port's ECN profile is not one of the switch's, or the switch has no ingress lossless
            pool.
    """
    ref = ref or f"{sw.name}:{pp.name}"
    nics = nics or nic_index(plan)
    nic = nics[0].get(ref) or nics[1].get(pp.speed_gbps)
    prof = next((e for e in sw.ecn_profiles if e.name == pp.ecn_profile), None)
    if prof is None:
        known = ", ".join(e.name for e in sw.ecn_profiles) or "none"
        raise ValueError(f"{sw.name}:{pp.name} names ECN profile {pp.ecn_profile!r}, which switch {sw.name} "
                         f"does not define (profiles: {known})")
    pools = [p for p in sw.buffers.pools if p.type == "ingress" and "lossless" in p.name]
    if not pools:
        raise ValueError(f"switch {sw.name} has no ingress lossless pool")
    pool = pools[0]
    return PlanPort(speed_gbps=pp.speed_gbps, fan_in=max(1, pp.fan_in), base_rtt_us=prof.base_rtt_us,
                    buffer_bytes=pool.size_bytes, pfc_alpha=_pool_alpha(sw, pool.name, pp),
                    ecn=EcnSetting(prof.kmin_bytes, prof.kmax_bytes, prof.pmax_percent, label=prof.name),
                    dcqcn=_port_dcqcn(nic, pp), device=sw.name, port=pp.name,
                    dcqcn_enabled=nic is None or nic.dcqcn.enabled)


def _pool_alpha(sw: SwitchPlan, pool_name: str, pp: PortPlan | None = None) -> float:
    """Dynamic-threshold alpha = 2^dynamic_th of the lossless PG profile of port ``pp`` (the threshold SAI
    applies to that PG, and the one the tuner's ``pfc_trigger_bytes`` uses), else of the pool's
    ``ingress_lossless_profile`` (else its first profile with a dynamic threshold, else
    :data:`DEFAULT_PFC_ALPHA`)."""
    profs = [b for b in sw.buffers.profiles if b.pool == pool_name and b.dynamic_th is not None]
    pg = pp.headroom.profile if pp is not None and pp.headroom is not None else None
    main = next((b for b in profs if b.name == pg), None) or next(
        (b for b in profs if b.name == "ingress_lossless_profile"), profs[0] if profs else None)
    return 2.0 ** main.dynamic_th if main and main.dynamic_th is not None else DEFAULT_PFC_ALPHA


def _port_dcqcn(nic: NicPlan | None, pp: PortPlan) -> DcqcnParams:
    """DCQCN of ``nic`` (the NIC cabled to the port, else any NIC at the port's speed), else the derived
    values."""
    if nic:
        return DcqcnParams.from_params(nic.dcqcn.params, label=f"{nic.netdev} plan")
    return _derived_dcqcn(pp.speed_gbps)


@functools.lru_cache(maxsize=16)
def _derived_dcqcn(speed_gbps: int) -> DcqcnParams:
    """``resolve_dcqcn("derived", speed_gbps)``, once per speed (a fabric's switch-to-switch ports have no
    NIC behind them; the tuner's derivation is pure)."""
    return resolve_dcqcn("derived", speed_gbps)
