"""Every task's leaderboard from an empty store: wall time, CPU time (this process and its
workers) and trials per leaderboard.

Usage::

    python benchmarks/bench_leaderboard.py --scale small --results-dir /tmp/lb --n-jobs 2

The results directory must be empty or absent (a stored trial would be reused, not timed);
``PRIVPUB_CACHE_DIR`` should point to an empty directory too. The target: every task
at ``--scale small`` in under 15 minutes on 2 cores. The per-task table it prints is what
docs/timings.md ("Leaderboards") quotes.
"""

from __future__ import annotations

import argparse
import resource
import sys
import time
from pathlib import Path


def _cpu() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def estimate(results_dir: Path, measured: str = "small", target: str = "paper") -> None:
    """Print each task's estimated work at ``target`` scale: its trials per mechanism
    there times that mechanism's mean measured seconds per trial at ``measured`` scale on its
    largest (slowest) dataset there. The paper's graphs are larger than the small scale's,
    so for size-dependent mechanisms this is a lower bound."""
    from privpub.experiments.leaderboard import STORE_PREFIX, compile_task, load_task, task_names
    from privpub.experiments.store import ResultStore

    print(f"\n| task | trials at {target} | estimated work (wall per trial) | on 2 cores "
          "| from CPU per trial | on 2 cores |\n|---|---|---|---|---|---|")
    for name in task_names():
        store = results_dir / f"{STORE_PREFIX}{name}" / measured / "store"
        frame = ResultStore(store).load()
        if frame.empty:
            continue
        trials = frame.drop_duplicates(["cell", "rep"])
        counts: dict[str, int] = {}
        for spec in compile_task(load_task(name), target):
            for cell in spec.cells:
                counts[cell.mechanism] = counts.get(cell.mechanism, 0) + spec.repetitions
        works = []
        for column in ("task_seconds", "cpu_seconds"):
            per = trials.groupby(["mechanism", "dataset"])[column].mean()
            slowest = per.groupby(level=0).max()
            works.append(sum(n * float(slowest.get(m, slowest.mean()))
                             for m, n in counts.items()))
        print(f"| {name} | {sum(counts.values()):,} | {works[0] / 60:.0f} min "
              f"| {works[0] / 120:.0f} min | {works[1] / 60:.0f} min | {works[1] / 120:.0f} min |")


def main(argv=None) -> None:
    from privpub.experiments.leaderboard import run_leaderboard, task_names

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("tasks", nargs="*", default=[])
    parser.add_argument("--scale", default="small")
    parser.add_argument("--results-dir", required=True, type=Path)
    parser.add_argument("--n-jobs", type=int, default=2)
    parser.add_argument("--estimate-only", action="store_true",
                        help="only estimate the paper scale from the stored --scale run")
    args = parser.parse_args(argv)
    if args.estimate_only:
        estimate(args.results_dir, args.scale)
        return
    if args.results_dir.exists() and any(args.results_dir.iterdir()):
        sys.exit(f"{args.results_dir} is not empty: a stored trial would be reused, not timed")
    rows = []
    t_all, c_all = time.perf_counter(), _cpu()
    for task in args.tasks or task_names():
        t0, c0 = time.perf_counter(), _cpu()
        out = run_leaderboard([task], scale=args.scale, results_dir=args.results_dir,
                              n_jobs=args.n_jobs, audit=False,  # the runs only
                              echo=lambda line: None)
        work = sum(s.n_trials for s in out["summaries"])
        rows.append((task, work, time.perf_counter() - t0, _cpu() - c0))
        print(f"{task}: {work} trials, {rows[-1][2]:.1f} s wall, {rows[-1][3]:.1f} s CPU",
              flush=True)
    print("\n| task | trials | wall | CPU |\n|---|---|---|---|")
    for task, work, wall, cpu in rows:
        print(f"| {task} | {work} | {wall / 60:.1f} min | {cpu / 60:.1f} min |")
    print(f"| all | {sum(r[1] for r in rows)} | {(time.perf_counter() - t_all) / 60:.1f} min "
          f"| {(_cpu() - c_all) / 60:.1f} min |")
    estimate(args.results_dir, args.scale)


if __name__ == "__main__":
    main()
