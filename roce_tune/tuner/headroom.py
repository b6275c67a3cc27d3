"""PFC headroom (xon / xoff / size) of a lossless priority group, and the mlx5 NIC receive-buffer xoff.

Pure functions, no I/O. Three switch-side models share one structure, the SONiC Mellanox formula
(``sonic-net/sonic-swss:cfgmgr/buffer_headroom_mellanox.lua``, docs/derivation.md#headroom)::

    propagation = port_mtu + cable_bytes + mac_phy_delay + peer_response
    xoff = ceil_1024(lossless_mtu + propagation * cell_occupancy(cell, spp))
    xon  = ceil_1024(pipeline_latency)            (x2 - 1 KiB on 8-lane Spectrum ports)
    size = ceil_1024(xoff + xon + speed_overhead) (speed_overhead = port_mtu on 8-lane Spectrum ports)
         = xon                                    with a shared headroom pool (xoff then comes from the pool)

They differ only in two inputs:

========================  ===========================================  ====================================
model                     cable_bytes                                   peer_response
========================  ===========================================  ====================================
``ieee``                  true ``2*L*R/(c*8)``, c = 1.98e8 m/s          IEEE 802.3 Annex 31B.3.7 pause quanta
``sonic-static``          true ``2*L*R/(c*8)``                          ``asic.peer_response_bytes`` (3.8 KiB)
``sonic-lua``             Lua units: true x 1000/1024                   pause quanta (Lua table)
========================  ===========================================  ====================================

The default (:func:`select_headroom_model`) is ``sonic-static`` on ASICs whose SONiC static tables the
catalog marks reproduced (``sonic_static_tables``), ``ieee`` elsewhere.
``sonic-static`` reproduces every row of SONiC's legacy ``pg_profile_lookup.ini`` for Spectrum-1/3
(docs/derivation.md#headroom-models); ``sonic-lua`` (:func:`compute_headroom_sonic_lua`) reproduces the
current SONiC Lua bit for bit (docs/derivation.md#headroom-models). Rounding: every byte value is rounded up
to 1 KiB as SONiC does; the ASIC then allocates whole cells, reported as ``size_cells = ceil(size / cell)``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

from roce_tune.findings import Finding, Location, Severity
from roce_tune.inventory.models import HeadroomModel
from roce_tune.plan import Headroom, Rationale
from roce_tune.ranges import PORT_MTU_RANGE_BYTES
from roce_tune.units import parse_length_m, parse_speed_gbps

if TYPE_CHECKING:
    from roce_tune.inventory.catalog import AsicSpec, Catalog

#: Speed of light in copper/fibre used by SONiC (m/s), ``speed_of_light = 198000000`` in the Lua.
SPEED_OF_LIGHT_MEDIA_M_PER_S = 1.98e8
#: One pause quantum = 512 bit times (IEEE 802.3 Annex 31B).
PAUSE_QUANTUM_BITS = 512
#: Pause quanta a receiver may take to react, per operating speed (IEEE 802.3 Annex 31B.3.7), as encoded
#: in ``buffer_headroom_mellanox.lua`` (``pause_quanta_per_speed``, keys in Gb/s here; the Lua's 100 Mb/s
#: entry (1 quantum) has no whole-Gb/s key and is omitted).
PAUSE_QUANTA_PER_SPEED_GBPS: dict[int, int] = {
    800: 905, 400: 905, 200: 453, 100: 394, 50: 147, 40: 118, 25: 80, 10: 67, 1: 2,
}
#: SONiC rounds every headroom value up to this unit (``math.ceil(x / 1024) * 1024`` in the Lua).
ROUND_BYTES = 1024
_MIN_PACKET_BYTES = 64  # ``minimal_packet_size`` in the Lua
_LUA_SRC = "sonic-net/sonic-swss:cfgmgr/buffer_headroom_mellanox.lua (docs/derivation.md#headroom)"
_STATIC_SRC = ("SONiC legacy pg_profile_lookup.ini generator, reproduced with the structure of the SONiC "
               "headroom formula (docs/derivation.md#headroom-models)")


def pause_quanta(speed_gbps: int) -> int:
    """Receiver reaction budget in pause quanta (512 bit times) for ``speed_gbps``.

    Source: IEEE 802.3 Annex 31B.3.7 as encoded in SONiC ``buffer_headroom_mellanox.lua``.

    >>> pause_quanta(100), pause_quanta(400)
    (394, 905)

    Raises:
        ValueError: the speed is not in the table (e.g. 1600G).
    """
    try:
        return PAUSE_QUANTA_PER_SPEED_GBPS[speed_gbps]
    except KeyError:
        known = ", ".join(f"{s}G" for s in sorted(PAUSE_QUANTA_PER_SPEED_GBPS))
        raise ValueError(f"no IEEE 802.3 31B.3.7 pause-quanta entry for {speed_gbps}G (known: "
                         f"{known})") from None


def peer_response_bytes(speed_gbps: int) -> float:
    """Bytes that arrive while the peer reacts to XOFF: ``pause_quanta * 512 / 8``.

    >>> peer_response_bytes(10), peer_response_bytes(400)
    (4288.0, 57920.0)

    Raises:
        ValueError: the speed is not in the pause-quanta table.
    """
    return pause_quanta(speed_gbps) * PAUSE_QUANTUM_BITS / 8


def cable_bytes(speed_gbps: float, cable_m: float, lua_units: bool = False) -> float:
    """Round-trip bytes on the cable: ``2 * L * R / (c * 8)`` with c = 1.98e8 m/s.

    With ``lua_units`` the SONiC Lua expression ``2*L*speed_Mbps*1e9/c/8192`` is reproduced, which is
    the true value x 1000/1024 (2.34 % short, docs/derivation.md#cable-propagation).

    >>> round(cable_bytes(400, 40), 1), round(cable_bytes(400, 40, lua_units=True), 1)
    (20202.0, 19728.5)
    """
    if lua_units:
        return 2 * cable_m * (speed_gbps * 1000) * 1000000000 / SPEED_OF_LIGHT_MEDIA_M_PER_S / (8 * 1024)
    return 2 * cable_m * speed_gbps * 1e9 / (SPEED_OF_LIGHT_MEDIA_M_PER_S * 8)


def cell_occupancy(cell_bytes: int, small_packet_percent: int = 100) -> float:
    """Worst-case buffer inflation from storing packets in fixed cells (SONiC Lua).

    ``factor = cell/64`` if cell > 128 else ``2*cell/(1+cell)``;
    ``occupancy = (100 - spp + spp*factor) / 100``.

    >>> round(cell_occupancy(96), 4), cell_occupancy(192), cell_occupancy(192, 0)
    (1.9794, 3.0, 1.0)
    """
    if cell_bytes > 2 * _MIN_PACKET_BYTES:
        factor = cell_bytes / _MIN_PACKET_BYTES
    else:
        factor = (2 * cell_bytes) / (1 + cell_bytes)
    return (100 - small_packet_percent + small_packet_percent * factor) / 100


def _ceil_to(value: float, unit: int = ROUND_BYTES) -> int:
    return int(math.ceil(value / unit) * unit)


def default_lanes(asic: AsicSpec, speed_gbps: int) -> int:
    """SerDes lanes of a port: ``max(1, speed // asic.serdes_gbps)`` (e.g. 400G on 50G SerDes = 8)."""
    return max(1, speed_gbps // asic.serdes_gbps)


def profile_name(speed_gbps: int, cable_m: float, *, port_mtu_bytes: int = 9216, eight_lane: bool = False,
                 shared_headroom_pool: bool = False, model: str = "ieee", lossless_mtu_bytes: int = 1024,
                 small_packet_percent: int = 100) -> str:
    """SONiC-style BUFFER_PROFILE name, e.g. ``pg_lossless_400000_40m_profile``.

    Speed is written in Mb/s and the cable in metres as SONiC does; a fractional length uses ``p`` for
    the point (``2.5`` -> ``2p5m``). Inputs that change the numbers but not the SONiC key get a suffix
    (``_mtu9100``, ``_8lane``, ``_shp``, ``_static``/``_lua``, ``_ll1500``, ``_spp50``) so that
    ports with different headroom never share a profile name.
    """
    if float(cable_m).is_integer():
        cable = str(int(cable_m))
    else:
        cable = format(cable_m, ".3f").rstrip("0").rstrip(".").replace(".", "p")
    parts = [f"pg_lossless_{speed_gbps * 1000}_{cable}m"]
    if port_mtu_bytes != 9216:
        parts.append(f"mtu{port_mtu_bytes}")
    if lossless_mtu_bytes != 1024:
        parts.append(f"ll{lossless_mtu_bytes}")
    if small_packet_percent != 100:
        parts.append(f"spp{small_packet_percent}")
    if eight_lane:
        parts.append("8lane")
    if shared_headroom_pool:
        parts.append("shp")
    if model != "ieee":
        parts.append({"sonic-static": "static", "sonic-lua": "lua"}.get(model, model.replace("-", "_")))
    return "_".join(parts) + "_profile"


def _peer_response(asic: AsicSpec, speed_gbps: int, model: str) -> tuple[float, str]:
    """Peer response bytes and a note for the rationale."""
    if model == "sonic-static":
        return asic.peer_response_bytes, "asic.peer_response_bytes (SONiC asic_table.j2 peer_response_time)"
    if speed_gbps in PAUSE_QUANTA_PER_SPEED_GBPS:
        q = pause_quanta(speed_gbps)
        return peer_response_bytes(speed_gbps), f"{q} pause quanta x 512 bit / 8 (IEEE 802.3 31B.3.7)"
    if model == "sonic-lua" or speed_gbps < max(PAUSE_QUANTA_PER_SPEED_GBPS):
        return asic.peer_response_bytes, ("speed not in the pause-quanta table: asic.peer_response_bytes "
                                          "(Lua fallback)")
    top = max(PAUSE_QUANTA_PER_SPEED_GBPS)
    scaled = peer_response_bytes(top) * speed_gbps / top
    return max(scaled, asic.peer_response_bytes), (
        f"speed above the table: the {top}G reaction time ({pause_quanta(top)} quanta) kept constant, "
        f"bytes scaled by {speed_gbps}/{top} [assumption]")


def _check_headroom_inputs(asic: AsicSpec, speed_gbps: int, cable_m: float, port_mtu_bytes: int,
                           small_packet_percent: int) -> None:
    """Raises ValueError for a non-positive speed/MTU, negative cable, speed above the ASIC's or a bad
    percent."""
    if speed_gbps <= 0 or cable_m < 0 or port_mtu_bytes <= 0:
        raise ValueError(f"speed {speed_gbps}G, cable {cable_m} m and MTU {port_mtu_bytes} B must be "
                         "positive")
    if speed_gbps > asic.max_port_speed_gbps:
        raise ValueError(f"{speed_gbps}G exceeds the {asic.max_port_speed_gbps}G maximum port speed of "
                         f"{asic.id}")
    if not 0 <= small_packet_percent <= 100:
        raise ValueError(f"small_packet_percent {small_packet_percent} is outside 0..100")


@dataclass(frozen=True)
class _HeadroomInputs:
    """One port's headroom question: the ASIC, the port and the model (see :func:`pg_headroom`)."""

    asic: AsicSpec
    speed_gbps: int
    cable_m: float
    port_mtu_bytes: int
    lanes: int | None
    model: str
    shared_headroom_pool: bool
    lossless_mtu_bytes: int
    small_packet_percent: int


@dataclass(frozen=True)
class _HeadroomFigures:
    """Intermediate figures of the headroom formula (bytes unless named otherwise)."""

    n_lanes: int
    eight_lane: bool
    cable: float
    peer: float
    peer_note: str
    occupancy: float
    propagation: float
    xoff: int
    xon: int
    speed_overhead: int
    size: int


def _headroom(asic: AsicSpec, speed_gbps: int, cable_m: float, port_mtu_bytes: int, lanes: int | None,
              model: str, shared_headroom_pool: bool, lossless_mtu_bytes: int,
              small_packet_percent: int) -> Headroom:
    _check_headroom_inputs(asic, speed_gbps, cable_m, port_mtu_bytes, small_packet_percent)
    n_lanes = default_lanes(asic, speed_gbps) if lanes is None else lanes
    if n_lanes < 1:
        raise ValueError(f"lanes must be >= 1, got {n_lanes}")
    lua = model == "sonic-lua"
    # Lua: exactly 8 lanes, any ASIC. Ours: Spectrum ports with >= 8 lanes use two buffer units
    # (comment in buffer_check_headroom_mellanox.lua: "On Spectrum 3, ports with 8 lanes have doubled
    # pipeline latency"); other families publish no such rule.
    eight_lane = n_lanes == 8 if lua else (asic.family == "spectrum" and n_lanes >= 8)
    cable = cable_bytes(speed_gbps, cable_m, lua_units=lua)
    peer, peer_note = _peer_response(asic, speed_gbps, model)
    occupancy = cell_occupancy(asic.cell_bytes, small_packet_percent)
    propagation = port_mtu_bytes + cable + asic.mac_phy_delay_bytes + peer
    xoff = _ceil_to(lossless_mtu_bytes + propagation * occupancy)
    pipeline = asic.pipeline_latency_bytes * 2 - ROUND_BYTES if eight_lane else asic.pipeline_latency_bytes
    speed_overhead = port_mtu_bytes if eight_lane else 0
    xon = _ceil_to(pipeline)
    size = xon if shared_headroom_pool else _ceil_to(xoff + xon + speed_overhead)
    q = _HeadroomInputs(asic, speed_gbps, cable_m, port_mtu_bytes, lanes, model, shared_headroom_pool,
                        lossless_mtu_bytes, small_packet_percent)
    f = _HeadroomFigures(n_lanes, eight_lane, cable, peer, peer_note, occupancy, propagation, xoff, xon,
                         speed_overhead, size)
    return static_pg_thresholds(Headroom(
        model=model,
        profile=profile_name(speed_gbps, cable_m, port_mtu_bytes=port_mtu_bytes, eight_lane=eight_lane,
                             shared_headroom_pool=shared_headroom_pool, model=model,
                             lossless_mtu_bytes=lossless_mtu_bytes,
                             small_packet_percent=small_packet_percent),
        xon_bytes=xon, xoff_bytes=xoff, size_bytes=size, size_cells=math.ceil(size / asic.cell_bytes),
        lanes=n_lanes, rationale=_headroom_rationale(q, f)), port_mtu_bytes, asic.cell_bytes)


def _xoff_rationale(q: _HeadroomInputs, f: _HeadroomFigures, common: dict[str, float | int | str | bool],
                    source: str) -> Rationale:
    asic = q.asic
    cable_formula = ("2*cable_m*speed_Mbps*1e9/1.98e8/8192 (Lua units, true x 1000/1024)"
                     if q.model == "sonic-lua"
                     else "2*cable_m*speed_bps/(1.98e8 m/s*8) (true round-trip bytes)")
    xoff_inputs = {
        **common, "cable_m": q.cable_m, "port_mtu_bytes": q.port_mtu_bytes,
        "lossless_mtu_bytes": q.lossless_mtu_bytes,
        "cable_bytes": round(f.cable, 3), "mac_phy_delay_bytes": asic.mac_phy_delay_bytes,
        "peer_response_bytes": f.peer, "cell_bytes": asic.cell_bytes,
        "small_packet_percent": q.small_packet_percent,
        "cell_occupancy_factor": round(f.occupancy, 6), "propagation_bytes": round(f.propagation, 3),
    }
    static_note = ""
    if q.model == "sonic-static" and not asic.sonic_static_tables:
        static_note = (f"; {asic.id}'s SONiC static table is NOT generated by this formula "
                       "(docs/derivation.md#headroom-models)")
    return Rationale(
        formula="ceil_1024(lossless_mtu + (port_mtu + cable_bytes + mac_phy_delay + peer_response) "
                f"* cell_occupancy); cable_bytes = {cable_formula}; peer_response = {f.peer_note}",
        inputs=xoff_inputs, source=source,
        note=f"model {q.model}; cell_occupancy = (100-spp+spp*f)/100, f = cell/64 if cell>128 else "
             f"2*cell/(1+cell){static_note}")


def _headroom_rationale(q: _HeadroomInputs, f: _HeadroomFigures) -> dict[str, Rationale]:
    asic, eight_lane, lanes = q.asic, f.eight_lane, q.lanes
    source = _LUA_SRC if q.model != "sonic-static" else _STATIC_SRC
    common: dict[str, float | int | str | bool] = {"speed_gbps": q.speed_gbps, "lanes": f.n_lanes,
                                                   "asic": asic.id}
    return {
        "xoff_bytes": _xoff_rationale(q, f, common, source),
        "xon_bytes": Rationale(
            formula="ceil_1024(2*pipeline_latency - 1024)" if eight_lane else "ceil_1024(pipeline_latency)",
            inputs={**common, "pipeline_latency_bytes": asic.pipeline_latency_bytes,
                    "eight_lane": eight_lane},
            source=f"{_LUA_SRC}; asic.pipeline_latency_bytes "
                   f"({asic.sources.get('pipeline_latency_bytes', '')})",
            note="8-lane Spectrum ports have two buffer units: doubled pipeline latency" if eight_lane
            else ""),
        "size_bytes": Rationale(
            formula="xon (xoff drawn from the shared headroom pool)" if q.shared_headroom_pool
            else "ceil_1024(xoff + xon + speed_overhead)",
            inputs={**common, "xon_bytes": f.xon, "xoff_bytes": f.xoff,
                    "speed_overhead_bytes": f.speed_overhead,
                    "shared_headroom_pool": q.shared_headroom_pool},
            source=_LUA_SRC,
            note="speed_overhead = port MTU on 8-lane ports" if eight_lane else ""),
        "size_cells": Rationale(
            formula="ceil(size_bytes / cell_bytes)", inputs={"size_bytes": f.size,
                                                             "cell_bytes": asic.cell_bytes},
            source="SAI converts byte sizes to whole ASIC cells (docs/derivation.md#cell-occupancy)"),
        "lanes": Rationale(
            formula="given" if lanes is not None else "max(1, speed_gbps // serdes_gbps)",
            inputs={"speed_gbps": q.speed_gbps, "serdes_gbps": asic.serdes_gbps, "lanes": f.n_lanes},
            source="inventory port lanes" if lanes is not None else f"catalog {asic.id}.serdes_gbps"),
    }


_MLX5_SRC = ("torvalds/linux drivers/net/ethernet/mellanox/mlx5/core/en/port_buffer.c (xoff_threshold = "
             "size - xoff, xon_threshold = xoff_threshold - max_mtu, size >= xoff + max_mtu + cell; "
             "docs/derivation.md#nic-headroom)")


def static_pg_thresholds(hr: Headroom, port_mtu_bytes: int, cell_bytes: int) -> Headroom:
    """``hr`` with its static-PG view: reserved buffer, pause (XOFF) and resume (XON) thresholds (bytes).

    For platforms whose lossless PG is a reserved buffer with explicit pause and resume occupancies
    (NX-OS ``pause buffer-size B pause-threshold P resume-threshold R``)::

        buffer = max(size, xon + xoff, xoff + port_mtu + cell)
        pause  = buffer - xoff       XOFF is sent while xoff bytes of room are left for the bytes in flight
        resume = pause - port_mtu    XON one maximum frame lower: hysteresis, so the PG does not toggle
                                     pause/resume on every frame

    The structure is the mlx5 receive buffer's (``port_buffer.c``: ``xoff_threshold = size - xoff``,
    ``xon_threshold = xoff_threshold - max_mtu``, buffer at least ``xoff + max_mtu + cell``), which keeps
    resume >= one cell > 0. A shared-headroom-pool profile (size = xon) still needs xon + xoff here:
    a static PG has no pool to draw xoff from.

    >>> h = Headroom(model="ieee", profile="p", xon_bytes=19456, xoff_bytes=72704, size_bytes=92160,
    ...              size_cells=960, lanes=4)
    >>> s = static_pg_thresholds(h, 9216, 96)
    >>> s.static_buffer_bytes, s.pause_threshold_bytes, s.resume_threshold_bytes
    (92160, 19456, 10240)

    Raises:
        ValueError: non-positive MTU or cell.
    """
    if port_mtu_bytes <= 0 or cell_bytes <= 0:
        raise ValueError(f"port MTU {port_mtu_bytes} B and cell {cell_bytes} B must be positive")
    buffer = max(hr.size_bytes, hr.xon_bytes + hr.xoff_bytes, hr.xoff_bytes + port_mtu_bytes + cell_bytes)
    pause = buffer - hr.xoff_bytes
    resume = pause - port_mtu_bytes
    inputs: dict[str, float | int | str | bool] = {
        "size_bytes": hr.size_bytes, "xon_bytes": hr.xon_bytes, "xoff_bytes": hr.xoff_bytes,
        "port_mtu_bytes": port_mtu_bytes, "cell_bytes": cell_bytes}
    rationale = {
        **hr.rationale,
        "static_buffer_bytes": Rationale(formula="max(size, xon + xoff, xoff + port_mtu + cell)",
                                         inputs=inputs,
                                         source=_MLX5_SRC,
                                         note="a static PG reserves xoff too (no shared pool)"),
        "pause_threshold_bytes": Rationale(formula="static_buffer - xoff",
                                           inputs={**inputs, "static_buffer_bytes": buffer},
                                           source=_MLX5_SRC,
                                           note="XOFF leaves xoff bytes for the bytes in flight"),
        "resume_threshold_bytes": Rationale(formula="pause_threshold - port_mtu",
                                            inputs={**inputs, "pause_threshold_bytes": pause},
                                            source=_MLX5_SRC,
                                            note="one maximum frame of hysteresis below pause"),
    }
    return hr.model_copy(update={"static_buffer_bytes": buffer, "pause_threshold_bytes": pause,
                                 "resume_threshold_bytes": resume, "rationale": rationale})


def compute_headroom(asic: AsicSpec, speed_gbps: int, cable_m: float, port_mtu_bytes: int,
                     lanes: int | None = None, model: HeadroomModel | str = "ieee",
                     shared_headroom_pool: bool = False, lossless_mtu_bytes: int = 1024,
                     small_packet_percent: int = 100) -> Headroom:
    """PFC headroom of one lossless PG.

    Args:
        asic: catalog ASIC (cell, pipeline latency, MAC/PHY delay, fallback peer response).
        speed_gbps: port speed (Gb/s), at most ``asic.max_port_speed_gbps``.
        cable_m: cable length (m) to the link partner.
        port_mtu_bytes: port MTU (bytes) - the largest frame the peer may have started.
        lanes: SerDes lanes; default ``max(1, speed // serdes_gbps)``. Spectrum ports with >= 8 lanes
            get the SONiC 8-lane rule (xon = 2*pipeline - 1 KiB, size += port MTU).
        model: ``ieee`` (true cable bytes, 802.3 pause quanta), ``sonic-static`` (legacy SONiC static
            tables: ``asic.peer_response_bytes``; use port MTU 9216 to reproduce them) or ``sonic-lua``
            (see :func:`compute_headroom_sonic_lua`).
        shared_headroom_pool: xoff comes from the shared headroom pool; ``size`` = xon only.
        lossless_mtu_bytes: SONiC ``LOSSLESS_TRAFFIC_PATTERN.mtu`` (default 1024).
        small_packet_percent: SONiC ``small_packet_percentage`` (default 100 = worst case).

    Returns:
        :class:`~roce_tune.plan.Headroom` with bytes rounded up to 1 KiB and a rationale for each number.

    Raises:
        ValueError: non-positive speed/MTU, negative cable, speed above the ASIC maximum, bad model.
    """
    name = model.value if isinstance(model, HeadroomModel) else str(model)
    if name not in ("ieee", "sonic-static", "sonic-lua"):
        raise ValueError(f"unknown headroom model {name!r}: use ieee, sonic-static or sonic-lua")
    return _headroom(asic, speed_gbps, cable_m, port_mtu_bytes, lanes, name, shared_headroom_pool,
                     lossless_mtu_bytes, small_packet_percent)


def select_headroom_model(asic: AsicSpec, requested: HeadroomModel | str | None) -> tuple[str, str, str]:
    """The headroom model a switch's ports use, the other model shown beside it, and why.

    ``requested`` (``policy.headroom_model``) wins. Unset, the vendor-validated model is chosen where the
    catalog has one for the ASIC: ``sonic-static`` reproduces every row of SONiC's own
    ``pg_profile_lookup.ini`` for Spectrum-1/2/3 (``asic.sonic_static_tables``,
    docs/derivation.md#headroom-models) -- the numbers NVIDIA ships and validates -- while ``ieee`` gives
    2.4-4x their xoff (100G/5 m on Spectrum-1: 72,704 B vs 30,720 B) from a worst-case 802.3 pause-quanta
    reaction budget. Elsewhere ``ieee``.

    >>> from roce_tune.inventory.catalog import load_catalog
    >>> select_headroom_model(load_catalog().asic("spectrum-3"), None)[:2]
    ('sonic-static', 'ieee')
    >>> select_headroom_model(load_catalog().asic("tomahawk-3"), None)[:2]
    ('ieee', 'sonic-static')

    Returns:
        ``(chosen, other, reason)``.
    """
    name = requested.value if isinstance(requested, HeadroomModel) else requested
    if name is not None:
        chosen, reason = str(name), f"policy.headroom_model = {name}"
    elif asic.sonic_static_tables:
        chosen = "sonic-static"
        reason = (f"default: {asic.id} has SONiC's vendor-validated static tables (pg_profile_lookup.ini), "
                  "which sonic-static reproduces row for row (docs/derivation.md#headroom-models)")
    else:
        chosen = "ieee"
        reason = (f"default: no vendor-validated static table for {asic.id} in the catalog; ieee (IEEE 802.3 "
                  "31B.3.7 reaction budget, true cable bytes)")
    return chosen, ("ieee" if chosen != "ieee" else "sonic-static"), reason


def with_model_comparison(hr: Headroom, other: Headroom, reason: str) -> Headroom:
    """``hr`` with a ``model`` rationale naming the chosen model, why, and the other model's numbers
    (plan.md shows both)."""
    why = Rationale(
        formula="policy.headroom_model, else sonic-static where the catalog has SONiC static tables for the "
                "ASIC, else ieee",
        inputs={"model": hr.model, f"{hr.model}_xoff_bytes": hr.xoff_bytes,
                f"{hr.model}_size_bytes": hr.size_bytes,
                "other_model": other.model, f"{other.model}_xoff_bytes": other.xoff_bytes,
                f"{other.model}_size_bytes": other.size_bytes},
        source=f"{_STATIC_SRC}; {_LUA_SRC}", note=reason)
    return hr.model_copy(update={"rationale": {**hr.rationale, "model": why}})


def compute_headroom_sonic_lua(asic: AsicSpec, speed_gbps: int, cable_m: float, port_mtu_bytes: int = 9100,
                               lanes: int | None = None, shared_headroom_pool: bool = False,
                               lossless_mtu_bytes: int = 1024, small_packet_percent: int = 100) -> Headroom:
    """Bit-for-bit the current SONiC ``buffer_headroom_mellanox.lua`` (no gearbox).

    Differences from ``ieee``: cable bytes in the Lua's units (x 1000/1024) and the 8-lane rule only
    for exactly 8 lanes. The default port MTU 9100 is the SONiC port default used by
    docs/derivation.md#headroom-models.
    """
    return _headroom(asic, speed_gbps, cable_m, port_mtu_bytes, lanes, "sonic-lua", shared_headroom_pool,
                     lossless_mtu_bytes, small_packet_percent)


def nic_xoff_bytes(speed_gbps: int, cable_m: float, mtu_bytes: int) -> int:
    """ConnectX (mlx5) receive-buffer xoff, the kernel's integer formula.

    ``xoff = (301 + 216*cable_m/100) * speed_Mbps/1000 + 272*mtu/100`` with integer division at each
    step and the speed clamped to >= 40G (``torvalds/linux:drivers/net/ethernet/mellanox/mlx5/core/en/
    port_buffer.c`` ``calculate_xoff``; docs/derivation.md#nic-headroom). The kernel keeps the cable length in
    whole metres; a fractional length is rounded up.

    >>> nic_xoff_bytes(25, 7, 1500), nic_xoff_bytes(400, 30, 9000)
    (16720, 170480)

    Raises:
        ValueError: a speed or MTU that is not positive, or a negative cable length.
    """
    if speed_gbps <= 0 or cable_m < 0 or mtu_bytes <= 0:
        raise ValueError("speed, MTU must be positive and cable length non-negative")
    speed_mbps = max(speed_gbps * 1000, 40000)
    length = math.ceil(cable_m)
    return (301 + 216 * length // 100) * speed_mbps // 1000 + 272 * mtu_bytes // 100


def check_port_mtu(mtu: int) -> None:
    """Refuse a port MTU (bytes) outside 1500..9216, the range of ``policy.mtu`` and a port's ``mtu`` in an
    inventory (roce_tune.inventory.models), for :func:`calc_headroom` and ``roce-tune calc headroom --mtu``.

    Raises:
        ValueError: ``mtu`` outside 1500..9216.
    """
    lo, hi = PORT_MTU_RANGE_BYTES
    if not lo <= int(mtu) <= hi:
        raise ValueError(f"MTU {mtu} B is outside the {lo}..{hi} B a port MTU may be (policy.mtu)")


def calc_headroom(asic_id: str, speed: object, cable: object, mtu: int = 9216, model: str | None = None,
                  catalog: Catalog | None = None) -> Headroom:
    """Headroom for the CLI: parses ``"400G"``/``"400000"`` and ``"40m"``/``"40"`` (roce_tune.units).

    ``model`` None is the model ``plan`` uses for the ASIC when ``policy.headroom_model`` is unset
    (:func:`select_headroom_model`: sonic-static where SONiC's static tables exist, else ieee), with the
    ``model`` rationale naming why and the other model's numbers, as plan.md shows them.

    Raises:
        ValueError: bad speed/length spelling or model, or an MTU outside the 1500..9216 bytes an
            inventory's port MTU may be (``policy.mtu``). CatalogError: unknown ASIC id.
    """
    from roce_tune.inventory.catalog import load_catalog

    check_port_mtu(mtu)
    cat = catalog if catalog is not None else load_catalog()
    asic = cat.asic(asic_id)
    speed_gbps, cable_m = parse_speed_gbps(speed), parse_length_m(cable)
    if model is not None:
        return compute_headroom(asic, speed_gbps, cable_m, int(mtu), model=model)
    chosen, other, reason = select_headroom_model(asic, None)
    return with_model_comparison(compute_headroom(asic, speed_gbps, cable_m, int(mtu), model=chosen),
                                 compute_headroom(asic, speed_gbps, cable_m, int(mtu), model=other), reason)


def check_pinned_headroom(derived: Headroom, pinned: Headroom, pinned_keys: dict[str, str],
                          shared_headroom_pool: bool, device: str, port: str) -> list[Finding]:
    """Safety checks on user-pinned headroom (RT203): a pin replaces the formula, not the physics.

    * pinned ``xoff_bytes`` below the derived xoff: the bytes already on the wire (cable round trip, the
      frame the peer has started, its reaction time) after XOFF no longer fit, so lossless traffic drops
      (``xoff_bytes: 0`` is a lossless profile with no headroom at all);
    * ``xon_bytes`` above ``xoff_bytes``: the resume threshold sits above the headroom it resumes from;
    * ``size_bytes`` below ``xon + xoff`` (below ``xon`` with a shared headroom pool): the profile reserves
      less than the headroom it declares (SONiC buffer_headroom_mellanox.lua: size = xon + xoff [+ speed
      overhead], or xon with the pool).

    Args:
        derived: the headroom the formula gives for this port (the physics minimum of the model).
        pinned: the same after pins are applied.
        pinned_keys: pinned parameter -> field path of the pin (``policy.overrides[i].set.xoff_bytes``).
        shared_headroom_pool: xoff comes from the shared pool (size = xon).
        device, port: where the profile is used.

    Returns:
        One error Finding per violated condition (empty when the pins are safe).
    """
    out: list[Finding] = []

    def err(key: str, message: str, fix: str) -> None:
        path = pinned_keys.get(key) or next(iter(pinned_keys.values()), None)
        out.append(Finding(rule="RT203", severity=Severity.error,
                           message=f"{device} {port}: {message}", fix=fix,
                           location=Location(device=device, port=port, path=path)))

    if "xoff_bytes" in pinned_keys and pinned.xoff_bytes < derived.xoff_bytes:
        err("xoff_bytes",
            f"pinned xoff {pinned.xoff_bytes} B is below the {derived.xoff_bytes} B the cable, MTU "
            f"and PFC reaction time need ({derived.model} model): frames in flight after XOFF would be "
            "dropped",
            f"pin xoff_bytes at least {derived.xoff_bytes}, or drop the pin")
    if not out and pinned_keys.keys() & {"xon_bytes", "xoff_bytes"} and pinned.xon_bytes > pinned.xoff_bytes:
        err("xon_bytes", f"xon {pinned.xon_bytes} B is above xoff {pinned.xoff_bytes} B",
            "pin xon_bytes below xoff_bytes (the derived xon is the pipeline latency)")
    need = pinned.xon_bytes if shared_headroom_pool else pinned.xon_bytes + pinned.xoff_bytes
    if pinned_keys.keys() & {"size_bytes", "xon_bytes", "xoff_bytes"} and pinned.size_bytes < need:
        what = "xon (shared headroom pool)" if shared_headroom_pool else "xon + xoff"
        err("size_bytes", f"profile size {pinned.size_bytes} B is below {what} = {need} B: it reserves less "
            "headroom than it declares",
            f"pin size_bytes at least {need}, or pin only xoff/xon and let size follow")
    return out
