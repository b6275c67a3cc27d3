"""Load an inventory file: YAML with line:column for every node, strict validation, all errors at once.

    >>> loaded = load_inventory("inventories/lab-2node.yaml")        # doctest: +SKIP
    >>> loaded.inventory.site.name, loaded.locate("hosts[0].nics[0].speed")  # doctest: +SKIP

Reading goes through ruamel.yaml (:mod:`roce_tune.inventory.yamlpos`); a fast reader for the plain
block-style subset (:mod:`roce_tune.inventory.fastyaml`) is tried first and gives identical results,
so large inventories load in a fraction of the time. Nothing here constructs objects from YAML tags.

Loader rule IDs (all errors):

* RT001 malformed YAML (position from ruamel.yaml), non-UTF-8 bytes, control characters, aliases
  that expand without bound.
* RT002 duplicate key: every duplicate, with the line of the first one.
* RT003 schema: wrong type, unknown field (with the closest valid name), bad unit, bad name
  pattern (``eth0; reboot``), out-of-range value, missing field, unreadable number.
* RT004 empty file or a top level that is not a mapping.
* RT005 file not found / unreadable.
* RT006 a YAML tag other than the core-schema ones (``!!python/object``, ``!custom`` …).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

from pydantic import ValidationError

from roce_tune.findings import Finding, Location, RoceTuneError, Severity
from roce_tune.gcpause import gc_paused
from roce_tune.inventory.fastyaml import fast_parse
from roce_tune.inventory.models import Inventory
from roce_tune.inventory.positions import PositionIndex
from roce_tune.inventory.validation import schema_findings, unexpected_finding
from roce_tune.inventory.yamlpos import ParseResult, YamlIssue, YamlSyntaxError, compose_ruamel

#: Loader rule ID -> title (documented in docs/lint-rules.md with the lint rules).
LOADER_RULES: dict[str, str] = {
    "RT001": "malformed YAML",
    "RT002": "duplicate key",
    "RT003": "schema error (type, unknown field, unit, name pattern, range, missing field)",
    "RT004": "empty file or top level not a mapping",
    "RT005": "file not found or unreadable",
    "RT006": "YAML tag not allowed",
    "RT007": "fabric intent cannot be expanded",
}


@dataclass(frozen=True)
class LoadedInventory:
    """A validated inventory and where each of its values was written.

    Attributes:
        path: the file name as given (used in every finding's location).
        text: the decoded file text.
        sha256: hex SHA-256 of the file's bytes (of the UTF-8 text for :func:`load_inventory_text`).
        inventory: the validated model.
        positions: field path (``switches[0].ports[3].speed``) -> (line, col) of the value, 1-based;
            also answers :meth:`PositionIndex.key` (position of the key) and ``nearest``.
    """

    path: str
    text: str
    sha256: str
    inventory: Inventory
    positions: PositionIndex

    def locate(self, path: str, *, key: bool = False, device: str | None = None,
               port: str | None = None) -> Location:
        """Location of ``path``: its value (or with ``key=True`` its key), else its nearest ancestor.

        Args:
            path: dotted field path, ``""`` for the whole document.
            key: point at the key (``speed:``) rather than the value (``fast``).
            device: device name to show with the position (lint findings).
            port: port name to show with the position.
        """
        pos = self.positions.key(path) if key else None
        if pos is None:
            pos = self.positions.get(path) or self.positions.nearest(path)[1]
        return Location(file=self.path, line=pos[0], col=pos[1], path=path or None, device=device, port=port)


def _issue_finding(issue: YamlIssue, file: str) -> Finding:
    return Finding(rule=issue.rule, severity=Severity.error, message=issue.message, fix=issue.fix,
                   location=Location(file=file, line=issue.line, col=issue.col, path=issue.path or None))


def _sort_key(f: Finding) -> tuple[int, int, str, str]:
    return (f.location.line or 0, f.location.col or 0, f.rule, f.message)


#: Largest inventory read at all: ~7x the 4,096-host x 8-NIC benchmark inventory (9.5 MB, block style);
#: bigger files are refused before they are read whole (RT001).
MAX_INVENTORY_BYTES = 64 << 20
#: Largest inventory read by the full YAML parser (ruamel.yaml) when the fast reader cannot take it
#: (anchors, tags, tabs, control characters, unusual flow style). ruamel.yaml reads ~150 KB/s with
#: positions (a 1 MB flow list took 18-38 s on a loaded machine, 20 MB over 300 s); 512 KiB keeps the
#: worst case to a few seconds. Plain block or flow style has no such limit below MAX_INVENTORY_BYTES.
MAX_FULL_YAML_BYTES = 512 << 10


def _too_big(size: int | None, limit: int, why: str) -> YamlSyntaxError:
    what = f"is {size:,} bytes, more than" if size is not None else "is larger than"
    return YamlSyntaxError(YamlIssue(
        "RT001", f"the inventory {what} the {limit:,} bytes {why}",
        "split the fabric into several inventories, or write it in plain block style (no anchors, aliases, "
        "tags, tabs or control characters) so the fast reader takes it", 1, 1))


def parse_yaml(text: str) -> ParseResult:
    """Data + positions for ``text``: the fast reader if it accepts the text, else ruamel.yaml.

    Raises:
        YamlSyntaxError: RT001 / RT004; RT001 also for text above :data:`MAX_INVENTORY_BYTES`, or above
            :data:`MAX_FULL_YAML_BYTES` when only the full YAML parser can read it.
    """
    # UTF-8 bytes, as the limits are documented; len() alone counts characters (an "é" is 2 bytes, a "–" 3)
    size = len(text) if text.isascii() else len(text.encode("utf-8", "surrogatepass"))
    if size > MAX_INVENTORY_BYTES:
        raise _too_big(size, MAX_INVENTORY_BYTES, "roce-tune reads")
    result = fast_parse(text)
    if result is not None:
        return result
    if size > MAX_FULL_YAML_BYTES:
        raise _too_big(size, MAX_FULL_YAML_BYTES,
                       "roce-tune reads with full YAML (the file uses YAML features outside its fast "
                       "reader: anchors, aliases, tags, tabs, control characters or unusual flow style)")
    return compose_ruamel(text)


def _load(text: str, file: str, digest: str) -> LoadedInventory:
    # building ~10^6 small objects: the cyclic GC would run hundreds of times for nothing (gcpause)
    with gc_paused():
        try:
            parsed = parse_yaml(text)
        except YamlSyntaxError as exc:
            raise RoceTuneError([_issue_finding(exc.issue, file)]) from None
        index = PositionIndex(parsed.root_line, parsed.root_col, parsed.pos)
        findings = [_issue_finding(i, file) for i in parsed.issues]
        inventory: Inventory | None = None
        data = parsed.data
        if isinstance(data, dict) and data.get("fabric") is not None and not findings:
            data, index = _expanded(data, parsed, index, file)
        try:
            inventory = Inventory.model_validate(data)
        except ValidationError as exc:
            findings.extend(schema_findings(exc, data, index, file, parsed.bad_paths))
        except Exception as exc:  # noqa: BLE001 - a validator bug must still end in a finding
            findings.append(unexpected_finding(exc, file))
        if findings or inventory is None:
            raise RoceTuneError(sorted(findings, key=_sort_key)
                                or [unexpected_finding(ValueError("no data"), file)])
        return LoadedInventory(path=file, text=text, sha256=digest, inventory=inventory, positions=index)


def _expanded(data: dict[str, object], parsed: ParseResult, index: PositionIndex,
              file: str) -> tuple[dict[str, object], PositionIndex]:
    """The document with its ``fabric:`` intent expanded (:mod:`roce_tune.inventory.intent`) and a
    position index in which every expanded value points at the intent line it came from.

    Raises:
        RoceTuneError: RT003 for an invalid intent section, RT007 for one that cannot be expanded.
    """
    # imported here: a full-form inventory (no ``fabric:``) never needs the intent module
    from roce_tune.inventory.intent import IntentError, expand_document
    from roce_tune.inventory.intent import finding as intent_finding

    located: dict[str, tuple[int, int]] = {}

    def locate(path: str) -> tuple[int, int]:
        # memoised: an expansion asks for the same few intent fields once per generated element (~200k
        # times at 4,096 hosts), each a path parse and tree walk
        try:
            return located[path]
        except KeyError:
            pos = located[path] = index.get(path) or index.nearest(path)[1]
            return pos

    try:
        new_data, tree = expand_document(data, parsed.pos, locate)
    except ValidationError as exc:
        raise RoceTuneError(sorted(schema_findings(exc, {"fabric": data["fabric"]}, index, file,
                                                   parsed.bad_paths), key=_sort_key)) from None
    except IntentError as err:
        raise RoceTuneError([intent_finding(err, file, locate)]) from None
    return new_data, PositionIndex(parsed.root_line, parsed.root_col, tree)


def load_inventory_text(text: str, filename: str = "<string>") -> LoadedInventory:
    """Load an inventory from a string (tests, stdin, generated inventories).

    Args:
        text: YAML text.
        filename: name used in findings' locations.

    Raises:
        RoceTuneError: with every RT001–RT006 finding (each with line and col).
    """
    digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
    return _load(text, filename, digest)


def load_inventory(path: str | Path) -> LoadedInventory:
    """Read, parse and validate the inventory file at ``path``.

    Raises:
        RoceTuneError: RT005 when the file cannot be read, RT001 when it is not UTF-8, and every
            finding of :func:`load_inventory_text` otherwise.
    """
    file = str(path)
    try:
        with open(path, "rb") as fh:  # never read more than the cap (a multi-GB file or /dev/zero)
            raw = fh.read(MAX_INVENTORY_BYTES + 1)
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        raise RoceTuneError([Finding(
            rule="RT005", severity=Severity.error, message=f"cannot read the inventory: {reason}",
            fix="check the path and the file's permissions", location=Location(file=file))]) from None
    if len(raw) > MAX_INVENTORY_BYTES:
        raise RoceTuneError([
            _issue_finding(_too_big(None, MAX_INVENTORY_BYTES, "roce-tune reads").issue, file)])
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        col = len(raw[raw.rfind(b"\n", 0, exc.start) + 1: exc.start].decode("utf-8", "replace")) + 1
        raise RoceTuneError([Finding(
            rule="RT001", severity=Severity.error,
            message=f"the file is not UTF-8 text (byte 0x{raw[exc.start]:02x} cannot be decoded)",
            fix="save the file as UTF-8", location=Location(file=file, line=line, col=col))]) from None
    return _load(text, file, hashlib.sha256(raw).hexdigest())


def full_form_data(path: str | Path) -> dict[str, object]:
    """The inventory at ``path`` as plain data in full form: its ``fabric:`` intent expanded into
    ``switches``/``links``/``hosts`` and removed (what ``roce-tune expand`` prints). A full-form file
    comes back as loaded.

    Raises:
        RoceTuneError: every finding :func:`load_inventory` raises for the file.
    """
    loaded = load_inventory(path)  # all validation, with positions
    parsed = parse_yaml(loaded.text)
    index = PositionIndex(parsed.root_line, parsed.root_col, parsed.pos)
    data = parsed.data
    if isinstance(data, dict) and data.get("fabric") is not None:
        data, _ = _expanded(data, parsed, index, loaded.path)
    return {k: v for k, v in data.items() if k != "fabric"}


__all__ = ["LOADER_RULES", "MAX_FULL_YAML_BYTES", "MAX_INVENTORY_BYTES", "LoadedInventory", "full_form_data",
           "load_inventory", "load_inventory_text", "parse_yaml"]
