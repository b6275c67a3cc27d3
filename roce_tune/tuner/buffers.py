"""Shared-buffer pools and profiles of one switch, headroom admission checks and the PFC trigger.

Pure functions, no I/O. Pool sizing follows the SONiC Mellanox Lua
(``sonic-net/sonic-swss:cfgmgr/buffer_pool_mellanox.lua``, docs/derivation.md#buffer-pools) on Spectrum, and
the SONiC Broadcom SKU layout (one ingress pool holding the shared headroom pool,
docs/derivation.md#buffer-pools) elsewhere::

    Spectrum:  available = buffer - (sum PG sizes + per admin-up port [lossy PG + mgmt PG reserve
               (pipeline latency each) + 10 KiB egress mirror + 9216 egress lossy] + 256 KiB mgmt pool
               + 10 KiB private headroom per lossless port (SHP) + SHP)
               ingress_lossless = ingress_lossy = egress_lossy = ceil(available / 2); egress_lossless = buffer
    Others:    ingress_lossless = egress_lossless = buffer - (sum PG sizes + 7 cells egress lossy per port),
               shared headroom pool carved inside the ingress pool (its ``xoff``)
    SHP      = max(ceil((sum over lossless PGs of (xon + xoff - size) - private headroom) /
    over_subscribe_ratio),
                   sum of the k largest per-PG pool draws, k = ceil(lossless PGs / over_subscribe_ratio))

The second term (:func:`shp_required_bytes`) is the lossless-safety floor: the ratio says 1/ratio of the
lossless PGs may be in headroom at once, so the pool must hold the xoff of the k PGs that draw most (and
never less than one PG's xoff). Without it a small switch (2 lossless ports, ratio 8) gets a pool smaller
than one port's xoff; :func:`check_shared_headroom_pool` (RT204) flags any pool below the floor.

The per-PG PFC trigger under the dynamic threshold is :func:`pg_shared_limit_bytes`.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from roce_tune.findings import Finding, Location, Severity
from roce_tune.plan import BufferPool, BufferProfile, Buffers, Headroom, Rationale

if TYPE_CHECKING:
    from roce_tune.inventory.catalog import AsicSpec

KIB = 1024
#: Management pool reserved by the Mellanox pool Lua (``mgmt_pool_size = 256 * 1024``).
MGMT_POOL_BYTES = 256 * KIB
#: Egress-mirror reserve per admin-up port in the pool Lua (``egress_mirror_headroom = 10 * 1024``).
EGRESS_MIRROR_POOL_BYTES = 10 * KIB
#: Egress-mirror term of the per-port admission check (``egress_mirror_size = 20*1024``, doubled on 8 lanes).
EGRESS_MIRROR_CHECK_BYTES = 20 * KIB
#: Start value of the admission sum (``accumulative_size = 4096`` "to absorb the possible deviation").
ADMISSION_SLACK_BYTES = 4096
#: Private headroom per lossless port kept out of the shared headroom pool (``private_headroom = 10 * 1024``).
PRIVATE_HEADROOM_BYTES = 10 * KIB
#: SHP size the Lua uses when the computed one is 0 (``shp_size = 655360``).
SHP_DEFAULT_BYTES = 655360
#: Spectrum ``egress_lossy_profile`` size in ACS-MSN2700/4700/SN5600 buffers_defaults_t1.j2.
SPECTRUM_EGRESS_LOSSY_BYTES = 9216
#: Broadcom ``egress_lossy_profile`` size 1778 B = 7 x 254-B cells (Z9332f TH3, 7060X6 TH5 buffers_defaults).
BROADCOM_EGRESS_LOSSY_CELLS = 7
#: SONiC Mellanox lossless PG profiles use dynamic_th 0 (pg_profile_lookup.ini threshold column; dynamic
#: mode DEFAULT_LOSSLESS_BUFFER_PARAMETER.default_dynamic_th), not the port-level profile's 7.
SPECTRUM_LOSSLESS_PG_DYNAMIC_TH = 0
#: the source of every dynamic-threshold share (:func:`shared_limit_rationale`)
_DYNAMIC_TH_SOURCE = "SAI saibuffer.h SHARED_DYNAMIC_TH; docs/derivation.md#dynamic-threshold"
_POOL_LUA = "sonic-net/sonic-swss:cfgmgr/buffer_pool_mellanox.lua (docs/derivation.md#buffer-pools)"
_SHP_DESIGN = ("sonic-net/SONiC doc/qos 'Shared headroom pool design' (headroom is only occupied by PGs "
               "congested at the same time; over_subscribe_ratio = sum of xoff / pool)")
_BRCM_SKU = ("SONiC Broadcom SKUs DellEMC-Z9332f-O32 (TH3) and Arista-7060X6-64PE-O128S2 (TH5) "
             "buffers_defaults_t1.j2 (docs/derivation.md#buffer-pools)")


def _spectrum(asic: AsicSpec) -> bool:
    return asic.family == "spectrum"


def _lossy_pg_bytes(asic: AsicSpec, lanes: int) -> int:
    """Lossy-PG reserve: pipeline latency, ``2*pl - 1 KiB`` on 8-lane Spectrum ports (both Lua scripts)."""
    if _spectrum(asic) and lanes >= 8:
        return 2 * asic.pipeline_latency_bytes - KIB
    return asic.pipeline_latency_bytes


def pg_shared_limit_bytes(pool_bytes: int, dynamic_th: int, n_congested: int) -> int:
    """Shared-buffer occupancy at which a lossless PG stops admitting and sends PFC XOFF.

    Under the dynamic-threshold rule a PG may hold ``alpha * free`` with ``alpha = 2**dynamic_th``
    (``opencomputeproject/SAI:inc/saibuffer.h`` ``SAI_BUFFER_PROFILE_ATTR_SHARED_DYNAMIC_TH``). With
    ``n`` PGs congested at once, each settles where ``L = alpha * (pool - n*L)``, i.e.
    ``L = alpha * pool / (1 + n*alpha)`` (the ``alpha/(1 + n*alpha)`` share quoted in mlx5
    ``port_buffer.c``; docs/derivation.md#dynamic-threshold). ``dynamic_th >= 7`` is "infinity" in the
    Mellanox SAI (``SAI_BUFFER_ALPHA_INFINITY = 7`` in
    ``Mellanox/SAI-Implementation:mlnx_sai/src/mlnx_sai_buffer.c``): the n PGs split the pool, ``pool / n``;
    ``dynamic_th <= -8`` is alpha 0.

    The ECN helper uses this as ``pfc_trigger_bytes``: Kmax must stay below it (ECN before PFC).

    >>> pg_shared_limit_bytes(1_000_000, 0, 1), pg_shared_limit_bytes(1_000_000, 0, 8)
    (500000, 111111)

    Args:
        pool_bytes: shared pool size (bytes), all of it free at the start of the burst.
        dynamic_th: SAI exponent, -8..7.
        n_congested: PGs congested at once (fan-in); values < 1 are treated as 1 (the PG itself).

    Raises:
        ValueError: negative pool.
    """
    if pool_bytes < 0:
        raise ValueError(f"pool size {pool_bytes} B is negative")
    n = max(1, n_congested)
    if dynamic_th >= 7:
        return pool_bytes // n
    if dynamic_th <= -8:
        return 0
    alpha = 2.0 ** dynamic_th
    return int(alpha * pool_bytes / (1 + n * alpha))


def alpha_text(dynamic_th: int) -> str:
    """The dynamic-threshold factor ``alpha = 2^dynamic_th`` as printed in a rationale: ``"infinity"`` for
    ``dynamic_th >= 7`` (Mellanox SAI), ``"0"`` for ``<= -8``, else the exact power of two (``"0.25"``).

    >>> alpha_text(0), alpha_text(-2), alpha_text(7), alpha_text(-8)
    ('1', '0.25', 'infinity', '0')
    """
    if dynamic_th >= 7:
        return "infinity"
    if dynamic_th <= -8:
        return "0"
    return f"{2.0 ** dynamic_th:g}"


def shared_limit_rationale(key: str, value_bytes: int, pool: BufferPool, dynamic_th: int, th_key: str,
                           n_key: str, n_congested: int, source: str = _DYNAMIC_TH_SOURCE,
                           note: str = "") -> Rationale:
    """The rationale of a :func:`pg_shared_limit_bytes` value, written so the printed value can be recomputed
    by hand from the printed formula and inputs (docs/derivation.md#dynamic-threshold).

    Args:
        key: the value's name (``pfc_trigger_bytes``, ``queue_buffer_bytes``).
        value_bytes: the value (bytes) ``pg_shared_limit_bytes(pool.size_bytes, dynamic_th, n_congested)``.
        pool: the shared pool it is a share of; its ``size_bytes`` rationale (buffer and reserved bytes) is
            carried along, so the pool size can be recomputed too.
        dynamic_th: the SAI exponent the profile applies (-8..7); th_key names it in the inputs
            (``pg_dynamic_th``), with ``<prefix>_alpha`` = :func:`alpha_text` beside it.
        n_key, n_congested: the name and number of queues/PGs congested at once (``fan_in``; < 1 counts
            as 1).
        source, note: as :class:`~roce_tune.plan.Rationale` (default source :data:`_DYNAMIC_TH_SOURCE`).

    Returns:
        The rationale; inputs ``<type>_pool_bytes`` (``ingress_pool_bytes``), ``th_key``, the alpha,
        ``n_key``, the pool's ``buffer_bytes``/``reserved_bytes`` when its rationale has them, and ``key``.
    """
    pool_key = f"{pool.type}_pool_bytes"
    alpha_key = th_key.replace("dynamic_th", "alpha")
    n = max(1, n_congested)
    if dynamic_th >= 7:
        formula = (f"floor({pool_key} / {n_key}): {th_key} >= 7 is {alpha_key} = infinity in the Mellanox "
                   f"SAI, the {n_key} congested PGs/queues split the pool")
    elif dynamic_th <= -8:
        formula = f"0: {th_key} <= -8 is {alpha_key} = 0"
    else:
        formula = (f"floor({alpha_key} x {pool_key} / (1 + {n_key} x {alpha_key})), {alpha_key} = "
                   f"2^{th_key}: each of the {n_key} congested PGs/queues settles at {alpha_key} x the pool "
                   "left free")
    inputs: dict[str, float | int | str | bool] = {pool_key: pool.size_bytes, th_key: dynamic_th,
                                                   alpha_key: alpha_text(dynamic_th), n_key: n}
    pool_why = pool.rationale.get("size_bytes")
    if pool_why is not None:
        formula += f"; {pool_key} = {pool.name} size = {pool_why.formula}"
        inputs.update({k: v for k, v in pool_why.inputs.items() if k in ("buffer_bytes", "reserved_bytes")})
    inputs[key] = value_bytes
    return Rationale(formula=formula, inputs=inputs, source=source, note=note)


def _pool_draws(port_headrooms: list[tuple[str, Headroom, int]]) -> list[int]:
    """Bytes each lossless PG draws from the shared headroom pool: ``xon + xoff - size`` (= xoff when the
    PG's own size is only xon), one entry per PG."""
    return [max(0, h.xon_bytes + h.xoff_bytes - h.size_bytes) for _, h,
            n in port_headrooms for _ in range(max(0, n))]


def shp_required_bytes(draws: list[int], oversubscription: int) -> tuple[int, int]:
    """Smallest safe shared headroom pool and the number of PGs it must hold at once.

    ``k = ceil(len(draws) / oversubscription)`` PGs may be in headroom at the same time under the declared
    over-subscription (SONiC shared headroom pool design); the pool must hold the sum of the k largest
    draws, which is also at least the largest single xoff. Source: the SONiC shared headroom pool design
    (``sonic-net/SONiC`` doc/qos) for the meaning of the ratio; the top-k bound is ours [D].

    >>> shp_required_bytes([156672, 156672], 8)
    (156672, 1)
    >>> shp_required_bytes([100, 300, 200, 50], 2)
    (500, 2)

    Returns:
        ``(required_bytes, k)``; ``(0, 0)`` with no lossless PG.

    Raises:
        ValueError: ratio < 1.
    """
    if oversubscription < 1:
        raise ValueError(f"over-subscription ratio {oversubscription} must be >= 1")
    if not draws:
        return 0, 0
    k = max(1, math.ceil(len(draws) / oversubscription))
    return sum(sorted(draws, reverse=True)[:k]), k


def check_shared_headroom_pool(switch_name: str, shp_bytes: int | None,
                               port_headrooms: list[tuple[str, Headroom, int]], oversubscription: int,
                               ) -> list[Finding]:
    """RT204 (error): the shared headroom pool cannot absorb the xoff of the PGs that may be paused at once.

    ``shp_bytes`` must be at least :func:`shp_required_bytes` of the switch's lossless PGs; no pool
    (``None``: PGs carry their xoff themselves) is not checked. ``port_headrooms``: one
    ``(port name, Headroom in bytes, number of lossless PGs on the port)`` per port; ``oversubscription``:
    the declared ratio (dimensionless) of :func:`shp_required_bytes`.

    Returns:
        ``[]`` or one error Finding naming the switch, the pool, the requirement and the PGs behind it.
    """
    if shp_bytes is None:
        return []
    draws = _pool_draws(port_headrooms)
    need, k = shp_required_bytes(draws, oversubscription)
    if shp_bytes >= need:
        return []
    return [Finding(
        rule="RT204", severity=Severity.error, location=Location(device=switch_name),
        message=(f"{switch_name}: shared headroom pool {shp_bytes} B cannot absorb the xoff of the {k} "
                 f"lossless PG(s) that over-subscription {oversubscription} lets be paused at once ({need} "
                 f"B; largest xoff {max(draws)} B of {len(draws)} PGs): a PFC pause would overflow into "
                 "drops"),
        fix="lower shp_oversubscription, shorten cables, or let roce-tune size the pool (remove the pinned "
            "size)")]


def _shp_terms(asic: AsicSpec, port_headrooms: list[tuple[str, Headroom, int]],
               lossless: list[tuple[Headroom, int]],
               oversubscription: int) -> dict[str, int]:
    """Shared headroom pool: the summed xoff, Spectrum's private headroom, the ratio and required sizes, the
    pool."""
    xoff_sum = sum(max(0, h.xon_bytes + h.xoff_bytes - h.size_bytes) * n for h, n in lossless)
    private = PRIVATE_HEADROOM_BYTES * len(lossless) if _spectrum(asic) else 0
    shp_ratio = math.ceil(max(0, xoff_sum - private) / oversubscription) or SHP_DEFAULT_BYTES
    shp_floor, _ = shp_required_bytes(_pool_draws(port_headrooms), oversubscription)
    return {"shp_bytes": max(shp_ratio, shp_floor), "private_headroom_bytes": private,
            "shp_xoff_sum_bytes": xoff_sum,
            "shp_ratio_bytes": shp_ratio, "shp_required_bytes": shp_floor}


def _spectrum_reserved(asic: AsicSpec, acc: dict[str, int], lossless: list[tuple[Headroom, int]],
                       admin_up_ports: int) -> int:
    """Spectrum: lossy/management PGs, egress mirror and lossy pools and the management pool on top of the
    lossless PGs and headroom; adds those terms to ``acc`` and returns the occupied bytes."""
    n8 = min(admin_up_ports, sum(1 for h, _ in lossless if h.lanes >= 8))
    per_port = 2 * ((admin_up_ports - n8) * _lossy_pg_bytes(asic, 1) + n8 * _lossy_pg_bytes(asic, 8))
    acc.update(lossy_and_mgmt_pg_bytes=per_port, egress_mirror_bytes=admin_up_ports
               * EGRESS_MIRROR_POOL_BYTES,
               egress_lossy_bytes=admin_up_ports * SPECTRUM_EGRESS_LOSSY_BYTES,
               mgmt_pool_bytes=MGMT_POOL_BYTES,
               admin_up_8lane_ports=n8)
    return acc["lossless_pg_bytes"] + per_port + acc["egress_mirror_bytes"] + acc["egress_lossy_bytes"] \
        + MGMT_POOL_BYTES + acc["private_headroom_bytes"] + acc["shp_bytes"]


def _accounting(asic: AsicSpec, port_headrooms: list[tuple[str, Headroom, int]], admin_up_ports: int,
                shared_headroom_pool: bool, oversubscription: int) -> dict[str, int]:
    """All reservation terms of the pool computation (bytes)."""
    if oversubscription < 1:
        raise ValueError(f"over-subscription ratio {oversubscription} must be >= 1")
    if admin_up_ports < 0 or any(n < 0 for _, _, n in port_headrooms):
        raise ValueError("admin-up port and lossless PG counts must be >= 0")
    lossless = [(h, n) for _, h, n in port_headrooms if n > 0]
    pg_reserved = sum(h.size_bytes * n for h, n in lossless)
    shp = _shp_terms(asic, port_headrooms, lossless, oversubscription) if shared_headroom_pool else {}
    acc = {"buffer_bytes": asic.buffer_bytes, "lossless_pg_bytes": pg_reserved,
           "shp_bytes": shp.get("shp_bytes", 0),
           "private_headroom_bytes": shp.get("private_headroom_bytes", 0),
           "shp_xoff_sum_bytes": shp.get("shp_xoff_sum_bytes", 0), "lossless_ports": len(lossless),
           "admin_up_ports": admin_up_ports}
    if shared_headroom_pool:
        acc.update(shp_ratio_bytes=shp["shp_ratio_bytes"], shp_required_bytes=shp["shp_required_bytes"])
    if _spectrum(asic):
        occupied = _spectrum_reserved(asic, acc, lossless, admin_up_ports)
    else:
        acc["egress_lossy_bytes"] = admin_up_ports * BROADCOM_EGRESS_LOSSY_CELLS * asic.cell_bytes
        occupied = pg_reserved + acc["egress_lossy_bytes"]
    # non-Spectrum: SHP is carved inside the ingress
    # pool
    acc["available_bytes"] = asic.buffer_bytes - occupied
    acc["reserved_bytes"] = occupied
    return acc


def _th(value: int, source: str, formula: str = "catalog dynamic threshold", note: str = "") -> Rationale:
    return Rationale(formula=formula, inputs={"dynamic_th": value}, source=source, note=note)


def _profiles(asic: AsicSpec, port_headrooms: list[tuple[str, Headroom, int]], pools: dict[str, int]
              ) -> list[BufferProfile]:
    spectrum = _spectrum(asic)
    lossless_th, lossy_th = asic.lossless_dynamic_th, asic.lossy_dynamic_th
    th_src = f"catalog {asic.id}: {asic.sources.get('lossless_dynamic_th', '')}"
    lossy_src = f"catalog {asic.id}: {asic.sources.get('lossy_dynamic_th', '')}"
    ll = _th(lossless_th, th_src, "catalog lossless_dynamic_th (port-level profile)",
             "7 = alpha infinity in the Mellanox SAI" if spectrum else "")
    out = [BufferProfile(name="ingress_lossless_profile", pool="ingress_lossless_pool", size_bytes=0,
                         dynamic_th=lossless_th, rationale={"dynamic_th": ll})]
    if spectrum:
        egress_lossy_size, egress_lossy_pool = SPECTRUM_EGRESS_LOSSY_BYTES, "egress_lossy_pool"
        out += [
            BufferProfile(name="ingress_lossy_profile", pool="ingress_lossy_pool", size_bytes=0,
                          dynamic_th=lossy_th,
                          rationale={"dynamic_th": _th(lossy_th, lossy_src, "catalog lossy_dynamic_th")}),
            BufferProfile(name="egress_lossless_profile", pool="egress_lossless_pool", size_bytes=0,
                          dynamic_th=lossless_th, rationale={"dynamic_th": ll}),
        ]
        egress_src = ("ACS-MSN2700/ACS-MSN4700/ACS-SN5600 buffers_defaults_t1.j2 egress_lossy_profile size "
                      "9216")
    else:
        egress_lossy_size = BROADCOM_EGRESS_LOSSY_CELLS * asic.cell_bytes
        egress_lossy_pool = "egress_lossless_pool"
        ing, egr = pools["ingress_lossless_pool"], pools["egress_lossless_pool"]
        out += [
            BufferProfile(name="ingress_lossy_profile", pool="ingress_lossless_pool", size_bytes=0,
                          static_th_bytes=ing, rationale={"static_th_bytes": Rationale(
                              formula="static_th = ingress pool size (lossy PGs limited only by the pool)",
                              inputs={"ingress_lossless_pool_bytes": ing}, source=_BRCM_SKU)}),
            BufferProfile(name="egress_lossless_profile", pool="egress_lossless_pool", size_bytes=0,
                          static_th_bytes=egr, rationale={"static_th_bytes": Rationale(
                              formula="static_th = egress pool size (lossless queues never dropped at "
                                      "egress)",
                              inputs={"egress_lossless_pool_bytes": egr}, source=_BRCM_SKU)}),
        ]
        egress_src = f"{_BRCM_SKU}: egress_lossy_profile size 1778 = 7 cells of 254 B"
    out.append(BufferProfile(
        name="egress_lossy_profile", pool=egress_lossy_pool, size_bytes=egress_lossy_size,
        dynamic_th=lossy_th,
        rationale={"size_bytes": Rationale(formula="9216 B" if spectrum else "7 cells * cell_bytes",
                                           inputs={"cell_bytes": asic.cell_bytes,
                                                   "size_bytes": egress_lossy_size},
                                           source=egress_src),
                   "dynamic_th": _th(lossy_th, lossy_src, "catalog lossy_dynamic_th",
                                     "SONiC q_lossy_profile value on Spectrum" if spectrum else "")}))
    pg_th = SPECTRUM_LOSSLESS_PG_DYNAMIC_TH if spectrum else lossless_th
    pg_src = ("ACS-MSN2700/4700 pg_profile_lookup.ini threshold column 0 (SONiC "
              "default_dynamic_th)" if spectrum
              else f"{th_src} (the SONiC pg_profile_lookup.ini threshold column)")
    seen: set[str] = set()
    for _, h, n in port_headrooms:
        if n <= 0 or h.profile in seen:
            continue
        seen.add(h.profile)
        out.append(BufferProfile(
            name=h.profile, pool="ingress_lossless_pool", size_bytes=h.size_bytes, dynamic_th=pg_th,
            xon_bytes=h.xon_bytes, xoff_bytes=h.xoff_bytes,
            rationale={**{k: v for k, v in h.rationale.items() if k in ("xon_bytes", "xoff_bytes",
                                                                        "size_bytes")},
                       "dynamic_th": _th(pg_th, pg_src, "lossless PG dynamic_th")}))
    return [_explain_zero_size(p) for p in out]


def _explain_zero_size(profile: BufferProfile) -> BufferProfile:
    """Give the 0-byte reserve of pool-level profiles its own rationale (every number is explained)."""
    if "size_bytes" in profile.rationale:
        return profile
    return profile.model_copy(update={"rationale": {**profile.rationale, "size_bytes": Rationale(
        formula="0: no guaranteed reserve; the profile only sets the shared-buffer threshold",
        inputs={"size_bytes": profile.size_bytes}, source=f"{_POOL_LUA}; {_BRCM_SKU}")}})


def derive_buffers(asic: AsicSpec, port_headrooms: list[tuple[str, Headroom, int]], admin_up_ports: int,
                   shared_headroom_pool: bool, oversubscription: int) -> Buffers:
    """Pools and profiles of one switch.

    Args:
        asic: catalog ASIC (buffer size, cell, pipeline latency, dynamic thresholds, family).
        port_headrooms: ``(port name, headroom, number of lossless PGs on that port)`` for lossless ports.
        admin_up_ports: admin-up ports on the switch (they carry the per-port lossy/mirror reserves; lossless
            ports are assumed to be among them, other ports <= 4 lanes).
        shared_headroom_pool: size a shared headroom pool (``ingress_lossless_pool.xoff``).
        oversubscription: SHP over-subscription ratio (SONiC ``over_subscribe_ratio``), >= 1.

    Returns:
        :class:`~roce_tune.plan.Buffers`; ``rationale['reserved_bytes']`` holds the full accounting that
        :func:`check_total_buffer` reads. Pool sizes are clamped at 0 when reservations exceed the buffer.

    Raises:
        ValueError: ratio < 1 or negative counts.
    """
    acc = _accounting(asic, port_headrooms, admin_up_ports, shared_headroom_pool, oversubscription)
    avail = max(0, acc["available_bytes"])
    cells_cap = asic.buffer_bytes // asic.cell_bytes * asic.cell_bytes
    shp = acc["shp_bytes"] if shared_headroom_pool else 0
    acc_inputs: dict[str, float | int | str | bool] = {k: v for k, v in acc.items()}
    modes: dict[str, Rationale] = {}
    if _spectrum(asic):
        half = min(math.ceil(avail / 2), cells_cap)
        split = Rationale(formula="ceil((buffer_bytes - reserved_bytes) / 2), two ingress pools",
                          inputs=acc_inputs,
                          source=_POOL_LUA,
                          note="reserved = PG sizes + per-port lossy/mgmt PG, mirror and egress "
                          "lossy reserves + mgmt pool + private headroom + SHP")
        sizes = {"ingress_lossless_pool": half, "ingress_lossy_pool": half,
                 "egress_lossless_pool": asic.buffer_bytes,
                 "egress_lossy_pool": half}
        pool_src = {"egress_lossless_pool": Rationale(
            formula="buffer_bytes (the ASIC's mmu size)", inputs={"buffer_bytes": asic.buffer_bytes},
            source="ACS buffers_defaults egress_lossless_pool = mmu size; "
                   f"{asic.sources.get('buffer_bytes', '')}")}
        types = {"ingress_lossless_pool": "ingress", "ingress_lossy_pool": "ingress",
                 "egress_lossless_pool": "egress", "egress_lossy_pool": "egress"}
    else:
        size = min(avail, cells_cap)
        split = Rationale(formula="buffer_bytes - reserved_bytes (PG sizes + 7 cells egress lossy per "
                                  "admin-up port)",
                          inputs=acc_inputs,
                          source=_BRCM_SKU, note="shared headroom pool carved inside this pool (xoff)")
        sizes = {"ingress_lossless_pool": size, "egress_lossless_pool": size}
        pool_src = {}
        types = {"ingress_lossless_pool": "ingress", "egress_lossless_pool": "egress"}
        modes = {"egress_lossless_pool": Rationale(
            formula="static, as the SKU creates it", inputs={},
            source=_BRCM_SKU, note="a pool's mode is create-only in bufferorch "
            "(docs/derivation.md#sonic-buffer-models): planning another mode than the switch booted with "
            "would be ignored until a reload")}
    pools = []
    for name, size_b in sizes.items():
        xoff = shp if (name == "ingress_lossless_pool" and shared_headroom_pool) else None
        rat = {"size_bytes": pool_src.get(name, split)}
        if xoff is not None:
            rat["xoff_bytes"] = _shp_rationale(asic, acc, oversubscription)
        mode = "dynamic"
        if name in modes:
            mode, rat["mode"] = "static", modes[name]
        pools.append(BufferPool(name=name, type=types[name], mode=mode,  # type: ignore[arg-type]
                                size_bytes=size_b, xoff_bytes=xoff, rationale=rat))
    total = acc["lossless_pg_bytes"] + acc["private_headroom_bytes"] + shp
    rationale = {
        "headroom_total_bytes": Rationale(
            formula="sum(lossless PG size * PGs) + private headroom + SHP",
            inputs={"lossless_pg_bytes": acc["lossless_pg_bytes"], "shp_bytes": shp,
                    "private_headroom_bytes": acc["private_headroom_bytes"]}, source=_POOL_LUA),
        "reserved_bytes": Rationale(formula="all reservations subtracted from the buffer", inputs=acc_inputs,
                                    source=_POOL_LUA if _spectrum(asic) else _BRCM_SKU),
    }
    if shared_headroom_pool:
        rationale["shared_headroom_pool_bytes"] = _shp_rationale(asic, acc, oversubscription)
    return Buffers(pools=pools, profiles=_profiles(asic, port_headrooms, sizes),
                   shared_headroom_pool_bytes=shp if shared_headroom_pool else None,
                   headroom_total_bytes=total, rationale=rationale)


def _shp_rationale(asic: AsicSpec, acc: dict[str, int], ratio: int) -> Rationale:
    return Rationale(
        formula="max(ceil((sum over lossless PGs of (xon + xoff - size) - 10 KiB * lossless ports) / "
                "over_subscribe_ratio) (655360 if 0), sum of the k largest PG xoff with k = ceil(lossless "
                "PGs / over_subscribe_ratio)) -- the second term is the lossless-safety floor (RT204)",
        inputs={**{k: acc[k] for k in ("shp_xoff_sum_bytes", "private_headroom_bytes", "lossless_ports",
                                       "shp_ratio_bytes", "shp_required_bytes", "shp_bytes")},
                "over_subscribe_ratio": ratio},
        source=f"{_POOL_LUA}; {_SHP_DESIGN}",
        note="" if _spectrum(asic) else "no private headroom term outside Spectrum (Broadcom SKUs: sum xoff "
                                        "/ ratio)")


def check_headroom_admission(asic: AsicSpec, switch_name: str, port_name: str, headroom: Headroom,
                             n_lossless_pgs: int, lanes: int) -> list[Finding]:
    """Per-port headroom limit (RT201), the logic of SONiC ``buffer_check_headroom_mellanox.lua``.

    ``sum = 4096 + lossy PG (pipeline latency) + 20 KiB egress mirror + n_pgs * size`` (lossy PG
    ``2*pl - 1 KiB`` and mirror 40 KiB on 8-lane Spectrum ports) must stay strictly below
    ``asic.port_max_headroom_bytes``. With a shared headroom pool ``size`` is only xon, so long cables
    pass here and are bounded by the pool instead (SAI: the limit applies to the per-PG headroom model).

    Returns:
        ``[]`` or one error Finding naming device and port.
    """
    eight = _spectrum(asic) and lanes >= 8
    total = (ADMISSION_SLACK_BYTES + _lossy_pg_bytes(asic, lanes) + EGRESS_MIRROR_CHECK_BYTES
             * (2 if eight else 1)
             + max(0, n_lossless_pgs) * headroom.size_bytes)
    limit = asic.port_max_headroom_bytes
    if limit > total:
        return []
    return [Finding(
        rule="RT201", severity=Severity.error,
        message=(f"{switch_name} {port_name}: accumulated headroom {total} B ({n_lossless_pgs} lossless PG x "
                 f"{headroom.size_bytes} B of {headroom.profile} + reserves) does not fit the {limit} B "
                 f"per-port maximum of {asic.id}"),
        fix="shorten the cable or lower the port MTU, carry fewer lossless priorities on this port, or "
            "enable the shared headroom pool",
        location=Location(device=switch_name, port=port_name))]


def check_total_buffer(asic: AsicSpec, switch_name: str, buffers: Buffers) -> list[Finding]:
    """Switch-wide reservations against the ASIC buffer (RT202).

    Errors when the reservations of :func:`derive_buffers` (``rationale['reserved_bytes']``) leave no
    shared pool, or when the shared headroom pool does not fit the ingress pool it is carved from
    (non-Spectrum layout). Buffers built elsewhere (no accounting) are checked on ``headroom_total_bytes``.
    """
    acc = buffers.rationale.get("reserved_bytes")
    reserved = int(acc.inputs["reserved_bytes"]) if acc else buffers.headroom_total_bytes
    loc = Location(device=switch_name)
    out: list[Finding] = []
    if reserved >= asic.buffer_bytes:
        out.append(Finding(
            rule="RT202", severity=Severity.error,
            message=(f"{switch_name}: reserved buffer {reserved} B (headroom {buffers.headroom_total_bytes} "
                     f"B) leaves no shared pool in the {asic.buffer_bytes} B buffer of {asic.id}"),
            fix="enable the shared headroom pool or raise its over-subscription ratio, shorten cables, "
                "or carry fewer lossless priorities", location=loc))
    ingress = next((p for p in buffers.pools if p.name == "ingress_lossless_pool"), None)
    if (not _spectrum(asic) and ingress is not None and ingress.xoff_bytes
            and ingress.xoff_bytes >= ingress.size_bytes):
        out.append(Finding(
            rule="RT202", severity=Severity.error,
            message=(f"{switch_name}: shared headroom pool {ingress.xoff_bytes} B does not fit the "
                     f"{ingress.size_bytes} B ingress_lossless_pool of {asic.id}"),
            fix="raise the shared headroom pool over-subscription ratio or shorten cables", location=loc))
    return out


def check_calc_headroom(asic: AsicSpec, headroom: Headroom) -> list[Finding]:
    """``roce-tune calc headroom``'s warnings: the checks ``plan`` makes of a port's headroom, for one
    lossless PG on one port of ``asic`` (no inventory, so no switch or port name).

    * RT201 (:func:`check_headroom_admission` with one lossless PG and ``headroom.lanes``): the headroom does
      not fit the ASIC's per-port maximum (``asic.port_max_headroom_bytes``);
    * RT202 (the condition :func:`check_total_buffer` finds switch-wide): the one PG's ``size_bytes`` is the
      ASIC's whole buffer (``asic.buffer_bytes``) or more, so no switch could reserve it.

    Returns the findings with severity *warning* (a what-if has nothing to refuse); ``[]`` when the headroom
    fits. Source: the same catalog values and SONiC admission logic as the two checks above.
    """
    out = [f.model_copy(update={"severity": Severity.warning, "location": Location(),
                                "message": f.message.removeprefix("- -: ")})
           for f in check_headroom_admission(asic, "-", "-", headroom, 1, headroom.lanes)]
    if headroom.size_bytes >= asic.buffer_bytes:
        out.append(Finding(
            rule="RT202", severity=Severity.warning, location=Location(),
            message=(f"headroom size {headroom.size_bytes} B of one lossless PG does not fit the whole "
                     f"{asic.buffer_bytes} B buffer of {asic.id} (catalog buffer_bytes): no switch can "
                     "reserve it"),
            fix="check the cable length (a unit slip: cm or feet written as metres?), shorten the cable or "
                "lower the MTU"))
    return out
