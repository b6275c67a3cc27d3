"""Benchmark: load (+ lint) a synthetic 4,096-host rail-optimised inventory.

    python benchmarks/bench_load.py                 # 4,096 hosts x 8 NICs, block-style NICs
    python benchmarks/bench_load.py --style flow    # one flow mapping per NIC
    python benchmarks/bench_load.py --ruamel        # also time the ruamel.yaml-only path (slow)

Fabric: 8 rails; per rail, one SN5600 leaf per 64 hosts (64 x 400G down, 64 x 400G up), so 512
leaves; 256 SN5600 spines with 128 x 400G ports take the 32,768 uplinks. Every NIC and link has a
cable length, so lint reports no errors or warnings (only per-switch notes).

Prints: YAML lines and MB, seconds for read+parse+validate (best of --repeat), seconds for lint,
the parse/validate split, and peak RSS (MB) of the process.
"""

from __future__ import annotations

import argparse
import gc
import resource
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from roce_tune.findings import Severity
from roce_tune.inventory import loader
from roce_tune.inventory.catalog import load_catalog
from roce_tune.inventory.lint import RULES, lint
from roce_tune.inventory.models import Inventory
from roce_tune.inventory.yamlpos import compose_ruamel


def generate(hosts: int = 4096, nics: int = 8, hosts_per_leaf: int = 64, style: str = "block") -> str:
    """Inventory YAML for ``hosts`` x ``nics`` on a rail-optimised two-tier Clos of SN5600s."""
    leaf_ports = 2 * hosts_per_leaf
    out = ["# yaml-language-server: $schema=../schema/inventory.schema.json",
           "site: {name: bench, rail_optimised: true, nccl_version: \"2.21.5\"}",
           "policy: {lossless_priorities: [3], roce_dscp: [26], cnp_dscp: 48, cnp_priority: 6}",
           "defaults: {cable_length: 5m, media: dac}", "switches:"]
    leaves = []
    for rail in range(nics):
        for group in range(-(-hosts // hosts_per_leaf)):
            name = f"leaf-r{rail}-g{group}"
            leaves.append(name)
            out += [f"  - name: {name}", "    platform: sonic", "    model: SN5600", "    role: leaf",
                    f"    rail: {rail}", f"    mgmt: {{host: 10.{rail}.{group // 250}.{group % 250 + 1}}}",
                    "    ports:", f"      - {{name: 'Ethernet[0-{(leaf_ports - 1) * 4}/4]', speed: 400G}}"]
    uplinks = len(leaves) * hosts_per_leaf
    spine_ports = 128
    spines = -(-uplinks // spine_ports)
    for s in range(spines):
        out += [f"  - name: spine{s}", "    platform: sonic", "    model: SN5600", "    role: spine",
                "    ports:", f"      - {{name: 'Ethernet[0-{(spine_ports - 1) * 4}/4]', speed: 400G}}"]
    out.append("links:")
    k = 0
    for leaf in leaves:
        for u in range(hosts_per_leaf):
            out.append(f"  - {{a: '{leaf}:Ethernet{(hosts_per_leaf + u) * 4}', "
                       f"b: 'spine{k % spines}:Ethernet{(k // spines) * 4}', cable_length: 40m, media: "
                       "optic}")
            k += 1
    out.append("hosts:")
    for h in range(hosts):
        group, port = divmod(h, hosts_per_leaf)
        out += [f"  - name: gpu{h:05d}", f"    mgmt: {{host: 10.100.{h // 250}.{h % 250 + 1}}}", "    nics:"]
        for r in range(nics):
            fields = [("model", "connectx-7"), ("netdev", f"ens{r + 1}f0np0"), ("rdma_device", f"mlx5_{r}"),
                      ("speed", "400G"), ("rail", str(r)), ("switch_port",
                                                            f"leaf-r{r}-g{group}:Ethernet{port * 4}"),
                      ("cable_length", "3m")]
            if style == "flow":
                out.append("      - {" + ", ".join(f"{k_}: {v}" for k_, v in fields) + "}")
            else:
                out.append(f"      - {fields[0][0]}: {fields[0][1]}")
                out += [f"        {k_}: {v}" for k_, v in fields[1:]]
    return "\n".join(out) + "\n"


def _best(fn, repeat: int, no_gc: bool = False) -> tuple[float, object]:
    """Best wall time of ``repeat`` runs (the loader itself runs with the cyclic GC paused; the
    parse/validate split is timed the same way so the parts add up)."""
    best, result = float("inf"), None
    for _ in range(repeat):
        if no_gc:
            gc.disable()
        t0 = time.perf_counter()
        result = fn()
        best = min(best, time.perf_counter() - t0)
        gc.enable()
    return best, result


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--hosts", type=int, default=4096)
    ap.add_argument("--nics", type=int, default=8)
    ap.add_argument("--style", choices=("block", "flow"), default="block")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--ruamel", action="store_true", help="also time the ruamel.yaml-only path once")
    args = ap.parse_args()

    text = generate(args.hosts, args.nics, style=args.style)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "bench.yaml"
        path.write_text(text, encoding="utf-8")
        catalog = load_catalog()
        load_s, loaded = _best(lambda: loader.load_inventory(path), args.repeat)
        parse_s, parsed = _best(lambda: loader.parse_yaml(text), args.repeat, no_gc=True)
        validate_s, _ = _best(lambda: Inventory.model_validate(parsed.data),
                              args.repeat,  # type: ignore[union-attr]
                              no_gc=True)
        lint_s, findings = _best(lambda: lint(loaded, catalog), args.repeat)  # type: ignore[arg-type]
        ruamel_s = None
        if args.ruamel:
            t0 = time.perf_counter()
            compose_ruamel(text)
            ruamel_s = time.perf_counter() - t0
    inv = loaded.inventory  # type: ignore[union-attr]
    counts = {s.value: sum(1 for f in findings if f.severity is s)
              for s in Severity}  # type: ignore[union-attr]
    rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"inventory: {len(inv.hosts)} hosts, {sum(len(h.nics) for h in inv.hosts)} NICs, "
          f"{len(inv.switches)} switches, {len(inv.links)} links; {text.count(chr(10))} lines, "
          f"{len(text) / 1e6:.1f} MB ({args.style}-style NICs)")
    print(f"load_inventory (read + parse + validate), best of {args.repeat}: {load_s:.3f} s")
    print(f"  of which parse (fast reader): {parse_s:.3f} s, pydantic validation: {validate_s:.3f} s")
    print(f"lint ({len(RULES)} rules, catalog): {lint_s:.3f} s; findings: {counts}")
    if ruamel_s is not None:
        print(f"ruamel.yaml-only parse (fallback path): {ruamel_s:.3f} s")
    print(f"peak RSS: {rss_mb:.0f} MB")


if __name__ == "__main__":
    main()
