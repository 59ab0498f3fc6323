"""Graphs of today's size: every task with a ``large`` scale, one release per trial, timed.

Usage::

    python benchmarks/bench_large.py --results-dir /tmp/lb-large            # run, then the table
    python benchmarks/bench_large.py --results-dir /tmp/lb-large --table-only

It runs ``privpub leaderboard <tasks> --scale large --no-audit`` (every task with a
``scales.large`` block by default) and prints, per task, mechanism and graph, the trials that
succeeded and their median wall time, CPU time and peak resident memory (the runner's own
per-trial measurements: ``seconds``, ``cpu_seconds``, ``peak_mb``). Failed trials (past the
scale's 3600 s / 16 GB limits, or an error) show their first error. Then it prints what each
task skips at ``large`` with the reason, and each graph's build time and memory
(``build.json`` of the compute cache). docs/timings.md ("Graphs of today's size") quotes it.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path


def table(results_dir: Path, tasks: list[str]) -> None:
    """Print the per-release table of the stored ``large`` trials of ``tasks``."""
    from privpub.data.shaped import SHAPES, build_info
    from privpub.experiments.leaderboard import STORE_PREFIX, load_task, qualifying
    from privpub.experiments.store import ResultStore

    print("\n| graph | nodes | edges | max degree | build wall s | build CPU s | build peak MB |")
    print("|---|---|---|---|---|---|---|")
    for name in SHAPES:
        info = build_info(name) or {}
        print(f"| {name} | {SHAPES[name].n_nodes:,} | {SHAPES[name].n_edges:,} | "
              f"{SHAPES[name].max_degree:,} | {info.get('seconds', 'not built')} | "
              f"{info.get('cpu_seconds', '')} | {info.get('process_peak_mb', '')} |")
    print("\n| task | mechanism | graph | trials ok | wall s (median) | CPU s (median) "
          "| peak MB (max) | failures |")
    print("|---|---|---|---|---|---|---|---|")
    for task in tasks:
        frame = ResultStore(results_dir / f"{STORE_PREFIX}{task}" / "large" / "store").load()
        if frame is None or frame.empty:
            print(f"| {task} | (nothing stored) | | | | | | |")
            continue
        trials = frame.drop_duplicates(["cell", "rep"])
        for (mech, graph), rows in trials.groupby(["mechanism", "dataset"], sort=True):
            ok = rows[rows["status"] == "ok"]
            bad = rows[rows["status"] != "ok"]
            first = "" if bad.empty else f"{len(bad)}: {str(bad['error'].iloc[0])[:90]}"
            cells = (f"{ok['seconds'].median():.1f} | {ok['cpu_seconds'].median():.1f} | "
                     f"{ok['peak_mb'].max():.0f}") if len(ok) else "- | - | -"
            print(f"| {task} | {mech} | {graph} | {len(ok)}/{len(rows)} | {cells} | {first} |")
        _, left_out = qualifying(load_task(task), scale="large")
        for mech, why in sorted(left_out.items()):
            if why.startswith("skipped at scale=large"):
                print(f"| {task} | {mech} | every graph | skipped | {why} | | | |")


def main(argv=None) -> None:
    from privpub.experiments.leaderboard import load_task, run_leaderboard, task_names

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--results-dir", type=Path, required=True)
    ap.add_argument("--tasks", nargs="+", help="default: every task with a large scale")
    ap.add_argument("--n-jobs", type=int, default=1)
    ap.add_argument("--table-only", action="store_true", help="print the stored trials' table")
    args = ap.parse_args(argv)
    tasks = args.tasks or [t for t in task_names() if "large" in load_task(t).scales]
    if not args.table_only:
        t0 = time.perf_counter()
        run_leaderboard(tasks, scale="large", results_dir=args.results_dir, n_jobs=args.n_jobs,
                        audit=False, progress=sys.stderr.isatty(), echo=print)
        print(f"\nleaderboards at large: {time.perf_counter() - t0:.0f} s wall")
    table(args.results_dir, tasks)


if __name__ == "__main__":
    main()
