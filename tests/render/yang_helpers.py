"""Validate rendered SONiC CONFIG_DB JSON against SONiC's own YANG models (``sonic-yang`` in the references
folder, ``tests/references.py``).

libyang validates the RFC 7951 form: each table sits under
``"sonic-<module>:sonic-<module>": {"sonic-<module>:<TABLE>": {"<TABLE>_LIST": [...]}}`` and a
CONFIG_DB row ``"k1|k2": {fields}`` becomes a list entry whose key leaves come from the split key.
Nothing is hand-coded per table: the table -> module index, key leaves, nested map lists
(``DSCP_TO_TC_MAP`` rows ``{"26": "3"}`` -> ``[{"dscp": "26", "tc": 3}]``) and the JSON encoding of every
leaf (RFC 7951 §6.1: 8/16/32-bit integers as numbers, 64-bit as strings, booleans as true/false) are
read from the loaded schema.

Usage::

    ctx = load_sonic_yang()                 # None when the models or libyang are missing
    skipped = validate_config_db(ctx, db)   # raises YangValidationError; returns tables without a module
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.references import reference_path


class YangValidationError(AssertionError):
    """libyang rejected the translated data; the message carries libyang's error and the JSON."""


@dataclass
class SonicYang:
    """A libyang context with every module of the directory loaded, and TABLE -> module name.

    Only names are kept: libyang 2 recompiles every module of a context whenever another module is
    loaded, which frees the compiled schema nodes; a node kept from before a later load dangles and
    reads whatever reuses its memory (this failed CI as "sonic-buffer-queue: no list takes a key").
    Schema nodes are therefore looked up by path each time (:meth:`table`).
    """

    ctx: Any
    tables: dict[str, str] = field(default_factory=dict)  # TABLE -> module

    def table(self, name: str) -> Any:
        """The schema container of CONFIG_DB table ``name`` (``/sonic-x:sonic-x/sonic-x:TABLE``)."""
        module = self.tables[name]
        return next(self.ctx.find_path(f"/{module}:{module}/{module}:{name}"))


def load_sonic_yang(directory: Path | None = None) -> SonicYang | None:
    """Load all ``*.yang`` modules in ``directory`` (default: ``sonic-yang`` in the references folder);
    None if it or the libyang binding is absent."""
    directory = reference_path("sonic-yang") if directory is None else directory
    if not directory.is_dir():
        return None
    try:
        import libyang
    except ImportError:
        return None
    # explicit compile: parse every module, then compile them all once. Loading one by one compiles
    # each module before the modules its ``must``/``when`` paths reference are implemented (libyang
    # skips those checks) and recompiles earlier modules as later ones are implemented.
    ctx = libyang.Context(str(directory), explicit_compile=True)
    out = SonicYang(ctx)
    names = [path.stem for path in sorted(directory.glob("*.yang"))]
    for name in names:
        ctx.load_module(name)
    ctx.compile_schema()
    for name in names:
        for top in ctx.get_module(name).children():
            if top.nodetype() != libyang.SNode.CONTAINER:
                continue
            for table in top.children():
                out.tables[table.name()] = name
    return out


def _json_value(leaf: Any, value: Any) -> Any:
    """CONFIG_DB string -> RFC 7951 JSON value for ``leaf``'s type."""
    import libyang

    t = leaf.type()
    base = t.base()
    if base == libyang.Type.LEAFREF:
        t = t.leafref_type()
        base = t.base()
    if base in (libyang.Type.INT8, libyang.Type.INT16, libyang.Type.INT32,
                libyang.Type.UINT8, libyang.Type.UINT16, libyang.Type.UINT32):
        return int(value)
    if base == libyang.Type.BOOL:
        if value not in ("true", "false"):
            raise YangValidationError(f"{leaf.name()}: boolean must be 'true' or 'false', got {value!r}")
        return value == "true"
    return str(value)  # strings, enums, unions, 64-bit integers and decimal64 are JSON strings


def _children(node: Any) -> dict[str, Any]:
    return {c.name(): c for c in node.children()}


def _list_entry(lst: Any, key: str, fields: dict[str, Any]) -> dict[str, Any]:
    import libyang

    keys = [k.name() for k in lst.keys()]  # noqa: SIM118 (libyang SList.keys(): key leaves)
    parts = key.split("|")
    if len(parts) != len(keys):
        raise YangValidationError(f"{lst.name()}: key {key!r} does not split into {keys}")
    children = _children(lst)
    entry: dict[str, Any] = {k: _json_value(children[k], v) for k, v in zip(keys, parts)}
    for name, value in fields.items():
        node = children.get(name)
        if node is None:
            nested = [c for c in children.values() if c.nodetype() == libyang.SNode.LIST]
            if len(nested) != 1:
                raise YangValidationError(f"{lst.name()}: no leaf {name!r} (key {key!r})")
            # a map table: every field is one entry of the nested list (key leaf, one value leaf)
            inner = nested[0]
            ikey = next(iter(inner.keys())).name()
            ivals = [c for c in inner.children() if c.name() != ikey]
            ic = _children(inner)
            entry.setdefault(inner.name(), []).append(
                {ikey: _json_value(ic[ikey], name), ivals[0].name(): _json_value(ivals[0], value)})
        elif node.nodetype() == libyang.SNode.LEAFLIST:
            entry[name] = [_json_value(node, v) for v in value]
        else:
            entry[name] = _json_value(node, value)
    return entry


def _pick_list(table: Any, key: str) -> Any:
    import libyang

    lists = [c for c in table.children() if c.nodetype() == libyang.SNode.LIST]
    for lst in lists:
        if len(list(lst.keys())) == len(key.split("|")):
            return lst
    raise YangValidationError(f"{table.name()}: no list takes a key like {key!r}")


def to_rfc7951(yang: SonicYang, config_db: dict[str, dict[str, Any]]) -> tuple[dict[str, Any], list[str]]:
    """Translate CONFIG_DB JSON to RFC 7951. Returns (data, tables that have no YANG module here)."""
    import libyang

    data: dict[str, Any] = {}
    skipped: list[str] = []
    for table_name, rows in sorted(config_db.items()):
        if table_name not in yang.tables:
            skipped.append(table_name)
            continue
        module, table = yang.tables[table_name], yang.table(table_name)
        body: dict[str, Any] = {}
        for key, fields in rows.items():
            containers = {c.name(): c for c in table.children() if c.nodetype() == libyang.SNode.CONTAINER}
            if key in containers:  # e.g. DEVICE_METADATA|localhost
                cc = _children(containers[key])
                body[key] = {n: _json_value(cc[n], v) for n, v in fields.items()}
                continue
            lst = _pick_list(table, key)
            body.setdefault(lst.name(), []).append(_list_entry(lst, key, fields))
        data.setdefault(f"{module}:{module}", {})[f"{module}:{table_name}"] = body
    return data, skipped


def validate_config_db(yang: SonicYang, config_db: dict[str, dict[str, Any]]) -> list[str]:
    """Translate and validate with libyang (strict: unknown leaves are errors; leafrefs, ranges,
    patterns and ``must`` statements are checked). Returns the tables that had no module.

    Raises:
        YangValidationError: libyang's message plus the translated JSON.
    """
    import libyang

    data, skipped = to_rfc7951(yang, config_db)
    text = json.dumps(data, sort_keys=True)
    try:
        tree = yang.ctx.parse_data_mem(text, "json", strict=True, validate_present=True)
    except libyang.LibyangError as exc:
        raise YangValidationError(f"{exc}\n{json.dumps(data, indent=1, sort_keys=True)[:4000]}") from exc
    if tree is not None:
        tree.free()
    return skipped


def device_ports(names: list[str], speed_gbps: dict[str, int]) -> dict[str, dict[str, str]]:
    """The PORT rows a real switch already has (mandatory ``lanes`` and ``speed`` in Mb/s), which the
    rendered fragment only adds ``mtu`` to. Lanes are placeholders: they are not validated across rows."""
    return {n: {"lanes": str(i), "speed": str(speed_gbps[n] * 1000), "admin_status": "up"}
            for i, n in enumerate(names)}


def merge_running(running: dict[str, dict[str, Any]], fragment: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """``running`` with ``fragment``'s rows merged field by field (what apply-patch of the fragment
    yields)."""
    out = json.loads(json.dumps(running))
    for table, rows in fragment.items():
        for key, fields in rows.items():
            row = out.setdefault(table, {}).setdefault(key, {})
            if isinstance(fields, dict):
                row.update(fields)
            else:
                out[table][key] = fields
    return out
