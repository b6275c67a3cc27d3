"""Expand a compact ``fabric:`` intent into the switches, links and hosts a hand-written inventory has.

The loader calls :func:`expand_document` before validation, so lint, plan, apply, verify and audit see
exactly the model a full-form file gives. Every expanded value remembers the intent line it came from,
so an error in an expanded element points at ``file:line:col`` of the intent, not at an element nobody
wrote. ``roce-tune expand`` prints the full form (:func:`full_form_yaml`).

Shape (see ``docs/intent.md`` for every field and the variables each name pattern may use)::

    fabric:
      hosts: 500                 # any count; the last group may be partial
      rails: 8                   # NICs per host, NIC r on the leaf of rail r
      hosts_per_group: 32        # hosts that share one set of rail leaves (a scalable unit)
      host: {name: "gpu{n:03d}", mgmt: 10.30.0.1, nic: {model: connectx-7, speed: 400G,
             netdev: "ens{r+1}f0np0", rdma_device: "mlx5_{r}"}}
      leaf: {name: "su{g+1}-leaf{l+1}", platform: sonic, model: SN5600,
             host_ports: {name: "Ethernet{4*p}", speed: 400G, breakout: 2x400G},
             uplinks: {count: 32, name: "Ethernet{128+4*u}", speed: 400G, cable_length: 30m}}
      spine: {name: "spine{s+1}", platform: sonic, model: SN5600, ports: {name: "Ethernet{4*q}", speed: 400G}}

Wiring (the usual rail-optimised Clos; the same rule as NVIDIA's Spectrum-X and DGX SuperPOD reference
layouts): leaf ``L`` of a pod sends uplink ``u`` to spine ``u % spines`` on that spine's port
``L * (uplinks / spines) + u // spines``; spine ``s`` of pod ``P`` sends uplink ``u`` to superspine
``u % per_plane`` of plane ``s`` on port ``P * (uplinks / per_plane) + u // per_plane``. Host ``i`` of a
group puts NIC ``r`` on leaf ``r // rails_per_leaf``, port ``(r % rails_per_leaf) * hosts_per_group + i``.
"""

from __future__ import annotations

import ast
import functools
import ipaddress
import math
import operator
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, cast

from pydantic import BaseModel, ConfigDict

from roce_tune.findings import Finding, Location, Severity
from roce_tune.inventory.models import FabricIntent, IntentPorts, IntentSpine, IntentSuperspine
from roce_tune.inventory.yamlpos import LazyPos, resolve_pos

#: Rule ID of an intent that cannot be expanded (a loader rule, like RT001-RT006).
INTENT_RULE = "RT007"

_FIELD_RE = re.compile(r"\{([^{}:]+)(?::([^{}]*))?\}")
_OPS: dict[type, Callable[[int, int], int]] = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
    ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod,
}

#: The index variables each name pattern may use.
VARIABLES: dict[str, tuple[str, ...]] = {
    "host.name": ("h", "n", "g", "i", "pod"),
    "host.nic.netdev": ("h", "n", "g", "i", "pod", "r"),
    "host.nic.rdma_device": ("h", "n", "g", "i", "pod", "r"),
    "leaf.name": ("g", "l", "L", "pod", "rail"),
    "leaf.host_ports.name": ("p",),
    "leaf.uplinks.name": ("u",),
    "spine.name": ("s", "S", "pod"),
    "spine.ports.name": ("q",),
    "spine.uplinks.name": ("u",),
    "superspine.name": ("plane", "j", "X"),
    "superspine.ports.name": ("q",),
}


class _FabricDoc(BaseModel):
    """The intent section alone, validated with error locations that start at ``fabric``."""

    model_config = ConfigDict(extra="ignore")
    fabric: FabricIntent


class IntentError(Exception):
    """An intent that cannot be expanded; ``path`` is the intent field (``fabric.leaf.name``) to point at."""

    def __init__(self, path: str, message: str, fix: str):
        super().__init__(message)
        self.path, self.message, self.fix = path, message, fix


def _eval(node: ast.AST, env: dict[str, int], path: str) -> int:
    if isinstance(node, ast.Expression):
        return _eval(node.body, env, path)
    if isinstance(node, ast.Constant) and isinstance(node.value, int) and not isinstance(node.value, bool):
        return node.value
    if isinstance(node, ast.Name):
        if node.id not in env:
            raise IntentError(path, f"unknown variable {node.id!r} in the name pattern",
                              f"use {', '.join(sorted(env))} (docs/intent.md lists what each means)")
        return env[node.id]
    if isinstance(node, ast.BinOp) and type(node.op) in _OPS:
        left, right = _eval(node.left, env, path), _eval(node.right, env, path)
        if isinstance(node.op, (ast.FloorDiv, ast.Mod)) and right == 0:
            raise IntentError(path, "division by zero in the name pattern", "divide by a non-zero number")
        return _OPS[type(node.op)](left, right)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return -_eval(node.operand, env, path)
    raise IntentError(path, f"{ast.unparse(node)!r} is not allowed in a name pattern",
                      "use whole numbers, variables, + - * // % and parentheses")


@dataclass(frozen=True)
class Template:
    """A compiled name pattern: literal text and ``{expr[:format]}`` fields."""

    path: str
    parts: tuple[str | tuple[ast.Expression, str], ...]

    @classmethod
    def compile(cls, text: str, path: str, kind: str | None = None) -> Template:
        """Parse ``text``; check every variable is one of :data:`VARIABLES` for ``kind`` (default: the
        intent ``path`` without ``fabric.``, e.g. ``leaf.name``).

        Raises:
            IntentError: a field that is not an arithmetic expression, or an unknown variable.
        """
        parts: list[str | tuple[ast.Expression, str]] = []
        pos = 0
        for m in _FIELD_RE.finditer(text):
            parts.append(text[pos:m.start()])
            try:
                expr = ast.parse(m.group(1).strip(), mode="eval")
            except SyntaxError:
                raise IntentError(path, f"{{{m.group(1)}}} is not an expression",
                                  "write e.g. {r+1} or {4*p}") from None
            parts.append((expr, m.group(2) or ""))
            pos = m.end()
        parts.append(text[pos:])
        if any(isinstance(p, str) and ("{" in p or "}" in p) for p in parts):
            raise IntentError(path, f"unbalanced braces in {text!r}",
                              "write fields as {expression} or {expression:03d}")
        t = cls(path, tuple(p for p in parts if p != ""))
        # the checking path: unknown names and any syntax outside the allowed arithmetic fail here, so the
        # compiled fast path of render() only ever evaluates expressions that passed it
        t._render_checked({v: 1 for v in VARIABLES[kind or path.removeprefix("fabric.")]})
        return t

    @functools.cached_property
    def _fast(self) -> Callable[[dict[str, int]], str]:
        """``render`` as one compiled f-string-like expression over the checked AST (only whole
        numbers, the variables, + - * // % and unary minus pass :func:`_eval`, so Python computes the
        same values); any failure falls back to the checking path for its exact error."""
        pieces = [repr(p) if isinstance(p, str) else f"format({ast.unparse(p[0])}, {p[1]!r})"
                  for p in self.parts]
        code = compile("".join(["(", " + ".join(pieces) or "''", ")"]), self.path, "eval")
        return lambda env: cast(str, eval(code, {"__builtins__": {"format": format}}, env))  # noqa: S307

    def render(self, env: dict[str, int]) -> str:
        """The name for these index values.

        Raises:
            IntentError: a bad format spec, unknown variable or division by zero.
        """
        try:
            return self._fast(env)
        except Exception:  # noqa: BLE001 - the checking path below raises the IntentError for it
            return self._render_checked(env)

    def _render_checked(self, env: dict[str, int]) -> str:
        out = []
        for p in self.parts:
            if isinstance(p, str):
                out.append(p)
                continue
            value = _eval(p[0], env, self.path)
            try:
                out.append(format(value, p[1]))
            except ValueError as exc:
                raise IntentError(self.path, f"format {p[1]!r}: {exc}",
                                  "use an integer format such as 03d") from None
        return "".join(out)


def _mgmt_seq(spec: Any, path: str) -> Iterator[dict[str, Any] | None]:
    """Management of each next device of ``spec``: next address, or the same address and next port."""
    if spec.count_up == "port":
        for port in range(spec.mgmt_port, 65536):
            yield None if spec.mgmt is None else {"host": spec.mgmt, "port": port}
        raise IntentError(path + "_port", "the SSH ports run past 65535", "start from a lower port")
    for addr in _addresses(spec.mgmt, path):
        yield _mgmt(addr, spec.mgmt_port)


def _addresses(first: str | None, path: str) -> Iterator[str | None]:
    """``first``, then the next addresses (IPv4/IPv6), or None forever when no address is given."""
    if first is None:
        while True:
            yield None
    try:
        addr: Any = ipaddress.ip_address(first)
    except ValueError:
        raise IntentError(path, f"{first!r} is not an IP address; names cannot count up",
                          "give the first management IP address, e.g. 10.20.0.11") from None
    while True:
        yield str(addr)
        try:
            addr = addr + 1
        except (ipaddress.AddressValueError, OverflowError):
            raise IntentError(path, "the management addresses run past the end of the address space",
                              "start from a lower address") from None


_DIGITS_RE = re.compile(r"\d+")


def _progression(nums: list[list[str]], k: int) -> tuple[int, int, int] | None:
    """(first, last, step) when number field ``k`` of every name runs in an arithmetic progression without
    leading zeros and every other field is equal, else None."""
    rest = nums[0][:k] + nums[0][k + 1:]
    if any(n[:k] + n[k + 1:] != rest for n in nums):
        return None
    values = [int(n[k]) for n in nums]
    step = values[1] - values[0]
    if step > 0 and all(str(int(n[k])) == n[k] for n in nums) and all(
            b - a == step for a, b in zip(values, values[1:])):
        return values[0], values[-1], step
    return None


def _as_range(names: list[str]) -> str | None:
    """``names`` as one ``prefix[first-last/step]suffix`` pattern when one number field runs in an
    arithmetic progression and everything else is equal (``Ethernet[1-4]/1``), else None."""
    if len(names) < 2:
        return None
    split = [_DIGITS_RE.split(n) for n in names]
    nums = [_DIGITS_RE.findall(n) for n in names]
    if any(sp != split[0] for sp in split) or any(len(n) != len(nums[0]) for n in nums):
        return None
    for k in range(len(nums[0]) - 1, -1, -1):
        prog = _progression(nums, k)
        if prog is None:
            continue
        first, last, step = prog
        rng = f"[{first}-{last}" + (f"/{step}]" if step != 1 else "]")
        parts, fixed = split[0], nums[0]
        return parts[0] + "".join((rng if idx == k else fixed[idx]) + parts[idx + 1]
                                  for idx in range(len(fixed)))
    return None


@functools.lru_cache(maxsize=64)
def _range_pattern(names: tuple[str, ...]) -> str | None:
    """:func:`_as_range` memoised: the leaves (spines …) of an intent name their ports alike, so ~3k
    calls at 4,096 hosts have a handful of distinct arguments."""
    return _as_range(list(names))


def _port_entries(names: list[str], spec: IntentPorts) -> list[dict[str, Any]]:
    """Port entries for ``names``: one range where the names form one (as a hand-written inventory
    would write them), else one entry per name."""
    extra: dict[str, Any] = {"speed": f"{spec.speed}G"}
    for key in ("lanes", "breakout", "mtu"):
        if getattr(spec, key) is not None:
            extra[key] = getattr(spec, key)
    rng = _range_pattern(tuple(names))
    if rng is not None:
        return [{"name": rng, **extra}]
    return [{"name": n, **extra} for n in names]


@dataclass
class Expansion:
    """What an intent expands to, plus, per element, the intent path each of its fields came from."""

    switches: list[dict[str, Any]]
    links: list[dict[str, Any]]
    hosts: list[dict[str, Any]]
    switch_sources: list[dict[str, str]]
    link_sources: list[dict[str, str]]
    host_sources: list[dict[str, str]]

    def link(self, a: str, b: str, spec: IntentPorts, a_src: str, b_src: str) -> None:
        """Add the link ``a``-``b`` built from ``spec``, whose fields come from intent paths
        ``a_src``/``b_src``."""
        self.links.append(_link(a, b, spec))
        self.link_sources.append({"a": a_src + ".name", "b": b_src, "cable_length": a_src + ".cable_length",
                           "media": a_src + ".media"})


def _mgmt(addr: str | None, port: int) -> dict[str, Any] | None:
    if addr is None:
        return None
    return {"host": addr} if port == 22 else {"host": addr, "port": port}


def _switch_base(spec: Any, name: str, role: str, mgmt: dict[str, Any] | None) -> dict[str, Any]:
    sw: dict[str, Any] = {"name": name, "platform": spec.platform.value, "model": spec.model, "role": role}
    for key in ("asic", "os_version"):
        if getattr(spec, key) is not None:
            sw[key] = getattr(spec, key)
    if mgmt:
        sw["mgmt"] = mgmt
    if spec.credentials.model_fields_set:
        sw["credentials"] = spec.credentials.model_dump(exclude_unset=True)
    return sw


def _link(a: str, b: str, spec: IntentPorts) -> dict[str, Any]:
    link: dict[str, Any] = {"a": a, "b": b}
    if spec.cable_length is not None:
        link["cable_length"] = f"{spec.cable_length:g}m"
    if spec.media is not None:
        link["media"] = spec.media.value
    return link


def _leaf_variant(f: FabricIntent, k: int, host_ports: int,
                  uplinks: int) -> tuple[Any, dict[str, str], list[str], list[str], IntentPorts | None]:
    """Leaf spec of variant ``k`` (``fabric.leaf`` with ``fabric.leaf.groups[k]`` over it): the merged
    spec, the intent path of each field, its host port names, uplink names and uplink spec."""
    base = f.leaf
    over = base.groups[k] if base.groups else None
    src = _sources("leaf", ports="host_ports")
    fields = {}
    prefix = f"leaf.groups[{k}]."
    for key in ("platform", "model", "asic", "os_version", "host_ports", "uplinks"):
        if over is not None and getattr(over, key) is not None:
            fields[key] = getattr(over, key)
            if key in src:
                src[key] = prefix + key
    if over is not None and over.host_ports is not None:
        src["ports"] = prefix + "host_ports"
    spec = base.model_copy(update=fields)
    src["uplinks"] = (prefix if over is not None and over.uplinks is not None else "leaf.") + "uplinks"
    hp = Template.compile(spec.host_ports.name, f"fabric.{src['ports']}.name", "leaf.host_ports.name")
    up_names: list[str] = []
    if spec.uplinks is not None:
        up = Template.compile(spec.uplinks.name, f"fabric.{src['uplinks']}.name", "leaf.uplinks.name")
        if spec.uplinks.count is not None and spec.uplinks.count != uplinks:
            raise IntentError("fabric." + src["uplinks"] + ".count",
                              "every group's leaves need the same uplink count",
                              f"use count: {uplinks}")
        up_names = [up.render({"u": u}) for u in range(uplinks)]
    return spec, src, [hp.render({"p": p}) for p in range(host_ports)], up_names, spec.uplinks


def _sources(section: str, ports: str) -> dict[str, str]:
    """Intent field each expanded switch field comes from (``fabric.`` + section + field)."""
    base = {"name": "name", "platform": "platform", "model": "model", "role": "name", "asic": "asic",
            "os_version": "os_version", "mgmt": "mgmt", "credentials": "credentials", "ports": ports,
            "rail": "name", "rails": "name"}
    return {k: f"{section}.{v}" for k, v in base.items()}


@dataclass(frozen=True)
class _Shape:
    """The numbers an intent implies (all checked against each other by :func:`_shape`)."""

    leaves_per_group: int
    host_ports: int
    n_groups: int
    groups_per_pod: int
    n_pods: int
    uplinks: int
    n_spines: int
    per_spine: int
    spine_ports: int


def _leaf_host_ports(f: FabricIntent) -> int:
    """Host ports per leaf; raises IntentError when rails do not divide into leaves or the ports are short."""
    if f.rails % f.rails_per_leaf:
        raise IntentError("fabric.rails_per_leaf",
                          f"{f.rails} rails do not divide into leaves of {f.rails_per_leaf}",
                          "make rails a multiple of rails_per_leaf")
    need = f.hosts_per_group * f.rails_per_leaf
    host_ports = f.leaf.host_ports.count or need
    if host_ports < need:
        raise IntentError("fabric.leaf.host_ports.count",
                          f"a leaf has {host_ports} host ports but {f.hosts_per_group} hosts x "
                          f"{f.rails_per_leaf} rail(s) need {need}",
                          "lower hosts_per_group or give the leaf more host ports")
    return host_ports


def _single_tier(f: FabricIntent, n_groups: int) -> None:
    """Checks of an intent without spines: one group, no uplinks."""
    if n_groups > 1:
        raise IntentError("fabric.hosts", f"{f.hosts} hosts make {n_groups} groups of {f.hosts_per_group}, "
                          "which need a spine tier to reach each other", "add a spine section")
    if f.leaf.uplinks is not None:
        raise IntentError("fabric.leaf.uplinks", "leaf uplinks but no spine section", "add a spine section")


def _spine_counts(f: FabricIntent, spine: IntentSpine, leaves_per_pod: int) -> tuple[int, int, int, int]:
    """(leaf uplinks, spines, uplinks per spine and leaf, spine ports), checked against each other."""
    if f.leaf.uplinks is None or f.leaf.uplinks.count is None:
        raise IntentError("fabric.leaf.uplinks", "the leaves need uplinks with a count to reach the spines",
                          "add uplinks: {count: N, name: ..., speed: ...}")
    uplinks = f.leaf.uplinks.count
    n_spines = spine.count or uplinks
    if uplinks % n_spines:
        raise IntentError("fabric.spine.count",
                          f"{uplinks} leaf uplinks do not divide over {n_spines} spines",
                          "make the leaf uplink count a multiple of the spine count")
    per_spine = uplinks // n_spines
    down = leaves_per_pod * per_spine
    spine_ports = spine.ports.count or down
    if spine_ports < down:
        raise IntentError("fabric.spine.ports.count",
                          f"a spine has {spine_ports} ports but {leaves_per_pod} leaves x "
                          f"{per_spine} uplink(s) need {down}",
                          "add spines, use fewer groups per pod, or give the spines more ports")
    return uplinks, n_spines, per_spine, spine_ports


def _shape(f: FabricIntent) -> _Shape:
    """Derive and check the fabric's counts. Raises IntentError where they cannot fit together."""
    host_ports = _leaf_host_ports(f)
    n_groups = -(-f.hosts // f.hosts_per_group)
    groups_per_pod = min(f.groups_per_pod or n_groups, n_groups)
    n_pods = -(-n_groups // groups_per_pod)
    leaves_per_group = f.rails // f.rails_per_leaf
    if f.spine is None:
        _single_tier(f, n_groups)
        return _Shape(leaves_per_group, host_ports, n_groups, groups_per_pod, 1, 0, 0, 0, 0)
    uplinks, n_spines, per_spine, spine_ports = _spine_counts(f, f.spine, groups_per_pod * leaves_per_group)
    if n_pods > 1 and (f.superspine is None or f.spine.uplinks is None or f.spine.uplinks.count is None):
        raise IntentError("fabric.groups_per_pod",
                          f"{n_groups} groups make {n_pods} pods, which need a superspine tier",
                          "add a superspine section and spine uplinks (with a count), "
                          "or raise groups_per_pod")
    return _Shape(leaves_per_group, host_ports, n_groups, groups_per_pod, n_pods, uplinks, n_spines,
                  per_spine, spine_ports)


def _spines(f: FabricIntent,
            sh: _Shape) -> tuple[list[dict[str, Any]], list[list[str]], list[str], list[str]]:
    """Spine switches pod by pod: (switches, names per pod, down-port names, up-port names)."""
    if f.spine is None:
        return [], [], [], []
    name_t = Template.compile(f.spine.name, "fabric.spine.name")
    port_t = Template.compile(f.spine.ports.name, "fabric.spine.ports.name")
    down = [port_t.render({"q": q}) for q in range(sh.spine_ports)]
    up: list[str] = []
    if sh.n_pods > 1 and f.spine.uplinks is not None:
        up_t = Template.compile(f.spine.uplinks.name, "fabric.spine.uplinks.name")
        up = [up_t.render({"u": u}) for u in range(f.spine.uplinks.count or 0)]
    mgmt = _mgmt_seq(f.spine, "fabric.spine.mgmt")
    out: list[dict[str, Any]] = []
    names: list[list[str]] = []
    for pod in range(sh.n_pods):
        names.append([])
        for s in range(sh.n_spines):
            sw = _switch_base(f.spine, name_t.render({"s": s, "S": pod * sh.n_spines + s, "pod": pod}),
                              "spine", next(mgmt))
            sw["ports"] = _port_entries(down, f.spine.ports)
            if up and f.spine.uplinks is not None:
                sw["ports"] += _port_entries(up, f.spine.uplinks)
            out.append(sw)
            names[-1].append(sw["name"])
    return out, names, down, up


def _leaves(f: FabricIntent, sh: _Shape, b: Expansion, spine_names: list[list[str]],
            spine_down: list[str]) -> tuple[list[list[str]], list[list[str]]]:
    """Leaves group by group with their uplinks: (leaf names per group, host-port names per group)."""
    name_t = Template.compile(f.leaf.name, "fabric.leaf.name")
    variants = [_leaf_variant(f, k, sh.host_ports, sh.uplinks) for k in range(len(f.leaf.groups or [None]))]
    mgmt = _mgmt_seq(f.leaf, "fabric.leaf.mgmt")
    leaf_names: list[list[str]] = []
    host_ports: list[list[str]] = []
    for g in range(sh.n_groups):
        pod, g_in_pod = divmod(g, sh.groups_per_pod)
        spec, src, hp_names, up_names, up_spec = variants[g % len(variants)]
        leaf_names.append([])
        host_ports.append(hp_names)
        for li in range(sh.leaves_per_group):
            rails = list(range(li * f.rails_per_leaf, (li + 1) * f.rails_per_leaf))
            env = {"g": g, "l": li, "L": g * sh.leaves_per_group + li, "pod": pod, "rail": rails[0]}
            sw = _switch_base(spec, name_t.render(env), "leaf", next(mgmt))
            if f.label_rails:
                sw.update({"rail": rails[0]} if f.rails_per_leaf == 1 else {"rails": rails})
            sw["ports"] = _port_entries(hp_names, spec.host_ports)
            if up_spec is not None:
                src[f"ports+{len(sw['ports'])}"] = src["uplinks"]  # the uplink entries' intent line
                sw["ports"] += _port_entries(up_names, up_spec)
            b.switches.append(sw)
            b.switch_sources.append(src)
            leaf_names[-1].append(sw["name"])
            leaf_in_pod = g_in_pod * sh.leaves_per_group + li
            for u in range(sh.uplinks):
                port = spine_down[leaf_in_pod * sh.per_spine + u // sh.n_spines]
                # cast: up_names is empty when up_spec is None (_leaf_variant), so up_names[u] has raised
                b.link(f"{sw['name']}:{up_names[u]}", f"{spine_names[pod][u % sh.n_spines]}:{port}",
                       cast(IntentPorts, up_spec), src["uplinks"], "spine.ports.name")
    return leaf_names, host_ports


def _per_plane(ss: IntentSuperspine, n_pods: int, up: int) -> tuple[int, int]:
    """(superspines per plane, ports per superspine) for ``up`` uplinks per spine; raises IntentError when
    they do not fit."""
    if ss.ports.count is None:
        raise IntentError("fabric.superspine.ports", "the superspine ports need a count",
                          "add count: <ports>")
    per_plane = ss.count_per_plane or max(1, math.ceil(n_pods * up / ss.ports.count))
    if up % per_plane:
        raise IntentError("fabric.superspine.count_per_plane",
                          f"{up} spine uplinks do not divide over {per_plane} superspines per plane",
                          "make the spine uplink count a multiple of the superspines per plane")
    if n_pods * (up // per_plane) > ss.ports.count:
        raise IntentError("fabric.superspine.ports.count",
                          f"a superspine has {ss.ports.count} ports but {n_pods} pods x {up // per_plane} "
                          f"uplink(s) need {n_pods * (up // per_plane)}",
                          "add superspines per plane or give them more ports")
    return per_plane, ss.ports.count


def _superspines(f: FabricIntent, sh: _Shape, b: Expansion, spine_names: list[list[str]],
                 spine_up: list[str]) -> None:
    """Superspine planes and the spine-to-superspine links (three tiers only)."""
    ss = f.superspine
    if sh.n_pods <= 1 or ss is None or f.spine is None or f.spine.uplinks is None or not spine_up:
        return
    up = len(spine_up)
    per_plane, n_ports = _per_plane(ss, sh.n_pods, up)
    name_t = Template.compile(ss.name, "fabric.superspine.name")
    port_t = Template.compile(ss.ports.name, "fabric.superspine.ports.name")
    down = [port_t.render({"q": q}) for q in range(n_ports)]
    mgmt = _mgmt_seq(ss, "fabric.superspine.mgmt")
    planes: list[list[str]] = []
    for plane in range(sh.n_spines):
        planes.append([])
        for j in range(per_plane):
            sw = _switch_base(ss, name_t.render({"plane": plane, "j": j, "X": plane * per_plane + j}),
                              "superspine", next(mgmt))
            sw["ports"] = _port_entries(down, ss.ports)
            b.switches.append(sw)
            b.switch_sources.append(_sources("superspine", ports="ports"))
            planes[-1].append(sw["name"])
    for pod in range(sh.n_pods):
        for s, spine in enumerate(spine_names[pod]):
            for u in range(up):
                slot = pod * (up // per_plane) + u // per_plane
                b.link(f"{spine}:{spine_up[u]}", f"{planes[s][u % per_plane]}:{down[slot]}", f.spine.uplinks,
                       "spine.uplinks", "superspine.ports.name")


def _hosts(f: FabricIntent, sh: _Shape, leaf_names: list[list[str]],
           host_ports: list[list[str]]) -> tuple[list[dict[str, Any]], list[dict[str, str]]]:
    """Every host with one NIC per rail on its group's leaf of that rail."""
    name_t = Template.compile(f.host.name, "fabric.host.name")
    netdev_t = Template.compile(f.host.nic.netdev, "fabric.host.nic.netdev")
    rdma_t = Template.compile(f.host.nic.rdma_device, "fabric.host.nic.rdma_device")
    nic = f.host.nic
    nic_extra: dict[str, Any] = {}
    if nic.rdma_port != 1:
        nic_extra["rdma_port"] = nic.rdma_port
    if nic.cable_length is not None:
        nic_extra["cable_length"] = f"{nic.cable_length:g}m"
    if nic.media is not None:
        nic_extra["media"] = nic.media.value
    if nic.mtu is not None:
        nic_extra["mtu"] = nic.mtu
    host_extra: dict[str, Any] = {}
    if f.host.credentials.model_fields_set:
        host_extra["credentials"] = f.host.credentials.model_dump(exclude_unset=True)
    for key in ("gpus", "socket_ifname", "mtu"):
        if getattr(f.host, key) is not None:
            host_extra[key] = getattr(f.host, key)
    src = {"name": "host.name", "mgmt": "host.mgmt", "credentials": "host.credentials", "gpus": "host.gpus",
           "socket_ifname": "host.socket_ifname", "mtu": "host.mtu", "nics": "host.nic"}
    mgmt = _mgmt_seq(f.host, "fabric.host.mgmt")
    hosts: list[dict[str, Any]] = []
    for h in range(f.hosts):
        g, i = divmod(h, f.hosts_per_group)
        env = {"h": h, "n": h + 1, "g": g, "i": i, "pod": g // sh.groups_per_pod}
        host: dict[str, Any] = {"name": name_t.render(env)}
        m = next(mgmt)
        if m:
            host["mgmt"] = m
        host.update(host_extra)
        nics = []
        for r in range(f.rails):
            env["r"] = r
            entry: dict[str, Any] = {"model": nic.model, "netdev": netdev_t.render(env),
                                     "rdma_device": rdma_t.render(env), "speed": f"{nic.speed}G"}
            if f.label_rails:
                entry["rail"] = r
            port = host_ports[g][(r % f.rails_per_leaf) * f.hosts_per_group + i]
            entry["switch_port"] = f"{leaf_names[g][r // f.rails_per_leaf]}:{port}"
            entry.update(nic_extra)
            nics.append(entry)
        host["nics"] = nics
        hosts.append(host)
    return hosts, [src] * len(hosts)


def expand_fabric(intent: FabricIntent) -> Expansion:
    """Switches, links and hosts (plain data, as a full-form file holds them) for ``intent``, in the
    order a hand-written file lists them: leaves, spines, superspines; leaf uplinks leaf by leaf.

    Raises:
        IntentError: the intent cannot be satisfied (more hosts than leaf ports, uplinks that do not
            divide over the spines, a spine or superspine with too few ports, several pods without a
            superspine tier, a name pattern with an unknown variable, names that repeat), with the
            intent path to point at.
    """
    sh = _shape(intent)
    spines, spine_names, spine_down, spine_up = _spines(intent, sh)
    b = Expansion([], [], [], [], [], [])
    leaf_names, host_ports = _leaves(intent, sh, b, spine_names, spine_down)
    b.switches += spines
    spine_src = _sources("spine", ports="ports")
    if spine_up and intent.spine is not None:  # the uplink entries follow the down ports' entries
        spine_src[f"ports+{len(_port_entries(spine_down, intent.spine.ports))}"] = "spine.uplinks"
    b.switch_sources += [spine_src] * len(spines)
    _superspines(intent, sh, b, spine_names, spine_up)
    hosts, h_src = _hosts(intent, sh, leaf_names, host_ports)
    _check_unique(b.switches, "fabric.leaf.name", "switch")
    _check_unique(hosts, "fabric.host.name", "host")
    return Expansion(b.switches, b.links, hosts, b.switch_sources, b.link_sources, h_src)


def _check_unique(items: list[dict[str, Any]], path: str, what: str) -> None:
    seen: set[str] = set()
    for it in items:
        if it["name"] in seen:
            raise IntentError(path, f"the name pattern gives two {what}es the name {it['name']!r}"
                              if what == "switch"
                              else f"the name pattern gives two {what}s the name {it['name']!r}",
                              "use the index variables so every name differs (e.g. {g} and {l} for leaves)")
        seen.add(it["name"])


# --- merging with explicit entries and positions -------------------------------------------------------

def _endpoint_keys(link: dict[str, Any]) -> set[str]:
    return {str(link.get("a")), str(link.get("b"))}


def merge(expansion: Expansion, data: dict[str, Any]) -> tuple[list[Any], list[Any], list[Any], list[Any]]:
    """Expanded elements with the explicit ``switches``/``links``/``hosts`` of ``data`` applied.

    An explicit switch or host with the name of an expanded one updates it field by field (a list such
    as ``ports`` or ``nics`` replaces the expanded one); an explicit link that uses an endpoint of an
    expanded link replaces it; everything else is added after the expanded elements.

    Returns:
        (switches, links, hosts, origins): ``origins`` lists, per section, for each element either
        ``("intent", i)`` (expanded element i, maybe updated) or ``("explicit", j)`` (data element j),
        so positions can be taken from the right place.
    """
    switches, switch_org = _merge_named(expansion.switches, data.get("switches") or [])
    hosts, host_org = _merge_named(expansion.hosts, data.get("hosts") or [])
    links, link_org = _merge_links(expansion.links, list(data.get("links") or []))
    return switches, links, hosts, [switch_org, link_org, host_org]


_Origins = list[tuple[str, int, int | None]]


def _merge_named(expanded: list[dict[str, Any]], explicit: list[Any]) -> tuple[list[Any], _Origins]:
    """Expanded switches or hosts, updated by the explicit entry of the same name; the others appended."""
    items: list[Any] = [dict(e) for e in expanded]
    org: _Origins = [("intent", i, None) for i in range(len(items))]
    by_name = {e["name"]: i for i, e in enumerate(items)}
    for j, extra in enumerate(explicit):
        if isinstance(extra, dict) and extra.get("name") in by_name:
            k = by_name[extra["name"]]
            items[k].update(extra)
            org[k] = ("intent", k, j)
        else:
            items.append(extra)
            org.append(("explicit", j, None))
    return items, org


def _merge_links(expanded: list[dict[str, Any]], explicit: list[Any]) -> tuple[list[Any], _Origins]:
    """Expanded links that share no endpoint with an explicit one, then every explicit link."""
    taken = set().union(*(_endpoint_keys(x) for x in explicit if isinstance(x, dict))) if explicit else set()
    links: list[Any] = []
    org: _Origins = []
    for i, link in enumerate(expanded):
        if not (_endpoint_keys(link) & taken):
            links.append(link)
            org.append(("intent", i, None))
    for j, link in enumerate(explicit):
        links.append(link)
        org.append(("explicit", j, None))
    return links, org


def _sourced(value: Any, path: str, locate: Callable[[str], tuple[int, int]]) -> Any:
    """The position subtree of an expanded ``value`` made from the intent field at ``path``: each field of
    a mapping at that field's own intent line (a NIC's ``speed`` at ``fabric.host.nic.speed``), a field the
    intent does not write (``switch_port``) at its nearest written ancestor; list items at ``path``."""
    if isinstance(value, dict):
        node = {}
        for k, v in value.items():
            line, col = locate(f"{path}.{k}")
            node[k] = (line, col, line, col, _sourced(v, f"{path}.{k}", locate))
        return node
    if isinstance(value, list):
        line, col = locate(path)
        return [(line, col, _sourced(v, path, locate)) for v in value]
    return None


def _split_sourced(value: list[Any], key: str, source: str, sources: dict[str, str],
                   locate: Callable[[str], tuple[int, int]]) -> Any:
    """The position subtree of the list ``value`` of field ``key``: its items at ``source``, except from
    index i on where ``sources`` has ``key+i`` (a leaf's uplink port entries follow its host-port entries
    and come from ``uplinks``)."""
    starts = sorted((int(k[len(key) + 1:]), "fabric." + v) for k, v in sources.items()
                    if k.startswith(key + "+"))
    if not starts:
        return _sourced(value, source, locate)
    out = []
    for i, item in enumerate(value):
        src = source
        for start, path in starts:
            if i >= start:
                src = path
        line, col = locate(src)
        out.append((line, col, _sourced(item, src, locate)))
    return out


def _element_tree(element: dict[str, Any], sources: dict[str, str], locate: Callable[[str], tuple[int, int]],
                  explicit: dict[str, Any] | None) -> Any:
    """Position subtree of an expanded element: each field at its intent line; fields an explicit
    entry overrides keep that entry's own positions (``explicit`` is its subtree)."""
    node: dict[str, Any] = {}
    for key, value in element.items():
        if explicit is not None and key in explicit:
            node[key] = explicit[key]
            continue
        source = "fabric." + sources.get(key, sources.get("name", ""))
        pos = locate(source)
        tree = (_split_sourced(value, key, source, sources, locate) if isinstance(value, list)
                else _sourced(value, source, locate))
        node[key] = (pos[0], pos[1], pos[0], pos[1], tree)
    return node


def _explicit_tree(old_list: list[Any], update: int | None) -> dict[str, Any] | None:
    """The position subtree of the explicit entry ``old_list[update]`` an expanded element takes fields
    from (None when there is none, or it is not a mapping)."""
    if update is None or update >= len(old_list):
        return None
    tree = resolve_pos(old_list[update][2])  # a one-line flow mapping's positions are lazy
    return tree if isinstance(tree, dict) else None


def expand_document(data: Any, tree: Any, locate: Callable[[str], tuple[int, int]]) -> tuple[Any, Any]:
    """``data`` with its ``fabric:`` intent expanded into ``switches``/``links``/``hosts`` (merged with
    the explicit ones), and the position tree to match. ``data`` without ``fabric`` comes back as is.

    Args:
        data: the parsed document (plain data).
        tree: its position tree (as built by the YAML readers).
        locate: path -> (line, col) of a value in the *original* document (nearest ancestor if absent).

    Raises:
        pydantic.ValidationError: the intent section itself is invalid (the caller reports RT003).
        IntentError: the intent cannot be expanded (RT007).
    """
    if not isinstance(data, dict) or data.get("fabric") is None:
        return data, tree
    intent = _FabricDoc.model_validate({"fabric": data["fabric"]}).fabric
    expansion = expand_fabric(intent)
    switches, links, hosts, origins = merge(expansion, data)
    out = dict(data)
    out.update(switches=switches, links=links, hosts=hosts)
    new_tree = dict(tree) if isinstance(tree, dict) else {}
    fabric_key = new_tree.get("fabric", (1, 1, 1, 1, None))
    for section, items, origin, sources in (("switches", switches, origins[0], expansion.switch_sources),
                                           ("links", links, origins[1], expansion.link_sources),
                                           ("hosts", hosts, origins[2], expansion.host_sources)):
        old = new_tree.get(section)
        old_list = old[4] if old and isinstance(old[4], list) else []
        nodes = []
        for item, (kind, idx, update) in zip(items, origin):
            if kind == "explicit":
                nodes.append(old_list[idx] if idx < len(old_list) else (fabric_key[2], fabric_key[3], None))
                continue
            explicit_tree = _explicit_tree(old_list, update)
            # built on first look-up: only a finding inside an expanded element needs its subtree
            elem = LazyPos(functools.partial(_element_tree, item, sources[idx], locate, explicit_tree))
            line, col = locate("fabric." + (sources[idx].get("name") or sources[idx]["a"]))
            nodes.append((line, col, elem))
        kl, kc, vl, vc = (old[:4] if old else fabric_key[:4])
        new_tree[section] = (kl, kc, vl, vc, nodes)
    return out, new_tree


def full_form_yaml(data: dict[str, Any], source: str = "") -> str:
    """Full-form inventory ``data`` as YAML in the layout of the shipped files (the writer the importers
    use, :func:`roce_tune.inventory.skeleton.inventory_yaml`); ``source`` names the intent file in a
    header."""
    from roce_tune.inventory.skeleton import inventory_yaml

    return inventory_yaml(data, f"Full form of {source}, expanded by roce-tune expand." if source else "")


def finding(err: IntentError, file: str, locate: Callable[[str], tuple[int, int]]) -> Finding:
    """The RT007 finding for ``err``, at the intent field it names."""
    line, col = locate(err.path)
    return Finding(rule=INTENT_RULE, severity=Severity.error, message=err.message, fix=err.fix,
                   location=Location(file=file, line=line, col=col, path=err.path))


__all__ = ["INTENT_RULE", "VARIABLES", "Expansion", "IntentError", "Template", "expand_document",
           "expand_fabric", "finding", "full_form_yaml", "merge"]
