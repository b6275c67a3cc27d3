"""The ``-J/--output_file x.json`` file of nccl-tests (``src/util.cu``, JSON_FILE_VERSION 1-3).

A file cut short keeps its head and every complete result object (:func:`_salvage_json`).
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

from roce_tune.verify.nccl.facts import RunFacts, collective_from_program, nccl_version_from_code
from roce_tune.verify.nccl.model import NcclResult, NcclRow

_LAUNCH_ENV = re.compile(r"^(OMPI_COMM_WORLD_SIZE|PMI_SIZE|PMIX_SIZE|SLURM_STEP_NUM_TASKS)=(\d+)$")


def _jnum(v: object) -> float | None:
    if isinstance(v, bool) or v is None:
        return None
    try:
        f = float(v)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return None
    return None if math.isnan(f) or math.isinf(f) else f


def _jfalse(v: object) -> bool:
    return v is False or (isinstance(v, str) and v.strip().lower() == "false")


def _jresult(d: object) -> NcclResult | None:
    if not isinstance(d, dict):
        return None
    wrong = _jnum(d.get("nwrong"))
    return NcclResult(time_us=_jnum(d.get("time", d.get("cpu_time"))), algbw_gbps=_jnum(d.get("alg_bw")),
                      busbw_gbps=_jnum(d.get("bus_bw")), wrong=None if wrong is None else int(wrong))


def _salvage_json(text: str) -> dict[str, Any] | None:
    """Recover a JSON file cut short (nccl-tests writes it as it goes): head + complete results."""
    m = re.search(r'"results"\s*:\s*\[', text)
    head_txt = (text[:m.start()] if m else text).rstrip().rstrip(",")
    doc: dict[str, Any] = {}
    for closing in ("}", "]}}", "}}", "]}"):
        try:
            doc = json.loads(head_txt + closing)
            break
        except json.JSONDecodeError:
            continue
    if m is None:
        return doc if doc.get("config") or "nccl_version" in doc else None
    dec, pos, results = json.JSONDecoder(), m.end(), []
    while True:
        while pos < len(text) and text[pos] in " \t\r\n,":
            pos += 1
        if pos >= len(text) or text[pos] == "]":
            break
        try:
            obj, pos = dec.raw_decode(text, pos)
        except json.JSONDecodeError:
            break
        results.append(obj)
    doc["results"] = results
    tail = text[pos:]
    if o := re.search(r'"out_of_bounds"\s*:\s*\{\s*"count"\s*:\s*(\d+)', tail):
        doc["out_of_bounds"] = {"count": int(o.group(1))}
    if a := re.search(r'"average_bus_bandwidth"\s*:\s*\{\s*"bandwidth"\s*:\s*"?([^,"}\s]+)"?'
                      r'(?:\s*,\s*"okay"\s*:\s*"?(\w+))?', tail):
        doc["average_bus_bandwidth"] = {"bandwidth": a.group(1), "okay": a.group(2)}
    doc["_truncated"] = True
    return doc


def _json_config(b: RunFacts, doc: dict[str, Any]) -> None:
    """``config`` (validation, the ranks' devices) and ``env`` (the launcher's process count)."""
    cfg: dict[str, Any] = doc["config"] if isinstance(doc.get("config"), dict) else {}
    b.validation = cfg.get("validation") if isinstance(cfg.get("validation"), int) else None
    for d in cfg.get("devices") or []:
        if isinstance(d, dict) and isinstance(d.get("rank"), int):
            b.ranks.append((d["rank"], int(d.get("pid") or 0), str(d.get("hostname", "?")),
                            int(d.get("device") or 0)))
    for e in doc.get("env") or []:
        if isinstance(e, str) and (m := _LAUNCH_ENV.match(e)):
            b.launcher_np = int(m.group(2))


def _json_row(r: dict[str, Any]) -> NcclRow:
    """One ``results`` object; KeyError/TypeError/ValueError/AttributeError when it is not one."""
    root_s = str(r.get("root", "")).strip()
    return NcclRow(
        size_bytes=int(r["size"]), count=int(r["count"]), type=str(r.get("type", "?")),
        redop=str(r.get("redop") or "").strip() or None,
        root=int(root_s) if re.fullmatch(r"-?\d+", root_s) else None,
        out_of_place=_jresult(r.get("out_of_place")), in_place=_jresult(r.get("in_place")))


def _json_summary(b: RunFacts, doc: dict[str, Any]) -> None:
    """``out_of_bounds``, ``average_bus_bandwidth``, ``errors`` and the cut-short mark."""
    if isinstance(oob := doc.get("out_of_bounds"), dict):
        b.oob, b.oob_lines, b.complete = int(oob.get("count") or 0), 1, True
    if isinstance(avg := doc.get("average_bus_bandwidth"), dict):
        b.avg, b.avg_lines, b.complete = _jnum(avg.get("bandwidth")), 1, True
        b.avg_failed = _jfalse(avg.get("okay"))
    for e in doc.get("errors") or []:
        if isinstance(e, str) and e.strip():
            b.notes.append(f"NCCL reported: {e.strip()[:160]}")
    if doc.get("_truncated"):
        b.notes.append("JSON file cut short: kept the complete result objects")


def _json_run(doc: dict[str, Any], source: str) -> RunFacts:
    b = RunFacts(source=source, line=1, format="json", structural=True, headers=1)
    args = doc.get("args") or []
    if args and isinstance(args[0], str):
        b.name(collective_from_program(args[0]), "header")
    if isinstance(doc.get("nccl_version"), int):
        b.nccl_version = nccl_version_from_code(doc["nccl_version"])
    _json_config(b, doc)
    for i, r in enumerate(doc.get("results") or []):
        try:
            b.rows.append(_json_row(r))
        except (KeyError, TypeError, ValueError, AttributeError):
            b.notes.append(f"results[{i}] not understood, skipped")
    _json_summary(b, doc)
    return b


def parse_json(text: str, source: str) -> list[RunFacts]:
    """The runs of an nccl-tests ``-J`` JSON file (one or more documents, possibly cut short: every
    complete result object is kept). ``source`` names the file in the facts. Bandwidths in GB/s as
    nccl-tests writes them (``src/util.cu``, JSON_FILE_VERSION 1-3). Never raises on bad input: JSON
    that is not an nccl-tests result is skipped, a truncated document keeps its complete results."""
    dec, pos = json.JSONDecoder(), 0
    docs: list[object] = []  # decoded JSON values; only nccl-tests result objects are kept
    while pos < len(text):
        while pos < len(text) and text[pos] in " \t\r\n,":
            pos += 1
        if pos >= len(text):
            break
        try:
            obj, pos = dec.raw_decode(text, pos)
        except json.JSONDecodeError:
            if text[pos] != "{":
                break
            obj, pos = _salvage_json(text[pos:]), len(text)
        docs.extend(obj if isinstance(obj, list) else [obj])
    return [_json_run(d, source) for d in docs if isinstance(d, dict) and _is_nccl_json(d)]


def _is_nccl_json(d: dict[str, Any]) -> bool:
    res = d.get("results")
    if "results" in d and not isinstance(res, list):
        return False
    res = res or []
    if "nccl_version" in d or isinstance(d.get("config"), dict):
        return "results" in d or "config" in d
    return bool(res) and all(isinstance(x, dict) and "size" in x and "count" in x for x in res)
