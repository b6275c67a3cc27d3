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
from dataclasses import dataclass, field
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
            "The inventory cables two ports (a link, or a NIC's `switch_port`) and at least one of the two "
            "devices was captured, but LLDP on it shows no such neighbour: the cable is missing, unplugged, "
            "or the port is down. The plan's headroom, PFC and ECN for that port protect nothing.",
        ),
        LldpRule(
            "RT131",
            "lldp-extra-link",
            Severity.error,
            "LLDP sees a cable the inventory does not declare",
            "A captured device reports a neighbour on a port the inventory leaves uncabled (or cables to "
            "nobody in its files): traffic crosses a port roce-tune does not make lossless, so PFC/ECN stop "
            "there.",
        ),
        LldpRule(
            "RT132",
            "lldp-swapped-ports",
            Severity.error,
            "Two cables have their ends exchanged",
            "Two declared cables `p-q` and `p2-q2` are seen as `p-q2` and `p2-q`: the classic patch-panel "
            "swap. Per-port settings (cable length, speed, rail) land on the wrong cable and, for host NICs, "
            "traffic of one NIC arrives where the plan expects the other.",
        ),
        LldpRule(
            "RT133",
            "lldp-rail-mixup",
            Severity.error,
            "A host NIC is on a leaf of another rail",
            "In a rail-optimised fabric NIC k of every host must reach the rail-k leaf; LLDP shows this NIC "
            "on a leaf that serves other rails, so its rail's traffic crosses the spines and NCCL's rail "
            "assumptions (PXN) break.",
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
            "Without a switch, NCCL sends from NIC i of one host to NIC i of the other (rail order: `rail`, "
            "else the NIC's position in `nics`); a cable from p0 to p1 leaves both pairs without a path.",
        ),
    )
}


def _f(rule: str, message: str, fix: str, loc: Location) -> Finding:
    r = LLDP_RULES[rule]
    return Finding(rule=rule, severity=r.severity, message=message, fix=fix, location=loc)


def _ev(c: ObservedCable) -> str:
    return f"{c.file}:{c.line}"


def _end(text: str) -> End:
    """``device:port`` as an end (a text without a colon stays a one-element tuple, as declared)."""
    return cast(End, tuple(text.split(":", 1)))


@dataclass
class _Declared:
    """The inventory's cabling: every declared cable and, per end, its far end and inventory path."""

    nic_of: dict[End, tuple[str, int, int]] = field(default_factory=dict)  # -> (path, host, nic index)
    cables: dict[frozenset[End], str] = field(default_factory=dict)  # cable -> inventory path
    by_end: dict[End, tuple[End, str]] = field(default_factory=dict)  # end -> (far end, path)

    def add(self, a: End, b: End, path: str) -> None:
        self.cables[frozenset((a, b))] = path
        self.by_end[a], self.by_end[b] = (b, path), (a, path)

    @classmethod
    def of(cls, loaded: LoadedInventory) -> _Declared:
        inv = loaded.inventory
        out = cls()
        for hi, h in enumerate(inv.hosts):
            for ni, n in enumerate(h.nics):
                out.nic_of[(h.name, n.netdev)] = (f"hosts[{hi}].nics[{ni}]", hi, ni)
        for li, link in enumerate(inv.links):
            out.add(_end(link.a), _end(link.b), f"links[{li}]")
        for (host, netdev), (path, hi, ni) in out.nic_of.items():
            sp = inv.hosts[hi].nics[ni].switch_port
            if sp:
                out.add((host, netdev), _end(sp), f"{path}.switch_port")
        return out


class _Diff:
    """Pairs the declared cables missing from LLDP with the extra ones it sees (module docstring)."""

    def __init__(self, loaded: LoadedInventory, view: LldpView) -> None:
        self.loaded = loaded
        self.inv = loaded.inventory
        self.switches = {s.name: s for s in self.inv.switches}
        self.hosts = {h.name for h in self.inv.hosts}
        self.view = view
        self.captured = set(view.devices)
        self.decl = _Declared.of(loaded)
        self.findings: list[Finding] = []
        observed = self._observe()
        self.missing = {
            k: p
            for k, p in self.decl.cables.items()
            if k not in observed and any(d in self.captured for d, _ in k)
        }
        self.extra = {k: c for k, c in observed.items() if k not in self.decl.cables}
        self.extra_at: dict[End, frozenset[End]] = {e: k for k in self.extra for e in k}

    def _observe(self) -> dict[frozenset[End], ObservedCable]:
        """The switched cables LLDP sees; direct host-to-host cables are checked here (RT135)."""
        observed: dict[frozenset[End], ObservedCable] = {}
        for c in self.view.cables:
            if c.b_port is None or self._outside(c):
                continue
            if self.is_host(c.a_device) and self.is_host(c.b_device):
                self.findings += _direct(self.loaded, c, self.decl.nic_of)
                continue
            observed[frozenset(((c.a_device, c.a_port), (c.b_device, c.b_port)))] = c
        return observed

    def _outside(self, c: ObservedCable) -> bool:
        """A host port that is no declared NIC, seen on a device the inventory does not have (the host's
        management or front-end NIC on its own switch): not fabric cabling."""
        known = self.switches.keys() | self.hosts
        for (dev, port), (far, _) in (((c.a_device, c.a_port), (c.b_device, c.b_port)),
                                      ((c.b_device, c.b_port), (c.a_device, c.a_port))):
            if dev in self.hosts and (dev, port) not in self.decl.nic_of and far not in known:
                return True
        return False

    def is_host(self, dev: str) -> bool:
        return dev in self.hosts or self.view.kind(dev) == "host"

    def side(self, key: frozenset[End]) -> End:
        """The end to name: a switch port if there is one (captured first), else the first."""
        ends = sorted(key, key=lambda e: (self.is_host(e[0]), e[0] not in self.captured, e))
        return ends[0]

    def at(self, path: str, end: End) -> Location:
        return self.loaded.locate(path, device=end[0], port=end[1])

    # 1. swaps
    def swaps(self) -> None:
        for k1 in list(self.missing):
            if k1 not in self.missing:
                continue
            p, q = sorted(k1)
            for x, y in ((p, q), (q, p)):
                if self._swap(k1, x, y):
                    break

    def _swap(self, k1: frozenset[End], x: End, y: End) -> bool:
        """Reports ``x``-``y`` (missing) swapped with another missing cable, if LLDP shows the swap."""
        ek = self.extra_at.get(x)
        if ek is None or ek not in self.extra:
            return False
        y2 = next(e for e in ek if e != x)
        partner = self.decl.by_end.get(y2)
        if partner is None:
            return False
        x2 = partner[0]
        k2 = frozenset((x2, y2))
        k3 = frozenset((x2, y))
        if not (k2 in self.missing and k3 in self.extra and k2 != k1):
            return False
        c1, c3 = self.extra.pop(ek), self.extra.pop(k3)
        path1 = self.missing.pop(k1)
        self.missing.pop(k2)
        self.findings.append(
            _f(
                "RT132",
                f"{x[0]}:{x[1]} and {x2[0]}:{x2[1]} are swapped: LLDP sees {x[0]}:{x[1]} "
                f"on {y2[0]}:{y2[1]} ({_ev(c1)}) and {x2[0]}:{x2[1]} on {y[0]}:{y[1]} ({_ev(c3)}); "
                f"the inventory cables them to {y[0]}:{y[1]} and {y2[0]}:{y2[1]}",
                f"swap the two cables at {y[0]}:{y[1]} / {y2[0]}:{y2[1]} (or correct the inventory)",
                self.at(path1, self.side(k1)),
            )
        )
        return True

    # 2. rail mix-ups and 3. wrong peers: an extra cable sharing one end with a missing one
    def misplaced(self) -> None:
        for ek, c in list(self.extra.items()):
            if not self._rail_mixup(ek, c):
                self._wrong_peer(ek, c)

    def _rail_mixup(self, ek: frozenset[End], c: ObservedCable) -> bool:
        host_end = next((e for e in ek if e in self.decl.nic_of), None)
        sw_end = next((e for e in ek if e[0] in self.switches), None)
        if not (host_end and sw_end):
            return False
        path, hi, ni = self.decl.nic_of[host_end]
        nic = self.inv.hosts[hi].nics[ni]
        served = self.switches[sw_end[0]].served_rails
        if nic.rail is None or served is None or nic.rail in served:
            return False
        self.extra.pop(ek)
        decl = self.decl.by_end.get(host_end)
        if decl is not None:
            self.missing.pop(frozenset((host_end, decl[0])), None)
        rails = ", ".join(map(str, sorted(served)))
        self.findings.append(
            _f(
                "RT133",
                f"{host_end[0]} {host_end[1]} (rail {nic.rail}) is seen on {sw_end[0]}:"
                f"{sw_end[1]}, a leaf of rail {rails} ({_ev(c)})"
                + (f"; the inventory cables it to {decl[0][0]}:{decl[0][1]}" if decl else ""),
                f"move the cable to a rail-{nic.rail} leaf port"
                + (f" ({decl[0][0]}:{decl[0][1]})" if decl else ""),
                self.at(f"{path}.switch_port", sw_end),
            )
        )
        return True

    def _wrong_peer(self, ek: frozenset[End], c: ObservedCable) -> None:
        for e in sorted(ek):
            decl = self.decl.by_end.get(e)
            if decl is None:
                continue
            dk = frozenset((e, decl[0]))
            if dk not in self.missing:
                continue
            path = self.missing.pop(dk)
            self.extra.pop(ek)
            far = next(x for x in ek if x != e)
            self.findings.append(
                _f(
                    "RT134",
                    f"{e[0]}:{e[1]} is seen on {far[0]}:{far[1]} ({_ev(c)}), but the "
                    f"inventory cables it to {decl[0][0]}:{decl[0][1]}",
                    f"move the cable to {decl[0][0]}:{decl[0][1]}, or correct the inventory",
                    self.at(path, e),
                )
            )
            return

    # 4. what is left
    def leftovers(self) -> None:
        for k, path in self.missing.items():
            end = self.side(k)
            far = next(e for e in k if e != end)
            seen = sorted(d for d, _ in k if d in self.captured)
            self.findings.append(
                _f(
                    "RT130",
                    f"{end[0]}:{end[1]} - {far[0]}:{far[1]} is declared but LLDP on "
                    f"{' and '.join(seen)} does not see it",
                    "check the cable and that the ports are up "
                    "(and LLDP enabled), or remove it from the inventory",
                    self.at(path, end),
                )
            )
        for k, c in self.extra.items():
            a, b = (c.a_device, c.a_port), (c.b_device, c.b_port or "")
            unknown = [d for d, _ in k if d not in self.switches and d not in self.hosts]
            why = f" ({', '.join(unknown)} is not in the inventory)" if unknown else ""
            self.findings.append(
                _f(
                    "RT131",
                    f"LLDP sees {a[0]}:{a[1]} - {b[0]}:{b[1]}, which the inventory does not declare{why}",
                    "declare the cable (links, or the NIC's switch_port), or unplug it",
                    Location(file=c.file, line=c.line, device=a[0], port=a[1]),
                )
            )


def check_lldp(loaded: LoadedInventory, view: LldpView) -> list[Finding]:
    """Every difference between ``loaded``'s cabling and ``view`` (module docstring), sorted by position.
    Device names match without case (the view is spelt as the inventory)."""
    inv = loaded.inventory
    view = view.spelt_as([*(s.name for s in inv.switches), *(h.name for h in inv.hosts)])
    diff = _Diff(loaded, view)
    diff.swaps()
    diff.misplaced()
    diff.leftovers()
    return sorted(
        diff.findings, key=lambda f: (f.location.file or "", f.location.line or 0, f.rule, f.message)
    )


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


_BASE: dict[tuple[str, str], str | None] = {
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
        ("`roce-tune lint --lldp DIR INVENTORY` also compares the declared cabling "
         "with what LLDP reports in the"),
        ("captures in DIR (docs/import.md): one finding per physical mistake, "
         "at the inventory line of a declared"),
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
        rest = sorted(d for d in caps if d not in shown)
        out += [f"Reports (`lldp/` also holds {', '.join(f'`{d}.txt`' for d in rest)}: the other devices' "
                "captures of the same cabling):" if rest else "Reports:",
                "", "```text", *example_report(r.id), "```", "", "Fixed:", ""]
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
