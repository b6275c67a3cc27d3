"""The checked-in JSON Schema is generated from the models and describes what inventories contain."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from roce_tune.inventory.lint import RULES
from roce_tune.inventory.loader import parse_yaml
from roce_tune.inventory.schema import SCHEMA_DIALECT, inventory_json_schema, inventory_json_schema_text

REPO = Path(__file__).resolve().parents[2]
VALIDATOR = jsonschema.Draft202012Validator(inventory_json_schema())


def test_checked_in_schema_is_in_sync() -> None:
    text = (REPO / "schema" / "inventory.schema.json").read_text(encoding="utf-8")
    assert text == inventory_json_schema_text(), "regenerate: python -m roce_tune.inventory.schema"
    schema = json.loads(text)
    assert schema["$schema"] == SCHEMA_DIALECT and schema["$id"]
    jsonschema.Draft202012Validator.check_schema(schema)


@pytest.mark.parametrize("path", sorted((REPO / "inventories").glob("*.yaml")), ids=lambda p: p.name)
def test_shipped_inventories_validate_and_point_at_the_schema(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    assert text.startswith("# yaml-language-server: $schema=../schema/inventory.schema.json")
    assert not list(VALIDATOR.iter_errors(parse_yaml(text).data))


def test_rule_examples_validate() -> None:
    for rule in RULES.values():
        for text in (rule.bad, rule.fixed):
            assert not list(VALIDATOR.iter_errors(parse_yaml(text).data)), rule.id


@pytest.mark.parametrize(("fragment", "bad"), [
    ("{name: lab}", False),
    ("{name: 'eth0; reboot'}", True),
    ("{name: '$(reboot)'}", True),
    ("{name: lab, nmae: x}", True),
])
def test_schema_rejects_what_the_loader_rejects(fragment: str, bad: bool) -> None:
    assert bool(list(VALIDATOR.iter_errors(parse_yaml(f"site: {fragment}\n").data))) is bad


@pytest.mark.parametrize(("speed", "ok"), [("400G", True), ("400000", True), (400000, True), ("1.6T", True),
                                           ("fast", False), ("400 G b", False)])
def test_speed_accepts_unit_spellings(speed: object, ok: bool) -> None:
    data = {"site": {"name": "lab"}, "switches": [{"name": "l", "platform": "sonic", "model": "SN4700",
                                                     "role": "leaf",
                                                     "ports": [{"name": "E0", "speed": speed}]}]}
    assert (not list(VALIDATOR.iter_errors(data))) is ok
