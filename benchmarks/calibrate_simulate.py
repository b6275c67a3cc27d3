"""Print the calibration table: simulated medians vs the reference file, row by row.

Usage: python benchmarks/calibrate_simulate.py [REFERENCE.md] [--seeds N]
(REFERENCE: the file or the references folder holding SIMULATION-REFERENCE.md, default $ROCE_TUNE_REFERENCES,
else ../shared; seeds default to the reference's).
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

from roce_tune.simulate.reference import load_reference, simulate_row


def main() -> None:
    ap = argparse.ArgumentParser()
    default = os.environ.get("ROCE_TUNE_REFERENCES", str(Path(__file__).resolve().parents[2] / "shared"))
    ap.add_argument("reference", nargs="?", default=default,
                    help="the file, or the references folder holding it")
    ap.add_argument("--seeds", type=int, default=None)
    args = ap.parse_args()
    path = Path(args.reference)
    ref = load_reference(path / "SIMULATION-REFERENCE.md" if path.is_dir() else path)
    t0 = time.perf_counter()
    for row in ref.rows:
        t = time.perf_counter()
        sim = simulate_row(ref, row, args.seeds)
        cells = [f"({lab}) {sim[lab][0]:5.1f} vs {row.value[lab]:5.1f} · {sim[lab][1]:6.1f} vs "
                 f"{row.pfc_ms[lab]:5.1f}"
                 for lab in row.value]
        worst = max(abs(sim[lab][0] - row.value[lab]) for lab in row.value)
        print(f"| {row.id} | " + " | ".join(cells) + f" | max |diff| {worst:.1f} | "
              f"{time.perf_counter() - t:.1f} s |",
              flush=True)
    print(f"total {time.perf_counter() - t0:.1f} s")


if __name__ == "__main__":
    main()
