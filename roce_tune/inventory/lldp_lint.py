"""``roce-tune lint --lldp DIR INVENTORY``: the declared cabling against what LLDP sees (RT130-RT135).

A declared cable (a link, or a NIC's ``switch_port``) is checked when at least one of its devices was
captured. Differences are paired up before they are reported, so one physical mistake is one finding:

1. **RT132 swapped ports** — two declared cables ``p-q`` and ``p2-q2`` seen as ``p-q2`` and ``p2-q``;
2. **RT133 rail mix-up** — a host NIC seen on a leaf that does not serve the NIC's rail;
3. **RT134 wrong peer** — one end as declared, the other end elsewhere;
4. **RT130 missing** / **RT131 extra** — what is left;
5. **RT135 direct-cable rail pair** — a host-to-host cable joining NICs of different rails: NCCL pairs NIC
   i of one host with NIC i of the other (rail order: ``rail``, else the NIC's position), so a p0-p1 cable
   carries nothing NCCL sends (it pairs p0 with p0).

Findings about a declared cable point at its inventory line; findings about a cable the inventory does
not have point at the capture line. Each names the device and port and the LLDP evidence.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import cast

from roce_tune.findings import Finding, Location, Severity
from roce_tune.inventory.lldp import LldpView, ObservedCable
from roce_tune.inventory.loader import LoadedInventory

End = tuple[str, str]


@dataclass(frozen=True)
class LldpRule:
    """An LLDP cabling rule: documented like the lint rules (docs/lint-rules.md)."""

    id: str
    name: str
    severity: Severity
    title: str
    description: str


LLDP_RULES: dict[str, LldpRule] = {
    r.id: r
    for r in (
        LldpRule(
            "RT130",
            "lldp-missing-link",
            Severity.error,
            "A declared cable is not seen by LLDP",
            "The inventory cables two ports (a link, or a NIC's `switch_port`) and at least one of the two devices "
            "was captured, but LLDP on it shows no such neighbour: the cable is missing, unplugged, or the port is "
            "down. The plan's headroom, PFC and ECN for that port protect nothing.",
        ),
        LldpRule(
            "RT131",
            "lldp-extra-link",
            Severity.error,
            "LLDP sees a cable the inventory does not declare",
            "A captured device reports a neighbour on a port the inventory leaves uncabled (or cables to nobody "
            "in its files): traffic crosses a port roce-tune does not make lossless, so PFC/ECN stop there.",
        ),
        LldpRule(
            "RT132",
            "lldp-swapped-ports",
            Severity.error,
            "Two cables have their ends exchanged",
            "Two declared cables `p-q` and `p2-q2` are seen as `p-q2` and `p2-q`: the classic patch-panel swap. "
            "Per-port settings (cable length, speed, rail) land on the wrong cable and, for host NICs, traffic of "
            "one NIC arrives where the plan expects the other.",
        ),
        LldpRule(
            "RT133",
            "lldp-rail-mixup",
            Severity.error,
            "A host NIC is on a leaf of another rail",
            "In a rail-optimised fabric NIC k of every host must reach the rail-k leaf; LLDP shows this NIC on a "
            "leaf that serves other rails, so its rail's traffic crosses the spines and NCCL's rail assumptions "
            "(PXN) break.",
        ),
        LldpRule(
            "RT134",
            "lldp-wrong-peer",
            Severity.error,
            "A cable lands on another port than declared",
            "One end of a declared cable is as written but LLDP shows its far end on another device or port.",
        ),
        LldpRule(
            "RT135",
            "direct-cable-rail-pair",
            Severity.error,
            "A direct host-to-host cable joins NICs that NCCL does not pair",
            "Without a switch, NCCL sends from NIC i of one host to NIC i of the other (rail order: `rail`, else "
            "the NIC's position in `nics`); a cable from p0 to p1 leaves both pairs without a path.",
        ),
    )
}


def _f(rule: str, message: str, fix: str, loc: Location) -> Finding:
    r = LLDP_RULES[rule]
    return Finding(rule=rule, severity=r.severity, message=message, fix=fix, location=loc)


def _ev(c: ObservedCable) -> str:
    return f"{c.file}:{c.line}"


def check_lldp(loaded: LoadedInventory, view: LldpView) -> list[Finding]:
    """Every difference between ``loaded``'s cabling and ``view`` (module docstring), sorted by position."""
    inv = loaded.inventory
    switches = {s.name: s for s in inv.switches}
    nic_of: dict[End, tuple[str, int, int]] = {}  # (host, netdev) -> (path, host index, nic index)
    for hi, h in enumerate(inv.hosts):
        for ni, n in enumerate(h.nics):
            nic_of[(h.name, n.netdev)] = (f"hosts[{hi}].nics[{ni}]", hi, ni)
    declared: dict[frozenset[End], str] = {}
    by_end: dict[End, tuple[End, str]] = {}
    for li, link in enumerate(inv.links):
        # cast: an Endpoint is validated as device:port (ENDPOINT_RE), so split(":", 1) gives two parts
        a, b = cast(End, tuple(link.a.split(":", 1))), cast(End, tuple(link.b.split(":", 1)))
        declared[frozenset((a, b))] = f"links[{li}]"
        by_end[a], by_end[b] = (b, f"links[{li}]"), (a, f"links[{li}]")
    for (host, netdev), (path, _, _) in nic_of.items():
        hi, ni = nic_of[(host, netdev)][1:]
        sp = inv.hosts[hi].nics[ni].switch_port
        if sp:
            s = cast(End, tuple(sp.split(":", 1)))  # a validated Endpoint, as above
            declared[frozenset(((host, netdev), s))] = f"{path}.switch_port"
            by_end[(host, netdev)], by_end[s] = (
                (s, f"{path}.switch_port"),
                ((host, netdev), f"{path}.switch_port"),
            )
    captured = set(view.devices)
    hosts = {h.name for h in inv.hosts}

    def is_host(dev: str) -> bool:
        return dev in hosts or view.kind(dev) == "host"

    findings: list[Finding] = []
    observed: dict[frozenset[End], ObservedCable] = {}
    for c in view.cables:
        if c.b_port is None:
            continue
        if is_host(c.a_device) and is_host(c.b_device):
            findings += _direct(loaded, c, nic_of)
            continue
        observed[frozenset(((c.a_device, c.a_port), (c.b_device, c.b_port)))] = c
    missing = {k: p for k, p in declared.items() if k not in observed and any(d in captured for d, _ in k)}
    extra = {k: c for k, c in observed.items() if k not in declared}
    extra_at: dict[End, frozenset[End]] = {e: k for k in extra for e in k}

    def side(key: frozenset[End]) -> End:
        """The end to name: a switch port if there is one (captured first), else the first."""
        ends = sorted(key, key=lambda e: (is_host(e[0]), e[0] not in captured, e))
        return ends[0]

    def at(path: str, end: End) -> Location:
        return loaded.locate(path, device=end[0], port=end[1])

    # 1. swaps
    for k1 in list(missing):
        if k1 not in missing:
            continue
        p, q = sorted(k1)
        for x, y in ((p, q), (q, p)):
            ek = extra_at.get(x)
            if ek is None or ek not in extra:
                continue
            y2 = next(e for e in ek if e != x)
            partner = by_end.get(y2)
            if partner is None:
                continue
            x2, path2 = partner
            k2 = frozenset((x2, y2))
            k3 = frozenset((x2, y))
            if k2 in missing and k3 in extra and k2 != k1:
                c1, c3 = extra.pop(ek), extra.pop(k3)
                path1 = missing.pop(k1)
                missing.pop(k2)
                findings.append(
                    _f(
                        "RT132",
                        f"{x[0]}:{x[1]} and {x2[0]}:{x2[1]} are swapped: LLDP sees {x[0]}:{x[1]} "
                        f"on {y2[0]}:{y2[1]} ({_ev(c1)}) and {x2[0]}:{x2[1]} on {y[0]}:{y[1]} ({_ev(c3)}); "
                        f"the inventory cables them to {y[0]}:{y[1]} and {y2[0]}:{y2[1]}",
                        f"swap the two cables at {y[0]}:{y[1]} / {y2[0]}:{y2[1]} (or correct the inventory)",
                        at(path1, side(k1)),
                    )
                )
                break
    # 2. rail mix-ups and 3. wrong peers: an extra cable sharing one end with a missing one
    for ek, c in list(extra.items()):
        host_end = next((e for e in ek if e in nic_of), None)
        sw_end = next((e for e in ek if e[0] in switches), None)
        if host_end and sw_end:
            path, hi, ni = nic_of[host_end]
            nic = inv.hosts[hi].nics[ni]
            served = switches[sw_end[0]].served_rails
            if nic.rail is not None and served is not None and nic.rail not in served:
                extra.pop(ek)
                decl = by_end.get(host_end)
                if decl is not None:
                    missing.pop(frozenset((host_end, decl[0])), None)
                rails = ", ".join(map(str, sorted(served)))
                findings.append(
                    _f(
                        "RT133",
                        f"{host_end[0]} {host_end[1]} (rail {nic.rail}) is seen on {sw_end[0]}:"
                        f"{sw_end[1]}, a leaf of rail {rails} ({_ev(c)})"
                        + (f"; the inventory cables it to {decl[0][0]}:{decl[0][1]}" if decl else ""),
                        f"move the cable to a rail-{nic.rail} leaf port"
                        + (f" ({decl[0][0]}:{decl[0][1]})" if decl else ""),
                        at(f"{path}.switch_port", sw_end),
                    )
                )
                continue
        for e in sorted(ek):
            decl = by_end.get(e)
            if decl is None:
                continue
            dk = frozenset((e, decl[0]))
            if dk in missing:
                path = missing.pop(dk)
                extra.pop(ek)
                far = next(x for x in ek if x != e)
                findings.append(
                    _f(
                        "RT134",
                        f"{e[0]}:{e[1]} is seen on {far[0]}:{far[1]} ({_ev(c)}), but the "
                        f"inventory cables it to {decl[0][0]}:{decl[0][1]}",
                        f"move the cable to {decl[0][0]}:{decl[0][1]}, or correct the inventory",
                        at(path, e),
                    )
                )
                break
    for k, path in missing.items():
        end = side(k)
        far = next(e for e in k if e != end)
        seen = sorted(d for d, _ in k if d in captured)
        findings.append(
            _f(
                "RT130",
                f"{end[0]}:{end[1]} - {far[0]}:{far[1]} is declared but LLDP on "
                f"{' and '.join(seen)} does not see it",
                "check the cable and that the ports are up "
                "(and LLDP enabled), or remove it from the inventory",
                at(path, end),
            )
        )
    for k, c in extra.items():
        a, b = (c.a_device, c.a_port), (c.b_device, c.b_port or "")
        unknown = [d for d, _ in k if d not in switches and d not in hosts]
        why = f" ({', '.join(unknown)} is not in the inventory)" if unknown else ""
        findings.append(
            _f(
                "RT131",
                f"LLDP sees {a[0]}:{a[1]} - {b[0]}:{b[1]}, which the inventory does not declare{why}",
                "declare the cable (links, or the NIC's switch_port), or unplug it",
                Location(file=c.file, line=c.line, device=a[0], port=a[1]),
            )
        )
    return sorted(findings, key=lambda f: (f.location.file or "", f.location.line or 0, f.rule, f.message))


def _direct(
    loaded: LoadedInventory, c: ObservedCable, nic_of: dict[End, tuple[str, int, int]]
) -> list[Finding]:
    inv = loaded.inventory
    a, b = (c.a_device, c.a_port), (c.b_device, c.b_port or "")
    if a not in nic_of or b not in nic_of:
        return []

    def rail(end: End) -> int:
        _, hi, ni = nic_of[end]
        r = inv.hosts[hi].nics[ni].rail
        return ni if r is None else r

    ra, rb = rail(a), rail(b)
    if ra == rb:
        return []
    path = nic_of[a][0]
    pair_b = next(
        (
            n.netdev
            for i, n in enumerate(inv.hosts[nic_of[b][1]].nics)
            if (n.rail if n.rail is not None else i) == ra
        ),
        "?",
    )
    return [
        _f(
            "RT135",
            f"{a[0]} {a[1]} (rail {ra}) is cabled directly to {b[0]} {b[1]} (rail {rb}) ({_ev(c)}); "
            f"NCCL pairs {a[0]} {a[1]} with {b[0]} {pair_b}",
            f"cable {a[0]} {a[1]} to {b[0]} {pair_b} (same rail on both hosts)",
            loaded.locate(path, device=a[0], port=a[1]),
        )
    ]


__all__ = ["LLDP_RULES", "LldpRule", "check_lldp"]


# --- documentation examples (docs/lint-rules.md, README) ---------------------------------------------
_NIC = ('{{model: connectx-7, netdev: {nd}, rdma_device: {rd}, speed: 400G, rail: {r}, switch_port: "{sp}", '
        "cable_length: 3m}}")
_NIC_LOOSE = (
    "{{model: connectx-7, netdev: {nd}, rdma_device: {rd}, speed: 400G, rail: {r}, cable_length: 3m}}"
)


def _example(cabling: Mapping[tuple[str, str], str | None]) -> str:
    """The two-rail example fabric with ``cabling``: (host, netdev) -> leaf:port (None: not cabled)."""
    out = ["site: {name: lab, rail_optimised: true}", "switches:"]
    for r in (0, 1):
        out.append(
            f"  - {{name: leaf-r{r}, platform: sonic, model: SN4700, role: leaf, rail: {r}, "
            "ports: [{name: 'Ethernet[0-8/4]', speed: 400G}]}"
        )
    out.append("hosts:")
    for h in ("gpu01", "gpu02"):
        out += [f"  - name: {h}", "    nics:"]
        for r, nd in enumerate(("ens1f0np0", "ens2f0np0")):
            sp = cabling.get((h, nd), "")
            tpl = _NIC if sp else _NIC_LOOSE
            out.append("      - " + tpl.format(nd=nd, rd=f"mlx5_{r}", r=r, sp=sp))
    return "\n".join(out) + "\n"


_BASE = {
    ("gpu01", "ens1f0np0"): "leaf-r0:Ethernet0",
    ("gpu01", "ens2f0np0"): "leaf-r1:Ethernet0",
    ("gpu02", "ens1f0np0"): "leaf-r0:Ethernet4",
    ("gpu02", "ens2f0np0"): "leaf-r1:Ethernet4",
}


def _with(**changes: str | None) -> dict[tuple[str, str], str | None]:
    out: dict[tuple[str, str], str | None] = dict(_BASE)
    for key, sp in changes.items():
        host, nd = key.split("__")
        out[(host, nd)] = sp
    return out


#: rule -> (declared inventory, the cabling LLDP sees, capture files to show)
EXAMPLES: dict[str, tuple[str, str, tuple[str, ...]]] = {
    "RT130": (_example(_BASE), _example(_with(gpu02__ens2f0np0=None)), ("leaf-r1",)),
    "RT131": (_example(_with(gpu02__ens2f0np0=None)), _example(_BASE), ("leaf-r1",)),
    "RT132": (
        _example(_BASE),
        _example(_with(gpu01__ens1f0np0="leaf-r0:Ethernet4", gpu02__ens1f0np0="leaf-r0:Ethernet0")),
        ("leaf-r0",),
    ),
    "RT133": (_example(_BASE), _example(_with(gpu01__ens2f0np0="leaf-r0:Ethernet8")), ("leaf-r0",)),
    "RT134": (_example(_BASE), _example(_with(gpu02__ens1f0np0="leaf-r0:Ethernet8")), ("leaf-r0",)),
}
_DIRECT = _example({k: None for k in _BASE}).replace(
    "site: {name: lab, rail_optimised: true}", "site: {name: lab}"
)


def _direct_captures(cross: bool) -> dict[str, str]:
    from roce_tune.platforms import HOST_PLATFORM, get_platform
    from roce_tune.platforms.lldp import RemoteEnd

    host = get_platform(HOST_PLATFORM)

    other = "ens2f0np0" if cross else "ens1f0np0"
    back = "ens1f0np0"
    return {
        "gpu01": "root@gpu01:~# lldpctl -f json\n"
        + host.render_lldp("gpu01", [RemoteEnd("ens1f0np0", "gpu02", other, True)]),
        "gpu02": "root@gpu02:~# lldpctl -f json\n"
        + host.render_lldp("gpu02", [RemoteEnd(other, "gpu01", back, True)]),
    }


def example_captures(rule_id: str, fixed: bool = False) -> tuple[str, dict[str, str]]:
    """(declared inventory text, {device: capture}) of a rule's bad (or fixed) example."""
    from roce_tune.inventory.lldp import render_lldp_view
    from roce_tune.inventory.loader import load_inventory_text

    if rule_id == "RT135":
        return _DIRECT, _direct_captures(cross=not fixed)
    declared, seen, _ = EXAMPLES[rule_id]
    inv_text = seen if fixed else declared
    return inv_text, render_lldp_view(load_inventory_text(seen).inventory)


def example_report(rule_id: str, fixed: bool = False) -> list[str]:
    """The findings of ``rule_id`` on its example, with capture paths as ``lldp/<device>.txt``."""
    import tempfile
    from pathlib import Path

    from roce_tune.inventory.lldp import read_lldp_dir
    from roce_tune.inventory.loader import load_inventory_text

    inv_text, caps = example_captures(rule_id, fixed)
    with tempfile.TemporaryDirectory() as tmp:
        for dev, text in caps.items():
            (Path(tmp) / f"{dev}.txt").write_text(text, encoding="utf-8")
        found = check_lldp(load_inventory_text(inv_text, "bad.yaml"), read_lldp_dir(tmp))
        return [str(f).replace(tmp, "lldp") for f in found if f.rule == rule_id]


def rules_markdown_section() -> list[str]:
    """Lines of the LLDP cabling rules section of docs/lint-rules.md."""
    out = [
        "## LLDP cabling rules",
        "",
        "`roce-tune lint --lldp DIR INVENTORY` also compares the declared cabling with what LLDP reports in the",
        "captures in DIR (docs/import.md): one finding per physical mistake, at the inventory line of a declared",
        "cable or at the capture line of an undeclared one, naming the device and port.",
        "",
    ]
    for r in LLDP_RULES.values():
        inv_text, caps = example_captures(r.id)
        shown = EXAMPLES[r.id][2] if r.id in EXAMPLES else ("gpu01",)
        out += [
            f"### {r.id}",
            "",
            f"**{r.name}** ({r.severity.value}): {r.title}",
            "",
            r.description,
            "",
            "Bad:",
            "",
            "```yaml",
            inv_text.rstrip("\n"),
            "```",
            "",
        ]
        for dev in shown:
            out += [f"LLDP capture `{dev}.txt`:", "", "```text", caps[dev].rstrip("\n"), "```", ""]
        out += ["Reports:", "", "```text", *example_report(r.id), "```", "", "Fixed:", ""]
        if r.id == "RT135":
            fixed_caps = example_captures(r.id, fixed=True)[1]
            out += [
                "(recabled p0 to p0) `gpu01.txt`:",
                "",
                "```text",
                fixed_caps["gpu01"].rstrip("\n"),
                "```",
                "",
            ]
        else:
            out += ["```yaml", EXAMPLES[r.id][1].rstrip("\n"), "```", ""]
    return out
