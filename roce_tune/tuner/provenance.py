"""RT250: which catalog constants behind this plan are recalled or assumed rather than verified.

Every number in ``roce_tune/catalog/asics.yaml`` cites its source, tagged ``[V]`` (read in a vendor
document or SONiC source), ``[D]`` (derived from verified numbers) or ``[R]`` (recalled, secondary or
assumed; the catalog header says: confirm before relying on it). A reviewer of a plan should know when
a headroom or a buffer pool rests on an ``[R]`` number, so the plan says so, once per ASIC in use:

* warning: an ``[R]`` value feeds PFC headroom or the buffer carve (:data:`SAFETY_FIELDS`): a wrong
  cell size or pipeline latency under-sizes xoff and the port drops at line rate;
* info: an ``[R]`` value feeds something the NCCL loop can correct (:data:`TUNING_FIELDS`: the
  switch latency in the base RTT behind ECN Kmin/Kmax, dynamic-threshold alphas, SerDes lanes).
"""

from __future__ import annotations

from roce_tune.findings import Finding, Location, Severity
from roce_tune.inventory.catalog import AsicSpec, Catalog
from roce_tune.inventory.models import Inventory
from roce_tune.inventory.topology import asic_of

#: catalog field -> what it sizes (a wrong value risks loss)
SAFETY_FIELDS = {
    "cell_bytes": "headroom cell rounding and small-packet inflation",
    "buffer_bytes": "buffer pools and the total-buffer admission check",
    "ingress_lossless_pool_bytes": "the lossless ingress pool",
    "pipeline_latency_bytes": "xon and the PG size",
    "mac_phy_delay_bytes": "xoff",
    "peer_response_bytes": "xoff",
    "port_max_headroom_bytes": "the per-port headroom admission check",
}
#: catalog field -> what it tunes (a wrong value costs throughput, which verify can measure)
TUNING_FIELDS = {
    "switch_latency_us": "the base RTT behind ECN Kmin/Kmax",
    "lossless_dynamic_th": "the lossless pool's dynamic threshold (alpha)",
    "lossy_dynamic_th": "the lossy pool's dynamic threshold (alpha)",
    "serdes_gbps": "lanes per port (8-lane headroom rule)",
}
RECALLED_TAG = "[R]"


def recalled_fields(asic: AsicSpec, fields: dict[str, str]) -> list[str]:
    """Fields of ``fields`` whose catalog source is tagged ``[R]``, in ``fields`` order."""
    return [f for f in fields if asic.sources.get(f, "").lstrip().startswith(RECALLED_TAG)]


def check_catalog_provenance(inv: Inventory, catalog: Catalog) -> list[Finding]:
    """One RT250 finding per ASIC in use that rests on recalled/assumed constants (see module doc).

    Located at the first switch (inventory order) with that ASIC; the message counts the others.
    Raises CatalogError for an unknown ASIC (the loader has already refused those).
    """
    users: dict[str, list[str]] = {}
    for sw in inv.switches:
        users.setdefault(asic_of(sw, catalog), []).append(sw.name)
    out: list[Finding] = []
    for asic_id, names in users.items():
        asic = catalog.asic(asic_id)
        where = names[0] + (f" and {len(names) - 1} other switch(es)" if len(names) > 1 else "")
        for fields, severity, risk in ((SAFETY_FIELDS, Severity.warning, "lossless safety"),
                                       (TUNING_FIELDS, Severity.info, "tuning")):
            recalled = recalled_fields(asic, fields)
            if not recalled:
                continue
            detail = "; ".join(f"{f}={getattr(asic, f)} ({fields[f]}; {asic.sources[f].strip()})"
                               for f in recalled)
            out.append(Finding(
                rule="RT250", severity=severity,
                message=f"{asic.name} ({asic_id}) on {where}: {risk} rests on catalog values that are "
                        f"recalled or assumed, not verified: {detail}",
                fix=(f"confirm these against the vendor's buffer documentation or the platform's SONiC "
                     f"SKU files and correct roce_tune/catalog/asics.yaml ({asic_id}); until then treat "
                     f"the derived {'headroom/buffers' if severity is Severity.warning else 'values'} as "
                     "estimates"),
                location=Location(device=names[0])))
    return out
