"""Benchmark: the real ``roce-tune plan`` command on synthetic rail-optimised fabrics (issue 16 targets).

Usage::

    python benchmarks/bench_plan.py --hosts 256 1024          # each size: full plan, unchanged re-plan,
                                                              # re-plan after one cable length change
    python benchmarks/bench_plan.py --hosts 4096 --nice 10    # be kind to a shared machine
    python benchmarks/bench_plan.py --hosts 256 --scorecards  # include the simulator scorecards

For every size it writes the fabric's intent form (:func:`roce_tune.inventory.synthetic.rail_optimised_intent`:
N hosts x 8 NICs at 400G, SN5600 leaves/spines/superspines), expands it with ``roce-tune expand --out`` into
the full form (so one NIC's cable can be changed), then runs ``roce-tune plan --timings`` as a child
process pinned to one core (``taskset -c CORE`` when available) three times into the same output directory:

1. ``full``      a new output directory (every file written);
2. ``unchanged`` the same inventory again (nothing should be written);
3. ``cable``     after one NIC's cable_length changed (3m -> 40m): only that leaf's, that host's and the
   plan's files should be written, every other file hard-linked from the version in force.

Then, in this process, the write stage alone: the same files again, one switch file changed, and back
(``write-only`` lines: what the manifest scheme costs when one file differs).

Prints one line per run: CPU seconds (user + sys of the child, from ``wait4``), wall seconds, peak RSS (MB)
of the child, the per-stage times from ``--timings`` and files written/linked/removed, then the output size.
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


def _one_cable_changed(full: Path) -> None:
    """Change the first host NIC's cable_length (3m -> 40m) in the full-form inventory, in place."""
    text = full.read_text(encoding="utf-8")
    hosts_at = text.index("\nhosts:\n")
    head, tail = text[:hosts_at], text[hosts_at:]
    new_tail, n = re.subn(r"cable_length: 3m\}", "cable_length: 40m}", tail, count=1)
    if n != 1:
        raise RuntimeError(f"{full}: no host NIC with cable_length: 3m to change")
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


def bench(n_hosts: int, args: argparse.Namespace, env: dict[str, str]) -> None:
    work = Path(tempfile.mkdtemp(prefix=f"bench-plan-{n_hosts}-"))
    try:
        intent = work / "intent.yaml"
        intent.write_text(yaml.safe_dump(rail_optimised_intent(n_hosts, site=f"bench{n_hosts}"), sort_keys=False))
        full = work / f"bench{n_hosts}.yaml"
        cli = [*_prefix(args.core, args.nice), sys.executable, "-m", "roce_tune.cli"]
        _run([*cli, "expand", str(intent), "--out", str(full)], env)
        plan = [*cli, "plan", str(full), "--out", str(work / "out"), "--timings",
                *([] if args.scorecards else ["--no-scorecard"])]
        for run in ("full", "unchanged", "cable"):
            if run == "cable":
                _one_cable_changed(full)
            cpu, wall, rss, stderr = _run(plan, env)
            timings = next((line for line in stderr.splitlines() if line.startswith("timings ")), "timings: ?")
            print(f"plan hosts={n_hosts} run={run} cpu_s={cpu:.2f} wall_s={wall:.2f} peak_rss_mb={rss:.0f} "
                  f"| {timings}", flush=True)
        _writer_only(n_hosts, work / "out")
        print(f"plan hosts={n_hosts} output_mb={_tree_mb(work / 'out'):.0f} "
              f"files={sum(1 for p in (work / 'out').rglob('*') if p.is_file())}", flush=True)
    finally:
        if args.keep:
            print(f"kept {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--hosts", type=int, nargs="+", default=[256, 1024], help="fabric sizes (hosts x 8 NICs)")
    ap.add_argument("--core", type=int, default=0, help="CPU core to pin the command to (taskset -c)")
    ap.add_argument("--nice", type=int, default=0, help="run the command under nice -n N")
    ap.add_argument("--scorecards", action="store_true", help="include the simulator scorecards in plan.md")
    ap.add_argument("--keep", action="store_true", help="keep the work directory")
    args = ap.parse_args()
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    for n in args.hosts:
        bench(n, args, env)


if __name__ == "__main__":
    main()
