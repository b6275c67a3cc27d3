"""JSON Schema of the inventory, for editors (yaml-language-server) and external validators.

Shipped inventories start with ``# yaml-language-server: $schema=../schema/inventory.schema.json``;
``schema/inventory.schema.json`` is generated from :class:`~roce_tune.inventory.models.Inventory` by
:func:`inventory_json_schema` and checked in (a test keeps it in sync). Regenerate with
``python -m roce_tune.inventory.schema``.

pydantic alone would describe ``speed`` as an integer (the type *after* ``parse_speed_gbps``) and
would not know the name patterns enforced by ``AfterValidator``\\ s, so the generator below describes
what the file may contain: ``speed: 400G`` or ``400000``, ``cable_length: 40m``, and every checked
name with its pattern.
"""

from __future__ import annotations

import inspect
import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pydantic.json_schema import GenerateJsonSchema, JsonSchemaValue
from pydantic_core import core_schema

from roce_tune import units
from roce_tune.inventory.models import Inventory

SCHEMA_DIALECT = "https://json-schema.org/draft/2020-12/schema"
SCHEMA_ID = "urn:roce-tune:schema:inventory"
#: Where the checked-in copy lives, relative to the repository root.
SCHEMA_PATH = Path("schema") / "inventory.schema.json"


def _unit(number: str, minimum: float, regex: re.Pattern[str], description: str, *,
          exclusive: bool = False) -> JsonSchemaValue:
    bound = "exclusiveMinimum" if exclusive else "minimum"
    return {"anyOf": [{"type": number, bound: minimum}, {"type": "string", "pattern": regex.pattern}],
            "description": description}


#: Unit parsers (BeforeValidators) -> what the YAML may contain.
_UNIT_SCHEMAS: dict[Callable[..., Any], JsonSchemaValue] = {
    units.parse_speed_gbps: {
        "anyOf": [{"type": "integer", "minimum": 1},
                  {"type": "string", "pattern": r"^\s*(\d+|\d+(\.\d+)?\s*[GgTtMm](b(ps|/s)?|bE)?)\s*$"}],
        "description": "Port speed: 100G, 400G, 1.6T, or Mb/s like 100000 (small integers are Gb/s). "
                       f"Known speeds (Gb/s): {', '.join(map(str, units.KNOWN_SPEEDS_GBPS))}.",
        "examples": ["400G", "100G", 400000],
    },
    units.parse_length_m: _unit("number", 0, units._LENGTH_RE, "Cable length in metres, above 0: 3m, 2.5",
                                exclusive=True),
    units.parse_bytes: _unit("integer", 0, units._BYTES_RE, "Bytes: 150000, 150KB (10^3), 64KiB (2^10)"),
    units.parse_time_us: _unit("number", 0, units._TIME_US_RE, "Time: 2us, 500ns, 0.2ms, or microseconds"),
}


class _InventorySchema(GenerateJsonSchema):
    """Describes the input side of the unit parsers and the name-pattern validators."""

    def function_before_schema(self, schema: core_schema.BeforeValidatorFunctionSchema) -> JsonSchemaValue:
        unit = _UNIT_SCHEMAS.get(schema["function"]["function"])
        if unit is not None:
            fresh: dict[str, Any] = json.loads(json.dumps(unit))  # a fresh copy
            return fresh
        return super().function_before_schema(schema)

    def function_after_schema(self, schema: core_schema.AfterValidatorFunctionSchema) -> JsonSchemaValue:
        inner = super().function_after_schema(schema)
        fn = schema["function"]["function"]
        try:
            names = inspect.getclosurevars(fn).nonlocals
        except (TypeError, ValueError):
            return inner
        regex, kind, example = names.get("regex"), names.get("kind"), names.get("example")
        if isinstance(regex, re.Pattern) and inner.get("type") == "string":
            inner = dict(inner, pattern=regex.pattern)
            if kind:
                inner.setdefault("description", f"{kind[0].upper()}{kind[1:]}, e.g. {example}; shell/CLI "
                                                "metacharacters, spaces, quotes and newlines are rejected.")
        return inner


def inventory_json_schema() -> dict[str, Any]:
    """The inventory JSON Schema (draft 2020-12) with ``$schema`` and ``$id``.

    Returns:
        A dict ready for ``json.dumps(..., sort_keys=True, indent=2)``.
    """
    body = Inventory.model_json_schema(schema_generator=_InventorySchema, mode="validation")
    body["$schema"] = SCHEMA_DIALECT
    body["$id"] = SCHEMA_ID
    body["title"] = "roce-tune inventory"
    return body


def inventory_json_schema_text() -> str:
    """The exact text of the checked-in ``schema/inventory.schema.json`` (sorted keys, indent 2)."""
    return json.dumps(inventory_json_schema(), sort_keys=True, indent=2, ensure_ascii=False) + "\n"


def write_schema(path: str | Path = SCHEMA_PATH) -> Path:
    """Write :func:`inventory_json_schema_text` to ``path`` and return it."""
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(inventory_json_schema_text(), encoding="utf-8")
    return out


if __name__ == "__main__":  # pragma: no cover
    print(f"wrote {write_schema()}")
