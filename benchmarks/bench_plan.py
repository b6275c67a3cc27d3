"""Benchmark: the real ``roce-tune plan`` command on synthetic rail-optimised fabrics (issue 16 targets).

Usage::

    python benchmarks/bench_plan.py --hosts 256 1024          # each size: full plan, unchanged re-plan,
                                                              # re-plan after one cable length change
    python benchmarks/bench_plan.py --hosts 4096 --nice 10    # be kind to a shared machine
    python benchmarks/bench_plan.py --hosts 4096 --repeat 5   # a noisy machine: each figure the least of 5
    python benchmarks/bench_plan.py --hosts 256 --scorecards  # include the simulator scorecards

First it byte-compiles roce_tune (as ``pip install`` does; ``--no-compile`` skips it). For every size it
writes the fabric's intent form (:func:`roce_tune.inventory.synthetic.rail_optimised_intent`: N hosts x 8
NICs at 400G, SN5600 leaves/spines/superspines), expands it with ``roce-tune expand --out`` into the full
form (so one NIC's cable can be changed), then runs ``roce-tune plan --timings`` as a child process pinned
to one core (``taskset -c CORE`` when available) three times into the same output directory:

1. ``full``      a new output directory (every file written);
2. ``unchanged`` the same inventory again (nothing should be written);
3. ``cable``     after one NIC's cable_length changed (3m -> 40m): only that leaf's, that host's and the
   plan's files should be written, every other file hard-linked from the version in force.

Then, in this process, the write stage alone: the same files again, one switch file changed, and back
(``write-only`` lines: what the manifest scheme costs when one file differs); then, each as a child pinned
to the same core, ``roce-tune lint``, ``roce-tune explain`` of one value (the changed NIC's leaf port,
``xoff_bytes``) and reading plan.json back (``plan_from_json``; the child's CPU includes the interpreter's
start and imports).

Prints one line per run: CPU seconds (user + sys of the child, from ``wait4``), wall seconds, peak RSS (MB)
of the child, the per-stage times from ``--timings`` and files written/linked/removed, then the output size,
and one ``targets`` line per size: every issue-16 figure with its target (``ok`` / ``MISS``; the targets are
for 4,096 hosts, so smaller sizes only show the trend) and the CPU per device of the full plan (flat = no
size-dependent cost). With ``--repeat N`` every measured command runs N times (the full plan into a new
directory each time, the cable re-plan changing the cable there and back) and each figure is the least CPU
of its runs: on a shared virtual machine the same command's CPU time varies by a third from run to run.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

import yaml  # noqa: E402

from roce_tune.inventory.synthetic import rail_optimised_intent  # noqa: E402


def _prefix(core: int, nice: int) -> list[str]:
    cmd = ["taskset", "-c", str(core)] if shutil.which("taskset") else []
    return cmd + (["nice", "-n", str(nice)] if nice else [])


def _run(cmd: list[str], env: dict[str, str]) -> tuple[float, float, float, str]:
    """Run ``cmd``; (cpu seconds, wall seconds, peak RSS MB, stderr). Raises on a non-zero exit."""
    t0 = time.perf_counter()
    with tempfile.TemporaryFile() as err_file:
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=err_file, env=env)
        _, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
        wall = time.perf_counter() - t0
        err_file.seek(0)
        stderr = err_file.read().decode(errors="replace")
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} exited {proc.returncode}:\n{stderr[-4000:]}")
    return usage.ru_utime + usage.ru_stime, wall, usage.ru_maxrss / 1024, stderr


def _one_cable_changed(full: Path, back: bool = False) -> None:
    """Change the first host NIC's cable_length (3m -> 40m; ``back``: 40m -> 3m) in the full-form inventory,
    in place."""
    text = full.read_text(encoding="utf-8")
    hosts_at = text.index("\nhosts:\n")
    head, tail = text[:hosts_at], text[hosts_at:]
    old, new = ("40m", "3m") if back else ("3m", "40m")
    new_tail, n = re.subn(rf"cable_length: {old}\}}", f"cable_length: {new}}}", tail, count=1)
    if n != 1:
        raise RuntimeError(f"{full}: no host NIC with cable_length: {old} to change")
    full.write_text(head + new_tail, encoding="utf-8")


def _tree_mb(path: Path) -> float:
    seen: set[int] = set()
    total = 0
    for p in path.rglob("*"):
        if p.is_file() and not p.is_symlink():
            st = p.stat()
            if st.st_ino not in seen:
                seen.add(st.st_ino)
                total += st.st_size
    return total / 1e6


def _writer_only(n_hosts: int, out: Path) -> None:
    """The write stage alone (in this process): the plan in force again, then with one switch file changed,
    then back; isolates the manifest + hard-link scheme from what the renderer puts in every file."""
    from roce_tune.plandir import read_tree, write_tree_stats

    files = read_tree(out)
    one = next(rel for rel in files if rel.startswith("switches/"))
    for label, variant in (("same", files), ("one-file", {**files, one: files[one] + "\n"}), ("back", files)):
        cpu, wall = time.process_time(), time.perf_counter()
        _, stats = write_tree_stats(variant, out)
        print(f"write-only hosts={n_hosts} run={label} cpu_s={time.process_time() - cpu:.3f} "
              f"wall_s={time.perf_counter() - wall:.3f} | {stats.describe()}", flush=True)


#: issue 16 targets at 4,096 hosts x 8 NICs: figure -> (limit, unit)
TARGETS: dict[str, tuple[float, str]] = {
    "plan full cpu": (5.0, "s"), "plan unchanged cpu": (1.0, "s"), "plan cable cpu": (1.5, "s"),
    "plan peak rss": (600.0, "MB"), "lint cpu": (2.0, "s"), "explain cpu": (1.0, "s"),
    "plan.json load cpu": (2.0, "s"),
}


def _first_leaf_port(full: Path) -> str:
    """``leaf:port`` of the first host NIC in the full-form inventory."""
    text = full.read_text(encoding="utf-8")
    m = re.search(r'switch_port: "([^"]+)"', text[text.index("\nhosts:\n"):])
    if m is None:
        raise RuntimeError(f"{full}: no host NIC with a switch_port")
    return m.group(1)


def _other_commands(full: Path, out: Path, cli: list[str], prefix: list[str], env: dict[str, str],
                    figures: dict[str, float], n_hosts: int, repeat: int = 1) -> None:
    """lint, explain of one value and plan.json read back, each a child on the pinned core, ``repeat``
    times (the figure: the least CPU)."""
    load_plan = ("import sys; from roce_tune.plan import plan_from_json; "
                 "plan_from_json(open(sys.argv[1], encoding='utf-8').read())")
    runs = {
        "lint": [*cli, "lint", str(full)],
        "explain": [*cli, "explain", str(full), _first_leaf_port(full), "xoff_bytes", "--no-scorecard"],
        "plan.json load": [*prefix, sys.executable, "-c", load_plan, str(out / "plan.json")],
    }
    for label, cmd in runs.items():
        for _ in range(repeat):
            cpu, wall, rss, _ = _run(cmd, env)
            figures[f"{label} cpu"] = min(cpu, figures.get(f"{label} cpu", cpu))
            print(f"{label.replace(' ', '-')} hosts={n_hosts} cpu_s={cpu:.2f} wall_s={wall:.2f} "
                  f"peak_rss_mb={rss:.0f}",
                  flush=True)


def _targets_line(n_hosts: int, figures: dict[str, float], devices: int) -> str:
    parts = []
    for name, (limit, unit) in TARGETS.items():
        if name in figures:
            verdict = "ok" if figures[name] <= limit else "MISS"
            shown = f"{figures[name]:.0f}" if unit == "MB" else f"{figures[name]:.2f}"
            parts.append(f"{name} {shown}{unit} (<= {limit:g}{unit} {verdict})")
    per_device_ms = 1000 * figures["plan full cpu"] / devices
    return (f"targets hosts={n_hosts}: " + "; ".join(parts)
            + f"; full-plan cpu per device {per_device_ms:.2f} ms")


def bench(n_hosts: int, args: argparse.Namespace, env: dict[str, str]) -> None:
    work = Path(tempfile.mkdtemp(prefix=f"bench-plan-{n_hosts}-"))
    try:
        intent = work / "intent.yaml"
        intent.write_text(yaml.safe_dump(rail_optimised_intent(n_hosts, site=f"bench{n_hosts}"),
                                         sort_keys=False))
        full = work / f"bench{n_hosts}.yaml"
        cli = [*_prefix(args.core, args.nice), sys.executable, "-m", "roce_tune.cli"]
        _run([*cli, "expand", str(intent), "--out", str(full)], env)
        plan = [*cli, "plan", str(full), "--out", str(work / "out"), "--timings",
                *([] if args.scorecards else ["--no-scorecard"])]
        figures: dict[str, float] = {}
        for k in range(1, args.repeat):  # more full plans, each into a new directory
            cpu, wall, rss, _ = _run([*plan[:plan.index("--out") + 1], str(work / f"full{k}"),
                                      *plan[plan.index("--out") + 2:]], env)
            shutil.rmtree(work / f"full{k}")
            figures["plan full cpu"] = min(cpu, figures.get("plan full cpu", cpu))
            figures["plan peak rss"] = max(figures.get("plan peak rss", 0.0), rss)
            print(f"plan hosts={n_hosts} run=full cpu_s={cpu:.2f} wall_s={wall:.2f} peak_rss_mb={rss:.0f}",
                  flush=True)
        runs = ["full"] + ["unchanged"] * args.repeat + ["cable"] * args.repeat
        for i, run in enumerate(runs):
            if run == "cable":  # 3m -> 40m, then back, ...: each run one cable change
                _one_cable_changed(full, back=(i - 1 - args.repeat) % 2 == 1)
            cpu, wall, rss, stderr = _run(plan, env)
            figures[f"plan {run} cpu"] = min(cpu, figures.get(f"plan {run} cpu", cpu))
            figures["plan peak rss"] = max(figures.get("plan peak rss", 0.0), rss)
            timings = next((line for line in stderr.splitlines() if line.startswith("timings ")),
                           "timings: ?")
            print(f"plan hosts={n_hosts} run={run} cpu_s={cpu:.2f} wall_s={wall:.2f} peak_rss_mb={rss:.0f} "
                  f"| {timings}", flush=True)
        _writer_only(n_hosts, work / "out")
        print(f"plan hosts={n_hosts} output_mb={_tree_mb(work / 'out'):.0f} "
              f"files={sum(1 for p in (work / 'out').rglob('*') if p.is_file())}", flush=True)
        _other_commands(full, work / "out", cli, _prefix(args.core, args.nice), env, figures, n_hosts,
                        args.repeat)
        devices = n_hosts + sum(1 for _ in (work / "out" / "switches").iterdir())
        print(_targets_line(n_hosts, figures, devices), flush=True)
    finally:
        if args.keep:
            print(f"kept {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)


def _compile_bytecode() -> None:
    """Byte-compile roce_tune (``__pycache__``, as ``pip install`` does for an installed package), so the
    figures are those of an installation and not of recompiling the sources in every run when the
    environment sets ``PYTHONDONTWRITEBYTECODE`` (the children only read the bytecode)."""
    import compileall

    ok = compileall.compile_dir(str(REPO / "roce_tune"), quiet=1)
    print(f"bytecode: roce_tune compiled first ({'ok' if ok else 'with errors'}; --no-compile to skip)",
          flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--hosts", type=int, nargs="+", default=[256, 1024], help="fabric sizes (hosts x 8 NICs)")
    ap.add_argument("--core", type=int, default=0, help="CPU core to pin the command to (taskset -c)")
    ap.add_argument("--nice", type=int, default=0, help="run the command under nice -n N")
    ap.add_argument("--scorecards", action="store_true", help="include the simulator scorecards in plan.md")
    ap.add_argument("--keep", action="store_true", help="keep the work directory")
    ap.add_argument("--repeat", type=int, default=1,
                    help="run the full plan, the unchanged and cable re-plans, lint, explain and the "
                         "plan.json load N times each; the targets line takes each one's least CPU (on a "
                         "shared or throttled machine the least is the run least disturbed, as timeit "
                         "reports) and the greatest peak RSS")
    ap.add_argument("--no-compile", action="store_true",
                    help="do not byte-compile roce_tune first (then a PYTHONDONTWRITEBYTECODE environment "
                         "recompiles every module in every run, ~0.08 s a command)")
    args = ap.parse_args()
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    if not args.no_compile:
        _compile_bytecode()
    for n in args.hosts:
        bench(n, args, env)


if __name__ == "__main__":
    main()
