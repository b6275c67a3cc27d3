"""``verify-report.md`` / ``verify-report.json`` / ``busbw.png``: what was run, what it measured, what
is wrong and what to change, per iteration. Bandwidths are GB/s as nccl-tests prints them; the line
rate is Gb/s (the JSON ``units`` map says so)."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from roce_tune.atomic import write_text_atomic
from roce_tune.verify.adjust import Iteration, LoopResult
from roce_tune.verify.counters import HostNicCounters
from roce_tune.verify.diagnose import CheckResult
from roce_tune.verify.hostfacts import NicFacts
from roce_tune.verify.measure import Measurement
from roce_tune.verify.observation import Diagnosis
from roce_tune.verify.signals import DISCARD_COUNTERS, LOSS_COUNTERS, fabric_signals, host_signals

#: /2: busbw keys end in ``_gbytes_per_s`` (GB/s); /1 named them ``*_gbps``, the suffix of ``line_rate_gbps``
#: (Gb/s): one suffix for two units 8x apart
REPORT_SCHEMA = "roce-tune.verify-report/2"
UNITS = {"busbw_gbytes_per_s": "GB/s (10^9 bytes/s), as printed by nccl-tests",
         "largest_busbw_gbytes_per_s": "GB/s (10^9 bytes/s), busbw at the largest message",
         "line_rate_gbps": "Gb/s (NIC line rate)",
         "fraction": "busbw_gbytes_per_s x 8 / line_rate_gbps", "size_bytes": "bytes",
         "counters": "deltas over the run",
         "pause_us": "microseconds", "kmin_bytes": "bytes", "rpg_ai_rate_mbps": "Mb/s"}

__all__ = ["REPORT_SCHEMA", "STATUS_EXIT", "not_checked", "plot_busbw", "report_dict", "report_markdown",
           "write_report"]


def _nic_summary(c: HostNicCounters, lossless: list[int]) -> dict[str, Any]:
    """One NIC's figures over the run; ``None`` (never 0) for what was not read: every ethtool figure when
    ``ethtool -S`` gave no delta, each hw_counters figure whose counter has no delta."""
    s = host_signals(c, lossless)
    eth, hw = bool(c.ethtool), c.hw

    def read(value: object, known: bool) -> object:
        return value if known else None
    return {
        "tx_packets_by_priority": read({p: n for p, n in s.tx_by_prio.items() if n}, eth),
        "rx_packets_by_priority": read({p: n for p, n in s.rx_by_prio.items() if n}, eth),
        "pfc_pause_rx_frames": read(s.pause_rx_frames, eth), "pause_us": s.pause_us,
        "ecn_marked": read(s.ecn_marked, "np_ecn_marked_roce_packets" in hw),
        "cnp_sent": read(s.cnp_sent, "np_cnp_sent" in hw),
        "cnp_handled": read(s.cnp_handled, "rp_cnp_handled" in hw),
        "loss_events": read(s.loss_events, any(k in hw for k in LOSS_COUNTERS)),
        "discards": read(s.discards, any(k in c.ethtool for k in DISCARD_COUNTERS)), "errors": list(c.errors)}


def _counter_summary(it: Iteration, lossless: list[int], queues: list[int]) -> dict[str, Any]:
    m = it.measurement
    if m is None or m.delta is None:
        return {}
    hosts = {f"{c.host}:{c.netdev}": _nic_summary(c, lossless) for c in m.delta.hosts}
    f = fabric_signals(m.delta, lossless, queues)
    return {"hosts": hosts, "switches": {
        "pfc_tx_frames_by_port": f.pfc_tx_by_port, "ecn_marked_by_port": f.ecn_by_port,
        "lossless_drops_by_port": f.drops_by_port, "watchdog_storms_by_port": f.storms_by_port,
        "unsupported": {s.switch: s.unsupported for s in m.delta.switches if s.unsupported},
        "read": [s.switch for s in m.delta.switches if s.ports],
        "not_read": [s.switch for s in m.delta.switches if not s.ports],
        "errors": {s.switch: s.errors for s in m.delta.switches if s.errors}},
        "resets": list(m.delta.resets), "unread": list(m.delta.unread), "seconds": m.delta.seconds}


def _checks(checks: list[CheckResult]) -> list[dict[str, Any]]:
    return [c.model_dump(mode="json") for c in checks]


def _measured(m: Measurement | None) -> dict[str, Any]:
    """The measurement's part of an iteration row (command, busbw, run status, checks); empty values when
    the iteration was not measured."""
    if m is None:
        return {"command": None, "launcher": None, "fraction": None, "largest_busbw_gbytes_per_s": None,
                "busbw_by_size": [], "run_status": None, "run_problems": [], "traffic_time_s": None,
                "wall_s": None, "checks": []}
    return {"command": m.command, "launcher": m.launcher,
            "fraction": None if m.fraction is None else round(m.fraction, 4),
            "largest_busbw_gbytes_per_s": m.largest_busbw_gbps,
            "busbw_by_size": [{"size_bytes": s, "busbw_gbytes_per_s": b} for s, b in m.busbw_by_size],
            "run_status": m.run.status if m.run else None,
            "run_problems": list(m.run.problems) if m.run else [],
            "traffic_time_s": m.traffic_time_s, "wall_s": m.wall_s, "checks": _checks(m.checks)}


def _iteration_row(it: Iteration, lossless: list[int], queues: list[int]) -> dict[str, Any]:
    """One entry of the report's ``iterations``: the step, its settings, what it measured, the counters."""
    m = it.measurement
    return {
        "index": it.index, "kind": it.kind, "proposal": it.proposal.model_dump() if it.proposal else None,
        "changes": it.changes, "overrides": it.overrides, "settings": it.settings, "applied": it.applied,
        "refused": it.refused, "seconds": it.seconds, **_measured(m),
        "counters": _counter_summary(it, lossless, queues),
        "raw_counters": m.delta.model_dump(mode="json") if m and m.delta else None}


def _passed(final: Iteration, findings: list[dict[str, Any]], meta: dict[str, Any]) -> bool:
    """The final run completed, reached the target (when it ran across the fabric) and no finding is an
    error."""
    m = final.measurement
    if m is None or m.run is None or m.run.status == "failed":
        return False
    fabric = meta.get("launcher") != "ssh"  # ssh: every host ran alone, there is no fabric figure to judge
    if fabric and (m.fraction or 0) < meta["target_ratio"]:
        return False
    return not any(f["severity"] == "error" for f in findings)


#: exit status of ``roce-tune verify`` per report status: incomplete is 2, as ``audit`` exits 2 when it read
#: nothing (not checked is not clean), never 0
STATUS_EXIT = {"pass": 0, "fail": 1, "incomplete": 2}


def not_checked(final: Iteration, as_found: list[Diagnosis]) -> list[str]:
    """What the final run could not check, one line each: a check skipped for want of counters (``check:
    why``, its note's ``not checked: …``), a device whose running values were not read (RT333)."""
    checks = final.measurement.checks if final.measurement else []
    out = [f"{c.check}: {c.note[len('not checked: '):]}" for c in checks
           if c.status == "skip" and c.note.startswith("not checked: ")]
    return out + [f"running values of {d.location.device}: not read" for d in as_found if d.rule == "RT333"]


def _status(passed: bool, unchecked: list[str]) -> str:
    """``fail`` when something checked failed, else ``incomplete`` when something could not be checked, else
    ``pass``."""
    return "fail" if not passed else "incomplete" if unchecked else "pass"


def _findings(final: Iteration, as_found: list[Diagnosis]) -> list[dict[str, Any]]:
    """What the devices ran differently from the plan (or not read), then the final run's diagnoses."""
    checks = final.measurement.checks if final.measurement else []
    return [d.model_dump(mode="json") for d in [*as_found, *(d for c in checks for d in c.diagnoses)]]


def report_dict(*, meta: dict[str, Any], iterations: list[Iteration], loop: LoopResult | None,
                facts: list[NicFacts], pairwise: dict[tuple[str, str], float] | None, lossless: list[int],
                queues: list[int], plot: str | None,
                as_found: list[Diagnosis] | None = None) -> dict[str, Any]:
    """The JSON report (schema :data:`REPORT_SCHEMA`); ``as_found``: what the devices ran before the baseline
    differently from the plan, or could not be read (:mod:`roce_tune.verify.as_found`), first among the
    findings."""
    final = iterations[loop.best_index] if loop else iterations[-1]
    rows = [_iteration_row(it, lossless, queues) for it in iterations]
    findings = _findings(final, as_found or [])
    unchecked = not_checked(final, as_found or [])
    return {
        "schema": REPORT_SCHEMA, "generated_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), **meta,
        "units": UNITS, "status": _status(_passed(final, findings, meta), unchecked),
        "not_checked": unchecked,
        "final_iteration": final.index,
        "commands": [r["command"] for r in rows if r["command"]],
        "facts": [f.model_dump(mode="json") for f in facts],
        "pairwise": {f"{a}+{b}": round(v, 4) for (a, b), v in pairwise.items()} if pairwise else None,
        "iterations": rows, "findings": findings,
        "adjust": None if loop is None else {
            "stop_reason": loop.stop_reason, "best_index": loop.best_index,
            "best_overrides": [o.model_dump(mode="json", exclude_none=True) for o in loop.best_overrides]},
        "plot": plot}


def _fmt_settings(s: dict[str, dict[str, dict[str, object]]]) -> str:
    """One table cell: ECN Kmin/Kmax @Pmax and AI/HAI; a device not read shows as such, never as a value."""
    def v_(v: object) -> str:
        return "?" if v is None else str(v)
    ecn = "; ".join(dict.fromkeys("not read" if v.get("running") == "not read" else
                                  f"{v_(v['kmin_bytes'])}/{v_(v['kmax_bytes'])} B @{v_(v['pmax_percent'])}%"
                                  for v in s.get("ecn", {}).values()))
    ai = sorted({"not read" if v.get("running") == "not read" else
                 f"{v_(v['rpg_ai_rate_mbps'])}/{v_(v['rpg_hai_rate_mbps'])}"
                 for v in s.get("dcqcn", {}).values()})
    # one table cell: the pipe between the ECN and the AI/HAI figures is escaped, as in the column's header
    return f"{ecn or '-'} \\| {', '.join(ai) or '-'}"


def _md_head(rep: dict[str, Any]) -> list[str]:
    """Title, status, what ran against which target, the adjust loop's stop reason and the commands."""
    L = [f"# roce-tune verify — {rep['site']}", "",
         f"* status: **{rep['status'].upper()}** (iteration {rep['final_iteration']})",
         (f"* collective {rep['collective']} via {rep['launcher']} on {', '.join(rep['hosts'])}; line rate "
          f"{rep['line_rate_gbps']:g} Gb/s, target {rep['target_ratio']:.0%} of it at the largest message "
          f"({rep['line_rate_gbps'] * rep['target_ratio'] / 8:.2f} GB/s busbw)"),
         f"* source: `{rep['source']}`; generated {rep['generated_at']}", ""]
    if rep.get("not_checked"):
        L[-1:-1] = ["* not checked (so not a pass):"] + [f"  * {line}" for line in rep["not_checked"]]
    if rep.get("adjust"):
        L += [f"Adjust loop: {rep['adjust']['stop_reason']}.", ""]
    return L + ["## Commands run", "", "```"] + [c for c in dict.fromkeys(rep["commands"])] + ["```", ""]


def _md_iterations(rep: dict[str, Any]) -> list[str]:
    """The per-iteration table (change, settings, busbw, findings' rules) and the plot link."""
    L = ["## Iterations", "",
         ("| # | kind | change | Kmin/Kmax @Pmax \\| AI/HAI Mb/s | busbw GB/s (largest) | "
          "of line rate | findings |"),
         "|---|---|---|---|---|---|---|"]
    for r in rep["iterations"]:
        rules = sorted({d["rule"] for c in r["checks"] for d in c["diagnoses"]})
        change = "; ".join(r["changes"]) or "-"
        frac = "-" if r["fraction"] is None else f"{r['fraction']:.1%}"
        busbw = r["largest_busbw_gbytes_per_s"]
        L.append(f"| {r['index']} | {r['kind']} | {change} | {_fmt_settings(r['settings'])} | "
                 f"{busbw if busbw is not None else '-'} | {frac} | "
                 f"{', '.join(rules) or '-'} |")
    if rep.get("plot"):
        L += ["", f"![busbw vs message size]({rep['plot']})"]
    return L


def _md_finding(d: dict[str, Any]) -> list[str]:
    """One finding: rule, name, severity, where; message, change and evidence (JSON)."""
    where = d["location"].get("device") or ""
    where += f":{d['location']['port']}" if d["location"].get("port") else ""
    return [f"### {d['rule']} {d['name']} ({d['severity']}){' — ' + where if where else ''}", "",
            d["message"], "", f"**Change:** {d['fix']}", "", "Evidence:", "", "```json",
            json.dumps(d["evidence"], indent=1, sort_keys=True), "```", ""]


def _md_findings(rep: dict[str, Any]) -> list[str]:
    """Every finding of the final iteration, or that every check passed."""
    L = ["## Findings", ""]
    if not rep["findings"]:
        L.append("None: every check passed.")
    for d in rep["findings"]:
        L += _md_finding(d)
    return L


def _md_counters(cs: dict[str, Any]) -> list[str]:
    """Counter deltas of the final run: per NIC, then the switches' sums and what they could not read."""
    L = ["", "## Counters (deltas over the final run)", "",
         "| NIC | tx pkts by prio | PFC pauses rx | pause µs | ECN marked | CNP sent/handled | loss events |",
         "|---|---|---|---|---|---|---|"]
    def cell(v: object) -> str:
        return "not read" if v is None else str(v)
    for nic, v in cs["hosts"].items():
        L.append(f"| {nic} | {cell(v['tx_packets_by_priority'])} | {cell(v['pfc_pause_rx_frames'])} | "
                 f"{cell(v['pause_us'])} | {cell(v['ecn_marked'])} | {cell(v['cnp_sent'])}/"
                 f"{cell(v['cnp_handled'])} | {cell(v['loss_events'])} |")
    sw = cs["switches"]
    # a switch of which no port was read adds nothing to the sums: it is named, its figures never shown as 0
    unread = sw.get("not_read", [])
    if unread and not sw.get("read"):
        L += ["", f"Switches: not read ({', '.join(unread)}): no PFC, ECN, drop or watchdog figure."]
    else:
        left_out = f" (not read, not in these sums: {', '.join(unread)})" if unread else ""
        L += ["", (f"Switches{left_out}: PFC tx frames {sw['pfc_tx_frames_by_port'] or 0}; ECN marked "
                   f"{sw['ecn_marked_by_port'] or 0}; lossless drops {sw['lossless_drops_by_port'] or 0}; "
                   f"watchdog storms {sw['watchdog_storms_by_port'] or 0}.")]
    for name, what in sw.get("unsupported", {}).items():
        L.append(f"* {name}: not read: {', '.join(what)}")
    errors = {**{nic: v["errors"] for nic, v in cs["hosts"].items() if v["errors"]}, **sw.get("errors", {})}
    L += [f"* {name}: error: {'; '.join(what)}" for name, what in errors.items()]
    L += [f"* no delta: {u}" for u in cs.get("unread", [])]
    L += [f"* went backwards (cleared or wrapped; the value after the run is counted): {r}"
          for r in cs.get("resets", [])]
    return L


def _md_keep(overrides: list[dict[str, Any]]) -> list[str]:
    """The best iteration's overrides as ``policy.overrides`` YAML to paste into the inventory."""
    L = ["", "## Keep the result", "",
         "Add these to `policy.overrides` of the inventory (then `roce-tune plan`):", "", "```yaml"]
    for o in overrides:
        scope = ", ".join(f"{k}: {o[k]}" for k in ("device", "port") if k in o)
        L.append(f"- {{{scope}, set: {json.dumps(o['set'])}, reason: \"{o.get('reason', '')}\"}}")
    return L + ["```"]


def report_markdown(rep: dict[str, Any]) -> str:
    """Human report from :func:`report_dict`'s output."""
    L = _md_head(rep) + _md_iterations(rep) + [""] + _md_findings(rep)
    final = next(r for r in rep["iterations"] if r["index"] == rep["final_iteration"])
    L += ["", "## Checks (final iteration)", "", "| check | result | note |", "|---|---|---|"]
    L += [f"| {c['check']} | {c['status']} | {c['note']} |" for c in final["checks"]]
    if final["counters"]:
        L += _md_counters(final["counters"])
    if rep.get("pairwise"):
        L += ["", "## Pairwise busbw (fraction of line rate)", ""] + [f"* {k}: {v:.1%}" for k,
                                                                      v in rep["pairwise"].items()]
    if rep.get("adjust") and rep["adjust"]["best_overrides"]:
        L += _md_keep(rep["adjust"]["best_overrides"])
    return "\n".join(L) + "\n"


def plot_busbw(iterations: list[Iteration], path: Path, line_rate_gbps: float, target_ratio: float,
               title: str) -> Path | None:
    """busbw vs message size, one line per measured iteration (matplotlib, Agg backend).

    Returns None when matplotlib is not installed (``pip install roce-tune[verify]``) or nothing was measured.
    """
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    series = [(it, it.measurement.busbw_by_size) for it in iterations if it.measurement
              and it.measurement.busbw_by_size]
    if not series:
        return None
    fig, ax = plt.subplots(figsize=(8, 4.8), dpi=100)
    for it, rows in series:
        ax.plot([s for s, _ in rows], [b for _, b in rows], marker="o", markersize=3,
                label=f"#{it.index} {it.kind}" + (f" ({it.fraction:.0%})" if it.fraction else ""))
    ax.axhline(line_rate_gbps / 8, color="grey", linestyle=":", label=f"line rate {line_rate_gbps:g} Gb/s")
    ax.axhline(line_rate_gbps / 8 * target_ratio, color="red", linestyle="--",
               label=f"target {target_ratio:.0%}")
    top = max([line_rate_gbps / 8] + [b for _, rows in series for _, b in rows])
    ax.set_ylim(0, top * 1.08)
    ax.set_xscale("log", base=2)
    ax.set_xlabel("message size (bytes)")
    ax.set_ylabel("busbw (GB/s)")
    ax.set_title(title)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8, loc="lower right")
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path)
    plt.close(fig)
    return path


def write_report(out_dir: Path, rep: dict[str, Any], outputs: dict[str, str],
                 commands_log: list[str]) -> dict[str, Path]:
    """Write the report files (and raw outputs / the command log) under ``out_dir``; returns their paths.

    Each file is replaced whole or not at all (:func:`roce_tune.atomic.write_text_atomic`): a full disk leaves
    the previous report readable.

    Raises:
        OSError: a file could not be written (the ones before it are written, the rest keep their old text).
    """
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = {"json": out_dir / "verify-report.json", "md": out_dir / "verify-report.md",
             "commands": out_dir / "commands.txt"}
    write_text_atomic(paths["json"], json.dumps(rep, indent=2, sort_keys=True, default=str) + "\n")
    write_text_atomic(paths["md"], report_markdown(rep))
    write_text_atomic(paths["commands"], "\n".join(commands_log) + "\n")
    for name, text in outputs.items():
        write_text_atomic(out_dir / name, text)
    return paths
