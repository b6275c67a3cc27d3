"""Semantic lint of a loaded inventory: every rule in :data:`RULES`, findings in file order.

    >>> from roce_tune.inventory.loader import load_inventory
    >>> findings = lint(load_inventory("inventories/site.yaml"))   # doctest: +SKIP

Each finding carries its rule ID, severity, a message, a concrete fix and ``file:line:col`` of the
offending node (plus device/port where it concerns one). ``docs/lint-rules.md`` is generated from
the registry by :func:`rules_markdown` (``python -m roce_tune.inventory.lint > docs/lint-rules.md``).
"""

from __future__ import annotations

from collections.abc import Collection

from roce_tune.findings import Finding, Location, RoceTuneError, Severity
from roce_tune.gcpause import gc_paused
from roce_tune.inventory.catalog import Catalog, load_catalog
from roce_tune.inventory.loader import LoadedInventory, load_inventory_text
from roce_tune.inventory.rules import RULES, LintContext, Rule
from roce_tune.inventory.rules.base import SEVERITY_RANK
from roce_tune.inventory.topology import Topology, build_topology

#: Loader rules (raised by :func:`~roce_tune.inventory.loader.load_inventory`):
#: id -> (title, what, bad, fixed).
LOADER_RULE_DOCS: dict[str, tuple[str, str, str, str]] = {
    "RT001": ("Malformed YAML",
              ("The file is not valid YAML (unclosed bracket or quote, bad indentation, a tab in the "
              "indentation), is not UTF-8, contains control characters, or uses aliases that expand without "
              "bound. The position is where the parser stopped."),
              "site:\n  name: lab\nswitches: [\n", "site:\n  name: lab\nswitches: []\n"),
    "RT002": ("Duplicate key",
              ("A key appears twice in one mapping. YAML loaders silently keep one of the two values; every "
              "duplicate is reported with the line of the first."),
              "site:\n  name: lab\n  name: lab2\n", "site:\n  name: lab\n"),
    "RT003": ("Schema error",
              ("A value has the wrong type or unit (`speed: fast`), a field is unknown (with the closest "
              "valid name), required, or out of range, or a name that later reaches a shell script or a "
              "device CLI does not match the strict pattern of its kind (`netdev: \"eth0; reboot\"`). "
              "Unknown fields point at the key, bad values at the value."),
              "site:\n  nmae: lab\n", "site:\n  name: lab\n"),
    "RT004": ("Empty file or top level not a mapping",
              "An inventory is a mapping with the keys site, policy, defaults, switches, links and hosts.",
              "- site: lab\n", "site: {name: lab}\n"),
    "RT005": ("File not found or unreadable",
              "The inventory path does not exist, is a directory, or cannot be read.", "", ""),
    "RT006": ("YAML tag not allowed",
              ("Only plain YAML and the core-schema tags (`!!str`, `!!int`, ...) are accepted; tags that "
              "construct objects (`!!python/object`) or custom tags are rejected."),
              "site: {name: !!python/object:os.system lab}\n", "site: {name: lab}\n"),
    "RT007": ("Fabric intent cannot be expanded",
              ("The `fabric:` intent (docs/intent.md) asks for something that cannot be built: more hosts "
               "per group than a leaf has host ports, leaf uplinks that do not divide over the spines, "
               "spines or superspines with too few ports, several pods without a superspine tier, a name "
               "pattern with an unknown variable, or names that repeat. The finding points at the "
               "intent field."),
              "site: {name: lab}\nfabric:\n  hosts: 4\n  rails: 1\n  hosts_per_group: 4\n"
              "  host: {name: \"gpu{n}\", nic: {model: connectx-7, speed: 400G, netdev: ens1f0np0, "
              "rdma_device: mlx5_0}}\n  leaf: {name: leaf1, platform: sonic, model: SN4700,\n"
              "         host_ports: {count: 2, name: \"Ethernet{8*p}\", speed: 400G}}\n",
              "site: {name: lab}\nfabric:\n  hosts: 4\n  rails: 1\n  hosts_per_group: 4\n"
              "  host: {name: \"gpu{n}\", nic: {model: connectx-7, speed: 400G, netdev: ens1f0np0, "
              "rdma_device: mlx5_0}}\n  leaf: {name: leaf1, platform: sonic, model: SN4700,\n"
              "         host_ports: {count: 4, name: \"Ethernet{8*p}\", speed: 400G}}\n"),
}


def _sort_key(f: Finding) -> tuple[str, int, int, str, str]:
    loc = f.location
    return (loc.file or "", loc.line or 0, loc.col or 0, f.rule, f.message)


def lint(loaded: LoadedInventory, catalog: Catalog | None = None,
         select: Collection[str] | None = None, topology: Topology | None = None,
         min_severity: Severity | None = None) -> list[Finding]:
    """Run the lint rules over ``loaded``.

    Args:
        loaded: a validated inventory from :func:`~roce_tune.inventory.loader.load_inventory`.
        catalog: hardware catalog; ``None`` loads the shipped one. If that fails, an RT100 error is
            reported and the catalog rules (RT111, RT112) are skipped.
        select: rule IDs to run (default: all).
        topology: ``build_topology(loaded.inventory)`` when the caller has it already (lint then derive
            share one); None builds it.
        min_severity: skip the rules that cannot report a finding this severe (their declared
            :attr:`~roce_tune.inventory.rules.base.Rule.ceiling`, enforced when they report), e.g.
            ``Severity.error`` for a caller that only needs to know whether lint fails (``explain``).

    Returns:
        Findings sorted by file, line, column, rule ID and message (deterministic).
    """
    findings: list[Finding] = []
    if catalog is None:
        try:
            catalog = load_catalog()
        except Exception as exc:  # noqa: BLE001 - a broken catalog is reported, not raised
            findings.append(Finding(rule="RT100", severity=Severity.error,
                                    message="the hardware catalog could not be loaded "
                                            f"({type(exc).__name__}: {exc}); "
                                            "catalog rules RT111/RT112 were skipped",
                                    fix="reinstall roce-tune or fix roce_tune/catalog/*.yaml",
                                    location=Location(file=loaded.path)))
    floor = -1 if min_severity is None else SEVERITY_RANK[min_severity]
    with gc_paused():  # the topology is ~10^5 small objects; the cyclic GC would only slow it down
        ctx = LintContext(loaded, topology or build_topology(loaded.inventory), catalog)
        for r in RULES.values():
            if (select is not None and r.id not in select) or (r.needs_catalog and catalog is None):
                continue
            if SEVERITY_RANK[r.ceiling] < floor:
                continue
            ctx.rule_id = r.id
            findings.extend(r.check(ctx))
    return sorted(findings, key=_sort_key)


def lint_text(text: str, filename: str = "<string>", catalog: Catalog | None = None) -> list[Finding]:
    """Load and lint YAML text; loader errors come back as findings instead of an exception."""
    try:
        loaded = load_inventory_text(text, filename)
    except RoceTuneError as exc:
        return exc.findings
    return lint(loaded, catalog)


def _example_report(r: Rule, catalog: Catalog | None) -> list[str]:
    got = [f for f in lint_text(r.bad, "bad.yaml", catalog) if f.rule == r.id]
    return [str(got[0])] if got else []


def _yaml_block(text: str) -> list[str]:
    return ["```yaml", text.rstrip("\n"), "```"]


def rules_markdown(catalog: Catalog | None = None) -> str:
    """The text of ``docs/lint-rules.md``: every loader and lint rule with a bad and a fixed example."""
    out = [
        "# roce-tune inventory rules",
        "",
        "<!-- Generated from the rule registry by roce_tune.inventory.lint.rules_markdown(); do not edit.",
        "     Regenerate: python -m roce_tune.inventory.lint > docs/lint-rules.md -->",
        "",
        "`roce-tune lint INVENTORY...` loads each inventory (rules RT001-RT007, all errors: the file cannot",
        "be used until they are fixed) and then runs the lint rules (RT1xx). Every finding names",
        "`file:line:col`, the field path and, where it concerns one, the device and port, with a fix.",
        "Exit status: 0 clean, 1 errors (warnings too with `--strict`), 2 usage error.",
        "",
        "| ID | name | severity | checks |",
        "|---|---|---|---|",
    ]
    for rid, (title, _, _, _) in LOADER_RULE_DOCS.items():
        out.append(f"| [{rid}](#{rid.lower()}) | loader | error | {title} |")
    out.append("| RT100 | catalog | error | "
               "The hardware catalog could not be loaded (catalog rules skipped) |")
    for r in RULES.values():
        out.append(f"| [{r.id}](#{r.id.lower()}) | {r.name} | {r.severity.value} | {r.title} |")
    from roce_tune.inventory.lldp_lint import LLDP_RULES

    for lr in LLDP_RULES.values():
        out.append(f"| [{lr.id}](#{lr.id.lower()}) | {lr.name} | {lr.severity.value} | "
                   f"{lr.title} (`--lldp`) |")
    out += ["", "## Loader rules", ""]
    for rid, (title, what, bad, fixed) in LOADER_RULE_DOCS.items():
        out += [f"### {rid}", "", f"**{title}** (error)", "", what, ""]
        if bad:
            out += ["Bad:", ""] + _yaml_block(bad) + ["", "Reports:", ""]
            out += ["```text"] + _example_report(Rule(rid, "", Severity.error, title, what, bad, fixed,
                                                      lambda c: []), catalog) + ["```", ""]
            out += ["Fixed:", ""] + _yaml_block(fixed) + [""]
    out += ["## Lint rules", ""]
    for r in RULES.values():
        out += [f"### {r.id}", "", f"**{r.name}** ({r.severity.value}): {r.title}", "", r.description, "",
                "Bad:", ""] + _yaml_block(r.bad) + ["", "Reports:", "", "```text"]
        out += _example_report(r, catalog) + ["```", "", "Fixed:", ""] + _yaml_block(r.fixed) + [""]
    from roce_tune.inventory.lldp_lint import rules_markdown_section

    out += rules_markdown_section()
    return "\n".join(out).rstrip("\n") + "\n"


if __name__ == "__main__":  # pragma: no cover
    print(rules_markdown(), end="")
