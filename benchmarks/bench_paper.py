"""A whole paper at one scale, from an empty store, then again with everything stored.

Runs the multirun ``privpub reproduce <paper> --scale <scale>`` prints, in a fresh results
directory and (unless ``--warm-cache``) a fresh disk cache (``PRIVPUB_CACHE_DIR``), times the
whole process, reruns it to time the fully-stored case, and prints the per-experiment
timing table (``results/timings.md``) with the wall times beside the targets (docs/timings.md).

    python benchmarks/bench_paper.py day2016 --scale paper --n-jobs 2
    python benchmarks/bench_paper.py qardaji2012 --scale paper --keep /tmp/q   # keep results

Needs the data directory (``PRIVPUB_DATA_DIR``) for real-data scales.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from privpub.experiments.console import reproduce_command  # noqa: E402

#: the targets for a run from an empty store on 2 cores (seconds)
TARGETS = {("day2016", "paper"): 30 * 60, ("qardaji2012", "paper"): 10 * 60,
           # "every paper issue landing later keeps within the same 30 minutes"
           ("epasto2022", "paper"): 30 * 60, ("sala2011", "paper"): 30 * 60,
           ("farias2021", "paper"): 30 * 60}
RERUN_TARGET = 10.0


def timed(command: list[str], env: dict) -> tuple[float, int]:
    start = time.perf_counter()
    code = subprocess.call(command, cwd=ROOT, env=env, stdout=subprocess.DEVNULL)
    return time.perf_counter() - start, code


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("paper", help="a paper key (day2016, qardaji2012, ...) or all")
    parser.add_argument("--scale", default="paper", choices=["smoke", "small", "paper"])
    parser.add_argument("--n-jobs", type=int, default=2)
    parser.add_argument("--keep", type=Path, help="results directory to use and keep")
    parser.add_argument("--warm-cache", action="store_true",
                        help="use the user's disk cache instead of a fresh one")
    args = parser.parse_args()

    results = args.keep or Path(tempfile.mkdtemp(prefix="privpub-bench-"))
    env = dict(os.environ)
    if not args.warm_cache:
        env["PRIVPUB_CACHE_DIR"] = str(results / ".bench-cache")
    multirun = reproduce_command(args.paper, args.scale,
                                 [f"n_jobs={args.n_jobs}", f"results_dir={results}",
                                  "progress=false"])
    command = [sys.executable, str(ROOT / "run.py"), *multirun[2:]]  # = privpub run ...
    print(" ".join(command))
    first, code = timed(command, env)
    again, code2 = timed(command, env)
    from privpub.plots.timings import write_timings

    print((write_timings(results)).read_text())
    target = TARGETS.get((args.paper, args.scale))
    print(f"empty store: {first / 60:.1f} min (exit {code})"
          + (f"; target {target / 60:.0f} min, ratio {first / target:.2f}" if target else ""))
    print(f"everything stored: {again:.1f} s (exit {code2}); target {RERUN_TARGET:.0f} s, "
          f"ratio {again / RERUN_TARGET:.2f}")
    print(f"results: {results}")
    return max(code, code2)


if __name__ == "__main__":
    sys.exit(main())
