"""Where a results directory's work went: per experiment, then per series and dataset.

Reads every experiment store of one scale (``<dir>/<experiment>/<scale>/store``, each trial's
latest attempt) and prints, in markdown, largest first, each experiment's trials, its work
(the sum of its trials' wall times, ``task_seconds``) and its mechanisms' CPU
(``cpu_seconds``), each with the ``--top`` (series, dataset) pairs that took most of the work
and their median trial. Only what the experiment computed counts: a trial copied from
another experiment's store (the same trial, same code: the same cell, seed, repetition and
``task_seconds``, written earlier elsewhere) is counted as copied, with no work; a trial
that read its release from the release cache counts its own wall time (reading the release,
the metrics) but not the mechanism's CPU, which the trial that computed it counted.

    python benchmarks/work_profile.py results --scale paper --top 3

This is the profile per experiment of docs/timings.md ("The paper suite").
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import pandas as pd  # noqa: E402

from privpub.experiments.store import ResultStore  # noqa: E402


def trials(store: Path):
    """One row per trial (its first metric row) of ``store``'s latest attempts."""
    frame = ResultStore(store).load(statuses=None)
    if frame.empty:
        return frame
    return frame.drop_duplicates(["cell", "base_seed", "rep"])


def profile(results: Path, scale: str, top: int) -> list[str]:
    frames = []
    for store in sorted(results.glob(f"*/{scale}/store")):
        t = trials(store)
        if not t.empty:
            frames.append(t.assign(store=store.parents[1].name))
    if not frames:
        return []
    every = pd.concat(frames, ignore_index=True).sort_values("written_at", kind="stable")
    every["copied"] = every.duplicated(["cell", "base_seed", "rep", "task_seconds"])
    cached = every.get("release_cached", pd.Series(False, index=every.index))
    every["mech_cpu"] = every["cpu_seconds"].where(~cached.fillna(False).astype(bool), 0.0)
    done = every[~every["copied"]]
    total_work, total_cpu = done["task_seconds"].sum(), done["mech_cpu"].sum()
    out = ["| experiment | trials (copied) | work (min) | mechanism CPU (min) | share | "
           "where the work went (median trial) |", "|---|---|---|---|---|---|"]
    order = done.groupby("store")["task_seconds"].sum().sort_values(ascending=False)
    for name in [*order.index, *sorted(set(every["store"]) - set(order.index))]:
        t, mine = every[every["store"] == name], done[done["store"] == name]
        work = mine["task_seconds"].sum()
        by = (mine.groupby(["label", "dataset"])["task_seconds"].agg(["sum", "median"])
              .sort_values("sum", ascending=False).head(top))
        where = "; ".join(f"{label} on {dataset} {s / 60:.1f} min ({m:.2f} s)"
                          for (label, dataset), (s, m) in by.iterrows())
        out.append(f"| {name} | {len(t):,} ({int(t['copied'].sum()):,}) | {work / 60:.1f} | "
                   f"{mine['mech_cpu'].sum() / 60:.1f} | {work / total_work:.0%} | {where} |")
    out.append(f"| all | {len(every):,} ({int(every['copied'].sum()):,}) | "
               f"{total_work / 60:.1f} | {total_cpu / 60:.1f} | 100% | |")
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("results", type=Path, help="a results directory")
    parser.add_argument("--scale", default="paper")
    parser.add_argument("--top", type=int, default=3, help="series per experiment (default 3)")
    args = parser.parse_args()
    if not args.results.is_dir():
        print(f"work_profile: no such directory: {args.results}", file=sys.stderr)
        return 2
    lines = profile(args.results, args.scale, args.top)
    if not lines:
        print(f"work_profile: no store at scale {args.scale} in {args.results}",
              file=sys.stderr)
        return 2
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
