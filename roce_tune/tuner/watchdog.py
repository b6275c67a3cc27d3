"""PFC watchdog timers per switch.

SONiC (and, for lack of published defaults, Cumulus/EOS/NX-OS) follows ``pfcwd start_default`` of
``sonic-net/sonic-utilities:pfcwd/main.py`` (docs/derivation.md#pfc-watchdog)::

    multiply  = max(1, (N - 1) // 32 + 1)        N = ports with PFC enabled
    detection = restoration = 200 ms x multiply
    poll      = min(200 ms x multiply, 1000 ms)

Junos uses Juniper's defaults (poll 100 ms, detection 2 polls = 200 ms, recovery 200 ms).
Every value, derived or pinned, must lie in the ``sonic-pfcwd.yang`` ranges (detection 100-5000,
restoration 100-60000, poll 100-1000 ms) with detection and restoration >= poll.

    >>> w = derive_watchdog(160, True, "drop", "sonic")
    >>> (w.detection_ms, w.restoration_ms, w.poll_ms)
    (1000, 1000, 1000)
"""

from __future__ import annotations

from roce_tune.plan import Rationale, Watchdog
from roce_tune.platforms import SWITCH_PLATFORMS
from roce_tune.platforms import platform as platform_registry
from roce_tune.platforms.contract import Capabilities
from roce_tune.ranges import WATCHDOG_ACTIONS as ACTIONS
from roce_tune.ranges import WATCHDOG_RANGES_MS as RANGES_MS

SONIC_BASE_MS = 200

_S_SONIC = "sonic-net/sonic-utilities:pfcwd/main.py start_default (docs/derivation.md#pfc-watchdog)"
_S_YANG = ("sonic-buildimage sonic-pfcwd.yang (detection 100..5000, restoration 100..60000, POLL_INTERVAL "
           "100..1000 ms)")


def _check(key: str, value: int) -> None:
    lo, hi = RANGES_MS[key]
    if isinstance(value, bool) or not isinstance(value, int) or not lo <= value <= hi:
        raise ValueError(f"PFC watchdog {key}={value!r} is outside {lo}..{hi} ms ({_S_YANG})")


_Inputs = dict[str, float | int | str | bool]


def _scaled(pfc_ports: int, pnote: str, r: dict[str, Rationale]) -> tuple[dict[str, int], _Inputs]:
    """SONiC ``start_default`` timers scaled by the PFC port count (capped to the YANG ranges)."""
    mult = max(1, (pfc_ports - 1) // 32 + 1)
    t = SONIC_BASE_MS * mult
    vals = {"detection_ms": t, "restoration_ms": t, "poll_ms": min(t, 1000)}
    inputs: _Inputs = {"pfc_ports": pfc_ports, "multiply": mult}
    r["detection_ms"] = Rationale(formula="200 ms * max(1, (N-1)//32 + 1)", inputs=inputs, source=_S_SONIC,
                                  note=f"{pnote}; capped to 5000 ms by the YANG range" if t > 5000 else pnote)
    r["restoration_ms"] = Rationale(formula="= detection_ms (start_default)", inputs=inputs, source=_S_SONIC,
                                    note=pnote)
    r["poll_ms"] = Rationale(formula="min(200 ms * multiply, 1000 ms)", inputs=inputs, source=_S_SONIC,
                             note="one poll interval per switch; must not exceed any port's detection time")
    vals["detection_ms"] = min(vals["detection_ms"], RANGES_MS["detection_ms"][1])
    vals["restoration_ms"] = min(vals["restoration_ms"], RANGES_MS["restoration_ms"][1])
    return vals, inputs


def _poll_at_most_half(vals: dict[str, int], inputs: _Inputs, rule: tuple[str, str],
                       r: dict[str, Rationale]) -> None:
    """Lower the poll interval to half the shorter time where the platform requires it (it substitutes
    its own and logs a warning otherwise; the platform's capabilities cite the source)."""
    half = min(vals["detection_ms"], vals["restoration_ms"]) // 2
    if vals["poll_ms"] > half:
        vals["poll_ms"] = max(RANGES_MS["poll_ms"][0], half)
        source_suffix, note = rule
        r["poll_ms"] = Rationale(formula="min(200 ms * multiply, 1000 ms, min(detection, restoration) / 2)",
                                 inputs=inputs, source=_S_SONIC + source_suffix, note=note)


def _check_args(pfc_ports: int, platform: str, overrides: dict[str, int | float | str] | None) -> None:
    """Raises ValueError for negative pfc_ports, an unknown platform or an unknown override key."""
    if pfc_ports < 0:
        raise ValueError(f"pfc_ports must be >= 0, got {pfc_ports}")
    if platform not in SWITCH_PLATFORMS:
        raise ValueError(f"unknown platform {platform!r}; known: {', '.join(SWITCH_PLATFORMS)}")
    unknown = set(overrides or {}) - {*RANGES_MS, "action"}
    if unknown:
        raise ValueError(f"unknown watchdog override(s) {', '.join(sorted(unknown))}; "
                         f"allowed: detection_ms, restoration_ms, poll_ms, action")


def _derived_timers(caps: Capabilities, pfc_ports: int, r: dict[str, Rationale]) -> dict[str, int]:
    """The platform's fixed timers, or the SONiC scaling with N PFC ports (poll <= half the shorter time
    where the platform has that rule); adds a rationale per timer."""
    pnote = caps.watchdog_note
    if caps.watchdog_fixed_ms:
        vals = dict(caps.watchdog_fixed_ms)
        for key, v in vals.items():
            fixed: _Inputs = {key: v, "pfc_ports": pfc_ports}
            r[key] = Rationale(formula=caps.watchdog_fixed_formula, inputs=fixed,
                               source=caps.watchdog_fixed_source, note=pnote)
        return vals
    vals, inputs = _scaled(pfc_ports, pnote, r)
    if caps.watchdog_poll_half is not None:
        _poll_at_most_half(vals, inputs, caps.watchdog_poll_half, r)
    return vals


def _apply_pins(pins: dict[str, int | float | str], vals: dict[str, int], action: str,
                r: dict[str, Rationale], sources: dict[str, str]) -> str:
    """Pinned timers (range-checked) replace ``vals`` in place, their rationale naming the pin's ``sources``
    entry; returns the action (pinned or ``action``)."""
    act = action
    for key, value in pins.items():
        if key == "action":
            if value not in ACTIONS:
                raise ValueError(f"PFC watchdog action {value!r} must be one of {', '.join(ACTIONS)}")
            derived: int | str = act
            act = str(value)
        else:
            if isinstance(value, float) and value.is_integer():
                value = int(value)
            _check(key, value)  # type: ignore[arg-type]
            derived = vals[key]
            vals[key] = int(value)
        r[key] = Rationale(formula="pinned by user", inputs={key: value},
                           source=sources.get(key, "inventory override"),
                           note=f"derived {derived} ({r[key].formula})", pinned_by_user=True,
                           derived_value=derived)
    return act


def _keep_times_above_poll(vals: dict[str, int], pins: dict[str, int | float | str],
                           r: dict[str, Rationale]) -> None:
    """Keep detection and restoration >= poll: adapt the derived side, refuse when both sides are pinned."""
    for key in ("detection_ms", "restoration_ms"):
        if vals[key] >= vals["poll_ms"]:
            continue
        if key in pins and "poll_ms" in pins:
            raise ValueError(f"PFC watchdog {key}={vals[key]} ms is below poll_ms={vals['poll_ms']} ms "
                             f"(sonic-pfcwd.yang: times must be >= POLL_INTERVAL)")
        if key in pins:
            old = vals["poll_ms"]
            vals["poll_ms"] = vals[key]
            r["poll_ms"] = r["poll_ms"].model_copy(update={
                "note": f"lowered from {old} to the pinned {key} {vals[key]} ms (times must be >= poll)"})
        else:
            old = vals[key]
            vals[key] = vals["poll_ms"]
            r[key] = r[key].model_copy(update={
                "note": f"raised from {old} to poll_ms {vals['poll_ms']} ms (times must be >= poll)"})


def derive_watchdog(pfc_ports: int, enabled: bool, action: str, platform: str,
                    overrides: dict[str, int | float | str] | None = None,
                    pin_sources: dict[str, str] | None = None) -> Watchdog:
    """PFC watchdog of one switch.

    Args:
        pfc_ports: ports with PFC enabled (N in the SONiC scaling).
        enabled: policy.pfc_watchdog. Timers are still filled when False (for review / re-enabling).
        action: ``drop`` (the only one that breaks a deadlock), ``forward`` or ``alert``.
        platform: a switch platform name; its capabilities (``roce_tune.platforms``) give the rationale
            note, vendor default timers where the platform has fixed ones, and the poll-interval rule.
        overrides: pinned ``detection_ms`` / ``restoration_ms`` / ``poll_ms`` / ``action``.
        pin_sources: rationale source per pinned key (the override entry and its reason,
            :func:`roce_tune.inventory.overrides.pin_sources`); a key without one says "inventory override".

    Returns:
        :class:`roce_tune.plan.Watchdog` with a Rationale per timer and the action.

    Raises:
        ValueError: negative pfc_ports, unknown platform/action/override key, a value outside the
            sonic-pfcwd.yang ranges, or pinned times below a pinned poll interval.
    """
    _check_args(pfc_ports, platform, overrides)
    caps = platform_registry(platform).capabilities
    pins = dict(overrides or {})
    r: dict[str, Rationale] = {}
    vals = _derived_timers(caps, pfc_ports, r)
    r["action"] = Rationale(formula="policy.watchdog_action", inputs={"action": action},
                            source="docs/derivation.md#pfc-watchdog",
                            note="drop is the only action that breaks a PFC deadlock")
    act = _apply_pins(pins, vals, action, r, pin_sources or {})
    if act not in ACTIONS:
        raise ValueError(f"PFC watchdog action {act!r} must be one of {', '.join(ACTIONS)}")
    _keep_times_above_poll(vals, pins, r)
    for key, v in vals.items():
        _check(key, v)
    return Watchdog(enabled=enabled, detection_ms=vals["detection_ms"], restoration_ms=vals["restoration_ms"],
                    poll_ms=vals["poll_ms"], action=act,  # type: ignore[arg-type]
                    pfc_ports=pfc_ports, rationale=r)
