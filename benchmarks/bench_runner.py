"""Runner overhead per cell, beyond the mechanism itself.

Runs N trivial cells (``toy_copy``: returns its input; one Jaccard metric on the 128 x 128
``sbm_small`` matrix) and reports, per cell, the wall time of the whole run minus the time
spent inside the mechanism (as the runner measured it). That difference is what the harness
costs: seeding, dataset cache, metric call, ledger, row building, parquet writes, progress.

    python benchmarks/bench_runner.py --cells 1000
"""

from __future__ import annotations

import argparse
import tempfile
import time

from privpub.experiments.runner import run_experiment
from privpub.experiments.spec import resolve_experiment
from privpub.experiments.store import ResultStore
from privpub.registry import load_plugins

TOY = "privpub.experiments.tests.toy_plugins"


def measure(n_cells: int, *, n_jobs: int, executor: str, measure_memory: bool) -> dict:
    load_plugins([TOY])
    spec = resolve_experiment(
        {
            "name": "bench_runner",
            "datasets": ["sbm_small"],
            "mechanisms": [{"name": "toy_copy", "grid": {"tag": list(range(n_cells))}}],
            "metrics": ["jaccard"],
            "repetitions": 1,
        },
        scale="paper",
    )
    with tempfile.TemporaryDirectory() as tmp:
        # warm the dataset and import caches, as a real run amortises them
        warm = resolve_experiment({**spec_dict(), "name": "warm"}, scale="paper")
        run_experiment(warm, results_dir=tmp, progress=False, plugins=(TOY,))
        t0 = time.perf_counter()
        summary = run_experiment(
            spec,
            results_dir=tmp,
            n_jobs=n_jobs,
            executor=executor,
            progress=False,
            measure_memory=measure_memory,
            plugins=(TOY,),
        )
        wall = time.perf_counter() - t0
        rows = ResultStore(summary.store).load()
    inside = rows["seconds"].sum()
    return {
        "cells": n_cells,
        "n_jobs": n_jobs,
        "executor": executor,
        "memory": measure_memory,
        "wall_s": wall,
        "mechanism_s": inside,
        "overhead_ms_per_cell": 1000 * (wall - inside / max(n_jobs, 1)) / n_cells,
    }


def spec_dict():
    return {
        "datasets": ["sbm_small"],
        "mechanisms": ["toy_copy"],
        "metrics": ["jaccard"],
        "repetitions": 1,
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cells", type=int, default=1000)
    args = parser.parse_args()
    print(
        f"{'cells':>6} {'n_jobs':>6} {'executor':>10} {'memory':>6} {'wall s':>8} "
        f"{'mech s':>8} {'overhead ms/cell':>17}"
    )
    for n_jobs, executor, memory in [
        (1, "sequential", False),
        (1, "sequential", True),
        (2, "loky", True),
        (1, "process", True),
        (2, "process", True),
    ]:
        r = measure(args.cells, n_jobs=n_jobs, executor=executor, measure_memory=memory)
        print(
            f"{r['cells']:>6} {r['n_jobs']:>6} {r['executor']:>10} {str(r['memory']):>6} "
            f"{r['wall_s']:>8.2f} {r['mechanism_s']:>8.3f} {r['overhead_ms_per_cell']:>17.2f}"
        )


if __name__ == "__main__":
    main()
